//! Lock arrays for atomic updates whose stores must happen together (a
//! Tuple-valued update whose elements read each other, run by parallel
//! loops). Compiled code allocates the array itself (zeroed 32-bit words,
//! 0 meaning unlocked) and calls these around the update of one element.
//! Critical sections are a few loads and stores, so a waiting thread spins
//! briefly before yielding its time slice.

use std::sync::atomic::{AtomicU32, Ordering};

/// How many times a waiting thread polls the lock before yielding.
const SPINS_BEFORE_YIELD: u32 = 64;

/// # Safety
/// `locks` points to at least `index + 1` 4-byte-aligned lock words that
/// live as long as any thread uses them.
unsafe fn lock_word<'a>(locks: *mut u32, index: i32) -> &'a AtomicU32 {
    AtomicU32::from_ptr(locks.add(index.max(0) as usize))
}

/// Take lock `index` of the array `locks`, waiting for it if needed.
///
/// # Safety
/// See `lock_word`.
pub unsafe extern "C" fn ferrohalide_mutex_array_lock(locks: *mut u32, index: i32) -> i32 {
    let word = lock_word(locks, index);
    let mut spins = 0;
    loop {
        if word
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return 0;
        }
        while word.load(Ordering::Relaxed) != 0 {
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Release lock `index` of the array `locks`, taken by this thread.
///
/// # Safety
/// See `lock_word`.
pub unsafe extern "C" fn ferrohalide_mutex_array_unlock(locks: *mut u32, index: i32) -> i32 {
    lock_word(locks, index).store(0, Ordering::Release);
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_makes_increments_exclusive() {
        let mut locks = vec![0u32; 4];
        let p = locks.as_mut_ptr() as usize;
        let mut counter = 0u64;
        let c = &mut counter as *mut u64 as usize;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(move || {
                    for _ in 0..10_000 {
                        unsafe {
                            ferrohalide_mutex_array_lock(p as *mut u32, 2);
                            let v = std::ptr::read_volatile(c as *const u64);
                            std::ptr::write_volatile(c as *mut u64, v + 1);
                            ferrohalide_mutex_array_unlock(p as *mut u32, 2);
                        }
                    }
                });
            }
        });
        assert_eq!(counter, 40_000);
        assert_eq!(locks, vec![0; 4]);
    }
}
