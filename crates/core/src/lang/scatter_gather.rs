//! `scatter(...)` and `gather(...)`: several values packed into one
//! expression so that one definition stores several points at once
//! (`f[scatter(3, 5)] = f[gather(5, 3)]` swaps two elements). Arithmetic
//! on a packet applies to each element; `lower/split_scatter_gather.rs`
//! splits the definition into one store per element, all values read
//! before the first store.

use crate::error::{Error, Result};
use crate::ir::{Expr, Intrinsic};

/// The packet of `args` (scatter and gather are the same thing; the two
/// names only say which side of a definition it is meant for).
pub fn scatter_gather(args: Vec<Expr>, fname: &str) -> Result<Expr> {
    let Some(first) = args.first() else {
        return Err(Error::user(format!("{fname} requires at least one argument\n")));
    };
    let t = first.ty();
    if let Some(other) = args.iter().find(|a| a.ty() != t) {
        return Err(Error::user(format!(
            "All arguments to {fname} must have the same type: {} has type {}, but {} has type {}\n",
            crate::lang::print::expr_to_string(first),
            crate::lang::print::ir_type_name(t),
            crate::lang::print::expr_to_string(other),
            crate::lang::print::ir_type_name(other.ty())
        )));
    }
    Ok(Expr::intrinsic(t, Intrinsic::ScatterGather, args))
}
