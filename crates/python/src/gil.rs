//! Long work runs without the GIL (`detached`), so other Python threads keep
//! running while a pipeline compiles or runs.
//!
//! Memory borrowed from Python objects (a NumPy array's buffer export) must
//! be released with the GIL. The last user of such memory can be dropped
//! on a thread without it (a Func dropped by another thread while this one
//! realizes it); waiting for the GIL there could deadlock against a thread
//! that holds the GIL and waits for a lock this one holds, so the release
//! is queued instead (`release_later`) and done by the next thread that
//! comes back from `detached` or imports a buffer.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::marker::Ungil;

type Release = Box<dyn FnOnce() + Send>;

static PENDING: Mutex<Vec<Release>> = Mutex::new(Vec::new());

thread_local! {
    /// How many `detached` calls this thread is inside.
    static DETACHED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Does this thread hold the GIL? (`PyGILState_Check` is not in the stable
/// ABI.) A thread holds it while it runs this module's code if it has a
/// Python thread state and is not inside `detached`, the only place that
/// releases it: threads that Python never saw (the thread pool, compile
/// threads) have no thread state. A callback that attaches again inside
/// `detached` is answered "no", which only defers work to
/// `release_pending`.
pub fn holds_gil() -> bool {
    DETACHED.with(|d| d.get() == 0) && !unsafe { pyo3::ffi::PyGILState_GetThisThreadState() }.is_null()
}

/// Run `release` now if this thread holds the GIL, else as soon as a thread
/// that holds it calls `release_pending`.
pub fn release_later(release: Release) {
    if holds_gil() {
        release();
    } else {
        PENDING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(release);
    }
}

/// Run the releases queued by threads without the GIL.
pub fn release_pending(_py: Python<'_>) {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
    for r in pending {
        r();
    }
}

/// Marks this thread as inside `detached` until dropped (also when `f`
/// unwinds).
struct DetachedScope;

impl DetachedScope {
    fn enter() -> DetachedScope {
        DETACHED.with(|d| d.set(d.get() + 1));
        DetachedScope
    }
}

impl Drop for DetachedScope {
    fn drop(&mut self) {
        DETACHED.with(|d| d.set(d.get() - 1));
    }
}

/// `f()` with the GIL released; afterwards, the queued releases, and the
/// compiler's warnings and the pipeline's print lines written to Python's
/// `sys.stdout` (where Halide's bindings send them).
pub fn detached<T, F>(py: Python<'_>, f: F) -> T
where
    F: Ungil + Send + FnOnce() -> T,
    T: Ungil + Send,
{
    let (r, text) = py.detach(|| {
        let _inside = DetachedScope::enter();
        ferrohalide_core::output::collect(f)
    });
    release_pending(py);
    write_stdout(py, &text);
    r
}

/// Write `lines` to `sys.stdout` (to the process's stdout if Python has none).
pub fn write_stdout(py: Python<'_>, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let out = py.import("sys").and_then(|s| s.getattr("stdout"));
    for line in lines {
        let written = match &out {
            Ok(o) if !o.is_none() => o.call_method1("write", (line.as_str(),)).is_ok(),
            _ => false,
        };
        if !written {
            print!("{line}");
        }
    }
}

/// Text emitted outside `detached` (warnings while defining or scheduling a
/// Func) goes to `sys.stdout` when this thread holds the GIL; never waits
/// for it.
pub fn write_if_holding_gil(text: &str) -> bool {
    if !holds_gil() {
        return false;
    }
    // SAFETY: this thread holds the GIL (checked above).
    let py = unsafe { Python::assume_attached() };
    write_stdout(py, &[text.to_string()]);
    true
}
