//! `undef` in a definition (Halide's RemoveUndef, applied to one
//! definition while its loop nest is built).
//!
//! Assumes: the args and values of one definition of a Func (types already
//! match the Func's). Guarantees: the result has no `undef`; it says what is
//! stored and under which condition, with Halide's meaning:
//! - an expression containing `undef` is undefined, except that
//!   `select(c, undef, v)` (anywhere in it, at any depth) is `v` on the
//!   condition `!c` (and `select(c, v, undef)` alike): the conditions
//!   collected this way guard the store;
//! - an undefined arg means nothing is stored; an undefined value leaves
//!   its Tuple element alone (it keeps its old value), and if every value
//!   is undefined nothing is stored;
//! - all args must carry the same condition, and so must all values that
//!   are stored: a Tuple is written with one store (Halide's user error).

use crate::error::{Error, Result};
use crate::ir::equality::equal;
use crate::ir::visit::{for_each_expr, mutate_expr_children};
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Mutator};
use crate::lang::print::expr_to_string;

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

fn and(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::and(a, b)),
        (a, b) => a.or(b),
    }
}

fn or(a: Expr, b: Option<Expr>) -> Option<Expr> {
    b.map(|b| Expr::or(a, b))
}

/// Removes the undefs of one expression: `undefined` once any part of it
/// is undefined; `predicate` collects the conditions of the selects that
/// chose a defined side.
#[derive(Default)]
struct RemoveUndef {
    undefined: bool,
    predicate: Option<Expr>,
}

/// `e` without undefs and the condition under which it is that, or `None`
/// if it is undefined.
fn remove(e: &Expr) -> Option<(Expr, Option<Expr>)> {
    if !contains_undef(e) {
        return Some((e.clone(), None));
    }
    let mut m = RemoveUndef::default();
    let out = m.mutate_expr(e);
    (!m.undefined).then_some((out, m.predicate))
}

impl Mutator for RemoveUndef {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if self.undefined || !contains_undef(e) {
            return e.clone();
        }
        if is_undef(e) {
            self.undefined = true;
            return e.clone();
        }
        let ExprNode::Select { cond, t, f } = e.node() else {
            return mutate_expr_children(self, e);
        };
        let c = self.mutate_expr(cond);
        if self.undefined {
            return e.clone();
        }
        match (remove(t), remove(f)) {
            (None, None) => {
                self.undefined = true;
                e.clone()
            }
            (Some((t, pt)), None) => {
                self.predicate = and(self.predicate.take(), and(pt, Some(c)));
                t
            }
            (None, Some((f, pf))) => {
                self.predicate = and(self.predicate.take(), and(pf, Some(Expr::not(c))));
                f
            }
            (Some((t, pt)), Some((f, pf))) => {
                // A side's condition only matters where that side is chosen.
                let p = and(or(Expr::not(c.clone()), pt), or(c.clone(), pf));
                self.predicate = and(self.predicate.take(), p);
                Expr::select(c, t, f)
            }
        }
    }
}

/// What a definition stores once its undefs are removed.
#[derive(Debug)]
pub struct Stores {
    /// The store happens where this holds.
    pub condition: Expr,
    pub args: Vec<Expr>,
    pub values: Vec<Expr>,
}

/// Halide's rule: the parts of one store carry one condition.
fn same_conditions(what: &str, conditions: &[Option<Expr>]) -> Result<Option<Expr>> {
    let show = |c: &Option<Expr>| {
        c.as_ref()
            .map(expr_to_string)
            .unwrap_or_else(|| "(undefined)".into())
    };
    for i in 1..conditions.len() {
        let same = match (&conditions[i - 1], &conditions[i]) {
            (Some(a), Some(b)) => equal(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            return Err(Error::user(format!(
                "Conditionally-undef {what} in a Tuple should have the same conditions\n  Condition {}: {}\n  Condition {i}: {}\n",
                i - 1,
                show(&conditions[i - 1]),
                show(&conditions[i])
            )));
        }
    }
    Ok(conditions.first().cloned().flatten())
}

/// See the module comment. `old(i, args)` is element `i`'s current value at
/// the point being defined, `args` (for Tuple elements that are left
/// alone). `None`: nothing is stored.
pub fn remove_undef(
    args: &[Expr],
    values: &[Expr],
    old: impl Fn(usize, &[Expr]) -> Expr,
) -> Result<Option<Stores>> {
    let mut new_args = Vec::with_capacity(args.len());
    let mut arg_conditions = vec![];
    for a in args {
        let Some((a, c)) = remove(a) else {
            return Ok(None);
        };
        new_args.push(a);
        arg_conditions.push(c);
    }
    let arg_condition = same_conditions("args", &arg_conditions)?;
    let mut new_values = Vec::with_capacity(values.len());
    let mut value_conditions = vec![];
    for (i, v) in values.iter().enumerate() {
        match remove(v) {
            Some((v, c)) => {
                new_values.push(v);
                value_conditions.push(c);
            }
            None => new_values.push(old(i, &new_args)),
        }
    }
    if value_conditions.is_empty() {
        return Ok(None);
    }
    let value_condition = same_conditions("values", &value_conditions)?;
    Ok(Some(Stores {
        condition: and(arg_condition, value_condition).unwrap_or_else(|| Expr::bool_const(true)),
        args: new_args,
        values: new_values,
    }))
}

/// A pure definition: undefined values may be anything; zero is as good
/// as any (reading points no update writes is reading uninitialized data
/// in Halide), and so is zero where a condition does not hold.
pub fn undef_to_zero(args: &[Expr], values: &[Expr]) -> Result<Vec<Expr>> {
    let zero = |i: usize, _: &[Expr]| Expr::zero(values[i].ty());
    let Some(stores) = remove_undef(args, values, zero)? else {
        return Ok((0..values.len()).map(|i| zero(i, args)).collect());
    };
    let c = stores.condition;
    Ok(stores
        .values
        .into_iter()
        .map(|v| {
            if c.is_true() {
                v
            } else {
                let z = Expr::zero(v.ty());
                Expr::select(c.clone(), v, z)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    fn undef() -> Expr {
        Expr::intrinsic(Type::i32(), Intrinsic::Undef, vec![])
    }

    #[test]
    fn conditional_and_partial_stores() {
        let x = Expr::var_i32("x");
        let c = Expr::lt(x.clone(), Expr::i32(3));
        let old = |i: usize, _: &[Expr]| Expr::var_i32(format!("old{i}"));
        let s = remove_undef(&[x.clone()], &[Expr::select(c.clone(), undef(), x.clone())], old)
            .unwrap()
            .unwrap();
        assert_eq!(expr_to_string(&s.condition), "!(x < 3)");
        assert_eq!(expr_to_string(&s.values[0]), "x");
        assert!(remove_undef(&[x.clone()], &[Expr::add(undef(), Expr::i32(5))], old)
            .unwrap()
            .is_none());
        let s = remove_undef(&[x.clone()], &[undef(), x.clone()], old).unwrap().unwrap();
        assert_eq!(expr_to_string(&s.values[0]), "old0");
        assert_eq!(expr_to_string(&undef_to_zero(&[x.clone()], &[undef()]).unwrap()[0]), "0");
    }

    #[test]
    fn nested_selects_guard_the_store_and_args_too() {
        let x = Expr::var_i32("x");
        let c = Expr::lt(x.clone(), Expr::i32(2));
        let arg = Expr::add(Expr::select(c.clone(), x.clone(), undef()), Expr::i32(1));
        let old = |_: usize, _: &[Expr]| Expr::i32(0);
        let s = remove_undef(&[arg], &[Expr::i32(7)], old).unwrap().unwrap();
        assert_eq!(expr_to_string(&s.condition), "(x < 2)");
        assert_eq!(expr_to_string(&s.args[0]), "(x + 1)");
        let d = Expr::lt(x.clone(), Expr::i32(5));
        let e = remove_undef(
            &[x.clone()],
            &[Expr::select(c, x.clone(), undef()), Expr::select(d, x, undef())],
            old,
        )
        .unwrap_err();
        assert!(e.message.starts_with("Conditionally-undef values in a Tuple should have the same conditions"));
    }
}
