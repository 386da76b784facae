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
        _ => return None,
    })
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
