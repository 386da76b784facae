//! Halide's arithmetic semantics: Euclidean division and modulo with
//! x / 0 == 0, wrapping overflow, shifts, and the integer intrinsics, for
//! every integer width, in scalar and vector code.

mod common;

use common::*;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{BinOp, Expr, ForType, Intrinsic, Stmt, Type};

/// out[k] = f(a[k], b[k]) over N elements, in vectors of `lanes`.
fn binary_pipeline(
    name: &str,
    at: Type,
    bt: Type,
    rt: Type,
    lanes: u16,
    f: &dyn Fn(Expr, Expr) -> Expr,
) -> ferrohalide_core::lower::LoweredPipeline {
    let base = Expr::mul(v("xo"), i(lanes as i64));
    let (idx, tru) = if lanes > 1 {
        (
            Expr::ramp(base.clone(), i(1), lanes),
            Expr::broadcast(Expr::bool_const(true), lanes),
        )
    } else {
        (base.clone(), Expr::bool_const(true))
    };
    let a = Expr::load(at.with_lanes(lanes), "a", idx.clone(), tru.clone());
    let b = Expr::load(bt.with_lanes(lanes), "b", idx.clone(), tru.clone());
    let store = Stmt::store("out", f(a, b), idx, tru);
    let body = Stmt::for_loop(
        "xo",
        i(0),
        Expr::div(v("out.extent.0"), i(lanes as i64)),
        ForType::Serial,
        store,
    );
    pipeline(
        name,
        vec![
            in_arg("a", at, 1),
            in_arg("b", bt, 1),
            out_arg("out", rt, 1),
        ],
        body,
    )
}

fn wrap(v: i128, t: Type) -> i128 {
    let bits = t.bits as u32;
    let m = v & ((1i128 << bits) - 1);
    if t.is_int() && m >= (1i128 << (bits - 1)) {
        m - (1i128 << bits)
    } else {
        m
    }
}

fn edge_values(t: Type) -> Vec<i128> {
    let (lo, hi) = (t.min_int(), t.max_int());
    let mut v = vec![
        lo,
        lo + 1,
        -7,
        -3,
        -2,
        -1,
        0,
        1,
        2,
        3,
        7,
        hi - 1,
        hi,
        100,
        -100,
        12345,
        -12345,
    ];
    v.retain(|x| *x >= lo && *x <= hi);
    v
}

fn run_binary(
    at: Type,
    bt: Type,
    rt: Type,
    pairs: &[(i128, i128)],
    lanes: u16,
    f: &dyn Fn(Expr, Expr) -> Expr,
) -> Vec<i128> {
    let n = pairs.len().div_ceil(16) * 16;
    let p = binary_pipeline("bin", at, bt, rt, lanes, f);
    let m = jit(&p);
    let a = Buffer::new(at, &[n as i32], None).unwrap();
    let b = Buffer::new(bt, &[n as i32], None).unwrap();
    for (k, (x, y)) in pairs.iter().enumerate() {
        a.set_i128(&[k as i32], *x).unwrap();
        b.set_i128(&[k as i32], *y).unwrap();
    }
    let out = Buffer::new(rt, &[n as i32], None).unwrap();
    run(&m, &[A::B(&a), A::B(&b), A::B(&out)]).unwrap();
    (0..pairs.len())
        .map(|k| out.get_i128(&[k as i32]).unwrap())
        .collect()
}

fn int_types() -> Vec<Type> {
    let mut v = vec![];
    for bits in [8u8, 16, 32, 64] {
        v.push(Type::int(bits));
        v.push(Type::uint(bits));
    }
    v
}

#[test]
fn division_and_modulo_all_widths() {
    for t in int_types() {
        let vals = edge_values(t);
        let pairs: Vec<(i128, i128)> = vals
            .iter()
            .flat_map(|a| vals.iter().map(move |b| (*a, *b)))
            .collect();
        for lanes in [1u16, 8] {
            let d = run_binary(t, t, t, &pairs, lanes, &|a, b| {
                Expr::binary(BinOp::Div, a, b)
            });
            let m = run_binary(t, t, t, &pairs, lanes, &|a, b| {
                Expr::binary(BinOp::Mod, a, b)
            });
            for (k, (a, b)) in pairs.iter().enumerate() {
                let (wd, wm) = if *b == 0 {
                    (0, 0)
                } else {
                    (wrap(a.div_euclid(*b), t), wrap(a.rem_euclid(*b), t))
                };
                assert_eq!(d[k], wd, "{t}: {a} / {b} (lanes {lanes})");
                assert_eq!(m[k], wm, "{t}: {a} % {b} (lanes {lanes})");
            }
        }
    }
}

#[test]
fn constant_divisors() {
    for t in [Type::int(32), Type::int(8), Type::uint(16)] {
        for c in [1i64, 2, 3, 7, 16, -1, -3, -16] {
            if t.is_uint() && c < 0 {
                continue;
            }
            let vals = edge_values(t);
            let pairs: Vec<(i128, i128)> = vals.iter().map(|a| (*a, 0)).collect();
            let ce = Expr::make_const_i64(t, c);
            for lanes in [1u16, 16] {
                let ce2 = if lanes > 1 {
                    Expr::broadcast(ce.clone(), lanes)
                } else {
                    ce.clone()
                };
                let ce3 = ce2.clone();
                let d = run_binary(t, t, t, &pairs, lanes, &move |a, _| {
                    Expr::binary(BinOp::Div, a, ce2.clone())
                });
                let m = run_binary(t, t, t, &pairs, lanes, &move |a, _| {
                    Expr::binary(BinOp::Mod, a, ce3.clone())
                });
                for (k, (a, _)) in pairs.iter().enumerate() {
                    let c = c as i128;
                    assert_eq!(d[k], wrap(a.div_euclid(c), t), "{t}: {a} / {c}");
                    assert_eq!(m[k], wrap(a.rem_euclid(c), t), "{t}: {a} % {c}");
                }
            }
        }
    }
}

#[test]
fn wrapping_arithmetic_and_comparisons() {
    for t in int_types() {
        let vals = edge_values(t);
        let pairs: Vec<(i128, i128)> = vals
            .iter()
            .flat_map(|a| vals.iter().map(move |b| (*a, *b)))
            .collect();
        let ops: [(BinOp, fn(i128, i128) -> i128); 6] = [
            (BinOp::Add, |a, b| a + b),
            (BinOp::Sub, |a, b| a - b),
            (BinOp::Mul, |a, b| a.wrapping_mul(b)),
            (BinOp::Min, |a, b| a.min(b)),
            (BinOp::Max, |a, b| a.max(b)),
            (BinOp::LT, |a, b| (a < b) as i128),
        ];
        for (op, f) in ops {
            let rt = if op == BinOp::LT { Type::bool() } else { t };
            let r = run_binary(t, t, rt, &pairs, 8, &|a, b| Expr::binary(op, a, b));
            for (k, (a, b)) in pairs.iter().enumerate() {
                assert_eq!(r[k], wrap(f(*a, *b), rt), "{t}: {a} {op:?} {b}");
            }
        }
    }
}

fn intrin(t: Type, which: Intrinsic, args: Vec<Expr>) -> Expr {
    Expr::intrinsic(t, which, args)
}

#[test]
fn shifts_match_halide() {
    // Values checked against Halide 21 (scalar code): a negative shift
    // amount shifts the other way; 32-bit amounts are taken mod 32.
    let t = Type::i32();
    let pairs = [
        (-7, 3),
        (7, -3),
        (-7, -3),
        (5, 33),
        (5, -1),
        (-5, -1),
        (-5, 40),
        (1, 32),
        (-8, 32),
        (-2147483648, -1),
    ];
    let pairs: Vec<(i128, i128)> = pairs
        .iter()
        .map(|(a, b)| (*a as i128, *b as i128))
        .collect();
    let shl = run_binary(t, t, t, &pairs, 1, &|a, b| {
        intrin(a.ty(), Intrinsic::ShiftLeft, vec![a, b])
    });
    let shr = run_binary(t, t, t, &pairs, 1, &|a, b| {
        intrin(a.ty(), Intrinsic::ShiftRight, vec![a, b])
    });
    assert_eq!(shl, vec![-56, 0, -1, 10, 2, -3, -1280, 1, -8, -1073741824]);
    assert_eq!(shr, vec![-1, 56, -56, 2, 10, -10, -1, 1, -8, 0]);
    // Vector code agrees.
    let shl8 = run_binary(t, t, t, &pairs, 8, &|a, b| {
        intrin(a.ty(), Intrinsic::ShiftLeft, vec![a, b])
    });
    assert_eq!(shl, shl8);
    // Unsigned shifts by unsigned amounts.
    let u = Type::uint(8);
    let up: Vec<(i128, i128)> = vec![(200, 1), (200, 3), (1, 7), (255, 8), (255, 0)];
    let r = run_binary(u, u, u, &up, 1, &|a, b| {
        intrin(a.ty(), Intrinsic::ShiftRight, vec![a, b])
    });
    assert_eq!(r, vec![100, 25, 0, 0, 255]);
    let r = run_binary(u, u, u, &up, 1, &|a, b| {
        intrin(a.ty(), Intrinsic::ShiftLeft, vec![a, b])
    });
    assert_eq!(r, vec![144, 64, 128, 0, 255]);
}

#[test]
fn integer_intrinsics() {
    let i8t = Type::int(8);
    let u8t = Type::uint(8);
    let vals = edge_values(i8t);
    let pairs: Vec<(i128, i128)> = vals
        .iter()
        .flat_map(|a| vals.iter().map(move |b| (*a, *b)))
        .collect();
    for lanes in [1u16, 16] {
        let abs = run_binary(i8t, i8t, u8t, &pairs, lanes, &|a, _| {
            intrin(u8t.with_lanes(a.lanes()), Intrinsic::Abs, vec![a])
        });
        let absd = run_binary(i8t, i8t, u8t, &pairs, lanes, &|a, b| {
            intrin(u8t.with_lanes(a.lanes()), Intrinsic::Absd, vec![a, b])
        });
        let sadd = run_binary(i8t, i8t, i8t, &pairs, lanes, &|a, b| {
            intrin(a.ty(), Intrinsic::SaturatingAdd, vec![a, b])
        });
        let ssub = run_binary(i8t, i8t, i8t, &pairs, lanes, &|a, b| {
            intrin(a.ty(), Intrinsic::SaturatingSub, vec![a, b])
        });
        let hadd = run_binary(i8t, i8t, i8t, &pairs, lanes, &|a, b| {
            intrin(a.ty(), Intrinsic::HalvingAdd, vec![a, b])
        });
        let rhadd = run_binary(i8t, i8t, i8t, &pairs, lanes, &|a, b| {
            intrin(a.ty(), Intrinsic::RoundingHalvingAdd, vec![a, b])
        });
        let wmul = run_binary(i8t, i8t, Type::int(16), &pairs, lanes, &|a, b| {
            intrin(
                Type::int(16).with_lanes(a.lanes()),
                Intrinsic::WideningMul,
                vec![a, b],
            )
        });
        let dz = run_binary(i8t, i8t, i8t, &pairs, lanes, &|a, b| {
            intrin(a.ty(), Intrinsic::DivRoundToZero, vec![a, b])
        });
        let mz = run_binary(i8t, i8t, i8t, &pairs, lanes, &|a, b| {
            intrin(a.ty(), Intrinsic::ModRoundToZero, vec![a, b])
        });
        let scast = run_binary(i8t, i8t, u8t, &pairs, lanes, &|a, _| {
            intrin(
                u8t.with_lanes(a.lanes()),
                Intrinsic::SaturatingCast,
                vec![a],
            )
        });
        for (k, (a, b)) in pairs.iter().enumerate() {
            let (a, b) = (*a, *b);
            assert_eq!(abs[k], a.abs(), "abs {a}");
            assert_eq!(absd[k], (a - b).abs(), "absd {a} {b}");
            assert_eq!(sadd[k], (a + b).clamp(-128, 127), "sadd {a} {b}");
            assert_eq!(ssub[k], (a - b).clamp(-128, 127), "ssub {a} {b}");
            assert_eq!(hadd[k], (a + b).div_euclid(2), "hadd {a} {b}");
            assert_eq!(rhadd[k], (a + b + 1).div_euclid(2), "rhadd {a} {b}");
            assert_eq!(wmul[k], a * b, "wmul {a} {b}");
            assert_eq!(
                dz[k],
                if b == 0 { 0 } else { wrap(a / b, i8t) },
                "div_round_to_zero {a} {b}"
            );
            assert_eq!(
                mz[k],
                if b == 0 { 0 } else { wrap(a % b, i8t) },
                "mod_round_to_zero {a} {b}"
            );
            assert_eq!(scast[k], a.clamp(0, 255), "saturating_cast {a}");
        }
    }
    // popcount / clz / ctz on u16
    let u16t = Type::uint(16);
    let pairs: Vec<(i128, i128)> = [0i128, 1, 2, 0x8000, 0xffff, 0x0f0f, 12]
        .iter()
        .map(|x| (*x, 0))
        .collect();
    let pc = run_binary(u16t, u16t, u16t, &pairs, 1, &|a, _| {
        intrin(a.ty(), Intrinsic::Popcount, vec![a])
    });
    let lz = run_binary(u16t, u16t, u16t, &pairs, 8, &|a, _| {
        intrin(a.ty(), Intrinsic::CountLeadingZeros, vec![a])
    });
    let tz = run_binary(u16t, u16t, u16t, &pairs, 8, &|a, _| {
        intrin(a.ty(), Intrinsic::CountTrailingZeros, vec![a])
    });
    for (k, (a, _)) in pairs.iter().enumerate() {
        let a = *a as u16;
        assert_eq!(pc[k], a.count_ones() as i128);
        assert_eq!(lz[k], a.leading_zeros() as i128);
        assert_eq!(tz[k], a.trailing_zeros() as i128);
    }
}

#[test]
fn mul_shift_right_u8() {
    let u8t = Type::uint(8);
    let vals: Vec<i128> = vec![0, 1, 7, 100, 128, 200, 255];
    let pairs: Vec<(i128, i128)> = vals
        .iter()
        .flat_map(|a| vals.iter().map(move |b| (*a, *b)))
        .collect();
    for q in [0u64, 3, 8] {
        let qe = Expr::uint_imm(u8t, q);
        let qe2 = qe.clone();
        let r = run_binary(u8t, u8t, u8t, &pairs, 16, &move |a, b| {
            let q = Expr::broadcast(qe.clone(), a.lanes());
            intrin(a.ty(), Intrinsic::MulShiftRight, vec![a, b, q])
        });
        let rr = run_binary(u8t, u8t, u8t, &pairs, 1, &move |a, b| {
            intrin(
                a.ty(),
                Intrinsic::RoundingMulShiftRight,
                vec![a, b, qe2.clone()],
            )
        });
        for (k, (a, b)) in pairs.iter().enumerate() {
            let p = a * b;
            assert_eq!(r[k], (p >> q).min(255), "mul_shift_right {a} {b} {q}");
            let round = if q == 0 { 0 } else { 1i128 << (q - 1) };
            assert_eq!(
                rr[k],
                ((p + round) >> q).min(255),
                "rounding_mul_shift_right {a} {b} {q}"
            );
        }
    }
}

#[test]
fn casts() {
    // float -> int truncates toward zero; int -> narrower int wraps; bool casts.
    let f = Type::float(32);
    let p = binary_pipeline("casts", f, f, Type::int(16), 8, &|a, _| {
        Expr::cast(Type::int(16).with_lanes(a.lanes()), a)
    });
    let m = jit(&p);
    let a = Buffer::new(f, &[16], None).unwrap();
    let b = Buffer::new(f, &[16], None).unwrap();
    let xs = [-2.7f64, -0.5, 0.5, 2.7, 1000.9, -1000.9, 0.0, 3.0];
    for (k, x) in xs.iter().enumerate() {
        a.set_f64(&[k as i32], *x).unwrap();
    }
    let out = Buffer::new(Type::int(16), &[16], None).unwrap();
    run(&m, &[A::B(&a), A::B(&b), A::B(&out)]).unwrap();
    for (k, x) in xs.iter().enumerate() {
        assert_eq!(out.get_i128(&[k as i32]).unwrap(), x.trunc() as i128);
    }
    let i32t = Type::i32();
    let pairs: Vec<(i128, i128)> = vec![(300, 0), (-1, 0), (0, 0), (255, 0), (-129, 0)];
    let r = run_binary(i32t, i32t, Type::uint(8), &pairs, 1, &|a, _| {
        Expr::cast(Type::uint(8), a)
    });
    assert_eq!(r, vec![44, 255, 0, 255, 127]);
    // As in Halide, a cast to bool keeps the lowest bit.
    let r = run_binary(i32t, i32t, Type::bool(), &pairs, 1, &|a, _| {
        Expr::cast(Type::bool(), a)
    });
    assert_eq!(r, vec![0, 1, 0, 1, 1]);
}

#[test]
fn float_mod_min_max() {
    let f = Type::float(32);
    let p = binary_pipeline("fmod", f, f, f, 1, &|a, b| Expr::binary(BinOp::Mod, a, b));
    let m = jit(&p);
    let pairs = [(-7.5f64, 2.0f64), (7.5, -2.0), (2.5, 0.0), (3.5, 1.0)];
    let a = Buffer::new(f, &[16], None).unwrap();
    let b = Buffer::new(f, &[16], None).unwrap();
    for (k, (x, y)) in pairs.iter().enumerate() {
        a.set_f64(&[k as i32], *x).unwrap();
        b.set_f64(&[k as i32], *y).unwrap();
    }
    let out = Buffer::new(f, &[16], None).unwrap();
    run(&m, &[A::B(&a), A::B(&b), A::B(&out)]).unwrap();
    let got: Vec<f64> = (0..4).map(|k| out.get_f64(&[k]).unwrap()).collect();
    assert_eq!(got[0], 0.5);
    assert_eq!(got[1], -0.5);
    assert!(got[2].is_nan());
    assert_eq!(got[3], 0.5);
    // min(nan, 1) = nan, min(1, nan) = 1, max(nan, 1) = 1, max(1, nan) = nan (as Halide)
    for (op, want) in [(BinOp::Min, [f64::NAN, 1.0]), (BinOp::Max, [1.0, f64::NAN])] {
        let p = binary_pipeline("fminmax", f, f, f, 8, &|a, b| Expr::binary(op, a, b));
        let m = jit(&p);
        a.set_f64(&[0], f64::NAN).unwrap();
        b.set_f64(&[0], 1.0).unwrap();
        a.set_f64(&[1], 1.0).unwrap();
        b.set_f64(&[1], f64::NAN).unwrap();
        run(&m, &[A::B(&a), A::B(&b), A::B(&out)]).unwrap();
        for k in 0..2 {
            let g = out.get_f64(&[k as i32]).unwrap();
            assert!(
                g == want[k] || (g.is_nan() && want[k].is_nan()),
                "{op:?} lane {k}: {g}"
            );
        }
    }
}

#[test]
fn vector_reduce_and_shuffle() {
    use ferrohalide_core::ir::VectorReduceOp;
    // out[k] = reduce_add(a[ramp(4k, 1, 4)]) and a shuffle reversing pairs.
    let t = Type::i32();
    let idx = Expr::ramp(Expr::mul(v("k"), i(4)), i(1), 4);
    let vals = Expr::load(
        t.with_lanes(4),
        "a",
        idx,
        Expr::broadcast(Expr::bool_const(true), 4),
    );
    let sum = Expr::vector_reduce(VectorReduceOp::Add, vals.clone(), 1);
    let mx = Expr::vector_reduce(
        VectorReduceOp::Max,
        Expr::shuffle(vec![vals.clone()], vec![3, 2, 1, 0]),
        2,
    );
    let val = Expr::add(Expr::mul(sum, i(1000)), Expr::shuffle(vec![mx], vec![1]));
    let body = Stmt::for_loop(
        "k",
        i(0),
        v("out.extent.0"),
        ForType::Serial,
        Stmt::store("out", val, v("k"), Expr::bool_const(true)),
    );
    let p = pipeline(
        "reduce",
        vec![in_arg("a", t, 1), out_arg("out", t, 1)],
        body,
    );
    let m = jit(&p);
    let a = Buffer::new(t, &[16], None).unwrap();
    for k in 0..16 {
        a.set_i128(&[k], (k * 7 % 5) as i128).unwrap();
    }
    let out = Buffer::new(t, &[4], None).unwrap();
    run(&m, &[A::B(&a), A::B(&out)]).unwrap();
    for k in 0..4 {
        let l: Vec<i128> = (0..4).map(|j| ((4 * k + j) * 7 % 5) as i128).collect();
        // shuffle reversed: [l3, l2, l1, l0]; max over pairs -> [max(l3,l2), max(l1,l0)]; lane 1
        let want = (l.iter().sum::<i128>()) * 1000 + l[1].max(l[0]);
        assert_eq!(out.get_i128(&[k]).unwrap(), want);
    }
}
