//! `hl.Tuple`, and the Python forms that stand for a Tuple: a Python tuple
//! of Exprs, a list of Exprs, or a call to a Func (`f[x]`). Used by
//! `Func.__setitem__`, `hl.select` and `hl.mux`, with the conversions
//! Halide's bindings allow in each place.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::tuple::{self as core_tuple, Tuple, TupleCondition};

use crate::errors::IntoPy;
use crate::py_expr::{py_to_expr, PyExpr};
use crate::py_func::PyFuncRef;

/// `Tuple(values)`: several Exprs taken together, the values of a Func that
/// computes more than one value per point (`f[x] = hl.Tuple((a, b))`), and
/// what `hl.select` and `hl.mux` choose between. Built from a Python tuple or
/// a list of Exprs (or numbers), or from a call to a Func (`Tuple(f[x])`, one
/// element per value of `f`).
#[pyclass(name = "Tuple", module = "ferrohalide", frozen)]
#[derive(Clone)]
pub struct PyHlTuple {
    pub inner: Tuple,
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// What Halide's bindings say when a value can't be used as an Expr where
/// the conversion is attempted implicitly (select's arguments, elements
/// of a Python tuple given to `hl.Tuple`).
fn cast_error(obj: &Bound<'_, PyAny>) -> PyErr {
    PyRuntimeError::new_err(format!(
        "Unable to cast Python instance of type <class '{}'> to halide.Expr",
        type_name(obj)
    ))
}

fn exprs_of<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    err: impl Fn(&Bound<'py, PyAny>) -> PyErr,
) -> PyResult<Vec<Expr>> {
    items
        .map(|i| {
            py_to_expr(&i).map_err(|e| if own_error(&i, &e) { e } else { err(&i) })
        })
        .collect()
}

/// Whether converting `item` to an Expr failed because the item is an Expr
/// that is itself wrong (undefined, nested too deep): that error stands.
/// Anything else (a string, a call to a Tuple-valued Func) is a value of
/// the wrong kind, for the caller's "incompatible arguments" TypeError.
fn own_error(item: &Bound<'_, PyAny>, e: &PyErr) -> bool {
    item.is_instance_of::<PyExpr>() && !e.is_instance_of::<PyTypeError>(item.py())
}

/// The values of a Python list when only Expr objects are accepted
/// (Halide's implicit list-to-Tuple conversion does not convert Vars or
/// numbers); `None` if some element is not an Expr.
fn strict_exprs(l: &Bound<'_, PyList>) -> Option<Vec<Expr>> {
    l.iter()
        .map(|i| i.extract::<PyRef<PyExpr>>().ok().map(|e| e.inner.clone()))
        .collect()
}

/// `obj` as a Tuple where Halide converts implicitly: an `hl.Tuple`, a
/// Python tuple, a call to a Func, or a list of Exprs. `None` if it is
/// none of these or its elements don't convert.
pub fn implicit_tuple(obj: &Bound<'_, PyAny>) -> Option<Tuple> {
    if let Ok(t) = obj.extract::<PyRef<PyHlTuple>>() {
        return Some(t.inner.clone());
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let v = exprs_of(t.iter(), |_| PyTypeError::new_err("")).ok()?;
        return Tuple::new(v).ok();
    }
    if let Ok(r) = obj.extract::<PyRef<PyFuncRef>>() {
        return Tuple::from_func_ref(&r.inner).ok();
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return Tuple::new(strict_exprs(l)?).ok();
    }
    let items = sequence_items(obj)?;
    Tuple::new(exprs_of(items.into_iter(), |_| PyTypeError::new_err("")).ok()?).ok()
}

/// The items of any other Python sequence (a class with `__len__` and
/// `__getitem__`, as lesson 13's `Complex`), which Halide's bindings take
/// as a Tuple; not strings, bytes or Buffers.
fn sequence_items<'py>(obj: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    let ours = obj
        .get_type()
        .module()
        .is_ok_and(|m| m.to_string_lossy().starts_with("ferrohalide"));
    if ours
        || obj.is_instance_of::<pyo3::types::PyString>()
        || obj.is_instance_of::<pyo3::types::PyBytes>()
        || obj.is_instance_of::<pyo3::types::PyDict>()
        || !obj.hasattr("__getitem__").unwrap_or(false)
    {
        return None;
    }
    let n = obj.len().ok()?;
    (0..n).map(|i| obj.get_item(i).ok()).collect()
}

/// The values on the right of `f[args] = value`: several for an
/// `hl.Tuple`, a Python tuple, a list of Exprs, or a call to a
/// Tuple-valued Func; `None` if `value` is not one of these (a single
/// value, converted by the caller).
pub fn definition_values(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<Expr>>> {
    let incompatible = || {
        PyTypeError::new_err(format!(
            "__setitem__(): incompatible function arguments: a Func can't be defined with this {}",
            type_name(value)
        ))
    };
    if let Ok(t) = value.extract::<PyRef<PyHlTuple>>() {
        return Ok(Some(t.inner.values().to_vec()));
    }
    if let Ok(t) = value.cast::<PyTuple>() {
        if t.is_empty() {
            return Err(incompatible());
        }
        return exprs_of(t.iter(), |_| incompatible()).map(Some);
    }
    if let Ok(l) = value.cast::<PyList>() {
        return match strict_exprs(l) {
            Some(v) if !v.is_empty() => Ok(Some(v)),
            _ => Err(incompatible()),
        };
    }
    if let Ok(r) = value.extract::<PyRef<PyFuncRef>>() {
        let n = r.inner.func.function.outputs();
        if r.inner.func.defined() && n > 1 {
            return Ok(Some(Tuple::from_func_ref(&r.inner).py()?.into_values()));
        }
        return Ok(None);
    }
    match sequence_items(value) {
        Some(items) if !items.is_empty() => exprs_of(items.into_iter(), |_| incompatible()).map(Some),
        Some(_) => Err(incompatible()),
        None => Ok(None),
    }
}

fn to_py(py: Python<'_>, t: Tuple) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyHlTuple { inner: t })?.into_any())
}

/// A Tuple as a Python tuple of Exprs (what select on Tuples returns).
fn to_python_tuple(py: Python<'_>, t: Tuple) -> PyResult<Py<PyAny>> {
    let items: Vec<PyExpr> = t.into_values().into_iter().map(PyExpr::new).collect();
    Ok(PyTuple::new(py, items)?.into_any().unbind())
}

/// `hl.select(c0, v0, c1, v1, ..., default)` when the values are Tuples:
/// the conditions are Exprs or Tuples (one per element). `Ok(None)` when
/// the arguments don't all convert, so the caller tries the Expr form.
/// Errors of the element selects also fall back, as in Halide's
/// bindings; the Expr form then fails on the Tuple arguments.
pub fn select_tuples(args: &Bound<'_, PyTuple>) -> PyResult<Option<Py<PyAny>>> {
    let n = args.len();
    let Some(default) = implicit_tuple(&args.get_item(n - 1)?) else {
        return Ok(None);
    };
    let mut pairs = Vec::with_capacity(n / 2);
    for k in (0..n - 1).step_by(2) {
        let cond = args.get_item(k)?;
        let Some(value) = implicit_tuple(&args.get_item(k + 1)?) else {
            return Ok(None);
        };
        let cond = match implicit_tuple(&cond) {
            Some(t) => TupleCondition::PerElement(t),
            None => match py_to_expr(&cond) {
                Ok(e) => TupleCondition::Shared(e),
                Err(_) => return Ok(None),
            },
        };
        pairs.push((cond, value));
    }
    // Checked before any element is built, so reported as Halide's bindings do.
    let per_element = pairs
        .iter()
        .filter(|(c, _)| matches!(c, TupleCondition::PerElement(_)))
        .count();
    let sizes_differ = pairs.iter().any(|(c, v)| match c {
        TupleCondition::PerElement(t) => t.size() != v.size() || v.size() != default.size(),
        TupleCondition::Shared(_) => false,
    });
    if (per_element != 0 && per_element != pairs.len()) || sizes_differ {
        return core_tuple::select_tuple_chain(&pairs, &default)
            .py()
            .map(|_| None);
    }
    match core_tuple::select_tuple_chain(&pairs, &default) {
        Ok(t) => Ok(Some(to_python_tuple(args.py(), t)?)),
        Err(_) => Ok(None),
    }
}

/// The Expr form of select after the Tuple form did not apply: every
/// argument must convert to an Expr.
pub fn select_args_as_exprs(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Expr>> {
    exprs_of(args.iter(), |a| {
        if a.is_none() {
            PyTypeError::new_err("select(): incompatible function arguments")
        } else {
            cast_error(a)
        }
    })
}

/// `hl.mux(id, values)` when `values` is a Tuple (an Expr, the chosen
/// element) or a sequence of Tuples (a Tuple); `Ok(None)` for a sequence
/// of Exprs, which the caller handles.
pub fn mux_tuples(
    py: Python<'_>,
    id: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
) -> PyResult<Option<Py<PyAny>>> {
    if let Ok(t) = values.extract::<PyRef<PyHlTuple>>() {
        let e =
            ferrohalide_core::lang::math::mux(py_to_expr(id)?, t.inner.values().to_vec()).py()?;
        return Ok(Some(Py::new(py, PyExpr::new(e))?.into_any()));
    }
    let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = values.cast::<PyList>() {
        l.iter().collect()
    } else if let Ok(t) = values.cast::<PyTuple>() {
        t.iter().collect()
    } else {
        // Any other sized sequence (a Func call included), read by index as
        // Halide's bindings do. Not by iteration: a Func can be indexed
        // with any int, so iterating one would never end.
        let n = values.len()?;
        (0..n)
            .map(|i| values.get_item(i))
            .collect::<PyResult<_>>()?
    };
    let mut all_exprs = true;
    for i in &items {
        match py_to_expr(i) {
            Ok(_) => {}
            Err(e) if own_error(i, &e) => return Err(e),
            Err(_) => all_exprs = false,
        }
    }
    if all_exprs {
        return Ok(None);
    }
    let tuples: Option<Vec<Tuple>> = items.iter().map(implicit_tuple).collect();
    let Some(tuples) = tuples else {
        return Err(PyTypeError::new_err(
            "mux(): incompatible function arguments: expected a list of Exprs, a Tuple or a list of Tuples",
        ));
    };
    let t = core_tuple::mux_tuples(&py_to_expr(id)?, &tuples).py()?;
    Ok(Some(to_py(py, t)?))
}

#[pymethods]
impl PyHlTuple {
    // `Tuple(tuple)`, `Tuple(f[x])`, `Tuple([exprs])`.
    #[new]
    fn py_new(arg: &Bound<'_, PyAny>) -> PyResult<Self> {
        let incompatible = || {
            PyTypeError::new_err(format!(
                "__init__(): incompatible constructor arguments: Tuple takes a tuple, a Func call or a list of Exprs, not {}",
                type_name(arg)
            ))
        };
        let values = if let Ok(t) = arg.cast::<PyTuple>() {
            exprs_of(t.iter(), cast_error)?
        } else if let Ok(r) = arg.extract::<PyRef<PyFuncRef>>() {
            return Ok(PyHlTuple {
                inner: Tuple::from_func_ref(&r.inner).py()?,
            });
        } else if let Ok(l) = arg.cast::<PyList>() {
            exprs_of(l.iter(), |_| incompatible())?
        } else {
            return Err(incompatible());
        };
        Ok(PyHlTuple {
            inner: Tuple::new(values).py()?,
        })
    }

    fn __repr__(&self) -> String {
        format!("<halide.Tuple of size {}>", self.inner.size())
    }

    fn __str__(&self) -> String {
        self.__repr__()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHlTuple>()?;
    Ok(())
}
