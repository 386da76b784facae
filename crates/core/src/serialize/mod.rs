//! Pipelines saved to bytes and read back (`hl.serialize_pipeline`,
//! `hl.deserialize_pipeline`, `hl.deserialize_parameters`).
//!
//! The format is ferrohalide's own, not Halide's `.hlpipe` (a FlatBuffers
//! schema of Halide's C++ objects): a compact binary file that stores this
//! implementation's front-end state exactly (definitions, schedules,
//! specializations, wrappers, RDoms, bound Buffers with their data, output
//! buffer constraints, requirements), so a pipeline read back compiles to
//! the same code. Reading Halide's files would mean mapping its object model
//! onto ours both ways; the header says which format a file is, and
//! Halide's files get an error that says so.
//!
//! As in Halide, Parameters that the pipeline's Exprs refer to (Params,
//! ImageParams) are *external*: only their name, type and shape are
//! stored, and the reader takes the caller's Parameter of that name
//! (`user_params`) or makes a new one with defaults. Other Parameters (an
//! output's buffer constraints and estimates) are stored whole.
//!
//! Layout (every integer LEB128, see `wire`):
//!   magic, then the body: format version; buffers; parameter headers;
//!   RDom headers (variable names and bound indices); Funcs (name, group);
//!   the Expr table (children first); parameter bodies; RDom predicates;
//!   Func bodies; outputs; requirements; then a checksum of the body.

mod codec;
mod read;
pub mod wire;
mod write;

pub use read::{read_parameters, read_pipeline};
pub use write::{write_key, write_pipeline, PipelineKey};

/// The first bytes of every pipeline file.
const MAGIC: &[u8] = b"ferrohalide-pipeline\0";
/// Bumped whenever the layout changes; a reader refuses other versions.
const FORMAT_VERSION: u64 = 3;

/// 64-bit FNV-1a of `data`: catches a file damaged or cut short.
fn checksum(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
