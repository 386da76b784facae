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

/// Byte offsets of the fields codegen reads, for a target whose pointers
/// are `ptr_bytes` wide (8 or 4): `device` (uint64) and `device_interface`
/// come first, then `host`, `flags` (uint64, 8-aligned), `type`,
/// `dimensions`, `dim`. Checked against this machine's struct by a test
/// below, and against 32-bit C compilers by the cross tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferOffsets {
    pub host: u64,
    pub type_: u64,
    pub dimensions: u64,
    pub dim: u64,
}

impl BufferOffsets {
    pub fn for_pointer_bytes(ptr_bytes: u64) -> BufferOffsets {
        let host = 8 + ptr_bytes;
        let flags = (host + ptr_bytes).div_ceil(8) * 8;
        BufferOffsets { host, type_: flags + 8, dimensions: flags + 12, dim: flags + 16 }
    }
}

/// The size of a `halide_dimension_t` (four int32s) on every target.
pub const DIM_SIZE: u64 = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn layout_matches_halide() {
        assert_eq!(std::mem::size_of::<halide_buffer_t>(), 56);
        let offsets = BufferOffsets::for_pointer_bytes(std::mem::size_of::<usize>() as u64);
        assert_eq!(offset_of!(halide_buffer_t, host) as u64, offsets.host);
        assert_eq!(offset_of!(halide_buffer_t, type_) as u64, offsets.type_);
        assert_eq!(offset_of!(halide_buffer_t, dimensions) as u64, offsets.dimensions);
        assert_eq!(offset_of!(halide_buffer_t, dim) as u64, offsets.dim);
        assert_eq!(std::mem::size_of::<halide_dimension_t>() as u64, DIM_SIZE);
        // A 32-bit target's layout (device 0, device_interface 8, host 12,
        // flags 16, type 24, dimensions 28, dim 32, padding 36).
        let o32 = BufferOffsets::for_pointer_bytes(4);
        assert_eq!((o32.host, o32.type_, o32.dimensions, o32.dim), (12, 24, 28, 32));
    }
}
