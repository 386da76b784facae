//! Schedule functions: build each computed Func's loop nest from its
//! schedule (splits, fuses, loop order and types) and inject it, with a
//! Realize for its storage, at its compute and store levels. Inlined Funcs
//! are substituted into their callers. (Halide's ScheduleFunctions.cpp.)
//!
//! Assumes: a valid environment and realization order. Guarantees: every
//! Func's placement was validated (lower/validate_schedule.rs) against the
//! loops of its consumers; the result is one Stmt in which every used,
//! non-inlined Func has a `ProducerConsumer` pair and (outputs excepted) a
//! `Realize`; a Func whose storage is hoisted (`hoist_storage`) also has an
//! `Allocate` of its name with no extents at the hoist level, whose size
//! storage flattening fills in. Loop variables are named `f.s0.v`; each
//! stage's loops are bounded by `f.s0.v.loop_min/loop_extent` lets derived
//! from the symbolic region `f.s0.v.min`/`f.s0.v.max` that bounds
//! inference defines later. Realize bounds refer to
//! `f.v.min_realized`/`f.v.extent_realized`, also defined by bounds
//! inference. The Provide of an `atomic()` update stage is wrapped in an
//! `Atomic` node; its loops keep their scheduled types. The Funcs of a
//! compute_with group (lower/fused_groups.rs) share one produce, nested
//! `produce` nodes around one loop nest (lower/fuse_loop_nests.rs), placed
//! at their common compute level, each with its own Realize.

use std::collections::HashMap;

use super::environment::Environment;
use super::fuse_loop_nests::build_group_produce;
use super::fused_groups::validate_group_schedules;
use super::validate_schedule::{innermost_use_site, validate_schedule};
use crate::analysis::substitute::substitute_map;
use crate::error::{Error, Result};
use crate::ir::visit::{expr_uses_var, mutate_expr_children, mutate_stmt_children};
use crate::ir::{
    CallKind, Expr, ExprNode, ForType, MemoryType, Mutator, Range, Stmt, StmtNode, Type,
};
use crate::lang::function::Function;
use super::apply_split::{apply_fuse, apply_rename, apply_split, Alignment, ShiftedBack, SplitResult};
use super::split_predicates::{
    blend_provides, predicate_calls, predicate_provides, substitute_guarded, Target,
};
use crate::schedule::{LockedLevels, LoopLevel, Split, TailStrategy, OUTERMOST};

/// The prefix of every loop and bound name of definition `index` of `f`
/// (0: the pure definition, `i + 1`: update `i`).
pub fn stage_prefix(func: &str, index: usize) -> String {
    format!("{func}.s{index}.")
}

fn var(name: impl Into<String>) -> Expr {
    Expr::var_i32(name)
}

/// The internal name of a split/fuse product `new` of dimension `old`
/// (internally `old_internal`): `new` itself unless it reuses `old`.
fn product_name(old_internal: &str, old: &str, new: &str) -> String {
    if new == old {
        format!("{old_internal}.{new}")
    } else {
        new.to_string()
    }
}

/// The resolved tail strategy Halide uses when the user says `Auto`.
fn resolve_tail(tail: TailStrategy) -> TailStrategy {
    match tail {
        TailStrategy::Auto => TailStrategy::ShiftInwards,
        t => t,
    }
}

// What building a produce needs beyond placement.
use crate::ir::Intrinsic;
use crate::lang::function::{FunctionContents, Specialization};
use crate::lang::rdom::ReductionVariable;
use crate::lang::stage::{has_live_specializations, live_specializations};
use crate::lower::remove_undef::{remove_undef, undef_to_zero, Stores};
use crate::schedule::StageSchedule;

/// Build `produce f { s0; s1; ... }`: one loop nest per definition (the
/// pure one, then each update in order), each from its own schedule or,
/// when it has specializations, Halide's chain `if (c1) {nest 1} else if
/// (c2) {nest 2} ... else {default nest}` (an assertion in place of the
/// default after `specialize_fail`). Every branch defines its own loop
/// bounds from the same `f.sN.v.min/max`; bounds inference keeps the
/// region each branch writes apart (`analysis/bounds.rs`, conditions that
/// depend on no loop).
pub fn build_produce(f: &Function) -> Result<Stmt> {
    let stages = (0..=f.read().updates.len())
        .map(|k| build_stage_nest(f, k, None))
        .collect::<Result<Vec<_>>>()?;
    Ok(Stmt::producer(f.name(), Stmt::block(stages)))
}

/// The loop nest of definition `index` of `f` with its specializations.
/// `fused_from` (compute_with): the loops from this index of the stage's
/// dims outwards (`__outermost` excepted) are shared with other stages,
/// so each runs its body only inside its own bounds (Halide's `likely`
/// guards on `v.loop_min` / `v.loop_max`).
pub fn build_stage_nest(f: &Function, index: usize, fused_from: Option<usize>) -> Result<Stmt> {
    let c = f.read();
    let (stage, specs) = if index == 0 {
        (&c.stage, &c.specializations)
    } else {
        let u = &c.updates[index - 1];
        // An update whose RDom predicate is false never runs: it has no
        // loop nest, so its loops cannot ask for a region (as in Halide,
        // whose simplifier drops it; fuzz seed 8737). False also counts
        // when it is so only over the RVars' constant ranges (`where(6 <
        // r.x)` with r.x in [-1, 0]): the region a split of its pure vars
        // rounds up to was once still required (fuzz seed 62270).
        let never = u.domain.as_ref().is_some_and(|d| {
            crate::analysis::simplify::simplify(&d.predicate()).is_const_value(0)
        }) || crate::analysis::parallel_rvar::never_runs(u);
        if never && fused_from.is_none() {
            return Ok(Stmt::no_op());
        }
        (&u.stage, &u.specializations)
    };
    build_specialized_nest(f, &c, index, stage, specs, fused_from)
}

/// The loop nest of definition `index` scheduled by `stage`, specialized by `specs`.
fn build_specialized_nest(
    f: &Function,
    c: &FunctionContents,
    index: usize,
    stage: &StageSchedule,
    specs: &[Specialization],
    fused_from: Option<usize>,
) -> Result<Stmt> {
    // Constant conditions are pruned first (Halide's
    // simplify_specializations); a final always-true one is the default.
    let (live, default) = live_specializations(specs);
    let mut s = match &default {
        Some(d) => build_specialized_nest(f, c, index, &d.stage, &d.specializations, fused_from)?,
        None => build_loop_nest(f, c, index, stage, fused_from)?,
    };
    for sp in live.iter().rev() {
        s = match &sp.failure_message {
            None => Stmt::if_then_else(
                sp.condition.clone(),
                build_specialized_nest(
                    f,
                    c,
                    index,
                    &sp.stage,
                    &sp.specializations,
                    fused_from,
                )?,
                Some(s),
            ),
            // Only ever last, with a true condition: it replaces the default.
            Some(msg) => Stmt::assert(
                Expr::bool_const(false),
                Expr::error(
                    crate::ir::ErrorCode::SpecializeFail,
                    vec![Expr::string(format!(
                        "A schedule specialized with specialize_fail() was chosen: {msg}"
                    ))],
                ),
            ),
        };
    }
    Ok(s)
}

/// What one definition computes, before its loops: the point (`args`)
/// and `values` stored where `condition` holds (None: it stores nothing),
/// its pure vars and its RVars with their bounds.
struct DefinitionBody {
    args: Vec<Expr>,
    stores: Option<(Expr, Vec<Expr>)>,
    pure_vars: Vec<String>,
    rvars: Vec<ReductionVariable>,
    lets: Vec<(String, Expr)>,
}

fn definition_body(f: &Function, c: &FunctionContents, index: usize) -> Result<DefinitionBody> {
    if index == 0 {
        let args: Vec<Expr> = c.args.iter().map(var).collect();
        let values = undef_to_zero(&args, &c.values)?;
        return Ok(DefinitionBody {
            args,
            stores: Some((Expr::bool_const(true), values)),
            pure_vars: c.args.clone(),
            rvars: vec![],
            lets: vec![],
        });
    }
    let u = &c.updates[index - 1];
    let types: Vec<Type> = c.values.iter().map(|v| v.ty()).collect();
    // An element left alone keeps its value: read it at the point stored.
    let old = |i: usize, args: &[Expr]| {
        Expr::call(
            types[i],
            c.name.clone(),
            args.to_vec(),
            CallKind::Halide {
                func: f.ptr(),
                value_index: i,
            },
        )
    };
    let removed = remove_undef(&u.args, &u.values, old)?;
    let args = removed
        .as_ref()
        .map(|r| r.args.clone())
        .unwrap_or_else(|| u.args.clone());
    let stores = removed.map(|Stores { condition, values, .. }| {
        let predicate = u.domain.as_ref().map(|d| d.predicate());
        let condition = match predicate {
            Some(p) if condition.is_true() => p,
            Some(p) if !p.is_true() => Expr::and(p, condition),
            _ => condition,
        };
        (condition, values)
    });
    Ok(DefinitionBody {
        args,
        stores,
        pure_vars: u.pure_vars(&c.args),
        rvars: u.domain.as_ref().map(|d| d.vars()).unwrap_or_default(),
        lets: u.lets.clone(),
    })
}

/// The loop nest computing definition `index` of `c` with the schedule
/// `stage`: loops `f.sN.v` over its pure vars (bounded by `f.sN.v.min` /
/// `.max`, defined by bounds inference) and RVars (bounded by the domain),
/// split and ordered as scheduled, around the Provide (inside an `if` for
/// the domain's predicate and conditional undefs).
fn build_loop_nest(
    f: &Function,
    c: &FunctionContents,
    index: usize,
    stage: &StageSchedule,
    fused_from: Option<usize>,
) -> Result<Stmt> {
    let name = c.name.clone();
    let p = stage_prefix(&name, index);
    let def = definition_body(f, c, index)?;

    // The definition, with pure vars and RVars renamed to the stage's loop variables.
    let renames: HashMap<String, Expr> = def
        .pure_vars
        .iter()
        .chain(def.rvars.iter().map(|r| &r.name))
        .chain(def.lets.iter().map(|(n, _)| n))
        .map(|a| (a.clone(), var(format!("{p}{a}"))))
        .collect();
    let args: Vec<Expr> = def
        .args
        .iter()
        .map(|a| substitute_map(&renames, a))
        .collect();
    let mut body = match &def.stores {
        None => Stmt::no_op(),
        Some((condition, values)) => {
            let values: Vec<Expr> = values.iter().map(|v| substitute_map(&renames, v)).collect();
            let provide = Stmt::provide(name.clone(), values, args, Expr::bool_const(true));
            let provide = if index > 0 && stage.atomic {
                atomic_provide(&name, stage, provide)
            } else {
                provide
            };
            let mut s = if condition.is_true() {
                provide
            } else {
                Stmt::if_then_else(substitute_map(&renames, condition), provide, None)
            };
            for (n, v) in def.lets.iter().rev() {
                s = Stmt::let_stmt(format!("{p}{n}"), substitute_map(&renames, v), s);
            }
            s
        }
    };

    // Loop bounds of the pure dimensions and RVars, then of each split product.
    let mut bound_lets: Vec<(String, Expr)> = vec![];
    for a in &def.pure_vars {
        let d = format!("{p}{a}");
        bound_lets.push((format!("{d}.loop_min"), var(format!("{d}.min"))));
        bound_lets.push((format!("{d}.loop_max"), var(format!("{d}.max"))));
        bound_lets.push((
            format!("{d}.loop_extent"),
            Expr::add(
                Expr::sub(var(format!("{d}.max")), var(format!("{d}.min"))),
                Expr::i32(1),
            ),
        ));
    }
    // The implicit outermost loop (0 to 0) can be split too
    // (`gpu_single_thread`).
    let outer_dim = format!("{p}{OUTERMOST}");
    bound_lets.push((format!("{outer_dim}.loop_min"), Expr::i32(0)));
    bound_lets.push((format!("{outer_dim}.loop_max"), Expr::i32(0)));
    bound_lets.push((format!("{outer_dim}.loop_extent"), Expr::i32(1)));
    for r in &def.rvars {
        let d = format!("{p}{}", r.name);
        bound_lets.push((format!("{d}.loop_min"), r.min.clone()));
        bound_lets.push((
            format!("{d}.loop_max"),
            Expr::sub(Expr::add(r.min.clone(), r.extent.clone()), Expr::i32(1)),
        ));
        bound_lets.push((format!("{d}.loop_extent"), r.extent.clone()));
    }

    // Definitions of split dimensions in terms of the new loops, innermost first.
    let mut defs: Vec<(String, Expr)> = vec![];
    let mut guards: Vec<Expr> = vec![];
    let mut names: HashMap<String, String> = def
        .pure_vars
        .iter()
        .chain(def.rvars.iter().map(|r| &r.name))
        .map(|a| (a.clone(), a.clone()))
        .chain([(OUTERMOST.to_string(), OUTERMOST.to_string())])
        .collect();
    let mut alignment = extent_alignment(&def, &p);
    let mut shifted_back = ShiftedBack::new();
    let predicated = predicated_inner_dims(stage);
    check_blend_splits(stage, &name)?;
    let dim = |names: &mut HashMap<String, String>, d: &str, what: &str| {
        names
            .remove(d)
            .ok_or_else(|| Error::internal(format!("{what} of unknown dim {d}")))
    };
    for s in &stage.splits {
        let applied = match s {
            Split::Split {
                old,
                outer,
                inner,
                factor,
                tail,
            } => {
                if predicated.contains(old) {
                    return Err(Error::user(
                        "Cannot split a loop variable resulting from a split using PredicateLoads or PredicateStores.",
                    ));
                }
                let o = dim(&mut names, old, "split")?;
                let (on, inn) = (product_name(&o, old, outer), product_name(&o, old, inner));
                if factor.ty() != Type::i32() {
                    return Err(Error::user(format!(
                        "Split factor {factor} of Func {name} must be an Int(32)"
                    )));
                }
                names.insert(outer.clone(), on.clone());
                names.insert(inner.clone(), inn.clone());
                apply_split(
                    &p,
                    &format!("{p}{o}"),
                    &format!("{p}{on}"),
                    &format!("{p}{inn}"),
                    factor,
                    resolve_tail(*tail),
                    &mut alignment,
                    &mut shifted_back,
                )?
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                let i = dim(&mut names, inner, "fuse")?;
                let o = dim(&mut names, outer, "fuse")?;
                let fname = product_name(&i, inner, fused);
                names.insert(fused.clone(), fname.clone());
                apply_fuse(
                    &format!("{p}{i}"),
                    &format!("{p}{o}"),
                    &format!("{p}{fname}"),
                    &mut alignment,
                    &mut shifted_back,
                )
            }
            Split::Rename { old, new } => {
                if predicated.contains(old) {
                    return Err(Error::user(
                        "Cannot split a loop variable resulting from a split using PredicateLoads or PredicateStores.",
                    ));
                }
                let o = dim(&mut names, old, "rename")?;
                let nn = product_name(&o, old, new);
                names.insert(new.clone(), nn.clone());
                apply_rename(&format!("{p}{o}"), &format!("{p}{nn}"), &mut shifted_back)
            }
        };
        bound_lets.extend(applied.bound_lets);
        for r in applied.results {
            body = match r {
                SplitResult::Let(n, v) => {
                    defs.push((n, v));
                    continue;
                }
                SplitResult::Guard(g) => {
                    guards.push(g);
                    continue;
                }
                SplitResult::SubstituteInCalls(v, e) => {
                    substitute_guarded(&body, &v, &e, Target::Calls, &defs)
                }
                SplitResult::SubstituteInProvides(v, e) => {
                    substitute_guarded(&body, &v, &e, Target::Provides, &defs)
                }
                SplitResult::PredicateCalls(cond) => predicate_calls(&body, &cond),
                SplitResult::PredicateProvides(cond) => predicate_provides(&body, &cond),
                SplitResult::BlendProvides(mask) => blend_provides(&body, &mask, f),
            };
        }
    }

    // The loops' variables, innermost first (as `stage.dims`).
    let mut loop_vars: Vec<Option<String>> = vec![];
    for d in &stage.dims {
        loop_vars.push(if d.var == OUTERMOST {
            None
        } else {
            names.get(&d.var).map(|internal| format!("{p}{internal}"))
        });
    }
    let mut placed = place_guards(&guards, &defs, &loop_vars);
    // Loops shared with other stages (compute_with) also run those stages,
    // appended to their bodies later: a guard of this stage goes no
    // further out than the innermost shared loop's body.
    if let Some(from) = fused_from {
        for at in placed.guards.iter_mut().flatten() {
            *at = (*at).min(from);
        }
    }

    // Innermost: the guards and split definitions not placed further out
    // (each defined before use).
    for (g, at) in guards.iter().zip(&placed.guards).rev() {
        if at.is_none() {
            body = Stmt::if_then_else(g.clone(), body, None);
        }
    }
    for ((n, v), at) in defs.iter().zip(&placed.defs) {
        if at.is_none() {
            body = Stmt::let_stmt(n.clone(), v.clone(), body);
        }
    }

    // Each loop's name, by the stage's dims (innermost first), for the
    // prefetch placeholders (none without prefetches).
    let loop_names: Vec<String> = if stage.prefetches.is_empty() {
        vec![]
    } else {
        stage
            .dims
            .iter()
            .map(|d| match names.get(&d.var) {
                Some(internal) => format!("{p}{internal}"),
                None => format!("{p}{}", d.var),
            })
            .collect()
    };

    // The loops, innermost first, each opening with the guards (and the
    // definitions they need) placed at it.
    for (li, d) in stage.dims.iter().enumerate() {
        for (g, at) in guards.iter().zip(&placed.guards).rev() {
            if *at == Some(li) {
                body = Stmt::if_then_else(g.clone(), body, None);
            }
        }
        for ((n, v), at) in defs.iter().zip(&placed.defs) {
            if *at == Some(li) {
                body = Stmt::let_stmt(n.clone(), v.clone(), body);
            }
        }
        if d.var == OUTERMOST {
            let ln = format!("{p}{OUTERMOST}");
            body = with_prefetch_placeholders(stage, li, &loop_names, body);
            body = Stmt::for_loop(ln.clone(), Expr::i32(0), Expr::i32(1), ForType::Serial, body);
            body = mark_offload(d, &ln, body);
            continue;
        }
        let internal = names.get(&d.var).ok_or_else(|| {
            Error::internal(format!(
                "Func {name} schedule mentions unknown dim {}",
                d.var
            ))
        })?;
        let ln = format!("{p}{internal}");
        if fused_from == Some(li) {
            body = fused_loop_guards(&loop_vars[li..], body);
        }
        body = with_prefetch_placeholders(stage, li, &loop_names, body);
        body = Stmt::for_loop(
            ln.clone(),
            var(format!("{ln}.loop_min")),
            var(format!("{ln}.loop_extent")),
            d.for_type,
            body,
        );
        body = mark_offload(d, &ln, body);
    }

    Ok(Stmt::let_stmts(bound_lets, body))
}

/// `body` of the stage's loop `li` (named `loop_names[li]`), opening with
/// a placeholder for each of the stage's prefetch directives at that loop
/// (Halide's `inject_placeholder_prefetch`): each specialization's nest
/// carries its own directives.
fn with_prefetch_placeholders(stage: &StageSchedule, li: usize, loop_names: &[String], body: Stmt) -> Stmt {
    if stage.prefetches.is_empty() {
        return body;
    }
    let position = |v: &str| stage.dims.iter().position(|d| crate::lang::func::var_name_match(&d.var, v));
    let mut marks: Vec<Stmt> = stage
        .prefetches
        .iter()
        .filter(|d| position(&d.at) == Some(li))
        .filter_map(|d| {
            let from = loop_names.get(position(&d.from)?)?;
            Some(super::inject_prefetch::placeholder(&loop_names[li], from, d))
        })
        .collect();
    if marks.is_empty() {
        return body;
    }
    marks.push(body);
    Stmt::block(marks)
}

/// `nest`, the loop `loop_name` of dim `d`, inside the loop marking it for
/// the Hexagon offload (`device_api::OFFLOAD_LOOP_PREFIX`) if it is a
/// `hexagon()` loop and the target is not Hexagon itself (there it is the
/// target's own code).
fn mark_offload(d: &crate::schedule::Dim, loop_name: &str, nest: Stmt) -> Stmt {
    use crate::device_api::{DeviceApi, OFFLOAD_LOOP_PREFIX};
    let on_hexagon = d.device.is_some_and(|dl| dl.api == DeviceApi::Hexagon);
    let offload = on_hexagon
        && crate::lang::target_queries::compile_target()
            .is_some_and(|t| t.arch != crate::target::arch::HEXAGON);
    if !offload {
        return nest;
    }
    let marker = format!("{OFFLOAD_LOOP_PREFIX}{loop_name}");
    Stmt::for_loop(marker, Expr::i32(0), Expr::i32(1), ForType::Serial, nest)
}

/// The body of the innermost of the loops `vars` (innermost first) that
/// are shared with other stages (compute_with): run only inside this
/// stage's own bounds, which the shared loops may exceed. The guards go
/// there, not into each shared loop, so that the stages appended to a
/// shared loop's body later are outside them (Halide puts them around
/// the innermost loop's body, with the same effect).
fn fused_loop_guards(vars: &[Option<String>], mut body: Stmt) -> Stmt {
    for v in vars.iter().flatten() {
        let (x, lo, hi) = (
            var(v.to_string()),
            var(format!("{v}.loop_min")),
            var(format!("{v}.loop_max")),
        );
        body = Stmt::if_then_else(Expr::likely(Expr::le(x.clone(), hi)), body, None);
        body = Stmt::if_then_else(Expr::likely(Expr::ge(x, lo)), body, None);
    }
    body
}

/// The known multiples of a stage's loop extents before its splits: each
/// RVar's extent. (Halide also trusts the Func's `bound`s and
/// `align_bounds` here; in this implementation those shape the region of
/// the last stage only, which earlier stages may exceed, so they are not
/// used: a guard on a split they make exact is always true, same results.)
fn extent_alignment(def: &DefinitionBody, prefix: &str) -> Alignment {
    def.rvars
        .iter()
        .map(|r| (format!("{prefix}{}", r.name), r.extent.clone()))
        .collect()
}

/// Is a loop made from `var` by the splits after the `k`-th vectorized?
fn vectorized_from(stage: &StageSchedule, k: usize, var: &str) -> bool {
    let mut from = vec![var.to_string()];
    for later in &stage.splits[k + 1..] {
        match later {
            Split::Split { old, outer, inner, .. } if from.contains(old) => {
                from.push(outer.clone());
                from.push(inner.clone());
            }
            Split::Fuse { inner, outer, fused } if from.contains(inner) || from.contains(outer) => {
                from.push(fused.clone());
            }
            Split::Rename { old, new } if from.contains(old) => from.push(new.clone()),
            _ => {}
        }
    }
    stage.dims.iter().any(|d| {
        d.for_type == ForType::Vectorized && from.iter().any(|v| crate::lang::func::var_name_match(&d.var, v))
    })
}

/// Halide lets the blend tail strategies race and compute garbage in two
/// shapes, without checking. Refused here:
/// - a ShiftInwardsAndBlend split whose outer and inner loops are both
///   vectorized: the shifted tail's lanes blend (load) and store in the
///   same vector operations as the lanes of the iteration before, which
///   write the overlapped elements, so a stale value can land last (fuzz
///   seeds 7300, 8850, Halide equally wrong). With the inner loop serial or
///   unrolled, the lanes run its iterations in lockstep, and the tail's
///   lane reaches each overlapped element at an earlier inner iteration
///   than the lane before it (its base is further right), so the right
///   value is stored last (fuzz seed 62040; Halide is right there too). A
///   parallel outer loop must run in order all the same
///   (`check_blend_races`). RoundUpAndBlend's tail reads only past the
///   region, which no other iteration writes (fuzz seed 11045);
/// - a RoundUpAndBlend split, its inner part vectorized, of the outer var
///   of an earlier split whose tail shifts inwards (fuzz seed 6904): the
///   rounded-up lanes, clamped by the earlier split onto the last valid
///   one, store back a stale value (Halide computes garbage). After a
///   RoundUp or GuardWithIf tail Halide is right, and so is this (42405). ShiftInwardsAndBlend there masks
///   the low lanes, which the previous iteration wrote: right in both
///   (fuzz seed 42249).
fn check_blend_splits(stage: &StageSchedule, func: &str) -> Result<()> {
    for (k, s) in stage.splits.iter().enumerate() {
        let Split::Split { old, outer, inner, tail, .. } = s else { continue };
        if !matches!(tail, TailStrategy::RoundUpAndBlend | TailStrategy::ShiftInwardsAndBlend) {
            continue;
        }
        if *tail == TailStrategy::ShiftInwardsAndBlend
            && !divides_exactly(&stage.splits[..k], s)
            && vectorized_from(stage, k, outer)
            && vectorized_from(stage, k, inner)
        {
            return Err(Error::user(format!(
                "In schedule for {func}, the outer and inner loops of the {tail:?} split of {old} are both vectorized: a blend tail reads what earlier iterations wrote, so the outer loop's lanes must each finish an inner iteration before the next lane reads it.\n"
            )));
        }
        if *tail == TailStrategy::RoundUpAndBlend
            && outer_of_a_clamped_split(&stage.splits[..k], old)
            && vectorized_from(stage, k, inner)
        {
            return Err(Error::user(format!(
                "In schedule for {func}, the {tail:?} split of {old} is not an innermost split ({old} is the outer loop of an earlier split whose tail shifts inwards) and its inner loop is vectorized, which that tail strategy does not allow.\n"
            )));
        }
    }
    Ok(())
}

/// Whether the split `s` has no tail: its variable is the inner loop of an
/// earlier split (among `earlier`) by a constant that its own constant
/// factor divides, so every outer iteration is a whole one and nothing is
/// shifted or blended (fuzz seed 73392: a split by 1 of the inner variable
/// of a split by 8; Halide's values are right there).
fn divides_exactly(earlier: &[Split], s: &Split) -> bool {
    let Split::Split { old, factor, .. } = s else { return false };
    let Some(f) = factor.as_int_const().filter(|f| *f > 0) else { return false };
    let mut var = old.clone();
    for e in earlier.iter().rev() {
        match e {
            Split::Split { inner, factor: outer_factor, .. } if *inner == var => {
                return outer_factor.as_int_const().is_some_and(|g| g > 0 && g % f == 0);
            }
            Split::Rename { old, new } if *new == var => var = old.clone(),
            _ => {}
        }
    }
    false
}

/// Whether `var` descends, through outer loops only, from a split among
/// `earlier` whose tail shifts its last iteration inwards (ShiftInwards,
/// ShiftInwardsAndBlend, or Auto, which a pure stage resolves to
/// ShiftInwards): that last outer iteration then overlaps the one before,
/// which is what makes a later RoundUpAndBlend store stale lanes. With a
/// RoundUp, GuardWithIf or predicated tail above it, the outer loop's
/// iterations stay disjoint and the blend is right (fuzz seed 42405).
fn outer_of_a_clamped_split(earlier: &[Split], var: &str) -> bool {
    let mut var = var.to_string();
    for s in earlier.iter().rev() {
        match s {
            Split::Split { old, outer, tail, .. } if *outer == var => {
                if matches!(
                    tail,
                    TailStrategy::ShiftInwards | TailStrategy::ShiftInwardsAndBlend | TailStrategy::Auto
                ) {
                    return true;
                }
                var = old.clone();
            }
            Split::Rename { old, new } if *new == var => var = old.clone(),
            _ => {}
        }
    }
    false
}

/// The inner dims of PredicateLoads / PredicateStores splits: splitting
/// them again is an error (their guarded copies would not follow).
fn predicated_inner_dims(stage: &StageSchedule) -> std::collections::HashSet<String> {
    stage
        .splits
        .iter()
        .filter_map(|s| match s {
            Split::Split {
                inner,
                tail: TailStrategy::PredicateLoads | TailStrategy::PredicateStores,
                ..
            } => Some(inner.clone()),
            _ => None,
        })
        .collect()
}

/// Where the guards of a stage's loop nest go: index into the loops
/// (innermost first) whose body a guard, or a split definition it needs,
/// opens; `None` for the innermost body.
struct GuardPlacement {
    guards: Vec<Option<usize>>,
    defs: Vec<Option<usize>>,
}

/// Each GuardWithIf guard goes right inside the innermost loop its
/// condition depends on (through the split definitions, which move out
/// with it), as Halide sorts its loop nests: the loops inside run only
/// where it holds, and a Func computed at that loop is computed only for
/// the rows the guard lets through (its bounds see the condition).
/// `defs` are in nesting order, innermost first; a definition needed by
/// several guards goes with the outermost.
fn place_guards(
    guards: &[Expr],
    defs: &[(String, Expr)],
    loop_vars: &[Option<String>],
) -> GuardPlacement {
    let mut placed = GuardPlacement {
        guards: vec![None; guards.len()],
        defs: vec![None; defs.len()],
    };
    for (gi, g) in guards.iter().enumerate() {
        // The definitions the guard needs, transitively.
        let mut needed = vec![false; defs.len()];
        let mut exprs = vec![g.clone()];
        while let Some(e) = exprs.pop() {
            for (di, (n, v)) in defs.iter().enumerate() {
                if !needed[di] && expr_uses_var(&e, n) {
                    needed[di] = true;
                    exprs.push(v.clone());
                }
            }
        }
        let uses = |name: &str| {
            expr_uses_var(g, name)
                || defs
                    .iter()
                    .zip(&needed)
                    .any(|((_, v), &n)| n && expr_uses_var(v, name))
        };
        let Some(at) = loop_vars
            .iter()
            .position(|lv| lv.as_deref().is_some_and(uses))
        else {
            continue;
        };
        placed.guards[gi] = Some(at);
        for (di, &n) in needed.iter().enumerate() {
            if n {
                placed.defs[di] = Some(placed.defs[di].map_or(at, |old| old.max(at)));
            }
        }
    }
    placed
}

/// The Provide of an `atomic()` update stage, inside Halide's `Atomic`
/// node. A mutex array `f.mutex` is named when some loop of the stage runs
/// in parallel (only then can two threads meet at one element); whether a
/// lock is really needed is decided after storage flattening, where a
/// Tuple's elements that read each other are known (add_atomic_mutex.rs).
/// Vectorized loops alone never take a lock: vectorization turns the
/// update into lane reductions or per-lane atomic operations.
fn atomic_provide(func: &str, stage: &StageSchedule, provide: Stmt) -> Stmt {
    let parallel = stage.dims.iter().any(|d| d.for_type == ForType::Parallel);
    let mutex = if parallel {
        format!("{func}.mutex")
    } else {
        String::new()
    };
    Stmt::atomic(func, mutex, provide)
}

/// Substitute calls to the inlined Func `f` by its definition: a call to
/// element `i` of a Tuple-valued Func gets value `i`.
struct Inline<'a> {
    name: &'a str,
    args: Vec<String>,
    values: Vec<Expr>,
    /// A call to an element the Func does not have (never made by the front end).
    bad_index: Option<usize>,
}

impl Mutator for Inline<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e2 = mutate_expr_children(self, e);
        if let ExprNode::Call {
            name,
            args,
            kind: CallKind::Halide { value_index, .. },
        } = e2.node()
        {
            if name == self.name {
                let m: HashMap<String, Expr> = self
                    .args
                    .iter()
                    .cloned()
                    .zip(args.iter().cloned())
                    .collect();
                match self.values.get(*value_index) {
                    Some(v) => return substitute_map(&m, v),
                    None => self.bad_index = Some(*value_index),
                }
            }
        }
        e2
    }
}

pub fn inline_function(s: &Stmt, f: &Function) -> Result<Stmt> {
    let c = f.read();
    // An inlined Func has no loop nest to specialize (Halide rejects it).
    if has_live_specializations(&c.specializations) {
        return Err(Error::user(format!(
            "Function {} is scheduled inline, so it must not have any specializations. Specialize on the scheduled function instead.\n",
            c.name
        )));
    }
    if c.updates.is_empty() {
        super::validate_schedule::warn_meaningless_inline_schedule(
            &c.stage.splits,
            &c.schedule.bounds,
            &c.name,
        );
    }
    let mut m = Inline {
        name: &c.name,
        args: c.args.clone(),
        values: c.values.clone(),
        bad_index: None,
    };
    let out = m.mutate_stmt(s);
    if let Some(i) = m.bad_index {
        return Err(Error::internal(format!(
            "call to element {i} of Func {}, which has {} values",
            c.name,
            c.values.len()
        )));
    }
    Ok(out)
}

/// One Func of a group realized together: its storage and levels.
struct Member {
    name: String,
    types: Vec<Type>,
    bounds: Vec<Range>,
    memory_type: MemoryType,
    levels: LockedLevels,
    /// Outputs have no Realize and no consume node (their buffer is given).
    is_output: bool,
}

impl Member {
    fn new(f: &Function, levels: LockedLevels, is_output: bool) -> Member {
        let name = f.name();
        let (args, memory_type) = {
            let c = f.read();
            (c.args.clone(), c.schedule.memory_type)
        };
        let bounds = args
            .iter()
            .map(|a| {
                Range::new(
                    var(format!("{name}.{a}.min_realized")),
                    var(format!("{name}.{a}.extent_realized")),
                )
            })
            .collect();
        Member {
            name,
            types: f.types(),
            bounds,
            memory_type,
            levels,
            is_output,
        }
    }
}

/// Inject the realization of a group of Funcs (one Func, or the Funcs
/// fused by compute_with, which share one compute level) into the loop
/// nest of their consumers: `produce` (of the whole group) and `consume`
/// in the body of the compute-level loop, each member's Realize around the
/// body of its store-level loop and, when its storage is hoisted further
/// out, an Allocate of the same name (extents left to storage flattening)
/// around the body of the hoist-level loop. Root levels are handled by
/// `wrap_root`, around the whole Stmt.
///
/// Like Halide, injection goes inside the lets and `if`s that open a loop
/// body (split definitions, GuardWithIf guards), so the Funcs are computed
/// only where their consumers run.
struct InjectRealization {
    members: Vec<Member>,
    produce: Stmt,
    compute: LoopLevel,
    /// How many times the produce was injected so far: a Func used in
    /// several stages of a consumer is computed in each stage's loop.
    computes: usize,
    found_store: Vec<bool>,
    found_hoist: Vec<bool>,
    /// A compute-level loop that uses some members of a fused group only.
    partly_used: bool,
}

impl InjectRealization {
    fn new(members: Vec<Member>, produce: Stmt) -> InjectRealization {
        let n = members.len();
        InjectRealization {
            compute: members[0].levels.compute.clone(),
            members,
            produce,
            computes: 0,
            found_store: vec![false; n],
            found_hoist: vec![false; n],
            partly_used: false,
        }
    }
    fn found_compute(&self) -> bool {
        self.computes > 0
    }
    fn found_all(&self) -> bool {
        self.found_compute()
            && self.found_store.iter().all(|&f| f)
            && self.found_hoist.iter().all(|&f| f)
    }
    fn wrap_compute(&mut self, body: Stmt) -> Stmt {
        self.computes += 1;
        let mut consumer = body;
        for m in self.members.iter().filter(|m| !m.is_output) {
            consumer = Stmt::consumer(&m.name, consumer);
        }
        if consumer.is_no_op() {
            // The first output scheduled: nothing consumes it here.
            return self.produce.clone();
        }
        Stmt::block(vec![self.produce.clone(), consumer])
    }
    fn wrap_store(&mut self, i: usize, body: Stmt) -> Stmt {
        self.found_store[i] = true;
        let m = &self.members[i];
        if m.is_output {
            return body;
        }
        Stmt::new(StmtNode::Realize {
            name: m.name.clone(),
            types: m.types.clone(),
            memory_type: m.memory_type,
            bounds: m.bounds.clone(),
            condition: Expr::bool_const(true),
            body,
        })
    }
    fn wrap_hoist(&mut self, i: usize, body: Stmt) -> Stmt {
        self.found_hoist[i] = true;
        let m = &self.members[i];
        if m.is_output || m.levels.hoist == m.levels.store {
            return body;
        }
        Stmt::new(StmtNode::Allocate {
            name: m.name.clone(),
            ty: m.types[0],
            memory_type: m.memory_type,
            extents: vec![],
            condition: Expr::bool_const(true),
            body,
        })
    }
    /// The storage of each member whose level is the loop `name` (or the
    /// root, for `None`), around `b`, once the group is computed inside.
    fn wrap_storage(&mut self, name: Option<&str>, mut b: Stmt) -> Stmt {
        let at = |l: &LoopLevel| match name {
            Some(n) => l.matches_loop(n),
            None => l.is_root(),
        };
        for i in 0..self.members.len() {
            if at(&self.members[i].levels.store) {
                b = self.wrap_store(i, b);
            }
        }
        for i in 0..self.members.len() {
            if at(&self.members[i].levels.hoist) {
                b = self.wrap_hoist(i, b);
            }
        }
        b
    }
    /// Wrap `s` at the root for the levels that are the root.
    fn wrap_root(&mut self, mut s: Stmt) -> Stmt {
        if self.compute.is_root() {
            s = self.wrap_compute(s);
        }
        if self.found_compute() {
            s = self.wrap_storage(None, s);
        }
        s
    }
}

impl Mutator for InjectRealization {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::For {
            name,
            min,
            extent,
            for_type,
            body,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        // Peel the prefetch placeholders that open the loop body (they stay
        // first: what they prefetch is computed inside them, as in
        // Halide), then the lets and else-less ifs. As in Halide, not past
        // one that reads a Func (the Func might be the one being injected,
        // which must be computed before) or has side effects; a guarded
        // split's promise is fine.
        let (placeholders, rest) = super::inject_prefetch::split_leading_placeholders(body);
        let mut containers: Vec<&Stmt> = vec![];
        let mut inner = &rest;
        loop {
            match inner.node() {
                StmtNode::LetStmt { body, value, .. }
                    if value.is_pure()
                        || value.as_intrinsic(Intrinsic::PromiseClamped).is_some() =>
                {
                    containers.push(inner);
                    inner = body;
                }
                StmtNode::IfThenElse {
                    then_case,
                    else_case: None,
                    condition,
                } if condition.is_pure() => {
                    containers.push(inner);
                    inner = then_case;
                }
                _ => break,
            }
        }
        let before = self.computes;
        let mut b = self.mutate_stmt(inner);
        // A level names a loop of any stage of its Func: compute only in
        // the loops that use the group (all of it: Halide refuses a fused
        // group used in part).
        if self.compute.matches_loop(name) {
            let used = self
                .members
                .iter()
                .filter(|m| stmt_calls(&b, &m.name))
                .count();
            if used == self.members.len() {
                b = self.wrap_compute(b);
            } else if used > 0 {
                self.partly_used = true;
            }
        }
        if self.computes > before {
            b = self.wrap_storage(Some(name), b);
        }
        if b.same_as(inner) {
            return s.clone();
        }
        for c in containers.into_iter().rev() {
            b = match c.node() {
                StmtNode::LetStmt { name, value, .. } => {
                    Stmt::let_stmt(name.clone(), value.clone(), b)
                }
                StmtNode::IfThenElse { condition, .. } => {
                    Stmt::if_then_else(condition.clone(), b, None)
                }
                _ => unreachable!("only lets and ifs are peeled"),
            };
        }
        if !placeholders.is_empty() {
            b = Stmt::block(placeholders.into_iter().chain([b]).collect());
        }
        Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b)
    }
}

/// Halide's warning for an update left unscheduled while another
/// definition of its Func was scheduled (`unscheduled()` silences it).
fn warn_unscheduled_updates(env: &Environment) {
    for name in &env.order {
        let c = env.get(name).read();
        let any = c.stage.touched || c.updates.iter().any(|u| u.stage.touched);
        for (i, u) in c.updates.iter().enumerate() {
            if any && !u.stage.touched {
                crate::error::user_warning(&format!(
                    "Update definition {i} of function {name} has not been scheduled, even though some other definitions have been. You may have forgotten to schedule it. If this was intentional, call {name}.update({i}).unscheduled() to suppress this warning.\n"
                ));
            }
        }
    }
}

/// Does `s` call Func `func`?
fn stmt_calls(s: &Stmt, func: &str) -> bool {
    let mut found = false;
    crate::ir::visit::for_each_expr_in_stmt(s, &mut |e| {
        if let ExprNode::Call {
            name,
            kind: CallKind::Halide { .. },
            ..
        } = e.node()
        {
            found |= name == func;
        }
    });
    found
}

/// Build the whole loop nest of the pipeline: Funcs from the outputs back
/// to the inputs, each placed (after validation) in the loops of its
/// consumers, or inlined into them. Funcs fused by compute_with are
/// placed together, as one produce (lower/fuse_loop_nests.rs).
pub fn schedule_functions(env: &Environment, outputs: &[Function]) -> Result<Stmt> {
    warn_unscheduled_updates(env);
    let is_output = |n: &str| outputs.iter().any(|o| o.name() == n);
    // Halide's lock_loop_levels: every level resolved (and defined) before
    // anything is built.
    let mut locked: HashMap<String, LockedLevels> = HashMap::new();
    for name in &env.order {
        let levels = if is_output(name) {
            // Outputs are computed and stored at root, whatever their schedule says.
            LockedLevels {
                compute: LoopLevel::Root,
                store: LoopLevel::Root,
                hoist: LoopLevel::Root,
            }
        } else {
            env.get(name).read().schedule.locked_levels()?
        };
        locked.insert(name.clone(), levels);
    }
    validate_group_schedules(&env.funcs, &env.fused_pairs, &locked)?;
    let mut s = Stmt::no_op();
    for group in env.groups.iter().rev() {
        s = if let [name] = group.as_slice() {
            schedule_function(env, name, &locked[name], &is_output, s)?
        } else {
            schedule_group(env, group, &locked, &is_output, s)?
        };
    }
    Ok(s)
}

/// Place Func `name` (not fused with any other) in `s`.
fn schedule_function(
    env: &Environment,
    name: &str,
    levels: &LockedLevels,
    is_output_name: &dyn Fn(&str) -> bool,
    s: Stmt,
) -> Result<Stmt> {
    let f = env.get(name);
    let is_output = is_output_name(name);
    let mut levels = levels.clone();
    // Halide can't inline a Func with update definitions: left inline,
    // it is computed and stored at the innermost loop around all its
    // uses. (A storage level given to such a Func is still the error
    // validation reports for inlined Funcs.)
    if levels.compute.is_inlined()
        && levels.store.is_inlined()
        && levels.hoist.is_inlined()
        && f.has_updates()
        && !is_output
    {
        let Some(site) = innermost_use_site(name, &s) else {
            return Ok(s);
        };
        levels = LockedLevels {
            compute: site.clone(),
            store: site.clone(),
            hoist: site,
        };
    }
    if !validate_schedule(f, &levels, &s, is_output)? {
        // Nothing uses it.
        return Ok(s);
    }
    if levels.compute.is_inlined() {
        return inline_function(&s, f);
    }
    let extern_def = f.read().extern_def.clone();
    let produce = match extern_def {
        Some(def) => super::extern_stages::build_extern_produce(f, &def, &levels.compute, is_output_name)?,
        None => build_produce(f)?,
    };
    inject(vec![Member::new(f, levels, is_output)], produce, s)
}

/// Place the Funcs of a compute_with group, computed together, in `s`.
fn schedule_group(
    env: &Environment,
    group: &[String],
    locked: &HashMap<String, LockedLevels>,
    is_output: &dyn Fn(&str) -> bool,
    s: Stmt,
) -> Result<Stmt> {
    let mut members = vec![];
    for name in group {
        let f = env.get(name);
        if validate_schedule(f, &locked[name], &s, is_output(name))? {
            members.push(Member::new(f, locked[name].clone(), is_output(name)));
        }
    }
    if members.is_empty() {
        return Ok(s);
    }
    if members.len() < group.len() {
        return Err(fused_group_partly_used());
    }
    let produce = build_group_produce(env, group)?;
    inject(members, produce, s)
}

fn fused_group_partly_used() -> Error {
    Error::user("Fused groups must either be entirely used or unused\n")
}

/// Inject `produce`, computing `members`, at their levels in `s`.
fn inject(members: Vec<Member>, produce: Stmt, s: Stmt) -> Result<Stmt> {
    let names: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
    let mut inj = InjectRealization::new(members, produce);
    let s = inj.mutate_stmt(&s);
    let s = inj.wrap_root(s);
    if inj.partly_used {
        return Err(fused_group_partly_used());
    }
    if !inj.found_all() {
        return Err(Error::internal(match names.as_slice() {
            [name] => format!(
                "Func {name} passed validation but its compute, store or hoist level was not found"
            ),
            _ => format!(
                "Funcs {} passed validation but their compute, store or hoist level was not found",
                names.join(", ")
            ),
        }));
    }
    Ok(s)
}
