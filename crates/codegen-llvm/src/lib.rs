//! LLVM backend: compiles a `LoweredPipeline` to machine code and runs it.
//!
//! - [`compile_jit`] turns a lowered pipeline into a [`JitModule`] (LLVM IR,
//!   optimized at O3 for the host CPU, JIT-compiled with MCJIT).
//! - [`JitModule::run`] calls it with [`ArgValue`]s.
//! - [`compile_to_assembly`] / [`compile_to_llvm_ir`] give the text forms.

pub mod callable;
pub mod codegen;
pub mod jit;
pub mod pipeline;
pub mod runtime_symbols;
pub mod target;

pub use jit::{
    compile_jit, compile_to_assembly, compile_to_llvm_ir, ArgValue, JitModule, ScalarValue,
};
pub use target::JitTarget;
