//! Averages, saturating sums and differences, and absolute differences
//! written out in wider arithmetic become Halide's intrinsics (a subset of
//! Halide's FindIntrinsics), so that a back end with instructions for them
//! (HVX: `codegen/hvx.rs`) selects those. Runs on Hexagon code only: on
//! the other targets LLVM finds the same instructions in the written-out
//! form.
//!
//! Assumes: lowered, simplified code (the simplifier writes `x >> 1` of an
//! unsigned or non-negative sum as `x / 2`, and `u8_sat` as
//! `saturating_cast`). Guarantees: each rewrite computes exactly what it
//! replaces, for every value (see `narrow_operands` for the condition each
//! relies on); everything else is unchanged.
//!
//! - `N((W(a) + W(b) + 1) / 2)` → `rounding_halving_add(a, b)`
//! - `N((W(a) + W(b)) / 2)` → `halving_add(a, b)`
//! - `N((W(a) - W(b)) / 2)`, W signed → `halving_sub(a, b)`
//! - `saturating_cast<N>(W(a) + W(b))` → `saturating_add(a, b)`
//! - `saturating_cast<N>(W(a) - W(b))`, W signed → `saturating_sub(a, b)`
//! - `select(b < a, a - b, b - a)` (and the mirrored forms), unsigned →
//!   `absd(a, b)`
//! - `W(a) * W(b)`, W twice N's width and of its signedness →
//!   `widening_mul(a, b)` (the exact product fits)
//!
//! where `a` and `b` have the integer type N and W is an integer type in
//! which the exact sum or difference of two N values fits.

use crate::ir::visit::{mutate_expr_children, mutate_stmt_children, Mutator};
use crate::ir::{BinOp, Expr, ExprNode, Intrinsic, Stmt, Type};

/// The rewritten statement (see the module comment).
pub fn find_intrinsics(s: &Stmt) -> Stmt {
    FindIntrinsics.mutate_stmt(s)
}

struct FindIntrinsics;

impl Mutator for FindIntrinsics {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        mutate_stmt_children(self, s)
    }
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        rewrite(&e).unwrap_or(e)
    }
}

/// `e`'s operand `x` as a value of the narrow type `n`: `x` is `W(v)` with
/// `v` of type `n`, or a constant `n` represents.
fn as_narrow(x: &Expr, n: Type) -> Option<Expr> {
    match x.node() {
        ExprNode::Cast(v) if v.ty() == n => Some(v.clone()),
        _ => {
            let c = x.as_int_const()?;
            n.element_of().can_represent_i64(c).then(|| Expr::make_const_i64(n, c))
        }
    }
}

/// `(a, b)` of type `n` if `sum` is `W(a) op W(b)` where the exact result
/// of `op` on any two `n` values fits in W (so W's `op` does not wrap): W
/// is at least one bit wider, and signed for a difference.
fn narrow_operands(sum: &Expr, op: BinOp, n: Type) -> Option<(Expr, Expr)> {
    let ExprNode::Binary { op: o, a, b } = sum.node() else { return None };
    let w = sum.ty();
    // Bits the exact result needs in W: one more than N's, and one more
    // again for a signed W holding unsigned values.
    let needed = n.bits as u32 + 1 + u32::from(w.is_int() && n.is_uint());
    let wide_enough = w.is_int_or_uint()
        && n.is_int_or_uint()
        && w.lanes == n.lanes
        && w.bits as u32 >= needed
        && (w.is_int() || (n.is_uint() && op == BinOp::Add));
    if *o != op || !wide_enough {
        return None;
    }
    // A narrow operand must be a cast (or constant): both constant would
    // have been folded.
    let (na, nb) = (as_narrow(a, n)?, as_narrow(b, n)?);
    if na.is_const() && nb.is_const() {
        return None;
    }
    Some((na, nb))
}

fn intrinsic(i: Intrinsic, t: Type, a: Expr, b: Expr) -> Option<Expr> {
    Some(Expr::intrinsic(t, i, vec![a, b]))
}

fn rewrite(e: &Expr) -> Option<Expr> {
    let n = e.ty();
    if !n.is_int_or_uint() || n.bits > 32 {
        return None;
    }
    match e.node() {
        // W(a) * W(b)
        ExprNode::Binary { op: BinOp::Mul, a, b } if n.bits >= 16 => {
            let narrow = n.with_bits(n.bits / 2);
            let (na, nb) = (as_narrow(a, narrow)?, as_narrow(b, narrow)?);
            if na.is_const() && nb.is_const() {
                return None;
            }
            intrinsic(Intrinsic::WideningMul, n, na, nb)
        }
        // N((W(a) + W(b) [+ 1]) / 2), N((W(a) - W(b)) / 2)
        ExprNode::Cast(half) => {
            let ExprNode::Binary { op: BinOp::Div, a: sum, b: two } = half.node() else { return None };
            if !two.is_const_value(2) {
                return None;
            }
            if let ExprNode::Binary { op: BinOp::Add, a: inner, b: one } = sum.node() {
                if one.is_one() {
                    if let Some((a, b)) = narrow_operands(inner, BinOp::Add, n) {
                        return intrinsic(Intrinsic::RoundingHalvingAdd, n, a, b);
                    }
                }
            }
            if let Some((a, b)) = narrow_operands(sum, BinOp::Add, n) {
                return intrinsic(Intrinsic::HalvingAdd, n, a, b);
            }
            let (a, b) = narrow_operands(sum, BinOp::Sub, n)?;
            intrinsic(Intrinsic::HalvingSub, n, a, b)
        }
        // saturating_cast<N>(W(a) +/- W(b))
        ExprNode::Call { .. } => {
            let [sum] = e.as_intrinsic(Intrinsic::SaturatingCast)? else { return None };
            if let Some((a, b)) = narrow_operands(sum, BinOp::Add, n) {
                return intrinsic(Intrinsic::SaturatingAdd, n, a, b);
            }
            let (a, b) = narrow_operands(sum, BinOp::Sub, n)?;
            intrinsic(Intrinsic::SaturatingSub, n, a, b)
        }
        // select(b < a, a - b, b - a), unsigned
        ExprNode::Select { cond, t, f } if n.is_uint() => {
            let ExprNode::Binary { op: BinOp::LT, a: lo, b: hi } = cond.node() else { return None };
            let is_sub = |x: &Expr, p: &Expr, q: &Expr| {
                matches!(x.node(), ExprNode::Binary { op: BinOp::Sub, a, b }
                    if crate::ir::equality::equal(a, p) && crate::ir::equality::equal(b, q))
            };
            (is_sub(t, hi, lo) && is_sub(f, lo, hi)).then(|| Expr::intrinsic(n, Intrinsic::Absd, vec![hi.clone(), lo.clone()]))
        }
        _ => None,
    }
}
