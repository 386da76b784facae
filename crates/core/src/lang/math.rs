//! The functions of Halide's `hl.` namespace that build expressions:
//! math functions (with Halide's argument-type rules), select/mux/clamp,
//! abs/absd, lerp (lowered to integer/float arithmetic as Halide's
//! Lerp.cpp does on x86), bit counting, saturating/halving/widening ops,
//! concise casts, print/print_when.

use crate::error::{Error, Result};
use crate::ir::{Expr, ExprNode, Intrinsic, MathFn, Type, TypeCode};
use crate::lang::operators::{
    self as ops, binary, binary_int, cast, check_representable, match_types, Op,
};
use crate::lang::print::{expr_to_string as s, ir_type_name};

fn math_call(which: MathFn, t: Type, args: Vec<Expr>) -> Expr {
    Expr::intrinsic(t, Intrinsic::Math(which), args)
}

/// The float type a math function computes in for an argument of type `t`:
/// float64 and float16 stay; everything else becomes float32.
fn math_float_type(t: Type) -> Type {
    let e = t.element_of();
    if e == Type::float(64) || e == Type::float(16) {
        t
    } else {
        Type::float(32).with_lanes(t.lanes)
    }
}

/// A one-argument float math function (sqrt, sin, exp, floor, ...).
pub fn unary_math(which: MathFn, x: Expr) -> Result<Expr> {
    match which {
        MathFn::Round => return round(x),
        MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite => return float_class(which, x),
        MathFn::Erf => return erf(x),
        MathFn::FastSin | MathFn::FastCos | MathFn::FastExp | MathFn::FastLog => {
            if x.ty() != Type::float(32) {
                return Err(Error::user(format!(
                    "{} only works for Float(32)",
                    which.name()
                )));
            }
            return Ok(math_call(which, x.ty(), vec![x]));
        }
        MathFn::FastInverse | MathFn::FastInverseSqrt => {
            let t = x.ty();
            if t != Type::float(32) && t != Type::float(16) {
                return Err(Error::user(format!(
                    "{} only takes float16 or float32 arguments\n",
                    which.name()
                )));
            }
            return Ok(math_call(which, t, vec![x]));
        }
        MathFn::Pow | MathFn::Atan2 | MathFn::Hypot | MathFn::FastPow => {
            return Err(Error::internal(format!(
                "{} takes two arguments",
                which.name()
            )))
        }
        _ => {}
    }
    let t = math_float_type(x.ty());
    let x = cast(t, x)?;
    Ok(math_call(which, t, vec![x]))
}

pub fn floor(x: Expr) -> Result<Expr> {
    unary_math(MathFn::Floor, x)
}
pub fn ceil(x: Expr) -> Result<Expr> {
    unary_math(MathFn::Ceil, x)
}
pub fn trunc(x: Expr) -> Result<Expr> {
    unary_math(MathFn::Trunc, x)
}
pub fn sqrt(x: Expr) -> Result<Expr> {
    unary_math(MathFn::Sqrt, x)
}

/// Halide's `round`: round to nearest, ties to even; ints become float32.
pub fn round(x: Expr) -> Result<Expr> {
    let x = if x.ty().is_float() {
        x
    } else {
        cast(Type::float(32).with_lanes(x.lanes()), x)?
    };
    Ok(math_call(MathFn::Round, x.ty(), vec![x]))
}

fn float_class(which: MathFn, x: Expr) -> Result<Expr> {
    if !x.ty().is_float() {
        return Err(Error::user(format!(
            "{} only works for float",
            which.name()
        )));
    }
    let t = Type::bool().with_lanes(x.lanes());
    let x = cast(math_float_type(x.ty()), x)?;
    Ok(math_call(which, t, vec![x]))
}

pub fn erf(x: Expr) -> Result<Expr> {
    if x.ty() != Type::float(32) {
        return Err(Error::user("erf only takes float arguments\n"));
    }
    Ok(math_call(MathFn::Erf, x.ty(), vec![x]))
}

/// `atan2(y, x)`, in the float type of `y`.
pub fn atan2(y: Expr, x: Expr) -> Result<Expr> {
    let t = math_float_type(y.ty());
    let y = cast(t, y)?;
    let x = cast(t.with_lanes(x.lanes()), x)?;
    let (y, x) = match_types(y, x)?;
    Ok(math_call(MathFn::Atan2, y.ty(), vec![y, x]))
}

/// `hypot(x, y) = sqrt(x*x + y*y)`, as Halide defines it.
pub fn hypot(x: Expr, y: Expr) -> Result<Expr> {
    let xx = binary(Op::Mul, x.clone(), x)?;
    let yy = binary(Op::Mul, y.clone(), y)?;
    sqrt(binary(Op::Add, xx, yy)?)
}

pub fn pow(x: Expr, y: Expr) -> Result<Expr> {
    ops::pow(x, y)
}

/// `fast_pow`: integer constant exponents expand; otherwise float32.
pub fn fast_pow(x: Expr, y: Expr) -> Result<Expr> {
    if let ExprNode::IntImm(_) = y.node() {
        return ops::pow(x, y);
    }
    let x = cast(Type::float(32).with_lanes(x.lanes()), x)?;
    let y = cast(Type::float(32).with_lanes(y.lanes()), y)?;
    let (x, y) = match_types(x, y)?;
    Ok(math_call(MathFn::FastPow, x.ty(), vec![x, y]))
}

/// `fract(x) = x - trunc(x)` (Halide 21's definition).
pub fn fract(x: Expr) -> Result<Expr> {
    let t = trunc(x.clone())?;
    binary(Op::Sub, x, t)
}

// ---- min / max / clamp / abs ------------------------------------------------------

pub fn min(a: Expr, b: Expr) -> Result<Expr> {
    binary(Op::Min, a, b)
}
pub fn max(a: Expr, b: Expr) -> Result<Expr> {
    binary(Op::Max, a, b)
}

/// Multi-argument min/max, folded from the right as Halide's variadic
/// template does: `min(a, b, c) = min(a, min(b, c))`.
pub fn min_n(args: Vec<Expr>) -> Result<Expr> {
    fold_right(args, Op::Min, "min")
}
pub fn max_n(args: Vec<Expr>) -> Result<Expr> {
    fold_right(args, Op::Max, "max")
}

fn fold_right(mut args: Vec<Expr>, op: Op, name: &str) -> Result<Expr> {
    if args.len() < 2 {
        return Err(Error::value(format!(
            "{name}() must have at least 2 arguments"
        )));
    }
    let mut acc = args.pop().unwrap();
    while let Some(a) = args.pop() {
        acc = binary(op, a, acc)?;
    }
    Ok(acc)
}

/// Halide's `lossless_cast` (the cases that matter for user-level calls):
/// returns `None` if `e` can't be converted to `t` without changing values.
pub fn lossless_cast(t: Type, e: &Expr) -> Option<Expr> {
    if e.ty() == t {
        return Some(e.clone());
    }
    if t.lanes != e.lanes() {
        return None;
    }
    match e.node() {
        ExprNode::IntImm(v) => {
            let c = cast(t, e.clone()).ok()?;
            let back = match c.node() {
                ExprNode::IntImm(x) => *x as i128 == *v as i128,
                ExprNode::UIntImm(x) => *x as i128 == *v as i128,
                ExprNode::FloatImm(x) => *x == *v as f64 && (*x as i64) == *v,
                _ => false,
            };
            return back.then_some(c);
        }
        ExprNode::UIntImm(v) => {
            let c = cast(t, e.clone()).ok()?;
            let back = match c.node() {
                ExprNode::IntImm(x) => *x as i128 == *v as i128,
                ExprNode::UIntImm(x) => x == v,
                ExprNode::FloatImm(x) => *x == *v as f64,
                _ => false,
            };
            return back.then_some(c);
        }
        ExprNode::FloatImm(v) if t.is_int() || t.is_uint() => {
            // An integral value in range (Halide's `Type::can_represent(double)`).
            let fits = v.fract() == 0.0
                && (*v as i128) >= t.min_int()
                && (*v as i128) <= t.max_int();
            return fits.then(|| cast(t, e.clone()).ok()).flatten();
        }
        ExprNode::FloatImm(v) => {
            if !t.is_float() {
                return None;
            }
            let c = cast(t, e.clone()).ok()?;
            return (c.as_float_const() == Some(*v)).then_some(c);
        }
        _ => {}
    }
    if t.can_represent_type(e.ty()) {
        return cast(t, e.clone()).ok();
    }
    // Through a cast only if that cast itself loses nothing (float32(x)
    // of an int32 x does).
    if let ExprNode::Cast(inner) = e.node() {
        if e.ty().can_represent_type(inner.ty()) {
            return lossless_cast(t, inner);
        }
    }
    None
}

/// `clamp(a, lo, hi) = max(min(a, hi), lo)`; the bounds must convert
/// losslessly to the type of `a`.
pub fn clamp(a: Expr, lo: Expr, hi: Expr) -> Result<Expr> {
    let mismatch = |which: &str, b: &Expr| {
        Error::user(format!(
            "Type mismatch in call to clamp. First argument ({}) has type {}, but {which} argument ({}) has type {}. Use an explicit cast.\n",
            s(&a),
            ir_type_name(a.ty()),
            s(b),
            ir_type_name(b.ty())
        ))
    };
    let nlo = lossless_cast(a.ty(), &lo).ok_or_else(|| mismatch("second", &lo))?;
    let nhi = lossless_cast(a.ty(), &hi).ok_or_else(|| mismatch("third", &hi))?;
    Ok(Expr::max(Expr::min(a, nhi), nlo))
}

/// `abs`: signed ints give the unsigned type of the same width; unsigned
/// inputs are returned unchanged.
pub fn abs(a: Expr) -> Result<Expr> {
    let t = a.ty();
    if t.is_uint() {
        return Ok(a);
    }
    let rt = if t.is_int() {
        t.with_code(TypeCode::UInt)
    } else {
        t
    };
    Ok(Expr::intrinsic(rt, Intrinsic::Abs, vec![a]))
}

/// `absd(a, b) = |a - b|`, unsigned for integer inputs.
pub fn absd(a: Expr, b: Expr) -> Result<Expr> {
    let (a, b) = match_types(a, b)?;
    let t = a.ty();
    if t.is_float() {
        return abs(binary(Op::Sub, a, b)?);
    }
    let rt = if t.is_int() {
        t.with_code(TypeCode::UInt)
    } else {
        t
    };
    Ok(Expr::intrinsic(rt, Intrinsic::Absd, vec![a, b]))
}

// ---- select / mux ------------------------------------------------------------

fn is_int_imm(e: &Expr) -> bool {
    match e.node() {
        ExprNode::IntImm(_) => true,
        ExprNode::Broadcast { value, .. } => is_int_imm(value),
        _ => false,
    }
}

/// Halide's two-way `select(cond, t, f)`.
pub fn select(cond: Expr, t: Expr, f: Expr) -> Result<Expr> {
    let mut cond = cond;
    let (mut t, mut f) = (t, f);
    if is_int_imm(&cond) {
        cond = cast(Type::bool().with_lanes(t.lanes()), cond)?;
    }
    if is_int_imm(&t) {
        t = cast(f.ty(), t)?;
    }
    if is_int_imm(&f) {
        f = cast(t.ty(), f)?;
    }
    if !cond.ty().is_bool() {
        return Err(Error::user(format!(
            "The first argument to a select must be a boolean:\n  {} has type {}\n",
            s(&cond),
            ir_type_name(cond.ty())
        )));
    }
    if t.ty() != f.ty() {
        return Err(Error::user(format!(
            "The second and third arguments to a select do not have a matching type:\n  {} has type {}\n  {} has type {}\n",
            s(&t),
            ir_type_name(t.ty()),
            s(&f),
            ir_type_name(f.ty())
        )));
    }
    if cond.ty().is_vector() && cond.lanes() != t.lanes() {
        return Err(Error::user(format!(
            "In Select, vector lanes of condition must be equal to vector lanes of arguments: {} has type {}, but {} has type {}\n",
            s(&cond),
            ir_type_name(cond.ty()),
            s(&t),
            ir_type_name(t.ty())
        )));
    }
    if t.ty().is_vector() && cond.ty().is_scalar() {
        cond = Expr::broadcast(cond, t.lanes());
    }
    Ok(Expr::select(cond, t, f))
}

/// Multi-way select: `select(c0, v0, c1, v1, ..., default)`.
pub fn select_n(args: Vec<Expr>) -> Result<Expr> {
    if args.len() < 3 {
        return Err(Error::value("select() must have at least 3 arguments"));
    }
    if args.len() % 2 == 0 {
        return Err(Error::value(
            "select() must have an odd number of arguments",
        ));
    }
    let mut it = args.into_iter().rev();
    let mut acc = it.next().unwrap();
    let rest: Vec<Expr> = it.collect();
    for pair in rest.chunks(2) {
        // reversed order: [v_i, c_i]
        acc = select(pair[1].clone(), pair[0].clone(), acc)?;
    }
    Ok(acc)
}

/// `mux(id, values)`: values[id], or the last value if id is out of range:
/// the `Mux` intrinsic, which code generation writes as a select chain.
pub fn mux(id: Expr, values: Vec<Expr>) -> Result<Expr> {
    if values.is_empty() {
        return Err(Error::user("mux() requires a non-empty vector of values"));
    }
    if values.len() == 1 {
        return Ok(values[0].clone());
    }
    let t = values[0].ty();
    if values.iter().any(|v| v.ty() != t) {
        return Err(Error::user(
            "mux() requires all the values to have the same type.",
        ));
    }
    // Compared as `id == i` in the index's own type (Halide's `lower_mux`).
    if id.ty().lanes != t.lanes && id.ty().lanes != 1 {
        return Err(Error::user("mux() requires the index to be a scalar or to have as many lanes as the values."));
    }
    let mut args = Vec::with_capacity(values.len() + 1);
    args.push(id);
    args.extend(values);
    Ok(Expr::intrinsic(t, crate::ir::Intrinsic::Mux, args))
}

// ---- lerp ------------------------------------------------------------------------

/// Halide's `lerp(zero, one, weight)`, with its argument checks, lowered to
/// arithmetic with the same rounding as Halide's x86 lowering.
pub fn lerp(zero_val: Expr, one_val: Expr, weight: Expr) -> Result<Expr> {
    let mut zero_val = zero_val;
    let mut one_val = one_val;
    if is_int_imm(&zero_val) {
        zero_val = cast(one_val.ty(), zero_val)?;
    }
    if is_int_imm(&one_val) {
        one_val = cast(zero_val.ty(), one_val)?;
    }
    if zero_val.ty() != one_val.ty() {
        return Err(Error::user(format!(
            "Can't lerp between {} of type {} and {} of different type {}\n",
            s(&zero_val),
            ir_type_name(zero_val.ty()),
            s(&one_val),
            ir_type_name(one_val.ty())
        )));
    }
    if !(weight.ty().is_uint() || weight.ty().is_float()) {
        return Err(Error::user(format!(
            "A lerp weight must be an unsigned integer or a float, but lerp weight {} has type {}.\n",
            s(&weight),
            ir_type_name(weight.ty())
        )));
    }
    if !(zero_val.ty().is_float() || zero_val.ty().bits <= 32) {
        return Err(Error::user(
            "Lerping between 64-bit integers is not supported\n",
        ));
    }
    if !zero_val.ty().is_float() {
        if let Some(w) = weight.as_float_const() {
            if !(0.0..=1.0).contains(&w) {
                return Err(Error::user(format!(
                    "Floating-point weight for lerp with integer arguments is {w}, which is not in the range [0.0, 1.0].\n"
                )));
            }
        }
    }
    // Match lanes of all three.
    let lanes = zero_val.lanes().max(weight.lanes());
    if zero_val.lanes() != lanes {
        zero_val = Expr::broadcast(zero_val, lanes);
        one_val = Expr::broadcast(one_val, lanes);
    }
    let weight = if weight.lanes() != lanes {
        Expr::broadcast(weight, lanes)
    } else {
        weight
    };
    lower_lerp(zero_val, one_val, weight)
}

fn lower_lerp(zero_val: Expr, one_val: Expr, weight: Expr) -> Result<Expr> {
    let result_type = zero_val.ty();
    let lanes = result_type.lanes;
    let mut computation_type = result_type;
    let mut bias: Option<Expr> = None;
    let (mut zero_val, mut one_val) = (zero_val, one_val);
    if result_type.is_int() {
        computation_type = Type::uint(result_type.bits).with_lanes(lanes);
        let b = cast(computation_type, Expr::type_min(result_type))?;
        zero_val = binary(
            Op::Sub,
            Expr::new(computation_type, ExprNode::Cast(zero_val)),
            b.clone(),
        )?;
        one_val = binary(
            Op::Sub,
            Expr::new(computation_type, ExprNode::Cast(one_val)),
            b.clone(),
        )?;
        bias = Some(b);
    }

    if result_type.is_bool() {
        let half = if weight.ty().is_float() {
            Expr::make_const_f64(weight.ty(), 0.5)
        } else {
            binary_int(Op::Div, Expr::type_max(weight.ty()), 2, false)?
        };
        let c = binary(Op::Gt, weight, half)?;
        return select(c, one_val, zero_val);
    }

    let ct = computation_type;
    let (typed_weight, inverse_weight);
    if weight.ty().is_float() {
        if ct.is_uint() {
            let tw = if ct.bits == 32 {
                let f64t = Type::float(64).with_lanes(lanes);
                let scale = Expr::make_const_f64(f64t, 65535.0 * 65537.0);
                let w = Expr::new(f64t, ExprNode::Cast(weight.clone()));
                Expr::new(ct, ExprNode::Cast(binary(Op::Mul, scale, w)?))
            } else {
                let m = binary(Op::Mul, Expr::type_max(ct), weight.clone())?;
                Expr::new(ct, ExprNode::Cast(m))
            };
            inverse_weight = binary(Op::Sub, Expr::type_max(ct), tw.clone())?;
            typed_weight = tw;
        } else {
            let tw = cast(ct, weight.clone())?;
            inverse_weight = binary(Op::Sub, Expr::one(ct), tw.clone())?;
            typed_weight = tw;
        }
    } else if ct.is_float() {
        let denom = Expr::make_const_f64(ct, 2f64.powi(weight.ty().bits as i32) - 1.0);
        let tw = binary(
            Op::Div,
            Expr::new(ct, ExprNode::Cast(weight.clone())),
            denom,
        )?;
        inverse_weight = binary(Op::Sub, Expr::one(ct), tw.clone())?;
        typed_weight = tw;
    } else {
        let wbits = weight.ty().bits as i32;
        let cbits = ct.bits as i32;
        let diff = wbits - cbits;
        let tw = if diff == 0 {
            weight.clone()
        } else {
            let mut bits_left = diff.abs();
            let mut shift = cbits.min(wbits);
            let mut scale: u64 = 1;
            while bits_left > 0 {
                scale = scale.wrapping_add(scale << shift);
                bits_left -= shift;
                shift *= 2;
            }
            if diff < 0 {
                let w = Expr::new(ct, ExprNode::Cast(weight.clone()));
                binary(Op::Mul, w, cast(ct, Expr::i32(scale as i32 as i64))?)?
            } else {
                let d = binary(
                    Op::Div,
                    weight.clone(),
                    cast(weight.ty(), Expr::i32(scale as i32 as i64))?,
                )?;
                cast(ct, d)?
            }
        };
        let tw = if tw.ty() != ct { cast(ct, tw)? } else { tw };
        inverse_weight = cast(ct, binary(Op::Sub, Expr::type_max(ct), tw.clone())?)?;
        typed_weight = tw;
    }

    let mut result = if ct.is_float() {
        let a = binary(Op::Mul, zero_val, inverse_weight)?;
        let b = binary(Op::Mul, one_val, typed_weight)?;
        binary(Op::Add, a, b)?
    } else {
        let bits = ct.bits;
        let r = match bits {
            1 => select(typed_weight, one_val, zero_val)?,
            8 | 16 | 32 => {
                let wide = ct.with_bits(bits * 2);
                let wm = |a: Expr, b: Expr| -> Result<Expr> {
                    binary(Op::Mul, cast(wide, a)?, cast(wide, b)?)
                };
                let prod_sum = binary(
                    Op::Add,
                    wm(zero_val, inverse_weight)?,
                    wm(one_val, typed_weight)?,
                )?;
                let divisor = cast(Type::uint(bits).with_lanes(lanes), Expr::i32(-1))?;
                let half = binary_int(Op::Div, divisor.clone(), 2, false)?;
                let num = binary(Op::Add, prod_sum, half)?;
                binary(Op::Div, num, divisor)?
            }
            _ => return Err(Error::user("Can't do a 64-bit lerp.\n")),
        };
        if weight.ty().is_float() {
            Expr::new(ct, ExprNode::Cast(r))
        } else {
            r
        }
    };
    if let Some(b) = bias {
        if result.ty() != b.ty() {
            result = cast(b.ty(), result)?;
        }
        result = Expr::new(result_type, ExprNode::Cast(binary(Op::Add, result, b)?));
    }
    if result.ty() != result_type {
        result = Expr::new(result_type, ExprNode::Cast(result));
    }
    Ok(result)
}

// ---- bit ops and friends ---------------------------------------------------------------

fn int_unary(a: Expr, which: Intrinsic, fname: &str) -> Result<Expr> {
    let t = a.ty();
    if !(t.is_int() || t.is_uint()) {
        return Err(Error::user(format!(
            "Argument to {fname} must be an integer\n"
        )));
    }
    Ok(Expr::intrinsic(t, which, vec![a]))
}

pub fn popcount(a: Expr) -> Result<Expr> {
    int_unary(a, Intrinsic::Popcount, "popcount")
}
pub fn count_leading_zeros(a: Expr) -> Result<Expr> {
    int_unary(a, Intrinsic::CountLeadingZeros, "count_leading_zeros")
}
pub fn count_trailing_zeros(a: Expr) -> Result<Expr> {
    int_unary(a, Intrinsic::CountTrailingZeros, "count_trailing_zeros")
}

fn round_to_zero(a: Expr, b: Expr, div: bool) -> Result<Expr> {
    let (a, b) = match_types(a, b)?;
    let name = if div {
        "div_round_to_zero"
    } else {
        "mod_round_to_zero"
    };
    if a.ty().is_uint() {
        return binary(if div { Op::Div } else { Op::Mod }, a, b);
    }
    if !a.ty().is_int() {
        return Err(Error::user(format!(
            "First argument to {name} is not an integer: {}\n",
            s(&a)
        )));
    }
    let which = if div {
        Intrinsic::DivRoundToZero
    } else {
        Intrinsic::ModRoundToZero
    };
    Ok(Expr::intrinsic(a.ty(), which, vec![a, b]))
}

pub fn div_round_to_zero(a: Expr, b: Expr) -> Result<Expr> {
    round_to_zero(a, b, true)
}
pub fn mod_round_to_zero(a: Expr, b: Expr) -> Result<Expr> {
    round_to_zero(a, b, false)
}

/// saturating_add/sub, halving_add/sub, rounding_halving_add: operands
/// matched, result in the matched type.
pub fn same_type_binary(which: Intrinsic, a: Expr, b: Expr) -> Result<Expr> {
    let (a, b) = match_types(a, b)?;
    Ok(Expr::intrinsic(a.ty(), which, vec![a, b]))
}

fn widen(t: Type) -> Type {
    t.with_bits(t.bits.saturating_mul(2))
}

pub fn widening_add(a: Expr, b: Expr) -> Result<Expr> {
    let (a, b) = match_types(a, b)?;
    Ok(Expr::intrinsic(
        widen(a.ty()),
        Intrinsic::WideningAdd,
        vec![a, b],
    ))
}

pub fn widening_sub(a: Expr, b: Expr) -> Result<Expr> {
    let (a, b) = match_types(a, b)?;
    let mut t = widen(a.ty());
    if t.is_uint() {
        t = t.with_code(TypeCode::Int);
    }
    Ok(Expr::intrinsic(t, Intrinsic::WideningSub, vec![a, b]))
}

pub fn widening_mul(a: Expr, b: Expr) -> Result<Expr> {
    // The operands may differ in sign (not matched), but not be one float
    // and one integer: Halide would only fail in code generation.
    if a.ty().is_float() != b.ty().is_float() {
        return Err(Error::user(format!(
            "The arguments to widening_mul must both be floats or both be integers, but {} has type {} and {} has type {}\n",
            s(&a),
            ir_type_name(a.ty()),
            s(&b),
            ir_type_name(b.ty())
        )));
    }
    let (ba, bb) = (a.ty().bits, b.ty().bits);
    let (a, b) = if ba < bb {
        (cast(a.ty().with_bits(bb), a)?, b)
    } else if bb < ba {
        let t = b.ty().with_bits(ba);
        (a, cast(t, b)?)
    } else {
        (a, b)
    };
    let (a, b) = if a.lanes() == 1 && b.lanes() > 1 {
        (Expr::broadcast(a, b.lanes()), b)
    } else if b.lanes() == 1 && a.lanes() > 1 {
        let l = a.lanes();
        (a, Expr::broadcast(b, l))
    } else {
        (a, b)
    };
    let mut t = widen(a.ty());
    if t.is_uint() && b.ty().is_int() {
        t = t.with_code(TypeCode::Int);
    }
    Ok(Expr::intrinsic(t, Intrinsic::WideningMul, vec![a, b]))
}

/// mul_shift_right / rounding_mul_shift_right with an Expr shift.
pub fn mul_shift_right(a: Expr, b: Expr, q: Expr, rounding: bool) -> Result<Expr> {
    let name = if rounding {
        "rounding_mul_shift_right"
    } else {
        "mul_shift_right"
    };
    if !q.ty().is_uint() {
        return Err(Error::user(format!("{name} shift must be unsigned\n")));
    }
    let (a, b) = match_types(a, b)?;
    let (a, q) = if a.lanes() == 1 && q.lanes() > 1 {
        (Expr::broadcast(a, q.lanes()), q)
    } else if q.lanes() == 1 && a.lanes() > 1 {
        let l = a.lanes();
        (a, Expr::broadcast(q, l))
    } else {
        (a, q)
    };
    let (a, q) = if a.ty().bits < q.ty().bits {
        (cast(a.ty().with_bits(q.ty().bits), a)?, q)
    } else if q.ty().bits < a.ty().bits {
        let t = q.ty().with_bits(a.ty().bits);
        (a, cast(t, q)?)
    } else {
        (a, q)
    };
    let (a, b) = match_types(a, b)?;
    let which = if rounding {
        Intrinsic::RoundingMulShiftRight
    } else {
        Intrinsic::MulShiftRight
    };
    Ok(Expr::intrinsic(a.ty(), which, vec![a, b, q]))
}

/// mul_shift_right with an integer-literal shift.
pub fn mul_shift_right_int(a: Expr, b: Expr, q: i32, rounding: bool) -> Result<Expr> {
    let qt = a.ty().with_code(TypeCode::UInt);
    check_representable(qt, q as i64)?;
    mul_shift_right(a, b, ops::make_const(qt, q as i64), rounding)
}

// ---- casts ---------------------------------------------------------------------------

pub fn saturating_cast(t: Type, e: Expr) -> Result<Expr> {
    let t = if e.lanes() > 1 && t.lanes == 1 {
        t.with_lanes(e.lanes())
    } else {
        t
    };
    Ok(Expr::intrinsic(t, Intrinsic::SaturatingCast, vec![e]))
}

// ---- misc ------------------------------------------------------------------------------

/// `print(args...)`: prints the arguments when evaluated and returns the first.
pub fn print(args: Vec<Expr>) -> Result<Expr> {
    let Some(first) = args.first() else {
        return Err(Error::value("print() requires at least one argument"));
    };
    let t = first.ty();
    Ok(Expr::intrinsic(t, Intrinsic::Print, args))
}

/// `print_when(cond, args...)`: like print, but only prints when cond holds.
pub fn print_when(cond: Expr, args: Vec<Expr>) -> Result<Expr> {
    if !cond.ty().is_bool() {
        // (Halide reports it from the select it builds.)
        return Err(Error::user(format!(
            "First argument to print_when is not a bool: {}\n",
            ir_type_name(cond.ty())
        )));
    }
    let p = print(args.clone())?;
    Ok(Expr::intrinsic(
        p.ty(),
        Intrinsic::IfThenElse,
        vec![cond, p, args[0].clone()],
    ))
}

/// `require(cond, value, args...)`: `value` where `cond` holds; otherwise
/// the pipeline fails with "Requirement Failed: (false) value args..."
/// (Halide's message: the value and the arguments, space-separated).
pub fn require(cond: Expr, value: Expr, args: Vec<Expr>) -> Result<Expr> {
    if !cond.ty().is_bool() {
        return Err(Error::user("Require condition must be a boolean type.\n"));
    }
    let mut call = vec![cond, value.clone(), Expr::string("Requirement Failed: (false) "), value.clone()];
    for a in args {
        call.push(Expr::string(" "));
        call.push(a);
    }
    Ok(Expr::intrinsic(value.ty(), Intrinsic::Require, call))
}

/// `unsafe_promise_clamped(value, min, max)`: `value`, promised to lie in
/// `[min, max]` (nothing checks it). The bounds must convert losslessly to
/// the value's type.
pub fn unsafe_promise_clamped(value: Expr, min: Expr, max: Expr) -> Result<Expr> {
    let t = value.ty();
    let bound = |which: &str, b: &Expr| {
        lossless_cast(t, b).ok_or_else(|| {
            Error::user(format!(
                "unsafe_promise_clamped {which} argument (type {} {}) could not be cast losslessly to {}\n",
                b.node_type_name(),
                ir_type_name(b.ty()),
                ir_type_name(t)
            ))
        })
    };
    let (lo, hi) = (bound("min", &min)?, bound("max", &max)?);
    Ok(Expr::intrinsic(t, Intrinsic::UnsafePromiseClamped, vec![value, lo, hi]))
}

/// `memoize_tag(result, keys...)`: `result`; the keys only identify it.
pub fn memoize_tag(result: Expr, keys: Vec<Expr>) -> Expr {
    let t = result.ty();
    let mut args = vec![result];
    args.extend(keys);
    Expr::intrinsic(t, Intrinsic::MemoizeExpr, args)
}

pub fn likely(e: Expr) -> Expr {
    Expr::likely(e)
}

pub fn likely_if_innermost(e: Expr) -> Expr {
    Expr::likely_if_innermost(e)
}

/// `user_context_value()`: the user context the pipeline was called with
/// (a handle; null when the caller gives none), e.g. to pass on to an
/// extern function.
pub fn user_context_value() -> Expr {
    let name = crate::lower::entry_checks::USER_CONTEXT;
    crate::lang::parameter::Parameter::new(Type::handle(), false, 0, name).expr()
}

pub fn undef(t: Type) -> Expr {
    Expr::intrinsic(t, Intrinsic::Undef, vec![])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::print::expr_to_string;

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    #[test]
    fn math_types() {
        assert_eq!(
            expr_to_string(&floor(x()).unwrap()),
            "(float32)floor_f32(float32(x))"
        );
        let d = cast(Type::float(64), x()).unwrap();
        assert_eq!(sqrt(d).unwrap().ty(), Type::float(64));
        assert_eq!(
            expr_to_string(&round(x()).unwrap()),
            "(float32)round(float32(x))"
        );
        assert_eq!(
            expr_to_string(&fract(x()).unwrap()),
            "(float32(x) - (float32)trunc_f32(float32(x)))"
        );
        assert!(unary_math(MathFn::IsNan, x()).is_err());
    }

    #[test]
    fn select_and_clamp() {
        let c = binary_int(Op::Gt, x(), 0, false).unwrap();
        let u8x = cast(Type::uint(8), x()).unwrap();
        let r = select(c.clone(), u8x.clone(), Expr::i32(0)).unwrap();
        assert_eq!(expr_to_string(&r), "select(x > 0, uint8(x), (uint8)0)");
        assert!(select(c.clone(), u8x.clone(), x()).is_err());
        let r = select_n(vec![c.clone(), x(), c, Expr::i32(2), Expr::i32(5)]).unwrap();
        assert_eq!(expr_to_string(&r), "select(x > 0, x, select(x > 0, 2, 5))");
        let r = clamp(u8x.clone(), Expr::i32(0), Expr::i32(10)).unwrap();
        assert_eq!(
            expr_to_string(&r),
            "max(min(uint8(x), (uint8)10), (uint8)0)"
        );
        assert!(clamp(u8x, Expr::i32(0), Expr::i32(300)).is_err());
    }

    #[test]
    fn abs_absd() {
        assert_eq!(abs(x()).unwrap().ty(), Type::uint(32));
        let u8x = cast(Type::uint(8), x()).unwrap();
        assert_eq!(absd(x(), u8x).unwrap().ty(), Type::uint(32));
    }

    #[test]
    fn lerp_types() {
        let u8x = cast(Type::uint(8), x()).unwrap();
        assert_eq!(
            lerp(u8x.clone(), u8x.clone(), u8x.clone()).unwrap().ty(),
            Type::uint(8)
        );
        assert_eq!(
            lerp(Expr::i32(0), u8x.clone(), Expr::f32(0.5))
                .unwrap()
                .ty(),
            Type::uint(8)
        );
        assert!(lerp(u8x.clone(), u8x.clone(), Expr::f32(1.5)).is_err());
        let f = cast(Type::float(32), x()).unwrap();
        assert!(lerp(f.clone(), f, x()).is_err());
        let i8x = cast(Type::int(8), x()).unwrap();
        assert_eq!(lerp(i8x.clone(), i8x, u8x).unwrap().ty(), Type::int(8));
    }

    #[test]
    fn widening() {
        let u8x = cast(Type::uint(8), x()).unwrap();
        let i8x = cast(Type::int(8), x()).unwrap();
        assert_eq!(widening_mul(i8x, u8x.clone()).unwrap().ty(), Type::int(16));
        assert_eq!(
            widening_sub(u8x.clone(), u8x.clone()).unwrap().ty(),
            Type::int(16)
        );
        assert_eq!(widening_add(u8x.clone(), u8x).unwrap().ty(), Type::uint(16));
    }
}
