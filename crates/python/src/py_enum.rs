//! Halide's small enums (`hl.TailStrategy`, `hl.MemoryType`, ...) as Python
//! classes that behave like pybind11's enums: built from their integer value,
//! listed in `__members__`, with `name`, `value`, `int()`, `hash()` equal to
//! the value's, and Halide's `repr` / `str`. One macro defines them all.

/// `halide_enum!(RustName, "PythonName", [Variant = value, ...])`, optionally
/// followed by `hidden [Variant = value, ...]` for values that exist but that
/// Halide's Python module does not list as members.
macro_rules! halide_enum {
    ($(#[$doc:meta])* $rust:ident, $py:literal, [$($v:ident = $n:expr),+ $(,)?]
     $(hidden [$($hv:ident = $hn:expr),+ $(,)?])?) => {
        $(#[$doc])*
        #[pyo3::pyclass(name = $py, module = "ferrohalide", eq, eq_int, frozen)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $rust {
            $($v = $n,)+
            $($($hv = $hn,)+)?
        }

        impl $rust {
            /// The members Python lists, in Halide's order.
            pub const MEMBERS: &'static [$rust] = &[$($rust::$v),+];
            /// Every value, listed or not.
            pub const ALL: &'static [$rust] = &[$($rust::$v,)+ $($($rust::$hv,)+)?];
        }

        #[pyo3::pymethods]
        impl $rust {
            #[new]
            fn py_new(value: i64) -> pyo3::PyResult<Self> {
                Self::ALL.iter().copied().find(|m| *m as i64 == value).ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "{value} is not a valid {}", $py
                    ))
                })
            }
            #[classattr]
            fn __members__(py: pyo3::Python<'_>) -> pyo3::PyResult<pyo3::Py<pyo3::types::PyDict>> {
                let d = pyo3::types::PyDict::new(py);
                for m in Self::MEMBERS {
                    pyo3::types::PyDictMethods::set_item(&d, format!("{m:?}"), *m)?;
                }
                Ok(d.unbind())
            }
            #[getter]
            fn name(&self) -> String {
                format!("{self:?}")
            }
            #[getter]
            fn value(&self) -> i64 {
                *self as i64
            }
            fn __int__(&self) -> i64 {
                *self as i64
            }
            fn __index__(&self) -> i64 {
                *self as i64
            }
            fn __hash__(&self) -> i64 {
                *self as i64
            }
            fn __repr__(&self) -> String {
                format!("<{}.{:?}: {}>", $py, self, *self as i64)
            }
            fn __str__(&self) -> String {
                format!("{}.{:?}", $py, self)
            }
        }
    };
}

pub(crate) use halide_enum;

halide_enum!(
    /// How `prefetch` treats the part of its region outside the buffer.
    PyPrefetchBoundStrategy, "PrefetchBoundStrategy", [
    Clamp = 0,
    GuardWithIf = 1,
    NonFaulting = 2,
]);
halide_enum!(
    /// The linkage of a lowered function in a Module.
    PyLinkageType, "LinkageType", [
    External = 0,
    ExternalPlusMetadata = 1,
    ExternalPlusArgv = 2,
    Internal = 3,
]);
halide_enum!(
    /// How a lowered function's name is mangled.
    PyNameMangling, "NameMangling", [
    Default = 0,
    C = 1,
    CPlusPlus = 2,
]);

/// The enums that only name values for the API (no directive takes them yet).
pub fn register(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    use pyo3::types::PyModuleMethods;
    m.add_class::<PyPrefetchBoundStrategy>()?;
    m.add_class::<PyLinkageType>()?;
    m.add_class::<PyNameMangling>()?;
    Ok(())
}
