//! Monotonicity of an expression in one variable (the idea of Halide's
//! Monotonic.cpp, written anew).
//!
//! `is_monotonic(e, v)` says how `e` moves when the integer variable `v`
//! grows, everything else held fixed: `Constant` (does not move),
//! `Increasing` (never decreases), `Decreasing` (never increases), or
//! `Unknown`. The answer is conservative: `Unknown` is always allowed.
//! Booleans are ordered false < true, so `v > c` is increasing in `v`.
//! Signed 32/64-bit arithmetic is assumed not to overflow (Halide's rule);
//! narrower or unsigned arithmetic that moves with `v` may wrap, so it is
//! `Unknown`. Lets are followed: a name bound to an expression that moves
//! with `v` moves the same way wherever it is used.

use std::collections::HashMap;

use crate::analysis::simplify::{can_prove, info::no_overflow};
use crate::ir::visit::expr_uses_var;
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Monotonic {
    Constant,
    Increasing,
    Decreasing,
    Unknown,
}

use Monotonic::*;

impl Monotonic {
    /// The direction of `-e` given that of `e`.
    pub fn flip(self) -> Monotonic {
        match self {
            Increasing => Decreasing,
            Decreasing => Increasing,
            m => m,
        }
    }

    /// The direction of a function that is non-decreasing in both of two
    /// arguments moving as `self` and `other` (a sum, a min, a max, ...).
    pub fn unify(self, other: Monotonic) -> Monotonic {
        match (self, other) {
            (Constant, m) | (m, Constant) => m,
            (a, b) if a == b => a,
            _ => Unknown,
        }
    }

    /// Increasing or constant.
    pub fn is_non_decreasing(self) -> bool {
        matches!(self, Increasing | Constant)
    }

    /// Decreasing or constant.
    pub fn is_non_increasing(self) -> bool {
        matches!(self, Decreasing | Constant)
    }
}

/// How `e` moves as the variable `var` increases.
pub fn is_monotonic(e: &Expr, var: &str) -> Monotonic {
    Analysis {
        var,
        lets: HashMap::new(),
    }
    .of(e)
}

struct Analysis<'a> {
    var: &'a str,
    /// Directions of the let-bound names in scope that move with `var`.
    lets: HashMap<String, Monotonic>,
}

impl Analysis<'_> {
    fn uses_var(&self, e: &Expr) -> bool {
        expr_uses_var(e, self.var) || self.lets.keys().any(|n| expr_uses_var(e, n))
    }

    fn of(&mut self, e: &Expr) -> Monotonic {
        if !self.uses_var(e) {
            return Constant;
        }
        let ty = e.ty();
        match e.node() {
            ExprNode::Variable { name, .. } => {
                if let Some(m) = self.lets.get(name) {
                    *m
                } else if name == self.var {
                    Increasing
                } else {
                    Constant
                }
            }
            ExprNode::Cast(a) => {
                let from = a.ty();
                // Widening (or int -> float) keeps the order; narrowing may wrap.
                let keeps_order = ty.can_represent_type(from)
                    || (ty.is_float() && (from.is_float() || from.is_int_or_uint()));
                if keeps_order {
                    self.of(a)
                } else {
                    Unknown
                }
            }
            ExprNode::Not(a) => self.of(a).flip(),
            ExprNode::Binary { op, a, b } => self.binary(*op, a, b, no_overflow(a.ty())),
            ExprNode::Select { cond, t, f } => self.select(cond, t, f),
            ExprNode::Let { name, value, body } => {
                let mv = self.of(value);
                // Recorded even when constant: the name may shadow `var`.
                let old = self.lets.insert(name.clone(), mv);
                let r = self.of(body);
                match old {
                    Some(o) => self.lets.insert(name.clone(), o),
                    None => self.lets.remove(name),
                };
                r
            }
            ExprNode::Broadcast { value, .. } => self.of(value),
            ExprNode::Call {
                kind:
                    CallKind::Intrinsic(
                        Intrinsic::Likely
                        | Intrinsic::LikelyIfInnermost
                        | Intrinsic::PromiseClamped
                        | Intrinsic::UnsafePromiseClamped
                        | Intrinsic::MemoizeExpr,
                    ),
                args,
                ..
            } => self.of(&args[0]),
            _ => Unknown,
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, exact: bool) -> Monotonic {
        let (ma, mb) = (self.of(a), self.of(b));
        if ma == Constant && mb == Constant {
            return Constant;
        }
        match op {
            BinOp::Add if exact => ma.unify(mb),
            BinOp::Sub if exact => ma.unify(mb.flip()),
            BinOp::Mul if exact => match (const_sign(a), const_sign(b)) {
                (_, Some(s)) if mb == Constant => scale(ma, s),
                (Some(s), _) if ma == Constant => scale(mb, s),
                _ => Unknown,
            },
            // Division (rounding down) by a constant keeps or flips the order.
            BinOp::Div if exact || a.ty().is_uint() => match const_sign(b) {
                Some(s) if mb == Constant => scale(ma, s),
                _ => Unknown,
            },
            BinOp::Min | BinOp::Max => ma.unify(mb),
            // As booleans (false < true): `a < b` grows as b - a grows.
            BinOp::LT | BinOp::LE => ma.flip().unify(mb),
            BinOp::GT | BinOp::GE => ma.unify(mb.flip()),
            BinOp::And | BinOp::Or => ma.unify(mb),
            _ => Unknown,
        }
    }

    fn select(&mut self, cond: &Expr, t: &Expr, f: &Expr) -> Monotonic {
        let (mc, mt, mf) = (self.of(cond), self.of(t), self.of(f));
        let branches = mt.unify(mf);
        match mc {
            Constant => branches,
            // The condition switches once, from false to true (increasing)
            // or true to false (decreasing). The jump at the switch goes
            // the branches' way if the branch taken later is never smaller
            // (never larger) than the other.
            Increasing | Decreasing if branches == Increasing || branches == Decreasing => {
                let (later, earlier) = if mc == Increasing { (t, f) } else { (f, t) };
                let holds = if branches == Increasing {
                    Expr::ge(later.clone(), earlier.clone())
                } else {
                    Expr::le(later.clone(), earlier.clone())
                };
                if t.ty().is_scalar() && can_prove(&holds) {
                    branches
                } else {
                    Unknown
                }
            }
            _ => Unknown,
        }
    }
}

/// The sign (1, 0, -1) of a constant integer expression.
fn const_sign(e: &Expr) -> Option<i64> {
    if let Some(v) = e.as_int_const() {
        return Some(v.signum());
    }
    if let Some(v) = e.as_uint_const() {
        return Some((v > 0) as i64);
    }
    if let ExprNode::Broadcast { value, .. } = e.node() {
        return const_sign(value);
    }
    None
}

fn scale(m: Monotonic, sign: i64) -> Monotonic {
    match sign {
        0 => Constant,
        s if s > 0 => m,
        _ => m.flip(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    fn v() -> Expr {
        Expr::var_i32("v")
    }
    fn c() -> Expr {
        Expr::var_i32("c")
    }
    fn i(n: i64) -> Expr {
        Expr::i32(n)
    }
    fn m(e: Expr) -> Monotonic {
        is_monotonic(&e, "v")
    }

    #[test]
    fn linear_arithmetic() {
        assert_eq!(m(c()), Constant);
        assert_eq!(m(v()), Increasing);
        assert_eq!(m(Expr::add(v(), c())), Increasing);
        assert_eq!(m(Expr::sub(c(), v())), Decreasing);
        assert_eq!(m(Expr::sub(v(), v())), Unknown);
        assert_eq!(m(Expr::mul(v(), i(8))), Increasing);
        assert_eq!(m(Expr::mul(i(-2), v())), Decreasing);
        assert_eq!(m(Expr::mul(v(), c())), Unknown);
        assert_eq!(m(Expr::mul(v(), i(0))), Constant);
        assert_eq!(m(Expr::div(Expr::add(v(), i(7)), i(8))), Increasing);
        assert_eq!(m(Expr::div(v(), i(-3))), Decreasing);
        assert_eq!(m(Expr::div(i(100), v())), Unknown);
        assert_eq!(m(Expr::modulo(v(), i(4))), Unknown);
        assert_eq!(m(Expr::modulo(c(), i(4))), Constant);
    }

    #[test]
    fn min_max_and_clamps() {
        // The shape ShiftInwards splits give: min(v * 8, extent - 8) + base.
        let e = Expr::add(Expr::min(Expr::mul(v(), i(8)), Expr::sub(c(), i(8))), c());
        assert_eq!(m(e), Increasing);
        assert_eq!(m(Expr::max(v(), Expr::sub(c(), v()))), Unknown);
        assert_eq!(m(Expr::max(Expr::sub(i(0), v()), c())), Decreasing);
    }

    #[test]
    fn comparisons_and_logic() {
        assert_eq!(m(Expr::gt(v(), c())), Increasing);
        assert_eq!(m(Expr::lt(v(), c())), Decreasing);
        assert_eq!(m(Expr::le(c(), v())), Increasing);
        assert_eq!(m(Expr::not(Expr::gt(v(), c()))), Decreasing);
        assert_eq!(
            m(Expr::and(Expr::gt(v(), c()), Expr::ge(v(), i(3)))),
            Increasing
        );
        assert_eq!(m(Expr::eq(v(), c())), Unknown);
    }

    #[test]
    fn selects() {
        let b = Expr::var(Type::bool(), "b");
        // An invariant condition: both branches decide.
        assert_eq!(
            m(Expr::select(b.clone(), v(), Expr::add(v(), i(1)))),
            Increasing
        );
        assert_eq!(m(Expr::select(b, v(), Expr::sub(c(), v()))), Unknown);
        // The sliding-window shape: switches to a branch never below the other.
        let prev_max_plus_one = Expr::add(v(), i(2));
        let slid = Expr::select(
            Expr::likely(Expr::gt(v(), c())),
            Expr::max(v(), prev_max_plus_one),
            v(),
        );
        assert_eq!(m(slid), Increasing);
        // Switching down to a smaller branch breaks monotonicity.
        let bad = Expr::select(Expr::gt(v(), c()), Expr::sub(v(), i(5)), v());
        assert_eq!(m(bad), Unknown);
    }

    #[test]
    fn lets_and_casts() {
        let e = Expr::let_(
            "t",
            Expr::mul(v(), i(2)),
            Expr::add(Expr::var_i32("t"), i(1)),
        );
        assert_eq!(m(e), Increasing);
        let shadow = Expr::let_("v", c(), Expr::var_i32("v"));
        assert_eq!(m(shadow), Constant);
        assert_eq!(m(Expr::cast(Type::int(64), v())), Increasing);
        assert_eq!(m(Expr::cast(Type::float(32), v())), Increasing);
        assert_eq!(m(Expr::cast(Type::int(8), v())), Unknown);
        // Narrow arithmetic can wrap.
        let u8v = Expr::cast(Type::uint(8), v());
        assert_eq!(m(Expr::add(u8v, Expr::uint_imm(Type::uint(8), 1))), Unknown);
    }
}
