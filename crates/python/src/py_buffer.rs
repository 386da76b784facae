//! `hl.Buffer` and `hl.BufferDimension`: Halide's Python Buffer API over
//! `ferrohalide_core::buffer::Buffer`.
//!
//! - Construction from any buffer-protocol object (NumPy arrays, bytearray,
//!   memoryview, another `hl.Buffer`) is zero-copy: the exporter's view is
//!   held by the core Buffer's `keepalive` until the last Buffer sharing the
//!   memory goes away.
//! - `hl.Buffer` exports the buffer protocol itself, so `np.asarray(buf)` and
//!   `memoryview(buf)` are zero-copy and writable.
//! - Axis convention (as Halide's bindings): NumPy's last axis is Halide's
//!   dimension 0, unless `reverse_axes=False`. Exporting always reverses.
//!
//! Shape operations (crop, slice, copy, fill, ...) live in the core Buffer;
//! this file converts arguments, calls core and raises the Python exception
//! types the reference raises.
//!
//! Needs the Python buffer-protocol C API (`Py_buffer`), which PyO3 exposes
//! without abi3, or with abi3 from `abi3-py311` on (not with `abi3-py39`).

use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple};
use pyo3::{ffi, IntoPyObjectExt};

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Type, TypeCode};
use ferrohalide_core::Error;

use ferrohalide_core::lang::func::image_call;

use crate::errors::to_pyerr;
use crate::py_expr::{expr_to_py, py_to_expr};
use crate::py_type::{type_from_py, type_to_py, PyType};
use ferrohalide_runtime::halide_dimension_t;

// ---------------------------------------------------------------------------
// Integration points with the rest of the bindings.
// ---------------------------------------------------------------------------

/// `hl.HalideError` with Halide's "Error: ..." text.
fn halide_error(_py: Python<'_>, msg: impl Into<String>) -> PyErr {
    to_pyerr(Error::user(msg.into()))
}

/// Map a core error to the Python exception type Halide would raise.
fn core_err(_py: Python<'_>, e: Error) -> PyErr {
    to_pyerr(e)
}

trait CoreResultExt<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}
impl<T> CoreResultExt<T> for ferrohalide_core::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| core_err(py, e))
    }
}

/// The element type named by an `hl.Type` argument, or None if `obj` is not one.
fn opt_type(obj: &Bound<'_, PyAny>) -> Option<Type> {
    obj.extract::<PyRef<PyType>>().ok().map(|t| t.inner)
}

fn type_arg(obj: &Bound<'_, PyAny>) -> PyResult<Type> {
    type_from_py(obj)
}

fn type_to_pyobj(py: Python<'_>, ty: Type) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, type_to_py(ty))?.into_any())
}

/// `buf[x, y]` with Expr (or Var, FuncRef, ...) arguments: an Expr that reads the buffer.
fn buffer_call_expr(
    py: Python<'_>,
    buf: &Buffer,
    args: &[Bound<'_, PyAny>],
) -> PyResult<Py<PyAny>> {
    let exprs = args.iter().map(py_to_expr).collect::<PyResult<Vec<_>>>()?;
    let e = image_call(buf, exprs).py(py)?;
    expr_to_py(py, e)
}

// ---------------------------------------------------------------------------
// Element values.
// ---------------------------------------------------------------------------

fn type_name(ty: Type) -> String {
    crate::py_type::type_name(ty)
}

fn supported(ty: Type) -> bool {
    ty.lanes == 1
        && matches!(
            (ty.code, ty.bits),
            (TypeCode::UInt, 1 | 8 | 16 | 32 | 64)
                | (TypeCode::Int, 8 | 16 | 32 | 64)
                | (TypeCode::Float, 16 | 32 | 64)
        )
}

fn unsupported() -> PyErr {
    PyValueError::new_err("Unsupported Buffer<> type.")
}

/// Python struct-module format character for an element type.
fn format_of(ty: Type) -> PyResult<&'static CStr> {
    Ok(match (ty.code, ty.bits) {
        _ if ty.lanes != 1 => return Err(unsupported()),
        (TypeCode::UInt, 1) => c"?",
        (TypeCode::Int, 8) => c"b",
        (TypeCode::UInt, 8) => c"B",
        (TypeCode::Int, 16) => c"h",
        (TypeCode::UInt, 16) => c"H",
        (TypeCode::Int, 32) => c"i",
        (TypeCode::UInt, 32) => c"I",
        (TypeCode::Int, 64) => c"q",
        (TypeCode::UInt, 64) => c"Q",
        (TypeCode::Float, 16) => c"e",
        (TypeCode::Float, 32) => c"f",
        (TypeCode::Float, 64) => c"d",
        _ => return Err(unsupported()),
    })
}

/// Element type for a buffer-protocol format string (native byte order).
fn type_of_format(fmt: &str, itemsize: isize) -> PyResult<Type> {
    let f = fmt.trim_start_matches(['@', '=']);
    let f = if cfg!(target_endian = "little") {
        f.trim_start_matches('<')
    } else {
        f.trim_start_matches(['>', '!'])
    };
    let ty = match f {
        "?" => Type::bool(),
        "b" => Type::int(8),
        "B" => Type::uint(8),
        "h" => Type::int(16),
        "H" => Type::uint(16),
        "i" => Type::int(32),
        "I" => Type::uint(32),
        "l" | "q" => Type::int(64),
        // Halide 21 rejects "L" (NumPy's uint64 on Linux) by accident; we accept it.
        "L" | "Q" => Type::uint(64),
        "e" => Type::float(16),
        "f" => Type::float(32),
        "d" => Type::float(64),
        _ => return Err(unsupported()),
    };
    if ty.bytes() as isize != itemsize {
        return Err(unsupported());
    }
    Ok(ty)
}

/// Read the element at `p` as a Python object.
///
/// # Safety
/// `p` must point at a valid element of type `ty`.
unsafe fn read_value(py: Python<'_>, ty: Type, p: *const u8) -> PyResult<Py<PyAny>> {
    unsafe {
        match (ty.code, ty.bits) {
            _ if ty.lanes != 1 => Err(unsupported()),
            (TypeCode::UInt, 1) => (p.read() != 0).into_py_any(py),
            (TypeCode::Int, 8) => (p as *const i8).read().into_py_any(py),
            (TypeCode::Int, 16) => (p as *const i16).read_unaligned().into_py_any(py),
            (TypeCode::Int, 32) => (p as *const i32).read_unaligned().into_py_any(py),
            (TypeCode::Int, 64) => (p as *const i64).read_unaligned().into_py_any(py),
            (TypeCode::UInt, 8) => p.read().into_py_any(py),
            (TypeCode::UInt, 16) => (p as *const u16).read_unaligned().into_py_any(py),
            (TypeCode::UInt, 32) => (p as *const u32).read_unaligned().into_py_any(py),
            (TypeCode::UInt, 64) => (p as *const u64).read_unaligned().into_py_any(py),
            (TypeCode::Float, 16) => {
                ferrohalide_runtime::half::f16_bits_to_f64((p as *const u16).read_unaligned())
                    .into_py_any(py)
            }
            (TypeCode::Float, 32) => ((p as *const f32).read_unaligned() as f64).into_py_any(py),
            (TypeCode::Float, 64) => (p as *const f64).read_unaligned().into_py_any(py),
            _ => Err(unsupported()),
        }
    }
}

fn cast_error(value: &Bound<'_, PyAny>, ty: Type) -> PyErr {
    let tn = value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyRuntimeError::new_err(format!(
        "Unable to cast Python instance of type <class '{tn}'> to a Buffer element of type {}",
        type_name(ty)
    ))
}

/// Convert a Python value to the bytes of one element of type `ty`, with
/// the reference's rules: integer buffers take ints in range (no floats),
/// float buffers take anything float() takes, bool buffers take truth values.
fn encode_value(value: &Bound<'_, PyAny>, ty: Type) -> PyResult<([u8; 8], usize)> {
    if !supported(ty) {
        return Err(unsupported());
    }
    let mut out = [0u8; 8];
    let n = ty.bytes();
    match ty.code {
        TypeCode::UInt if ty.bits == 1 => {
            let ok = value.is_none()
                || value.is_instance_of::<PyBool>()
                || value.is_instance_of::<PyInt>()
                || value.is_instance_of::<PyFloat>()
                || value
                    .get_type()
                    .name()
                    .map(|n| n.to_string() == "bool")
                    .unwrap_or(false);
            if !ok {
                return Err(cast_error(value, ty));
            }
            out[0] = value.is_truthy()? as u8;
        }
        TypeCode::Int | TypeCode::UInt => {
            if value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyString>() {
                return Err(cast_error(value, ty));
            }
            let v: i128 = value.extract().map_err(|_| cast_error(value, ty))?;
            if v < ty.min_int() || v > ty.max_int() {
                return Err(cast_error(value, ty));
            }
            out[..n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        TypeCode::Float => {
            if value.is_instance_of::<PyString>() {
                return Err(cast_error(value, ty));
            }
            let v: f64 = value.extract().map_err(|_| cast_error(value, ty))?;
            match ty.bits {
                16 => out[..2].copy_from_slice(
                    &ferrohalide_runtime::half::f32_to_f16_bits(v as f32).to_le_bytes(),
                ),
                32 => out[..4].copy_from_slice(&(v as f32).to_le_bytes()),
                _ => out.copy_from_slice(&v.to_le_bytes()),
            }
        }
        _ => return Err(unsupported()),
    }
    Ok((out, n))
}

// ---------------------------------------------------------------------------
// Keeping an imported buffer-protocol view alive.
// ---------------------------------------------------------------------------

/// A `Py_buffer` obtained with `PyObject_GetBuffer`, released (with the GIL,
/// see `gil::release_later`) when the last core Buffer using its memory is
/// dropped.
struct HeldView(Option<Box<ffi::Py_buffer>>);

// SAFETY: the view is only touched again when released, with the GIL.
unsafe impl Send for HeldView {}
unsafe impl Sync for HeldView {}

impl Drop for HeldView {
    fn drop(&mut self) {
        if unsafe { ffi::Py_IsInitialized() } == 0 {
            return;
        }
        if let Some(view) = self.0.take() {
            let view = HeldView(Some(view));
            crate::gil::release_later(Box::new(move || {
                let mut view = view;
                if let Some(mut v) = view.0.take() {
                    unsafe { ffi::PyBuffer_Release(&mut *v) };
                }
            }));
        }
    }
}

/// Wrap the memory of a buffer-protocol object (zero-copy, writable).
fn import_buffer(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    name: Option<String>,
    reverse_axes: bool,
) -> PyResult<Buffer> {
    import_buffer_with(py, obj, name, reverse_axes, true)
}

/// Wrap the memory of a buffer-protocol object (zero-copy); a read-only
/// object is accepted unless `writable` (then the exporter's error).
pub(crate) fn import_buffer_with(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    name: Option<String>,
    reverse_axes: bool,
    writable: bool,
) -> PyResult<Buffer> {
    let mut view: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
    let flags = if writable {
        ffi::PyBUF_RECORDS
    } else {
        ffi::PyBUF_RECORDS_RO
    };
    let rc = unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, flags) };
    if rc != 0 {
        return Err(PyErr::fetch(py));
    }
    crate::gil::release_pending(py);
    let held = HeldView(Some(view));
    let Some(v) = held.0.as_deref() else {
        return Err(PyValueError::new_err("buffer view lost"));
    };
    let fmt = if v.format.is_null() {
        "B".to_string()
    } else {
        unsafe { CStr::from_ptr(v.format) }
            .to_string_lossy()
            .into_owned()
    };
    let ty = type_of_format(&fmt, v.itemsize)?;
    let nd = v.ndim as usize;
    let mut dims = vec![halide_dimension_t::default(); nd];
    for i in 0..nd {
        let extent = unsafe { *v.shape.add(i) };
        let stride_bytes = if v.strides.is_null() {
            // C-contiguous
            (i + 1..nd)
                .map(|j| unsafe { *v.shape.add(j) })
                .product::<isize>()
                * v.itemsize
        } else {
            unsafe { *v.strides.add(i) }
        };
        let stride = stride_bytes / v.itemsize;
        if extent > i32::MAX as isize || stride < i32::MIN as isize || stride > i32::MAX as isize {
            return Err(PyValueError::new_err(
                "Out of range dimensions in buffer conversion.",
            ));
        }
        let dst = if reverse_axes { nd - 1 - i } else { i };
        dims[dst] = halide_dimension_t {
            min: 0,
            extent: extent as i32,
            stride: stride as i32,
            flags: 0,
        };
    }
    let host = v.buf as *mut u8;
    let name = name.unwrap_or_else(ferrohalide_core::buffer::unique_buffer_name);
    Ok(Buffer::from_parts(
        name,
        ty,
        host,
        dims,
        Some(Arc::new(held)),
    ))
}

// ---------------------------------------------------------------------------
// hl.BufferDimension
// ---------------------------------------------------------------------------

/// One dimension of a Buffer's shape, from `buf.dim(i)`: its min, extent
/// and stride (in elements) as they were when `dim` was called; it is not
/// constructed directly.
#[pyclass(name = "BufferDimension", module = "ferrohalide", frozen)]
#[derive(Clone)]
pub struct PyBufferDimension {
    pub dim: halide_dimension_t,
}

#[pymethods]
impl PyBufferDimension {
    /// `min()`: the smallest coordinate along this dimension.
    fn min(&self) -> i32 {
        self.dim.min
    }
    /// `extent()`: the number of elements along this dimension.
    fn extent(&self) -> i32 {
        self.dim.extent
    }
    /// `stride()`: the distance in memory, in elements, between neighbours
    /// along this dimension.
    fn stride(&self) -> i32 {
        self.dim.stride
    }
    /// `max()`: the largest coordinate along this dimension
    /// (min + extent - 1).
    fn max(&self) -> i32 {
        self.dim.min.wrapping_add(self.dim.extent).wrapping_sub(1)
    }
    fn __repr__(&self) -> String {
        format!(
            "<halide.BufferDimension min={} extent={} stride={}>",
            self.dim.min, self.dim.extent, self.dim.stride
        )
    }
}

// ---------------------------------------------------------------------------
// hl.Buffer
// ---------------------------------------------------------------------------

/// An image or array in memory, which pipelines read and realize into.
/// `Buffer(type, sizes, name="")` allocates a new zero-filled buffer with
/// dimension 0 innermost, `Buffer(type, sizes, storage_order, name="")` one
/// whose dimension `storage_order[0]` is innermost, and
/// `Buffer(obj, name="", reverse_axes=True)` wraps the memory of a NumPy
/// array, `bytearray`, `memoryview` or other `hl.Buffer` without copying
/// (NumPy's last axis becomes dimension 0 unless `reverse_axes=False`; the
/// mins of a wrapped `hl.Buffer` are reset to 0).
/// `Buffer()` is undefined. `np.asarray(buf)` shares the buffer's memory;
/// `buf[x, y]` reads or writes one element with int coordinates, and is an
/// Expr reading the buffer with Expr coordinates.
#[pyclass(name = "Buffer", module = "ferrohalide", frozen)]
pub struct PyBuffer {
    pub inner: Buffer,
    /// False for `hl.Buffer()`, Halide's undefined buffer.
    pub defined: bool,
    host_dirty: AtomicBool,
    /// The `halide_buffer_t` `_get_raw_halide_buffer_t()` hands out
    /// (rebuilt from the current shape at each call; freed with the object).
    raw: std::sync::Mutex<Option<Box<RawDescriptor>>>,
}

/// A `halide_buffer_t` and the dimensions it points at.
struct RawDescriptor {
    buffer: ferrohalide_runtime::halide_buffer_t,
    dims: Vec<ferrohalide_runtime::halide_dimension_t>,
}

// SAFETY: the descriptor's pointers address the buffer's own storage and
// `dims`, which live as long as the PyBuffer; it is only touched under the
// mutex.
unsafe impl Send for RawDescriptor {}

impl PyBuffer {
    pub fn new(inner: Buffer) -> PyBuffer {
        PyBuffer {
            inner,
            defined: true,
            host_dirty: AtomicBool::new(false),
            raw: Default::default(),
        }
    }

    pub(crate) fn undefined() -> PyBuffer {
        let inner = Buffer::from_parts(
            String::new(),
            Type::uint(8),
            std::ptr::null_mut(),
            vec![],
            None,
        );
        PyBuffer {
            inner,
            defined: false,
            host_dirty: AtomicBool::new(false),
            raw: Default::default(),
        }
    }

    /// The core buffer, or HalideError if this is `hl.Buffer()`.
    fn buf(&self, py: Python<'_>, method: &str) -> PyResult<&Buffer> {
        if self.defined {
            Ok(&self.inner)
        } else {
            Err(halide_error(
                py,
                format!("Undefined buffer calling method {method}"),
            ))
        }
    }

    fn wrap(py: Python<'_>, b: Buffer) -> PyResult<Py<PyBuffer>> {
        wrap_buffer(py, b)
    }

    /// The byte pointer of the element at `coords`, with the reference's
    /// errors (ValueError for the wrong count, IndexError out of range).
    fn element_ptr(&self, py: Python<'_>, coords: &[i32]) -> PyResult<*mut u8> {
        let b = self.buf(py, "operator()")?;
        let c = b.read();
        if coords.len() != c.dims.len() {
            return Err(PyValueError::new_err("Incorrect number of dimensions."));
        }
        let mut off: isize = 0;
        for (i, (d, &x)) in c.dims.iter().zip(coords).enumerate() {
            if x < d.min || x as i64 > d.min as i64 + d.extent as i64 - 1 {
                return Err(PyIndexError::new_err(format!(
                    "index {x} is out of bounds for axis {i} with min={}, extent={}",
                    d.min, d.extent
                )));
            }
            off += (x - d.min) as isize * d.stride as isize;
        }
        if c.host.is_null() {
            return Err(halide_error(
                py,
                format!(
                    "Buffer {} has no host memory (it is a bounds query)",
                    c.name
                ),
            ));
        }
        Ok(c.host.wrapping_offset(off * c.ty.bytes() as isize))
    }
}

/// What an exported `Py_buffer` points at, freed in `__releasebuffer__`.
struct ExportHolder {
    shape_strides: Vec<isize>,
    _storage: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// Wrap a core Buffer as a Python `hl.Buffer` (e.g. the result of realize()).
pub fn wrap_buffer(py: Python<'_>, buffer: Buffer) -> PyResult<Py<PyBuffer>> {
    Py::new(py, PyBuffer::new(buffer))
}

/// Register `Buffer` and `BufferDimension` in the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBuffer>()?;
    m.add_class::<PyBufferDimension>()?;
    Ok(())
}

fn is_int_like(o: &Bound<'_, PyAny>) -> bool {
    o.is_instance_of::<PyInt>()
        || (!o.is_instance_of::<PyFloat>()
            && o.hasattr("__index__").unwrap_or(false)
            && o.extract::<i128>().is_ok())
}

/// Split a subscript into its items (a bare int, a tuple or a list).
fn index_items<'py>(key: &Bound<'py, PyAny>) -> Vec<Bound<'py, PyAny>> {
    if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = key.cast::<PyList>() {
        l.iter().collect()
    } else {
        vec![key.clone()]
    }
}

fn int_coords(py: Python<'_>, items: &[Bound<'_, PyAny>]) -> PyResult<Option<Vec<i32>>> {
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        if !is_int_like(it) {
            return Ok(None);
        }
        let v: i128 = it.extract()?;
        if v < i32::MIN as i128 || v > i32::MAX as i128 {
            return Err(halide_error(
                py,
                "Args to a call to an Image must be representable as 32-bit integers.",
            ));
        }
        out.push(v as i32);
    }
    Ok(Some(out))
}

fn extract_int_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i32>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of ints"
        )));
    }
    let seq = obj
        .cast::<PySequence>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a sequence of ints")))?;
    let mut out = Vec::new();
    for it in seq.try_iter()? {
        let it = it?;
        if it.is_instance_of::<PyFloat>() {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a sequence of ints"
            )));
        }
        out.push(
            it.extract::<i32>()
                .map_err(|_| PyTypeError::new_err(format!("{what} must be a sequence of ints")))?,
        );
    }
    Ok(out)
}

fn extract_rect(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(i32, i32)>> {
    let seq = obj
        .cast::<PySequence>()
        .map_err(|_| PyTypeError::new_err("rect must be a sequence of (min, extent) pairs"))?;
    let mut out = Vec::new();
    for it in seq.try_iter()? {
        let p: (i32, i32) = it?
            .extract()
            .map_err(|_| PyTypeError::new_err("rect must be a sequence of (min, extent) pairs"))?;
        out.push(p);
    }
    Ok(out)
}

fn constructor_error() -> PyErr {
    PyTypeError::new_err(
        "__init__(): incompatible constructor arguments. The following argument types are supported:\n\
         \x20   1. Buffer(buffer: Buffer-protocol object, name: str = '', reverse_axes: bool = True)\n\
         \x20   2. Buffer()\n\
         \x20   3. Buffer(arg0: Buffer)\n\
         \x20   4. Buffer(type: Type, sizes: list[int], name: str = '')\n\
         \x20   5. Buffer(type: Type, sizes: list[int], storage_order: list[int], name: str = '')",
    )
}

pub(crate) fn supports_buffer_protocol(obj: &Bound<'_, PyAny>) -> bool {
    unsafe { ffi::PyObject_CheckBuffer(obj.as_ptr()) != 0 }
}

fn opt_name(name: Option<String>) -> Option<String> {
    name.filter(|n| !n.is_empty())
}

#[pymethods]
impl PyBuffer {
    #[new]
    #[pyo3(signature = (*args, **kwargs))]
    fn py_new(
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyBuffer> {
        // Gather arguments by position / keyword, then pick the overload the
        // way the reference does.
        let pos: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let mut kw: Vec<(String, Bound<'_, PyAny>)> = Vec::new();
        if let Some(k) = kwargs {
            for (key, v) in k.iter() {
                kw.push((key.extract::<String>()?, v));
            }
        }
        let get_kw = |n: &str| kw.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let kw_names: Vec<&str> = kw.iter().map(|(k, _)| k.as_str()).collect();
        if pos.is_empty() && kw.is_empty() {
            return Ok(PyBuffer::undefined());
        }
        let first = pos
            .first()
            .cloned()
            .or_else(|| get_kw("type"))
            .or_else(|| get_kw("buffer"));
        let Some(first) = first else {
            return Err(constructor_error());
        };

        // Overloads 4/5: (type, sizes[, storage_order], name).
        if let Some(ty) = if get_kw("buffer").is_some() {
            None
        } else {
            opt_type(&first)
        } {
            if !kw_names
                .iter()
                .all(|k| ["type", "sizes", "storage_order", "name"].contains(k))
                || pos.len() > 4
            {
                return Err(constructor_error());
            }
            let arg = |i: usize, n: &str| pos.get(i).cloned().or_else(|| get_kw(n));
            let sizes = arg(1, "sizes").ok_or_else(constructor_error)?;
            let sizes = extract_int_list(&sizes, "sizes").map_err(|_| constructor_error())?;
            // Third positional: a name (str) or a storage order.
            let (order, name) = match pos.get(2) {
                Some(p) if p.is_instance_of::<PyString>() => {
                    if pos.len() > 3 {
                        return Err(constructor_error());
                    }
                    (get_kw("storage_order"), Some(p.clone()))
                }
                Some(p) => (
                    Some(p.clone()),
                    pos.get(3).cloned().or_else(|| get_kw("name")),
                ),
                None => (get_kw("storage_order"), get_kw("name")),
            };
            let name: Option<String> = match name {
                Some(n) => Some(n.extract::<String>().map_err(|_| constructor_error())?),
                None => None,
            };
            if !supported(ty) && ty.code != TypeCode::Handle && ty.code != TypeCode::BFloat {
                return Err(unsupported());
            }
            if ty.lanes != 1 {
                return Err(PyValueError::new_err(
                    "Buffers must have a scalar element type",
                ));
            }
            let b = match order {
                Some(o) => {
                    let order =
                        extract_int_list(&o, "storage_order").map_err(|_| constructor_error())?;
                    let order: Vec<usize> = order.iter().map(|&o| o.max(0) as usize).collect();
                    Buffer::new_with_storage_order(ty, &sizes, &order, opt_name(name)).py(py)?
                }
                None => Buffer::new(ty, &sizes, opt_name(name)).py(py)?,
            };
            return Ok(PyBuffer::new(b));
        }

        // Overloads 1/3: (buffer, name="", reverse_axes=True).
        if !kw_names
            .iter()
            .all(|k| ["buffer", "name", "reverse_axes"].contains(k))
            || pos.len() > 3
        {
            return Err(constructor_error());
        }
        let name = match pos.get(1).cloned().or_else(|| get_kw("name")) {
            Some(n) => Some(n.extract::<String>().map_err(|_| constructor_error())?),
            None => None,
        };
        let reverse_axes = match pos.get(2).cloned().or_else(|| get_kw("reverse_axes")) {
            Some(r) => r.extract::<bool>().map_err(|_| constructor_error())?,
            None => true,
        };
        if let Ok(other) = first.cast::<PyBuffer>() {
            // Halide 21 routes hl.Buffer(buf) through the buffer protocol:
            // same memory, mins reset to 0, axes reversed twice (i.e. kept)
            // unless reverse_axes=False.
            let other = other.get();
            let src = other.buf(py, "Buffer")?;
            let (host, mut dims, ty, keep) = {
                let c = src.read();
                (c.host, c.dims.clone(), c.ty, c.keepalive.clone())
            };
            if host.is_null() {
                return Err(PyBufferError::new_err(
                    "Cannot convert a Buffer<> with null host ptr to a Python buffer.",
                ));
            }
            format_of(ty)?;
            for d in dims.iter_mut() {
                d.min = 0;
            }
            if !reverse_axes {
                dims.reverse();
            }
            let name = opt_name(name).unwrap_or_else(ferrohalide_core::buffer::unique_buffer_name);
            let b = PyBuffer::new(Buffer::from_parts(name, ty, host, dims, keep));
            b.host_dirty.store(true, Ordering::Relaxed);
            return Ok(b);
        }
        if !supports_buffer_protocol(&first) {
            return Err(constructor_error());
        }
        let b = PyBuffer::new(import_buffer(py, &first, opt_name(name), reverse_axes)?);
        b.host_dirty.store(true, Ordering::Relaxed);
        Ok(b)
    }

    // ----- buffer protocol -----

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("View is null"));
        }
        let this = slf.get();
        let (host, dims, ty, keepalive) = {
            let c = this.inner.read();
            (c.host, c.dims.clone(), c.ty, c.keepalive.clone())
        };
        if !this.defined || host.is_null() {
            return Err(PyBufferError::new_err(
                "Cannot convert a Buffer<> with null host ptr to a Python buffer.",
            ));
        }
        let fmt = format_of(ty)?;
        let bytes = ty.bytes() as isize;
        let nd = dims.len();
        // shape then strides, NumPy order (reversed).
        let mut shape_strides: Vec<isize> = vec![0; 2 * nd];
        for (i, d) in dims.iter().enumerate() {
            let dst = nd - 1 - i;
            shape_strides[dst] = d.extent as isize;
            shape_strides[nd + dst] = d.stride as isize * bytes;
        }
        let len: isize = shape_strides[..nd].iter().product::<isize>() * bytes;
        // Contiguity requested by the consumer.
        let c_contig = {
            let mut expect = bytes;
            let mut ok = true;
            for i in (0..nd).rev() {
                if shape_strides[i] > 1 && shape_strides[nd + i] != expect {
                    ok = false;
                }
                expect *= shape_strides[i];
            }
            ok
        };
        let f_contig = {
            let mut expect = bytes;
            let mut ok = true;
            for i in 0..nd {
                if shape_strides[i] > 1 && shape_strides[nd + i] != expect {
                    ok = false;
                }
                expect *= shape_strides[i];
            }
            ok
        };
        if (flags & ffi::PyBUF_C_CONTIGUOUS) == ffi::PyBUF_C_CONTIGUOUS && !c_contig {
            return Err(PyBufferError::new_err("hl.Buffer is not C-contiguous"));
        }
        if (flags & ffi::PyBUF_F_CONTIGUOUS) == ffi::PyBUF_F_CONTIGUOUS && !f_contig {
            return Err(PyBufferError::new_err(
                "hl.Buffer is not Fortran-contiguous",
            ));
        }
        if (flags & ffi::PyBUF_ANY_CONTIGUOUS) == ffi::PyBUF_ANY_CONTIGUOUS
            && !c_contig
            && !f_contig
        {
            return Err(PyBufferError::new_err("hl.Buffer is not contiguous"));
        }
        if (flags & ffi::PyBUF_STRIDES) != ffi::PyBUF_STRIDES && !c_contig {
            return Err(PyBufferError::new_err(
                "hl.Buffer is not C-contiguous; request strides",
            ));
        }
        // The view owns its shape/strides and a reference to the storage, so
        // it stays valid even if the Buffer is later deallocated or cropped.
        let holder: Box<ExportHolder> = Box::new(ExportHolder {
            shape_strides,
            _storage: keepalive,
        });
        let base = holder.shape_strides.as_ptr() as *mut isize;
        unsafe {
            (*view).buf = host as *mut c_void;
            (*view).len = len;
            (*view).readonly = 0;
            (*view).itemsize = bytes;
            (*view).format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT {
                fmt.as_ptr() as *mut _
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = nd as c_int;
            (*view).shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND {
                base
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES {
                base.add(nd)
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = Box::into_raw(holder) as *mut c_void;
            (*view).obj = slf.into_any().into_ptr();
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, view: *mut ffi::Py_buffer) {
        unsafe {
            if !(*view).internal.is_null() {
                drop(Box::from_raw((*view).internal as *mut ExportHolder));
                (*view).internal = std::ptr::null_mut();
            }
        }
    }

    /// `numpy_view(reverse_axes=True)`: a NumPy array sharing this buffer's
    /// memory; its axes are the buffer's dimensions in reverse order
    /// (dimension 0 is the last axis) unless `reverse_axes=False`.
    #[pyo3(signature = (reverse_axes = true))]
    fn numpy_view(slf: &Bound<'_, Self>, reverse_axes: bool) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let np = py.import("numpy")?;
        let arr = np.call_method1("asarray", (slf,))?;
        let arr = if reverse_axes { arr } else { arr.getattr("T")? };
        Ok(arr.unbind())
    }

    // ----- static constructors -----

    /// `Buffer.make_bounds_query(type, sizes, name="")`: a buffer with the
    /// given element type and sizes but no memory, for bounds queries
    /// (`allocate()` gives it memory later).
    #[staticmethod]
    #[pyo3(signature = (r#type, sizes, name = String::new()))]
    fn make_bounds_query(
        py: Python<'_>,
        r#type: &Bound<'_, PyAny>,
        sizes: &Bound<'_, PyAny>,
        name: String,
    ) -> PyResult<Py<PyBuffer>> {
        let ty = type_arg(r#type)?;
        let sizes = extract_int_list(sizes, "sizes")?;
        let b = Buffer::new(ty, &sizes, opt_name(Some(name))).py(py)?;
        b.deallocate();
        Self::wrap(py, b)
    }

    /// `Buffer.make_scalar(type, name="")`: a zero-dimensional buffer
    /// holding a single element, set to zero.
    #[staticmethod]
    #[pyo3(signature = (r#type, name = String::new()))]
    fn make_scalar(
        py: Python<'_>,
        r#type: &Bound<'_, PyAny>,
        name: String,
    ) -> PyResult<Py<PyBuffer>> {
        let ty = type_arg(r#type)?;
        Self::wrap(py, Buffer::new(ty, &[], opt_name(Some(name))).py(py)?)
    }

    /// `Buffer.make_interleaved(type, width, height, channels, name="")`: a
    /// new zero-filled three-dimensional buffer whose channels are adjacent
    /// in memory (dimension 2 has stride 1), as in interleaved RGB images.
    #[staticmethod]
    #[pyo3(signature = (r#type, width, height, channels, name = String::new()))]
    fn make_interleaved(
        py: Python<'_>,
        r#type: &Bound<'_, PyAny>,
        width: i32,
        height: i32,
        channels: i32,
        name: String,
    ) -> PyResult<Py<PyBuffer>> {
        let ty = type_arg(r#type)?;
        let b = Buffer::new_with_storage_order(
            ty,
            &[width, height, channels],
            &[2, 0, 1],
            opt_name(Some(name)),
        )
        .py(py)?;
        Self::wrap(py, b)
    }

    /// `Buffer.make_with_shape_of(src, name="")`: a new zero-filled buffer
    /// with the element type, mins and extents of `src`, stored densely with
    /// the same order of strides (an interleaved `src` gives an interleaved
    /// buffer).
    #[staticmethod]
    #[pyo3(signature = (src, name = String::new()))]
    fn make_with_shape_of(
        py: Python<'_>,
        src: &Bound<'_, PyBuffer>,
        name: String,
    ) -> PyResult<Py<PyBuffer>> {
        let b = src
            .get()
            .buf(py, "make_with_shape_of")?
            .make_with_shape_of(opt_name(Some(name)))
            .py(py)?;
        Self::wrap(py, b)
    }

    // ----- identity -----

    /// `name()`: the buffer's name.
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.buf(py, "name")?.name())
    }
    /// `set_name(name)`: rename the buffer.
    fn set_name(&self, py: Python<'_>, name: String) -> PyResult<()> {
        self.buf(py, "set_name")?.set_name(name);
        Ok(())
    }
    /// `same_as(other)`: whether `other` is the same buffer as this one (as
    /// `im.get()` is after `im.set(buf)`); views made by `cropped()`,
    /// `Buffer(buf)` and the like are other buffers, even though they share
    /// memory.
    #[pyo3(signature = (other))]
    fn same_as(&self, other: &Bound<'_, PyBuffer>) -> bool {
        let o = other.get();
        self.defined && o.defined && self.inner.same_as(&o.inner)
    }
    /// `defined()`: False for `hl.Buffer()`, which has no shape or memory
    /// (most other methods then raise HalideError).
    fn defined(&self) -> bool {
        self.defined
    }
    /// `type()`: the element type.
    fn r#type(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        type_to_pyobj(py, self.buf(py, "type")?.ty())
    }

    // ----- shape -----

    /// `dimensions()`: the number of dimensions.
    fn dimensions(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.buf(py, "dimensions")?.dimensions())
    }
    /// `dim(dimension)`: the min, extent and stride of dimension
    /// `dimension`, as an `hl.BufferDimension`; IndexError if there is no
    /// such dimension.
    #[pyo3(signature = (dimension))]
    fn dim(&self, py: Python<'_>, dimension: i64) -> PyResult<PyBufferDimension> {
        let b = self.buf(py, "dim")?;
        let n = b.dimensions();
        if dimension < 0 || dimension as usize >= n {
            return Err(PyIndexError::new_err(format!(
                "dimension {dimension} is out of range for a {n}-dimensional Buffer"
            )));
        }
        Ok(PyBufferDimension {
            dim: b.dims()[dimension as usize],
        })
    }
    /// `width()`: the extent of dimension 0 (1 if the buffer has no
    /// dimensions).
    fn width(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self
            .buf(py, "width")?
            .dims()
            .first()
            .map(|d| d.extent)
            .unwrap_or(1))
    }
    /// `height()`: the extent of dimension 1 (1 if the buffer has fewer
    /// than two dimensions).
    fn height(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self
            .buf(py, "height")?
            .dims()
            .get(1)
            .map(|d| d.extent)
            .unwrap_or(1))
    }
    /// `channels()`: the extent of dimension 2 (1 if the buffer has fewer
    /// than three dimensions).
    fn channels(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self
            .buf(py, "channels")?
            .dims()
            .get(2)
            .map(|d| d.extent)
            .unwrap_or(1))
    }
    /// `left()`: the smallest coordinate of dimension 0 (IndexError if
    /// there is none).
    fn left(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self.dim(py, 0)?.min())
    }
    /// `right()`: the largest coordinate of dimension 0 (IndexError if
    /// there is none).
    fn right(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self.dim(py, 0)?.max())
    }
    /// `top()`: the smallest coordinate of dimension 1 (IndexError if
    /// there is none).
    fn top(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self.dim(py, 1)?.min())
    }
    /// `bottom()`: the largest coordinate of dimension 1 (IndexError if
    /// there is none).
    fn bottom(&self, py: Python<'_>) -> PyResult<i32> {
        Ok(self.dim(py, 1)?.max())
    }
    /// `number_of_elements()`: the number of elements, the product of the
    /// extents.
    fn number_of_elements(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.buf(py, "number_of_elements")?.number_of_elements())
    }
    /// `size_in_bytes()`: the number of bytes the buffer spans in memory,
    /// from its lowest- to its highest-addressed element (0 if it has no
    /// elements).
    fn size_in_bytes(&self, py: Python<'_>) -> PyResult<usize> {
        let b = self.buf(py, "size_in_bytes")?;
        let dims = b.dims();
        if dims.iter().any(|d| d.extent <= 0) {
            return Ok(0);
        }
        let (mut lo, mut hi) = (0i64, 0i64);
        for d in &dims {
            let span = (d.extent as i64 - 1) * d.stride as i64;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Ok(((hi - lo + 1) * b.ty().bytes() as i64) as usize)
    }

    /// `set_min(mins)`: give the first `len(mins)` dimensions the min
    /// coordinates `mins`, in place; the elements stay where they are in
    /// memory, only their coordinates change. ValueError if there are more
    /// values than dimensions.
    #[pyo3(signature = (mins))]
    fn set_min(&self, py: Python<'_>, mins: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = self.buf(py, "set_min")?;
        let mins = extract_int_list(mins, "mins")?;
        if mins.len() > b.dimensions() {
            return Err(PyValueError::new_err("Too many arguments"));
        }
        b.set_min(&mins).py(py)
    }

    /// `contains(coords)`: whether the coordinates `coords` (for the first
    /// `len(coords)` dimensions) lie inside the buffer.
    #[pyo3(signature = (coords))]
    fn contains(&self, py: Python<'_>, coords: &Bound<'_, PyAny>) -> PyResult<bool> {
        let b = self.buf(py, "contains")?;
        let coords = extract_int_list(coords, "coords")?;
        if coords.len() > b.dimensions() {
            return Err(PyValueError::new_err("Too many arguments"));
        }
        Ok(b.contains(&coords))
    }

    // ----- in-place shape operations and their copying variants -----

    /// `crop(dimension, min, extent)` or `crop(rect)`: narrow this buffer,
    /// in place, to `extent` elements starting at coordinate `min` in
    /// `dimension`, or to the `(min, extent)` pairs of `rect` in its first
    /// `len(rect)` dimensions. The memory is shared, not copied, and the new
    /// bounds must lie inside the old ones.
    #[pyo3(signature = (dimension = None, min = None, extent = None, *, rect = None))]
    fn crop(
        &self,
        py: Python<'_>,
        dimension: Option<&Bound<'_, PyAny>>,
        min: Option<i32>,
        extent: Option<i32>,
        rect: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        crop_impl(py, self.buf(py, "crop")?, dimension, min, extent, rect)
    }

    /// `cropped(dimension, min, extent)` or `cropped(rect)`: a new Buffer
    /// viewing part of this one's memory, narrowed as by `crop`; this buffer
    /// is unchanged.
    #[pyo3(signature = (dimension = None, min = None, extent = None, *, rect = None))]
    fn cropped(
        &self,
        py: Python<'_>,
        dimension: Option<&Bound<'_, PyAny>>,
        min: Option<i32>,
        extent: Option<i32>,
        rect: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyBuffer>> {
        let v = self.buf(py, "cropped")?.alias();
        crop_impl(py, &v, dimension, min, extent, rect)?;
        Self::wrap(py, v)
    }

    /// `translate(dimension, dx)` or `translate(delta)`: add `dx` to the
    /// coordinates of `dimension`, or `delta[i]` to those of dimension `i`,
    /// in place; the memory is unchanged, so `buf[x + dx]` afterwards is the
    /// element `buf[x]` was.
    #[pyo3(signature = (dimension = None, dx = None, *, delta = None))]
    fn translate(
        &self,
        py: Python<'_>,
        dimension: Option<&Bound<'_, PyAny>>,
        dx: Option<i32>,
        delta: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        translate_impl(py, self.buf(py, "translate")?, dimension, dx, delta)
    }

    /// `translated(dimension, dx)` or `translated(delta)`: a new Buffer
    /// sharing this one's memory, with coordinates shifted as by
    /// `translate`; this buffer is unchanged.
    #[pyo3(signature = (dimension = None, dx = None, *, delta = None))]
    fn translated(
        &self,
        py: Python<'_>,
        dimension: Option<&Bound<'_, PyAny>>,
        dx: Option<i32>,
        delta: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyBuffer>> {
        let v = self.buf(py, "translated")?.alias();
        translate_impl(py, &v, dimension, dx, delta)?;
        Self::wrap(py, v)
    }

    /// `transpose(d1, d2)` or `transpose(order)`: swap dimensions `d1` and
    /// `d2`, or reorder all dimensions so that dimension `i` becomes
    /// dimension `order[i]`, in place; the memory is unchanged.
    #[pyo3(signature = (d1 = None, d2 = None, *, order = None))]
    fn transpose(
        &self,
        py: Python<'_>,
        d1: Option<&Bound<'_, PyAny>>,
        d2: Option<i64>,
        order: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        transpose_impl(py, self.buf(py, "transpose")?, d1, d2, order)
    }

    /// `transposed(d1, d2)` or `transposed(order)`: a new Buffer sharing
    /// this one's memory, with dimensions reordered as by `transpose`; this
    /// buffer is unchanged.
    #[pyo3(signature = (d1 = None, d2 = None, *, order = None))]
    fn transposed(
        &self,
        py: Python<'_>,
        d1: Option<&Bound<'_, PyAny>>,
        d2: Option<i64>,
        order: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyBuffer>> {
        let v = self.buf(py, "transposed")?.alias();
        transpose_impl(py, &v, d1, d2, order)?;
        Self::wrap(py, v)
    }

    /// `reverse_axes()`: a new Buffer sharing this one's memory, with the
    /// order of the dimensions reversed.
    fn reverse_axes(&self, py: Python<'_>) -> PyResult<Py<PyBuffer>> {
        let v = self.buf(py, "reverse_axes")?.alias();
        let n = v.dimensions() as i64;
        let order: Vec<i64> = (0..n).rev().collect();
        v.transpose_order(&order).py(py)?;
        Self::wrap(py, v)
    }

    /// `slice(dimension, pos=None)`: remove `dimension`, keeping the
    /// elements at coordinate `pos` in it (by default its min), in place;
    /// the memory is shared.
    #[pyo3(signature = (dimension, pos = None))]
    fn slice(&self, py: Python<'_>, dimension: i64, pos: Option<i32>) -> PyResult<()> {
        self.buf(py, "slice")?.slice(dimension, pos).py(py)
    }

    /// `sliced(dimension, pos=None)`: a new Buffer sharing this one's
    /// memory, with `dimension` removed as by `slice`; this buffer is
    /// unchanged.
    #[pyo3(signature = (dimension, pos = None))]
    fn sliced(&self, py: Python<'_>, dimension: i64, pos: Option<i32>) -> PyResult<Py<PyBuffer>> {
        let v = self.buf(py, "sliced")?.alias();
        v.slice(dimension, pos).py(py)?;
        Self::wrap(py, v)
    }

    /// `embed(dimension, pos=None)`: insert a new dimension of extent 1
    /// at index `dimension`, whose only coordinate is `pos` (default 0), in
    /// place; the memory is unchanged.
    #[pyo3(signature = (dimension, pos = None))]
    fn embed(&self, py: Python<'_>, dimension: i64, pos: Option<i32>) -> PyResult<()> {
        self.buf(py, "embed")?.embed(dimension, pos).py(py)
    }

    /// `embedded(dimension, pos=None)`: a new Buffer sharing this one's
    /// memory, with a dimension inserted as by `embed`; this buffer is
    /// unchanged.
    #[pyo3(signature = (dimension, pos = None))]
    fn embedded(&self, py: Python<'_>, dimension: i64, pos: Option<i32>) -> PyResult<Py<PyBuffer>> {
        let v = self.buf(py, "embedded")?.alias();
        v.embed(dimension, pos).py(py)?;
        Self::wrap(py, v)
    }

    /// `add_dimension()`: add a new last dimension, of extent 1 and min 0,
    /// in place.
    fn add_dimension(&self, py: Python<'_>) -> PyResult<()> {
        self.buf(py, "add_dimension")?.add_dimension();
        Ok(())
    }

    // ----- memory -----

    /// `allocate()`: give a buffer without memory (from
    /// `make_bounds_query` or `deallocate`) new zero-filled memory laid out
    /// with its current strides; does nothing if it already has memory.
    fn allocate(&self, py: Python<'_>) -> PyResult<()> {
        self.buf(py, "allocate")?.allocate().py(py)
    }
    /// `deallocate()`: let go of the buffer's memory, keeping its shape (it
    /// becomes a bounds-query buffer); other buffers sharing the memory keep
    /// it.
    fn deallocate(&self, py: Python<'_>) -> PyResult<()> {
        self.buf(py, "deallocate")?.deallocate();
        Ok(())
    }

    /// `copy()`: a new buffer with its own dense memory holding a copy of
    /// this one's elements, with the same mins and order of strides.
    fn copy(&self, py: Python<'_>) -> PyResult<Py<PyBuffer>> {
        let src = self.buf(py, "copy")?.clone();
        let b = crate::gil::detached(py, || src.copy()).py(py)?;
        Self::wrap(py, b)
    }

    /// `copy_from(src)`: copy into this buffer the elements of `src` whose
    /// coordinates lie inside it (the overlap of the two); both must have
    /// the same element type and number of dimensions.
    #[pyo3(signature = (src))]
    fn copy_from(&self, py: Python<'_>, src: &Bound<'_, PyBuffer>) -> PyResult<()> {
        let s = src.get().buf(py, "copy_from")?.clone();
        let d = self.buf(py, "copy_from")?.clone();
        crate::gil::detached(py, || d.copy_from(&s)).py(py)
    }

    /// `fill(value)`: set every element to `value` (an int for integer
    /// types, anything `float()` accepts for float types, a truth value for
    /// `hl.Bool()`); RuntimeError if `value` does not fit the element type,
    /// HalideError if the buffer has no memory.
    #[pyo3(signature = (value))]
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = self.buf(py, "fill")?;
        if b.host_ptr().is_null() {
            return Err(halide_error(py, "Cannot fill a Buffer with no host memory"));
        }
        let (bytes, n) = encode_value(value, b.ty())?;
        let b = b.clone();
        crate::gil::detached(py, || b.fill_bytes(&bytes[..n])).py(py)
    }

    /// `all_equal(value)`: whether every element equals `value`, converted
    /// as by `fill` (float elements are compared as numbers, so `-0.0`
    /// equals `0.0` and NaN equals nothing).
    #[pyo3(signature = (value))]
    fn all_equal(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let b = self.buf(py, "all_equal")?;
        let ty = b.ty();
        let (bytes, n) = encode_value(value, ty)?;
        if b.host_ptr().is_null() {
            return Err(halide_error(py, "Cannot read a Buffer with no host memory"));
        }
        let mut eq = true;
        if ty.is_float() {
            // Compare as numbers (so -0.0 == 0.0 and NaN != NaN).
            let want = unsafe { read_float(ty, bytes.as_ptr()) };
            b.for_each_element_ptr(|_, p| eq &= unsafe { read_float(ty, p) } == want);
        } else {
            b.for_each_element_ptr(|_, p| {
                eq &= unsafe { std::slice::from_raw_parts(p, n) } == &bytes[..n]
            });
        }
        Ok(eq)
    }

    /// `for_each_element(f)`: call `f(coords)` once per element with its
    /// coordinates as a list, dimension 0 varying fastest; if `f` raises,
    /// it is not called again and the exception propagates.
    #[pyo3(signature = (f))]
    fn for_each_element(&self, py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = self.buf(py, "for_each_element")?;
        let mut err: Option<PyErr> = None;
        b.for_each_element(|pos| {
            if err.is_none() {
                if let Err(e) = PyList::new(py, pos).and_then(|l| f.call1((l,))) {
                    err = Some(e);
                }
            }
        });
        err.map_or(Ok(()), Err)
    }

    // ----- host/device bookkeeping (host-only implementation) -----

    /// The address of a `halide_buffer_t` describing this buffer (its
    /// current shape, mins included), valid while the Buffer lives and is
    /// not reshaped: what Python extensions of compiled pipelines pass.
    fn _get_raw_halide_buffer_t(&self, py: Python<'_>) -> PyResult<usize> {
        let b = self.buf(py, "_get_raw_halide_buffer_t")?;
        let mut slot = self.raw.lock().unwrap_or_else(|p| p.into_inner());
        let mut d = Box::new(RawDescriptor {
            buffer: Default::default(),
            dims: vec![],
        });
        d.buffer = b.raw(&mut d.dims);
        let addr = &d.buffer as *const _ as usize;
        *slot = Some(d);
        Ok(addr)
    }

    /// `host_dirty()`: whether the buffer's memory is marked as changed on
    /// the host (buffers wrapping Python memory start marked).
    fn host_dirty(&self) -> bool {
        self.host_dirty.load(Ordering::Relaxed)
    }
    /// `set_host_dirty(dirty=True)`: mark or unmark the buffer's memory as
    /// changed on the host.
    #[pyo3(signature = (dirty = true))]
    fn set_host_dirty(&self, dirty: bool) {
        self.host_dirty.store(dirty, Ordering::Relaxed);
    }
    /// `device_dirty()`: always False: ferrohalide buffers have no device
    /// (GPU) memory.
    fn device_dirty(&self) -> bool {
        false
    }
    /// `set_device_dirty(dirty=True)`: HalideError unless `dirty` is False
    /// (which does nothing): ferrohalide buffers have no device memory.
    #[pyo3(signature = (dirty = true))]
    fn set_device_dirty(&self, py: Python<'_>, dirty: bool) -> PyResult<()> {
        if dirty {
            return Err(halide_error(
                py,
                "ferrohalide Buffers have no device memory",
            ));
        }
        Ok(())
    }
    /// `has_device_allocation()`: always False: ferrohalide buffers have no
    /// device memory.
    fn has_device_allocation(&self) -> bool {
        false
    }
    /// `copy_to_host()`: nothing to copy, as there is no device memory;
    /// clears the host-dirty mark and returns 0.
    fn copy_to_host(&self) -> i32 {
        self.host_dirty.store(false, Ordering::Relaxed);
        0
    }
    /// `device_sync()`: does nothing (there is no device) and returns 0.
    fn device_sync(&self) -> i32 {
        0
    }
    /// `device_free()`: does nothing (there is no device memory) and
    /// returns 0.
    fn device_free(&self) -> i32 {
        0
    }
    /// `device_deallocate()`: does nothing (there is no device memory).
    fn device_deallocate(&self) {}
    /// `device_detach_native()`: does nothing (there is no device memory)
    /// and returns 0.
    fn device_detach_native(&self) -> i32 {
        0
    }
    /// `copy_to_device(...)`: always raises HalideError: ferrohalide has no
    /// GPU targets.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn copy_to_device(
        &self,
        py: Python<'_>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<i32> {
        Err(halide_error(
            py,
            "copy_to_device: ferrohalide has no GPU targets",
        ))
    }
    /// `device_malloc(...)`: always raises HalideError: ferrohalide has no
    /// GPU targets.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn device_malloc(
        &self,
        py: Python<'_>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<i32> {
        Err(halide_error(
            py,
            "device_malloc: ferrohalide has no GPU targets",
        ))
    }

    // ----- element access -----

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let items = index_items(key);
        match int_coords(py, &items)? {
            Some(coords) => {
                let p = self.element_ptr(py, &coords)?;
                let ty = self.inner.ty();
                // SAFETY: element_ptr checked the coordinates.
                unsafe { read_value(py, ty, p) }
            }
            None => {
                if items.iter().any(|i| i.is_instance_of::<PyString>()) {
                    return Err(PyTypeError::new_err(
                        "__getitem__(): Buffer indices must be ints or Exprs",
                    ));
                }
                if items.iter().any(|i| i.is_instance_of::<PyFloat>()) {
                    return Err(halide_error(
                        py,
                        "Args to a call to an Image must be representable as 32-bit integers.",
                    ));
                }
                let b = self.buf(py, "operator()")?;
                buffer_call_expr(py, b, &items)
            }
        }
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let items = index_items(key);
        let Some(coords) = int_coords(py, &items)? else {
            return Err(PyTypeError::new_err(
                "__setitem__(): Buffer indices must be ints",
            ));
        };
        let p = self.element_ptr(py, &coords)?;
        let ty = self.inner.ty();
        let (bytes, n) = encode_value(value, ty)?;
        // SAFETY: element_ptr checked the coordinates.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, n) };
        Ok(())
    }

    /// `_repr_png_()`: the buffer as PNG image data, for Jupyter's display,
    /// or None when it cannot be shown as an image.
    // Implemented by `ferrohalide._notebook.buffer_png`.
    fn _repr_png_(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        Ok(py.import("ferrohalide._notebook")?.call_method1("buffer_png", (slf,))?.unbind())
    }

    fn __repr__(&self) -> String {
        if !self.defined {
            return "<undefined halide.Buffer>".to_string();
        }
        let c = self.inner.read();
        let shape: Vec<String> = c
            .dims
            .iter()
            .map(|d| format!("[{},{},{}]", d.min, d.extent, d.stride))
            .collect();
        format!(
            "<halide.Buffer of type {} shape:[{}]>",
            type_name(c.ty),
            shape.join(",")
        )
    }
}

/// # Safety
/// `p` must point at a float element of type `ty`.
unsafe fn read_float(ty: Type, p: *const u8) -> f64 {
    unsafe {
        match ty.bits {
            16 => ferrohalide_runtime::half::f16_bits_to_f64((p as *const u16).read_unaligned()),
            32 => (p as *const f32).read_unaligned() as f64,
            _ => (p as *const f64).read_unaligned(),
        }
    }
}

fn crop_impl(
    py: Python<'_>,
    b: &Buffer,
    dimension: Option<&Bound<'_, PyAny>>,
    min: Option<i32>,
    extent: Option<i32>,
    rect: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    match (dimension, min, extent, rect) {
        (Some(d), Some(m), Some(e), None) => b.crop(d.extract::<i64>()?, m, e).py(py),
        (Some(r), None, None, None) | (None, None, None, Some(r)) => {
            b.crop_rect(&extract_rect(r)?).py(py)
        }
        _ => Err(PyTypeError::new_err(
            "crop() takes (dimension, min, extent) or (rect)",
        )),
    }
}

fn translate_impl(
    py: Python<'_>,
    b: &Buffer,
    dimension: Option<&Bound<'_, PyAny>>,
    dx: Option<i32>,
    delta: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    match (dimension, dx, delta) {
        (Some(d), Some(dx), None) => b.translate(d.extract::<i64>()?, dx).py(py),
        (Some(v), None, None) | (None, None, Some(v)) => {
            b.translate_all(&extract_int_list(v, "delta")?).py(py)
        }
        _ => Err(PyTypeError::new_err(
            "translate() takes (dimension, dx) or (delta)",
        )),
    }
}

fn transpose_impl(
    py: Python<'_>,
    b: &Buffer,
    d1: Option<&Bound<'_, PyAny>>,
    d2: Option<i64>,
    order: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    match (d1, d2, order) {
        (Some(a), Some(c), None) => b.transpose(a.extract::<i64>()?, c).py(py),
        (Some(o), None, None) | (None, None, Some(o)) => {
            let order: Vec<i64> = extract_int_list(o, "order")?
                .into_iter()
                .map(i64::from)
                .collect();
            b.transpose_order(&order).py(py)
        }
        _ => Err(PyTypeError::new_err(
            "transpose() takes (d1, d2) or (order)",
        )),
    }
}
