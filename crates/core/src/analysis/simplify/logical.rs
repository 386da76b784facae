//! And, Or, Not: folding, absorption, contradictions, merging of range
//! tests against constants, and pushing Not into comparisons.

use std::sync::OnceLock;

use super::pattern::*;
use super::Simplifier;
use crate::ir::{equal, BinOp, Expr, ExprNode};

fn and_rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W { x, y, c0, c1, .. } = wilds();
        vec![
            rule(and(x, 1), x),
            rule(and(x, 0), 0),
            rule(and(x, not(x)), 0),
            rule(and(not(x), x), 0),
            rule(and(and(x, y), x), and(x, y)),
            rule(and(and(x, y), y), and(x, y)),
            rule(and(x, and(x, y)), and(x, y)),
            rule(and(x, and(y, x)), and(y, x)),
            rule(and(or(x, y), x), x),
            rule(and(or(y, x), x), x),
            rule(and(x, or(x, y)), x),
            rule(and(x, or(y, x)), x),
            rule(and(lt(x, c0), lt(x, c1)), lt(x, min(c0, c1))),
            rule(and(lt(c0, x), lt(c1, x)), lt(max(c0, c1), x)),
            rule(and(le(x, c0), le(x, c1)), le(x, min(c0, c1))),
            rule(and(le(c0, x), le(c1, x)), le(max(c0, c1), x)),
            rule_if(and(eq(x, c0), eq(x, c1)), 0, c0.ne(c1)),
            rule_if(and(lt(x, c0), lt(c1, x)), 0, c0.le(c1)),
            rule_if(and(lt(c1, x), lt(x, c0)), 0, c0.le(c1)),
            rule(and(lt(x, y), lt(y, x)), 0),
            rule(and(le(x, y), lt(y, x)), 0),
            rule(and(lt(x, y), le(y, x)), 0),
        ]
    }))
}

fn or_rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W { x, y, c0, c1, .. } = wilds();
        vec![
            rule(or(x, 0), x),
            rule(or(x, 1), 1),
            rule(or(x, not(x)), 1),
            rule(or(not(x), x), 1),
            rule(or(or(x, y), x), or(x, y)),
            rule(or(or(x, y), y), or(x, y)),
            rule(or(x, or(x, y)), or(x, y)),
            rule(or(x, or(y, x)), or(y, x)),
            rule(or(and(x, y), x), x),
            rule(or(and(y, x), x), x),
            rule(or(x, and(x, y)), x),
            rule(or(x, and(y, x)), x),
            rule(or(lt(x, c0), lt(x, c1)), lt(x, max(c0, c1))),
            rule(or(lt(c0, x), lt(c1, x)), lt(min(c0, c1), x)),
            rule(or(le(x, c0), le(x, c1)), le(x, max(c0, c1))),
            rule(or(le(c0, x), le(c1, x)), le(min(c0, c1), x)),
            rule(or(lt(x, y), le(y, x)), 1),
            rule(or(le(x, y), lt(y, x)), 1),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn simplify_logical(
        &mut self,
        op: BinOp,
        node: &Expr,
        a: &Expr,
        b: &Expr,
    ) -> Option<Expr> {
        if equal(a, b) {
            return Some(a.clone());
        }
        if a.is_const() && !b.is_const() {
            return Some(self.mk_bin(op, b.clone(), a.clone()));
        }
        self.rewrite(
            node,
            if op == BinOp::And {
                and_rules()
            } else {
                or_rules()
            },
        )
    }

    pub(crate) fn not_node(&mut self, a: Expr, orig: Option<&Expr>) -> Expr {
        if let Some(c) = super::fold::const_of(&a) {
            let v = match c {
                super::fold::C::U(v) => v == 0,
                super::fold::C::I(v) => v == 0,
                super::fold::C::F(v) => v == 0.0,
            };
            return Expr::make_const_i64(a.ty(), v as i64);
        }
        match a.node() {
            ExprNode::Not(x) => return x.clone(),
            ExprNode::Broadcast { value, lanes } => {
                let inner = self.mk_not(value.clone());
                return Expr::broadcast(inner, *lanes);
            }
            ExprNode::Binary { op, a: x, b: y } => {
                let int_operands = !x.ty().is_float();
                // Built raw: the operands are already simplified, and going
                // through mk_bin would bounce between <= and !<.
                let flipped = match op {
                    BinOp::LT if int_operands => Some(Expr::le(y.clone(), x.clone())),
                    BinOp::LE if int_operands => Some(Expr::lt(y.clone(), x.clone())),
                    BinOp::EQ => Some(Expr::ne(x.clone(), y.clone())),
                    BinOp::NE => Some(Expr::eq(x.clone(), y.clone())),
                    _ => None,
                };
                if let Some(f) = flipped {
                    return f;
                }
            }
            ExprNode::Select { cond, t, f } if t.is_const() && f.is_const() => {
                let nt = self.mk_not(t.clone());
                let nf = self.mk_not(f.clone());
                return self.mk_select(cond.clone(), nt, nf);
            }
            _ => {}
        }
        match orig {
            Some(o) => o.clone(),
            None => Expr::not(a),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x};
    use crate::ir::{Expr, Type};

    #[test]
    fn logical_rules() {
        let b = Expr::var(Type::bool(), "b");
        let c = Expr::var(Type::bool(), "c");
        assert_eq!(s(Expr::and(b.clone(), Expr::bool_const(true))), "b");
        assert!(simplify(&Expr::and(b.clone(), Expr::bool_const(false))).is_false());
        assert!(simplify(&Expr::or(Expr::bool_const(true), b.clone())).is_true());
        assert!(simplify(&Expr::and(b.clone(), Expr::not(b.clone()))).is_false());
        assert_eq!(s(Expr::not(Expr::not(b.clone()))), "b");
        assert_eq!(s(Expr::and(Expr::or(b.clone(), c.clone()), b.clone())), "b");
        assert_eq!(s(Expr::not(Expr::lt(x(), i(3)))), "(3 <= x)");
        assert_eq!(
            s(Expr::and(Expr::lt(x(), i(3)), Expr::lt(x(), i(5)))),
            "(x < 3)"
        );
        assert_eq!(
            s(Expr::or(Expr::lt(x(), i(3)), Expr::lt(x(), i(5)))),
            "(x < 5)"
        );
        assert!(simplify(&Expr::and(Expr::eq(x(), i(3)), Expr::eq(x(), i(5)))).is_false());
        assert!(simplify(&Expr::and(Expr::lt(x(), i(3)), Expr::lt(i(5), x()))).is_false());
        // float: !(a < b) is not (b <= a) because of NaN
        let f = Expr::var(Type::float(32), "f");
        assert_eq!(
            s(Expr::not(Expr::lt(f.clone(), Expr::f32(1.0)))),
            "!(f < 1.0f)"
        );
    }
}
