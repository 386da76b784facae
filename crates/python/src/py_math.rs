//! Module-level functions of the `hl.` namespace that build Exprs.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use ferrohalide_core::ir::{Expr, Intrinsic, MathFn, Type};
use ferrohalide_core::lang::{bits, fixed_point, math, operators, random, scatter_gather};

use crate::errors::IntoPy;
use crate::py_expr::{py_to_expr, PyExpr};
use crate::py_type::type_from_py;

type R = PyResult<PyExpr>;

fn ok(e: ferrohalide_core::Result<Expr>) -> R {
    Ok(PyExpr::new(e.py()?))
}

fn exprs(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Expr>> {
    args.iter().map(|a| py_to_expr(&a)).collect()
}

/// Python int argument that fits in 32 bits (Halide's `int` overloads).
fn small_int(obj: &Bound<'_, PyAny>) -> Option<i32> {
    if obj.is_instance_of::<pyo3::types::PyBool>() || !obj.is_instance_of::<pyo3::types::PyInt>() {
        return None;
    }
    obj.extract::<i32>().ok()
}

// Each entry's doc string is the Python function's docstring.
macro_rules! unary_math {
    ($($fname:ident => $which:expr, $doc:literal),* $(,)?) => {
        $(
            #[doc = $doc]
            #[pyfunction]
            fn $fname(x: &Bound<'_, PyAny>) -> R {
                ok(math::unary_math($which, py_to_expr(x)?))
            }
        )*
        fn register_unary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($fname, m)?)?; )*
            Ok(())
        }
    };
}

unary_math!(
    sqrt => MathFn::Sqrt,
        "`sqrt(x)`: the square root of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    sin => MathFn::Sin,
        "`sin(x)`: the sine of `x` (in radians). A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    cos => MathFn::Cos,
        "`cos(x)`: the cosine of `x` (in radians). A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    tan => MathFn::Tan,
        "`tan(x)`: the tangent of `x` (in radians). A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    asin => MathFn::Asin,
        "`asin(x)`: the arcsine of `x`, in radians. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    acos => MathFn::Acos,
        "`acos(x)`: the arccosine of `x`, in radians. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    atan => MathFn::Atan,
        "`atan(x)`: the arctangent of `x`, in radians; see also `atan2`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    sinh => MathFn::Sinh,
        "`sinh(x)`: the hyperbolic sine of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    cosh => MathFn::Cosh,
        "`cosh(x)`: the hyperbolic cosine of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    tanh => MathFn::Tanh,
        "`tanh(x)`: the hyperbolic tangent of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    asinh => MathFn::Asinh,
        "`asinh(x)`: the inverse hyperbolic sine of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    acosh => MathFn::Acosh,
        "`acosh(x)`: the inverse hyperbolic cosine of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    atanh => MathFn::Atanh,
        "`atanh(x)`: the inverse hyperbolic tangent of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    exp => MathFn::Exp,
        "`exp(x)`: e raised to the power `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    log => MathFn::Log,
        "`log(x)`: the natural logarithm of `x`. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    floor => MathFn::Floor,
        "`floor(x)`: the largest whole number not greater than `x`, still as a float (cast the result to get an integer). A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    ceil => MathFn::Ceil,
        "`ceil(x)`: the smallest whole number not less than `x`, still as a float (cast the result to get an integer). A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    round => MathFn::Round,
        "`round(x)`: the whole number nearest to `x`, ties to the even one, still as a float (a floating-point `x` keeps its type, anything else is converted to float32 first).",
    trunc => MathFn::Trunc,
        "`trunc(x)`: `x` rounded toward zero to a whole number, still as a float. A float64 or float16 `x` keeps its type; anything else is converted to float32 first.",
    is_nan => MathFn::IsNan,
        "`is_nan(x)`: a bool Expr, true where the floating-point `x` is NaN (a non-float `x` is an error).",
    is_inf => MathFn::IsInf,
        "`is_inf(x)`: a bool Expr, true where the floating-point `x` is positive or negative infinity (a non-float `x` is an error).",
    is_finite => MathFn::IsFinite,
        "`is_finite(x)`: a bool Expr, true where the floating-point `x` is neither infinite nor NaN (a non-float `x` is an error).",
    fast_sin => MathFn::FastSin,
        "`fast_sin(x)`: a fast approximation of the sine of `x` (in radians) that vectorizes well; `x` must be float32.",
    fast_cos => MathFn::FastCos,
        "`fast_cos(x)`: a fast approximation of the cosine of `x` (in radians) that vectorizes well; `x` must be float32.",
    fast_exp => MathFn::FastExp,
        "`fast_exp(x)`: a fast approximation of `exp(x)` that vectorizes well; `x` must be float32.",
    fast_log => MathFn::FastLog,
        "`fast_log(x)`: a fast approximation of `log(x)` that vectorizes well, meaningful only for `x > 0`; `x` must be float32.",
    fast_inverse => MathFn::FastInverse,
        "`fast_inverse(x)`: a fast approximation of `1 / x`; `x` must be float32 or float16.",
    fast_inverse_sqrt => MathFn::FastInverseSqrt,
        "`fast_inverse_sqrt(x)`: a fast approximation of `1 / sqrt(x)`; `x` must be float32 or float16.",
    erf => MathFn::Erf,
        "`erf(x)`: the error function of `x`; `x` must be float32.",
);

/// `fract(x)`: the fractional part of `x`, `x - trunc(x)`, which has the sign
/// of `x`. An integer `x` is converted to float32 first.
#[pyfunction]
fn fract(x: &Bound<'_, PyAny>) -> R {
    ok(math::fract(py_to_expr(x)?))
}
/// `atan2(y, x)`: the angle in radians, in [-pi, pi], of the point (`x`, `y`):
/// the arctangent of `y / x` in the right quadrant. It is computed in the
/// type of `y` if that is float64 or float16, in float32 otherwise.
#[pyfunction]
fn atan2(y: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> R {
    ok(math::atan2(py_to_expr(y)?, py_to_expr(x)?))
}
/// `hypot(x, y)`: `sqrt(x*x + y*y)`, the length of the vector (`x`, `y`).
#[pyfunction]
fn hypot(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> R {
    ok(math::hypot(py_to_expr(x)?, py_to_expr(y)?))
}
/// `pow(x, y)`: `x` raised to the power `y`. An integer constant `y` is
/// expanded into multiplications in the type of `x` (a negative one gives
/// `1 / x**-y`); otherwise both are converted to floating point (the type of
/// `x` if it is float64 or float16, float32 otherwise).
#[pyfunction]
fn pow(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> R {
    ok(math::pow(py_to_expr(x)?, py_to_expr(y)?))
}
/// `fast_pow(x, y)`: a fast float32 approximation of `x` raised to the power
/// `y`, which vectorizes well; an integer constant `y` is expanded into
/// multiplications as in `pow`.
#[pyfunction]
fn fast_pow(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> R {
    ok(math::fast_pow(py_to_expr(x)?, py_to_expr(y)?))
}

/// `cast(t, e)`: `e` converted to the `Type` `t`. Integer casts wrap around
/// on overflow, float-to-integer casts round toward zero; casts to or from a
/// Handle are refused (use `reinterpret`). See `saturating_cast` to clamp.
#[pyfunction]
fn cast(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> R {
    ok(operators::cast(type_from_py(t)?, py_to_expr(e)?))
}
/// `reinterpret(t, e)`: the bits of `e` read as a value of the `Type` `t`;
/// both must have the same total number of bits, or it is an error.
#[pyfunction]
fn reinterpret(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> R {
    ok(operators::reinterpret(type_from_py(t)?, py_to_expr(e)?))
}
/// `saturating_cast(t, e)`: `e` converted to the `Type` `t`, clamped to the
/// range of `t` first, so out-of-range values become its minimum or maximum
/// instead of wrapping around. A vector `e` keeps its lanes.
#[pyfunction]
fn saturating_cast(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> R {
    ok(math::saturating_cast(type_from_py(t)?, py_to_expr(e)?))
}

// Each entry's doc string is the Python function's docstring.
macro_rules! concise_casts {
    ($($fname:ident = $pyname:literal => $ty:expr, $sat:expr, $doc:literal);* $(;)?) => {
        $(
            #[doc = $doc]
            #[pyfunction(name = $pyname)]
            fn $fname(e: &Bound<'_, PyAny>) -> R {
                let t: Type = $ty;
                // A Python float cast to f64 keeps all of its precision (it
                // would otherwise become a float32 constant first).
                if t == Type::float(64) && e.is_exact_instance_of::<pyo3::types::PyFloat>() {
                    return Ok(PyExpr::new(Expr::f64(e.extract::<f64>()?)));
                }
                // `f32(0.1)` asks for the float32 rounding: no warning that
                // the literal loses precision (Halide gives none either).
                if t == Type::float(32) && e.is_exact_instance_of::<pyo3::types::PyFloat>() {
                    return Ok(PyExpr::new(Expr::f32(e.extract::<f64>()? as f32 as f64)));
                }
                let e = py_to_expr(e)?;
                let t: Type = $ty;
                let t = t.with_lanes(e.lanes());
                if $sat { ok(math::saturating_cast(t, e)) } else { ok(operators::cast(t, e)) }
            }
        )*
        fn register_casts(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($fname, m)?)?; )*
            Ok(())
        }
    };
}

concise_casts!(
    cast_i8 = "i8" => Type::int(8), false,
        "`i8(e)`: `e` cast to int8, as `cast(Int(8), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_i16 = "i16" => Type::int(16), false,
        "`i16(e)`: `e` cast to int16, as `cast(Int(16), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_i32 = "i32" => Type::int(32), false,
        "`i32(e)`: `e` cast to int32, as `cast(Int(32), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_i64 = "i64" => Type::int(64), false,
        "`i64(e)`: `e` cast to int64, as `cast(Int(64), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_u8 = "u8" => Type::uint(8), false,
        "`u8(e)`: `e` cast to uint8, as `cast(UInt(8), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_u16 = "u16" => Type::uint(16), false,
        "`u16(e)`: `e` cast to uint16, as `cast(UInt(16), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_u32 = "u32" => Type::uint(32), false,
        "`u32(e)`: `e` cast to uint32, as `cast(UInt(32), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_u64 = "u64" => Type::uint(64), false,
        "`u64(e)`: `e` cast to uint64, as `cast(UInt(64), e)` (wrapping on overflow); a vector `e` keeps its lanes.";
    cast_f32 = "f32" => Type::float(32), false,
        "`f32(e)`: `e` cast to float32, as `cast(Float(32), e)`; a vector `e` keeps its lanes.";
    cast_f64 = "f64" => Type::float(64), false,
        "`f64(e)`: `e` cast to float64, as `cast(Float(64), e)`; a Python float keeps its full double precision, and a vector `e` keeps its lanes.";
    cast_i8_sat = "i8_sat" => Type::int(8), true,
        "`i8_sat(e)`: `e` cast to int8 with saturation, as `saturating_cast(Int(8), e)`: out-of-range values become the type's minimum or maximum.";
    cast_i16_sat = "i16_sat" => Type::int(16), true,
        "`i16_sat(e)`: `e` cast to int16 with saturation, as `saturating_cast(Int(16), e)`: out-of-range values become the type's minimum or maximum.";
    cast_i32_sat = "i32_sat" => Type::int(32), true,
        "`i32_sat(e)`: `e` cast to int32 with saturation, as `saturating_cast(Int(32), e)`: out-of-range values become the type's minimum or maximum.";
    cast_i64_sat = "i64_sat" => Type::int(64), true,
        "`i64_sat(e)`: `e` cast to int64 with saturation, as `saturating_cast(Int(64), e)`: out-of-range values become the type's minimum or maximum.";
    cast_u8_sat = "u8_sat" => Type::uint(8), true,
        "`u8_sat(e)`: `e` cast to uint8 with saturation, as `saturating_cast(UInt(8), e)`: out-of-range values become the type's minimum or maximum.";
    cast_u16_sat = "u16_sat" => Type::uint(16), true,
        "`u16_sat(e)`: `e` cast to uint16 with saturation, as `saturating_cast(UInt(16), e)`: out-of-range values become the type's minimum or maximum.";
    cast_u32_sat = "u32_sat" => Type::uint(32), true,
        "`u32_sat(e)`: `e` cast to uint32 with saturation, as `saturating_cast(UInt(32), e)`: out-of-range values become the type's minimum or maximum.";
    cast_u64_sat = "u64_sat" => Type::uint(64), true,
        "`u64_sat(e)`: `e` cast to uint64 with saturation, as `saturating_cast(UInt(64), e)`: out-of-range values become the type's minimum or maximum.";
);

/// `select(c0, v0, c1, v1, ..., default)`: `v0` where the bool `c0` is true,
/// else `v1` where `c1` is true, ..., else `default`, chosen per point (every
/// value is computed). The values must have one type (an integer constant
/// takes the other's); with Tuple values the result is a Python tuple of
/// Exprs, one per element. It takes an odd number (at least 3) of arguments.
// Tuple values are handled in py_tuple.rs.
#[pyfunction]
#[pyo3(signature = (*args))]
fn select(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    if args.len() < 3 {
        return Err(PyValueError::new_err(
            "select() must have at least 3 arguments",
        ));
    }
    if args.len() % 2 == 0 {
        return Err(PyValueError::new_err(
            "select() must have an odd number of arguments",
        ));
    }
    if let Some(t) = crate::py_tuple::select_tuples(args)? {
        return Ok(t);
    }
    let e = ok(math::select_n(crate::py_tuple::select_args_as_exprs(args)?))?;
    Ok(Py::new(args.py(), e)?.into_any())
}

/// `min(a, b, ...)`: the smallest of two or more values, as an Expr (operands
/// are converted to a common type as in arithmetic).
#[pyfunction]
#[pyo3(signature = (*args))]
fn min(args: &Bound<'_, PyTuple>) -> R {
    if args.len() < 2 {
        return Err(PyValueError::new_err(
            "min() must have at least 2 arguments",
        ));
    }
    ok(math::min_n(exprs(args)?))
}

/// `max(a, b, ...)`: the largest of two or more values, as an Expr (operands
/// are converted to a common type as in arithmetic).
#[pyfunction]
#[pyo3(signature = (*args))]
fn max(args: &Bound<'_, PyTuple>) -> R {
    if args.len() < 2 {
        return Err(PyValueError::new_err(
            "max() must have at least 2 arguments",
        ));
    }
    ok(math::max_n(exprs(args)?))
}

/// `clamp(a, lo, hi)`: `a` limited to [`lo`, `hi`], i.e. `max(min(a, hi), lo)`.
/// The bounds must convert to the type of `a` without loss (e.g. an int
/// constant that fits), or it is an error.
#[pyfunction]
fn clamp(a: &Bound<'_, PyAny>, lo: &Bound<'_, PyAny>, hi: &Bound<'_, PyAny>) -> R {
    ok(math::clamp(
        py_to_expr(a)?,
        py_to_expr(lo)?,
        py_to_expr(hi)?,
    ))
}
/// `abs(a)`: the absolute value of `a`. A signed integer gives the unsigned
/// type of the same width (so `abs` of the most negative value is exact); an
/// unsigned value is returned unchanged and a float keeps its type.
#[pyfunction]
fn abs(a: &Bound<'_, PyAny>) -> R {
    ok(math::abs(py_to_expr(a)?))
}
/// `absd(a, b)`: the absolute difference `|a - b|`, computed without
/// overflow; integer operands give the unsigned type of the same width.
#[pyfunction]
fn absd(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::absd(py_to_expr(a)?, py_to_expr(b)?))
}
/// `lerp(a, b, w)`: linear interpolation from `a` (at `w` = 0) to `b` (at
/// `w` = 1), `a * (1 - w) + b * w`. `a` and `b` must have one type (an integer
/// constant takes the other's) and not be 64-bit integers; the weight `w` is
/// a float or an unsigned integer (whose full range, 0 to its maximum, means
/// 0 to 1). Integer results are rounded, and a constant float weight must lie
/// in [0, 1] for integer values.
#[pyfunction]
fn lerp(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, w: &Bound<'_, PyAny>) -> R {
    ok(math::lerp(py_to_expr(a)?, py_to_expr(b)?, py_to_expr(w)?))
}
/// `mux(id, values)`: `values[id]` for the integer Expr `id`, the last value
/// when `id` is out of range. `values` is a list of Exprs of one type; a
/// Tuple gives its chosen element, and a list of Tuples gives a Tuple.
// `mux(id, tuple)` and `mux(id, [tuples])` are handled in py_tuple.rs.
#[pyfunction]
fn mux(id: &Bound<'_, PyAny>, values: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    if let Some(r) = crate::py_tuple::mux_tuples(id.py(), id, values)? {
        return Ok(r);
    }
    let vals: Vec<Expr> = if let Ok(l) = values.cast::<PyList>() {
        l.iter().map(|v| py_to_expr(&v)).collect::<PyResult<_>>()?
    } else if let Ok(t) = values.cast::<PyTuple>() {
        t.iter().map(|v| py_to_expr(&v)).collect::<PyResult<_>>()?
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "mux(): values must be a list of Exprs",
        ));
    };
    let e = ok(math::mux(py_to_expr(id)?, vals))?;
    Ok(Py::new(id.py(), e)?.into_any())
}
/// `logical_not(a)`: the boolean negation of the bool `a` (any other type is
/// an error).
#[pyfunction]
fn logical_not(a: &Bound<'_, PyAny>) -> R {
    ok(operators::logical_not(py_to_expr(a)?))
}
/// `popcount(a)`: the number of bits set in the integer `a`, in the type of `a`.
#[pyfunction]
fn popcount(a: &Bound<'_, PyAny>) -> R {
    ok(math::popcount(py_to_expr(a)?))
}
/// `count_leading_zeros(a)`: the number of zero bits above the highest set bit
/// of the integer `a`, in the type of `a`.
#[pyfunction]
fn count_leading_zeros(a: &Bound<'_, PyAny>) -> R {
    ok(math::count_leading_zeros(py_to_expr(a)?))
}
/// `count_trailing_zeros(a)`: the number of zero bits below the lowest set bit
/// of the integer `a`, in the type of `a`.
#[pyfunction]
fn count_trailing_zeros(a: &Bound<'_, PyAny>) -> R {
    ok(math::count_trailing_zeros(py_to_expr(a)?))
}
/// `div_round_to_zero(a, b)`: integer division rounding toward zero, as in C
/// (Halide's `/` rounds so that the remainder is never negative). Unsigned
/// operands divide normally; non-integers are an error.
#[pyfunction]
fn div_round_to_zero(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::div_round_to_zero(py_to_expr(a)?, py_to_expr(b)?))
}
/// `mod_round_to_zero(a, b)`: the remainder of `div_round_to_zero(a, b)`,
/// which has the sign of `a`, as C's `%` (Halide's `%` is never negative).
/// Non-integers are an error.
#[pyfunction]
fn mod_round_to_zero(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::mod_round_to_zero(py_to_expr(a)?, py_to_expr(b)?))
}

// Each entry's doc string is the Python function's docstring.
macro_rules! same_type_binary {
    ($($fname:ident => $which:expr, $doc:literal),* $(,)?) => {
        $(
            #[doc = $doc]
            #[pyfunction]
            fn $fname(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
                ok(math::same_type_binary($which, py_to_expr(a)?, py_to_expr(b)?))
            }
        )*
        fn register_same_type(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($fname, m)?)?; )*
            Ok(())
        }
    };
}

same_type_binary!(
    saturating_add => Intrinsic::SaturatingAdd,
        "`saturating_add(a, b)`: `a + b`, clamped to the range of the type instead of wrapping around (the operands are converted to a common type first).",
    saturating_sub => Intrinsic::SaturatingSub,
        "`saturating_sub(a, b)`: `a - b`, clamped to the range of the type instead of wrapping around (the operands are converted to a common type first).",
    halving_add => Intrinsic::HalvingAdd,
        "`halving_add(a, b)`: `(a + b) / 2`, rounded down, computed without overflow in the common type of `a` and `b`.",
    halving_sub => Intrinsic::HalvingSub,
        "`halving_sub(a, b)`: `(a - b) / 2`, rounded down, computed without overflow in the common type of `a` and `b`.",
    rounding_halving_add => Intrinsic::RoundingHalvingAdd,
        "`rounding_halving_add(a, b)`: `(a + b + 1) / 2` (the average, rounded up), computed without overflow in the common type of `a` and `b`.",
);

/// `widening_add(a, b)`: `a + b` in a type twice as wide as the operands' common
/// type (same signedness), so it cannot overflow.
#[pyfunction]
fn widening_add(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::widening_add(py_to_expr(a)?, py_to_expr(b)?))
}
/// `widening_sub(a, b)`: `a - b` in a signed type twice as wide as the
/// operands' common type, so it cannot overflow.
#[pyfunction]
fn widening_sub(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::widening_sub(py_to_expr(a)?, py_to_expr(b)?))
}
/// `widening_mul(a, b)`: `a * b` in a type twice as wide as the wider operand,
/// so it cannot overflow. The operands may differ in signedness (the result is
/// signed if either is) but must both be integers or both floats.
#[pyfunction]
fn widening_mul(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::widening_mul(py_to_expr(a)?, py_to_expr(b)?))
}

fn msr(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, q: &Bound<'_, PyAny>, rounding: bool) -> R {
    let (a, b) = (py_to_expr(a)?, py_to_expr(b)?);
    match small_int(q) {
        Some(k) => ok(math::mul_shift_right_int(a, b, k, rounding)),
        None => ok(math::mul_shift_right(a, b, py_to_expr(q)?, rounding)),
    }
}
/// `mul_shift_right(a, b, q)`: `(a * b) >> q`, with the product computed at
/// double width and the result narrowed back to the operands' type with
/// saturation. `q` must be unsigned, or a Python int.
#[pyfunction]
fn mul_shift_right(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, q: &Bound<'_, PyAny>) -> R {
    msr(a, b, q, false)
}
/// `rounding_mul_shift_right(a, b, q)`: like `mul_shift_right`, but the shift
/// rounds to nearest: `(a * b + 2**(q - 1)) >> q` at double width, narrowed back
/// to the operands' type with saturation. `q` must be unsigned, or a Python int.
#[pyfunction]
fn rounding_mul_shift_right(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, q: &Bound<'_, PyAny>) -> R {
    msr(a, b, q, true)
}

/// `widening_shift_left(a, b)` and the other shifts: Halide's int overload
/// for a Python int amount that fits in 32 bits, else the Expr one.
fn fixed_point_shift(which: Intrinsic, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    let a = py_to_expr(a)?;
    match small_int(b) {
        Some(k) => ok(fixed_point::shift_by_int(which, a, k as i64)),
        None => ok(fixed_point::shift(which, a, py_to_expr(b)?)),
    }
}

// Each entry's doc string is the Python function's docstring.
macro_rules! fixed_point_fns {
    ($($fname:ident => $which:expr, $build:ident, $doc:literal);* $(;)?) => {
        $(
            #[doc = $doc]
            #[pyfunction]
            fn $fname(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
                $build($which, a, b)
            }
        )*
        fn register_fixed_point(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_function(wrap_pyfunction!($fname, m)?)?; )*
            Ok(())
        }
    };
}

fn widen_right(which: Intrinsic, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(fixed_point::widen_right(which, py_to_expr(a)?, py_to_expr(b)?))
}

fixed_point_fns!(
    widening_shift_left => Intrinsic::WideningShiftLeft, fixed_point_shift,
        "`widening_shift_left(a, b)`: `a << b` in a type twice as wide as `a`, so no bits are lost. A negative Python int `b` shifts right instead.";
    widening_shift_right => Intrinsic::WideningShiftRight, fixed_point_shift,
        "`widening_shift_right(a, b)`: `a >> b` in a type twice as wide as `a`. A negative Python int `b` shifts left instead.";
    rounding_shift_left => Intrinsic::RoundingShiftLeft, fixed_point_shift,
        "`rounding_shift_left(a, b)`: `a << b` in the type of `a`; where `b` is negative it is a right shift by `-b` that rounds to nearest (see `rounding_shift_right`).";
    rounding_shift_right => Intrinsic::RoundingShiftRight, fixed_point_shift,
        "`rounding_shift_right(a, b)`: `a >> b` rounded to nearest (ties up), i.e. `(a + 2**(b - 1)) >> b` without overflow, in the type of `a`. A negative `b` shifts left.";
    widen_right_add => Intrinsic::WidenRightAdd, widen_right,
        "`widen_right_add(a, b)`: `a + b` where `a` is an integer with exactly twice the bits of the integer `b` (same signedness, `b` at most 32 bits); `b` is widened and the result has the type of `a`.";
    widen_right_mul => Intrinsic::WidenRightMul, widen_right,
        "`widen_right_mul(a, b)`: `a * b` where `a` is an integer with exactly twice the bits of the integer `b` (same signedness, `b` at most 32 bits); `b` is widened and the result has the type of `a`.";
    widen_right_sub => Intrinsic::WidenRightSub, widen_right,
        "`widen_right_sub(a, b)`: `a - b` where `a` is an integer with exactly twice the bits of the integer `b` (same signedness, `b` at most 32 bits); `b` is widened and the result has the type of `a`.";
);

/// `extract_bits(t, e, lsb)`: the bits of `e` from bit `lsb` (0 is the least
/// significant) upward, as many as the `Type` `t` has, read as a `t`; bits past
/// the top of `e` read as zero.
#[pyfunction]
fn extract_bits(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>, lsb: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(bits::extract_bits(type_from_py(t)?, py_to_expr(e)?, py_to_expr(lsb)?)))
}

/// `concat_bits([e0, e1, ...])`: the bits of the values joined into one wider
/// integer, `e0` in the lowest bits. The values (a list or tuple) must all
/// have one type and their count must be a power of two.
#[pyfunction]
fn concat_bits(values: &Bound<'_, PyAny>) -> R {
    ok(bits::concat_bits(expr_list(values, "concat_bits")?))
}

/// A Python list or tuple of Expr-convertible values.
fn expr_list(values: &Bound<'_, PyAny>, fname: &str) -> PyResult<Vec<Expr>> {
    if values.is_instance_of::<PyList>() || values.is_instance_of::<PyTuple>() {
        return values.try_iter()?.map(|v| py_to_expr(&v?)).collect();
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{fname}(): incompatible function arguments: expected a list of Exprs"
    )))
}

/// The `*args` of `require` and `memoize_tag`: each must convert to an
/// Expr; pybind11 reports a failed conversion there as a RuntimeError.
fn cast_args(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Expr>> {
    args.iter()
        .map(|a| {
            py_to_expr(&a).map_err(|_| {
                let t = a.get_type().str().map(|s| s.to_string()).unwrap_or_default();
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "Unable to cast Python instance of type {t} to C++ type '?' (#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)"
                ))
            })
        })
        .collect()
}

/// `unsafe_promise_clamped(value, min, max)`: `value`, with a promise to the
/// compiler that it lies in [`min`, `max`], which can simplify bounds and
/// code. Nothing checks the promise; breaking it gives undefined results. The
/// bounds must convert to the type of `value` without loss.
#[pyfunction]
fn unsafe_promise_clamped(value: &Bound<'_, PyAny>, min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> R {
    ok(math::unsafe_promise_clamped(py_to_expr(value)?, py_to_expr(min)?, py_to_expr(max)?))
}

/// `memoize_tag(result, *cache_key_values)`: `result`, tagged so that a
/// memoized Func whose definition uses it keys its cache on
/// `cache_key_values` instead of on `result` itself.
#[pyfunction]
#[pyo3(signature = (result, *cache_key_values))]
fn memoize_tag(result: &Bound<'_, PyAny>, cache_key_values: &Bound<'_, PyTuple>) -> R {
    Ok(PyExpr::new(math::memoize_tag(py_to_expr(result)?, cast_args(cache_key_values)?)))
}

/// `require(condition, value, *args)`: `value` where the bool `condition`
/// holds; where it does not, the pipeline fails with "Requirement Failed:"
/// followed by `value` and `args` (Exprs or numbers) in the error message.
#[pyfunction]
#[pyo3(signature = (condition, value, *args))]
fn require(condition: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> R {
    ok(math::require(py_to_expr(condition)?, py_to_expr(value)?, cast_args(args)?))
}

/// `scatter(values)`: several values of one type (a list) packed into one
/// expression, for the left-hand side of an update: `f[scatter([3, 5])] =
/// f[gather([5, 3])]` writes two points at once (here, swapping them); all
/// values are read before any is stored.
#[pyfunction]
fn scatter(values: &Bound<'_, PyAny>) -> R {
    ok(scatter_gather::scatter_gather(expr_list(values, "scatter")?, "scatter"))
}
/// `gather(values)`: several values of one type (a list) packed into one
/// expression, for the right-hand side of an update that uses `scatter`
/// (`f[scatter([3, 5])] = f[gather([5, 3])]`).
#[pyfunction]
fn gather(values: &Bound<'_, PyAny>) -> R {
    ok(scatter_gather::scatter_gather(expr_list(values, "gather")?, "gather"))
}

fn seed_of(seed: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Expr>> {
    seed.map(py_to_expr).transpose()
}

/// `random_float(seed=None)`: a pseudo-random float32 uniformly distributed
/// in [0, 1], different at each point of the Func definition that uses it (and
/// for each call), but the same every time the pipeline runs. The optional
/// int32 `seed` gives another sequence.
#[pyfunction]
#[pyo3(signature = (seed=None))]
fn random_float(seed: Option<&Bound<'_, PyAny>>) -> R {
    ok(random::random_float(seed_of(seed)?))
}
/// `random_uint(seed=None)`: a pseudo-random uint32, every value equally
/// likely, different at each point of the Func definition that uses it, the
/// same every time the pipeline runs. The optional `seed` is an int32 or uint32.
#[pyfunction]
#[pyo3(signature = (seed=None))]
fn random_uint(seed: Option<&Bound<'_, PyAny>>) -> R {
    ok(random::random_uint(seed_of(seed)?))
}
/// `random_int(seed=None)`: a pseudo-random int32, every value equally likely
/// (the bits of `random_uint`), different at each point of the Func definition
/// that uses it, the same every time the pipeline runs.
#[pyfunction]
#[pyo3(signature = (seed=None))]
fn random_int(seed: Option<&Bound<'_, PyAny>>) -> R {
    ok(random::random_int(seed_of(seed)?))
}

fn print_args(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Expr>> {
    args.iter()
        .map(|a| {
            if a.is_instance_of::<PyString>() {
                Ok(Expr::string(a.extract::<String>()?))
            } else {
                py_to_expr(&a)
            }
        })
        .collect()
}

/// `print(*args)`: an Expr equal to the first argument that, each time it is
/// evaluated, prints all the arguments (Exprs, numbers, strings) separated by
/// spaces, on one line. Useful for debugging a pipeline.
#[pyfunction]
#[pyo3(signature = (*args))]
fn print(args: &Bound<'_, PyTuple>) -> R {
    ok(math::print(print_args(args)?))
}

/// `print_when(condition, *args)`: like `print`, but prints only where the
/// bool `condition` is true; the value is the first of `args`.
#[pyfunction]
#[pyo3(signature = (condition, *args))]
fn print_when(condition: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> R {
    if args.is_empty() {
        return Err(PyValueError::new_err(
            "print_when() requires at least one value to print",
        ));
    }
    ok(math::print_when(py_to_expr(condition)?, print_args(args)?))
}

/// `likely(e)`: `e`, marked as the common case: the compiler splits the loops
/// around it so that the steady state takes this path without checks (as the
/// boundary conditions do). Rarely needed directly.
#[pyfunction]
fn likely(e: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(math::likely(py_to_expr(e)?)))
}
/// `likely_if_innermost(e)`: like `likely`, but only acted on in the innermost
/// loop.
#[pyfunction]
fn likely_if_innermost(e: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(math::likely_if_innermost(py_to_expr(e)?)))
}
/// `user_context_value()`: the user context the pipeline was called with (a
/// Handle; null when the caller gives none), e.g. to pass to an extern stage.
#[pyfunction]
fn user_context_value() -> PyExpr {
    PyExpr::new(math::user_context_value())
}
/// `undef(t)`: an undefined value of the `Type` `t`: a store of it is skipped,
/// so an update definition can leave some elements (e.g. of a Tuple) unchanged.
#[pyfunction]
fn undef(t: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(math::undef(type_from_py(t)?)))
}
/// `strict_float(e)`: `e` itself. Halide uses it to ask for strict IEEE
/// floating-point evaluation of `e`; ferrohalide returns the expression
/// unchanged.
#[pyfunction]
fn strict_float(e: &Bound<'_, PyAny>) -> R {
    // Halide 21 returns the expression unchanged unless the target asks for
    // strict float semantics.
    Ok(PyExpr::new(py_to_expr(e)?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_unary(m)?;
    register_casts(m)?;
    register_same_type(m)?;
    register_fixed_point(m)?;
    macro_rules! add {
        ($($f:ident),*) => { $( m.add_function(wrap_pyfunction!($f, m)?)?; )* };
    }
    add!(
        fract,
        atan2,
        hypot,
        pow,
        fast_pow,
        cast,
        reinterpret,
        saturating_cast,
        select,
        min,
        max,
        clamp,
        abs,
        absd,
        lerp,
        mux,
        logical_not,
        popcount,
        count_leading_zeros,
        count_trailing_zeros,
        div_round_to_zero,
        mod_round_to_zero,
        widening_add,
        widening_sub,
        widening_mul,
        mul_shift_right,
        rounding_mul_shift_right,
        print,
        print_when,
        likely,
        likely_if_innermost,
        undef,
        user_context_value,
        strict_float,
        extract_bits,
        concat_bits,
        unsafe_promise_clamped,
        memoize_tag,
        require,
        random_float,
        random_uint,
        random_int,
        scatter,
        gather
    );
    Ok(())
}
