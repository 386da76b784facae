//! `undef` in a definition's values (Halide's RemoveUndef, applied to one
//! definition while its loop nest is built).
//!
//! Assumes: the values of one definition of a Func (types already match
//! the Func's). Guarantees: the result has no `undef`; it says which
//! elements are stored and under which condition, with Halide's meaning:
//! an element that is `undef` is left alone; `select(c, undef, v)` stores
//! `v` only where `c` is false (and nested selects alike); `undef` anywhere
//! else in an element (inside arithmetic) leaves that element alone. A
//! single-valued update whose value is left alone does nothing; in a
//! Tuple, only the elements left alone keep their old values.

use crate::ir::visit::for_each_expr;
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic};

fn is_undef(e: &Expr) -> bool {
    matches!(
        e.node(),
        ExprNode::Call {
            kind: CallKind::Intrinsic(Intrinsic::Undef),
            ..
        }
    )
}

fn contains_undef(e: &Expr) -> bool {
    let mut found = false;
    for_each_expr(e, &mut |x| found |= is_undef(x));
    found
}

fn and(a: Expr, b: Expr) -> Expr {
    if b.is_true() {
        a
    } else {
        Expr::and(a, b)
    }
}

/// `e` as (condition under which it is stored, value), or `None` if it is
/// never stored.
fn stored(e: &Expr) -> Option<(Expr, Expr)> {
    if let ExprNode::Select { cond, t, f } = e.node() {
        if contains_undef(t) || contains_undef(f) {
            return match (stored(t), stored(f)) {
                (None, None) => None,
                (Some((ct, vt)), None) => Some((and(cond.clone(), ct), vt)),
                (None, Some((cf, vf))) => Some((and(Expr::not(cond.clone()), cf), vf)),
                (Some((ct, vt)), Some((cf, vf))) => Some((
                    Expr::select(cond.clone(), ct, cf),
                    Expr::select(cond.clone(), vt, vf),
                )),
            };
        }
    }
    if contains_undef(e) {
        return None;
    }
    Some((Expr::bool_const(true), e.clone()))
}

/// What a definition stores.
pub enum Stores {
    /// Nothing: the definition is a no-op.
    Nothing,
    /// `values` where `condition` holds.
    Values { condition: Expr, values: Vec<Expr> },
}

/// See the module comment. `old(i)` is element `i`'s current value at the
/// point being defined (used for Tuple elements that are left alone).
pub fn remove_undef(values: &[Expr], old: impl Fn(usize) -> Expr) -> Stores {
    if !values.iter().any(contains_undef) {
        return Stores::Values {
            condition: Expr::bool_const(true),
            values: values.to_vec(),
        };
    }
    let parts: Vec<Option<(Expr, Expr)>> = values.iter().map(stored).collect();
    if parts.iter().all(Option::is_none) {
        return Stores::Nothing;
    }
    if let [Some((c, v))] = parts.as_slice() {
        return Stores::Values {
            condition: c.clone(),
            values: vec![v.clone()],
        };
    }
    let values = parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| match p {
            None => old(i),
            Some((c, v)) if c.is_true() => v,
            Some((c, v)) => Expr::select(c, v, old(i)),
        })
        .collect();
    Stores::Values {
        condition: Expr::bool_const(true),
        values,
    }
}

/// A pure definition: undefined values may be anything; zero is as good
/// as any (reading points no update writes is reading uninitialized data
/// in Halide).
pub fn undef_to_zero(values: &[Expr]) -> Vec<Expr> {
    values
        .iter()
        .map(|v| match stored(v) {
            None => Expr::zero(v.ty()),
            Some((c, e)) if c.is_true() => e,
            Some((c, e)) => Expr::select(c, e, Expr::zero(v.ty())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;
    use crate::lang::print::expr_to_string;

    fn undef() -> Expr {
        Expr::intrinsic(Type::i32(), Intrinsic::Undef, vec![])
    }

    #[test]
    fn conditional_and_partial_stores() {
        let x = Expr::var_i32("x");
        let c = Expr::lt(x.clone(), Expr::i32(3));
        let old = |i: usize| Expr::var_i32(format!("old{i}"));
        match remove_undef(&[Expr::select(c.clone(), undef(), x.clone())], old) {
            Stores::Values { condition, values } => {
                assert_eq!(expr_to_string(&condition), "!(x < 3)");
                assert_eq!(expr_to_string(&values[0]), "x");
            }
            Stores::Nothing => panic!(),
        }
        assert!(matches!(
            remove_undef(&[Expr::add(undef(), Expr::i32(5))], old),
            Stores::Nothing
        ));
        match remove_undef(&[undef(), x.clone()], old) {
            Stores::Values { values, .. } => {
                assert_eq!(expr_to_string(&values[0]), "old0");
            }
            Stores::Nothing => panic!(),
        }
        assert_eq!(expr_to_string(&undef_to_zero(&[undef()])[0]), "0");
    }
}
