//! Constant folding with Halide semantics: Euclidean integer division and
//! modulo (x/0 == 0, x%0 == 0), wrap-around to the type's width, and IEEE
//! arithmetic in the type's own precision for floats.

use crate::analysis::evaluate::{self, Value};
use crate::ir::{BinOp, Expr, ExprNode, Type, TypeCode};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum C {
    I(i64),
    U(u64),
    F(f64),
}

/// The value of a scalar constant or a broadcast of one.
pub fn const_of(e: &Expr) -> Option<C> {
    match e.node() {
        ExprNode::IntImm(v) => Some(C::I(*v)),
        ExprNode::UIntImm(v) => Some(C::U(*v)),
        ExprNode::FloatImm(v) => Some(C::F(*v)),
        ExprNode::Broadcast { value, .. } => const_of(value),
        _ => None,
    }
}

/// A constant of type `ty` (broadcast when `ty` is a vector). Integer values
/// wrap to the type; bool is `v != 0`.
pub fn make(ty: Type, c: C) -> Expr {
    if ty.is_vector() {
        return Expr::broadcast(make(ty.element_of(), c), ty.lanes);
    }
    if ty.is_bool() {
        let b = match c {
            C::I(v) => v != 0,
            C::U(v) => v != 0,
            C::F(v) => v != 0.0,
        };
        return Expr::bool_const(b);
    }
    match (ty.code, c) {
        (TypeCode::Int, C::I(v)) => Expr::int_imm(ty, v),
        (TypeCode::Int, C::U(v)) => Expr::int_imm(ty, v as i64),
        (TypeCode::UInt, C::I(v)) => Expr::uint_imm(ty, v as u64),
        (TypeCode::UInt, C::U(v)) => Expr::uint_imm(ty, v),
        (TypeCode::Float | TypeCode::BFloat, C::F(v)) => Expr::float_imm(ty, v),
        (TypeCode::Float | TypeCode::BFloat, C::I(v)) => Expr::float_imm(ty, v as f64),
        (TypeCode::Float | TypeCode::BFloat, C::U(v)) => Expr::float_imm(ty, v as f64),
        _ => Expr::make_const_i64(ty, 0),
    }
}

pub fn make_int(ty: Type, v: i128) -> Expr {
    if ty.is_uint() {
        make(ty, C::U(v as u64))
    } else {
        make(ty, C::I(v as i64))
    }
}

/// A constant as the evaluator's value.
fn value(c: C) -> Value {
    match c {
        C::I(v) => Value::Int(v as i128),
        C::U(v) => Value::Int(v as i128),
        C::F(v) => Value::Float(v),
    }
}

/// An evaluator's value as a constant of type `ty`.
fn constant(ty: Type, v: Value) -> Expr {
    match v {
        Value::Int(i) => make_int(ty, i),
        Value::Float(f) => make(ty, C::F(f)),
    }
}

fn is_f32(ty: Type) -> bool {
    ty.code == TypeCode::Float && ty.bits == 32
}

/// Fold `a op b` when both are constants. `ty` is the operand type.
pub fn fold_bin(op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
    fold_bin_checked(op, a, b).map(|(e, _)| e)
}

/// Like `fold_bin`, and also reports whether the exact result overflowed a
/// type that Halide treats as non-overflowing (signed 32/64-bit ints). The
/// folded constant is still the wrapped value; callers that reason about
/// expressions the program never evaluates must not trust it.
///
/// The arithmetic is the evaluator's (`analysis/evaluate.rs`); what is
/// particular to folding is Halide's simplifier's own order of rewrites:
/// it turns `x * 0` into 0 before folding (so `0 * inf == 0`) and folds
/// float `a == b` through `a - b == 0` (so `inf == inf` is false).
pub fn fold_bin_checked(op: BinOp, a: &Expr, b: &Expr) -> Option<(Expr, bool)> {
    let (ca, cb) = (const_of(a)?, const_of(b)?);
    let ty = a.ty();
    if ty.is_handle() {
        return None;
    }
    let result_ty = if op.is_comparison() || op.is_logical() {
        Type::bool().with_lanes(ty.lanes)
    } else {
        ty
    };
    let et = ty.element_of();
    if let (C::F(x), C::F(y)) = (ca, cb) {
        let same = || {
            if is_f32(ty) {
                (x as f32) - (y as f32) == 0.0
            } else {
                x - y == 0.0
            }
        };
        match op {
            BinOp::EQ => return Some((make(result_ty, C::U(same() as u64)), false)),
            BinOp::NE => return Some((make(result_ty, C::U(!same() as u64)), false)),
            BinOp::Mul if x == 0.0 || y == 0.0 => return Some((make(ty, C::F(0.0)), false)),
            // Halide's simplifier leaves these for run time.
            BinOp::Min | BinOp::Max if x.is_nan() || y.is_nan() => return None,
            BinOp::Mod => return None,
            _ => {}
        }
    }
    let (v, overflowed) = evaluate::binary(op, et, value(ca), value(cb)).ok()?;
    Some((constant(result_ty, v), overflowed))
}

/// The marker Halide's simplifier leaves where constant folding of a signed
/// 32/64-bit operation overflowed; code generation rejects it.
pub fn signed_integer_overflow(ty: Type) -> Expr {
    Expr::intrinsic(ty, crate::ir::Intrinsic::SignedIntegerOverflow, vec![])
}

/// Fold a cast of a constant (the evaluator's cast; a float out of the
/// target's range, undefined in Halide, is left alone).
pub fn fold_cast(ty: Type, a: &Expr) -> Option<Expr> {
    let c = const_of(a)?;
    let v = evaluate::cast(ty.element_of(), a.ty().element_of(), value(c)).ok()?;
    Some(constant(ty, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds() {
        let i8t = Type::int(8);
        let a = Expr::int_imm(i8t, 100);
        let b = Expr::int_imm(i8t, 100);
        assert!(fold_bin(BinOp::Add, &a, &b).unwrap().is_const_value(-56));
        assert!(fold_bin(BinOp::Div, &Expr::i32(-7), &Expr::i32(2))
            .unwrap()
            .is_const_value(-4));
        assert!(fold_bin(BinOp::Mod, &Expr::i32(-7), &Expr::i32(2))
            .unwrap()
            .is_const_value(1));
        assert!(fold_bin(BinOp::Div, &Expr::i32(-7), &Expr::i32(0))
            .unwrap()
            .is_const_value(0));
        let u = Type::uint(8);
        assert!(
            fold_bin(BinOp::Sub, &Expr::uint_imm(u, 3), &Expr::uint_imm(u, 5))
                .unwrap()
                .is_const_value(254)
        );
        let f = fold_bin(BinOp::Add, &Expr::f32(0.1), &Expr::f32(0.2)).unwrap();
        assert_eq!(f.as_float_const().unwrap(), (0.1f32 + 0.2f32) as f64);
        assert!(fold_bin(BinOp::LT, &Expr::i32(1), &Expr::i32(2))
            .unwrap()
            .is_true());
        assert!(fold_cast(Type::bool(), &Expr::i32(3)).unwrap().is_true());
        assert!(fold_cast(Type::bool(), &Expr::i32(2)).unwrap().is_false());
        assert!(fold_cast(Type::uint(8), &Expr::i32(-1))
            .unwrap()
            .is_const_value(255));
        assert!(fold_cast(Type::i32(), &Expr::f32(-2.7))
            .unwrap()
            .is_const_value(-2));
    }
}
