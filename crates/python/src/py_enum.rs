//! Halide's small enums (`hl.TailStrategy`, `hl.MemoryType`, ...) as Python
//! classes that behave like pybind11's enums: built from their integer value,
//! listed in `__members__`, with `name`, `value`, `int()`, `hash()` equal to
//! the value's, and Halide's `repr` / `str`. One macro defines them all.

/// The docstrings of the enums whose `halide_enum!` invocation gives none,
/// by Python name (an enum with neither is a compile error).
macro_rules! enum_doc {
    ("TailStrategy") => {
        "`TailStrategy`: how a `split` (or `vectorize` / `unroll` / `tile` by a \
         factor) handles an extent that is not a multiple of the factor: \
         `RoundUp` (compute past the end), `GuardWithIf` (skip the extra \
         iterations), `Predicate` (guard the loads and stores past the end), \
         `PredicateLoads` (only the loads), `PredicateStores` (only the \
         stores), `ShiftInwards` \
         (shift the last iteration back inside the range), \
         `ShiftInwardsAndBlend`, `RoundUpAndBlend`, or `Auto` (let the compiler \
         choose)."
    };
    ("LoopAlignStrategy") => {
        "`LoopAlignStrategy`: how `compute_with` lines up the fused loops of \
         stages whose ranges differ: `AlignStart` (same first iteration), \
         `AlignEnd` (same last iteration), `NoAlign` (no shifting), or `Auto`."
    };
    ("MemoryType") => {
        "`MemoryType`: where a Func's storage lives, given to `store_in`: \
         `Auto` (let Halide choose), `Heap`, `Stack`, `Register`, `GPUShared`, \
         `GPUTexture`, `LockedCache` or `VTCM`."
    };
    ("Partition") => {
        "`Partition`: whether a loop is partitioned into a steady state and \
         boundary cases, given to `partition`: `Auto` (let the compiler \
         decide), `Never` or `Always`."
    };
}

pub(crate) use enum_doc;

/// `halide_enum!(RustName, "PythonName", [Variant = value, ...])`, optionally
/// followed by `hidden [Variant = value, ...]` for values that exist but that
/// Halide's Python module does not list as members. A `///` doc comment
/// before `RustName` is the class's docstring; without one, `enum_doc!` gives it.
macro_rules! halide_enum {
    ($rust:ident, $py:tt, $($rest:tt)*) => {
        $crate::py_enum::halide_enum!(
            #[doc = $crate::py_enum::enum_doc!($py)]
            $rust, $py, $($rest)*
        );
    };
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
            /// `name`: the member's name, e.g. `"Auto"`.
            #[getter]
            fn name(&self) -> String {
                format!("{self:?}")
            }
            /// `value`: the member's integer value (the same as `int(member)`).
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
    /// `PrefetchBoundStrategy`: how `prefetch` treats the part of the prefetched
    /// region that lies outside the buffer: `Clamp` (shrink the region to the
    /// buffer), `GuardWithIf` (skip the prefetch when any of it is outside) or
    /// `NonFaulting` (prefetch the region as is, for targets where prefetching
    /// outside a buffer does not fault).
    PyPrefetchBoundStrategy, "PrefetchBoundStrategy", [
    Clamp = 0,
    GuardWithIf = 1,
    NonFaulting = 2,
]);
halide_enum!(
    /// `LinkageType`: the linkage of a function in a compiled `Module`:
    /// `External` (callable from outside), `ExternalPlusMetadata` (also with
    /// its metadata and argv wrapper), `ExternalPlusArgv` (also with the argv
    /// wrapper) or `Internal` (visible only inside the module).
    PyLinkageType, "LinkageType", [
    External = 0,
    ExternalPlusMetadata = 1,
    ExternalPlusArgv = 2,
    Internal = 3,
]);
halide_enum!(
    /// `NameMangling`: how a function's symbol name is mangled: `Default` (as
    /// the target does), `C` (no mangling) or `CPlusPlus` (C++ mangling, e.g.
    /// for an extern function declared with `define_extern`).
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
