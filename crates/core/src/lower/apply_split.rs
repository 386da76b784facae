//! What one split, fuse or rename of a stage's loop dimensions means
//! (Halide's ApplySplit.cpp): the loop bounds of the new dimensions, the
//! definition of the old dimension in terms of them, and what the tail
//! strategy does to the definition's body when the factor may not divide
//! the extent.
//!
//! Names are full (`f.s0.x`, `f.s0.x.xo`); every dimension `d` has
//! `d.loop_min`, `d.loop_max` and `d.loop_extent` defined around the nest.
//! Tails, for a split of `x` into `xo * factor + xi`:
//! - RoundUp: the last tile runs past the max.
//! - ShiftInwards: the last tile is shifted back to end at the max
//!   (recomputing a few points).
//! - GuardWithIf / Predicate: the body runs only where `x <= x.loop_max`.
//! - PredicateLoads: the tile is rounded up, but calls to Funcs read only
//!   where `x <= x.loop_max`, and at `x.guarded`, which bounds inference
//!   knows is at most the max (`promise_clamped`). Where an earlier
//!   ShiftInwards split moves the extra points back inside the region,
//!   their stores are predicated too (`ShiftedBack`).
//! - PredicateStores: the same for the stores (the coordinates written
//!   and the store's predicate).
//! - RoundUpAndBlend / ShiftInwardsAndBlend: RoundUp / ShiftInwards, with
//!   the points outside the region (or computed by another tile) stored
//!   back with the value they had: `select(mask, value, f(args))`.
//!
//! When the extent is known to be a multiple of the factor (`Alignment`:
//! `bound`s, `align_bounds`, RVar extents, inner split products) the split
//! is exact and the tail does nothing.

use std::collections::{HashMap, HashSet};

use crate::analysis::simplify::simplify;
use crate::error::{Error, Result};
use crate::ir::{Expr, Intrinsic, Type};
use crate::schedule::TailStrategy;

/// What applying a split does, besides bounding the new loops. Applied in
/// order: body transformations act on the body as built so far, lets and
/// guards are placed around it.
#[derive(Clone, Debug)]
pub enum SplitResult {
    /// A definition of a dimension (or of a guarded copy of one), let-bound
    /// around the body.
    Let(String, Expr),
    /// The body runs only where the condition holds (an `if`).
    Guard(Expr),
    /// In calls to Funcs, dimension `.0` is replaced by `.1`.
    SubstituteInCalls(String, Expr),
    /// In the coordinates stored to, dimension `.0` is replaced by `.1`.
    SubstituteInProvides(String, Expr),
    /// Calls to Funcs read only where the condition holds.
    PredicateCalls(Expr),
    /// Stores happen only where the condition holds.
    PredicateProvides(Expr),
    /// Where the mask is false, stores write back the value already there.
    BlendProvides(Expr),
}

/// A split's loop bounds (`name`, value), outermost definitions last, and
/// its results.
pub struct AppliedSplit {
    pub bound_lets: Vec<(String, Expr)>,
    pub results: Vec<SplitResult>,
}

/// Known multiples of dimensions' loop extents, by full dimension name
/// (Halide's `dim_extent_alignment`).
pub type Alignment = HashMap<String, Expr>;

/// Dimensions (full names) whose points past their loop max are moved back
/// inside the region by a ShiftInwards split they come from: the outer
/// dimension of such a split and everything split or fused from it.
pub type ShiftedBack = HashSet<String>;

fn var(name: impl Into<String>) -> Expr {
    Expr::var_i32(name)
}

/// The user-facing name of a full dimension name: without the stage
/// prefix `f.sN.`.
fn unprefixed<'a>(full: &'a str, prefix: &str) -> &'a str {
    full.strip_prefix(prefix).unwrap_or(full)
}

/// The split of dimension `old` into `outer * factor + inner`, all full
/// names under stage prefix `prefix`.
pub fn apply_split(
    prefix: &str,
    old: &str,
    outer: &str,
    inner: &str,
    factor: &Expr,
    tail: TailStrategy,
    alignment: &mut Alignment,
    shifted_back: &mut ShiftedBack,
) -> Result<AppliedSplit> {
    let old_extent = var(format!("{old}.loop_extent"));
    let old_max = var(format!("{old}.loop_max"));
    let outer_extent = Expr::div(
        Expr::add(old_extent.clone(), Expr::sub(factor.clone(), Expr::i32(1))),
        factor.clone(),
    );
    let bound_lets = vec![
        (format!("{outer}.loop_min"), Expr::i32(0)),
        (format!("{outer}.loop_extent"), outer_extent.clone()),
        (
            format!("{outer}.loop_max"),
            Expr::sub(outer_extent, Expr::i32(1)),
        ),
        (format!("{inner}.loop_min"), Expr::i32(0)),
        (format!("{inner}.loop_extent"), factor.clone()),
        (
            format!("{inner}.loop_max"),
            Expr::sub(factor.clone(), Expr::i32(1)),
        ),
    ];
    let mut results = vec![];
    let outer_v = var(outer);
    let inner_v = var(inner);
    // The first point of the tile, relative to the old loop's min.
    let mut base = Expr::mul(outer_v.clone(), factor.clone());
    let exact = alignment
        .get(old)
        .map(|a| {
            (
                a.clone(),
                simplify(&Expr::modulo(a.clone(), factor.clone())),
            )
        })
        .filter(|(_, rem)| rem.is_zero());
    let constant = factor.as_int_const();
    // Before the exactness test: `a % 0` is 0, which would make a split by
    // zero look exact.
    if constant.is_some_and(|k| k <= 0) {
        return Err(Error::user(format!(
            "Can't split {} by {factor}. Split factors must be strictly positive\n",
            unprefixed(old, prefix)
        )));
    }
    if let Some((a, _)) = exact {
        // The factor divides the extent: every tile is whole.
        alignment.insert(outer.to_string(), simplify(&Expr::div(a, factor.clone())));
    } else if constant == Some(1) {
        // Trivially whole tiles, but nothing new is known of the outer loop.
    } else {
        // The points of the last tile past the max.
        let unwanted = || Expr::modulo(Expr::sub(Expr::i32(0), old_extent.clone()), factor.clone());
        let in_range = || Expr::likely(Expr::le(var(old), old_max.clone()));
        let guarded = || {
            let name = format!("{old}.guarded");
            let value = Expr::intrinsic(
                Type::i32(),
                Intrinsic::PromiseClamped,
                vec![var(old), var(old), old_max.clone()],
            );
            (name, value)
        };
        match tail {
            TailStrategy::RoundUp => {}
            TailStrategy::GuardWithIf | TailStrategy::Predicate => {
                results.push(SplitResult::Guard(in_range()));
            }
            TailStrategy::PredicateLoads => {
                let (name, value) = guarded();
                results.push(SplitResult::SubstituteInCalls(old.to_string(), var(&name)));
                results.push(SplitResult::Let(name, value));
                results.push(SplitResult::PredicateCalls(in_range()));
                if shifted_back.contains(old) {
                    // The extra iterations store inside the region (a
                    // ShiftInwards split moved them back), with values
                    // computed from loads that were predicated off: they
                    // must not store. (Halide lets them, and overwrites
                    // good values: fuzz seed 3495.)
                    results.push(SplitResult::PredicateProvides(in_range()));
                }
            }
            TailStrategy::PredicateStores => {
                let (name, value) = guarded();
                results.push(SplitResult::SubstituteInProvides(
                    old.to_string(),
                    var(&name),
                ));
                results.push(SplitResult::Let(name, value));
                results.push(SplitResult::PredicateProvides(in_range()));
            }
            TailStrategy::ShiftInwards | TailStrategy::Auto => {
                shifted_back.insert(outer.to_string());
                // As Halide: the unshifted base is the likely case, so loop
                // partitioning peels the shifted last tile.
                base = Expr::min(
                    Expr::intrinsic(Type::i32(), Intrinsic::LikelyIfInnermost, vec![base]),
                    Expr::sub(old_extent.clone(), factor.clone()),
                );
            }
            TailStrategy::ShiftInwardsAndBlend => {
                shifted_back.insert(outer.to_string());
                let unshifted = base.clone();
                base = Expr::min(
                    Expr::likely(base),
                    Expr::sub(old_extent.clone(), factor.clone()),
                );
                // The shifted tile's first points were computed by the
                // tile before: keep them.
                let mask = Expr::select(
                    Expr::eq(base.clone(), unshifted),
                    Expr::likely(Expr::bool_const(true)),
                    Expr::ge(inner_v.clone(), unwanted()),
                );
                results.push(SplitResult::BlendProvides(mask));
            }
            TailStrategy::RoundUpAndBlend => {
                let mask = Expr::select(
                    Expr::lt(outer_v.clone(), var(format!("{outer}.loop_max"))),
                    Expr::likely(Expr::bool_const(true)),
                    Expr::lt(inner_v.clone(), Expr::sub(factor.clone(), unwanted())),
                );
                results.push(SplitResult::BlendProvides(mask));
            }
        }
    }
    alignment.insert(inner.to_string(), factor.clone());
    if shifted_back.contains(old) {
        shifted_back.insert(outer.to_string());
        shifted_back.insert(inner.to_string());
    }
    let value = Expr::add(Expr::add(base, inner_v), var(format!("{old}.loop_min")));
    results.push(SplitResult::Let(old.to_string(), value));
    Ok(AppliedSplit {
        bound_lets,
        results,
    })
}

/// The fusion of dimensions `inner` and `outer` into one loop `fused`.
pub fn apply_fuse(
    inner: &str,
    outer: &str,
    fused: &str,
    alignment: &mut Alignment,
    shifted_back: &mut ShiftedBack,
) -> AppliedSplit {
    if shifted_back.contains(inner) || shifted_back.contains(outer) {
        shifted_back.insert(fused.to_string());
    }
    let inner_extent = var(format!("{inner}.loop_extent"));
    let extent = Expr::mul(inner_extent.clone(), var(format!("{outer}.loop_extent")));
    let bound_lets = vec![
        (format!("{fused}.loop_min"), Expr::i32(0)),
        (format!("{fused}.loop_extent"), extent.clone()),
        (format!("{fused}.loop_max"), Expr::sub(extent, Expr::i32(1))),
    ];
    let f = var(fused);
    // Defined innermost-first, so the outer comes after the inner.
    let results = vec![
        SplitResult::Let(
            inner.to_string(),
            Expr::add(
                Expr::modulo(f.clone(), inner_extent.clone()),
                var(format!("{inner}.loop_min")),
            ),
        ),
        SplitResult::Let(
            outer.to_string(),
            Expr::add(Expr::div(f, inner_extent), var(format!("{outer}.loop_min"))),
        ),
    ];
    if let (Some(a), Some(b)) = (alignment.get(inner), alignment.get(outer)) {
        let product = simplify(&Expr::mul(a.clone(), b.clone()));
        alignment.insert(fused.to_string(), product);
    }
    AppliedSplit {
        bound_lets,
        results,
    }
}

/// The renaming of dimension `old` to `new`.
pub fn apply_rename(old: &str, new: &str, shifted_back: &mut ShiftedBack) -> AppliedSplit {
    if shifted_back.contains(old) {
        shifted_back.insert(new.to_string());
    }
    let bound_lets = ["loop_min", "loop_extent", "loop_max"]
        .iter()
        .map(|suffix| (format!("{new}.{suffix}"), var(format!("{old}.{suffix}"))))
        .collect();
    AppliedSplit {
        bound_lets,
        results: vec![SplitResult::Let(old.to_string(), var(new))],
    }
}
