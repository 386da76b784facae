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

#[pyclass(name = "Func", module = "ferrohalide", frozen, subclass)]
pub struct PyFunc {
    pub inner: Func,
}

#[pyclass(name = "FuncRef", module = "ferrohalide", frozen)]
pub struct PyFuncRef {
    pub inner: FuncRef,
}

/// `f[args] op e` where `f` is not defined yet: Python's `f[args] op= e`
/// computes this, then assigns it to `f[args]`, which defines `f` with the
/// identity of `op` and adds the update (Halide's binding does the same).
/// The type's qualified name is Halide's: Python prints it in the
/// TypeError of a second `+=`, and Halide's own tests match that text.
#[pyclass(name = "_UnevaluatedFuncRefExpr", module = "halide.halide_", frozen)]
pub struct PyUnevaluatedFuncRefExpr {
    pub target: FuncRef,
    pub op: Op,
    pub rhs: Operand,
}

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

crate::schedule_methods!(PyFunc, pure_stage_of);
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

    fn name(&self) -> String {
        self.inner.name()
    }
    fn defined(&self) -> bool {
        self.inner.defined()
    }
    fn dimensions(&self) -> PyResult<usize> {
        self.inner.dimensions().py()
    }
    fn r#type(&self) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.inner.output_type().py()?,
        })
    }
    fn types(&self) -> PyResult<Vec<PyType>> {
        Ok(self
            .inner
            .output_types()
            .py()?
            .into_iter()
            .map(|t| PyType { inner: t })
            .collect())
    }
    fn outputs(&self) -> PyResult<usize> {
        self.inner.outputs().py()
    }
    fn args(&self) -> Vec<PyVar> {
        self.inner
            .args()
            .into_iter()
            .map(|v| PyVar { inner: v })
            .collect()
    }
    fn value(&self) -> PyResult<PyExpr> {
        if !self.inner.defined() {
            return Err(HalideError::new_err(
                "Error: Can't call Func::value() on an undefined Func. To check if a Func is defined, call Func::defined()\n",
            ));
        }
        Ok(PyExpr::new(self.inner.value().py()?))
    }
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
    fn has_update_definition(&self) -> bool {
        self.inner.has_update_definition()
    }
    fn num_update_definitions(&self) -> usize {
        self.inner.num_update_definitions()
    }
    fn update_args(&self, i: usize) -> PyResult<Vec<PyExpr>> {
        Ok(self
            .inner
            .update_args(i)
            .py()?
            .into_iter()
            .map(PyExpr::new)
            .collect())
    }
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
    fn update_value(&self, i: usize) -> PyResult<PyExpr> {
        Ok(PyExpr::new(self.inner.update_value(i).py()?))
    }
    fn rvars(&self, i: usize) -> PyResult<Vec<PyRVar>> {
        Ok(self
            .inner
            .rvars(i)
            .py()?
            .into_iter()
            .map(|inner| PyRVar { inner })
            .collect())
    }
    /// `update(i=0)`: the Stage of update definition `i`.
    #[pyo3(signature = (i=0))]
    fn update(&self, i: i64) -> PyResult<PyStage> {
        let i = usize::try_from(i)
            .map_err(|_| HalideError::new_err("Error: Call to update with a negative index.\n"))?;
        Ok(PyStage {
            inner: self.inner.update(i).py()?,
        })
    }
    /// Not iterable: without this, Python would iterate through
    /// `__getitem__` (f[0], f[1], ...), which never ends.
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
        if !self.inner.function.has_pure_definition() && self.inner.function.updates().is_empty() {
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



    /// `infer_input_bounds(dst, target=)`: bind Buffers of the needed
    /// regions to the unbound ImageParams (see Pipeline's).
    #[pyo3(signature = (dst, target=None))]
    fn infer_input_bounds(
        &self,
        py: Python<'_>,
        dst: &Bound<'_, PyAny>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crate::py_pipeline::infer_input_bounds_py(py, vec![self.inner.function.clone()], &[], dst, target)
    }

    fn infer_arguments(&self, py: Python<'_>) -> PyResult<Vec<crate::py_pipeline::PyArgument>> {
        crate::py_pipeline::infer_arguments_py(py, &[self.inner.function.clone()])
    }

    /// Writes the final lowered statement. `arguments` lists the
    /// pipeline's inputs (Buffers, Params, ImageParams); lowering finds
    /// the inputs itself, so they are checked and otherwise not needed.
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

    /// `lowered_stmt(arguments=[], target=None)`: the final lowered
    /// statement as an `hl.LoweredStmt`, which prints as text and shows as
    /// the HTML view in Jupyter (ferrohalide's; Halide's bindings only
    /// write it to a file with `compile_to_lowered_stmt`).
    #[pyo3(signature = (arguments=None, target=None))]
    fn lowered_stmt(
        &self,
        py: Python<'_>,
        arguments: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        crate::py_compile_to::lowered_stmt_object(py, vec![self.inner.function.clone()], arguments, target)
    }

    // ---- scheduling ----

    /// `memoize(eviction_key=None)`: keep the realizations across runs in
    /// the runtime's cache, under the `hl.EvictionKey`'s value if given
    /// (`halide_memoization_cache_evict` drops them).
    /// `async_()`: compute this Func on another thread, concurrently with
    /// the work of its consumers that does not need it.
    fn async_<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.async_();
        slf.clone()
    }
    /// `ring_buffer(extent)`: not implemented (refused when the pipeline
    /// is compiled).
    fn ring_buffer<'py>(slf: &Bound<'py, Self>, extent: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.ring_buffer(crate::py_expr::py_to_expr(extent)?).py()?;
        Ok(slf.clone())
    }
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
    fn debug_to_file<'py>(slf: &Bound<'py, Self>, filename: &str) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.debug_to_file(filename).py()?;
        Ok(slf.clone())
    }

    /// Whether the Func is computed outside Halide's loops: `define_extern`
    /// (or a `copy_to_host/device` copy, Halide's `halide_buffer_copy`).
    fn is_extern(&self) -> bool {
        self.inner.is_extern() || self.inner.function.read().schedule.copy_to_device.is_some()
    }
    /// The C function an extern Func calls ("" for others).
    fn extern_function_name(&self) -> String {
        if self.inner.is_extern() {
            self.inner.extern_function_name()
        } else if self.is_extern() {
            "halide_buffer_copy".to_string()
        } else {
            String::new()
        }
    }
    /// `copy_to_host()`: the Func is a copy of the Func or image it calls,
    /// made on the host.
    fn copy_to_host<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        use ferrohalide_core::device_api::DeviceApi;
        slf.get().inner.copy_to_device(DeviceApi::Host, "copy_to_host").py()?;
        Ok(slf.clone())
    }
    /// `copy_to_device(device_api=DeviceAPI.Default_GPU)`.
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

    fn compute_root<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.compute_root();
        slf.clone()
    }

    fn compute_inline<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.compute_inline();
        slf.clone()
    }

    fn store_root<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.store_root();
        slf.clone()
    }

    fn hoist_storage_root<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.hoist_storage_root();
        slf.clone()
    }

    /// `compute_at(f, var)` or `compute_at(loop_level)`.
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

    /// `store_at(f, var)` or `store_at(loop_level)`.
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

    /// `hoist_storage(f, var)` or `hoist_storage(loop_level)`.
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

    /// `align_storage(dim, alignment)`: pad the storage extent of `dim` to
    /// a multiple of `alignment`.
    fn align_storage<'py>(
        slf: &Bound<'py, Self>,
        dim: &Bound<'py, PyAny>,
        alignment: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(dim)?;
        slf.get().inner.align_storage(&v, py_to_expr(alignment)?).py()?;
        Ok(slf.clone())
    }

    /// `bound_storage(dim, bound)`: store `dim` with extent `bound`,
    /// whatever region is computed.
    fn bound_storage<'py>(
        slf: &Bound<'py, Self>,
        dim: &Bound<'py, PyAny>,
        bound: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(dim)?;
        slf.get().inner.bound_storage(&v, py_to_expr(bound)?).py()?;
        Ok(slf.clone())
    }

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

    fn bound_extent<'py>(
        slf: &Bound<'py, Self>,
        var: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = var_name(var)?;
        slf.get().inner.bound_extent(&v, py_to_expr(extent)?).py()?;
        Ok(slf.clone())
    }

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

    /// `reorder_storage(x, y, ...)` or `reorder_storage([x, y, ...])`.
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

    fn trace_loads<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.trace_loads();
        slf.clone()
    }

    fn trace_stores<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.trace_stores();
        slf.clone()
    }

    fn trace_realizations<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.get().inner.trace_realizations();
        slf.clone()
    }

    fn add_trace_tag<'py>(slf: &Bound<'py, Self>, trace_tag: &str) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.add_trace_tag(trace_tag).py()?;
        Ok(slf.clone())
    }

    fn store_in<'py>(slf: &Bound<'py, Self>, memory_type: PyMemoryType) -> Bound<'py, Self> {
        slf.get().inner.store_in(memory_type.to_core());
        slf.clone()
    }

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

    /// `in_()`, `in_(g)` or `in_([g, h, ...])`.
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

    /// `clone_in(g)` or `clone_in([g, h, ...])`.
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

    fn output_buffer(&self) -> PyResult<PyOutputImageParam> {
        Ok(PyOutputImageParam {
            inner: Some(output_buffer(&self.inner.function).py()?),
        })
    }

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
    fn size(&self) -> usize {
        self.inner.size()
    }
});

crate::expr_like_methods!(PyFuncTupleElementRef {
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
