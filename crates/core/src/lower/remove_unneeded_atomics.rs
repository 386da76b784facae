//! Drop atomic sections no other thread can race with (Halide's
//! RemoveUnnecessaryAtomics, in VectorizeLoops.cpp).
//!
//! Assumes: vectorization is done (a vectorized atomic update is either a
//! lane reduction, a store with one element per lane, or a serial loop over
//! the lanes, see vectorize_loops.rs), so what an `Atomic` still protects
//! is only a race between threads.
//!
//! Guarantees: an `Atomic` remains only inside a parallel loop, and only if
//! it stores to a buffer allocated outside that loop; the others are
//! replaced by their bodies (plain loads and stores; the lock calls of a
//! mutex, if any, stay in the body).

use crate::ir::visit::{mutate_stmt_children, walk_stmt, Visitor};
use crate::ir::{Expr, ForType, Mutator, Stmt, StmtNode};

pub fn remove_unneeded_atomics(s: &Stmt) -> Stmt {
    RemoveAtomics {
        in_thread: false,
        local_allocs: vec![],
    }
    .mutate_stmt(s)
}

struct RemoveAtomics {
    /// Inside a parallel loop.
    in_thread: bool,
    /// Allocations made inside the innermost enclosing parallel loop (or
    /// anywhere, outside parallel loops): private to one thread.
    local_allocs: Vec<String>,
}

/// Does every store in `s` go to one of `names`?
fn all_stores_in(s: &Stmt, names: &[String]) -> bool {
    struct Check<'a> {
        names: &'a [String],
        ok: bool,
    }
    impl Visitor for Check<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Store { name, .. } = s.node() {
                self.ok &= self.names.contains(name);
            }
            walk_stmt(self, s)
        }
    }
    let mut c = Check { names, ok: true };
    c.visit_stmt(s);
    c.ok
}

impl Mutator for RemoveAtomics {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::Allocate { name, .. } => {
                self.local_allocs.push(name.clone());
                let out = mutate_stmt_children(self, s);
                self.local_allocs.pop();
                out
            }
            StmtNode::Atomic { body, .. } => {
                if !self.in_thread || all_stores_in(body, &self.local_allocs) {
                    self.mutate_stmt(body)
                } else {
                    s.clone()
                }
            }
            StmtNode::For {
                for_type: ForType::Parallel,
                ..
            } => {
                let outer = std::mem::take(&mut self.local_allocs);
                let was = std::mem::replace(&mut self.in_thread, true);
                let out = mutate_stmt_children(self, s);
                self.in_thread = was;
                self.local_allocs = outer;
                out
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{MemoryType, Type};

    fn update(buf: &str) -> Stmt {
        let x = Expr::var_i32("x");
        let old = Expr::load(Type::i32(), buf, x.clone(), Expr::bool_const(true));
        Stmt::atomic(
            "f",
            "",
            Stmt::store(buf, Expr::add(old, Expr::i32(1)), x, Expr::bool_const(true)),
        )
    }
    fn parallel(body: Stmt) -> Stmt {
        Stmt::for_loop("r", Expr::i32(0), Expr::i32(8), ForType::Parallel, body)
    }
    fn allocate(name: &str, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::Allocate {
            name: name.to_string(),
            ty: Type::i32(),
            memory_type: MemoryType::Auto,
            extents: vec![Expr::i32(4)],
            condition: Expr::bool_const(true),
            body,
        })
    }
    fn count_atomics(s: &Stmt) -> usize {
        s.to_string().matches("atomic (").count()
    }

    #[test]
    fn atomics_outside_parallel_loops_go() {
        let s = Stmt::for_loop(
            "r",
            Expr::i32(0),
            Expr::i32(8),
            ForType::Serial,
            update("f"),
        );
        assert_eq!(count_atomics(&remove_unneeded_atomics(&s)), 0);
    }

    #[test]
    fn atomics_on_shared_buffers_in_parallel_loops_stay() {
        let s = allocate("f", parallel(update("f")));
        assert_eq!(count_atomics(&remove_unneeded_atomics(&s)), 1);
    }

    #[test]
    fn atomics_on_buffers_private_to_a_thread_go() {
        let s = parallel(allocate("f", update("f")));
        assert_eq!(count_atomics(&remove_unneeded_atomics(&s)), 0);
    }
}
