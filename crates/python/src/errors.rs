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
/// A HalideError naming Funcs also says where in the user's code each was
/// defined (`record_definition_site`), in notes (PEP 678) that tracebacks
/// print after the message: `str(e)` stays Halide's text.
pub fn to_pyerr(e: Error) -> PyErr {
    match e.kind {
        ErrorKind::Type => PyTypeError::new_err(e.message),
        ErrorKind::Value => PyValueError::new_err(e.message),
        ErrorKind::User | ErrorKind::Runtime | ErrorKind::Unimplemented | ErrorKind::Internal => {
            let text = halide_text(&e.message);
            let sites = definition_sites_named_in(&text);
            let err = HalideError::new_err(text);
            if !sites.is_empty() && crate::gil::holds_gil() {
                // SAFETY: this thread holds the GIL (checked above).
                let py = unsafe { Python::assume_attached() };
                for site in sites {
                    let _ = err.value(py).call_method1("add_note", (site,));
                }
            }
            err
        }
    }
}

/// Where each Func was first defined, by name: the latest Func of a name
/// wins. Bounded: past `MAX_SITES` names the oldest half is forgotten.
static SITES: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
const MAX_SITES: usize = 20_000;

/// Remember the file and line of the user's code that is defining Func
/// `name` now: the innermost Python frame outside the ferrohalide package
/// (whose helpers define Funcs on the user's behalf).
pub fn record_definition_site(py: Python<'_>, name: &str) {
    let Some(site) = user_frame(py) else { return };
    let mut sites = SITES.lock().unwrap_or_else(|p| p.into_inner());
    sites.retain(|(n, _)| n != name);
    if sites.len() >= MAX_SITES {
        sites.drain(..MAX_SITES / 2);
    }
    sites.push((name.to_string(), site));
}

fn user_frame(py: Python<'_>) -> Option<String> {
    static PACKAGE_DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    let package_dir = PACKAGE_DIR
        .get_or_init(|| {
            let file: String = py.import("ferrohalide").ok()?.getattr("__file__").ok()?.extract().ok()?;
            Some(std::path::Path::new(&file).parent()?.to_path_buf())
        })
        .as_ref()?;
    let mut frame = py.import("sys").ok()?.call_method1("_getframe", (0,)).ok()?;
    loop {
        let file: String = frame.getattr("f_code").ok()?.getattr("co_filename").ok()?.extract().ok()?;
        if !std::path::Path::new(&file).starts_with(package_dir) {
            let line: i64 = frame.getattr("f_lineno").ok()?.extract().ok()?;
            return Some(format!("{file}:{line}"));
        }
        frame = frame.getattr("f_back").ok().filter(|f| !f.is_none())?;
    }
}

/// Notes saying where the Funcs that `message` names were defined: a name
/// counts when it stands as a whole word (not inside a longer name).
fn definition_sites_named_in(message: &str) -> Vec<String> {
    let sites = SITES.lock().unwrap_or_else(|p| p.into_inner());
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = vec![];
    for (name, site) in sites.iter() {
        let whole_word = message.match_indices(name.as_str()).any(|(i, _)| {
            let before = message[..i].chars().next_back();
            let after = message[i + name.len()..].chars().next();
            !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
        });
        if whole_word {
            out.push(format!("Func {name} was defined at {site}"));
        }
    }
    out
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
