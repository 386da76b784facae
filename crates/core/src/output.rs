//! Text for the user's standard output: compiler warnings and the lines a
//! pipeline prints (`hl.print`). Halide's Python bindings send both to
//! Python's `sys.stdout`, so `contextlib.redirect_stdout` captures them.
//!
//! Whoever calls into the compiler or a pipeline may `collect` what that
//! call emits on its thread and write it out later (the Python bindings do,
//! once they hold the GIL again; the compiler thread hands its text back to
//! the thread that started it). Text nobody collects goes to the embedding's
//! writer if it takes it, else to the process's standard output.

use std::cell::RefCell;
use std::sync::OnceLock;

thread_local! {
    /// The text of the innermost `collect` on this thread.
    static COLLECTED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Where uncollected text goes before standard output: the embedding may
/// take it; it returns whether it did.
static WRITER: OnceLock<fn(&str) -> bool> = OnceLock::new();

/// Install the writer of uncollected text (once per process).
pub fn set_writer(write: fn(&str) -> bool) {
    let _ = WRITER.set(write);
}

/// Hand finished text (whole lines) to this thread's collector, or write it.
pub fn emit(text: String) {
    let unclaimed = COLLECTED.with(|c| match c.borrow_mut().as_mut() {
        Some(list) => {
            list.push(text);
            None
        }
        None => Some(text),
    });
    if let Some(text) = unclaimed {
        if WRITER.get().is_some_and(|write| write(&text)) {
            return;
        }
        write_stdout(text.as_bytes());
    }
}

/// Write to the process's standard output and flush.
pub fn write_stdout(bytes: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

/// `f()`, and the text it emitted on this thread instead of writing it.
pub fn collect<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let outer = COLLECTED.with(|c| c.borrow_mut().replace(Vec::new()));
    let r = f();
    let mine = COLLECTED.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (r, mine.unwrap_or_default())
}
