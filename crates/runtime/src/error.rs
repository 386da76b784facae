//! Error reporting from compiled code.
//!
//! Compiled pipelines call `ferrohalide_error(user_context, msg)`. When the
//! JIT runs a pipeline it passes a pointer to a [`RunContext`] as the user
//! context, so each call collects its own first error, even when the error
//! happens on a worker thread. With any other user context (e.g. null, from
//! AOT code) the message goes to a process-wide "last error" slot and to
//! stderr.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

const RUN_CONTEXT_MAGIC: u64 = 0x6665_7272_6f68_616c; // "ferrohal"

/// Per-invocation state the JIT passes as `user_context`.
#[repr(C)]
pub struct RunContext {
    magic: u64,
    error: Mutex<Option<String>>,
}

impl RunContext {
    pub fn new() -> RunContext {
        RunContext {
            magic: RUN_CONTEXT_MAGIC,
            error: Mutex::new(None),
        }
    }
    pub fn as_user_context(&self) -> *mut c_void {
        self as *const RunContext as *mut c_void
    }
    /// The first error reported during the run, if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
    fn report(&self, msg: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if e.is_none() {
            *e = Some(msg);
        }
    }
}

impl Default for RunContext {
    fn default() -> Self {
        RunContext::new()
    }
}

static LAST_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Take the process-wide last error (reported with a foreign user context).
pub fn take_last_error() -> Option<String> {
    LAST_ERROR.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// # Safety
/// `user_context` is null, a `RunContext`, or any pointer whose first 8
/// bytes are readable; `msg` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_error(user_context: *mut c_void, msg: *const c_char) {
    let text = if msg.is_null() {
        "unknown error".to_string()
    } else {
        CStr::from_ptr(msg).to_string_lossy().into_owned()
    };
    let text = text.trim_end_matches('\n').to_string();
    if !user_context.is_null()
        && (user_context as usize).is_multiple_of(std::mem::align_of::<RunContext>())
    {
        let rc = &*(user_context as *const RunContext);
        if rc.magic == RUN_CONTEXT_MAGIC {
            rc.report(text);
            return;
        }
    }
    eprintln!("Error: {text}");
    let mut e = LAST_ERROR.lock().unwrap_or_else(|p| p.into_inner());
    if e.is_none() {
        *e = Some(text);
    }
}
