//! Split factors must be strictly positive (Halide's ApplySplit check and
//! AddSplitFactorChecks.cpp). A zero or negative factor gives a loop nest
//! that computes nothing (or garbage) where the Func is supposed to be
//! defined, so it is never let through:
//! - a constant factor that is not positive is a compile-time user error;
//! - any other factor (a Param expression) gets an assertion, evaluated
//!   before the pipeline does any work, naming the split and its value;
//! - a factor may only use constants and Params: a Var (or RVar) has no
//!   value where loop extents are computed.
//!
//! Every split of every stage is checked, specializations included
//! (`split`, `tile`, and `vectorize`/`unroll`/`parallel` with a factor all
//! record splits).
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

/// The check of one split of Func `func`: `Ok(None)` if it is provably fine.
fn check_split(func: &str, old: &str, outer: &str, inner: &str, factor: &Expr) -> Result<Option<Stmt>> {
    if let Some(v) = loop_variable_in(factor) {
        return Err(Error::user(format!(
            "In schedule for {func}, the factor used to split the variable {} is {}, which uses {v}: split factors may only use constants and Params (Symbol not found: {v})\n",
            short(old),
            expr_to_string(factor)
        )));
    }
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

/// Put the checks of every split factor of the pipeline in front of `s`.
pub fn add_split_factor_checks(s: Stmt, env: &Environment) -> Result<Stmt> {
    let mut checks = vec![];
    for name in &env.order {
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
