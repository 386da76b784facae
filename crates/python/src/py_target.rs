//! `hl.Target`, its enums (`TargetOS`, `TargetArch`, `TargetProcessorTune`,
//! `TargetFeature`, Python IntEnums built from the core's tables, with
//! Halide's values), the host / environment target functions and the
//! target queries (`target_bits()`, ...).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString, PyTuple};

use ferrohalide_core::target::{Arch, Feature, Os, Target, Tune, ARCHES, FEATURES, OSES, TUNES};

use ferrohalide_core::device_api::{self, DeviceApi};
use ferrohalide_core::lang::target_queries;

use crate::errors::IntoPy;
use crate::py_expr::PyExpr;
use crate::py_type::type_from_py;

static OS_ENUM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static ARCH_ENUM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TUNE_ENUM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static FEATURE_ENUM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// The value of Python's `TargetFeature.FeatureEnd`.
const FEATURE_END: u8 = 101;
static DEVICE_API_ENUM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `DeviceAPI` of a Python `hl.DeviceAPI` member (TypeError otherwise).
pub(crate) fn device_api_of(obj: &Bound<'_, PyAny>) -> PyResult<DeviceApi> {
    let v = enum_value(obj, &DEVICE_API_ENUM, "DeviceAPI")?;
    DeviceApi::from_value(v as i64)
        .ok_or_else(|| PyTypeError::new_err(format!("invalid DeviceAPI value {v}")))
}


pub(crate) fn make_enum(
    py: Python<'_>,
    name: &str,
    table: &[(&str, u8, &str)],
    extra: &[(&str, u8)],
) -> PyResult<Py<PyAny>> {
    let members = PyList::empty(py);
    for (n, v, _) in table {
        members.append((*n, *v))?;
    }
    for (n, v) in extra {
        members.append((*n, *v))?;
    }
    let e = py
        .import("enum")?
        .getattr("IntEnum")?
        .call1((name, members))?;
    e.setattr("__module__", "ferrohalide")?;
    // str() names the member ("TargetFeature.AVX"), as Halide's enums do,
    // rather than IntEnum's bare number.
    e.setattr("__str__", py.import("enum")?.getattr("Enum")?.getattr("__str__")?)?;
    Ok(e.unbind())
}

fn enum_class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
) -> PyResult<&'py Bound<'py, PyAny>> {
    cell.get(py)
        .map(|e| e.bind(py))
        .ok_or_else(|| PyTypeError::new_err("target enums are not initialized"))
}

fn member(py: Python<'_>, cell: &'static PyOnceLock<Py<PyAny>>, v: u8) -> PyResult<Py<PyAny>> {
    Ok(enum_class(py, cell)?.call1((v,))?.unbind())
}

/// The integer value of an enum member of `cell`'s class (a TypeError for
/// anything else, as pybind11 does).
fn enum_value(
    obj: &Bound<'_, PyAny>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    what: &str,
) -> PyResult<i64> {
    let cls = enum_class(obj.py(), cell)?;
    if !obj.is_instance(cls)? {
        return Err(PyTypeError::new_err(format!(
            "incompatible function arguments: expected a {what}, got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )));
    }
    obj.extract::<i64>()
}

fn feature_of(obj: &Bound<'_, PyAny>) -> PyResult<Feature> {
    let v = enum_value(obj, &FEATURE_ENUM, "halide.TargetFeature")?;
    Ok(Feature(v as u8))
}

fn features_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Feature>> {
    obj.try_iter()?.map(|f| feature_of(&f?)).collect()
}

#[pyclass(name = "Target", module = "ferrohalide")]
#[derive(Clone)]
pub struct PyTarget {
    pub inner: Target,
}

/// A `hl.Target` argument (target= of realize, compile_jit, ...).
pub fn target_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Target> {
    match obj.extract::<PyRef<PyTarget>>() {
        Ok(t) => Ok(t.inner.clone()),
        Err(_) => Err(PyTypeError::new_err("expected a halide.Target")),
    }
}

#[pymethods]
impl PyTarget {
    /// `Target()`, `Target(string)`, `Target(os, arch, bits[, tune][, features])`.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let bad = || {
            PyTypeError::new_err("__init__(): incompatible constructor arguments for halide.Target")
        };
        match args.len() {
            0 => Ok(PyTarget {
                inner: Target::default(),
            }),
            1 => {
                let a = args.get_item(0)?;
                if !a.is_instance_of::<PyString>() {
                    return Err(bad());
                }
                Ok(PyTarget {
                    inner: Target::parse(&a.extract::<String>()?).py()?,
                })
            }
            3..=5 => {
                let os = enum_value(&args.get_item(0)?, &OS_ENUM, "TargetOS").map_err(|_| bad())?;
                let arch =
                    enum_value(&args.get_item(1)?, &ARCH_ENUM, "TargetArch").map_err(|_| bad())?;
                let bits: i32 = args.get_item(2)?.extract().map_err(|_| bad())?;
                let mut tune = Tune(0);
                let mut features = vec![];
                for i in 3..args.len() {
                    let a = args.get_item(i)?;
                    if i == 3 && enum_value(&a, &TUNE_ENUM, "TargetProcessorTune").is_ok() {
                        tune = Tune(enum_value(&a, &TUNE_ENUM, "TargetProcessorTune")? as u8);
                    } else {
                        features = features_of(&a).map_err(|_| bad())?;
                    }
                }
                Ok(PyTarget {
                    inner: Target::new(Os(os as u8), Arch(arch as u8), bits, tune, &features),
                })
            }
            _ => Err(bad()),
        }
    }

    #[getter]
    fn os(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        member(py, &OS_ENUM, self.inner.os.0)
    }
    #[setter(os)]
    fn set_os(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.os = Os(enum_value(v, &OS_ENUM, "TargetOS")? as u8);
        Ok(())
    }
    #[getter]
    fn arch(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        member(py, &ARCH_ENUM, self.inner.arch.0)
    }
    #[setter(arch)]
    fn set_arch(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.arch = Arch(enum_value(v, &ARCH_ENUM, "TargetArch")? as u8);
        Ok(())
    }
    #[getter]
    fn bits(&self) -> i32 {
        self.inner.bits
    }
    #[setter(bits)]
    fn set_bits(&mut self, v: i32) {
        self.inner.bits = v;
    }
    #[getter]
    fn processor_tune(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        member(py, &TUNE_ENUM, self.inner.tune.0)
    }
    #[setter(processor_tune)]
    fn set_processor_tune(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.tune = Tune(enum_value(v, &TUNE_ENUM, "TargetProcessorTune")? as u8);
        Ok(())
    }

    fn has_feature(&self, f: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.has_feature(feature_of(f)?))
    }
    fn with_feature(&self, f: &Bound<'_, PyAny>) -> PyResult<PyTarget> {
        Ok(PyTarget {
            inner: self.inner.with_feature(feature_of(f)?),
        })
    }
    fn without_feature(&self, f: &Bound<'_, PyAny>) -> PyResult<PyTarget> {
        Ok(PyTarget {
            inner: self.inner.without_feature(feature_of(f)?),
        })
    }
    #[pyo3(signature = (f, value=true))]
    fn set_feature(&mut self, f: &Bound<'_, PyAny>, value: bool) -> PyResult<()> {
        self.inner.set_feature(feature_of(f)?, value);
        Ok(())
    }
    #[pyo3(signature = (features, value=true))]
    fn set_features(&mut self, features: &Bound<'_, PyAny>, value: bool) -> PyResult<()> {
        for f in features_of(features)? {
            self.inner.set_feature(f, value);
        }
        Ok(())
    }
    fn features_all_of(&self, features: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.features_all_of(&features_of(features)?))
    }
    fn features_any_of(&self, features: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.features_any_of(&features_of(features)?))
    }
    fn natural_vector_size(&self, t: &Bound<'_, PyAny>) -> PyResult<i32> {
        Ok(self.inner.natural_vector_size(type_from_py(t)?))
    }
    fn has_gpu_feature(&self) -> bool {
        self.inner.has_gpu_feature()
    }
    fn has_large_buffers(&self) -> bool {
        self.inner.has_large_buffers()
    }
    fn maximum_buffer_size(&self) -> i64 {
        self.inner.maximum_buffer_size()
    }
    /// Can the JIT run code for this target here?
    fn supported(&self) -> bool {
        ferrohalide_codegen_llvm::JitTarget::for_target(&self.inner).is_ok()
    }
    #[staticmethod]
    fn validate_target_string(s: &str) -> bool {
        Target::validate(s)
    }
    fn to_string(&self) -> String {
        self.inner.to_string()
    }
    fn __str__(&self) -> String {
        self.inner.to_string()
    }
    fn __repr__(&self) -> String {
        format!("<halide.Target {}>", self.inner)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .extract::<PyRef<PyTarget>>()
            .is_ok_and(|o| o.inner == self.inner)
    }
    fn __ne__(&self, other: &Bound<'_, PyAny>) -> bool {
        !self.__eq__(other)
    }
    fn supports_device_api(&self, api: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(device_api::supports_device_api(&self.inner, device_api_of(api)?))
    }
    #[pyo3(signature = (r#type, device=None))]
    fn supports_type(&self, r#type: &Bound<'_, PyAny>, device: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let t = type_from_py(r#type)?;
        Ok(match device {
            None => device_api::supports_type(&self.inner, t),
            Some(d) => device_api::supports_type_on(&self.inner, t, device_api_of(d)?),
        })
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'halide.Target' object has no attribute '{name}'"
        )))
    }
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.hash(&mut h);
        h.finish()
    }
}

/// The target feature that enables a device API (`FeatureEnd` for none).
#[pyfunction]
fn target_feature_for_device_api(py: Python<'_>, api: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let f = device_api_of(api)?.target_feature().map_or(FEATURE_END, |f| f.0);
    member(py, &FEATURE_ENUM, f)
}

/// Whether this machine can run code for the target's device.
#[pyfunction]
fn host_supports_target_device(t: &PyTarget) -> PyResult<bool> {
    device_api::host_supports_target_device(&t.inner).py()
}

#[pyfunction]
fn get_host_target() -> PyTarget {
    ferrohalide_codegen_llvm::target::init_host_target();
    PyTarget {
        inner: Target::host(),
    }
}

#[pyfunction]
fn get_jit_target_from_environment() -> PyResult<PyTarget> {
    ferrohalide_codegen_llvm::target::init_host_target();
    Ok(PyTarget {
        inner: Target::jit_from_environment().py()?,
    })
}

#[pyfunction]
fn get_target_from_environment() -> PyResult<PyTarget> {
    ferrohalide_codegen_llvm::target::init_host_target();
    Ok(PyTarget {
        inner: Target::from_environment().py()?,
    })
}

// ---- target queries: Exprs answered when the pipeline is compiled ----------

#[pyfunction]
fn target_arch_is(arch: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let a = Arch(enum_value(arch, &ARCH_ENUM, "halide.TargetArch")? as u8);
    Ok(PyExpr::new(target_queries::target_arch_is(a)))
}

#[pyfunction]
fn target_os_is(os: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let o = Os(enum_value(os, &OS_ENUM, "halide.TargetOS")? as u8);
    Ok(PyExpr::new(target_queries::target_os_is(o)))
}

#[pyfunction]
fn target_bits() -> PyExpr {
    PyExpr::new(target_queries::target_bits())
}

#[pyfunction]
fn target_has_feature(feature: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr::new(target_queries::target_has_feature(feature_of(feature)?)))
}

#[pyfunction]
fn target_natural_vector_size(t: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let t = type_from_py(t)?;
    Ok(PyExpr::new(target_queries::target_natural_vector_size(t)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    ferrohalide_codegen_llvm::target::init_host_target();
    for (cell, name, table, extra) in [
        (&OS_ENUM, "TargetOS", OSES, &[][..]),
        (&ARCH_ENUM, "TargetArch", ARCHES, &[][..]),
        (&TUNE_ENUM, "TargetProcessorTune", TUNES, &[][..]),
        (
            &FEATURE_ENUM,
            "TargetFeature",
            FEATURES,
            &[("HVX", 35u8), ("FeatureEnd", FEATURE_END)][..],
        ),
    ] {
        let e = make_enum(py, name, table, extra)?;
        m.add(name, e.bind(py))?;
        let _ = cell.set(py, e);
    }
    let members: Vec<(&str, u8, &str)> =
        device_api::PYTHON_MEMBERS.iter().map(|(_, n, v)| (*n, *v, "")).collect();
    let e = make_enum(py, "DeviceAPI", &members, &[])?;
    m.add("DeviceAPI", e.bind(py))?;
    let _ = DEVICE_API_ENUM.set(py, e);
    m.add_class::<PyTarget>()?;
    m.add_function(wrap_pyfunction!(target_feature_for_device_api, m)?)?;
    m.add_function(wrap_pyfunction!(host_supports_target_device, m)?)?;
    m.add_function(wrap_pyfunction!(get_host_target, m)?)?;
    m.add_function(wrap_pyfunction!(target_arch_is, m)?)?;
    m.add_function(wrap_pyfunction!(target_os_is, m)?)?;
    m.add_function(wrap_pyfunction!(target_bits, m)?)?;
    m.add_function(wrap_pyfunction!(target_has_feature, m)?)?;
    m.add_function(wrap_pyfunction!(target_natural_vector_size, m)?)?;
    m.add_function(wrap_pyfunction!(get_jit_target_from_environment, m)?)?;
    m.add_function(wrap_pyfunction!(get_target_from_environment, m)?)?;
    Ok(())
}
