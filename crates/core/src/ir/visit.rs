//! Generic traversal: `Visitor` walks a tree read-only, `Mutator` rebuilds
//! it. Implementors override `visit_expr`/`mutate_expr` (and the Stmt
//! versions), match the nodes they care about, and fall back to the
//! `walk_*`/`mutate_*_children` functions for everything else.
//! Mutation preserves sharing: a node whose children are unchanged is
//! returned as the same `Arc`.

use super::expr::{Expr, ExprNode, Range};
use super::stmt::{Stmt, StmtNode};

pub trait Visitor {
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s)
    }
}

pub fn walk_expr<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    for_each_child(e, &mut |c| v.visit_expr(c))
}

pub fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    match s.node() {
        StmtNode::LetStmt { value, body, .. } => {
            v.visit_expr(value);
            v.visit_stmt(body);
        }
        StmtNode::AssertStmt { condition, message } => {
            v.visit_expr(condition);
            v.visit_expr(message);
        }
        StmtNode::ProducerConsumer { body, .. } => v.visit_stmt(body),
        StmtNode::For {
            min, extent, body, ..
        } => {
            v.visit_expr(min);
            v.visit_expr(extent);
            v.visit_stmt(body);
        }
        StmtNode::Store {
            value,
            index,
            predicate,
            ..
        } => {
            v.visit_expr(value);
            v.visit_expr(index);
            v.visit_expr(predicate);
        }
        StmtNode::Provide {
            values,
            args,
            predicate,
            ..
        } => {
            values.iter().for_each(|e| v.visit_expr(e));
            args.iter().for_each(|e| v.visit_expr(e));
            v.visit_expr(predicate);
        }
        StmtNode::Allocate {
            extents,
            condition,
            body,
            ..
        } => {
            extents.iter().for_each(|e| v.visit_expr(e));
            v.visit_expr(condition);
            v.visit_stmt(body);
        }
        StmtNode::Free { .. } => {}
        StmtNode::Realize {
            bounds,
            condition,
            body,
            ..
        } => {
            for r in bounds {
                v.visit_expr(&r.min);
                v.visit_expr(&r.extent);
            }
            v.visit_expr(condition);
            v.visit_stmt(body);
        }
        StmtNode::Block(stmts) => stmts.iter().for_each(|s| v.visit_stmt(s)),
        StmtNode::IfThenElse {
            condition,
            then_case,
            else_case,
        } => {
            v.visit_expr(condition);
            v.visit_stmt(then_case);
            if let Some(e) = else_case {
                v.visit_stmt(e);
            }
        }
        StmtNode::Evaluate(e) => v.visit_expr(e),
        StmtNode::Atomic { body, .. } => v.visit_stmt(body),
    }
}

pub trait Mutator {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        mutate_expr_children(self, e)
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        mutate_stmt_children(self, s)
    }
}

fn mutate_all<M: Mutator + ?Sized>(m: &mut M, es: &[Expr]) -> (Vec<Expr>, bool) {
    let mut changed = false;
    let out = es
        .iter()
        .map(|e| {
            let n = m.mutate_expr(e);
            changed |= !n.same_as(e);
            n
        })
        .collect();
    (out, changed)
}

/// Rebuild `e` with each child mutated; returns `e` itself if nothing changed.
pub fn mutate_expr_children<M: Mutator + ?Sized>(m: &mut M, e: &Expr) -> Expr {
    let ty = e.ty();
    match e.node() {
        ExprNode::IntImm(_)
        | ExprNode::UIntImm(_)
        | ExprNode::FloatImm(_)
        | ExprNode::StringImm(_)
        | ExprNode::Variable { .. } => e.clone(),
        ExprNode::Cast(a) => {
            let na = m.mutate_expr(a);
            if na.same_as(a) {
                e.clone()
            } else {
                Expr::new(ty, ExprNode::Cast(na))
            }
        }
        ExprNode::Reinterpret(a) => {
            let na = m.mutate_expr(a);
            if na.same_as(a) {
                e.clone()
            } else {
                Expr::new(ty, ExprNode::Reinterpret(na))
            }
        }
        ExprNode::Not(a) => {
            let na = m.mutate_expr(a);
            if na.same_as(a) {
                e.clone()
            } else {
                Expr::not(na)
            }
        }
        ExprNode::Binary { op, a, b } => {
            let na = m.mutate_expr(a);
            let nb = m.mutate_expr(b);
            if na.same_as(a) && nb.same_as(b) {
                e.clone()
            } else {
                Expr::binary(*op, na, nb)
            }
        }
        ExprNode::Select { cond, t, f } => {
            let nc = m.mutate_expr(cond);
            let nt = m.mutate_expr(t);
            let nf = m.mutate_expr(f);
            if nc.same_as(cond) && nt.same_as(t) && nf.same_as(f) {
                e.clone()
            } else {
                Expr::select(nc, nt, nf)
            }
        }
        ExprNode::Load {
            name,
            index,
            predicate,
        } => {
            let ni = m.mutate_expr(index);
            let np = m.mutate_expr(predicate);
            if ni.same_as(index) && np.same_as(predicate) {
                e.clone()
            } else {
                Expr::load(ty.with_lanes(ni.lanes()), name.clone(), ni, np)
            }
        }
        ExprNode::Ramp {
            base,
            stride,
            lanes,
        } => {
            let nb = m.mutate_expr(base);
            let ns = m.mutate_expr(stride);
            if nb.same_as(base) && ns.same_as(stride) {
                e.clone()
            } else {
                Expr::ramp(nb, ns, *lanes)
            }
        }
        ExprNode::Broadcast { value, lanes } => {
            let nv = m.mutate_expr(value);
            if nv.same_as(value) {
                e.clone()
            } else {
                Expr::broadcast(nv, *lanes)
            }
        }
        ExprNode::Let { name, value, body } => {
            let nv = m.mutate_expr(value);
            let nb = m.mutate_expr(body);
            if nv.same_as(value) && nb.same_as(body) {
                e.clone()
            } else {
                Expr::let_(name.clone(), nv, nb)
            }
        }
        ExprNode::Call { name, args, kind } => {
            let (nargs, changed) = mutate_all(m, args);
            if !changed {
                e.clone()
            } else {
                Expr::call(ty, name.clone(), nargs, kind.clone())
            }
        }
        ExprNode::Shuffle { vectors, indices } => {
            let (nv, changed) = mutate_all(m, vectors);
            if !changed {
                e.clone()
            } else {
                Expr::shuffle(nv, indices.clone())
            }
        }
        ExprNode::VectorReduce { op, value } => {
            let nv = m.mutate_expr(value);
            if nv.same_as(value) {
                e.clone()
            } else {
                Expr::vector_reduce(*op, nv, ty.lanes)
            }
        }
    }
}

/// Rebuild `s` with each child mutated; returns `s` itself if nothing changed.
pub fn mutate_stmt_children<M: Mutator + ?Sized>(m: &mut M, s: &Stmt) -> Stmt {
    match s.node() {
        StmtNode::LetStmt { name, value, body } => {
            let nv = m.mutate_expr(value);
            let nb = m.mutate_stmt(body);
            if nv.same_as(value) && nb.same_as(body) {
                s.clone()
            } else {
                Stmt::let_stmt(name.clone(), nv, nb)
            }
        }
        StmtNode::AssertStmt { condition, message } => {
            let nc = m.mutate_expr(condition);
            let nm = m.mutate_expr(message);
            if nc.same_as(condition) && nm.same_as(message) {
                s.clone()
            } else {
                Stmt::assert(nc, nm)
            }
        }
        StmtNode::ProducerConsumer {
            name,
            is_producer,
            body,
        } => {
            let nb = m.mutate_stmt(body);
            if nb.same_as(body) {
                s.clone()
            } else {
                Stmt::new(StmtNode::ProducerConsumer {
                    name: name.clone(),
                    is_producer: *is_producer,
                    body: nb,
                })
            }
        }
        StmtNode::For {
            name,
            min,
            extent,
            for_type,
            body,
        } => {
            let nmin = m.mutate_expr(min);
            let next = m.mutate_expr(extent);
            let nb = m.mutate_stmt(body);
            if nmin.same_as(min) && next.same_as(extent) && nb.same_as(body) {
                s.clone()
            } else {
                Stmt::for_loop(name.clone(), nmin, next, *for_type, nb)
            }
        }
        StmtNode::Store {
            name,
            value,
            index,
            predicate,
        } => {
            let nv = m.mutate_expr(value);
            let ni = m.mutate_expr(index);
            let np = m.mutate_expr(predicate);
            if nv.same_as(value) && ni.same_as(index) && np.same_as(predicate) {
                s.clone()
            } else {
                Stmt::store(name.clone(), nv, ni, np)
            }
        }
        StmtNode::Provide {
            name,
            values,
            args,
            predicate,
        } => {
            let (nv, c1) = mutate_all(m, values);
            let (na, c2) = mutate_all(m, args);
            let np = m.mutate_expr(predicate);
            if !c1 && !c2 && np.same_as(predicate) {
                s.clone()
            } else {
                Stmt::provide(name.clone(), nv, na, np)
            }
        }
        StmtNode::Allocate {
            name,
            ty,
            memory_type,
            extents,
            condition,
            body,
        } => {
            let (ne, c1) = mutate_all(m, extents);
            let nc = m.mutate_expr(condition);
            let nb = m.mutate_stmt(body);
            if !c1 && nc.same_as(condition) && nb.same_as(body) {
                s.clone()
            } else {
                Stmt::new(StmtNode::Allocate {
                    name: name.clone(),
                    ty: *ty,
                    memory_type: *memory_type,
                    extents: ne,
                    condition: nc,
                    body: nb,
                })
            }
        }
        StmtNode::Free { .. } => s.clone(),
        StmtNode::Realize {
            name,
            types,
            memory_type,
            bounds,
            condition,
            body,
        } => {
            let mut changed = false;
            let nbounds: Vec<Range> = bounds
                .iter()
                .map(|r| {
                    let nmin = m.mutate_expr(&r.min);
                    let next = m.mutate_expr(&r.extent);
                    changed |= !nmin.same_as(&r.min) || !next.same_as(&r.extent);
                    Range::new(nmin, next)
                })
                .collect();
            let nc = m.mutate_expr(condition);
            let nb = m.mutate_stmt(body);
            if !changed && nc.same_as(condition) && nb.same_as(body) {
                s.clone()
            } else {
                Stmt::new(StmtNode::Realize {
                    name: name.clone(),
                    types: types.clone(),
                    memory_type: *memory_type,
                    bounds: nbounds,
                    condition: nc,
                    body: nb,
                })
            }
        }
        StmtNode::Block(stmts) => {
            let mut changed = false;
            let ns: Vec<Stmt> = stmts
                .iter()
                .map(|x| {
                    let n = m.mutate_stmt(x);
                    changed |= !n.same_as(x);
                    n
                })
                .collect();
            if !changed {
                s.clone()
            } else {
                Stmt::block(ns)
            }
        }
        StmtNode::IfThenElse {
            condition,
            then_case,
            else_case,
        } => {
            let nc = m.mutate_expr(condition);
            let nt = m.mutate_stmt(then_case);
            let ne = else_case.as_ref().map(|e| m.mutate_stmt(e));
            let else_same = match (&ne, else_case) {
                (Some(a), Some(b)) => a.same_as(b),
                (None, None) => true,
                _ => false,
            };
            if nc.same_as(condition) && nt.same_as(then_case) && else_same {
                s.clone()
            } else {
                Stmt::if_then_else(nc, nt, ne)
            }
        }
        StmtNode::Evaluate(e) => {
            let ne = m.mutate_expr(e);
            if ne.same_as(e) {
                s.clone()
            } else {
                Stmt::evaluate(ne)
            }
        }
        StmtNode::Atomic {
            producer_name,
            mutex_name,
            body,
        } => {
            let nb = m.mutate_stmt(body);
            if nb.same_as(body) {
                s.clone()
            } else {
                Stmt::atomic(producer_name.clone(), mutex_name.clone(), nb)
            }
        }
    }
}

/// Call `f` on each direct child of `e`, in field order.
pub fn for_each_child<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    for_each_child_of_node(e.node(), f)
}

/// `for_each_child` on a node.
pub fn for_each_child_of_node<'a>(node: &'a ExprNode, f: &mut dyn FnMut(&'a Expr)) {
    match node {
        ExprNode::IntImm(_)
        | ExprNode::UIntImm(_)
        | ExprNode::FloatImm(_)
        | ExprNode::StringImm(_)
        | ExprNode::Variable { .. } => {}
        ExprNode::Cast(a) | ExprNode::Reinterpret(a) | ExprNode::Not(a) => f(a),
        ExprNode::Binary { a, b, .. } => {
            f(a);
            f(b);
        }
        ExprNode::Select { cond, t, f: fv } => {
            f(cond);
            f(t);
            f(fv);
        }
        ExprNode::Load {
            index, predicate, ..
        } => {
            f(index);
            f(predicate);
        }
        ExprNode::Ramp { base, stride, .. } => {
            f(base);
            f(stride);
        }
        ExprNode::Broadcast { value, .. } => f(value),
        ExprNode::Let { value, body, .. } => {
            f(value);
            f(body);
        }
        ExprNode::Call { args, .. } => args.iter().for_each(f),
        ExprNode::Shuffle { vectors, .. } => vectors.iter().for_each(f),
        ExprNode::VectorReduce { value, .. } => f(value),
    }
}

/// Call `f` on every sub-expression (pre-order) of an Expr.
pub fn for_each_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    expr_contains(e, &mut |x| {
        f(x);
        false
    });
}

/// Does `e` have a sub-expression (itself included) satisfying `pred`?
/// Tested in pre-order; the walk stops at the first.
pub fn expr_contains(e: &Expr, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
    // On an explicit stack: expressions can nest deeper than the caller's
    // stack allows recursion (a sum built term by term in a Python loop).
    // The stack borrows the nodes (`e` keeps them alive): no reference
    // counting per node.
    let mut pending: Vec<&Expr> = vec![e];
    while let Some(e) = pending.pop() {
        if pred(e) {
            return true;
        }
        // Reversed, so that the first child is visited next.
        let first = pending.len();
        for_each_child(e, &mut |c| pending.push(c));
        pending[first..].reverse();
    }
    false
}

/// The first variable of `e` (pre-order) that is not a parameter: a Var or
/// RVar, where only constants and Params have a value (schedules,
/// specialization conditions, RDom bounds).
pub fn first_free_variable(e: &Expr) -> Option<String> {
    let mut found = None;
    expr_contains(e, &mut |x| match x.node() {
        ExprNode::Variable {
            name, param: None, ..
        } => {
            found = Some(name.clone());
            true
        }
        _ => false,
    });
    found
}

/// Call `f` on every expression (pre-order) inside a Stmt.
pub fn for_each_expr_in_stmt(s: &Stmt, f: &mut dyn FnMut(&Expr)) {
    struct Each<'a>(&'a mut dyn FnMut(&Expr));
    impl Visitor for Each<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            (self.0)(e);
            walk_expr(self, e);
        }
    }
    Each(f).visit_stmt(s);
}

/// Call `f` on every statement (pre-order) inside a Stmt, itself included.
pub fn for_each_stmt(s: &Stmt, f: &mut dyn FnMut(&Stmt)) {
    struct Each<'a>(&'a mut dyn FnMut(&Stmt));
    impl Visitor for Each<'_> {
        fn visit_expr(&mut self, _: &Expr) {}
        fn visit_stmt(&mut self, s: &Stmt) {
            (self.0)(s);
            walk_stmt(self, s);
        }
    }
    Each(f).visit_stmt(s);
}

/// Does `s` hold a loop (itself included)?
pub fn contains_loop(s: &Stmt) -> bool {
    let mut found = false;
    for_each_stmt(s, &mut |x| found |= matches!(x.node(), StmtNode::For { .. }));
    found
}

/// Does evaluating `e` do more than compute a value (print, trace,
/// report an error, call an impure extern)?
pub fn has_side_effects(e: &Expr) -> bool {
    expr_contains(e, &mut |x| matches!(x.node(), ExprNode::Call { kind, .. } if !kind.is_pure()))
}

/// The names of the variables `e` mentions (free or bound).
pub fn vars_used(e: &Expr) -> crate::fast_hash::FastSet<String> {
    let mut out = crate::fast_hash::FastSet::default();
    for_each_expr(e, &mut |x| {
        if let ExprNode::Variable { name, .. } = x.node() {
            if !out.contains(name) {
                out.insert(name.clone());
            }
        }
    });
    out
}

/// Is `x` the variable `name`?
fn is_var_named(x: &Expr, name: &str) -> bool {
    matches!(x.node(), ExprNode::Variable { name: n, .. } if n == name)
}

/// Does `e` mention variable `name` (free or bound)?
pub fn expr_uses_var(e: &Expr, name: &str) -> bool {
    expr_contains(e, &mut |x| is_var_named(x, name))
}

pub fn stmt_uses_var(s: &Stmt, name: &str) -> bool {
    stmt_contains(s, &|x| is_var_named(x, name), &|_| false)
}

/// Does `e` load from a buffer whose name satisfies `which`?
pub fn expr_loads_from(e: &Expr, which: &dyn Fn(&str) -> bool) -> bool {
    expr_contains(e, &mut |x| matches!(x.node(), ExprNode::Load { name, .. } if which(name)))
}

/// Does `s` read or write (a Func call or a load; a Provide or a store)
/// something whose name satisfies `which`?
pub fn stmt_accesses(s: &Stmt, which: &dyn Fn(&str) -> bool) -> bool {
    stmt_contains(s, &|e| read_by(e).is_some_and(which), &|s| written_by(s).is_some_and(which))
}

/// The name `e` itself reads, if it is a Load or a Call (its operands are
/// not looked at).
pub fn read_by(e: &Expr) -> Option<&str> {
    match e.node() {
        ExprNode::Load { name, .. } | ExprNode::Call { name, .. } => Some(name),
        _ => None,
    }
}

/// The name `s` itself writes, if it is a Store or a Provide.
pub fn written_by(s: &Stmt) -> Option<&str> {
    match s.node() {
        StmtNode::Store { name, .. } | StmtNode::Provide { name, .. } => Some(name),
        _ => None,
    }
}

/// Does `s` contain an expression satisfying `expr` or a statement
/// satisfying `stmt` (each tested before its children; the walk stops at
/// the first)?
pub fn stmt_contains(s: &Stmt, expr: &dyn Fn(&Expr) -> bool, stmt: &dyn Fn(&Stmt) -> bool) -> bool {
    struct Find<'a> {
        expr: &'a dyn Fn(&Expr) -> bool,
        stmt: &'a dyn Fn(&Stmt) -> bool,
        found: bool,
    }
    impl Visitor for Find<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if !self.found {
                self.found = (self.expr)(e);
                if !self.found {
                    walk_expr(self, e);
                }
            }
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if !self.found {
                self.found = (self.stmt)(s);
                if !self.found {
                    walk_stmt(self, s);
                }
            }
        }
    }
    let mut f = Find { expr, stmt, found: false };
    f.visit_stmt(s);
    f.found
}
