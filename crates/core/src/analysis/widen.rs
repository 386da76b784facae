//! Int32 arithmetic redone in Int64, so that a check can see the value a
//! 32-bit computation would have had without wrapping.
//!
//! Halide computes coordinates in Int32 and treats overflow as the user's
//! fault; the access checks computed that way wrap too (a Param offset near
//! 2^31 makes the largest coordinate negative, the check passes and the
//! load reads far outside the buffer). The checks compare these widened
//! bounds instead: if the exact range lies inside the buffer, no
//! coordinate in it overflowed.
//!
//! Assumes: a scalar expression. Guarantees: every scalar Int(32) `+ - *
//! / % min max select let likely` and comparison of Int(32) operands is
//! computed in Int(64); anything else of type Int(32) (loads, calls, casts from
//! other types) is evaluated as before and then widened. Expressions of
//! other types keep their meaning.

use std::collections::HashSet;

use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Type};

/// `e` (of type Int(32)) as its exact Int(64) value.
pub fn exact_int32(e: &Expr) -> Expr {
    ExactInt32::default().exact(e)
}

/// `exact_int32` for expressions inside `let` statements they may name: each
/// Int(32) binding, declared with `bind` in order, gets a widened copy
/// `<name>.i64` (the binding `bind` returns, for the caller to emit around
/// the checks), and `exact` reads the copies.
#[derive(Default)]
pub struct ExactInt32 {
    w: Widen,
}

impl ExactInt32 {
    /// The enclosing `let name = value`: its widened binding if it is Int(32).
    pub fn bind(&mut self, name: &str, value: &Expr) -> Option<(String, Expr)> {
        if !is_i32(value) {
            // The name now means a value of another type.
            self.w.wide_lets.remove(name);
            return None;
        }
        let wide = self.w.wide(value);
        self.w.wide_lets.insert(name.to_string());
        Some((wide_name(name), wide))
    }

    /// `e` (of type Int(32)) as its exact Int(64) value.
    pub fn exact(&mut self, e: &Expr) -> Expr {
        self.w.wide(e)
    }
}

#[derive(Default)]
struct Widen {
    /// Let-bound names whose widened copy `<name>.i64` is in scope.
    wide_lets: HashSet<String>,
}

fn is_i32(e: &Expr) -> bool {
    e.ty() == Type::i32()
}

fn wide_name(name: &str) -> String {
    format!("{name}.i64")
}

impl Widen {
    /// The Int(64) value of Int(32) expression `e`.
    fn wide(&mut self, e: &Expr) -> Expr {
        if !is_i32(e) {
            return self.keep(e);
        }
        match e.node() {
            ExprNode::IntImm(v) => Expr::i64(*v),
            ExprNode::Variable { name, .. } if self.wide_lets.contains(name) => {
                Expr::var(Type::i64(), wide_name(name))
            }
            ExprNode::Binary { op, a, b } if !op.is_comparison() && !op.is_logical() => {
                Expr::binary(*op, self.wide(a), self.wide(b))
            }
            ExprNode::Select { cond, t, f } => Expr::select(self.keep(cond), self.wide(t), self.wide(f)),
            ExprNode::Let { name, value, body } => self.with_let(name, value, body, |w, b| w.wide(b)),
            // Branch hints mean their argument (and only guide loop
            // partitioning, which a check is not part of).
            ExprNode::Call { kind: CallKind::Intrinsic(Intrinsic::Likely | Intrinsic::LikelyIfInnermost), args, .. } => {
                self.wide(&args[0])
            }
            _ => Expr::cast(Type::i64(), self.keep(e)),
        }
    }

    /// `e` with the same type and meaning, its Int(32) comparisons exact.
    fn keep(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Binary { op, a, b } if op.is_comparison() && is_i32(a) => {
                Expr::binary(*op, self.wide(a), self.wide(b))
            }
            ExprNode::Binary { op, a, b } if op.is_logical() => Expr::binary(*op, self.keep(a), self.keep(b)),
            ExprNode::Not(a) => Expr::not(self.keep(a)),
            ExprNode::Let { name, value, body } => self.with_let(name, value, body, |w, b| w.keep(b)),
            _ => e.clone(),
        }
    }

    /// `let name = value in body`, an Int(32) value also bound widened.
    fn with_let(&mut self, name: &str, value: &Expr, body: &Expr, inner: impl FnOnce(&mut Self, &Expr) -> Expr) -> Expr {
        if !is_i32(value) {
            let value = self.keep(value);
            // The name now means the narrow value again.
            let shadowed = self.wide_lets.remove(name);
            let body = inner(self, body);
            if shadowed {
                self.wide_lets.insert(name.to_string());
            }
            return Expr::let_(name, value, body);
        }
        // Both bindings: narrow uses (inside loads, calls) keep theirs.
        let wide = self.wide(value);
        let added = self.wide_lets.insert(name.to_string());
        let body = inner(self, body);
        if added {
            self.wide_lets.remove(name);
        }
        Expr::let_(name, value.clone(), Expr::let_(wide_name(name), wide, body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::evaluate::{eval_scalar, Value};
    use std::collections::HashMap;

    fn eval(e: &Expr, p: i64) -> i128 {
        let vars: HashMap<String, Value> = [("p".to_string(), Value::Int(p as i128))].into();
        eval_scalar(e, &vars).unwrap().as_int().unwrap()
    }

    #[test]
    fn offsets_near_the_int32_limit_are_exact() {
        let p = Expr::var_i32("p");
        let e = Expr::add(p.clone(), Expr::i32(9));
        let big = (1i64 << 31) - 5;
        assert!(eval(&e, big) < 0, "the 32-bit sum wraps");
        assert_eq!(eval(&exact_int32(&e), big), big as i128 + 9);
    }

    #[test]
    fn lets_selects_and_comparisons() {
        let p = Expr::var_i32("p");
        let t = Expr::var_i32("t");
        let e = Expr::let_(
            "t",
            Expr::mul(p.clone(), Expr::i32(4)),
            Expr::select(Expr::lt(t.clone(), Expr::i32(0)), Expr::i32(-1), Expr::max(t, Expr::i32(3))),
        );
        let w = exact_int32(&e);
        assert_eq!(w.ty(), Type::i64());
        let big = (1i64 << 29) + 1;
        assert_eq!(eval(&e, big), -1, "4 * 2^30 wraps to a negative");
        assert_eq!(eval(&w, big), 4 * big as i128);
        assert_eq!(eval(&w, 7), 28);
    }

    #[test]
    fn lets_bound_outside_and_branch_hints() {
        // `let t = p * 4` is a statement around the check: the check reads
        // its exact copy, also through a `likely`.
        let p = Expr::var_i32("p");
        let mut exact = ExactInt32::default();
        let (name, wide) = exact.bind("t", &Expr::mul(p.clone(), Expr::i32(4))).unwrap();
        assert_eq!(name, "t.i64");
        let check = exact.exact(&Expr::likely(Expr::max(Expr::var_i32("t"), Expr::i32(3))));
        let w = Expr::let_(name, wide, check);
        let big = (1i64 << 29) + 1;
        assert_eq!(eval(&w, big), 4 * big as i128);
        assert_eq!(eval(&w, 0), 3);
    }
}
