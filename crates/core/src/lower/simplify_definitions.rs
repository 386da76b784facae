//! Simplify what each Provide stores and where, before the regions the loop
//! nests touch are measured (allocation bounds and buffer checks).
//!
//! Halide measures those after its first simplification, so a read the
//! simplifier proves dead is neither checked nor allocated for: in
//! `clamp(i32(u8_input[x]), 300, 400)` the value is 300 whatever the input,
//! and Halide runs the pipeline over any region of the input. ferrohalide
//! measures them earlier (see `lower/mod.rs`), so the definitions are
//! simplified here, each Expr on its own; the code that runs is this
//! simplified code, so every access it makes is still measured, and later
//! simplifications only remove more.

use crate::analysis::simplify::simplify;
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, Mutator, Stmt, StmtNode};

pub fn simplify_definitions(s: &Stmt) -> Stmt {
    SimplifyDefinitions.mutate_stmt(s)
}

struct SimplifyDefinitions;

impl Mutator for SimplifyDefinitions {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                let values: Vec<Expr> = values.iter().map(simplify).collect();
                let args: Vec<Expr> = args.iter().map(simplify).collect();
                Stmt::provide(name.clone(), values, args, simplify(predicate))
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}
