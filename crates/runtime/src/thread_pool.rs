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
//! - Idle workers, and a caller waiting for its last iterations, spin for a
//!   few tens of microseconds before sleeping: waking a sleeping thread takes
//!   about as long as a whole small pipeline, and pipelines often run back to
//!   back.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A task: `f(user_context, index, closure)`.
pub type TaskFn = extern "C" fn(*mut c_void, i32, *mut u8) -> i32;

/// Keeps a hot atomic on its own cache line, so claiming work does not
/// invalidate the line the completion counter lives on.
#[repr(align(64))]
struct CacheLine<T>(T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

struct Job {
    f: TaskFn,
    user_context: *mut c_void,
    closure: *mut u8,
    min: i32,
    extent: i64,
    next: CacheLine<AtomicI64>,
    remaining: CacheLine<AtomicI64>,
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
    ///
    /// Iterations are claimed in shrinking chunks (a share of what is left
    /// per thread), so tiny tasks don't pay for contended atomics each time.
    fn work(&self) -> bool {
        let mut ran = false;
        let threads = num_threads() as i64;
        loop {
            let mut k = self.next.load(Ordering::Acquire);
            let chunk = loop {
                if k >= self.extent {
                    return ran;
                }
                let chunk = ((self.extent - k) / (4 * threads)).clamp(1, 64);
                match self.next.compare_exchange_weak(
                    k,
                    k + chunk,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break chunk,
                    Err(now) => k = now,
                }
            };
            ran = true;
            for i in k..k + chunk {
                if self.result.load(Ordering::Relaxed) != 0 {
                    break;
                }
                let r = (self.f)(
                    self.user_context,
                    self.min.wrapping_add(i as i32),
                    self.closure,
                );
                if r != 0 {
                    let _ = self
                        .result
                        .compare_exchange(0, r, Ordering::AcqRel, Ordering::Acquire);
                }
            }
            if self.remaining.fetch_sub(chunk, Ordering::AcqRel) == chunk {
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
    /// Bumped on every push, so spinning workers notice new work without the lock.
    pushed: AtomicU64,
}

/// How long a thread spins before it sleeps.
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// Spin until `ready()` or the spin time is up; returns `ready()`.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() > SPIN {
            return ready();
        }
    }
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
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        let workers = desired_threads().saturating_sub(1);
        Pool {
            queue: Mutex::new(VecDeque::new()),
            work_cv: Condvar::new(),
            workers,
            pushed: AtomicU64::new(0),
        }
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
                // Idle: spin briefly for new work, then sleep.
                let seen = p.pushed.load(Ordering::Acquire);
                drop(q);
                let woke = spin_until(|| p.pushed.load(Ordering::Acquire) != seen);
                q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
                if !woke && q.is_empty() {
                    q = p.work_cv.wait(q).unwrap_or_else(|e| e.into_inner());
                }
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
        next: CacheLine(AtomicI64::new(0)),
        remaining: CacheLine(AtomicI64::new(extent as i64)),
        result: AtomicI32::new(0),
        done: Mutex::new(false),
        done_cv: Condvar::new(),
    });
    {
        let mut q = p.queue.lock().unwrap_or_else(|e| e.into_inner());
        // Nested jobs go to the front so that helpers finish inner loops
        // (which their owners are blocked on) before starting new outer work.
        q.push_front(job.clone());
        p.pushed.fetch_add(1, Ordering::Release);
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
    spin_until(|| job.remaining.load(Ordering::Acquire) <= 0);
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
        ferrohalide_do_par_for(
            std::ptr::null_mut(),
            add_task,
            5,
            1000,
            std::ptr::null_mut(),
        );
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
