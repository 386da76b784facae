//! Addition: folding, canonical order (constants right), reassociation of
//! constant chains, cancellation against subtraction, distribution.
//! All integer rules here are valid modulo 2^bits, so they hold for wrapping
//! types too.

use std::sync::OnceLock;

use super::pattern::*;
use super::Simplifier;
use crate::ir::{BinOp, Expr};

fn rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W {
            x,
            y,
            z,
            w,
            u,
            c0,
            c1,
            c2,
            ..
        } = wilds();
        vec![
            rule(x + 0, x),
            rule((x + c0) + c1, x + (c0 + c1)),
            rule((x - c0) + c1, x + (c1 - c0)),
            rule((c0 - x) + c1, (c0 + c1) - x),
            rule((x + c0) + (y + c1), (x + y) + (c0 + c1)),
            rule((x + c0) + y, (x + y) + c0),
            rule(x + (y + c0), (x + y) + c0),
            rule((c0 - x) + y, (y - x) + c0),
            rule(x + (c0 - y), (x - y) + c0),
            rule((x - y) + y, x),
            rule(y + (x - y), x),
            rule((x - y) + (y - z), x - z),
            rule((x - y) + (z - x), z - y),
            rule(x + (0 - y), x - y),
            rule((0 - x) + y, y - x),
            rule(x + x, x * 2),
            rule(x * c0 + x * c1, x * (c0 + c1)),
            rule(x * c0 + x, x * (c0 + 1)),
            rule(x + x * c0, x * (c0 + 1)),
            rule(x * y + x * z, x * (y + z)),
            rule(x * y + z * y, (x + z) * y),
            rule(x * y + y * z, y * (x + z)),
            rule(y * x + x * z, x * (y + z)),
            rule_if((x / c0) * c0 + x % c0, x, c0.ne(0)),
            rule_if(x % c0 + (x / c0) * c0, x, c0.ne(0)),
            rule(select(x, y, z) + select(x, w, u), select(x, y + w, z + u)),
            rule(select(x, c0, c1) + c2, select(x, c0 + c2, c1 + c2)),
            // Selects on one condition meet across an add (a slid loop's
            // `min + extent` has one in each).
            rule(
                (z + select(x, y, w)) + select(x, c0, c1),
                z + select(x, y + c0, w + c1),
            ),
            rule(
                (select(x, y, w) + z) + select(x, c0, c1),
                z + select(x, y + c0, w + c1),
            ),
            rule_if(min(x, y - z) + z, min(x + z, y), no_overflow_p()),
            rule_if(max(x, y - z) + z, max(x + z, y), no_overflow_p()),
            rule_if(min(y - z, x) + z, min(y, x + z), no_overflow_p()),
            rule_if(max(y - z, x) + z, max(y, x + z), no_overflow_p()),
            // the same through a constant or one more term: a shifted
            // split's `min(2 yo, (max - min) - 1) + yi + min`, where min
            // taken twice (in the extent and as the base) would otherwise
            // be bounded twice, apart (fuzz seed 51844)
            rule_if(min(x, (y - z) + c0) + z, min(x + z, y + c0), no_overflow_p()),
            rule_if(max(x, (y - z) + c0) + z, max(x + z, y + c0), no_overflow_p()),
            rule_if(min((y - z) + c0, x) + z, min(y + c0, x + z), no_overflow_p()),
            rule_if(max((y - z) + c0, x) + z, max(y + c0, x + z), no_overflow_p()),
            rule_if((min(x, y - z) + w) + z, min(x + z, y) + w, no_overflow_p()),
            rule_if((max(x, y - z) + w) + z, max(x + z, y) + w, no_overflow_p()),
            rule_if((min(y - z, x) + w) + z, min(y, x + z) + w, no_overflow_p()),
            rule_if((max(y - z, x) + w) + z, max(y, x + z) + w, no_overflow_p()),
            rule_if((min(x, (y - z) + c0) + w) + z, min(x + z, y + c0) + w, no_overflow_p()),
            rule_if((max(x, (y - z) + c0) + w) + z, max(x + z, y + c0) + w, no_overflow_p()),
            rule_if((min((y - z) + c0, x) + w) + z, min(y + c0, x + z) + w, no_overflow_p()),
            rule_if((max((y - z) + c0, x) + w) + z, max(y + c0, x + z) + w, no_overflow_p()),
            rule_if(
                min(x + c0, y) + c1,
                min(x, y + c1),
                no_overflow_p() & (c0 + c1).eq(0),
            ),
            rule_if(
                max(x + c0, y) + c1,
                max(x, y + c1),
                no_overflow_p() & (c0 + c1).eq(0),
            ),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn simplify_add(&mut self, node: &Expr, a: &Expr, b: &Expr) -> Option<Expr> {
        // Constants go on the right (exact for floats too: IEEE + commutes).
        if a.is_const() && !b.is_const() {
            return Some(self.mk_bin(BinOp::Add, b.clone(), a.clone()));
        }
        if node.ty().is_float() {
            return None;
        }
        self.rewrite(node, rules())
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x, y};
    use crate::ir::{Expr, Type};

    #[test]
    fn add_rules() {
        assert_eq!(s(Expr::add(Expr::add(x(), i(3)), i(4))), "(x + 7)");
        assert_eq!(s(Expr::add(i(3), x())), "(x + 3)");
        assert_eq!(s(Expr::add(x(), i(0))), "x");
        assert_eq!(s(Expr::add(Expr::add(x(), i(3)), y())), "((x + y) + 3)");
        assert_eq!(s(Expr::add(Expr::sub(x(), y()), y())), "x");
        assert_eq!(s(Expr::add(x(), x())), "(x*2)".replace("*", " * "));
        assert_eq!(
            s(Expr::add(Expr::mul(x(), i(3)), Expr::mul(x(), i(5)))),
            "(x * 8)"
        );
        assert_eq!(
            s(Expr::add(
                Expr::mul(x(), y()),
                Expr::mul(Expr::var_i32("z"), y())
            )),
            "((x + z) * y)"
        );
        assert_eq!(s(Expr::add(i(2), i(3))), "5");
        // wraps in narrow types
        let u8t = Type::uint(8);
        let e = Expr::add(Expr::uint_imm(u8t, 200), Expr::uint_imm(u8t, 100));
        assert!(simplify(&e).is_const_value(44));
    }

    #[test]
    fn selects_on_one_condition_meet() {
        // A slid loop's `min + extent - 1` (min = z + select(c, 1, -1),
        // extent = select(c, 1, 3)) is its max, z + 1.
        let c = Expr::lt(i(0), x());
        let z = Expr::var_i32("z");
        let min = Expr::add(z.clone(), Expr::select(c.clone(), i(1), i(-1)));
        let e = Expr::add(Expr::add(min, Expr::select(c, i(1), i(3))), i(-1));
        assert_eq!(s(e), "(z + 1)");
    }

    #[test]
    fn float_add_not_reassociated() {
        let f = Expr::var(Type::float(32), "f");
        let e = Expr::add(Expr::add(f.clone(), Expr::f32(1.0)), Expr::f32(2.0));
        assert_eq!(s(e), "((f + 1.0f) + 2.0f)");
        let e = Expr::add(f, Expr::f32(0.0));
        assert_eq!(s(e), "(f + 0.0f)");
    }

    /// `op(x, (y - z) + c) + w + z` cancels z (seed 51844: a shifted split's
    /// base `min(2 yo, (max - min) - 1) + yi + min` is then `min(2 yo + min,
    /// max - 1) + yi`), in both operand orders, with and without the
    /// constant and the extra term, and keeps the value.
    #[test]
    fn min_of_a_difference_plus_its_subtrahend_cancels() {
        use crate::analysis::simplify::fuzz_tests::eval;
        use std::collections::HashMap;
        let z = || Expr::var_i32("z");
        let w = || Expr::var_i32("w");
        let yo = || Expr::var_i32("yo");
        let (mn, mx) = (|| Expr::var_i32("mn"), || Expr::var_i32("mx"));
        // the seed's base: the subtrahend is gone from the min
        let base = Expr::add(
            Expr::add(
                Expr::min(Expr::mul(yo(), i(2)), Expr::add(Expr::sub(mx(), mn()), i(-1))),
                w(),
            ),
            mn(),
        );
        assert_eq!(s(base), "(min(((yo * 2) + mn), (mx + -1)) + w)");
        for is_max in [false, true] {
            let op = |a: Expr, b: Expr| if is_max { Expr::max(a, b) } else { Expr::min(a, b) };
            for c in [None, Some(-3), Some(4)] {
                let diff = || {
                    let d = Expr::sub(y(), z());
                    match c {
                        Some(c) => Expr::add(d, i(c)),
                        None => d,
                    }
                };
                for swapped in [false, true] {
                    for extra in [false, true] {
                        let m = if swapped { op(diff(), x()) } else { op(x(), diff()) };
                        let m = if extra { Expr::add(m, w()) } else { m };
                        let e = Expr::add(m, z());
                        let simple = simplify(&e);
                        assert!(!simple.to_string().contains("- z"), "{e} -> {simple}");
                        for (xv, yv, zv, wv) in [(0, 5, 2, 1), (7, -3, 4, 0), (-5, -5, -9, 3), (2, 9, 9, -4)] {
                            let mut env: HashMap<String, i128> = [("x", xv), ("y", yv), ("z", zv), ("w", wv)]
                                .into_iter()
                                .map(|(k, v)| (k.to_string(), v))
                                .collect();
                            let mut of = false;
                            assert_eq!(eval(&e, &mut env, &mut of), eval(&simple, &mut env, &mut of), "{e} -> {simple}");
                        }
                    }
                }
            }
        }
    }
}

