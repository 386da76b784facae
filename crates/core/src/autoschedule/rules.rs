//! ferrohalide's scheduling rules, after the CPU rules of Halide's Li2018
//! autoscheduler, with inlining added:
//!
//! - a Func that is not an output and has no update is inlined when every
//!   use reads it pointwise (at the consumer's own variables) or when its
//!   definition is trivial (at most one call, a few operations: boundary
//!   conditions, casts); every other Func is computed at root;
//! - a computed stage vectorizes its innermost pure dimension by the
//!   target's natural vector width (when its estimated extent reaches the
//!   width), fuses the other pure dimensions into one and parallelizes it,
//!   in chunks when there are more than eight iterations per thread;
//! - an update with RVars keeps them serial, between its vectorized
//!   dimension (innermost) and its parallel one;
//! - in a pipeline where another Func reads an output, no loop is split
//!   (only parallelized).
//!
//! Assumes: the pipeline's environment builds. Guarantees: each directive
//! goes through the scheduling API and is kept only if it is accepted; a
//! Func or stage the user already scheduled is left alone.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use super::estimate_regions::estimate_regions;
use super::RuleParams;
use crate::error::Result;
use crate::ir::visit::for_each_expr;
use crate::ir::{CallKind, Expr, ExprNode, ForType};
use crate::lang::func::Func;
use crate::lang::function::Function;
use crate::lang::stage::{Stage, VarOrRVar};
use crate::lower::environment::{build_environment, Environment};
use crate::schedule::TailStrategy;
use crate::target::Target;

/// Calls to `callee` in `e`, as their argument lists.
fn calls_to(e: &Expr, callee: &str, out: &mut Vec<Vec<Expr>>) {
    for_each_expr(e, &mut |e| {
        if let ExprNode::Call { name, args, kind: CallKind::Halide { .. }, .. } = e.node() {
            if name == callee {
                out.push(args.clone());
            }
        }
    });
}

/// Are all of `calls` at distinct plain variables among `vars`?
fn pointwise(calls: &[Vec<Expr>], vars: &[String]) -> bool {
    calls.iter().all(|args| {
        let names: Vec<&str> = args
            .iter()
            .filter_map(|a| match a.node() {
                ExprNode::Variable { name, param: None, rdom: None } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let distinct: HashSet<&str> = names.iter().copied().collect();
        names.len() == args.len() && distinct.len() == names.len() && names.iter().all(|n| vars.iter().any(|v| v == n))
    })
}

/// Does every consumer in `env` read `f` pointwise?
fn read_pointwise(f: &Function, env: &Environment) -> bool {
    let me = f.name();
    env.order.iter().filter(|n| **n != me).all(|n| {
        let c = env.get(n);
        let args = c.args();
        let mut calls = vec![];
        for v in c.values() {
            calls_to(&v, &me, &mut calls);
        }
        if !pointwise(&calls, &args) {
            return false;
        }
        c.updates().iter().all(|u| {
            let mut calls = vec![];
            for e in u.args.iter().chain(&u.values) {
                calls_to(e, &me, &mut calls);
            }
            if let Some(d) = &u.domain {
                calls_to(&d.predicate(), &me, &mut calls);
            }
            pointwise(&calls, &u.pure_vars(&args))
        })
    })
}

/// Is `f` called by another Func of `env`?
fn read_by_others(f: &Function, env: &Environment) -> bool {
    let me = f.name();
    env.order.iter().filter(|n| **n != me).any(|n| {
        let mut calls = vec![];
        for e in env.get(n).definition_exprs() {
            calls_to(&e, &me, &mut calls);
        }
        !calls.is_empty()
    })
}

/// At most one call (to a Func or an image) and a few operations.
fn trivial(f: &Function) -> bool {
    let (mut calls, mut nodes) = (0, 0);
    for v in f.values() {
        for_each_expr(&v, &mut |e| {
            nodes += 1;
            if let ExprNode::Call { kind: CallKind::Halide { .. } | CallKind::Image { .. }, .. } = e.node() {
                calls += 1;
            }
        });
    }
    calls <= 1 && nodes <= 40
}

fn inlinable(f: &Function, env: &Environment) -> bool {
    !f.has_updates() && (trivial(f) || read_pointwise(f, env))
}

/// Vectorize, fuse and parallelize one stage over its pure `vars`
/// (innermost first) of estimated `extents`, with its `rvars` (innermost
/// first) kept serial between the vectorized and the parallel loops; the
/// directives applied, as C++ text.
fn schedule_stage(
    stage: &Stage,
    vars: &[String],
    extents: &[Option<i64>],
    rvars: &[String],
    vector_size: i64,
    may_split: bool,
    params: &RuleParams,
) -> String {
    let mut text = String::new();
    let Some(first) = vars.first() else {
        return text;
    };
    let tail = TailStrategy::Auto;
    let rv = |r: &String| VarOrRVar::rvar(r);
    let first_extent = extents[0];
    let mut vectorized = false;
    if may_split && vector_size > 1 && first_extent.is_none_or(|e| e >= vector_size) {
        let before = stage.schedule();
        let mut inside: Vec<VarOrRVar> = vec![VarOrRVar::var(first)];
        inside.extend(rvars.iter().map(rv));
        let inner = format!("{first}_vi");
        let ok = (rvars.is_empty() || stage.reorder(&inside).is_ok())
            && stage
                .split(VarOrRVar::var(first), VarOrRVar::var(first), VarOrRVar::var(&inner), Expr::i32(vector_size), tail)
                .is_ok()
            && stage.set_for_type(VarOrRVar::var(&inner), ForType::Vectorized).is_ok();
        if ok {
            vectorized = true;
            if !rvars.is_empty() {
                let names: Vec<&str> = rvars.iter().map(|s| s.as_str()).collect();
                let _ = write!(text, ".reorder({first}, {})", names.join(", "));
            }
            let _ = write!(text, ".vectorize({first}, {vector_size})");
        } else if let Some(b) = before {
            stage.restore(b);
        }
    }
    let mut parallel: Vec<(String, Option<i64>)> =
        vars[1..].iter().cloned().zip(extents[1..].iter().copied()).collect();
    if parallel.is_empty() {
        // One dimension: its outer loop (or itself) is the parallel one.
        let e = first_extent.map(|e| if vectorized { (e + vector_size - 1) / vector_size } else { e });
        parallel.push((first.clone(), e));
    }
    // Fuse inner to outer into one loop.
    let mut fused = parallel[0].0.clone();
    let mut count = parallel[0].1;
    for (v, e) in &parallel[1..] {
        let name = format!("{fused}_{v}");
        if stage.fuse(VarOrRVar::var(&fused), VarOrRVar::var(v), VarOrRVar::var(&name)).is_err() {
            break;
        }
        let _ = write!(text, ".fuse({fused}, {v}, {name})");
        fused = name;
        count = match (count, e) {
            (Some(a), Some(b)) => Some(a.saturating_mul(*b)),
            _ => None,
        };
    }
    // The RVars go inside the parallel loop (and the vectorized var's
    // outer loop).
    if vectorized && !rvars.is_empty() {
        let mut order: Vec<VarOrRVar> = rvars.iter().map(rv).collect();
        if fused != *first {
            order.push(VarOrRVar::var(first));
        }
        order.push(VarOrRVar::var(&fused));
        if stage.reorder(&order).is_ok() {
            let names: Vec<String> = order.iter().map(|v| v.name.clone()).collect();
            let _ = write!(text, ".reorder({})", names.join(", "));
        }
    }
    if count.is_some_and(|n| n < 2) {
        return text;
    }
    let per_task = if may_split { count.map_or(1, |n| n / (params.parallelism * 8)) } else { 1 };
    if per_task > 1 {
        let ok = stage
            .split_and_set_type(VarOrRVar::var(&fused), Expr::i32(per_task), tail, ForType::Parallel, false)
            .is_ok();
        if ok {
            let _ = write!(text, ".parallel({fused}, {per_task})");
        }
    } else if stage.set_for_type(VarOrRVar::var(&fused), ForType::Parallel).is_ok() {
        let _ = write!(text, ".parallel({fused})");
    }
    text
}

fn c_identifier(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

fn user_scheduled(f: &Function) -> bool {
    let c = f.read();
    !c.schedule.compute_level.is_inlined() || c.stage.touched || !c.specializations.is_empty()
}

/// Schedule `outputs`' pipeline; the C++ source of what was done.
pub fn schedule_pipeline(outputs: &[Function], target: &Target, params: &RuleParams) -> Result<String> {
    let env = build_environment(outputs)?;
    let extents = estimate_regions(&env, outputs)?;
    let output_names: HashSet<String> = outputs.iter().map(|f| f.name()).collect();
    // The environment may hold private copies (with wrapped calls); the
    // schedule goes on the user's Funcs.
    let users: HashMap<String, Function> = env.sources.iter().map(|f| (f.name(), f.clone())).collect();

    // An output another Func reads gets a buffer sized for what its
    // consumers need over their requested region (in Halide too), not over
    // their rounded-up or shifted loops: in such a pipeline no loop is
    // split, only parallelized.
    let may_split = !outputs.iter().any(|f| read_by_others(f, &env));
    let mut body = String::new();
    for (index, name) in env.order.iter().enumerate().rev() {
        let (Some(f), Some(dims)) = (users.get(name), extents.get(name)) else {
            continue;
        };
        let analysed = env.get(name);
        if user_scheduled(f) || (!output_names.contains(name) && inlinable(analysed, &env)) {
            continue;
        }
        let id = c_identifier(name);
        let _ = writeln!(body, "    Func {id} = pipeline.get_func({index});");
        let handle = Func::from_function(f.clone());
        let mut line = id.clone();
        if !output_names.contains(name) {
            handle.compute_root();
            line.push_str(".compute_root()");
        }
        let types = f.output_types();
        let vector_size = types.first().map_or(1, |t| target.natural_vector_size(*t) as i64);
        let args = f.args();
        line.push_str(&schedule_stage(&Stage::pure(f), &args, dims, &[], vector_size, may_split, params));
        let _ = writeln!(body, "    {line};");
        for (k, u) in f.updates().iter().enumerate() {
            if u.stage.touched || !u.specializations.is_empty() {
                continue;
            }
            let pure = u.pure_vars(&args);
            let ext: Vec<Option<i64>> = pure
                .iter()
                .map(|v| args.iter().position(|a| a == v).and_then(|d| dims[d]))
                .collect();
            let stage = Stage::of_definition(f, k + 1);
            let rvars: Vec<String> = u.domain.as_ref().map_or(vec![], |d| d.vars().into_iter().map(|r| r.name).collect());
            let text = schedule_stage(&stage, &pure, &ext, &rvars, vector_size, may_split, params);
            if !text.is_empty() {
                let _ = writeln!(body, "    {id}.update({k}){text};");
            }
        }
    }
    let mut src = String::new();
    let _ = writeln!(src, "// Chosen by ferrohalide's scheduling rules for target={target}");
    let _ = writeln!(src, "// with parallelism={}.", params.parallelism);
    let _ = writeln!(src, "// Funcs not named here are inlined or keep the user's schedule.");
    src.push_str(&body);
    Ok(src)
}
