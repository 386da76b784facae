//! Run-time checks that split factors are positive (Halide's
//! AddSplitFactorChecks): a factor that is not a constant (a Param, say)
//! and not provably positive gets an assertion at the top of the pipeline,
//! with Halide's message. (Constant factors are checked when the split is
//! applied: apply_split.rs.)

use super::buffer_checks::error_message;
use super::environment::Environment;
use crate::analysis::simplify::simplify;
use crate::ir::{Expr, Stmt};
use crate::lang::function::Specialization;
use crate::lang::print::expr_to_string;
use crate::schedule::{Split, StageSchedule};

/// `s` preceded by an assertion for each split factor of each Func in
/// `env` (by name, as Halide's map) that may not be positive.
pub fn add_split_factor_checks(s: &Stmt, env: &Environment) -> Stmt {
    let mut names: Vec<&String> = env.funcs.keys().collect();
    names.sort();
    let mut checks = vec![];
    for name in names {
        let c = env.get(name).read();
        stage_checks(name, &c.stage, &c.specializations, &mut checks);
        for u in &c.updates {
            stage_checks(name, &u.stage, &u.specializations, &mut checks);
        }
    }
    if checks.is_empty() {
        return s.clone();
    }
    checks.push(s.clone());
    Stmt::block(checks)
}

fn stage_checks(func: &str, stage: &StageSchedule, specs: &[Specialization], out: &mut Vec<Stmt>) {
    for split in &stage.splits {
        let Split::Split {
            old,
            outer,
            inner,
            factor,
            ..
        } = split
        else {
            continue;
        };
        if factor.as_int_const().is_some_and(|k| k > 0) {
            continue;
        }
        let positive = simplify(&Expr::gt(factor.clone(), Expr::i32(0)));
        if positive.is_true() {
            continue;
        }
        let last = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
        let text = expr_to_string(factor);
        out.push(Stmt::assert(
            positive,
            error_message(crate::ir::ErrorCode::SplitFactorNotPositive, vec![
                Expr::string(format!(
                    "In schedule for func {func}, the factor used to split the variable {} into {} and {} is {text}. This evaluated to ",
                    last(old),
                    last(outer),
                    last(inner)
                )),
                factor.clone(),
                Expr::string(format!(
                    ", which is not strictly positive. Consider using max({text}, 1) instead."
                )),
            ]),
        ));
    }
    for sp in specs {
        stage_checks(func, &sp.stage, &sp.specializations, out);
    }
}
