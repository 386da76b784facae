//! `hl.Partition` and the loop partitioning directives (`partition`,
//! `never_partition(_all)`, `always_partition(_all)`), written once for
//! `hl.Func` (its pure stage) and `hl.Stage`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use ferrohalide_core::lang::stage::Stage;
use ferrohalide_core::schedule::Partition;

use crate::errors::IntoPy;
use crate::py_rdom::var_or_rvar;

#[pyclass(name = "Partition", module = "ferrohalide", eq, eq_int, hash, frozen)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PyPartition {
    Auto = 0,
    Never = 1,
    Always = 2,
}

const ALL: [PyPartition; 3] = [PyPartition::Auto, PyPartition::Never, PyPartition::Always];

#[pymethods]
impl PyPartition {
    #[new]
    fn py_new(value: i64) -> PyResult<Self> {
        ALL.into_iter()
            .find(|a| *a as i64 == value)
            .ok_or_else(|| PyTypeError::new_err(format!("no Partition has value {value}")))
    }
    #[classattr]
    fn __members__(py: Python<'_>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        for a in ALL {
            d.set_item(format!("{a:?}"), a)?;
        }
        Ok(d.unbind())
    }
    #[getter]
    fn name(&self) -> String {
        format!("{self:?}")
    }
    #[getter]
    fn value(&self) -> i32 {
        *self as i32
    }
    fn __int__(&self) -> i32 {
        *self as i32
    }
    fn __index__(&self) -> i32 {
        *self as i32
    }
    fn __repr__(&self) -> String {
        format!("<Partition.{:?}: {}>", self, *self as i32)
    }
    fn __str__(&self) -> String {
        format!("Partition.{self:?}")
    }
}

impl PyPartition {
    fn to_core(self) -> Partition {
        match self {
            PyPartition::Auto => Partition::Auto,
            PyPartition::Never => Partition::Never,
            PyPartition::Always => Partition::Always,
        }
    }
}

/// `partition(var, partition_policy)`.
pub fn partition(stage: &Stage, var: &Bound<'_, PyAny>, policy: PyPartition) -> PyResult<()> {
    stage.partition(var_or_rvar(var)?, policy.to_core()).py()
}

/// `never_partition(vars)` / `always_partition(vars)`: a sequence of vars.
pub fn partition_each(stage: &Stage, vars: &Bound<'_, PyAny>, policy: Partition) -> PyResult<()> {
    let vars = vars
        .try_iter()
        .map_err(|_| PyTypeError::new_err("expected a sequence of Var or RVar"))?
        .map(|v| var_or_rvar(&v?))
        .collect::<PyResult<Vec<_>>>()?;
    for v in vars {
        stage.partition(v, policy).py()?;
    }
    Ok(())
}

/// `never_partition_all()` / `always_partition_all()`.
pub fn partition_all(stage: &Stage, policy: Partition) -> PyResult<()> {
    stage.partition_all(policy).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPartition>()
}
