//! `hl.RDom`, `hl.RVar` (regions may be given as `hl.Range`s, defined in
//! py_boundary.rs), and the conversion of Var / RVar
//! arguments of scheduling calls (`VarOrRVar`).

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyTuple};

use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::rdom::{undefined_bound_error, RVar, ReductionDomain};
use ferrohalide_core::lang::stage::VarOrRVar;
use ferrohalide_core::Error;

use crate::errors::{to_pyerr, IntoPy};
use crate::py_buffer::PyBuffer;
use crate::py_expr::{py_to_expr, PyExpr};
use crate::py_boundary::PyRange;
use crate::py_var::PyVar;

/// `hl.RDom`: a reduction domain, the box of points (optionally narrowed by
/// `where`) that an update definition or an inline reduction iterates over.
/// Built as `RDom(region, name="")` from a list of `hl.Range`s or
/// `(min, extent)` pairs, `RDom(buffer)` or `RDom(image_param)` (the whole
/// region of the image), or `RDom()` (no dimensions). Its dimensions are the
/// RVars `r.x`, `r.y`, `r.z`, `r.w` or `r[i]`; a one-dimensional RDom can be
/// used as an Expr (its RVar).
#[pyclass(name = "RDom", module = "ferrohalide", frozen)]
pub struct PyRDom {
    pub inner: ReductionDomain,
}

/// `hl.RVar`: one dimension of an RDom, an Int(32) Expr in definitions and
/// a loop in schedules; usually taken from an RDom (`r.x`, `r[i]`).
/// `RVar(rdom)` is the RVar of a one-dimensional RDom; `RVar()` and
/// `RVar(name)` make an RVar that belongs to no RDom, e.g. to name the new
/// loops when splitting an RVar.
#[pyclass(name = "RVar", module = "ferrohalide", frozen)]
#[derive(Clone)]
pub struct PyRVar {
    pub inner: RVar,
}

const RDOM_CONSTRUCTORS: &str = "__init__(): incompatible constructor arguments. The following argument types are supported:\n    1. halide.RDom()\n    2. halide.RDom(buffer: halide.Buffer)\n    3. halide.RDom(image_param: halide.OutputImageParam)\n    4. halide.RDom(region: collections.abc.Sequence[halide.Range], name: str = '')\n";

/// A bound of an RDom given in Python: an int or an integer Expr (floats
/// are a TypeError, as in the reference's bindings).
fn bound_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(RDOM_CONSTRUCTORS));
    }
    if obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return py_to_expr(obj);
    }
    let e = py_to_expr(obj).map_err(|_| PyTypeError::new_err(RDOM_CONSTRUCTORS))?;
    if e.ty().is_float() {
        return Err(PyTypeError::new_err(RDOM_CONSTRUCTORS));
    }
    Ok(e)
}

/// The (min, extent) pairs of a region: a sequence of `hl.Range`s and
/// 2-tuples.
fn region_from_py(region: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<Vec<(Expr, Expr)>> {
    let items = crate::py_expr::sequence_items(region).ok_or_else(|| PyTypeError::new_err(RDOM_CONSTRUCTORS))?;
    items
        .iter()
        .map(|it| {
            if let Ok(r) = it.extract::<PyRef<PyRange>>() {
                return match (&r.min, &r.extent) {
                    (Some(min), Some(extent)) => Ok((min.clone(), extent.clone())),
                    _ => Err(to_pyerr(undefined_bound_error(name))),
                };
            }
            match it.cast::<PyTuple>() {
                Ok(t) if t.len() == 2 => Ok((
                    bound_from_py(&t.get_item(0)?)?,
                    bound_from_py(&t.get_item(1)?)?,
                )),
                _ => Err(PyTypeError::new_err(RDOM_CONSTRUCTORS)),
            }
        })
        .collect()
}

impl PyRDom {
    fn rvar(&self, i: usize) -> PyResult<PyRVar> {
        self.inner
            .rvar(i)
            .map(|inner| PyRVar { inner })
            .ok_or_else(|| {
                PyKeyError::new_err(format!(
                    "RDom has {} dimension(s); there is no dimension {i}",
                    self.inner.dimensions()
                ))
            })
    }
}

crate::expr_like_methods!(PyRDom {
    /// `RDom()`, `RDom(buffer)`, `RDom(image_param)`, `RDom(region, name="")` (a list of
    /// `hl.Range`s or `(min, extent)` tuples).
    #[new]
    #[pyo3(signature = (arg0=None, arg1=None, region=None, name=None))]
    fn py_new(
        arg0: Option<&Bound<'_, PyAny>>,
        arg1: Option<&Bound<'_, PyAny>>,
        region: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let bad = || PyTypeError::new_err(RDOM_CONSTRUCTORS);
        let items: Vec<Bound<'_, PyAny>> = arg0.or(region).into_iter().cloned().collect();
        let name: Option<String> = match arg1.or(name) {
            None => None,
            Some(n) => Some(n.extract().map_err(|_| bad())?),
        };
        let inner = match items.as_slice() {
            [] => ReductionDomain::new(name.as_deref(), vec![]).py()?,
            [b] if b.extract::<PyRef<PyBuffer>>().is_ok() => {
                let b = b.extract::<PyRef<PyBuffer>>()?;
                let buf = b.inner.clone();
                let mut bounds = vec![];
                for d in 0..buf.dimensions() {
                    let dim = buf.dim(d).py()?;
                    bounds.push((Expr::i32(dim.min as i64), Expr::i32(dim.extent as i64)));
                }
                ReductionDomain::new(None, bounds).py()?
            }
            [p] if p.extract::<PyRef<crate::py_param::PyImageParam>>().is_ok() => {
                // The ImageParam's whole region, symbolically.
                let p = p.extract::<PyRef<crate::py_param::PyImageParam>>()?;
                let Some(ip) = p.inner.clone() else {
                    return Err(bad());
                };
                let mut bounds = vec![];
                for d in 0..ip.dimensions() {
                    let dim = ip.dim(d as i64).py()?;
                    bounds.push((dim.min(), dim.extent()));
                }
                ReductionDomain::new(Some(&ip.name()), bounds).py()?
            }
            [region] => ReductionDomain::new(name.as_deref(), region_from_py(region, name.as_deref())?).py()?,
            _ => return Err(PyTypeError::new_err(RDOM_CONSTRUCTORS)),
        };
        Ok(PyRDom { inner })
    }
    /// `x`: the RVar of dimension 0. Raises KeyError if the RDom has no
    /// dimensions.
    #[getter]
    fn x(&self) -> PyResult<PyRVar> {
        self.rvar(0)
    }
    /// `y`: the RVar of dimension 1. Raises KeyError if the RDom has fewer
    /// than two dimensions.
    #[getter]
    fn y(&self) -> PyResult<PyRVar> {
        self.rvar(1)
    }
    /// `z`: the RVar of dimension 2. Raises KeyError if the RDom has fewer
    /// than three dimensions.
    #[getter]
    fn z(&self) -> PyResult<PyRVar> {
        self.rvar(2)
    }
    /// `w`: the RVar of dimension 3. Raises KeyError if the RDom has fewer
    /// than four dimensions.
    #[getter]
    fn w(&self) -> PyResult<PyRVar> {
        self.rvar(3)
    }
    fn __getitem__(&self, i: i64) -> PyResult<PyRVar> {
        let i = usize::try_from(i).map_err(|_| PyKeyError::new_err(""))?;
        self.rvar(i)
    }
    fn __len__(&self) -> usize {
        self.inner.dimensions()
    }
    /// `dimensions()`: the number of dimensions (also `len(r)`).
    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
    /// `defined()`: always True in ferrohalide, even for `RDom()` (Halide
    /// says False for an RDom built with no arguments).
    fn defined(&self) -> bool {
        true
    }
    /// `same_as(other)`: True if `other` is the same reduction domain, not
    /// just one with equal bounds.
    fn same_as(&self, other: PyRef<'_, PyRDom>) -> bool {
        self.inner.same_as(&other.inner)
    }
    /// `where(predicate)`: restrict the domain, in place, to the points
    /// where `predicate` (a boolean Expr of this RDom's RVars and of
    /// parameters) holds, on top of any earlier predicate. Not allowed once
    /// the RDom is used in an update definition. Returns None.
    #[pyo3(name = "where")]
    fn where_(&self, predicate: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.where_(py_to_expr(predicate)?).py()
    }
    /// `domain()`: always raises TypeError, as Halide 21's Python binding
    /// does (it cannot convert the domain to a Python object).
    // Halide 21's binding declares `domain()` but cannot convert its C++
    // result (Halide::Internal::ReductionDomain); the message is pybind11's.
    fn domain(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "Unable to convert function return value to a Python type! The signature was\n\t(self: halide.halide_.RDom) -> Halide::Internal::ReductionDomain",
        ))
    }
    fn __repr__(&self) -> String {
        if self.inner.dimensions() == 0 {
            return "<halide.RDom RDom()>".to_string();
        }
        format!("<halide.RDom {}>", self.inner.describe())
    }
});

fn describe_rvar(r: &RVar) -> String {
    use ferrohalide_core::lang::print::expr_to_string;
    match (r.min(), r.extent()) {
        (Ok(m), Ok(e)) => format!("{}({}, {})", r.name, expr_to_string(&m), expr_to_string(&e)),
        _ => format!("{}((undefined), (undefined))", r.name),
    }
}

crate::expr_like_methods!(PyRVar {
    /// `RVar()`, `RVar(name)`, or `RVar(rdom)` of a one-dimensional RDom.
    #[new]
    #[pyo3(signature = (arg=None))]
    fn py_new(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = match arg {
            None => RVar::fresh(),
            Some(a) => {
                if let Ok(name) = a.extract::<String>() {
                    RVar::named(name)
                } else if let Ok(r) = a.extract::<PyRef<PyRDom>>() {
                    if r.inner.dimensions() != 1 {
                        return Err(to_pyerr(Error::user(format!(
                            "Can't treat an RDom with {} dimensions as an RVar: only a one-dimensional RDom can.\n",
                            r.inner.dimensions()
                        ))));
                    }
                    r.rvar(0)?.inner
                } else {
                    return Err(PyTypeError::new_err(
                        "__init__(): incompatible constructor arguments for halide.RVar",
                    ));
                }
            }
        };
        Ok(PyRVar { inner })
    }
    /// `name()`: the RVar's name.
    fn name(&self) -> String {
        self.inner.name.clone()
    }
    /// `min()`: the first value of the RVar, as an Expr. Raises an error if
    /// the RVar belongs to no RDom.
    fn min(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::new(self.inner.min().py()?))
    }
    /// `extent()`: the number of values of the RVar, as an Expr. Raises an
    /// error if the RVar belongs to no RDom.
    fn extent(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::new(self.inner.extent().py()?))
    }
    fn __repr__(&self) -> String {
        format!("<halide.RVar {}>", describe_rvar(&self.inner))
    }
    fn __str__(&self) -> String {
        self.__repr__()
    }
});

/// An RVar, or a one-dimensional RDom, as an Expr; `None` for other objects.
pub fn rdom_operand(obj: &Bound<'_, PyAny>) -> PyResult<Option<Expr>> {
    if let Ok(v) = obj.extract::<PyRef<PyRVar>>() {
        return Ok(Some(v.inner.expr()));
    }
    if let Ok(r) = obj.extract::<PyRef<PyRDom>>() {
        if r.inner.dimensions() != 1 {
            return Err(to_pyerr(Error::user(format!(
                "Can't treat an RDom with {} dimensions as an Expr: only a one-dimensional RDom converts to its RVar.\n",
                r.inner.dimensions()
            ))));
        }
        return Ok(Some(r.rvar(0)?.inner.expr()));
    }
    Ok(None)
}

/// A Var or RVar argument of a scheduling call.
pub fn var_or_rvar(obj: &Bound<'_, PyAny>) -> PyResult<VarOrRVar> {
    if let Ok(v) = obj.extract::<PyRef<PyVarOrRVar>>() {
        return Ok(VarOrRVar { name: v.name.clone(), is_rvar: v.rvar.is_some() });
    }
    if let Ok(v) = obj.extract::<PyRef<PyVar>>() {
        return Ok(VarOrRVar::var(v.inner.name()));
    }
    if let Ok(v) = obj.extract::<PyRef<PyRVar>>() {
        return Ok(VarOrRVar::rvar(v.inner.name.clone()));
    }
    if let Ok(r) = obj.extract::<PyRef<PyRDom>>() {
        if r.inner.dimensions() == 1 {
            return Ok(VarOrRVar::rvar(r.rvar(0)?.inner.name));
        }
    }
    Err(PyTypeError::new_err(format!(
        "expected a halide.Var or halide.RVar, got {}",
        obj.repr().map(|r| r.to_string()).unwrap_or_default()
    )))
}

/// `hl.VarOrRVar`: a Var or an RVar where a schedule takes either (every
/// directive also takes the Var or RVar itself).
#[pyclass(name = "VarOrRVar", module = "ferrohalide", frozen)]
pub struct PyVarOrRVar {
    name: String,
    /// Set for an RVar (or a one-dimensional RDom); `var` is then a fresh
    /// Var, as in Halide.
    rvar: Option<RVar>,
}

#[pymethods]
impl PyVarOrRVar {
    /// `VarOrRVar(name, is_rvar)`, `VarOrRVar(var)`, `VarOrRVar(rvar)` or
    /// `VarOrRVar(rdom)` of a one-dimensional RDom.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let bad = || PyTypeError::new_err("__init__(): incompatible constructor arguments for halide.VarOrRVar");
        match args.len() {
            2 => {
                let name: String = args.get_item(0)?.extract().map_err(|_| bad())?;
                let is_rvar: bool = args.get_item(1)?.extract().map_err(|_| bad())?;
                let rvar = is_rvar.then(|| RVar::named(name.clone()));
                Ok(PyVarOrRVar { name, rvar })
            }
            1 => {
                let a = args.get_item(0)?;
                if let Ok(v) = a.extract::<PyRef<PyVar>>() {
                    return Ok(PyVarOrRVar { name: v.inner.name().to_string(), rvar: None });
                }
                if let Ok(r) = a.extract::<PyRef<PyRVar>>() {
                    return Ok(PyVarOrRVar { name: r.inner.name.clone(), rvar: Some(r.inner.clone()) });
                }
                if let Ok(d) = a.extract::<PyRef<PyRDom>>() {
                    if d.inner.dimensions() == 1 {
                        let r = d.rvar(0)?.inner;
                        return Ok(PyVarOrRVar { name: r.name.clone(), rvar: Some(r) });
                    }
                }
                Err(bad())
            }
            _ => Err(bad()),
        }
    }
    /// `name()`: the name of the Var or RVar.
    fn name(&self) -> String {
        self.name.clone()
    }
    /// `is_rvar`: True if this stands for an RVar.
    #[getter]
    fn is_rvar(&self) -> bool {
        self.rvar.is_some()
    }
    /// `var`: the Var this stands for (a new, unrelated Var if it stands for
    /// an RVar, as in Halide).
    #[getter]
    fn var(&self) -> PyVar {
        match &self.rvar {
            None => PyVar { inner: ferrohalide_core::lang::var::Var::new(&self.name) },
            Some(_) => PyVar { inner: ferrohalide_core::lang::var::Var::fresh() },
        }
    }
    /// `rvar`: the RVar this stands for (a new, unrelated RVar if it stands
    /// for a Var).
    #[getter]
    fn rvar(&self) -> PyRVar {
        PyRVar { inner: self.rvar.clone().unwrap_or_else(|| RVar::named(ferrohalide_core::lang::var::unique_name('r'))) }
    }
    fn __repr__(&self) -> String {
        format!("<halide.VarOrRVar '{}'>", self.name)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyVarOrRVar>()?;
    m.add_class::<PyRDom>()?;
    m.add_class::<PyRVar>()?;
    Ok(())
}
