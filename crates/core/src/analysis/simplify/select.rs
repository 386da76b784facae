//! Select: constant and identical branches, negated conditions, nested
//! selects on the same condition, min/max recognition, hoisting common
//! terms out of the branches.

use std::sync::OnceLock;

use super::pattern::*;
use super::Simplifier;
use crate::ir::{equal, Expr, ExprNode};

fn rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W { x, y, z, w, .. } = wilds();
        let int = is_int_p;
        vec![
            rule(select(x, select(x, y, z), w), select(x, y, w)),
            rule(select(x, y, select(x, z, w)), select(x, y, w)),
            rule(select(x, select(y, z, w), w), select(and(x, y), z, w)),
            rule(select(x, y, select(z, y, w)), select(or(x, z), y, w)),
            rule_if(select(lt(x, y), x, y), min(x, y), int()),
            rule_if(select(lt(x, y), y, x), max(x, y), int()),
            rule_if(select(le(x, y), x, y), min(x, y), int()),
            rule_if(select(le(x, y), y, x), max(x, y), int()),
            rule_if(select(x, y + z, y + w), y + select(x, z, w), int()),
            rule_if(select(x, z + y, w + y), select(x, z, w) + y, int()),
            rule_if(select(x, y - z, y - w), y - select(x, z, w), int()),
            rule_if(select(x, y * z, y * w), y * select(x, z, w), int()),
            rule_if(select(x, z * y, w * y), select(x, z, w) * y, int()),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn select_node(&mut self, c: Expr, t: Expr, f: Expr, orig: Option<&Expr>) -> Expr {
        if c.is_const() {
            return if c.is_zero() { f } else { t };
        }
        if equal(&t, &f) {
            return t;
        }
        if let ExprNode::Not(inner) = c.node() {
            return self.mk_select(inner.clone(), f, t);
        }
        let ty = t.ty();
        if ty.is_bool() && c.ty() == ty {
            if t.is_const_value(1) && f.is_const_value(0) {
                return c;
            }
            if t.is_const_value(0) && f.is_const_value(1) {
                return self.mk_not(c);
            }
            if t.is_const_value(1) {
                return self.mk_bin(crate::ir::BinOp::Or, c, f);
            }
            if f.is_const_value(0) {
                return self.mk_bin(crate::ir::BinOp::And, c, t);
            }
        }
        if let (
            ExprNode::Broadcast { value: vc, lanes },
            ExprNode::Broadcast { value: vt, .. },
            ExprNode::Broadcast { value: vf, .. },
        ) = (c.node(), t.node(), f.node())
        {
            if vc.lanes() == 1 && vt.lanes() == vf.lanes() && vt.lanes() == 1 {
                let inner = self.mk_select(vc.clone(), vt.clone(), vf.clone());
                return Expr::broadcast(inner, *lanes);
            }
        }
        let node = match orig {
            Some(o) => o.clone(),
            None => Expr::select(c, t, f),
        };
        if self.depth > super::MAX_DEPTH {
            return node;
        }
        self.depth += 1;
        let r = self.rewrite(&node, rules());
        self.depth -= 1;
        match r {
            Some(x) => x,
            None => self.finish(node),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x, y};
    use crate::ir::{Expr, Type};

    #[test]
    fn select_rules() {
        let b = Expr::var(Type::bool(), "b");
        assert_eq!(s(Expr::select(Expr::bool_const(true), x(), y())), "x");
        assert_eq!(s(Expr::select(b.clone(), x(), x())), "x");
        assert_eq!(
            s(Expr::select(Expr::not(b.clone()), x(), y())),
            "select(b, y, x)"
        );
        assert_eq!(s(Expr::select(Expr::lt(x(), y()), x(), y())), "min(x, y)");
        assert_eq!(s(Expr::select(Expr::lt(x(), i(3)), i(3), x())), "max(x, 3)");
        assert_eq!(
            s(Expr::select(
                b.clone(),
                Expr::add(x(), i(1)),
                Expr::add(x(), i(2))
            )),
            "(x + select(b, 1, 2))"
        );
        assert_eq!(
            s(Expr::select(
                b.clone(),
                Expr::bool_const(true),
                Expr::bool_const(false)
            )),
            "b"
        );
        assert_eq!(s(Expr::select(Expr::lt(i(1), i(2)), x(), y())), "x");
        // select of constants with known sign folds through comparisons
        let e = Expr::lt(Expr::select(b, i(1), i(2)), i(5));
        assert!(simplify(&e).is_true());
    }
}
