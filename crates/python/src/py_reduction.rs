//! `hl.sum`, `hl.product`, `hl.maximum`, `hl.minimum`, `hl.argmax`,
//! `hl.argmin`: `(expr, name=...)` or `(rdom, expr, name=...)`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ferrohalide_core::lang::reduction::{inline_reduction, Reduction};

use crate::errors::IntoPy;
use crate::py_expr::{py_to_expr, PyExpr};
use crate::py_rdom::PyRDom;

/// Parse the overloads and run the reduction.
fn reduce(
    kind: Reduction,
    args: &Bound<'_, PyTuple>,
    name: Option<String>,
) -> PyResult<Vec<PyExpr>> {
    let what = kind.name();
    let bad = || {
        PyTypeError::new_err(format!(
            "{what}(): incompatible function arguments. The following argument types are supported:\n    1. (expr: halide.Expr, name: str = '{what}') -> halide.Expr\n    2. (rdom: halide.RDom, expr: halide.Expr, name: str = '{what}') -> halide.Expr\n"
        ))
    };
    let mut items: Vec<Bound<'_, PyAny>> = args.iter().collect();
    let mut name = name;
    if name.is_none() && items.len() >= 2 {
        if let Ok(n) = items[items.len() - 1].extract::<String>() {
            name = Some(n);
            items.pop();
        }
    }
    let (rdom, e) = match items.as_slice() {
        [e] => (None, e),
        [r, e] => (
            Some(
                r.extract::<PyRef<PyRDom>>()
                    .map_err(|_| bad())?
                    .inner
                    .clone(),
            ),
            e,
        ),
        _ => return Err(bad()),
    };
    if e.cast::<PyTuple>().is_ok() {
        return Err(bad());
    }
    let e = py_to_expr(e).map_err(|_| bad())?;
    let name = name.unwrap_or_else(|| what.to_string());
    Ok(inline_reduction(kind, rdom, e, &name)
        .py()?
        .into_iter()
        .map(PyExpr::new)
        .collect())
}

macro_rules! reductions {
    ($($fname:ident => $kind:expr, $tuple:expr);* $(;)?) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (*args, name=None))]
            fn $fname<'py>(py: Python<'py>, args: &Bound<'py, PyTuple>, name: Option<String>) -> PyResult<Py<PyAny>> {
                let mut r = reduce($kind, args, name)?;
                if $tuple {
                    Ok(PyTuple::new(py, r)?.into_any().unbind())
                } else {
                    Ok(Py::new(py, r.remove(0))?.into_any())
                }
            }
        )*
        pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($fname, m)?)?; )*
            Ok(())
        }
    };
}

reductions!(
    sum => Reduction::Sum, false;
    product => Reduction::Product, false;
    maximum => Reduction::Maximum, false;
    minimum => Reduction::Minimum, false;
    argmax => Reduction::ArgMax, true;
    argmin => Reduction::ArgMin, true;
);
