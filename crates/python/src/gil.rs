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

/// Does this thread hold the GIL?
pub fn holds_gil() -> bool {
    unsafe { pyo3::ffi::PyGILState_Check() == 1 }
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

/// `f()` with the GIL released; afterwards, the queued releases.
pub fn detached<T, F>(py: Python<'_>, f: F) -> T
where
    F: Ungil + FnOnce() -> T,
    T: Ungil,
{
    let r = py.detach(f);
    release_pending(py);
    r
}
