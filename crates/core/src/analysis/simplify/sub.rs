//! Subtraction: cancellation, constants moved into additions (signed
//! types), distribution, and the div/mod identity x - (x/c)*c == x % c.

use std::sync::OnceLock;

use super::info::{no_overflow, Info};
use super::pattern::*;
use super::Simplifier;
use crate::ir::{equal, Expr, ExprNode};

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
            rule(x - 0, x),
            rule_if(x - c0, x + (0 - c0), is_int_p()),
            rule((x + y) - x, y),
            rule((x + y) - y, x),
            rule(x - (x + y), 0 - y),
            rule(x - (y + x), 0 - y),
            rule(x - (x - y), y),
            rule((x - y) - x, 0 - y),
            rule((x + c0) - (y + c1), (x - y) + (c0 - c1)),
            rule((x + c0) - c1, x + (c0 - c1)),
            rule((x - c0) - c1, x - (c0 + c1)),
            rule((c0 - x) - c1, (c0 - c1) - x),
            rule((x + c0) - y, (x - y) + c0),
            rule(x - (y + c0), (x - y) - c0),
            rule(c0 - (x + c1), (c0 - c1) - x),
            rule(c0 - (c1 - x), x + (c0 - c1)),
            rule((x + y) - (x + z), y - z),
            rule((x + y) - (z + x), y - z),
            rule((y + x) - (x + z), y - z),
            rule((y + x) - (z + x), y - z),
            // cancellation through nested additions (exact modulo 2^bits)
            rule(((x + y) + z) - x, y + z),
            rule(((y + x) + z) - x, y + z),
            rule(((x + y) + z) - (x + w), (y + z) - w),
            rule(((y + x) + z) - (x + w), (y + z) - w),
            rule(((x + y) + z) - (w + x), (y + z) - w),
            rule(((y + x) + z) - (w + x), (y + z) - w),
            rule((x + y) - ((x + z) + w), y - (z + w)),
            rule((y + x) - ((x + z) + w), y - (z + w)),
            rule((x + y) - ((z + x) + w), y - (z + w)),
            rule((y + x) - ((z + x) + w), y - (z + w)),
            rule(x - ((x + y) + z), 0 - (y + z)),
            rule(x - ((y + x) + z), 0 - (y + z)),
            rule((x - y) - (z - y), x - z),
            rule((x - y) - (x - z), z - y),
            rule(x - (0 - y), x + y),
            rule(x * y - x * z, x * (y - z)),
            rule(x * y - z * y, (x - z) * y),
            rule(x * c0 - x * c1, x * (c0 - c1)),
            rule(x * c0 - x, x * (c0 - 1)),
            rule(x - x * c0, x * (1 - c0)),
            rule_if(x - (x / c0) * c0, x % c0, c0.ne(0)),
            rule_if((x / c0) * c0 - x, 0 - x % c0, c0.ne(0)),
            rule(select(x, y, z) - select(x, w, u), select(x, y - w, z - u)),
            rule(
                (u + select(x, y, z)) - select(x, c0, c1),
                u + select(x, y - c0, z - c1),
            ),
            rule((z + c0) - select(x, y, z), select(x, (z + c0) - y, c0)),
            rule(z - select(x, y, z), select(x, z - y, 0)),
            rule(y - select(x, y, z), select(x, 0, y - z)),
            rule_if((x + c0) - max(x, y), min(x - y, 0) + c0, no_overflow_p()),
            rule_if((x + c0) - max(y, x), min(x - y, 0) + c0, no_overflow_p()),
            rule_if((x + c0) - min(x, y), max(x - y, 0) + c0, no_overflow_p()),
            rule_if((x + c0) - min(y, x), max(x - y, 0) + c0, no_overflow_p()),
            rule(
                (select(x, y, z) + u) - select(x, c0, c1),
                u + select(x, y - c0, z - c1),
            ),
            rule(c0 - select(x, c1, c2), select(x, c0 - c1, c0 - c2)),
            rule(select(x, y, z) - y, select(x, 0, z - y)),
            rule(select(x, y, z) - z, select(x, y - z, 0)),
            rule_if(min(x, y) - x, min(y - x, 0), no_overflow_p()),
            rule_if(min(y, x) - x, min(y - x, 0), no_overflow_p()),
            rule_if(max(x, y) - x, max(y - x, 0), no_overflow_p()),
            rule_if(max(y, x) - x, max(y - x, 0), no_overflow_p()),
            rule_if(x - min(x, y), max(x - y, 0), no_overflow_p()),
            rule_if(x - min(y, x), max(x - y, 0), no_overflow_p()),
            rule_if(x - max(x, y), min(x - y, 0), no_overflow_p()),
            rule_if(x - max(y, x), min(x - y, 0), no_overflow_p()),
            // loop extents: min(x + c0, y) - x == min(y - x, c0), ...
            rule_if(min(x + c0, y) - x, min(y - x, c0), no_overflow_p()),
            rule_if(min(y, x + c0) - x, min(y - x, c0), no_overflow_p()),
            rule_if(max(x + c0, y) - x, max(y - x, c0), no_overflow_p()),
            rule_if(max(y, x + c0) - x, max(y - x, c0), no_overflow_p()),
            rule_if(x - min(x + c0, y), max(x - y, 0 - c0), no_overflow_p()),
            rule_if(x - min(y, x + c0), max(x - y, 0 - c0), no_overflow_p()),
            rule_if(x - max(x + c0, y), min(x - y, 0 - c0), no_overflow_p()),
            rule_if(x - max(y, x + c0), min(x - y, 0 - c0), no_overflow_p()),
            // quotients of two numerators that differ by y: the floor
            // division splits x into a multiple of c0 and x % c0, and the
            // multiple cancels (a vector's first and last lane of x / 2,
            // (t + 3) / 2 - t / 2 == (t % 2 + 3) / 2, in [1, 2])
            rule_if((x + y) / c0 - x / c0, ((x % c0) + y) / c0, and(no_overflow_p(), c0.gt(0))),
            rule_if((y + x) / c0 - x / c0, ((x % c0) + y) / c0, and(no_overflow_p(), c0.gt(0))),
            rule_if(x / c0 - (x + y) / c0, (((c0 - 1) - (x % c0)) - y) / c0, and(no_overflow_p(), c0.gt(0))),
            rule_if(x / c0 - (y + x) / c0, (((c0 - 1) - (x % c0)) - y) / c0, and(no_overflow_p(), c0.gt(0))),
            rule_if(min(x, y) - min(y, x), lit(0), no_overflow_p()),
            // two mins (maxes) sharing an operand, the other ones a constant
            // apart (a loop's clamped ends, min(b + 3, e) - min(b, e)): a
            // clamp of the operands' difference, so bounded by the constant
            rule_if(min(x + c0, y) - min(x, y), max(min(y - x, c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(y, x + c0) - min(x, y), max(min(y - x, c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(x + c0, y) - min(y, x), max(min(y - x, c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(y, x + c0) - min(y, x), max(min(y - x, c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(x, y) - min(x + c0, y), min(max(x - y, 0 - c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(x, y) - min(y, x + c0), min(max(x - y, 0 - c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(y, x) - min(x + c0, y), min(max(x - y, 0 - c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(min(y, x) - min(y, x + c0), min(max(x - y, 0 - c0), 0), and(no_overflow_p(), c0.ge(0))),
            rule_if(max(x + c0, y) - max(x, y), max(min(x - y, 0), 0 - c0) + c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(y, x + c0) - max(x, y), max(min(x - y, 0), 0 - c0) + c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(x + c0, y) - max(y, x), max(min(x - y, 0), 0 - c0) + c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(y, x + c0) - max(y, x), max(min(x - y, 0), 0 - c0) + c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(x, y) - max(x + c0, y), min(max(y - x, 0), c0) - c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(x, y) - max(y, x + c0), min(max(y - x, 0), c0) - c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(y, x) - max(x + c0, y), min(max(y - x, 0), c0) - c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(y, x) - max(y, x + c0), min(max(y - x, 0), c0) - c0, and(no_overflow_p(), c0.ge(0))),
            rule_if(max(x, y) - max(y, x), lit(0), no_overflow_p()),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn simplify_sub(&mut self, node: &Expr, a: &Expr, b: &Expr) -> Option<Expr> {
        let ty = node.ty();
        if ty.is_float() {
            // x - 0 == x exactly (including -0.0 - 0.0 == -0.0).
            if b.is_zero() {
                return Some(a.clone());
            }
            return None;
        }
        if equal(a, b) {
            return Some(Expr::zero(ty));
        }
        if let Some(d) = self.constant_let_difference(a, b) {
            return Some(d);
        }
        self.rewrite(node, rules())
    }
}

impl Simplifier {
    /// `a - b` for two variables bound by lets in scope whose values
    /// differ by a constant (a region's max and min, say): that constant.
    fn constant_let_difference(&mut self, a: &Expr, b: &Expr) -> Option<Expr> {
        let (va, vb) = (self.let_value(a)?, self.let_value(b)?);
        let saved = std::mem::replace(&mut self.overflowed, false);
        let d = self.mk_bin(crate::ir::BinOp::Sub, va, vb);
        let bad = std::mem::replace(&mut self.overflowed, saved);
        (d.is_const() && !bad).then_some(d)
    }

    /// Bounds of `a - b` where `a` or `b` is a let-bound variable, from
    /// the difference with its value substituted: a slid loop's `max - min` is bounded although
    /// each end alone is not (interval arithmetic would lose that both
    /// ends move together).
    pub(crate) fn let_difference_info(&mut self, a: &Expr, b: &Expr) -> Option<Info> {
        let (va, vb) = match (self.let_value(a), self.let_value(b)) {
            (None, None) => return None,
            (va, vb) => (
                va.unwrap_or_else(|| a.clone()),
                vb.unwrap_or_else(|| b.clone()),
            ),
        };
        let saved = std::mem::replace(&mut self.overflowed, false);
        let d = self.mk_bin(crate::ir::BinOp::Sub, va.clone(), vb.clone());
        let mut info = self.info(&d);
        if no_overflow(d.ty()) {
            info = Info::intersect(d.ty(), &info, &self.clamped_difference_info(&va, &vb));
        }
        let bad = std::mem::replace(&mut self.overflowed, saved);
        (!bad).then_some(info)
    }

    /// Bounds of `a - b` where `a` or `b` is a min or max, through
    /// `a - max(y, z) == min(a - y, a - z)` and its three kin (exact where
    /// arithmetic does not wrap): a loop's end minus a start clamped by
    /// `max(.., 0)`, `(L + 15) / 16 - max(L / 16, 0)`, is at most 1 from
    /// the unclamped difference, which interval arithmetic on the two ends
    /// alone loses.
    fn clamped_difference_info(&mut self, a: &Expr, b: &Expr) -> Info {
        use crate::ir::BinOp::{Max, Min, Sub};
        let ty = a.ty();
        let split = |e: &Expr| match e.node() {
            ExprNode::Binary { op: op @ (Min | Max), a, b } => Some((*op, a.clone(), b.clone())),
            _ => None,
        };
        let pieces = |sm: &mut Self, l: &Expr, r: &Expr| {
            let d = sm.mk_bin(Sub, l.clone(), r.clone());
            sm.info(&d)
        };
        let mut info = Info::type_range(ty);
        if self.in_clamped_difference {
            return info;
        }
        self.in_clamped_difference = true;
        if let Some((op, y, z)) = split(b) {
            let (iy, iz) = (pieces(self, a, &y), pieces(self, a, &z));
            // subtracting a max takes the smaller difference
            let m = if op == Max { Info::min(ty, &iy, &iz) } else { Info::max(ty, &iy, &iz) };
            info = Info::intersect(ty, &info, &m);
        }
        if let Some((op, y, z)) = split(a) {
            let (iy, iz) = (pieces(self, &y, b), pieces(self, &z, b));
            let m = if op == Min { Info::min(ty, &iy, &iz) } else { Info::max(ty, &iy, &iz) };
            info = Info::intersect(ty, &info, &m);
        }
        self.in_clamped_difference = false;
        info
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::test_util::{i, s, x, y};
    use crate::ir::{Expr, Type};

    #[test]
    fn sub_rules() {
        assert_eq!(s(Expr::sub(x(), x())), "0");
        assert_eq!(s(Expr::sub(Expr::add(x(), i(3)), x())), "3");
        assert_eq!(s(Expr::sub(x(), i(3))), "(x + -3)");
        assert_eq!(
            s(Expr::sub(Expr::add(x(), i(5)), Expr::add(y(), i(2)))),
            "((x - y) + 3)"
        );
        assert_eq!(
            s(Expr::sub(Expr::add(x(), y()), Expr::add(x(), i(1)))),
            "(y + -1)"
        );
        assert_eq!(
            s(Expr::sub(Expr::mul(x(), i(4)), Expr::mul(x(), i(3)))),
            "x"
        );
        assert_eq!(
            s(Expr::sub(x(), Expr::mul(Expr::div(x(), i(8)), i(8)))),
            "(x % 8)"
        );
        assert_eq!(s(Expr::sub(i(10), Expr::sub(i(4), x()))), "(x + 6)");
        let z = || Expr::var_i32("z");
        let w = || Expr::var_i32("w");
        // (a + b) - (a + c) through nested adds
        assert_eq!(
            s(Expr::sub(
                Expr::add(Expr::add(x(), y()), z()),
                Expr::add(x(), w())
            )),
            "((y + z) - w)"
        );
        assert_eq!(
            s(Expr::sub(Expr::add(Expr::add(y(), x()), z()), x())),
            "(y + z)"
        );
        assert_eq!(
            s(Expr::sub(
                Expr::add(x(), y()),
                Expr::add(Expr::add(x(), z()), w())
            )),
            "(y - (z + w))"
        );
        assert_eq!(
            s(Expr::sub(
                Expr::add(Expr::add(x(), y()), i(4)),
                Expr::add(x(), i(1))
            )),
            "(y + 3)"
        );
        // min(a, b) - a family
        assert_eq!(
            s(Expr::sub(Expr::min(Expr::add(x(), i(8)), y()), x())),
            "min((y - x), 8)"
        );
        assert_eq!(
            s(Expr::sub(Expr::max(y(), Expr::add(x(), i(8))), x())),
            "max((y - x), 8)"
        );
        assert_eq!(
            s(Expr::sub(x(), Expr::min(Expr::add(x(), i(8)), y()))),
            "max((x - y), -8)"
        );
        assert_eq!(s(Expr::sub(Expr::min(x(), y()), x())), "min((y - x), 0)");
        assert_eq!(s(Expr::sub(Expr::min(x(), Expr::add(x(), i(3))), x())), "0");
        let u = Type::uint(16);
        let ux = Expr::var(u, "ux");
        let e = Expr::sub(
            Expr::add(ux.clone(), Expr::uint_imm(u, 5)),
            Expr::uint_imm(u, 7),
        );
        // wraps: ux + 65534
        assert_eq!(s(e), "(ux + (uint16)65534)");
        // lets whose values differ by a constant
        let heavy = Expr::mul(x(), y());
        let body = Expr::sub(Expr::var_i32("hi"), Expr::var_i32("lo"));
        let e = Expr::let_(
            "lo",
            heavy.clone(),
            Expr::let_("hi", Expr::add(heavy, i(7)), body),
        );
        assert_eq!(s(e), "7");
    }

    /// Two mins (maxes) a constant apart in one operand subtract to a clamp
    /// of the other operands' difference (a loop extent clamped at both
    /// ends, seed 63101), in every operand order and for every sign of
    /// that difference: the rewrite keeps the value.
    #[test]
    fn difference_of_two_mins_sharing_an_operand_is_a_clamp() {
        use crate::analysis::simplify::fuzz_tests::eval;
        use crate::analysis::simplify::simplify;
        use std::collections::HashMap;
        let b = || Expr::mul(x(), i(6));
        let e = || Expr::sub(y(), i(3));
        // the seed's loop extent: min(6 xoo + 3, E - 3) - min(6 xoo, E - 3) + 3
        let extent = Expr::add(
            Expr::sub(Expr::min(Expr::add(b(), i(3)), e()), Expr::min(b(), e())),
            i(3),
        );
        let simple_extent = simplify(&extent);
        let info = crate::analysis::simplify::Simplifier::new().info(&simple_extent);
        assert_eq!((info.min, info.max), (Some(3), Some(6)), "{simple_extent}");
        let pair = |mx: bool, a: Expr, b: Expr| if mx { Expr::max(a, b) } else { Expr::min(a, b) };
        for mx in [false, true] {
            for c in 0..4 {
                for order in 0..4 {
                    let shifted = |o: usize| {
                        if order & o == 0 {
                            pair(mx, Expr::add(x(), i(c)), y())
                        } else {
                            pair(mx, y(), Expr::add(x(), i(c)))
                        }
                    };
                    let plain = if order & 2 == 0 { pair(mx, x(), y()) } else { pair(mx, y(), x()) };
                    for (name, e) in [
                        ("shifted - plain", Expr::sub(shifted(1), plain.clone())),
                        ("plain - shifted", Expr::sub(plain.clone(), shifted(1))),
                    ] {
                        let simple = simplify(&e);
                        let printed = simple.to_string();
                        assert!(
                            printed.matches("min").count() <= 1 && printed.matches("max").count() <= 1,
                            "{name} not rewritten: {e} -> {simple}"
                        );
                        for xv in -7..=7 {
                            for yv in -7..=7 {
                                let mut env: HashMap<String, i128> =
                                    [("x".to_string(), xv), ("y".to_string(), yv)].into();
                                let mut of = false;
                                assert_eq!(
                                    eval(&e, &mut env, &mut of),
                                    eval(&simple, &mut env, &mut of),
                                    "{e} -> {simple} at x = {xv}, y = {yv}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Two quotients by one constant whose numerators differ by y: the
    /// multiple of the divisor in x cancels (seed 63702's shifted vector
    /// base, `(t + 3) / 2 - t / 2`, is 1 or 2), and the value is kept.
    #[test]
    fn difference_of_quotients_of_nearby_numerators() {
        use crate::analysis::simplify::fuzz_tests::eval;
        use crate::analysis::simplify::simplify;
        use std::collections::HashMap;
        let d = Expr::sub(Expr::div(Expr::add(x(), i(3)), i(2)), Expr::div(x(), i(2)));
        let sd = simplify(&d);
        let info = crate::analysis::simplify::Simplifier::new().info(&sd);
        assert_eq!((info.min, info.max), (Some(1), Some(2)), "{sd}");
        for c in [1, 2, 3, 8] {
            for yk in [-9, -1, 0, 3, 7] {
                let y_is_const = yk != 0;
                let yy = || if y_is_const { i(yk) } else { y() };
                for e in [
                    Expr::sub(Expr::div(Expr::add(x(), yy()), i(c)), Expr::div(x(), i(c))),
                    Expr::sub(Expr::div(Expr::add(yy(), x()), i(c)), Expr::div(x(), i(c))),
                    Expr::sub(Expr::div(x(), i(c)), Expr::div(Expr::add(x(), yy()), i(c))),
                    Expr::sub(Expr::div(x(), i(c)), Expr::div(Expr::add(yy(), x()), i(c))),
                ] {
                    let simple = simplify(&e);
                    for xv in -20..=20 {
                        for yv in -9..=9 {
                            let mut env: HashMap<String, i128> =
                                [("x".to_string(), xv), ("y".to_string(), yv)].into();
                            let mut of = false;
                            assert_eq!(
                                eval(&e, &mut env, &mut of),
                                eval(&simple, &mut env, &mut of),
                                "{e} -> {simple} at x = {xv}, y = {yv}"
                            );
                        }
                    }
                }
            }
        }
    }
}
