//! `hl.LoopLevel`: a shared, mutable placement (see `lang::loop_level`).
//! Like Halide's bindings: constructors, `root()`, `inlined()`, `set()`,
//! `stage_index()` (which, as in Halide, refuses to inspect a LoopLevel the
//! user holds), and identity equality.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ferrohalide_core::lang::loop_level::LoopLevelHandle;
use ferrohalide_core::schedule::LoopLevel;

use crate::errors::IntoPy;
use crate::py_func::PyFunc;

/// `hl.LoopLevel`: a place in the loop nest, for `compute_at`, `store_at`,
/// `hoist_storage` and `compute_with`. `LoopLevel(func, var, stage_index=-1)`
/// is `func`'s loop over `var` (`stage_index` picks one of its definitions;
/// -1 means none in particular), `LoopLevel.root()` is outside all loops,
/// `LoopLevel.inlined()` is inlining, and `LoopLevel()` is undefined until
/// `set`. A Func scheduled at a LoopLevel follows later `set` calls on it.
/// Two LoopLevels are equal only if they are the same object.
#[pyclass(name = "LoopLevel", module = "ferrohalide", frozen)]
pub struct PyLoopLevel {
    pub inner: LoopLevelHandle,
}

const CONSTRUCTORS: &str = "__init__(): incompatible constructor arguments. The following argument types are supported:\n    1. halide.LoopLevel()\n    2. halide.LoopLevel(func: halide.Func, var: halide.VarOrRVar, stage_index: int = -1)\n";

#[pymethods]
impl PyLoopLevel {
    /// `LoopLevel()` (undefined until `set`) or `LoopLevel(func, var,
    /// stage_index=-1)`.
    #[new]
    #[pyo3(signature = (*args, stage_index=None))]
    fn py_new(args: &Bound<'_, PyTuple>, stage_index: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let bad = || PyTypeError::new_err(CONSTRUCTORS);
        let mut items: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let mut stage = stage_index.cloned();
        if items.len() == 3 && stage.is_none() {
            stage = items.pop();
        }
        let level = match items.as_slice() {
            [] if stage.is_none() => LoopLevel::Undefined,
            [f, v] => {
                let f = f.extract::<PyRef<PyFunc>>().map_err(|_| bad())?;
                let v = crate::py_rdom::var_or_rvar(v).map_err(|_| bad())?;
                // Halide's -1: no particular stage.
                let stage = match stage {
                    None => None,
                    Some(s) => {
                        let k: i64 = s.extract().map_err(|_| bad())?;
                        usize::try_from(k).ok()
                    }
                };
                LoopLevel::At {
                    func: f.inner.name(),
                    var: v.name,
                    stage,
                }
            }
            _ => return Err(bad()),
        };
        Ok(PyLoopLevel {
            inner: LoopLevelHandle::new(level),
        })
    }

    /// `LoopLevel.root()`: the level outside all loops (as `compute_root()`).
    #[staticmethod]
    fn root() -> PyLoopLevel {
        PyLoopLevel {
            inner: LoopLevelHandle::new(LoopLevel::Root),
        }
    }

    /// `LoopLevel.inlined()`: the level of an inlined Func (as
    /// `compute_inline()`).
    #[staticmethod]
    fn inlined() -> PyLoopLevel {
        PyLoopLevel {
            inner: LoopLevelHandle::new(LoopLevel::Inlined),
        }
    }

    /// `set(other)`: give this LoopLevel `other`'s current value; Funcs
    /// already scheduled at this LoopLevel move along. Returns None.
    fn set(&self, other: PyRef<'_, PyLoopLevel>) -> PyResult<()> {
        self.inner.set(other.inner.get()).py()
    }

    /// `stage_index()`: the index of the definition this LoopLevel names. As
    /// in Halide, only the LoopLevels the compiler fixes while lowering can
    /// be inspected: on a LoopLevel you hold it always raises an error.
    fn stage_index(&self) -> PyResult<usize> {
        self.inner.stage_index().py()
    }

    fn __repr__(&self) -> &'static str {
        "<halide.LoopLevel>"
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLoopLevel>()?;
    Ok(())
}
