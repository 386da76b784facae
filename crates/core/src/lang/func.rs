//! `Func`: the user's handle on a `Function` — definition (`f[x, y] = e`),
//! calls (`f[x, y]` → `FuncRef` → a `Call` Expr), and the scheduling
//! directives of the pure stage (split, fuse, reorder, tile, vectorize,
//! unroll, parallel, serial), placement (compute_at/root/inline, store_at,
//! hoist_storage) and storage/bounds directives (bound, align_bounds,
//! reorder_storage, store_in), with Halide's validation and error messages.
//!
//! Schedule data written here (read by lowering):
//! - `Function.stage.dims`: loops innermost first, `__outermost` last.
//!   Dim names are Halide's qualified names: splitting `x` into `xo, xi`
//!   gives dims `x.xi`, `x.xo`; splitting `x.xo` again by `a, b` gives
//!   `x.xo.a`, `x.xo.b`; fusing `x.xi` (inner) with `y` into `t` gives `x.xi.t`.
//! - `Function.stage.splits`: in issue order, with the same qualified names
//!   (`Split::Split { old: "x", outer: "x.xo", inner: "x.xi", .. }`,
//!   `Split::Fuse { inner: "x.xi", outer: "y", fused: "x.xi.t" }`). The tail
//!   strategy is already resolved (never `Auto`).
//! - `Function.schedule.compute_level / store_level / hoist_storage_level`:
//!   as given, `Inlined` store/hoist levels meaning "same as the level
//!   inside" (resolved at lowering, like Halide's `lock_loop_levels`).
//! - `Function.schedule.bounds` (in issue order), `storage_dims` (storage
//!   order, innermost first), `memory_type`.

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::MemoryType;
use crate::ir::{CallKind, Expr, ExprNode, ForType, Type};
use crate::lang::function::{exported, Function};
use crate::lang::loop_level::LoopLevelHandle;
use crate::lang::operators::cast;
use crate::lang::print::{expr_to_string, ir_type_name};
use crate::lang::stage::VarOrRVar;
use crate::lang::split_tail::{resolve_split_tail, SplitContext};
use crate::lang::var::{is_implicit_name, unique_func_name, Var};
use crate::schedule::{Dim, LevelSlot, LoopLevel, Split, StageSchedule, TailStrategy};

/// A Var named in a directive of the pure definition.
fn v(name: &str) -> VarOrRVar {
    VarOrRVar::var(name)
}

#[derive(Clone, Debug)]
pub struct Func {
    pub function: Function,
    /// Dimensions required by `Func(type, dims, name)` (checked on definition).
    pub required_dims: Option<usize>,
}

/// `f[args]`: a (possibly not yet valid) reference to a Func at some coordinates.
#[derive(Clone, Debug)]
pub struct FuncRef {
    pub func: Func,
    pub args: Vec<Expr>,
}

/// The first Var `e` uses that is neither in `bound` nor bound by a Let
/// inside `e` (parameters and RVars are not Vars).
pub(crate) fn undefined_variable(e: &Expr, bound: &[String]) -> Option<String> {
    fn walk(e: &Expr, bound: &mut Vec<String>) -> Option<String> {
        match e.node() {
            ExprNode::Variable {
                name,
                param: None,
                rdom: None,
            } => {
                if bound.iter().any(|b| b == name) {
                    None
                } else {
                    Some(name.clone())
                }
            }
            ExprNode::Let { name, value, body } => {
                if let Some(v) = walk(value, bound) {
                    return Some(v);
                }
                bound.push(name.clone());
                let r = walk(body, bound);
                bound.pop();
                r
            }
            ExprNode::Variable { .. }
            | ExprNode::IntImm(_)
            | ExprNode::UIntImm(_)
            | ExprNode::FloatImm(_)
            | ExprNode::StringImm(_) => None,
            ExprNode::Cast(a) | ExprNode::Reinterpret(a) | ExprNode::Not(a) => walk(a, bound),
            ExprNode::Binary { a, b, .. } => walk(a, bound).or_else(|| walk(b, bound)),
            ExprNode::Select { cond, t, f } => walk(cond, bound)
                .or_else(|| walk(t, bound))
                .or_else(|| walk(f, bound)),
            ExprNode::Load {
                index, predicate, ..
            } => walk(index, bound).or_else(|| walk(predicate, bound)),
            ExprNode::Ramp { base, stride, .. } => {
                walk(base, bound).or_else(|| walk(stride, bound))
            }
            ExprNode::Broadcast { value, .. } | ExprNode::VectorReduce { value, .. } => {
                walk(value, bound)
            }
            ExprNode::Call { args, .. } => args.iter().find_map(|a| walk(a, bound)),
            ExprNode::Shuffle { vectors, .. } => vectors.iter().find_map(|a| walk(a, bound)),
        }
    }
    let mut b = bound.to_vec();
    walk(e, &mut b)
}

/// Halide's `var_name_match`: `candidate` is `var` or ends in `.var`.
pub fn var_name_match(candidate: &str, var: &str) -> bool {
    if candidate == var {
        return true;
    }
    candidate.len() > var.len()
        && candidate.ends_with(var)
        && candidate.as_bytes()[candidate.len() - var.len() - 1] == b'.'
}

pub(crate) fn dump_dims(dims: &[Dim]) -> String {
    let mut s = String::from("Vars:");
    for d in dims {
        s.push(' ');
        s.push_str(&d.var);
    }
    s.push('\n');
    s
}

/// How Halide names a loop type in messages (`for`, `parallel`, ...).
fn for_type_word(t: ForType) -> &'static str {
    t.name()
}

/// Arguments to a Func or image call must be integers; non-Int(32) integer
/// arguments are cast to Int(32).
pub(crate) fn check_call_args(name: &str, args: Vec<Expr>) -> Result<Vec<Expr>> {
    args.into_iter()
        .enumerate()
        .map(|(i, a)| {
            let t = a.ty();
            if t.is_float() || t.bits > 32 {
                return Err(Error::user(format!(
                    "Implicit cast from {} to int in argument {} in call to \"{name}\" is not allowed. Use an explicit cast.\n",
                    ir_type_name(t),
                    i + 1
                )));
            }
            if t.is_handle() {
                return Err(Error::user(format!(
                    "Argument {} in call to \"{name}\" has type {}, but Func and image arguments must be integers.\n",
                    i + 1,
                    ir_type_name(t)
                )));
            }
            if t != Type::i32() {
                cast(Type::i32().with_lanes(t.lanes), a)
            } else {
                Ok(a)
            }
        })
        .collect()
}

/// A scalar schedule parameter as Int(32); `message` if its type doesn't
/// fit (Halide's `Int(32).can_represent(type)`).
fn to_int32(e: Expr, message: &str) -> Result<Expr> {
    if !Type::i32().can_represent_type(e.ty()) {
        return Err(Error::user(message));
    }
    if e.ty() == Type::i32() {
        Ok(e)
    } else {
        cast(Type::i32(), e)
    }
}

fn is_placeholder(a: &Expr) -> bool {
    a.as_variable() == Some("_")
}

/// Replace the placeholder `_` in call arguments by as many implicit vars
/// (`_0`, `_1`, ...) as the callee's remaining dimensions, as Halide does:
/// `g[x, _]` on a 3-D `g` is `g(x, _0, _1)`.
pub(crate) fn expand_placeholder(callee: &str, args: Vec<Expr>, dims: usize) -> Result<Vec<Expr>> {
    let holes = args.iter().filter(|a| is_placeholder(a)).count();
    if holes == 0 {
        return Ok(args);
    }
    let explicit = args.len() - holes;
    if holes > 1 || explicit > dims {
        return Err(Error::user(format!(
            "Func \"{callee}\" was called with {} explicit arguments and {holes} placeholders (_), but was defined with {dims}\n",
            explicit
        )));
    }
    let mut out = Vec::with_capacity(dims);
    for a in args {
        if is_placeholder(&a) {
            out.extend((0..dims - explicit).map(|i| Var::implicit(i).expr()));
        } else {
            out.push(a);
        }
    }
    Ok(out)
}

/// One more than the largest implicit var (`_n`) mentioned in `values`.
fn implicit_vars_used(values: &[Expr]) -> usize {
    let mut n = 0;
    for v in values {
        crate::ir::visit::for_each_expr(v, &mut |e| {
            if let Some(name) = e.as_variable() {
                if is_implicit_name(name) {
                    n = n.max(name[1..].parse::<usize>().map_or(0, |k| k + 1));
                }
            }
        });
    }
    n
}

/// A read of a concrete Buffer at `args` (`buf[x, y]` with Expr args).
pub fn image_call(buffer: &Buffer, args: Vec<Expr>) -> Result<Expr> {
    let name = buffer.name();
    let dims = buffer.dimensions();
    let args = expand_placeholder(&name, args, dims)?;
    if args.len() != dims {
        let shown = Expr::call(
            buffer.ty(),
            name.clone(),
            args.clone(),
            CallKind::Image {
                buffer: None,
                param: None,
            },
        );
        return Err(Error::user(format!(
            "Dimensionality mismatch accessing Buffer {name}. There were {} arguments, but the Buffer has {dims} dimensions:\n  {}\n",
            args.len(),
            expr_to_string(&shown)
        )));
    }
    let args = check_call_args(&name, args)?;
    Ok(Expr::call(
        buffer.ty(),
        name,
        args,
        CallKind::Image {
            buffer: Some(buffer.clone()),
            param: None,
        },
    ))
}

/// A process-unique id for a memoized Func's cache entries.
pub fn next_memoize_id() -> u64 {
    static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Func {
    /// `Func()` / `Func("name")`.
    pub fn new(name: Option<&str>) -> Func {
        Func {
            function: Function::new(unique_func_name(name)),
            required_dims: None,
        }
    }

    /// `Func(name)`: a name the user chose, which may not be empty (Halide).
    pub fn named(name: &str) -> Result<Func> {
        if name.is_empty() {
            return Err(Error::user("A Func may not have an empty name.\n"));
        }
        Ok(Func::new(Some(name)))
    }

    /// `Func(required_types, required_dimensions, name)` (an empty name
    /// gets a fresh one here, as Halide's constructor accepts it).
    pub fn with_requirements(types: Vec<Type>, dims: usize, name: &str) -> Func {
        let f = Func::new(Some(name).filter(|n| !n.is_empty()));
        f.function.write().output_types = types;
        Func {
            required_dims: Some(dims),
            ..f
        }
    }

    pub fn from_function(function: Function) -> Func {
        Func {
            function,
            required_dims: None,
        }
    }

    pub fn name(&self) -> String {
        self.function.name()
    }

    pub fn defined(&self) -> bool {
        self.function.has_pure_definition()
    }

    pub fn dimensions(&self) -> Result<usize> {
        if self.defined() {
            return Ok(self.function.dimensions());
        }
        self.required_dims.ok_or_else(|| {
            Error::user(format!(
                "Can't call Func::dimensions on Func \"{}\" because it is undefined or has no dimension requirements.\n",
                self.name()
            ))
        })
    }

    /// Output types (`types()`); `what` names the method for the error.
    pub fn output_types_for(&self, what: &str) -> Result<Vec<Type>> {
        let types = self.function.output_types();
        if types.is_empty() {
            return Err(Error::user(format!(
                "Can't call Func::{what} on Func \"{}\" because it is undefined or has no type requirements.\n",
                self.name()
            )));
        }
        Ok(types)
    }

    pub fn output_types(&self) -> Result<Vec<Type>> {
        self.output_types_for("types")
    }

    pub fn output_type(&self) -> Result<Type> {
        let types = self.output_types_for("type")?;
        if types.len() > 1 {
            return Err(Error::user(format!(
                "Can't call Func::type on Func \"{}\" because it returns a Tuple.\n",
                self.name()
            )));
        }
        Ok(types[0])
    }

    pub fn outputs(&self) -> Result<usize> {
        Ok(self.output_types_for("outputs")?.len())
    }

    /// `set_estimate(var, min, extent)`: the region of `var` an
    /// autoscheduler should expect, also the estimate the output buffer's
    /// metadata reports (as Halide).
    pub fn set_estimate(&self, var: &str, min: Option<Expr>, extent: Option<Expr>) -> Result<()> {
        let name = self.name();
        let Some(d) = self.function.args().iter().position(|a| a == var) else {
            return Err(Error::user(format!(
                "Can't provide an estimate on variable {var} of function {name} because {var} is not one of the pure variables of {name}.\n"
            )));
        };
        for p in self.function.output_params() {
            p.constrain(d, |c| {
                if min.is_some() {
                    c.min_estimate = min.clone();
                }
                if extent.is_some() {
                    c.extent_estimate = extent.clone();
                }
            });
        }
        Ok(())
    }

    /// `set_estimates([(min, extent), ...])`: `set_estimate` of each
    /// dimension in order.
    pub fn set_estimates(&self, estimates: Vec<(Option<Expr>, Option<Expr>)>) -> Result<()> {
        let args = self.function.args();
        if estimates.len() != args.len() {
            return Err(Error::user(format!(
                "Func {} has {} dimensions, but {} estimates were given (one (min, extent) pair per dimension is needed)\n",
                self.name(),
                args.len(),
                estimates.len()
            )));
        }
        for (a, (min, extent)) in args.iter().zip(estimates) {
            self.set_estimate(a, min, extent)?;
        }
        Ok(())
    }

    /// The pure argument Vars (empty if undefined).
    pub fn args(&self) -> Vec<Var> {
        self.function.args().into_iter().map(Var::new).collect()
    }

    pub fn values(&self) -> Result<Vec<Expr>> {
        if !self.defined() {
            return Err(Error::user(format!(
                "Can't call Func::values() on Func \"{}\" because it has not yet been defined.\n",
                self.name()
            )));
        }
        Ok(exported(&self.function.values()))
    }

    pub fn value(&self) -> Result<Expr> {
        let v = self.values()?;
        if v.len() > 1 {
            return Err(Error::user(format!(
                "Can't call Func::value() on Func \"{}\", because it has multiple values.\n",
                self.name()
            )));
        }
        Ok(v[0].clone())
    }

    /// `f[args] = values` (one value, or several for a Tuple): the pure
    /// definition, or an update if the Func already has one (update.rs).
    pub fn define(&self, args: Vec<Expr>, values: Vec<Expr>) -> Result<()> {
        // The checks below recurse as deep as the expressions nest.
        let depth = args
            .iter()
            .chain(&values)
            .map(Expr::depth)
            .max()
            .unwrap_or(0);
        crate::stack::for_depth(depth, || self.define_here(args, values))
    }

    /// `define` on the current thread.
    fn define_here(&self, args: Vec<Expr>, values: Vec<Expr>) -> Result<()> {
        let name = self.name();
        // Before anything walks them (see `cse_if_heavily_shared`).
        let shared = |es: Vec<Expr>| -> Vec<Expr> {
            es.iter().map(crate::analysis::cse_if_heavily_shared).collect()
        };
        let (args, values) = (shared(args), shared(values));
        if let Some((i, v)) = values.iter().enumerate().find(|(_, v)| v.ty().is_vector()) {
            // Vectors are made by scheduling (`vectorize`), never stored.
            return Err(Error::user(format!(
                "Value {} in definition of \"{name}\" has the vector type {}: a Func's values must be scalars.\n",
                i + 1,
                ir_type_name(v.ty())
            )));
        }
        if let Some((i, a)) = args.iter().enumerate().find(|(_, a)| a.ty().is_vector()) {
            return Err(Error::user(format!(
                "Argument {} in definition of \"{name}\" has the vector type {}: a Func's arguments must be scalars.\n",
                i + 1,
                ir_type_name(a.ty())
            )));
        }
        if self.defined() {
            return crate::lang::update::define_update(self, args, values);
        }
        if values.is_empty() {
            return Err(Error::user(format!(
                "Func \"{name}\" defined with an empty Tuple.\n"
            )));
        }
        // A placeholder `_` on the left stands for the implicit vars the
        // right-hand side uses (`f[_] = g[_] * 2` defines f(_0, _1) for 2-D g).
        let args = if args.iter().filter(|a| is_placeholder(a)).count() == 1 {
            let used = implicit_vars_used(&values);
            let explicit = args.len() - 1;
            expand_placeholder(&name, args, explicit + used)?
        } else {
            args
        };
        let mut arg_names = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match a.node() {
                ExprNode::Variable {
                    name: v,
                    param: None,
                    rdom: None,
                } => {
                    if v == "_" {
                        return Err(Error::user(format!(
                            "Func \"{name}\" is defined with more than one placeholder (_) argument.\n"
                        )));
                    }
                    arg_names.push(v.clone())
                }
                _ => {
                    return Err(Error::user(format!(
                        "Argument {} in initial definition of \"{name}\" is not a Var.\n",
                        i + 1
                    )))
                }
            }
        }
        for i in 0..arg_names.len() {
            for j in 0..i {
                if arg_names[i] == arg_names[j] {
                    return Err(Error::user(format!(
                        "In pure definition of Func \"{name}\":\nIn left-hand-side of definition, arguments {i} and {j} both have the name \"{}\"\n",
                        arg_names[i]
                    )));
                }
            }
        }
        for v in &values {
            if crate::lang::rdom::uses_rvars(v) {
                return Err(Error::user(format!(
                    "In pure definition of Func \"{name}\":\nReduction domain referenced in pure function definition.\n"
                )));
            }
        }
        for v in &values {
            if let Some(var) = undefined_variable(v, &arg_names) {
                if is_implicit_name(&var) {
                    return Err(Error::user(format!(
                        "The right-hand side of the definition of Func \"{name}\" uses the implicit variable {var}, but the left-hand side has no placeholder (_) to stand for it.\n"
                    )));
                }
                return Err(Error::user(format!(
                    "Undefined variable \"{var}\" in definition of Func \"{name}\"\n"
                )));
            }
            if v.ty().is_handle() {
                return Err(Error::unimplemented(format!(
                    "Func \"{name}\" defined with a value of handle/string type ({})",
                    expr_to_string(v)
                )));
            }
        }
        let required = self.function.output_types();
        let given: Vec<Type> = values.iter().map(|v| v.ty()).collect();
        if !required.is_empty() && required != given {
            // One message for a wrong count or a wrong type, as in Halide.
            use crate::lang::tuple::types_text;
            return Err(Error::user(format!(
                "Func \"{name}\" is constrained to only hold values of type {} but is defined with values of type {}.\n",
                types_text(&required),
                types_text(&given)
            )));
        }
        if let Some(d) = self.required_dims {
            if d != arg_names.len() {
                return Err(Error::user(format!(
                    "Func \"{name}\" is constrained to have exactly {d} dimensions, but is defined with {} dimensions.\n",
                    arg_names.len()
                )));
            }
        }
        crate::lang::update::freeze_callees(&self.function, &values);
        let values = lower_random_calls(values, &arg_names);
        let values = self.function.own_all(&values)?;
        let mut c = self.function.write();
        c.output_types = values.iter().map(|v| v.ty()).collect();
        c.values = values;
        c.stage = StageSchedule::for_pure_args(&arg_names);
        if c.schedule.storage_dims.is_empty() {
            c.schedule.storage_dims = arg_names.clone();
        }
        c.args = arg_names;
        Ok(())
    }

    /// `f[args]`: checks the argument count against the definition (if any)
    /// and the argument types.
    pub fn call(&self, args: Vec<Expr>) -> Result<FuncRef> {
        if self.defined() {
            let dims = self.function.dimensions();
            if args.len() != dims && !args.iter().any(is_placeholder) {
                return Err(Error::user(format!(
                    "Func \"{}\" was called with {} arguments, but was defined with {dims}\n",
                    self.name(),
                    args.len()
                )));
            }
        }
        let args = check_call_args(&self.name(), args)?;
        Ok(FuncRef {
            func: self.clone(),
            args,
        })
    }

    // ---- scheduling -----------------------------------------------------------------

    /// The Stage of the pure definition, which carries out the loop
    /// directives below (stage.rs).
    pub fn stage(&self) -> crate::lang::stage::Stage {
        crate::lang::stage::Stage::pure(&self.function)
    }

    /// `split(old, outer, inner, factor, tail)`.
    pub fn split(
        &self,
        old: &str,
        outer: &str,
        inner: &str,
        factor: Expr,
        tail: TailStrategy,
    ) -> Result<()> {
        self.stage()
            .split(&v(old), &v(outer), &v(inner), factor, tail)
    }

    /// `fuse(inner, outer, fused)`.
    pub fn fuse(&self, inner: &str, outer: &str, fused: &str) -> Result<()> {
        self.stage().fuse(&v(inner), &v(outer), &v(fused))
    }

    /// `reorder(vars...)`, innermost first.
    pub fn reorder(&self, vars: &[String]) -> Result<()> {
        let vars: Vec<VarOrRVar> = vars.iter().map(|n| v(n)).collect();
        self.stage().reorder(&vars)
    }

    /// Set the loop type of every dim matching `var`.
    pub fn set_for_type(&self, var: &str, t: ForType) -> Result<()> {
        self.stage().set_for_type(&v(var), t)
    }

    pub fn serial(&self, var: &str) -> Result<()> {
        self.set_for_type(var, ForType::Serial)
    }
    pub fn parallel(&self, var: &str) -> Result<()> {
        self.set_for_type(var, ForType::Parallel)
    }
    pub fn vectorize(&self, var: &str) -> Result<()> {
        self.set_for_type(var, ForType::Vectorized)
    }
    pub fn unroll(&self, var: &str) -> Result<()> {
        self.set_for_type(var, ForType::Unrolled)
    }

    /// `vectorize(var, factor, tail)`: split off a fresh inner var and vectorize it.
    pub fn vectorize_by(&self, var: &str, factor: Expr, tail: TailStrategy) -> Result<()> {
        self.stage()
            .split_and_set_type(&v(var), factor, tail, ForType::Vectorized, true)
    }

    /// `unroll(var, factor, tail)`.
    pub fn unroll_by(&self, var: &str, factor: Expr, tail: TailStrategy) -> Result<()> {
        self.stage()
            .split_and_set_type(&v(var), factor, tail, ForType::Unrolled, true)
    }

    /// `parallel(var, task_size, tail)`: split and parallelize the outer var.
    pub fn parallel_by(&self, var: &str, factor: Expr, tail: TailStrategy) -> Result<()> {
        self.stage()
            .split_and_set_type(&v(var), factor, tail, ForType::Parallel, false)
    }

    /// `tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail)`.
    #[allow(clippy::too_many_arguments)]
    pub fn tile(
        &self,
        x: &str,
        y: &str,
        xo: &str,
        yo: &str,
        xi: &str,
        yi: &str,
        xfactor: Expr,
        yfactor: Expr,
        tail: TailStrategy,
    ) -> Result<()> {
        self.stage().tile(
            &v(x),
            &v(y),
            &v(xo),
            &v(yo),
            &v(xi),
            &v(yi),
            xfactor,
            yfactor,
            tail,
        )
    }

    // ---- placement ------------------------------------------------------------------
    //
    // As in Halide, placement is only recorded here; whether a level exists
    // and encloses every use is checked when the pipeline is lowered
    // (lower/validate_schedule.rs), because the consumer's loops may still
    // change until then.

    fn set_level(&self, slot: LevelSlot, level: LoopLevel) {
        self.function.write().schedule.set_level(slot, level, None);
    }

    /// `compute_at(f, var)`: compute this Func inside `f`'s loop over `var`.
    pub fn compute_at(&self, f: &Func, var: &str) {
        self.set_level(LevelSlot::Compute, LoopLevel::at(f.name(), var));
    }

    /// `compute_at(loop_level)`: follows later `set`s of the handle.
    pub fn compute_at_level(&self, level: &LoopLevelHandle) {
        level.attach(&self.function, LevelSlot::Compute);
    }

    /// `compute_root()`.
    pub fn compute_root(&self) {
        self.set_level(LevelSlot::Compute, LoopLevel::Root);
    }

    /// `compute_inline()`. The store level is left alone: a store_root()
    /// with compute_inline() is an error at lowering, as in Halide.
    pub fn compute_inline(&self) {
        self.set_level(LevelSlot::Compute, LoopLevel::Inlined);
    }

    /// `store_at(f, var)`: allocate this Func's storage at `f`'s loop over `var`.
    pub fn store_at(&self, f: &Func, var: &str) {
        self.set_level(LevelSlot::Store, LoopLevel::at(f.name(), var));
    }

    pub fn store_at_level(&self, level: &LoopLevelHandle) {
        level.attach(&self.function, LevelSlot::Store);
    }

    /// `store_root()`.
    pub fn store_root(&self) {
        self.set_level(LevelSlot::Store, LoopLevel::Root);
    }

    /// `hoist_storage(f, var)`: make the allocation at `f`'s loop over
    /// `var`, outside the store level, big enough for every store-level
    /// region inside it.
    pub fn hoist_storage(&self, f: &Func, var: &str) {
        self.set_level(LevelSlot::HoistStorage, LoopLevel::at(f.name(), var));
    }

    pub fn hoist_storage_level(&self, level: &LoopLevelHandle) {
        level.attach(&self.function, LevelSlot::HoistStorage);
    }

    /// `hoist_storage_root()`.
    pub fn hoist_storage_root(&self) {
        self.set_level(LevelSlot::HoistStorage, LoopLevel::Root);
    }

    // ---- bounds and storage ----------------------------------------------------------

    /// `bound(var, min, extent)`: this Func is computed over exactly
    /// `[min, min + extent)` in `var`, whatever its consumers need (they may
    /// need no more: checked when the pipeline runs).
    pub fn bound(&self, var: &str, min: Expr, extent: Expr) -> Result<()> {
        let min = to_int32(min, "Can't represent min bound in int32\n")?;
        let extent = to_int32(extent, "Can't represent extent bound in int32\n")?;
        self.push_bound(var, "bound", Some(min), Some(extent), None, None)
    }

    /// `bound_extent(var, extent)`: like `bound`, with the min left to inference.
    pub fn bound_extent(&self, var: &str, extent: Expr) -> Result<()> {
        let extent = to_int32(extent, "Can't represent extent bound in int32\n")?;
        self.push_bound(var, "bound", None, Some(extent), None, None)
    }

    /// `align_bounds(var, modulus, remainder)`: widen the computed region
    /// so its min is `remainder` mod `modulus` and its extent a multiple of
    /// `modulus`.
    pub fn align_bounds(&self, var: &str, modulus: Expr, remainder: Expr) -> Result<()> {
        let modulus = to_int32(modulus, "Can't represent modulus as int32\n")?;
        let remainder = to_int32(remainder, "Can't represent remainder as int32\n")?;
        let remainder = Expr::modulo(remainder, modulus.clone());
        self.push_bound(
            var,
            "align bounds of",
            None,
            None,
            Some(modulus),
            Some(remainder),
        )
    }

    /// `align_extent(var, modulus)`: round the computed extent up to a
    /// multiple of `modulus`, keeping the min.
    pub fn align_extent(&self, var: &str, modulus: Expr) -> Result<()> {
        let modulus = to_int32(modulus, "Can't represent modulus as int32\n")?;
        self.push_bound(var, "align extent of", None, None, Some(modulus), None)
    }

    fn push_bound(
        &self,
        var: &str,
        what: &str,
        min: Option<Expr>,
        extent: Option<Expr>,
        modulus: Option<Expr>,
        remainder: Option<Expr>,
    ) -> Result<()> {
        let name = self.name();
        if !self.function.args().iter().any(|a| a == var) {
            let verb = match what {
                "bound" => "bound variable".to_string(),
                w => format!("{w} variable"),
            };
            return Err(Error::user(format!(
                "Can't {verb} {var} of function {name} because {var} is not one of the pure variables of {name}.\n"
            )));
        }
        self.function
            .write()
            .schedule
            .bounds
            .push(crate::schedule::Bound {
                var: var.to_string(),
                min,
                extent,
                modulus,
                remainder,
            });
        Ok(())
    }

    /// `reorder_storage(vars...)`: the storage layout's dimension order,
    /// innermost first. Like Halide, each var is moved in front of each
    /// later one, pair by pair.
    pub fn reorder_storage(&self, vars: &[String]) -> Result<()> {
        if vars.len() < 2 {
            return Err(Error::user(
                "reorder_storage must have at least two dimensions in reorder list.\n",
            ));
        }
        for start in 0..vars.len() {
            for later in &vars[start + 1..] {
                self.reorder_storage_pair(&vars[start], later)?;
            }
        }
        Ok(())
    }

    /// Put `x` before `y` in the storage order, if `y` comes first.
    fn reorder_storage_pair(&self, x: &str, y: &str) -> Result<()> {
        let name = self.name();
        if x == y {
            return Err(Error::user(format!(
                "In schedule for {name}, call to reorder_storage references {x} twice\n"
            )));
        }
        let mut c = self.function.write();
        let dims = &mut c.schedule.storage_dims;
        let mut y_at = None;
        for i in 0..dims.len() {
            if var_name_match(&dims[i], y) {
                y_at = Some(i);
            } else if var_name_match(&dims[i], x) {
                if let Some(j) = y_at {
                    dims.swap(i, j);
                }
                return Ok(());
            }
        }
        let mut listed = String::from("Vars:");
        for d in dims.iter() {
            listed.push(' ');
            listed.push_str(d);
        }
        Err(Error::user(format!(
            "In schedule for {name}, could not find variables {x} and {y} to reorder.\n{listed}\n"
        )))
    }

    /// `trace_loads()`: report every load from this Func.
    pub fn trace_loads(&self) {
        self.function.write().tracing.loads = true;
    }

    /// `trace_stores()`: report every store to this Func.
    pub fn trace_stores(&self) {
        self.function.write().tracing.stores = true;
    }

    /// `trace_realizations()`: report where this Func is realized, produced
    /// and consumed.
    pub fn trace_realizations(&self) {
        self.function.write().tracing.realizations = true;
    }

    /// `add_trace_tag(tag)`: text reported at the start of a pipeline that
    /// traces this Func.
    pub fn add_trace_tag(&self, tag: &str) -> Result<()> {
        self.function.write().tracing.add_tag(tag)
    }

    /// `memoize()`: keep this Func's realizations in the runtime's cache
    /// across pipeline runs (see lower/inject_memoization).
    pub fn memoize(&self) {
        let mut c = self.function.write();
        c.schedule.memoized = Some(next_memoize_id());
        c.schedule.memoize_eviction_key = None;
    }

    /// `async_()`: compute this Func on another thread, concurrently with
    /// the work of its consumers that does not need it
    /// (lower/async_producers.rs).
    pub fn async_(&self) {
        self.function.write().schedule.async_ = true;
    }

    /// `ring_buffer(extent)`: recorded; lowering refuses it (not
    /// implemented).
    pub fn ring_buffer(&self, extent: Expr) -> Result<()> {
        if !extent.ty().is_int_or_uint() || !extent.ty().is_scalar() {
            return Err(Error::user("ring_buffer() extent must be an integer\n"));
        }
        self.function.write().schedule.ring_buffer = Some(extent);
        Ok(())
    }

    /// `memoize(EvictionKey(key))`: memoize, storing the realizations under
    /// `key` (an integer or handle, made UInt(64) as Halide does) for
    /// `halide_memoization_cache_evict`. A second, different key is an
    /// error.
    pub fn memoize_with_eviction_key(&self, key: Expr) -> Result<()> {
        let t = key.ty();
        let shown = crate::lang::print::expr_to_string(&key);
        if !t.is_scalar() {
            return Err(Error::user(format!(
                "Can't use a vector as a memoization eviction key. Expression is: {shown}\n"
            )));
        }
        if t.is_float() {
            return Err(Error::user(format!(
                "Can't use floating-point types as a memoization eviction key. Expression is: {shown}\n"
            )));
        }
        let u64t = Type::uint(64);
        let key = if t.is_handle() {
            Expr::reinterpret(u64t, key)
        } else {
            Expr::reinterpret(u64t, Expr::cast(t.with_bits(64), key))
        };
        let mut c = self.function.write();
        if let Some(old) = &c.schedule.memoize_eviction_key {
            if !crate::ir::equality::equal(old, &key) {
                return Err(Error::user(format!(
                    "Can't redefine memoize eviction key. First definition is: {} new definition is: {}\n",
                    crate::lang::print::expr_to_string(old),
                    crate::lang::print::expr_to_string(&key)
                )));
            }
        }
        c.schedule.memoize_eviction_key = Some(key);
        c.schedule.memoized = Some(next_memoize_id());
        Ok(())
    }

    /// `debug_to_file(filename)`: write the Func's realization to the file
    /// when the pipeline is done with it (`.npy`, `.tiff`/`.tif`, `.mat`,
    /// else Halide's tmp format; runtime/c/debug_to_file.c).
    pub fn debug_to_file(&self, filename: &str) -> Result<()> {
        self.function.write().schedule.debug_file = Some(filename.to_string());
        Ok(())
    }

    /// `store_in(memory_type)`.
    pub fn store_in(&self, memory_type: MemoryType) {
        self.function.write().schedule.memory_type = memory_type;
    }

    /// `fold_storage(var, factor, fold_forward)`: store dimension `var`
    /// modulo `factor` (a circular buffer), where the loop it is computed
    /// in walks that dimension monotonically; lowering checks that each
    /// iteration's footprint fits (see lower/storage_folding).
    /// `bound_storage(var, extent)`: store `var` with this extent,
    /// whatever region is computed (Halide's StorageDim::bound).
    pub fn bound_storage(&self, var: &str, extent: Expr) -> Result<()> {
        let e = self.storage_dim_expr(var, extent, "bound the storage of", "storage bound")?;
        let mut c = self.function.write();
        c.schedule.storage_bounds.retain(|(v, _)| v != var);
        c.schedule.storage_bounds.push((var.to_string(), e));
        Ok(())
    }

    /// `align_storage(var, alignment)`: pad the storage extent of `var` up
    /// to a multiple of `alignment` (Halide's StorageDim::alignment).
    pub fn align_storage(&self, var: &str, alignment: Expr) -> Result<()> {
        let e = self.storage_dim_expr(var, alignment, "align the storage of", "storage alignment")?;
        let mut c = self.function.write();
        c.schedule.storage_alignments.retain(|(v, _)| v != var);
        c.schedule.storage_alignments.push((var.to_string(), e));
        Ok(())
    }

    /// `value` as the Int(32) of a storage directive on pure var `var`.
    fn storage_dim_expr(&self, var: &str, value: Expr, doing: &str, what: &str) -> Result<Expr> {
        self.require_pure_var(var, doing)?;
        let name = self.name();
        if !value.ty().is_int_or_uint() || !value.ty().is_scalar() {
            return Err(Error::user(format!(
                "The {what} of {name}.{var} must be an integer, not {}.\n",
                value.ty()
            )));
        }
        crate::lang::operators::cast(crate::ir::Type::i32(), value)
    }

    /// Halide's error for a storage directive on `var` that is not a pure
    /// var of this Func ("could not find var x to `doing`").
    fn require_pure_var(&self, var: &str, doing: &str) -> Result<()> {
        let args = self.function.args();
        if args.iter().any(|a| a == var) {
            return Ok(());
        }
        Err(Error::user(format!(
            "In schedule for {}, could not find var {var} to {doing}.\nVars: {}\n",
            self.name(),
            args.join(" ")
        )))
    }

    pub fn fold_storage(&self, var: &str, factor: Expr, fold_forward: bool) -> Result<()> {
        self.require_pure_var(var, "fold the storage of")?;
        let name = self.name();
        if factor.ty() != crate::ir::Type::i32() {
            return Err(Error::user(format!(
                "The fold factor of {name}.{var} must be an Int(32), not {}.\n",
                factor.ty()
            )));
        }
        let mut c = self.function.write();
        c.schedule.folds.retain(|f| f.var != var);
        c.schedule.folds.push(crate::schedule::StorageFold {
            var: var.to_string(),
            factor,
            fold_forward,
        });
        Ok(())
    }
}

pub(crate) fn set_dim_type(
    st: &mut StageSchedule,
    name: &str,
    var: &str,
    t: ForType,
) -> Result<()> {
    let mut found = false;
    for d in st.dims.iter_mut() {
        if var_name_match(&d.var, var) {
            found = true;
            d.for_type = t;
        }
    }
    if !found {
        return Err(Error::user(format!(
            "In schedule for {name}, could not find dimension {var} to mark as {} in vars for function\n{}",
            for_type_word(t),
            dump_dims(&st.dims)
        )));
    }
    Ok(())
}

pub(crate) fn split_stage(
    st: &mut StageSchedule,
    name: &str,
    old: &str,
    outer: &str,
    inner: &str,
    factor: Expr,
    tail: TailStrategy,
    ctx: SplitContext,
) -> Result<()> {
    if inner == outer {
        return Err(Error::user(format!(
            "In schedule for {name}, can't split {old} into {outer} and {inner} because the new Vars have the same name.\n{}",
            dump_dims(&st.dims)
        )));
    }
    for d in &st.dims {
        for new_name in [inner, outer] {
            if var_name_match(&d.var, new_name) && new_name != old {
                return Err(Error::user(format!(
                    "In schedule for {name}, can't create var {new_name} using a split or tile, because {new_name} is already used in this Func's schedule elsewhere.\n{}",
                    dump_dims(&st.dims)
                )));
            }
        }
    }
    let Some(i) = st.dims.iter().position(|d| var_name_match(&d.var, old)) else {
        return Err(Error::user(format!(
            "In schedule for {name}, could not find split dimension: {old}\n{}",
            dump_dims(&st.dims)
        )));
    };
    if !factor.ty().is_int() && !factor.ty().is_uint() {
        return Err(Error::user(format!(
            "In schedule for {name}, the split factor {} of {old} has type {}, but must be an integer.\n",
            expr_to_string(&factor),
            ir_type_name(factor.ty())
        )));
    }
    if factor.ty().bits > 32 || factor.ty() == Type::uint(32) {
        // Narrowing would change the factor (2**40 would become 0).
        return Err(Error::user(format!(
            "In schedule for {name}, the split factor {} of {old} has type {}, but must fit in an int32.\n",
            expr_to_string(&factor),
            ir_type_name(factor.ty())
        )));
    }
    let factor = cast(Type::i32(), factor)?;
    let old_name = st.dims[i].var.clone();
    let inner_name = format!("{old_name}.{inner}");
    let outer_name = format!("{old_name}.{outer}");
    let old_dim = st.dims[i].clone();
    st.dims.insert(i, old_dim);
    st.dims[i].var = inner_name.clone();
    st.dims[i + 1].var = outer_name.clone();

    let tail = resolve_split_tail(st, name, &old_name, &factor, tail, ctx)?;
    st.splits.push(Split::Split {
        old: old_name,
        outer: outer_name,
        inner: inner_name,
        factor,
        tail,
    });
    Ok(())
}

impl FuncRef {
    /// The call as an Expr (single-valued Funcs only).
    pub fn to_expr(&self) -> Result<Expr> {
        let f = &self.func;
        let name = f.name();
        if !f.defined() {
            return Err(Error::user(format!(
                "Can't call Func \"{name}\" because it has not yet been defined.\n"
            )));
        }
        if f.function.outputs() > 1 {
            return Err(Error::user(format!(
                "Can't convert a reference Func \"{name}\" to an Expr, because {name} returns a Tuple.\n"
            )));
        }
        self.element(0)
    }

    /// Tuple element `i` of the call.
    pub fn element(&self, i: usize) -> Result<Expr> {
        let f = &self.func;
        let name = f.name();
        if !f.defined() {
            return Err(Error::user(format!(
                "Can't call Func \"{name}\" because it has not yet been defined.\n"
            )));
        }
        let dims = f.function.dimensions();
        let args = expand_placeholder(&name, self.args.clone(), dims)?;
        if args.len() != dims {
            return Err(Error::user(format!(
                "Func \"{name}\" was called with {} arguments, but was defined with {dims}\n",
                args.len()
            )));
        }
        let types = f.function.output_types();
        let Some(t) = types.get(i) else {
            return Err(Error::value(format!(
                "Tuple index {i} out of range: Func \"{name}\" has {} values.",
                types.len()
            )));
        };
        Ok(Expr::call(
            *t,
            name,
            args,
            CallKind::Halide {
                func: f.function.ptr(),
                value_index: i,
            },
        ))
    }

    /// `f[args] = values`.
    pub fn define(&self, values: Vec<Expr>) -> Result<()> {
        self.func.define(self.args.clone(), values)
    }
}

// ---- wrappers and specializations ------------------------------------------------

use crate::lang::wrapper::{get_wrapper, WrapperKind};

impl Func {
    /// `in_()`: the global wrapper, used by every consumer of this Func
    /// that has no wrapper of its own.
    pub fn in_(&self) -> Result<Func> {
        get_wrapper(
            self,
            &format!("{}_global_wrapper", self.name()),
            &[],
            WrapperKind::In,
        )
    }

    /// `in_(g)`: a wrapper used instead of this Func inside `g` only.
    pub fn in_func(&self, g: &Func) -> Result<Func> {
        get_wrapper(
            self,
            &format!("{}_in_{}", self.name(), g.name()),
            std::slice::from_ref(g),
            WrapperKind::In,
        )
    }

    /// `in_([g, h, ...])`: one wrapper shared by the listed consumers.
    pub fn in_funcs(&self, fs: &[Func]) -> Result<Func> {
        if fs.is_empty() {
            return Err(Error::user(
                "Could not create a in wrapper for an empty list of Funcs\n",
            ));
        }
        get_wrapper(
            self,
            &format!("{}_wrapper", self.name()),
            fs,
            WrapperKind::In,
        )
    }

    /// `clone_in(g)`: a copy of this Func (definition and schedule) used
    /// instead of it inside `g`.
    pub fn clone_in(&self, g: &Func) -> Result<Func> {
        get_wrapper(
            self,
            &format!("{}_clone_in_{}", self.name(), g.name()),
            std::slice::from_ref(g),
            WrapperKind::Clone,
        )
    }

    /// `clone_in([g, h, ...])`: one copy shared by the listed consumers.
    pub fn clone_in_funcs(&self, fs: &[Func]) -> Result<Func> {
        if fs.is_empty() {
            return Err(Error::user(
                "Could not create a clone wrapper for an empty list of Funcs\n",
            ));
        }
        get_wrapper(
            self,
            &format!("{}_clone", self.name()),
            fs,
            WrapperKind::Clone,
        )
    }

    /// `specialize(condition)` on the pure definition.
    pub fn specialize(&self, condition: Expr) -> Result<crate::lang::stage::Stage> {
        self.stage().specialize(condition)
    }

    /// `compute_with(level, align)` on the pure definition.
    pub fn compute_with(
        &self,
        level: LoopLevel,
        align: crate::lang::compute_with::Align,
    ) -> Result<()> {
        self.stage().compute_with(level, align)
    }

    /// `specialize_fail(message)` on the pure definition.
    pub fn specialize_fail(&self, message: &str) -> Result<()> {
        self.stage().specialize_fail(message)
    }
}

/// Every definition takes a tag and turns the `random_*()` calls in its
/// values into hashes of the tag and its pure vars (lang/random.rs).
pub(crate) fn lower_random_calls(values: Vec<Expr>, args: &[String]) -> Vec<Expr> {
    let tag = crate::lang::random::next_definition_tag();
    let free: Vec<Expr> = args.iter().map(|a| Expr::var_i32(a.clone())).collect();
    values
        .iter()
        .map(|v| crate::lang::random::lower_random(v, &free, tag))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk() -> Func {
        let f = Func::new(Some("f"));
        let (x, y) = (Expr::var_i32("x"), Expr::var_i32("y"));
        f.define(vec![x.clone(), y.clone()], vec![Expr::add(x, y)])
            .unwrap();
        f
    }

    fn dims(f: &Func) -> Vec<String> {
        f.function
            .read()
            .stage
            .dims
            .iter()
            .map(|d| d.var.clone())
            .collect()
    }

    #[test]
    fn definition_errors() {
        let g = Func::new(Some("g"));
        let x = Expr::var_i32("x");
        let e = g
            .define(vec![x.clone(), x.clone()], vec![x.clone()])
            .unwrap_err();
        assert!(e
            .message
            .contains("arguments 1 and 0 both have the name \"x\""));
        let e = g
            .define(vec![x.clone(), Expr::i32(1)], vec![x.clone()])
            .unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "Argument 2 in initial definition of \"{}\" is not a Var.\n",
                g.name()
            )
        );
        let e = g
            .define(vec![x.clone()], vec![Expr::var_i32("y")])
            .unwrap_err();
        assert!(e.message.starts_with("Undefined variable \"y\""));
        g.define(vec![x.clone()], vec![x.clone()]).unwrap();
        // A second definition is an update.
        g.define(vec![x.clone()], vec![x.clone()]).unwrap();
        assert_eq!(g.num_update_definitions(), 1);
        let e = g.call(vec![x.clone(), x.clone()]).unwrap_err();
        assert!(e
            .message
            .contains("was called with 2 arguments, but was defined with 1"));
        let e = g.call(vec![Expr::f32(1.5)]).unwrap_err();
        assert!(e
            .message
            .starts_with("Implicit cast from float32 to int in argument 1"));
    }

    #[test]
    fn split_vectorize_names() {
        let f = mk();
        f.split("x", "xo", "xi", Expr::i32(8), TailStrategy::Auto)
            .unwrap();
        assert_eq!(dims(&f), ["x.xi", "x.xo", "y", "__outermost"]);
        let e = f
            .split("x", "xo", "xi", Expr::i32(8), TailStrategy::Auto)
            .unwrap_err();
        assert!(e
            .message
            .contains("can't create var xi using a split or tile"));
        assert!(e.message.ends_with("Vars: x.xi x.xo y __outermost\n"));
        let e = f
            .split("z", "a", "b", Expr::i32(8), TailStrategy::Auto)
            .unwrap_err();
        assert!(e.message.contains("could not find split dimension: z"));
        f.vectorize("xi").unwrap();
        f.reorder(&["xi".into(), "y".into(), "xo".into()]).unwrap();
        assert_eq!(dims(&f), ["x.xi", "y", "x.xo", "__outermost"]);
        let e = f.reorder(&["y".into(), "y".into()]).unwrap_err();
        assert!(e.message.contains("call to reorder references y twice"));
        let first = f.function.read().stage.splits[0].clone();
        match first {
            Split::Split {
                old,
                outer,
                inner,
                tail,
                ..
            } => {
                assert_eq!(
                    (old.as_str(), outer.as_str(), inner.as_str()),
                    ("x", "x.xo", "x.xi")
                );
                assert_eq!(tail, TailStrategy::ShiftInwards);
            }
            _ => panic!(),
        }
    }

    #[test]
    fn implicit_split_and_fuse() {
        let f = mk();
        f.vectorize_by("x", Expr::i32(8), TailStrategy::Auto)
            .unwrap();
        let d = dims(&f);
        assert_eq!(d[1], "x.x");
        assert!(d[0].starts_with("x.v"));
        f.unroll_by("x", Expr::i32(2), TailStrategy::Auto).unwrap();
        // x.x is the outer of a ShiftInwards split with factor 8 >= 2: RoundUp.
        let last = f.function.read().stage.splits.last().cloned().unwrap();
        match last {
            Split::Split { tail, .. } => assert_eq!(tail, TailStrategy::RoundUp),
            _ => panic!(),
        }
        let g = mk();
        g.fuse("x", "y", "t").unwrap();
        assert_eq!(dims(&g), ["x.t", "__outermost"]);
        let g = mk();
        g.tile(
            "x",
            "y",
            "xo",
            "yo",
            "xi",
            "yi",
            Expr::i32(8),
            Expr::i32(8),
            TailStrategy::Auto,
        )
        .unwrap();
        assert_eq!(dims(&g), ["x.xi", "y.yi", "x.xo", "y.yo", "__outermost"]);
        let e = g.vectorize("zz").unwrap_err();
        assert!(e
            .message
            .contains("could not find dimension zz to mark as vectorized"));
    }
}
