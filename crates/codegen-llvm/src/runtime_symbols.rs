//! The names of the runtime functions compiled code calls (Halide's, see
//! HalideRuntime.h), and how the JIT finds the address of any function a
//! pipeline calls: the JIT runtime's, then symbols registered by users
//! (extern functions), then the helpers LLVM calls for 128-bit arithmetic
//! (`jit_builtins`), then the C library (memcpy, libm, ... which LLVM and
//! the math code generator call).

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use ferrohalide_core::ir::{CallKind, Expr, ExprNode};
use ferrohalide_core::{Error, Result};

use crate::jit_runtime;

/// Names of runtime entry points, as the code generator declares them.
pub mod names {
    pub const DO_PAR_FOR: &str = "halide_do_par_for";
    pub const DO_FORK: &str = "ferrohalide_do_fork";
    pub const ERROR: &str = "halide_error";
    pub const ERROR_FORMATTED: &str = "ferrohalide_error_formatted";
    pub const ERROR_OUT_OF_MEMORY: &str = "halide_error_out_of_memory";
    pub const ERROR_BUFFER_ALLOCATION_TOO_LARGE: &str = "halide_error_buffer_allocation_too_large";
    pub const PRINT: &str = "halide_print";
    pub const TRACE_HELPER: &str = "halide_trace_helper";
    pub const MALLOC: &str = "halide_malloc";
    pub const FREE: &str = "halide_free";
    pub const STRING_TO_STRING: &str = "halide_string_to_string";
    pub const INT64_TO_STRING: &str = "halide_int64_to_string";
    pub const UINT64_TO_STRING: &str = "halide_uint64_to_string";
    pub const DOUBLE_TO_STRING: &str = "halide_double_to_string";
    pub const POINTER_TO_STRING: &str = "halide_pointer_to_string";
    pub const MUTEX_ARRAY_DESTROY: &str = "halide_mutex_array_destroy";
    pub use ferrohalide_core::lower::add_atomic_mutex::{
        MUTEX_ARRAY_CREATE, MUTEX_LOCK, MUTEX_UNLOCK,
    };
    /// Used by the JIT to install its handlers and read the pool size.
    pub const SET_ERROR_HANDLER: &str = "halide_set_error_handler";
    pub const SET_CUSTOM_PRINT: &str = "halide_set_custom_print";
    pub const GET_NUM_THREADS: &str = "halide_get_num_threads";
}

/// The runtime function that releases what `value` creates, when `value`
/// is a call of a runtime function that creates a resource (a lock array);
/// a `let` of such a call owns the resource for its body.
pub fn release_function_of(value: &Expr) -> Option<&'static str> {
    match value.node() {
        ExprNode::Call {
            name,
            kind: CallKind::Extern,
            ..
        } if name == names::MUTEX_ARRAY_CREATE => Some(names::MUTEX_ARRAY_DESTROY),
        _ => None,
    }
}

fn user() -> &'static RwLock<HashMap<String, usize>> {
    static U: OnceLock<RwLock<HashMap<String, usize>>> = OnceLock::new();
    U.get_or_init(|| RwLock::new(HashMap::new()))
}

/// Make `name` resolve to `address` in JIT-compiled code (for extern calls).
pub fn register_symbol(name: &str, address: usize) {
    user()
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(name.to_string(), address);
}

/// The address the JIT binds `name` to; an error if nothing defines it.
pub fn lookup(name: &str) -> Result<usize> {
    if let Some(a) = jit_runtime::shared()?.symbol(name) {
        return Ok(a);
    }
    let registered = user()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(name)
        .copied();
    registered
        .or_else(|| crate::jit_builtins::symbol(name))
        .or_else(|| jit_runtime::c_library_symbol(name))
        .ok_or_else(|| {
            Error::user(format!(
                "extern function `{name}` is not known to the JIT (register it with register_symbol)"
            ))
        })
}
