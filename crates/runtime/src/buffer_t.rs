//! Halide's C ABI buffer description (`halide_buffer_t` from HalideRuntime.h),
//! laid out bit-for-bit so compiled pipelines and AOT callers agree.

use std::ffi::c_void;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct halide_type_t {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct halide_dimension_t {
    pub min: i32,
    pub extent: i32,
    pub stride: i32,
    pub flags: u32,
}

#[repr(C)]
#[derive(Debug)]
pub struct halide_buffer_t {
    pub device: u64,
    pub device_interface: *const c_void,
    pub host: *mut u8,
    pub flags: u64,
    pub type_: halide_type_t,
    pub dimensions: i32,
    pub dim: *mut halide_dimension_t,
    pub padding: *mut c_void,
}

impl Default for halide_buffer_t {
    fn default() -> Self {
        halide_buffer_t {
            device: 0,
            device_interface: std::ptr::null(),
            host: std::ptr::null_mut(),
            flags: 0,
            type_: halide_type_t::default(),
            dimensions: 0,
            dim: std::ptr::null_mut(),
            padding: std::ptr::null_mut(),
        }
    }
}

/// Byte offsets of the fields codegen reads, checked by a test below.
pub mod offsets {
    pub const HOST: u64 = 16;
    pub const TYPE: u64 = 32;
    pub const DIMENSIONS: u64 = 36;
    pub const DIM: u64 = 40;
    pub const DIM_SIZE: u64 = 16;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_halide() {
        assert_eq!(std::mem::size_of::<halide_buffer_t>(), 56);
        assert_eq!(offset_of!(halide_buffer_t, host) as u64, offsets::HOST);
        assert_eq!(offset_of!(halide_buffer_t, type_) as u64, offsets::TYPE);
        assert_eq!(
            offset_of!(halide_buffer_t, dimensions) as u64,
            offsets::DIMENSIONS
        );
        assert_eq!(offset_of!(halide_buffer_t, dim) as u64, offsets::DIM);
        assert_eq!(
            std::mem::size_of::<halide_dimension_t>() as u64,
            offsets::DIM_SIZE
        );
    }
}
