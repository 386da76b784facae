//! The ferrohalide runtime: what compiled pipelines call into, shared by
//! the JIT and AOT output. The runtime itself is C (`c/`, declared by
//! `include/HalideRuntime.h`), compiled to LLVM bitcode per target
//! (`bitcode`); this crate also holds the Rust mirrors of Halide's C ABI
//! structs and the half-float conversions the compiler uses.

#![allow(non_camel_case_types)]

pub mod bitcode;
pub mod buffer_t;
pub mod error;
pub mod half;
pub mod math;
pub mod memory;
pub mod metadata;
pub mod mutex;
pub mod print;
pub mod thread_pool;

pub use buffer_t::{halide_buffer_t, halide_dimension_t, halide_type_t};
pub use error::{ferrohalide_error, take_last_error, RunContext};
pub use memory::{ferrohalide_free, ferrohalide_malloc};
pub use print::ferrohalide_print;
pub use thread_pool::{ferrohalide_do_par_for, ferrohalide_thread_index, num_threads};
