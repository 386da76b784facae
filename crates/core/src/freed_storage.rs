//! Large buffer storage that ferrohalide's buffers freed, kept for the next
//! buffer that fits it.
//!
//! A program that realizes a pipeline in a loop (`out = f.realize(...)`)
//! frees one output while the next is alive. Through glibc those blocks of
//! several megabytes went back to the system (a trimmed heap top, or an
//! unmapped block), so every new output faulted all its pages in again on
//! first touch: a 1000x1000 f32 realize ran 1.8 ms instead of 0.06 ms
//! (~1,000 page faults a run; Halide's buffers happened to stay in glibc's
//! heap). Here blocks of at least [`MIN_KEPT`] bytes are kept instead: at
//! most [`SLOTS`] of them and `FERROHALIDE_KEEP_FREED_MB` (default 128;
//! `0` keeps none), the oldest given back first. A block serves a request
//! that uses at least half of it, the smallest such block first.
//!
//! Compiled code's own allocations have a cache of the same policy in the
//! C runtime (`runtime/c/memory.c`, under the same bound). That one lives
//! in the compiled code, which also runs without this library (ahead-of-time
//! output), so the two are separate.

use std::alloc::Layout;
use std::sync::{Mutex, OnceLock};

/// Smaller blocks stay in the C library's heap, which reuses them well.
pub const MIN_KEPT: usize = 1 << 20;
/// The most blocks held at once.
pub const SLOTS: usize = 16;
const DEFAULT_MB: usize = 128;

struct Block {
    ptr: *mut u8,
    layout: Layout,
    freed_at: u64,
}

// SAFETY: a held block is owned by the cache alone (no one else points
// into it until `take` hands it out).
unsafe impl Send for Block {}

#[derive(Default)]
struct Held {
    blocks: Vec<Block>,
    bytes: usize,
    clock: u64,
}

fn held() -> &'static Mutex<Held> {
    static HELD: OnceLock<Mutex<Held>> = OnceLock::new();
    HELD.get_or_init(Mutex::default)
}

/// The most bytes held: `FERROHALIDE_KEEP_FREED_MB`, read once.
fn max_bytes() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| {
        let mb = std::env::var("FERROHALIDE_KEEP_FREED_MB")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(DEFAULT_MB);
        mb.saturating_mul(1 << 20)
    })
}

/// A held block with `layout`'s alignment that holds `bytes` and would be
/// at least half used: its pointer and layout (the caller owns it, and
/// frees it with that layout or gives it back with [`keep`]).
pub fn take(bytes: usize, align: usize) -> Option<(*mut u8, Layout)> {
    if bytes < MIN_KEPT {
        return None;
    }
    let mut held = held().lock().unwrap_or_else(|p| p.into_inner());
    let at = held
        .blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            let cap = b.layout.size();
            b.layout.align() == align && cap >= bytes && cap / 2 <= bytes
        })
        .min_by_key(|(_, b)| b.layout.size())
        .map(|(i, _)| i)?;
    let block = held.blocks.swap_remove(at);
    held.bytes -= block.layout.size();
    Some((block.ptr, block.layout))
}

/// Give back a block allocated with `layout`: held for a later [`take`] if
/// it is large enough and fits the bound (older blocks are freed to make
/// room), freed otherwise.
///
/// # Safety
/// `ptr` was allocated by the global allocator with `layout` and nothing
/// uses it any more.
pub unsafe fn keep(ptr: *mut u8, layout: Layout) {
    let max = max_bytes();
    if layout.size() < MIN_KEPT || layout.size() > max {
        std::alloc::dealloc(ptr, layout);
        return;
    }
    let mut evicted = Vec::new();
    {
        let mut held = held().lock().unwrap_or_else(|p| p.into_inner());
        while held.blocks.len() >= SLOTS || held.bytes + layout.size() > max {
            let oldest = held
                .blocks
                .iter()
                .enumerate()
                .min_by_key(|(_, b)| b.freed_at)
                .map(|(i, _)| i)
                .expect("over the bound, so something is held");
            let block = held.blocks.swap_remove(oldest);
            held.bytes -= block.layout.size();
            evicted.push(block);
        }
        held.clock += 1;
        let freed_at = held.clock;
        held.bytes += layout.size();
        held.blocks.push(Block {
            ptr,
            layout,
            freed_at,
        });
    }
    // Outside the lock: giving memory back to the system can be slow.
    for b in evicted {
        std::alloc::dealloc(b.ptr, b.layout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Blocks of an alignment no buffer uses, so the tests running beside
    // this one (the cache is process-wide) neither take them nor are served.
    const ALIGN: usize = 4096;

    fn block(bytes: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(bytes, ALIGN).unwrap();
        // SAFETY: non-zero size.
        (unsafe { std::alloc::alloc(layout) }, layout)
    }

    fn held_here() -> Vec<*mut u8> {
        let held = held().lock().unwrap();
        assert!(held.blocks.len() <= SLOTS && held.bytes <= max_bytes());
        held.blocks.iter().filter(|b| b.layout.align() == ALIGN).map(|b| b.ptr).collect()
    }

    #[test]
    fn freed_blocks_come_back_for_requests_they_suit_within_the_bound() {
        let (a, la) = block(8 << 20);
        let (b, lb) = block(4 << 20);
        // SAFETY: fresh blocks, unused after.
        unsafe {
            keep(a, la);
            keep(b, lb);
        }
        // Too small to be kept, or less than half of any block: not served.
        assert!(take(1 << 10, ALIGN).is_none());
        assert!(take(3 << 19, ALIGN).is_none());
        // Another alignment is not served by these blocks.
        assert!(take(4 << 20, ALIGN * 2).is_none());
        // The smallest block that suits.
        let (p, l) = take(3 << 20, ALIGN).expect("the 4 MB block");
        assert_eq!((p, l.size()), (b, 4 << 20));
        // 8 MB is more than twice 3 MB, not more than twice 5 MB.
        assert!(take(3 << 20, ALIGN).is_none());
        let (q, m) = take(5 << 20, ALIGN).expect("the 8 MB block");
        assert_eq!((q, m.size()), (a, 8 << 20));
        // At most SLOTS blocks are held, the oldest freed first.
        // SAFETY: blocks handed out above, unused after.
        unsafe { keep(p, l) };
        let blocks: Vec<_> = (0..SLOTS).map(|_| block(MIN_KEPT)).collect();
        for &(p, l) in &blocks {
            // SAFETY: fresh blocks, unused after.
            unsafe { keep(p, l) };
        }
        let here = held_here();
        assert!(!here.contains(&p), "the oldest block went first");
        assert!(here.contains(&blocks[SLOTS - 1].0), "the newest is held");
        // SAFETY: handed out above, unused after.
        unsafe { keep(q, m) };
        assert!(held_here().len() <= SLOTS);
    }
}
