//! `random_float`, `random_int`, `random_uint`: Halide's pseudo-random
//! numbers (Random.cpp), bit for bit. A call made by the user carries its
//! optional seed and a process-wide call number; when a Func is defined,
//! every such call in the definition becomes a fixed hash of those, a
//! per-definition tag and the definition's free variables (pure vars,
//! then RVars, innermost last), so the value differs per point and per
//! call, and is the same every time the pipeline runs.

use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, Mutator};
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Type};
use crate::lang::math::clamp;
use crate::lang::print::{expr_to_string as s, ir_type_name};
use crate::lang::var::unique_name;

/// Halide's `random_number_counter`: one number per `random_*()` call.
static CALLS: AtomicI32 = AtomicI32::new(0);
/// Halide's `random_variable_counter`: one tag per Func definition.
static DEFINITIONS: AtomicI32 = AtomicI32::new(0);

/// A random call of type `t`: takes the next call number, then checks the
/// seed (Halide's order: a rejected call still uses up its number).
fn random_call(t: Type, seed: Option<Expr>, name: &str, seed_types: &[Type]) -> Result<Expr> {
    let id = CALLS.fetch_add(1, Ordering::Relaxed);
    if let Some(e) = seed.as_ref().filter(|e| !seed_types.contains(&e.ty())) {
        let wanted: Vec<&str> = seed_types
            .iter()
            .map(|t| if t.is_int() { "Int(32)" } else { "UInt(32)" })
            .collect();
        return Err(Error::user(format!(
            "The seed passed to {name} must have type {}, but instead is {} of type {}\n",
            wanted.join(" or "),
            s(e),
            ir_type_name(e.ty())
        )));
    }
    let mut args: Vec<Expr> = seed.into_iter().collect();
    args.push(Expr::i32(id as i64));
    Ok(Expr::intrinsic(t, Intrinsic::Random, args))
}

/// `random_float(seed?)`: uniform in [0, 1]; the seed must be an Int(32).
pub fn random_float(seed: Option<Expr>) -> Result<Expr> {
    random_call(Type::float(32), seed, "random_float", &[Type::i32()])
}

/// `random_uint(seed?)`: every UInt(32) equally likely; the seed is an
/// Int(32) or a UInt(32).
pub fn random_uint(seed: Option<Expr>) -> Result<Expr> {
    random_call(Type::uint(32), seed, "random_int", &[Type::i32(), Type::uint(32)])
}

/// `random_int(seed?)`: `random_uint`'s bits as an Int(32).
pub fn random_int(seed: Option<Expr>) -> Result<Expr> {
    Ok(Expr::reinterpret(Type::i32(), random_uint(seed)?))
}

/// The tag of the next Func definition (each definition takes one).
pub fn next_definition_tag() -> i32 {
    DEFINITIONS.fetch_add(1, Ordering::Relaxed)
}

/// Replace the random calls in `e` (part of a definition with tag `tag`
/// over `free_vars`) by their hashes.
pub fn lower_random(e: &Expr, free_vars: &[Expr], tag: i32) -> Expr {
    // The free vars go in reversed, after the tag, so the innermost var
    // is usually hashed last.
    let mut extra: Vec<Expr> = vec![Expr::i32(tag as i64)];
    extra.extend(free_vars.iter().rev().cloned());
    LowerRandom { extra }.mutate_expr(e)
}

struct LowerRandom {
    extra: Vec<Expr>,
}

impl Mutator for LowerRandom {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        let ExprNode::Call {
            args,
            kind: CallKind::Intrinsic(Intrinsic::Random),
            ..
        } = e.node()
        else {
            return e;
        };
        let mut all = args.clone();
        all.extend(self.extra.iter().cloned());
        if e.ty() == Type::float(32) {
            hash_float(&all)
        } else {
            hash(&all)
        }
    }
}

// Coefficients of a quadratic permutation polynomial modulo 2^32
// (C1 odd, C2 even), Halide's.
const C0: u32 = 576942909;
const C1: u32 = 1121052041;
const C2: u32 = 1040796640;

fn u32c(v: u32) -> Expr {
    Expr::uint_imm(Type::uint(32), v as u64)
}

/// A fixed pseudo-random permutation of the UInt(32)s.
fn rng32(x: Expr) -> Expr {
    if let ExprNode::UIntImm(i) = x.node() {
        let i = *i as u32;
        return u32c(C2.wrapping_mul(i).wrapping_add(C1).wrapping_mul(i).wrapping_add(C0));
    }
    let inner = Expr::add(Expr::mul(u32c(C2), x.clone()), u32c(C1));
    Expr::add(Expr::mul(inner, x), u32c(C0))
}

fn as_u32(e: &Expr) -> Expr {
    crate::lang::operators::cast(Type::uint(32), e.clone()).expect("an integer to UInt(32)")
}

/// Permute the first value, then add in and permute each next one; mix the
/// high half into the low (whose period is poor).
fn hash(args: &[Expr]) -> Expr {
    let mut result = rng32(as_u32(&args[0]));
    for a in &args[1..] {
        result = match (result.node(), a.node()) {
            (ExprNode::UIntImm(r), ExprNode::UIntImm(v)) => {
                rng32(u32c((*r as u32).wrapping_add(*v as u32)))
            }
            _ => {
                let name = unique_name('R');
                let sum = Expr::add(result.clone(), as_u32(a));
                Expr::let_(name.clone(), sum, rng32(Expr::var(Type::uint(32), name)))
            }
        };
    }
    let high = Expr::intrinsic(Type::uint(32), Intrinsic::ShiftRight, vec![result.clone(), u32c(16)]);
    Expr::intrinsic(Type::uint(32), Intrinsic::BitwiseXor, vec![result, high])
}

/// 23 random mantissa bits under the exponent of 1.0, minus one: [0, 1).
/// The clamp only helps bounds inference.
fn hash_float(args: &[Expr]) -> Expr {
    let bits = hash(args);
    let mantissa = Expr::intrinsic(Type::uint(32), Intrinsic::ShiftRight, vec![bits, u32c(9)]);
    let one_to_two = Expr::intrinsic(Type::uint(32), Intrinsic::BitwiseOr, vec![u32c(127 << 23), mantissa]);
    let f = Expr::sub(Expr::reinterpret(Type::float(32), one_to_two), Expr::f32(1.0));
    clamp(f, Expr::f32(0.0), Expr::f32(1.0)).expect("float clamp")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::evaluate::{eval_scalar, Value};
    use std::collections::HashMap;

    fn eval(e: &Expr) -> Value {
        eval_scalar(e, &HashMap::new()).unwrap()
    }

    #[test]
    fn permutation_matches_constant_folding() {
        // The symbolic and the folded polynomial agree.
        let x = Expr::var(Type::uint(32), "x");
        let sym = rng32(x);
        let mut vars = HashMap::new();
        vars.insert("x".to_string(), Value::Int(123456789));
        let v = eval_scalar(&sym, &vars).unwrap();
        assert_eq!(Some(v), rng32(u32c(123456789)).as_int_const().map(|c| Value::Int(c as i128)));
    }

    #[test]
    fn float_in_unit_interval() {
        for seed in 0..50 {
            let e = hash_float(&[Expr::i32(seed), Expr::i32(0), Expr::i32(7)]);
            let v = eval(&e).as_f64();
            assert!((0.0..1.0).contains(&v), "{v}");
        }
    }

    #[test]
    fn seeds_are_checked() {
        assert!(random_float(Some(Expr::f32(1.0))).is_err());
        assert!(random_uint(Some(Expr::uint_imm(Type::uint(16), 3))).is_err());
        assert!(random_uint(Some(Expr::uint_imm(Type::uint(32), 3))).is_ok());
    }
}
