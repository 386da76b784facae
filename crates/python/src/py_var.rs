//! `hl.Var`.

use pyo3::prelude::*;

use ferrohalide_core::lang::var::Var;

#[pyclass(name = "Var", module = "ferrohalide", frozen)]
#[derive(Clone)]
pub struct PyVar {
    pub inner: Var,
}

crate::expr_like_methods!(PyVar {
    #[new]
    #[pyo3(signature = (name=None))]
    fn py_new(name: Option<String>) -> Self {
        PyVar { inner: name.map(Var::new).unwrap_or_else(Var::fresh) }
    }
    fn name(&self) -> String {
        self.inner.name().to_string()
    }
    fn same_as(&self, other: &PyVar) -> bool {
        self.inner == other.inner
    }
    fn is_implicit(&self) -> bool {
        self.inner.is_implicit()
    }
    fn implicit_index(&self) -> i64 {
        if self.inner.is_implicit() {
            self.inner.name()[1..].parse().unwrap_or(-1)
        } else {
            -1
        }
    }
    fn is_placeholder(&self) -> bool {
        self.inner.is_placeholder()
    }
    #[staticmethod]
    fn implicit(n: usize) -> PyVar {
        PyVar { inner: Var::implicit(n) }
    }
    #[staticmethod]
    fn outermost() -> PyVar {
        PyVar { inner: Var::outermost() }
    }
    fn __repr__(&self) -> String {
        format!("<halide.Var '{}'>", self.inner.name())
    }
    fn __str__(&self) -> String {
        self.inner.name().to_string()
    }
});

/// A Var argument of a scheduling call (Var, or a string name).
pub fn var_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(v) = obj.extract::<PyRef<PyVar>>() {
        return Ok(v.inner.name().to_string());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "expected a halide.Var, got {}",
        obj.repr().map(|r| r.to_string()).unwrap_or_default()
    )))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyVar>()?;
    m.add(
        "_",
        PyVar {
            inner: Var::new("_"),
        },
    )?;
    for i in 0..10 {
        m.add(
            format!("_{i}").as_str(),
            PyVar {
                inner: Var::implicit(i),
            },
        )?;
    }
    Ok(())
}
