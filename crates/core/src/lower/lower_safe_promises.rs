//! Discard safe promises (Halide's `lower_safe_promises`): a
//! `promise_clamped(a, lo, hi)` made by lowering itself (a PredicateLoads or
//! PredicateStores split's guarded variable) only told bounds inference
//! that `a` stays in range; from here on it is just `a`.
//!
//! Runs after bounds inference and storage folding, before storage
//! flattening (so vectorized indices built from it stay ramps).

use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Mutator, Stmt};

pub fn lower_safe_promises(s: &Stmt) -> Stmt {
    LowerSafePromises.mutate_stmt(s)
}

struct LowerSafePromises;

impl Mutator for LowerSafePromises {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Call {
                args,
                kind: CallKind::Intrinsic(Intrinsic::PromiseClamped),
                ..
            } if !args.is_empty() => self.mutate_expr(&args[0]),
            _ => mutate_expr_children(self, e),
        }
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        mutate_stmt_children(self, s)
    }
}
