//! A `Module`: the lowered functions of ahead-of-time compilation and
//! everything their object file carries (Halide's Module.h), before code
//! generation. The JIT and every ahead-of-time writer (object, assembly,
//! bitcode, C header, Python extension, ...) consume this one description.
//!
//! `lower_module` lowers a pipeline for a target with the argument list the
//! caller gives (Halide's calling convention: those arguments in that
//! order, then one buffer per output value) and with the entry code a C
//! caller needs (bounds queries and argument checks, `lower/entry_checks.rs`).

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::lang::function::Function;
use crate::lang::parameter::Parameter;
use crate::lower::arguments::InputBuffer;
use crate::lower::{ArgumentEstimates, ArgumentKind, LowerOptions, LoweredArgument, LoweredPipeline};
use crate::target::{feature, Target};

/// How a function of a module is visible to the code linking it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    /// Callable from outside; no metadata.
    External,
    /// Callable from outside, with `NAME_argv` and `NAME_metadata`.
    ExternalPlusMetadata,
    /// Only for other functions of the module.
    Internal,
    /// A Hexagon offload kernel (`lower/inject_hexagon_rpc.rs`): callable
    /// from outside with `NAME_argv`, whose buffer arguments are Halide's
    /// `{uint64 device, host*}` pseudo-buffers, not `halide_buffer_t`s.
    HexagonKernel,
}

/// One function of a module.
#[derive(Clone, Debug)]
pub struct ModuleFunction {
    pub pipeline: LoweredPipeline,
    pub linkage: Linkage,
}

#[derive(Clone, Debug)]
pub struct Module {
    pub name: String,
    pub target: Target,
    pub functions: Vec<ModuleFunction>,
    /// Buffers the functions read that are part of the code (an `hl.Buffer`
    /// used in the algorithm and not passed as an argument): the object
    /// carries their contents and shape.
    pub buffers: Vec<(String, Buffer)>,
    /// What an autoscheduler chose for the pipeline, if one ran (the
    /// `schedule` output writes it).
    pub auto_schedule: Option<crate::autoschedule::AutoSchedulerResults>,
    /// `remap_metadata_name(from, to)`: the name an argument has in the
    /// functions' `NAME_metadata()` (Halide's MetadataNameMap).
    pub metadata_name_map: std::collections::BTreeMap<String, String>,
    /// The `hexagon()` loop nests offloaded from an ARM target: the
    /// functions of the Hexagon module the object embeds (as the buffers
    /// `inject_hexagon_rpc::CODE_BUFFER` and `RUNTIME_BUFFER`, made when
    /// the module is compiled).
    pub hexagon_kernels: Vec<ModuleFunction>,
    /// The `buffers` the code writes (the offload's state): embedded
    /// writable, zero at load.
    pub writable_buffers: Vec<String>,
}

impl Module {
    pub fn new(name: impl Into<String>, target: Target) -> Module {
        Module {
            name: name.into(),
            target,
            functions: vec![],
            buffers: vec![],
            auto_schedule: None,
            metadata_name_map: Default::default(),
            hexagon_kernels: vec![],
            writable_buffers: vec![],
        }
    }

    /// The functions other code can call, in order.
    pub fn public_functions(&self) -> impl Iterator<Item = &ModuleFunction> {
        self.functions.iter().filter(|f| f.linkage != Linkage::Internal)
    }

    /// Add the functions and buffers of `other` (Halide's `Module::append`).
    pub fn append(&mut self, other: &Module) -> Result<()> {
        for f in &other.functions {
            if self.functions.iter().any(|g| g.pipeline.name == f.pipeline.name) {
                return Err(Error::user(format!(
                    "Module {} already has a function named {}\n",
                    self.name, f.pipeline.name
                )));
            }
            self.functions.push(f.clone());
        }
        for (n, b) in &other.buffers {
            if !self.buffers.iter().any(|(m, c)| m == n && c.same_as(b)) {
                self.buffers.push((n.clone(), b.clone()));
            }
        }
        if !other.hexagon_kernels.is_empty() && !self.hexagon_kernels.is_empty() {
            return Err(Error::user(format!(
                "Module {} would hold the Hexagon offload of two pipelines; ferrohalide embeds one Hexagon module per object\n",
                self.name
            )));
        }
        self.hexagon_kernels.extend(other.hexagon_kernels.iter().cloned());
        self.writable_buffers.extend(other.writable_buffers.iter().cloned());
        Ok(())
    }
}

/// `link_modules(name, modules)`: one module holding every function of
/// `modules`, which must all be for the same target.
pub fn link_modules(name: &str, modules: &[Module]) -> Result<Module> {
    let Some(first) = modules.first() else {
        return Err(Error::user("link_modules needs at least one module\n"));
    };
    let mut out = Module::new(name, first.target.clone());
    for m in modules {
        if m.target != first.target {
            return Err(Error::user(format!(
                "Mismatched targets in modules to link ({}, {})\n",
                first.target, m.target
            )));
        }
        out.append(m)?;
    }
    Ok(out)
}

fn scalar_estimates(p: &Parameter) -> ArgumentEstimates {
    ArgumentEstimates {
        scalar_def: p.scalar(),
        scalar_min: p.min_value(),
        scalar_max: p.max_value(),
        scalar_estimate: p.lock().estimate.clone(),
        buffer_estimates: vec![],
    }
}

fn buffer_estimates(p: &Parameter) -> ArgumentEstimates {
    ArgumentEstimates {
        buffer_estimates: p
            .constraints()
            .into_iter()
            .map(|c| (c.min_estimate, c.extent_estimate))
            .collect(),
        ..Default::default()
    }
}

/// The message for an input the pipeline reads that the argument list
/// does not name (Halide's).
pub fn missing_argument(what: &str, name: &str, listed: &[Parameter]) -> Error {
    let listed: Vec<String> = listed.iter().map(|p| p.name()).collect();
    Error::user(format!(
        "Generated code refers to {what} {name}, which was not found in the argument list.\n\nArgument list specified: {}\n\n",
        listed.join(" ")
    ))
}

/// Every ImageParam, then every scalar Param, the pipeline reads must be in
/// `arguments` (Halide's check, with its full message).
pub fn check_arguments(inputs: &crate::lower::arguments::Inputs, arguments: &[Parameter]) -> Result<()> {
    let images = inputs.buffers.iter().filter_map(|b| match b {
        InputBuffer::Param(p) => Some(("image parameter", p)),
        InputBuffer::Bound(_) => None,
    });
    let scalars = inputs.scalars.iter().map(|p| ("parameter", p));
    let referenced: Vec<(&str, &Parameter)> = images.chain(scalars).collect();
    let Some((what, p)) = referenced.iter().find(|(_, p)| !arguments.iter().any(|q| q.same_as(p))) else {
        return Ok(());
    };
    let listed: String = arguments.iter().map(|a| format!("{} ", a.name())).collect();
    let used: String = referenced.iter().map(|(_, p)| format!("{} ", p.name())).collect();
    Err(Error::user(format!(
        "Generated code refers to {what} {}, which was not found in the argument list.\n\nArgument list specified: {listed}\n\nParameters referenced in generated code: {used}\n\n",
        p.name()
    )))
}

/// Lower the pipeline computing `outputs` into a module with one public
/// function `fn_name(arguments..., outputs...)` for `target`.
pub fn lower_module(
    outputs: &[Function],
    requirements: &[crate::lang::requirement::Requirement],
    arguments: &[Parameter],
    fn_name: &str,
    target: &Target,
) -> Result<Module> {
    for o in outputs {
        if !o.has_pure_definition() {
            return Err(Error::user(format!(
                "Can't compile Pipeline with undefined output Func: {}.\n",
                o.name()
            )));
        }
    }
    if !is_c_name(fn_name) {
        return Err(Error::user(format!(
            "The function name \"{fn_name}\" is not a valid C identifier\n"
        )));
    }
    for (i, a) in arguments.iter().enumerate() {
        if arguments[..i].iter().any(|b| b.name() == a.name()) {
            return Err(Error::user(format!(
                "The argument list has two arguments named {}\n",
                a.name()
            )));
        }
    }
    let options = LowerOptions {
        no_asserts: target.has_feature(feature::NO_ASSERTS),
        target: target.clone(),
        entry_checks: true,
        requirements: requirements.to_vec(),
    };
    let lowered = crate::lower::lower_with(outputs, fn_name, &options)?;
    let inputs = &lowered.inputs;
    check_arguments(inputs, arguments)?;
    let mut module = Module::new(fn_name, target.clone());
    for b in &inputs.buffers {
        if let InputBuffer::Bound(buf) = b {
            module.buffers.push((buf.name(), buf.clone()));
        }
    }
    // Halide's `user_context` feature: the caller passes a context first.
    let user_context = target.has_feature(feature::USER_CONTEXT).then(|| LoweredArgument {
        name: crate::lower::entry_checks::USER_CONTEXT.to_string(),
        kind: ArgumentKind::InputScalar,
        ty: crate::ir::Type::handle(),
        dimensions: 0,
        estimates: Default::default(),
    });
    let mut args: Vec<LoweredArgument> = user_context.into_iter().collect();
    args.extend(arguments
        .iter()
        .map(|p| LoweredArgument {
            name: p.name(),
            kind: if p.is_buffer() {
                ArgumentKind::InputBuffer
            } else {
                ArgumentKind::InputScalar
            },
            ty: p.ty(),
            dimensions: if p.is_buffer() { p.dimensions() } else { 0 },
            estimates: if p.is_buffer() {
                buffer_estimates(p)
            } else {
                scalar_estimates(p)
            },
        }));
    let output_params: Vec<Parameter> = outputs.iter().flat_map(|f| f.output_params()).collect();
    for a in lowered.pipeline.args.iter().filter(|a| a.kind == ArgumentKind::OutputBuffer) {
        let mut a = a.clone();
        if let Some(p) = output_params.iter().find(|p| p.name() == a.name) {
            a.estimates = buffer_estimates(p);
        }
        args.push(a);
    }
    for (i, a) in args.iter().enumerate() {
        if args[..i].iter().any(|b| b.name == a.name) {
            return Err(Error::user(format!(
                "The argument {} has the name of an output of the pipeline\n",
                a.name
            )));
        }
    }
    module.functions.push(ModuleFunction {
        pipeline: LoweredPipeline {
            name: fn_name.to_string(),
            args,
            body: lowered.pipeline.body,
        },
        linkage: Linkage::ExternalPlusMetadata,
    });
    for name in &lowered.state_buffers {
        module.buffers.push((name.clone(), Buffer::new(crate::ir::Type::uint(64), &[1], Some(name.clone()))?));
        module.writable_buffers.push(name.clone());
    }
    module.hexagon_kernels = lowered
        .hexagon_kernels
        .into_iter()
        .map(|pipeline| ModuleFunction { pipeline, linkage: Linkage::HexagonKernel })
        .collect();
    Ok(module)
}

/// A C identifier: what a function name must be to be declared in C.
pub fn is_c_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Scalar metadata values must be constants; anything else is dropped.
pub fn constant_or_none(e: &Option<Expr>) -> Option<Expr> {
    e.as_ref().filter(|e| e.is_const()).cloned()
}
