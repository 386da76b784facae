//! `hl.Param` and `hl.ImageParam`: conversion of Python values and calls
//! to `ferrohalide_core::lang::{parameter, image_param}`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};

use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::image_param::ImageParam;
use ferrohalide_core::lang::parameter::{unique_param_name, Parameter, ScalarInput};

use crate::errors::{HalideError, IntoPy};
use crate::py_buffer::{wrap_buffer, PyBuffer};
use crate::py_expr::{py_to_expr, py_to_opt_expr, PyExpr};
use crate::py_output_buffer::PyDimension;
use crate::py_type::{type_from_py, PyType};

/// `Param(type, name=None, value=None)`: a scalar input of a pipeline, whose
/// value is given when it runs; it can be used wherever an Expr can, with
/// the same operators. Also `Param(type, value)`. An unnamed Param gets a
/// fresh name, and the value is converted to `type` as by `set`.
#[pyclass(name = "Param", module = "ferrohalide", frozen, subclass)]
pub struct PyParam {
    pub inner: Parameter,
}

/// A Param used where an Expr is expected.
pub fn param_operand(obj: &Bound<'_, PyAny>) -> Option<Expr> {
    obj.extract::<PyRef<PyParam>>().ok().map(|p| p.inner.expr())
}

/// A Python number as a value for a scalar parameter (bool, int-like or
/// float-like); anything else is Halide's TypeError. As in Halide's
/// bindings, a Python float becomes a float32 first, whatever the
/// parameter's type.
pub fn scalar_input(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ScalarInput> {
    Ok(match python_number(obj, what)? {
        ScalarInput::Float(f) => ScalarInput::Float(f as f32 as f64),
        v => v,
    })
}

/// A Python bool, int-like or float-like value, unconverted.
pub fn python_number(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ScalarInput> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(ScalarInput::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i128>() {
            Ok(v) => ScalarInput::Int(v),
            Err(_) => ScalarInput::Float(obj.extract::<f64>()?),
        });
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(ScalarInput::Float(obj.extract()?));
    }
    if !obj.is_instance_of::<PyString>() {
        if let Ok(i) = obj
            .call_method0("__index__")
            .and_then(|v| v.extract::<i128>())
        {
            return Ok(ScalarInput::Int(i));
        }
        if let Ok(f) = obj
            .call_method0("__float__")
            .and_then(|v| v.extract::<f64>())
        {
            return Ok(ScalarInput::Float(f));
        }
    }
    Err(PyTypeError::new_err(format!(
        "{what}(): incompatible function arguments: expected a bool, int or float, got {}",
        type_name(obj)
    )))
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

crate::expr_like_methods!(PyParam {
    // `Param(type)`, `Param(type, name)`, `Param(type, value)`,
    // `Param(type, name, value)`; keywords as Halide's: `type`, `name`,
    // `value`.
    #[new]
    #[pyo3(signature = (r#type, name=None, value=None))]
    fn py_new(r#type: &Bound<'_, PyAny>, name: Option<&Bound<'_, PyAny>>, value: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let (ty, a, b) = (r#type, name, value);
        let bad = || PyTypeError::new_err("__init__(): incompatible constructor arguments for halide.Param");
        let ty = type_from_py(ty).map_err(|_| bad())?;
        let (name, value) = match (a, b) {
            (None, None) => (None, None),
            (None, Some(v)) => (None, Some(v)),
            (Some(a), None) if a.is_instance_of::<PyString>() => (Some(a.extract::<String>()?), None),
            (Some(a), None) => (None, Some(a)),
            (Some(a), Some(v)) => {
                if !a.is_instance_of::<PyString>() || v.is_instance_of::<PyString>() {
                    return Err(bad());
                }
                (Some(a.extract::<String>()?), Some(v))
            }
        };
        let value = match value {
            Some(v) => Some(scalar_input(v, "__init__").map_err(|_| bad())?),
            None => None,
        };
        let p = Parameter::new(ty, false, 0, name.unwrap_or_else(unique_param_name));
        if let Some(v) = value {
            p.set_scalar(v).py()?;
        }
        Ok(PyParam { inner: p })
    }
    /// `name()`: the parameter's name.
    fn name(&self) -> String {
        self.inner.name()
    }
    /// `type()`: the parameter's type.
    fn r#type(&self) -> PyType {
        PyType { inner: self.inner.ty() }
    }
    /// `set(value)`: the value the pipeline uses for this parameter from now
    /// on, converted to its type (an error if it does not fit; a Python
    /// float is rounded to float32 first, as in Halide's bindings).
    fn set(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.set_scalar(scalar_input(value, "set")?).py()
    }
    /// `set_estimate(value)`: a typical value of the parameter, for
    /// autoschedulers; converted like `set`'s value, and never used as the
    /// parameter's value.
    fn set_estimate(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.set_estimate(scalar_input(value, "set_estimate")?).py()
    }
    /// `set_range(min, max)`: both `set_min_value(min)` and
    /// `set_max_value(max)`.
    fn set_range(&self, min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.set_min_value(py_to_opt_expr(min)?).py()?;
        self.inner.set_max_value(py_to_opt_expr(max)?).py()
    }
    /// `set_min_value(min)`: the smallest value the parameter may take,
    /// checked when the pipeline runs; `min` must be a constant, converted
    /// to the parameter's type; `hl.Expr()` removes the bound.
    fn set_min_value(&self, min: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.set_min_value(py_to_opt_expr(min)?).py()
    }
    /// `set_max_value(max)`: the largest value the parameter may take,
    /// checked when the pipeline runs; `max` must be a constant, converted
    /// to the parameter's type; `hl.Expr()` removes the bound.
    fn set_max_value(&self, max: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.set_max_value(py_to_opt_expr(max)?).py()
    }
    /// `min_value()`: the smallest allowed value, or an undefined Expr if
    /// none was set.
    fn min_value(&self) -> PyExpr {
        PyExpr::from_opt(self.inner.min_value())
    }
    /// `max_value()`: the largest allowed value, or an undefined Expr if
    /// none was set.
    fn max_value(&self) -> PyExpr {
        PyExpr::from_opt(self.inner.max_value())
    }
    /// `parameter()`: the `hl.Parameter` behind this Param.
    fn parameter(&self) -> crate::py_parameter::PyParameter {
        crate::py_parameter::PyParameter::new(self.inner.clone())
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'halide.Param' object has no attribute '{name}'"
        )))
    }
    fn __repr__(&self) -> String {
        format!("<halide.Param '{}' type {}>", self.inner.name(), crate::py_type::type_name(self.inner.ty()))
    }
    fn __str__(&self) -> String {
        self.__repr__()
    }
});

/// `ImageParam(type, dimensions[, name])`: an input image of a pipeline,
/// with element type `type`, whose size and contents are given when it runs
/// (bind an `hl.Buffer` with `set`). `im[x, y]` is an Expr reading it, and
/// its shape accessors (`width()`, `dim(i)`, ...) are Exprs. `ImageParam()`
/// is undefined; an unnamed ImageParam gets a fresh name.
#[pyclass(name = "ImageParam", module = "ferrohalide", frozen, subclass)]
pub struct PyImageParam {
    /// None for `ImageParam()`, Halide's undefined ImageParam.
    pub inner: Option<ImageParam>,
}

impl PyImageParam {
    pub fn get_inner(&self) -> PyResult<&ImageParam> {
        self.inner
            .as_ref()
            .ok_or_else(|| HalideError::new_err("Error: Parameter is undefined\n"))
    }
}

fn expr(r: ferrohalide_core::Result<Expr>) -> PyResult<PyExpr> {
    Ok(PyExpr::new(r.py()?))
}

#[pymethods]
impl PyImageParam {
    // `ImageParam()`, `ImageParam(type, dimensions[, name])`.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let bad = || {
            PyTypeError::new_err(
                "__init__(): incompatible constructor arguments for halide.ImageParam",
            )
        };
        match args.len() {
            0 => Ok(PyImageParam { inner: None }),
            2 | 3 => {
                let ty = type_from_py(&args.get_item(0)?).map_err(|_| bad())?;
                let dims: usize = args.get_item(1)?.extract().map_err(|_| bad())?;
                let name: Option<String> = match args.len() {
                    3 => Some(args.get_item(2)?.extract().map_err(|_| bad())?),
                    _ => None,
                };
                Ok(PyImageParam {
                    inner: Some(ImageParam::new(ty, dims, name.as_deref())),
                })
            }
            _ => Err(bad()),
        }
    }
    /// `defined()`: False for `ImageParam()`, which names no input.
    fn defined(&self) -> bool {
        self.inner.is_some()
    }
    /// `name()`: the input's name.
    fn name(&self) -> PyResult<String> {
        Ok(self.get_inner()?.name())
    }
    /// `type()`: the element type of the input.
    fn r#type(&self) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.get_inner()?.ty(),
        })
    }
    /// `dimensions()`: the number of dimensions of the input.
    fn dimensions(&self) -> PyResult<usize> {
        Ok(self.get_inner()?.dimensions())
    }
    /// `set(buffer)`: bind the `hl.Buffer` `buffer` as this input for the
    /// following realizations; its element type must match (HalideError
    /// now), its dimension count is checked when the pipeline runs. An
    /// undefined `hl.Buffer()` unbinds.
    fn set(&self, buffer: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = buffer.extract::<PyRef<PyBuffer>>().map_err(|_| {
            PyTypeError::new_err(format!(
                "set(): incompatible function arguments: expected a halide.Buffer, got {}",
                type_name(buffer)
            ))
        })?;
        let im = self.get_inner()?;
        if !b.defined {
            // As in Halide: accepted, and reported as a null buffer when run.
            im.reset();
            return Ok(());
        }
        im.set(b.inner.clone()).py()
    }
    /// `get()`: the `hl.Buffer` bound to this input, or an undefined
    /// `hl.Buffer()` if none is bound.
    fn get(&self, py: Python<'_>) -> PyResult<Py<PyBuffer>> {
        match self.get_inner()?.get() {
            Some(b) => wrap_buffer(py, b),
            None => Py::new(py, PyBuffer::undefined()),
        }
    }
    /// `reset()`: unbind the bound buffer, if any.
    fn reset(&self) -> PyResult<()> {
        self.get_inner()?.reset();
        Ok(())
    }
    // Not iterable: without this, Python would iterate through
    // `__getitem__` (im[0], im[1], ...), which never ends.
    fn __iter__(&self) -> PyResult<()> {
        Err(crate::errors::not_iterable("ImageParam"))
    }
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = key.cast::<PyTuple>() {
            t.iter().collect()
        } else if let Ok(l) = key.cast::<PyList>() {
            l.iter().collect()
        } else {
            vec![key.clone()]
        };
        let args = items
            .iter()
            .map(py_to_expr)
            .collect::<PyResult<Vec<Expr>>>()?;
        expr(self.get_inner()?.call(args))
    }
    /// `dim(i)`: dimension `i` of the input, an `hl.Dimension`, whose min,
    /// extent and stride can be read and constrained; HalideError if there
    /// is no dimension `i`.
    fn dim(&self, i: i64) -> PyResult<PyDimension> {
        Ok(PyDimension {
            inner: self.get_inner()?.dim(i).py()?,
            input: true,
        })
    }
    /// `width()`: the extent of dimension 0, as an Expr (HalideError for a
    /// zero-dimensional input).
    fn width(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.width())
    }
    /// `height()`: the extent of dimension 1, as an Expr (HalideError with
    /// fewer than two dimensions).
    fn height(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.height())
    }
    /// `channels()`: the extent of dimension 2, as an Expr (HalideError with
    /// fewer than three dimensions).
    fn channels(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.channels())
    }
    /// `left()`: the min coordinate of dimension 0, as an Expr.
    fn left(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.left())
    }
    /// `right()`: the max coordinate of dimension 0 (min + extent - 1), as
    /// an Expr.
    fn right(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.right())
    }
    /// `top()`: the min coordinate of dimension 1, as an Expr.
    fn top(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.top())
    }
    /// `bottom()`: the max coordinate of dimension 1 (min + extent - 1), as
    /// an Expr.
    fn bottom(&self) -> PyResult<PyExpr> {
        expr(self.get_inner()?.base.bottom())
    }
    /// `set_estimates([(min, extent), ...])`: estimated bounds of the input,
    /// one `(min, extent)` pair per dimension, for autoschedulers. Returns
    /// this ImageParam.
    fn set_estimates<'py>(slf: PyRef<'py, Self>, estimates: &Bound<'py, PyAny>) -> PyResult<PyRef<'py, Self>> {
        let region = crate::py_boundary::region_from_py(estimates, "set_estimates")?;
        slf.get_inner()?.param().set_estimates(region).py()?;
        Ok(slf)
    }
    /// `parameter()`: the `hl.Parameter` behind this ImageParam.
    fn parameter(&self) -> PyResult<crate::py_parameter::PyParameter> {
        Ok(crate::py_parameter::PyParameter::new(self.get_inner()?.param().clone()))
    }
    /// `trace_loads()`: report every load from this input to the tracing
    /// runtime when the pipeline runs. Returns this ImageParam.
    fn trace_loads(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        slf.get_inner()?.param().trace_loads();
        Ok(slf)
    }
    /// `host_alignment()`: the alignment in bytes promised for the host
    /// pointer of the bound buffer (by default the element size).
    fn host_alignment(&self) -> PyResult<i32> {
        Ok(self.get_inner()?.param().host_alignment())
    }
    /// `set_host_alignment(bytes)`: promise that the host pointer of the
    /// bound buffer is a multiple of `bytes` (positive); running the
    /// pipeline with a buffer that breaks the promise fails. Returns this
    /// ImageParam.
    fn set_host_alignment(slf: PyRef<'_, Self>, bytes: i32) -> PyResult<PyRef<'_, Self>> {
        slf.get_inner()?.param().set_host_alignment(bytes).py()?;
        Ok(slf)
    }
    /// `store_in(memory_type)`: declare which `hl.MemoryType` the input's
    /// memory lives in (on CPU targets every kind is host memory). Returns
    /// this ImageParam.
    fn store_in(
        slf: PyRef<'_, Self>,
        memory_type: crate::py_func::PyMemoryType,
    ) -> PyResult<PyRef<'_, Self>> {
        slf.get_inner()?.param().store_in(memory_type.to_core()).py()?;
        Ok(slf)
    }
    /// `in_()`, `in_(g)` or `in_([g, h, ...])`: a Func standing for the
    /// image in its consumers (all, or the ones listed), to be scheduled.
    #[pyo3(signature = (*args))]
    fn in_(&self, args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<crate::py_func::PyFunc> {
        use crate::py_func::{consumers_from_py, Consumers};
        let im = self.get_inner()?;
        let w = match consumers_from_py(args, "in_")? {
            None => im.in_(),
            Some(Consumers::One(g)) => im.in_func(&g),
            Some(Consumers::Many(gs)) => im.in_funcs(&gs),
        };
        Ok(crate::py_func::PyFunc { inner: w.py()? })
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'halide.ImageParam' object has no attribute '{name}'"
        )))
    }
    fn __repr__(&self) -> String {
        match &self.inner {
            None => "<halide.ImageParam ImageParam()>".to_string(),
            Some(im) => format!(
                "<halide.ImageParam '{}', dims: {}, type: {}>",
                im.name(),
                im.dimensions(),
                crate::py_type::type_name(im.ty())
            ),
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParam>()?;
    m.add_class::<PyImageParam>()?;
    Ok(())
}
