//! `hl.Pipeline`, `hl.Callable`, `hl.Argument` / `hl.ArgumentKind`, and the
//! realize entry point shared with `Func.realize`: Python values are
//! converted here, everything else happens in
//! `ferrohalide_driver::{pipeline, callable}`.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use ferrohalide_driver::callable::{
    callable_scalar, compile_to_callable, Callable, ParamKind,
};
use ferrohalide_driver::pipeline::{self, InputValue};
use ferrohalide_core::autoschedule::{AutoSchedulerResults, AutoschedulerParams};
use ferrohalide_core::ir::Expr;
use crate::py_expr::PyExpr;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::Type;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::parameter::{Parameter, ScalarInput};
use ferrohalide_core::lang::requirement::Requirement;
use ferrohalide_core::lower::arguments::{pipeline_inputs, InputBuffer};
use ferrohalide_core::target::Target;

use crate::errors::{HalideError, IntoPy};
use crate::py_buffer::{import_buffer_with, supports_buffer_protocol, wrap_buffer, PyBuffer};
use crate::py_func::PyFunc;
use crate::py_target::target_from_py;
use crate::py_type::PyType;

fn opt_target(target: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Target>> {
    match target {
        Some(t) if !t.is_none() => Ok(Some(target_from_py(t)?)),
        _ => Ok(None),
    }
}

fn int_list(obj: &Bound<'_, PyAny>) -> Option<Vec<i32>> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = obj.cast::<PyList>() {
        l.iter().collect()
    } else {
        return None;
    };
    items.iter().map(|i| i.extract::<i32>().ok()).collect()
}

/// Output buffers given to realize: one `hl.Buffer` or a list of them
/// (`None` if `obj` is something else); an undefined Buffer is Halide's
/// error.
fn buffer_list(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<Buffer>>> {
    let defined = |b: &PyBuffer| {
        if b.defined {
            Ok(b.inner.clone())
        } else {
            Err(HalideError::new_err(
                "Error: Undefined buffer calling method raw_buffer\n",
            ))
        }
    };
    if let Ok(b) = obj.extract::<PyRef<PyBuffer>>() {
        return Ok(Some(vec![defined(&b)?]));
    }
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = obj.cast::<PyList>() {
        l.iter().collect()
    } else {
        return Ok(None);
    };
    if items.is_empty() {
        return Ok(None);
    }
    let mut out = vec![];
    for i in &items {
        match i.extract::<PyRef<PyBuffer>>() {
            Ok(b) => out.push(defined(&b)?),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// `realize(sizes | buffer | [buffers], target=)` for `outputs`:
/// Buffers (one, or a tuple for several values) or None when realizing
/// into given buffers. `tuple_result` makes even a single value a tuple
/// when there are several outputs (Pipeline) .
pub fn realize_py(
    py: Python<'_>,
    outputs: Vec<Function>,
    requirements: &[Requirement],
    args: &Bound<'_, PyTuple>,
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    // The target may also come second, positionally.
    let (args, target) = match args.len() {
        2 if args
            .get_item(1)?
            .extract::<PyRef<crate::py_target::PyTarget>>()
            .is_ok() =>
        {
            let t = args.get_item(1)?;
            (
                PyTuple::new(py, [args.get_item(0)?])?,
                Some(target_from_py(&t)?),
            )
        }
        _ => (args.clone(), opt_target(target)?),
    };
    let sizes = match args.len() {
        0 => Some(vec![]),
        1 => {
            let a0 = args.get_item(0)?;
            if let Some(bufs) = buffer_list(&a0)? {
                crate::gil::detached(py, || pipeline::realize_into_for(&outputs, requirements, &bufs, target.as_ref()))
                    .py()?;
                return Ok(py.None());
            }
            int_list(&a0)
        }
        _ => None,
    };
    let Some(sizes) = sizes else {
        return Err(PyTypeError::new_err(
            "realize(): incompatible function arguments: expected a list of sizes, a Buffer or a list of Buffers (and optionally target=)",
        ));
    };
    let bufs = crate::gil::detached(py, || pipeline::realize_for(&outputs, requirements, &sizes, target.as_ref()))
        .py()?;
    let mut wrapped: Vec<Py<PyAny>> = Vec::with_capacity(bufs.len());
    for b in bufs {
        wrapped.push(wrap_buffer(py, b)?.into_any());
    }
    if wrapped.len() == 1 {
        Ok(wrapped.pop().unwrap())
    } else {
        Ok(PyTuple::new(py, wrapped)?.into_any().unbind())
    }
}

/// The Params / ImageParams given to `compile_to_callable`.
fn callable_inputs(args: &Bound<'_, PyAny>) -> PyResult<Vec<Parameter>> {
    let mut out = vec![];
    for a in args.try_iter()? {
        let a = a?;
        if let Some(p) = crate::py_compile_to::parameter_of(&a)? {
            out.push(p);
        } else {
            return Err(PyTypeError::new_err(format!(
                "compile_to_callable(): arguments must be Params, ImageParams or Arguments, not {}",
                crate::py_param::type_name(&a)
            )));
        }
    }
    Ok(out)
}

pub fn compile_to_callable_py(
    outputs: Vec<Function>,
    requirements: &[Requirement],
    args: &Bound<'_, PyAny>,
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyCallable> {
    let inputs = callable_inputs(args)?;
    let target = opt_target(target)?;
    let c = crate::gil::detached(args.py(), || compile_to_callable(&outputs, requirements, &inputs, target.as_ref()))
        .py()?;
    Ok(PyCallable { inner: Arc::new(c) })
}

/// `infer_input_bounds(dst, target=)`: `dst` is output sizes, a Buffer or a
/// list of Buffers (bounds-query Buffers get their regions written).
pub fn infer_input_bounds_py(
    py: Python<'_>,
    outputs: Vec<Function>,
    requirements: &[Requirement],
    dst: &Bound<'_, PyAny>,
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let target = opt_target(target)?;
    let buffers = match buffer_list(dst)? {
        Some(b) => b,
        None => {
            let sizes = int_list(dst).ok_or_else(|| {
                PyValueError::new_err("Invalid arguments to infer_input_bounds")
            })?;
            // One bounds query per output value, of the requested size.
            let mut out = vec![];
            for f in &outputs {
                for ty in f.types() {
                    let b = Buffer::new(ty, &sizes, Some(f.name())).py()?;
                    b.deallocate();
                    out.push(b);
                }
            }
            out
        }
    };
    crate::gil::detached(py, || {
        ferrohalide_driver::infer_input_bounds::infer_input_bounds(
            &outputs,
            requirements,
            &buffers,
            target.as_ref(),
        )
    })
    .py()
}

pub fn compile_jit_py(
    py: Python<'_>,
    outputs: Vec<Function>,
    requirements: &[Requirement],
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let target = opt_target(target)?;
    crate::gil::detached(py, || pipeline::compile_for(&outputs, requirements, target.as_ref()))
        .py()?;
    Ok(())
}

pub fn infer_arguments_py(py: Python<'_>, outputs: &[Function]) -> PyResult<Vec<PyArgument>> {
    let inputs = crate::gil::detached(py, || pipeline_inputs(outputs)).py()?;
    let mut out = vec![];
    for b in &inputs.buffers {
        if let InputBuffer::Param(p) = b {
            let e = PyArgumentEstimates::of(p);
            out.push(PyArgument::new(py, b.name(), 1, b.dimensions(), b.ty(), e)?.with_param(p));
        }
    }
    for p in &inputs.scalars {
        // As Halide's InferArguments: a scalar's "default" here is its
        // current value, or zero if it has none.
        let mut e = PyArgumentEstimates::of(p);
        e.scalar_def = Some(p.scalar().unwrap_or_else(|| Expr::zero(p.ty())));
        out.push(PyArgument::new(py, p.name(), 0, 0, p.ty(), e)?.with_param(p));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// hl.Pipeline
// ---------------------------------------------------------------------------

/// `Pipeline()`, `Pipeline(func)`, `Pipeline([funcs])`: the Funcs to compute
/// together as one pipeline, with its outputs: realize them in one pass over
/// the same region (`realize`), compile them for the JIT (`compile_jit`,
/// `compile_to_callable`) or ahead of time (`compile_to_*`). `Pipeline()` is
/// undefined; most methods refuse it.
#[pyclass(name = "Pipeline", module = "ferrohalide", frozen)]
pub struct PyPipeline {
    outputs: Vec<Function>,
    /// `add_requirement`s, in order.
    requirements: std::sync::Mutex<Vec<Requirement>>,
    /// The last `apply_autoscheduler`'s results, which modules compiled
    /// from this Pipeline carry (the `schedule` output).
    auto_schedule: std::sync::Mutex<Option<AutoSchedulerResults>>,
}

impl PyPipeline {
    fn new(outputs: Vec<Function>) -> PyPipeline {
        PyPipeline { outputs, requirements: Default::default(), auto_schedule: Default::default() }
    }
    /// A Pipeline of `outputs` with `requirements` (a deserialized one).
    pub fn with_requirements(outputs: Vec<Function>, requirements: Vec<Requirement>) -> PyPipeline {
        PyPipeline {
            outputs,
            requirements: std::sync::Mutex::new(requirements),
            auto_schedule: Default::default(),
        }
    }
    /// The outputs and requirements (what serialization stores).
    pub fn parts(&self) -> PyResult<(Vec<Function>, Vec<Requirement>)> {
        Ok((self.outputs_or_err()?, self.requirements()))
    }
    fn outputs_or_err(&self) -> PyResult<Vec<Function>> {
        if self.outputs.is_empty() {
            return Err(HalideError::new_err("Error: Pipeline is undefined\n"));
        }
        Ok(self.outputs.clone())
    }
    fn requirements(&self) -> Vec<Requirement> {
        self.requirements.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    /// What `compile_to_*` compiles.
    fn compilable(&self) -> PyResult<crate::py_compile_to::CompileTo> {
        Ok(crate::py_compile_to::CompileTo {
            outputs: self.outputs_or_err()?,
            requirements: self.requirements(),
            auto_schedule: self.auto_schedule.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        })
    }
}

crate::compile_methods!(PyPipeline);

#[pymethods]
impl PyPipeline {
    /// `Pipeline()`, `Pipeline(func)`, `Pipeline([funcs])`: a pipeline with these
    /// outputs (none: an undefined pipeline).
    #[new]
    #[pyo3(signature = (outputs=None))]
    fn py_new(outputs: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let Some(o) = outputs else {
            return Ok(PyPipeline::new(vec![]));
        };
        if let Ok(f) = o.extract::<PyRef<PyFunc>>() {
            return Ok(PyPipeline::new(vec![f.inner.function.clone()]));
        }
        let mut fs = vec![];
        for item in o.try_iter().map_err(|_| {
            PyTypeError::new_err(
                "__init__(): incompatible constructor arguments for halide.Pipeline",
            )
        })? {
            let item = item?;
            let f = item.extract::<PyRef<PyFunc>>().map_err(|_| {
                PyTypeError::new_err(
                    "__init__(): incompatible constructor arguments for halide.Pipeline",
                )
            })?;
            fs.push(f.inner.function.clone());
        }
        Ok(PyPipeline::new(fs))
    }
    /// `defined()`: whether the pipeline has outputs (False for `Pipeline()`).
    fn defined(&self) -> bool {
        !self.outputs.is_empty()
    }
    /// `get_func(index)`: the index-th Func of the pipeline in realization
    /// order (producers first).
    fn get_func(&self, index: i64) -> PyResult<PyFunc> {
        let outputs = self.outputs_or_err()?;
        let env = ferrohalide_core::lower::environment::build_environment(&outputs).py()?;
        let Ok(i) = usize::try_from(index) else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "get_func(): incompatible function arguments: index must be non-negative",
            ));
        };
        let Some(name) = env.order.get(i) else {
            return Err(HalideError::new_err(format!(
                "Error: Index value passed is {index}; however, there are only {} functions in the pipeline.\n",
                env.order.len()
            )));
        };
        Ok(PyFunc {
            inner: ferrohalide_core::lang::func::Func::from_function(env.get(name).clone()),
        })
    }
    /// `print_loop_nest()`: print the loop nest the schedule gives, as
    /// pseudo-code, to `sys.stderr`.
    fn print_loop_nest(&self, py: Python<'_>) -> PyResult<()> {
        let outputs = self.outputs_or_err()?;
        let text = crate::gil::detached(py, || {
            ferrohalide_core::lower::print_loop_nest::print_loop_nest(&outputs)
        })
        .py()?;
        py.import("sys")?.getattr("stderr")?.call_method1("write", (text,))?;
        Ok(())
    }
    /// `invalidate_cache()`: forget the compiled code, so that the next
    /// `realize` compiles again.
    fn invalidate_cache(&self) {
        for f in &self.outputs {
            f.compiled_code().clear();
        }
    }
    /// `outputs()`: the output Funcs of the pipeline, as a list.
    fn outputs(&self) -> Vec<PyFunc> {
        self.outputs
            .iter()
            .map(|f| PyFunc {
                inner: ferrohalide_core::lang::func::Func::from_function(f.clone()),
            })
            .collect()
    }
    /// `realize(sizes, target=None)`, `realize(buffer)`, `realize([buffers])`:
    /// compute the outputs (compiling for the JIT first if needed). With a
    /// list of sizes, one per dimension, it returns new Buffers of that size:
    /// one Buffer, or a tuple when there are several outputs or Tuple values.
    /// With a Buffer or a list of Buffers (one per output value), it fills them
    /// and returns None. `target` (also accepted second) defaults to
    /// `get_jit_target_from_environment()`.
    #[pyo3(signature = (*args, target=None))]
    fn realize(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        realize_py(py, self.outputs_or_err()?, &self.requirements(), args, target)
    }
    /// `compile_jit(target=None)`: compile the pipeline for the JIT now rather
    /// than at the first `realize`. `target` defaults to
    /// `get_jit_target_from_environment()`.
    #[pyo3(signature = (target=None))]
    fn compile_jit(&self, py: Python<'_>, target: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        compile_jit_py(py, self.outputs_or_err()?, &self.requirements(), target)
    }
    /// `compile_to_callable(arguments, target=None)`: compile the pipeline for
    /// the JIT into a `Callable` that takes the values of `arguments` (a list
    /// of Params and ImageParams, in that order) and then the output buffers.
    /// `target` defaults to `get_jit_target_from_environment()`.
    #[pyo3(signature = (arguments, target=None))]
    fn compile_to_callable(
        &self,
        arguments: &Bound<'_, PyAny>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyCallable> {
        compile_to_callable_py(self.outputs_or_err()?, &self.requirements(), arguments, target)
    }
    /// `infer_arguments()`: the inputs the pipeline reads (its ImageParams,
    /// then its Params), as a list of `Argument`s, e.g. for the argument list
    /// of `compile_to_*`.
    fn infer_arguments(&self, py: Python<'_>) -> PyResult<Vec<PyArgument>> {
        infer_arguments_py(py, &self.outputs_or_err()?)
    }
    /// `infer_input_bounds(dst, target=None)`: find the region of each input
    /// ImageParam not yet bound to a Buffer that computing the outputs over
    /// `dst` (a list of sizes, a Buffer, or a list of Buffers) needs, and bind
    /// a zero-filled Buffer of that region to it.
    #[pyo3(signature = (dst, target=None))]
    fn infer_input_bounds(
        &self,
        py: Python<'_>,
        dst: &Bound<'_, PyAny>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        infer_input_bounds_py(py, self.outputs_or_err()?, &self.requirements(), dst, target)
    }
    /// `add_requirement(condition, *error_args)`: make the pipeline check the
    /// bool Expr `condition` (which may use Params) before computing anything,
    /// and fail with an error made of `error_args` (strings and Exprs) if it
    /// is false.
    #[pyo3(signature = (condition, *error_args))]
    fn add_requirement(&self, condition: &Bound<'_, PyAny>, error_args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let c = crate::py_expr::py_to_expr(condition)?;
        let mut msg = vec![];
        for a in error_args.iter() {
            msg.push(if let Ok(s) = a.extract::<String>() {
                ferrohalide_core::ir::Expr::string(s)
            } else {
                crate::py_expr::py_to_expr(&a)?
            });
        }
        let r = Requirement::new(c, msg).py()?;
        self.requirements.lock().unwrap_or_else(|p| p.into_inner()).push(r);
        Ok(())
    }
    // ---- ahead-of-time compilation (py_compile_to.rs) ----


    /// `compile_to_lowered_stmt(filename, arguments, fmt=StmtOutputFormat.Text, target=None)`:
    /// write the final lowered statement of the pipeline (its loop nest as
    /// compiled) to `filename`, as text or, with `StmtOutputFormat.HTML`, as
    /// HTML. `arguments` must list every Param and ImageParam it reads.
    #[pyo3(signature = (filename, arguments, fmt=None, target=None))]
    fn compile_to_lowered_stmt(
        &self,
        py: Python<'_>,
        filename: String,
        arguments: &Bound<'_, PyAny>,
        fmt: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let html = match fmt {
            Some(f) if !f.is_none() => {
                f.extract::<crate::py_func::PyStmtOutputFormat>()?
                    == crate::py_func::PyStmtOutputFormat::HTML
            }
            _ => false,
        };
        let format = if html {
            ferrohalide_core::lower::StmtOutputFormat::Html
        } else {
            ferrohalide_core::lower::StmtOutputFormat::Text
        };
        let outputs = self.outputs_or_err()?;
        crate::py_compile_to::write_lowered_stmt(py, outputs, &filename, arguments, format, target)
    }
    /// `apply_autoscheduler(target, autoscheduler_params)`: schedule the whole
    /// pipeline automatically for `target` with the autoscheduler that the
    /// `AutoschedulerParams` name (e.g. `"Mullapudi2016"`, `"Adams2019"`,
    /// `"Li2018"`); returns the `AutoSchedulerResults`, which modules compiled
    /// from this Pipeline then carry.
    // The autoschedulers are ferrohalide_core::autoschedule.
    fn apply_autoscheduler(
        &self,
        py: Python<'_>,
        target: &Bound<'_, PyAny>,
        autoscheduler_params: &Bound<'_, PyAny>,
    ) -> PyResult<PyAutoSchedulerResults> {
        let target = crate::py_target::target_from_py(target)?;
        let name: String = autoscheduler_params
            .getattr("name")
            .and_then(|n| n.extract())
            .map_err(|_| PyTypeError::new_err("autoscheduler_params must be an hl.AutoschedulerParams"))?;
        let extra: std::collections::BTreeMap<String, String> = autoscheduler_params
            .getattr("extra")
            .and_then(|e| e.extract())
            .map_err(|_| PyTypeError::new_err("AutoschedulerParams.extra must be a dict of str to str"))?;
        let params = AutoschedulerParams { name, extra };
        let outputs = self.outputs_or_err()?;
        let results = crate::gil::detached(py, || {
            ferrohalide_core::autoschedule::apply_autoscheduler(&outputs, &target, &params)
        })
        .py()?;
        *self.auto_schedule.lock().unwrap_or_else(|p| p.into_inner()) = Some(results.clone());
        Ok(PyAutoSchedulerResults {
            results,
            params: autoscheduler_params.clone().unbind(),
        })
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'halide.Pipeline' object has no attribute '{name}'"
        )))
    }
    fn __repr__(&self) -> String {
        if self.outputs.is_empty() {
            return "<halide.Pipeline Pipeline()>".to_string();
        }
        let names: Vec<String> = self.outputs.iter().map(|f| format!("'{}'", f.name())).collect();
        format!("<halide.Pipeline [{}]>", names.join(","))
    }
}

// ---------------------------------------------------------------------------
// hl.AutoSchedulerResults
// ---------------------------------------------------------------------------

/// `AutoSchedulerResults`: what `Pipeline.apply_autoscheduler` did: the
/// target, the parameters, and the schedule it chose as source code.
#[pyclass(name = "AutoSchedulerResults", module = "ferrohalide", frozen)]
pub struct PyAutoSchedulerResults {
    pub(crate) results: AutoSchedulerResults,
    params: Py<PyAny>,
}

impl PyAutoSchedulerResults {
    /// Results kept by a Module, with their parameters as an
    /// `hl.AutoschedulerParams`.
    pub(crate) fn from_results(py: Python<'_>, results: AutoSchedulerResults) -> PyResult<PyAutoSchedulerResults> {
        let cls = py.import("ferrohalide")?.getattr("AutoschedulerParams")?;
        let params = cls.call1((results.params.name.clone(), results.params.extra.clone()))?;
        Ok(PyAutoSchedulerResults { results, params: params.unbind() })
    }
}

#[pymethods]
impl PyAutoSchedulerResults {
    /// `target`: the `Target` the pipeline was scheduled for.
    #[getter]
    fn target(&self) -> crate::py_target::PyTarget {
        crate::py_target::PyTarget { inner: self.results.target.clone() }
    }
    /// `autoscheduler_params`: the `AutoschedulerParams` the autoscheduler ran with.
    #[getter]
    fn autoscheduler_params(&self, py: Python<'_>) -> Py<PyAny> {
        self.params.clone_ref(py)
    }
    /// `schedule_source`: the chosen schedule, as C++ source code (what the
    /// `schedule` output file holds).
    #[getter]
    fn schedule_source(&self) -> String {
        self.results.schedule_source.clone()
    }
    /// `featurization`: the features of the pipeline that a learned cost model
    /// reads, as bytes; always empty in ferrohalide, whose autoschedulers
    /// compute none.
    // ferrohalide's rules compute no features (Adams2019's cost-model input).
    #[getter]
    fn featurization(&self) -> Vec<u8> {
        vec![]
    }
    fn __repr__(&self) -> String {
        "<halide.AutoSchedulerResults>".to_string()
    }
}

// ---------------------------------------------------------------------------
// hl.Argument / hl.ArgumentKind
// ---------------------------------------------------------------------------

static ARGUMENT_KIND: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `ArgumentEstimates()`: what an autoscheduler knows of a pipeline argument:
/// a scalar's default, range and estimate, or a buffer's estimated (min,
/// extent) per dimension. Found in `Argument.argument_estimates`.
#[pyclass(name = "ArgumentEstimates", module = "ferrohalide")]
#[derive(Clone, Default)]
pub struct PyArgumentEstimates {
    scalar_def: Option<Expr>,
    scalar_min: Option<Expr>,
    scalar_max: Option<Expr>,
    scalar_estimate: Option<Expr>,
    buffer_estimates: Vec<(Option<Expr>, Option<Expr>)>,
}

impl PyArgumentEstimates {
    /// The estimates a Parameter carries.
    pub(crate) fn of(p: &ferrohalide_core::lang::parameter::Parameter) -> PyArgumentEstimates {
        let buffer_estimates = p
            .constraints()
            .into_iter()
            .map(|c| (c.min_estimate, c.extent_estimate))
            .collect();
        let c = p.lock();
        PyArgumentEstimates {
            scalar_def: c.default_value.clone(),
            scalar_min: c.min_value.clone(),
            scalar_max: c.max_value.clone(),
            scalar_estimate: c.estimate.clone(),
            buffer_estimates,
        }
    }
}

#[pymethods]
impl PyArgumentEstimates {
    #[new]
    fn py_new() -> Self {
        Self::default()
    }
    /// `scalar_def`: a scalar argument's default value (an undefined `Expr` if none).
    #[getter]
    fn scalar_def(&self) -> PyExpr {
        PyExpr::from_opt(self.scalar_def.clone())
    }
    /// `scalar_min`: a scalar argument's minimum value (an undefined `Expr` if none).
    #[getter]
    fn scalar_min(&self) -> PyExpr {
        PyExpr::from_opt(self.scalar_min.clone())
    }
    /// `scalar_max`: a scalar argument's maximum value (an undefined `Expr` if none).
    #[getter]
    fn scalar_max(&self) -> PyExpr {
        PyExpr::from_opt(self.scalar_max.clone())
    }
    /// `scalar_estimate`: a scalar argument's estimated value, for autoschedulers
    /// (an undefined `Expr` if none).
    #[getter]
    fn scalar_estimate(&self) -> PyExpr {
        PyExpr::from_opt(self.scalar_estimate.clone())
    }
    /// `buffer_estimates`: a buffer argument's estimated region, one `Range`
    /// (min, extent) per dimension; a side without an estimate is an undefined
    /// `Expr`.
    #[getter]
    fn buffer_estimates(&self) -> Vec<crate::py_boundary::PyRange> {
        self.buffer_estimates
            .iter()
            .map(|(min, extent)| crate::py_boundary::PyRange { min: min.clone(), extent: extent.clone() })
            .collect()
    }
    fn __repr__(&self) -> String {
        "<halide.ArgumentEstimates>".to_string()
    }
}

/// `Argument`: one input of a pipeline, as `infer_arguments()` lists them: its
/// name, kind, type, dimensions and estimates. It may be given in the argument
/// list of `compile_to_*` in place of the Param or ImageParam it stands for.
#[pyclass(name = "Argument", module = "ferrohalide", frozen)]
pub struct PyArgument {
    /// `name`: the name of the Param or ImageParam.
    #[pyo3(get)]
    name: String,
    /// `kind`: an `ArgumentKind`: `InputScalar` or `InputBuffer`.
    #[pyo3(get)]
    kind: Py<PyAny>,
    /// `dimensions`: the number of dimensions of a buffer argument (0 for a scalar).
    #[pyo3(get)]
    dimensions: usize,
    ty: Type,
    /// `argument_estimates`: the argument's `ArgumentEstimates` (range, default,
    /// estimated region).
    #[pyo3(get)]
    argument_estimates: PyArgumentEstimates,
    param: Option<ferrohalide_core::lang::parameter::Parameter>,
}

impl PyArgument {
    /// The input argument a Parameter stands for (Halide's
    /// `Parameter._to_argument`).
    pub(crate) fn of_parameter(
        py: Python<'_>,
        p: &ferrohalide_core::lang::parameter::Parameter,
    ) -> PyResult<PyArgument> {
        let kind = if p.is_buffer() { 1 } else { 0 };
        Ok(PyArgument::new(py, p.name(), kind, p.dimensions(), p.ty(), PyArgumentEstimates::of(p))?.with_param(p))
    }
    /// The Parameter this argument stands for, so that an argument list
    /// may name it by its Argument (as Halide's compile_to_* accept).
    fn with_param(self, p: &ferrohalide_core::lang::parameter::Parameter) -> PyArgument {
        PyArgument { param: Some(p.clone()), ..self }
    }
    pub(crate) fn param(&self) -> Option<&ferrohalide_core::lang::parameter::Parameter> {
        self.param.as_ref()
    }
    fn new(
        py: Python<'_>,
        name: String,
        kind: u8,
        dimensions: usize,
        ty: Type,
        estimates: PyArgumentEstimates,
    ) -> PyResult<PyArgument> {
        let cls = ARGUMENT_KIND
            .get(py)
            .ok_or_else(|| PyTypeError::new_err("ArgumentKind is not initialized"))?;
        Ok(PyArgument {
            name,
            kind: cls.bind(py).call1((kind,))?.unbind(),
            dimensions,
            ty,
            argument_estimates: estimates,
            param: None,
        })
    }
}

#[pymethods]
impl PyArgument {
    /// `type`: the `Type` of the value, or of a buffer's elements.
    #[getter]
    fn r#type(&self) -> PyType {
        PyType { inner: self.ty }
    }
    /// `is_buffer()`: whether the argument is a buffer (an ImageParam).
    fn is_buffer(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.kind.bind(py).extract::<i64>()? != 0)
    }
    /// `is_scalar()`: whether the argument is a scalar (a Param).
    fn is_scalar(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.kind.bind(py).extract::<i64>()? == 0)
    }
    fn __repr__(&self) -> String {
        format!("<halide.Argument '{}'>", self.name)
    }
}

// ---------------------------------------------------------------------------
// hl.Callable
// ---------------------------------------------------------------------------

/// `Callable`: a pipeline compiled for the JIT by `compile_to_callable`, run by
/// calling it: `c(input1, ..., output_buffer)`, the inputs in the order of the
/// argument list, then one buffer per output value, by position or by name as
/// keywords. Buffers may be `Buffer`s or NumPy arrays (and other buffer-protocol
/// objects, whose axes are taken in reverse order); scalars are Python or NumPy
/// numbers that fit the Param's type. The outputs are written in place.
#[pyclass(name = "Callable", module = "ferrohalide", frozen)]
pub struct PyCallable {
    inner: Arc<Callable>,
}

fn py_type_repr(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// A scalar for a Callable argument of type `ty`, accepted as pybind11's
/// casters would (ints must fit, no floats for integers, NumPy scalars
/// and 0-d arrays allowed); failures are Halide's "Unable to cast".
fn callable_scalar_py(obj: &Bound<'_, PyAny>, ty: Type) -> PyResult<ScalarInput> {
    let tname = py_type_repr(obj);
    let fail = || {
        HalideError::new_err(format!(
            "Unable to cast Python instance of type {tname} to C++ type '?'"
        ))
    };
    let v = python_scalar(obj).ok_or_else(fail)?;
    callable_scalar(ty, v, &tname).map_err(|_| fail())
}

/// A Python or NumPy scalar (or 0-d array) as a ScalarInput.
fn python_scalar(obj: &Bound<'_, PyAny>) -> Option<ScalarInput> {
    if obj.is_none() || obj.is_instance_of::<PyString>() {
        return None;
    }
    if obj.is_instance_of::<PyBool>() {
        return obj.extract().ok().map(ScalarInput::Bool);
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i128>().ok().map(ScalarInput::Int);
    }
    if obj.is_instance_of::<PyFloat>() {
        return obj.extract().ok().map(ScalarInput::Float);
    }
    if let Ok(ndim) = obj.getattr("ndim") {
        // NumPy scalars and arrays: only 0-d ones are scalars.
        if ndim.extract::<i64>().ok()? != 0 {
            return None;
        }
        let item = obj.call_method0("item").ok()?;
        if item.is_instance_of::<PyBool>()
            || item.is_instance_of::<PyInt>()
            || item.is_instance_of::<PyFloat>()
        {
            return python_scalar(&item);
        }
        return None;
    }
    if let Ok(i) = obj
        .call_method0("__index__")
        .and_then(|v| v.extract::<i128>())
    {
        return Some(ScalarInput::Int(i));
    }
    obj.call_method0("__float__")
        .and_then(|v| v.extract::<f64>())
        .ok()
        .map(ScalarInput::Float)
}

/// A buffer for a Callable argument: an `hl.Buffer` as is, or any
/// buffer-protocol object with NumPy's axis order reversed.
fn callable_buffer_py(obj: &Bound<'_, PyAny>, output: bool) -> PyResult<Buffer> {
    if let Ok(b) = obj.extract::<PyRef<PyBuffer>>() {
        if !b.defined {
            return Err(HalideError::new_err(
                "Error: Undefined buffer calling method raw_buffer\n",
            ));
        }
        return Ok(b.inner.clone());
    }
    if !supports_buffer_protocol(obj) {
        return Err(HalideError::new_err(format!(
            "Object of type '{}' is not an instance of 'buffer'",
            crate::py_param::type_name(obj)
        )));
    }
    match import_buffer_with(obj.py(), obj, None, true, output) {
        Ok(b) => Ok(b),
        Err(e) if e.is_instance_of::<PyValueError>(obj.py()) => Err(e),
        Err(e) => Err(HalideError::new_err(e.to_string())),
    }
}

#[pymethods]
impl PyCallable {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let positional: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let mut keywords = vec![];
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                keywords.push((k.extract::<String>()?, v));
            }
        }
        let bound = self.inner.bind(positional, keywords).py()?;
        let mut values = Vec::with_capacity(bound.len());
        for (obj, p) in bound.iter().zip(self.inner.params()) {
            values.push(match &p.kind {
                ParamKind::Scalar(ty) => InputValue::Scalar(callable_scalar_py(obj, *ty)?),
                ParamKind::InputBuffer(..) => InputValue::Buffer(callable_buffer_py(obj, false)?),
                ParamKind::OutputBuffer(..) => InputValue::Buffer(callable_buffer_py(obj, true)?),
            });
        }
        let c = self.inner.clone();
        crate::gil::detached(py, move || c.call(values)).py()
    }
    fn __repr__(&self) -> String {
        let names: Vec<&str> = self
            .inner
            .params()
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        format!("<halide.Callable ({})>", names.join(", "))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let kinds = crate::py_target::make_enum(
        py,
        "ArgumentKind",
        &[
            ("InputScalar", 0, ""),
            ("InputBuffer", 1, ""),
            ("OutputBuffer", 2, ""),
        ],
        &[],
    )?;
    kinds.bind(py).setattr(
        "__doc__",
        "`ArgumentKind`: the kind of a pipeline `Argument`: `InputScalar` (a Param), \
         `InputBuffer` (an ImageParam) or `OutputBuffer`.",
    )?;
    m.add("ArgumentKind", kinds.bind(py))?;
    let _ = ARGUMENT_KIND.set(py, kinds);
    m.add_class::<PyPipeline>()?;
    m.add_class::<PyAutoSchedulerResults>()?;
    m.add_class::<PyArgument>()?;
    m.add_class::<PyArgumentEstimates>()?;
    m.add_class::<PyCallable>()?;
    Ok(())
}
