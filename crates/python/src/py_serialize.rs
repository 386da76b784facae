//! `hl.serialize_pipeline`, `hl.deserialize_pipeline` and
//! `hl.deserialize_parameters` over `ferrohalide_core::serialize`: files
//! or bytes in, Pipelines and Parameters out.

use std::collections::HashMap;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use ferrohalide_core::lang::parameter::Parameter;
use ferrohalide_core::serialize;

use crate::errors::{HalideError, IntoPy};
use crate::py_parameter::PyParameter;
use crate::py_pipeline::PyPipeline;

/// A path-like object's path (str or os.PathLike), or None for bytes.
fn path_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if obj.is_instance_of::<PyBytes>() {
        return Ok(None);
    }
    let os = obj.py().import("os")?;
    let p = os
        .call_method1("fspath", (obj,))
        .map_err(|_| PyTypeError::new_err("expected bytes, a str path or an os.PathLike object"))?;
    Ok(Some(p.extract()?))
}

/// The bytes of `data` (bytes) or of the file it names.
fn data_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    match path_of(obj)? {
        None => Ok(obj.cast::<PyBytes>()?.as_bytes().to_vec()),
        Some(path) => std::fs::read(&path).map_err(|e| {
            HalideError::new_err(format!("Error: can't read the pipeline file {path}: {e}\n"))
        }),
    }
}

fn params_dict<'py>(py: Python<'py>, params: Vec<Parameter>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for p in params {
        d.set_item(p.name(), Py::new(py, PyParameter::new(p))?)?;
    }
    Ok(d)
}

/// `serialize_pipeline(pipeline, filename=None, *, get_params=False)`: save the
/// `Pipeline` in Halide's serialized form: to the file `filename` (a str or
/// path-like object), returning None, or, without a filename, as bytes.
/// With `get_params=True` it also returns the external parameters (its
/// Params and ImageParams) as a dict `{name: Parameter}`: the dict alone
/// when writing a file, `(bytes, params)` otherwise.
#[pyfunction]
#[pyo3(signature = (pipeline, filename=None, *, get_params=None))]
fn serialize_pipeline<'py>(
    py: Python<'py>,
    pipeline: PyRef<'py, PyPipeline>,
    filename: Option<&Bound<'py, PyAny>>,
    get_params: Option<bool>,
) -> PyResult<Py<PyAny>> {
    let (outputs, requirements) = pipeline.parts()?;
    let (data, params) =
        crate::gil::detached(py, || serialize::write_pipeline(&outputs, &requirements)).py()?;
    let get_params = get_params.unwrap_or(false);
    match filename.map(path_of).transpose()?.flatten() {
        Some(path) => {
            std::fs::write(&path, &data).map_err(|e| {
                HalideError::new_err(format!(
                    "Error: can't write the pipeline file {path}: {e}\n"
                ))
            })?;
            Ok(if get_params {
                params_dict(py, params)?.into_any().unbind()
            } else {
                py.None()
            })
        }
        None if filename.is_some() => Err(PyTypeError::new_err(
            "serialize_pipeline(): filename must be a str or os.PathLike object",
        )),
        None => {
            let bytes = PyBytes::new(py, &data);
            Ok(if get_params {
                (bytes, params_dict(py, params)?)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            } else {
                bytes.into_any().unbind()
            })
        }
    }
}

/// `deserialize_pipeline(data, user_params=None)`: the `Pipeline` that
/// `serialize_pipeline` saved, read from bytes or from the file `data` names.
/// `user_params`, a dict `{name: Parameter}`, supplies the external
/// parameters to use (e.g. the ones `deserialize_parameters` returned).
#[pyfunction]
#[pyo3(signature = (data, user_params=None))]
fn deserialize_pipeline(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    user_params: Option<&Bound<'_, PyDict>>,
) -> PyResult<PyPipeline> {
    let bytes = data_of(data)?;
    let mut params = HashMap::new();
    if let Some(d) = user_params {
        for (k, v) in d.iter() {
            let p = v.extract::<PyRef<PyParameter>>().map_err(|_| {
                PyTypeError::new_err(
                    "deserialize_pipeline(): user_params must map names to hl.Parameter objects",
                )
            })?;
            params.insert(k.extract::<String>()?, p.get()?.clone());
        }
    }
    let (outputs, requirements) =
        crate::gil::detached(py, || serialize::read_pipeline(&bytes, &params)).py()?;
    Ok(PyPipeline::with_requirements(outputs, requirements))
}

/// `deserialize_parameters(data)`: the external parameters (Params and
/// ImageParams) of a serialized pipeline, read from bytes or from the file
/// `data` names, as a dict `{name: Parameter}`.
#[pyfunction]
fn deserialize_parameters<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let bytes = data_of(data)?;
    let params = serialize::read_parameters(&bytes).py()?;
    params_dict(py, params)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyParameter>()?;
    m.add_function(wrap_pyfunction!(serialize_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(deserialize_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(deserialize_parameters, m)?)?;
    Ok(())
}
