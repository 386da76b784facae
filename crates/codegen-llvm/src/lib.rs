//! LLVM backend: compiles a `LoweredPipeline` to machine code and runs it.
//!
//! - [`compile_jit`] turns a lowered pipeline into a [`JitModule`] (LLVM IR,
//!   optimized for the host CPU (`jit::OPTIMIZATION_PIPELINE`), compiled to an object that the
//!   persistent cache keeps, and loaded with ORC).
//! - [`JitModule::run`] calls it with [`ArgValue`]s.
//! - [`compile_to_assembly`] / [`compile_to_llvm_ir`] give the text forms.
//! - [`aot`] writes a core `Module` as an object, assembly or bitcode, and
//!   the standalone runtime.
//! - [`runtime_module`] is the C runtime as an LLVM module for a target
//!   triple (the JIT's shared runtime, `jit_runtime`, is the host's).

pub mod aot;
pub mod codegen;
mod expand_gathers;
mod hardware_gathers;
pub mod hexagon_shared_object;
pub mod jit;
pub mod jit_cache;
mod jit_builtins;
mod jit_loader;
mod module_split;
pub mod jit_runtime;
pub mod runtime_module;
pub mod runtime_symbols;
pub mod target;
mod target_machines;

pub use jit::{
    compile_jit, compile_jit_keyed, compile_to_assembly, compile_to_llvm_ir, load_jit, ArgValue, JitModule,
    ScalarValue,
};
pub use runtime_module::runtime_module;
pub use target::JitTarget;
