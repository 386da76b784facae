//! `hl.Stage`: a definition of a Func or one of its specializations
//! (what `Func.specialize` returns), with the loop directives. The
//! argument forms shared with `hl.Func` (vectorize/unroll/parallel with or
//! without a factor, tile's overloads) are parsed here once.

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;

use pyo3::types::{PyList, PyTuple};

use ferrohalide_core::ir::ForType;
use ferrohalide_core::lang::stage::{Stage, VarOrRVar};

use crate::errors::IntoPy;
use crate::py_expr::py_to_expr;
use crate::py_func::{tail_of, PyFunc, PyTailStrategy};
use crate::py_rdom::var_or_rvar;

/// `stage.prefetch(func_or_image, at, from, offset, strategy)`.
pub(crate) fn prefetch(
    stage: &Stage,
    what: &Bound<'_, PyAny>,
    at: &Bound<'_, PyAny>,
    from: &Bound<'_, PyAny>,
    offset: Option<&Bound<'_, PyAny>>,
    strategy: Option<crate::py_enum::PyPrefetchBoundStrategy>,
) -> PyResult<()> {
    use crate::py_enum::PyPrefetchBoundStrategy as S;
    use ferrohalide_core::schedule::PrefetchBoundStrategy;
    let name = if let Ok(f) = what.extract::<PyRef<PyFunc>>() {
        f.inner.name()
    } else if let Ok(im) = what.extract::<PyRef<crate::py_param::PyImageParam>>() {
        im.get_inner()?.name()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "prefetch(): the first argument must be a Func or an ImageParam, not {}",
            crate::py_param::type_name(what)
        )));
    };
    let offset = match offset {
        Some(o) if !o.is_none() => py_to_expr(o)?,
        _ => ferrohalide_core::ir::Expr::i32(1),
    };
    let strategy = match strategy.unwrap_or(S::GuardWithIf) {
        S::Clamp => PrefetchBoundStrategy::Clamp,
        S::GuardWithIf => PrefetchBoundStrategy::GuardWithIf,
        S::NonFaulting => PrefetchBoundStrategy::NonFaulting,
    };
    stage
        .prefetch(&name, &var_or_rvar(at)?, &var_or_rvar(from)?, offset, strategy)
        .py()
}

/// `vectorize`/`unroll`/`parallel` on `stage`: without a factor, mark the
/// loop; with one, split it first (the new inner loop gets the type,
/// except for `parallel`, where the outer one does).
pub(crate) fn loop_directive(
    stage: &Stage,
    var: &Bound<'_, PyAny>,
    factor: Option<&Bound<'_, PyAny>>,
    tail: Option<PyTailStrategy>,
    t: ForType,
) -> PyResult<()> {
    let v = var_or_rvar(var)?;
    match factor {
        None => stage.set_for_type(&v, t).py(),
        Some(k) => stage
            .split_and_set_type(&v, py_to_expr(k)?, tail_of(tail), t, t != ForType::Parallel)
            .py(),
    }
}

/// `split(old, outer, inner, factor, tail)` on `stage`.
pub(crate) fn split(
    stage: &Stage,
    old: &Bound<'_, PyAny>,
    outer: &Bound<'_, PyAny>,
    inner: &Bound<'_, PyAny>,
    factor: &Bound<'_, PyAny>,
    tail: Option<PyTailStrategy>,
) -> PyResult<()> {
    stage
        .split(
            &var_or_rvar(old)?,
            &var_or_rvar(outer)?,
            &var_or_rvar(inner)?,
            py_to_expr(factor)?,
            tail_of(tail),
        )
        .py()
}

/// `reorder(v0, v1, ...)` or `reorder([v0, v1, ...])` on `stage`.
pub(crate) fn reorder(stage: &Stage, args: &Bound<'_, PyTuple>) -> PyResult<()> {
    let items: Vec<Bound<'_, PyAny>> = if args.len() == 1 {
        let a0 = args.get_item(0)?;
        if let Ok(l) = a0.cast::<PyList>() {
            l.iter().collect()
        } else if let Ok(t) = a0.cast::<PyTuple>() {
            t.iter().collect()
        } else {
            vec![a0]
        }
    } else {
        args.iter().collect()
    };
    let names = items
        .iter()
        .map(var_or_rvar)
        .collect::<PyResult<Vec<VarOrRVar>>>()?;
    stage.reorder(&names).py()
}

/// `tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail=Auto)` or
/// `tile(x, y, xi, yi, xfactor, yfactor, tail=Auto)` on `stage`.
pub(crate) fn tile(
    stage: &Stage,
    args: &Bound<'_, PyTuple>,
    tail: Option<PyTailStrategy>,
) -> PyResult<()> {
    let mut items: Vec<Bound<'_, PyAny>> = args.iter().collect();
    let mut tail = tail;
    if let Some(last) = items.last() {
        if let Ok(t) = last.extract::<PyTailStrategy>() {
            tail = Some(t);
            items.pop();
        }
    }
    match items.len() {
        8 => {
            let v = items[..6]
                .iter()
                .map(var_or_rvar)
                .collect::<PyResult<Vec<VarOrRVar>>>()?;
            let (xf, yf) = (py_to_expr(&items[6])?, py_to_expr(&items[7])?);
            stage
                .tile(
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    &v[4],
                    &v[5],
                    xf,
                    yf,
                    tail_of(tail),
                )
                .py()
        }
        6 => {
            let v = items[..4]
                .iter()
                .map(var_or_rvar)
                .collect::<PyResult<Vec<VarOrRVar>>>()?;
            let (xf, yf) = (py_to_expr(&items[4])?, py_to_expr(&items[5])?);
            stage
                .tile(
                    &v[0],
                    &v[1],
                    &v[0],
                    &v[1],
                    &v[2],
                    &v[3],
                    xf,
                    yf,
                    tail_of(tail),
                )
                .py()
        }
        3 | 4 if items[0].cast::<PyList>().is_ok() => {
            // tile(previous, [outers,] inners, factors)
            let vars = |o: &Bound<'_, PyAny>| -> PyResult<Vec<VarOrRVar>> {
                o.try_iter()?.map(|v| var_or_rvar(&v?)).collect()
            };
            let previous = vars(&items[0])?;
            let (outers, inners) = if items.len() == 4 {
                (vars(&items[1])?, vars(&items[2])?)
            } else {
                (previous.clone(), vars(&items[1])?)
            };
            let factors = items[items.len() - 1]
                .try_iter()?
                .map(|f| py_to_expr(&f?))
                .collect::<PyResult<Vec<_>>>()?;
            stage
                .tile_n(&previous, &outers, &inners, factors, tail_of(tail))
                .py()
        }
        _ => Err(PyTypeError::new_err(
            "tile(): incompatible function arguments",
        )),
    }
}

/// `hl.Stage`: one definition of a Func, to schedule on its own:
/// `f.update(i)` gives the Stage of update definition `i`, `specialize(cond)`
/// the Stage of a specialization, and `Stage(f)` the pure definition of `f`.
/// Its scheduling methods return the Stage, so calls can be chained.
#[pyclass(name = "Stage", module = "ferrohalide", frozen)]
pub struct PyStage {
    pub inner: Stage,
}

/// The stage a Stage's directives schedule (itself).
fn stage_of(s: &PyStage) -> Stage {
    s.inner.clone()
}

crate::schedule_methods!(PyStage, stage_of, "Stage");

#[pymethods]
impl PyStage {
    /// `Stage(f)`: the pure definition of `f`.
    #[new]
    fn py_new(f: PyRef<'_, PyFunc>) -> PyStage {
        PyStage {
            inner: f.inner.stage(),
        }
    }

    /// `name()`: the stage's name: the Func's name for its pure definition,
    /// `f.update(i)` for update definition `i`.
    fn name(&self) -> String {
        self.inner.name()
    }

    /// `unscheduled()`: declare that this stage keeps its default schedule
    /// on purpose, which silences the warning about unscheduled update
    /// definitions. Raises an error if the stage has already been scheduled.
    /// Returns this Stage.
    fn unscheduled<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        slf.get().inner.unscheduled().py()?;
        Ok(slf.clone())
    }

    /// `rfactor(rvar, var)` or `rfactor([(rvar, var), ...])`: split this
    /// update, which must be a provably associative reduction, in two: a new
    /// intermediate Func (`<f>_intm`) computes partial results over the other
    /// RVars, with each listed RVar replaced by the pure Var paired with it,
    /// and this update then combines the partial results over the listed
    /// RVars. The loops over those Vars can then run in parallel or be
    /// vectorized. Returns the intermediate Func.
    #[pyo3(signature = (*args))]
    fn rfactor(&self, args: &Bound<'_, PyTuple>) -> PyResult<PyFunc> {
        let bad = || {
            PyTypeError::new_err("rfactor(): incompatible function arguments: expected (RVar, Var) or a list of (RVar, Var) pairs")
        };
        let pair = |r: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<(VarOrRVar, String)> {
            let v = v
                .extract::<PyRef<crate::py_var::PyVar>>()
                .map_err(|_| bad())?;
            // As Halide's binding: the first of a pair must be an RVar (or
            // a one-dimensional RDom), not a Var.
            let r = var_or_rvar(r).map_err(|_| bad())?;
            if !r.is_rvar {
                return Err(bad());
            }
            Ok((r, v.inner.name().to_string()))
        };
        let pairs = match args.len() {
            2 => vec![pair(&args.get_item(0)?, &args.get_item(1)?)?],
            1 => {
                let a = args.get_item(0)?;
                let items = crate::py_expr::sequence_items(&a).ok_or_else(bad)?;
                items
                    .iter()
                    .map(|it| {
                        let t = it.cast::<PyTuple>().map_err(|_| bad())?;
                        if t.len() != 2 {
                            return Err(bad());
                        }
                        pair(&t.get_item(0)?, &t.get_item(1)?)
                    })
                    .collect::<PyResult<Vec<_>>>()?
            }
            _ => return Err(bad()),
        };
        Ok(PyFunc {
            inner: self.inner.rfactor(&pairs).py()?,
        })
    }

    /// `dump_argument_list()`: the names of this stage's loops, innermost
    /// first, as a line of text (e.g. `"Vars: x y __outermost\n"`).
    fn dump_argument_list(&self) -> String {
        self.inner.dump_argument_list()
    }

    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(PyAttributeError::new_err(format!(
            "'halide.Stage' object has no attribute '{name}'"
        )))
    }

    fn __repr__(&self) -> String {
        format!("<halide.Stage '{}'>", self.inner.name())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStage>()?;
    Ok(())
}
