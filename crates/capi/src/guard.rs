//! Errors across the C boundary: every entry point runs its body through
//! `guard`, which turns an error or a Rust panic into a status (or a null
//! handle) and keeps the message for `fh_last_error`, per thread.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

pub type Result<T> = std::result::Result<T, String>;

pub fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Run `body`; on an error or a panic, record the message and return
/// `failed`.
pub fn guard<T>(failed: T, body: impl FnOnce() -> Result<T>) -> T {
    set_last_error("");
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(message)) => {
            set_last_error(&message);
            failed
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            set_last_error(&format!("Internal error (a bug in ferrohalide): {what}"));
            failed
        }
    }
}

/// A core error as the message Halide would give.
pub fn message(e: ferrohalide_core::Error) -> String {
    let text = e.to_string();
    if text.starts_with("Error:") {
        text
    } else {
        format!("Error: {text}")
    }
}

/// A NUL-terminated string argument (null is an error).
pub fn string_arg(p: *const c_char, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(format!("Error: {what} is a null pointer"));
    }
    // SAFETY: the caller passes a NUL-terminated string (the header says so).
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(str::to_string)
        .map_err(|_| format!("Error: {what} is not valid UTF-8"))
}

/// The message of the last failed call on this thread ("" if it
/// succeeded). Valid until the next call on this thread.
#[no_mangle]
pub extern "C" fn fh_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
