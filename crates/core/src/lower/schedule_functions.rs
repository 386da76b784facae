//! Schedule functions: build each computed Func's loop nest from its
//! schedule (splits, fuses, loop order and types) and inject it, with a
//! Realize for its storage, at its compute and store levels. Inlined Funcs
//! are substituted into their callers. (Halide's ScheduleFunctions.cpp.)
//!
//! Assumes: a valid environment and realization order. Guarantees: the
//! result is one Stmt in which every non-inlined Func has a
//! `ProducerConsumer` pair and (outputs excepted) a `Realize`; loop
//! variables are named `f.s0.v`; each stage's loops are bounded by
//! `f.s0.v.loop_min/loop_extent` lets derived from the symbolic region
//! `f.s0.v.min`/`f.s0.v.max` that bounds inference defines later. Realize
//! bounds refer to `f.v.min_realized`/`f.v.extent_realized`, also defined by
//! bounds inference.

use std::collections::HashMap;

use super::environment::Environment;
use crate::analysis::substitute::substitute_map;
use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, ForType, Mutator, Range, Stmt, StmtNode, Type};
use crate::lang::function::Function;
use crate::schedule::{LoopLevel, Split, TailStrategy, OUTERMOST};

/// The prefix of every loop and bound name of stage 0 of `f`.
pub fn stage_prefix(func: &str) -> String {
    format!("{func}.s0.")
}

fn var(name: impl Into<String>) -> Expr {
    Expr::var_i32(name)
}

/// Maps the user's dimension names (as the schedule spells them) to the
/// internal, unique loop names of one stage.
#[derive(Clone, Debug, Default)]
pub struct DimNames {
    map: HashMap<String, String>,
}

impl DimNames {
    pub fn internal(&self, user: &str) -> Option<&String> {
        self.map.get(user)
    }
    /// A dimension whose qualified name ends in `.user` (e.g. `xo` for `x.xo`).
    pub fn find_suffix(&self, user: &str) -> Option<&String> {
        let suffix = format!(".{user}");
        let mut hits = self.map.iter().filter(|(k, _)| k.ends_with(&suffix));
        let first = hits.next();
        if hits.next().is_some() {
            None
        } else {
            first.map(|(_, v)| v)
        }
    }
}

/// Internal loop names of one stage. The front end already gives split
/// products unique, qualified names (`x.xo`, `x.xi`), which we keep; a
/// product that reuses its parent's name is qualified here.
pub fn dim_names(f: &Function) -> DimNames {
    let c = f.read();
    let mut map: HashMap<String, String> = c.args.iter().map(|a| (a.clone(), a.clone())).collect();
    map.insert(OUTERMOST.to_string(), OUTERMOST.to_string());
    for s in &c.stage.splits {
        match s {
            Split::Split {
                old, outer, inner, ..
            } => {
                let o = map.remove(old).unwrap_or_else(|| old.clone());
                map.insert(outer.clone(), product_name(&o, old, outer));
                map.insert(inner.clone(), product_name(&o, old, inner));
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                let i = map.remove(inner).unwrap_or_else(|| inner.clone());
                map.remove(outer);
                map.insert(fused.clone(), product_name(&i, inner, fused));
            }
            Split::Rename { old, new } => {
                let o = map.remove(old).unwrap_or_else(|| old.clone());
                map.insert(new.clone(), product_name(&o, old, new));
            }
        }
    }
    DimNames { map }
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

/// Resolve a LoopLevel to the name of the loop it refers to.
pub fn loop_level_name(level: &LoopLevel, env: &Environment) -> Result<Option<String>> {
    match level {
        LoopLevel::Inlined | LoopLevel::Root => Ok(None),
        LoopLevel::At { func, var, stage } => {
            let f = env.funcs.get(func).ok_or_else(|| {
                Error::user(format!(
                    "Func {func} is used as a loop level but is not part of this pipeline."
                ))
            })?;
            let names = dim_names(f);
            let internal = names.internal(var).or_else(|| names.find_suffix(var)).ok_or_else(|| {
                Error::user(format!("Func {func} has no loop over a variable named {var}, so it can't be used as a loop level."))
            })?;
            Ok(Some(format!("{func}.s{stage}.{internal}")))
        }
    }
}

/// The resolved tail strategy Halide uses when the user says `Auto`.
fn resolve_tail(tail: TailStrategy) -> TailStrategy {
    match tail {
        TailStrategy::Auto => TailStrategy::ShiftInwards,
        t => t,
    }
}

/// Build `produce f { ... }` for the pure definition of `f`.
pub fn build_produce(f: &Function) -> Result<Stmt> {
    let c = f.read();
    let name = c.name.clone();
    let p = stage_prefix(&name);
    if c.values.len() != 1 {
        return Err(Error::unimplemented(format!(
            "Func {name} with a Tuple of {} values",
            c.values.len()
        )));
    }

    // The definition, with pure vars renamed to the stage's loop variables.
    let renames: HashMap<String, Expr> = c
        .args
        .iter()
        .map(|a| (a.clone(), var(format!("{p}{a}"))))
        .collect();
    let values: Vec<Expr> = c
        .values
        .iter()
        .map(|v| substitute_map(&renames, v))
        .collect();
    let args: Vec<Expr> = c.args.iter().map(|a| var(format!("{p}{a}"))).collect();
    let mut body = Stmt::provide(name.clone(), values, args, Expr::bool_const(true));

    // Loop bounds of the pure dimensions, then of each split product.
    let mut bound_lets: Vec<(String, Expr)> = vec![];
    for a in &c.args {
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

    // Definitions of split dimensions in terms of the new loops, innermost first.
    let mut defs: Vec<(String, Expr)> = vec![];
    let mut guards: Vec<Expr> = vec![];
    let mut names: HashMap<String, String> =
        c.args.iter().map(|a| (a.clone(), a.clone())).collect();
    for s in &c.stage.splits {
        match s {
            Split::Split {
                old,
                outer,
                inner,
                factor,
                tail,
            } => {
                let o = names
                    .remove(old)
                    .ok_or_else(|| Error::internal(format!("split of unknown dim {old}")))?;
                let (on, inn) = (product_name(&o, old, outer), product_name(&o, old, inner));
                let (od, outd, innd) = (format!("{p}{o}"), format!("{p}{on}"), format!("{p}{inn}"));
                if factor.ty() != Type::i32() {
                    return Err(Error::user(format!(
                        "Split factor {factor} of Func {name} must be an Int(32)"
                    )));
                }
                let old_extent = var(format!("{od}.loop_extent"));
                let outer_extent = Expr::div(
                    Expr::add(old_extent.clone(), Expr::sub(factor.clone(), Expr::i32(1))),
                    factor.clone(),
                );
                bound_lets.push((format!("{outd}.loop_min"), Expr::i32(0)));
                bound_lets.push((format!("{outd}.loop_extent"), outer_extent.clone()));
                bound_lets.push((
                    format!("{outd}.loop_max"),
                    Expr::sub(outer_extent, Expr::i32(1)),
                ));
                bound_lets.push((format!("{innd}.loop_min"), Expr::i32(0)));
                bound_lets.push((format!("{innd}.loop_extent"), factor.clone()));
                bound_lets.push((
                    format!("{innd}.loop_max"),
                    Expr::sub(factor.clone(), Expr::i32(1)),
                ));
                let mut base = Expr::mul(var(&outd), factor.clone());
                match resolve_tail(*tail) {
                    TailStrategy::ShiftInwards => {
                        // As Halide: the unshifted base is the likely case,
                        // so loop partitioning peels the shifted last tile.
                        base = Expr::min(
                            Expr::intrinsic(
                                base.ty(),
                                crate::ir::Intrinsic::LikelyIfInnermost,
                                vec![base],
                            ),
                            Expr::sub(old_extent, factor.clone()),
                        );
                    }
                    TailStrategy::RoundUp => {}
                    TailStrategy::GuardWithIf => {
                        guards.push(Expr::likely(Expr::le(
                            var(&od),
                            var(format!("{od}.loop_max")),
                        )));
                    }
                    other => {
                        return Err(Error::unimplemented(format!(
                            "TailStrategy::{other:?} on a pure definition"
                        )));
                    }
                }
                let value = Expr::add(Expr::add(base, var(&innd)), var(format!("{od}.loop_min")));
                defs.push((od, value));
                names.insert(outer.clone(), on);
                names.insert(inner.clone(), inn);
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                let i = names
                    .remove(inner)
                    .ok_or_else(|| Error::internal(format!("fuse of unknown dim {inner}")))?;
                let o = names
                    .remove(outer)
                    .ok_or_else(|| Error::internal(format!("fuse of unknown dim {outer}")))?;
                let fname = product_name(&i, inner, fused);
                let (id, odim, fd) = (format!("{p}{i}"), format!("{p}{o}"), format!("{p}{fname}"));
                let inner_extent = var(format!("{id}.loop_extent"));
                let extent = Expr::mul(inner_extent.clone(), var(format!("{odim}.loop_extent")));
                bound_lets.push((format!("{fd}.loop_min"), Expr::i32(0)));
                bound_lets.push((format!("{fd}.loop_extent"), extent.clone()));
                bound_lets.push((format!("{fd}.loop_max"), Expr::sub(extent, Expr::i32(1))));
                // Defined innermost-first, so the outer comes after the inner here.
                defs.push((
                    id.clone(),
                    Expr::add(
                        Expr::modulo(var(&fd), inner_extent.clone()),
                        var(format!("{id}.loop_min")),
                    ),
                ));
                defs.push((
                    odim.clone(),
                    Expr::add(
                        Expr::div(var(&fd), inner_extent),
                        var(format!("{odim}.loop_min")),
                    ),
                ));
                names.insert(fused.clone(), fname);
            }
            Split::Rename { old, new } => {
                let o = names
                    .remove(old)
                    .ok_or_else(|| Error::internal(format!("rename of unknown dim {old}")))?;
                let nn = product_name(&o, old, new);
                for suffix in ["loop_min", "loop_extent", "loop_max"] {
                    bound_lets.push((format!("{p}{nn}.{suffix}"), var(format!("{p}{o}.{suffix}"))));
                }
                defs.push((format!("{p}{o}"), var(format!("{p}{nn}"))));
                names.insert(new.clone(), nn);
            }
        }
    }

    // Innermost: guards, then the split definitions (each defined before use).
    for g in guards.into_iter().rev() {
        body = Stmt::if_then_else(g, body, None);
    }
    for (n, v) in defs {
        body = Stmt::let_stmt(n, v, body);
    }

    // The loops, innermost first.
    for d in &c.stage.dims {
        if d.var == OUTERMOST {
            body = Stmt::for_loop(
                format!("{p}{OUTERMOST}"),
                Expr::i32(0),
                Expr::i32(1),
                ForType::Serial,
                body,
            );
            continue;
        }
        let internal = names.get(&d.var).ok_or_else(|| {
            Error::internal(format!(
                "Func {name} schedule mentions unknown dim {}",
                d.var
            ))
        })?;
        let ln = format!("{p}{internal}");
        body = Stmt::for_loop(
            ln.clone(),
            var(format!("{ln}.loop_min")),
            var(format!("{ln}.loop_extent")),
            d.for_type,
            body,
        );
    }

    for (n, v) in bound_lets.into_iter().rev() {
        body = Stmt::let_stmt(n, v, body);
    }
    Ok(Stmt::producer(name, body))
}

/// Substitute calls to the inlined Func `f` by its definition.
struct Inline<'a> {
    name: &'a str,
    args: Vec<String>,
    value: Expr,
}

impl Mutator for Inline<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e2 = mutate_expr_children(self, e);
        if let ExprNode::Call {
            name,
            args,
            kind: CallKind::Halide { .. },
        } = e2.node()
        {
            if name == self.name {
                let m: HashMap<String, Expr> = self
                    .args
                    .iter()
                    .cloned()
                    .zip(args.iter().cloned())
                    .collect();
                return substitute_map(&m, &self.value);
            }
        }
        e2
    }
}

pub fn inline_function(s: &Stmt, f: &Function) -> Result<Stmt> {
    let c = f.read();
    if c.values.len() != 1 {
        return Err(Error::unimplemented(format!(
            "Inlining Func {} with a Tuple of values",
            c.name
        )));
    }
    let mut m = Inline {
        name: &c.name,
        args: c.args.clone(),
        value: c.values[0].clone(),
    };
    Ok(m.mutate_stmt(s))
}

/// Insert `produce`/`consume` for `f` into the body of loop `loop_name`
/// (or at the top when `None`), and its Realize at the store level.
struct InjectRealization<'a> {
    func: &'a str,
    produce: Stmt,
    realize: Option<(Vec<Type>, Vec<Range>)>,
    compute_loop: Option<String>,
    store_loop: Option<String>,
    found_compute: bool,
    found_store: bool,
}

impl InjectRealization<'_> {
    fn wrap_compute(&mut self, body: Stmt) -> Stmt {
        self.found_compute = true;
        Stmt::block(vec![self.produce.clone(), Stmt::consumer(self.func, body)])
    }
    fn wrap_store(&mut self, body: Stmt) -> Stmt {
        self.found_store = true;
        match &self.realize {
            Some((types, bounds)) => Stmt::new(StmtNode::Realize {
                name: self.func.to_string(),
                types: types.clone(),
                memory_type: Default::default(),
                bounds: bounds.clone(),
                condition: Expr::bool_const(true),
                body,
            }),
            None => body,
        }
    }
}

impl Mutator for InjectRealization<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::For {
            name,
            min,
            extent,
            for_type,
            body,
        } = s.node()
        {
            let is_compute = self.compute_loop.as_deref() == Some(name.as_str());
            let is_store = self.store_loop.as_deref() == Some(name.as_str());
            if is_compute || is_store {
                let mut b = self.mutate_stmt(body);
                if is_compute {
                    b = self.wrap_compute(b);
                }
                if is_store {
                    b = self.wrap_store(b);
                }
                return Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b);
            }
        }
        mutate_stmt_children(self, s)
    }
}

/// Build the whole loop nest of the pipeline.
pub fn schedule_functions(env: &Environment, outputs: &[Function]) -> Result<Stmt> {
    let is_output = |n: &str| outputs.iter().any(|o| o.name() == n);
    let mut s = Stmt::no_op();
    let mut first = true;
    for name in env.order.iter().rev() {
        let f = env.get(name);
        let (compute_level, store_level) = {
            let c = f.read();
            (
                c.schedule.compute_level.clone(),
                c.schedule.store_level.clone(),
            )
        };
        if is_output(name) {
            // Outputs are computed at root, whatever their schedule says.
            let produce = build_produce(f)?;
            s = if first {
                produce
            } else {
                Stmt::block(vec![produce, s])
            };
            first = false;
            continue;
        }
        if compute_level.is_inlined() {
            s = inline_function(&s, f)?;
            continue;
        }
        let produce = build_produce(f)?;
        let compute_loop = loop_level_name(&compute_level, env)?;
        let store_level = if store_level.is_inlined() {
            compute_level.clone()
        } else {
            store_level
        };
        let store_loop = loop_level_name(&store_level, env)?;
        let c = f.read();
        let types = f.types();
        let bounds: Vec<Range> = c
            .args
            .iter()
            .map(|a| {
                Range::new(
                    var(format!("{name}.{a}.min_realized")),
                    var(format!("{name}.{a}.extent_realized")),
                )
            })
            .collect();
        drop(c);
        let mut inj = InjectRealization {
            func: name,
            produce,
            realize: Some((types, bounds)),
            compute_loop: compute_loop.clone(),
            store_loop: store_loop.clone(),
            found_compute: false,
            found_store: false,
        };
        s = inj.mutate_stmt(&s);
        if compute_loop.is_none() {
            s = inj.wrap_compute(s);
        }
        if store_loop.is_none() {
            s = inj.wrap_store(s);
        }
        if !inj.found_compute || !inj.found_store {
            return Err(Error::user(format!(
                "Func {name} is scheduled to be computed or stored at a loop that does not enclose its uses: {}",
                compute_level_description(&compute_level)
            )));
        }
    }
    Ok(s)
}

fn compute_level_description(l: &LoopLevel) -> String {
    match l {
        LoopLevel::Inlined => "inlined".into(),
        LoopLevel::Root => "root".into(),
        LoopLevel::At { func, var, .. } => format!("{func}.{var}"),
    }
}
