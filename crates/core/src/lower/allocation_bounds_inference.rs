//! Allocation bounds inference (the idea of Halide's
//! AllocationBoundsInference.cpp): how much storage each Realize needs.
//!
//! Assumes: bounds inference and sliding window are done, so every loop
//! nest runs over its final bounds (a slid loop's warm-up iterations and
//! cut regions included); each Realize's bounds are the variables
//! `f.v.min_realized` / `f.v.extent_realized`, not yet defined.
//!
//! Guarantees: right outside each Realize of `f`, for each dimension `v`,
//! `f.v.min_realized` and `f.v.extent_realized` are defined as the box of
//! `f` touched (read or written) anywhere in the Realize's body. Storage
//! therefore covers every access the final loop nests make, including a
//! ShiftInwards tile that a slide moved before the first required row and
//! the rows a rounded-up split computes past the required region. The
//! extent is never negative (a producer whose consumer does nothing in
//! some iteration touches an empty box there). A Func's `bound()` with a
//! min and an extent fixes the region instead, as in Halide, and is
//! checked against the touched box at run time.

use std::collections::HashMap;

use crate::analysis::bounds::{box_touched, Interval, Region, Scope};
use crate::analysis::simplify::simplify;
use crate::error::{Error, Result};
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, Mutator, Stmt, StmtNode};

use super::bounds_inference::{checks_before, explicit_bound_check};
use super::environment::Environment;

pub fn allocation_bounds_inference(s: &Stmt, env: &Environment) -> Result<Stmt> {
    let touched = touched_boxes(s)?;
    let mut m = AllocationBounds { env, touched, error: None };
    let out = m.mutate_stmt(s);
    match m.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The box each Realize's body touches, by the Realize's node. The walks
/// are independent, and a nest of Realizes makes each outer one walk all
/// the inner ones (local_laplacian's 29 walks were its costliest lowering
/// pass), so they run on the compilation's threads.
fn touched_boxes(s: &Stmt) -> Result<HashMap<usize, Option<Region>>> {
    let mut realizes = vec![];
    crate::ir::visit::for_each_stmt(s, &mut |st| {
        if let StmtNode::Realize { name, body, .. } = st.node() {
            realizes.push((node_key(st), name.clone(), body.clone()));
        }
    });
    // Spreading a handful of small walks costs more than it saves.
    let threads = if realizes.len() < 4 { 1 } else { crate::stack::compile_threads() };
    let boxes = crate::stack::parallel_map(
        &realizes,
        threads,
        &super::in_this_compilation(),
        &|(_, name, body)| box_touched(body, name, &Scope::default()),
    )?;
    Ok(realizes.into_iter().map(|(key, _, _)| key).zip(boxes).collect())
}

fn node_key(s: &Stmt) -> usize {
    s.node() as *const StmtNode as usize
}

struct AllocationBounds<'a> {
    env: &'a Environment,
    touched: HashMap<usize, Option<Region>>,
    error: Option<Error>,
}

impl Mutator for AllocationBounds<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::Realize { name, body, .. } = s.node() else {
            return mutate_stmt_children(self, s);
        };
        let touched = match self.touched.remove(&node_key(s)) {
            Some(touched) => touched,
            None => box_touched(body, name, &Scope::default()),
        };
        let s = mutate_stmt_children(self, s);
        match self.define_bounds(name, touched, s.clone()) {
            Ok(out) => out,
            Err(e) => {
                self.error.get_or_insert(e);
                s
            }
        }
    }
}

impl AllocationBounds<'_> {
    /// Wrap `realize` (of Func `name`) with the definitions of its bounds.
    fn define_bounds(&self, name: &str, touched: Option<Vec<Interval>>, realize: Stmt) -> Result<Stmt> {
        let f = self.env.get(name);
        let args = f.args();
        let bounds = f.read().schedule.bounds.clone();
        let mut checks = vec![];
        let mut lets = vec![];
        for (d, a) in args.iter().enumerate() {
            let iv = match touched.as_ref().map(|t| t[d].clone()) {
                // Never accessed (the Realize is dead, e.g. in a pruned
                // specialization): nothing to store.
                None => Interval::new(Some(Expr::i32(0)), Some(Expr::i32(-1))),
                Some(iv) => iv,
            };
            // (`box_touched` simplifies the box it returns.)
            let (Some(lo), Some(hi)) = (iv.min, iv.max) else {
                return Err(Error::user(format!(
                    "{name} is accessed over an unbounded domain in dimension {a}\n"
                )));
            };
            // The last-issued bound on this dimension with an extent.
            let explicit = bounds.iter().rev().find(|b| b.var == *a && b.extent.is_some());
            let (min, extent) = match explicit {
                Some(b) => {
                    let min = b.min.clone().unwrap_or_else(|| lo.clone());
                    let extent = b.extent.clone().expect("filtered on extent");
                    let max = simplify(&Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::i32(1)));
                    // A Realize nothing touches needs no check.
                    if touched.is_some() {
                        checks.push(explicit_bound_check(&name, a, min.clone(), max, &lo, &hi));
                    }
                    (simplify(&min), simplify(&extent))
                }
                None => {
                    let extent = Expr::max(
                        Expr::add(Expr::sub(hi, lo.clone()), Expr::i32(1)),
                        Expr::i32(0),
                    );
                    (lo, simplify(&extent))
                }
            };
            lets.push((format!("{name}.{a}.min_realized"), min));
            lets.push((format!("{name}.{a}.extent_realized"), extent));
        }
        Ok(Stmt::let_stmts(lets, checks_before(checks, realize)))
    }
}
