//! Running deep recursion on a thread with a large stack. Lowering and
//! code generation recurse once per level of expression nesting, and
//! lowering makes expressions deeper than the user wrote (inlining a Func
//! pastes its value into every call), so the caller's stack (8 MiB for
//! Python's main thread, whatever `threading.stack_size` says for its
//! other threads) may not be enough; Halide runs its compiler the same way.
//! Front-end work on one expression (printing it, checking a definition)
//! moves to such a thread only when the expression is deep, so ordinary
//! programs never pay for a thread.

use crate::error::{Error, Result};
use crate::output;

/// Stack reserved for compilation. Only the pages used are ever touched.
const COMPILER_STACK_BYTES: usize = 1 << 30;

/// Nesting that recursion over one expression may take on the caller's
/// stack: a few hundred bytes per level fit in the smallest stack Python
/// lets a thread have (32 KiB) times a margin.
pub const SHALLOW_DEPTH: u32 = 200;

/// `f()`, run on a thread with a `COMPILER_STACK_BYTES` stack; a panic in
/// `f` resumes in the caller. `Err(f)` if no thread could be started.
pub fn try_on_large_stack<R: Send, F: FnOnce() -> R + Send>(f: F) -> std::result::Result<R, Error> {
    let (r, text) = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("ferrohalide-compiler".into())
            .stack_size(COMPILER_STACK_BYTES)
            .spawn_scoped(scope, || output::collect(f))
            .map_err(|e| Error::runtime(format!("could not start a thread to compile on: {e}")))?;
        Ok(handle
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })?;
    // The caller's thread reports the compiler thread's warnings.
    text.into_iter().for_each(output::emit);
    Ok(r)
}

/// How many threads one compilation may use: `FERROHALIDE_COMPILE_THREADS`,
/// else the cores this process may run on (at most 8).
pub fn compile_threads() -> usize {
    std::env::var("FERROHALIDE_COMPILE_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
        .max(1)
}

/// `f(item)` for each of `items`, on up to `threads` threads with large
/// stacks (this one and `threads - 1` more, each taking the next item
/// left), in `items`' order. `setup` wraps each extra thread's work (to
/// carry thread-local context over). A panic resumes in the caller.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    setup: &(dyn Fn(&mut dyn FnMut()) + Sync),
    f: &(dyn Fn(&T) -> R + Sync),
) -> Result<Vec<R>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let r = f(item);
        results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
    };
    std::thread::scope(|scope| -> Result<()> {
        let mut handles = vec![];
        for _ in 1..threads.min(items.len()) {
            let h = std::thread::Builder::new()
                .name("ferrohalide-compiler".into())
                .stack_size(COMPILER_STACK_BYTES)
                .spawn_scoped(scope, || setup(&mut || work()))
                .map_err(|e| Error::runtime(format!("could not start a thread to compile on: {e}")))?;
            handles.push(h);
        }
        work();
        for h in handles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        Ok(())
    })?;
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(results.into_iter().map(|r| r.expect("every item was mapped")).collect())
}

/// `f()` on a thread with a large stack (see `try_on_large_stack`).
pub fn with_large_stack<R: Send>(f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    try_on_large_stack(f)?
}

/// `f()` for work recursing `depth` levels deep: on the caller's stack when
/// that is shallow, else on a large one.
pub fn for_depth<R: Send>(depth: u32, f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    if depth <= SHALLOW_DEPTH {
        f()
    } else {
        with_large_stack(f)
    }
}
