//! The ferrohalide runtime: what compiled pipelines call into, shared by
//! the JIT and AOT output. The runtime itself is C (`c/`, declared by
//! `include/HalideRuntime.h`), compiled to LLVM bitcode per target
//! (`bitcode`); this crate also holds the Rust mirrors of Halide's C ABI
//! structs and the half-float conversions the compiler uses.

#![allow(non_camel_case_types)]

pub mod bitcode;
pub mod buffer_t;
pub mod half;
pub mod metadata;

pub use buffer_t::{halide_buffer_t, halide_dimension_t, halide_type_t};
