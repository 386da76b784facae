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

// Each entry's `///` docstring is passed through to its `#[pyfunction]`.
macro_rules! reductions {
    ($($(#[$meta:meta])* $fname:ident => $kind:expr, $tuple:expr);* $(;)?) => {
        $(
            $(#[$meta])*
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
    /// `sum(expr, name="sum")` or `sum(rdom, expr, name="sum")`: the sum of
    /// `expr` over every point of the RDom whose RVars `expr` uses (or of
    /// `rdom`, if given), computed by a hidden Func named `name`; Vars in
    /// `expr` stay free. The result is an Expr of `expr`'s type: there is no
    /// widening, so integer sums can overflow.
    sum => Reduction::Sum, false;
    /// `product(expr, name="product")` or `product(rdom, expr,
    /// name="product")`: the product of `expr` over every point of the RDom
    /// whose RVars `expr` uses (or of `rdom`, if given), computed by a hidden
    /// Func named `name`. The result is an Expr of `expr`'s type, with no
    /// widening.
    product => Reduction::Product, false;
    /// `maximum(expr, name="maximum")` or `maximum(rdom, expr,
    /// name="maximum")`: the largest value of `expr` over every point of the
    /// RDom whose RVars `expr` uses (or of `rdom`, if given), computed by a
    /// hidden Func named `name`; an Expr of `expr`'s type.
    maximum => Reduction::Maximum, false;
    /// `minimum(expr, name="minimum")` or `minimum(rdom, expr,
    /// name="minimum")`: the smallest value of `expr` over every point of the
    /// RDom whose RVars `expr` uses (or of `rdom`, if given), computed by a
    /// hidden Func named `name`; an Expr of `expr`'s type.
    minimum => Reduction::Minimum, false;
    /// `argmax(expr, name="argmax")` or `argmax(rdom, expr, name="argmax")`:
    /// where `expr` is largest over the RDom whose RVars it uses (or over
    /// `rdom`, if given). Returns a tuple of Exprs: the coordinates of that
    /// point (one Int(32) per RDom dimension; the first such point on ties),
    /// then the largest value.
    argmax => Reduction::ArgMax, true;
    /// `argmin(expr, name="argmin")` or `argmin(rdom, expr, name="argmin")`:
    /// where `expr` is smallest over the RDom whose RVars it uses (or over
    /// `rdom`, if given). Returns a tuple of Exprs: the coordinates of that
    /// point (one Int(32) per RDom dimension; the first such point on ties),
    /// then the smallest value.
    argmin => Reduction::ArgMin, true;
);
