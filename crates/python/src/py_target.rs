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

/// `Target`: the machine a pipeline is compiled for: an OS, an architecture,
/// a bit width, an optional processor tuning and a set of features (e.g.
/// `Target("x86-64-linux-avx2")`). Its string form is Halide's target string,
/// `arch-bits-os[-tune][-feature...]`; pass one as `target=` to `realize`,
/// `compile_jit` or `compile_to_*`.
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
    /// `Target()`, `Target(target_string)`, `Target(os, arch, bits[, processor_tune][, features])`:
    /// a target. With no argument, the unknown target (`arch_unknown-0-os_unknown`);
    /// from a string such as `"host"`, `"host-avx2"` or `"arm-64-android"` (an
    /// empty string means the host; a string that does not parse raises);
    /// or from a `TargetOS`, a `TargetArch`, the bit width, an optional
    /// `TargetProcessorTune` and an optional list of `TargetFeature`s.
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

    /// `os`: the target's operating system, a `TargetOS` (settable).
    #[getter]
    fn os(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        member(py, &OS_ENUM, self.inner.os.0)
    }
    #[setter(os)]
    fn set_os(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.os = Os(enum_value(v, &OS_ENUM, "TargetOS")? as u8);
        Ok(())
    }
    /// `arch`: the target's processor architecture, a `TargetArch` (settable).
    #[getter]
    fn arch(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        member(py, &ARCH_ENUM, self.inner.arch.0)
    }
    #[setter(arch)]
    fn set_arch(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.arch = Arch(enum_value(v, &ARCH_ENUM, "TargetArch")? as u8);
        Ok(())
    }
    /// `bits`: the target's bit width (32 or 64; 0 when unknown; settable).
    #[getter]
    fn bits(&self) -> i32 {
        self.inner.bits
    }
    #[setter(bits)]
    fn set_bits(&mut self, v: i32) {
        self.inner.bits = v;
    }
    /// `processor_tune`: the processor the code is tuned for, a
    /// `TargetProcessorTune` (`TuneGeneric` for none; settable).
    #[getter]
    fn processor_tune(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        member(py, &TUNE_ENUM, self.inner.tune.0)
    }
    #[setter(processor_tune)]
    fn set_processor_tune(&mut self, v: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.tune = Tune(enum_value(v, &TUNE_ENUM, "TargetProcessorTune")? as u8);
        Ok(())
    }

    /// `has_feature(feature)`: whether the `TargetFeature` `feature` is set.
    fn has_feature(&self, f: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.has_feature(feature_of(f)?))
    }
    /// `with_feature(feature)`: a copy of this target with `feature` set (this one is unchanged).
    fn with_feature(&self, f: &Bound<'_, PyAny>) -> PyResult<PyTarget> {
        Ok(PyTarget {
            inner: self.inner.with_feature(feature_of(f)?),
        })
    }
    /// `without_feature(feature)`: a copy of this target with `feature` cleared (this one is unchanged).
    fn without_feature(&self, f: &Bound<'_, PyAny>) -> PyResult<PyTarget> {
        Ok(PyTarget {
            inner: self.inner.without_feature(feature_of(f)?),
        })
    }
    /// `set_feature(f, value=True)`: set (or, with `value=False`, clear) the
    /// `TargetFeature` `f` on this target, in place.
    #[pyo3(signature = (f, value=true))]
    fn set_feature(&mut self, f: &Bound<'_, PyAny>, value: bool) -> PyResult<()> {
        self.inner.set_feature(feature_of(f)?, value);
        Ok(())
    }
    /// `set_features(features, value=True)`: set (or, with `value=False`, clear)
    /// every `TargetFeature` in the list `features`, in place.
    #[pyo3(signature = (features, value=true))]
    fn set_features(&mut self, features: &Bound<'_, PyAny>, value: bool) -> PyResult<()> {
        for f in features_of(features)? {
            self.inner.set_feature(f, value);
        }
        Ok(())
    }
    /// `features_all_of(features)`: whether every `TargetFeature` in the list is set.
    fn features_all_of(&self, features: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.features_all_of(&features_of(features)?))
    }
    /// `features_any_of(features)`: whether at least one `TargetFeature` in the list is set.
    fn features_any_of(&self, features: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.features_any_of(&features_of(features)?))
    }
    /// `natural_vector_size(t)`: the number of lanes of type `t` that fill one
    /// native vector register of this target (16 bytes on most targets; 32 or
    /// 64 on x86 with AVX/AVX2/AVX-512; 128 on Hexagon with HVX), a good
    /// `vectorize` factor.
    fn natural_vector_size(&self, t: &Bound<'_, PyAny>) -> PyResult<i32> {
        Ok(self.inner.natural_vector_size(type_from_py(t)?))
    }
    /// `has_gpu_feature()`: whether a GPU compute feature is set (CUDA, OpenCL,
    /// Metal, D3D12Compute, Vulkan or WebGPU).
    fn has_gpu_feature(&self) -> bool {
        self.inner.has_gpu_feature()
    }
    /// `has_large_buffers()`: whether the `LargeBuffers` feature is set
    /// (buffers may then exceed 2^31 - 1 bytes on 64-bit targets).
    fn has_large_buffers(&self) -> bool {
        self.inner.has_large_buffers()
    }
    /// `maximum_buffer_size()`: the largest buffer size in bytes this target
    /// allows: 2^63 - 1 for a 64-bit target with `LargeBuffers`, 2^31 - 1 otherwise.
    fn maximum_buffer_size(&self) -> i64 {
        self.inner.maximum_buffer_size()
    }
    /// `supported()`: whether the JIT can run code for this target on this machine.
    fn supported(&self) -> bool {
        ferrohalide_codegen_llvm::JitTarget::for_target(&self.inner).is_ok()
    }
    /// `Target.validate_target_string(s)`: whether `s` is a valid target string
    /// naming an architecture, an OS and a bit width (the empty string is not valid).
    #[staticmethod]
    fn validate_target_string(s: &str) -> bool {
        Target::validate(s)
    }
    /// `to_string()`: the target string, e.g. `"x86-64-linux-avx-avx2"` (the same as `str(target)`).
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
    /// `supports_device_api(api)`: whether code scheduled on the `DeviceAPI`
    /// `api` can be compiled for this target (`None` and `Host` always can;
    /// `Default_GPU` needs a GPU feature; other APIs need their feature).
    fn supports_device_api(&self, api: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(device_api::supports_device_api(&self.inner, device_api_of(api)?))
    }
    /// `supports_type(type, device=None)`: whether values of `type` can be used
    /// on this target (64-bit types are not available on some GPU APIs); with
    /// a `DeviceAPI` `device`, whether they can be used on that device.
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

/// `target_feature_for_device_api(api)`: the `TargetFeature` that enables the
/// `DeviceAPI` `api` (`TargetFeature.FeatureEnd` if none does).
#[pyfunction]
fn target_feature_for_device_api(py: Python<'_>, api: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let f = device_api_of(api)?.target_feature().map_or(FEATURE_END, |f| f.0);
    member(py, &FEATURE_ENUM, f)
}

/// `host_supports_target_device(t)`: whether this machine can run code for the
/// device the `Target` `t` uses: true when `t` needs no device; false otherwise,
/// since ferrohalide has no GPU runtime (a Metal target off macOS raises).
#[pyfunction]
fn host_supports_target_device(t: &PyTarget) -> PyResult<bool> {
    device_api::host_supports_target_device(&t.inner).py()
}

/// `get_host_target()`: the `Target` of the machine this runs on, with the
/// processor features it has detected.
#[pyfunction]
fn get_host_target() -> PyTarget {
    ferrohalide_codegen_llvm::target::init_host_target();
    PyTarget {
        inner: Target::host(),
    }
}

/// `get_jit_target_from_environment()`: the target JIT compilation uses: the
/// `HL_JIT_TARGET` environment variable if set (it must match the host's OS,
/// architecture and bit width, or this raises), the host target otherwise;
/// the `JIT` feature is always added.
#[pyfunction]
fn get_jit_target_from_environment() -> PyResult<PyTarget> {
    ferrohalide_codegen_llvm::target::init_host_target();
    Ok(PyTarget {
        inner: Target::jit_from_environment().py()?,
    })
}

/// `get_target_from_environment()`: the target named by the `HL_TARGET`
/// environment variable, or the host target if it is unset or empty.
#[pyfunction]
fn get_target_from_environment() -> PyResult<PyTarget> {
    ferrohalide_codegen_llvm::target::init_host_target();
    Ok(PyTarget {
        inner: Target::from_environment().py()?,
    })
}

// ---- target queries: Exprs answered when the pipeline is compiled ----------

/// `target_arch_is(arch)`: a boolean `Expr`, true when the pipeline is compiled
/// for the `TargetArch` `arch`; it is resolved at compile time, so it can pick
/// between code paths with `select`.
#[pyfunction]
fn target_arch_is(arch: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let a = Arch(enum_value(arch, &ARCH_ENUM, "halide.TargetArch")? as u8);
    Ok(PyExpr::new(target_queries::target_arch_is(a)))
}

/// `target_os_is(os)`: a boolean `Expr`, true when the pipeline is compiled for
/// the `TargetOS` `os` (resolved at compile time).
#[pyfunction]
fn target_os_is(os: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let o = Os(enum_value(os, &OS_ENUM, "halide.TargetOS")? as u8);
    Ok(PyExpr::new(target_queries::target_os_is(o)))
}

/// `target_bits()`: an int32 `Expr` for the bit width of the target the pipeline
/// is compiled for (resolved at compile time).
#[pyfunction]
fn target_bits() -> PyExpr {
    PyExpr::new(target_queries::target_bits())
}

/// `target_has_feature(feature)`: a boolean `Expr`, true when the target the
/// pipeline is compiled for has the `TargetFeature` `feature` (resolved at
/// compile time).
#[pyfunction]
fn target_has_feature(feature: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(PyExpr::new(target_queries::target_has_feature(feature_of(feature)?)))
}

/// `target_natural_vector_size(t)`: an int32 `Expr` for the natural vector size
/// of type `t` on the target the pipeline is compiled for (resolved at compile
/// time; see `Target.natural_vector_size`).
#[pyfunction]
fn target_natural_vector_size(t: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let t = type_from_py(t)?;
    Ok(PyExpr::new(target_queries::target_natural_vector_size(t)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    ferrohalide_codegen_llvm::target::init_host_target();
    // The enums are built at run time, so their docstrings are set here.
    for (cell, name, table, extra, doc) in [
        (
            &OS_ENUM,
            "TargetOS",
            OSES,
            &[][..],
            "`TargetOS`: the operating system of a `Target` (`Linux`, `Windows`, \
             `OSX`, `Android`, ...; `OSUnknown` for none).",
        ),
        (
            &ARCH_ENUM,
            "TargetArch",
            ARCHES,
            &[][..],
            "`TargetArch`: the processor architecture of a `Target` (`X86`, `ARM`, \
             `Hexagon`, `WebAssembly`, ...; `ArchUnknown` for none).",
        ),
        (
            &TUNE_ENUM,
            "TargetProcessorTune",
            TUNES,
            &[][..],
            "`TargetProcessorTune`: the specific processor a `Target` tunes its code \
             for (`TuneGeneric` for none).",
        ),
        (
            &FEATURE_ENUM,
            "TargetFeature",
            FEATURES,
            &[("HVX", 35u8), ("FeatureEnd", FEATURE_END)][..],
            "`TargetFeature`: an optional feature of a `Target`: an instruction-set \
             extension (`AVX2`, `SSE41`, ...), a GPU API (`CUDA`, `OpenCL`, ...) or a \
             code-generation option (`Debug`, `NoAsserts`, `LargeBuffers`, ...). \
             `FeatureEnd` is not a feature but marks the end of the list.",
        ),
    ] {
        let e = make_enum(py, name, table, extra)?;
        e.bind(py).setattr("__doc__", doc)?;
        m.add(name, e.bind(py))?;
        let _ = cell.set(py, e);
    }
    let members: Vec<(&str, u8, &str)> =
        device_api::PYTHON_MEMBERS.iter().map(|(_, n, v)| (*n, *v, "")).collect();
    let e = make_enum(py, "DeviceAPI", &members, &[])?;
    e.bind(py).setattr(
        "__doc__",
        "`DeviceAPI`: where a Func's loops run: `None` (wherever its parent runs), \
         `Host` (the CPU), `Default_GPU` (the GPU API the target enables), or a \
         specific API (`CUDA`, `OpenCL`, `Metal`, `Vulkan`, `Hexagon`). Passed as \
         `device_api=` to the GPU scheduling directives (`gpu_blocks`, `gpu_threads`, \
         `gpu_tile`, ...), `copy_to_device` and `define_extern`.",
    )?;
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
