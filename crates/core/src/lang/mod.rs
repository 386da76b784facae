//! The front end: what users build pipelines with. Mirrors Halide's
//! Func/Var/Expr API; the Python bindings are a thin layer over this.

pub mod function;
pub mod parameter;
