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

macro_rules! unary_math {
    ($($fname:ident => $which:expr),* $(,)?) => {
        $(
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
    sqrt => MathFn::Sqrt, sin => MathFn::Sin, cos => MathFn::Cos, tan => MathFn::Tan,
    asin => MathFn::Asin, acos => MathFn::Acos, atan => MathFn::Atan,
    sinh => MathFn::Sinh, cosh => MathFn::Cosh, tanh => MathFn::Tanh,
    asinh => MathFn::Asinh, acosh => MathFn::Acosh, atanh => MathFn::Atanh,
    exp => MathFn::Exp, log => MathFn::Log, floor => MathFn::Floor, ceil => MathFn::Ceil,
    round => MathFn::Round, trunc => MathFn::Trunc, is_nan => MathFn::IsNan, is_inf => MathFn::IsInf,
    is_finite => MathFn::IsFinite, fast_sin => MathFn::FastSin, fast_cos => MathFn::FastCos,
    fast_exp => MathFn::FastExp, fast_log => MathFn::FastLog, fast_inverse => MathFn::FastInverse,
    fast_inverse_sqrt => MathFn::FastInverseSqrt, erf => MathFn::Erf,
);

#[pyfunction]
fn fract(x: &Bound<'_, PyAny>) -> R {
    ok(math::fract(py_to_expr(x)?))
}
#[pyfunction]
fn atan2(y: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> R {
    ok(math::atan2(py_to_expr(y)?, py_to_expr(x)?))
}
#[pyfunction]
fn hypot(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> R {
    ok(math::hypot(py_to_expr(x)?, py_to_expr(y)?))
}
#[pyfunction]
fn pow(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> R {
    ok(math::pow(py_to_expr(x)?, py_to_expr(y)?))
}
#[pyfunction]
fn fast_pow(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> R {
    ok(math::fast_pow(py_to_expr(x)?, py_to_expr(y)?))
}

#[pyfunction]
fn cast(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> R {
    ok(operators::cast(type_from_py(t)?, py_to_expr(e)?))
}
#[pyfunction]
fn reinterpret(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> R {
    ok(operators::reinterpret(type_from_py(t)?, py_to_expr(e)?))
}
#[pyfunction]
fn saturating_cast(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> R {
    ok(math::saturating_cast(type_from_py(t)?, py_to_expr(e)?))
}

macro_rules! concise_casts {
    ($($fname:ident = $pyname:literal => $ty:expr, $sat:expr);* $(;)?) => {
        $(
            #[pyfunction(name = $pyname)]
            fn $fname(e: &Bound<'_, PyAny>) -> R {
                let t: Type = $ty;
                // A Python float cast to f64 keeps all of its precision (it
                // would otherwise become a float32 constant first).
                if t == Type::float(64) && e.is_exact_instance_of::<pyo3::types::PyFloat>() {
                    return Ok(PyExpr::new(Expr::f64(e.extract::<f64>()?)));
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
    cast_i8 = "i8" => Type::int(8), false; cast_i16 = "i16" => Type::int(16), false; cast_i32 = "i32" => Type::int(32), false; cast_i64 = "i64" => Type::int(64), false;
    cast_u8 = "u8" => Type::uint(8), false; cast_u16 = "u16" => Type::uint(16), false; cast_u32 = "u32" => Type::uint(32), false; cast_u64 = "u64" => Type::uint(64), false;
    cast_f32 = "f32" => Type::float(32), false; cast_f64 = "f64" => Type::float(64), false;
    cast_i8_sat = "i8_sat" => Type::int(8), true; cast_i16_sat = "i16_sat" => Type::int(16), true; cast_i32_sat = "i32_sat" => Type::int(32), true; cast_i64_sat = "i64_sat" => Type::int(64), true;
    cast_u8_sat = "u8_sat" => Type::uint(8), true; cast_u16_sat = "u16_sat" => Type::uint(16), true; cast_u32_sat = "u32_sat" => Type::uint(32), true; cast_u64_sat = "u64_sat" => Type::uint(64), true;
);

/// `select(c0, v0, ..., default)` on Exprs, or on Tuples (py_tuple.rs),
/// which return a Python tuple of Exprs.
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

#[pyfunction]
fn clamp(a: &Bound<'_, PyAny>, lo: &Bound<'_, PyAny>, hi: &Bound<'_, PyAny>) -> R {
    ok(math::clamp(
        py_to_expr(a)?,
        py_to_expr(lo)?,
        py_to_expr(hi)?,
    ))
}
#[pyfunction]
fn abs(a: &Bound<'_, PyAny>) -> R {
    ok(math::abs(py_to_expr(a)?))
}
#[pyfunction]
fn absd(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::absd(py_to_expr(a)?, py_to_expr(b)?))
}
#[pyfunction]
fn lerp(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, w: &Bound<'_, PyAny>) -> R {
    ok(math::lerp(py_to_expr(a)?, py_to_expr(b)?, py_to_expr(w)?))
}
/// `mux(id, [exprs])`; `mux(id, tuple)` and `mux(id, [tuples])` in py_tuple.rs.
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
#[pyfunction]
fn logical_not(a: &Bound<'_, PyAny>) -> R {
    ok(operators::logical_not(py_to_expr(a)?))
}
#[pyfunction]
fn popcount(a: &Bound<'_, PyAny>) -> R {
    ok(math::popcount(py_to_expr(a)?))
}
#[pyfunction]
fn count_leading_zeros(a: &Bound<'_, PyAny>) -> R {
    ok(math::count_leading_zeros(py_to_expr(a)?))
}
#[pyfunction]
fn count_trailing_zeros(a: &Bound<'_, PyAny>) -> R {
    ok(math::count_trailing_zeros(py_to_expr(a)?))
}
#[pyfunction]
fn div_round_to_zero(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::div_round_to_zero(py_to_expr(a)?, py_to_expr(b)?))
}
#[pyfunction]
fn mod_round_to_zero(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::mod_round_to_zero(py_to_expr(a)?, py_to_expr(b)?))
}

macro_rules! same_type_binary {
    ($($fname:ident => $which:expr),* $(,)?) => {
        $(
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
    saturating_sub => Intrinsic::SaturatingSub,
    halving_add => Intrinsic::HalvingAdd,
    halving_sub => Intrinsic::HalvingSub,
    rounding_halving_add => Intrinsic::RoundingHalvingAdd,
);

#[pyfunction]
fn widening_add(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::widening_add(py_to_expr(a)?, py_to_expr(b)?))
}
#[pyfunction]
fn widening_sub(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> R {
    ok(math::widening_sub(py_to_expr(a)?, py_to_expr(b)?))
}
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
#[pyfunction]
fn mul_shift_right(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, q: &Bound<'_, PyAny>) -> R {
    msr(a, b, q, false)
}
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

macro_rules! fixed_point_fns {
    ($($fname:ident => $which:expr, $build:ident);* $(;)?) => {
        $(
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
    widening_shift_left => Intrinsic::WideningShiftLeft, fixed_point_shift;
    widening_shift_right => Intrinsic::WideningShiftRight, fixed_point_shift;
    rounding_shift_left => Intrinsic::RoundingShiftLeft, fixed_point_shift;
    rounding_shift_right => Intrinsic::RoundingShiftRight, fixed_point_shift;
    widen_right_add => Intrinsic::WidenRightAdd, widen_right;
    widen_right_mul => Intrinsic::WidenRightMul, widen_right;
    widen_right_sub => Intrinsic::WidenRightSub, widen_right;
);

#[pyfunction]
fn extract_bits(t: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>, lsb: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(bits::extract_bits(type_from_py(t)?, py_to_expr(e)?, py_to_expr(lsb)?)))
}

/// `concat_bits([e0, e1, ...])` (a list or tuple of Exprs).
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

#[pyfunction]
fn unsafe_promise_clamped(value: &Bound<'_, PyAny>, min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> R {
    ok(math::unsafe_promise_clamped(py_to_expr(value)?, py_to_expr(min)?, py_to_expr(max)?))
}

#[pyfunction]
#[pyo3(signature = (result, *cache_key_values))]
fn memoize_tag(result: &Bound<'_, PyAny>, cache_key_values: &Bound<'_, PyTuple>) -> R {
    Ok(PyExpr::new(math::memoize_tag(py_to_expr(result)?, cast_args(cache_key_values)?)))
}

#[pyfunction]
#[pyo3(signature = (condition, value, *args))]
fn require(condition: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> R {
    ok(math::require(py_to_expr(condition)?, py_to_expr(value)?, cast_args(args)?))
}

#[pyfunction]
fn scatter(values: &Bound<'_, PyAny>) -> R {
    ok(scatter_gather::scatter_gather(expr_list(values, "scatter")?, "scatter"))
}
#[pyfunction]
fn gather(values: &Bound<'_, PyAny>) -> R {
    ok(scatter_gather::scatter_gather(expr_list(values, "gather")?, "gather"))
}

fn seed_of(seed: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Expr>> {
    seed.map(py_to_expr).transpose()
}

#[pyfunction]
#[pyo3(signature = (seed=None))]
fn random_float(seed: Option<&Bound<'_, PyAny>>) -> R {
    ok(random::random_float(seed_of(seed)?))
}
#[pyfunction]
#[pyo3(signature = (seed=None))]
fn random_uint(seed: Option<&Bound<'_, PyAny>>) -> R {
    ok(random::random_uint(seed_of(seed)?))
}
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

#[pyfunction]
#[pyo3(signature = (*args))]
fn print(args: &Bound<'_, PyTuple>) -> R {
    ok(math::print(print_args(args)?))
}

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

#[pyfunction]
fn likely(e: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(math::likely(py_to_expr(e)?)))
}
#[pyfunction]
fn likely_if_innermost(e: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(math::likely_if_innermost(py_to_expr(e)?)))
}
#[pyfunction]
fn user_context_value() -> PyExpr {
    PyExpr::new(math::user_context_value())
}
#[pyfunction]
fn undef(t: &Bound<'_, PyAny>) -> R {
    Ok(PyExpr::new(math::undef(type_from_py(t)?)))
}
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
