//! Loop unrolling (the algorithm of Halide's UnrollLoops, written anew).
//!
//! Assumes: loops marked `ForType::Unrolled` have an extent that folds to an
//! integer constant (after `simplify` plus the small constant folder below).
//! Loop variables may appear anywhere in the body, including in the bounds
//! of inner loops.
//!
//! Guarantees: no `ForType::Unrolled` loop remains. Each unrolled loop is
//! replaced by a Block of `extent` copies of its (recursively unrolled) body,
//! copy `i` having the loop variable replaced by `min + i`. A loop of extent
//! <= 0 becomes a no-op. (`bound_constant_extent_loops`, run before, has
//! given every unrolled loop a constant extent where one can be found; any
//! other is a user error naming the loop.)
//!
//! This file also holds two small helpers shared by the other loop passes:
//! `const_int_value` (fold an integer constant tree) and `fold_binary`
//! (build a binary op, folding integer constants and trivial identities).

use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute_in_stmt;
use crate::error::{Error, Result};
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{BinOp, Expr, ForType, Mutator, Stmt, StmtNode};

/// Unroll every `ForType::Unrolled` loop in `s`.
pub fn unroll_loops(s: &Stmt) -> Result<Stmt> {
    let mut u = Unroller { error: None };
    let out = u.mutate_stmt(s);
    match u.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

struct Unroller {
    error: Option<Error>,
}

impl Mutator for Unroller {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        // Expressions hold no loops.
        e.clone()
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        let StmtNode::For {
            name,
            min,
            extent,
            for_type: ForType::Unrolled,
            body,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        let simplified = simplify(extent);
        let Some(n) = const_int_value(&simplified) else {
            self.error = Some(Error::user(format!(
                "Can only unroll for loops over a constant extent. Loop over {name} has extent {simplified}."
            )));
            return s.clone();
        };
        // Inner loops first, so each copy is already fully unrolled.
        let body = self.mutate_stmt(body);
        if n <= 0 {
            return Stmt::no_op();
        }
        let copies = (0..n)
            .map(|i| {
                let value = fold_binary(BinOp::Add, min.clone(), Expr::make_const_i64(min.ty(), i));
                substitute_in_stmt(name, &value, &body)
            })
            .collect();
        Stmt::block(copies)
    }
}

/// The value of `e` if it is an integer constant expression (scalar or
/// broadcast), as the simplifier folds it.
pub(crate) fn const_int_value(e: &Expr) -> Option<i64> {
    if !e.ty().is_int_or_uint() {
        return None;
    }
    simplify(e).as_int_const()
}

/// `a op b` for scalar or vector operands of equal type, folding integer
/// constants and the identities `x + 0`, `x - 0`, `x * 1`, `x * 0`, `x - x`.
/// Falls back to the raw constructor for everything else.
pub(crate) fn fold_binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    let t = a.ty();
    if t.is_int_or_uint() && !(t.is_uint() && t.bits == 64) {
        if a.as_int_const().is_some() && b.as_int_const().is_some() {
            return simplify(&Expr::binary(op, a, b));
        }
        match op {
            BinOp::Add if b.is_zero() => return a,
            BinOp::Add if a.is_zero() => return b,
            BinOp::Sub if b.is_zero() => return a,
            BinOp::Sub if crate::ir::equal(&a, &b) => return Expr::zero(t),
            BinOp::Mul if b.is_one() => return a,
            BinOp::Mul if a.is_one() => return b,
            BinOp::Mul if a.is_zero() => return a,
            BinOp::Mul if b.is_zero() => return b,
            BinOp::Min | BinOp::Max if crate::ir::equal(&a, &b) => return a,
            _ => {}
        }
    }
    Expr::binary(op, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::ir::Type;
    use crate::lower::vectorize_loops::test_interpreter::{random_memory, run, Rng};
    use std::collections::HashMap;

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    fn one() -> Expr {
        Expr::bool_const(true)
    }

    #[test]
    fn folds_constants() {
        let e = Expr::add(
            Expr::mul(Expr::i32(3), Expr::i32(4)),
            Expr::sub(Expr::i32(1), Expr::i32(10)),
        );
        assert_eq!(const_int_value(&e), Some(3));
        assert_eq!(
            const_int_value(&Expr::div(Expr::i32(-7), Expr::i32(2))),
            Some(-4)
        );
        assert_eq!(
            const_int_value(&Expr::modulo(Expr::i32(-7), Expr::i32(2))),
            Some(1)
        );
        assert_eq!(
            const_int_value(&Expr::div(Expr::i32(7), Expr::i32(0))),
            Some(0)
        );
        assert_eq!(
            const_int_value(&Expr::cast(Type::uint(8), Expr::i32(300))),
            Some(44)
        );
        assert_eq!(const_int_value(&x()), None);
        assert_eq!(fold_binary(BinOp::Add, x(), Expr::i32(0)).to_string(), "x");
        assert_eq!(fold_binary(BinOp::Mul, Expr::i32(1), x()).to_string(), "x");
        assert_eq!(fold_binary(BinOp::Sub, x(), x()).to_string(), "0");
    }

    #[test]
    fn unrolls_constant_loop() {
        // unrolled (x, 2, 3) { out[x] = in[x] + x }
        let body = Stmt::store(
            "out",
            Expr::add(Expr::load(Type::i32(), "in", x(), one()), x()),
            x(),
            one(),
        );
        let s = Stmt::for_loop(
            "x",
            Expr::i32(2),
            Expr::add(Expr::i32(1), Expr::i32(2)),
            ForType::Unrolled,
            body,
        );
        let u = unroll_loops(&s).unwrap();
        assert_eq!(
            u.to_string(),
            "out[2] = (in[2] + 2)\nout[3] = (in[3] + 3)\nout[4] = (in[4] + 4)\n"
        );
    }

    #[test]
    fn unrolls_nested_and_symbolic_min() {
        let y = Expr::var_i32("y");
        let inner = Stmt::for_loop(
            "y",
            Expr::i32(0),
            Expr::i32(2),
            ForType::Unrolled,
            Stmt::store(
                "out",
                Expr::add(x(), y.clone()),
                Expr::add(Expr::mul(x(), Expr::i32(2)), y.clone()),
                one(),
            ),
        );
        let s = Stmt::for_loop(
            "x",
            Expr::var_i32("m"),
            Expr::i32(2),
            ForType::Unrolled,
            inner,
        );
        let u = unroll_loops(&s).unwrap();
        let text = u.to_string();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(!text.contains("unrolled"));
        assert!(
            text.contains("out[(((m + 1) * 2) + 1)] = ((m + 1) + 1)"),
            "{text}"
        );
        // Semantics.
        let mut rng = Rng::new(7);
        let mut mem = HashMap::new();
        mem.insert("out".to_string(), vec![0i64; 16]);
        let mut env = HashMap::new();
        env.insert("m".to_string(), 3);
        let a = run(&s, &mem, &env).unwrap();
        let b = run(&u, &mem, &env).unwrap();
        assert_eq!(a, b);
        let _ = random_memory(&mut rng, 1, 0, 1);
    }

    #[test]
    fn zero_extent_is_no_op() {
        let s = Stmt::for_loop(
            "x",
            Expr::i32(0),
            Expr::i32(0),
            ForType::Unrolled,
            Stmt::store("o", x(), x(), one()),
        );
        assert!(unroll_loops(&s).unwrap().is_no_op());
    }

    #[test]
    fn non_constant_extent_is_error() {
        let s = Stmt::for_loop(
            "x",
            Expr::i32(0),
            Expr::var_i32("n"),
            ForType::Unrolled,
            Stmt::store("o", x(), x(), one()),
        );
        let err = unroll_loops(&s).unwrap_err();
        assert_eq!(err.kind, ErrorKind::User);
        assert_eq!(
            err.message,
            "Can only unroll for loops over a constant extent. Loop over x has extent n."
        );
    }

    #[test]
    fn other_loops_untouched() {
        let s = Stmt::for_loop(
            "x",
            Expr::i32(0),
            Expr::var_i32("n"),
            ForType::Serial,
            Stmt::store("o", x(), x(), one()),
        );
        assert!(unroll_loops(&s).unwrap().same_as(&s));
    }
}
