//! Addresses of the runtime functions compiled code calls, so the JIT maps
//! them directly (no dlopen / dlsym lookups), plus symbols registered by
//! users (extern functions).

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use ferrohalide_runtime as rt;

/// Names of runtime entry points, as the code generator declares them.
pub mod names {
    pub const DO_PAR_FOR: &str = "ferrohalide_do_par_for";
    pub const ERROR: &str = "ferrohalide_error";
    pub const PRINT: &str = "ferrohalide_print";
    pub const MALLOC: &str = "ferrohalide_malloc";
    pub const FREE: &str = "ferrohalide_free";
    pub const STRING_APPEND: &str = "ferrohalide_string_append";
    pub const INT64_APPEND: &str = "ferrohalide_int64_append";
    pub const UINT64_APPEND: &str = "ferrohalide_uint64_append";
    pub const DOUBLE_APPEND: &str = "ferrohalide_double_append";
    pub const POINTER_APPEND: &str = "ferrohalide_pointer_append";
}

fn builtin() -> &'static HashMap<&'static str, usize> {
    static T: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    T.get_or_init(|| {
        let mut m: HashMap<&'static str, usize> = HashMap::new();
        m.insert(
            names::DO_PAR_FOR,
            rt::thread_pool::ferrohalide_do_par_for as *const () as usize,
        );
        m.insert(
            "ferrohalide_thread_index",
            rt::thread_pool::ferrohalide_thread_index as *const () as usize,
        );
        m.insert(
            ferrohalide_core::lower::add_atomic_mutex::MUTEX_LOCK,
            rt::mutex::ferrohalide_mutex_array_lock as *const () as usize,
        );
        m.insert(
            ferrohalide_core::lower::add_atomic_mutex::MUTEX_UNLOCK,
            rt::mutex::ferrohalide_mutex_array_unlock as *const () as usize,
        );
        m.insert(
            names::ERROR,
            rt::error::ferrohalide_error as *const () as usize,
        );
        m.insert(
            names::PRINT,
            rt::print::ferrohalide_print as *const () as usize,
        );
        m.insert(
            names::MALLOC,
            rt::memory::ferrohalide_malloc as *const () as usize,
        );
        m.insert(
            names::FREE,
            rt::memory::ferrohalide_free as *const () as usize,
        );
        m.insert(
            names::STRING_APPEND,
            rt::print::ferrohalide_string_append as *const () as usize,
        );
        m.insert(
            names::INT64_APPEND,
            rt::print::ferrohalide_int64_append as *const () as usize,
        );
        m.insert(
            names::UINT64_APPEND,
            rt::print::ferrohalide_uint64_append as *const () as usize,
        );
        m.insert(
            names::DOUBLE_APPEND,
            rt::print::ferrohalide_double_append as *const () as usize,
        );
        m.insert(
            names::POINTER_APPEND,
            rt::print::ferrohalide_pointer_append as *const () as usize,
        );
        use rt::math::*;
        let f1: &[(&'static str, extern "C" fn(f64) -> f64)] = &[
            ("ferrohalide_sin_f64", ferrohalide_sin_f64),
            ("ferrohalide_cos_f64", ferrohalide_cos_f64),
            ("ferrohalide_tan_f64", ferrohalide_tan_f64),
            ("ferrohalide_asin_f64", ferrohalide_asin_f64),
            ("ferrohalide_acos_f64", ferrohalide_acos_f64),
            ("ferrohalide_atan_f64", ferrohalide_atan_f64),
            ("ferrohalide_sinh_f64", ferrohalide_sinh_f64),
            ("ferrohalide_cosh_f64", ferrohalide_cosh_f64),
            ("ferrohalide_tanh_f64", ferrohalide_tanh_f64),
            ("ferrohalide_asinh_f64", ferrohalide_asinh_f64),
            ("ferrohalide_acosh_f64", ferrohalide_acosh_f64),
            ("ferrohalide_atanh_f64", ferrohalide_atanh_f64),
            ("ferrohalide_exp_f64", ferrohalide_exp_f64),
            ("ferrohalide_log_f64", ferrohalide_log_f64),
            ("ferrohalide_erf_f64", ferrohalide_erf_f64),
        ];
        for (n, f) in f1 {
            m.insert(n, *f as *const () as usize);
        }
        m.insert(
            "ferrohalide_atan2_f64",
            ferrohalide_atan2_f64 as *const () as usize,
        );
        m.insert(
            "ferrohalide_pow_f64",
            ferrohalide_pow_f64 as *const () as usize,
        );
        m.insert(
            "ferrohalide_hypot_f64",
            ferrohalide_hypot_f64 as *const () as usize,
        );
        // C library functions LLVM may emit calls to on its own.
        extern "C" {
            fn memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
            fn memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8;
            fn memset(d: *mut u8, c: i32, n: usize) -> *mut u8;
            fn fmaf(a: f32, b: f32, c: f32) -> f32;
            fn fma(a: f64, b: f64, c: f64) -> f64;
        }
        m.insert("memcpy", memcpy as *const () as usize);
        m.insert("memmove", memmove as *const () as usize);
        m.insert("memset", memset as *const () as usize);
        m.insert("fmaf", fmaf as *const () as usize);
        m.insert("fma", fma as *const () as usize);
        m
    })
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

/// The address the JIT should bind `name` to, if known.
pub fn lookup(name: &str) -> Option<usize> {
    if let Some(a) = builtin().get(name) {
        return Some(*a);
    }
    user()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(name)
        .copied()
}
