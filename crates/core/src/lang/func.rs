//! `Func`: the user's handle on a `Function` — definition (`f[x, y] = e`),
//! calls (`f[x, y]` → `FuncRef` → a `Call` Expr), and the scheduling
//! directives of the pure stage (split, fuse, reorder, tile, vectorize,
//! unroll, parallel, serial, compute_root, compute_inline, store_root),
//! with Halide's validation and error messages.
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
//! - `Function.schedule.compute_level / store_level`.

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{CallKind, Expr, ExprNode, ForType, Type};
use crate::lang::function::Function;
use crate::lang::operators::cast;
use crate::lang::print::{expr_to_string, ir_type_name};
use crate::lang::var::{is_implicit_name, unique_func_name, Var};
use crate::schedule::{Dim, LoopLevel, Split, StageSchedule, TailStrategy, OUTERMOST};

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

fn undefined_variable(e: &Expr, bound: &[String]) -> Option<String> {
    fn walk(e: &Expr, bound: &mut Vec<String>) -> Option<String> {
        match e.node() {
            ExprNode::Variable { name, param: None } => {
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

fn dump_dims(dims: &[Dim]) -> String {
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
fn check_call_args(name: &str, args: Vec<Expr>) -> Result<Vec<Expr>> {
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

fn is_placeholder(a: &Expr) -> bool {
    a.as_variable() == Some("_")
}

/// Replace the placeholder `_` in call arguments by as many implicit vars
/// (`_0`, `_1`, ...) as the callee's remaining dimensions, as Halide does:
/// `g[x, _]` on a 3-D `g` is `g(x, _0, _1)`.
fn expand_placeholder(callee: &str, args: Vec<Expr>, dims: usize) -> Result<Vec<Expr>> {
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

impl Func {
    /// `Func()` / `Func("name")`.
    pub fn new(name: Option<&str>) -> Func {
        Func {
            function: Function::new(unique_func_name(name)),
            required_dims: None,
        }
    }

    /// `Func(required_types, required_dimensions, name)`.
    pub fn with_requirements(types: Vec<Type>, dims: usize, name: &str) -> Func {
        let f = Func::new(Some(name));
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
        Ok(self.function.values())
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

    /// `f[args] = values` (one value, or several for a Tuple).
    pub fn define(&self, args: Vec<Expr>, values: Vec<Expr>) -> Result<()> {
        let name = self.name();
        if self.defined() {
            return Err(Error::unimplemented(format!(
                "Update definitions (Func \"{name}\" already has a pure definition; defining it again)"
            )));
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
        if !required.is_empty() {
            if required.len() != values.len() {
                return Err(Error::user(format!(
                    "Func \"{name}\" is constrained to have exactly {} values, but is defined with {} values.\n",
                    required.len(),
                    values.len()
                )));
            }
            for (t, v) in required.iter().zip(&values) {
                if *t != v.ty() {
                    return Err(Error::user(format!(
                        "Func \"{name}\" is constrained to only hold values of type {} but is defined with values of type {}.\n",
                        ir_type_name(*t),
                        ir_type_name(v.ty())
                    )));
                }
            }
        }
        if let Some(d) = self.required_dims {
            if d != arg_names.len() {
                return Err(Error::user(format!(
                    "Func \"{name}\" is constrained to have exactly {d} dimensions, but is defined with {} dimensions.\n",
                    arg_names.len()
                )));
            }
        }
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

    fn with_stage<R>(
        &self,
        directive: &str,
        f: impl FnOnce(&mut StageSchedule, &str) -> Result<R>,
    ) -> Result<R> {
        let name = self.name();
        if !self.defined() {
            return Err(Error::user(format!(
                "In schedule for {name}: can't apply {directive} to Func \"{name}\" because it has not been defined yet.\n"
            )));
        }
        // Work on a copy so a failing directive leaves the schedule untouched.
        let mut stage = self.function.read().stage.clone();
        let r = f(&mut stage, &name)?;
        self.function.write().stage = stage;
        Ok(r)
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
        self.with_stage("split", |st, name| {
            split_stage(st, name, old, outer, inner, factor, tail)
        })
    }

    /// `fuse(inner, outer, fused)`.
    pub fn fuse(&self, inner: &str, outer: &str, fused: &str) -> Result<()> {
        self.with_stage("fuse", |st, name| {
            let dims = &mut st.dims;
            let Some(oi) = dims.iter().position(|d| var_name_match(&d.var, outer)) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find outer fuse dimension: {outer}\n{}",
                    dump_dims(dims)
                )));
            };
            let outer_dim = dims.remove(oi);
            let Some(ii) = dims.iter().position(|d| var_name_match(&d.var, inner)) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find inner fuse dimension: {inner}\n{}",
                    dump_dims(dims)
                )));
            };
            let inner_name = dims[ii].var.clone();
            let fused_name = format!("{inner_name}.{fused}");
            dims[ii].var = fused_name.clone();
            st.splits.push(Split::Fuse {
                inner: inner_name,
                outer: outer_dim.var,
                fused: fused_name,
            });
            Ok(())
        })
    }

    /// `reorder(vars...)`, innermost first.
    pub fn reorder(&self, vars: &[String]) -> Result<()> {
        self.with_stage("reorder", |st, name| {
            let dims_old = st.dims.clone();
            let mut idx = Vec::with_capacity(vars.len());
            for (i, v) in vars.iter().enumerate() {
                let found = dims_old.iter().rposition(|d| var_name_match(&d.var, v));
                let Some(j) = found else {
                    return Err(Error::user(format!(
                        "In schedule for {name}, could not find var {v} to reorder in the argument list.\n{}",
                        dump_dims(&dims_old)
                    )));
                };
                if idx[..i].contains(&j) {
                    return Err(Error::user(format!("In schedule for {name}, call to reorder references {v} twice.\n")));
                }
                idx.push(j);
            }
            let mut sorted = idx.clone();
            sorted.sort_unstable();
            let mut dims = dims_old.clone();
            for (i, &s) in sorted.iter().enumerate() {
                dims[s] = dims_old[idx[i]].clone();
            }
            if dims.last().map(|d| d.var.as_str()) != Some(OUTERMOST) {
                return Err(Error::user("Var::outermost() may not be reordered inside any other var.\n"));
            }
            st.dims = dims;
            Ok(())
        })
    }

    /// Set the loop type of every dim matching `var`.
    pub fn set_for_type(&self, var: &str, t: ForType) -> Result<()> {
        self.with_stage(for_type_word(t), |st, name| set_dim_type(st, name, var, t))
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
        self.with_stage("vectorize", |st, name| {
            let tmp = Var::fresh();
            split_stage(st, name, var, var, tmp.name(), factor, tail)?;
            set_dim_type(st, name, tmp.name(), ForType::Vectorized)
        })
    }

    /// `unroll(var, factor, tail)`.
    pub fn unroll_by(&self, var: &str, factor: Expr, tail: TailStrategy) -> Result<()> {
        self.with_stage("unroll", |st, name| {
            let tmp = Var::fresh();
            split_stage(st, name, var, var, tmp.name(), factor, tail)?;
            set_dim_type(st, name, tmp.name(), ForType::Unrolled)
        })
    }

    /// `parallel(var, task_size, tail)`: split and parallelize the outer var.
    pub fn parallel_by(&self, var: &str, factor: Expr, tail: TailStrategy) -> Result<()> {
        self.with_stage("parallel", |st, name| {
            let tmp = Var::fresh();
            split_stage(st, name, var, var, tmp.name(), factor, tail)?;
            set_dim_type(st, name, var, ForType::Parallel)
        })
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
        let snapshot = self.function.read().stage.clone();
        let r = (|| {
            self.split(x, xo, xi, xfactor, tail)?;
            self.split(y, yo, yi, yfactor, tail)?;
            self.reorder(&[
                xi.to_string(),
                yi.to_string(),
                xo.to_string(),
                yo.to_string(),
            ])
        })();
        if r.is_err() {
            self.function.write().stage = snapshot;
        }
        r
    }

    /// `compute_root()`.
    pub fn compute_root(&self) {
        let mut c = self.function.write();
        c.schedule.compute_level = LoopLevel::Root;
        if c.schedule.store_level.is_inlined() {
            c.schedule.store_level = LoopLevel::Root;
        }
    }

    /// `compute_inline()`.
    pub fn compute_inline(&self) {
        let mut c = self.function.write();
        c.schedule.compute_level = LoopLevel::Inlined;
        c.schedule.store_level = LoopLevel::Inlined;
    }

    /// `store_root()`.
    pub fn store_root(&self) {
        self.function.write().schedule.store_level = LoopLevel::Root;
    }

    /// `bound(var, min, extent)`: this Func is computed over exactly
    /// `[min, min + extent)` in `var`, whatever its consumers need.
    pub fn bound(&self, var: &str, min: Expr, extent: Expr) -> Result<()> {
        self.add_bound(var, Some(min), extent)
    }

    /// `bound_extent(var, extent)`: like `bound`, with the min left to inference.
    pub fn bound_extent(&self, var: &str, extent: Expr) -> Result<()> {
        self.add_bound(var, None, extent)
    }

    fn add_bound(&self, var: &str, min: Option<Expr>, extent: Expr) -> Result<()> {
        let name = self.name();
        if !self.function.args().iter().any(|a| a == var) {
            return Err(Error::user(format!(
                "Can't bound variable {var} of function {name} because {var} is not one of the pure variables of {name}.\n"
            )));
        }
        let to_i32 = |e: Expr, what: &str| -> Result<Expr> {
            if e.ty().is_int_or_uint() && e.ty().is_scalar() {
                Ok(Expr::cast(crate::ir::Type::i32(), e))
            } else {
                Err(Error::user(format!(
                    "The {what} of a bound on {name}.{var} must be an integer, not {}.\n",
                    e.ty()
                )))
            }
        };
        let min = min.map(|m| to_i32(m, "min")).transpose()?;
        let extent = to_i32(extent, "extent")?;
        self.function
            .write()
            .schedule
            .bounds
            .push(crate::schedule::Bound {
                var: var.to_string(),
                min,
                extent: Some(extent),
                modulus: None,
                remainder: None,
            });
        Ok(())
    }

    /// `compute_at(f, var)`: compute this Func inside `f`'s loop over `var`.
    /// Whether that loop encloses every use is checked at lowering.
    pub fn compute_at(&self, f: &Func, var: &str) -> Result<()> {
        let level = Self::loop_level_of(f, var)?;
        let mut c = self.function.write();
        c.schedule.compute_level = level.clone();
        if c.schedule.store_level.is_inlined() {
            c.schedule.store_level = level;
        }
        Ok(())
    }

    /// `store_at(f, var)`: allocate this Func's storage at `f`'s loop over `var`.
    pub fn store_at(&self, f: &Func, var: &str) -> Result<()> {
        let level = Self::loop_level_of(f, var)?;
        self.function.write().schedule.store_level = level;
        Ok(())
    }

    fn loop_level_of(f: &Func, var: &str) -> Result<LoopLevel> {
        let dims: Vec<String> = f
            .function
            .read()
            .stage
            .dims
            .iter()
            .map(|d| d.var.clone())
            .collect();
        let suffix = format!(".{var}");
        if !dims.iter().any(|d| d == var || d.ends_with(&suffix)) {
            return Err(Error::user(format!(
                "Func {} has no loop over a variable named {var}; it can't be used as a loop level.\nLoops: {}",
                f.name(),
                dims.join(" ")
            )));
        }
        Ok(LoopLevel::At {
            func: f.name(),
            var: var.to_string(),
            stage: 0,
        })
    }

    /// Halide's `print_loop_nest` for a Func whose producers are all inlined:
    /// the loop nest of the pure stage.
    pub fn loop_nest_string(&self) -> Result<String> {
        let name = self.name();
        if !self.defined() {
            return Err(Error::user(format!(
                "Func \"{name}\" has not been defined.\n"
            )));
        }
        let mut callees = vec![];
        for v in self.function.values() {
            crate::ir::visit::for_each_expr(&v, &mut |e| {
                if let ExprNode::Call {
                    kind: CallKind::Halide { func, .. },
                    ..
                } = e.node()
                {
                    if !func.read().schedule.compute_level.is_inlined() {
                        callees.push(func.name());
                    }
                }
            });
        }
        if !callees.is_empty() {
            return Err(Error::unimplemented(format!(
                "print_loop_nest for pipelines with non-inlined producers ({})",
                callees.join(", ")
            )));
        }
        let c = self.function.read();
        // Halide prints the Func's base name, without the `$n` uniquifier.
        let base = name.split('$').next().unwrap_or(&name).to_string();
        let mut out = format!("produce {base}:\n");
        let mut indent = 1;
        for d in c.stage.dims.iter().rev() {
            if d.var == OUTERMOST {
                continue;
            }
            let word = match d.for_type {
                ForType::Serial => "for",
                ForType::Parallel => "parallel",
                ForType::Vectorized => "vectorized",
                ForType::Unrolled => "unrolled",
            };
            let mut range = String::new();
            for s in &c.stage.splits {
                if let Split::Split { inner, factor, .. } = s {
                    if *inner == d.var {
                        if let Some(k) = factor.as_int_const() {
                            range = format!(" in [0, {}]", k - 1);
                        }
                    }
                }
            }
            out.push_str(&"  ".repeat(indent));
            out.push_str(&format!("{word} {}{range}:\n", d.var));
            indent += 1;
        }
        out.push_str(&"  ".repeat(indent));
        out.push_str(&format!("{base}(...) = ...\n"));
        Ok(out)
    }
}

fn set_dim_type(st: &mut StageSchedule, name: &str, var: &str, t: ForType) -> Result<()> {
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

fn split_stage(
    st: &mut StageSchedule,
    name: &str,
    old: &str,
    outer: &str,
    inner: &str,
    factor: Expr,
    tail: TailStrategy,
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
    let factor = cast(Type::i32(), factor)?;
    let old_name = st.dims[i].var.clone();
    let inner_name = format!("{old_name}.{inner}");
    let outer_name = format!("{old_name}.{outer}");
    let old_dim = st.dims[i].clone();
    st.dims.insert(i, old_dim);
    st.dims[i].var = inner_name.clone();
    st.dims[i + 1].var = outer_name.clone();

    let tail = if tail == TailStrategy::Auto {
        // Pure definition: ShiftInwards, unless this var is the outer of an
        // earlier ShiftInwards split whose factor is at least this one.
        let mut descends: Vec<(String, Expr)> = vec![];
        for s in &st.splits {
            match s {
                Split::Split {
                    old,
                    outer,
                    inner,
                    factor,
                    tail,
                } => {
                    let parent = descends
                        .iter()
                        .find(|(n, _)| n == old)
                        .map(|(_, f)| f.clone());
                    if *tail == TailStrategy::ShiftInwards {
                        descends.push((outer.clone(), factor.clone()));
                    } else if let Some(f) = parent {
                        descends.push((inner.clone(), f.clone()));
                        descends.push((outer.clone(), f));
                    }
                }
                Split::Rename { old, new } => {
                    if let Some(f) = descends
                        .iter()
                        .find(|(n, _)| n == old)
                        .map(|(_, f)| f.clone())
                    {
                        descends.push((new.clone(), f));
                    }
                }
                Split::Fuse { .. } => {}
            }
        }
        let covered = descends
            .iter()
            .rev()
            .find(|(n, _)| *n == old_name)
            .and_then(|(_, f)| match (f.as_int_const(), factor.as_int_const()) {
                (Some(a), Some(b)) => Some(a >= b),
                _ => None,
            });
        if covered == Some(true) {
            TailStrategy::RoundUp
        } else {
            TailStrategy::ShiftInwards
        }
    } else {
        tail
    };
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
                func: f.function.clone(),
                value_index: i,
            },
        ))
    }

    /// `f[args] = values`.
    pub fn define(&self, values: Vec<Expr>) -> Result<()> {
        self.func.define(self.args.clone(), values)
    }
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
        let e = g.define(vec![x.clone()], vec![x.clone()]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Unimplemented);
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
