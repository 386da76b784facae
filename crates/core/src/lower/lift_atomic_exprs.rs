//! Shrink atomic sections to what must be atomic (after Halide's
//! LiftVectorizableExprsOutOfAllAtomicNodes, in VectorizeLoops.cpp).
//!
//! Assumes: storage flattening and add_atomic_mutex are done; an `Atomic`
//! body holds no loops.
//!
//! Guarantees: every maximal sub-expression of an `Atomic` body that does
//! not depend on the producer's current contents (no load of `f` / `f.i`,
//! nor of a buffer stored to inside the body, no variable bound inside
//! the body to such a value, no impure call) is computed before the
//! Atomic, in a let (`t<n>`; equal expressions share one let), and a let
//! inside the body whose value qualifies moves out whole, keeping its name.
//! So what remains inside is the read-modify-write itself: a
//! compare-and-swap loop recomputes only that, and the vectorizer sees
//! `f[i] = f[i] op y` with `y` a let-bound value it can reduce across lanes.

use std::collections::{HashMap, HashSet};

use super::add_atomic_mutex::is_producer_buffer;
use crate::ir::equality::ExprKey;
use crate::ir::visit::{
    for_each_expr, for_each_expr_in_stmt, mutate_expr_children, mutate_stmt_children, walk_stmt,
    Visitor,
};
use crate::ir::{Expr, ExprNode, Mutator, Stmt, StmtNode};
use crate::lang::var::unique_name;

pub fn lift_atomic_exprs(s: &Stmt) -> Stmt {
    LiftAll.mutate_stmt(s)
}

struct LiftAll;

impl Mutator for LiftAll {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::Atomic {
            producer_name,
            mutex_name,
            body,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        let mut used = HashSet::new();
        for_each_expr_in_stmt(body, &mut |e| {
            if let ExprNode::Variable { name, .. } = e.node() {
                used.insert(name.clone());
            }
        });
        let mut lifter = Lifter {
            poisoned: poisoned_names(producer_name, body),
            lifted: vec![],
            already: HashMap::new(),
            used,
        };
        let nb = lifter.mutate_stmt(body);
        if lifter.lifted.is_empty() {
            return s.clone();
        }
        Stmt::let_stmts(lifter.lifted, Stmt::atomic(producer_name.clone(), mutex_name.clone(), nb))
    }
}

/// Names an expression must not mention to be lifted: the producer's
/// buffers, every buffer stored to in `body`, and (found as the lifter
/// goes) the names bound inside `body` to values that cannot be lifted.
fn poisoned_names(producer: &str, body: &Stmt) -> HashSet<String> {
    struct Stores(HashSet<String>);
    impl Visitor for Stores {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Store { name, .. } = s.node() {
                self.0.insert(name.clone());
            }
            walk_stmt(self, s)
        }
    }
    let mut st = Stores(HashSet::new());
    st.visit_stmt(body);
    st.0.insert(producer.to_string());
    st.0
}

struct Lifter {
    poisoned: HashSet<String>,
    lifted: Vec<(String, Expr)>,
    already: HashMap<ExprKey, String>,
    /// Variable names the body mentions: a new let must not capture them.
    used: HashSet<String>,
}

impl Lifter {
    fn poisoned_name(&self, name: &str) -> bool {
        self.poisoned.contains(name) || self.poisoned.iter().any(|p| is_producer_buffer(name, p))
    }

    fn liftable(&self, e: &Expr) -> bool {
        let mut ok = true;
        for_each_expr(e, &mut |x| match x.node() {
            ExprNode::Load { name, .. } | ExprNode::Variable { name, .. } => {
                ok &= !self.poisoned_name(name)
            }
            ExprNode::Let { name, .. } => ok &= !self.poisoned_name(name),
            ExprNode::Call { kind, .. } => ok &= kind.is_pure(),
            _ => {}
        });
        ok
    }

    fn lift(&mut self, e: &Expr) -> Expr {
        let key = ExprKey(e.clone());
        let name = match self.already.get(&key) {
            Some(n) => n.clone(),
            None => {
                let n = loop {
                    let n = unique_name('t');
                    if !self.used.contains(&n) {
                        break n;
                    }
                };
                self.lifted.push((n.clone(), e.clone()));
                self.already.insert(key, n.clone());
                n
            }
        };
        Expr::var(e.ty(), name)
    }
}

impl Mutator for Lifter {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let trivial = e.is_const() || matches!(e.node(), ExprNode::Variable { .. });
        if !trivial && self.liftable(e) {
            return self.lift(e);
        }
        if let ExprNode::Let { name, value, body } = e.node() {
            let nv = self.mutate_expr(value);
            if self.liftable(&nv) {
                self.lifted.push((name.clone(), nv));
                return self.mutate_expr(body);
            }
            self.poisoned.insert(name.clone());
            let nb = self.mutate_expr(body);
            return Expr::let_(name.clone(), nv, nb);
        }
        mutate_expr_children(self, e)
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let nv = self.mutate_expr(value);
                if self.liftable(&nv) {
                    self.lifted.push((name.clone(), nv));
                    return self.mutate_stmt(body);
                }
                self.poisoned.insert(name.clone());
                let nb = self.mutate_stmt(body);
                Stmt::let_stmt(name.clone(), nv, nb)
            }
            StmtNode::For { name, .. } => {
                // Not made by lowering; nothing that uses the loop variable moves.
                self.poisoned.insert(name.clone());
                mutate_stmt_children(self, s)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    fn load(name: &str, index: Expr) -> Expr {
        Expr::load(Type::i32(), name, index, Expr::bool_const(true))
    }

    #[test]
    fn only_the_read_modify_write_stays_inside() {
        let (x, y) = (Expr::var_i32("x"), Expr::var_i32("y"));
        let idx = Expr::sub(load("im", x.clone()), y.clone());
        let value = Expr::add(load("f", idx.clone()), Expr::mul(x.clone(), Expr::i32(3)));
        let s = Stmt::atomic(
            "f",
            "",
            Stmt::store("f", value, idx, Expr::bool_const(true)),
        );
        let out = lift_atomic_exprs(&s);
        // Two lets outside (the index, once, and the operand), then the atomic.
        let StmtNode::LetStmt {
            value: v1, body, ..
        } = out.node()
        else {
            panic!("{out}")
        };
        let StmtNode::LetStmt {
            value: v2, body, ..
        } = body.node()
        else {
            panic!("{out}")
        };
        assert!(crate::ir::equality::equal(
            v1,
            &Expr::sub(load("im", x.clone()), y)
        ));
        assert!(crate::ir::equality::equal(v2, &Expr::mul(x, Expr::i32(3))));
        let StmtNode::Atomic { body, .. } = body.node() else {
            panic!("{out}")
        };
        let StmtNode::Store { value, index, .. } = body.node() else {
            panic!("{out}")
        };
        assert!(matches!(index.node(), ExprNode::Variable { .. }));
        let ExprNode::Binary { a, .. } = value.node() else {
            panic!("{out}")
        };
        let ExprNode::Load { index: li, .. } = a.node() else {
            panic!("{out}")
        };
        assert!(crate::ir::equality::equal(li, index));
    }

    #[test]
    fn values_read_from_the_producer_stay_inside() {
        let x = Expr::var_i32("x");
        let body = Stmt::let_stmt(
            "f.0.value",
            Expr::min(load("f.0", x.clone()), Expr::i32(3)),
            Stmt::block(vec![
                Stmt::store(
                    "f.0",
                    Expr::var_i32("f.0.value"),
                    x.clone(),
                    Expr::bool_const(true),
                ),
                Stmt::store(
                    "f.1",
                    Expr::add(Expr::var_i32("f.0.value"), load("f.1", x.clone())),
                    x,
                    Expr::bool_const(true),
                ),
            ]),
        );
        let s = Stmt::atomic("f", "f.mutex", body);
        let out = lift_atomic_exprs(&s);
        assert!(out.same_as(&s), "{out}");
    }
}
