//! Min and max: folding, proofs of ordering from facts (bounds of the
//! operands, or of their difference for non-overflowing types), absorption,
//! constants moved outward, clamp canonicalization, and distribution over
//! monotonic operations.

use std::sync::OnceLock;

use super::pattern::*;
use super::Simplifier;
use crate::ir::{equal, BinOp, Expr, ExprNode};

fn min_rules() -> &'static RuleSet {
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
            ..
        } = wilds();
        let nov = no_overflow_p;
        vec![
            rule(min(min(x, c0), c1), min(x, min(c0, c1))),
            rule(min(min(x, y), x), min(x, y)),
            rule(min(min(x, y), y), min(x, y)),
            rule(min(x, min(x, y)), min(x, y)),
            rule(min(x, min(y, x)), min(y, x)),
            rule(min(max(x, y), x), x),
            rule(min(max(x, y), y), y),
            rule(min(x, max(x, y)), x),
            rule(min(x, max(y, x)), x),
            rule(min(min(x, c0), y), min(min(x, y), c0)),
            rule(min(x, min(y, c0)), min(min(x, y), c0)),
            rule_if(min(max(x, c0), c1), max(min(x, c1), c0), c0.le(c1)),
            // constants move outward: min(x + c0, c1) == min(x, c1 - c0) + c0
            // (skipped if c1 - c0 overflows)
            rule_if(min(x + c0, c1), min(x, c1 - c0) + c0, nov()),
            rule_if(min(x + c0, y + c0), min(x, y) + c0, nov()),
            rule_if(min(x + y, x + z), x + min(y, z), nov()),
            rule_if(min(y + x, z + x), min(y, z) + x, nov()),
            rule_if(min(x + y, z + x), x + min(y, z), nov()),
            rule_if(min(y + x, x + z), x + min(y, z), nov()),
            rule_if(min(x - y, x - z), x - max(y, z), nov()),
            rule_if(min(x * c0, y * c0), min(x, y) * c0, nov() & c0.gt(0)),
            rule_if(min(x * c0, y * c0), max(x, y) * c0, nov() & c0.lt(0)),
            rule_if(min(x / c0, y / c0), min(x, y) / c0, c0.gt(0)),
            rule_if(min(x / c0, y / c0), max(x, y) / c0, c0.lt(0)),
            rule(
                min(select(x, y, z), select(x, w, u)),
                select(x, min(y, w), min(z, u)),
            ),
        ]
    }))
}

fn max_rules() -> &'static RuleSet {
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
            ..
        } = wilds();
        let nov = no_overflow_p;
        vec![
            rule(max(max(x, c0), c1), max(x, max(c0, c1))),
            rule(max(max(x, y), x), max(x, y)),
            rule(max(max(x, y), y), max(x, y)),
            rule(max(x, max(x, y)), max(x, y)),
            rule(max(x, max(y, x)), max(y, x)),
            rule(max(min(x, y), x), x),
            rule(max(min(x, y), y), y),
            rule(max(x, min(x, y)), x),
            rule(max(x, min(y, x)), x),
            rule(max(max(x, c0), y), max(max(x, y), c0)),
            rule(max(x, max(y, c0)), max(max(x, y), c0)),
            rule_if(max(x + c0, c1), max(x, c1 - c0) + c0, nov()),
            rule_if(max(x + c0, y + c0), max(x, y) + c0, nov()),
            rule_if(max(x + y, x + z), x + max(y, z), nov()),
            rule_if(max(y + x, z + x), max(y, z) + x, nov()),
            rule_if(max(x + y, z + x), x + max(y, z), nov()),
            rule_if(max(y + x, x + z), x + max(y, z), nov()),
            rule_if(max(x - y, x - z), x - min(y, z), nov()),
            rule_if(max(x * c0, y * c0), max(x, y) * c0, nov() & c0.gt(0)),
            rule_if(max(x * c0, y * c0), min(x, y) * c0, nov() & c0.lt(0)),
            rule_if(max(x / c0, y / c0), max(x, y) / c0, c0.gt(0)),
            rule_if(max(x / c0, y / c0), min(x, y) / c0, c0.lt(0)),
            rule(
                max(select(x, y, z), select(x, w, u)),
                select(x, max(y, w), max(z, u)),
            ),
        ]
    }))
}

impl Simplifier {
    /// Which operand is provably the smaller: `Some(true)` if `a <= b`,
    /// `Some(false)` if `b <= a`, `None` when unknown. One difference
    /// `a - b` answers both directions (it used to be built once per
    /// direction, and building it is most of the simplifier's time on
    /// large pipelines).
    pub(crate) fn provable_order(&mut self, a: &Expr, b: &Expr) -> Option<bool> {
        let key = (super::expr_id(a), super::expr_id(b), self.version);
        if let Some((_, _, answer)) = self.prove_cache.get(&key) {
            return *answer;
        }
        let answer = self.provable_order_uncached(a, b);
        self.prove_cache.insert(key, (a.clone(), b.clone(), answer));
        answer
    }

    fn provable_order_uncached(&mut self, a: &Expr, b: &Expr) -> Option<bool> {
        let ty = a.ty();
        if !ty.is_int() && !ty.is_uint() {
            return None;
        }
        let (ia, ib) = (self.info(a), self.info(b));
        let le = |x: Option<i64>, y: Option<i64>| matches!((x, y), (Some(x), Some(y)) if x <= y);
        if le(ia.max, ib.min) {
            return Some(true);
        }
        if le(ib.max, ia.min) {
            return Some(false);
        }
        if !super::info::no_overflow(ty) || (a.is_const() && b.is_const()) {
            return None;
        }
        // The difference can only be sharper than the operands' own facts
        // when something cancels in it: operands without a leaf in common
        // get the facts of their difference by interval arithmetic (exact
        // integer bounds in these types), without building it.
        let d = if self.may_share_leaves(a, b) {
            self.difference_info(a, b)?
        } else {
            super::Info::sub(ty, &ia, &ib)
        };
        if d.max.is_some_and(|m| m <= 0) {
            return Some(true);
        }
        if d.min.is_some_and(|m| m >= 0) {
            return Some(false);
        }
        None
    }

    /// Could `a - b` cancel something? Conservatively true when the two
    /// read a variable, buffer or function of the same name, or either
    /// reads a let-bound variable whose value the simplifier may substitute
    /// into a difference (`let_difference_info`). Decided on the operands'
    /// leaf signatures: a false overlap only makes the answer conservative.
    fn may_share_leaves(&mut self, a: &Expr, b: &Expr) -> bool {
        let (sa, sb) = (self.leaf_signature(a), self.leaf_signature(b));
        sa & sb != 0 || (sa | sb) & self.let_signature() != 0
    }

    pub(crate) fn simplify_min_max(
        &mut self,
        op: BinOp,
        node: &Expr,
        a: &Expr,
        b: &Expr,
    ) -> Option<Expr> {
        let is_min = op == BinOp::Min;
        if equal(a, b) {
            return Some(a.clone());
        }
        if a.is_const() && !b.is_const() {
            return Some(self.mk_bin(op, b.clone(), a.clone()));
        }
        let ty = node.ty();
        if ty.is_float() {
            return None;
        }
        if let Some(a_first) = self.provable_order(a, b) {
            return Some(if a_first == is_min { a.clone() } else { b.clone() });
        }
        self.rewrite(node, if is_min { min_rules() } else { max_rules() })
            .or_else(|| self.absorb_into_chain(op, a, b))
    }

    /// `a` a chain `op(op(op(e0, e1), e2), ..)` of the same op, as the union
    /// of many call sites' bounds builds it: `b` is dropped when an element
    /// equals it or provably wins over it, and the elements `b` provably wins
    /// over are dropped. (Halide's rules match such repeats up to a fixed
    /// depth; bounds of a Func read at 8 sites nest deeper.)
    fn absorb_into_chain(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
        // Proofs against each element cost a difference each: long chains
        // are only searched for an equal element.
        const PROVE_UP_TO: usize = 8;
        let mut elems = Vec::new();
        let mut cur = a;
        while let ExprNode::Binary { op: o, a: l, b: r } = cur.node() {
            if *o != op {
                break;
            }
            elems.push(r);
            cur = l;
        }
        if elems.is_empty() {
            return None;
        }
        elems.push(cur);
        if elems.iter().any(|e| equal(e, b)) {
            return Some(a.clone());
        }
        if elems.len() > PROVE_UP_TO {
            return None;
        }
        let mut keep = vec![true; elems.len()];
        for (k, e) in elems.iter().enumerate() {
            // The pair alone, simplified: every rule, not only proofs, may
            // decide it (`min(x / 2, y / 2)` is ordered by a rule).
            let saved = std::mem::replace(&mut self.overflowed, false);
            let pair = self.mk_bin(op, (*e).clone(), b.clone());
            let overflowed = std::mem::replace(&mut self.overflowed, saved);
            if overflowed {
                continue;
            }
            if equal(&pair, e) {
                return Some(a.clone());
            }
            if equal(&pair, b) {
                keep[k] = false;
            }
        }
        if keep.iter().all(|&k| k) {
            return None;
        }
        // Rebuild innermost first, in the chain's order, then add `b`.
        let mut chain: Option<Expr> = None;
        for (e, _) in elems.iter().zip(&keep).rev().filter(|(_, &k)| k) {
            chain = Some(match chain {
                None => (*e).clone(),
                Some(c) => self.mk_bin(op, c, (*e).clone()),
            });
        }
        Some(match chain {
            None => b.clone(),
            Some(c) => self.mk_bin(op, c, b.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::{i, s, x, y};
    use crate::ir::{Expr, Type};

    #[test]
    fn min_max_rules() {
        assert_eq!(s(Expr::min(x(), Expr::add(x(), i(1)))), "x");
        assert_eq!(s(Expr::max(x(), Expr::add(x(), i(1)))), "(x + 1)");
        assert_eq!(s(Expr::min(Expr::max(x(), i(3)), i(1))), "1");
        assert_eq!(
            s(Expr::min(Expr::max(x(), i(1)), i(3))),
            "max(min(x, 3), 1)"
        );
        assert_eq!(s(Expr::min(Expr::min(x(), i(4)), i(2))), "min(x, 2)");
        assert_eq!(s(Expr::min(i(4), x())), "min(x, 4)");
        assert_eq!(s(Expr::max(Expr::min(x(), y()), x())), "x");
        assert_eq!(
            s(Expr::min(Expr::add(x(), i(2)), Expr::add(y(), i(2)))),
            "(min(x, y) + 2)"
        );
        assert_eq!(s(Expr::max(i(3), i(9))), "9");
        assert_eq!(s(Expr::min(Expr::add(x(), i(4)), i(10))), "(min(x, 6) + 4)");
        assert_eq!(
            s(Expr::max(Expr::add(x(), i(-1)), i(0))),
            "(max(x, 1) + -1)"
        );
        assert_eq!(
            s(Expr::sub(Expr::min(Expr::add(x(), i(4)), i(10)), i(4))),
            "min(x, 6)"
        );
        // c1 - c0 would overflow (the rule is skipped; bounds decide it)
        assert_eq!(
            s(Expr::min(Expr::add(x(), i(4)), i(i32::MIN as i64))),
            "-2147483648"
        );
        assert_eq!(
            s(Expr::max(Expr::add(x(), i(-4)), i(i32::MAX as i64))),
            "2147483647"
        );
        // uint: max(x, 0) is x
        let u = Type::uint(8);
        let ux = Expr::var(u, "ux");
        assert_eq!(s(Expr::max(ux.clone(), Expr::uint_imm(u, 0))), "ux");
        // int8 wraps: min(x, x + 1) is NOT x
        let t = Type::int(8);
        let bx = Expr::var(t, "bx");
        let e = Expr::min(bx.clone(), Expr::add(bx, Expr::int_imm(t, 1)));
        assert_eq!(s(e), "min(bx, (bx + (int8)1))");
    }

    /// One difference `a - b` orders the operands either way round, and
    /// operands without a common leaf are ordered by their own facts; a
    /// let-bound variable counts as sharing leaves with its value's.
    #[test]
    fn provable_order_either_way_and_through_lets() {
        assert_eq!(s(Expr::min(Expr::add(x(), i(2)), x())), "x");
        assert_eq!(s(Expr::max(Expr::add(x(), i(2)), x())), "(x + 2)");
        assert_eq!(s(Expr::min(x(), Expr::add(x(), i(-2)))), "(x + -2)");
        // disjoint operands: decided (or not) by their bounds alone
        let (lo, hi) = (Expr::min(x(), i(3)), Expr::max(y(), i(5)));
        assert_eq!(s(Expr::max(lo.clone(), hi.clone())), "max(y, 5)");
        assert_eq!(s(Expr::max(Expr::min(x(), i(7)), hi)), "max(max(min(x, 7), y), 5)");
        // `t` shares no name with `min(x, y) + 1`, but its value does
        let t = Expr::var_i32("t");
        let m = Expr::min(x(), y());
        let e = Expr::let_(
            "t",
            Expr::add(m.clone(), i(3)),
            Expr::max(t.clone(), Expr::add(m, i(1))),
        );
        let r = s(e);
        assert!(!r.contains("max"), "{r}");
    }

    /// The union of a Func's bounds over many call sites nests repeats and
    /// ordered terms deeper than a fixed rule reaches.
    #[test]
    fn chains_drop_repeated_and_dominated_terms() {
        let t2 = Expr::div(Expr::add(x(), i(1)), i(2));
        let t3 = Expr::div(Expr::add(x(), i(-1)), i(2));
        let mut c = Expr::min(y(), t2.clone());
        for _ in 0..4 {
            c = Expr::min(Expr::min(c, t3.clone()), t2.clone());
        }
        assert_eq!(s(c), "min(y, ((x + -1) / 2))");
        let u = Expr::mul(y(), i(2));
        let mut m = Expr::max(x(), Expr::add(u.clone(), i(-1)));
        for k in 0..3 {
            m = Expr::max(m, Expr::add(u.clone(), i(k)));
        }
        assert_eq!(s(m), "max(x, ((y * 2) + 2))");
        // nothing provable: unchanged
        let z = Expr::var_i32("z");
        let e = Expr::min(Expr::min(x(), y()), z);
        assert_eq!(s(e), "min(min(x, y), z)");
    }

    /// Regression: the difference `1 - select(c, i32::MIN, i32::MAX)` built to
    /// order the operands folded `1 - i32::MIN` with wrap-around, and its
    /// facts were clamped to the int32 range and then tightened by alignment,
    /// "proving" `1 <= select(...)`; the max was dropped.
    #[test]
    fn extreme_constants_are_not_misordered() {
        use crate::analysis::simplify::can_prove;
        let n = Expr::var_i32("n");
        let c = Expr::ge(n.clone(), i(0));
        for (t, f) in [
            (i32::MIN as i64, i32::MAX as i64),
            (-(i32::MAX as i64), 7),
            (i32::MAX as i64, i32::MIN as i64),
        ] {
            let sel = Expr::select(c.clone(), i(t), i(f));
            let e = Expr::max(i(1), sel.clone());
            let r = s(e.clone());
            assert!(r.contains("max"), "{e} -> {r}");
            let e = Expr::min(i(1), sel.clone());
            let r = s(e.clone());
            assert!(r.contains("min"), "{e} -> {r}");
            let e2 = Expr::max(Expr::max(i(1), sel.clone()), Expr::max(i(-1), sel.clone()));
            let r2 = simplify(&e2);
            assert!(!r2.is_const(), "{e2} -> {r2}");
            assert!(!can_prove(&Expr::le(e2, i(0))));
        }
        // x + c0 < c1 must not fold c1 - c0 with wrap-around
        let e = Expr::lt(Expr::add(x(), i(5)), i(i32::MIN as i64 + 2));
        assert!(
            !can_prove(&e) && !simplify(&e).to_string().contains("2147483645"),
            "{}",
            simplify(&e)
        );
        let e = Expr::lt(Expr::add(x(), i(-5)), i(i32::MAX as i64 - 2));
        assert!(
            !simplify(&e).to_string().contains("-2147483"),
            "{}",
            simplify(&e)
        );
        // int64 extremes
        let l = Type::int(64);
        let sel = Expr::select(c, Expr::int_imm(l, i64::MIN), Expr::int_imm(l, i64::MAX));
        let e = Expr::max(Expr::int_imm(l, 1), sel);
        assert!(s(e.clone()).contains("max"), "{e}");
        // ordinary proofs still work
        assert!(can_prove(&Expr::le(x(), Expr::add(x(), i(1)))));
        assert_eq!(s(Expr::max(x(), Expr::add(x(), i(-1)))), "x");
    }
}
