//! `hl.Partition` and the loop partitioning directives (`partition`,
//! `never_partition(_all)`, `always_partition(_all)`), written once for
//! `hl.Func` (its pure stage) and `hl.Stage`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use ferrohalide_core::lang::stage::Stage;
use ferrohalide_core::schedule::Partition;

use crate::errors::IntoPy;
use crate::py_rdom::var_or_rvar;

crate::py_enum::halide_enum!(PyPartition, "Partition", [Auto = 0, Never = 1, Always = 2]);

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
