//! `hl.Type`, `hl.TypeCode` and the type constructors `hl.Int`, `hl.UInt`,
//! `hl.Float`, `hl.BFloat`, `hl.Bool`, `hl.Handle`.

use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use ferrohalide_core::ir::{Expr, Type, TypeCode};

use crate::errors::IntoPy;
use crate::py_expr::PyExpr;

crate::py_enum::halide_enum!(
    /// `TypeCode(value)`: the kind of values a `hl.Type` holds: `Int`, `UInt`,
    /// `Float` or `Handle` (`BFloat` also exists but is not listed in
    /// `__members__`, as in Halide). Built from the member's integer value.
    PyTypeCode, "TypeCode", [
    Int = 0,
    UInt = 1,
    Float = 2,
    Handle = 3,
] hidden [BFloat = 4]);

impl PyTypeCode {
    pub fn to_core(self) -> TypeCode {
        match self {
            PyTypeCode::Int => TypeCode::Int,
            PyTypeCode::UInt => TypeCode::UInt,
            PyTypeCode::Float => TypeCode::Float,
            PyTypeCode::Handle => TypeCode::Handle,
            PyTypeCode::BFloat => TypeCode::BFloat,
        }
    }
    pub fn from_core(c: TypeCode) -> PyTypeCode {
        match c {
            TypeCode::Int => PyTypeCode::Int,
            TypeCode::UInt => PyTypeCode::UInt,
            TypeCode::Float => PyTypeCode::Float,
            TypeCode::Handle => PyTypeCode::Handle,
            TypeCode::BFloat => PyTypeCode::BFloat,
        }
    }
}

/// `Type(code, bits, lanes)`: an element type: a kind (`hl.TypeCode`), a bit
/// width per lane and a number of vector lanes. `Type()` is Halide's default,
/// a handle type of 0 bits and 0 lanes; types are usually made with `hl.Int`,
/// `hl.UInt`, `hl.Float`, `hl.BFloat`, `hl.Bool` or `hl.Handle`. Types compare
/// with `==` and `!=` but are not hashable; `str(t)` is Halide's name, such as
/// `int32` or `float32x4`.
#[pyclass(name = "Type", module = "ferrohalide", frozen)]
#[derive(Clone, Copy, Debug)]
pub struct PyType {
    pub inner: Type,
}

fn check_bits(bits: i64) -> PyResult<u8> {
    Ok(Type::checked(TypeCode::Int, bits, 1).py()?.bits)
}
fn check_lanes(lanes: i64) -> PyResult<u16> {
    Ok(Type::checked(TypeCode::Int, 8, lanes).py()?.lanes)
}

#[pymethods]
impl PyType {
    // `Type()` is Halide's default: a handle of 0 bits and 0 lanes.
    #[new]
    #[pyo3(signature = (code=None, bits=None, lanes=None))]
    fn py_new(code: Option<PyTypeCode>, bits: Option<i64>, lanes: Option<i64>) -> PyResult<Self> {
        let (code, bits, lanes) = match (code, bits, lanes) {
            (None, None, None) => (TypeCode::Handle, 0, 0),
            (Some(c), Some(b), Some(l)) => (c.to_core(), b, l),
            _ => {
                return Err(PyTypeError::new_err(
                    "__init__(): incompatible constructor arguments: Type() or Type(code, bits, lanes)",
                ))
            }
        };
        Ok(PyType {
            inner: Type::new(code, check_bits(bits)?, check_lanes(lanes)?),
        })
    }

    /// `bits()`: the number of bits of one lane (e.g. 32 for `hl.Int(32)`).
    fn bits(&self) -> u8 {
        self.inner.bits
    }
    /// `bytes()`: the number of bytes of one lane: `bits()` rounded up to
    /// whole bytes (1 for `hl.Bool()`).
    fn bytes(&self) -> usize {
        self.inner.bytes()
    }
    /// `code()`: the kind of the type's values, an `hl.TypeCode`.
    fn code(&self) -> PyTypeCode {
        PyTypeCode::from_core(self.inner.code)
    }
    /// `lanes()`: the number of vector lanes (1 for a scalar type).
    fn lanes(&self) -> u16 {
        self.inner.lanes
    }
    /// `element_of()`: the scalar type of one lane: the same code and bits,
    /// with 1 lane.
    fn element_of(&self) -> PyType {
        PyType {
            inner: self.inner.element_of(),
        }
    }
    /// `is_bfloat()`: whether this is a brain floating-point type (`hl.BFloat`).
    fn is_bfloat(&self) -> bool {
        self.inner.code == TypeCode::BFloat
    }
    /// `is_bool()`: whether this is a boolean type (a 1-bit unsigned integer).
    fn is_bool(&self) -> bool {
        self.inner.is_bool()
    }
    /// `is_float()`: whether this is a floating-point type (`hl.Float` or
    /// `hl.BFloat`).
    fn is_float(&self) -> bool {
        self.inner.is_float()
    }
    /// `is_handle()`: whether this is an opaque pointer type (`hl.Handle`).
    fn is_handle(&self) -> bool {
        self.inner.is_handle()
    }
    /// `is_int()`: whether this is a signed integer type.
    fn is_int(&self) -> bool {
        self.inner.is_int()
    }
    /// `is_uint()`: whether this is an unsigned integer type (true for
    /// `hl.Bool()` too, whose code is `UInt`).
    fn is_uint(&self) -> bool {
        self.inner.is_uint()
    }
    /// `is_scalar()`: whether the type has exactly one lane.
    fn is_scalar(&self) -> bool {
        self.inner.is_scalar()
    }
    /// `is_vector()`: whether the type has more than one lane.
    fn is_vector(&self) -> bool {
        self.inner.is_vector()
    }
    /// `with_bits(bits)`: the same type with `bits` bits per lane (at most
    /// 255, else HalideError).
    fn with_bits(&self, bits: i64) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.inner.with_bits(check_bits(bits)?),
        })
    }
    /// `with_code(code)`: the same bits and lanes with the `hl.TypeCode`
    /// `code`.
    fn with_code(&self, code: PyTypeCode) -> PyType {
        PyType {
            inner: self.inner.with_code(code.to_core()),
        }
    }
    /// `with_lanes(lanes)`: the same code and bits with `lanes` lanes (at
    /// most 65535, else HalideError).
    fn with_lanes(&self, lanes: i64) -> PyResult<PyType> {
        Ok(PyType {
            inner: self.inner.with_lanes(check_lanes(lanes)?),
        })
    }
    /// `same_handle_type(other)`: always True: types made in Python carry
    /// no C++ pointee type to compare (as in Halide's bindings).
    fn same_handle_type(&self, other: &PyType) -> bool {
        let _ = other;
        true
    }
    /// `can_represent(other)`: whether every value of type `other` can be
    /// stored exactly in this type (the lane counts must match).
    fn can_represent(&self, other: &PyType) -> bool {
        self.inner == other.inner || self.inner.can_represent_type(other.inner)
    }
    /// `max()`: the type's largest value, as an Expr (infinity for float
    /// types, as in Halide's bindings); HalideError for handle types.
    fn max(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::new(type_extreme(self.number_type()?, true)))
    }
    /// `min()`: the type's smallest value, as an Expr (minus infinity for
    /// float types, as in Halide's bindings); HalideError for handle types.
    fn min(&self) -> PyResult<PyExpr> {
        Ok(PyExpr::new(type_extreme(self.number_type()?, false)))
    }
    /// `is_max(value)`: whether the integer `value` is this integer type's
    /// largest value; always False for float and handle types. `value` must
    /// fit in 64 bits (TypeError otherwise).
    fn is_max(&self, value: i128) -> PyResult<bool> {
        self.is_extreme(value, true)
    }
    /// `is_min(value)`: whether the integer `value` is this integer type's
    /// smallest value; always False for float and handle types. `value` must
    /// fit in 64 bits (TypeError otherwise).
    fn is_min(&self, value: i128) -> PyResult<bool> {
        self.is_extreme(value, false)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(o) = other.extract::<PyRef<PyType>>() else {
            return Ok(py.NotImplemented());
        };
        let r = match op {
            CompareOp::Eq => self.inner == o.inner,
            CompareOp::Ne => self.inner != o.inner,
            _ => return Ok(py.NotImplemented()),
        };
        Ok(pyo3::types::PyBool::new(py, r)
            .to_owned()
            .into_any()
            .unbind())
    }

    fn __repr__(&self) -> String {
        format!("<halide.Type {}>", type_name(self.inner))
    }
    fn __str__(&self) -> String {
        type_name(self.inner)
    }
}

// PyType is unhashable, like Halide's (it defines __eq__ only).

/// Halide's Python name of a type (`int32`, `bool`, `float32x4`, `handle64`).
pub fn type_name(t: Type) -> String {
    if t.is_handle() {
        let mut s = format!("handle{}", t.bits);
        if t.lanes > 1 {
            s.push_str(&format!("x{}", t.lanes));
        }
        return s;
    }
    t.to_string()
}

impl PyType {
    fn is_extreme(&self, value: i128, max: bool) -> PyResult<bool> {
        if value < i64::MIN as i128 || value > u64::MAX as i128 {
            return Err(PyTypeError::new_err(format!("{value} does not fit in 64 bits")));
        }
        let t = self.inner;
        if !(t.is_int() || t.is_uint()) {
            return Ok(false);
        }
        Ok(value == if max { t.max_int() } else { t.min_int() })
    }

    /// The type, if it has a largest and smallest value.
    fn number_type(&self) -> PyResult<Type> {
        if self.inner.is_handle() || self.inner.bits == 0 {
            return Err(crate::errors::to_pyerr(ferrohalide_core::Error::user(format!(
                "{} has no largest or smallest value\n",
                type_name(self.inner)
            ))));
        }
        Ok(self.inner)
    }
}

fn type_extreme(t: Type, max: bool) -> Expr {
    if t.is_float() {
        let v = if max {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        return Expr::make_const_f64(t, v);
    }
    if max {
        Expr::type_max(t)
    } else {
        Expr::type_min(t)
    }
}

pub fn type_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Type> {
    match obj.extract::<PyRef<PyType>>() {
        Ok(t) => Ok(t.inner),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected a halide.Type, got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))),
    }
}

pub fn type_to_py(t: Type) -> PyType {
    PyType { inner: t }
}

/// `Int(bits, lanes=1)`: the signed integer type of `bits` bits with `lanes`
/// vector lanes, e.g. `hl.Int(32)`.
#[pyfunction(name = "Int")]
#[pyo3(signature = (bits, lanes=1))]
fn int_t(bits: i64, lanes: i64) -> PyResult<PyType> {
    Ok(PyType {
        inner: Type::new(TypeCode::Int, check_bits(bits)?, check_lanes(lanes)?),
    })
}
/// `UInt(bits, lanes=1)`: the unsigned integer type of `bits` bits with
/// `lanes` vector lanes, e.g. `hl.UInt(8)`.
#[pyfunction(name = "UInt")]
#[pyo3(signature = (bits, lanes=1))]
fn uint_t(bits: i64, lanes: i64) -> PyResult<PyType> {
    Ok(PyType {
        inner: Type::new(TypeCode::UInt, check_bits(bits)?, check_lanes(lanes)?),
    })
}
/// `Float(bits, lanes=1)`: the floating-point type of `bits` bits with
/// `lanes` vector lanes, e.g. `hl.Float(32)`.
#[pyfunction(name = "Float")]
#[pyo3(signature = (bits, lanes=1))]
fn float_t(bits: i64, lanes: i64) -> PyResult<PyType> {
    Ok(PyType {
        inner: Type::new(TypeCode::Float, check_bits(bits)?, check_lanes(lanes)?),
    })
}
/// `BFloat(bits, lanes=1)`: the brain floating-point type of `bits` bits
/// with `lanes` vector lanes, e.g. `hl.BFloat(16)`.
#[pyfunction(name = "BFloat")]
#[pyo3(signature = (bits, lanes=1))]
fn bfloat_t(bits: i64, lanes: i64) -> PyResult<PyType> {
    Ok(PyType {
        inner: Type::new(TypeCode::BFloat, check_bits(bits)?, check_lanes(lanes)?),
    })
}
/// `Bool(lanes=1)`: the boolean type (a 1-bit unsigned integer) with `lanes`
/// vector lanes.
#[pyfunction(name = "Bool")]
#[pyo3(signature = (lanes=1))]
fn bool_t(lanes: i64) -> PyResult<PyType> {
    Ok(PyType {
        inner: Type::bool().with_lanes(check_lanes(lanes)?),
    })
}
/// `Handle(lanes=1)`: the 64-bit opaque pointer type with `lanes` vector
/// lanes.
#[pyfunction(name = "Handle")]
#[pyo3(signature = (lanes=1))]
fn handle_t(lanes: i64) -> PyResult<PyType> {
    Ok(PyType {
        inner: Type::handle().with_lanes(check_lanes(lanes)?),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyType>()?;
    m.add_class::<PyTypeCode>()?;
    m.add_function(wrap_pyfunction!(int_t, m)?)?;
    m.add_function(wrap_pyfunction!(uint_t, m)?)?;
    m.add_function(wrap_pyfunction!(float_t, m)?)?;
    m.add_function(wrap_pyfunction!(bfloat_t, m)?)?;
    m.add_function(wrap_pyfunction!(bool_t, m)?)?;
    m.add_function(wrap_pyfunction!(handle_t, m)?)?;
    Ok(())
}
