//! The runtime JIT-compiled pipelines call: the C runtime's host bitcode
//! (the same module AOT objects link), compiled to an object once per
//! build and machine (the persistent cache keeps it) and loaded once per
//! process. Each pipeline module only declares the runtime
//! functions it calls, and `compile_jit` binds them to this copy's
//! addresses, so compiling a pipeline never compiles the runtime again.
//!
//! The JIT installs two handlers written in Rust: errors go to the
//! [`RunContext`] of the call that raised them (the JIT passes one as the
//! user context of every call), and so do print lines.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

use ferrohalide_core::{Error, Result};
use inkwell::context::Context;
use inkwell::targets::{CodeModel, FileType, RelocMode, Target, TargetMachine, TargetTriple};
use inkwell::OptimizationLevel;

use crate::jit::init_llvm;
use crate::jit_cache;
use crate::jit_loader::{defined_symbols, load_object, LoadedObject};
use crate::runtime_module::runtime_module;
use crate::runtime_symbols::names;

/// Per-call state the JIT passes as `user_context`: the first error
/// reported during the call, even from a worker thread, and the lines the
/// call printed (handed to the caller's thread, `crate::output`, when the
/// call returns).
#[derive(Default)]
pub struct RunContext {
    error: Mutex<Option<String>>,
    printed: Mutex<Vec<u8>>,
}

/// Printed text a call holds before writing it to the process's stdout
/// directly: a pipeline printing every pixel must not grow without bound.
const PRINT_BUFFER_LIMIT: usize = 1 << 20;

impl RunContext {
    pub fn new() -> RunContext {
        RunContext::default()
    }
    pub fn as_user_context(&self) -> *mut c_void {
        self as *const RunContext as *mut c_void
    }
    /// The first error reported during the call, if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
    /// What the call printed, for the caller's thread to write out.
    pub fn take_printed(&self) -> String {
        let bytes = std::mem::take(&mut *self.printed.lock().unwrap_or_else(|p| p.into_inner()));
        String::from_utf8_lossy(&bytes).into_owned()
    }
    fn print(&self, line: &[u8]) {
        let mut p = self.printed.lock().unwrap_or_else(|p| p.into_inner());
        p.extend_from_slice(line);
        if p.len() > PRINT_BUFFER_LIMIT {
            ferrohalide_core::output::write_stdout(&std::mem::take(&mut *p));
        }
    }
    fn report(&self, msg: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if e.is_none() {
            *e = Some(msg);
        }
    }
}

/// The text of a C string from the runtime (null as empty).
///
/// # Safety
/// `msg` is null or NUL-terminated.
unsafe fn text_of(msg: *const c_char) -> String {
    if msg.is_null() {
        String::new()
    } else {
        CStr::from_ptr(msg).to_string_lossy().into_owned()
    }
}

/// The JIT's `halide_error` handler.
extern "C" fn report_error(user_context: *mut c_void, msg: *const c_char) {
    // SAFETY: the runtime passes a NUL-terminated message.
    let text = unsafe { text_of(msg) };
    let text = text.trim_end_matches('\n').to_string();
    if user_context.is_null() {
        // Only the runtime itself reports without a call's context.
        eprintln!("Error: {text}");
        return;
    }
    // SAFETY: every JIT call passes a RunContext that outlives the call.
    let rc = unsafe { &*(user_context as *const RunContext) };
    rc.report(text);
}

/// The JIT's `halide_print` handler: the line (it ends with its newline)
/// joins the call's printed text.
extern "C" fn print_line(user_context: *mut c_void, msg: *const c_char) {
    if msg.is_null() {
        return;
    }
    // SAFETY: the runtime passes a NUL-terminated line.
    let line = unsafe { CStr::from_ptr(msg) }.to_bytes();
    if user_context.is_null() {
        ferrohalide_core::output::write_stdout(line);
    } else {
        // SAFETY: every JIT call passes a RunContext that outlives the call.
        unsafe { &*(user_context as *const RunContext) }.print(line);
    }
}

type Handler = extern "C" fn(*mut c_void, *const c_char);
type SetHandler = unsafe extern "C" fn(Option<Handler>) -> Option<Handler>;

/// The loaded runtime. Its code lives for the rest of the process
/// (compiled code keeps calling into it).
pub struct JitRuntime {
    code: LoadedObject,
    /// What the runtime's object defines: the code also holds what it
    /// imports (bound while linking), which is not the runtime's.
    defined: HashSet<String>,
    /// Addresses looked up so far (None: the runtime does not define it).
    symbols: Mutex<HashMap<String, Option<usize>>>,
}

impl JitRuntime {
    /// The address of the runtime function `name`, if it has one.
    pub fn symbol(&self, name: &str) -> Option<usize> {
        if !self.defined.contains(name) {
            return None;
        }
        let known = |name: &str| {
            let symbols = self.symbols.lock().unwrap_or_else(|p| p.into_inner());
            symbols.get(name).copied()
        };
        if let Some(address) = known(name) {
            return address;
        }
        // Not holding `symbols` while ORC looks up: a thread linking a
        // pipeline holds the ORC lock and may be waiting here for it.
        let address = self.code.lookup(name).ok();
        let mut symbols = self.symbols.lock().unwrap_or_else(|p| p.into_inner());
        *symbols.entry(name.to_string()).or_insert(address)
    }
}

/// The process's JIT runtime, compiled on first use.
pub fn shared() -> Result<&'static JitRuntime> {
    static RUNTIME: OnceLock<std::result::Result<JitRuntime, String>> = OnceLock::new();
    // Initialized holding the ORC lock: a thread linking a pipeline holds
    // it and may need the runtime, so no other thread may be half-way
    // through starting it without the lock.
    let runtime = match RUNTIME.get() {
        Some(r) => r,
        None => crate::jit_loader::serialized(|| {
            RUNTIME.get_or_init(|| compile().map_err(|e| e.to_string()))
        }),
    };
    runtime
        .as_ref()
        .map_err(|e| Error::internal(format!("cannot start the JIT runtime: {e}")))
}

/// A C library function's address in this process (through the dynamic
/// loader).
pub fn c_library_symbol(name: &str) -> Option<usize> {
    static LOADED: OnceLock<()> = OnceLock::new();
    LOADED.get_or_init(|| {
        // SAFETY: a null file name makes the program's own symbols searchable.
        unsafe { inkwell::llvm_sys::support::LLVMLoadLibraryPermanently(std::ptr::null()) };
    });
    let c = CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name.
    let p = unsafe { inkwell::llvm_sys::support::LLVMSearchForAddressOfSymbol(c.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}

fn c_library(name: &str) -> Result<usize> {
    c_library_symbol(name)
        .ok_or_else(|| Error::internal(format!("the C library function {name} is not in this process")))
}

fn compile() -> Result<JitRuntime> {
    init_llvm();
    let triple = TargetMachine::get_default_triple();
    let triple_name = triple.as_str().to_string_lossy().into_owned();
    let object = jit_cache::object_for(jit_cache::runtime_key(&triple_name), || {
        compile_object(&triple, &triple_name)
    })?;
    let defined = defined_symbols(&object)?;
    let code = load_object(&object, "ferrohalide runtime", c_library)?;
    let runtime = JitRuntime { code, defined, symbols: Mutex::new(HashMap::new()) };
    install_handler(&runtime, names::SET_ERROR_HANDLER, report_error)?;
    install_handler(&runtime, names::SET_CUSTOM_PRINT, print_line)?;
    Ok(runtime)
}

/// The runtime's position-independent object for this machine. The
/// bitcode is already optimized (clang -O3); LLVM's fast instruction
/// selection makes machine code of it in about a quarter of the time the
/// full code generator takes.
fn compile_object(triple: &TargetTriple, triple_name: &str) -> Result<Vec<u8>> {
    let context = Context::create();
    let module = runtime_module(&context, triple_name)?;
    let machine = Target::from_triple(triple)
        .map_err(|e| Error::internal(format!("LLVM target: {e}")))?
        .create_target_machine(triple, "", "", OptimizationLevel::None, RelocMode::PIC, CodeModel::Small)
        .ok_or_else(|| Error::internal("cannot create an LLVM target machine for the runtime"))?;
    let buf = machine
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| Error::internal(format!("compiling the runtime failed: {}", e.to_string())))?;
    Ok(buf.as_slice().to_vec())
}

fn install_handler(runtime: &JitRuntime, setter: &str, handler: Handler) -> Result<()> {
    let addr = runtime
        .symbol(setter)
        .ok_or_else(|| Error::internal(format!("the runtime has no {setter}")))?;
    // SAFETY: the runtime defines the setter with this signature
    // (HalideRuntime.h).
    unsafe {
        let set: SetHandler = std::mem::transmute::<usize, SetHandler>(addr);
        set(Some(handler));
    }
    Ok(())
}

/// The number of threads parallel loops of JIT-compiled code use
/// (`halide_get_num_threads` of the JIT runtime).
pub fn num_threads() -> Result<usize> {
    let addr = shared()?
        .symbol(names::GET_NUM_THREADS)
        .ok_or_else(|| Error::internal("the runtime has no halide_get_num_threads"))?;
    // SAFETY: the runtime defines it as `int halide_get_num_threads(void)`.
    let get: extern "C" fn() -> i32 = unsafe { std::mem::transmute::<usize, extern "C" fn() -> i32>(addr) };
    Ok(get().max(1) as usize)
}
