//! The driver: what a user's request runs, above the code generator.
//!
//! - [`pipeline`]: realizing Funcs (lower, JIT-compile with a cache on the
//!   first output Func, bind the arguments, run) — Halide's `realize`.
//! - [`callable`]: `compile_to_callable`, a compiled pipeline called with
//!   explicit argument values.
//! - [`infer_input_bounds`]: the regions of unbound ImageParams a pipeline
//!   needs, through its bounds query.
//! - [`aot`]: ahead-of-time compilation of a `Module` to files (objects,
//!   static libraries ([`archive`]), C headers, Python extensions, ...).
//!
//! Lowering lives in `ferrohalide-core`, code generation and the JIT in
//! `ferrohalide-codegen-llvm`; this crate only sequences them.

pub mod aot;
pub mod archive;
pub mod callable;
mod frontend_cache;
pub mod infer_input_bounds;
pub mod multitarget;
pub mod pipeline;
