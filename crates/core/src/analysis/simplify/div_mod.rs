//! Division and modulo (Euclidean, x/0 == 0, x%0 == 0). Rules that move
//! terms across a division need exact integer arithmetic, so they are
//! limited to non-overflowing types; alignment facts fold things like
//! (x*4 + 2) % 4 for every type.

use std::sync::OnceLock;

use super::pattern::*;
use super::Simplifier;
use crate::ir::{equal, BinOp, Expr};

fn div_rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W { x, y, z, c0, c1, .. } = wilds();
        let nov = no_overflow_p;
        vec![
            rule(x / 1, x),
            rule(x / 0, 0),
            rule(0 / x, 0),
            rule_if(
                (x * c0) / c1,
                x * (c0 / c1),
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (x * c0) / c1,
                x / (c1 / c0),
                nov() & c0.gt(0) & c1.gt(0) & (c1 % c0).eq(0),
            ),
            rule_if(
                (x * c0 + y) / c1,
                x * (c0 / c1) + y / c1,
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (y + x * c0) / c1,
                y / c1 + x * (c0 / c1),
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            // The same with a third term (a split loop's `16 xo + min`
            // plus the inner extent, read at `x / 2`): the multiple comes
            // out, so `(16 xo + m + 15) / 2 - (16 xo + m) / 2` cancels to a
            // bounded `(m % 2 + 15) / 2` (a register allocation's size).
            rule_if(
                ((x * c0 + y) + z) / c1,
                x * (c0 / c1) + (y + z) / c1,
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                ((y + x * c0) + z) / c1,
                x * (c0 / c1) + (y + z) / c1,
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (x * c0 - y) / c1,
                x * (c0 / c1) + (0 - y) / c1,
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (y - x * c0) / c1,
                y / c1 - x * (c0 / c1),
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            // Euclidean division: (x + k*c1) / c1 == x / c1 + k for any
            // nonzero c1 (both signs).
            rule_if(
                (x + c0) / c1,
                x / c1 + c0 / c1,
                nov() & c1.ne(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (x - c0) / c1,
                x / c1 - c0 / c1,
                nov() & c1.ne(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (c0 - x) / c1,
                c0 / c1 + (0 - x) / c1,
                nov() & c1.ne(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (x / c0) / c1,
                x / (c0 * c1),
                nov() & c0.gt(0) & c1.gt(0) & ((c0 * c1) / c1).eq(c0),
            ),
        ]
    }))
}

fn mod_rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W { x, y, c0, c1, .. } = wilds();
        let nov = no_overflow_p;
        vec![
            rule(x % 1, 0),
            rule(x % 0, 0),
            rule(0 % x, 0),
            rule_if(
                (x * c0 + y) % c1,
                y % c1,
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (y + x * c0) % c1,
                y % c1,
                nov() & c1.gt(0) & (c0 % c1).eq(0),
            ),
            rule_if(
                (x + c0) % c1,
                (x + c0 % c1) % c1,
                nov() & c1.gt(0) & (c0.ge(c1) | c0.lt(0)),
            ),
            rule_if(
                (x * c0) % c1,
                (x * (c0 % c1)) % c1,
                nov() & c1.gt(0) & (c0.ge(c1) | c0.lt(0)),
            ),
            rule_if(
                (x * c0) % c1,
                (x % (c1 / c0)) * c0,
                nov() & c0.gt(0) & c1.gt(0) & (c1 % c0).eq(0),
            ),
            rule_if((x % c0) % c1, x % c1, c0.ne(0) & c1.gt(0) & (c0 % c1).eq(0)),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn simplify_div(&mut self, node: &Expr, a: &Expr, b: &Expr) -> Option<Expr> {
        let ty = node.ty();
        if ty.is_float() {
            if b.is_one() {
                return Some(a.clone());
            }
            // As Halide: division by a float constant is a multiply by its
            // reciprocal (rounded in the type's precision).
            if b.as_float_const().is_some()
                || matches!(super::fold::const_of(b), Some(super::fold::C::F(_)))
            {
                let one = super::fold::make(b.ty(), super::fold::C::F(1.0));
                if let Some(r) = super::fold::fold_bin(BinOp::Div, &one, b) {
                    return Some(self.mk_bin(BinOp::Mul, a.clone(), r));
                }
            }
            return None;
        }
        if equal(a, b) {
            // x / x is 1, except 0 / 0 == 0.
            let ia = self.info(a);
            if ia.is_pos() || ia.is_neg() {
                return Some(Expr::one(ty));
            }
        }
        self.rewrite(node, div_rules())
    }

    pub(crate) fn simplify_mod(&mut self, node: &Expr, a: &Expr, b: &Expr) -> Option<Expr> {
        let ty = node.ty();
        if ty.is_float() {
            return None;
        }
        if equal(a, b) {
            return Some(Expr::zero(ty));
        }
        // If 0 <= a < |b| then a % b == a.
        let (ia, ib) = (self.info(a), self.info(b));
        if ia.is_nonneg() {
            if let Some(amax) = ia.max {
                let bmin_abs = match (ib.min, ib.max) {
                    (Some(lo), _) if lo > 0 => Some(lo),
                    (_, Some(hi)) if hi < 0 => hi.checked_neg(),
                    _ => None,
                };
                if bmin_abs.is_some_and(|m| amax < m) {
                    return Some(a.clone());
                }
            }
        }
        self.rewrite(node, mod_rules())
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x, y};
    use crate::ir::{Expr, Type};

    #[test]
    fn div_rules() {
        assert_eq!(s(Expr::div(x(), i(1))), "x");
        assert_eq!(s(Expr::div(x(), i(0))), "0");
        assert_eq!(s(Expr::div(i(-7), i(2))), "-4");
        assert_eq!(s(Expr::div(i(7), i(-2))), "-3");
        assert_eq!(
            s(Expr::div(Expr::add(Expr::mul(x(), i(8)), y()), i(8))),
            "(x + (y / 8))"
        );
        assert_eq!(s(Expr::div(Expr::mul(x(), i(8)), i(4))), "(x * 2)");
        assert_eq!(s(Expr::div(Expr::mul(x(), i(4)), i(8))), "(x / 2)");
        assert_eq!(s(Expr::div(Expr::add(x(), i(16)), i(8))), "((x / 8) + 2)");
        assert_eq!(s(Expr::div(Expr::div(x(), i(4)), i(2))), "(x / 8)");
        assert_eq!(s(Expr::div(Expr::add(x(), i(-16)), i(8))), "((x / 8) + -2)");
        assert_eq!(
            s(Expr::div(Expr::add(x(), i(16)), i(-8))),
            "((x / -8) + -2)"
        );
        assert_eq!(s(Expr::div(Expr::add(x(), i(3)), i(8))), "((x + 3) / 8)");
        assert_eq!(s(Expr::div(Expr::add(x(), i(8)), i(0))), "0");
        assert_eq!(
            s(Expr::div(Expr::add(Expr::mul(x(), i(4)), i(2)), i(4))),
            "x"
        );
        // not sound with wrap-around: left alone for uint8
        let u = Type::uint(8);
        let ux = Expr::var(u, "ux");
        let e = Expr::div(
            Expr::add(Expr::mul(ux, Expr::uint_imm(u, 8)), Expr::uint_imm(u, 16)),
            Expr::uint_imm(u, 8),
        );
        assert_eq!(s(e), "(((ux * (uint8)8) + (uint8)16) / (uint8)8)");
    }

    #[test]
    fn a_multiple_of_the_divisor_comes_out_of_a_three_term_numerator() {
        let z = Expr::var_i32("z");
        let split_end = Expr::add(Expr::add(Expr::mul(x(), i(16)), y()), i(15));
        assert_eq!(s(Expr::div(split_end.clone(), i(2))), "((x * 8) + ((y + 15) / 2))");
        let other_order = Expr::add(Expr::add(y(), Expr::mul(x(), i(16))), z.clone());
        assert_eq!(s(Expr::div(other_order, i(4))), "((x * 4) + ((y + z) / 4))");
        // The extent of a region read at x / 2 over a split loop's 16
        // iterations is bounded by a constant.
        let split_start = Expr::add(Expr::mul(x(), i(16)), y());
        let extent = Expr::sub(Expr::div(split_end, i(2)), Expr::div(split_start, i(2)));
        assert_eq!(s(extent), "(((y % 2) + 15) / 2)");
        // Not when the divisor does not divide the multiple.
        let odd = Expr::add(Expr::add(Expr::mul(x(), i(3)), y()), z);
        assert_eq!(s(Expr::div(odd, i(2))), "((((x * 3) + y) + z) / 2)");
    }

    #[test]
    fn mod_rules() {
        assert_eq!(s(Expr::modulo(x(), i(1))), "0");
        assert_eq!(s(Expr::modulo(i(-7), i(3))), "2");
        assert_eq!(s(Expr::modulo(i(-7), i(-3))), "2");
        assert_eq!(
            s(Expr::modulo(Expr::add(Expr::mul(x(), i(4)), i(2)), i(4))),
            "2"
        );
        assert_eq!(
            s(Expr::modulo(Expr::add(Expr::mul(x(), i(8)), y()), i(4))),
            "(y % 4)"
        );
        assert_eq!(s(Expr::modulo(Expr::add(x(), i(9)), i(4))), "((x + 1) % 4)");
        assert_eq!(s(Expr::modulo(Expr::modulo(x(), i(8)), i(4))), "(x % 4)");
        assert_eq!(s(Expr::modulo(Expr::mul(x(), i(4)), i(8))), "((x % 2) * 4)");
        // alignment survives wrap for powers of two
        let u = Type::uint(8);
        let ux = Expr::var(u, "ux");
        let e = Expr::modulo(
            Expr::add(Expr::mul(ux, Expr::uint_imm(u, 4)), Expr::uint_imm(u, 3)),
            Expr::uint_imm(u, 4),
        );
        assert!(simplify(&e).is_const_value(3));
    }
}
