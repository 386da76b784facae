//! Constant extents for unrolled and vectorized loops (the algorithm of
//! Halide's BoundConstantExtentLoops, written anew).
//!
//! Assumes: runs after storage flattening, before `unroll_loops` and
//! `vectorize_loops`, which need a constant extent.
//!
//! Guarantees: every `ForType::Unrolled` or `ForType::Vectorized` loop has
//! an extent that folds to an integer constant. A loop whose extent is not
//! a constant but has a constant upper bound once the enclosing lets it
//! names are substituted (a Func computed over a clamped region, say) runs
//! over that bound instead, its body guarded by `likely(v < min + extent)`
//! so that the iterations past the real extent do nothing; the unroller
//! copies the guard into each copy, the vectorizer turns it into a
//! predicate. A loop whose extent has no constant upper bound is a user
//! error naming the loop, as in Halide.

use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute_lets;
use crate::lower::partition_loops::strip_likely_expr;
use crate::error::{Error, Result};
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, ForType, Mutator, Stmt, StmtNode};

/// Give every unrolled or vectorized loop in `s` a constant extent.
pub fn bound_constant_extent_loops(s: &Stmt) -> Result<Stmt> {
    let mut b = BoundLoops { error: None, lets: vec![] };
    let out = b.mutate_stmt(s);
    match b.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

struct BoundLoops {
    error: Option<Error>,
    /// The enclosing lets (innermost last), through which an extent's
    /// constant bound is found.
    lets: Vec<(String, Expr)>,
}

/// The largest value of `extent` with the enclosing lets it names
/// substituted, if that is a constant whatever the free variables are.
/// The substituted extent is simplified first, with its `likely` marks
/// (which do not change values) dropped: a region clamped at both ends
/// has an extent like `min(b + 3, e) - min(b, e) + 3`, which interval
/// arithmetic cannot bound but the simplifier rewrites into a clamp of
/// `e - b` (fuzz seed 63101).
fn constant_upper_bound(extent: &Expr, lets: &[(String, Expr)]) -> Option<i64> {
    let e = substitute_lets(extent, lets.iter().rev().map(|(n, v)| (n.as_str(), v)));
    let bound = crate::analysis::bounds::constant_upper_bound;
    bound(&e).or_else(|| bound(&simplify(&strip_likely_expr(&e))))
}

impl Mutator for BoundLoops {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        // Expressions hold no loops.
        e.clone()
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        if let StmtNode::LetStmt { name, value, body } = s.node() {
            self.lets.push((name.clone(), value.clone()));
            let b = self.mutate_stmt(body);
            self.lets.pop();
            return if b.same_as(body) { s.clone() } else { Stmt::let_stmt(name.clone(), value.clone(), b) };
        }
        let StmtNode::For {
            name,
            min,
            extent,
            for_type: for_type @ (ForType::Unrolled | ForType::Vectorized),
            body,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        if extent.as_int_const().is_some() {
            return mutate_stmt_children(self, s);
        }
        let simplified = simplify(extent);
        let new_body = self.mutate_stmt(body);
        if simplified.as_int_const().is_some() {
            return Stmt::for_loop(name.clone(), min.clone(), simplified, *for_type, new_body);
        }
        let Some(bound) = constant_upper_bound(&simplified, &self.lets) else {
            let verb = if *for_type == ForType::Unrolled { "unroll" } else { "vectorize" };
            self.error = Some(Error::user(format!(
                "Can only {verb} for loops over a constant extent. Loop over {name} has extent {simplified}."
            )));
            return s.clone();
        };
        // Iterations past the actual extent do nothing.
        let end = Expr::add(min.clone(), simplified);
        let inside = Expr::likely(Expr::lt(Expr::var(min.ty(), name.clone()), end));
        let guarded = Stmt::if_then_else(inside, new_body, None);
        Stmt::for_loop(name.clone(), min.clone(), Expr::make_const_i64(extent.ty(), bound), *for_type, guarded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn store_x() -> Stmt {
        Stmt::store("o", Expr::var_i32("x"), Expr::var_i32("x"), Expr::i32(1))
    }

    #[test]
    fn extent_bounded_through_a_let_runs_to_the_bound_with_a_guard() {
        // let e = clamp(n, 0, 2) in for x in [m, m + e): two iterations,
        // each running only inside the actual extent.
        for ft in [ForType::Unrolled, ForType::Vectorized] {
            let clamped = Expr::max(Expr::min(Expr::var_i32("n"), Expr::i32(2)), Expr::i32(0));
            let lp = Stmt::for_loop("x", Expr::var_i32("m"), Expr::var_i32("e"), ft, store_x());
            let out = bound_constant_extent_loops(&Stmt::let_stmt("e", clamped, lp)).unwrap().to_string();
            assert!(out.contains("x, m, 2"), "{out}");
            assert!(out.contains("if (likely((x < (m + e))))"), "{out}");
        }
    }

    #[test]
    fn constant_extents_are_untouched() {
        let s = Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), ForType::Vectorized, store_x());
        assert!(bound_constant_extent_loops(&s).unwrap().same_as(&s));
    }

    #[test]
    fn unbounded_extent_is_a_user_error_naming_the_loop() {
        for (ft, verb) in [(ForType::Unrolled, "unroll"), (ForType::Vectorized, "vectorize")] {
            let s = Stmt::for_loop("x", Expr::i32(0), Expr::var_i32("n"), ft, store_x());
            let err = bound_constant_extent_loops(&s).unwrap_err();
            assert_eq!(err.kind, ErrorKind::User);
            assert_eq!(
                err.message,
                format!("Can only {verb} for loops over a constant extent. Loop over x has extent n.")
            );
        }
    }

    #[test]
    fn other_loops_untouched() {
        let s = Stmt::for_loop("x", Expr::i32(0), Expr::var_i32("n"), ForType::Serial, store_x());
        assert!(bound_constant_extent_loops(&s).unwrap().same_as(&s));
    }
}
