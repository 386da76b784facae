//! `hl.Parameter`: the object behind a Param or ImageParam (what
//! `Param.parameter()` returns and what serialized pipelines exchange),
//! over `ferrohalide_core::lang::parameter::Parameter`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ferrohalide_core::ir::ExprNode;
use ferrohalide_core::lang::output_buffer::Dimension;
use ferrohalide_core::lang::parameter::{unique_param_name, Parameter};

use crate::errors::{HalideError, IntoPy};
use crate::py_buffer::{wrap_buffer, PyBuffer};
use crate::py_expr::{py_to_opt_expr, PyExpr};
use crate::py_param::python_number;
use crate::py_type::{type_from_py, PyType};

/// `Parameter(type, is_buffer, dimensions[, name])`: the object behind a
/// Param, an ImageParam or a Func's output buffer (`p.parameter()`), giving
/// direct access to its value or bound buffer, range, estimates and
/// dimension constraints. `Parameter()` is undefined (most methods then raise
/// HalideError), `Parameter(p)` is another handle to the same parameter as
/// `p`, and unnamed parameters get a fresh name.
#[pyclass(name = "Parameter", module = "ferrohalide", frozen)]
pub struct PyParameter {
    /// None for `Parameter()`, Halide's undefined Parameter.
    pub inner: Option<Parameter>,
}

impl PyParameter {
    pub fn new(p: Parameter) -> PyParameter {
        PyParameter { inner: Some(p) }
    }
    pub fn get(&self) -> PyResult<&Parameter> {
        self.inner
            .as_ref()
            .ok_or_else(|| HalideError::new_err("Error: Parameter is undefined\n"))
    }
    /// Dimension `d` of a buffer parameter.
    fn dim(&self, d: i64) -> PyResult<Dimension> {
        let p = self.get()?;
        if !p.is_buffer() || d < 0 || d as usize >= p.dimensions() {
            return Err(HalideError::new_err(format!(
                "Error: Parameter {} has no buffer dimension {d}\n",
                p.name()
            )));
        }
        Ok(Dimension {
            param: p.clone(),
            index: d as usize,
        })
    }
    fn constraint(
        &self,
        d: i64,
        pick: impl Fn(
            &ferrohalide_core::lang::parameter::DimConstraint,
        ) -> Option<ferrohalide_core::ir::Expr>,
    ) -> PyResult<PyExpr> {
        let dim = self.dim(d)?;
        let c = dim.param.constraints();
        Ok(PyExpr::from_opt(pick(&c[dim.index])))
    }
}

/// A scalar immediate as a Python number (bool, int or float).
fn immediate_to_py(py: Python<'_>, e: &ferrohalide_core::ir::Expr) -> PyResult<Py<PyAny>> {
    Ok(match e.node() {
        ExprNode::UIntImm(v) if e.ty().is_bool() => {
            (*v != 0).into_pyobject(py)?.to_owned().into_any().unbind()
        }
        ExprNode::IntImm(v) => v.into_pyobject(py)?.into_any().unbind(),
        ExprNode::UIntImm(v) => v.into_pyobject(py)?.into_any().unbind(),
        ExprNode::FloatImm(v) => v.into_pyobject(py)?.into_any().unbind(),
        _ => py.None(),
    })
}

#[pymethods]
impl PyParameter {
    // `Parameter()`, `Parameter(p)`, `Parameter(type, is_buffer,
    // dimensions[, name])`.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let bad = || {
            PyTypeError::new_err(
                "__init__(): incompatible constructor arguments for halide.Parameter",
            )
        };
        match args.len() {
            0 => Ok(PyParameter { inner: None }),
            1 => {
                let p = args.get_item(0)?;
                let p = p.extract::<PyRef<PyParameter>>().map_err(|_| bad())?;
                Ok(PyParameter {
                    inner: p.inner.clone(),
                })
            }
            3 | 4 => {
                let ty = type_from_py(&args.get_item(0)?).map_err(|_| bad())?;
                let is_buffer: bool = args.get_item(1)?.extract().map_err(|_| bad())?;
                let dims: usize = args.get_item(2)?.extract().map_err(|_| bad())?;
                let name = match args.len() {
                    4 => args.get_item(3)?.extract::<String>().map_err(|_| bad())?,
                    _ => unique_param_name(),
                };
                Ok(PyParameter::new(Parameter::new(ty, is_buffer, dims, name)))
            }
            _ => Err(bad()),
        }
    }
    fn __repr__(&self) -> String {
        match &self.inner {
            None => "<halide.Parameter '' (undefined)>".into(),
            Some(p) => format!(
                "<halide.Parameter '{}' type {}>",
                p.name(),
                crate::py_type::type_name(p.ty())
            ),
        }
    }
    /// `name()`: the parameter's name.
    fn name(&self) -> PyResult<String> {
        Ok(self.get()?.name())
    }
    /// `type()`: the parameter's type (a buffer parameter's element type).
    fn r#type(&self) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.get()?.ty(),
        })
    }
    /// `dimensions()`: the number of dimensions of a buffer parameter (a
    /// Param's parameter has 0).
    fn dimensions(&self) -> PyResult<usize> {
        Ok(self.get()?.dimensions())
    }
    /// `is_buffer()`: whether this is a buffer parameter (an ImageParam or an
    /// output buffer) rather than a scalar one.
    fn is_buffer(&self) -> PyResult<bool> {
        Ok(self.get()?.is_buffer())
    }
    /// `defined()`: False for `Parameter()`, which names no parameter.
    fn defined(&self) -> bool {
        self.inner.is_some()
    }
    /// `same_as(other)`: whether `other` is a handle to the same parameter
    /// (two undefined Parameters count as the same).
    fn same_as(&self, other: PyRef<'_, PyParameter>) -> bool {
        match (&self.inner, &other.inner) {
            (Some(a), Some(b)) => a.same_as(b),
            (None, None) => true,
            _ => false,
        }
    }
    /// `scalar_expr()`: the scalar parameter's current value, as a constant
    /// Expr; HalideError for a buffer parameter or if no value was set.
    fn scalar_expr(&self) -> PyResult<PyExpr> {
        let p = self.get()?;
        if p.is_buffer() {
            return Err(HalideError::new_err(format!("Error: Parameter {} is a Buffer\n", p.name())));
        }
        Ok(PyExpr::new(p.scalar_for_run().py()?))
    }
    /// `scalar()`: the scalar parameter's current value, as a Python bool,
    /// int or float; HalideError if no value was set.
    fn scalar(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let p = self.get()?;
        let v = p.scalar_for_run().py()?;
        immediate_to_py(py, &v)
    }
    /// `set_scalar(value)` or `set_scalar(value_type, value)`: set the
    /// scalar parameter's value, converted to its type (an error if it does
    /// not fit); `value_type`, if given, must be the parameter's type
    /// (HalideError otherwise).
    #[pyo3(signature = (*args))]
    fn set_scalar(&self, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let p = self.get()?;
        let value = match args.len() {
            1 => args.get_item(0)?,
            2 => {
                let ty = type_from_py(&args.get_item(0)?)?;
                if ty != p.ty() {
                    return Err(HalideError::new_err(format!(
                        "Error: Parameter {} has type {}, but set_scalar was given a value of type {}\n",
                        p.name(),
                        crate::py_type::type_name(p.ty()),
                        crate::py_type::type_name(ty)
                    )));
                }
                args.get_item(1)?
            }
            _ => {
                return Err(PyTypeError::new_err(
                    "set_scalar(): incompatible function arguments",
                ))
            }
        };
        p.set_scalar(python_number(&value, "set_scalar")?).py()
    }
    /// `buffer()`: the `hl.Buffer` bound to this buffer parameter, or an
    /// undefined `hl.Buffer()` if none is bound.
    fn buffer(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self.get()?.buffer() {
            Some(b) => wrap_buffer(py, b)?.into_any(),
            None => Py::new(py, PyBuffer::undefined())?.into_any(),
        })
    }
    /// `set_buffer(buffer)`: bind `buffer` to this parameter; its element
    /// type must be the parameter's (HalideError otherwise). An undefined
    /// `hl.Buffer()` unbinds.
    fn set_buffer(&self, buffer: PyRef<'_, PyBuffer>) -> PyResult<()> {
        let b = buffer.defined.then(|| buffer.inner.clone());
        self.get()?.set_buffer(b).py()
    }
    /// `set_min_value(expr)`: the smallest value the scalar parameter may
    /// take (checked when the pipeline runs); `expr` must be a constant,
    /// converted to the parameter's type; `hl.Expr()` removes the bound.
    fn set_min_value(&self, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        self.get()?.set_min_value(py_to_opt_expr(expr)?).py()
    }
    /// `set_max_value(expr)`: the largest value the scalar parameter may
    /// take (checked when the pipeline runs); `expr` must be a constant,
    /// converted to the parameter's type; `hl.Expr()` removes the bound.
    fn set_max_value(&self, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        self.get()?.set_max_value(py_to_opt_expr(expr)?).py()
    }
    /// `min_value()`: the smallest allowed value, or an undefined Expr if
    /// none was set.
    fn min_value(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::from_opt(self.get()?.min_value()))
    }
    /// `max_value()`: the largest allowed value, or an undefined Expr if
    /// none was set.
    fn max_value(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::from_opt(self.get()?.max_value()))
    }
    /// `set_estimate(expr)`: a typical value of the scalar parameter, for
    /// autoschedulers (never used as its value); `expr` must be a constant;
    /// `hl.Expr()` removes the estimate.
    fn set_estimate(&self, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        let p = self.get()?;
        match py_to_opt_expr(expr)? {
            None => {
                p.lock().estimate = None;
                Ok(())
            }
            Some(e) => {
                let v =
                    ferrohalide_core::lang::parameter::immediate_value(&e).ok_or_else(|| {
                        HalideError::new_err("Error: a Parameter's estimate must be a constant\n")
                    })?;
                p.set_estimate(v).py()
            }
        }
    }
    /// `estimate()`: the scalar parameter's estimate, or an undefined Expr
    /// if none was set.
    fn estimate(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::from_opt(self.get()?.lock().estimate.clone()))
    }
    /// `set_min_constraint(dim, expr)`: require the min coordinate of
    /// dimension `dim` of this buffer parameter to equal `expr` (an integer
    /// Expr, checked when the pipeline runs); `hl.Expr()` removes the
    /// constraint. HalideError if this is not a buffer parameter or has no
    /// dimension `dim`.
    fn set_min_constraint(&self, dim: i64, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        self.dim(dim)?.set_min(py_to_opt_expr(expr)?).py()
    }
    /// `set_extent_constraint(dim, expr)`: require the extent of dimension
    /// `dim` of this buffer parameter to equal `expr` (an integer Expr,
    /// checked when the pipeline runs); `hl.Expr()` removes the constraint.
    fn set_extent_constraint(&self, dim: i64, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        self.dim(dim)?.set_extent(py_to_opt_expr(expr)?).py()
    }
    /// `set_stride_constraint(dim, expr)`: require the stride of dimension
    /// `dim` of this buffer parameter to equal `expr` (an integer Expr,
    /// checked when the pipeline runs); `hl.Expr()` removes the constraint
    /// (dimension 0's stride is constrained to 1 by default).
    fn set_stride_constraint(&self, dim: i64, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        self.dim(dim)?.set_stride(py_to_opt_expr(expr)?).py()
    }
    /// `set_min_constraint_estimate(dim, expr)`: an estimate of the min
    /// coordinate of dimension `dim`, for autoschedulers (the extent
    /// estimate is kept); `hl.Expr()` removes it.
    fn set_min_constraint_estimate(&self, dim: i64, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = self.dim(dim)?;
        let extent = d.param.constraints()[d.index].extent_estimate.clone();
        d.set_estimate(py_to_opt_expr(expr)?, extent).py()
    }
    /// `set_extent_constraint_estimate(dim, expr)`: an estimate of the
    /// extent of dimension `dim`, for autoschedulers (the min estimate is
    /// kept); `hl.Expr()` removes it.
    fn set_extent_constraint_estimate(&self, dim: i64, expr: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = self.dim(dim)?;
        let min = d.param.constraints()[d.index].min_estimate.clone();
        d.set_estimate(min, py_to_opt_expr(expr)?).py()
    }
    /// `min_constraint(dim)`: the constraint on the min coordinate of
    /// dimension `dim`, or an undefined Expr if there is none.
    fn min_constraint(&self, dim: i64) -> PyResult<PyExpr> {
        self.constraint(dim, |c| c.min.clone())
    }
    /// `extent_constraint(dim)`: the constraint on the extent of dimension
    /// `dim`, or an undefined Expr if there is none.
    fn extent_constraint(&self, dim: i64) -> PyResult<PyExpr> {
        self.constraint(dim, |c| c.extent.clone())
    }
    /// `stride_constraint(dim)`: the constraint on the stride of dimension
    /// `dim`, or an undefined Expr if there is none.
    fn stride_constraint(&self, dim: i64) -> PyResult<PyExpr> {
        self.constraint(dim, |c| c.stride.clone())
    }
    /// `min_constraint_estimate(dim)`: the estimate of the min coordinate of
    /// dimension `dim`, or an undefined Expr if there is none.
    fn min_constraint_estimate(&self, dim: i64) -> PyResult<PyExpr> {
        self.constraint(dim, |c| c.min_estimate.clone())
    }
    /// `extent_constraint_estimate(dim)`: the estimate of the extent of
    /// dimension `dim`, or an undefined Expr if there is none.
    fn extent_constraint_estimate(&self, dim: i64) -> PyResult<PyExpr> {
        self.constraint(dim, |c| c.extent_estimate.clone())
    }
    /// `default_value()`: the scalar parameter's default value, or an
    /// undefined Expr if none was set.
    fn default_value(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::from_opt(self.get()?.default_value()))
    }
    /// `set_default_value(value)`: the scalar parameter's default value (used
    /// by generators); it must have exactly the parameter's type (no
    /// conversion), and buffer parameters have none (HalideError);
    /// `hl.Expr()` removes it.
    fn set_default_value(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.get()?.set_default_value(py_to_opt_expr(value)?).py()
    }
    /// `host_alignment()`: the alignment in bytes promised for a buffer
    /// parameter's host pointer (by default its element size).
    fn host_alignment(&self) -> PyResult<i32> {
        Ok(self.get()?.host_alignment())
    }
    /// `set_host_alignment(bytes)`: promise that the host pointer of the
    /// buffer bound to this parameter is a multiple of `bytes` (positive);
    /// the pipeline checks it when it runs. HalideError for a scalar
    /// parameter.
    fn set_host_alignment(&self, bytes: i32) -> PyResult<()> {
        self.get()?.set_host_alignment(bytes).py()
    }
    /// `memory_type()`: the `hl.MemoryType` a buffer parameter's memory is
    /// declared to live in (see `store_in`).
    fn memory_type(&self) -> PyResult<crate::py_func::PyMemoryType> {
        Ok(crate::py_func::PyMemoryType::from_core(self.get()?.memory_type()))
    }
    /// `store_in(memory_type)`: declare which `hl.MemoryType` the buffer
    /// parameter's memory lives in (on CPU targets every kind is host
    /// memory). HalideError for a scalar parameter.
    fn store_in(&self, memory_type: crate::py_func::PyMemoryType) -> PyResult<()> {
        self.get()?.store_in(memory_type.to_core()).py()
    }
    /// `get_argument_estimates()`: the parameter's default, range and
    /// estimates (scalar) or per-dimension estimates (buffer), gathered in an
    /// `hl.ArgumentEstimates`.
    fn get_argument_estimates(&self) -> PyResult<crate::py_pipeline::PyArgumentEstimates> {
        Ok(crate::py_pipeline::PyArgumentEstimates::of(self.get()?))
    }
    /// `_to_argument()`: the pipeline argument (`hl.Argument`) this
    /// parameter stands for, with its estimates.
    fn _to_argument(&self, py: Python<'_>) -> PyResult<crate::py_pipeline::PyArgument> {
        crate::py_pipeline::PyArgument::of_parameter(py, self.get()?)
    }
    /// `buffer_constraints()`: always raises TypeError, as in Halide 21,
    /// whose bindings declare it but cannot return its result.
    // Halide 21's binding declares this but cannot convert its result
    // (`BufferConstraint` has no Python class): the same TypeError here.
    fn buffer_constraints(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "Unable to convert function return value to a Python type! The signature was\n\t(self: halide.halide_.Parameter) -> list[Halide::BufferConstraint]",
        ))
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'halide.Parameter' object has no attribute '{name}'"
        )))
    }
}
