//! `hl.LoopAlignStrategy` and the argument forms of `compute_with`,
//! shared by `hl.Func` and `hl.Stage` (Halide's four overloads):
//! `(stage, var, align=Auto)`, `(stage, var, [(var, strategy), ...])`,
//! `(loop_level, align=Auto)` and `(loop_level, [(var, strategy), ...])`,
//! positionally or by keyword. A Func given as the stage means its pure
//! definition (an undefined one is a TypeError, as pybind11's failed
//! conversion is).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ferrohalide_core::lang::compute_with::Align;
use ferrohalide_core::lang::stage::Stage;
use ferrohalide_core::schedule::{LoopAlignStrategy, LoopLevel};

use crate::errors::IntoPy;
use crate::py_func::PyFunc;
use crate::py_loop_level::PyLoopLevel;
use crate::py_rdom::var_or_rvar;
use crate::py_stage::PyStage;

crate::py_enum::halide_enum!(PyLoopAlignStrategy, "LoopAlignStrategy", [
    AlignStart = 0,
    AlignEnd = 1,
    NoAlign = 2,
    Auto = 3,
]);

impl PyLoopAlignStrategy {
    fn to_core(self) -> LoopAlignStrategy {
        match self {
            PyLoopAlignStrategy::AlignStart => LoopAlignStrategy::AlignStart,
            PyLoopAlignStrategy::AlignEnd => LoopAlignStrategy::AlignEnd,
            PyLoopAlignStrategy::NoAlign => LoopAlignStrategy::NoAlign,
            PyLoopAlignStrategy::Auto => LoopAlignStrategy::Auto,
        }
    }
}

const SIGNATURES: &str = "compute_with(): incompatible function arguments. The following argument types are supported:\n    1. (self, stage: halide.Stage, var: halide.VarOrRVar, align: list[tuple[halide.VarOrRVar, halide.LoopAlignStrategy]])\n    2. (self, stage: halide.Stage, var: halide.VarOrRVar, align: halide.LoopAlignStrategy = LoopAlignStrategy.Auto)\n    3. (self, loop_level: halide.LoopLevel, align: list[tuple[halide.VarOrRVar, halide.LoopAlignStrategy]])\n    4. (self, loop_level: halide.LoopLevel, align: halide.LoopAlignStrategy = LoopAlignStrategy.Auto)\n";

fn bad() -> PyErr {
    PyTypeError::new_err(SIGNATURES)
}

/// The stage a `compute_with` names: a Stage, or a defined Func's pure one.
fn stage_of(obj: &Bound<'_, PyAny>) -> PyResult<Stage> {
    if let Ok(s) = obj.extract::<PyRef<PyStage>>() {
        return Ok(s.inner.clone());
    }
    match obj.extract::<PyRef<PyFunc>>() {
        Ok(f) if f.inner.defined() => Ok(f.inner.stage()),
        _ => Err(bad()),
    }
}

/// `align`: one strategy, or a sequence of `(var, strategy)` pairs.
fn align_of(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Align> {
    let Some(obj) = obj else {
        return Ok(Align::One(LoopAlignStrategy::Auto));
    };
    if let Ok(a) = obj.extract::<PyLoopAlignStrategy>() {
        return Ok(Align::One(a.to_core()));
    }
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(bad());
    }
    let mut list = vec![];
    for item in obj.try_iter().map_err(|_| bad())? {
        let item = item?;
        let pair: Vec<Bound<'_, PyAny>> = item
            .try_iter()
            .map_err(|_| bad())?
            .collect::<PyResult<_>>()?;
        let [v, a] = pair.as_slice() else {
            return Err(bad());
        };
        let v = var_or_rvar(v).map_err(|_| bad())?;
        let a = a.extract::<PyLoopAlignStrategy>().map_err(|_| bad())?;
        list.push((v.name, a.to_core()));
    }
    Ok(Align::PerDim(list))
}

/// The arguments of one call: positional ones in order, then keywords.
struct Args<'py> {
    pos: Vec<Bound<'py, PyAny>>,
    kwargs: Option<Bound<'py, PyDict>>,
}

impl<'py> Args<'py> {
    fn keyword(&self, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.kwargs {
            Some(d) => d.get_item(name),
            None => Ok(None),
        }
    }
    /// The next parameter, `name`: positional if any is left, else by keyword.
    fn take(&mut self, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.pos.is_empty() {
            return self.keyword(name);
        }
        if self.keyword(name)?.is_some() {
            return Err(bad());
        }
        Ok(Some(self.pos.remove(0)))
    }
}

/// Parse the arguments of `compute_with` into the level and alignment.
fn parse<'py>(
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<(LoopLevel, Align)> {
    if let Some(d) = kwargs {
        for k in d.keys() {
            let k: String = k.extract()?;
            if !["stage", "var", "align", "loop_level"].contains(&k.as_str()) {
                return Err(bad());
            }
        }
    }
    let mut a = Args {
        pos: args.iter().collect(),
        kwargs: kwargs.cloned(),
    };
    let first = match a.pos.first() {
        Some(p) => p.clone(),
        None => match a.keyword("loop_level")? {
            Some(l) => l,
            None => a.keyword("stage")?.ok_or_else(bad)?,
        },
    };
    let level = if let Ok(l) = first.extract::<PyRef<PyLoopLevel>>() {
        if a.keyword("stage")?.is_some() || a.keyword("var")?.is_some() {
            return Err(bad());
        }
        a.take("loop_level")?;
        l.inner.lock_value().py()?
    } else {
        if a.keyword("loop_level")?.is_some() {
            return Err(bad());
        }
        let stage = stage_of(&a.take("stage")?.ok_or_else(bad)?)?;
        let var = a.take("var")?.ok_or_else(bad)?;
        let var = var_or_rvar(&var).map_err(|_| bad())?;
        LoopLevel::At {
            func: stage.function.name(),
            var: var.name,
            stage: Some(stage.index),
        }
    };
    let align = align_of(a.take("align")?.as_ref())?;
    if !a.pos.is_empty() {
        return Err(bad());
    }
    Ok((level, align))
}

/// `stage.compute_with(...)` with Python's arguments.
pub(crate) fn compute_with(
    stage: &Stage,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let (level, align) = parse(args, kwargs)?;
    stage.compute_with(level, align).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLoopAlignStrategy>()?;
    Ok(())
}
