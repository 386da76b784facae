//! Realizing Funcs from Rust: lower, JIT-compile (cached), bind the
//! arguments, run.
//!
//! Compiled code is cached on the pipeline's first output Func
//! (`Function::compiled_code`), so it is freed with that Func and shared by
//! every thread. An entry is keyed by the identity and version of every
//! Func in the pipeline (any definition or schedule change bumps a
//! version), by what lowering specializes on in each bound input Buffer
//! (type, rank, dense innermost dimension), by the Parameters' ranges and
//! constraints (a process-wide version) and by the target. Param values and
//! ImageParam buffers are arguments: changing them never recompiles.
//!
//! Arguments are checked before the pipeline runs, in Halide's order:
//! missing values and null buffers, then each buffer's element type and
//! dimensionality; the compiled code then checks regions, constraints and
//! Param ranges itself (lower/buffer_checks.rs).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use ferrohalide_core::analysis::bounds::Region;
use ferrohalide_core::analysis::evaluate::{Evaluator, Value};
use ferrohalide_core::analysis::substitute::substitute_map;
use ferrohalide_core::ir::Expr;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::Type;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::parameter::{immediate_value, ScalarInput};
use ferrohalide_core::lang::print::ir_type_name;
use ferrohalide_core::lang::requirement::Requirement;
use ferrohalide_core::lang::tuple::{element_buffer_name, element_buffer_names};
use ferrohalide_core::lower::arguments::{InputBuffer, Inputs};
use ferrohalide_core::lower::environment::{bound_input_buffers, build_environment};
use ferrohalide_core::lower::{lower_with, ArgumentKind, LowerOptions, Lowered, LoweredArgument};
use ferrohalide_core::target::{feature, Target};
use ferrohalide_core::{Error, Result};
use ferrohalide_runtime::halide_dimension_t;

use ferrohalide_codegen_llvm::jit::{ArgValue, JitModule, ScalarValue};

use crate::frontend_cache;
use ferrohalide_codegen_llvm::target::JitTarget;

/// What a compiled pipeline depends on: the Funcs (identity and version)
/// and the Buffers bound in their definitions (`graph`), per bound Buffer
/// what lowering specializes on (its type, rank, and whether its innermost
/// stride is 1), the Parameters' constraints and the target. Built on
/// every realize, so it shares the graph walk's answer instead of copying it.
#[derive(Clone)]
struct CacheKey {
    graph: Arc<GraphState>,
    inputs: Vec<(Type, usize, bool)>,
    constraints: u64,
    target: Target,
    /// Compiled with the entry code of a C caller (bounds queries).
    entry_checks: bool,
}

impl PartialEq for CacheKey {
    fn eq(&self, other: &CacheKey) -> bool {
        (Arc::ptr_eq(&self.graph, &other.graph) || self.graph.same_graph(&other.graph))
            && self.inputs == other.inputs
            && self.constraints == other.constraints
            && self.target == other.target
            && self.entry_checks == other.entry_checks
    }
}

/// A compiled pipeline and what running it needs. It holds no Func and no
/// IR statement: it is cached on a Func, which a link back would keep
/// alive forever, and the lowered statement is only needed to compile.
pub struct Compiled {
    /// The pipeline's name and arguments (inputs, then outputs).
    pub name: String,
    pub args: Vec<LoweredArgument>,
    /// Per output, the region its loop nest writes (`Lowered::output_regions`).
    pub output_regions: Vec<Region>,
    /// The pipeline's inputs: ImageParams, bound Buffers and scalar Params.
    pub inputs: Inputs,
    pub module: JitModule,
    pub target: Target,
    /// The output regions of the last `realize(sizes)`.
    regions: RegionMemo,
}

impl Compiled {
    fn new(
        name: String,
        args: Vec<LoweredArgument>,
        output_regions: Vec<Region>,
        inputs: Inputs,
        module: JitModule,
        target: Target,
    ) -> Compiled {
        let regions = RegionMemo::new(&output_regions, &inputs);
        Compiled { name, args, output_regions, inputs, module, target, regions }
    }
}

/// The output regions the last `realize(sizes)` of a compilation computed
/// (`grown_regions`), and what they were computed from: the requested
/// region and the values of the Params and input Buffer shapes that the
/// region expressions name (usually none). Evaluating the expressions
/// built a map of every input's bounds on every call: half the time of a
/// 64x64 realize (3.5 of 7 us).
struct RegionMemo {
    scalars: Vec<usize>,
    buffers: Vec<usize>,
    last: std::sync::Mutex<Option<(RegionKey, Vec<Vec<(i64, i64)>>)>>,
}

#[derive(PartialEq)]
struct RegionKey {
    requested: Vec<(i64, i64)>,
    /// The named Params' values: type and bits (a float by its bit
    /// pattern, so that 0.0 and -0.0 are two keys).
    scalars: Vec<Option<(Type, i128)>>,
    buffers: Vec<Option<Vec<(i32, i32, i32)>>>,
}

impl RegionMemo {
    fn new(output_regions: &[Region], inputs: &Inputs) -> RegionMemo {
        let mut named = ferrohalide_core::fast_hash::FastSet::default();
        for iv in output_regions.iter().flatten() {
            for e in iv.min.iter().chain(iv.max.iter()) {
                named.extend(ferrohalide_core::ir::visit::vars_used(e));
            }
        }
        let scalars = (0..inputs.scalars.len())
            .filter(|&i| named.contains(&inputs.scalars[i].name()))
            .collect();
        let buffers = (0..inputs.buffers.len())
            .filter(|&i| {
                let prefix = format!("{}.", inputs.buffers[i].name());
                named.iter().any(|v| v.starts_with(&prefix))
            })
            .collect();
        RegionMemo { scalars, buffers, last: Default::default() }
    }

    fn key(&self, inputs: &Inputs, requested: &[(i64, i64)]) -> RegionKey {
        RegionKey {
            requested: requested.to_vec(),
            scalars: self
                .scalars
                .iter()
                .map(|&i| {
                    let e = inputs.scalars[i].scalar_for_run().ok()?;
                    let bits = match immediate_value(&e)? {
                        ScalarInput::Int(v) => v,
                        ScalarInput::Float(f) => f.to_bits() as i128,
                        ScalarInput::Bool(b) => b as i128,
                    };
                    Some((e.ty(), bits))
                })
                .collect(),
            buffers: self
                .buffers
                .iter()
                .map(|&i| {
                    let b = inputs.buffers[i].buffer()?;
                    Some(b.dims().iter().map(|d| (d.min, d.extent, d.stride)).collect())
                })
                .collect(),
        }
    }
}

/// One cached compilation, on its first output Func.
struct CacheEntry {
    key: CacheKey,
    compiled: Arc<Compiled>,
}

/// Compilations kept per Func (targets, input layouts, schedules tried in
/// turn); the oldest goes first.
const CACHE_CAPACITY: usize = 8;

static COMPILATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many pipelines this process has JIT-compiled (cache misses).
pub fn compilations() -> u64 {
    COMPILATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

fn cache_key(graph: Arc<GraphState>, target: &Target, entry_checks: bool) -> CacheKey {
    let inputs = graph
        .buffers
        .iter()
        .map(|(_, b)| {
            let dense = b.dim(0).map_or(true, |d| d.stride == 1);
            (b.ty(), b.dimensions(), dense)
        })
        .collect();
    CacheKey {
        graph,
        inputs,
        constraints: ferrohalide_core::lang::parameter::constraints_version(),
        target: target.clone(),
        entry_checks,
    }
}

/// The pipeline's Funcs with their versions, and the Buffers their
/// definitions read, as of `epoch` (`function::current_version`).
struct GraphState {
    epoch: u64,
    outputs: Vec<usize>,
    requirements: Vec<u64>,
    funcs: Vec<(usize, u64)>,
    buffers: Vec<(String, Buffer)>,
}

impl GraphState {
    fn is_of(&self, outputs: &[Function], requirements: &[Requirement]) -> bool {
        self.outputs.iter().copied().eq(outputs.iter().map(|f| f.id()))
            && self.requirements.iter().copied().eq(requirements.iter().map(|r| r.id))
    }

    /// The same pipeline in the same state, whenever each was walked.
    fn same_graph(&self, other: &GraphState) -> bool {
        self.outputs == other.outputs
            && self.requirements == other.requirements
            && self.funcs == other.funcs
            && self.buffers.len() == other.buffers.len()
            && self.buffers.iter().zip(&other.buffers).all(|(a, b)| a.0 == b.0)
    }
}

/// The Funcs (with versions) and bound Buffers of the pipeline of
/// `outputs`. Finding them walks every definition; but every change to
/// any Func takes a fresh value of one process-wide version counter, so
/// while that counter stands still the last walk's answer (kept in `memo`,
/// the first output's cache) is still the answer: a realize in a loop
/// skips the walk. (A Buffer's own layout can change without a Func
/// changing: callers read it from the Buffers each time.)
fn graph_state(
    outputs: &[Function],
    requirements: &[Requirement],
    memo: &mut Vec<Arc<dyn Any + Send + Sync>>,
) -> Result<Arc<GraphState>> {
    let epoch = ferrohalide_core::lang::function::current_version();
    let last = memo
        .iter()
        .find(|e| e.is::<GraphState>())
        .and_then(|e| e.clone().downcast::<GraphState>().ok());
    if let Some(g) = last.filter(|g| g.epoch == epoch && g.is_of(outputs, requirements)) {
        return Ok(g);
    }
    let env = build_environment(outputs)?;
    let mut funcs: Vec<(usize, u64)> = env.sources.iter().map(|f| (f.id(), f.version())).collect();
    funcs.sort();
    let graph = Arc::new(GraphState {
        epoch,
        outputs: outputs.iter().map(|f| f.id()).collect(),
        requirements: requirements.iter().map(|r| r.id).collect(),
        funcs,
        buffers: bound_input_buffers(&env)?,
    });
    memo.retain(|e| !e.is::<GraphState>());
    memo.push(graph.clone());
    Ok(graph)
}

/// The target ahead-of-time compilation uses for `target`: the host when
/// it is the unknown `Target()`.
pub fn resolve_aot_target(target: &Target) -> Target {
    ferrohalide_codegen_llvm::target::init_host_target();
    if *target == Target::default() {
        Target::host()
    } else {
        target.clone()
    }
}

/// The target a realization without an explicit one uses (and what
/// `Target()`, the unknown target, stands for).
pub fn resolve_target(target: Option<&Target>) -> Result<Target> {
    ferrohalide_codegen_llvm::target::init_host_target();
    match target {
        Some(t) if *t != Target::default() => Ok(t.clone()),
        _ => Target::jit_from_environment(),
    }
}

impl CacheKey {
    /// Is `self` (an entry in the cache) for an older state of the same
    /// Funcs than `current`? It can never be used again: versions only grow.
    fn outdated_by(&self, current: &CacheKey) -> bool {
        let (old, new) = (&self.graph, &current.graph);
        old.outputs == new.outputs
            && old.requirements == new.requirements
            && old.funcs.len() == new.funcs.len()
            && old.funcs.iter().zip(&new.funcs).all(|(a, b)| a.0 == b.0)
            && self.entry_checks == current.entry_checks
            && (old.funcs != new.funcs || self.constraints != current.constraints)
    }
}

/// Lower and compile `outputs` (with the pipeline's `requirements`) for
/// `target`, or fetch the cached compilation.
pub fn compile_for(
    outputs: &[Function],
    requirements: &[Requirement],
    target: Option<&Target>,
) -> Result<Arc<Compiled>> {
    compile_with(outputs, requirements, target, false)
}

/// `compile_for`, optionally with the entry code a C caller gets (bounds
/// queries: what `infer_input_bounds` runs).
pub fn compile_with(
    outputs: &[Function],
    requirements: &[Requirement],
    target: Option<&Target>,
    entry_checks: bool,
) -> Result<Arc<Compiled>> {
    let Some(first) = outputs.first() else {
        return Err(Error::user("Can't compile a Pipeline with no outputs.\n"));
    };
    // Held while compiling: threads asking for the same pipeline wait for
    // one compilation instead of repeating it.
    let mut cache = first.compiled_code();
    let graph = graph_state(outputs, requirements, &mut cache)?;
    let target = match target.filter(|t| **t != Target::default()) {
        Some(t) => t.clone(),
        None => match last_jit_target(&graph, &cache) {
            Some(t) => t,
            None => resolve_target(None)?,
        },
    };
    let key = cache_key(graph, &target, entry_checks);
    let entries = || cache.iter().filter_map(|e| e.downcast_ref::<CacheEntry>());
    if let Some(e) = entries().find(|e| e.key == key) {
        return Ok(e.compiled.clone());
    }
    let compiled = Arc::new(compile_uncached(outputs, requirements, target, entry_checks)?);
    cache.retain(|e| {
        e.downcast_ref::<CacheEntry>()
            .map_or(true, |e| !e.key.outdated_by(&key))
    });
    let compilations: Vec<usize> = (0..cache.len()).filter(|&i| cache[i].is::<CacheEntry>()).collect();
    if compilations.len() >= CACHE_CAPACITY {
        cache.remove(compilations[0]);
    }
    let entry: Arc<dyn Any + Send + Sync> = Arc::new(CacheEntry {
        key,
        compiled: compiled.clone(),
    });
    cache.push(entry);
    Ok(compiled)
}

/// The target the pipeline, in its present state, was last compiled for,
/// if it was: as in Halide, a realization that names no target reuses it
/// (and does not read `HL_JIT_TARGET` again) until a Func changes.
fn last_jit_target(graph: &Arc<GraphState>, memo: &[Arc<dyn Any + Send + Sync>]) -> Option<Target> {
    memo.iter()
        .rev()
        .filter_map(|e| e.downcast_ref::<CacheEntry>())
        .find(|e| Arc::ptr_eq(&e.key.graph, graph) || e.key.graph.same_graph(graph))
        .map(|e| e.key.target.clone())
}

fn compile_uncached(
    outputs: &[Function],
    requirements: &[Requirement],
    target: Target,
    entry_checks: bool,
) -> Result<Compiled> {
    let jit_target = JitTarget::for_target(&target)?;
    // The persistent cache's front-end entry: no lowering at all on a hit.
    let front = frontend_cache::front_end(outputs, requirements, &target, entry_checks, &jit_target);
    let hit = front.as_ref().and_then(frontend_cache::load);
    if let (Some((interface, module, stored_key, description)), Some(front)) = (hit, &front) {
        if frontend_cache::verifying() {
            let (lowered, _) = lower_collecting(outputs, requirements, &target, entry_checks);
            frontend_cache::verify(front, &lowered?, &jit_target, &stored_key, &description)?;
        }
        let frontend_cache::Interface { name, args, output_regions, inputs } = interface;
        COMPILATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return Ok(Compiled::new(name, args, output_regions, inputs, module, target));
    }
    let (lowered, warnings) = lower_collecting(outputs, requirements, &target, entry_checks);
    for w in &warnings {
        ferrohalide_core::output::emit(w.clone());
    }
    let lowered = lowered?;
    let (module, lowered_key, object) = frontend_cache::compile(&lowered, &jit_target)?;
    if let Some(front) = &front {
        frontend_cache::store(front, &lowered, &warnings, &lowered_key, &object);
    }
    COMPILATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(Compiled::new(
        lowered.pipeline.name,
        lowered.pipeline.args,
        lowered.output_regions,
        lowered.inputs,
        module,
        target,
    ))
}

/// Lower for the JIT, with the text (warnings) lowering emitted.
fn lower_collecting(
    outputs: &[Function],
    requirements: &[Requirement],
    target: &Target,
    entry_checks: bool,
) -> (Result<Lowered>, Vec<String>) {
    let name = outputs.first().map(|f| f.name()).unwrap_or_default();
    let options = LowerOptions {
        no_asserts: target.has_feature(feature::NO_ASSERTS),
        target: target.clone(),
        entry_checks,
        requirements: requirements.to_vec(),
    };
    ferrohalide_core::output::collect(|| {
        let lowered = lower_with(outputs, &name, &options)?;
        if !lowered.hexagon_kernels.is_empty() {
            return Err(Error::user(format!(
                "hexagon() loops are offloaded only in ahead-of-time output (compile_to_file and friends) for an ARM target with hvx; the JIT (target {target}) cannot run them\n"
            )));
        }
        Ok(lowered)
    })
}

/// Lower and compile `outputs` for the default JIT target (cached).
pub fn compile(outputs: &[Function]) -> Result<Arc<Compiled>> {
    compile_for(outputs, &[], None)
}

/// Check the buffer passed for output buffer `name` (a value of `f`, of type `ty`).
fn check_output_buffer(f: &Function, name: &str, ty: Type, b: &Buffer) -> Result<()> {
    check_buffer("Output", name, ty, f.dimensions(), b)
}

/// A buffer argument must have the declared element type and rank.
fn check_buffer(kind: &str, name: &str, ty: Type, dims: usize, b: &Buffer) -> Result<()> {
    if b.ty() != ty {
        return Err(Error::user(format!(
            "{kind} buffer {name} has type {} but type of the buffer passed in is {}\n",
            ir_type_name(ty),
            ir_type_name(b.ty())
        )));
    }
    if b.dimensions() != dims {
        return Err(Error::user(format!(
            "{kind} buffer {name} requires a buffer of exactly {dims} dimensions, but the buffer passed in has {} dimensions\n",
            b.dimensions()
        )));
    }
    Ok(())
}

/// A value for one input of a pipeline.
#[derive(Clone, Debug)]
pub enum InputValue {
    Scalar(ScalarInput),
    Buffer(Buffer),
}

pub(crate) fn scalar_value(v: ScalarInput) -> ScalarValue {
    match v {
        ScalarInput::Int(i) if i < 0 => ScalarValue::Int(i as i64),
        ScalarInput::Int(i) => ScalarValue::UInt(i as u64),
        ScalarInput::Float(f) => ScalarValue::Float(f),
        ScalarInput::Bool(b) => ScalarValue::Bool(b),
    }
}

/// The values realize uses for the inputs: what the Params and
/// ImageParams hold now, and the bound Buffers.
fn stored_input(compiled: &Compiled, a: &LoweredArgument) -> Result<InputValue> {
    if a.kind == ArgumentKind::InputScalar {
        let p = compiled
            .inputs
            .scalars
            .iter()
            .find(|p| p.name() == a.name)
            .ok_or_else(|| Error::internal(format!("missing scalar input {}", a.name)))?;
        let v = p.scalar_for_run()?;
        return immediate_value(&v)
            .map(InputValue::Scalar)
            .ok_or_else(|| Error::internal(format!("Param {} holds a non-constant", a.name)));
    }
    match compiled.inputs.buffers.iter().find(|b| b.name() == a.name) {
        Some(InputBuffer::Bound(b)) => Ok(InputValue::Buffer(b.clone())),
        Some(InputBuffer::Param(p)) => p
            .buffer()
            .map(InputValue::Buffer)
            .ok_or_else(|| Error::user(format!("Buffer argument {} is nullptr\n", a.name))),
        None => Err(Error::internal(format!("missing input buffer {}", a.name))),
    }
}

/// Run a compiled pipeline: `input` gives the value of each input
/// argument, `outputs` the output buffers in argument order.
pub fn run(
    compiled: &Compiled,
    input: &mut dyn FnMut(&LoweredArgument) -> Result<InputValue>,
    outputs: &[Buffer],
) -> Result<()> {
    let p = compiled;
    // Scalars first: a Param without a value is reported before an
    // unbound ImageParam.
    let mut slots: Vec<Option<InputValue>> = vec![None; p.args.len()];
    for (slot, a) in slots.iter_mut().zip(&p.args) {
        if a.kind == ArgumentKind::InputScalar {
            *slot = Some(input(a)?);
        }
    }
    let mut out_index = 0;
    for (slot, a) in slots.iter_mut().zip(&p.args) {
        match a.kind {
            ArgumentKind::OutputBuffer => {
                out_index += 1;
                *slot = Some(InputValue::Buffer(
                    outputs.get(out_index - 1).cloned().ok_or_else(|| {
                        Error::internal(format!("missing output buffer {}", a.name))
                    })?,
                ));
            }
            ArgumentKind::InputBuffer => *slot = Some(input(a)?),
            ArgumentKind::InputScalar => {}
        }
    }
    // Every slot is filled: each argument is a scalar, an input or an output.
    let values = || slots.iter().flatten();
    for (a, v) in p.args.iter().zip(values()) {
        match (a.kind, v) {
            (ArgumentKind::InputBuffer, InputValue::Buffer(b)) => {
                check_buffer("Input", &a.name, a.ty, a.dimensions, b)?
            }
            (ArgumentKind::OutputBuffer, InputValue::Buffer(b)) => {
                check_buffer("Output", &a.name, a.ty, a.dimensions, b)?
            }
            (ArgumentKind::InputScalar, InputValue::Scalar(_)) => {}
            _ => {
                return Err(Error::type_error(format!(
                    "argument {} was given a value of the wrong kind",
                    a.name
                )))
            }
        }
    }
    // Build halide_buffer_t's for every buffer argument, their dimensions
    // in one array that lives for the duration of the call (pointed to
    // once it is complete, so it never moves under them).
    let mut dims: Vec<halide_dimension_t> = Vec::with_capacity(4 * p.args.len());
    let mut raws: Vec<Option<(ferrohalide_runtime::halide_buffer_t, usize)>> =
        Vec::with_capacity(p.args.len());
    for v in values() {
        raws.push(match v {
            InputValue::Buffer(b) => {
                let start = dims.len();
                Some((b.raw_appending_dims(&mut dims), start))
            }
            InputValue::Scalar(_) => None,
        });
    }
    for (r, start) in raws.iter_mut().flatten() {
        r.dim = dims[*start..].as_mut_ptr();
    }
    let args: Vec<ArgValue> = raws
        .iter_mut()
        .zip(values())
        .map(|(r, v)| match (r, v) {
            (Some((r, _)), _) => ArgValue::Buffer(r as *mut _),
            (None, InputValue::Scalar(s)) => ArgValue::Scalar(scalar_value(*s)),
            (None, InputValue::Buffer(_)) => unreachable!("buffers have raw descriptors"),
        })
        .collect();
    let debug = compiled.target.has_feature(feature::DEBUG);
    if debug {
        eprintln!("Entering Pipeline {}", p.name);
        for (a, v) in p.args.iter().zip(values()) {
            match v {
                InputValue::Buffer(b) => eprintln!(" Buffer {}: {:?}", a.name, b.dims()),
                InputValue::Scalar(s) => eprintln!(" Scalar {}: {s:?}", a.name),
            }
        }
    }
    let r = compiled.module.run(&args);
    if debug {
        eprintln!("Exiting Pipeline {}", p.name);
    }
    r
}

/// Realize `outputs` over a region of the given extents (mins 0), returning
/// one Buffer per output value (tuple elements flattened in order).
///
/// As in Halide, when the schedule writes beyond the requested region (a
/// split that rounds up or shifts inwards), the storage is made large enough
/// and the returned Buffer is a view of the requested region.
pub fn realize(outputs: &[Function], sizes: &[i32]) -> Result<Vec<Buffer>> {
    realize_for(outputs, &[], sizes, None)
}

/// `realize` for a pipeline with requirements and an explicit target.
pub fn realize_for(
    outputs: &[Function],
    requirements: &[Requirement],
    sizes: &[i32],
    target: Option<&Target>,
) -> Result<Vec<Buffer>> {
    for f in outputs {
        if !f.has_pure_definition() {
            return Err(Error::user("Can't realize undefined Func."));
        }
        if sizes.len() != f.dimensions() {
            return Err(Error::user(format!(
                "Func {} is defined with {} dimensions, but realize() is requesting a realization with {} dimensions.",
                f.name(),
                f.dimensions(),
                sizes.len()
            )));
        }
    }
    for (d, &e) in sizes.iter().enumerate() {
        if e < 0 {
            let name = outputs.first().map(|f| f.name()).unwrap_or_default();
            return Err(Error::user(format!(
                "The extents for buffer Output buffer {name} dimension {d} is negative ({e})\n"
            )));
        }
    }
    let compiled = compile_for(outputs, requirements, target)?;
    // Never smaller than requested: a region the pipeline doesn't write (a
    // `bound` narrower than asked) is then reported by the pipeline's own
    // checks, not returned uninitialized.
    let requested: Vec<(i64, i64)> = sizes.iter().map(|&e| (0, e as i64 - 1)).collect();
    let regions = match memoized_grown_regions(&compiled, outputs, &requested)? {
        Some(regions) => regions,
        // A region that depends on the inputs' values (an output read at a
        // data-dependent place by another output) is asked of the pipeline
        // itself, as Halide does: a bounds-query call, which loads the
        // inputs (and repeats until nothing grows).
        None if compiled.inputs.buffers.iter().all(|b| b.buffer().is_some()) => {
            let queried = crate::infer_input_bounds::query_output_regions(outputs, requirements, sizes, target)?;
            queried
                .into_iter()
                .map(|region| {
                    region
                        .into_iter()
                        .zip(&requested)
                        .map(|((min, extent), &(lo, hi))| {
                            ((min as i64).min(lo), (min as i64 + extent as i64 - 1).max(hi))
                        })
                        .collect()
                })
                .collect()
        }
        // An unbound ImageParam: the run reports it.
        None => vec![requested.clone(); outputs.len()],
    };
    let mut full = vec![];
    for (f, dims) in outputs.iter().zip(regions) {
        let name = f.name();
        let mins: Vec<i64> = dims.iter().map(|d| d.0).collect();
        let extents: Vec<i64> = dims.iter().map(|&(lo, hi)| hi.saturating_sub(lo).saturating_add(1)).collect();
        let max = compiled.target.maximum_buffer_size();
        let (mins, extents) = output_shape(&name, &mins, &extents, max)?;
        for ty in f.types() {
            let b = Buffer::new_uninitialized(ty, &extents, Some(name.clone()))?;
            b.set_min(&mins)?;
            full.push(b);
        }
    }
    realize_into_for(outputs, requirements, &full, target)?;
    // As Halide: the buffers are cropped back to the requested region if
    // the first one was grown; an output that only another output made
    // larger is then returned whole.
    let grown = |b: &Buffer| {
        b.dims().iter().zip(sizes).any(|(d, &e)| d.min != 0 || d.extent != e)
    };
    if full.first().is_some_and(grown) {
        full.iter().map(|b| crop_view(b, sizes)).collect()
    } else {
        Ok(full)
    }
}

/// The region (min, max per dimension) each output is allocated over for
/// `realize` of the `requested` region, from the outputs' regions
/// evaluated as Halide's bounds query would (None if one depends on more
/// than the Params and the inputs' shapes). Growing one output can make
/// another need more (its loops then cover more: a ShiftInwards split of
/// an output shifts below 0, and what it reads of a second output moves
/// with it, fuzz seed 36077), so this repeats until nothing grows, as
/// `infer_input_bounds`' query does. A region that never settles (the
/// output reads further out the larger it is: a ShiftInwards split wider
/// than the extent it splits) is refused, naming the output and dimension.
/// `grown_regions`, from the memo when nothing it depends on changed.
fn memoized_grown_regions(
    compiled: &Compiled,
    outputs: &[Function],
    requested: &[(i64, i64)],
) -> Result<Option<Vec<Vec<(i64, i64)>>>> {
    let key = compiled.regions.key(&compiled.inputs, requested);
    let mut last = compiled.regions.last.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((k, regions)) = last.as_ref() {
        if *k == key {
            return Ok(Some(regions.clone()));
        }
    }
    let regions = grown_regions(compiled, outputs, requested)?;
    if let Some(r) = &regions {
        *last = Some((key, r.clone()));
    }
    Ok(regions)
}

fn grown_regions(
    compiled: &Compiled,
    outputs: &[Function],
    requested: &[(i64, i64)],
) -> Result<Option<Vec<Vec<(i64, i64)>>>> {
    let mut regions = vec![requested.to_vec(); outputs.len()];
    for round in 0..=crate::infer_input_bounds::MAX_ROUNDS {
        let known = known_values(&compiled.inputs, outputs, &regions);
        let mut next = vec![];
        for (i, f) in outputs.iter().enumerate() {
            let name = f.name();
            let region = compiled.output_regions.get(i).cloned().unwrap_or_default();
            let mut dims = vec![];
            for (d, &(lo0, hi0)) in regions[i].iter().enumerate() {
                let iv = region.get(d);
                let lo = region_bound(&known, iv.and_then(|iv| iv.min.as_ref()), &name, d)?;
                let hi = region_bound(&known, iv.and_then(|iv| iv.max.as_ref()), &name, d)?;
                let (Some(lo), Some(hi)) = (lo, hi) else { return Ok(None) };
                dims.push((lo.min(lo0), hi.max(hi0)));
            }
            next.push(dims);
        }
        // A region beyond 32 bits is refused when it is allocated.
        let fits = |v: i64| i32::try_from(v).is_ok();
        if next == regions {
            return Ok(Some(regions));
        }
        // `regions` is what the run would get, `next` what it would need.
        if round == crate::infer_input_bounds::MAX_ROUNDS {
            return Err(unsettled_region(outputs, &regions, &next, requested));
        }
        regions = next;
        if !regions.iter().flatten().all(|&(lo, hi)| fits(lo) && fits(hi) && fits(hi - lo + 1)) {
            return Ok(Some(regions));
        }
    }
    Ok(Some(regions))
}

/// The error for an output whose region grows with every bounds query.
fn unsettled_region(
    outputs: &[Function],
    previous: &[Vec<(i64, i64)>],
    last: &[Vec<(i64, i64)>],
    requested: &[(i64, i64)],
) -> Error {
    let grown = outputs.iter().enumerate().find_map(|(i, f)| {
        let d = (0..last[i].len()).find(|&d| last[i][d] != previous[i][d])?;
        Some((f.name(), d, previous[i][d], last[i][d]))
    });
    let Some((name, d, (lo0, hi0), (lo, hi))) = grown else {
        return Error::internal("output regions reported unsettled but none grew");
    };
    let (req_lo, req_hi) = requested.get(d).copied().unwrap_or((0, 0));
    Error::user(format!(
        "The region of output {name} needed in dimension {d} never settles: the more of {name} the pipeline \
         computes, the more its loops reach (asked for [{req_lo}, {req_hi}], after {rounds} bounds queries \
         [{lo0}, {hi0}] and then [{lo}, {hi}]). A split of an output with ShiftInwards by a factor larger \
         than the extent it splits does this; use a smaller factor or a GuardWithIf tail.\n",
        rounds = crate::infer_input_bounds::MAX_ROUNDS,
    ))
}

/// What is known when `realize` sizes its outputs (Halide's bounds query):
/// the region of every output so far (in terms of the first buffer of
/// each: an output others read is computed where they read it), the scalar
/// Params' current values and the shapes of the input buffers.
fn known_values(inputs: &Inputs, outputs: &[Function], regions: &[Vec<(i64, i64)>]) -> HashMap<String, Expr> {
    let mut known = HashMap::new();
    for (f, region) in outputs.iter().zip(regions) {
        let first = element_buffer_name(&f.name(), f.types().len(), 0);
        for (d, &(lo, hi)) in region.iter().enumerate() {
            known.insert(format!("{first}.min.{d}"), Expr::i32(lo));
            known.insert(format!("{first}.extent.{d}"), Expr::i32(hi - lo + 1));
        }
    }
    for p in &inputs.scalars {
        if let Ok(v) = p.scalar_for_run() {
            known.insert(p.name(), v);
        }
    }
    for b in &inputs.buffers {
        let Some(buffer) = b.buffer() else { continue };
        for (d, dim) in buffer.dims().iter().enumerate() {
            let name = b.name();
            known.insert(format!("{name}.min.{d}"), Expr::i32(dim.min as i64));
            known.insert(format!("{name}.extent.{d}"), Expr::i32(dim.extent as i64));
            known.insert(format!("{name}.stride.{d}"), Expr::i32(dim.stride as i64));
        }
    }
    known
}

/// One bound of the region output `name` needs in dimension `d`, given
/// what is `known` (`None` if it depends on anything else). Evaluated as
/// the pipeline would (32-bit wrap-around), a bound that overflows is an
/// error: the pipeline could not address that region.
fn region_bound(
    known: &HashMap<String, Expr>,
    bound: Option<&Expr>,
    name: &str,
    d: usize,
) -> Result<Option<i64>> {
    let Some(bound) = bound else { return Ok(None) };
    let mut no_vars: HashMap<String, Value> = HashMap::new();
    let mut evaluator = Evaluator::new(&mut no_vars);
    let value = evaluator.eval(&substitute_map(known, bound));
    if evaluator.overflowed {
        return Err(Error::user(format!(
            "The region of output buffer {name} required in dimension {d} overflows 32-bit \
             arithmetic ({bound})\n"
        )));
    }
    Ok(match value.as_deref() {
        Ok([v]) => v.as_int().and_then(|v| i64::try_from(v).ok()),
        _ => None,
    })
}

/// The mins and extents of an output buffer about to be allocated, as
/// 32-bit values, after the check the pipeline makes on its output buffers
/// (Halide's message): no prefix of the dimensions may hold more than the
/// target's maximum buffer size in elements.
fn output_shape(name: &str, mins: &[i64], extents: &[i64], max: i64) -> Result<(Vec<i32>, Vec<i32>)> {
    let mut elements: i128 = 1;
    for &e in extents {
        elements *= e.max(0) as i128;
        if elements > max as i128 {
            return Err(Error::user(format!(
                "Total allocation for buffer {name} is {elements}, which exceeds the maximum size of {max}\n"
            )));
        }
    }
    let narrow = |v: i64, what: &str, d: usize| {
        i32::try_from(v).map_err(|_| {
            Error::user(format!(
                "The {what} of dimension {d} of the output buffer {name} would be {v}, which does not fit in 32 bits\n"
            ))
        })
    };
    let mins = mins.iter().enumerate().map(|(d, &m)| narrow(m, "min", d)).collect::<Result<_>>()?;
    let extents = extents.iter().enumerate().map(|(d, &e)| narrow(e, "extent", d)).collect::<Result<_>>()?;
    Ok((mins, extents))
}

/// A Buffer viewing the region [0, sizes) of `b`, sharing its storage.
fn crop_view(b: &Buffer, sizes: &[i32]) -> Result<Buffer> {
    let v = b.alias();
    v.set_name(b.name());
    v.crop_rect(&sizes.iter().map(|&e| (0, e)).collect::<Vec<_>>())?;
    Ok(v)
}

/// Realize `outputs` into caller-provided buffers (one per output value,
/// the elements of a Tuple in order).
pub fn realize_into(outputs: &[Function], buffers: &[Buffer]) -> Result<()> {
    realize_into_for(outputs, &[], buffers, None)
}

/// `realize_into` for a pipeline with requirements and an explicit target.
pub fn realize_into_for(
    outputs: &[Function],
    requirements: &[Requirement],
    buffers: &[Buffer],
    target: Option<&Target>,
) -> Result<()> {
    for f in outputs {
        if !f.has_pure_definition() {
            return Err(Error::user(format!(
                "Can't realize undefined Func {}.",
                f.name()
            )));
        }
    }
    // (The values' buffer names are only for messages, and nothing here
    // allocates: a realize in a loop builds none of them.)
    let count: usize = outputs.iter().map(|f| f.value_count()).sum();
    if count != buffers.len() {
        return Err(Error::user(format!(
            "Realization requires {} output(s) but pipeline produces {} result(s).\n",
            buffers.len(),
            count
        )));
    }
    // As in Halide, outputs may differ in dimensionality: each has its own buffer.
    let values = outputs.iter().flat_map(|f| (0..f.value_count()).map(move |i| (f, i)));
    for ((f, i), b) in values.zip(buffers) {
        let ty = f
            .value_type(i)
            .ok_or_else(|| Error::internal(format!("{} changed while realized", f.name())))?;
        if b.ty() != ty || b.dimensions() != f.dimensions() {
            check_output_buffer(f, &element_buffer_names(f)[i], ty, b)?;
        }
    }
    let compiled = compile_for(outputs, requirements, target)?;
    run(&compiled, &mut |a| stored_input(&compiled, a), buffers)
}
