//! Constant folding with Halide semantics: Euclidean integer division and
//! modulo (x/0 == 0, x%0 == 0), wrap-around to the type's width, and IEEE
//! arithmetic in the type's own precision for floats.

use super::info::{div_euclid, mod_euclid};
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

fn as_i128(c: C) -> Option<i128> {
    match c {
        C::I(v) => Some(v as i128),
        C::U(v) => Some(v as i128),
        C::F(_) => None,
    }
}

fn is_f32(ty: Type) -> bool {
    ty.code == TypeCode::Float && ty.bits == 32
}

fn fold_float(op: BinOp, ty: Type, a: f64, b: f64) -> Option<Expr> {
    let bool_ty = Type::bool().with_lanes(ty.lanes);
    let cmp = |v: bool| Some(make(bool_ty, C::U(v as u64)));
    // Halide folds `a == b` through `a - b == 0` (in the operand type's
    // precision), so `inf == inf` is false and `inf != inf` is true.
    let eq = || {
        if is_f32(ty) {
            (a as f32) - (b as f32) == 0.0
        } else {
            a - b == 0.0
        }
    };
    match op {
        BinOp::EQ => return cmp(eq()),
        BinOp::NE => return cmp(!eq()),
        BinOp::LT => return cmp(a < b),
        BinOp::LE => return cmp(a <= b),
        BinOp::GT => return cmp(a > b),
        BinOp::GE => return cmp(a >= b),
        _ => {}
    }
    if ty.code != TypeCode::Float || !(ty.bits == 32 || ty.bits == 64) {
        return None;
    }
    let v = if is_f32(ty) {
        let (x, y) = (a as f32, b as f32);
        (match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            // Halide rewrites x * 0 to 0 before folding: 0 * inf == 0.
            BinOp::Mul if x == 0.0 || y == 0.0 => 0.0,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Min if !x.is_nan() && !y.is_nan() => x.min(y),
            BinOp::Max if !x.is_nan() && !y.is_nan() => x.max(y),
            _ => return None,
        }) as f64
    } else {
        match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul if a == 0.0 || b == 0.0 => 0.0,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Min if !a.is_nan() && !b.is_nan() => a.min(b),
            BinOp::Max if !a.is_nan() && !b.is_nan() => a.max(b),
            _ => return None,
        }
    };
    Some(make(ty, C::F(v)))
}

/// Fold `a op b` when both are constants. `ty` is the operand type.
pub fn fold_bin(op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
    fold_bin_checked(op, a, b).map(|(e, _)| e)
}

/// Like `fold_bin`, and also reports whether the exact result overflowed a
/// type that Halide treats as non-overflowing (signed 32/64-bit ints). The
/// folded constant is still the wrapped value; callers that reason about
/// expressions the program never evaluates must not trust it.
pub fn fold_bin_checked(op: BinOp, a: &Expr, b: &Expr) -> Option<(Expr, bool)> {
    let (ca, cb) = (const_of(a)?, const_of(b)?);
    let ty = a.ty();
    if !ty.is_float() && !ty.is_handle() && !ty.is_bool() && !op.is_comparison() && !op.is_logical()
    {
        if let (Some(x), Some(y)) = (as_i128(ca), as_i128(cb)) {
            if super::info::no_overflow(ty) {
                let exact = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => Some(div_euclid(x, y)),
                    BinOp::Mod => Some(mod_euclid(x, y)),
                    _ => Some(0),
                };
                let overflow = exact.is_none_or(|v| v < ty.min_int() || v > ty.max_int());
                return fold_bin_unchecked(op, a, b, ca, cb).map(|e| (e, overflow));
            }
        }
    }
    fold_bin_unchecked(op, a, b, ca, cb).map(|e| (e, false))
}

fn fold_bin_unchecked(op: BinOp, a: &Expr, b: &Expr, ca: C, cb: C) -> Option<Expr> {
    let _ = b;
    let ty = a.ty();
    if ty.is_float() {
        let (C::F(x), C::F(y)) = (ca, cb) else {
            return None;
        };
        return fold_float(op, ty, x, y);
    }
    if ty.is_handle() {
        return None;
    }
    let (x, y) = (as_i128(ca)?, as_i128(cb)?);
    let bool_ty = Type::bool().with_lanes(ty.lanes);
    let cmp = |v: bool| Some(make(bool_ty, C::U(v as u64)));
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => div_euclid(x, y),
        BinOp::Mod => mod_euclid(x, y),
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::EQ => return cmp(x == y),
        BinOp::NE => return cmp(x != y),
        BinOp::LT => return cmp(x < y),
        BinOp::LE => return cmp(x <= y),
        BinOp::GT => return cmp(x > y),
        BinOp::GE => return cmp(x >= y),
        BinOp::And => return cmp(x != 0 && y != 0),
        BinOp::Or => return cmp(x != 0 || y != 0),
    };
    if ty.is_bool() {
        return Some(make(ty, C::U((r & 1) as u64)));
    }
    Some(make_int(ty, r))
}

/// The marker Halide's simplifier leaves where constant folding of a signed
/// 32/64-bit operation overflowed; code generation rejects it.
pub fn signed_integer_overflow(ty: Type) -> Expr {
    Expr::intrinsic(ty, crate::ir::Intrinsic::SignedIntegerOverflow, vec![])
}

/// Fold a cast of a constant.
pub fn fold_cast(ty: Type, a: &Expr) -> Option<Expr> {
    let c = const_of(a)?;
    let st = a.ty();
    if ty.is_bool() {
        // Halide's cast to bool keeps the low bit (LLVM trunc / fptoui to
        // i1), both when folding and at run time: bool(2) is false.
        let bit = match c {
            C::I(v) => v & 1 != 0,
            C::U(v) => v & 1 != 0,
            C::F(v) => {
                if !v.is_finite() {
                    return None;
                }
                let t = v.trunc();
                if t.abs() >= 9.2e18 {
                    return None;
                }
                (t as i64) & 1 != 0
            }
        };
        return Some(make(ty, C::U(bit as u64)));
    }
    match ty.code {
        TypeCode::Int | TypeCode::UInt => match c {
            C::I(v) => Some(make_int(ty, v as i128)),
            C::U(v) => Some(make_int(ty, v as i128)),
            C::F(v) => {
                if !v.is_finite() {
                    return None;
                }
                let t = v.trunc();
                if t < ty.min_int() as f64 || t > ty.max_int() as f64 {
                    return None; // out of range: undefined in Halide, leave it
                }
                Some(make_int(ty, t as i128))
            }
        },
        TypeCode::Float if ty.bits == 32 || ty.bits == 64 => {
            let v = match c {
                C::I(v) => {
                    if ty.bits == 32 {
                        v as f32 as f64
                    } else {
                        v as f64
                    }
                }
                C::U(v) => {
                    if ty.bits == 32 {
                        v as f32 as f64
                    } else {
                        v as f64
                    }
                }
                C::F(v) => {
                    if st.bits == 16 || st.code == TypeCode::BFloat {
                        return None;
                    }
                    v
                }
            };
            Some(make(ty, C::F(v)))
        }
        _ => None,
    }
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
