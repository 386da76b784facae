//! Let expressions: values that are cheap to duplicate (constants,
//! variables, var +/- * const, broadcasts and ramps of those) are
//! substituted into the body; other values are kept with their facts in
//! scope, and lets whose variable ends up unused are dropped.

use crate::fast_hash::FastSet as HashSet;

use super::{expr_id, Simplifier, VarFact};
use crate::ir::{BinOp, Expr, ExprNode, Stmt, Visitor};

/// Does a variable named `name` occur? Shared subtrees are visited once;
/// an unshared node is reached only through its one parent, so it needs no
/// entry in `seen` (most nodes are unshared, and the set was most of the
/// walk's cost).
struct UsesVar<'a> {
    name: &'a str,
    seen: HashSet<usize>,
    found: bool,
}

impl Visitor for UsesVar<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if self.found {
            return;
        }
        match e.node() {
            ExprNode::Variable { name, .. } => {
                if name == self.name {
                    self.found = true;
                }
            }
            ExprNode::IntImm(_)
            | ExprNode::UIntImm(_)
            | ExprNode::FloatImm(_)
            | ExprNode::StringImm(_) => {}
            _ => {
                if !e.is_shared() || self.seen.insert(expr_id(e)) {
                    crate::ir::visit::walk_expr(self, e);
                }
            }
        }
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        if !self.found {
            crate::ir::visit::walk_stmt(self, s);
        }
    }
}

pub(crate) fn expr_uses(e: &Expr, name: &str) -> bool {
    let mut v = UsesVar {
        name,
        seen: HashSet::default(),
        found: false,
    };
    v.visit_expr(e);
    v.found
}

pub(crate) fn stmt_uses(s: &Stmt, name: &str) -> bool {
    let mut v = UsesVar {
        name,
        seen: HashSet::default(),
        found: false,
    };
    v.visit_stmt(s);
    v.found
}

/// Is `v` cheap enough to substitute wherever its variable appears?
pub(crate) fn should_substitute(v: &Expr) -> bool {
    match v.node() {
        ExprNode::IntImm(_)
        | ExprNode::UIntImm(_)
        | ExprNode::FloatImm(_)
        | ExprNode::StringImm(_) => true,
        ExprNode::Variable { .. } => true,
        ExprNode::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul,
            a,
            b,
        } => {
            !v.ty().is_float()
                && ((a.as_variable().is_some() && b.is_const())
                    || (a.is_const() && b.as_variable().is_some()))
        }
        ExprNode::Broadcast { value, .. } => should_substitute(value),
        ExprNode::Ramp { base, stride, .. } => should_substitute(base) && stride.is_const(),
        _ => false,
    }
}

impl Simplifier {
    /// Simplify `body` with `name` bound to the (already simplified) `value`.
    /// Returns the new body and whether `name` is still used in it (when it
    /// was not substituted away).
    pub(crate) fn with_binding<T>(
        &mut self,
        name: &str,
        value: &Expr,
        body: impl FnOnce(&mut Simplifier) -> T,
    ) -> (T, bool) {
        if should_substitute(value) {
            self.push_var(name, VarFact::Replace(value.clone()));
            let r = body(self);
            self.pop_var(name);
            return (r, false);
        }
        let info = self.info(value);
        self.push_var(name, VarFact::Info(info));
        self.set_let_value(name, value.clone());
        let saved = self.uses.insert(name.to_string(), 0);
        let hits = self.memo_hits;
        let r = body(self);
        // A memo hit inside the body may have used the name (its result is
        // not re-walked). The answer is conservative (rewrites may have
        // cancelled uses, and a hit inside an inner binding of the same
        // name counts here too); the caller confirms with `expr_uses`
        // before keeping the binding.
        let used = self.uses.get(name).copied().unwrap_or(0) > 0 || self.memo_hits != hits;
        match saved {
            Some(n) => {
                self.uses.insert(name.to_string(), n);
            }
            None => {
                self.uses.remove(name);
            }
        }
        self.pop_var(name);
        (r, used)
    }

    pub(crate) fn simplify_let(&mut self, e: &Expr, name: &str, value: &Expr, body: &Expr) -> Expr {
        let v = self.mutate(value);
        let (b, used) = self.with_binding(name, &v, |s| s.mutate(body));
        if !used || !expr_uses(&b, name) {
            return b;
        }
        if v.same_as(value) && b.same_as(body) {
            e.clone()
        } else {
            Expr::let_(name, v, b)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x};
    use crate::ir::{Expr, Type};

    #[test]
    fn let_rules() {
        let t = Expr::var_i32("t");
        // constant substituted
        assert_eq!(s(Expr::let_("t", i(3), Expr::add(t.clone(), i(4)))), "7");
        // var + const substituted
        assert_eq!(
            s(Expr::let_(
                "t",
                Expr::add(x(), i(1)),
                Expr::sub(t.clone(), x())
            )),
            "1"
        );
        // unused let removed
        let heavy = Expr::mul(x(), x());
        assert_eq!(s(Expr::let_("t", heavy.clone(), x())), "x");
        // used let kept
        assert_eq!(
            s(Expr::let_(
                "t",
                heavy.clone(),
                Expr::add(t.clone(), t.clone())
            )),
            "(let t = (x * x) in (t * 2))"
        );
        // facts of the value flow into the body
        let u8v = Expr::cast(Type::i32(), Expr::var(Type::uint(8), "p"));
        let body = Expr::lt(Expr::add(t.clone(), Expr::mul(t.clone(), i(2))), i(1000));
        let r = simplify(&Expr::let_("t", u8v, body));
        assert!(r.is_true(), "{r}");
    }
}
