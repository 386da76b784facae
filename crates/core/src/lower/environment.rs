//! Environment and realization order.
//!
//! Assumes: `outputs` are defined Funcs. Guarantees: every Func reachable
//! from an output is in the environment — after calls are redirected to
//! wrappers (`wrap_calls`), so wrappers are reached and wrapped Funcs only
//! where something still calls them — and `order` lists them so that each
//! Func comes after every Func it calls (producers first, outputs last).
//! `sources` lists every Func the pipeline was built from (reachable
//! through calls or wrappers), as the user holds them. Undefined Funcs and
//! cycles of pure definitions are user errors. Funcs whose loops are fused
//! by compute_with form `groups` (lower/fused_groups.rs): each group is
//! contiguous in `order`, after every Func its members call, children of a
//! fused loop before its parent; every other Func is a group of one.

use std::collections::HashMap;

use super::fused_groups::{fused_pairs, realization_order, FusedPair};
use super::wrap_calls::wrap_calls;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::visit::for_each_expr;
use crate::ir::{CallKind, ExprNode};
use crate::lang::function::Function;

pub struct Environment {
    pub funcs: HashMap<String, Function>,
    /// Producers first; the outputs are last.
    pub order: Vec<String>,
    /// `order` cut into the groups of Funcs computed together (compute_with).
    pub groups: Vec<Vec<String>>,
    /// The stages fused by compute_with.
    pub fused_pairs: Vec<FusedPair>,
    /// The user's Funcs this pipeline depends on (including wrappers that
    /// end up unused): what a compiled pipeline must be cached against.
    pub sources: Vec<Function>,
}

impl Environment {
    pub fn get(&self, name: &str) -> &Function {
        &self.funcs[name]
    }
}

/// The Funcs called directly by `f`'s definitions (other than `f`); an
/// error if one no longer exists.
pub fn direct_callees(f: &Function) -> Result<Vec<Function>> {
    let mut out: Vec<Function> = vec![];
    let mut err = None;
    for v in f.definition_exprs() {
        for_each_expr(&v, &mut |e| {
            if let ExprNode::Call {
                name,
                kind: CallKind::Halide { func, .. },
                ..
            } = e.node()
            {
                if f.is(func) || out.iter().any(|g| g.is(func)) {
                    return;
                }
                match Function::called(func, name) {
                    Ok(g) => out.push(g),
                    Err(e) => {
                        err.get_or_insert(e);
                    }
                }
            }
        });
    }
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The images `f`'s definitions read that have `in_` wrappers (each once).
pub fn wrapped_images_read_by(f: &Function) -> Vec<crate::lang::parameter::Parameter> {
    let mut out: Vec<crate::lang::parameter::Parameter> = vec![];
    for v in f.definition_exprs() {
        for_each_expr(&v, &mut |e| {
            if let ExprNode::Call { kind: CallKind::Image { param: Some(p), .. }, .. } = e.node() {
                if !out.iter().any(|q| q.same_as(p)) && !p.image_wrappers().is_empty() {
                    out.push(p.clone());
                }
            }
        });
    }
    out
}

fn same_name_error(name: &str) -> Error {
    Error::user(format!(
        "Two different Funcs named \"{name}\" are used in the same pipeline; give them distinct names."
    ))
}

/// Every Func reachable from `outputs` through calls and wrappers, by name.
fn collect_sources(outputs: &[Function]) -> Result<HashMap<String, Function>> {
    let mut found: HashMap<String, Function> = HashMap::new();
    let mut stack: Vec<Function> = outputs.to_vec();
    while let Some(f) = stack.pop() {
        let name = f.name();
        if let Some(existing) = found.get(&name) {
            if !existing.same_as(&f) {
                return Err(same_name_error(&name));
            }
            continue;
        }
        found.insert(name, f.clone());
        stack.extend(direct_callees(&f)?);
        stack.extend(f.wrappers().into_iter().map(|(_, w)| w));
        for p in wrapped_images_read_by(&f) {
            stack.extend(p.image_wrappers().into_iter().map(|(_, w)| w));
        }
    }
    Ok(found)
}

pub fn build_environment(outputs: &[Function]) -> Result<Environment> {
    for f in outputs {
        if !f.has_pure_definition() {
            return Err(Error::user(format!(
                "Can't realize undefined Func {}.",
                f.name()
            )));
        }
    }
    let sources = collect_sources(outputs)?;
    let all = wrap_calls(&sources)?;

    let mut funcs: HashMap<String, Function> = HashMap::new();
    let mut order: Vec<String> = vec![];
    for f in outputs {
        visit_producers_first(&f.name(), &all, &mut funcs, &mut order)?;
    }
    let output_names: Vec<String> = outputs.iter().map(|f| f.name()).collect();
    let order = inlined_funcs_late(order, &funcs, &output_names)?;
    let fused_pairs = fused_pairs(&funcs)?;
    let groups = if fused_pairs.is_empty() {
        order.iter().map(|n| vec![n.clone()]).collect()
    } else {
        realization_order(&funcs, &order, &fused_pairs)?
    };
    let order = groups.concat();
    let mut sources: Vec<Function> = sources.into_values().collect();
    sources.sort_by_key(|f| f.id());
    // Realized: as in Halide, no more update definitions.
    for f in &sources {
        f.freeze();
    }
    Ok(Environment {
        funcs,
        order,
        groups,
        fused_pairs,
        sources,
    })
}

/// `order` with each Func left inline moved to just before its first
/// consumer. Funcs are placed in reverse order, so an inlined Func is then
/// substituted before any producer between it and its consumers is
/// placed: a call of a producer only in the arguments of an inlined Func
/// that ignores them (`g = c[h[x]] + f` with `c[x] = 7`) is gone by then,
/// and never decides where the producer may be computed, whatever the
/// order the user wrote the operands in (Halide's own choice depends on
/// the Funcs' names: group H17 in tests/fuzz/TRIAGE.md). Only inlined
/// Funcs move, and each stays after its callees; they have no
/// realizations, so nothing else's placement changes.
fn inlined_funcs_late(
    order: Vec<String>,
    funcs: &HashMap<String, Function>,
    outputs: &[String],
) -> Result<Vec<String>> {
    let is_inlined = |name: &str| {
        let f = &funcs[name];
        let c = f.read();
        !outputs.iter().any(|o| o == name)
            && !f.has_updates()
            && c.extern_def.is_none()
            && c.schedule.compute_level.is_inlined()
            && c.schedule.store_level.is_inlined()
            && c.schedule.hoist_storage_level.is_inlined()
    };
    let mut callees: HashMap<&str, Vec<String>> = HashMap::new();
    for name in &order {
        callees.insert(name, direct_callees(&funcs[name])?.iter().map(|g| g.name()).collect());
    }
    let (mut placed, mut moving): (Vec<String>, Vec<String>) =
        order.iter().cloned().partition(|n| !is_inlined(n));
    // Consumers first, so an inlined consumer of an inlined Func is placed
    // before its callee looks for it.
    moving.reverse();
    for name in moving {
        let first_consumer = placed
            .iter()
            .position(|c| callees[c.as_str()].iter().any(|g| *g == name));
        let at = first_consumer.unwrap_or_else(|| {
            // Called by nothing placed (cannot happen for a reachable
            // Func): keep it before what followed it.
            let original = order.iter().position(|n| *n == name).unwrap_or(0);
            placed
                .iter()
                .position(|c| order.iter().position(|n| n == c).unwrap_or(0) > original)
                .unwrap_or(placed.len())
        });
        placed.insert(at, name);
    }
    Ok(placed)
}

/// Depth-first from `root`: adds every Func it reaches to `funcs` and
/// appends each to `order` after all of its callees. A chain of Funcs can
/// be as long as the user makes it (one per Python loop iteration), so the
/// walk keeps its path on the heap, not on the call stack.
pub(crate) fn visit_producers_first(
    root: &str,
    all: &HashMap<String, Function>,
    funcs: &mut HashMap<String, Function>,
    order: &mut Vec<String>,
) -> Result<()> {
    if funcs.contains_key(root) {
        return Ok(());
    }
    // The path from `root`: each Func with the callees it has yet to visit
    // (reversed, so the next one pops off the end).
    let mut path: Vec<(String, Vec<String>)> = vec![];
    let mut on_path: std::collections::HashSet<String> = Default::default();
    let mut next = Some(root.to_string());
    loop {
        if let Some(name) = next.take() {
            let f = &all[&name];
            if !f.has_pure_definition() {
                return Err(Error::user(format!(
                    "Func {name} is used but has no definition."
                )));
            }
            funcs.insert(name.clone(), f.clone());
            on_path.insert(name.clone());
            let mut callees: Vec<String> = direct_callees(f)?.iter().map(|g| g.name()).collect();
            callees.reverse();
            path.push((name, callees));
        }
        let Some((name, callees)) = path.last_mut() else {
            return Ok(());
        };
        match callees.pop() {
            Some(g) if on_path.contains(&g) => {
                let mut cycle: Vec<String> = path.iter().map(|(n, _)| n.clone()).collect();
                cycle.push(g);
                return Err(Error::user(format!(
                    "Cycle in the pipeline: {} depend on each other.",
                    cycle.join(" -> ")
                )));
            }
            // Visited before, through another path: done.
            Some(g) if funcs.contains_key(&g) => {}
            Some(g) => next = Some(g),
            None => {
                on_path.remove(name.as_str());
                order.push(name.clone());
                path.pop();
            }
        }
    }
}

/// The concrete Buffers the pipeline's Funcs read (`buf[x, y]` on a Buffer),
/// by name, sorted. Two different Buffers under one name are an error.
pub fn bound_input_buffers(env: &Environment) -> Result<Vec<(String, Buffer)>> {
    let mut out: Vec<(String, Buffer)> = vec![];
    for name in &env.order {
        for v in env.get(name).definition_exprs() {
            let mut err = None;
            for_each_expr(&v, &mut |e| {
                let ExprNode::Call {
                    name,
                    kind: CallKind::Image { buffer, .. },
                    ..
                } = e.node()
                else {
                    return;
                };
                match (buffer, out.iter().find(|(n, _)| n == name)) {
                    // ImageParams are bound when the pipeline runs.
                    (None, _) => {}
                    (Some(b), Some((_, existing))) if !existing.same_as(b) => {
                        err = Some(Error::user(format!(
                            "Two different Buffers named \"{name}\" are used in the same pipeline."
                        )))
                    }
                    (Some(_), Some(_)) => {}
                    (Some(b), None) => out.push((name.clone(), b.clone())),
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}
