//! Which tail strategy a split gets, and whether it is legal (the rules of
//! Halide's `Stage::split` and of `check_for_race_conditions_in_split_with_blend`).
//!
//! A split of a dimension stemming from the inner var of an earlier split
//! runs inside every iteration of that earlier split: rounding it up
//! (RoundUp in an update) would compute points twice, and PredicateLoads
//! could not prove its unguarded stores safe. Splits of RVars (`exact`)
//! must not leave the domain: GuardWithIf or Predicate only. ShiftInwards
//! recomputes points, which an update must not do. Blending tails load and
//! store points outside the region they compute, which races with another
//! thread computing those points when a var of the same original dimension
//! is parallel.

use crate::analysis::simplify::can_prove;
use crate::error::{Error, Result};
use crate::ir::{Expr, ForType};
use crate::schedule::{Split, StageSchedule, TailStrategy};

/// What kind of definition is split, and how.
#[derive(Clone, Copy, Debug)]
pub struct SplitContext {
    /// An update definition (not the pure one).
    pub update: bool,
    /// An RVar is split: the split must stay inside the domain.
    pub exact: bool,
}

/// The dims of a stage that stem from the inner var of a split: the inner
/// products themselves, the outer products of splitting those, renames of
/// them, and fusions that include one.
pub fn inner_split_products(splits: &[Split]) -> std::collections::HashSet<String> {
    let mut inner_vars = std::collections::HashSet::new();
    for s in splits {
        match s {
            Split::Split {
                old, outer, inner, ..
            } => {
                inner_vars.insert(inner.clone());
                if inner_vars.contains(old) {
                    inner_vars.insert(outer.clone());
                }
            }
            Split::Rename { old, new } => {
                if inner_vars.contains(old) {
                    inner_vars.insert(new.clone());
                }
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                if inner_vars.contains(inner) || inner_vars.contains(outer) {
                    inner_vars.insert(fused.clone());
                }
            }
        }
    }
    inner_vars
}

/// The tail strategy of a split of dim `old_name` (its full name) of `st`
/// (whose `splits` do not hold the new split yet) by `factor`, after
/// Halide's checks, in Halide's order; `Auto` resolved.
pub fn resolve_split_tail(
    st: &StageSchedule,
    func_name: &str,
    old_name: &str,
    factor: &Expr,
    tail: TailStrategy,
    ctx: SplitContext,
) -> Result<TailStrategy> {
    let stems_from_inner = inner_split_products(&st.splits).contains(old_name);
    if ctx.update && !ctx.exact && stems_from_inner && tail == TailStrategy::RoundUp {
        return Err(Error::user(format!(
            "Can't use TailStrategy::RoundUp for splitting {old_name} in update definition of {func_name}. It may redundantly recompute some values, which could change the meaning of the algorithm. Use TailStrategy::GuardWithIf instead."
        )));
    }
    if !ctx.exact && stems_from_inner && tail == TailStrategy::PredicateLoads {
        return Err(Error::user(format!(
            "Can't use TailStrategy::PredicateLoads for splitting {old_name} in the definition of {func_name}. PredicateLoads may not be used to split a Var stemming from the inner Var of a prior split."
        )));
    }
    let tail = match tail {
        TailStrategy::Auto if ctx.exact => TailStrategy::GuardWithIf,
        TailStrategy::Auto if ctx.update && stems_from_inner => TailStrategy::GuardWithIf,
        TailStrategy::Auto if ctx.update => TailStrategy::RoundUp,
        TailStrategy::Auto => pure_auto_tail(st, old_name, factor),
        t => t,
    };
    if is_blend(tail) {
        check_blend_races(st)?;
    }
    if ctx.update && tail == TailStrategy::ShiftInwards {
        return Err(Error::user(format!(
            "When splitting Var {old_name} ShiftInwards is not a legal tail strategy for update definitions, as it may change the meaning of the algorithm\n"
        )));
    }
    if ctx.exact && !matches!(tail, TailStrategy::GuardWithIf | TailStrategy::Predicate) {
        return Err(Error::user(format!(
            "When splitting Var {old_name} the tail strategy must be GuardWithIf, Predicate, or Auto. Anything else may change the meaning of the algorithm\n"
        )));
    }
    Ok(tail)
}

fn is_blend(tail: TailStrategy) -> bool {
    matches!(
        tail,
        TailStrategy::RoundUpAndBlend | TailStrategy::ShiftInwardsAndBlend
    )
}

/// `Auto` in a pure definition: ShiftInwards (no overcompute, no larger
/// buffers), unless `old_name` descends from the outer var of an earlier
/// ShiftInwards split by at least this factor, whose shift already keeps
/// this split inside the region (`f.vectorize(x, 8).unroll(x, 4)`).
fn pure_auto_tail(st: &StageSchedule, old_name: &str, factor: &Expr) -> TailStrategy {
    let mut descends: Vec<(String, Expr)> = vec![];
    let factor_of = |descends: &[(String, Expr)], n: &str| {
        descends
            .iter()
            .rev()
            .find(|(d, _)| d == n)
            .map(|(_, f)| f.clone())
    };
    for s in &st.splits {
        match s {
            Split::Split {
                old,
                outer,
                inner,
                factor,
                tail,
            } => {
                let parent = factor_of(&descends, old);
                if *tail == TailStrategy::ShiftInwards {
                    descends.push((outer.clone(), factor.clone()));
                } else if let Some(f) = parent {
                    descends.push((inner.clone(), f.clone()));
                    descends.push((outer.clone(), f));
                }
            }
            Split::Rename { old, new } => {
                if let Some(f) = factor_of(&descends, old) {
                    descends.push((new.clone(), f));
                }
            }
            Split::Fuse { .. } => {}
        }
    }
    match factor_of(&descends, old_name) {
        Some(f) if can_prove(&Expr::ge(f.clone(), factor.clone())) => TailStrategy::RoundUp,
        _ => TailStrategy::ShiftInwards,
    }
}

/// Halide's race check for blending tails: no split with a blending tail
/// may divide an original dimension some of whose vars run in parallel.
pub fn check_blend_races(st: &StageSchedule) -> Result<()> {
    if st.allow_race_conditions {
        return Ok(());
    }
    let mut parallel: std::collections::HashSet<String> = st
        .dims
        .iter()
        .filter(|d| d.for_type == ForType::Parallel)
        .map(|d| d.var.clone())
        .collect();
    // Up to the original dims that have a parallel descendant...
    for s in st.splits.iter().rev() {
        match s {
            Split::Split {
                old, outer, inner, ..
            } => {
                if parallel.contains(inner) || parallel.contains(outer) {
                    parallel.insert(old.clone());
                }
            }
            Split::Rename { old, new } => {
                if parallel.contains(new) {
                    parallel.insert(old.clone());
                }
            }
            // (Halide marks the fused var's inputs from the fused var only
            // partly; followed as written there.)
            Split::Fuse { inner, fused, .. } => {
                if parallel.contains(fused) {
                    parallel.insert(inner.clone());
                    parallel.insert(fused.clone());
                }
            }
        }
    }
    // ...and back down to every split of them.
    for s in &st.splits {
        match s {
            Split::Split {
                old, inner, tail, ..
            } => {
                if parallel.contains(old) {
                    parallel.insert(inner.clone());
                    if is_blend(*tail) {
                        return Err(Error::user(format!(
                            "Tail strategy {tail:?} may not be used to split {old} because other vars stemming from the same original Var or RVar are marked as parallel.This could cause a race condition.\n"
                        )));
                    }
                }
            }
            Split::Rename { old, new } => {
                if parallel.contains(old) {
                    parallel.insert(new.clone());
                }
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                if parallel.contains(inner) || parallel.contains(outer) {
                    parallel.insert(fused.clone());
                }
            }
        }
    }
    Ok(())
}
