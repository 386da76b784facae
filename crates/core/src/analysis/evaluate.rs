//! Evaluate scalar integer expressions to constants, given values for their
//! free variables. Used where the compiler needs a number for a symbolic
//! bound at realize time (e.g. how much larger than requested an output
//! buffer must be). Follows Halide's integer semantics: Euclidean division
//! and modulo (the remainder is never negative), division by zero gives zero.

use std::collections::HashMap;

use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic};

/// Halide's integer division is Euclidean: the remainder is never
/// negative, so it rounds down for positive divisors and up for negative ones.
pub fn div_euclid(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    a.wrapping_div_euclid(b)
}

pub fn mod_euclid(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let r = a.wrapping_rem(b);
    if r < 0 {
        r + b.abs()
    } else {
        r
    }
}

/// The value of `e`, or None if it uses unknown variables or unsupported nodes.
pub fn eval_int(e: &Expr, vars: &HashMap<String, i64>) -> Option<i64> {
    match e.node() {
        ExprNode::IntImm(v) => Some(*v),
        ExprNode::UIntImm(v) => i64::try_from(*v).ok(),
        ExprNode::Variable { name, .. } => vars.get(name).copied(),
        ExprNode::Cast(a) if e.ty().is_int_or_uint() || e.ty().is_bool() => {
            let v = eval_int(a, vars)?;
            let bits = e.ty().bits as u32;
            if bits >= 64 {
                return Some(v);
            }
            let mask = (1i64 << bits) - 1;
            let w = v & mask;
            Some(if e.ty().is_int() && (w >> (bits - 1)) & 1 == 1 {
                w - (1i64 << bits)
            } else {
                w
            })
        }
        ExprNode::Binary { op, a, b } => {
            let (x, y) = (eval_int(a, vars)?, eval_int(b, vars)?);
            Some(match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div => div_euclid(x, y),
                BinOp::Mod => mod_euclid(x, y),
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::EQ => (x == y) as i64,
                BinOp::NE => (x != y) as i64,
                BinOp::LT => (x < y) as i64,
                BinOp::LE => (x <= y) as i64,
                BinOp::GT => (x > y) as i64,
                BinOp::GE => (x >= y) as i64,
                BinOp::And => (x != 0 && y != 0) as i64,
                BinOp::Or => (x != 0 || y != 0) as i64,
            })
        }
        ExprNode::Not(a) => Some((eval_int(a, vars)? == 0) as i64),
        ExprNode::Select { cond, t, f } => {
            if eval_int(cond, vars)? != 0 {
                eval_int(t, vars)
            } else {
                eval_int(f, vars)
            }
        }
        ExprNode::Let { name, value, body } => {
            let v = eval_int(value, vars)?;
            let mut inner = vars.clone();
            inner.insert(name.clone(), v);
            eval_int(body, &inner)
        }
        ExprNode::Call {
            args,
            kind: CallKind::Intrinsic(Intrinsic::Likely | Intrinsic::LikelyIfInnermost),
            ..
        } => eval_int(&args[0], vars),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_semantics() {
        assert_eq!(div_euclid(-7, 2), -4);
        assert_eq!(div_euclid(7, -2), -3);
        assert_eq!(div_euclid(-7, -2), 4);
        assert_eq!(div_euclid(7, 0), 0);
        assert_eq!(mod_euclid(-7, 3), 2);
        assert_eq!(mod_euclid(7, -3), 1);
    }

    #[test]
    fn evaluates_with_bindings() {
        let e = Expr::max(Expr::sub(Expr::var_i32("a"), Expr::i32(8)), Expr::i32(0));
        let mut m = HashMap::new();
        m.insert("a".to_string(), 5);
        assert_eq!(eval_int(&e, &m), Some(0));
    }
}
