//! Printing (`print` in pipelines) and the little string builder that
//! compiled code uses to format print lines and error messages.
//!
//! The builder functions write into `[dst, end)`, always NUL-terminate, and
//! return the new end of the string (like Halide's `halide_string_to_string`
//! family). Number formats follow Halide: integers in decimal, 32-bit floats
//! as `%f` (`1.500000`), 64-bit floats as `%e` (`1.500000e+00`).

use std::ffi::{c_char, c_void, CStr};
use std::io::Write;

unsafe fn append_bytes(dst: *mut c_char, end: *mut c_char, bytes: &[u8]) -> *mut c_char {
    if dst.is_null() || end.is_null() || dst >= end {
        return dst;
    }
    let room = (end as usize - dst as usize).saturating_sub(1);
    let n = bytes.len().min(room);
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, n);
    let out = dst.add(n);
    *out = 0;
    out
}

/// # Safety
/// `[dst, end)` is writable; `s` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_string_append(
    dst: *mut c_char,
    end: *mut c_char,
    s: *const c_char,
) -> *mut c_char {
    if s.is_null() {
        return append_bytes(dst, end, b"<null>");
    }
    append_bytes(dst, end, CStr::from_ptr(s).to_bytes())
}

/// # Safety
/// `[dst, end)` is writable.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_int64_append(
    dst: *mut c_char,
    end: *mut c_char,
    v: i64,
) -> *mut c_char {
    append_bytes(dst, end, v.to_string().as_bytes())
}

/// # Safety
/// `[dst, end)` is writable.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_uint64_append(
    dst: *mut c_char,
    end: *mut c_char,
    v: u64,
) -> *mut c_char {
    append_bytes(dst, end, v.to_string().as_bytes())
}

/// Format a float as Halide does: `%f` when `scientific == 0`, else `%e`.
pub fn format_double(v: f64, scientific: bool) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if !scientific {
        return format!("{v:.6}");
    }
    // C's %e: d.dddddde[+-]XX
    let s = format!("{v:.6e}");
    match s.split_once('e') {
        Some((mant, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            let digits = if digits.len() < 2 {
                format!("0{digits}")
            } else {
                digits.to_string()
            };
            format!("{mant}e{sign}{digits}")
        }
        None => s,
    }
}

/// # Safety
/// `[dst, end)` is writable.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_double_append(
    dst: *mut c_char,
    end: *mut c_char,
    v: f64,
    scientific: i32,
) -> *mut c_char {
    append_bytes(dst, end, format_double(v, scientific != 0).as_bytes())
}

/// # Safety
/// `[dst, end)` is writable.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_pointer_append(
    dst: *mut c_char,
    end: *mut c_char,
    p: *const c_void,
) -> *mut c_char {
    append_bytes(dst, end, format!("{p:p}").as_bytes())
}

/// Print a line (the message has no trailing newline; one is added) to
/// stdout and flush it.
///
/// # Safety
/// `msg` is null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_print(_user_context: *mut c_void, msg: *const c_char) {
    let text: &[u8] = if msg.is_null() {
        b""
    } else {
        CStr::from_ptr(msg).to_bytes()
    };
    let out = std::io::stdout();
    let mut lock = out.lock();
    let _ = lock.write_all(text);
    let _ = lock.write_all(b"\n");
    let _ = lock.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_formats() {
        assert_eq!(format_double(1.5, false), "1.500000");
        assert_eq!(format_double(1.0 / 3.0, true), "3.333333e-01");
        assert_eq!(format_double(1e300, true), "1.000000e+300");
        assert_eq!(format_double(0.0, true), "0.000000e+00");
        assert_eq!(format_double(1e10, false), "10000000000.000000");
    }

    #[test]
    fn builder_truncates() {
        let mut buf = [0 as c_char; 8];
        let end = unsafe { buf.as_mut_ptr().add(8) };
        let p = unsafe { ferrohalide_int64_append(buf.as_mut_ptr(), end, -1234567890) };
        assert_eq!(p, unsafe { buf.as_mut_ptr().add(7) });
        let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(s.to_str().unwrap(), "-123456");
    }
}
