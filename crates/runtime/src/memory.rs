//! Heap memory for `Allocate` nodes: 64-byte aligned, freed by the same
//! runtime. The block size is stored in a header in front of the block.
//!
//! Each thread keeps its most recently freed block (up to `CACHED_MAX`)
//! for its next allocation: a parallel loop whose tasks each allocate the
//! same scratch buffer (a `store_at` inside the parallel loop) then reuses
//! one warm block per thread instead of going through the system
//! allocator twice per task. The bound keeps what idle threads hold small.

use std::alloc::{alloc, dealloc, Layout};
use std::cell::Cell;
use std::ffi::c_void;

const ALIGN: usize = 64;

/// The largest block a thread keeps for reuse (1 MB).
const CACHED_MAX: usize = 1 << 20;

/// A block start (its header) and its total size.
struct CachedBlock(Cell<(*mut u8, usize)>);

impl Drop for CachedBlock {
    fn drop(&mut self) {
        let (base, total) = self.0.get();
        if !base.is_null() {
            // SAFETY: the block came from `alloc` with this layout.
            unsafe { dealloc(base, Layout::from_size_align_unchecked(total, ALIGN)) };
        }
    }
}

thread_local! {
    static CACHED: CachedBlock = const { CachedBlock(Cell::new((std::ptr::null_mut(), 0))) };
}

/// Take the cached block if it holds `total` bytes without wasting more
/// than a factor of four.
fn take_cached(total: usize) -> Option<*mut u8> {
    CACHED
        .try_with(|c| {
            let (base, size) = c.0.get();
            if !base.is_null() && size >= total && size / 4 <= total {
                c.0.set((std::ptr::null_mut(), 0));
                Some(base)
            } else {
                None
            }
        })
        .ok()
        .flatten()
}

/// Keep a freed block for reuse (replacing a cached one); false if the
/// caller must free it.
fn keep_cached(base: *mut u8, total: usize) -> bool {
    if total > CACHED_MAX {
        return false;
    }
    CACHED
        .try_with(|c| {
            let (old, old_total) = c.0.replace((base, total));
            if !old.is_null() {
                // SAFETY: the block came from `alloc` with this layout.
                unsafe { dealloc(old, Layout::from_size_align_unchecked(old_total, ALIGN)) };
            }
        })
        .is_ok()
}

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
    if let Some(base) = take_cached(total) {
        // SAFETY: the header (the block's real size) is still in place.
        return unsafe { base.add(ALIGN) };
    }
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
    if !keep_cached(base, total) {
        dealloc(base, Layout::from_size_align_unchecked(total, ALIGN));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_blocks_are_reused_only_when_they_fit() {
        let a = ferrohalide_malloc(std::ptr::null_mut(), 20_000);
        unsafe { ferrohalide_free(std::ptr::null_mut(), a) };
        // Same size: the same block again.
        let b = ferrohalide_malloc(std::ptr::null_mut(), 20_000);
        assert_eq!(a, b);
        // While it is in use, a second allocation is a new block.
        let c = ferrohalide_malloc(std::ptr::null_mut(), 10_000);
        assert_ne!(b, c);
        unsafe {
            std::ptr::write_bytes(c, 1, 10_000);
            ferrohalide_free(std::ptr::null_mut(), c);
            ferrohalide_free(std::ptr::null_mut(), b);
        }
        // Too big for the cached block, or much smaller: not reused.
        let d = ferrohalide_malloc(std::ptr::null_mut(), 30_000);
        assert_ne!(d, b);
        unsafe {
            std::ptr::write_bytes(d, 2, 30_000);
            ferrohalide_free(std::ptr::null_mut(), d);
        }
        let e = ferrohalide_malloc(std::ptr::null_mut(), 100);
        assert_ne!(e, d);
        unsafe { ferrohalide_free(std::ptr::null_mut(), e) };
    }

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
