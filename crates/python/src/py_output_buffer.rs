//! `hl.OutputImageParam` (`Func.output_buffer()`) and `hl.Dimension`.

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;

use ferrohalide_core::lang::output_buffer::{Dimension, OutputImageParam};

use crate::errors::IntoPy;
use crate::py_expr::{py_to_opt_expr, PyExpr};
use crate::py_type::PyType;

/// `OutputImageParam()`: the buffer a Func is realized into, seen as a
/// pipeline parameter (`f.output_buffer()`, `f.output_buffers()`): its
/// shape accessors (`width()`, `dim(i)`, ...) are Exprs that schedules and
/// specializations can use, and its dimensions can be constrained.
/// `OutputImageParam()` itself is undefined (its methods raise HalideError).
#[pyclass(name = "OutputImageParam", module = "ferrohalide", frozen)]
pub struct PyOutputImageParam {
    /// `None` for `hl.OutputImageParam()`, which names no buffer.
    pub inner: Option<OutputImageParam>,
}

impl PyOutputImageParam {
    fn get(&self) -> PyResult<&OutputImageParam> {
        self.inner
            .as_ref()
            .ok_or_else(|| crate::errors::HalideError::new_err("Error: OutputImageParam is undefined\n"))
    }
}

/// One dimension of an ImageParam or an output buffer, from `im.dim(i)` or
/// `f.output_buffer().dim(i)` (not constructed directly): its min, extent
/// and stride are Exprs standing for the buffer's shape when the pipeline
/// runs, and the `set_*` methods constrain them (each returns this
/// Dimension, so calls chain).
#[pyclass(name = "Dimension", module = "ferrohalide", frozen)]
pub struct PyDimension {
    pub inner: Dimension,
    /// A dimension of an input (ImageParam): it can be constrained.
    pub input: bool,
}

fn expr(r: ferrohalide_core::Result<ferrohalide_core::ir::Expr>) -> PyResult<PyExpr> {
    Ok(PyExpr::new(r.py()?))
}

#[pymethods]
impl PyOutputImageParam {
    // `OutputImageParam()`: undefined, as in Halide.
    #[new]
    fn py_new() -> Self {
        PyOutputImageParam { inner: None }
    }
    /// `name()`: the buffer's name (the Func's name, or `f.0`, `f.1`, ...
    /// for the values of a Tuple-valued Func).
    fn name(&self) -> PyResult<String> {
        Ok(self.get()?.name())
    }
    /// `dimensions()`: the number of dimensions of the buffer (those of the
    /// Func).
    fn dimensions(&self) -> PyResult<usize> {
        Ok(self.get()?.dimensions)
    }
    /// `type()`: the element type of the buffer.
    fn r#type(&self) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.get()?.ty(),
        })
    }
    /// `defined()`: False for `OutputImageParam()`, which names no buffer.
    fn defined(&self) -> bool {
        self.inner.is_some()
    }
    /// `dim(i)`: dimension `i` of the buffer, an `hl.Dimension`; HalideError
    /// if there is no dimension `i`.
    fn dim(&self, i: i64) -> PyResult<PyDimension> {
        Ok(PyDimension {
            inner: self.get()?.dim(i).py()?,
            input: false,
        })
    }
    /// `set_estimates([(min, extent), ...])`: estimated bounds of the
    /// buffer, one `(min, extent)` pair per dimension, for autoschedulers and
    /// the metadata of compiled code. Returns this OutputImageParam.
    fn set_estimates<'py>(slf: PyRef<'py, Self>, estimates: &Bound<'py, PyAny>) -> PyResult<PyRef<'py, Self>> {
        let region = crate::py_boundary::region_from_py(estimates, "set_estimates")?;
        slf.get()?.param.set_estimates(region).py()?;
        Ok(slf)
    }
    /// `width()`: the extent of dimension 0, as an Expr (HalideError for a
    /// zero-dimensional buffer).
    fn width(&self) -> PyResult<PyExpr> {
        expr(self.get()?.width())
    }
    /// `height()`: the extent of dimension 1, as an Expr (HalideError with
    /// fewer than two dimensions).
    fn height(&self) -> PyResult<PyExpr> {
        expr(self.get()?.height())
    }
    /// `channels()`: the extent of dimension 2, as an Expr (HalideError with
    /// fewer than three dimensions).
    fn channels(&self) -> PyResult<PyExpr> {
        expr(self.get()?.channels())
    }
    /// `left()`: the min coordinate of dimension 0, as an Expr.
    fn left(&self) -> PyResult<PyExpr> {
        expr(self.get()?.left())
    }
    /// `right()`: the max coordinate of dimension 0 (min + extent - 1), as
    /// an Expr.
    fn right(&self) -> PyResult<PyExpr> {
        expr(self.get()?.right())
    }
    /// `top()`: the min coordinate of dimension 1, as an Expr.
    fn top(&self) -> PyResult<PyExpr> {
        expr(self.get()?.top())
    }
    /// `bottom()`: the max coordinate of dimension 1 (min + extent - 1), as
    /// an Expr.
    fn bottom(&self) -> PyResult<PyExpr> {
        expr(self.get()?.bottom())
    }
    /// `host_alignment()`: the alignment in bytes promised for the buffer's
    /// host pointer (by default the element size).
    fn host_alignment(&self) -> PyResult<i32> {
        Ok(self.get()?.param.host_alignment())
    }
    /// `set_host_alignment(bytes)`: promise that the buffer's host pointer is
    /// a multiple of `bytes` (positive); realizing into a buffer that breaks
    /// the promise fails. Returns this OutputImageParam.
    fn set_host_alignment(slf: PyRef<'_, Self>, bytes: i32) -> PyResult<PyRef<'_, Self>> {
        slf.get()?.param.set_host_alignment(bytes).py()?;
        Ok(slf)
    }
    /// `store_in(memory_type)`: declare which `hl.MemoryType` the buffer's
    /// memory lives in (on CPU targets every kind is host memory). Returns
    /// this OutputImageParam.
    fn store_in(
        slf: PyRef<'_, Self>,
        memory_type: crate::py_func::PyMemoryType,
    ) -> PyResult<PyRef<'_, Self>> {
        slf.get()?.param.store_in(memory_type.to_core()).py()?;
        Ok(slf)
    }
    /// `parameter()`: the `hl.Parameter` behind this output buffer.
    fn parameter(&self) -> PyResult<crate::py_parameter::PyParameter> {
        Ok(crate::py_parameter::PyParameter::new(self.get()?.param.clone()))
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(PyAttributeError::new_err(format!(
            "'halide.OutputImageParam' object has no attribute '{name}'"
        )))
    }
    fn __repr__(&self) -> String {
        match &self.inner {
            None => "<halide.OutputImageParam OutputImageParam()>".to_string(),
            Some(p) => format!(
                "<halide.OutputImageParam '{}', dims: {}, type: {}>",
                p.name(),
                p.dimensions,
                p.ty()
            ),
        }
    }
}

#[pymethods]
impl PyDimension {
    /// `min()`: the min coordinate of this dimension, as an Expr.
    fn min(&self) -> PyExpr {
        PyExpr::new(self.inner.min())
    }
    /// `max()`: the max coordinate of this dimension (min + extent - 1), as
    /// an Expr.
    fn max(&self) -> PyExpr {
        PyExpr::new(self.inner.max())
    }
    /// `extent()`: the number of elements along this dimension, as an Expr.
    fn extent(&self) -> PyExpr {
        PyExpr::new(self.inner.extent())
    }
    /// `stride()`: the distance in memory, in elements, between neighbours
    /// along this dimension, as an Expr.
    fn stride(&self) -> PyExpr {
        PyExpr::new(self.inner.stride())
    }
    // Constraints (`hl.Expr()` removes one).
    /// `set_min(min)`: require this dimension's min coordinate to equal
    /// `min` (an integer Expr, checked when the pipeline runs); `hl.Expr()`
    /// removes the constraint. Returns this Dimension.
    fn set_min<'py>(slf: &Bound<'py, Self>, min: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_min")?;
        d.set_min(py_to_opt_expr(min)?).py()?;
        Ok(slf.clone())
    }
    /// `set_extent(extent)`: require this dimension's extent to equal
    /// `extent` (an integer Expr, checked when the pipeline runs);
    /// `hl.Expr()` removes the constraint. Returns this Dimension.
    fn set_extent<'py>(slf: &Bound<'py, Self>, extent: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_extent")?;
        d.set_extent(py_to_opt_expr(extent)?).py()?;
        Ok(slf.clone())
    }
    /// `set_stride(stride)`: require this dimension's stride to equal
    /// `stride` (an integer Expr, checked when the pipeline runs);
    /// `hl.Expr()` removes the constraint (dimension 0's stride is
    /// constrained to 1 by default). Returns this Dimension.
    fn set_stride<'py>(slf: &Bound<'py, Self>, stride: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_stride")?;
        d.set_stride(py_to_opt_expr(stride)?).py()?;
        Ok(slf.clone())
    }
    /// `set_bounds(min, extent)`: both `set_min(min)` and
    /// `set_extent(extent)`. Returns this Dimension.
    fn set_bounds<'py>(
        slf: &Bound<'py, Self>,
        min: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_bounds")?;
        d.set_bounds(py_to_opt_expr(min)?, py_to_opt_expr(extent)?).py()?;
        Ok(slf.clone())
    }
    /// `set_estimate(min, extent)`: estimated min and extent of this
    /// dimension, for autoschedulers (and, for an output buffer, the
    /// metadata of compiled code); `hl.Expr()` clears one. Returns this
    /// Dimension.
    fn set_estimate<'py>(
        slf: &Bound<'py, Self>,
        min: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        // Estimates only annotate (an output buffer's go to its metadata).
        let d = &slf.get().inner;
        d.set_estimate(py_to_opt_expr(min)?, py_to_opt_expr(extent)?).py()?;
        Ok(slf.clone())
    }
    /// `dim(i)`: dimension `i` of the same buffer, so that constraints
    /// chain: `im.dim(0).set_min(0).dim(1).set_min(0)`.
    fn dim(&self, i: i64) -> PyResult<PyDimension> {
        Ok(PyDimension {
            inner: self.inner.dim(i).py()?,
            input: self.input,
        })
    }
}

impl PyDimension {
    /// The dimension a `set_*` constrains: an input's, or an output's
    /// (a Func's output buffers are the same Parameters every time, and
    /// lowering checks and uses their constraints).
    fn constrainable(&self, _method: &str) -> PyResult<&Dimension> {
        Ok(&self.inner)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOutputImageParam>()?;
    m.add_class::<PyDimension>()?;
    Ok(())
}
