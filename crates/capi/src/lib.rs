//! The C API of ferrohalide: build, schedule, realize and compile pipelines
//! from C or from any language's FFI, without a C++ toolchain.
//!
//! Conventions (also in the generated header):
//! - Objects are opaque handles made by `fh_*_new` / `fh_expr_*` and freed
//!   by the matching `fh_*_free`. A handle passed to a call is borrowed:
//!   the call never frees or keeps ownership of it (an Expr or Func made
//!   from others stays valid after they are freed).
//! - A call returning a handle returns null on failure; a call returning
//!   `int` returns 0 on success and -1 on failure. `fh_last_error()` gives
//!   the message (Halide's text) of the last failed call on the thread.
//!   Nothing aborts the process, and a wrong, freed or null handle is an
//!   error, not a crash.
//! - Buffers are Halide's `halide_buffer_t` (HalideRuntime.h), owned by the
//!   caller.

mod guard;
mod handle;

use std::ffi::c_char;

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, Type, TypeCode};
use ferrohalide_core::lang::boundary_conditions::{boundary_condition, Kind, Source};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::image_param::ImageParam;
use ferrohalide_core::lang::math;
use ferrohalide_core::lang::operators::{binary, cast, Op};
use ferrohalide_core::lang::parameter::{Parameter, ScalarInput};
use ferrohalide_core::lang::rdom::ReductionDomain;
use ferrohalide_core::lang::reduction::{inline_reduction, Reduction};
use ferrohalide_core::lang::stage::{Stage, VarOrRVar};
use ferrohalide_core::lang::var::Var;
use ferrohalide_core::schedule::TailStrategy;
use ferrohalide_runtime::buffer_t::halide_buffer_t;

use guard::{guard, message, string_arg, Result};
use handle::Handle;

pub use guard::fh_last_error;

/// A scalar type: Halide's `halide_type_t` (code 0 int, 1 uint, 2 float,
/// 3 handle; bits; lanes 1).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FhType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// A Var.
pub struct FhVar(Var);
/// An expression.
pub struct FhExpr(Expr);
/// A Func.
pub struct FhFunc(Func);
/// A scalar parameter (Halide's Param).
pub struct FhParam(Parameter);
/// An input buffer parameter (Halide's ImageParam).
pub struct FhImageParam(ImageParam);
/// The ordered arguments of a compiled pipeline.
pub struct FhArguments(Vec<Parameter>);
/// A reduction domain (Halide's RDom).
pub struct FhRDom(ReductionDomain);
/// A definition of a Func, to schedule: an update (Halide's Stage).
pub struct FhStage(Stage);

/// Each handle type, registered under its name.
macro_rules! handles {
    ($($t:ident),*) => {
        $(impl Handle for $t {
            const KIND: &'static str = stringify!($t);
        })*
    };
}
handles!(FhVar, FhExpr, FhFunc, FhParam, FhImageParam, FhArguments, FhRDom, FhStage);

/// Two-argument math functions (`fh_expr_math2`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum FhMath2 {
    Pow,
    Atan2,
    Hypot,
    /// `|a - b|`, exact (unsigned result for integers), as Halide's absd.
    Absd,
    FastPow,
}

/// Halide's boundary conditions (`fh_boundary_condition`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum FhBoundary {
    RepeatEdge,
    RepeatImage,
    MirrorImage,
    MirrorInterior,
}

/// Inline reductions (`fh_expr_reduce`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum FhReduction {
    Sum,
    Product,
    Maximum,
    Minimum,
}

/// Binary operators (`fh_expr_binary`), with Halide's type rules.
#[repr(C)]
#[derive(Clone, Copy)]
pub enum FhOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

/// One-argument math functions (`fh_expr_math`).
#[repr(C)]
#[derive(Clone, Copy)]
pub enum FhMath {
    Sqrt,
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    Floor,
    Ceil,
    Round,
    Trunc,
    Abs,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Erf,
    /// `x - trunc(x)` (with the sign of `x`, as in Halide).
    Fract,
    /// Bool results.
    IsNan,
    IsInf,
    IsFinite,
    /// Float32 only (Halide's fast approximations).
    FastSin,
    FastCos,
    FastExp,
    FastLog,
    FastInverse,
    FastInverseSqrt,
}

fn to_type(t: FhType) -> Result<Type> {
    let code = match t.code {
        0 => TypeCode::Int,
        1 => TypeCode::UInt,
        2 => TypeCode::Float,
        3 => TypeCode::Handle,
        c => return Err(format!("Error: bad type code {c}")),
    };
    let ty = Type::new(code, t.bits, t.lanes.max(1));
    let valid = match code {
        TypeCode::Int => matches!(t.bits, 8 | 16 | 32 | 64),
        TypeCode::UInt => matches!(t.bits, 1 | 8 | 16 | 32 | 64),
        TypeCode::Float => matches!(t.bits, 16 | 32 | 64),
        _ => t.bits == 64,
    };
    if !valid || t.lanes > 1 {
        return Err(format!("Error: unsupported type (code {}, bits {}, lanes {})", t.code, t.bits, t.lanes));
    }
    Ok(ty)
}

fn core<T>(r: ferrohalide_core::Result<T>) -> Result<T> {
    r.map_err(message)
}

fn expr_handle(r: Result<Expr>) -> Result<*mut FhExpr> {
    r.map(|e| handle::new(FhExpr(e)))
}

/// The Expr of handle `p` (argument `what`).
fn expr(p: *const FhExpr, what: &str) -> Result<Expr> {
    Ok(handle::get(p, what)?.0.clone())
}

fn exprs(p: *const *const FhExpr, n: usize, what: &str) -> Result<Vec<Expr>> {
    Ok(handle::get_all(p, n, what)?.into_iter().map(|e| e.0.clone()).collect())
}

// ---- Vars ----------------------------------------------------------------

/// A new Var named `name` (null: a fresh name).
#[no_mangle]
pub extern "C" fn fh_var_new(name: *const c_char) -> *mut FhVar {
    guard(std::ptr::null_mut(), || {
        let v = if name.is_null() { Var::fresh() } else { Var::new(string_arg(name, "name")?) };
        Ok(handle::new(FhVar(v)))
    })
}

#[no_mangle]
pub extern "C" fn fh_var_free(v: *mut FhVar) -> i32 {
    guard(-1, || handle::free(v, "var").map(|_| 0))
}

// ---- Exprs ---------------------------------------------------------------

/// The Var `v` as an Expr.
#[no_mangle]
pub extern "C" fn fh_expr_var(v: *const FhVar) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || expr_handle(Ok(handle::get(v, "var")?.0.expr())))
}

/// An integer constant of type `t` (an integer type; checked to fit).
#[no_mangle]
pub extern "C" fn fh_expr_int(t: FhType, value: i64) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let ty = to_type(t)?;
        if ty.is_float() || ty.is_handle() {
            return Err("Error: fh_expr_int needs an integer type".into());
        }
        core(ferrohalide_core::lang::operators::check_representable(ty, value))?;
        expr_handle(Ok(ferrohalide_core::lang::operators::make_const(ty, value)))
    })
}

/// A floating-point constant of type `t` (a float type).
#[no_mangle]
pub extern "C" fn fh_expr_float(t: FhType, value: f64) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let ty = to_type(t)?;
        if !ty.is_float() {
            return Err("Error: fh_expr_float needs a float type".into());
        }
        expr_handle(Ok(Expr::make_const_f64(ty, value)))
    })
}

/// `a op b`, with Halide's rules for mixed types.
#[no_mangle]
pub extern "C" fn fh_expr_binary(op: FhOp, a: *const FhExpr, b: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let (a, b) = (expr(a, "a")?, expr(b, "b")?);
        let o = match op {
            FhOp::Add => Op::Add,
            FhOp::Sub => Op::Sub,
            FhOp::Mul => Op::Mul,
            FhOp::Div => Op::Div,
            FhOp::Mod => Op::Mod,
            FhOp::Min => Op::Min,
            FhOp::Max => Op::Max,
            FhOp::Eq => Op::Eq,
            FhOp::Ne => Op::Ne,
            FhOp::Lt => Op::Lt,
            FhOp::Le => Op::Le,
            FhOp::Gt => Op::Gt,
            FhOp::Ge => Op::Ge,
            FhOp::And => Op::LogicalAnd,
            FhOp::Or => Op::LogicalOr,
            FhOp::BitAnd => Op::BitAnd,
            FhOp::BitOr => Op::BitOr,
            FhOp::BitXor => Op::BitXor,
            FhOp::Shl => Op::Shl,
            FhOp::Shr => Op::Shr,
        };
        expr_handle(core(binary(o, a, b)))
    })
}

/// `e` converted to type `t`.
#[no_mangle]
pub extern "C" fn fh_expr_cast(t: FhType, e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let e = expr(e, "e")?;
        expr_handle(core(cast(to_type(t)?, e)))
    })
}

/// `condition ? t : f`.
#[no_mangle]
pub extern "C" fn fh_expr_select(condition: *const FhExpr, t: *const FhExpr, f: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let c = expr(condition, "condition")?;
        let (t, f) = (expr(t, "t")?, expr(f, "f")?);
        expr_handle(core(math::select(c, t, f)))
    })
}

/// `clamp(e, lo, hi)`.
#[no_mangle]
pub extern "C" fn fh_expr_clamp(e: *const FhExpr, lo: *const FhExpr, hi: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let e = expr(e, "e")?;
        let (lo, hi) = (expr(lo, "lo")?, expr(hi, "hi")?);
        expr_handle(core(math::clamp(e, lo, hi)))
    })
}

/// A math function of `e`.
#[no_mangle]
pub extern "C" fn fh_expr_math(f: FhMath, e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        use ferrohalide_core::ir::MathFn;
        let e = expr(e, "e")?;
        let which = match f {
            FhMath::Abs => return expr_handle(core(math::abs(e))),
            FhMath::Fract => return expr_handle(core(math::fract(e))),
            FhMath::Sqrt => MathFn::Sqrt,
            FhMath::Sin => MathFn::Sin,
            FhMath::Cos => MathFn::Cos,
            FhMath::Tan => MathFn::Tan,
            FhMath::Exp => MathFn::Exp,
            FhMath::Log => MathFn::Log,
            FhMath::Floor => MathFn::Floor,
            FhMath::Ceil => MathFn::Ceil,
            FhMath::Round => MathFn::Round,
            FhMath::Trunc => MathFn::Trunc,
            FhMath::Asin => MathFn::Asin,
            FhMath::Acos => MathFn::Acos,
            FhMath::Atan => MathFn::Atan,
            FhMath::Sinh => MathFn::Sinh,
            FhMath::Cosh => MathFn::Cosh,
            FhMath::Tanh => MathFn::Tanh,
            FhMath::Asinh => MathFn::Asinh,
            FhMath::Acosh => MathFn::Acosh,
            FhMath::Atanh => MathFn::Atanh,
            FhMath::Erf => MathFn::Erf,
            FhMath::IsNan => MathFn::IsNan,
            FhMath::IsInf => MathFn::IsInf,
            FhMath::IsFinite => MathFn::IsFinite,
            FhMath::FastSin => MathFn::FastSin,
            FhMath::FastCos => MathFn::FastCos,
            FhMath::FastExp => MathFn::FastExp,
            FhMath::FastLog => MathFn::FastLog,
            FhMath::FastInverse => MathFn::FastInverse,
            FhMath::FastInverseSqrt => MathFn::FastInverseSqrt,
        };
        expr_handle(core(math::unary_math(which, e)))
    })
}

/// `f(a, b)` for a two-argument math function.
#[no_mangle]
pub extern "C" fn fh_expr_math2(f: FhMath2, a: *const FhExpr, b: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let (a, b) = (expr(a, "a")?, expr(b, "b")?);
        expr_handle(core(match f {
            FhMath2::Pow => math::pow(a, b),
            FhMath2::Atan2 => math::atan2(a, b),
            FhMath2::Hypot => math::hypot(a, b),
            FhMath2::Absd => math::absd(a, b),
            FhMath2::FastPow => math::fast_pow(a, b),
        }))
    })
}

/// `zero * (1 - weight) + one * weight`, with Halide's lerp rules for
/// integer types (weights of unsigned types span [0, 1]).
#[no_mangle]
pub extern "C" fn fh_expr_lerp(zero: *const FhExpr, one: *const FhExpr, weight: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let z = expr(zero, "zero")?;
        let o = expr(one, "one")?;
        let w = expr(weight, "weight")?;
        expr_handle(core(math::lerp(z, o, w)))
    })
}

/// `e` converted to `t`, clamped to `t`'s range (Halide's saturating_cast).
#[no_mangle]
pub extern "C" fn fh_expr_saturating_cast(t: FhType, e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let e = expr(e, "e")?;
        expr_handle(core(math::saturating_cast(to_type(t)?, e)))
    })
}

/// `~e` (an integer).
#[no_mangle]
pub extern "C" fn fh_expr_bitwise_not(e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        expr_handle(core(ferrohalide_core::lang::operators::bitwise_not(expr(e, "e")?)))
    })
}

/// `!e` (a boolean).
#[no_mangle]
pub extern "C" fn fh_expr_not(e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        expr_handle(core(ferrohalide_core::lang::operators::logical_not(expr(e, "e")?)))
    })
}

/// `-e`.
#[no_mangle]
pub extern "C" fn fh_expr_neg(e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        expr_handle(core(ferrohalide_core::lang::operators::neg(expr(e, "e")?)))
    })
}

/// A boolean constant.
#[no_mangle]
pub extern "C" fn fh_expr_bool(value: bool) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || expr_handle(Ok(Expr::bool_const(value))))
}

/// An unsigned constant of type `t` (an unsigned type; checked to fit).
#[no_mangle]
pub extern "C" fn fh_expr_uint(t: FhType, value: u64) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let ty = to_type(t)?;
        if !ty.is_uint() || ty.is_bool() {
            return Err("Error: fh_expr_uint needs an unsigned integer type".into());
        }
        if ty.bits < 64 && value >> ty.bits != 0 {
            return Err(format!("Error: {value} does not fit in uint{}", ty.bits));
        }
        expr_handle(Ok(Expr::uint_imm(ty, value)))
    })
}

/// The type of `e`.
#[no_mangle]
pub extern "C" fn fh_expr_type(e: *const FhExpr, out: *mut FhType) -> i32 {
    guard(-1, || {
        let t = handle::get(e, "e")?.0.ty();
        if out.is_null() {
            return Err("Error: out is a null pointer".into());
        }
        // SAFETY: checked non-null; the caller passes an FhType to fill.
        unsafe {
            *out = FhType {
                code: t.code.as_halide_code(),
                bits: t.bits,
                lanes: t.lanes,
            }
        };
        Ok(0)
    })
}

/// `argmax(e)` (`maximum` false: `argmin(e)`) over the RDom of the RVars in
/// `e`: writes the point (one Expr per RDom dimension) to `point`
/// (`point_len` entries) and returns the extreme value.
#[no_mangle]
pub extern "C" fn fh_expr_argextreme(maximum: bool, e: *const FhExpr, point: *mut *mut FhExpr, point_len: usize) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let e = expr(e, "e")?;
        let k = if maximum { Reduction::ArgMax } else { Reduction::ArgMin };
        let mut out = core(inline_reduction(k, None, e, k.name()))?;
        let value = out.pop().ok_or_else(|| "Error: empty reduction".to_string())?;
        if out.len() != point_len || (point_len > 0 && point.is_null()) {
            return Err(format!("Error: the reduction domain has {} dimensions, point has room for {point_len}", out.len()));
        }
        for (i, p) in out.into_iter().enumerate() {
            // SAFETY: the caller passes room for `point_len` handles.
            unsafe { *point.add(i) = handle::new(FhExpr(p)) };
        }
        expr_handle(Ok(value))
    })
}

/// `sum(e)`, `product(e)`, `maximum(e)` or `minimum(e)` over the RDom the
/// RVars in `e` belong to.
#[no_mangle]
pub extern "C" fn fh_expr_reduce(kind: FhReduction, e: *const FhExpr) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let e = expr(e, "e")?;
        let k = match kind {
            FhReduction::Sum => Reduction::Sum,
            FhReduction::Product => Reduction::Product,
            FhReduction::Maximum => Reduction::Maximum,
            FhReduction::Minimum => Reduction::Minimum,
        };
        let out = core(inline_reduction(k, None, e, k.name()))?;
        expr_handle(out.into_iter().last().ok_or_else(|| "Error: empty reduction".to_string()))
    })
}

#[no_mangle]
pub extern "C" fn fh_expr_free(e: *mut FhExpr) -> i32 {
    guard(-1, || handle::free(e, "expr").map(|_| 0))
}

// ---- Funcs ---------------------------------------------------------------

/// A new, undefined Func named `name` (null: a fresh name).
#[no_mangle]
pub extern "C" fn fh_func_new(name: *const c_char) -> *mut FhFunc {
    guard(std::ptr::null_mut(), || {
        let f = if name.is_null() { Func::new(None) } else { core(Func::named(&string_arg(name, "name")?))? };
        Ok(handle::new(FhFunc(f)))
    })
}

#[no_mangle]
pub extern "C" fn fh_func_free(f: *mut FhFunc) -> i32 {
    guard(-1, || handle::free(f, "func").map(|_| 0))
}

/// `f(args...) = (values...)`: the pure definition (args are Vars), or an
/// update definition once `f` is defined. Several values make a Tuple.
#[no_mangle]
pub extern "C" fn fh_func_define(
    f: *const FhFunc,
    args: *const *const FhExpr,
    n_args: usize,
    values: *const *const FhExpr,
    n_values: usize,
) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let args = exprs(args, n_args, "args")?;
        let values = exprs(values, n_values, "values")?;
        if values.is_empty() {
            return Err("Error: a definition needs at least one value".into());
        }
        core(f.define(args, values)).map(|_| 0)
    })
}

/// The call `f(args...)`, value `value_index` of a Tuple (0 otherwise).
#[no_mangle]
pub extern "C" fn fh_func_call(f: *const FhFunc, args: *const *const FhExpr, n_args: usize, value_index: usize) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let f = &handle::get(f, "func")?.0;
        let r = core(f.call(exprs(args, n_args, "args")?))?;
        expr_handle(core(r.element(value_index)))
    })
}

/// `f.compute_root()`.
#[no_mangle]
pub extern "C" fn fh_func_compute_root(f: *const FhFunc) -> i32 {
    guard(-1, || {
        handle::get(f, "func")?.0.compute_root();
        Ok(0)
    })
}

/// `f.compute_at(g, var)`.
#[no_mangle]
pub extern "C" fn fh_func_compute_at(f: *const FhFunc, g: *const FhFunc, var: *const FhVar) -> i32 {
    guard(-1, || {
        let (f, g) = (&handle::get(f, "func")?.0, &handle::get(g, "g")?.0);
        f.compute_at(g, handle::get(var, "var")?.0.name());
        Ok(0)
    })
}

/// `f.vectorize(var, factor)` (factor 0: the whole loop).
#[no_mangle]
pub extern "C" fn fh_func_vectorize(f: *const FhFunc, var: *const FhVar, factor: i32) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let v = handle::get(var, "var")?.0.name().to_string();
        if factor == 0 {
            core(f.vectorize(&v))
        } else {
            core(f.vectorize_by(&v, Expr::i32(factor as i64), TailStrategy::Auto))
        }
        .map(|_| 0)
    })
}

/// `f.parallel(var)`.
#[no_mangle]
pub extern "C" fn fh_func_parallel(f: *const FhFunc, var: *const FhVar) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        core(f.parallel(handle::get(var, "var")?.0.name())).map(|_| 0)
    })
}

/// A `halide_buffer_t` of the caller as a Buffer sharing its memory.
fn caller_buffer(b: *mut halide_buffer_t, what: &str) -> Result<Buffer> {
    if b.is_null() {
        return Err(format!("Error: {what} is a null halide_buffer_t"));
    }
    // SAFETY: the caller passes a valid halide_buffer_t that outlives the call.
    let raw = unsafe { &*b };
    if raw.dimensions < 0 || (raw.dimensions > 0 && raw.dim.is_null()) {
        return Err(format!("Error: {what} has a bad shape"));
    }
    let dims = if raw.dimensions == 0 {
        vec![]
    } else {
        // SAFETY: `dim` has `dimensions` entries.
        unsafe { std::slice::from_raw_parts(raw.dim, raw.dimensions as usize) }.to_vec()
    };
    let ty = to_type(FhType {
        code: raw.type_.code,
        bits: raw.type_.bits,
        lanes: raw.type_.lanes,
    })?;
    if raw.host.is_null() {
        return Err(format!("Error: {what} has no host memory"));
    }
    Ok(Buffer::from_parts(what.to_string(), ty, raw.host, dims, None))
}

/// Compute `f` into the caller's buffers (one per value of `f`): JIT
/// compiled for the host on first use.
#[no_mangle]
pub extern "C" fn fh_func_realize(f: *const FhFunc, outputs: *const *mut halide_buffer_t, n_outputs: usize) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        if n_outputs == 0 || outputs.is_null() {
            return Err("Error: fh_func_realize needs an output buffer per value".into());
        }
        // SAFETY: the caller passes `n_outputs` buffer pointers.
        let raw = unsafe { std::slice::from_raw_parts(outputs, n_outputs) };
        let buffers = raw
            .iter()
            .enumerate()
            .map(|(i, b)| caller_buffer(*b, &format!("output {i}")))
            .collect::<Result<Vec<_>>>()?;
        core(ferrohalide_driver::pipeline::realize_into(&[f.function.clone()], &buffers)).map(|_| 0)
    })
}

/// `f.split(old, outer, inner, factor)`.
#[no_mangle]
pub extern "C" fn fh_func_split(f: *const FhFunc, old: *const FhVar, outer: *const FhVar, inner: *const FhVar, factor: i32) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let (o, a, b) = (handle::get(old, "old")?, handle::get(outer, "outer")?, handle::get(inner, "inner")?);
        core(f.split(o.0.name(), a.0.name(), b.0.name(), Expr::i32(factor as i64), TailStrategy::Auto)).map(|_| 0)
    })
}

/// `f.tile(x, y, xo, yo, xi, yi, xfactor, yfactor)`.
#[no_mangle]
pub extern "C" fn fh_func_tile(
    f: *const FhFunc,
    x: *const FhVar,
    y: *const FhVar,
    xo: *const FhVar,
    yo: *const FhVar,
    xi: *const FhVar,
    yi: *const FhVar,
    xfactor: i32,
    yfactor: i32,
) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let n = |v: *const FhVar, w: &str| handle::get(v, w).map(|v| v.0.name().to_string());
        core(f.tile(
            &n(x, "x")?,
            &n(y, "y")?,
            &n(xo, "xo")?,
            &n(yo, "yo")?,
            &n(xi, "xi")?,
            &n(yi, "yi")?,
            Expr::i32(xfactor as i64),
            Expr::i32(yfactor as i64),
            TailStrategy::Auto,
        ))
        .map(|_| 0)
    })
}

/// `f.reorder(vars...)`, innermost first.
#[no_mangle]
pub extern "C" fn fh_func_reorder(f: *const FhFunc, vars: *const *const FhVar, n: usize) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let names: Vec<String> = handle::get_all(vars, n, "vars")?.iter().map(|v| v.0.name().to_string()).collect();
        core(f.reorder(&names)).map(|_| 0)
    })
}

/// `f.unroll(var, factor)`.
#[no_mangle]
pub extern "C" fn fh_func_unroll(f: *const FhFunc, var: *const FhVar, factor: i32) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let v = handle::get(var, "var")?.0.name().to_string();
        core(f.unroll_by(&v, Expr::i32(factor as i64), TailStrategy::Auto)).map(|_| 0)
    })
}

/// `f.fuse(inner, outer, fused)`.
#[no_mangle]
pub extern "C" fn fh_func_fuse(f: *const FhFunc, inner: *const FhVar, outer: *const FhVar, fused: *const FhVar) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let (i, o, n) = (handle::get(inner, "inner")?, handle::get(outer, "outer")?, handle::get(fused, "fused")?);
        core(f.fuse(i.0.name(), o.0.name(), n.0.name())).map(|_| 0)
    })
}

/// `f.store_at(g, var)`.
#[no_mangle]
pub extern "C" fn fh_func_store_at(f: *const FhFunc, g: *const FhFunc, var: *const FhVar) -> i32 {
    guard(-1, || {
        let (f, g) = (&handle::get(f, "func")?.0, &handle::get(g, "g")?.0);
        f.store_at(g, handle::get(var, "var")?.0.name());
        Ok(0)
    })
}

/// `f.set_estimate(var, min, extent)` (for autoschedulers).
#[no_mangle]
pub extern "C" fn fh_func_estimate(f: *const FhFunc, var: *const FhVar, min: i32, extent: i32) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let v = handle::get(var, "var")?.0.name().to_string();
        core(f.set_estimate(&v, Some(Expr::i32(min as i64)), Some(Expr::i32(extent as i64)))).map(|_| 0)
    })
}

/// `f.in_()`: a new Func wrapping `f` for all its consumers, to schedule.
#[no_mangle]
pub extern "C" fn fh_func_in(f: *const FhFunc) -> *mut FhFunc {
    guard(std::ptr::null_mut(), || {
        let w = core(handle::get(f, "func")?.0.in_())?;
        Ok(handle::new(FhFunc(w)))
    })
}

/// Update definition `index` of `f`, to schedule.
#[no_mangle]
pub extern "C" fn fh_func_update(f: *const FhFunc, index: usize) -> *mut FhStage {
    guard(std::ptr::null_mut(), || {
        let s = core(handle::get(f, "func")?.0.update(index))?;
        Ok(handle::new(FhStage(s)))
    })
}

#[no_mangle]
pub extern "C" fn fh_stage_free(s: *mut FhStage) -> i32 {
    guard(-1, || handle::free(s, "stage").map(|_| 0))
}

/// The loop a Var or RVar expression names.
fn loop_var(e: *const FhExpr, what: &str) -> Result<VarOrRVar> {
    let e = &handle::get(e, what)?.0;
    match e.node() {
        ferrohalide_core::ir::ExprNode::Variable { name, rdom, param: None } => Ok(if rdom.is_some() {
            VarOrRVar::rvar(name.clone())
        } else {
            VarOrRVar::var(name.clone())
        }),
        _ => Err(format!("Error: {what} must be a Var or an RVar")),
    }
}

/// `stage.vectorize(v, factor)` (`v` a Var or RVar; factor 0: the whole loop).
#[no_mangle]
pub extern "C" fn fh_stage_vectorize(s: *const FhStage, v: *const FhExpr, factor: i32) -> i32 {
    guard(-1, || {
        let s = &handle::get(s, "stage")?.0;
        let v = loop_var(v, "v")?;
        if factor == 0 {
            core(s.set_for_type(v, ferrohalide_core::ir::ForType::Vectorized)).map(|_| 0)
        } else {
            core(s.split_and_set_type(v, Expr::i32(factor as i64), TailStrategy::Auto, ferrohalide_core::ir::ForType::Vectorized, true)).map(|_| 0)
        }
    })
}

/// `stage.parallel(v)`.
#[no_mangle]
pub extern "C" fn fh_stage_parallel(s: *const FhStage, v: *const FhExpr) -> i32 {
    guard(-1, || {
        let s = &handle::get(s, "stage")?.0;
        core(s.set_for_type(loop_var(v, "v")?, ferrohalide_core::ir::ForType::Parallel)).map(|_| 0)
    })
}

/// `stage.reorder(loops...)`, innermost first (Vars and RVars).
#[no_mangle]
pub extern "C" fn fh_stage_reorder(s: *const FhStage, loops: *const *const FhExpr, n: usize) -> i32 {
    guard(-1, || {
        let s = &handle::get(s, "stage")?.0;
        if n > 0 && loops.is_null() {
            return Err("Error: loops is a null pointer".into());
        }
        // SAFETY: the caller passes `n` handles.
        let items = if n == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(loops, n) } };
        let vars = items
            .iter()
            .enumerate()
            .map(|(i, e)| loop_var(*e, &format!("loops[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        core(s.reorder(&vars)).map(|_| 0)
    })
}

/// `stage.rfactor([(rvar_i, var_i)...])`: the intermediate Func.
#[no_mangle]
pub extern "C" fn fh_stage_rfactor(s: *const FhStage, rvars: *const *const FhExpr, vars: *const *const FhVar, n: usize) -> *mut FhFunc {
    guard(std::ptr::null_mut(), || {
        let s = &handle::get(s, "stage")?.0;
        if n > 0 && rvars.is_null() {
            return Err("Error: rvars is a null pointer".into());
        }
        // SAFETY: the caller passes `n` handles.
        let rs = if n == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(rvars, n) } };
        let vs = handle::get_all(vars, n, "vars")?;
        let pairs = rs
            .iter()
            .zip(vs)
            .enumerate()
            .map(|(i, (r, v))| Ok((loop_var(*r, &format!("rvars[{i}]"))?, v.0.name().to_string())))
            .collect::<Result<Vec<_>>>()?;
        Ok(handle::new(FhFunc(core(s.rfactor(&pairs))?)))
    })
}

/// `f.store_root()`.
#[no_mangle]
pub extern "C" fn fh_func_store_root(f: *const FhFunc) -> i32 {
    guard(-1, || {
        handle::get(f, "func")?.0.store_root();
        Ok(0)
    })
}

/// `f.bound(var, min, extent)`.
#[no_mangle]
pub extern "C" fn fh_func_bound(f: *const FhFunc, var: *const FhVar, min: i32, extent: i32) -> i32 {
    guard(-1, || {
        let f = &handle::get(f, "func")?.0;
        let v = handle::get(var, "var")?.0.name().to_string();
        core(f.bound(&v, Expr::i32(min as i64), Expr::i32(extent as i64))).map(|_| 0)
    })
}

/// The lowered statement of `f` with `arguments` for `target`, as text:
/// a NUL-terminated string the caller frees with `fh_string_free`.
#[no_mangle]
pub extern "C" fn fh_func_lowered_stmt(f: *const FhFunc, arguments: *const FhArguments, target: *const c_char) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        let f = &handle::get(f, "func")?.0;
        let args = handle::get(arguments, "arguments")?.0.clone();
        let target = core(ferrohalide_core::target::Target::parse(&string_arg(target, "target")?))?;
        let text = core(ferrohalide_core::lower::lowered_stmt(
            &[f.function.clone()],
            &args,
            ferrohalide_core::lower::StmtOutputFormat::Text,
            &target,
        ))?;
        Ok(std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default().into_raw())
    })
}

/// Schedule `f`'s whole pipeline for `target` with the autoscheduler
/// `name` (Halide's names; ferrohalide's own rules stand in and say so on
/// stderr). Returns the schedule as C++ source (free it with
/// `fh_string_free`).
#[no_mangle]
pub extern "C" fn fh_func_autoschedule(f: *const FhFunc, name: *const c_char, target: *const c_char) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        let f = &handle::get(f, "func")?.0;
        let params = ferrohalide_core::autoschedule::AutoschedulerParams {
            name: string_arg(name, "name")?,
            extra: Default::default(),
        };
        let target = core(ferrohalide_core::target::Target::parse(&string_arg(target, "target")?))?;
        let r = core(ferrohalide_core::autoschedule::apply_autoscheduler(&[f.function.clone()], &target, &params))?;
        Ok(std::ffi::CString::new(r.schedule_source.replace('\0', " ")).unwrap_or_default().into_raw())
    })
}

/// 1 if `target` names a valid target ("host", "x86-64-linux-avx2", ...),
/// 0 if not (the reason is then in `fh_last_error`).
#[no_mangle]
pub extern "C" fn fh_target_is_valid(target: *const c_char) -> i32 {
    guard(0, || core(ferrohalide_core::target::Target::parse(&string_arg(target, "target")?)).map(|_| 1))
}

/// Free a string a call returned.
#[no_mangle]
pub extern "C" fn fh_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: made by CString::into_raw in this library.
        drop(unsafe { std::ffi::CString::from_raw(s) });
    }
}

// ---- RDoms ---------------------------------------------------------------

/// `RDom([(min_0, extent_0), ...], name)` (name may be null).
#[no_mangle]
pub extern "C" fn fh_rdom_new(mins: *const *const FhExpr, extents: *const *const FhExpr, n: usize, name: *const c_char) -> *mut FhRDom {
    guard(std::ptr::null_mut(), || {
        let mins = exprs(mins, n, "mins")?;
        let extents = exprs(extents, n, "extents")?;
        let name = if name.is_null() { None } else { Some(string_arg(name, "name")?) };
        let d = core(ReductionDomain::new(name.as_deref(), mins.into_iter().zip(extents).collect()))?;
        Ok(handle::new(FhRDom(d)))
    })
}

/// Dimension `i` of the RDom as an Expr (an RVar).
#[no_mangle]
pub extern "C" fn fh_rdom_var(r: *const FhRDom, i: usize) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let d = &handle::get(r, "rdom")?.0;
        let v = d.rvar(i).ok_or_else(|| format!("Error: the RDom has {} dimensions", d.dimensions()))?;
        expr_handle(Ok(v.expr()))
    })
}

/// `r.where(condition)`.
#[no_mangle]
pub extern "C" fn fh_rdom_where(r: *const FhRDom, condition: *const FhExpr) -> i32 {
    guard(-1, || {
        let d = &handle::get(r, "rdom")?.0;
        core(d.where_(expr(condition, "condition")?)).map(|_| 0)
    })
}

#[no_mangle]
pub extern "C" fn fh_rdom_free(r: *mut FhRDom) -> i32 {
    guard(-1, || handle::free(r, "rdom").map(|_| 0))
}

// ---- Params and ImageParams ----------------------------------------------

/// A scalar parameter of type `t` named `name`.
#[no_mangle]
pub extern "C" fn fh_param_new(t: FhType, name: *const c_char) -> *mut FhParam {
    guard(std::ptr::null_mut(), || {
        let name = string_arg(name, "name")?;
        Ok(handle::new(FhParam(Parameter::new(to_type(t)?, false, 0, name))))
    })
}

/// Set an integer (or bool) parameter's value (checked to fit).
#[no_mangle]
pub extern "C" fn fh_param_set_int(p: *const FhParam, value: i64) -> i32 {
    guard(-1, || core(handle::get(p, "param")?.0.set_scalar(ScalarInput::Int(value as i128))).map(|_| 0))
}

/// Set a float parameter's value.
#[no_mangle]
pub extern "C" fn fh_param_set_float(p: *const FhParam, value: f64) -> i32 {
    guard(-1, || core(handle::get(p, "param")?.0.set_scalar(ScalarInput::Float(value))).map(|_| 0))
}

/// The parameter's value as a double (NaN and an error if it has none or
/// it is not a number).
#[no_mangle]
pub extern "C" fn fh_param_get(p: *const FhParam) -> f64 {
    guard(f64::NAN, || {
        let v = handle::get(p, "param")?.0.scalar().ok_or_else(|| "Error: the parameter has no value".to_string())?;
        v.as_float_const()
            .or_else(|| v.as_int_const().map(|i| i as f64))
            .or_else(|| v.as_uint_const().map(|u| u as f64))
            .ok_or_else(|| "Error: the parameter's value is not a number".to_string())
    })
}

/// The parameter as an Expr.
#[no_mangle]
pub extern "C" fn fh_expr_param(p: *const FhParam) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || expr_handle(Ok(handle::get(p, "param")?.0.expr())))
}

#[no_mangle]
pub extern "C" fn fh_param_free(p: *mut FhParam) -> i32 {
    guard(-1, || handle::free(p, "param").map(|_| 0))
}

/// An input buffer of element type `t` with `dimensions` dimensions.
#[no_mangle]
pub extern "C" fn fh_image_param_new(t: FhType, dimensions: i32, name: *const c_char) -> *mut FhImageParam {
    guard(std::ptr::null_mut(), || {
        let name = string_arg(name, "name")?;
        if dimensions < 0 {
            return Err("Error: an ImageParam's dimensions can't be negative".into());
        }
        Ok(handle::new(FhImageParam(ImageParam::new(to_type(t)?, dimensions as usize, Some(&name)))))
    })
}

/// Bind the caller's buffer to the ImageParam for JIT realizations. The
/// buffer's memory must stay valid while realizations use it.
#[no_mangle]
pub extern "C" fn fh_image_param_set(im: *const FhImageParam, buffer: *mut halide_buffer_t) -> i32 {
    guard(-1, || {
        let im = &handle::get(im, "image_param")?.0;
        core(im.set(caller_buffer(buffer, &im.name())?)).map(|_| 0)
    })
}

/// The call `im(args...)`.
#[no_mangle]
pub extern "C" fn fh_image_param_call(im: *const FhImageParam, args: *const *const FhExpr, n_args: usize) -> *mut FhExpr {
    guard(std::ptr::null_mut(), || {
        let im = &handle::get(im, "image_param")?.0;
        expr_handle(core(im.call(exprs(args, n_args, "args")?)))
    })
}

#[no_mangle]
pub extern "C" fn fh_image_param_free(im: *mut FhImageParam) -> i32 {
    guard(-1, || handle::free(im, "image_param").map(|_| 0))
}

/// `BoundaryConditions.repeat_edge(im)`: the ImageParam extended beyond its
/// shape by its edge values, as a new Func.
#[no_mangle]
pub extern "C" fn fh_repeat_edge(im: *const FhImageParam) -> *mut FhFunc {
    guard(std::ptr::null_mut(), || {
        let im = handle::get(im, "image_param")?.0.clone();
        let f = core(boundary_condition(Kind::RepeatEdge, Source::ImageParam(im), None, None))?;
        Ok(handle::new(FhFunc(f)))
    })
}

/// A boundary condition of Func `f` over the region `mins`/`extents` of
/// its first `n` dimensions, as a new Func.
#[no_mangle]
pub extern "C" fn fh_boundary_condition(
    kind: FhBoundary,
    f: *const FhFunc,
    mins: *const *const FhExpr,
    extents: *const *const FhExpr,
    n: usize,
) -> *mut FhFunc {
    guard(std::ptr::null_mut(), || {
        let f = handle::get(f, "func")?.0.clone();
        let mins = exprs(mins, n, "mins")?;
        let extents = exprs(extents, n, "extents")?;
        let k = match kind {
            FhBoundary::RepeatEdge => Kind::RepeatEdge,
            FhBoundary::RepeatImage => Kind::RepeatImage,
            FhBoundary::MirrorImage => Kind::MirrorImage,
            FhBoundary::MirrorInterior => Kind::MirrorInterior,
        };
        let bounds = mins.into_iter().zip(extents).map(Some).collect();
        Ok(handle::new(FhFunc(core(boundary_condition(k, Source::Func(f), Some(bounds), None))?)))
    })
}

/// `BoundaryConditions.constant_exterior(im, value)`.
#[no_mangle]
pub extern "C" fn fh_constant_exterior(im: *const FhImageParam, value: *const FhExpr) -> *mut FhFunc {
    guard(std::ptr::null_mut(), || {
        let im = handle::get(im, "image_param")?.0.clone();
        let v = expr(value, "value")?;
        let f = core(boundary_condition(Kind::ConstantExterior, Source::ImageParam(im), None, Some(v)))?;
        Ok(handle::new(FhFunc(f)))
    })
}

// ---- Ahead of time -------------------------------------------------------

/// An empty argument list (the compiled function's arguments, in order).
#[no_mangle]
pub extern "C" fn fh_arguments_new() -> *mut FhArguments {
    guard(std::ptr::null_mut(), || Ok(handle::new(FhArguments(vec![]))))
}

/// Append a scalar parameter.
#[no_mangle]
pub extern "C" fn fh_arguments_add_param(list: *mut FhArguments, p: *const FhParam) -> i32 {
    guard(-1, || {
        let param = handle::get(p, "param")?.0.clone();
        handle::get(list as *const FhArguments, "arguments")?;
        // SAFETY: checked to be a live FhArguments handle just above.
        unsafe { &mut *list }.0.push(param);
        Ok(0)
    })
}

/// Append an input buffer.
#[no_mangle]
pub extern "C" fn fh_arguments_add_image_param(list: *mut FhArguments, im: *const FhImageParam) -> i32 {
    guard(-1, || {
        let param = handle::get(im, "image_param")?.0.param().clone();
        handle::get(list as *const FhArguments, "arguments")?;
        // SAFETY: checked to be a live FhArguments handle just above.
        unsafe { &mut *list }.0.push(param);
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn fh_arguments_free(list: *mut FhArguments) -> i32 {
    guard(-1, || handle::free(list, "arguments").map(|_| 0))
}

/// `fh_func_compile_to_file`, as `basename.a` (a static library with the
/// runtime) and `basename.h`.
#[no_mangle]
pub extern "C" fn fh_func_compile_to_static_library(
    f: *const FhFunc,
    basename: *const c_char,
    arguments: *const FhArguments,
    fn_name: *const c_char,
    target: *const c_char,
) -> i32 {
    guard(-1, || compile(f, basename, arguments, fn_name, target, true))
}

fn compile(
    f: *const FhFunc,
    basename: *const c_char,
    arguments: *const FhArguments,
    fn_name: *const c_char,
    target: *const c_char,
    library: bool,
) -> Result<i32> {
    use ferrohalide_driver::aot::{compile_to_files, output_files, OutputFileType};
    let f = &handle::get(f, "func")?.0;
    let base = string_arg(basename, "basename")?;
    let args = handle::get(arguments, "arguments")?.0.clone();
    let name = string_arg(fn_name, "fn_name")?;
    let target = core(ferrohalide_core::target::Target::parse(&string_arg(target, "target")?))?;
    let first = if library { OutputFileType::StaticLibrary } else { OutputFileType::Object };
    let files = output_files(&base, &[first, OutputFileType::CHeader], &target);
    core(compile_to_files(&[f.function.clone()], &[], &args, &name, &target, &files)).map(|_| 0)
}

/// Compile `f` with `arguments` into `basename.o` and `basename.h` (Halide's
/// C ABI), a function called `fn_name`, for `target` (e.g. "host",
/// "x86-64-linux-avx2").
#[no_mangle]
pub extern "C" fn fh_func_compile_to_file(
    f: *const FhFunc,
    basename: *const c_char,
    arguments: *const FhArguments,
    fn_name: *const c_char,
    target: *const c_char,
) -> i32 {
    guard(-1, || compile(f, basename, arguments, fn_name, target, false))
}
