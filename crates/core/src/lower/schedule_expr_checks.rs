//! Checks of the expressions in schedules, which are evaluated once, before
//! any loop runs (Halide's ApplySplit check, AddSplitFactorChecks.cpp and its
//! "Symbol not found" for anything else):
//! - they may only use constants and Params: a Var (or RVar) has no value
//!   there (`bound(x, 0, x)`, `split(x, xo, xi, y)`);
//! - split factors must be strictly positive. A zero or negative factor
//!   gives a loop nest that computes nothing (or garbage) where the Func is
//!   supposed to be defined, so it is never let through: a constant factor
//!   that is not positive is a compile-time user error; any other factor (a
//!   Param expression) gets an assertion, evaluated before the pipeline does
//!   any work, naming the split and its value.
//!
//! Every split of every stage is checked, specializations included
//! (`split`, `tile`, and `vectorize`/`unroll`/`parallel` with a factor all
//! record splits), and every bound, alignment and storage fold.
//!
//! Assumes: the root body after bounds inference. Guarantees: the
//! assertions come before it, in stage order.

use super::buffer_checks::error_message;
use super::environment::Environment;
use crate::analysis::simplify::simplify;
use crate::error::{Error, Result};
use crate::ir::visit::for_each_expr;
use crate::ir::{Expr, ExprNode, Stmt};
use crate::lang::print::expr_to_string;
use crate::schedule::Split;

/// The last component of a loop name (`x.xo` -> `xo`), as Halide prints it.
fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// A Var or RVar the factor uses (anything that is not a Param).
fn loop_variable_in(factor: &Expr) -> Option<String> {
    let mut found = None;
    for_each_expr(factor, &mut |e| {
        if let ExprNode::Variable {
            name, param: None, ..
        } = e.node()
        {
            found.get_or_insert_with(|| name.clone());
        }
    });
    found
}

/// A schedule expression of Func `func` (`what` says which) must not use
/// a Var or RVar.
fn check_no_loop_variable(func: &str, what: &str, e: &Expr) -> Result<()> {
    match loop_variable_in(e) {
        Some(v) => Err(Error::user(format!(
            "In schedule for {func}, {what} is {}, which uses {v}: schedule expressions may only use constants and Params (Symbol not found: {v})\n",
            expr_to_string(e)
        ))),
        None => Ok(()),
    }
}

/// The compile-time check of one split of Func `func`; the run-time check
/// its factor needs, if it is not provably positive.
fn check_split(func: &str, old: &str, outer: &str, inner: &str, factor: &Expr) -> Result<Option<Stmt>> {
    check_no_loop_variable(
        func,
        &format!("the factor used to split the variable {}", short(old)),
        factor,
    )?;
    if let Some(k) = factor.as_int_const() {
        if k > 0 {
            return Ok(None);
        }
        return Err(Error::user(format!(
            "Can't split {old} by {k}. Split factors must be strictly positive\n"
        )));
    }
    let positive = Expr::gt(factor.clone(), Expr::zero(factor.ty()));
    if simplify(&positive).is_true() {
        return Ok(None);
    }
    let text = expr_to_string(factor);
    Ok(Some(Stmt::assert(
        positive,
        error_message(vec![
            Expr::string(format!(
                "In schedule for func {func}, the factor used to split the variable {} into {} and {} is {text}. This evaluated to ",
                short(old),
                short(outer),
                short(inner)
            )),
            factor.clone(),
            Expr::string(format!(
                ", which is not strictly positive. Consider using max({text}, 1) instead."
            )),
        ]),
    )))
}

/// Check every schedule expression of the pipeline (the user errors);
/// returns the run-time checks split factors need.
fn split_checks(env: &Environment) -> Result<Vec<Stmt>> {
    let mut checks = vec![];
    for name in &env.order {
        for e in env.get(name).read().schedule.exprs() {
            check_no_loop_variable(name, "a bound, alignment or storage fold", &e)?;
        }
        for (_, stage) in env.get(name).stage_schedules() {
            for split in &stage.splits {
                if let Split::Split {
                    old,
                    outer,
                    inner,
                    factor,
                    ..
                } = split
                {
                    checks.extend(check_split(name, old, outer, inner, factor)?);
                }
            }
        }
    }
    Ok(checks)
}

/// The user errors, before lowering builds anything from the schedules.
pub fn check_schedule_exprs(env: &Environment) -> Result<()> {
    split_checks(env).map(|_| ())
}

/// Put the run-time checks of split factors in front of `s`.
pub fn add_split_factor_checks(s: Stmt, env: &Environment) -> Result<Stmt> {
    let mut checks = split_checks(env)?;
    if checks.is_empty() {
        return Ok(s);
    }
    checks.push(s);
    Ok(Stmt::block(checks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;
    use crate::lang::parameter::Parameter;

    #[test]
    fn constant_factors_must_be_positive() {
        assert!(check_split("f", "x", "x.xo", "x.xi", &Expr::i32(4)).unwrap().is_none());
        for k in [0, -3] {
            let e = check_split("f", "x", "x.xo", "x.xi", &Expr::i32(k)).unwrap_err();
            assert_eq!(
                e.message,
                format!("Can't split x by {k}. Split factors must be strictly positive\n")
            );
        }
    }

    #[test]
    fn param_factors_are_checked_when_run_and_vars_are_rejected() {
        let p = Parameter::new(Type::int(32), false, 0, "sfc_p");
        let check = check_split("f", "x", "x.xo", "x.xi", &p.expr()).unwrap();
        assert!(matches!(check.unwrap().node(), crate::ir::StmtNode::AssertStmt { .. }));
        let e = check_split("f", "x", "x.xo", "x.xi", &Expr::var_i32("y")).unwrap_err();
        assert!(e.message.contains("Symbol not found: y"), "{}", e.message);
    }
}
