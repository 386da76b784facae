//! `hl.BoundaryConditions` (a submodule, as in Halide's bindings),
//! `hl.Range` and `hl.lambda_func`: argument conversion for
//! `ferrohalide_core::lang::{boundary_conditions, lambda}`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::rdom::range_bound;
use ferrohalide_core::lang::boundary_conditions::{
    boundary_condition, Bound as Region, Kind, Source,
};

use crate::errors::IntoPy;
use crate::py_buffer::PyBuffer;
use crate::py_expr::{py_to_expr, py_to_opt_expr, PyExpr};
use crate::py_func::PyFunc;
use crate::py_param::PyImageParam;
use crate::py_var::PyVar;

/// A region given as a list of `hl.Range`s or `(min, extent)` pairs (either
/// side may be None or the undefined `hl.Expr()`): estimates, bounds.
pub fn region_from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<(Option<Expr>, Option<Expr>)>> {
    let bad = || {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "{what}(): expected a list of (min, extent) pairs or hl.Range objects"
        ))
    };
    let mut out = vec![];
    for item in obj.try_iter().map_err(|_| bad())? {
        let item = item?;
        if let Ok(r) = item.extract::<PyRef<PyRange>>() {
            out.push((r.min.clone(), r.extent.clone()));
            continue;
        }
        let pair: Vec<Bound<'_, PyAny>> = item.try_iter().map_err(|_| bad())?.collect::<PyResult<_>>()?;
        if pair.len() != 2 {
            return Err(bad());
        }
        let side = |o: &Bound<'_, PyAny>| -> PyResult<Option<Expr>> {
            if o.is_none() {
                Ok(None)
            } else {
                py_to_opt_expr(o)
            }
        };
        out.push((side(&pair[0])?, side(&pair[1])?));
    }
    Ok(out)
}

/// `Range(min=None, extent=None)`: one dimension of a region, from `min` with
/// `extent` elements, e.g. for estimates and boundary conditions. Each side
/// must be an int32 value (a float with a whole value is accepted); a side
/// left out, None or the undefined `Expr()` stays undefined.
#[pyclass(name = "Range", module = "ferrohalide", frozen)]
pub struct PyRange {
    pub min: Option<Expr>,
    pub extent: Option<Expr>,
}

#[pymethods]
impl PyRange {
    #[new]
    #[pyo3(signature = (min=None, extent=None))]
    fn py_new(min: Option<&Bound<'_, PyAny>>, extent: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let conv = |o: Option<&Bound<'_, PyAny>>, what: &str| -> PyResult<Option<Expr>> {
            match o.map(py_to_opt_expr).transpose()?.flatten() {
                Some(e) => Ok(Some(range_bound(&e, what).py()?)),
                None => Ok(None),
            }
        };
        Ok(PyRange {
            min: conv(min, "min")?,
            extent: conv(extent, "extent")?,
        })
    }
    /// `min`: the first coordinate of the range (an undefined `Expr` if not given).
    #[getter]
    fn min(&self) -> PyExpr {
        PyExpr::from_opt(self.min.clone())
    }
    /// `extent`: the number of coordinates in the range (an undefined `Expr` if not given).
    #[getter]
    fn extent(&self) -> PyExpr {
        PyExpr::from_opt(self.extent.clone())
    }
    fn __repr__(&self) -> String {
        let show = |e: &Option<Expr>| {
            e.as_ref()
                .map(ferrohalide_core::lang::print::expr_to_string)
                .unwrap_or_else(|| "undefined".into())
        };
        format!(
            "<halide.Range [{}, {}]>",
            show(&self.min),
            show(&self.extent)
        )
    }
}

fn incompatible(kind: Kind) -> PyErr {
    PyTypeError::new_err(format!(
        "{}(): incompatible function arguments: expected a Func, Buffer or ImageParam and a list of hl.Range or (min, extent) tuples",
        kind.name()
    ))
}

/// The bounds list: `hl.Range`s or `(min, extent)` tuples; both sides
/// undefined leaves a dimension unbounded, one side undefined is invalid.
fn bounds_from_py(kind: Kind, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Region>> {
    let items = crate::py_expr::sequence_items(obj).ok_or_else(|| incompatible(kind))?;
    let mut out = vec![];
    for item in items {
        let (min, extent) = if let Ok(r) = item.extract::<PyRef<PyRange>>() {
            (r.min.clone(), r.extent.clone())
        } else if let Ok(t) = item.cast::<PyTuple>() {
            if t.len() != 2 {
                return Err(incompatible(kind));
            }
            // Halide's bindings convert a tuple to a Range, which must hold
            // int32s: a side that doesn't fit makes the call's arguments
            // incompatible.
            let side = |o: Bound<'_, PyAny>| -> PyResult<Option<Expr>> {
                let e = py_to_opt_expr(&o).map_err(|_| incompatible(kind))?;
                e.map(|e| range_bound(&e, "bound").map_err(|_| incompatible(kind)))
                    .transpose()
            };
            (side(t.get_item(0)?)?, side(t.get_item(1)?)?)
        } else {
            return Err(incompatible(kind));
        };
        out.push(match (min, extent) {
            (None, None) => None,
            (Some(m), Some(e)) => Some((m, e)),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "Invalid arguments to {}",
                    kind.name()
                )))
            }
        });
    }
    Ok(out)
}

fn source_from_py(kind: Kind, obj: &Bound<'_, PyAny>, has_bounds: bool) -> PyResult<Source> {
    if let Ok(f) = obj.extract::<PyRef<PyFunc>>() {
        if !has_bounds {
            return Err(incompatible(kind));
        }
        return Ok(Source::Func(f.inner.clone()));
    }
    if let Ok(b) = obj.extract::<PyRef<PyBuffer>>() {
        if !b.defined {
            return Err(PyValueError::new_err(format!(
                "Invalid arguments to {}",
                kind.name()
            )));
        }
        return Ok(Source::Buffer(b.inner.clone()));
    }
    if let Ok(im) = obj.extract::<PyRef<PyImageParam>>() {
        return Ok(Source::ImageParam(im.get_inner()?.clone()));
    }
    if has_bounds {
        Err(PyValueError::new_err(format!(
            "Invalid arguments to {}",
            kind.name()
        )))
    } else {
        Err(incompatible(kind))
    }
}

fn apply(
    kind: Kind,
    source: &Bound<'_, PyAny>,
    bounds: Option<&Bound<'_, PyAny>>,
    exterior: Option<Expr>,
) -> PyResult<PyFunc> {
    let bounds = bounds.filter(|b| !b.is_none());
    // The bounds are converted first: a malformed list is a TypeError
    // whatever the source.
    let regions = match bounds {
        Some(b) => Some(bounds_from_py(kind, b)?),
        None => None,
    };
    let src = source_from_py(kind, source, regions.is_some())?;
    Ok(PyFunc {
        inner: boundary_condition(kind, src, regions, exterior).py()?,
    })
}

/// `repeat_edge(f, bounds=None)`: a Func equal to `f` inside `bounds` and, outside
/// them, to the value at the nearest edge (the coordinates are clamped into
/// the bounds). `f` is a Func, Buffer or ImageParam; `bounds` is a list of
/// `Range`s or `(min, extent)` pairs, one per dimension (a pair of undefined
/// sides leaves that dimension unbounded), and defaults to the shape of a
/// Buffer or ImageParam (it is required for a Func).
// The source is named `f`, Halide's keyword (`repeat_edge(f=img)`).
#[pyfunction]
#[pyo3(signature = (f, bounds=None))]
fn repeat_edge(f: &Bound<'_, PyAny>, bounds: Option<&Bound<'_, PyAny>>) -> PyResult<PyFunc> {
    apply(Kind::RepeatEdge, f, bounds, None)
}

/// `repeat_image(f, bounds=None)`: a Func that tiles the region `bounds` of
/// `f` over all coordinates (the coordinates wrap around). `f` and `bounds`
/// as in `repeat_edge`.
#[pyfunction]
#[pyo3(signature = (f, bounds=None))]
fn repeat_image(f: &Bound<'_, PyAny>, bounds: Option<&Bound<'_, PyAny>>) -> PyResult<PyFunc> {
    apply(Kind::RepeatImage, f, bounds, None)
}

/// `mirror_image(f, bounds=None)`: a Func that reflects the region `bounds`
/// of `f` at its edges, repeating the edge value (for an extent of 3:
/// `... 1 0 | 0 1 2 | 2 1 ...`). `f` and `bounds` as in `repeat_edge`.
#[pyfunction]
#[pyo3(signature = (f, bounds=None))]
fn mirror_image(f: &Bound<'_, PyAny>, bounds: Option<&Bound<'_, PyAny>>) -> PyResult<PyFunc> {
    apply(Kind::MirrorImage, f, bounds, None)
}

/// `mirror_interior(f, bounds=None)`: a Func that reflects the region
/// `bounds` of `f` at its edges without repeating the edge value (for an
/// extent of 3: `... 2 1 | 0 1 2 | 1 0 ...`). `f` and `bounds` as in
/// `repeat_edge`.
#[pyfunction]
#[pyo3(signature = (f, bounds=None))]
fn mirror_interior(
    f: &Bound<'_, PyAny>,
    bounds: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyFunc> {
    apply(Kind::MirrorInterior, f, bounds, None)
}

/// `constant_exterior(f, exterior, bounds=None)`: a Func equal to `f` inside
/// `bounds` and to the value `exterior` (an Expr or number) outside them. `f`
/// and `bounds` as in `repeat_edge`.
#[pyfunction]
#[pyo3(signature = (f, exterior, bounds=None))]
fn constant_exterior(
    f: &Bound<'_, PyAny>,
    exterior: &Bound<'_, PyAny>,
    bounds: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyFunc> {
    let kind = Kind::ConstantExterior;
    if exterior.is_instance_of::<PyTuple>() || exterior.is_instance_of::<PyList>() {
        return Err(incompatible(kind));
    }
    if exterior
        .extract::<PyRef<crate::py_tuple::PyHlTuple>>()
        .is_ok()
    {
        return Err(PyValueError::new_err(
            "Invalid arguments to constant_exterior",
        ));
    }
    let value = py_to_expr(exterior).map_err(|_| incompatible(kind))?;
    apply(kind, f, bounds, Some(value))
}

/// `lambda_func(v1, ..., vn, e)`: a new Func of the Vars `v1` ... `vn` (in that
/// order) whose value is the Expr `e`; `lambda_func(e)` is a zero-dimensional
/// Func. Every Var `e` uses must be listed.
#[pyfunction]
#[pyo3(signature = (*args))]
fn lambda_func(args: &Bound<'_, PyTuple>) -> PyResult<PyFunc> {
    let n = args.len();
    if n == 0 {
        return Err(PyValueError::new_err("Not enough arguments"));
    }
    let mut vars = vec![];
    for i in 0..n - 1 {
        let v = args.get_item(i)?;
        let v = v.extract::<PyRef<PyVar>>().map_err(|_| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "lambda_func(): every argument but the last must be a Var",
            )
        })?;
        vars.push(v.inner.clone());
    }
    let e = py_to_expr(&args.get_item(n - 1)?)?;
    Ok(PyFunc {
        inner: ferrohalide_core::lang::lambda::lambda_func(&vars, e).py()?,
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let bc = PyModule::new(py, "BoundaryConditions")?;
    bc.add_function(wrap_pyfunction!(constant_exterior, &bc)?)?;
    bc.add_function(wrap_pyfunction!(repeat_edge, &bc)?)?;
    bc.add_function(wrap_pyfunction!(repeat_image, &bc)?)?;
    bc.add_function(wrap_pyfunction!(mirror_image, &bc)?)?;
    bc.add_function(wrap_pyfunction!(mirror_interior, &bc)?)?;
    m.add_submodule(&bc)?;
    m.add_class::<PyRange>()?;
    m.add_function(wrap_pyfunction!(lambda_func, m)?)?;
    Ok(())
}
