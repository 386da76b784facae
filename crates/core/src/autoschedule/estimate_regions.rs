//! The region of every Func a pipeline computes, from the estimates of its
//! outputs, buffer inputs and scalar inputs: bounds inference over the
//! definitions, consumers before producers, with every shape and parameter
//! replaced by its estimate (Halide's autoschedulers' `inference_bounds`).
//!
//! Assumes: `env` is the pipeline's environment. Guarantees: each Func's
//! entry has one extent per dimension, `None` where the estimates do not
//! make it a constant (a missing estimate, an unbounded access).

use std::collections::HashMap;

use crate::analysis::bounds::{bounds_of_expr, boxes_required_expr, region_union, Interval, Region, Scope};
use crate::analysis::simplify::simplify;
use crate::error::{Error, Result};
use crate::ir::visit::for_each_expr;
use crate::ir::{CallKind, Expr, ExprNode};
use crate::lang::function::Function;
use crate::lang::parameter::Parameter;
use crate::lower::environment::Environment;

/// Per Func, the estimated extent of each dimension.
pub type Extents = HashMap<String, Vec<Option<i64>>>;

fn interval(min: &Expr, extent: &Expr) -> Interval {
    let max = simplify(&Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::i32(1)));
    Interval::new(Some(min.clone()), Some(max))
}

/// Every Parameter the definitions of `funcs` read (scalars and the shapes
/// of buffers), by name.
fn parameters(funcs: &[&Function]) -> HashMap<String, Parameter> {
    let mut out = HashMap::new();
    for f in funcs {
        for e in f.definition_exprs() {
            for_each_expr(&e, &mut |e| match e.node() {
                ExprNode::Variable { param: Some(p), .. } => {
                    out.entry(p.name()).or_insert_with(|| p.clone());
                }
                ExprNode::Call {
                    kind: CallKind::Image { param: Some(p), .. },
                    ..
                } => {
                    out.entry(p.name()).or_insert_with(|| p.clone());
                }
                _ => {}
            });
        }
    }
    out
}

/// The estimates as a scope: a scalar's estimate, a buffer's
/// `name.min.d` and `name.extent.d`.
fn estimate_scope(params: &HashMap<String, Parameter>) -> Scope {
    let mut scope = Scope::default();
    for (name, p) in params {
        if p.is_buffer() {
            for (d, c) in p.constraints().iter().enumerate() {
                if let Some(m) = &c.min_estimate {
                    scope.insert(format!("{name}.min.{d}"), Interval::point(m.clone()));
                }
                if let Some(e) = &c.extent_estimate {
                    scope.insert(format!("{name}.extent.{d}"), Interval::point(e.clone()));
                }
            }
        } else if let Some(v) = p.lock().estimate.clone() {
            scope.insert(name.clone(), Interval::point(v));
        }
    }
    scope
}

/// The output's region from its estimates; Halide's error if one is
/// missing.
fn output_region(f: &Function) -> Result<Region> {
    let params = f.output_params();
    let constraints = params[0].constraints();
    f.args()
        .iter()
        .enumerate()
        .map(|(d, arg)| match constraints.get(d) {
            Some(c) if c.min_estimate.is_some() && c.extent_estimate.is_some() => Ok(interval(
                c.min_estimate.as_ref().unwrap(),
                c.extent_estimate.as_ref().unwrap(),
            )),
            _ => Err(Error::user(format!(
                "Please provide a valid estimate for dimension {arg} of output \"{}\"\n",
                f.name()
            ))),
        })
        .collect()
}

/// Add what `exprs` read under `scope` to `regions` (`me` excluded: an
/// update reading its own Func does not grow it).
fn add_required(exprs: &[Expr], scope: &Scope, me: &str, regions: &mut HashMap<String, Region>) {
    for e in exprs {
        for (name, r) in boxes_required_expr(e, scope) {
            if name == me {
                continue;
            }
            let merged = match regions.get(&name) {
                Some(old) => region_union(old, &r),
                None => r,
            };
            regions.insert(name, merged);
        }
    }
}

fn constant_extent(i: &Interval, scope: &Scope) -> Option<i64> {
    let (min, max) = (i.min.as_ref()?, i.max.as_ref()?);
    // The interval may still name estimated shapes; take their bounds.
    let lo = bounds_of_expr(min, scope).min?;
    let hi = bounds_of_expr(max, scope).max?;
    let e = simplify(&Expr::add(Expr::sub(hi, lo), Expr::i32(1)));
    e.as_int_const()
}

/// See the module comment.
pub fn estimate_regions(env: &Environment, outputs: &[Function]) -> Result<Extents> {
    let funcs: Vec<&Function> = env.order.iter().map(|n| env.get(n)).collect();
    let scope = estimate_scope(&parameters(&funcs));
    let mut regions: HashMap<String, Region> = HashMap::new();
    for f in outputs {
        let r = output_region(f)?;
        let merged = match regions.get(&f.name()) {
            Some(old) => region_union(old, &r),
            None => r,
        };
        regions.insert(f.name(), merged);
    }
    // Consumers first: a Func's region is complete before its producers'.
    for name in env.order.iter().rev() {
        let f = env.get(name);
        let Some(region) = regions.get(name).cloned() else {
            continue;
        };
        let args = f.args();
        let mut s = scope.clone();
        for (a, i) in args.iter().zip(&region) {
            s.insert(a.clone(), i.clone());
        }
        add_required(&f.values(), &s, name, &mut regions);
        for u in f.updates() {
            let mut su = s.clone();
            if let Some(d) = &u.domain {
                for rv in d.vars() {
                    let lo = bounds_of_expr(&rv.min, &su).min;
                    let max = Expr::sub(Expr::add(rv.min.clone(), rv.extent.clone()), Expr::i32(1));
                    let hi = bounds_of_expr(&max, &su).max;
                    su.insert(rv.name.clone(), Interval::new(lo, hi));
                }
            }
            for (v, e) in &u.lets {
                let b = bounds_of_expr(e, &su);
                su.insert(v.clone(), b);
            }
            let mut exprs = u.args.clone();
            exprs.extend(u.values.iter().cloned());
            if let Some(d) = &u.domain {
                exprs.push(d.predicate());
            }
            add_required(&exprs, &su, name, &mut regions);
        }
    }
    Ok(env
        .order
        .iter()
        .map(|name| {
            let dims = env.get(name).dimensions();
            let extents = match regions.get(name) {
                Some(r) => r.iter().map(|i| constant_extent(i, &scope)).collect(),
                None => vec![None; dims],
            };
            (name.clone(), extents)
        })
        .collect())
}
