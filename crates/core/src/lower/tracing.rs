//! Tracing (after Halide's Tracing.cpp): the loads, stores, realizations
//! and pipeline boundaries of traced Funcs become calls of the `trace`
//! intrinsic, which code generation turns into calls of the runtime's
//! `halide_trace`. Runs right after the loop nests are built, as in Halide,
//! so every later pass sees the events as ordinary (impure) calls.
//!
//! Event ids: `halide_trace` returns an id per event. A realization's
//! begin event defines `<f>.trace_id`, the parent of the events inside it
//! (produce/consume events redefine it for their bodies); loads of inputs,
//! realization events and tags have the pipeline's begin event
//! (`pipeline.trace_id`) as parent.

use std::collections::{HashMap, HashSet};

use crate::analysis::bounds::{box_touched, Scope};
use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Mutator, Range, Stmt, StmtNode, Type};
use crate::lang::function::Function;
use crate::lang::trace_settings::TraceSettings;
use crate::target::Target;

use super::environment::Environment;

/// Halide's `halide_trace_event_code_t`.
pub mod event {
    pub const LOAD: i32 = 0;
    pub const STORE: i32 = 1;
    pub const BEGIN_REALIZATION: i32 = 2;
    pub const END_REALIZATION: i32 = 3;
    pub const PRODUCE: i32 = 4;
    pub const END_PRODUCE: i32 = 5;
    pub const CONSUME: i32 = 6;
    pub const END_CONSUME: i32 = 7;
    pub const BEGIN_PIPELINE: i32 = 8;
    pub const END_PIPELINE: i32 = 9;
    pub const TAG: i32 = 10;
}

const PIPELINE_ID: &str = "pipeline.trace_id";

/// One trace event, as the arguments of a `trace` call: func name, event
/// code, parent id, value index, the number of tag parts and the parts
/// (strings and numbers, concatenated at run time), whether there is a
/// value, the value, then the coordinates. For a vector value each
/// coordinate is a vector of the same lanes (Halide's grouping).
#[derive(Clone, Debug)]
pub struct TraceEvent {
    pub func: String,
    pub event: i32,
    pub parent_id: Expr,
    pub value_index: i32,
    pub tag: Vec<Expr>,
    pub value: Option<Expr>,
    pub coordinates: Vec<Expr>,
}

impl TraceEvent {
    fn new(func: &str, event: i32, parent_id: Expr) -> TraceEvent {
        TraceEvent {
            func: func.to_string(),
            event,
            parent_id,
            value_index: 0,
            tag: vec![],
            value: None,
            coordinates: vec![],
        }
    }

    pub fn to_expr(&self) -> Expr {
        let mut args = vec![
            Expr::string(self.func.clone()),
            Expr::i32(self.event as i64),
            self.parent_id.clone(),
            Expr::i32(self.value_index as i64),
            Expr::i32(self.tag.len() as i64),
        ];
        args.extend(self.tag.iter().cloned());
        args.push(Expr::i32(self.value.is_some() as i64));
        args.extend(self.value.iter().cloned());
        args.extend(self.coordinates.iter().cloned());
        Expr::intrinsic(Type::i32(), Intrinsic::Trace, args)
    }

    /// The event a `trace` call's arguments describe.
    pub fn from_args(args: &[Expr]) -> Result<TraceEvent> {
        let bad = || Error::internal("malformed trace call");
        let int = |i: usize| -> Result<i64> {
            args.get(i).and_then(|a| a.as_int_const()).ok_or_else(bad)
        };
        let func = match args.first().map(|a| a.node()) {
            Some(ExprNode::StringImm(s)) => s.clone(),
            _ => return Err(bad()),
        };
        let n_tag = int(4)? as usize;
        let has_value_at = 5 + n_tag;
        let has_value = int(has_value_at)? != 0;
        let coords_at = has_value_at + 1 + has_value as usize;
        if args.len() < coords_at {
            return Err(bad());
        }
        Ok(TraceEvent {
            func,
            event: int(1)? as i32,
            parent_id: args[2].clone(),
            value_index: int(3)? as i32,
            tag: args[5..has_value_at].to_vec(),
            value: has_value.then(|| args[has_value_at + 1].clone()),
            coordinates: args[coords_at..].to_vec(),
        })
    }
}

/// `value` evaluated after reporting it: `let t = value in
/// return_second(trace(... t ...), t)`.
fn traced_value(name: String, value: &Expr, mut ev: TraceEvent, only_if: Option<&Expr>) -> Expr {
    let t = Expr::var(value.ty(), name.clone());
    ev.value = Some(t.clone());
    let mut event = ev.to_expr();
    if let Some(c) = only_if {
        // A predicated store (PredicateStores) reports only the points it
        // writes, as Halide's `if_then_else(predicate, trace)`.
        event = Expr::intrinsic(event.ty(), Intrinsic::IfThenElse, vec![c.clone(), event]);
    }
    let body = Expr::intrinsic(value.ty(), Intrinsic::ReturnSecond, vec![event, t]);
    Expr::let_(name, value.clone(), body)
}

struct InjectTracing<'a> {
    env: &'a Environment,
    /// What the target traces in every Func.
    all: TraceSettings,
    /// Tags to report, in the order their Funcs (or inputs) were met.
    tags: Vec<(String, Vec<String>)>,
    /// The Funcs and inputs with events, and the types of their values.
    touched: HashMap<String, Vec<Option<Type>>>,
    n_values: usize,
}

impl InjectTracing<'_> {
    fn function(&self, name: &str) -> Option<&Function> {
        self.env.funcs.get(name)
    }

    /// What is traced of the Func `name`: its own settings and the
    /// target's.
    fn tracing_of(&self, name: &str) -> TraceSettings {
        let own = self.function(name).map(|f| f.read().tracing.clone()).unwrap_or_default();
        self.with_all(own)
    }

    fn with_all(&self, own: TraceSettings) -> TraceSettings {
        TraceSettings {
            loads: own.loads || self.all.loads,
            stores: own.stores || self.all.stores,
            realizations: own.realizations || self.all.realizations,
            tags: own.tags,
        }
    }

    fn add_tags(&mut self, name: &str, tags: &[String]) {
        if !tags.is_empty() && !self.tags.iter().any(|(n, _)| n == name) {
            self.tags.push((name.to_string(), tags.to_vec()));
        }
    }

    fn touch(&mut self, name: &str, value_index: usize, ty: Type) {
        let types = self.touched.entry(name.to_string()).or_default();
        if types.len() <= value_index {
            types.resize(value_index + 1, None);
        }
        types[value_index].get_or_insert(ty);
    }

    fn value_name(&mut self) -> String {
        self.n_values += 1;
        format!("trace.t{}", self.n_values)
    }

    fn load(&mut self, e: &Expr, name: &str, value_index: usize, parent: Expr, args: &[Expr]) -> Expr {
        self.touch(name, value_index, e.ty());
        let mut ev = TraceEvent::new(name, event::LOAD, parent);
        ev.value_index = value_index as i32;
        ev.coordinates = args.to_vec();
        let v = self.value_name();
        traced_value(v, e, ev, None)
    }

    fn provide(&mut self, name: &str, values: &[Expr], args: &[Expr], predicate: &Expr) -> Stmt {
        let parent = Expr::var_i32(format!("{name}.trace_id"));
        // Coordinates that are computed go first into lets, so that loads
        // in them (scatters) are reported before the store.
        let mut lets = vec![];
        let coords: Vec<Expr> = args
            .iter()
            .map(|a| {
                if matches!(a.node(), ExprNode::Variable { .. }) || a.is_const() {
                    return a.clone();
                }
                let n = self.value_name();
                lets.push((n.clone(), a.clone()));
                Expr::var(a.ty(), n)
            })
            .collect();
        let traced: Vec<Expr> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                self.touch(name, i, v.ty());
                let mut ev = TraceEvent::new(name, event::STORE, parent.clone());
                ev.value_index = i as i32;
                ev.coordinates = coords.clone();
                let t = self.value_name();
                traced_value(t, v, ev, (!predicate.is_true()).then_some(predicate))
            })
            .collect();
        let store = Stmt::provide(name, traced, coords, predicate.clone());
        Stmt::let_stmts(lets, store)
    }

    fn realize(&mut self, s: &Stmt, name: &str, types: &[Type], bounds: &[Range], body: Stmt) -> Stmt {
        let own = self.function(name).map(|f| f.read().tracing.clone()).unwrap_or_default();
        let tracing = self.with_all(own.clone());
        let id = format!("{name}.trace_id");
        let body = if tracing.realizations {
            self.add_tags(name, &tracing.tags);
            for (i, t) in types.iter().enumerate() {
                self.touch(name, i, *t);
            }
            let mut ev = TraceEvent::new(name, event::BEGIN_REALIZATION, Expr::var_i32(PIPELINE_ID));
            ev.coordinates = bounds.iter().flat_map(|r| [r.min.clone(), r.extent.clone()]).collect();
            let begin = ev.to_expr();
            ev.event = event::END_REALIZATION;
            ev.parent_id = Expr::var_i32(id.clone());
            let end = Stmt::evaluate(ev.to_expr());
            Stmt::let_stmt(id, begin, Stmt::block(vec![body, end]))
        } else if own.stores || own.loads {
            Stmt::let_stmt(id, Expr::i32(0), body)
        } else {
            body
        };
        with_realize_body(s, body)
    }

    fn producer_consumer(&mut self, name: &str, is_producer: bool, body: Stmt) -> Stmt {
        let pc = |body| Stmt::new(StmtNode::ProducerConsumer {
            name: name.to_string(),
            is_producer,
            body,
        });
        let Some(f) = self.function(name).cloned() else {
            return pc(body);
        };
        if !self.tracing_of(name).realizations {
            return pc(body);
        }
        let id = format!("{name}.trace_id");
        let mut ev = TraceEvent::new(name, event::PRODUCE, Expr::var_i32(id.clone()));
        // The region of the pure stage.
        for a in f.args() {
            let min = Expr::var_i32(format!("{name}.s0.{a}.min"));
            let max = Expr::var_i32(format!("{name}.s0.{a}.max"));
            ev.coordinates.push(min.clone());
            ev.coordinates.push(Expr::sub(Expr::add(max, Expr::i32(1)), min));
        }
        if !is_producer {
            ev.event = event::CONSUME;
        }
        let begin = ev.to_expr();
        ev.event = if is_producer { event::END_PRODUCE } else { event::END_CONSUME };
        let end = Stmt::evaluate(ev.to_expr());
        Stmt::let_stmt(id, begin, pc(Stmt::block(vec![body, end])))
    }
}

fn with_realize_body(s: &Stmt, body: Stmt) -> Stmt {
    match s.node() {
        StmtNode::Realize {
            name,
            types,
            memory_type,
            bounds,
            condition,
            ..
        } => Stmt::new(StmtNode::Realize {
            name: name.clone(),
            types: types.clone(),
            memory_type: *memory_type,
            bounds: bounds.clone(),
            condition: condition.clone(),
            body,
        }),
        _ => body,
    }
}

impl Mutator for InjectTracing<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        let ExprNode::Call { name, args, kind } = e.node() else {
            return e;
        };
        match kind {
            CallKind::Halide { value_index, .. } => {
                let tracing = self.tracing_of(name);
                if !tracing.loads {
                    return e;
                }
                self.add_tags(name, &tracing.tags);
                let parent = Expr::var_i32(format!("{name}.trace_id"));
                self.load(&e, name, *value_index, parent, args)
            }
            CallKind::Image { param: Some(p), .. } => {
                let tracing = self.with_all(p.tracing());
                if !tracing.loads {
                    return e;
                }
                self.add_tags(name, &tracing.tags);
                self.load(&e, name, 0, Expr::var_i32(PIPELINE_ID), args)
            }
            _ => e,
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } if self.tracing_of(name).stores => {
                let values: Vec<Expr> = values.iter().map(|v| self.mutate_expr(v)).collect();
                let args: Vec<Expr> = args.iter().map(|a| self.mutate_expr(a)).collect();
                let predicate = self.mutate_expr(predicate);
                self.provide(name, &values, &args, &predicate)
            }
            StmtNode::Realize {
                name,
                types,
                bounds,
                body,
                ..
            } if self.function(name).is_some() => {
                let body = self.mutate_stmt(body);
                self.realize(s, name, types, bounds, body)
            }
            StmtNode::ProducerConsumer {
                name,
                is_producer,
                body,
            } => {
                let body = self.mutate_stmt(body);
                self.producer_consumer(name, *is_producer, body)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// The target features that trace every Func (Halide's `trace_loads`,
/// `trace_stores`, `trace_realizations`, `trace_pipeline`; `trace_all` is
/// the first three).
mod feature {
    use crate::target::Feature;
    pub const LOADS: Feature = Feature(47);
    pub const STORES: Feature = Feature(48);
    pub const REALIZATIONS: Feature = Feature(49);
    pub const PIPELINE: Feature = Feature(50);
}

/// What `add_type_and_dim_tags` reports once the regions are known: the
/// traced Funcs and inputs with their value types, in realization order.
#[derive(Clone, Debug, Default)]
pub struct TracedFuncs(Vec<(String, Vec<Option<Type>>)>);

/// Inject the trace events of every traced Func of `env` into the loop
/// nest `s` of the pipeline `pipeline_name` computing `outputs`.
pub fn inject_tracing(
    s: &Stmt,
    env: &Environment,
    outputs: &[Function],
    pipeline_name: &str,
    target: &Target,
) -> Result<(Stmt, TracedFuncs)> {
    // As in Halide, tracing loads or stores everywhere traces realizations
    // too.
    let all = TraceSettings {
        loads: target.has_feature(feature::LOADS),
        stores: target.has_feature(feature::STORES),
        realizations: [feature::LOADS, feature::STORES, feature::REALIZATIONS]
            .into_iter()
            .any(|f| target.has_feature(f)),
        tags: vec![],
    };
    let mut tracing = InjectTracing {
        env,
        all,
        tags: vec![],
        touched: HashMap::new(),
        n_values: 0,
    };
    // The outputs are realized by the caller: a realization of their
    // buffers stands in for them while the events are injected.
    let output_names: HashSet<String> = outputs.iter().map(|o| o.name()).collect();
    let mut wrapped = s.clone();
    for o in outputs {
        let buffer = crate::lang::tuple::element_buffer_names(o)
            .into_iter()
            .next()
            .unwrap_or_else(|| o.name());
        let bounds = (0..o.dimensions())
            .map(|d| Range {
                min: Expr::var_i32(format!("{buffer}.min.{d}")),
                extent: Expr::var_i32(format!("{buffer}.extent.{d}")),
            })
            .collect();
        wrapped = Stmt::new(StmtNode::Realize {
            name: o.name(),
            types: o.types(),
            memory_type: Default::default(),
            bounds,
            condition: Expr::bool_const(true),
            body: wrapped,
        });
    }
    let injected = tracing.mutate_stmt(&wrapped);
    let body = strip_realizations(&injected, &output_names);
    if tracing.touched.is_empty() && tracing.tags.is_empty() && !target.has_feature(feature::PIPELINE) {
        return Ok((s.clone(), TracedFuncs::default()));
    }
    let pipeline_id = Expr::var_i32(PIPELINE_ID);
    // The user's tags, each Func's in the order added (each Func's types
    // and region go before them, see `add_type_and_dim_tags`).
    let mut stmts = vec![];
    for (name, tags) in &tracing.tags {
        for tag in tags {
            let mut ev = TraceEvent::new(name, event::TAG, pipeline_id.clone());
            ev.tag = vec![Expr::string(tag.clone())];
            stmts.push(Stmt::evaluate(ev.to_expr()));
        }
    }
    stmts.push(body);
    // The pipeline is named as its compiled function: Halide replaces what
    // is not alphanumeric in the output's name (`f$1` is `f_1`).
    let pipeline_name: String = pipeline_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let end = TraceEvent::new(&pipeline_name, event::END_PIPELINE, pipeline_id);
    stmts.push(Stmt::evaluate(end.to_expr()));
    let begin = TraceEvent::new(&pipeline_name, event::BEGIN_PIPELINE, Expr::i32(0));
    let traced = touched_in_order(env, &tracing.touched)
        .into_iter()
        .map(|n| {
            let types = tracing.touched[&n].clone();
            (n, types)
        })
        .collect();
    Ok((
        Stmt::let_stmt(PIPELINE_ID, begin.to_expr(), Stmt::block(stmts)),
        TracedFuncs(traced),
    ))
}

/// After bounds inference: tag each traced Func with its types and the
/// box the pipeline touches (Halide's "func_type_and_dim" tags, for
/// tracing tools), first thing after the pipeline's begin event.
pub fn add_type_and_dim_tags(s: &Stmt, traced: &TracedFuncs) -> Stmt {
    if traced.0.is_empty() {
        return s.clone();
    }
    struct AddTags<'a>(&'a TracedFuncs);
    impl Mutator for AddTags<'_> {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::LetStmt { name, value, body } if name == PIPELINE_ID => {
                    let pipeline_id = Expr::var_i32(PIPELINE_ID);
                    let inside = names_bound_in(body);
                    let mut stmts: Vec<Stmt> = self
                        .0
                         .0
                        .iter()
                        .map(|(f, types)| {
                            let mut ev = TraceEvent::new(f, event::TAG, pipeline_id.clone());
                            ev.tag = type_and_dim_tag(body, f, types, &inside);
                            Stmt::evaluate(ev.to_expr())
                        })
                        .collect();
                    stmts.push(body.clone());
                    Stmt::let_stmt(name.clone(), value.clone(), Stmt::block(stmts))
                }
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    AddTags(traced).mutate_stmt(s)
}

/// The names that loops and lets inside `s` define.
fn names_bound_in(s: &Stmt) -> HashSet<String> {
    let mut names = HashSet::new();
    crate::ir::visit::for_each_stmt(s, &mut |st| match st.node() {
        StmtNode::LetStmt { name, .. } | StmtNode::For { name, .. } => {
            names.insert(name.clone());
        }
        _ => {}
    });
    crate::ir::visit::for_each_expr_in_stmt(s, &mut |e| {
        if let ExprNode::Let { name, .. } = e.node() {
            names.insert(name.clone());
        }
    });
    names
}

/// The Funcs and inputs with events, in realization order (inputs first).
fn touched_in_order(env: &Environment, touched: &HashMap<String, Vec<Option<Type>>>) -> Vec<String> {
    let mut inputs: Vec<String> = touched
        .keys()
        .filter(|n| !env.funcs.contains_key(*n))
        .cloned()
        .collect();
    inputs.sort();
    let funcs = env.order.iter().filter(|n| touched.contains_key(*n)).cloned();
    inputs.into_iter().chain(funcs).collect()
}

/// Halide's "func_type_and_dim: " tag: the number of values, each value's
/// type code, bits and lanes, the number of dimensions and each one's min
/// and extent in the box the pipeline touches (0 0 where it is not known
/// before the pipeline runs).
fn type_and_dim_tag(body: &Stmt, name: &str, types: &[Option<Type>], inside: &HashSet<String>) -> Vec<Expr> {
    let mut parts = vec![Expr::string("func_type_and_dim: "), Expr::i32(types.len() as i64)];
    for t in types {
        let (code, bits, lanes) = t
            .map(|t| (t.code.as_halide_code() as i64, t.bits as i64, t.lanes as i64))
            .unwrap_or((3, 0, 0));
        for v in [code, bits, lanes] {
            parts.push(Expr::string(" "));
            parts.push(Expr::i32(v));
        }
    }
    let known = |e: &Expr| !inside.iter().any(|n| crate::ir::visit::expr_uses_var(e, n));
    let region = box_touched(body, name, &Scope::default()).unwrap_or_default();
    parts.push(Expr::string(" "));
    parts.push(Expr::i32(region.len() as i64));
    for i in region {
        let (min, extent) = match (i.min, i.max) {
            (Some(min), Some(max)) if known(&min) && known(&max) => {
                let extent = Expr::sub(Expr::add(max, Expr::i32(1)), min.clone());
                (min, extent)
            }
            _ => (Expr::i32(0), Expr::i32(0)),
        };
        parts.extend([Expr::string(" "), min, Expr::string(" "), extent]);
    }
    parts
}

/// `s` without the Realize nodes of `names` (their bodies stay).
fn strip_realizations(s: &Stmt, names: &HashSet<String>) -> Stmt {
    struct Strip<'a>(&'a HashSet<String>);
    impl Mutator for Strip<'_> {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::Realize { name, body, .. } if self.0.contains(name) => self.mutate_stmt(body),
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    Strip(names).mutate_stmt(s)
}
