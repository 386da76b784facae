//! What the fixed-point and bit-field intrinsics compute, as plain IR:
//! Halide's `lower_intrinsic` (FindIntrinsics.cpp) and the concat/extract
//! lowerings (CodeGen_Internal.cpp, FlattenNestedRamps.cpp), built the same
//! way so that the same cases fold (and the same constant shifts past the
//! width become Halide's signed-overflow error). Code generation, the
//! evaluator and bounds inference all go through this one definition.

use crate::analysis::simplify::simplify;
use crate::ir::{Expr, ExprNode, Intrinsic, Type, TypeCode};
use crate::lang::fixed_point::widen;
use crate::lang::operators::{cast, match_bits, match_lanes};

/// The intrinsic call `which(args)` of type `ty` as plain IR, or `None`
/// for the intrinsics that are not lowered this way.
pub fn lower_intrinsic(which: Intrinsic, ty: Type, args: &[Expr]) -> Option<Expr> {
    use Intrinsic::*;
    let arg = |i: usize| args.get(i).cloned();
    Some(match which {
        WidenRightAdd => Expr::add(arg(0)?, widened(arg(1)?)?),
        WidenRightMul => Expr::mul(arg(0)?, widened(arg(1)?)?),
        WidenRightSub => Expr::sub(arg(0)?, widened(arg(1)?)?),
        WideningShiftLeft => shift(true, widened(arg(0)?)?, arg(1)?)?,
        WideningShiftRight => shift(false, widened(arg(0)?)?, arg(1)?)?,
        RoundingShiftRight => rounding_shift_right(arg(0)?, arg(1)?)?,
        RoundingShiftLeft => rounding_shift_left(arg(0)?, arg(1)?)?,
        ExtractBits => extract_bits(ty, arg(0)?, arg(1)?)?,
        ConcatBits => concat_bits(ty, args)?,
        Mux => mux_as_selects(args)?,
        _ => return None,
    })
}

/// `mux(id, v0, .., vn)` as `select(id == 0, v0, select(id == 1, v1, ..
/// vn))`: Halide's `lower_mux`, each `i` a constant of the index's own
/// type (a scalar index, or one with the values' lanes).
fn mux_as_selects(args: &[Expr]) -> Option<Expr> {
    let (id, values) = args.split_first()?;
    let (last, rest) = values.split_last()?;
    let mut acc = last.clone();
    for (i, v) in rest.iter().enumerate().rev() {
        let k = Expr::make_const_i64(id.ty(), i as i64);
        acc = Expr::select(Expr::eq(id.clone(), k), v.clone(), acc);
    }
    Some(acc)
}

/// FindIntrinsics' `widen`: a plain cast to twice the width (there are
/// no integers wider than 64 bits to widen to).
fn widened(e: Expr) -> Option<Expr> {
    let t = widen(e.ty());
    (t.bits <= 64).then(|| Expr::cast(t, e))
}

/// Halide's `x << y` / `x >> y` on Exprs: lanes and bits matched (each
/// operand keeps its signedness), the result in `x`'s type. Only integers
/// shift (Halide rejects or crashes on anything else).
fn shift(left: bool, x: Expr, y: Expr) -> Option<Expr> {
    if !(x.ty().is_int() || x.ty().is_uint()) || !(y.ty().is_int() || y.ty().is_uint()) {
        return None;
    }
    let (x, y) = match_lanes(x, y).ok()?;
    let (x, y) = match_bits(x, y).ok()?;
    let which = if left { Intrinsic::ShiftLeft } else { Intrinsic::ShiftRight };
    Some(Expr::intrinsic(x.ty(), which, vec![x, y]))
}

fn bitwise_and(x: Expr, y: Expr) -> Expr {
    Expr::intrinsic(x.ty(), Intrinsic::BitwiseAnd, vec![x, y])
}

/// `select(c, 1, 0)` in type `t`.
fn one_if(c: Expr, t: Type) -> Expr {
    Expr::select(c, Expr::one(t), Expr::zero(t))
}

/// Halide's `is_positive_const`: a constant (through lossless casts,
/// broadcasts and ramps of them) greater than zero.
fn is_positive_const(e: &Expr) -> bool {
    match e.node() {
        ExprNode::IntImm(v) => *v > 0,
        ExprNode::UIntImm(v) => *v > 0,
        ExprNode::FloatImm(v) => *v > 0.0,
        ExprNode::Cast(v) => {
            let to = e.ty();
            (!to.is_int_or_uint() || to.can_represent_type(v.ty())) && is_positive_const(v)
        }
        ExprNode::Ramp { base, stride, .. } => is_positive_const(base) && is_positive_const(stride),
        ExprNode::Broadcast { value, .. } => is_positive_const(value),
        _ => false,
    }
}

/// A constant amount rounds with an averaging add (`rounding_halving_add(a,
/// 2^(b-1) - 1) >> (b - 1)`); otherwise the bit below the result is added
/// back: `(a >> b) + ((b > 0) & (a >> saturating_sub(b, 1)))`.
fn rounding_shift_right(a: Expr, b: Expr) -> Option<Expr> {
    let (ta, tb) = (a.ty(), b.ty());
    if is_positive_const(&b) {
        let s = simplify(&Expr::sub(b.clone(), Expr::one(tb)));
        // `1 << s` on Halide's int literal: an Int(32) one, bits matched.
        let one = Expr::broadcast_if(Expr::i32(1), s.lanes());
        let p = shift(true, one, s.clone())?;
        let round = simplify(&cast(ta, Expr::sub(p.clone(), Expr::one(p.ty()))).ok()?);
        let avg = Expr::intrinsic(ta, Intrinsic::RoundingHalvingAdd, vec![a, round]);
        return shift(false, avg, s);
    }
    let positive = one_if(Expr::gt(b.clone(), Expr::zero(tb)), ta);
    let below = Expr::intrinsic(tb, Intrinsic::SaturatingSub, vec![b.clone(), Expr::one(tb)]);
    let rounding = bitwise_and(positive, shift(false, a.clone(), below)?);
    Some(simplify(&Expr::add(shift(false, a, b)?, rounding)))
}

/// `(a << b) + ((b < 0) & (a << saturating_add(b, 1)))`.
fn rounding_shift_left(a: Expr, b: Expr) -> Option<Expr> {
    let (ta, tb) = (a.ty(), b.ty());
    let negative = one_if(Expr::lt(b.clone(), Expr::zero(tb)), ta);
    let above = Expr::intrinsic(tb, Intrinsic::SaturatingAdd, vec![b.clone(), Expr::one(tb)]);
    let rounding = bitwise_and(negative, shift(true, a.clone(), above)?);
    Some(simplify(&Expr::add(shift(true, a, b)?, rounding)))
}

/// Shift the bits down as an unsigned value (zero-filling), truncate to
/// the width of `ty`, and reinterpret.
fn extract_bits(ty: Type, e: Expr, lsb: Expr) -> Option<Expr> {
    let e = if e.ty().is_uint() {
        e
    } else {
        Expr::reinterpret(e.ty().with_code(TypeCode::UInt), e)
    };
    let e = shift(false, e, lsb)?;
    let e = cast(ty.with_code(TypeCode::UInt).with_lanes(e.lanes()), e).ok()?;
    let e = Expr::reinterpret(ty.with_lanes(e.lanes()), e);
    Some(simplify(&e))
}

/// The arguments' lanes interleaved (argument 0 in the low bits of each
/// result lane) and reinterpreted as the wide type.
fn concat_bits(ty: Type, args: &[Expr]) -> Option<Expr> {
    let lanes = args.first()?.lanes() as i32;
    let n = args.len() as i32;
    let indices = (0..lanes).flat_map(|i| (0..n).map(move |j| j * lanes + i)).collect();
    let interleaved = simplify(&Expr::shuffle(args.to_vec(), indices));
    Some(Expr::reinterpret(ty, interleaved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::evaluate::Value;
    use crate::lang::fixed_point::{shift, shift_by_int, widen_right};
    use std::collections::HashMap;

    fn c(t: Type, v: i64) -> Expr {
        Expr::make_const_i64(t, v)
    }

    /// The value of a constant expression, or None if it is undefined.
    fn value(e: &Expr) -> Option<i128> {
        use crate::analysis::evaluate::Evaluator;
        let mut env: HashMap<String, Value> = HashMap::new();
        let mut ev = Evaluator::new(&mut env);
        let v = ev.eval(e).ok()?;
        (!ev.overflowed).then(|| v[0].as_int().unwrap())
    }

    /// Round-half-up `a / 2^b` (a left shift for b < 0), in i128.
    fn rounded(a: i128, b: i32) -> i128 {
        if b <= 0 {
            a << -b
        } else {
            (a + (1 << (b - 1))) >> b
        }
    }

    #[test]
    fn rounding_shifts_round_half_up() {
        for t in [Type::int(8), Type::uint(8), Type::int(16), Type::uint(32), Type::int(64)] {
            let bt = t.with_code(TypeCode::Int);
            for a in [t.min_int(), t.min_int() + 1, -7, -1, 0, 1, 5, 100, t.max_int()] {
                if a < t.min_int() || a > t.max_int() {
                    continue;
                }
                for b in -(t.bits as i32 - 1)..t.bits as i32 {
                    let e = shift(Intrinsic::RoundingShiftRight, c(t, a as i64), c(bt, b as i64)).unwrap();
                    let want = crate::analysis::evaluate::wrap(t, rounded(a, b));
                    assert_eq!(value(&e), Some(want), "rounding_shift_right({a}, {b}) in {t:?}");
                    let e = shift(Intrinsic::RoundingShiftLeft, c(t, a as i64), c(bt, -b as i64)).unwrap();
                    assert_eq!(value(&e), Some(want), "rounding_shift_left({a}, {}) in {t:?}", -b);
                }
            }
        }
    }

    #[test]
    fn widening_shifts_keep_every_bit() {
        let t = Type::int(8);
        let e = shift_by_int(Intrinsic::WideningShiftLeft, c(t, -128), 15).unwrap();
        assert_eq!(e.ty(), Type::int(16));
        assert_eq!(value(&e), Some(0));
        let e = shift_by_int(Intrinsic::WideningShiftLeft, c(t, -3), 4).unwrap();
        assert_eq!(value(&e), Some(-48));
        let e = shift(Intrinsic::WideningShiftRight, c(Type::uint(8), 200), c(Type::int(8), -8)).unwrap();
        assert_eq!(value(&e), Some(200 << 8));
        // Twice the width or more is undefined: not folded.
        let e = shift(Intrinsic::WideningShiftLeft, c(Type::uint(8), 1), c(Type::uint(8), 16)).unwrap();
        assert_eq!(value(&e), None);
    }

    #[test]
    fn constant_rounding_shift_by_the_width() {
        // Defined through the averaging form for 8 and 16 bits...
        let e = shift(Intrinsic::RoundingShiftRight, c(Type::uint(8), 200), c(Type::uint(8), 8)).unwrap();
        assert_eq!(value(&e), Some(1));
        // ... and Halide's signed-overflow error for 32 bits (1 << 31 - 1).
        let e = shift(Intrinsic::RoundingShiftRight, c(Type::i32(), 5), c(Type::i32(), 32)).unwrap();
        assert_eq!(value(&e), None);
    }

    #[test]
    fn widen_right_and_bits() {
        let e = widen_right(Intrinsic::WidenRightSub, c(Type::uint(16), 3), c(Type::uint(8), 5)).unwrap();
        assert_eq!(value(&e), Some(65534));
        let e = widen_right(Intrinsic::WidenRightMul, c(Type::int(16), -300), c(Type::int(8), -100)).unwrap();
        assert_eq!(value(&e), Some(crate::analysis::evaluate::wrap(Type::int(16), 30000)));
        let e = crate::lang::bits::concat_bits(vec![c(Type::uint(8), 0x34), c(Type::uint(8), 0x12)]).unwrap();
        assert_eq!(value(&e), Some(0x1234));
        let e = crate::lang::bits::concat_bits(vec![c(Type::int(8), -1), c(Type::int(8), 1)]).unwrap();
        assert_eq!(value(&e), Some(0x01ff));
        let e = crate::lang::bits::extract_bits(Type::uint(8), c(Type::int(16), -2), Expr::i32(4));
        assert_eq!(value(&e), Some(0xff));
        let e = crate::lang::bits::extract_bits(Type::int(8), c(Type::uint(16), 0x1234), Expr::i32(-4));
        assert_eq!(value(&e), Some(0x40));
    }

    #[test]
    fn simplifier_folds_constant_calls() {
        let e = shift(Intrinsic::RoundingShiftRight, c(Type::uint(8), 7), c(Type::uint(8), 1)).unwrap();
        assert!(simplify(&e).is_const_value(4));
        // An undefined widening shift is left for code generation.
        let e = shift(Intrinsic::WideningShiftLeft, c(Type::uint(8), 1), c(Type::uint(8), 16)).unwrap();
        assert!(!simplify(&e).is_const());
        let x = Expr::var(Type::uint(8), "x");
        let e = crate::lang::bits::concat_bits(vec![x.clone()]).unwrap();
        assert!(crate::ir::equal(&simplify(&e), &x));
    }
}
