//! The expressions in schedules (split factors, bounds, alignments, storage
//! folds) are evaluated once, before any loop runs, so they may only use
//! constants and Params: a Var or RVar has no value there
//! (`bound(x, 0, x)`, `split(x, xo, xi, y)`). Halide reports such a use
//! when it compiles the pipeline ("Symbol not found"); this check says
//! which schedule expression it is, before lowering builds anything from
//! the schedules. (Whether a split factor is positive is checked where
//! the split is applied, apply_split.rs, and at run time,
//! add_split_factor_checks.rs.)
//!
//! Every split of every stage is checked, specializations included, and
//! every bound, alignment and storage fold.

use super::environment::Environment;
use crate::error::{Error, Result};
use crate::ir::visit::first_free_variable;
use crate::ir::Expr;
use crate::lang::print::expr_to_string;
use crate::schedule::Split;

/// The last component of a loop name (`x.xo` -> `xo`), as Halide prints it.
fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// A schedule expression of Func `func` (`what` says which) must not use
/// a Var or RVar.
fn check_no_loop_variable(func: &str, what: &str, e: &Expr) -> Result<()> {
    match first_free_variable(e) {
        Some(v) => Err(Error::user(format!(
            "In schedule for {func}, {what} is {}, which uses {v}: schedule expressions may only use constants and Params (Symbol not found: {v})\n",
            expr_to_string(e)
        ))),
        None => Ok(()),
    }
}

/// The user errors, before lowering builds anything from the schedules.
pub fn check_schedule_exprs(env: &Environment) -> Result<()> {
    for name in &env.order {
        for e in env.get(name).read().schedule.exprs() {
            check_no_loop_variable(name, "a bound, alignment or storage fold", &e)?;
        }
        for (_, stage) in env.get(name).stage_schedules() {
            for split in &stage.splits {
                if let Split::Split { old, factor, .. } = split {
                    let what = format!("the factor used to split the variable {}", short(old));
                    check_no_loop_variable(name, &what, factor)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;
    use crate::lang::parameter::Parameter;

    #[test]
    fn params_are_allowed_and_vars_are_rejected() {
        let p = Parameter::new(Type::int(32), false, 0, "sec_p");
        assert!(check_no_loop_variable("f", "a factor", &Expr::add(p.expr(), Expr::i32(1))).is_ok());
        let e = check_no_loop_variable("f", "a factor", &Expr::var_i32("y")).unwrap_err();
        assert!(e.message.contains("Symbol not found: y"), "{}", e.message);
    }
}
