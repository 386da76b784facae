//! Halide's user-level operator semantics on `Expr` (IROperator.cpp):
//! implicit type coercion (`match_types`), integer-literal coercion with
//! range checks (`check_representable`), constant-folding casts, bitwise
//! and shift operators, and the Python bindings' rules for mixing an Expr
//! with a Python int / float / bool (`py_binary`).

use crate::error::{Error, Result};
use crate::ir::{BinOp, Expr, ExprNode, Intrinsic, MathFn, Type, TypeCode};
use crate::lang::print::{expr_to_string as s, ir_type_name};

// ---- nesting depth --------------------------------------------------------------

/// The deepest expression the front end accepts. Compilation recurses once
/// per level; Halide itself overflows its stack somewhat deeper than this.
pub const MAX_EXPR_DEPTH: u32 = 20_000;

/// A user error for an expression nested deeper than `MAX_EXPR_DEPTH`.
pub fn check_depth(e: &Expr) -> Result<()> {
    if e.depth() <= MAX_EXPR_DEPTH {
        return Ok(());
    }
    Err(Error::user(format!(
        "An expression is nested {} levels deep, more than the {MAX_EXPR_DEPTH} that can be compiled. (A Python loop that adds one term at a time nests one level per term: add the terms pairwise, or compute partial results in separate Funcs.)\n",
        e.depth()
    )))
}

// ---- constants and casts ------------------------------------------------------

/// Halide's `make_const(t, int64)`.
pub fn make_const(t: Type, v: i64) -> Expr {
    Expr::make_const_i64(t, v)
}

fn make_const_u64(t: Type, v: u64) -> Expr {
    if t.is_vector() {
        return Expr::broadcast(make_const_u64(t.element_of(), v), t.lanes);
    }
    match t.code {
        TypeCode::Int => Expr::int_imm(t, v as i64),
        TypeCode::UInt => Expr::uint_imm(t, v),
        TypeCode::Float | TypeCode::BFloat => Expr::float_imm(t, v as f64),
        TypeCode::Handle => Expr::uint_imm(Type::uint(64), v),
    }
}

fn make_const_f64(t: Type, v: f64) -> Expr {
    if t.is_vector() {
        return Expr::broadcast(make_const_f64(t.element_of(), v), t.lanes);
    }
    match t.code {
        // C++ converts out-of-range doubles to ints in an implementation-defined
        // way; we wrap through i64 like x86 does for in-range values.
        TypeCode::Int => Expr::int_imm(t, v as i64),
        TypeCode::UInt => Expr::uint_imm(t, if v < 0.0 { (v as i64) as u64 } else { v as u64 }),
        _ => Expr::float_imm(t, v),
    }
}

/// Halide's `Type::can_represent(int64_t)`.
pub fn can_represent_i64(t: Type, v: i64) -> bool {
    match t.code {
        TypeCode::Int | TypeCode::UInt => (v as i128) >= t.min_int() && (v as i128) <= t.max_int(),
        TypeCode::Float => match t.bits {
            16 => {
                let h = Expr::float_imm(Type::float(16), v as f64)
                    .as_float_const()
                    .unwrap_or(f64::NAN);
                h == v as f64 && (h as i64) == v
            }
            32 => ((v as f32) as i64) == v && ((v as f32) as f64) == (v as f64),
            _ => ((v as f64) as i64) == v && (v as f64) < 9.3e18,
        },
        TypeCode::BFloat => {
            let f = f32::from_bits((v as f32).to_bits() & 0xffff_0000);
            f as i64 == v
        }
        TypeCode::Handle => false,
    }
}

/// Error unless the integer literal `v` survives conversion to `t`.
pub fn check_representable(t: Type, v: i64) -> Result<()> {
    if can_represent_i64(t, v) {
        return Ok(());
    }
    if t.is_handle() {
        return Err(Error::user(format!(
            "Integer constant {v} will be implicitly coerced to type {}, but Halide does not support pointer arithmetic.\n",
            ir_type_name(t)
        )));
    }
    Err(Error::user(format!(
        "Integer constant {v} will be implicitly coerced to type {}, which changes its value to {}.\n",
        ir_type_name(t),
        s(&make_const(t, v))
    )))
}

/// Halide's user-level `cast`: folds constants, broadcasts scalars.
pub fn cast(t: Type, a: Expr) -> Result<Expr> {
    if a.ty() == t {
        return Ok(a);
    }
    if t.is_handle() && !a.ty().is_handle() {
        return Err(Error::user(format!(
            "Can't cast \"{}\" to a handle. The only legal cast from scalar types to a handle is: reinterpret(Handle(), cast<uint64_t>({}));\n",
            s(&a),
            s(&a)
        )));
    }
    if a.ty().is_handle() && !t.is_handle() {
        return Err(Error::user(format!(
            "Can't cast handle \"{}\" to type {}. The only legal cast from handles to scalar types is: reinterpret(UInt(64), {});\n",
            s(&a),
            ir_type_name(t),
            s(&a)
        )));
    }
    match a.node() {
        ExprNode::IntImm(v) => return Ok(make_const(t, *v)),
        ExprNode::UIntImm(v) => return Ok(make_const_u64(t, *v)),
        ExprNode::FloatImm(v) => return Ok(make_const_f64(t, *v)),
        _ => {}
    }
    if t.is_vector() {
        if a.ty().is_scalar() {
            return Ok(Expr::broadcast(cast(t.element_of(), a)?, t.lanes));
        }
        if let ExprNode::Broadcast { value, lanes } = a.node() {
            if *lanes == t.lanes {
                return Ok(Expr::broadcast(
                    cast(t.element_of(), value.clone())?,
                    t.lanes,
                ));
            }
        }
    }
    if a.ty().lanes != t.lanes {
        return Err(Error::user(format!(
            "Can't cast {} of type {} to type {}: the vector widths differ.\n",
            s(&a),
            ir_type_name(a.ty()),
            ir_type_name(t)
        )));
    }
    Ok(Expr::new(t, ExprNode::Cast(a)))
}

/// Halide's `reinterpret`.
pub fn reinterpret(t: Type, e: Expr) -> Result<Expr> {
    let from = e.ty();
    let from_bits = from.bits as u32 * from.lanes as u32;
    let to_bits = t.bits as u32 * t.lanes as u32;
    if from_bits != to_bits {
        return Err(Error::user(format!(
            "Reinterpret cast from type {} which has {} bits, to type {} which has {} bits\n",
            ir_type_name(from),
            from_bits,
            ir_type_name(t),
            to_bits
        )));
    }
    Ok(Expr::reinterpret(t, e))
}

// ---- type matching --------------------------------------------------------------

pub(crate) fn match_lanes(a: Expr, b: Expr) -> Result<(Expr, Expr)> {
    let (la, lb) = (a.lanes(), b.lanes());
    if la == 1 && lb > 1 {
        Ok((Expr::broadcast(a, lb), b))
    } else if la > 1 && lb == 1 {
        let b = Expr::broadcast(b, la);
        Ok((a, b))
    } else if la != lb {
        Err(Error::user(format!(
            "Can't match types of differing widths: {} and {}\n",
            ir_type_name(a.ty()),
            ir_type_name(b.ty())
        )))
    } else {
        Ok((a, b))
    }
}

fn widened(t: Type, bits: u8) -> Type {
    let t = if t.code == TypeCode::BFloat {
        t.with_code(TypeCode::Float)
    } else {
        t
    };
    t.with_bits(bits)
}

pub(crate) fn match_bits(a: Expr, b: Expr) -> Result<(Expr, Expr)> {
    let (ba, bb) = (a.ty().bits, b.ty().bits);
    if ba < bb {
        let t = widened(a.ty(), bb);
        Ok((cast(t, a)?, b))
    } else if bb < ba {
        let t = widened(b.ty(), ba);
        Ok((a, cast(t, b)?))
    } else {
        Ok((a, b))
    }
}

/// Halide's `match_types`: coerce two operands to a common type.
pub fn match_types(a: Expr, b: Expr) -> Result<(Expr, Expr)> {
    if a.ty() == b.ty() {
        return Ok((a, b));
    }
    if a.ty().is_handle() || b.ty().is_handle() {
        return Err(Error::user(format!(
            "Can't do arithmetic on opaque pointer types: {}, {}\n",
            s(&a),
            s(&b)
        )));
    }
    let (a, b) = match_lanes(a, b)?;
    let (ta, tb) = (a.ty(), b.ty());
    if ta == tb {
        return Ok((a, b));
    }
    if !ta.is_float() && tb.is_float() {
        Ok((cast(tb, a)?, b))
    } else if ta.is_float() && !tb.is_float() {
        Ok((a, cast(ta, b)?))
    } else if ta.is_float() && tb.is_float() {
        if ta.bits > tb.bits {
            Ok((a, cast(ta, b)?))
        } else {
            Ok((cast(tb, a)?, b))
        }
    } else if ta.is_uint() && tb.is_uint() {
        if ta.bits > tb.bits {
            Ok((a, cast(ta, b)?))
        } else {
            Ok((cast(tb, a)?, b))
        }
    } else {
        let bits = ta.bits.max(tb.bits);
        let t = Type::int(bits).with_lanes(ta.lanes);
        Ok((cast(t, a)?, cast(t, b)?))
    }
}

fn match_types_bitwise(a: Expr, b: Expr, op_name: &str) -> Result<(Expr, Expr)> {
    let (ta, tb) = (a.ty(), b.ty());
    if !(ta.is_int() || ta.is_uint()) {
        return Err(Error::user(format!(
            "The first argument to {op_name} must be an integer or unsigned integer"
        )));
    }
    if !(tb.is_int() || tb.is_uint()) {
        return Err(Error::user(format!(
            "The second argument to {op_name} must be an integer or unsigned integer"
        )));
    }
    if ta.is_int() != tb.is_int() {
        return Err(Error::user(format!(
            "Arguments to {op_name} must be both be signed or both be unsigned.\nLHS type: {} RHS type: {}\nLHS value: {} RHS value: {}\n",
            ir_type_name(ta),
            ir_type_name(tb),
            s(&a),
            s(&b)
        )));
    }
    let (a, b) = match_lanes(a, b)?;
    match_bits(a, b)
}

// ---- binary operators -------------------------------------------------------------

/// The binary operators of Halide's Expr API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Sub,
    Mul,
    /// Halide's `/`: floor division for ints, true division for floats.
    Div,
    Mod,
    Min,
    Max,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    LogicalAnd,
    LogicalOr,
}

impl Op {
    fn binop(self) -> Option<BinOp> {
        Some(match self {
            Op::Add => BinOp::Add,
            Op::Sub => BinOp::Sub,
            Op::Mul => BinOp::Mul,
            Op::Div => BinOp::Div,
            Op::Mod => BinOp::Mod,
            Op::Min => BinOp::Min,
            Op::Max => BinOp::Max,
            Op::Lt => BinOp::LT,
            Op::Le => BinOp::LE,
            Op::Gt => BinOp::GT,
            Op::Ge => BinOp::GE,
            Op::Eq => BinOp::EQ,
            Op::Ne => BinOp::NE,
            Op::LogicalAnd => BinOp::And,
            Op::LogicalOr => BinOp::Or,
            _ => return None,
        })
    }
}

fn bool_operands(op: Op, a: &Expr, b: &Expr) -> Result<()> {
    if !a.ty().is_bool() || !b.ty().is_bool() {
        let what = if op == Op::LogicalAnd { "&&" } else { "||" };
        return Err(Error::user(format!(
            "The arguments to {what} must be boolean, but got {} of type {} and {} of type {}\n",
            s(a),
            ir_type_name(a.ty()),
            s(b),
            ir_type_name(b.ty())
        )));
    }
    Ok(())
}

/// `a op b` for two Exprs (Halide's `operator op(Expr, Expr)`).
pub fn binary(op: Op, a: Expr, b: Expr) -> Result<Expr> {
    match op {
        Op::BitAnd | Op::BitOr | Op::BitXor => {
            let name = match op {
                Op::BitAnd => "bitwise and",
                Op::BitOr => "bitwise or",
                _ => "bitwise xor",
            };
            let (a, b) = match_types_bitwise(a, b, name)?;
            bitwise_matched(op, a, b)
        }
        Op::Shl | Op::Shr => {
            let (which, name) = if op == Op::Shl {
                (Intrinsic::ShiftLeft, "shift left")
            } else {
                (Intrinsic::ShiftRight, "shift right")
            };
            // Halide documents both operands as integers; its own code
            // generation fails on anything else.
            for (e, pos) in [(&a, "first"), (&b, "second")] {
                if !(e.ty().is_int() || e.ty().is_uint()) {
                    return Err(Error::user(format!(
                        "The {pos} argument to {name} must be an integer or unsigned integer, but {} has type {}\n",
                        s(e),
                        ir_type_name(e.ty())
                    )));
                }
            }
            let (a, b) = match_lanes(a, b)?;
            let (a, b) = match_bits(a, b)?;
            Ok(Expr::intrinsic(a.ty(), which, vec![a, b]))
        }
        _ => {
            let (a, b) = match_types(a, b)?;
            if matches!(op, Op::LogicalAnd | Op::LogicalOr) {
                bool_operands(op, &a, &b)?;
            }
            Ok(Expr::binary(op.binop().unwrap(), a, b))
        }
    }
}

fn bitwise_matched(op: Op, a: Expr, b: Expr) -> Result<Expr> {
    let t = a.ty();
    if t.is_bool() {
        return Ok(match op {
            Op::BitAnd => Expr::and(a, b),
            Op::BitOr => Expr::or(a, b),
            _ => Expr::ne(a, b),
        });
    }
    let which = match op {
        Op::BitAnd => Intrinsic::BitwiseAnd,
        Op::BitOr => Intrinsic::BitwiseOr,
        _ => Intrinsic::BitwiseXor,
    };
    Ok(Expr::intrinsic(t, which, vec![a, b]))
}

/// `a op k` (or `k op a` when `int_on_left`) for an integer literal `k`
/// that fits in 32 bits: Halide's `operator op(Expr, int)` overloads, which
/// convert the literal to the Expr's type after a range check.
pub fn binary_int(op: Op, a: Expr, k: i32, int_on_left: bool) -> Result<Expr> {
    let k64 = k as i64;
    let t = a.ty();
    match op {
        Op::Shl | Op::Shr => {
            if int_on_left {
                // No (int, Expr) overload: the literal becomes an Int(32) Expr.
                return binary(op, Expr::i32(k64), a);
            }
            let ut = t.with_code(TypeCode::UInt);
            let (op, amount) = if k >= 0 {
                (op, k64)
            } else {
                (if op == Op::Shl { Op::Shr } else { Op::Shl }, -k64)
            };
            check_representable(ut, amount)?;
            binary(op, a, make_const(ut, amount))
        }
        Op::LogicalAnd | Op::LogicalOr => {
            let c = make_const(t, k64);
            if int_on_left {
                binary(op, c, a)
            } else {
                binary(op, a, c)
            }
        }
        Op::BitAnd | Op::BitOr | Op::BitXor => {
            check_representable(t, k64)?;
            let c = make_const(t, k64);
            let (x, y) = if int_on_left { (c, a) } else { (a, c) };
            if t.is_bool() {
                return bitwise_matched(op, x, y);
            }
            if !(t.is_int() || t.is_uint()) {
                let which = if int_on_left { "second" } else { "first" };
                let name = match op {
                    Op::BitAnd => "bitwise and",
                    Op::BitOr => "bitwise or",
                    _ => "bitwise xor",
                };
                return Err(Error::user(format!(
                    "The {which} argument to {name} must be an integer or unsigned integer"
                )));
            }
            bitwise_matched(op, x, y)
        }
        _ => {
            check_representable(t, k64)?;
            let c = make_const(t, k64);
            let (x, y) = if int_on_left { (c, a) } else { (a, c) };
            Ok(Expr::binary(op.binop().unwrap(), x, y))
        }
    }
}

/// `-a` (Halide: `0 - a` in the type of a).
pub fn neg(a: Expr) -> Result<Expr> {
    let z = Expr::zero(a.ty());
    Ok(Expr::sub(z, a))
}

/// `~a` (bitwise not).
pub fn bitwise_not(a: Expr) -> Result<Expr> {
    if !(a.ty().is_int() || a.ty().is_uint()) {
        return Err(Error::user(
            "Argument to bitwise not must be an integer or unsigned integer",
        ));
    }
    Ok(Expr::intrinsic(a.ty(), Intrinsic::BitwiseNot, vec![a]))
}

/// `!a` (logical not; a must be boolean).
pub fn logical_not(a: Expr) -> Result<Expr> {
    if !a.ty().is_bool() {
        return Err(Error::user("argument of Not is not a bool\n"));
    }
    Ok(Expr::not(a))
}

/// Python's `a // b`: Halide's division, then `floor` if the result is float.
pub fn floor_div(e: Expr) -> Result<Expr> {
    if e.ty().is_float() {
        crate::lang::math::floor(e)
    } else {
        Ok(e)
    }
}

/// Halide's `raise_to_integer_power`.
fn raise_to_integer_power(e: Expr, p: i64) -> Result<Expr> {
    if p == 0 {
        Ok(Expr::one(e.ty()))
    } else if p == 1 {
        Ok(e)
    } else if p < 0 {
        let one = Expr::one(e.ty());
        let d = raise_to_integer_power(e, p.checked_neg().unwrap_or(i64::MAX))?;
        binary(Op::Div, one, d)
    } else if p & 1 == 1 {
        let y = raise_to_integer_power(e.clone(), p >> 1)?;
        let yy = binary(Op::Mul, y.clone(), y)?;
        binary(Op::Mul, yy, e)
    } else {
        let y = raise_to_integer_power(e, p >> 1)?;
        binary(Op::Mul, y.clone(), y)
    }
}

/// Halide's `pow(x, y)`: integer constant exponents expand to multiplies;
/// otherwise a float power in the type of x (ints become float32).
pub fn pow(x: Expr, y: Expr) -> Result<Expr> {
    if let ExprNode::IntImm(p) = y.node() {
        return raise_to_integer_power(x, *p);
    }
    if let ExprNode::Broadcast { value, .. } = y.node() {
        if let ExprNode::IntImm(p) = value.node() {
            return raise_to_integer_power(x, *p);
        }
    }
    let xt = x.ty().element_of();
    let ft = if xt == Type::float(64) || xt == Type::float(16) {
        xt
    } else {
        Type::float(32)
    };
    let x = cast(ft.with_lanes(x.lanes()), x)?;
    let y = cast(ft.with_lanes(y.lanes()), y)?;
    let (x, y) = match_lanes(x, y)?;
    Ok(Expr::intrinsic(
        x.ty(),
        Intrinsic::Math(MathFn::Pow),
        vec![x, y],
    ))
}

// ---- mixing with Python scalars -------------------------------------------------------

/// One operand of a Python-level operator: an Expr, or a Python number.
/// (Python bools are passed as `Int(0|1)`, as Halide's bindings do.)
#[derive(Clone, Debug)]
pub enum Operand {
    Expr(Expr),
    Int(i128),
    Float(f64),
}

/// The Python-level operators (`__add__` etc.), including `//` and `**`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PyOp {
    Bin(Op),
    FloorDiv,
    Pow,
}

/// True if `v` does not survive the round-trip through float32 (the Python
/// bindings then warn that the literal loses precision).
pub fn float_literal_is_lossy(v: f64) -> bool {
    ((v as f32) as f64).to_bits() != v.to_bits()
}

/// Halide's conversion of a Python number to an Expr: ints that fit in 32
/// bits become Int(32), wider ones Int(64), larger ones (and floats) Float(32).
pub fn scalar_to_expr(o: &Operand) -> Expr {
    match o {
        Operand::Expr(e) => e.clone(),
        Operand::Int(v) if *v >= i32::MIN as i128 && *v <= i32::MAX as i128 => Expr::i32(*v as i64),
        Operand::Int(v) if *v >= i64::MIN as i128 && *v <= i64::MAX as i128 => {
            Expr::int_imm(Type::int(64), *v as i64)
        }
        Operand::Int(v) => Expr::f32(*v as f64),
        Operand::Float(f) => Expr::f32(*f),
    }
}

/// Does this operand take the int-literal path (`operator op(Expr, int)`)?
fn as_small_int(o: &Operand) -> Option<i32> {
    match o {
        Operand::Int(v) if *v >= i32::MIN as i128 && *v <= i32::MAX as i128 => Some(*v as i32),
        _ => None,
    }
}

/// A Python binary operator with at least one Expr operand, following the
/// overload resolution of Halide's Python bindings.
pub fn py_binary(op: PyOp, lhs: Operand, rhs: Operand) -> Result<Expr> {
    match op {
        PyOp::Pow => pow(scalar_to_expr(&lhs), scalar_to_expr(&rhs)),
        PyOp::FloorDiv => floor_div(py_binary(PyOp::Bin(Op::Div), lhs, rhs)?),
        PyOp::Bin(op) => match (&lhs, &rhs) {
            (Operand::Expr(a), r) => match as_small_int(r) {
                Some(k) => binary_int(op, a.clone(), k, false),
                None => binary(op, a.clone(), scalar_to_expr(r)),
            },
            (l, Operand::Expr(b)) => match as_small_int(l) {
                Some(k) => binary_int(op, b.clone(), k, true),
                None => binary(op, scalar_to_expr(l), b.clone()),
            },
            _ => binary(op, scalar_to_expr(&lhs), scalar_to_expr(&rhs)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::print::expr_to_string;

    fn x() -> Expr {
        Expr::var_i32("x")
    }
    fn u8x() -> Expr {
        cast(Type::uint(8), x()).unwrap()
    }
    fn py(op: Op, a: Operand, b: Operand) -> Result<Expr> {
        py_binary(PyOp::Bin(op), a, b)
    }
    fn e(x: Expr) -> Operand {
        Operand::Expr(x)
    }

    #[test]
    fn literal_coercion() {
        let r = py(Op::Add, e(u8x()), Operand::Int(3)).unwrap();
        assert_eq!(r.ty(), Type::uint(8));
        assert_eq!(expr_to_string(&r), "(uint8(x) + (uint8)3)");
        let err = py(Op::Add, e(u8x()), Operand::Int(300)).unwrap_err();
        assert_eq!(
            err.message,
            "Integer constant 300 will be implicitly coerced to type uint8, which changes its value to (uint8)44.\n"
        );
        let r = py(Op::Mul, e(x()), Operand::Float(1.5)).unwrap();
        assert_eq!(expr_to_string(&r), "(float32(x)*1.500000f)");
        let r = py(Op::Add, e(x()), Operand::Int(1 << 40)).unwrap();
        assert_eq!(r.ty(), Type::int(64));
        let r = py(Op::Add, e(x()), Operand::Int(1 << 63)).unwrap();
        assert_eq!(r.ty(), Type::float(32));
        let r = py(Op::Sub, Operand::Int(3), e(x())).unwrap();
        assert_eq!(expr_to_string(&r), "(3 - x)");
    }

    #[test]
    fn match_types_rules() {
        let i16x = cast(Type::int(16), x()).unwrap();
        let r = binary(Op::Add, u8x(), i16x.clone()).unwrap();
        assert_eq!(r.ty(), Type::int(16));
        let u32x = cast(Type::uint(32), x()).unwrap();
        let r = binary(Op::Add, u32x, x()).unwrap();
        assert_eq!(expr_to_string(&r), "(int32(uint32(x)) + x)");
        let i8x = cast(Type::int(8), x()).unwrap();
        assert_eq!(binary(Op::Add, u8x(), i8x).unwrap().ty(), Type::int(8));
        let f = cast(Type::float(32), x()).unwrap();
        let d = cast(Type::float(64), x()).unwrap();
        assert_eq!(binary(Op::Add, f, d).unwrap().ty(), Type::float(64));
    }

    #[test]
    fn bitwise_and_shift() {
        let err = binary(Op::BitAnd, u8x(), x()).unwrap_err();
        assert!(err
            .message
            .starts_with("Arguments to bitwise and must be both be signed or both be unsigned."));
        let r = py(Op::Shl, e(u8x()), Operand::Int(1)).unwrap();
        assert_eq!(expr_to_string(&r), "(uint8)shift_left(uint8(x), (uint8)1)");
        let r = py(Op::Shl, e(u8x()), Operand::Int(-1)).unwrap();
        assert_eq!(expr_to_string(&r), "(uint8)shift_right(uint8(x), (uint8)1)");
        let r = py(Op::Shl, e(x()), e(u8x())).unwrap();
        assert_eq!(expr_to_string(&r), "shift_left(x, uint32(uint8(x)))");
        let b = binary(Op::Gt, x(), Expr::i32(3)).unwrap();
        let r = py(Op::BitAnd, e(b.clone()), Operand::Int(1)).unwrap();
        assert_eq!(expr_to_string(&r), "((x > 3) && (uint1)1)");
        assert!(py(Op::Mul, e(b), Operand::Int(2)).is_err());
    }

    #[test]
    fn pow_and_floordiv() {
        let r = py_binary(PyOp::Pow, e(x()), Operand::Int(2)).unwrap();
        assert_eq!(expr_to_string(&r), "(x*x)");
        let r = py_binary(PyOp::Pow, e(x()), Operand::Int(-1)).unwrap();
        assert_eq!(expr_to_string(&r), "(1/x)");
        let r = py_binary(PyOp::Pow, Operand::Int(2), e(x())).unwrap();
        assert_eq!(
            expr_to_string(&r),
            "(float32)pow_f32(2.000000f, float32(x))"
        );
        let f = cast(Type::float(32), x()).unwrap();
        let r = py_binary(PyOp::FloorDiv, e(f), Operand::Int(2)).unwrap();
        assert_eq!(
            expr_to_string(&r),
            "(float32)floor_f32(float32(x)/2.000000f)"
        );
    }

    #[test]
    fn float_literal_int_check() {
        let f = cast(Type::float(32), x()).unwrap();
        assert!(py(Op::Add, e(f), Operand::Int(16777217)).is_err());
    }
}
