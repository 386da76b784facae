//! `hl.Var`.

use pyo3::prelude::*;

use ferrohalide_core::lang::var::Var;

/// `hl.Var`: a named dimension, used as an argument in Func definitions
/// (`f[x, y] = ...`) and as a loop in schedules; it is also an Int(32) Expr.
/// `Var()` gets a new unique name, `Var(name)` uses the given one (Vars with
/// the same name are the same variable). `hl._` is the placeholder and
/// `hl._0` ... `hl._9` are implicit Vars.
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
    /// `name()`: the Var's name.
    fn name(&self) -> String {
        self.inner.name().to_string()
    }
    /// `same_as(other)`: True if `other` is the same variable (a Var with the
    /// same name).
    fn same_as(&self, other: &PyVar) -> bool {
        self.inner == other.inner
    }
    /// `is_implicit()`: True for an implicit Var `_0`, `_1`, ... (see
    /// `Var.implicit`).
    fn is_implicit(&self) -> bool {
        self.inner.is_implicit()
    }
    /// `implicit_index()`: `n` for the implicit Var `_n`, else -1.
    fn implicit_index(&self) -> i64 {
        if self.inner.is_implicit() {
            self.inner.name()[1..].parse().unwrap_or(-1)
        } else {
            -1
        }
    }
    /// `is_placeholder()`: True for the placeholder `hl._`, which in a call
    /// or definition stands for all the remaining dimensions (`g[x, _]`).
    fn is_placeholder(&self) -> bool {
        self.inner.is_placeholder()
    }
    /// `Var.implicit(n)`: the implicit Var `_n`, the name given to the `n`-th
    /// dimension that the placeholder `_` stands for.
    #[staticmethod]
    fn implicit(n: usize) -> PyVar {
        PyVar { inner: Var::implicit(n) }
    }
    /// `Var.outermost()`: the Var of the single-iteration loop that every
    /// stage has outside all its other loops; schedules can name it like
    /// any other loop (`hexagon()` uses it by default).
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

/// A Var argument of a scheduling call (only a Var is accepted).
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
