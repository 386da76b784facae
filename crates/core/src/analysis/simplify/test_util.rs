//! Shorthands shared by the rule families' unit tests.

use crate::analysis::simplify::simplify;
use crate::ir::Expr;

pub fn x() -> Expr {
    Expr::var_i32("x")
}
pub fn y() -> Expr {
    Expr::var_i32("y")
}
pub fn i(v: i64) -> Expr {
    Expr::i32(v)
}
/// The simplified form of `e`, printed.
pub fn s(e: Expr) -> String {
    simplify(&e).to_string()
}
