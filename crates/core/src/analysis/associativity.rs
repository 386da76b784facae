//! Is an update definition an associative reduction `f = op(f, y)`? (The
//! question of Halide's Associativity.cpp, answered by matching a fixed
//! list of operator shapes instead of Halide's table search.)
//!
//! Assumes: an update definition that passed the definition checks.
//! Guarantees: `Some(op)` only if the update's arguments, RDom predicate
//! and RVar lets do not read the Func, and every value of the update is
//! built from
//! the Func's old values at the point being updated (`x_i`, the calls to
//! the Func with exactly the update's arguments) and new values `y_i` that
//! do not read the Func, in one of these shapes, which are associative:
//! - per element, independently: `x + y`, `x * y`, `min(x, y)`,
//!   `max(x, y)`, `x && y`, `x || y` (either operand order), or a `select`
//!   between `x` and `y` on `x < y`-like comparisons (min / max); all
//!   commutative; and any of these applied only where a condition that
//!   does not read the Func holds (`select(c, x + y, x)`, as Halide's
//!   search accepts it), which is the operator over `select(c, y,
//!   identity)`;
//! - two consecutive elements, value first: `(min(x0, y0), select(x0 <
//!   y0, x1, y1))` (argmin, ties keep the newer index) and the same with
//!   `max` and `>` (argmax);
//! - two consecutive elements: `(x0 * a - x1 * b, x0 * b + x1 * a)`
//!   (complex product);
//! - an element left unchanged (`x`: the update writes the old value
//!   back), which any order of updates leaves as it was;
//! - a Tuple made of these parts side by side (`(min, index, count)`), as
//!   Halide's search finds them.
//!
//! `op.pattern` is the operator as Exprs over the placeholders `x_var(i)` /
//! `y_var(i)`, `op.ys` the update's new values, `op.identities` the values
//! that leave any `x` unchanged; `apply` instantiates the pattern (rfactor
//! uses it to write the two halves of a split reduction).

use std::collections::HashMap;

use crate::analysis::substitute::substitute_map;
use crate::ir::equality::equal;
use crate::ir::visit::for_each_expr;
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Type};
use crate::lang::function::Function;

#[derive(Clone, Debug)]
pub struct AssociativeOp {
    pub pattern: Vec<Expr>,
    pub identities: Vec<Expr>,
    pub ys: Vec<Expr>,
    pub commutative: bool,
}

/// The placeholder for old value `i` in a pattern.
pub fn x_var(i: usize, t: Type) -> Expr {
    Expr::var(t, format!("assoc$x{i}"))
}
/// The placeholder for new value `i` in a pattern.
pub fn y_var(i: usize, t: Type) -> Expr {
    Expr::var(t, format!("assoc$y{i}"))
}

/// The pattern of `op` with `xs` for the old values and `ys` for the new.
pub fn apply(op: &AssociativeOp, xs: &[Expr], ys: &[Expr]) -> Vec<Expr> {
    let mut m: HashMap<String, Expr> = HashMap::new();
    for (i, x) in xs.iter().enumerate() {
        m.insert(format!("assoc$x{i}"), x.clone());
    }
    for (i, y) in ys.iter().enumerate() {
        m.insert(format!("assoc$y{i}"), y.clone());
    }
    op.pattern.iter().map(|p| substitute_map(&m, p)).collect()
}

/// What an update's values say about old values.
struct Matcher<'a> {
    func: &'a Function,
    args: &'a [Expr],
}

impl Matcher<'_> {
    /// The element index if `e` is the old value of the point updated.
    fn old_value(&self, e: &Expr) -> Option<usize> {
        match e.node() {
            ExprNode::Call {
                args,
                kind: CallKind::Halide { func, value_index },
                ..
            } if self.func.is(func)
                && args.len() == self.args.len()
                && args.iter().zip(self.args).all(|(a, b)| equal(a, b)) =>
            {
                Some(*value_index)
            }
            _ => None,
        }
    }
    /// Does `e` read the Func at all?
    fn reads_func(&self, e: &Expr) -> bool {
        let mut found = false;
        for_each_expr(e, &mut |x| {
            if let ExprNode::Call {
                kind: CallKind::Halide { func, .. },
                ..
            } = x.node()
            {
                found |= self.func.is(func);
            }
        });
        found
    }
    /// `(other operand)` if `{a, b}` is `{old value i, y}` with `y` not
    /// reading the Func.
    fn with_old(&self, a: &Expr, b: &Expr, i: usize) -> Option<Expr> {
        if self.old_value(a) == Some(i) && !self.reads_func(b) {
            Some(b.clone())
        } else if self.old_value(b) == Some(i) && !self.reads_func(a) {
            Some(a.clone())
        } else {
            None
        }
    }

    /// Element `i` as an independent `op(x_i, y)`: (op, y). A chain of
    /// one operator (`x + a + b`) counts: the old value is one of its
    /// operands and `y` the rest, in order.
    fn element(&self, e: &Expr, i: usize) -> Option<(BinOp, Expr)> {
        match e.node() {
            ExprNode::Binary { op, .. }
                if matches!(op, BinOp::Mul | BinOp::Min | BinOp::Max | BinOp::And | BinOp::Or) =>
            {
                let mut terms = vec![];
                flatten(*op, e, &mut terms);
                let at = terms.iter().position(|t| self.old_value(t) == Some(i))?;
                terms.remove(at);
                if terms.is_empty() || terms.iter().any(|t| self.reads_func(t)) {
                    return None;
                }
                let mut rest = terms.into_iter();
                let first = rest.next()?;
                Some((*op, rest.fold(first, |acc, t| Expr::binary(*op, acc, t))))
            }
            // `x - a` is `x + (-a)`, exactly, in every type (integers wrap,
            // float negation is exact): `f -= e` is a sum.
            ExprNode::Binary { op: BinOp::Add | BinOp::Sub, .. } => {
                let mut terms = vec![];
                flatten_signed(e, true, &mut terms);
                let at = terms
                    .iter()
                    .position(|(t, positive)| *positive && self.old_value(t) == Some(i))?;
                terms.remove(at);
                if terms.is_empty() || terms.iter().any(|(t, _)| self.reads_func(t)) {
                    return None;
                }
                let ty = e.ty();
                let y = terms.into_iter().fold(None, |acc: Option<Expr>, (t, positive)| {
                    Some(match (acc, positive) {
                        (None, true) => t,
                        (None, false) => Expr::sub(Expr::zero(ty), t),
                        (Some(a), true) => Expr::add(a, t),
                        (Some(a), false) => Expr::sub(a, t),
                    })
                })?;
                Some((BinOp::Add, y))
            }
            ExprNode::Select { cond, t, f } => self
                .select_min_max(cond, t, f, i)
                .or_else(|| self.conditional(cond, t, f, i)),
            _ => None,
        }
    }

    /// `select(cond, y, x)` / `select(cond, x, y)` with `cond` comparing
    /// the old value `x` of element `i` with `y`: a min or a max.
    fn select_min_max(&self, cond: &Expr, t: &Expr, f: &Expr, i: usize) -> Option<(BinOp, Expr)> {
        let y = self.with_old(t, f, i)?;
        let ExprNode::Binary { op: cmp, a, b } = cond.node() else {
            return None;
        };
        // Normalize to `y < x` style: is the condition "y is smaller"?
        let (y_first, x_first) = (
            equal(a, &y) && self.old_value(b) == Some(i),
            self.old_value(a) == Some(i) && equal(b, &y),
        );
        let y_smaller = match (cmp, y_first, x_first) {
            (BinOp::LT | BinOp::LE, true, _) | (BinOp::GT | BinOp::GE, _, true) => true,
            (BinOp::GT | BinOp::GE, true, _) | (BinOp::LT | BinOp::LE, _, true) => false,
            _ => return None,
        };
        let picks_y = equal(t, &y);
        Some((
            if y_smaller == picks_y {
                BinOp::Min
            } else {
                BinOp::Max
            },
            y,
        ))
    }

    /// `select(c, op(x, y), x)` (or the branches swapped) with `c` not
    /// reading the Func: the update applies `op` only where `c` holds,
    /// which is `op(x, select(c, y, identity))`, the same operator over the
    /// new values that hold (a sum over a subset is still a sum).
    fn conditional(&self, cond: &Expr, t: &Expr, f: &Expr, i: usize) -> Option<(BinOp, Expr)> {
        if self.reads_func(cond) {
            return None;
        }
        let (applied, when) = if self.old_value(f) == Some(i) {
            (t, true)
        } else if self.old_value(t) == Some(i) {
            (f, false)
        } else {
            return None;
        };
        let (op, y) = self.element(applied, i)?;
        // Where `c` fails the old value must come back bit for bit: a float
        // sum adds -0.0, which keeps -0.0 (+0.0 would turn it into +0.0).
        let id = match op {
            BinOp::Add if y.ty().is_float() => Expr::make_const_f64(y.ty(), -0.0),
            _ => identity(op, y.ty()),
        };
        let y = if when { Expr::select(cond.clone(), y, id) } else { Expr::select(cond.clone(), id, y) };
        Some((op, y))
    }

    /// `(min(x0, y0), select(x0 < y0, x1, y1))` or the max / `>` version,
    /// for the elements `i` (x0) and `i + 1` (x1).
    fn arg_extremum(&self, e0: &Expr, e1: &Expr, i: usize) -> Option<(BinOp, Expr, Expr)> {
        let (op, y0) = match e0.node() {
            ExprNode::Binary {
                op: op @ (BinOp::Min | BinOp::Max),
                a,
                b,
            } => (*op, self.with_old(a, b, i)?),
            _ => return None,
        };
        let ExprNode::Select { cond, t, f } = e1.node() else {
            return None;
        };
        if self.old_value(t) != Some(i + 1) || self.reads_func(f) {
            return None;
        }
        let ExprNode::Binary { op: cmp, a, b } = cond.node() else {
            return None;
        };
        // Keep the old index while the old value is strictly better.
        let (oa, ob) = (self.old_value(a), self.old_value(b));
        let old_better = match (cmp, oa == Some(i), ob == Some(i)) {
            (BinOp::LT, true, false) if ob.is_none() && equal(b, &y0) => BinOp::Min,
            (BinOp::GT, false, true) if oa.is_none() && equal(a, &y0) => BinOp::Min,
            (BinOp::GT, true, false) if ob.is_none() && equal(b, &y0) => BinOp::Max,
            (BinOp::LT, false, true) if oa.is_none() && equal(a, &y0) => BinOp::Max,
            _ => return None,
        };
        (old_better == op).then(|| (op, y0, f.clone()))
    }

    /// `(x0 * a - x1 * b, x0 * b + x1 * a)`: (a, b), for the elements `i`
    /// (x0) and `i + 1` (x1).
    fn complex_product(&self, e0: &Expr, e1: &Expr, i: usize) -> Option<(Expr, Expr)> {
        let product = |e: &Expr, i: usize| -> Option<Expr> {
            match e.node() {
                ExprNode::Binary {
                    op: BinOp::Mul,
                    a,
                    b,
                } => self.with_old(a, b, i),
                _ => None,
            }
        };
        let ExprNode::Binary {
            op: BinOp::Sub,
            a: p,
            b: q,
        } = e0.node()
        else {
            return None;
        };
        let (ya, yb) = (product(p, i)?, product(q, i + 1)?);
        let ExprNode::Binary {
            op: BinOp::Add,
            a: r,
            b: s,
        } = e1.node()
        else {
            return None;
        };
        let ok = |u: &Expr, v: &Expr| {
            product(u, i).is_some_and(|k| equal(&k, &yb))
                && product(v, i + 1).is_some_and(|k| equal(&k, &ya))
        };
        (ok(r, s) || ok(s, r)).then_some((ya, yb))
    }
}

/// The terms of a chain of `+` and `-` with their signs (`a - (b + c)`
/// gives +a, -b, -c).
fn flatten_signed(e: &Expr, positive: bool, out: &mut Vec<(Expr, bool)>) {
    match e.node() {
        ExprNode::Binary { op: BinOp::Add, a, b } => {
            flatten_signed(a, positive, out);
            flatten_signed(b, positive, out);
        }
        ExprNode::Binary { op: BinOp::Sub, a, b } => {
            flatten_signed(a, positive, out);
            flatten_signed(b, !positive, out);
        }
        _ => out.push((e.clone(), positive)),
    }
}

/// The operands of a chain of `op`s (`(a + b) + c` gives a, b, c).
fn flatten(op: BinOp, e: &Expr, out: &mut Vec<Expr>) {
    match e.node() {
        ExprNode::Binary { op: o, a, b } if *o == op => {
            flatten(op, a, out);
            flatten(op, b, out);
        }
        _ => out.push(e.clone()),
    }
}

fn identity(op: BinOp, t: Type) -> Expr {
    match op {
        BinOp::Add => Expr::zero(t),
        BinOp::Mul => Expr::one(t),
        BinOp::Min => crate::lang::reduction::highest(t),
        BinOp::And => Expr::bool_const(true),
        BinOp::Or => Expr::bool_const(false),
        _ => crate::lang::reduction::lowest(t),
    }
}

/// See the module comment. `update` indexes `func`'s update definitions.
pub fn prove_associativity(func: &Function, update: usize) -> Option<AssociativeOp> {
    let mut u = func.read().updates.get(update)?.clone();
    // Matched in simplified form, as Halide does: `f << 0` is `f`, and a
    // clamp to the type's own range is a plain min or max.
    // The args too, so that the values' reads of the point updated still
    // match them.
    u.values = u.values.iter().map(crate::analysis::simplify::simplify).collect();
    u.args = u.args.iter().map(crate::analysis::simplify::simplify).collect();
    let m = Matcher {
        func,
        args: &u.args,
    };
    // Updates commute only if which point each one updates, and whether it
    // runs at all, do not depend on the Func's values: with an index or an
    // RDom predicate that reads the Func, an earlier iteration decides
    // where a later one goes (`f[select(f[0] >= 5, 1, 0)] += r` reordered
    // gave [9, 27] for [6, 30]).
    let reads_in_domain = u.domain.as_ref().is_some_and(|d| m.reads_func(&d.predicate()));
    if u.args.iter().any(|a| m.reads_func(a)) || reads_in_domain || u.lets.iter().any(|(_, v)| m.reads_func(v)) {
        return None;
    }
    let types: Vec<Type> = u.values.iter().map(|v| v.ty()).collect();
    // Left to right, each element is an operator of its own or, with the
    // next one, one of the two-element shapes (tried first: the value of
    // an argmin is also a min by itself).
    let n = u.values.len();
    let mut op = AssociativeOp {
        pattern: vec![],
        identities: vec![],
        ys: vec![],
        commutative: true,
    };
    let mut k = 0;
    while k < n {
        if k + 1 < n {
            if let Some((pattern, identities, ys)) = pair(&m, &u.values, &types, k) {
                op.pattern.extend(pattern);
                op.identities.extend(identities);
                op.ys.extend(ys);
                k += 2;
                continue;
            }
        }
        if m.old_value(&u.values[k]) == Some(k) {
            // Unchanged: the pattern keeps the old value (the new one is
            // the same value, so order does not matter).
            op.pattern.push(x_var(k, types[k]));
            op.identities.push(Expr::zero(types[k]));
            op.ys.push(u.values[k].clone());
            k += 1;
            continue;
        }
        let (bop, y) = m.element(&u.values[k], k)?;
        op.pattern
            .push(Expr::binary(bop, x_var(k, types[k]), y_var(k, types[k])));
        op.identities.push(identity(bop, types[k]));
        op.ys.push(y);
        k += 1;
    }
    Some(op)
}

/// Does update `update` of `func` need no associativity proof to have its
/// RVars reordered or run at once? It does not when no value uses an RVar
/// and neither side reads the Func (`f[g(r)] = 4`, `f[g(r, x), x] = h(x)`):
/// every iteration that writes a point writes the same value there (Halide's
/// `is_const_assignment`, which treats such updates as associative and
/// commutative).
pub fn is_const_assignment(func: &Function, update: usize) -> bool {
    let Some(u) = func.read().updates.get(update).cloned() else {
        return false;
    };
    let mut reads_func = false;
    let mut value_uses_rvar = false;
    for e in &u.args {
        for_each_expr(e, &mut |x| reads_func |= calls_func(func, x));
    }
    for e in &u.values {
        for_each_expr(e, &mut |x| {
            reads_func |= calls_func(func, x);
            value_uses_rvar |= matches!(x.node(), ExprNode::Variable { rdom: Some(_), .. });
        });
    }
    !reads_func && !value_uses_rvar
}

fn calls_func(func: &Function, e: &Expr) -> bool {
    matches!(e.node(), ExprNode::Call { kind: CallKind::Halide { func: f, .. }, .. } if func.is(f))
}

/// Patterns, identities and new values of elements `i` and `i + 1` as an
/// argmin / argmax or a complex product.
#[allow(clippy::type_complexity)]
fn pair(
    m: &Matcher,
    values: &[Expr],
    types: &[Type],
    i: usize,
) -> Option<(Vec<Expr>, Vec<Expr>, Vec<Expr>)> {
    let (e0, e1) = (&values[i], &values[i + 1]);
    let (x0, x1, y0, y1) = (
        x_var(i, types[i]),
        x_var(i + 1, types[i + 1]),
        y_var(i, types[i]),
        y_var(i + 1, types[i + 1]),
    );
    if let Some((op, v, idx)) = m.arg_extremum(e0, e1, i) {
        let cmp = if op == BinOp::Min {
            Expr::lt(x0.clone(), y0.clone())
        } else {
            Expr::gt(x0.clone(), y0.clone())
        };
        return Some((
            vec![Expr::binary(op, x0, y0), Expr::select(cmp, x1, y1)],
            vec![identity(op, types[i]), Expr::zero(types[i + 1])],
            vec![v, idx],
        ));
    }
    if types[i] == types[i + 1] {
        if let Some((a, b)) = m.complex_product(e0, e1, i) {
            return Some((
                vec![
                    Expr::sub(
                        Expr::mul(x0.clone(), y0.clone()),
                        Expr::mul(x1.clone(), y1.clone()),
                    ),
                    Expr::add(Expr::mul(x0, y1), Expr::mul(x1, y0)),
                ],
                vec![Expr::one(types[i]), Expr::zero(types[i + 1])],
                vec![a, b],
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::func::Func;
    use crate::lang::rdom::ReductionDomain;

    /// f() = init; f() = update(old values, r), over r in [0, 8).
    fn reduction(name: &str, init: Vec<Expr>, update: impl Fn(&[Expr], Expr) -> Vec<Expr>) -> Func {
        let r = ReductionDomain::new(None, vec![(Expr::i32(0), Expr::i32(8))]).unwrap();
        let f = Func::new(Some(name));
        f.define(vec![], init.clone()).unwrap();
        let call = f.call(vec![]).unwrap();
        let old: Vec<Expr> = (0..init.len()).map(|i| call.element(i).unwrap()).collect();
        f.define(vec![], update(&old, r.rvar(0).unwrap().expr()))
            .unwrap();
        f
    }

    #[test]
    fn recognized_operators() {
        let add = reduction("assoc_add", vec![Expr::i32(0)], |o, r| {
            vec![Expr::add(Expr::add(o[0].clone(), r.clone()), Expr::i32(1))]
        });
        let op = prove_associativity(&add.function, 0).unwrap();
        assert!(op.commutative);
        // The new value is the rest of the chain: `r + 1`.
        assert!(op.ys[0].to_string().ends_with("$x + 1)"), "{}", op.ys[0]);
        let argmin = reduction(
            "assoc_argmin",
            vec![Expr::i32(100), Expr::i32(0)],
            |o, r| {
                let v = Expr::mul(r.clone(), Expr::i32(3));
                vec![
                    Expr::min(o[0].clone(), v.clone()),
                    Expr::select(Expr::lt(o[0].clone(), v), o[1].clone(), r),
                ]
            },
        );
        assert!(prove_associativity(&argmin.function, 0).is_some());
        let cmul = reduction("assoc_cmul", vec![Expr::i32(1), Expr::i32(0)], |o, r| {
            let d = Expr::add(r.clone(), Expr::i32(1));
            vec![
                Expr::sub(
                    Expr::mul(o[0].clone(), r.clone()),
                    Expr::mul(o[1].clone(), d.clone()),
                ),
                Expr::add(Expr::mul(o[0].clone(), d), Expr::mul(o[1].clone(), r)),
            ]
        });
        assert!(prove_associativity(&cmul.function, 0).is_some());
        // `f - (a + r)` is `f + (-a - r)` (fuzz seeds 5706, 6605).
        let sub = reduction("assoc_minus", vec![Expr::i32(0)], |o, r| {
            vec![Expr::sub(o[0].clone(), Expr::add(Expr::i32(3), r))]
        });
        let op = prove_associativity(&sub.function, 0).unwrap();
        assert!(op.commutative && op.ys[0].to_string().contains(&sub_rvar(&sub)));
        // `f << 0` is the old value (fuzz seed 1960).
        let same = reduction("assoc_shift0", vec![Expr::i32(0)], |o, _| {
            vec![Expr::intrinsic(Type::i32(), crate::ir::Intrinsic::ShiftLeft, vec![o[0].clone(), Expr::i32(0)])]
        });
        assert!(prove_associativity(&same.function, 0).is_some());
        // A sum over the iterations where `r > 1` (Halide accepts it).
        let cond = reduction("assoc_cond_add", vec![Expr::i32(0)], |o, r| {
            let c = Expr::gt(r.clone(), Expr::i32(1));
            vec![Expr::select(c, Expr::add(o[0].clone(), r), o[0].clone())]
        });
        let op = prove_associativity(&cond.function, 0).unwrap();
        assert!(op.ys[0].to_string().starts_with("select("), "{}", op.ys[0]);
        let cond_max = reduction("assoc_cond_max", vec![Expr::i32(0)], |o, r| {
            let c = Expr::lt(r.clone(), Expr::i32(5));
            vec![Expr::select(c, o[0].clone(), Expr::max(o[0].clone(), r))]
        });
        assert!(prove_associativity(&cond_max.function, 0).is_some());
    }

    fn sub_rvar(f: &Func) -> String {
        let u = f.function.updates();
        let name = u[0].domain.as_ref().unwrap().vars()[0].name.clone();
        name
    }

    #[test]
    fn rejected_operators() {
        // `r - f` negates the old value each time: not a sum of f.
        let sub = reduction("assoc_sub", vec![Expr::i32(0)], |o, r| {
            vec![Expr::sub(r, o[0].clone())]
        });
        assert!(prove_associativity(&sub.function, 0).is_none());
        let poly = reduction("assoc_poly", vec![Expr::i32(0)], |o, r| {
            vec![Expr::add(Expr::mul(o[0].clone(), Expr::i32(2)), r)]
        });
        assert!(prove_associativity(&poly.function, 0).is_none());
        let ge = reduction("assoc_ge", vec![Expr::i32(0), Expr::i32(0)], |o, r| {
            vec![
                Expr::max(o[0].clone(), r.clone()),
                Expr::select(Expr::ge(o[0].clone(), r.clone()), o[1].clone(), r),
            ]
        });
        assert!(prove_associativity(&ge.function, 0).is_none());
        // A condition on the old value makes the order matter.
        let on_old = reduction("assoc_cond_old", vec![Expr::i32(0)], |o, r| {
            let c = Expr::lt(o[0].clone(), Expr::i32(10));
            vec![Expr::select(c, Expr::add(o[0].clone(), r), o[0].clone())]
        });
        assert!(prove_associativity(&on_old.function, 0).is_none());
        // A conditional overwrite keeps the last iteration that writes.
        let overwrite = reduction("assoc_cond_set", vec![Expr::i32(0)], |o, r| {
            let c = Expr::gt(r.clone(), Expr::i32(1));
            vec![Expr::select(c, r, o[0].clone())]
        });
        assert!(prove_associativity(&overwrite.function, 0).is_none());
    }
}
