//! Halide's C ABI description of a compiled pipeline (what an AOT
//! object's `NAME_metadata()` returns), laid out as in HalideRuntime.h;
//! `tests/c_layout.rs` checks the layout against the C header.

use std::ffi::{c_char, c_void};

use crate::buffer_t::halide_type_t;

/// A scalar of any argument type; the argument says which field is valid.
#[repr(C)]
#[derive(Clone, Copy)]
pub union halide_scalar_value_t {
    pub b: bool,
    pub i8: i8,
    pub i16: i16,
    pub i32: i32,
    pub i64: i64,
    pub u8: u8,
    pub u16: u16,
    pub u32: u32,
    pub u64: u64,
    pub f32: f32,
    pub f64: f64,
    pub handle: *mut c_void,
}

/// `halide_argument_kind_t`.
pub mod argument_kind {
    pub const INPUT_SCALAR: i32 = 0;
    pub const INPUT_BUFFER: i32 = 1;
    pub const OUTPUT_BUFFER: i32 = 2;
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct halide_filter_argument_t {
    pub name: *const c_char,
    /// One of `argument_kind`.
    pub kind: i32,
    pub dimensions: i32,
    pub type_: halide_type_t,
    pub scalar_def: *const halide_scalar_value_t,
    pub scalar_min: *const halide_scalar_value_t,
    pub scalar_max: *const halide_scalar_value_t,
    pub scalar_estimate: *const halide_scalar_value_t,
    /// Null for scalars; else `2 * dimensions` pointers (min, extent).
    pub buffer_estimates: *const *const i64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct halide_filter_metadata_t {
    /// Always `METADATA_VERSION`.
    pub version: i32,
    pub num_arguments: i32,
    pub arguments: *const halide_filter_argument_t,
    pub target: *const c_char,
    pub name: *const c_char,
}

/// The metadata version Halide 21 writes.
pub const METADATA_VERSION: i32 = 1;
