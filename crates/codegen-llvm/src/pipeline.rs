//! Realizing Funcs from Rust: lower, JIT-compile (cached), run.
//! (Owned by the lowering work; signatures are stable, bodies land later.)

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::{Error, Result};

/// Realize `outputs` over a region of the given extents (mins 0), returning
/// one Buffer per output value (tuple elements flattened in order).
pub fn realize(outputs: &[Function], sizes: &[i32]) -> Result<Vec<Buffer>> {
    let _ = (outputs, sizes);
    Err(Error::unimplemented("realize"))
}

/// Realize `outputs` into caller-provided buffers (one per output value).
pub fn realize_into(outputs: &[Function], buffers: &[Buffer]) -> Result<()> {
    let _ = (outputs, buffers);
    Err(Error::unimplemented("realize into buffers"))
}
