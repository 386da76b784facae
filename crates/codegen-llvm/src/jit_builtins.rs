//! The helper functions LLVM's code generator calls for operations the
//! machine has no instruction for (128-bit division, remainder, overflow
//! multiplication and float conversions). An ahead-of-time object gets them
//! from the C toolchain's support library (libgcc or compiler-rt) when it
//! is linked; in the JIT nothing links one, so they are defined here, with
//! Rust's own 128-bit arithmetic, and `runtime_symbols::lookup` binds them.
//!
//! Compiled pipelines have no 128-bit types, but LLVM makes them: loop
//! strength reduction can widen an induction variable to 128 bits when
//! another user of the loop is 128-bit, and a division of it then calls
//! `__udivti3` (fuzz seed 39442).
//!
//! The signatures are those of libgcc's documentation ("Integer library
//! routines", "Soft float library routines"); Rust's `i128`/`u128` have the
//! C ABI of `__int128` on the targets the JIT runs on.

/// The address of the helper called `name`, if it is one of these.
pub fn symbol(name: &str) -> Option<usize> {
    let address = match name {
        "__divti3" => divti3 as *const () as usize,
        "__udivti3" => udivti3 as *const () as usize,
        "__modti3" => modti3 as *const () as usize,
        "__umodti3" => umodti3 as *const () as usize,
        "__muloti4" => muloti4 as *const () as usize,
        "__floattisf" => floattisf as *const () as usize,
        "__floattidf" => floattidf as *const () as usize,
        "__floatuntisf" => floatuntisf as *const () as usize,
        "__floatuntidf" => floatuntidf as *const () as usize,
        "__fixsfti" => fixsfti as *const () as usize,
        "__fixdfti" => fixdfti as *const () as usize,
        "__fixunssfti" => fixunssfti as *const () as usize,
        "__fixunsdfti" => fixunsdfti as *const () as usize,
        _ => return None,
    };
    Some(address)
}

// Division by zero and the one overflowing signed division are undefined
// in C and in LLVM IR; here they give 0 and the dividend rather than
// aborting the process.

extern "C" fn divti3(a: i128, b: i128) -> i128 {
    a.checked_div(b).unwrap_or(if b == 0 { 0 } else { a })
}

extern "C" fn udivti3(a: u128, b: u128) -> u128 {
    a.checked_div(b).unwrap_or(0)
}

extern "C" fn modti3(a: i128, b: i128) -> i128 {
    a.checked_rem(b).unwrap_or(0)
}

extern "C" fn umodti3(a: u128, b: u128) -> u128 {
    a.checked_rem(b).unwrap_or(0)
}

/// `a * b`, setting `*overflow` to 1 when it does not fit in 128 bits.
extern "C" fn muloti4(a: i128, b: i128, overflow: *mut i32) -> i128 {
    let (product, over) = a.overflowing_mul(b);
    if !overflow.is_null() {
        // SAFETY: LLVM passes a pointer to a live i32.
        unsafe { *overflow = i32::from(over) };
    }
    product
}

extern "C" fn floattisf(a: i128) -> f32 {
    a as f32
}

extern "C" fn floattidf(a: i128) -> f64 {
    a as f64
}

extern "C" fn floatuntisf(a: u128) -> f32 {
    a as f32
}

extern "C" fn floatuntidf(a: u128) -> f64 {
    a as f64
}

// Out of range, these are undefined in C; Rust's casts saturate.

extern "C" fn fixsfti(a: f32) -> i128 {
    a as i128
}

extern "C" fn fixdfti(a: f64) -> i128 {
    a as i128
}

extern "C" fn fixunssfti(a: f32) -> u128 {
    a as u128
}

extern "C" fn fixunsdfti(a: f64) -> u128 {
    a as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_compute_what_their_names_say() {
        let big = (1u128 << 100) + 12345;
        assert_eq!(udivti3(big, 7), big / 7);
        assert_eq!(umodti3(big, 7), big % 7);
        assert_eq!(divti3(-(big as i128), 7), -(big as i128) / 7);
        assert_eq!(modti3(-(big as i128), 7), -(big as i128) % 7);
        assert_eq!(udivti3(big, 0), 0);
        assert_eq!(divti3(i128::MIN, -1), i128::MIN);
        let mut over = 0;
        assert_eq!(muloti4(1 << 100, 4, &mut over), 1 << 102);
        assert_eq!(over, 0);
        muloti4(1 << 100, 1 << 30, &mut over);
        assert_eq!(over, 1);
        assert_eq!(floattidf(-(1i128 << 70)), -(2f64.powi(70)));
        assert_eq!(fixunsdfti(2f64.powi(100)), 1u128 << 100);
        assert!(symbol("__udivti3").is_some() && symbol("memcpy").is_none());
    }
}
