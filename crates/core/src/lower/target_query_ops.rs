//! Replace the target queries (`target_bits()`, `target_has_feature(f)`,
//! ...) by their values for the target being compiled for, as Halide's
//! `lower_target_query_ops` does before lowering proper. The simplifier
//! folds them too while `lang::target_queries::with_compile_target` is in
//! force; this pass makes sure none reaches code generation.

use crate::ir::visit::{mutate_expr_children, Mutator};
use crate::ir::{CallKind, Expr, ExprNode, Stmt};
use crate::lang::target_queries::value_for;
use crate::target::Target;

pub fn lower_target_query_ops(s: &Stmt, target: &Target) -> Stmt {
    LowerQueries { target }.mutate_stmt(s)
}

struct LowerQueries<'a> {
    target: &'a Target,
}

impl Mutator for LowerQueries<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let ExprNode::Call {
            args,
            kind: CallKind::Intrinsic(which),
            ..
        } = e.node()
        {
            if let Some(v) = value_for(self.target, *which, args) {
                return v;
            }
        }
        mutate_expr_children(self, e)
    }
}
