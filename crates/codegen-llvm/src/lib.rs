//! LLVM backend: compiles a `LoweredPipeline` to machine code and runs it.

pub mod pipeline;
