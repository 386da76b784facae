//! `hl.Func`, `hl.FuncRef`, `hl.FuncTupleElementRef`, `hl.TailStrategy`,
//! `hl.MemoryType`.

use pyo3::exceptions::{PyAttributeError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;

use pyo3::types::{PyList, PyString, PyTuple};

use ferrohalide_core::ir::{Expr, MemoryType, Type};
use ferrohalide_core::lang::func::{image_call, Func, FuncRef};
use ferrohalide_core::lang::loop_level::LoopLevelHandle;
use ferrohalide_core::lang::operators::{Op, Operand};
use ferrohalide_core::lang::output_buffer::{output_buffer, output_buffers};
use ferrohalide_core::lang::var::Var;
use ferrohalide_core::lower::StmtOutputFormat;
use ferrohalide_core::schedule::TailStrategy;

use crate::errors::{HalideError, IntoPy};
use crate::py_buffer::PyBuffer;
use crate::py_expr::{py_to_expr, PyExpr};
use crate::py_loop_level::PyLoopLevel;
use crate::py_rdom::{var_or_rvar, PyRVar};
use crate::py_type::{type_from_py, PyType};
use crate::py_var::{var_name, PyVar};

use crate::py_output_buffer::PyOutputImageParam;
use crate::py_stage::PyStage;

crate::py_enum::halide_enum!(PyTailStrategy, "TailStrategy", [
    RoundUp = 0,
    GuardWithIf = 1,
    Predicate = 2,
    PredicateLoads = 3,
    PredicateStores = 4,
    ShiftInwards = 5,
    ShiftInwardsAndBlend = 6,
    RoundUpAndBlend = 7,
    Auto = 8,
]);

impl PyTailStrategy {
    pub fn to_core(self) -> TailStrategy {
        match self {
            PyTailStrategy::RoundUp => TailStrategy::RoundUp,
            PyTailStrategy::GuardWithIf => TailStrategy::GuardWithIf,
            PyTailStrategy::Predicate => TailStrategy::Predicate,
            PyTailStrategy::PredicateLoads => TailStrategy::PredicateLoads,
            PyTailStrategy::PredicateStores => TailStrategy::PredicateStores,
            PyTailStrategy::ShiftInwards => TailStrategy::ShiftInwards,
            PyTailStrategy::ShiftInwardsAndBlend => TailStrategy::ShiftInwardsAndBlend,
            PyTailStrategy::RoundUpAndBlend => TailStrategy::RoundUpAndBlend,
            PyTailStrategy::Auto => TailStrategy::Auto,
        }
    }
}

crate::py_enum::halide_enum!(
    /// `hl.StmtOutputFormat`, the formats of `compile_to_lowered_stmt`.
    PyStmtOutputFormat, "StmtOutputFormat", [Text = 0, HTML = 1]);

impl PyStmtOutputFormat {
    fn to_core(self) -> StmtOutputFormat {
        match self {
            PyStmtOutputFormat::Text => StmtOutputFormat::Text,
            PyStmtOutputFormat::HTML => StmtOutputFormat::Html,
        }
    }
}

pub(crate) fn tail_of(t: Option<PyTailStrategy>) -> TailStrategy {
    t.map(|t| t.to_core()).unwrap_or(TailStrategy::Auto)
}

/// The two ways to name a placement: `(f, var)` or a LoopLevel.
enum Placement {
    At(Func, String),
    Level(LoopLevelHandle),
}

fn placement_args(args: &Bound<'_, PyTuple>, method: &str) -> PyResult<Placement> {
    let bad = || {
        PyTypeError::new_err(format!(
            "{method}(): incompatible function arguments. The following argument types are supported:\n    1. (self: halide.Func, f: halide.Func, var: halide.Var) -> halide.Func\n    2. (self: halide.Func, f: halide.Func, rvar: halide.RVar) -> halide.Func\n    3. (self: halide.Func, loop_level: halide.LoopLevel) -> halide.Func\n"
        ))
    };
    match args.len() {
        1 => {
            let l = args.get_item(0)?;
            let l = l.extract::<PyRef<PyLoopLevel>>().map_err(|_| bad())?;
            Ok(Placement::Level(l.inner.clone()))
        }
        2 => {
            let f = args.get_item(0)?;
            let f = f.extract::<PyRef<PyFunc>>().map_err(|_| bad())?;
            let v = args.get_item(1)?;
            let v = var_or_rvar(&v).map_err(|_| bad())?;
            Ok(Placement::At(f.inner.clone(), v.name))
        }
        _ => Err(bad()),
    }
}

crate::py_enum::halide_enum!(PyMemoryType, "MemoryType", [
    Auto = 0,
    Heap = 1,
    Stack = 2,
    Register = 3,
    GPUShared = 4,
    GPUTexture = 5,
    LockedCache = 6,
    VTCM = 7,
]);

impl PyMemoryType {
    pub fn from_core(t: MemoryType) -> PyMemoryType {
        match t {
            MemoryType::Auto => PyMemoryType::Auto,
            MemoryType::Heap => PyMemoryType::Heap,
            MemoryType::Stack => PyMemoryType::Stack,
            MemoryType::Register => PyMemoryType::Register,
            MemoryType::GPUShared => PyMemoryType::GPUShared,
            MemoryType::GPUTexture => PyMemoryType::GPUTexture,
            MemoryType::LockedCache => PyMemoryType::LockedCache,
            MemoryType::VTCM => PyMemoryType::VTCM,
        }
    }
    pub fn to_core(self) -> MemoryType {
        match self {
            PyMemoryType::Auto => MemoryType::Auto,
            PyMemoryType::Heap => MemoryType::Heap,
            PyMemoryType::Stack => MemoryType::Stack,
            PyMemoryType::Register => MemoryType::Register,
            PyMemoryType::GPUShared => MemoryType::GPUShared,
            PyMemoryType::GPUTexture => MemoryType::GPUTexture,
            PyMemoryType::LockedCache => MemoryType::LockedCache,
            PyMemoryType::VTCM => MemoryType::VTCM,
        }
    }
}

/// `hl.EvictionKey(expr)`: the value a memoized Func's realizations are
/// stored under (`Func.memoize(eviction_key)`).
#[pyclass(name = "EvictionKey", module = "ferrohalide", frozen)]
pub struct PyEvictionKey {
    key: Expr,
}

#[pymethods]
impl PyEvictionKey {
    #[new]
    fn py_new(expr: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PyEvictionKey { key: crate::py_expr::py_to_expr(expr)? })
    }
    fn __repr__(&self) -> String {
        format!("<halide.EvictionKey {}>", ferrohalide_core::lang::print::expr_to_string(&self.key))
    }
}

/// `hl.Func`: a function over integer coordinates, the building block of a
/// pipeline; define it by assigning to it (`f[x, y] = expr`), and again for
/// each update definition. Built as `Func()`, `Func(name)`,
/// `Func(type, dimensions, name)` or `Func([types], dimensions, name)` (a
/// Func whose definition must have these types and dimension count),
/// `Func(expr)` (a zero-dimensional Func of `expr`) or `Func(buffer)` (a Func
/// that reads the Buffer). Its scheduling methods act on its pure definition
/// and return the Func, so calls can be chained; `update(i)` gives the Stage
/// of an update definition.
#[pyclass(name = "Func", module = "ferrohalide", frozen, subclass)]
pub struct PyFunc {
    pub inner: Func,
}

/// `hl.FuncRef`: a Func at some coordinates, what `f[x, y]` returns. Read,
/// it is a call to the Func, usable as an Expr; assigned (`f[x, y] = e`), it
/// defines the Func. `f[x] += e` (also `-=`, `*=`, `/=`) adds an update
/// definition, first defining an undefined `f` as 0 (1 for `*=` and `/=`).
/// For a Tuple-valued Func, `f[x, y][i]` is element `i`.
#[pyclass(name = "FuncRef", module = "ferrohalide", frozen)]
pub struct PyFuncRef {
    pub inner: FuncRef,
}

/// The value of `f[args] + e` (or `-`, `*`, `/`) while `f` is not defined
/// yet. It only serves `f[args] += e`: assigning it back to `f[args]` defines
/// `f` as 0 (1 for `*` and `/`) and adds the update; it cannot be used as an
/// Expr.
// Python's `f[args] op= e` computes `f[args] op e`, then assigns it to
// `f[args]` (Halide's binding does the same). The type's qualified name is
// Halide's: Python prints it in the TypeError of a second `+=`, and Halide's
// own tests match that text.
#[pyclass(name = "_UnevaluatedFuncRefExpr", module = "halide.halide_", frozen)]
pub struct PyUnevaluatedFuncRefExpr {
    pub target: FuncRef,
    pub op: Op,
    pub rhs: Operand,
}

/// `hl.FuncTupleElementRef`: one element of a call to a Tuple-valued Func,
/// what `f[x, y][i]` returns; usable as an Expr.
#[pyclass(name = "FuncTupleElementRef", module = "ferrohalide", frozen)]
pub struct PyFuncTupleElementRef {
    pub inner: FuncRef,
    pub index: usize,
}

fn func_args_from_key(key: &Bound<'_, PyAny>) -> PyResult<Vec<Expr>> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = key.cast::<PyList>() {
        l.iter().collect()
    } else {
        vec![key.clone()]
    };
    items
        .iter()
        .map(|i| {
            if i.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(
                    "__getitem__(): Func arguments must be Vars, Exprs or ints",
                ));
            }
            py_to_expr(i)
        })
        .collect()
}

/// An undefined `hl.Expr()` among the values of `f[...] = value` is
/// reported by position, as Halide does.
fn check_values_defined(func: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let items: Vec<Bound<'_, PyAny>> = match value.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![value.clone()],
    };
    for (i, v) in items.iter().enumerate() {
        if v.extract::<PyRef<PyExpr>>().is_ok_and(|e| e.undefined) {
            return Err(HalideError::new_err(format!(
                "Error: Value {} in definition of \"{func}\" is undefined.\n",
                i + 1
            )));
        }
    }
    Ok(())
}

fn func_values_from_py(func: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<Expr>> {
    check_values_defined(func, value)?;
    if let Some(values) = crate::py_tuple::definition_values(value)? {
        return Ok(values);
    }
    if value.extract::<PyRef<PyFunc>>().is_ok()
        || value.is_instance_of::<PyString>()
        || value.is_none()
    {
        return Err(PyTypeError::new_err(format!(
            "__setitem__(): a Func can't be defined with a value of type '{}'",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )));
    }
    Ok(vec![py_to_expr(value)?])
}

impl PyFunc {
    /// What `compile_to_*` compiles: this Func alone.
    fn compilable(&self) -> PyResult<crate::py_compile_to::CompileTo> {
        Ok(crate::py_compile_to::CompileTo {
            outputs: vec![self.inner.function.clone()],
            requirements: vec![],
            auto_schedule: None,
        })
    }
}

/// The stage a Func's directives schedule: its pure definition.
fn pure_stage_of(f: &PyFunc) -> ferrohalide_core::lang::stage::Stage {
    f.inner.stage()
}

crate::schedule_methods!(PyFunc, pure_stage_of, "Func");
crate::compile_methods!(PyFunc);

#[pymethods]
impl PyFunc {
    /// `Func()`, `Func(name)`, `Func(type, dimensions, name)`,
    /// `Func([types], dimensions, name)`, `Func(expr)`, `Func(buffer)`.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let n = args.len();
        if n == 0 {
            return Ok(PyFunc {
                inner: Func::new(None),
            });
        }
        let a0 = args.get_item(0)?;
        if n == 1 {
            if let Ok(name) = a0.extract::<String>() {
                return Ok(PyFunc {
                    inner: Func::named(&name).py()?,
                });
            }
            if let Ok(b) = a0.extract::<PyRef<PyBuffer>>() {
                let buf = b.inner.clone();
                let f = Func::new(None);
                let vars: Vec<Expr> = (0..buf.dimensions())
                    .map(|i| Var::implicit(i).expr())
                    .collect();
                let call = image_call(&buf, vars).py()?;
                define_with_implicit_args(&f, buf.dimensions(), call)?;
                return Ok(PyFunc { inner: f });
            }
            let e = py_to_expr(&a0)?;
            let f = Func::new(None);
            f.define(vec![], vec![e]).py()?;
            return Ok(PyFunc { inner: f });
        }
        if n == 3 {
            let dims: usize = args.get_item(1)?.extract()?;
            let name: String = args.get_item(2)?.extract()?;
            let types = if let Ok(l) = a0.cast::<PyList>() {
                l.iter()
                    .map(|t| type_from_py(&t))
                    .collect::<PyResult<Vec<Type>>>()?
            } else if let Ok(t) = a0.cast::<PyTuple>() {
                t.iter()
                    .map(|t| type_from_py(&t))
                    .collect::<PyResult<Vec<Type>>>()?
            } else {
                vec![type_from_py(&a0)?]
            };
            return Ok(PyFunc {
                inner: Func::with_requirements(types, dims, &name),
            });
        }
        Err(PyTypeError::new_err(
            "__init__(): incompatible constructor arguments for halide.Func",
        ))
    }

    /// `name()`: the Func's name (the one given, or a generated unique one).
    fn name(&self) -> String {
        self.inner.name()
    }
    /// `defined()`: True once the Func has a pure definition.
    fn defined(&self) -> bool {
        self.inner.defined()
    }
    /// `dimensions()`: the number of arguments of the Func. Raises an error
    /// if the Func is undefined and was not declared with a dimension count.
    fn dimensions(&self) -> PyResult<usize> {
        self.inner.dimensions().py()
    }
    /// `type()`: the Type of the Func's value. Raises an error if the Func is
    /// Tuple-valued, or undefined and declared without types.
    fn r#type(&self) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.inner.output_type().py()?,
        })
    }
    /// `types()`: the list of the Types of the Func's values, one per Tuple
    /// element. Raises an error if the Func is undefined and declared without
    /// types.
    fn types(&self) -> PyResult<Vec<PyType>> {
        Ok(self
            .inner
            .output_types()
            .py()?
            .into_iter()
            .map(|t| PyType { inner: t })
            .collect())
    }
    /// `outputs()`: the number of values the Func computes (the size of its
    /// Tuple, or 1). Raises an error as `types()` does.
    fn outputs(&self) -> PyResult<usize> {
        self.inner.outputs().py()
    }
    /// `args()`: the list of the Vars of the pure definition, in order
    /// (empty if the Func is undefined).
    fn args(&self) -> Vec<PyVar> {
        self.inner
            .args()
            .into_iter()
            .map(|v| PyVar { inner: v })
            .collect()
    }
    /// `value()`: the Expr the pure definition computes. Raises an error if
    /// the Func is undefined or Tuple-valued.
    fn value(&self) -> PyResult<PyExpr> {
        if !self.inner.defined() {
            return Err(HalideError::new_err(
                "Error: Can't call Func::value() on an undefined Func. To check if a Func is defined, call Func::defined()\n",
            ));
        }
        Ok(PyExpr::new(self.inner.value().py()?))
    }
    /// `values()`: the Exprs the pure definition computes, as a tuple (one
    /// per Tuple element). Raises an error if the Func is undefined.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if !self.inner.defined() {
            return Err(HalideError::new_err(
                "Error: Can't call Func::values() on an undefined Func. To check if a Func is defined, call Func::defined().\n",
            ));
        }
        let vals: Vec<PyExpr> = self
            .inner
            .values()
            .py()?
            .into_iter()
            .map(PyExpr::new)
            .collect();
        PyTuple::new(py, vals)
    }
    /// `has_update_definition()`: True if the Func has at least one update
    /// definition.
    fn has_update_definition(&self) -> bool {
        self.inner.has_update_definition()
    }
    /// `num_update_definitions()`: the number of update definitions.
    fn num_update_definitions(&self) -> usize {
        self.inner.num_update_definitions()
    }
    /// `update_args(i)`: the coordinates update definition `i` writes (the
    /// arguments on its left-hand side), as a list of Exprs. Raises an error
    /// if there is no such update.
    fn update_args(&self, i: usize) -> PyResult<Vec<PyExpr>> {
        Ok(self
            .inner
            .update_args(i)
            .py()?
            .into_iter()
            .map(PyExpr::new)
            .collect())
    }
    /// `update_values(i)`: the Exprs update definition `i` stores, as a
    /// tuple (one per Tuple element). Raises an error if there is no such
    /// update.
    fn update_values<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyTuple>> {
        let vals: Vec<PyExpr> = self
            .inner
            .update_values(i)
            .py()?
            .into_iter()
            .map(PyExpr::new)
            .collect();
        PyTuple::new(py, vals)
    }
    /// `update_value(i)`: the Expr update definition `i` stores. Raises an
    /// error if there is no such update or the Func is Tuple-valued.
    fn update_value(&self, i: usize) -> PyResult<PyExpr> {
        Ok(PyExpr::new(self.inner.update_value(i).py()?))
    }
    /// `rvars(i)`: the RVars update definition `i` iterates over, in the
    /// order of its RDom's dimensions (empty if it uses no RDom). Raises an
    /// error if there is no such update.
    fn rvars(&self, i: usize) -> PyResult<Vec<PyRVar>> {
        Ok(self
            .inner
            .rvars(i)
            .py()?
            .into_iter()
            .map(|inner| PyRVar { inner })
            .collect())
    }
    /// `update(i=0)`: the Stage of update definition `i`, to schedule it.
    /// Raises an error if there is no such update.
    #[pyo3(signature = (i=0))]
    fn update(&self, i: i64) -> PyResult<PyStage> {
        let i = usize::try_from(i)
            .map_err(|_| HalideError::new_err("Error: Call to update with a negative index.\n"))?;
        Ok(PyStage {
            inner: self.inner.update(i).py()?,
        })
    }
    /// A Func is not iterable: `iter(f)` raises TypeError.
    // Without this, Python would iterate through `__getitem__` (f[0], f[1],
    // ...), which never ends.
    fn __iter__(&self) -> PyResult<()> {
        Err(crate::errors::not_iterable("Func"))
    }

    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyFuncRef> {
        let args = func_args_from_key(key)?;
        Ok(PyFuncRef {
            inner: self.inner.call(args).py()?,
        })
    }

    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let args = func_args_from_key(key)?;
        if !self.inner.function.has_pure_definition() && !self.inner.function.has_updates() {
            crate::errors::record_definition_site(key.py(), &self.inner.name());
        }
        if let Ok(u) = value.extract::<PyRef<PyUnevaluatedFuncRefExpr>>() {
            // `f[x] op= e` on an undefined Func (see PyUnevaluatedFuncRefExpr).
            let same_args = u.target.args.len() == args.len()
                && u.target
                    .args
                    .iter()
                    .zip(&args)
                    .all(|(a, b)| ferrohalide_core::ir::equality::equal(a, b));
            let name = u.target.func.function.name();
            if !u.target.func.function.same_as(&self.inner.function) || !same_args {
                return Err(HalideError::new_err(format!(
                    "Error: Cannot use an unevaluated reference to '{name}' to define an update at a different location.\n"
                )));
            }
            if self.inner.function.has_pure_definition() {
                return Err(HalideError::new_err(format!(
                    "Error: Cannot use an unevaluated reference to '{name}' to define an update when a pure definition already exists.\n"
                )));
            }
            return u.target.compound_update(u.op, u.rhs.clone()).py();
        }
        let values = func_values_from_py(&self.inner.name(), value)?;
        self.inner.define(args, values).py()
    }

    /// `realize(sizes, target=None)`: compile the pipeline that ends at this
    /// Func (unless already compiled for `target`) and run it over
    /// `[0, size)` in each dimension of the list `sizes`; returns a new
    /// Buffer, or a tuple of Buffers for a Tuple-valued Func.
    /// `realize(buffer)` or `realize([buffers])` fills the given Buffers
    /// over their regions instead and returns None. `target` (also accepted
    /// as the second positional argument) defaults to the target the
    /// pipeline was last compiled for while unchanged, else the JIT target
    /// from the environment (`HL_JIT_TARGET`, else the host), as in Halide.
    #[pyo3(signature = (*args, target=None))]
    fn realize<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        target: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let function = self.inner.function.clone();
        crate::py_pipeline::realize_py(py, vec![function], &[], args, target)
    }

    /// `compile_to_callable(arguments, target=None)`: compile the pipeline
    /// that ends at this Func into an `hl.Callable`, which takes values for
    /// `arguments` (a list of the Params and ImageParams it reads), in that
    /// order, followed by the output Buffer(s).
    #[pyo3(signature = (arguments, target=None))]
    fn compile_to_callable(
        &self,
        arguments: &Bound<'_, PyAny>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::py_pipeline::PyCallable> {
        crate::py_pipeline::compile_to_callable_py(
            vec![self.inner.function.clone()],
            &[],
            arguments,
            target,
        )
    }

    /// `compile_jit(target=None)`: compile the pipeline that ends at this
    /// Func now, so that a later `realize` for the same target reuses the
    /// compiled code. `target` defaults to the JIT target from the
    /// environment. Returns None.
    #[pyo3(signature = (target=None))]
    fn compile_jit(&self, py: Python<'_>, target: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        crate::py_pipeline::compile_jit_py(py, vec![self.inner.function.clone()], &[], target)
    }
    /// `set_estimate(var, min, extent)`: what an autoscheduler should
    /// expect of `var` (and the output buffer's metadata reports).
    fn set_estimate<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        min: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let name = crate::py_var::var_name(var)?;
        slf.get()
            .inner
            .set_estimate(&name, crate::py_expr::py_to_opt_expr(min)?, crate::py_expr::py_to_opt_expr(extent)?)
            .py()?;
        Ok(slf.clone())
    }
    /// `set_estimates([(min, extent), ...])`, one per dimension.
    fn set_estimates<'py>(slf: &Bound<'py, Self>, estimates: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let region = crate::py_boundary::region_from_py(estimates, "set_estimates")?;
        slf.get().inner.set_estimates(region).py()?;
        Ok(slf.clone())
    }

    // ---- ahead-of-time compilation (py_compile_to.rs) ----



    /// `infer_input_bounds(dst, target=None)`: work out which region of
    /// each input the pipeline would read to produce `dst` (a list of output
    /// sizes, a Buffer or a list of Buffers), and give every ImageParam
    /// without a Buffer a new, zero-filled Buffer of that region. Returns
    /// None.
    #[pyo3(signature = (dst, target=None))]
    fn infer_input_bounds(
        &self,
        py: Python<'_>,
        dst: &Bound<'_, PyAny>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::py_pipeline::infer_input_bounds_py(py, vec![self.inner.function.clone()], &[], dst, target)
    }

    /// `infer_arguments()`: the inputs the pipeline that ends at this Func
    /// reads, as a list of `hl.Argument`s: its ImageParams, then its scalar
    /// Params.
    fn infer_arguments(&self, py: Python<'_>) -> PyResult<Vec<crate::py_pipeline::PyArgument>> {
        crate::py_pipeline::infer_arguments_py(py, &[self.inner.function.clone()])
    }

    /// `compile_to_lowered_stmt(filename, arguments, fmt=StmtOutputFormat.Text, target=None)`:
    /// write the final lowered statement of the pipeline that ends at this
    /// Func to `filename`, as text or HTML. `arguments` lists the pipeline's
    /// inputs (Buffers, Params, ImageParams); they are checked, but the
    /// inputs are found from the pipeline itself. Returns None.
    #[pyo3(signature = (filename, arguments, fmt=PyStmtOutputFormat::Text, target=None))]
    fn compile_to_lowered_stmt(
        &self,
        py: Python<'_>,
        filename: String,
        arguments: &Bound<'_, PyAny>,
        fmt: PyStmtOutputFormat,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::py_compile_to::write_lowered_stmt(
            py,
            vec![self.inner.function.clone()],
            &filename,
            arguments,
            fmt.to_core(),
            target,
        )
    }

    // ---- scheduling ----

    /// `async_()`: compute this Func on another thread, concurrently with
    /// the work of its consumers that does not need it. Returns this Func.
    fn async_<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.async_();
        slf.clone()
    }
    /// `ring_buffer(extent)`: give the Func `extent` copies of its storage,
    /// used in turn by successive iterations of the loops between its
    /// `hoist_storage` level and its `store_at` level (so an explicit
    /// `hoist_storage` outside the store level is needed). `extent` must be
    /// a positive integer constant (checked when the pipeline is compiled).
    /// Returns this Func.
    fn ring_buffer<'py>(slf: &Bound<'py, Self>, extent: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.ring_buffer(crate::py_expr::py_to_expr(extent)?).py()?;
        Ok(slf.clone())
    }
    /// `memoize(eviction_key=None)`: keep the realizations across runs in
    /// the runtime's cache, under the `hl.EvictionKey`'s value if given
    /// (`halide_memoization_cache_evict` drops them). A second, different
    /// eviction key is an error. Returns this Func.
    #[pyo3(signature = (eviction_key=None))]
    fn memoize<'py>(slf: &Bound<'py, Self>, eviction_key: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, Self>> {
        match eviction_key.filter(|k| !k.is_none()) {
            None => slf.get().inner.memoize(),
            Some(k) => {
                let key = k.extract::<PyRef<PyEvictionKey>>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(
                        "memoize(): eviction_key must be an hl.EvictionKey",
                    )
                })?;
                slf.get().inner.memoize_with_eviction_key(key.key.clone()).py()?;
            }
        }
        Ok(slf.clone())
    }

    /// `debug_to_file(filename)`: write the realization to the file once the
    /// pipeline is done with it (.npy, .tiff, .mat, else Halide's tmp format).
    /// Returns this Func.
    fn debug_to_file<'py>(slf: &Bound<'py, Self>, filename: &str) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.debug_to_file(filename).py()?;
        Ok(slf.clone())
    }

    /// `is_extern()`: True if the Func is computed by external code: defined
    /// with `define_extern`, or scheduled with `copy_to_host` or
    /// `copy_to_device`.
    fn is_extern(&self) -> bool {
        self.inner.is_extern() || self.inner.function.read().schedule.copy_to_device.is_some()
    }
    /// `extern_function_name()`: the name of the C function an extern Func
    /// calls (`halide_buffer_copy` for a `copy_to_host` or `copy_to_device`
    /// Func), or "" for other Funcs.
    fn extern_function_name(&self) -> String {
        if self.inner.is_extern() {
            self.inner.extern_function_name()
        } else if self.is_extern() {
            "halide_buffer_copy".to_string()
        } else {
            String::new()
        }
    }
    /// `copy_to_host()`: make this Func, which must be a plain copy of one
    /// Func or image (`f[x, y] = g[x, y]`), a copy made on the host. Returns
    /// this Func.
    fn copy_to_host<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        use ferrohalide_core::device_api::DeviceApi;
        slf.get().inner.copy_to_device(DeviceApi::Host, "copy_to_host").py()?;
        Ok(slf.clone())
    }
    /// `copy_to_device(device_api=DeviceAPI.Default_GPU)`: make this Func,
    /// which must be a plain copy of one Func or image (`f[x, y] = g[x, y]`),
    /// a copy made on the device. ferrohalide has no device back end:
    /// compiling a pipeline with a copy to a device raises an error. Returns
    /// this Func.
    #[pyo3(signature = (device_api=None))]
    fn copy_to_device<'py>(slf: &Bound<'py, Self>, device_api: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, Self>> {
        use ferrohalide_core::device_api::DeviceApi;
        let api = match device_api {
            Some(d) if !d.is_none() => crate::py_target::device_api_of(d)?,
            _ => DeviceApi::DefaultGpu,
        };
        slf.get().inner.copy_to_device(api, "copy_to_device").py()?;
        Ok(slf.clone())
    }

    /// `compute_root()`: compute all of this Func once, before the loops of
    /// its consumers. Returns this Func.
    fn compute_root<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.compute_root();
        slf.clone()
    }

    /// `compute_inline()`: compute this Func's values where they are used,
    /// inside its consumers (the default schedule). Returns this Func.
    fn compute_inline<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.compute_inline();
        slf.clone()
    }

    /// `store_root()`: allocate this Func's storage outside all loops, while
    /// computing it where `compute_at` says. Returns this Func.
    fn store_root<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.store_root();
        slf.clone()
    }

    /// `hoist_storage_root()`: make this Func's allocation once, outside all
    /// loops, big enough for every region its store level needs. Returns
    /// this Func.
    fn hoist_storage_root<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.hoist_storage_root();
        slf.clone()
    }

    /// `compute_at(f, var)` or `compute_at(loop_level)`: compute the region
    /// of this Func that is needed inside each iteration of `f`'s loop over
    /// `var` (a Var or RVar), there. With a LoopLevel, later `set` calls on
    /// it move the Func along. Returns this Func.
    #[pyo3(signature = (*args))]
    fn compute_at<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Self>> {
        let f = &slf.get().inner;
        match placement_args(args, "compute_at")? {
            Placement::At(g, v) => f.compute_at(&g, &v),
            Placement::Level(l) => f.compute_at_level(&l),
        }
        Ok(slf.clone())
    }

    /// `store_at(f, var)` or `store_at(loop_level)`: allocate this Func's
    /// storage inside `f`'s loop over `var` (outside its compute level), so
    /// values computed in one iteration of the loops in between can be
    /// reused by the next. Returns this Func.
    #[pyo3(signature = (*args))]
    fn store_at<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Self>> {
        let f = &slf.get().inner;
        match placement_args(args, "store_at")? {
            Placement::At(g, v) => f.store_at(&g, &v),
            Placement::Level(l) => f.store_at_level(&l),
        }
        Ok(slf.clone())
    }

    /// `hoist_storage(f, var)` or `hoist_storage(loop_level)`: make this
    /// Func's allocation at `f`'s loop over `var`, outside its store level,
    /// big enough for every region the store level needs inside it. Returns
    /// this Func.
    #[pyo3(signature = (*args))]
    fn hoist_storage<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Self>> {
        let f = &slf.get().inner;
        match placement_args(args, "hoist_storage")? {
            Placement::At(g, v) => f.hoist_storage(&g, &v),
            Placement::Level(l) => f.hoist_storage_level(&l),
        }
        Ok(slf.clone())
    }

    /// `bound(var, min, extent)`: compute this Func over exactly
    /// `[min, min + extent)` in `var` (a pure Var of the Func), whatever its
    /// consumers need; running the pipeline fails if they need more. Returns
    /// this Func.
    fn bound<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        min: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(var)?;
        slf.get()
            .inner
            .bound(&v, py_to_expr(min)?, py_to_expr(extent)?)
            .py()?;
        Ok(slf.clone())
    }

    /// `align_storage(dim, alignment)`: pad the storage extent of `dim` (a
    /// pure Var of the Func) to a multiple of `alignment`. Returns this Func.
    fn align_storage<'py>(
        slf: &Bound<'py, Self>,
        dim: &Bound<'py, PyAny>,
        alignment: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(dim)?;
        slf.get().inner.align_storage(&v, py_to_expr(alignment)?).py()?;
        Ok(slf.clone())
    }

    /// `bound_storage(dim, bound)`: store `dim` (a pure Var of the Func)
    /// with extent `bound`, whatever region is computed. Returns this Func.
    fn bound_storage<'py>(
        slf: &Bound<'py, Self>,
        dim: &Bound<'py, PyAny>,
        bound: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(dim)?;
        slf.get().inner.bound_storage(&v, py_to_expr(bound)?).py()?;
        Ok(slf.clone())
    }

    /// `fold_storage(var, extent, fold_forward=True)`: store dimension `var`
    /// modulo `extent` (an Int(32)), as a circular buffer, where the loop it
    /// is computed in walks `var` in one direction; `fold_forward` gives that
    /// direction when the compiler cannot prove it (then checked as the
    /// pipeline runs). Compiling checks that each iteration's footprint fits
    /// in `extent`. Returns this Func.
    #[pyo3(signature = (var, extent, fold_forward = true))]
    fn fold_storage<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
        fold_forward: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(var)?;
        slf.get()
            .inner
            .fold_storage(&v, py_to_expr(extent)?, fold_forward)
            .py()?;
        Ok(slf.clone())
    }

    /// `bound_extent(var, extent)`: compute this Func over exactly `extent`
    /// points in `var`, with the min inferred from what the consumers need.
    /// Returns this Func.
    fn bound_extent<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(var)?;
        slf.get().inner.bound_extent(&v, py_to_expr(extent)?).py()?;
        Ok(slf.clone())
    }

    /// `align_bounds(var, modulus, remainder=0)`: widen the region computed
    /// in `var` so its min is `remainder` modulo `modulus` and its extent a
    /// multiple of `modulus`. Returns this Func.
    #[pyo3(signature = (var, modulus, remainder=None))]
    fn align_bounds<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        modulus: &Bound<'py, PyAny>,
        remainder: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(var)?;
        let remainder = match remainder {
            Some(r) => py_to_expr(r)?,
            None => Expr::i32(0),
        };
        slf.get()
            .inner
            .align_bounds(&v, py_to_expr(modulus)?, remainder)
            .py()?;
        Ok(slf.clone())
    }

    /// `align_extent(var, modulus)`: round the extent computed in `var` up
    /// to a multiple of `modulus`, keeping the min. Returns this Func.
    fn align_extent<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        modulus: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(var)?;
        slf.get()
            .inner
            .align_extent(&v, py_to_expr(modulus)?)
            .py()?;
        Ok(slf.clone())
    }

    /// `reorder_storage(x, y, ...)` or `reorder_storage([x, y, ...])`: lay
    /// out the Func's storage with these dimensions in this order, innermost
    /// (fastest-varying) first. At least two Vars are needed. Returns this
    /// Func.
    #[pyo3(signature = (*args))]
    fn reorder_storage<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, Self>> {
        // A single list of Vars, else each argument must be a Var (Halide's
        // bindings raise RuntimeError for anything else there).
        let var_names = |items: Vec<Bound<'py, PyAny>>| -> Option<Vec<String>> {
            items
                .iter()
                .map(|i| {
                    i.extract::<PyRef<PyVar>>()
                        .ok()
                        .map(|v| v.inner.name().to_string())
                })
                .collect()
        };
        let mut names = None;
        if args.len() == 1 {
            let a0 = args.get_item(0)?;
            if let Ok(l) = a0.cast::<PyList>() {
                names = var_names(l.iter().collect());
            } else if let Ok(t) = a0.cast::<PyTuple>() {
                names = var_names(t.iter().collect());
            }
        }
        let names = match names {
            Some(n) => n,
            None => {
                let mut out = vec![];
                for a in args.iter() {
                    match a.extract::<PyRef<PyVar>>() {
                        Ok(v) => out.push(v.inner.name().to_string()),
                        Err(_) => {
                            return Err(PyRuntimeError::new_err(format!(
                                "Unable to cast Python instance of type {} to C++ type '?' (#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)",
                                a.get_type().repr()?
                            )))
                        }
                    }
                }
                out
            }
        };
        slf.get().inner.reorder_storage(&names).py()?;
        Ok(slf.clone())
    }

    /// `trace_loads()`: report every load from this Func, as a line of text
    /// in the pipeline's print output. Returns this Func.
    fn trace_loads<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.trace_loads();
        slf.clone()
    }

    /// `trace_stores()`: report every store to this Func, as a line of text
    /// in the pipeline's print output. Returns this Func.
    fn trace_stores<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.trace_stores();
        slf.clone()
    }

    /// `trace_realizations()`: report where this Func is allocated, produced
    /// and consumed, in the pipeline's print output. Returns this Func.
    fn trace_realizations<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.trace_realizations();
        slf.clone()
    }

    /// `add_trace_tag(trace_tag)`: a string reported, with the traced
    /// events, when a pipeline that traces this Func starts. Returns this
    /// Func.
    fn add_trace_tag<'py>(slf: &Bound<'py, Self>, trace_tag: &str) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.add_trace_tag(trace_tag).py()?;
        Ok(slf.clone())
    }

    /// `store_in(memory_type)`: the kind of memory to put this Func's
    /// storage in (a `MemoryType`; the default is `Auto`). ferrohalide
    /// compiles for the CPU only: `Heap` always allocates on the heap, and the
    /// other types put a small constant-size allocation on the stack. Returns
    /// this Func.
    fn store_in<'py>(slf: &Bound<'py, Self>, memory_type: PyMemoryType) -> Bound<'py, Self> {
        slf.get().inner.store_in(memory_type.to_core());
        slf.clone()
    }

    /// `print_loop_nest()`: print the loop nest of the pipeline that ends at
    /// this Func, as pseudo-code, to stderr. Raises an error if the Func is
    /// undefined.
    fn print_loop_nest(&self, py: Python<'_>) -> PyResult<()> {
        if !self.inner.defined() {
            return Err(HalideError::new_err(format!(
                "Error: Func \"{}\" has not been defined.\n",
                self.inner.name()
            )));
        }
        let outputs = [self.inner.function.clone()];
        let s = crate::gil::detached(py, || {
            ferrohalide_core::lower::print_loop_nest::print_loop_nest(&outputs)
        })
        .py()?;
        let sys = py.import("sys")?;
        // Halide prints the loop nest to stderr.
        sys.getattr("stderr")?.call_method1("write", (s,))?;
        Ok(())
    }

    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(PyAttributeError::new_err(format!(
            "'halide.Func' object has no attribute '{name}'"
        )))
    }

    fn __repr__(&self) -> String {
        format!("<halide.Func '{}'>", self.inner.name())
    }

    // ---- wrappers, specializations, output buffers ----

    /// `in_()`, `in_(g)` or `in_([g, h, ...])`: a new Func that wraps this
    /// one and is used instead of it by `g` only, by the listed Funcs, or
    /// (`in_()`) by every consumer without a wrapper of its own, so the
    /// wrapper can be scheduled on its own (e.g. to stage a copy). Asking
    /// again returns the same wrapper.
    #[pyo3(signature = (*args))]
    fn in_(&self, args: &Bound<'_, PyTuple>) -> PyResult<PyFunc> {
        let f = &self.inner;
        let w = match consumers_from_py(args, "in_")? {
            None => f.in_(),
            Some(Consumers::One(g)) => f.in_func(&g),
            Some(Consumers::Many(gs)) => f.in_funcs(&gs),
        };
        Ok(PyFunc { inner: w.py()? })
    }

    /// `clone_in(g)` or `clone_in([g, h, ...])`: a copy of this Func, with
    /// its definition and schedule, used instead of it by `g` (or by the
    /// listed Funcs) only, so it can be scheduled differently there.
    fn clone_in(&self, arg: &Bound<'_, PyAny>) -> PyResult<PyFunc> {
        let args = PyTuple::new(arg.py(), [arg])?;
        let f = &self.inner;
        let w = match consumers_from_py(&args, "clone_in")? {
            Some(Consumers::One(g)) => f.clone_in(&g),
            Some(Consumers::Many(gs)) => f.clone_in_funcs(&gs),
            None => unreachable!("one argument was given"),
        };
        Ok(PyFunc { inner: w.py()? })
    }

    /// `output_buffer()`: the `hl.OutputImageParam` standing for the Buffer
    /// this Func is realized into, whose shape (`width()`, `dim(i).min()`,
    /// ...) schedules and specialization conditions can use. Raises an error
    /// if the Func is undefined or Tuple-valued.
    fn output_buffer(&self) -> PyResult<PyOutputImageParam> {
        Ok(PyOutputImageParam {
            inner: Some(output_buffer(&self.inner.function).py()?),
        })
    }

    /// `output_buffers()`: the list of the Func's output buffers as
    /// `hl.OutputImageParam`s, one per value. Raises an error if the Func is
    /// undefined.
    fn output_buffers(&self) -> PyResult<Vec<PyOutputImageParam>> {
        Ok(output_buffers(&self.inner.function)
            .py()?
            .into_iter()
            .map(|inner| PyOutputImageParam { inner: Some(inner) })
            .collect())
    }
}

/// The consumers passed to `in_` / `clone_in`: none (global), one Func,
/// or a list/tuple of Funcs.
pub(crate) enum Consumers {
    One(Func),
    Many(Vec<Func>),
}

pub(crate) fn consumers_from_py(args: &Bound<'_, PyTuple>, method: &str) -> PyResult<Option<Consumers>> {
    let bad = || {
        PyTypeError::new_err(format!(
            "{method}(): incompatible function arguments: expected a Func or a list of Funcs"
        ))
    };
    match args.len() {
        0 => Ok(None),
        1 => {
            let a = args.get_item(0)?;
            if let Ok(f) = a.extract::<PyRef<PyFunc>>() {
                return Ok(Some(Consumers::One(f.inner.clone())));
            }
            let items = crate::py_expr::sequence_items(&a).ok_or_else(bad)?;
            let fs = items
                .iter()
                .map(|i| {
                    i.extract::<PyRef<PyFunc>>()
                        .map(|f| f.inner.clone())
                        .map_err(|_| bad())
                })
                .collect::<PyResult<Vec<Func>>>()?;
            Ok(Some(Consumers::Many(fs)))
        }
        _ => Err(bad()),
    }
}

fn define_with_implicit_args(f: &Func, dims: usize, value: Expr) -> PyResult<()> {
    // Func(buffer): f(_0, _1, ...) = buffer(_0, _1, ...). The core rejects
    // implicit vars in user definitions, so write the definition directly.
    let args: Vec<String> = (0..dims)
        .map(|i| Var::implicit(i).name().to_string())
        .collect();
    f.function.set_pure_definition(args, vec![value]).py()
}

crate::expr_like_methods!(PyFuncRef {
    /// `f[args][i]`: element `i` of a call to a Tuple-valued Func.
    fn __getitem__(&self, index: i64) -> PyResult<PyFuncTupleElementRef> {
        let index = self.inner.tuple_index(index).py()?;
        Ok(PyFuncTupleElementRef { inner: self.inner.clone(), index })
    }
    /// `size()`: the number of values of the Func (the size of its Tuple, or
    /// 1).
    fn size(&self) -> usize {
        self.inner.size()
    }
});

crate::expr_like_methods!(PyFuncTupleElementRef {
    /// `index()`: which element of the Tuple this is.
    fn index(&self) -> usize {
        self.index
    }
});

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFunc>()?;
    m.add_class::<PyEvictionKey>()?;
    m.add_class::<PyStmtOutputFormat>()?;
    m.add_class::<PyFuncRef>()?;
    m.add_class::<PyFuncTupleElementRef>()?;
    m.add_class::<PyUnevaluatedFuncRefExpr>()?;
    m.add_class::<PyTailStrategy>()?;
    m.add_class::<PyMemoryType>()?;
    Ok(())
}
