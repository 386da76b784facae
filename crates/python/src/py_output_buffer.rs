//! `hl.OutputImageParam` (`Func.output_buffer()`) and `hl.Dimension`.

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;

use ferrohalide_core::lang::output_buffer::{Dimension, OutputImageParam};

use crate::errors::IntoPy;
use crate::py_expr::{py_to_opt_expr, PyExpr};
use crate::py_type::PyType;

/// Methods that constrain or annotate the buffer: not implemented yet.

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
    /// `OutputImageParam()`: undefined, as in Halide.
    #[new]
    fn py_new() -> Self {
        PyOutputImageParam { inner: None }
    }
    fn name(&self) -> PyResult<String> {
        Ok(self.get()?.name())
    }
    fn dimensions(&self) -> PyResult<usize> {
        Ok(self.get()?.dimensions)
    }
    fn r#type(&self) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.get()?.ty(),
        })
    }
    fn defined(&self) -> bool {
        self.inner.is_some()
    }
    fn dim(&self, i: i64) -> PyResult<PyDimension> {
        Ok(PyDimension {
            inner: self.get()?.dim(i).py()?,
            input: false,
        })
    }
    /// `set_estimates([(min, extent), ...])`: one estimate per dimension.
    fn set_estimates<'py>(slf: PyRef<'py, Self>, estimates: &Bound<'py, PyAny>) -> PyResult<PyRef<'py, Self>> {
        let region = crate::py_boundary::region_from_py(estimates, "set_estimates")?;
        slf.get()?.param.set_estimates(region).py()?;
        Ok(slf)
    }
    fn width(&self) -> PyResult<PyExpr> {
        expr(self.get()?.width())
    }
    fn height(&self) -> PyResult<PyExpr> {
        expr(self.get()?.height())
    }
    fn channels(&self) -> PyResult<PyExpr> {
        expr(self.get()?.channels())
    }
    fn left(&self) -> PyResult<PyExpr> {
        expr(self.get()?.left())
    }
    fn right(&self) -> PyResult<PyExpr> {
        expr(self.get()?.right())
    }
    fn top(&self) -> PyResult<PyExpr> {
        expr(self.get()?.top())
    }
    fn bottom(&self) -> PyResult<PyExpr> {
        expr(self.get()?.bottom())
    }
    fn host_alignment(&self) -> PyResult<i32> {
        Ok(self.get()?.param.host_alignment())
    }
    /// Promise a host alignment; realizing into a buffer that breaks it fails.
    fn set_host_alignment(slf: PyRef<'_, Self>, bytes: i32) -> PyResult<PyRef<'_, Self>> {
        slf.get()?.param.set_host_alignment(bytes).py()?;
        Ok(slf)
    }
    fn store_in(
        slf: PyRef<'_, Self>,
        memory_type: crate::py_func::PyMemoryType,
    ) -> PyResult<PyRef<'_, Self>> {
        slf.get()?.param.store_in(memory_type.to_core()).py()?;
        Ok(slf)
    }
    /// The Parameter object behind this output buffer.
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
    fn min(&self) -> PyExpr {
        PyExpr::new(self.inner.min())
    }
    fn max(&self) -> PyExpr {
        PyExpr::new(self.inner.max())
    }
    fn extent(&self) -> PyExpr {
        PyExpr::new(self.inner.extent())
    }
    fn stride(&self) -> PyExpr {
        PyExpr::new(self.inner.stride())
    }
    // Constraints (ImageParam dimensions only; `hl.Expr()` removes one).
    fn set_min<'py>(slf: &Bound<'py, Self>, min: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_min")?;
        d.set_min(py_to_opt_expr(min)?).py()?;
        Ok(slf.clone())
    }
    fn set_extent<'py>(slf: &Bound<'py, Self>, extent: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_extent")?;
        d.set_extent(py_to_opt_expr(extent)?).py()?;
        Ok(slf.clone())
    }
    fn set_stride<'py>(slf: &Bound<'py, Self>, stride: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_stride")?;
        d.set_stride(py_to_opt_expr(stride)?).py()?;
        Ok(slf.clone())
    }
    fn set_bounds<'py>(
        slf: &Bound<'py, Self>,
        min: &Bound<'py, PyAny>,
        extent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let d = slf.get().constrainable("set_bounds")?;
        d.set_bounds(py_to_opt_expr(min)?, py_to_opt_expr(extent)?).py()?;
        Ok(slf.clone())
    }
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
