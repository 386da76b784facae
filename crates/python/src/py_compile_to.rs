//! Ahead-of-time compilation from Python: `hl.OutputFileType`, `hl.Module`,
//! `hl.compile_standalone_runtime`, `hl.link_modules`, and the
//! `compile_to_*` methods, written once here for `Func` and `Pipeline`
//! (both call `CompileTo` with their outputs and requirements). Conversion
//! only: the work is `ferrohalide_driver::aot`.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::parameter::Parameter;
use ferrohalide_core::lang::requirement::Requirement;
use ferrohalide_core::module::Module;
use ferrohalide_core::target::Target;
use ferrohalide_driver::aot::{self, OutputFileType};

use crate::errors::{unimplemented, IntoPy};
use crate::py_buffer::wrap_buffer;
use crate::py_param::{PyImageParam, PyParam};
use crate::py_target::{target_from_py, PyTarget};

crate::py_enum::halide_enum!(
    /// `OutputFileType`: the kinds of file ahead-of-time compilation can write
    /// (`object`, `static_library`, `c_header`, `assembly`, `stmt_html`, ...),
    /// the keys of the `{OutputFileType: filename}` dict given to `compile_to`,
    /// `Module.compile` and `compile_standalone_runtime`.
    #[allow(non_camel_case_types)]
    PyOutputFileType, "OutputFileType", [
    assembly = 0,
    bitcode = 1,
    c_header = 2,
    c_source = 3,
    compiler_log = 4,
    cpp_stub = 5,
    featurization = 6,
    function_info_header = 7,
    hlpipe = 8,
    llvm_assembly = 9,
    object = 10,
    python_extension = 11,
    pytorch_wrapper = 12,
    registration = 13,
    schedule = 14,
    static_library = 15,
    stmt = 16,
    conceptual_stmt = 17,
    stmt_html = 18,
    conceptual_stmt_html = 19,
    device_code = 20,
]);

impl PyOutputFileType {
    pub fn to_driver(self) -> OutputFileType {
        let name = format!("{self:?}");
        OutputFileType::from_name(&name).expect("every hl.OutputFileType has a driver kind")
    }
}

/// `{hl.OutputFileType: path}` as (kind, path) pairs, in kind order.
fn output_map(outputs: &Bound<'_, PyAny>) -> PyResult<Vec<(OutputFileType, PathBuf)>> {
    let d = outputs
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("outputs must be a dict of hl.OutputFileType to file names"))?;
    let mut out = vec![];
    for (k, v) in d.iter() {
        let kind: PyOutputFileType = k
            .extract()
            .map_err(|_| PyTypeError::new_err("outputs must be a dict of hl.OutputFileType to file names"))?;
        let path: PathBuf = v
            .extract()
            .map_err(|_| PyTypeError::new_err("outputs must be a dict of hl.OutputFileType to file names"))?;
        out.push((kind.to_driver(), path));
    }
    out.sort_by_key(|o| o.0);
    Ok(out)
}

/// The parameter an argument-list item names: a Param, an ImageParam (or
/// the Generator inputs that subclass them), or an Argument that
/// `infer_arguments` gave. None for anything else (the caller decides what
/// else it accepts).
pub fn parameter_of(a: &Bound<'_, PyAny>) -> PyResult<Option<Parameter>> {
    if let Ok(p) = a.extract::<PyRef<PyParam>>() {
        return Ok(Some(p.inner.clone()));
    }
    if let Ok(im) = a.extract::<PyRef<PyImageParam>>() {
        return Ok(Some(im.get_inner()?.param().clone()));
    }
    Ok(a
        .extract::<PyRef<crate::py_pipeline::PyArgument>>()
        .ok()
        .and_then(|arg| arg.param().cloned()))
}

/// The argument list of `compile_to_*`: Params and ImageParams (and the
/// Generator inputs that subclass them, and `infer_arguments`' Arguments),
/// in call order.
pub fn argument_list(args: &Bound<'_, PyAny>, method: &str) -> PyResult<Vec<Parameter>> {
    let items = crate::py_expr::sequence_items(args).ok_or_else(|| PyTypeError::new_err(format!(
            "{method}(): the arguments must be a list of Params and ImageParams"
        )))?;
    let mut out = vec![];
    for a in items {
        if let Some(p) = parameter_of(&a)? {
            out.push(p);
        } else if a.extract::<PyRef<crate::py_buffer::PyBuffer>>().is_ok() {
            return Err(unimplemented(&format!(
                "{method}() with an hl.Buffer in the argument list (a Buffer the pipeline reads is compiled into the object; pass an ImageParam to make it an argument)"
            )));
        } else {
            return Err(PyTypeError::new_err(format!(
                "{method}(): arguments must be Params or ImageParams, not {}",
                crate::py_param::type_name(&a)
            )));
        }
    }
    Ok(out)
}

/// Halide's AOT target: an explicit one, else `HL_TARGET` or the host.
fn aot_target(target: Option<&Bound<'_, PyAny>>) -> PyResult<Target> {
    let t = match target {
        Some(t) if !t.is_none() => target_from_py(t)?,
        _ => Target::default(),
    };
    if t == Target::default() {
        ferrohalide_codegen_llvm::target::init_host_target();
        return Target::from_environment().py();
    }
    Ok(t)
}

/// What `compile_to_*` compiles: a Func's or a Pipeline's outputs and
/// requirements.
pub struct CompileTo {
    pub outputs: Vec<Function>,
    pub requirements: Vec<Requirement>,
    /// What an autoscheduler chose, for the module to carry.
    pub auto_schedule: Option<ferrohalide_core::autoschedule::AutoSchedulerResults>,
}

impl CompileTo {
    /// The function name: as given, else the first output's name made a C
    /// identifier (Halide's `generate_function_name`).
    fn function_name(&self, fn_name: &str) -> String {
        if !fn_name.is_empty() {
            return fn_name.to_string();
        }
        let name = self.outputs.first().map(|f| f.name()).unwrap_or_default();
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
    }

    pub fn module(
        &self,
        py: Python<'_>,
        arguments: &Bound<'_, PyAny>,
        fn_name: &str,
        target: Option<&Bound<'_, PyAny>>,
        method: &str,
    ) -> PyResult<Module> {
        let args = argument_list(arguments, method)?;
        let target = aot_target(target)?;
        let name = self.function_name(fn_name);
        let mut m = crate::gil::detached(py, || {
            aot::compile_to_module(&self.outputs, &self.requirements, &args, &name, &target)
        })
        .py()?;
        m.auto_schedule = self.auto_schedule.clone();
        Ok(m)
    }

    pub fn files(
        &self,
        py: Python<'_>,
        files: Vec<(OutputFileType, PathBuf)>,
        arguments: &Bound<'_, PyAny>,
        fn_name: &str,
        target: Option<&Bound<'_, PyAny>>,
        method: &str,
    ) -> PyResult<()> {
        let m = self.module(py, arguments, fn_name, target, method)?;
        crate::gil::detached(py, || aot::compile_module_to_files(&m, &files)).py()
    }

    /// `compile_to_object(filename, arguments, fn_name="", target=Target())`
    /// and the others of one file; Halide also takes the target third.
    pub fn one_file(
        &self,
        py: Python<'_>,
        kind: OutputFileType,
        filename: PathBuf,
        arguments: &Bound<'_, PyAny>,
        fn_name: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
        method: &str,
    ) -> PyResult<()> {
        let (name, target) = name_and_target(fn_name, target)?;
        self.files(py, vec![(kind, filename)], arguments, &name, target.as_ref(), method)
    }

    /// `compile_to_file(prefix, ...)` (header and object) and
    /// `compile_to_static_library(prefix, ...)` (header and library).
    pub fn prefixed(
        &self,
        py: Python<'_>,
        prefix: &str,
        kinds: &[OutputFileType],
        arguments: &Bound<'_, PyAny>,
        fn_name: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
        method: &str,
    ) -> PyResult<()> {
        let (name, target) = name_and_target(fn_name, target)?;
        let m = self.module(py, arguments, &name, target.as_ref(), method)?;
        let files = aot::output_files(prefix, kinds, &m.target);
        crate::gil::detached(py, || aot::compile_module_to_files(&m, &files)).py()
    }

    /// `compile_to_multitarget_static_library` / `_object_files`: `kinds`
    /// under `prefix`, one function choosing among `targets` at run time.
    pub fn multitarget(
        &self,
        py: Python<'_>,
        prefix: &str,
        kinds: &[OutputFileType],
        arguments: &Bound<'_, PyAny>,
        targets: &Bound<'_, PyAny>,
        suffixes: Vec<String>,
        method: &str,
    ) -> PyResult<()> {
        let args = argument_list(arguments, method)?;
        let targets = target_list(targets)?;
        let name = self.function_name("");
        let files = aot::output_files(prefix, kinds, targets.last().unwrap_or(&Target::host()));
        crate::gil::detached(py, || {
            ferrohalide_driver::multitarget::compile_multitarget(&name, &files, &targets, &suffixes, |n, t| {
                let mut m = aot::compile_to_module(&self.outputs, &self.requirements, &args, n, t)?;
                m.auto_schedule = self.auto_schedule.clone();
                Ok(m)
            })
        })
        .py()
    }

    pub fn compile_to(
        &self,
        py: Python<'_>,
        outputs: &Bound<'_, PyAny>,
        arguments: &Bound<'_, PyAny>,
        fn_name: &str,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let files = output_map(outputs)?;
        self.files(py, files, arguments, fn_name, target, "compile_to")
    }
}

/// `compile_to_lowered_stmt(filename, arguments, fmt, target)` of Func
/// and Pipeline: the statement `outputs` lower to for the target, written
/// to the file. `arguments` (Buffers, Params, ImageParams) must name every
/// Param and ImageParam the pipeline reads, as in Halide.
pub fn write_lowered_stmt(
    py: Python<'_>,
    outputs: Vec<Function>,
    filename: &str,
    arguments: &Bound<'_, PyAny>,
    format: ferrohalide_core::lower::StmtOutputFormat,
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let text = lowered_stmt_text(py, outputs, arguments, format, target)?;
    std::fs::write(filename, text).map_err(|e| {
        crate::errors::HalideError::new_err(format!("Error: Can't write {filename}: {e}\n"))
    })
}

/// `lowered_stmt(arguments=[], target=None)` of a Func or Pipeline: the
/// final lowered statement as an `hl.LoweredStmt` (text, and the HTML view
/// that Jupyter shows).
pub fn lowered_stmt_object(
    py: Python<'_>,
    outputs: Vec<Function>,
    arguments: Option<&Bound<'_, PyAny>>,
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    use ferrohalide_core::lower::StmtOutputFormat;
    let empty = pyo3::types::PyList::empty(py);
    let arguments = match arguments {
        Some(a) if !a.is_none() => a.clone(),
        _ => empty.into_any(),
    };
    let text = lowered_stmt_text(py, outputs.clone(), &arguments, StmtOutputFormat::Text, target)?;
    let html = lowered_stmt_text(py, outputs, &arguments, StmtOutputFormat::Html, target)?;
    Ok(py
        .import("ferrohalide._notebook")?
        .getattr("LoweredStmt")?
        .call1((text, html))?
        .unbind())
}

/// The final lowered statement of `outputs`, as text or HTML.
fn lowered_stmt_text(
    py: Python<'_>,
    outputs: Vec<Function>,
    arguments: &Bound<'_, PyAny>,
    format: ferrohalide_core::lower::StmtOutputFormat,
    target: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let incompatible = || {
        PyTypeError::new_err(
            "compile_to_lowered_stmt(): incompatible function arguments: arguments must be a list of Buffers, Params, ImageParams and Arguments",
        )
    };
    let items = crate::py_expr::sequence_items(arguments).ok_or_else(incompatible)?;
    let mut params = vec![];
    for a in &items {
        if let Some(p) = parameter_of(a)? {
            params.push(p);
        } else if a.extract::<PyRef<crate::py_buffer::PyBuffer>>().is_err() {
            return Err(incompatible());
        }
    }
    let target = match target {
        Some(t) if !t.is_none() => target_from_py(t)?,
        _ => Target::default(),
    };
    crate::gil::detached(py, || {
        ferrohalide_core::lower::lowered_stmt(&outputs, &params, format, &target)
    })
    .py()
}

/// A list of `hl.Target`s (or target strings).
fn target_list(targets: &Bound<'_, PyAny>) -> PyResult<Vec<Target>> {
    let items: Vec<Bound<'_, PyAny>> = targets
        .try_iter()
        .map_err(|_| PyTypeError::new_err("targets must be a list of hl.Target"))?
        .collect::<PyResult<_>>()?;
    items.iter().map(target_from_py).collect()
}

/// `hl._compile_multitarget(fn_name, outputs, targets, suffixes,
/// module_for)`: what `hl.main()` runs for several targets;
/// `module_for(name, target)` returns the `hl.Module` of one target.
#[pyfunction]
fn _compile_multitarget(
    fn_name: &str,
    outputs: &Bound<'_, PyAny>,
    targets: &Bound<'_, PyAny>,
    suffixes: Vec<String>,
    module_for: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let files = output_map(outputs)?;
    let targets = target_list(targets)?;
    // The callback raises Python exceptions; keep the first to re-raise it.
    let mut raised: Option<PyErr> = None;
    let r = ferrohalide_driver::multitarget::compile_multitarget(fn_name, &files, &targets, &suffixes, |n, t| {
        let made = module_for
            .call1((n, PyTarget { inner: t.clone() }))
            .and_then(|m| m.extract::<PyRef<PyModule>>().map(|m| m.get()).map_err(PyErr::from));
        made.map_err(|e| {
            let msg = e.to_string();
            raised.get_or_insert(e);
            ferrohalide_core::Error::user(msg)
        })
    });
    match (r, raised) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(e).py(),
    }
}

/// `hl._runtime_target(targets)`: the target of one runtime serving code
/// for all of `targets` (what `hl.main() -r` builds for several).
#[pyfunction]
fn _runtime_target(targets: &Bound<'_, PyAny>) -> PyResult<PyTarget> {
    Ok(PyTarget { inner: Target::runtime_for(&target_list(targets)?).py()? })
}

/// `fn_name` may be the target (Halide's `(filename, arguments, target)`
/// overload); returns the name and the target object.
fn name_and_target<'py>(
    fn_name: Option<&Bound<'py, PyAny>>,
    target: Option<&Bound<'py, PyAny>>,
) -> PyResult<(String, Option<Bound<'py, PyAny>>)> {
    match fn_name {
        Some(n) if n.extract::<PyRef<PyTarget>>().is_ok() => Ok((String::new(), Some(n.clone()))),
        Some(n) if !n.is_none() => Ok((
            n.extract::<String>()
                .map_err(|_| PyTypeError::new_err("fn_name must be a str"))?,
            target.cloned(),
        )),
        _ => Ok((String::new(), target.cloned())),
    }
}


/// The `compile_to_*` methods `hl.Func` and `hl.Pipeline` share, written
/// once: `compile_methods!(Class)` adds them to a class that has
/// `fn compilable(&self) -> PyResult<CompileTo>` (PyO3's
/// `multiple-pymethods`). Each one-file method's entry carries its docstring.
#[macro_export]
macro_rules! compile_methods {
    ($cls:ty) => {
        $crate::compile_methods!(@all $cls, [
            compile_to_object: Object,
                "`compile_to_object(filename, arguments, fn_name=\"\", target=None)`: compile ahead of time to the object file `filename`, defining the C function `fn_name` (default: the name of the first output). Its arguments are `arguments` (the Params and ImageParams, in that order) followed by the output buffers. `target` defaults to the `HL_TARGET` environment variable, else the host; it may also be given third, in place of `fn_name`.";
            compile_to_assembly: Assembly,
                "`compile_to_assembly(filename, arguments, fn_name=\"\", target=None)`: write the assembly code of the compiled function to `filename` (arguments, name and target as in `compile_to_object`).";
            compile_to_bitcode: Bitcode,
                "`compile_to_bitcode(filename, arguments, fn_name=\"\", target=None)`: write the compiled function as an LLVM bitcode file `filename` (arguments, name and target as in `compile_to_object`).";
            compile_to_llvm_assembly: LlvmAssembly,
                "`compile_to_llvm_assembly(filename, arguments, fn_name=\"\", target=None)`: write the compiled function as LLVM IR text to `filename` (arguments, name and target as in `compile_to_object`).";
            compile_to_header: CHeader,
                "`compile_to_header(filename, arguments, fn_name=\"\", target=None)`: write the C header declaring the compiled function to `filename` (arguments, name and target as in `compile_to_object`).";
            compile_to_c: CSource,
                "`compile_to_c(filename, arguments, fn_name=\"\", target=None)`: write C++ source code implementing the pipeline to `filename` (arguments, name and target as in `compile_to_object`)."
        ]);
    };
    (@all $cls:ty, [$($one_file:ident: $kind:ident, $doc:literal);*]) => {
        #[pyo3::pymethods]
        impl $cls {
    $(
    #[doc = $doc]
    #[pyo3(signature = (filename, arguments, fn_name=None, target=None))]
    fn $one_file(
        &self,
        py: Python<'_>,
        filename: std::path::PathBuf,
        arguments: &Bound<'_, PyAny>,
        fn_name: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        use ferrohalide_driver::aot::OutputFileType as K;
        self.compilable()?.one_file(py, K::$kind, filename, arguments, fn_name, target, stringify!($one_file))
    }
    )*
    /// `lowered_stmt(arguments=[], target=None)`: the final lowered
    /// statement as an `hl.LoweredStmt`, which prints as text and shows as
    /// the HTML view in Jupyter (a ferrohalide addition; Halide's bindings
    /// only write it to a file with `compile_to_lowered_stmt`).
    #[pyo3(signature = (arguments=None, target=None))]
    fn lowered_stmt(
        &self,
        py: Python<'_>,
        arguments: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        $crate::py_compile_to::lowered_stmt_object(py, self.compilable()?.outputs, arguments, target)
    }
    /// `compile_to(outputs, arguments, fn_name, target=None)`: compile ahead of
    /// time and write every file of the dict `outputs`, `{OutputFileType:
    /// filename}`, for the C function `fn_name` whose arguments are `arguments`
    /// (Params and ImageParams) followed by the output buffers. `target`
    /// defaults to `HL_TARGET`, else the host.
    #[pyo3(signature = (outputs, arguments, fn_name, target=None))]
    fn compile_to(
        &self,
        py: Python<'_>,
        outputs: &Bound<'_, PyAny>,
        arguments: &Bound<'_, PyAny>,
        fn_name: &str,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.compilable()?.compile_to(py, outputs, arguments, fn_name, target)
    }
    /// `compile_to_file(filename_prefix, arguments, fn_name="", target=None)`:
    /// compile ahead of time to an object file and its C header,
    /// `filename_prefix.o` (`.obj` for Windows) and `filename_prefix.h`
    /// (arguments, name and target as in `compile_to_object`).
    #[pyo3(signature = (filename_prefix, arguments, fn_name=None, target=None))]
    fn compile_to_file(
        &self,
        py: Python<'_>,
        filename_prefix: &str,
        arguments: &Bound<'_, PyAny>,
        fn_name: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        use ferrohalide_driver::aot::OutputFileType as K;
        self.compilable()?.prefixed(py, filename_prefix, &[K::CHeader, K::Object], arguments, fn_name, target, "compile_to_file")
    }
    /// `compile_to_static_library(filename_prefix, arguments, fn_name="", target=None)`:
    /// compile ahead of time to a static library and its C header,
    /// `filename_prefix.a` (`.lib` for Windows) and `filename_prefix.h`
    /// (arguments, name and target as in `compile_to_object`).
    #[pyo3(signature = (filename_prefix, arguments, fn_name=None, target=None))]
    fn compile_to_static_library(
        &self,
        py: Python<'_>,
        filename_prefix: &str,
        arguments: &Bound<'_, PyAny>,
        fn_name: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        use ferrohalide_driver::aot::OutputFileType as K;
        self.compilable()?.prefixed(py, filename_prefix, &[K::CHeader, K::StaticLibrary], arguments, fn_name, target, "compile_to_static_library")
    }
    /// `compile_to_multitarget_static_library(filename_prefix, arguments, targets)`:
    /// one static library and header whose function runs, at run time, the
    /// code of the first of `targets` the CPU supports (the last target is the
    /// fallback, used without checking). The targets must be for one OS,
    /// architecture and bit width.
    #[pyo3(signature = (filename_prefix, arguments, targets))]
    fn compile_to_multitarget_static_library(
        &self,
        py: Python<'_>,
        filename_prefix: &str,
        arguments: &Bound<'_, PyAny>,
        targets: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        use ferrohalide_driver::aot::OutputFileType as K;
        self.compilable()?.multitarget(py, filename_prefix, &[K::CHeader, K::StaticLibrary], arguments, targets, vec![], "compile_to_multitarget_static_library")
    }
    /// `compile_to_multitarget_object_files(filename_prefix, arguments, targets, suffixes)`:
    /// like `compile_to_multitarget_static_library`, but writing separate
    /// object files: one per target (named with `suffixes`, or after the
    /// targets if it is empty), the runtime and the function that chooses
    /// among them, and a header.
    #[pyo3(signature = (filename_prefix, arguments, targets, suffixes))]
    fn compile_to_multitarget_object_files(
        &self,
        py: Python<'_>,
        filename_prefix: &str,
        arguments: &Bound<'_, PyAny>,
        targets: &Bound<'_, PyAny>,
        suffixes: Vec<String>,
    ) -> PyResult<()> {
        use ferrohalide_driver::aot::OutputFileType as K;
        self.compilable()?.multitarget(py, filename_prefix, &[K::CHeader, K::Object], arguments, targets, suffixes, "compile_to_multitarget_object_files")
    }
    /// `compile_to_module(arguments, fn_name="", target=None)`: compile ahead of
    /// time to a `Module` (arguments, name and target as in
    /// `compile_to_object`), which can be written to files with `Module.compile`.
    #[pyo3(signature = (arguments, fn_name="", target=None))]
    fn compile_to_module(
        &self,
        py: Python<'_>,
        arguments: &Bound<'_, PyAny>,
        fn_name: &str,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::py_compile_to::PyModule> {
        let m = self.compilable()?.module(py, arguments, fn_name, target, "compile_to_module")?;
        Ok(crate::py_compile_to::PyModule::new(m))
    }
    /// `compile_to_conceptual_stmt(filename, arguments, fmt=StmtOutputFormat.Text, target=None)`:
    /// write the conceptual statement of the pipeline (its loop nest before
    /// target-specific lowering) to `filename`, as text or, with
    /// `StmtOutputFormat.HTML`, as HTML. ferrohalide has no target-specific
    /// lowering steps, so this is the final lowered statement.
    // Halide's conceptual statement is the one before target-specific
    // lowering; ferrohalide's lowering has none, so it is the lowered one.
    #[pyo3(signature = (filename, arguments, fmt=None, target=None))]
    fn compile_to_conceptual_stmt(
        &self,
        py: Python<'_>,
        filename: std::path::PathBuf,
        arguments: &Bound<'_, PyAny>,
        fmt: Option<crate::py_func::PyStmtOutputFormat>,
        target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        use ferrohalide_driver::aot::OutputFileType as K;
        let kind = match fmt {
            Some(crate::py_func::PyStmtOutputFormat::HTML) => K::ConceptualStmtHtml,
            _ => K::ConceptualStmt,
        };
        self.compilable()?.files(py, vec![(kind, filename)], arguments, "", target, "compile_to_conceptual_stmt")
    }
        }
    };
}

// ---------------------------------------------------------------------------
// hl.Module
// ---------------------------------------------------------------------------

/// `Module`: the result of compiling a pipeline ahead of time
/// (`compile_to_module`): compiled functions for one target, which `compile`
/// writes to files and `link_modules` / `append` combine.
#[pyclass(name = "Module", module = "ferrohalide", frozen)]
pub struct PyModule {
    pub inner: Mutex<Module>,
}

impl PyModule {
    pub fn new(m: Module) -> PyModule {
        PyModule { inner: Mutex::new(m) }
    }
    fn get(&self) -> Module {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[pymethods]
impl PyModule {
    /// `name()`: the module's name.
    fn name(&self) -> String {
        self.get().name
    }
    /// `target()`: the `Target` the module is compiled for.
    fn target(&self) -> PyTarget {
        PyTarget { inner: self.get().target }
    }
    /// `buffers()`: the Buffers compiled into the module (e.g. images the
    /// pipeline reads that are not arguments), as a list.
    fn buffers(&self, py: Python<'_>) -> PyResult<Vec<Py<crate::py_buffer::PyBuffer>>> {
        self.get().buffers.into_iter().map(|(_, b)| wrap_buffer(py, b)).collect()
    }
    /// `submodules()`: the modules this one depends on; always an empty list in
    /// ferrohalide, whose modules have no submodules.
    fn submodules(&self) -> Vec<PyModule> {
        vec![]
    }
    /// `append(module)`: add the functions and buffers of another `Module` to
    /// this one (a function name already present is an error).
    fn append(&self, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let Ok(o) = other.extract::<PyRef<PyModule>>() else {
            return Err(unimplemented("Module.append() of anything but a Module"));
        };
        let theirs = o.get();
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).append(&theirs).py()
    }
    /// `compile(outputs)`: write the module to every file of the dict
    /// `outputs`, `{OutputFileType: filename}`.
    fn compile(&self, py: Python<'_>, outputs: &Bound<'_, PyAny>) -> PyResult<()> {
        let files = output_map(outputs)?;
        let m = self.get();
        crate::gil::detached(py, || aot::compile_module_to_files(&m, &files)).py()
    }
    /// `get_metadata_name_map()`: the argument names that the module's
    /// metadata gives another name, as a dict `{argument name: metadata name}`.
    fn get_metadata_name_map(&self) -> std::collections::BTreeMap<String, String> {
        self.get().metadata_name_map
    }
    /// `remap_metadata_name(from_name, to_name)`: call the argument `from_name`
    /// `to_name` in the metadata the compiled code describes its arguments
    /// with (`NAME_metadata()`).
    fn remap_metadata_name(&self, from_name: String, to_name: String) {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).metadata_name_map.insert(from_name, to_name);
    }
    /// `get_auto_scheduler_results()`: the `AutoSchedulerResults` of the
    /// autoscheduler run on the module's pipeline, or None if none ran.
    fn get_auto_scheduler_results(&self, py: Python<'_>) -> PyResult<Option<crate::py_pipeline::PyAutoSchedulerResults>> {
        self.get()
            .auto_schedule
            .map(|r| crate::py_pipeline::PyAutoSchedulerResults::from_results(py, r))
            .transpose()
    }
    /// `set_auto_scheduler_results(results)`: attach `AutoSchedulerResults` to
    /// the module (what the `schedule` output file writes).
    fn set_auto_scheduler_results(&self, results: PyRef<'_, crate::py_pipeline::PyAutoSchedulerResults>) {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).auto_schedule = Some(results.results.clone());
    }
    /// `resolve_submodules()`: the module with its submodules linked in; as
    /// ferrohalide modules have none, a copy of this one.
    fn resolve_submodules(&self) -> PyModule {
        PyModule::new(self.get())
    }
    /// `compile_to_buffer()`: the module compiled to an object file, returned
    /// as a one-dimensional uint8 `Buffer` of its bytes.
    // Halide 21's binding cannot return this Buffer type.
    fn compile_to_buffer(&self, py: Python<'_>) -> PyResult<Py<crate::py_buffer::PyBuffer>> {
        let m = self.get();
        let bytes = crate::gil::detached(py, || aot::module_object_bytes(&m)).py()?;
        let b = ferrohalide_core::buffer::Buffer::from_bytes(&bytes).py()?;
        wrap_buffer(py, b)
    }
    fn __getattr__(&self, name: &str) -> PyResult<Py<PyAny>> {
        Err(pyo3::exceptions::PyAttributeError::new_err(format!(
            "'halide.Module' object has no attribute '{name}'"
        )))
    }
    fn __repr__(&self) -> String {
        format!("<halide.Module '{}'>", self.get().name)
    }
}

/// `compile_standalone_runtime(filename, target)` or
/// `compile_standalone_runtime(outputs, target)`: write Halide's runtime on
/// its own, for linking with pipelines compiled with the `NoRuntime` feature:
/// to the object file `filename` (returning None), or to every file of the
/// dict `outputs`, `{OutputFileType: filename}`, returning the files written
/// in the same form.
#[pyfunction]
#[pyo3(signature = (filename_or_outputs, target))]
fn compile_standalone_runtime(
    py: Python<'_>,
    filename_or_outputs: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let target = aot_target(Some(target))?;
    if let Ok(filename) = filename_or_outputs.extract::<PathBuf>() {
        let files = vec![(OutputFileType::Object, filename)];
        crate::gil::detached(py, || aot::compile_standalone_runtime(&files, &target)).py()?;
        return Ok(py.None());
    }
    let files = output_map(filename_or_outputs)?;
    let written = crate::gil::detached(py, || aot::compile_standalone_runtime(&files, &target)).py()?;
    // The outputs written, as Halide returns them.
    let d = PyDict::new(py);
    for (kind, path) in written {
        let k = PyOutputFileType::MEMBERS
            .iter()
            .find(|m| m.to_driver() == kind)
            .copied()
            .expect("every kind has a Python member");
        d.set_item(k, path)?;
    }
    Ok(d.into_any().unbind())
}

/// `link_modules(name, modules)`: one `Module` named `name` holding the
/// functions of all the `modules`, which must be for the same target.
#[pyfunction]
fn link_modules(name: &str, modules: Vec<PyRef<PyModule>>) -> PyResult<PyModule> {
    let ms: Vec<Module> = modules.iter().map(|m| m.get()).collect();
    let linked = ferrohalide_core::module::link_modules(name, &ms).py()?;
    Ok(PyModule::new(linked))
}

pub fn register(m: &Bound<'_, pyo3::types::PyModule>) -> PyResult<()> {
    m.add_class::<PyOutputFileType>()?;
    m.add_class::<PyModule>()?;
    m.add_function(wrap_pyfunction!(compile_standalone_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(link_modules, m)?)?;
    m.add_function(wrap_pyfunction!(_compile_multitarget, m)?)?;
    m.add_function(wrap_pyfunction!(_runtime_target, m)?)?;
    Ok(())
}
