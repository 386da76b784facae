//! The thread pool behind parallel loops (`ferrohalide_do_par_for`), after
//! the shape of Halide's `halide_do_par_for` (see Halide's
//! runtime/thread_pool_common.h for the original design).
//!
//! - Worker threads start lazily on the first parallel loop and live for the
//!   rest of the process. Their count is `HL_NUM_THREADS` (total threads,
//!   including the caller) or the number of CPUs.
//! - A parallel loop is a `Job` pushed on a shared queue. Workers and the
//!   calling thread claim iterations from the job with an atomic counter, so
//!   the caller always participates and can finish its own job alone.
//! - Nested parallel loops push nested jobs the same way. A thread only ever
//!   waits for iterations that another thread is already running, and every
//!   job owner can run all of its unclaimed iterations itself, so there is no
//!   deadlock however deep the nesting.
//! - The first non-zero return code of a task wins; once a task has failed,
//!   the remaining unclaimed iterations are skipped.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A task: `f(user_context, index, closure)`.
pub type TaskFn = extern "C" fn(*mut c_void, i32, *mut u8) -> i32;

struct Job {
    f: TaskFn,
    user_context: *mut c_void,
    closure: *mut u8,
    min: i32,
    extent: i64,
    next: AtomicI64,
    remaining: AtomicI64,
    result: AtomicI32,
    done: Mutex<bool>,
    done_cv: Condvar,
}

// SAFETY: the raw pointers are only used while the owner of the job is
// blocked inside `do_par_for`, which outlives every task call.
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

impl Job {
    /// Claim and run iterations until none are left. Returns whether any
    /// iteration was run.
    fn work(&self) -> bool {
        let mut ran = false;
        loop {
            let k = self.next.fetch_add(1, Ordering::AcqRel);
            if k >= self.extent {
                return ran;
            }
            ran = true;
            if self.result.load(Ordering::Acquire) == 0 {
                let r = (self.f)(self.user_context, self.min.wrapping_add(k as i32), self.closure);
                if r != 0 {
                    let _ = self.result.compare_exchange(0, r, Ordering::AcqRel, Ordering::Acquire);
                }
            }
            if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                let mut d = self.done.lock().unwrap_or_else(|p| p.into_inner());
                *d = true;
                self.done_cv.notify_all();
            }
        }
    }
    fn exhausted(&self) -> bool {
        self.next.load(Ordering::Acquire) >= self.extent
    }
}

struct Pool {
    queue: Mutex<VecDeque<Arc<Job>>>,
    work_cv: Condvar,
    workers: usize,
}

static POOL: OnceLock<Pool> = OnceLock::new();
static THREAD_COUNTER: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_INDEX: usize = THREAD_COUNTER.fetch_add(1, Ordering::Relaxed);
}

/// A small integer naming the calling thread (0 for the first thread that
/// asks, then 1, 2, ...). Used by tests to see which threads ran tasks.
#[no_mangle]
pub extern "C" fn ferrohalide_thread_index() -> i32 {
    THREAD_INDEX.with(|i| *i as i32)
}

/// Total threads a parallel loop may use (workers + the caller).
pub fn num_threads() -> usize {
    pool().workers + 1
}

fn desired_threads() -> usize {
    if let Ok(s) = std::env::var("HL_NUM_THREADS") {
        if let Ok(n) = s.trim().parse::<usize>() {
            if n >= 1 {
                return n.min(256);
            }
        }
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let workers = desired_threads().saturating_sub(1);
        Pool { queue: Mutex::new(VecDeque::new()), work_cv: Condvar::new(), workers }
    })
}

static STARTED: OnceLock<()> = OnceLock::new();

fn ensure_workers(p: &'static Pool) {
    STARTED.get_or_init(|| {
        for i in 0..p.workers {
            let _ = std::thread::Builder::new()
                .name(format!("ferrohalide-worker-{i}"))
                .spawn(move || worker_loop(p));
        }
    });
}

fn worker_loop(p: &'static Pool) {
    loop {
        let job = {
            let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                // Drop jobs with nothing left to claim.
                while q.front().is_some_and(|j| j.exhausted()) {
                    q.pop_front();
                }
                if let Some(j) = q.front() {
                    break j.clone();
                }
                q = p.work_cv.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        job.work();
    }
}

/// Run `f(user_context, i, closure)` for `i` in `[min, min + extent)` on the
/// thread pool. Returns 0, or the first non-zero code a task returned.
#[no_mangle]
pub extern "C" fn ferrohalide_do_par_for(
    user_context: *mut c_void,
    f: TaskFn,
    min: i32,
    extent: i32,
    closure: *mut u8,
) -> i32 {
    if extent <= 0 {
        return 0;
    }
    let p = pool();
    if extent == 1 || p.workers == 0 {
        for k in 0..extent {
            let r = f(user_context, min.wrapping_add(k), closure);
            if r != 0 {
                return r;
            }
        }
        return 0;
    }
    ensure_workers(p);
    let job = Arc::new(Job {
        f,
        user_context,
        closure,
        min,
        extent: extent as i64,
        next: AtomicI64::new(0),
        remaining: AtomicI64::new(extent as i64),
        result: AtomicI32::new(0),
        done: Mutex::new(false),
        done_cv: Condvar::new(),
    });
    {
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        // Nested jobs go to the front so that helpers finish inner loops
        // (which their owners are blocked on) before starting new outer work.
        q.push_front(job.clone());
    }
    if extent as usize > 2 {
        p.work_cv.notify_all();
    } else {
        p.work_cv.notify_one();
    }
    job.work();
    // Remove our job from the queue if no worker has dropped it yet.
    {
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.retain(|j| !Arc::ptr_eq(j, &job));
    }
    let mut d = job.done.lock().unwrap_or_else(|e| e.into_inner());
    while !*d && job.remaining.load(Ordering::Acquire) > 0 {
        d = job.done_cv.wait(d).unwrap_or_else(|e| e.into_inner());
    }
    drop(d);
    job.result.load(Ordering::Acquire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    static SUM: AtomicU64 = AtomicU64::new(0);

    extern "C" fn add_task(_uc: *mut c_void, i: i32, _c: *mut u8) -> i32 {
        SUM.fetch_add(i as u64, Ordering::Relaxed);
        0
    }

    extern "C" fn inner(_uc: *mut c_void, i: i32, c: *mut u8) -> i32 {
        let counter = unsafe { &*(c as *const AtomicU64) };
        counter.fetch_add(i as u64 + 1, Ordering::Relaxed);
        0
    }

    extern "C" fn outer(uc: *mut c_void, _i: i32, c: *mut u8) -> i32 {
        ferrohalide_do_par_for(uc, inner, 0, 10, c)
    }

    extern "C" fn failing(_uc: *mut c_void, i: i32, _c: *mut u8) -> i32 {
        if i == 37 {
            -7
        } else {
            0
        }
    }

    #[test]
    fn runs_every_index() {
        ferrohalide_do_par_for(std::ptr::null_mut(), add_task, 5, 1000, std::ptr::null_mut());
        assert_eq!(SUM.load(Ordering::Relaxed), (5..1005u64).sum());
    }

    #[test]
    fn nested_does_not_deadlock() {
        let counter = AtomicU64::new(0);
        for _ in 0..20 {
            let r = ferrohalide_do_par_for(
                std::ptr::null_mut(),
                outer,
                0,
                16,
                &counter as *const AtomicU64 as *mut u8,
            );
            assert_eq!(r, 0);
        }
        assert_eq!(counter.load(Ordering::Relaxed), 20 * 16 * 55);
    }

    #[test]
    fn first_error_wins() {
        let r = ferrohalide_do_par_for(std::ptr::null_mut(), failing, 0, 100, std::ptr::null_mut());
        assert_eq!(r, -7);
    }
}
