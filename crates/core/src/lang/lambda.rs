//! `lambda_func(v1, ..., vn, e)`: an anonymous Func `lambda_<n>(v1, ...,
//! vn) = e`, named from a process-wide counter (with `$m` if that name is
//! taken), as Halide's `lambda` is.

use crate::error::Result;
use crate::ir::Expr;
use crate::lang::func::Func;
use crate::lang::function::Function;
use crate::lang::var::{generated_func_name, Var};

fn lambda_name() -> String {
    generated_func_name("lambda_")
}

/// `lambda_func(vars..., e)`: the Func over `vars` (in that order) whose
/// value is `e`; a Var of `e` not listed is Halide's "Undefined variable".
pub fn lambda_func(vars: &[Var], e: Expr) -> Result<Func> {
    let f = Func::from_function(Function::new(lambda_name()));
    f.define(vars.iter().map(Var::expr).collect(), vec![e])?;
    Ok(f)
}

/// A lambda over the implicit vars `_0 .. _{n-1}`, which user definitions
/// cannot name (Halide wraps Buffers and ImageParams this way).
pub fn lambda_over_implicit_vars(n: usize, e: Expr) -> Result<Function> {
    let f = Function::new(lambda_name());
    let args = (0..n)
        .map(|i| Var::implicit(i).name().to_string())
        .collect();
    f.set_pure_definition(args, vec![e])?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_free_vars() {
        let x = Var::new("x");
        let f = lambda_func(&[x.clone()], Expr::add(x.expr(), Expr::i32(1))).unwrap();
        assert!(f.name().starts_with("lambda_"));
        let err = lambda_func(&[x], Expr::var_i32("y")).unwrap_err();
        assert!(err
            .message
            .starts_with("Undefined variable \"y\" in definition of Func \"lambda_"));
    }
}
