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

/// A warning for the user ("Warning: " + message), written where Halide
/// writes its warnings: the user's standard output (see `crate::output`).
pub fn user_warning(message: &str) {
    let mut text = format!("Warning: {message}");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    crate::output::emit(text);
}

/// Return early with a user error: `user_error!("bad {}", x)`.
#[macro_export]
macro_rules! user_error {
    ($($arg:tt)*) => { return Err($crate::error::Error::user(format!($($arg)*))) };
}
