//! `Pipeline.add_requirement(condition, *message)`: a condition a pipeline
//! checks before doing any work; when it fails the pipeline returns
//! Halide's requirement-failed error with "Requirement Failed: (condition)
//! message" (the message's parts joined by spaces). Lowering puts one
//! assertion per requirement at the top of the pipeline.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::ir::{ErrorCode, Expr, Stmt};
use crate::lang::print::expr_to_string;

#[derive(Clone, Debug)]
pub struct Requirement {
    /// Distinct for every requirement made: compiled code is cached on it.
    pub id: u64,
    pub condition: Expr,
    pub message: Vec<Expr>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Requirement {
    pub fn new(condition: Expr, message: Vec<Expr>) -> Result<Requirement> {
        if !(condition.ty().is_bool() && condition.ty().is_scalar()) {
            return Err(Error::user(format!(
                "Requirement condition must be a scalar boolean, but {} has type {}\n",
                expr_to_string(&condition),
                crate::lang::print::ir_type_name(condition.ty())
            )));
        }
        Ok(Requirement {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            condition,
            message,
        })
    }

    /// The assertion lowering puts at the top of the pipeline.
    pub fn check(&self) -> Stmt {
        // As Halide: the condition's value, which is false when it fails.
        let mut parts = vec![Expr::string("Requirement Failed: (false) ")];
        for (i, m) in self.message.iter().enumerate() {
            if i > 0 {
                parts.push(Expr::string(" "));
            }
            parts.push(m.clone());
        }
        Stmt::assert(self.condition.clone(), Expr::error(ErrorCode::RequirementFailed, parts))
    }
}
