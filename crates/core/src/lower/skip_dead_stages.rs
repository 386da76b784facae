//! Skip the production of Funcs that nothing reads any more (the static half
//! of Halide's `skip_stages`).
//!
//! Simplifying the definitions can remove every read of a Func (a `mux` or
//! `select` with a constant index or condition). Halide then skips the Func's
//! production, and with it everything inside: the Funcs computed there and
//! their `bound()` checks. The input checks are derived before this pass, so
//! an input the dead stage would have read is still checked, as in Halide.
//!
//! Assumes: a non-output Func `f` is computed as `Block[produce f, consume f]`
//! (`schedule_functions`), a compute_with group as nested producers.
//! Guarantees: a `produce f` whose `consume f` no longer calls `f` is
//! removed, with the `consume f` marker around its consumers; a fused group
//! only when no member is read; outputs are always produced. Nothing else
//! changes.

use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, Mutator, Stmt, StmtNode};
use crate::lower::validate_schedule::stmt_uses_func;

/// `outputs`: the pipeline's output Funcs, always produced.
pub fn skip_dead_stages(s: &Stmt, outputs: &[String]) -> Stmt {
    SkipDeadStages { outputs }.mutate_stmt(s)
}

struct SkipDeadStages<'a> {
    outputs: &'a [String],
}

impl Mutator for SkipDeadStages<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        // Consumers first: a stage that only a dead stage read is dead too.
        let s = mutate_stmt_children(self, s);
        let StmtNode::Block(stmts) = s.node() else {
            return s;
        };
        let [produce, consume] = stmts.as_slice() else {
            return s;
        };
        let members = produced_funcs(produce);
        if members.is_empty()
            || members.iter().any(|f| self.outputs.contains(f))
            || !consumes(consume, &members)
        {
            return s;
        }
        if members.iter().any(|f| stmt_uses_func(consume, f)) {
            return s;
        }
        // The consume markers go with the production: an async producer's
        // consumer waits for a production at each `consume f`, and one
        // left here would take the production another stage waits for
        // (a deadlock: fuzz seed 76544's neighbour).
        without_consume_markers(consume, &members)
    }
}

/// `s` without the `consume` nodes of `members` at its top.
fn without_consume_markers(s: &Stmt, members: &[String]) -> Stmt {
    match s.node() {
        StmtNode::ProducerConsumer {
            name,
            is_producer: false,
            body,
        } if members.contains(name) => without_consume_markers(body, members),
        _ => s.clone(),
    }
}

/// The Funcs `s` produces together: `produce f` (nested for a group).
fn produced_funcs(s: &Stmt) -> Vec<String> {
    let mut names = vec![];
    let mut s = s;
    while let StmtNode::ProducerConsumer {
        name,
        is_producer: true,
        body,
    } = s.node()
    {
        names.push(name.clone());
        s = body;
    }
    names
}

/// Is `s` the consumer block of `members` (an output member has none)?
fn consumes(s: &Stmt, members: &[String]) -> bool {
    match s.node() {
        StmtNode::ProducerConsumer {
            name,
            is_producer: false,
            ..
        } => members.contains(name),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::Expr;
    use crate::lang::func::Func;
    use crate::lang::var::Var;
    use crate::lower::lower;

    /// `g(x) = select(0 == 1, f(x), x)`: once simplified, nothing reads `f`.
    fn lowered_text(condition: Expr) -> String {
        let x = Var::new("x");
        let f = Func::new(Some("skip_dead_f"));
        f.define(vec![x.expr()], vec![Expr::mul(x.expr(), Expr::i32(2))])
            .unwrap();
        f.compute_root();
        let g = Func::new(Some("skip_dead_g"));
        let call = f.call(vec![x.expr()]).unwrap().to_expr().unwrap();
        g.define(vec![x.expr()], vec![Expr::select(condition, call, x.expr())])
            .unwrap();
        let lowered = lower(&[g.function.clone()], &g.name()).unwrap();
        format!("{}", lowered.pipeline.body)
    }

    #[test]
    fn a_stage_nothing_reads_is_not_produced() {
        let dead = lowered_text(Expr::eq(Expr::i32(0), Expr::i32(1)));
        assert!(!dead.contains("produce skip_dead_f"), "{dead}");
    }

    #[test]
    fn a_stage_read_under_a_condition_is_produced() {
        let x = Var::new("x");
        let live = lowered_text(Expr::eq(x.expr(), Expr::i32(1)));
        assert!(live.contains("produce skip_dead_f"), "{live}");
    }
}
