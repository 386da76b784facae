//! Calls: simplify arguments; fold intrinsics on constants (bitwise ops,
//! shifts, abs, absd, popcount, clz/ctz, exactly-rounded math); identities
//! such as x & 0, x | 0, shifts by constants into multiplies/divides;
//! `likely` keeps its wrapper unless the argument is constant.

use super::fold::{self, C};
use super::info::Info;
use super::Simplifier;
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Type, TypeCode};

/// The integer value of a constant as an i128 (two's-complement bits for
/// signed types).
fn int_val(e: &Expr) -> Option<i128> {
    match fold::const_of(e)? {
        C::I(v) => Some(v as i128),
        C::U(v) => Some(v as i128),
        C::F(_) => None,
    }
}

fn bits_of(ty: Type, v: i128) -> u64 {
    let mask = if ty.bits >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits) - 1
    };
    (v as u64) & mask
}

impl Simplifier {
    pub(crate) fn simplify_call(&mut self, e: &Expr) -> Expr {
        let ExprNode::Call { name, args, kind } = e.node() else {
            unreachable!()
        };
        let mut changed = false;
        let nargs: Vec<Expr> = args
            .iter()
            .map(|a| {
                let n = self.mutate(a);
                changed |= !n.same_as(a);
                n
            })
            .collect();
        let ty = e.ty();
        if let CallKind::Intrinsic(op) = kind {
            if let Some(r) = self.fold_intrinsic(*op, ty, &nargs) {
                return r;
            }
        }
        if !changed {
            return self.finish(e.clone());
        }
        self.finish(Expr::call(ty, name.clone(), nargs, kind.clone()))
    }

    fn fold_intrinsic(&mut self, op: Intrinsic, ty: Type, a: &[Expr]) -> Option<Expr> {
        use Intrinsic::*;
        let int_ty = (ty.is_int() || ty.is_uint()) && !ty.is_bool();
        let arg_int = |i: usize| a.get(i).and_then(int_val);
        match op {
            Likely | LikelyIfInnermost => {
                if a.len() == 1 && a[0].is_const() {
                    return Some(a[0].clone());
                }
                None
            }
            // A mux whose index is known picks its value (out of range: the
            // last), as Halide's simplifier does.
            Mux if a.len() == 2 => Some(a[1].clone()),
            Mux if a.len() > 2 && a[0].ty().is_scalar() => {
                let v = self.info(&a[0]).as_exact()?;
                let values = &a[1..];
                let i = usize::try_from(v).ok().filter(|&i| i < values.len()).unwrap_or(values.len() - 1);
                Some(values[i].clone())
            }
            BitwiseAnd | BitwiseOr | BitwiseXor if a.len() == 2 && (int_ty || ty.is_bool()) => {
                let t = a[0].ty();
                if let (Some(x), Some(y)) = (arg_int(0), arg_int(1)) {
                    let (x, y) = (bits_of(t, x), bits_of(t, y));
                    let r = match op {
                        BitwiseAnd => x & y,
                        BitwiseOr => x | y,
                        _ => x ^ y,
                    };
                    return Some(fold::make(ty, C::U(r)));
                }
                let (x, y) = (&a[0], &a[1]);
                // `(e op c1) op c2` is `e op (c1 op c2)`: the three are
                // associative and commutative (fuzz seed 59134: a `where()`
                // of `(v & 20) & 1`, always false, left a vectorized RVar's
                // race check unproved).
                let inner_with_const = |e: &Expr| {
                    let args = e.as_intrinsic(op)?;
                    match (int_val(&args[0]), int_val(&args[1])) {
                        (None, Some(_)) => Some((args[0].clone(), args[1].clone())),
                        (Some(_), None) => Some((args[1].clone(), args[0].clone())),
                        _ => None,
                    }
                };
                let nested = match (arg_int(0), arg_int(1)) {
                    (None, Some(_)) => inner_with_const(x).map(|(e, c)| (e, c, y.clone())),
                    (Some(_), None) => inner_with_const(y).map(|(e, c)| (e, c, x.clone())),
                    _ => None,
                };
                if let Some((e, c1, c2)) = nested {
                    let c = self
                        .fold_intrinsic(op, ty, &[c1, c2])
                        .expect("two constants fold");
                    let args = [e, c];
                    return Some(
                        self.fold_intrinsic(op, ty, &args)
                            .unwrap_or_else(|| Expr::intrinsic(ty, op, args.to_vec())),
                    );
                }
                let all_ones =
                    |e: &Expr| int_val(e).is_some_and(|v| bits_of(t, v) == bits_of(t, -1));
                match op {
                    BitwiseAnd if y.is_zero() => Some(y.clone()),
                    BitwiseAnd if x.is_zero() => Some(x.clone()),
                    BitwiseAnd if all_ones(y) => Some(x.clone()),
                    BitwiseAnd if all_ones(x) => Some(y.clone()),
                    BitwiseOr | BitwiseXor if y.is_zero() => Some(x.clone()),
                    BitwiseOr | BitwiseXor if x.is_zero() => Some(y.clone()),
                    BitwiseAnd | BitwiseOr if crate::ir::equal(x, y) => Some(x.clone()),
                    BitwiseXor if crate::ir::equal(x, y) => Some(Expr::zero(ty)),
                    _ => None,
                }
            }
            BitwiseNot if a.len() == 1 && (int_ty || ty.is_bool()) => {
                if let Some(x) = arg_int(0) {
                    // mask to the type's width (for bool, !1 must be 0)
                    return Some(fold::make(ty, C::U(bits_of(ty, !bits_of(ty, x) as i128))));
                }
                if let Some(inner) = a[0].as_intrinsic(BitwiseNot) {
                    return Some(inner[0].clone());
                }
                None
            }
            ShiftLeft | ShiftRight if a.len() == 2 && int_ty => {
                let bits = ty.bits as i128;
                let sh = arg_int(1)?;
                // A negative shift of a signed amount shifts the other way.
                let (left, sh) = if a[1].ty().is_int() && sh < 0 {
                    (op == ShiftRight, -sh)
                } else {
                    (op == ShiftLeft, sh)
                };
                if sh >= bits {
                    // Halide's simplifier: a constant shift by the width or
                    // more is undefined, reported as signed overflow.
                    return Some(fold::signed_integer_overflow(ty));
                }
                if sh == 0 {
                    return Some(a[0].clone());
                }
                let factor = fold::make_int(ty, 1i128 << sh);
                if let Some(x) = arg_int(0) {
                    let r = if left {
                        x << sh
                    } else if ty.is_int() {
                        x >> sh
                    } else {
                        (bits_of(ty, x) >> sh) as i128
                    };
                    return Some(fold::make_int(ty, r));
                }
                // x << c == x * 2^c (wrapping); x >> c == floor(x / 2^c).
                if (1i128 << sh) > ty.max_int() {
                    return None;
                }
                Some(if left {
                    self.mk_bin(BinOp::Mul, a[0].clone(), factor)
                } else {
                    self.mk_bin(BinOp::Div, a[0].clone(), factor)
                })
            }
            Abs if a.len() == 1 => {
                if let Some(c) = fold::const_of(&a[0]) {
                    return Some(match c {
                        C::I(v) => fold::make_int(ty, (v as i128).abs()),
                        C::U(v) => fold::make(ty, C::U(v)),
                        C::F(v) if ty.is_float() => fold::make(ty, C::F(v.abs())),
                        _ => return None,
                    });
                }
                // abs of a known non-negative value is the value
                if a[0].ty() == ty && self.info(&a[0]).is_nonneg() {
                    return Some(a[0].clone());
                }
                None
            }
            // A constant clamped to the target's range (Halide folds
            // saturating casts of constants, and only those).
            SaturatingCast if a.len() == 1 && int_ty && ty.is_scalar() => {
                let v = match fold::const_of(&a[0])? {
                    C::I(v) => v as i128,
                    C::U(v) => v as i128,
                    C::F(f) if f.is_finite() => f.trunc().clamp(-1e30, 1e30) as i128,
                    C::F(_) => return None,
                };
                Some(fold::make_int(ty, v.clamp(ty.min_int(), ty.max_int())))
            }
            Absd if a.len() == 2 => {
                let (x, y) = (arg_int(0)?, arg_int(1)?);
                Some(fold::make_int(ty, (x - y).abs()))
            }
            Popcount | CountLeadingZeros | CountTrailingZeros if a.len() == 1 => {
                let t = a[0].ty();
                let x = bits_of(t, arg_int(0)?);
                let bits = t.bits as u32;
                let r = match op {
                    Popcount => x.count_ones(),
                    CountLeadingZeros => x.leading_zeros() - (64 - bits),
                    _ => {
                        if x == 0 {
                            bits
                        } else {
                            x.trailing_zeros()
                        }
                    }
                };
                Some(fold::make_int(ty, r as i128))
            }
            Math(m)
                if ty.code == TypeCode::Float
                    && (ty.bits == 32 || ty.bits == 64)
                    && a.len() == 1 =>
            {
                let C::F(v) = fold::const_of(&a[0])? else {
                    return None;
                };
                let f32ty = ty.bits == 32;
                let r = match m {
                    MathFn::Sqrt => {
                        if f32ty {
                            (v as f32).sqrt() as f64
                        } else {
                            v.sqrt()
                        }
                    }
                    MathFn::Floor => v.floor(),
                    MathFn::Ceil => v.ceil(),
                    MathFn::Round => v.round_ties_even(),
                    MathFn::Trunc => v.trunc(),
                    _ if f32ty => c_math::unary(m, v)?,
                    _ => return None,
                };
                Some(fold::make(ty, C::F(r)))
            }
            Math(m @ (MathFn::Atan2 | MathFn::Pow))
                if ty.code == TypeCode::Float && ty.bits == 32 && a.len() == 2 =>
            {
                let (C::F(x), C::F(y)) = (fold::const_of(&a[0])?, fold::const_of(&a[1])?) else {
                    return None;
                };
                Some(fold::make(ty, C::F(c_math::binary(m, x, y)?)))
            }
            Math(m @ (MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite)) if a.len() == 1 => {
                // An integer converted to a float is never NaN, and never
                // infinite in a float of 32 bits or more (the largest 64-bit
                // integer is far below their range).
                if let ExprNode::Cast(v) = a[0].node() {
                    let f = a[0].ty();
                    if v.ty().is_int_or_uint() && (m == MathFn::IsNan || f.bits >= 32) {
                        let r = m == MathFn::IsFinite;
                        return Some(fold::make(ty, C::U(r as u64)));
                    }
                }
                let C::F(v) = fold::const_of(&a[0])? else {
                    return None;
                };
                let r = match m {
                    MathFn::IsNan => v.is_nan(),
                    MathFn::IsInf => v.is_infinite(),
                    _ => v.is_finite(),
                };
                Some(fold::make(ty, C::U(r as u64)))
            }
            TargetArchIs | TargetOsIs | TargetBits | TargetHasFeature | TargetNaturalVectorSize => {
                crate::lang::target_queries::query_value(op, a)
            }
            ConcatBits if a.len() == 1 => Some(a[0].clone()),
            WidenRightAdd | WidenRightMul | WidenRightSub | WideningShiftLeft
            | WideningShiftRight | RoundingShiftLeft | RoundingShiftRight | ExtractBits
            | ConcatBits
                if a.iter().all(|x| fold::const_of(x).is_some()) =>
            {
                fold_through_evaluator(op, ty, a)
            }
            _ => None,
        }
    }
}

/// The constant value of an intrinsic of constant arguments, as the
/// evaluator computes it (through its lowering); `None` where that is
/// undefined (a shift past the width), which is left to code generation.
fn fold_through_evaluator(op: Intrinsic, ty: Type, args: &[Expr]) -> Option<Expr> {
    use crate::analysis::evaluate::{Evaluator, Value};
    if !ty.is_scalar() || !(ty.is_int_or_uint() || ty.is_float()) {
        return None;
    }
    let mut env: std::collections::HashMap<String, Value> = Default::default();
    let mut ev = Evaluator::new(&mut env);
    let v = ev.eval(&Expr::intrinsic(ty, op, args.to_vec())).ok()?;
    if ev.overflowed {
        return None;
    }
    Some(match v.first()? {
        Value::Int(i) => fold::make_int(ty, *i),
        Value::Float(f) => fold::make(ty, C::F(*f)),
    })
}

/// Facts about a call's value.
pub(crate) fn call_info(s: &mut Simplifier, e: &Expr) -> Info {
    let ty = e.ty();
    let range = Info::type_range(ty);
    let ExprNode::Call {
        args,
        kind: CallKind::Intrinsic(op),
        ..
    } = e.node()
    else {
        return range;
    };
    match op {
        Intrinsic::Likely
        | Intrinsic::LikelyIfInnermost
        | Intrinsic::PromiseClamped
        | Intrinsic::MemoizeExpr
            if !args.is_empty() =>
        {
            if args[0].ty() == ty {
                s.info(&args[0])
            } else {
                range
            }
        }
        Intrinsic::Mux if args.len() >= 2 => {
            let mut values = args[1..].iter();
            let first = values.next().map(|v| s.info(v)).unwrap_or(range);
            values.fold(first, |acc, v| {
                let i = s.info(v);
                Info::union(ty, &acc, &i)
            })
        }
        Intrinsic::TargetBits | Intrinsic::TargetNaturalVectorSize => {
            match crate::lang::target_queries::query_value(*op, args).and_then(|v| v.as_int_const()) {
                Some(v) => Info::exact(v),
                None => range,
            }
        }
        Intrinsic::Abs if args.len() == 1 => {
            let i = s.info(&args[0]);
            let hi = match (i.min, i.max) {
                (Some(a), Some(b)) => a.checked_abs().zip(b.checked_abs()).map(|(a, b)| a.max(b)),
                _ => None,
            };
            Info::bounds(Some(0), hi).fit(ty)
        }
        Intrinsic::BitwiseAnd if args.len() == 2 => {
            let (a, b) = (s.info(&args[0]), s.info(&args[1]));
            let hi = match (
                a.is_nonneg().then_some(a.max).flatten(),
                b.is_nonneg().then_some(b.max).flatten(),
            ) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            if hi.is_some() {
                Info::bounds(Some(0), hi).fit(ty)
            } else {
                range
            }
        }
        Intrinsic::Popcount | Intrinsic::CountLeadingZeros | Intrinsic::CountTrailingZeros
            if !args.is_empty() =>
        {
            Info::bounds(Some(0), Some(args[0].ty().bits as i64)).fit(ty)
        }
        _ => range,
    }
}

/// Halide's simplifier folds the 32-bit float transcendentals of a
/// constant (acos ... tanh, exp, log, atan2, pow) with the C library's
/// double-precision functions, rounding the result to 32 bits (and folds
/// none of 64 bits): the same functions here give the same bits, so a
/// folded constant matches the reference's. (Rust's own `asinh`, `acosh`
/// and `atanh` are not the C library's.)
mod c_math {
    use crate::ir::MathFn;

    extern "C" {
        fn acos(x: f64) -> f64;
        fn acosh(x: f64) -> f64;
        fn asin(x: f64) -> f64;
        fn asinh(x: f64) -> f64;
        fn atan(x: f64) -> f64;
        fn atanh(x: f64) -> f64;
        fn cos(x: f64) -> f64;
        fn cosh(x: f64) -> f64;
        fn exp(x: f64) -> f64;
        fn log(x: f64) -> f64;
        fn sin(x: f64) -> f64;
        fn sinh(x: f64) -> f64;
        fn tan(x: f64) -> f64;
        fn tanh(x: f64) -> f64;
        fn atan2(y: f64, x: f64) -> f64;
        fn pow(x: f64, y: f64) -> f64;
    }

    /// `m` of `x`, for the functions Halide folds.
    pub(super) fn unary(m: MathFn, x: f64) -> Option<f64> {
        let f: unsafe extern "C" fn(f64) -> f64 = match m {
            MathFn::Acos => acos,
            MathFn::Acosh => acosh,
            MathFn::Asin => asin,
            MathFn::Asinh => asinh,
            MathFn::Atan => atan,
            MathFn::Atanh => atanh,
            MathFn::Cos => cos,
            MathFn::Cosh => cosh,
            MathFn::Exp => exp,
            MathFn::Log => log,
            MathFn::Sin => sin,
            MathFn::Sinh => sinh,
            MathFn::Tan => tan,
            MathFn::Tanh => tanh,
            _ => return None,
        };
        // SAFETY: pure C library functions of one double.
        Some(unsafe { f(x) })
    }

    /// `atan2(x, y)` or `pow(x, y)`; `None` for any other function.
    pub(super) fn binary(m: MathFn, x: f64, y: f64) -> Option<f64> {
        let f: unsafe extern "C" fn(f64, f64) -> f64 = match m {
            MathFn::Atan2 => atan2,
            MathFn::Pow => pow,
            _ => return None,
        };
        // SAFETY: pure C library functions of two doubles.
        Some(unsafe { f(x, y) })
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::s;
    use crate::ir::{Expr, Intrinsic, MathFn, Type};

    #[test]
    fn float_classes_of_converted_integers() {
        // Fuzz seed 9181: a `where(is_nan(f64(int)))` is never true.
        let i = Expr::var(Type::int(64), "i");
        let class = |m, f: Type| {
            let e = Expr::intrinsic(Type::bool(), Intrinsic::Math(m), vec![Expr::cast(f, i.clone())]);
            simplify(&e)
        };
        assert!(class(MathFn::IsNan, Type::float(64)).is_const_value(0));
        assert!(class(MathFn::IsNan, Type::float(16)).is_const_value(0));
        assert!(class(MathFn::IsInf, Type::float(32)).is_const_value(0));
        assert!(class(MathFn::IsFinite, Type::float(32)).is_const_value(1));
        // A half float overflows to infinity from 65520 up.
        assert!(!class(MathFn::IsInf, Type::float(16)).is_const());
    }

    #[test]
    fn nested_bitwise_ops_with_constants_fold_their_constants() {
        // Fuzz seed 59134: `(v & 20) & 1` is 0.
        let v = Expr::var(Type::int(8), "v");
        let op = |o, a: Expr, b: Expr| Expr::intrinsic(Type::int(8), o, vec![a, b]);
        let c = |k: i64| Expr::make_const_i64(Type::int(8), k);
        let and = op(Intrinsic::BitwiseAnd, op(Intrinsic::BitwiseAnd, v.clone(), c(20)), c(1));
        assert!(simplify(&and).is_zero(), "{and}");
        let and = op(Intrinsic::BitwiseAnd, c(6), op(Intrinsic::BitwiseAnd, c(3), v.clone()));
        assert_eq!(simplify(&and).to_string(), simplify(&op(Intrinsic::BitwiseAnd, v.clone(), c(2))).to_string());
        let or = op(Intrinsic::BitwiseOr, op(Intrinsic::BitwiseOr, v.clone(), c(4)), c(1));
        assert_eq!(simplify(&or).to_string(), simplify(&op(Intrinsic::BitwiseOr, v.clone(), c(5))).to_string());
        let xor = op(Intrinsic::BitwiseXor, op(Intrinsic::BitwiseXor, v.clone(), c(3)), c(3));
        assert_eq!(simplify(&xor).to_string(), v.to_string());
    }

    #[test]
    fn a_mux_with_a_known_index_is_the_value_it_picks() {
        let t = Type::i32();
        let x = Expr::var_i32("x");
        let values = |id: Expr| {
            vec![id, Expr::add(x.clone(), Expr::i32(1)), Expr::i32(7), Expr::mul(x.clone(), Expr::i32(3))]
        };
        let mux = |id: Expr| Expr::intrinsic(t, Intrinsic::Mux, values(id));
        let show = |e: &Expr| crate::lang::print::expr_to_string(&simplify(e));
        assert_eq!(show(&mux(Expr::i32(1))), "7");
        assert_eq!(show(&mux(Expr::sub(Expr::i32(3), Expr::i32(3)))), "(x + 1)");
        // Out of range, either side: the last value.
        assert_eq!(show(&mux(Expr::i32(9))), "(x*3)");
        assert_eq!(show(&mux(Expr::i32(-1))), "(x*3)");
        // An unknown index keeps the mux, and its facts are the values'.
        let kept = simplify(&mux(Expr::var_i32("i")));
        assert!(kept.as_intrinsic(Intrinsic::Mux).is_some());
        let small = Expr::intrinsic(t, Intrinsic::Mux, vec![Expr::var_i32("i"), Expr::i32(2), Expr::i32(5)]);
        assert!(simplify(&Expr::lt(small, Expr::i32(6))).is_true());
        // Its bounds are the union of its values, whatever the index.
        let b = crate::analysis::bounds::bounds_of_expr(
            &Expr::intrinsic(t, Intrinsic::Mux, vec![Expr::var_i32("i"), Expr::i32(-4), Expr::i32(9), Expr::i32(2)]),
            &Default::default(),
        );
        assert_eq!(b.min.and_then(|e| simplify(&e).as_int_const()), Some(-4));
        assert_eq!(b.max.and_then(|e| simplify(&e).as_int_const()), Some(9));
    }

    #[test]
    fn intrinsic_folding() {
        let t = Type::i32();
        let c = |op, args: Vec<Expr>| Expr::intrinsic(t, op, args);
        assert!(simplify(&c(
            Intrinsic::BitwiseAnd,
            vec![Expr::i32(12), Expr::i32(10)]
        ))
        .is_const_value(8));
        assert!(
            simplify(&c(Intrinsic::BitwiseOr, vec![Expr::i32(12), Expr::i32(3)]))
                .is_const_value(15)
        );
        assert!(simplify(&c(
            Intrinsic::BitwiseXor,
            vec![Expr::i32(12), Expr::i32(10)]
        ))
        .is_const_value(6));
        assert!(simplify(&c(Intrinsic::BitwiseNot, vec![Expr::i32(0)])).is_const_value(-1));
        assert!(
            simplify(&c(Intrinsic::ShiftLeft, vec![Expr::i32(3), Expr::i32(4)])).is_const_value(48)
        );
        assert!(simplify(&c(
            Intrinsic::ShiftRight,
            vec![Expr::i32(-16), Expr::i32(2)]
        ))
        .is_const_value(-4));
        let u8t = Type::uint(8);
        let e = Expr::intrinsic(
            u8t,
            Intrinsic::ShiftRight,
            vec![Expr::uint_imm(u8t, 200), Expr::uint_imm(u8t, 3)],
        );
        assert!(simplify(&e).is_const_value(25));
        let e = Expr::intrinsic(Type::uint(32), Intrinsic::Abs, vec![Expr::i32(-5)]);
        assert!(simplify(&e).is_const_value(5));
        let e = Expr::intrinsic(t, Intrinsic::Popcount, vec![Expr::i32(0xff)]);
        assert!(simplify(&e).is_const_value(8));
        let e = Expr::intrinsic(t, Intrinsic::CountLeadingZeros, vec![Expr::i32(1)]);
        assert!(simplify(&e).is_const_value(31));
        let e = Expr::intrinsic(
            Type::float(32),
            Intrinsic::Math(MathFn::Sqrt),
            vec![Expr::f32(2.0)],
        );
        assert_eq!(simplify(&e).as_float_const(), Some(2f32.sqrt() as f64));
        // 32-bit transcendentals of constants fold as Halide's do (in
        // double, rounded to float; seed 85036's `asinh(1.625) > 2` is
        // false); 64-bit ones stay calls, as in Halide.
        let math = |bits: u8, m: MathFn, args: Vec<Expr>| Expr::intrinsic(Type::float(bits), Intrinsic::Math(m), args);
        let folded = simplify(&math(32, MathFn::Asinh, vec![Expr::f32(1.625)]));
        assert_eq!(folded.as_float_const(), Some(super::c_math::unary(MathFn::Asinh, 1.625).unwrap() as f32 as f64));
        assert!((folded.as_float_const().unwrap() - 1.2622).abs() < 1e-3, "{folded}");
        let folded = simplify(&math(32, MathFn::Pow, vec![Expr::f32(2.0), Expr::f32(10.0)]));
        assert_eq!(folded.as_float_const(), Some(1024.0));
        let folded = simplify(&math(32, MathFn::Atan2, vec![Expr::f32(1.0), Expr::f32(0.0)]));
        assert_eq!(folded.as_float_const(), Some(std::f64::consts::FRAC_PI_2 as f32 as f64));
        let e64 = math(64, MathFn::Asinh, vec![Expr::float_imm(Type::float(64), 1.625)]);
        assert!(simplify(&e64).as_float_const().is_none());
        let x = Expr::var_i32("x");
        assert_eq!(
            s(c(Intrinsic::ShiftLeft, vec![x.clone(), Expr::i32(3)])),
            "(x * 8)"
        );
        assert_eq!(
            s(c(Intrinsic::ShiftRight, vec![x.clone(), Expr::i32(1)])),
            "(x / 2)"
        );
        assert_eq!(
            s(c(Intrinsic::BitwiseOr, vec![x.clone(), Expr::i32(0)])),
            "x"
        );
    }

    #[test]
    fn shifts_past_the_width_are_overflow() {
        // Halide's simplifier: poison in LLVM, its signed-overflow error here.
        let u8t = Type::uint(8);
        let x = Expr::var(u8t, "x");
        for (op, amount) in [
            (Intrinsic::ShiftLeft, Expr::uint_imm(u8t, 8)),
            (Intrinsic::ShiftRight, Expr::uint_imm(u8t, 200)),
        ] {
            let e = simplify(&Expr::intrinsic(u8t, op, vec![x.clone(), amount]));
            assert!(e.as_intrinsic(Intrinsic::SignedIntegerOverflow).is_some(), "{e}");
        }
        // A negative signed amount shifts the other way, by its magnitude.
        let i32x = Expr::var_i32("x");
        let e = simplify(&Expr::intrinsic(Type::i32(), Intrinsic::ShiftLeft, vec![i32x, Expr::i32(-40)]));
        assert!(e.as_intrinsic(Intrinsic::SignedIntegerOverflow).is_some(), "{e}");
    }

    #[test]
    fn target_queries_fold_while_compiling() {
        use crate::lang::target_queries::{target_bits, target_has_feature, with_compile_target};
        use crate::target::{feature, Target};
        let t = Target::parse("x86-64-linux-avx2").unwrap();
        assert!(!simplify(&target_bits()).is_const());
        with_compile_target(&t, || {
            assert!(simplify(&target_bits()).is_const_value(64));
            assert!(simplify(&target_has_feature(feature::AVX2)).is_true());
            assert!(simplify(&target_has_feature(feature::AVX512)).is_false());
        });
        assert!(!simplify(&target_bits()).is_const());
    }

    #[test]
    fn likely_kept() {
        let x = Expr::var_i32("x");
        let e = Expr::likely(Expr::add(Expr::add(x.clone(), Expr::i32(1)), Expr::i32(2)));
        assert_eq!(s(e), "likely((x + 3))");
        let e = Expr::likely(Expr::add(Expr::i32(1), Expr::i32(2)));
        assert!(simplify(&e).is_const_value(3));
    }
}
