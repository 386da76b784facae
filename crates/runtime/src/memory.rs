//! Heap memory for `Allocate` nodes: 64-byte aligned, freed by the same
//! runtime. The block size is stored in a header in front of the block.

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::c_void;

const ALIGN: usize = 64;

/// Allocate `size` bytes, 64-byte aligned. Returns null on failure.
#[no_mangle]
pub extern "C" fn ferrohalide_malloc(_user_context: *mut c_void, size: u64) -> *mut u8 {
    let Some(total) = (size as usize).checked_add(ALIGN) else {
        return std::ptr::null_mut();
    };
    if size > isize::MAX as u64 / 2 {
        return std::ptr::null_mut();
    }
    let Ok(layout) = Layout::from_size_align(total, ALIGN) else {
        return std::ptr::null_mut();
    };
    // SAFETY: non-zero size.
    let base = unsafe { alloc(layout) };
    if base.is_null() {
        return base;
    }
    // SAFETY: the header fits in the first ALIGN bytes.
    unsafe {
        (base as *mut usize).write(total);
        base.add(ALIGN)
    }
}

/// Free memory from `ferrohalide_malloc`. Null is ignored.
///
/// # Safety
/// `p` is null or came from `ferrohalide_malloc` and was not freed yet.
#[no_mangle]
pub unsafe extern "C" fn ferrohalide_free(_user_context: *mut c_void, p: *mut u8) {
    if p.is_null() {
        return;
    }
    let base = p.sub(ALIGN);
    let total = (base as *const usize).read();
    dealloc(base, Layout::from_size_align_unchecked(total, ALIGN));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_usable() {
        for size in [0u64, 1, 63, 64, 1000, 1 << 20] {
            let p = ferrohalide_malloc(std::ptr::null_mut(), size);
            assert!(!p.is_null());
            assert_eq!(p as usize % 64, 0);
            unsafe {
                std::ptr::write_bytes(p, 0xab, size as usize);
                ferrohalide_free(std::ptr::null_mut(), p);
            }
        }
    }
}
