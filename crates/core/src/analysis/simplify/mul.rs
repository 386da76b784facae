//! Multiplication: folding, identities, constants outward, distribution of
//! constants over additions (valid modulo 2^bits).

use std::sync::OnceLock;

use super::pattern::*;
use super::Simplifier;
use crate::ir::{BinOp, Expr};

fn rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W {
            x, y, c0, c1, c2, ..
        } = wilds();
        vec![
            rule(x * 0, 0),
            rule(x * 1, x),
            rule_if(x * c0, 0 - x, c0.eq(-1) & is_int_p()),
            rule((x * c0) * c1, x * (c0 * c1)),
            rule((x + c0) * c1, x * c1 + c0 * c1),
            rule_if((c0 - x) * c1, x * (0 - c1) + c0 * c1, is_int_p()),
            rule((0 - x) * (0 - y), x * y),
            rule((x * c0) * y, (x * y) * c0),
            rule(x * (y * c0), (x * y) * c0),
            rule(select(x, c0, c1) * c2, select(x, c0 * c2, c1 * c2)),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn simplify_mul(&mut self, node: &Expr, a: &Expr, b: &Expr) -> Option<Expr> {
        if a.is_const() && !b.is_const() {
            return Some(self.mk_bin(BinOp::Mul, b.clone(), a.clone()));
        }
        if node.ty().is_float() {
            // x * 1 == x exactly. Halide also rewrites x * 0 to 0 for floats
            // (even when x is inf or NaN), so do the same.
            if b.is_one() {
                return Some(a.clone());
            }
            if b.is_zero() {
                return Some(b.clone());
            }
            return None;
        }
        self.rewrite(node, rules())
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x};
    use crate::ir::{Expr, Type};

    #[test]
    fn mul_rules() {
        assert_eq!(s(Expr::mul(x(), i(0))), "0");
        assert_eq!(s(Expr::mul(i(1), x())), "x");
        assert_eq!(s(Expr::mul(Expr::mul(x(), i(3)), i(4))), "(x * 12)");
        assert_eq!(s(Expr::mul(Expr::add(x(), i(3)), i(4))), "((x * 4) + 12)");
        assert_eq!(s(Expr::mul(i(3), i(4))), "12");
        let f = Expr::var(Type::float(32), "f");
        // Halide rewrites float x * 0 to 0 (checked against halide 21).
        assert!(simplify(&Expr::mul(f.clone(), Expr::f32(0.0))).is_zero());
        assert_eq!(s(Expr::mul(f, Expr::f32(1.0))), "f");
    }
}
