//! Bounds inference (Halide's BoundsInference.cpp).
//!
//! Assumes: the output of schedule_functions. For every Func computed at a
//! level (the root, or the body of a loop), defines at the top of that level
//! `f.s0.v.min` / `f.s0.v.max` — the region of `f` its consumers at that
//! level need, with every loop inside the level ranging over its full
//! extent — and `f.v.min_realized` / `f.v.extent_realized`, the region its
//! loop nest actually writes (larger than required when splits round up).
//! Consumers are handled before producers, so a producer's region can be
//! expressed in terms of its consumers' regions. At the root, an output's
//! region is its output buffer, and the checks that every buffer covers
//! what the pipeline touches are added (see buffer_checks).

use std::collections::HashMap;

use super::buffer_checks;
use crate::analysis::bounds::{box_provided, box_required, Interval, Scope};
use crate::analysis::simplify::simplify;
use crate::error::Result;
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, Mutator, Stmt, StmtNode};
use crate::lang::function::Function;

use super::environment::Environment;

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

/// The region of `f` in dimension `arg` after the user's `bound` /
/// `bound_extent`, given the inferred `[lo, hi]`. (Halide also asserts
/// that a bound covers what consumers need; that check is not made yet.)
fn apply_user_bound(f: &Function, arg: &str, lo: Expr, hi: Expr) -> (Expr, Expr) {
    let c = f.read();
    let Some(b) = c.schedule.bounds.iter().rev().find(|b| b.var == arg) else {
        return (lo, hi);
    };
    let lo = b.min.clone().unwrap_or(lo);
    match &b.extent {
        Some(e) => (
            lo.clone(),
            Expr::sub(Expr::add(lo, e.clone()), Expr::i32(1)),
        ),
        None => (lo, hi),
    }
}

/// The allocation extent of a realized region `[lo, hi]`. The region is
/// empty (hi < lo) where a producer is computed inside a loop iteration whose
/// consumer does nothing, e.g. the tail of a GuardWithIf split: allocate
/// nothing there rather than a negative size.
fn realized_extent(hi: Expr, lo: Expr) -> Expr {
    simplify(&Expr::max(
        Expr::add(Expr::sub(hi, lo), Expr::i32(1)),
        Expr::i32(0),
    ))
}

struct BoundsInference<'a> {
    env: &'a Environment,
    outputs: &'a [Function],
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
        let mut lets: Vec<(String, Expr)> = vec![];
        let empty = Scope::new();
        for name in &funcs {
            let f = self.env.get(name);
            let args = f.args();
            let p = format!("{name}.s0.");
            let output = self.is_output(name) && at_root;
            // The region consumers need (for an output: its buffer), in
            // terms of symbols defined outside this level.
            let required = if output {
                None
            } else {
                box_required(&body, name, &empty)
            };
            for (d, a) in args.iter().enumerate() {
                let (lo, hi) = if output {
                    let min = var(format!("{name}.min.{d}"));
                    let extent = var(format!("{name}.extent.{d}"));
                    (min.clone(), Expr::sub(Expr::add(min, extent), Expr::i32(1)))
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
                let (lo, hi) = apply_user_bound(f, a, lo, hi);
                lets.push((format!("{p}{a}.min"), simplify(&lo)));
                lets.push((format!("{p}{a}.max"), simplify(&hi)));
            }
            if output {
                continue;
            }
            if !realized.contains(name) {
                // Stored further out: the allocation's region is set there.
                continue;
            }
            // The region actually written, for the allocation.
            let provided = box_provided(&body, name, &empty);
            for (d, a) in args.iter().enumerate() {
                let iv = provided.as_ref().map(|r| r[d].clone());
                let (lo, hi) = match iv {
                    Some(Interval {
                        min: Some(lo),
                        max: Some(hi),
                    }) => (lo, hi),
                    _ => (var(format!("{p}{a}.min")), var(format!("{p}{a}.max"))),
                };
                lets.push((format!("{name}.{a}.min_realized"), simplify(&lo)));
                lets.push((
                    format!("{name}.{a}.extent_realized"),
                    realized_extent(hi, lo),
                ));
            }
        }
        // Funcs stored here but computed in a loop inside: their storage
        // covers everything the loops inside write.
        for name in &realized {
            if funcs.contains(name) {
                continue;
            }
            let args = self.env.get(name).args();
            let provided = box_provided(&body, name, &empty);
            for (d, a) in args.iter().enumerate() {
                match provided.as_ref().map(|r| r[d].clone()) {
                    Some(Interval { min: Some(lo), max: Some(hi) }) => {
                        lets.push((format!("{name}.{a}.min_realized"), simplify(&lo)));
                        lets.push((
                            format!("{name}.{a}.extent_realized"),
                            realized_extent(hi, lo),
                        ));
                    }
                    _ => {
                        return Err(crate::Error::user(format!(
                            "Can't infer the storage bounds of Func {name} in dimension {a} at its store level."
                        )))
                    }
                }
            }
        }
        let mut s = body;
        if at_root {
            let checks = buffer_checks::buffer_checks(&s, self.env, self.outputs)?;
            if !checks.is_empty() {
                let mut v = checks;
                v.push(s);
                s = Stmt::block(v);
            }
        }
        for (n, v) in lets.into_iter().rev() {
            s = Stmt::let_stmt(n, v, s);
        }
        Ok(s)
    }
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
            let b = self.mutate_stmt(body);
            let b = match self.bi.add_bounds(b.clone(), false) {
                Ok(x) => x,
                Err(e) => {
                    self.error.get_or_insert(e);
                    b
                }
            };
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
    let bi = BoundsInference {
        env,
        outputs,
        position,
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
