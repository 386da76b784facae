//! Analyses over the IR: simplification, interval bounds, substitution.

pub mod bounds;
pub mod cse;
pub mod evaluate;
pub mod monotonic;
pub mod simplify;
pub mod substitute;

pub use cse::{cse, cse_stmt};
pub use simplify::{can_prove, simplify, simplify_stmt};
