//! `hl.propagate_adjoints` and `hl.Derivative`: argument conversion for
//! `ferrohalide_core::lang::derivative`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::derivative::{
    propagate_adjoints as propagate, propagate_adjoints_from_buffer, propagate_adjoints_of_one, Derivative,
};
use ferrohalide_core::lang::func::Func;

use crate::errors::IntoPy;
use crate::py_boundary::region_from_py;
use crate::py_buffer::PyBuffer;
use crate::py_func::PyFunc;
use crate::py_param::{PyImageParam, PyParam};

/// `Derivative`: the adjoint (gradient) Funcs that `propagate_adjoints`
/// computed, looked up by what they are the gradient of: `d[f]` (the pure
/// definition of the Func `f`), `d[f, i]` (its update `i`), `d[buffer]`,
/// `d[param]`, `d[image_param]`. A Func, image or parameter the output does
/// not depend on differentiably gives an undefined Func, as in Halide.
#[pyclass(name = "Derivative", module = "ferrohalide", frozen)]
pub struct PyDerivative {
    inner: Derivative,
}

#[pymethods]
impl PyDerivative {
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyFunc> {
        let (name, update) = if let Ok(f) = key.extract::<PyRef<PyFunc>>() {
            (f.inner.name(), -1)
        } else if let Ok(b) = key.extract::<PyRef<PyBuffer>>() {
            (b.inner.name(), -1)
        } else if let Ok(p) = key.extract::<PyRef<PyParam>>() {
            (p.inner.name(), -1)
        } else if let Ok(im) = key.extract::<PyRef<PyImageParam>>() {
            (im.get_inner()?.name(), -1)
        } else if let Ok(t) = key.cast::<PyTuple>() {
            let pair = (t.len() == 2)
                .then(|| Some((t.get_item(0).ok()?.extract::<PyRef<PyFunc>>().ok()?.inner.name(), t.get_item(1).ok()?.extract::<i32>().ok()?)))
                .flatten();
            pair.ok_or_else(incompatible)?
        } else {
            return Err(incompatible());
        };
        Ok(PyFunc {
            inner: self.inner.get(&name, update).unwrap_or_else(|| Func::new(None)),
        })
    }
}

fn incompatible() -> PyErr {
    PyTypeError::new_err(
        "__getitem__(): incompatible function arguments. The following argument types are supported:\n    1. (self, func: Func) -> Func\n    2. (self, buffer: Buffer) -> Func\n    3. (self, param: Param) -> Func\n    4. (self, arg0: tuple[Func, int]) -> Func\n    5. (self, image_param: ImageParam) -> Func",
    )
}

/// `propagate_adjoints(output)`, `propagate_adjoints(output, adjoint_buffer)`,
/// `propagate_adjoints(output, adjoint_func, bounds)`: reverse-mode automatic
/// differentiation of the Func `output`, returning a `Derivative` holding the
/// gradient of every Func, Buffer and Param it depends on. With `output`
/// alone, `output` is taken as a scalar loss: its adjoint is 1, at the single
/// point 0. Otherwise the adjoint of `output` is the float32 Buffer
/// `adjoint_buffer` (zero outside it), or the Func `adjoint_func` over
/// `bounds`, a list of `Range`s or `(min, extent)` pairs, one per dimension.
#[pyfunction]
#[pyo3(signature = (*args))]
fn propagate_adjoints(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<PyDerivative> {
    let usage = || {
        PyTypeError::new_err(
            "propagate_adjoints(): incompatible function arguments. The following argument types are supported:\n    1. (arg0: Func, arg1: Func, arg2: list[Range]) -> Derivative\n    2. (arg0: Func, arg1: Buffer) -> Derivative\n    3. (arg0: Func) -> Derivative",
        )
    };
    let output = args
        .get_item(0)
        .ok()
        .and_then(|o| o.extract::<PyRef<PyFunc>>().ok())
        .ok_or_else(usage)?
        .inner
        .clone();
    let inner = match args.len() {
        1 => crate::gil::detached(py, || propagate_adjoints_of_one(&output)).py()?,
        2 => {
            let b = args.get_item(1)?;
            let b = b.extract::<PyRef<PyBuffer>>().map_err(|_| usage())?;
            let buffer = b.inner.clone();
            crate::gil::detached(py, || propagate_adjoints_from_buffer(&output, &buffer)).py()?
        }
        3 => {
            let a = args.get_item(1)?;
            let adjoint = a.extract::<PyRef<PyFunc>>().map_err(|_| usage())?.inner.clone();
            let region = region_from_py(&args.get_item(2)?, "propagate_adjoints")?;
            let bounds: Vec<(Expr, Expr)> = region
                .into_iter()
                .map(|(min, extent)| min.zip(extent))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    PyTypeError::new_err("propagate_adjoints(): every (min, extent) of the region must be defined")
                })?;
            crate::gil::detached(py, || propagate(&output, &adjoint, &bounds)).py()?
        }
        _ => return Err(usage()),
    };
    Ok(PyDerivative { inner })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDerivative>()?;
    m.add_function(wrap_pyfunction!(propagate_adjoints, m)?)?;
    Ok(())
}
