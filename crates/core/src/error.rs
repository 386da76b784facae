//! The one error type of the compiler. Every user mistake becomes an
//! `Error` with a message a user can act on; the Python layer maps it to
//! `HalideError` (or the Python exception type Halide uses).

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A mistake in the algorithm, schedule or call (Halide's CompileError / user_error).
    User,
    /// A failure while running a compiled pipeline (Halide's RuntimeError).
    Runtime,
    /// Wrong argument type from the caller (Python's TypeError).
    Type,
    /// Out-of-range index or value (Python's IndexError / ValueError).
    Value,
    /// A feature that ferrohalide does not implement yet.
    Unimplemented,
    /// A bug in ferrohalide.
    Internal,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn user(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::User,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Runtime,
            message: message.into(),
        }
    }
    pub fn type_error(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Type,
            message: message.into(),
        }
    }
    pub fn value(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Value,
            message: message.into(),
        }
    }
    pub fn unimplemented(what: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Unimplemented,
            message: format!("{} is not implemented in ferrohalide yet", what.into()),
        }
    }
    pub fn internal(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Internal,
            message: format!("Internal error: {}", message.into()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// A warning for the user ("Warning: " + message), printed where Halide
/// prints its warnings, the process's standard output, unless a caller on
/// this thread collects them (`collect_warnings`).
pub fn user_warning(message: &str) {
    let mut text = format!("Warning: {message}");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    emit_warning(text);
}

thread_local! {
    /// The warnings of the innermost `collect_warnings` on this thread.
    static COLLECTED: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Where uncollected warnings go before standard output: the embedding
/// (the Python bindings) may take them; it returns whether it did.
static WARNING_WRITER: std::sync::OnceLock<fn(&str) -> bool> = std::sync::OnceLock::new();

/// Install the writer of uncollected warnings (once per process).
pub fn set_warning_writer(write: fn(&str) -> bool) {
    let _ = WARNING_WRITER.set(write);
}

/// Hand a finished warning line to this thread's collector, or print it.
pub fn emit_warning(text: String) {
    let unclaimed = COLLECTED.with(|c| match c.borrow_mut().as_mut() {
        Some(list) => {
            list.push(text);
            None
        }
        None => Some(text),
    });
    if let Some(text) = unclaimed {
        if WARNING_WRITER.get().is_some_and(|write| write(&text)) {
            return;
        }
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// `f()`, and the warnings it raised on this thread instead of printing them
/// (the Python bindings write them to `sys.stdout`; the compiler thread
/// hands its own back to the thread that started it).
pub fn collect_warnings<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let outer = COLLECTED.with(|c| c.borrow_mut().replace(Vec::new()));
    let r = f();
    let mine = COLLECTED.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (r, mine.unwrap_or_default())
}

/// Return early with a user error: `user_error!("bad {}", x)`.
#[macro_export]
macro_rules! user_error {
    ($($arg:tt)*) => { return Err($crate::error::Error::user(format!($($arg)*))) };
}
