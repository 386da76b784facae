//! Bounds inference (Halide's BoundsInference.cpp).
//!
//! Assumes: the output of schedule_functions. For every Func computed at a
//! level (the root, or the body of a loop), defines at the top of that level
//! `f.sN.v.min` / `f.sN.v.max` for each of its stages N — for the last
//! stage, the region of `f` its consumers at that level need, with every
//! loop inside the level ranging over its full extent; for an earlier
//! stage, that region plus every point the later stages read or write of
//! `f` (so the pure definition covers everything its updates touch).
//! Storage bounds come later, from what the final loop nests touch
//! (allocation_bounds_inference).
//! Consumers are handled before producers, so a producer's region can be
//! expressed in terms of its consumers' regions. At the root, an output's
//! region is its output buffer (buffer checks come later, after sliding
//! window: buffer_checks).
//!
//! The user's `bound`s replace the required region, `align_bounds` /
//! `align_extent` widen it (so the realized region is aligned too); where
//! a Func is stored, assertions check that each `bound` covers what its
//! consumers need there (Halide's message, at run time).

use std::collections::HashMap;

use super::buffer_checks;
use crate::analysis::bounds::{
    box_required_filtered, Interval, LoopFilter, StageRegions,
    Scope,
};
use crate::analysis::simplify::simplify;
use crate::error::Result;
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, Mutator, Stmt, StmtNode};
use crate::lang::function::Function;

use super::environment::Environment;
use super::extern_stages::QueryItem;
use super::fused_groups::fusion_root;

/// Names of the Funcs whose `produce` is in `s` without an enclosing loop.
fn produced_at_this_level(s: &Stmt, out: &mut Vec<String>) {
    match s.node() {
        StmtNode::For { .. } => {}
        StmtNode::ProducerConsumer {
            name,
            is_producer: true,
            body,
        } => {
            out.push(name.clone());
            produced_at_this_level(body, out);
        }
        StmtNode::ProducerConsumer { body, .. }
        | StmtNode::LetStmt { body, .. }
        | StmtNode::Realize { body, .. }
        | StmtNode::Allocate { body, .. } => produced_at_this_level(body, out),
        StmtNode::Block(v) => v.iter().for_each(|x| produced_at_this_level(x, out)),
        StmtNode::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            produced_at_this_level(then_case, out);
            if let Some(e) = else_case {
                produced_at_this_level(e, out);
            }
        }
        _ => {}
    }
}

/// Names of the Funcs whose `Realize` is in `s` without an enclosing loop.
fn realized_at_this_level(s: &Stmt, out: &mut Vec<String>) {
    match s.node() {
        StmtNode::For { .. } => {}
        StmtNode::Realize { name, body, .. } => {
            out.push(name.clone());
            realized_at_this_level(body, out);
        }
        StmtNode::ProducerConsumer { body, .. }
        | StmtNode::LetStmt { body, .. }
        | StmtNode::Allocate { body, .. } => realized_at_this_level(body, out),
        StmtNode::Block(v) => v.iter().for_each(|x| realized_at_this_level(x, out)),
        StmtNode::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            realized_at_this_level(then_case, out);
            if let Some(e) = else_case {
                realized_at_this_level(e, out);
            }
        }
        _ => {}
    }
}

/// The region of `f` computed in dimension `arg`, from the region `[lo,
/// hi]` its consumers need, after the user's `bound`s and alignments.
/// Halide applies them last-issued first (so the first issued has the final
/// say); a bound with no min (`bound_extent`) only applies where `f` is
/// both computed and stored (`extent_applies`), since elsewhere its min
/// moves. Also returns the region just before the first-issued `bound`
/// applies: the "required region" Halide's explicit-bounds check uses.
fn apply_user_bounds(
    f: &Function,
    arg: &str,
    mut lo: Expr,
    mut hi: Expr,
    extent_applies: bool,
) -> (Expr, Expr, Option<(Expr, Expr)>) {
    let c = f.read();
    let one = || Expr::i32(1);
    let mut unbounded = None;
    for b in c.schedule.bounds.iter().rev().filter(|b| b.var == arg) {
        if let Some(extent) = &b.extent {
            unbounded = Some((lo.clone(), hi.clone()));
            if b.min.is_some() || extent_applies {
                let min = b.min.clone().unwrap_or_else(|| lo.clone());
                hi = Expr::sub(Expr::add(min.clone(), extent.clone()), one());
                lo = min;
            }
        }
        if let Some(m) = &b.modulus {
            if let Some(r) = &b.remainder {
                // min down to r mod m, max + 1 up to r mod m.
                lo = Expr::add(
                    Expr::mul(Expr::div(Expr::sub(lo, r.clone()), m.clone()), m.clone()),
                    r.clone(),
                );
                let end = Expr::sub(Expr::add(hi, one()), r.clone());
                let end = Expr::div(Expr::add(end, Expr::sub(m.clone(), one())), m.clone());
                hi = Expr::sub(Expr::add(Expr::mul(end, m.clone()), r.clone()), one());
            } else {
                let extent = Expr::add(Expr::sub(hi, lo.clone()), one());
                let extent = Expr::mul(
                    Expr::div(Expr::add(extent, Expr::sub(m.clone(), one())), m.clone()),
                    m.clone(),
                );
                hi = Expr::sub(Expr::add(lo.clone(), extent), one());
            }
        }
    }
    (lo, hi, unbounded)
}

/// The assertion that the bound `[min, max]` given for `func` in `var`
/// covers the required region `[lo, hi]`. An empty required region is
/// covered by any bound.
pub(super) fn explicit_bound_check(func: &str, var: &str, min: Expr, max: Expr, lo: &Expr, hi: &Expr) -> Stmt {
    let covered = Expr::or(
        Expr::lt(hi.clone(), lo.clone()),
        Expr::and(Expr::le(min.clone(), lo.clone()), Expr::ge(max.clone(), hi.clone())),
    );
    Stmt::assert(
        simplify(&covered),
        buffer_checks::error_message(crate::ir::ErrorCode::ExplicitBoundsTooSmall, vec![
            Expr::string(format!("Bounds given for {func} in {var} (from ")),
            min,
            Expr::string(" to "),
            max,
            Expr::string(") do not cover required region (from "),
            lo.clone(),
            Expr::string(" to "),
            hi.clone(),
            Expr::string(")"),
        ]),
    )
}

/// Halide's explicit-bounds assertions: each `bound` on `arg` must cover
/// the region required at `f`'s store level, `required` (the region as
/// `apply_user_bounds` saw it before the first-issued bound).
fn explicit_bound_checks(f: &Function, arg: &str, required: &(Expr, Expr)) -> Vec<Stmt> {
    let c = f.read();
    let (req_lo, req_hi) = (simplify(&required.0), simplify(&required.1));
    c.schedule
        .bounds
        .iter()
        .filter(|b| b.var == arg)
        .filter_map(|b| {
            let extent = b.extent.clone()?;
            let min = simplify(&b.min.clone().unwrap_or_else(|| req_lo.clone()));
            let max = simplify(&Expr::sub(Expr::add(min.clone(), extent), Expr::i32(1)));
            Some(explicit_bound_check(&c.name, arg, min, max, &req_lo, &req_hi))
        })
        .collect()
}

struct BoundsInference<'a> {
    env: &'a Environment,
    outputs: &'a [Function],
    /// Every stage's pure variables: a stage computed entirely inside a
    /// level needs its producers over its region (see `StageRegions`).
    stages: StageRegions,
    /// Position of each Func in the realization order.
    position: HashMap<String, usize>,
}

fn var(name: String) -> Expr {
    Expr::var_i32(name)
}

impl BoundsInference<'_> {
    fn is_output(&self, name: &str) -> bool {
        self.outputs.iter().any(|o| o.name() == name)
    }

    /// Wrap `body` (one compute level) with the bounds of the Funcs computed there.
    fn add_bounds(&self, body: Stmt, at_root: bool) -> Result<Stmt> {
        let mut funcs = vec![];
        produced_at_this_level(&body, &mut funcs);
        let mut realized = vec![];
        realized_at_this_level(&body, &mut realized);
        if funcs.is_empty() && realized.is_empty() {
            return Ok(body);
        }
        // Consumers first.
        funcs.sort_by_key(|f| std::cmp::Reverse(self.position.get(f).copied().unwrap_or(0)));
        let mut lets: Vec<QueryItem> = vec![];
        // Explicit-bounds assertions of the Funcs stored here.
        let mut checks: Vec<Stmt> = vec![];
        let empty = Scope::default();
        for name in &funcs {
            let f = self.env.get(name);
            let args = f.args();
            let last = f.read().updates.len();
            let p = format!("{name}.s{last}.");
            let output = self.is_output(name) && at_root;
            // An output is stored where it is computed (its buffer).
            let stored_here = output || realized.contains(name);
            // The region consumers need (for an output: its buffer), in
            // terms of symbols defined outside this level. The Func's own
            // loop nests (its updates read it) are not consumers; an output
            // other outputs read is also computed where they read it.
            let required = box_required_filtered(
                &body,
                name,
                &empty,
                Some(LoopFilter {
                    prefix: format!("{name}.s"),
                    inside: false,
                }),
                &self.stages,
            );
            for (d, a) in args.iter().enumerate() {
                let (lo, hi) = if output {
                    // A Tuple's loops follow its first buffer (`f.0`); the
                    // others must match it (buffer_checks).
                    let buf = crate::lang::tuple::element_buffer_name(name, f.types().len(), 0);
                    let min = var(format!("{buf}.min.{d}"));
                    let extent = var(format!("{buf}.extent.{d}"));
                    let max = Expr::sub(Expr::add(min.clone(), extent), Expr::i32(1));
                    match required.as_ref().map(|r| r[d].clone()) {
                        Some(Interval { min: Some(lo), max: Some(hi) }) => {
                            (Expr::min(min, lo), Expr::max(max, hi))
                        }
                        _ => (min, max),
                    }
                } else {
                    match required.as_ref().map(|r| r[d].clone()) {
                        Some(Interval { min: Some(lo), max: Some(hi) }) => (lo, hi),
                        Some(_) => {
                            return Err(crate::Error::user(format!(
                                "Can't infer the bounds of Func {name} in dimension {a}: its consumers access it at an unbounded location.{}",
                                " Use clamp or a boundary condition on the index."
                            )))
                        }
                        // Not used at this level: compute nothing.
                        None => (Expr::i32(0), Expr::i32(-1)),
                    }
                };
                let (lo, hi, unbounded) = apply_user_bounds(f, a, lo, hi, stored_here);
                if let (Some(req), true) = (&unbounded, stored_here) {
                    checks.extend(explicit_bound_checks(f, a, req));
                }
                lets.push(QueryItem::Let(format!("{p}{a}.min"), simplify(&lo)));
                lets.push(QueryItem::Let(format!("{p}{a}.max"), simplify(&hi)));
            }
            // Each earlier stage computes what the later ones need: the
            // region after them plus every point they read. (As in Halide,
            // not the points they only write: those values are replaced;
            // the storage covers them.)
            let extern_def = f.read().extern_def.clone();
            if let Some(def) = extern_def {
                lets.extend(super::extern_stages::bounds_query(f, &def)?);
            }
            for k in (1..=last).rev() {
                let touched = box_required_filtered(
                    &body,
                    name,
                    &empty,
                    Some(LoopFilter {
                        prefix: format!("{name}.s{k}."),
                        inside: true,
                    }),
                    &self.stages,
                );
                for (d, a) in args.iter().enumerate() {
                    let (lo, hi) = (
                        var(format!("{name}.s{k}.{a}.min")),
                        var(format!("{name}.s{k}.{a}.max")),
                    );
                    let (lo, hi) = match touched.as_ref().map(|r| r[d].clone()) {
                        None => (lo, hi),
                        Some(Interval {
                            min: Some(tlo),
                            max: Some(thi),
                        }) => (Expr::min(lo, tlo), Expr::max(hi, thi)),
                        Some(_) => {
                            return Err(crate::Error::user(format!(
                                "Update definition number {} of Function {name} calls function {name} in an unbounded way in dimension {d}\n",
                                k - 1
                            )))
                        }
                    };
                    // As in Halide, the bounds apply to every stage's region
                    // (a min-less one from that stage's own min).
                    let (lo, hi, _) = apply_user_bounds(f, a, lo, hi, stored_here);
                    lets.push(QueryItem::Let(format!("{name}.s{}.{a}.min", k - 1), simplify(&lo)));
                    lets.push(QueryItem::Let(format!("{name}.s{}.{a}.max", k - 1), simplify(&hi)));
                }
            }
        }
        // Funcs stored here but computed in a loop inside: their bounds
        // are checked here, against what this level needs.
        for name in &realized {
            if funcs.contains(name) {
                continue;
            }
            let f = self.env.get(name);
            let args = f.args();
            let required = box_required_filtered(&body, name, &empty, None, &self.stages);
            for (d, a) in args.iter().enumerate() {
                if let Some(Interval {
                    min: Some(lo),
                    max: Some(hi),
                }) = required.as_ref().map(|r| r[d].clone())
                {
                    if let (_, _, Some(req)) = apply_user_bounds(f, a, lo, hi, false) {
                        checks.extend(explicit_bound_checks(f, a, &req));
                    }
                }
            }
        }
        let mut out = checks_before(checks, body);
        for item in lets.into_iter().rev() {
            out = match item {
                QueryItem::Let(name, value) => Stmt::let_stmt(name, value, out),
                QueryItem::Check(check) => Stmt::block(vec![check, out]),
            };
        }
        Ok(out)
    }
}

/// `body` after the assertions `checks` (if any).
pub(super) fn checks_before(mut checks: Vec<Stmt>, body: Stmt) -> Stmt {
    if checks.is_empty() {
        return body;
    }
    checks.push(body);
    Stmt::block(checks)
}

/// Does `e` use a region symbol bounds inference defines (`f.s0.x.min`,
/// `f.s0.x.max`)? Halide's test: any variable ending in `.min` or `.max`.
fn uses_inferred_bounds(e: &Expr) -> bool {
    let mut found = false;
    crate::ir::visit::for_each_expr(e, &mut |x| {
        if let Some(n) = x.as_variable() {
            found |= n.ends_with(".min") || n.ends_with(".max");
        }
    });
    found
}

struct Walk<'a, 'b> {
    bi: &'a BoundsInference<'b>,
    error: Option<crate::Error>,
}

impl Mutator for Walk<'_, '_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::For {
            name,
            min,
            extent,
            for_type,
            body,
        } = s.node()
        {
            // Like Halide, define the bounds inside the lets and guards that
            // open the loop body (split definitions, GuardWithIf guards), where
            // schedule_functions put the producers: a guarded-out iteration
            // then neither computes nor requires anything.
            let mut wrappers: Vec<&Stmt> = vec![];
            let mut inner = body;
            loop {
                match inner.node() {
                    StmtNode::LetStmt { value, body, .. } if !uses_inferred_bounds(value) => {
                        wrappers.push(inner);
                        inner = body;
                    }
                    StmtNode::IfThenElse {
                        condition,
                        then_case,
                        else_case: None,
                    } if !uses_inferred_bounds(condition) => {
                        wrappers.push(inner);
                        inner = then_case;
                    }
                    _ => break,
                }
            }
            let b = self.mutate_stmt(inner);
            let mut b = match self.bi.add_bounds(b.clone(), false) {
                Ok(x) => x,
                Err(e) => {
                    self.error.get_or_insert(e);
                    b
                }
            };
            for w in wrappers.into_iter().rev() {
                b = match w.node() {
                    StmtNode::LetStmt { name, value, .. } => {
                        Stmt::let_stmt(name.clone(), value.clone(), b)
                    }
                    StmtNode::IfThenElse { condition, .. } => {
                        Stmt::if_then_else(condition.clone(), b, None)
                    }
                    _ => unreachable!("only lets and ifs are peeled"),
                };
            }
            return Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b);
        }
        mutate_stmt_children(self, s)
    }
}

pub fn bounds_inference(s: &Stmt, env: &Environment, outputs: &[Function]) -> Result<Stmt> {
    let position = env
        .order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    let mut stages = StageRegions::default();
    for name in &env.order {
        let f = env.get(name);
        for k in 0..=f.updates().len() {
            let (root, rk) = fusion_root(&env.fused_pairs, name, k);
            stages
                .entry(format!("{root}.s{rk}."))
                .or_default()
                .push((format!("{name}.s{k}."), f.args()));
        }
    }
    let bi = BoundsInference {
        env,
        outputs,
        position,
        stages,
    };
    let mut w = Walk {
        bi: &bi,
        error: None,
    };
    let inner = w.mutate_stmt(s);
    if let Some(e) = w.error {
        return Err(e);
    }
    bi.add_bounds(inner, true)
}

#[cfg(test)]
#[path = "bounds_inference_empty_regions.rs"]
mod empty_region_tests;
