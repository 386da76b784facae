//! One object (or static library) for several targets of one machine,
//! choosing at run time the first target the CPU can run (Halide's
//! `compile_multitarget`).
//!
//! Each target's code is compiled as its own module, with the function
//! named `NAME_<target>` (or `NAME_<suffix>`, non-identifier characters
//! made `_`; Halide keeps the dashes) and without a runtime; a
//! wrapper `NAME` (with `NAME_argv` and `NAME_metadata`) asks the runtime's
//! `halide_can_use_target_features` about each target in order and calls
//! the first that fits; the last target, the baseline, is taken without
//! asking. The runtime is compiled once, with only the features every
//! target has, so it runs wherever the baseline does. Text outputs (C
//! header, registration, ...) describe `NAME` with the baseline's arguments.
//!
//! With one target, this is an ordinary compilation under `NAME`.

use std::path::{Path, PathBuf};

use ferrohalide_codegen_llvm::aot::{self, LlvmOutput};
use ferrohalide_core::ir::{CallKind, Expr, Intrinsic, Stmt, Type};
use ferrohalide_core::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};
use ferrohalide_core::module::{Linkage, Module, ModuleFunction};
use ferrohalide_core::target::{feature, Feature, Target, FEATURES};
use ferrohalide_core::{Error, Result};

use crate::aot::{compile_module_to_files, write, OutputFileType};
use crate::archive::{static_library, Member};

/// Words of the feature mask `halide_can_use_target_features` takes.
fn feature_words() -> usize {
    FEATURES.len().div_ceil(64)
}

/// Features that must be the same in every target: they change the
/// calling convention, the runtime, or what the wrapper may do.
const MUST_MATCH: &[(Feature, &str)] = &[
    (Feature(57), "asan"),
    (feature::C_PLUS_PLUS_MANGLING, "c_plus_plus_name_mangling"),
    (feature::DEBUG, "debug"),
    (feature::JIT, "jit"),
    (Feature(39), "msan"),
    (feature::NO_RUNTIME, "no_runtime"),
    (Feature(56), "tsan"),
    (Feature(85), "sanitizer_coverage"),
    (feature::USER_CONTEXT, "user_context"),
];

/// Output kinds written once per target (with the target's suffix), as in
/// Halide; the others describe the wrapper.
fn is_per_target(kind: OutputFileType) -> bool {
    use OutputFileType::*;
    matches!(
        kind,
        Assembly
            | Bitcode
            | Featurization
            | LlvmAssembly
            | Object
            | Stmt
            | ConceptualStmt
            | StmtHtml
            | ConceptualStmtHtml
            | DeviceCode
    )
}

/// `dir/name.ext` -> `dir/name<suffix>.ext` (the suffix goes before the
/// first dot of the file name, as Halide places it).
fn add_suffix(path: &Path, suffix: &str) -> PathBuf {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let named = match file.find('.') {
        Some(dot) => format!("{}{suffix}{}", &file[..dot], &file[dot..]),
        None => format!("{file}{suffix}"),
    };
    path.with_file_name(named)
}

/// The target's features as `halide_can_use_target_features` reads them.
fn feature_mask(t: &Target) -> Vec<u64> {
    let mut words = vec![0u64; feature_words()];
    for f in t.features() {
        if (f.0 as usize) < FEATURES.len() {
            words[f.0 as usize / 64] |= 1u64 << (f.0 % 64);
        }
    }
    words
}

/// The value a wrapper passes on for argument `a`.
fn forward(a: &LoweredArgument) -> Expr {
    match a.kind {
        ArgumentKind::InputBuffer | ArgumentKind::OutputBuffer => {
            Expr::var(Type::handle(), format!("{}.buffer", a.name))
        }
        // A half float crosses the C ABI as its bits.
        ArgumentKind::InputScalar if a.ty.is_float() && a.ty.bits == 16 => {
            Expr::reinterpret(Type::uint(16), Expr::var(a.ty, a.name.clone()))
        }
        ArgumentKind::InputScalar => Expr::var(a.ty, a.name.clone()),
    }
}

/// The wrapper's body: the first sub-function whose features the CPU has,
/// its result returned as the wrapper's.
fn wrapper_body(fn_name: &str, args: &[LoweredArgument], subs: &[(String, Option<Vec<u64>>)]) -> Stmt {
    let forwarded: Vec<Expr> = args.iter().map(forward).collect();
    let call = |name: &str| Expr::call(Type::i32(), name, forwarded.clone(), CallKind::Extern);
    // Built from the baseline (last) outwards.
    let mut chosen: Option<Expr> = None;
    for (name, mask) in subs.iter().rev() {
        chosen = Some(match (mask, chosen) {
            (_, None) | (None, _) => call(name),
            (Some(words), Some(otherwise)) => {
                let words: Vec<Expr> = words.iter().map(|w| Expr::uint_imm(Type::uint(64), *w)).collect();
                let can_use = Expr::call(
                    Type::i32(),
                    "halide_can_use_target_features",
                    vec![
                        Expr::i32(feature_words() as i64),
                        Expr::intrinsic(Type::handle(), Intrinsic::MakeStruct, words),
                    ],
                    CallKind::Extern,
                );
                Expr::intrinsic(
                    Type::i32(),
                    Intrinsic::IfThenElse,
                    vec![Expr::ne(can_use, Expr::i32(0)), call(name), otherwise],
                )
            }
        });
    }
    let result = format!("{fn_name}_result");
    let r = Expr::var(Type::i32(), result.clone());
    let chosen = chosen.expect("at least one target");
    Stmt::let_stmt(result, chosen, Stmt::assert(Expr::eq(r.clone(), Expr::i32(0)), r))
}

/// A module holding only `fn_name`'s signature (for the text outputs).
fn signature_module(fn_name: &str, target: &Target, args: &[LoweredArgument], like: &Module) -> Module {
    let mut m = Module::new(fn_name, target.clone());
    m.functions.push(ModuleFunction {
        pipeline: LoweredPipeline {
            name: fn_name.to_string(),
            args: args.to_vec(),
            body: Stmt::no_op(),
        },
        linkage: Linkage::ExternalPlusMetadata,
    });
    m.auto_schedule = like.auto_schedule.clone();
    m.metadata_name_map = like.metadata_name_map.clone();
    m
}

fn check_request(fn_name: &str, targets: &[Target], suffixes: &[String]) -> Result<()> {
    if fn_name.is_empty() {
        return Err(Error::user("Function name must be specified.\n"));
    }
    if targets.is_empty() {
        return Err(Error::user("Must specify at least one target.\n"));
    }
    if !suffixes.is_empty() && suffixes.len() != targets.len() {
        return Err(Error::user(
            "The suffixes list must be empty or the same length as the targets list.\n",
        ));
    }
    if let Some(c) = fn_name.chars().find(|c| *c == '/' || *c == '\\') {
        return Err(Error::user(format!(
            "compile_multitarget: fn_name must not contain '{c}', but saw '{fn_name}'\n"
        )));
    }
    let base = targets.last().expect("checked above");
    if base.has_feature(feature::JIT) {
        return Err(Error::user("JIT not allowed for compile_multitarget.\n"));
    }
    for t in targets {
        if !t.same_machine(base) {
            return Err(Error::user(
                "All Targets must have matching arch-bits-os for compile_multitarget.\n",
            ));
        }
        if let Some((_, name)) = MUST_MATCH.iter().find(|(f, _)| t.has_feature(*f) != base.has_feature(*f)) {
            return Err(Error::user(format!(
                "All Targets must have feature '{name}' set identically for compile_multitarget.\n"
            )));
        }
    }
    Ok(())
}

/// Compile `fn_name` for each of `targets` into `outputs` (see the module
/// doc). `module_for(name, target)` builds the module of one target with
/// its public function called `name`.
pub fn compile_multitarget(
    fn_name: &str,
    outputs: &[(OutputFileType, PathBuf)],
    targets: &[Target],
    suffixes: &[String],
    mut module_for: impl FnMut(&str, &Target) -> Result<Module>,
) -> Result<()> {
    check_request(fn_name, targets, suffixes)?;
    let base = targets.last().expect("checked").clone();
    if targets.len() == 1 {
        return compile_module_to_files(&module_for(fn_name, &base)?, outputs);
    }
    let has = |k: OutputFileType| outputs.iter().any(|o| o.0 == k);
    let path_of = |k: OutputFileType| outputs.iter().find(|o| o.0 == k).map(|o| o.1.clone());
    let library = path_of(OutputFileType::StaticLibrary);
    if has(OutputFileType::Object) == library.is_some() {
        return Err(Error::user(
            "compile_multitarget() expects exactly one of 'object' and 'static_library' to be specified when multiple targets are specified.\n",
        ));
    }

    let mut members: Vec<Member> = vec![];
    let mut subs: Vec<(String, Option<Vec<u64>>)> = vec![];
    let mut base_module: Option<Module> = None;
    for (i, t) in targets.iter().enumerate() {
        let suffix = format!("-{}", suffixes.get(i).cloned().unwrap_or_else(|| t.to_string()));
        // Halide names it `NAME-<target>`; a C identifier here, so that the
        // sub-functions can be declared and called from C as well.
        let c_suffix: String =
            suffix.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let sub_name = format!("{fn_name}{c_suffix}");
        let m = module_for(&sub_name, &t.with_feature(feature::NO_RUNTIME))?;
        let per_target: Vec<(OutputFileType, PathBuf)> = outputs
            .iter()
            .filter(|o| is_per_target(o.0))
            .map(|o| (o.0, add_suffix(&o.1, &suffix)))
            .collect();
        compile_module_to_files(&m, &per_target)?;
        if let Some(lib) = &library {
            let made = aot::compile_module(&m, &[LlvmOutput::Object])?;
            let stem = lib.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            members.push(Member {
                name: format!("{stem}{suffix}.o"),
                data: made.outputs.into_iter().next().unwrap_or_default(),
                symbols: made.symbols,
            });
        }
        let mask = feature_mask(t);
        subs.push((sub_name, (i + 1 < targets.len()).then_some(mask)));
        if i + 1 == targets.len() {
            base_module = Some(m);
        }
    }
    let base_module = base_module.expect("at least two targets");
    let base_fn = base_module
        .public_functions()
        .next()
        .ok_or_else(|| Error::internal("a multi-target module without a public function"))?;
    let args = base_fn.pipeline.args.clone();

    // The runtime, with only the features all targets share.
    if !base.has_feature(feature::NO_RUNTIME) {
        let runtime_target = Target::runtime_for(targets)?;
        let made = aot::standalone_runtime(&runtime_target, &[LlvmOutput::Object])?;
        let object = made.outputs.into_iter().next().unwrap_or_default();
        match &library {
            Some(lib) => {
                let stem = lib.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                members.push(Member { name: format!("{stem}_runtime.o"), data: object, symbols: made.symbols });
            }
            None => {
                let obj = path_of(OutputFileType::Object).expect("checked above");
                write(&add_suffix(&obj, "_runtime"), &object)?;
            }
        }
    }

    // The wrapper: never a runtime or a bounds query of its own (the
    // sub-functions have them), always asserts (its only way to return
    // their error code).
    let wrapper_target = base
        .with_feature(feature::NO_RUNTIME)
        .with_feature(feature::NO_BOUNDS_QUERY)
        .without_feature(feature::NO_ASSERTS);
    let mut wrapper = signature_module(fn_name, &wrapper_target, &args, &base_module);
    wrapper.functions[0].pipeline.body = wrapper_body(fn_name, &args, &subs);
    let made = aot::compile_module(&wrapper, &[LlvmOutput::Object])?;
    let object = made.outputs.into_iter().next().unwrap_or_default();
    match &library {
        Some(lib) => {
            let stem = lib.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            members.insert(0, Member { name: format!("{stem}_wrapper.o"), data: object, symbols: made.symbols });
            write(lib, &static_library(&members, &base))?;
        }
        None => {
            let obj = path_of(OutputFileType::Object).expect("checked above");
            write(&add_suffix(&obj, "_wrapper"), &object)?;
        }
    }

    // Text outputs describe the wrapper.
    let signature = signature_module(fn_name, &base, &args, &base_module);
    let text: Vec<(OutputFileType, PathBuf)> = outputs
        .iter()
        .filter(|o| !is_per_target(o.0) && o.0 != OutputFileType::StaticLibrary)
        .cloned()
        .collect();
    compile_module_to_files(&signature, &text)
}
