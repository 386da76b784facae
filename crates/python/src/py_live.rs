//! `_core._live_objects()`: how many Funcs, Buffers, RDoms, Parameters and
//! compiled pipelines exist now (for leak tests; not Halide API).

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `_live_objects()`: a dict of how many Funcs, Buffers, RDoms, Parameters
/// and compiled pipelines exist now, by kind. For leak tests; not part of
/// Halide's API.
#[pyfunction]
fn _live_objects(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, n) in ferrohalide_core::live::counts() {
        d.set_item(name, n)?;
    }
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_live_objects, m)?)
}
