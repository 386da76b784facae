//! Ahead-of-time compilation: a `Module` written to the files a build
//! asks for (Halide's `Module::compile` and `compile_standalone_runtime`).
//! Machine code comes from `ferrohalide_codegen_llvm::aot` (one LLVM
//! compilation serves every machine-code output), text from
//! `ferrohalide_core::emit`, static libraries from `archive`.

use std::path::{Path, PathBuf};

use ferrohalide_codegen_llvm::aot::{self, LlvmOutput};
use ferrohalide_core::emit;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::parameter::Parameter;
use ferrohalide_core::lang::requirement::Requirement;
use ferrohalide_core::lower::StmtOutputFormat;
use ferrohalide_core::module::{lower_module, Module};
use ferrohalide_core::target::{os, Target};
use ferrohalide_core::{Error, Result};

use crate::archive::{static_library, Member};

/// Halide's `OutputFileType`: the kinds of file a module can be written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OutputFileType {
    Assembly,
    Bitcode,
    CHeader,
    CSource,
    CompilerLog,
    CppStub,
    Featurization,
    FunctionInfoHeader,
    Hlpipe,
    LlvmAssembly,
    Object,
    PythonExtension,
    PytorchWrapper,
    Registration,
    Schedule,
    StaticLibrary,
    Stmt,
    ConceptualStmt,
    StmtHtml,
    ConceptualStmtHtml,
    DeviceCode,
}

/// (kind, its name on the command line, its file suffix), in Halide's order.
const OUTPUTS: &[(OutputFileType, &str, &str)] = &[
    (OutputFileType::Assembly, "assembly", ".s"),
    (OutputFileType::Bitcode, "bitcode", ".bc"),
    (OutputFileType::CHeader, "c_header", ".h"),
    (OutputFileType::CSource, "c_source", ".halide_generated.cpp"),
    (OutputFileType::CompilerLog, "compiler_log", ".halide_compiler_log"),
    (OutputFileType::CppStub, "cpp_stub", ".stub.h"),
    (OutputFileType::Featurization, "featurization", ".featurization"),
    (OutputFileType::FunctionInfoHeader, "function_info_header", ".function_info.h"),
    (OutputFileType::Hlpipe, "hlpipe", ".hlpipe"),
    (OutputFileType::LlvmAssembly, "llvm_assembly", ".ll"),
    (OutputFileType::Object, "object", ".o"),
    (OutputFileType::PythonExtension, "python_extension", ".py.cpp"),
    (OutputFileType::PytorchWrapper, "pytorch_wrapper", ".pytorch.h"),
    (OutputFileType::Registration, "registration", ".registration.cpp"),
    (OutputFileType::Schedule, "schedule", ".schedule.h"),
    (OutputFileType::StaticLibrary, "static_library", ".a"),
    (OutputFileType::Stmt, "stmt", ".stmt"),
    (OutputFileType::ConceptualStmt, "conceptual_stmt", ".conceptual.stmt"),
    (OutputFileType::StmtHtml, "stmt_html", ".stmt.html"),
    (OutputFileType::ConceptualStmtHtml, "conceptual_stmt_html", ".conceptual.stmt.html"),
    (OutputFileType::DeviceCode, "device_code", ".device_code"),
];

impl OutputFileType {
    pub fn all() -> impl Iterator<Item = OutputFileType> {
        OUTPUTS.iter().map(|o| o.0)
    }
    fn entry(self) -> &'static (OutputFileType, &'static str, &'static str) {
        OUTPUTS.iter().find(|o| o.0 == self).expect("every kind is listed")
    }
    /// The name `-e` takes (`c_header`, ...).
    pub fn name(self) -> &'static str {
        self.entry().1
    }
    /// The file suffix (`.h`, ...).
    pub fn suffix(self) -> &'static str {
        self.entry().2
    }
    /// The file suffix for `target`: Windows objects and libraries are
    /// `.obj` and `.lib`, as Halide names them.
    pub fn suffix_for(self, target: &Target) -> &'static str {
        match self {
            OutputFileType::Object if target.os == os::WINDOWS => ".obj",
            OutputFileType::StaticLibrary if target.os == os::WINDOWS => ".lib",
            _ => self.suffix(),
        }
    }
    /// By `-e` name; Halide's legacy aliases (`o`, `h`, `html`, `cpp`,
    /// `py.c`, `hlpipe`) too.
    pub fn from_name(name: &str) -> Option<OutputFileType> {
        let alias = match name {
            "o" => Some(OutputFileType::Object),
            "h" => Some(OutputFileType::CHeader),
            "html" => Some(OutputFileType::StmtHtml),
            "cpp" => Some(OutputFileType::CSource),
            "py.c" => Some(OutputFileType::PythonExtension),
            _ => None,
        };
        alias.or_else(|| OUTPUTS.iter().find(|o| o.1 == name).map(|o| o.0))
    }
    /// What ferrohalide cannot write yet: an error naming it.
    fn unsupported(self) -> Option<&'static str> {
        match self {
            OutputFileType::CompilerLog => Some("compiler_log output"),
            OutputFileType::CppStub => Some("cpp_stub output (C++ generator stubs)"),
            OutputFileType::Hlpipe => Some("hlpipe output (pipeline serialization)"),
            OutputFileType::PytorchWrapper => Some("pytorch_wrapper output"),
            _ => None,
        }
    }
}

pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes)
        .map_err(|e| Error::user(format!("Can't write {}: {e}\n", path.display())))
}

/// Refuse kinds that cannot be written, before anything is.
fn check_supported(outputs: &[(OutputFileType, PathBuf)]) -> Result<()> {
    for (kind, path) in outputs {
        if let Some(what) = kind.unsupported() {
            return Err(Error::unimplemented(what));
        }
        if path.as_os_str().is_empty() {
            return Err(Error::user(format!("Empty file name for output {}\n", kind.name())));
        }
    }
    Ok(())
}

/// The base name (without directory and suffix) an object member of a
/// static library gets.
fn member_name(path: &Path) -> String {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    match file.strip_suffix(".lib") {
        Some(base) => format!("{base}.obj"),
        None => format!("{}.o", file.strip_suffix(".a").unwrap_or(&file)),
    }
}

/// Write `m` as each of `outputs` (kind, path).
pub fn compile_module_to_files(m: &Module, outputs: &[(OutputFileType, PathBuf)]) -> Result<()> {
    check_supported(outputs)?;
    let want = |k: OutputFileType| outputs.iter().filter(move |o| o.0 == k).map(|o| &o.1);
    // One LLVM compilation for every machine-code output.
    let mut llvm_kinds = vec![];
    for (kind, llvm) in [
        (OutputFileType::Object, LlvmOutput::Object),
        (OutputFileType::StaticLibrary, LlvmOutput::Object),
        (OutputFileType::Assembly, LlvmOutput::Assembly),
        (OutputFileType::Bitcode, LlvmOutput::Bitcode),
        (OutputFileType::LlvmAssembly, LlvmOutput::LlvmAssembly),
    ] {
        if want(kind).next().is_some() && !llvm_kinds.contains(&llvm) {
            llvm_kinds.push(llvm);
        }
    }
    let made = if llvm_kinds.is_empty() {
        aot::Compiled { outputs: vec![], symbols: vec![] }
    } else {
        aot::compile_module(m, &llvm_kinds)?
    };
    let llvm_output = |k: LlvmOutput| -> &[u8] {
        let i = llvm_kinds.iter().position(|x| *x == k).expect("compiled above");
        &made.outputs[i]
    };
    for (kind, path) in outputs {
        match kind {
            OutputFileType::Object => write(path, llvm_output(LlvmOutput::Object))?,
            OutputFileType::Assembly => write(path, llvm_output(LlvmOutput::Assembly))?,
            OutputFileType::Bitcode => write(path, llvm_output(LlvmOutput::Bitcode))?,
            OutputFileType::LlvmAssembly => write(path, llvm_output(LlvmOutput::LlvmAssembly))?,
            OutputFileType::StaticLibrary => {
                let member = Member {
                    name: member_name(path),
                    data: llvm_output(LlvmOutput::Object).to_vec(),
                    symbols: made.symbols.clone(),
                };
                write(path, &static_library(&[member], &m.target))?
            }
            OutputFileType::CHeader => write(path, emit::c_header::c_header(m).as_bytes())?,
            OutputFileType::PythonExtension => {
                write(path, emit::python_extension::python_extension(m).as_bytes())?
            }
            OutputFileType::Registration => {
                write(path, emit::registration::registration(m).as_bytes())?
            }
            OutputFileType::FunctionInfoHeader => write(
                path,
                emit::function_info_header::function_info_header(m).as_bytes(),
            )?,
            OutputFileType::Schedule => write(path, emit::schedule::schedule(m).as_bytes())?,
            OutputFileType::Stmt | OutputFileType::ConceptualStmt => {
                write(path, module_stmt(m, StmtOutputFormat::Text).as_bytes())?
            }
            OutputFileType::StmtHtml | OutputFileType::ConceptualStmtHtml => {
                write(path, module_stmt(m, StmtOutputFormat::Html).as_bytes())?
            }
            // No autoscheduler and no device: these files are empty.
            OutputFileType::Featurization | OutputFileType::DeviceCode => write(path, b"")?,
            OutputFileType::CSource => write(path, emit::c_source::c_source(m)?.as_bytes())?,
            OutputFileType::CompilerLog
            | OutputFileType::CppStub
            | OutputFileType::Hlpipe
            | OutputFileType::PytorchWrapper => unreachable!("refused by check_supported"),
        }
    }
    Ok(())
}

/// `m` compiled to an object file, in memory (`Module.compile_to_buffer`).
pub fn module_object_bytes(m: &Module) -> Result<Vec<u8>> {
    let made = aot::compile_module(m, &[LlvmOutput::Object])?;
    Ok(made.outputs.into_iter().next().unwrap_or_default())
}

/// The lowered statement of every function of `m`.
fn module_stmt(m: &Module, format: StmtOutputFormat) -> String {
    m.functions.iter().map(|f| f.pipeline.render(format)).collect::<Vec<_>>().join("\n")
}

/// Lower `outputs` with `arguments` into a module for `target` and write it.
pub fn compile_to_files(
    outputs: &[Function],
    requirements: &[Requirement],
    arguments: &[Parameter],
    fn_name: &str,
    target: &Target,
    files: &[(OutputFileType, PathBuf)],
) -> Result<()> {
    check_supported(files)?;
    let m = compile_to_module(outputs, requirements, arguments, fn_name, target)?;
    compile_module_to_files(&m, files)
}

/// `compile_to_module`: lower for `target` (the host if unknown).
pub fn compile_to_module(
    outputs: &[Function],
    requirements: &[Requirement],
    arguments: &[Parameter],
    fn_name: &str,
    target: &Target,
) -> Result<Module> {
    let target = crate::pipeline::resolve_aot_target(target);
    lower_module(outputs, requirements, arguments, fn_name, &target)
}

/// The runtime alone, written as those of `outputs` that make sense for it
/// (as Halide, the others are ignored): an object, a static library, or
/// (with no functions) the module definition of a Python extension.
/// Returns the outputs written.
pub fn compile_standalone_runtime(
    outputs: &[(OutputFileType, PathBuf)],
    target: &Target,
) -> Result<Vec<(OutputFileType, PathBuf)>> {
    let target = crate::pipeline::resolve_aot_target(target)
        .without_feature(ferrohalide_core::target::feature::NO_RUNTIME)
        .without_feature(ferrohalide_core::target::feature::JIT);
    let outputs: Vec<(OutputFileType, PathBuf)> = outputs
        .iter()
        .filter(|o| {
            matches!(
                o.0,
                OutputFileType::Object | OutputFileType::StaticLibrary | OutputFileType::PythonExtension
            )
        })
        .cloned()
        .collect();
    let needs_object = outputs.iter().any(|o| o.0 != OutputFileType::PythonExtension);
    let (object, symbols) = if needs_object {
        let mut c = aot::standalone_runtime(&target, &[LlvmOutput::Object])?;
        (c.outputs.remove(0), c.symbols)
    } else {
        (vec![], vec![])
    };
    for (kind, path) in &outputs {
        match kind {
            OutputFileType::Object => write(path, &object)?,
            OutputFileType::StaticLibrary => {
                let member = Member {
                    name: member_name(path),
                    data: object.clone(),
                    symbols: symbols.clone(),
                };
                write(path, &static_library(&[member], &target))?
            }
            _ => {
                let empty = Module::new(path_stem(path), target.clone());
                write(path, emit::python_extension::python_extension(&empty).as_bytes())?
            }
        }
    }
    Ok(outputs)
}

fn path_stem(p: &Path) -> String {
    let f = p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    f.split('.').next().unwrap_or("").to_string()
}

/// The file each kind goes to for `base` (a path without suffix).
pub fn output_files(base: &str, kinds: &[OutputFileType], target: &Target) -> Vec<(OutputFileType, PathBuf)> {
    kinds
        .iter()
        .map(|k| (*k, PathBuf::from(format!("{base}{}", k.suffix_for(target)))))
        .collect()
}
