//! Statements: LetStmt substitution and dead-let removal, For loops with
//! empty or single-iteration extents, loop-variable bounds as facts,
//! IfThenElse with provable conditions (and facts learned from simple
//! conditions inside each branch), no-op removal in blocks, asserts that
//! hold, and empty producers/allocations.

use super::info::Info;
use super::{Simplifier, VarFact};
use crate::ir::{BinOp, Expr, ExprNode, ForType, Stmt, StmtNode, Type};

/// What a let whose variable the body does not use leaves: the body, after
/// the value's evaluation if that has effects (a trace event's id defined
/// for a body that ended up empty is still reported).
fn unused_let(value: Expr, body: Stmt) -> Stmt {
    if crate::ir::visit::has_side_effects(&value) {
        Stmt::block(vec![Stmt::evaluate(value), body])
    } else {
        body
    }
}

impl Simplifier {
    pub fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let v = self.mutate(value);
                self.let_stmt_with(s, name, v, body)
            }
            StmtNode::AssertStmt { condition, message } => {
                let c = self.mutate(condition);
                if c.is_true() {
                    return Stmt::no_op();
                }
                let m = self.mutate(message);
                if c.same_as(condition) && m.same_as(message) {
                    s.clone()
                } else {
                    Stmt::assert(c, m)
                }
            }
            StmtNode::ProducerConsumer {
                name,
                is_producer,
                body,
            } => {
                let b = self.mutate_stmt(body);
                if b.is_no_op() {
                    return b;
                }
                if b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::new(StmtNode::ProducerConsumer {
                        name: name.clone(),
                        is_producer: *is_producer,
                        body: b,
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
                if crate::device_api::is_offload_loop(name) {
                    // A marker of one iteration that must reach the
                    // offload pass as a loop.
                    let b = self.mutate_stmt(body);
                    return if b.is_no_op() {
                        b
                    } else if b.same_as(body) {
                        s.clone()
                    } else {
                        Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b)
                    };
                }
                let mn = self.mutate(min);
                let ex = self.mutate(extent);
                let iext = self.info(&ex);
                if iext.max.is_some_and(|m| m <= 0) {
                    return Stmt::no_op();
                }
                if ex.is_one() {
                    // a single iteration: the loop variable is just `min`
                    return self.let_stmt_with_new(name, mn, body);
                }
                if iext.max == Some(1) && matches!(for_type, ForType::Serial | ForType::Parallel) {
                    // At most one iteration (a producer computed per vector
                    // of its consumer): a guarded body, which loop
                    // partitioning does not copy into three pieces.
                    let once = self.let_stmt_with_new(name, mn, body);
                    if once.is_no_op() {
                        return once;
                    }
                    let cond = self.mutate(&Expr::gt(ex.clone(), Expr::zero(ex.ty())));
                    return Stmt::if_then_else(cond, once, None);
                }
                let imin = self.info(&mn);
                let hi = match (imin.max, iext.max) {
                    (Some(a), Some(b)) => a.checked_add(b).and_then(|v| v.checked_sub(1)),
                    _ => None,
                };
                let fact = Info::bounds(imin.min, hi).fit(mn.ty());
                self.push_var(name, VarFact::Info(fact));
                let b = self.mutate_stmt(body);
                self.pop_var(name);
                if b.is_no_op() {
                    return b;
                }
                if mn.same_as(min) && ex.same_as(extent) && b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::for_loop(name.clone(), mn, ex, *for_type, b)
                }
            }
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } => {
                let p = self.mutate(predicate);
                if p.is_false() {
                    return Stmt::no_op();
                }
                let v = self.mutate(value);
                let i = self.mutate(index);
                if v.same_as(value) && i.same_as(index) && p.same_as(predicate) {
                    s.clone()
                } else {
                    Stmt::store(name.clone(), v, i, p)
                }
            }
            StmtNode::Allocate { body, .. } | StmtNode::Realize { body, .. } => {
                let r = crate::ir::visit::mutate_stmt_children(&mut super::MutateAdapter(self), s);
                let nb = match r.node() {
                    StmtNode::Allocate { body, .. } | StmtNode::Realize { body, .. } => body,
                    _ => body,
                };
                if nb.is_no_op() {
                    return Stmt::no_op();
                }
                r
            }
            StmtNode::Block(stmts) => {
                let mut changed = false;
                let ns: Vec<Stmt> = stmts
                    .iter()
                    .map(|x| {
                        let n = self.mutate_stmt(x);
                        changed |= !n.same_as(x);
                        n
                    })
                    .collect();
                if !changed && !ns.iter().any(|x| x.is_no_op()) {
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
                let c = self.mutate(condition);
                if c.is_true() {
                    return self.mutate_stmt(then_case);
                }
                if c.is_false() {
                    return match else_case {
                        Some(e) => self.mutate_stmt(e),
                        None => Stmt::no_op(),
                    };
                }
                let t = self.with_condition(&c, true, |sm| sm.mutate_stmt(then_case));
                let e = else_case
                    .as_ref()
                    .map(|e| self.with_condition(&c, false, |sm| sm.mutate_stmt(e)));
                let e = e.filter(|e| !e.is_no_op());
                if t.is_no_op() && e.is_none() {
                    // A condition that acts (an async consumer's wait for
                    // its producer) still runs.
                    return if crate::ir::visit::has_side_effects(&c) {
                        Stmt::evaluate(c)
                    } else {
                        Stmt::no_op()
                    };
                }
                if t.is_no_op() {
                    let nc = self.mk_not(c);
                    return Stmt::if_then_else(nc, e.unwrap(), None);
                }
                let else_same = match (&e, else_case) {
                    (Some(a), Some(b)) => a.same_as(b),
                    (None, None) => true,
                    _ => false,
                };
                if c.same_as(condition) && t.same_as(then_case) && else_same {
                    s.clone()
                } else {
                    Stmt::if_then_else(c, t, e)
                }
            }
            StmtNode::Evaluate(e) => {
                let n = self.mutate(e);
                if n.same_as(e) {
                    s.clone()
                } else {
                    Stmt::evaluate(n)
                }
            }
            StmtNode::Atomic {
                producer_name,
                mutex_name,
                body,
            } => {
                let b = self.mutate_stmt(body);
                if b.is_no_op() {
                    return b;
                }
                if b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::atomic(producer_name.clone(), mutex_name.clone(), b)
                }
            }
            StmtNode::Provide { .. } | StmtNode::Free { .. } => {
                crate::ir::visit::mutate_stmt_children(&mut super::MutateAdapter(self), s)
            }
        }
    }

    fn let_stmt_with(&mut self, s: &Stmt, name: &str, v: Expr, body: &Stmt) -> Stmt {
        let (b, used) = self.with_binding(name, &v, |sm| sm.mutate_stmt(body));
        if !used || !super::let_::stmt_uses(&b, name) {
            return unused_let(v, b);
        }
        match s.node() {
            StmtNode::LetStmt {
                value, body: ob, ..
            } if value.same_as(&v) && ob.same_as(&b) => s.clone(),
            _ => Stmt::let_stmt(name, v, b),
        }
    }

    fn let_stmt_with_new(&mut self, name: &str, v: Expr, body: &Stmt) -> Stmt {
        let (b, used) = self.with_binding(name, &v, |sm| sm.mutate_stmt(body));
        if !used || !super::let_::stmt_uses(&b, name) {
            return unused_let(v, b);
        }
        Stmt::let_stmt(name, v, b)
    }

    /// Run `f` knowing that `cond` is `truth`: simple comparisons of a
    /// variable against a constant-bounded expression tighten the
    /// variable's bounds (conjunctions when true, disjunctions when false).
    fn with_condition<T>(
        &mut self,
        cond: &Expr,
        truth: bool,
        f: impl FnOnce(&mut Simplifier) -> T,
    ) -> T {
        let mut facts: Vec<(String, Info)> = vec![];
        self.learn(cond, truth, &mut facts);
        for (n, i) in &facts {
            self.push_var(n, VarFact::Info(*i));
        }
        let r = f(self);
        for (n, _) in facts.iter().rev() {
            self.pop_var(n);
        }
        r
    }

    fn learn(&mut self, c: &Expr, truth: bool, out: &mut Vec<(String, Info)>) {
        let strip = |e: &Expr| -> Expr {
            match e.as_intrinsic(crate::ir::Intrinsic::Likely) {
                Some(args) => args[0].clone(),
                None => e.clone(),
            }
        };
        let c = strip(c);
        match c.node() {
            ExprNode::Binary {
                op: BinOp::And,
                a,
                b,
            } if truth => {
                self.learn(a, true, out);
                self.learn(b, true, out);
            }
            ExprNode::Binary {
                op: BinOp::Or,
                a,
                b,
            } if !truth => {
                self.learn(a, false, out);
                self.learn(b, false, out);
            }
            ExprNode::Not(a) => self.learn(a, !truth, out),
            ExprNode::Binary { op, a, b }
                if op.is_comparison() && (a.ty().is_int() || a.ty().is_uint()) =>
            {
                // normalize to `a OP b` holding
                let (op, a, b) = if truth {
                    (*op, a, b)
                } else {
                    (negate(*op), a, b)
                };
                let mut add =
                    |sm: &mut Simplifier, var: &Expr, lo: Option<i64>, hi: Option<i64>| {
                        if let Some(name) = var.as_variable() {
                            if matches!(sm.var_fact(name), Some(VarFact::Replace(_))) {
                                return;
                            }
                            let cur = sm.info(var);
                            let ty: Type = var.ty();
                            let n = Info::intersect(ty, &cur, &Info::bounds(lo, hi));
                            out.push((name.to_string(), n));
                        }
                    };
                let ia = self.info(a);
                let ib = self.info(b);
                match op {
                    BinOp::LT => {
                        add(self, a, None, ib.max.and_then(|v| v.checked_sub(1)));
                        add(self, b, ia.min.and_then(|v| v.checked_add(1)), None);
                    }
                    BinOp::LE => {
                        add(self, a, None, ib.max);
                        add(self, b, ia.min, None);
                    }
                    BinOp::GT => {
                        add(self, a, ib.min.and_then(|v| v.checked_add(1)), None);
                        add(self, b, None, ia.max.and_then(|v| v.checked_sub(1)));
                    }
                    BinOp::GE => {
                        add(self, a, ib.min, None);
                        add(self, b, None, ia.max);
                    }
                    BinOp::EQ => {
                        add(self, a, ib.min, ib.max);
                        add(self, b, ia.min, ia.max);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
}

fn negate(op: BinOp) -> BinOp {
    match op {
        BinOp::LT => BinOp::GE,
        BinOp::LE => BinOp::GT,
        BinOp::GT => BinOp::LE,
        BinOp::GE => BinOp::LT,
        BinOp::EQ => BinOp::NE,
        BinOp::NE => BinOp::EQ,
        o => o,
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify_stmt;
    use crate::analysis::simplify::test_util::{i, x};
    use crate::ir::{Expr, ForType, Stmt};

    fn store(v: Expr, idx: Expr) -> Stmt {
        Stmt::store("buf", v, idx, Expr::bool_const(true))
    }

    #[test]
    fn for_loops() {
        let body = store(x(), x());
        let s = Stmt::for_loop("x", i(0), i(0), ForType::Serial, body.clone());
        assert!(simplify_stmt(&s).is_no_op());
        let s = Stmt::for_loop("x", i(5), i(1), ForType::Serial, body.clone());
        assert_eq!(simplify_stmt(&s).to_string(), "buf[5] = 5\n");
        // loop variable bounds are facts
        let cond = Expr::lt(x(), i(10));
        let inner = Stmt::if_then_else(cond, body.clone(), Some(store(i(0), i(0))));
        let s = Stmt::for_loop("x", i(0), i(10), ForType::Serial, inner);
        assert_eq!(
            simplify_stmt(&s).to_string(),
            "for (x, 0, 10) {\n  buf[x] = x\n}\n"
        );
        let m = Expr::min(x(), i(20));
        let s = Stmt::for_loop("x", i(0), i(10), ForType::Serial, store(m, x()));
        assert_eq!(
            simplify_stmt(&s).to_string(),
            "for (x, 0, 10) {\n  buf[x] = x\n}\n"
        );
    }

    #[test]
    fn at_most_one_iteration_becomes_an_if() {
        // A slid producer's region per iteration: max = a + 15,
        // min = select(c, max(a, b), a), so max - min + 1 <= 16 although
        // neither end is bounded; its vector loop runs at most once.
        let (a, b) = (Expr::var_i32("a"), Expr::var_i32("b"));
        let c = Expr::lt(i(0), Expr::var_i32("v"));
        let (lo, hi) = (Expr::var_i32("lo"), Expr::var_i32("hi"));
        let ext = Expr::var_i32("ext");
        let n = Expr::div(Expr::add(ext.clone(), i(15)), i(16));
        let body = Stmt::for_loop(
            "x",
            i(0),
            n,
            ForType::Serial,
            store(x(), Expr::add(lo.clone(), x())),
        );
        let s = Stmt::let_stmt(
            "hi",
            Expr::add(a.clone(), i(15)),
            Stmt::let_stmt(
                "lo",
                Expr::select(c, Expr::max(a.clone(), b), a),
                Stmt::let_stmt("ext", Expr::add(Expr::sub(hi, lo), i(1)), body),
            ),
        );
        let out = simplify_stmt(&s).to_string();
        assert!(!out.contains("for ("), "{out}");
        assert!(
            out.contains("if ((0 < ((ext + 15) / 16)))") || out.contains("if ("),
            "{out}"
        );
        assert!(out.contains("buf[lo] = 0"), "{out}");
    }

    #[test]
    fn a_vector_loops_shifted_tail_becomes_an_if() {
        // Loop partitioning's epilogue of a vectorized loop over `len`
        // (ShiftInwards): from max(len / 16, 0) to (len + 15) / 16, at
        // most one iteration for every len, negative ones included.
        let len = Expr::var_i32("len");
        let (end, start) = (Expr::var_i32("end"), Expr::var_i32("start"));
        let body = Stmt::for_loop(
            "x",
            start.clone(),
            Expr::sub(end, start),
            ForType::Serial,
            store(x(), i(0)),
        );
        let s = Stmt::let_stmt(
            "end",
            Expr::div(Expr::add(len.clone(), i(15)), i(16)),
            Stmt::let_stmt("start", Expr::max(Expr::div(len, i(16)), i(0)), body),
        );
        let out = simplify_stmt(&s).to_string();
        assert!(!out.contains("for ("), "{out}");
        assert!(out.contains("if ((start < end))"), "{out}");
        assert!(out.contains("buf[0] = start"), "{out}");
        // A start not clamped that way can leave two iterations.
        let body = Stmt::for_loop(
            "x",
            Expr::var_i32("start"),
            Expr::sub(Expr::var_i32("end"), Expr::var_i32("start")),
            ForType::Serial,
            store(x(), i(0)),
        );
        let len = Expr::var_i32("len");
        let s = Stmt::let_stmt(
            "end",
            Expr::div(Expr::add(len.clone(), i(31)), i(16)),
            Stmt::let_stmt("start", Expr::max(Expr::div(len, i(16)), i(0)), body),
        );
        assert!(simplify_stmt(&s).to_string().contains("for ("));
    }

    #[test]
    fn an_if_whose_branches_vanish_keeps_a_condition_that_acts() {
        // An async consumer's wait for its producer, around statements
        // the loop's bounds prove never run: the wait still happens.
        let wait = Expr::call(
            crate::ir::Type::i32(),
            "ferrohalide_semaphore_acquire",
            vec![x(), i(1)],
            crate::ir::CallKind::Extern,
        );
        let never = Stmt::if_then_else(Expr::lt(i(1), i(0)), store(i(1), i(0)), None);
        let s = Stmt::if_then_else(Expr::eq(wait, i(0)), never.clone(), None);
        assert_eq!(
            simplify_stmt(&s).to_string(),
            "(ferrohalide_semaphore_acquire(x, 1) == 0)\n"
        );
        // A pure condition goes with its branches.
        let s = Stmt::if_then_else(Expr::eq(x(), i(0)), never, None);
        assert!(simplify_stmt(&s).is_no_op());
    }

    #[test]
    fn lets_ifs_blocks() {
        let t = Expr::var_i32("t");
        let s = Stmt::let_stmt("t", i(4), store(Expr::add(t.clone(), i(1)), i(0)));
        assert_eq!(simplify_stmt(&s).to_string(), "buf[0] = 5\n");
        let s = Stmt::let_stmt("t", Expr::mul(x(), x()), store(i(1), i(0)));
        assert_eq!(simplify_stmt(&s).to_string(), "buf[0] = 1\n");
        let s = Stmt::if_then_else(
            Expr::lt(i(1), i(2)),
            store(i(1), i(0)),
            Some(store(i(2), i(0))),
        );
        assert_eq!(simplify_stmt(&s).to_string(), "buf[0] = 1\n");
        let s = Stmt::block(vec![
            store(i(1), i(0)),
            Stmt::assert(Expr::bool_const(true), i(0)),
        ]);
        assert_eq!(simplify_stmt(&s).to_string(), "buf[0] = 1\n");
        // facts learned from a condition
        let s = Stmt::if_then_else(
            Expr::lt(x(), i(5)),
            store(Expr::min(x(), i(8)), i(0)),
            Some(store(Expr::max(x(), i(2)), i(0))),
        );
        assert_eq!(
            simplify_stmt(&s).to_string(),
            "if ((x < 5)) {\n  buf[0] = x\n} else {\n  buf[0] = x\n}\n"
        );
        // a loop variable the condition pins to one value becomes it
        let inner = Stmt::if_then_else(Expr::le(x(), i(0)), store(x(), i(0)), None);
        let s = Stmt::for_loop("x", i(0), i(2), ForType::Vectorized, inner);
        assert_eq!(
            simplify_stmt(&s).to_string(),
            "vectorized (x, 0, 2) {\n  if ((x <= 0)) {\n    buf[0] = 0\n  }\n}\n"
        );
    }
}
