//! Can the loop over an RVar of an update run its iterations at the same
//! time (parallel or vectorized) without a race? (The question of Halide's
//! ParallelRVar.cpp, answered with a simpler, conservative test.)
//!
//! Assumes: an update definition of `func` that passed the definition
//! checks (self-references keep the pure vars in place). Guarantees: `true`
//! only if two iterations with different values of the RVar never write
//! the same point, and no iteration reads a point another one writes. The
//! test: some argument position holds, on the left-hand side, an injective
//! function of the RVar alone (`a * r + b`, `a` a nonzero constant, `b`
//! free of loop variables), and every self-reference on the right has the
//! very same expression there, both read within the RVars' constant
//! ranges (where a clamp they never reach is gone). Then the point written
//! by one iteration differs from every point another iteration writes or
//! reads. An RVar of
//! extent 1 passes too: it has no two iterations; and so does every RVar
//! of an update whose RDom predicate the simplifier proves false over the
//! domain (Halide conjoins the predicate to its hazard): no iteration runs.

use crate::ir::equality::equal;
use crate::ir::visit::for_each_expr;
use crate::ir::{BinOp, CallKind, Expr, ExprNode};
use crate::lang::function::{Function, UpdateDefinition};

/// The coefficient of `var` in `e` if `e` is `a * var + b` with `b`
/// mentioning no variable but parameters; `None` otherwise.
fn linear_coefficient(e: &Expr, var: &str) -> Option<i64> {
    match e.node() {
        ExprNode::Variable { name, param, .. } => {
            if name == var {
                Some(1)
            } else if param.is_some() {
                Some(0)
            } else {
                None
            }
        }
        ExprNode::IntImm(_) | ExprNode::UIntImm(_) => Some(0),
        ExprNode::Binary { op, a, b } => {
            let (ca, cb) = (linear_coefficient(a, var)?, linear_coefficient(b, var)?);
            match op {
                BinOp::Add => ca.checked_add(cb),
                BinOp::Sub => ca.checked_sub(cb),
                BinOp::Mul => match (a.as_int_const(), b.as_int_const()) {
                    (_, Some(k)) => ca.checked_mul(k),
                    (Some(k), _) => cb.checked_mul(k),
                    _ => (ca == 0 && cb == 0).then_some(0),
                },
                _ => {
                    if ca == 0 && cb == 0 {
                        Some(0)
                    } else {
                        None
                    }
                }
            }
        }
        _ => {
            // Anything else is fine as long as it mentions no variable.
            let mut vars = false;
            for_each_expr(e, &mut |x| {
                if let ExprNode::Variable { param: None, .. } = x.node() {
                    vars = true;
                }
                if let ExprNode::Call { kind, .. } = x.node() {
                    vars |= !matches!(kind, CallKind::Intrinsic(_));
                }
            });
            (!vars).then_some(0)
        }
    }
}

/// The argument lists of the calls to `func` in `exprs`.
fn self_references(func: &Function, exprs: &[Expr]) -> Vec<Vec<Expr>> {
    let mut out = vec![];
    for e in exprs {
        for_each_expr(e, &mut |x| {
            if let ExprNode::Call {
                args,
                kind: CallKind::Halide { func: f, .. },
                ..
            } = x.node()
            {
                if func.is(f) {
                    out.push(args.clone());
                }
            }
        });
    }
    out
}

/// See the module comment.
pub fn can_parallelize_rvar(func: &Function, update: &UpdateDefinition, rvar: &str) -> bool {
    if has_one_iteration(update, rvar) || never_runs(update) {
        return true;
    }
    let mut reads_from: Vec<Expr> = update.values.clone();
    reads_from.extend(update.args.iter().cloned());
    if let Some(d) = &update.domain {
        reads_from.push(d.predicate());
    }
    // Within the domain: a clamp or min the RVars' ranges never reach is
    // gone (as Halide simplifies its hazard within the RDom's bounds), and
    // an index equal to another there is equal at every iteration.
    let ranges = rvar_ranges(update);
    let within = |e: &Expr| crate::analysis::simplify::simplify_in_ranges(e, &ranges);
    let loads: Vec<Vec<Expr>> = self_references(func, &reads_from)
        .iter()
        .map(|l| l.iter().map(within).collect())
        .collect();
    update.args.iter().map(within).enumerate().any(|(i, a)| {
        linear_coefficient(&a, rvar).is_some_and(|c| c != 0)
            && loads
                .iter()
                .all(|l| l.get(i).is_some_and(|li| equal(li, &a)))
    })
}

/// `(name, min, max)` of the update's RVars whose bounds are constants.
fn rvar_ranges(update: &UpdateDefinition) -> Vec<(String, i64, i64)> {
    let Some(d) = &update.domain else { return vec![] };
    d.vars()
        .iter()
        .filter_map(|v| {
            let (min, extent) = (v.min.as_int_const()?, v.extent.as_int_const()?);
            let max = min.checked_add(extent.checked_sub(1)?)?;
            (extent > 0).then(|| (v.name.clone(), min, max))
        })
        .collect()
}

/// Is the update's RDom predicate false at every point of its domain? The
/// simplifier decides, with each RVar's range as the facts of a loop over
/// it (only constant ranges; otherwise: no).
pub fn never_runs(update: &UpdateDefinition) -> bool {
    let Some(d) = &update.domain else { return false };
    let pred = d.predicate();
    if pred.is_true() {
        return false;
    }
    // A body that cannot be removed, under the predicate, in the loops.
    let probe = Expr::call(crate::ir::Type::i32(), "never_runs_probe", vec![], CallKind::Extern);
    let mut s = crate::ir::Stmt::if_then_else(pred, crate::ir::Stmt::evaluate(probe), None);
    for v in d.vars().iter().rev() {
        if v.min.as_int_const().is_none() || v.extent.as_int_const().is_none() {
            return false;
        }
        s = crate::ir::Stmt::for_loop(v.name.clone(), v.min.clone(), v.extent.clone(), crate::ir::ForType::Serial, s);
    }
    crate::analysis::simplify::simplify_stmt(&s).is_no_op()
}

/// Is `rvar` an RVar of extent 1?  Two different iterations of it do not exist
/// (Halide's test finds the same: it simplifies its hazard within the RDom's
/// bounds, where `r != r'` is false).
fn has_one_iteration(update: &UpdateDefinition, rvar: &str) -> bool {
    update.domain.as_ref().is_some_and(|d| {
        d.vars()
            .iter()
            .any(|v| v.name == rvar && v.extent.as_int_const() == Some(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_forms() {
        let r = || Expr::var_i32("r");
        assert_eq!(linear_coefficient(&r(), "r"), Some(1));
        let e = Expr::add(Expr::mul(Expr::i32(2), r()), Expr::i32(3));
        assert_eq!(linear_coefficient(&e, "r"), Some(2));
        assert_eq!(linear_coefficient(&Expr::div(r(), Expr::i32(2)), "r"), None);
        assert_eq!(
            linear_coefficient(&Expr::add(r(), Expr::var_i32("x")), "r"),
            None
        );
        assert_eq!(
            linear_coefficient(&Expr::sub(Expr::i32(7), r()), "r"),
            Some(-1)
        );
    }
}
