//! The ferrohalide runtime: what compiled pipelines call into, shared by
//! JIT and (later) AOT output. Buffer ABI, thread pool, memory, errors.

#![allow(non_camel_case_types)]

pub mod buffer_t;

pub use buffer_t::{halide_buffer_t, halide_dimension_t, halide_type_t};
