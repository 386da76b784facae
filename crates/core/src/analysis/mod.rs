//! Analyses over the IR: simplification, interval bounds, substitution.

pub mod associativity;
pub mod bounds;
pub mod cse;
pub mod evaluate;
pub mod func_value_bounds;
pub mod lower_intrinsic;
pub mod monotonic;
pub mod parallel_rvar;
pub mod simplify;
pub mod substitute;
pub mod widen;

pub use cse::{cse, cse_control_exprs, cse_if_heavily_shared, cse_stmt};
pub use simplify::{can_prove, simplify, simplify_stmt};
