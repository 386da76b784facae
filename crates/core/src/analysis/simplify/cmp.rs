//! Comparisons. Canonical forms: `>`/`>=` become `<`/`<=` with swapped
//! operands; for integers `a <= b` is `!(b < a)` and `a != b` is
//! `!(a == b)` (the Not then prints back as `<=` / `!=`), so only `<` and
//! `==` carry rules. Facts decide many comparisons outright: operand bounds,
//! and for non-overflowing types the bounds/alignment of `a - b`.

use std::sync::OnceLock;

use super::info::no_overflow;
use super::pattern::*;
use super::Simplifier;
use crate::ir::{equal, BinOp, Expr, Type};

fn lt_rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W {
            x,
            y,
            z,
            c0,
            c1,
            c2,
            ..
        } = wilds();
        let nov = no_overflow_p;
        vec![
            rule(lt(max(x, y), x), 0),
            rule(lt(max(y, x), x), 0),
            rule(lt(x, min(x, y)), 0),
            rule(lt(x, min(y, x)), 0),
            rule(lt(min(x, y), x), lt(y, x)),
            rule(lt(min(y, x), x), lt(y, x)),
            rule(lt(x, max(x, y)), lt(x, y)),
            rule(lt(x, max(y, x)), lt(x, y)),
            rule(lt(select(x, c0, c1), c2), select(x, lt(c0, c2), lt(c1, c2))),
            rule(lt(c2, select(x, c0, c1)), select(x, lt(c2, c0), lt(c2, c1))),
            rule_if(lt(x + c0, c1), lt(x, c1 - c0), nov()),
            rule_if(lt(c0, x + c1), lt(c0 - c1, x), nov()),
            // Moving a constant across must not create a sum that overflows
            // where the original did not (`x + c0 < y` with y at the type's
            // max is fine, `y - c0` is not; Halide's rule has this bug).
            // `y + k` fits whenever `y + c1` does and k lies between 0 and
            // c1, so the constant goes to the side whose own constant is
            // larger with the same sign; otherwise the bounds must say so.
            rule_if(
                lt(x + c0, y + c1),
                lt(x, y + (c1 - c0)),
                nov()
                    & or(
                        or(c0.ge(0) & c0.le(c1), c0.le(0) & c0.ge(c1)),
                        sum_fits(y, c1 - c0),
                    ),
            ),
            rule_if(
                lt(x + c0, y + c1),
                lt(x + (c0 - c1), y),
                nov() & or(c1.ge(0) & c1.le(c0), c1.le(0) & c1.ge(c0)),
            ),
            rule_if(lt(x + c0, y), lt(x, y - c0), nov() & sum_fits(y, 0 - c0)),
            rule_if(lt(c0 - x, c1), lt(c0 - c1, x), nov()),
            rule_if(lt(c0, c1 - x), lt(x, c1 - c0), nov()),
            rule_if(lt(x + y, x), lt(y, 0), nov()),
            rule_if(lt(y + x, x), lt(y, 0), nov()),
            rule_if(lt(x, x + y), lt(0, y), nov()),
            rule_if(lt(x, y + x), lt(0, y), nov()),
            rule_if(lt(x + y, x + z), lt(y, z), nov()),
            rule_if(lt(y + x, z + x), lt(y, z), nov()),
            rule_if(lt(x + y, z + x), lt(y, z), nov()),
            rule_if(lt(y + x, x + z), lt(y, z), nov()),
            rule_if(lt(x - y, x - z), lt(z, y), nov()),
            rule_if(lt(x - y, 0), lt(x, y), nov()),
            rule_if(lt(0, x - y), lt(y, x), nov()),
            rule_if(lt(x * c0, y * c0), lt(x, y), nov() & c0.gt(0)),
            rule_if(lt(x * c0, y * c0), lt(y, x), nov() & c0.lt(0)),
            rule_if(lt(x * c0, c1), lt(x, (c1 + c0 - 1) / c0), nov() & c0.gt(0)),
            rule_if(lt(c1, x * c0), lt(c1 / c0, x), nov() & c0.gt(0)),
            rule_if(lt(x / c0, c1), lt(x, c1 * c0), nov() & c0.gt(0)),
            rule_if(lt(c1, x / c0), lt((c1 + 1) * c0 - 1, x), nov() & c0.gt(0)),
        ]
    }))
}

fn eq_rules() -> &'static RuleSet {
    static R: OnceLock<RuleSet> = OnceLock::new();
    R.get_or_init(|| RuleSet::new({
        let W {
            x,
            y,
            z,
            c0,
            c1,
            c2,
            ..
        } = wilds();
        let nov = no_overflow_p;
        vec![
            rule(eq(x + c0, c1), eq(x, c1 - c0)),
            rule(eq(x - c0, c1), eq(x, c1 + c0)),
            rule(eq(c0 - x, c1), eq(x, c0 - c1)),
            rule(eq(x - y, 0), eq(x, y)),
            rule(eq(x + y, x), eq(y, 0)),
            rule(eq(y + x, x), eq(y, 0)),
            rule(eq(x, x + y), eq(y, 0)),
            rule(eq(x, y + x), eq(y, 0)),
            rule(eq(x + y, x + z), eq(y, z)),
            rule(eq(y + x, z + x), eq(y, z)),
            rule(eq(x + y, z + x), eq(y, z)),
            rule(eq(y + x, x + z), eq(y, z)),
            rule(eq(x - y, x - z), eq(y, z)),
            // (Equal modulo wrap-around, but a signed 32/64-bit sum must not
            // overflow: code generation marks it as never overflowing.)
            rule_if(
                eq(x + c0, y + c1),
                eq(x, y + (c1 - c0)),
                or(
                    or(not(nov()), sum_fits(y, c1 - c0)),
                    or(c0.ge(0) & c0.le(c1), c0.le(0) & c0.ge(c1)),
                ),
            ),
            rule_if(
                eq(x + c0, y + c1),
                eq(x + (c0 - c1), y),
                nov() & or(c1.ge(0) & c1.le(c0), c1.le(0) & c1.ge(c0)),
            ),
            rule_if(
                eq(x * c0, c1),
                eq(x, c1 / c0),
                nov() & c0.ne(0) & (c1 % c0).eq(0),
            ),
            rule_if(eq(x * c0, c1), 0, nov() & c0.ne(0) & (c1 % c0).ne(0)),
            rule(eq(select(x, c0, c1), c2), select(x, eq(c0, c2), eq(c1, c2))),
        ]
    }))
}

impl Simplifier {
    pub(crate) fn simplify_cmp(
        &mut self,
        op: BinOp,
        node: &Expr,
        a: &Expr,
        b: &Expr,
    ) -> Option<Expr> {
        let ty = a.ty();
        match op {
            BinOp::GT => return Some(self.mk_bin(BinOp::LT, b.clone(), a.clone())),
            BinOp::GE => return Some(self.mk_bin(BinOp::LE, b.clone(), a.clone())),
            _ => {}
        }
        if ty.is_float() || ty.is_handle() {
            return None;
        }
        let bool_ty = Type::bool().with_lanes(ty.lanes);
        let t = || Expr::make_const_i64(bool_ty, 1);
        let f = || Expr::make_const_i64(bool_ty, 0);
        if ty.is_bool() {
            // boolean (in)equality
            if equal(a, b) {
                return Some(if op == BinOp::NE || op == BinOp::LT {
                    f()
                } else {
                    t()
                });
            }
            if matches!(op, BinOp::EQ | BinOp::NE) {
                if a.is_const() && !b.is_const() {
                    return Some(self.mk_bin(op, b.clone(), a.clone()));
                }
                let b_true = b.is_const_value(1);
                let b_false = b.is_const_value(0);
                if (op == BinOp::EQ && b_true) || (op == BinOp::NE && b_false) {
                    return Some(a.clone());
                }
                if (op == BinOp::EQ && b_false) || (op == BinOp::NE && b_true) {
                    return Some(self.mk_not(a.clone()));
                }
            }
            return None;
        }
        match op {
            BinOp::LE => {
                let r = self.mk_bin(BinOp::LT, b.clone(), a.clone());
                let r = self.mk_not(r);
                return Some(reuse_same(r, node));
            }
            BinOp::NE => {
                let r = self.mk_bin(BinOp::EQ, a.clone(), b.clone());
                let r = self.mk_not(r);
                return Some(reuse_same(r, node));
            }
            _ => {}
        }
        if equal(a, b) {
            return Some(if op == BinOp::EQ { t() } else { f() });
        }
        let (ia, ib) = (self.info(a), self.info(b));
        if op == BinOp::LT {
            if ia.max.zip(ib.min).is_some_and(|(x, y)| x < y) {
                return Some(t());
            }
            if ia.min.zip(ib.max).is_some_and(|(x, y)| x >= y) {
                return Some(f());
            }
        } else {
            // EQ
            if ia.max.zip(ib.min).is_some_and(|(x, y)| x < y)
                || ia.min.zip(ib.max).is_some_and(|(x, y)| x > y)
            {
                return Some(f());
            }
            if a.is_const() && !b.is_const() {
                return Some(self.mk_bin(BinOp::EQ, b.clone(), a.clone()));
            }
        }
        // Facts about the difference. For EQ this is valid for wrapping types
        // too (a == b iff a - b wraps to 0).
        if (no_overflow(ty) || op == BinOp::EQ) && !b.is_zero() && !(a.is_const() && b.is_const()) {
            // `None`: a constant overflowed while building the difference,
            // so nothing is known from it.
            let id = self
                .difference_info(a, b)
                .unwrap_or_else(super::Info::unknown);
            if op == BinOp::LT {
                if id.max.is_some_and(|m| m < 0) {
                    return Some(t());
                }
                if id.min.is_some_and(|m| m >= 0) {
                    return Some(f());
                }
            } else {
                if id.as_exact() == Some(0) {
                    return Some(t());
                }
                let nonzero = id.min.is_some_and(|m| m > 0)
                    || id.max.is_some_and(|m| m < 0)
                    || (id.modulus != 0 && id.remainder != 0);
                if nonzero {
                    return Some(f());
                }
            }
        } else if op == BinOp::EQ {
            let ia = self.info(a);
            if b.is_zero()
                && (ia.min.is_some_and(|m| m > 0) || (ia.modulus > 1 && ia.remainder != 0))
            {
                return Some(f());
            }
        }
        self.rewrite(
            node,
            if op == BinOp::LT {
                lt_rules()
            } else {
                eq_rules()
            },
        )
    }
}

/// If `r` is structurally the same binary node as `node`, return `node`.
fn reuse_same(r: Expr, node: &Expr) -> Expr {
    use crate::ir::ExprNode;
    if let (
        ExprNode::Binary {
            op: o1,
            a: a1,
            b: b1,
        },
        ExprNode::Binary {
            op: o2,
            a: a2,
            b: b2,
        },
    ) = (r.node(), node.node())
    {
        if o1 == o2 && a1.same_as(a2) && b1.same_as(b2) {
            return node.clone();
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::test_util::{i, s, x, y};
    use crate::analysis::simplify::{can_prove, simplify};
    use crate::ir::{Expr, Type};

    #[test]
    fn cmp_rules() {
        assert!(can_prove(&Expr::lt(x(), Expr::add(x(), i(1)))));
        assert!(can_prove(&Expr::le(x(), x())));
        assert!(can_prove(&Expr::ne(
            Expr::mul(x(), i(2)),
            Expr::add(Expr::mul(y(), i(2)), i(1))
        )));
        assert!(!can_prove(&Expr::lt(x(), y())));
        assert_eq!(s(Expr::gt(x(), y())), "(y < x)");
        assert_eq!(s(Expr::le(x(), i(10))), "(x <= 10)");
        assert_eq!(s(Expr::ge(x(), i(10))), "(10 <= x)");
        assert_eq!(s(Expr::lt(Expr::add(x(), i(3)), i(10))), "(x < 7)");
        assert_eq!(
            s(Expr::lt(Expr::add(x(), i(3)), Expr::add(y(), i(5)))),
            "(x < (y + 2))"
        );
        assert_eq!(s(Expr::eq(Expr::add(x(), i(3)), i(10))), "(x == 7)");
        // The constant moves only where the new sum cannot overflow: with y
        // unbounded, y - 3 could (y = INT_MAX holds x + 3 < y for x = 0).
        assert_eq!(
            s(Expr::lt(Expr::add(x(), i(5)), Expr::add(y(), i(3)))),
            "((x + 2) < y)"
        );
        assert_eq!(
            s(Expr::lt(Expr::add(x(), i(3)), Expr::add(y(), i(-5)))),
            "((x + 3) < (y + -5))"
        );
        assert_eq!(s(Expr::lt(Expr::add(x(), i(3)), y())), "((x + 3) < y)");
        let by = Expr::max(Expr::min(y(), i(100)), i(0));
        assert_eq!(s(Expr::lt(Expr::add(x(), i(3)), by)), "(x < (max(min(y, 100), 0) + -3))");
        assert_eq!(s(Expr::ne(x(), i(3))), "(x != 3)");
        assert_eq!(s(Expr::lt(Expr::mul(x(), i(4)), i(10))), "(x < 3)");
        assert_eq!(s(Expr::lt(Expr::div(x(), i(4)), i(10))), "(x < 40)");
        assert_eq!(s(Expr::lt(i(10), Expr::div(x(), i(4)))), "(43 < x)");
        assert!(simplify(&Expr::lt(Expr::max(x(), y()), x())).is_false());
        // uint8 values are in [0, 255]
        let u = Type::uint(8);
        let ux = Expr::var(u, "ux");
        assert!(can_prove(&Expr::le(ux.clone(), Expr::uint_imm(u, 255))));
        assert!(can_prove(&Expr::ge(ux.clone(), Expr::uint_imm(u, 0))));
        // int8 x < x + 1 is not provable (wraps at 127)
        let t = Type::int(8);
        let bx = Expr::var(t, "bx");
        assert!(!can_prove(&Expr::lt(
            bx.clone(),
            Expr::add(bx, Expr::int_imm(t, 1))
        )));
        // float comparisons fold only on constants
        let fx = Expr::var(Type::float(32), "fx");
        assert_eq!(s(Expr::lt(fx.clone(), fx.clone())), "(fx < fx)");
        assert!(simplify(&Expr::lt(Expr::f32(1.0), Expr::f32(2.0))).is_true());
    }
}
