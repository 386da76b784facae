//! Accuracy of the math functions against the C library (f32: within a
//! few ULP; vector and scalar code paths), and that vector f32 math compiles
//! to vector code with no libm calls.

mod common;

use common::*;
use ferrohalide_codegen_llvm::{compile_to_assembly, JitTarget};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Intrinsic, MathFn, Stmt, Type};
use ferrohalide_core::lower::LoweredPipeline;

const N: usize = 4096;

fn math_pipeline(m: MathFn, ty: Type, lanes: u16, binary: bool) -> LoweredPipeline {
    let base = Expr::mul(v("xo"), i(lanes as i64));
    let idx = if lanes > 1 {
        Expr::ramp(base.clone(), i(1), lanes)
    } else {
        base.clone()
    };
    let t = ty.with_lanes(lanes);
    let tru = if lanes > 1 {
        Expr::broadcast(Expr::bool_const(true), lanes)
    } else {
        Expr::bool_const(true)
    };
    let a = Expr::load(t, "a", idx.clone(), tru.clone());
    let mut args = vec![a];
    if binary {
        args.push(Expr::load(t, "b", idx.clone(), tru.clone()));
    }
    let val = Expr::intrinsic(t, Intrinsic::Math(m), args);
    let store = Stmt::store("out", val, idx, tru);
    let body = Stmt::for_loop(
        "xo",
        i(0),
        Expr::div(v("out.extent.0"), i(lanes as i64)),
        ForType::Serial,
        store,
    );
    pipeline(
        &format!("math_{}_{}", m.name(), lanes),
        vec![
            in_arg("a", ty, 1),
            in_arg("b", ty, 1),
            out_arg("out", ty, 1),
        ],
        body,
    )
}

fn ulp_dist(a: f32, b: f32) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    if a == b {
        return 0;
    }
    let key = |x: f32| -> i64 {
        let i = x.to_bits() as i32 as i64;
        if i < 0 {
            -(i & 0x7fff_ffff)
        } else {
            i
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn log_range(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.next()).exp()
    }
}

fn check_f32(
    m: MathFn,
    reference: fn(f32, f32) -> f32,
    gen: &dyn Fn(&mut Lcg) -> (f32, f32),
    max_ulp: u64,
) {
    let mut rng = Lcg(12345);
    let mut a_vals: Vec<f32> = (0..N).map(|_| gen(&mut rng).0).collect();
    let mut b_vals: Vec<f32> = Vec::new();
    let mut rng2 = Lcg(999);
    for _ in 0..N {
        b_vals.push(gen(&mut rng2).1);
    }
    // Special values at the front.
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        0.5,
        2.0,
        1e-30,
        -3.0,
        1e-40,
    ];
    for (k, s) in specials.iter().enumerate() {
        a_vals[k] = *s;
        b_vals[k + 16] = *s;
        a_vals[k + 32] = *s;
        b_vals[k + 32] = specials[(k * 5 + 3) % specials.len()];
    }
    let f = Type::float(32);
    let binary = matches!(m, MathFn::Atan2 | MathFn::Pow | MathFn::Hypot);
    for lanes in [16u16, 1] {
        let p = math_pipeline(m, f, lanes, binary);
        let jm = jit(&p);
        let a = Buffer::new(f, &[N as i32], None).unwrap();
        let b = Buffer::new(f, &[N as i32], None).unwrap();
        for k in 0..N {
            a.set_f64(&[k as i32], a_vals[k] as f64).unwrap();
            b.set_f64(&[k as i32], b_vals[k] as f64).unwrap();
        }
        let out = Buffer::new(f, &[N as i32], None).unwrap();
        run(&jm, &[A::B(&a), A::B(&b), A::B(&out)]).unwrap();
        let mut worst = (0u64, 0.0f32, 0.0f32, 0.0f32, 0.0f32);
        for k in 0..N {
            let got = out.get_f64(&[k as i32]).unwrap() as f32;
            let want = reference(a_vals[k], b_vals[k]);
            let d = ulp_dist(got, want);
            if d > worst.0 {
                worst = (d, a_vals[k], b_vals[k], got, want);
            }
        }
        assert!(
            worst.0 <= max_ulp,
            "{} (lanes {lanes}): {} ULP at ({:e}, {:e}): got {:e}, libm {:e}",
            m.name(),
            worst.0,
            worst.1,
            worst.2,
            worst.3,
            worst.4
        );
    }
}

// Rust's f32 asinh/acosh/atanh are not libm's (they are computed in f32
// and can be off by many ULP), so compare with the C library directly.
extern "C" {
    fn erff(x: f32) -> f32;
    fn asinhf(x: f32) -> f32;
    fn acoshf(x: f32) -> f32;
    fn atanhf(x: f32) -> f32;
}

macro_rules! unary_test {
    ($name:ident, $m:expr, $f:expr, $gen:expr) => {
        #[test]
        fn $name() {
            let g = $gen;
            check_f32(
                $m,
                |a, _| $f(a),
                &move |r: &mut Lcg| (g(r) as f32, g(r) as f32),
                2,
            );
        }
    };
}

unary_test!(sin_f32, MathFn::Sin, f32::sin, |r: &mut Lcg| r
    .range(-100.0, 100.0));
unary_test!(cos_f32, MathFn::Cos, f32::cos, |r: &mut Lcg| r
    .range(-100.0, 100.0));
unary_test!(tan_f32, MathFn::Tan, f32::tan, |r: &mut Lcg| r
    .range(-10.0, 10.0));
unary_test!(sin_f32_large, MathFn::Sin, f32::sin, |r: &mut Lcg| r
    .range(-1e6, 1e6));
/// Halide's f32 exp: libm's value, except that results below 2^-126 flush
/// to zero (Halide's own range reduction stops there).
fn halide_exp(x: f32) -> f32 {
    if (x as f64 * std::f64::consts::LOG2_E).floor() <= -127.0 {
        0.0
    } else {
        x.exp()
    }
}

/// Halide's f32 pow: libm's value, except `pow(0, y) == 0` for every y != 0.
fn halide_pow(a: f32, b: f32) -> f32 {
    if a == 0.0 && b != 0.0 && !b.is_nan() {
        0.0
    } else {
        a.powf(b)
    }
}

unary_test!(exp_f32, MathFn::Exp, halide_exp, |r: &mut Lcg| r
    .range(-110.0, 95.0));
unary_test!(log_f32, MathFn::Log, f32::ln, |r: &mut Lcg| r
    .log_range(1e-44, 3e38));
unary_test!(atan_f32, MathFn::Atan, f32::atan, |r: &mut Lcg| r
    .range(-1.0, 1.0)
    * r.log_range(1e-5, 1e8));
unary_test!(asin_f32, MathFn::Asin, f32::asin, |r: &mut Lcg| r
    .range(-1.0, 1.0));
unary_test!(acos_f32, MathFn::Acos, f32::acos, |r: &mut Lcg| r
    .range(-1.0, 1.0));
unary_test!(sinh_f32, MathFn::Sinh, f32::sinh, |r: &mut Lcg| r
    .range(-90.0, 90.0));
unary_test!(sinh_f32_small, MathFn::Sinh, f32::sinh, |r: &mut Lcg| r
    .range(-2.0, 2.0));
unary_test!(cosh_f32, MathFn::Cosh, f32::cosh, |r: &mut Lcg| r
    .range(-90.0, 90.0));
unary_test!(tanh_f32, MathFn::Tanh, f32::tanh, |r: &mut Lcg| r
    .range(-12.0, 12.0));
unary_test!(
    asinh_f32,
    MathFn::Asinh,
    |x| unsafe { asinhf(x) },
    |r: &mut Lcg| r.range(-1.0, 1.0) * r.log_range(1e-6, 1e30)
);
unary_test!(
    acosh_f32,
    MathFn::Acosh,
    |x| unsafe { acoshf(x) },
    |r: &mut Lcg| r.log_range(1.0, 1e30)
);
unary_test!(
    atanh_f32,
    MathFn::Atanh,
    |x| unsafe { atanhf(x) },
    |r: &mut Lcg| r.range(-1.0, 1.0)
);
unary_test!(
    erf_f32,
    MathFn::Erf,
    |x| unsafe { erff(x) },
    |r: &mut Lcg| r.range(-6.0, 6.0)
);
unary_test!(sqrt_f32, MathFn::Sqrt, f32::sqrt, |r: &mut Lcg| r
    .log_range(1e-30, 1e30));
unary_test!(fast_exp_f32, MathFn::FastExp, f32::exp, |r: &mut Lcg| r
    .range(-80.0, 80.0));
unary_test!(fast_log_f32, MathFn::FastLog, f32::ln, |r: &mut Lcg| r
    .log_range(1e-30, 1e30));

#[test]
fn round_is_half_to_even() {
    check_f32(
        MathFn::Round,
        |a, _| a.round_ties_even(),
        &|r: &mut Lcg| {
            let v = (r.range(-20.0, 20.0) * 2.0).round() / 2.0;
            (v as f32, 0.0)
        },
        0,
    );
}

#[test]
fn atan2_f32() {
    check_f32(
        MathFn::Atan2,
        f32::atan2,
        &|r: &mut Lcg| (r.range(-10.0, 10.0) as f32, r.range(-10.0, 10.0) as f32),
        2,
    );
}

#[test]
fn pow_f32() {
    check_f32(
        MathFn::Pow,
        halide_pow,
        &|r: &mut Lcg| (r.log_range(1e-3, 1e3) as f32, r.range(-12.0, 12.0) as f32),
        2,
    );
    check_f32(
        MathFn::Pow,
        halide_pow,
        &|r: &mut Lcg| {
            (
                r.range(-20.0, 20.0) as f32,
                r.range(-8.0, 8.0).round() as f32,
            )
        },
        2,
    );
}

#[test]
fn hypot_f32() {
    check_f32(
        MathFn::Hypot,
        f32::hypot,
        &|r: &mut Lcg| (r.range(-1e3, 1e3) as f32, r.range(-1e3, 1e3) as f32),
        1,
    );
}

#[test]
fn f64_math_matches_libm() {
    let f = Type::float(64);
    for (m, reference) in [
        (MathFn::Sin, f64::sin as fn(f64) -> f64),
        (MathFn::Exp, f64::exp),
        (MathFn::Log, f64::ln),
    ] {
        for lanes in [8u16, 1] {
            let p = math_pipeline(m, f, lanes, false);
            let jm = jit(&p);
            let a = Buffer::new(f, &[64], None).unwrap();
            for k in 0..64 {
                a.set_f64(&[k], 0.37 * k as f64 + 0.01).unwrap();
            }
            let b = Buffer::new(f, &[64], None).unwrap();
            let out = Buffer::new(f, &[64], None).unwrap();
            run(&jm, &[A::B(&a), A::B(&b), A::B(&out)]).unwrap();
            for k in 0..64 {
                let x = 0.37 * k as f64 + 0.01;
                assert_eq!(
                    out.get_f64(&[k]).unwrap(),
                    reference(x),
                    "{} at {x}",
                    m.name()
                );
            }
        }
    }
}

#[test]
fn vector_sin_is_avx512_without_libm_calls() {
    let host = JitTarget::host();
    if !host.has_feature("avx512f") {
        eprintln!("skipping: host has no AVX-512");
        return;
    }
    let p = math_pipeline(MathFn::Sin, Type::float(32), 16, false);
    let asm = compile_to_assembly(&p, &host).unwrap();
    assert!(asm.contains("zmm"), "no zmm registers in:\n{asm}");
    assert!(!asm.contains("sinf"), "calls sinf:\n{asm}");
    // The loop (outlined from the JIT's cold body) calls nothing.
    let loop_code = function_asm(&asm, ".loop.");
    assert!(loop_code.contains("zmm"), "the loop has no zmm registers:\n{asm}");
    assert!(!loop_code.contains("call"), "the loop contains calls:\n{asm}");
    // Restricting the target to AVX2 gives ymm and no zmm.
    let avx2 = host.without_avx512();
    let asm2 = compile_to_assembly(&p, &avx2).unwrap();
    assert!(
        asm2.contains("ymm") && !asm2.contains("zmm"),
        "AVX2 target used zmm"
    );
}

/// The assembly of the first function whose label contains `part`.
fn function_asm(asm: &str, part: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in asm.lines() {
        let is_label = line.ends_with(':') && !line.starts_with(['.', '\t', ' ']);
        if is_label {
            if inside {
                break;
            }
            inside = line.contains(part);
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(!out.is_empty(), "no function named like {part} in:\n{asm}");
    out
}
