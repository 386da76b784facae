//! Scalar libm entry points for compiled code (64-bit float math, where the
//! code generator calls libm lane by lane). Mapped into the JIT by address.

macro_rules! unary {
    ($($name:ident => $f:ident),* $(,)?) => {
        $( #[no_mangle] pub extern "C" fn $name(x: f64) -> f64 { x.$f() } )*
    };
}

unary! {
    ferrohalide_sin_f64 => sin,
    ferrohalide_cos_f64 => cos,
    ferrohalide_tan_f64 => tan,
    ferrohalide_asin_f64 => asin,
    ferrohalide_acos_f64 => acos,
    ferrohalide_atan_f64 => atan,
    ferrohalide_sinh_f64 => sinh,
    ferrohalide_cosh_f64 => cosh,
    ferrohalide_tanh_f64 => tanh,
    ferrohalide_asinh_f64 => asinh,
    ferrohalide_acosh_f64 => acosh,
    ferrohalide_atanh_f64 => atanh,
    ferrohalide_exp_f64 => exp,
    ferrohalide_log_f64 => ln,
}

#[no_mangle]
pub extern "C" fn ferrohalide_atan2_f64(y: f64, x: f64) -> f64 {
    y.atan2(x)
}
#[no_mangle]
pub extern "C" fn ferrohalide_pow_f64(x: f64, y: f64) -> f64 {
    x.powf(y)
}
#[no_mangle]
pub extern "C" fn ferrohalide_hypot_f64(x: f64, y: f64) -> f64 {
    x.hypot(y)
}

extern "C" {
    fn erf(x: f64) -> f64;
}

#[no_mangle]
pub extern "C" fn ferrohalide_erf_f64(x: f64) -> f64 {
    // SAFETY: libm's erf is a pure function.
    unsafe { erf(x) }
}
