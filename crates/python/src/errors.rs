//! `hl.HalideError` and the mapping from core errors to Python exceptions.

use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;

use ferrohalide_core::{Error, ErrorKind};

pyo3::create_exception!(
    ferrohalide,
    HalideError,
    PyException,
    "Errors raised by the Halide compiler and runtime."
);

/// Halide's Python error text: `Error: <message>` ending in a newline.
fn halide_text(message: &str) -> String {
    let mut s = if message.starts_with("Error: ") || message.starts_with("Error:\n") {
        message.to_string()
    } else {
        format!("Error: {message}")
    };
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Convert a core error into the Python exception Halide's bindings raise:
/// TypeError / ValueError for argument mistakes, HalideError otherwise.
pub fn to_pyerr(e: Error) -> PyErr {
    match e.kind {
        ErrorKind::Type => PyTypeError::new_err(e.message),
        ErrorKind::Value => PyValueError::new_err(e.message),
        ErrorKind::User | ErrorKind::Runtime | ErrorKind::Unimplemented | ErrorKind::Internal => {
            HalideError::new_err(halide_text(&e.message))
        }
    }
}

/// A HalideError saying `what` is not implemented yet.
pub fn unimplemented(what: &str) -> PyErr {
    to_pyerr(Error::unimplemented(what))
}

/// `.py()` on core results: map the error to a Python exception.
pub trait IntoPy<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for ferrohalide_core::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_pyerr)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HalideError", m.py().get_type::<HalideError>())?;
    Ok(())
}

/// The TypeError for iterating an object that can be indexed at any
/// coordinate (a Func, an ImageParam): Python's fallback iteration through
/// `__getitem__` would never end.
pub fn not_iterable(class: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "'{class}' object is not iterable: it can be indexed at any coordinate, so iterating it would never end"
    ))
}
