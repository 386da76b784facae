//! Lowering: from Funcs and schedules to one loop-nest Stmt, pass by pass
//! (after Halide's Lower.cpp). The result, a `LoweredPipeline`, is what a
//! backend compiles.
//!
//! # The contract with backends
//! The body of a `LoweredPipeline` obeys these rules:
//! - For every buffer argument `b` the backend defines, before the body runs:
//!   the pointer `b` (its host memory, used as the buffer name of Load and
//!   Store), the Handle variable `b.buffer` (the `halide_buffer_t*`), and Int32
//!   variables `b.min.{d}`, `b.extent.{d}`, `b.stride.{d}` for each dimension d.
//!   Every scalar argument `p` is a variable `p` of its type.
//! - Load/Store name either a buffer argument or an enclosing Allocate; the
//!   index is in elements from the host pointer (strides and mins applied).
//! - Allocate's element count is the product of its extents; the backend frees
//!   the allocation when its body ends (Free statements are not emitted).
//! - Loops are Serial or Parallel only; no Provide, Realize or Func calls.
//! - AssertStmt's message is an `Intrinsic::Error` call whose args (string
//!   immediates and scalar values) are concatenated into the error message;
//!   a failed assertion stops the pipeline and reports that message.

use crate::ir::{Stmt, Type};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgumentKind {
    InputScalar,
    InputBuffer,
    OutputBuffer,
}

#[derive(Clone, Debug)]
pub struct LoweredArgument {
    pub name: String,
    pub kind: ArgumentKind,
    pub ty: Type,
    pub dimensions: usize,
}

#[derive(Clone, Debug)]
pub struct LoweredPipeline {
    pub name: String,
    pub args: Vec<LoweredArgument>,
    pub body: Stmt,
}
