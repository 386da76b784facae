//! Lowering: from Funcs and schedules to one loop-nest Stmt, pass by pass
//! (after Halide's Lower.cpp). The result, a `LoweredPipeline`, is what a
//! backend compiles.
//!
//! # The contract with backends
//! The body of a `LoweredPipeline` obeys these rules:
//! - For every buffer argument `b` the backend defines, before the body runs:
//!   the pointer `b` (its host memory, used as the buffer name of Load and
//!   Store), the Handle variable `b.buffer` (the `halide_buffer_t*`), and Int32
//!   variables `b.min.{d}`, `b.extent.{d}`, `b.stride.{d}` for each dimension d.
//!   Every scalar argument `p` is a variable `p` of its type.
//! - Load/Store name either a buffer argument or an enclosing Allocate; the
//!   index is in elements from the host pointer (strides and mins applied).
//! - Allocate's element count is the product of its extents; the backend frees
//!   the allocation when its body ends (Free statements are not emitted).
//! - Loops are Serial or Parallel only; no Provide, Realize or Func calls.
//! - An `Atomic` node (only inside a parallel loop) makes each store to its
//!   producer's buffers in its body atomic by itself: a read-modify-write of
//!   the stored element, recomputed from the value found there until no
//!   other thread changed it in between. One with a mutex name holds the
//!   explicit `halide_mutex_array_lock`/`unlock` calls of its body instead
//!   (`lower/add_atomic_mutex.rs`), and its stores are plain.
//! - AssertStmt's message is an `Intrinsic::Error` call whose args (string
//!   immediates and scalar values) are concatenated into the error message;
//!   a failed assertion stops the pipeline and reports that message.

use std::time::Instant;

use crate::analysis::bounds::{box_touched, Region, Scope};
use crate::analysis::func_value_bounds;
use crate::buffer::Buffer;
use crate::error::Result;
use crate::ir::{Stmt, Type};
use crate::lang::function::Function;

pub mod add_atomic_mutex;
pub mod add_split_factor_checks;
pub mod allocation_bounds_inference;
pub mod allocation_placement;
pub mod async_producers;
pub mod apply_split;
pub mod arguments;
pub mod bounds_inference;
pub mod buffer_checks;
pub mod entry_checks;
pub mod environment;
pub mod extern_stages;
pub mod debug_to_file;
pub mod inject_memoization;
pub mod inject_prefetch;
pub mod interleave_reductions;
pub mod fuse_loop_nests;
pub mod fused_groups;
pub mod find_intrinsics;
pub mod inject_hexagon_rpc;
pub mod sliding_window;
pub mod schedule_expr_checks;
pub mod storage_folding;
pub mod schedule_functions;
pub mod split_predicates;
pub mod split_scatter_gather;
pub mod storage_flattening;
pub mod target_query_ops;
pub mod tracing;
pub mod wrap_calls;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgumentKind {
    InputScalar,
    InputBuffer,
    OutputBuffer,
}

#[derive(Clone, Debug)]
pub struct LoweredArgument {
    pub name: String,
    pub kind: ArgumentKind,
    pub ty: Type,
    pub dimensions: usize,
    /// What the argument's metadata tells callers (ahead of time).
    pub estimates: ArgumentEstimates,
}

/// What Halide's metadata says of an argument besides its type: a
/// scalar's default, range and estimate (constants), a buffer's estimated
/// min and extent per dimension (for autoschedulers).
#[derive(Clone, Debug, Default)]
pub struct ArgumentEstimates {
    pub scalar_def: Option<crate::ir::Expr>,
    pub scalar_min: Option<crate::ir::Expr>,
    pub scalar_max: Option<crate::ir::Expr>,
    pub scalar_estimate: Option<crate::ir::Expr>,
    /// (min, extent) per dimension.
    pub buffer_estimates: Vec<(Option<crate::ir::Expr>, Option<crate::ir::Expr>)>,
}

#[derive(Clone, Debug)]
pub struct LoweredPipeline {
    pub name: String,
    pub args: Vec<LoweredArgument>,
    pub body: Stmt,
}

/// Output formats of `compile_to_lowered_stmt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtOutputFormat {
    Text,
    Html,
}

impl LoweredPipeline {
    /// The statement a backend compiles, as a function of its arguments
    /// (inputs, then outputs), in the given format.
    pub fn render(&self, format: StmtOutputFormat) -> String {
        let args: Vec<String> = self.args.iter().map(|a| a.name.clone()).collect();
        match format {
            StmtOutputFormat::Text => crate::ir::printer::function_to_text(&self.name, &args, &self.body),
            StmtOutputFormat::Html => {
                crate::ir::printer_html::function_to_html(&self.name, &args, &self.body)
            }
        }
    }
}

/// What `compile_to_lowered_stmt` writes: `outputs` lowered for `target`
/// (the unknown `Target()`: the host), rendered in `format`; every
/// ImageParam and Param the pipeline reads must be in `arguments`.
pub fn lowered_stmt(
    outputs: &[Function],
    arguments: &[crate::lang::parameter::Parameter],
    format: StmtOutputFormat,
    target: &crate::target::Target,
) -> crate::error::Result<String> {
    for o in outputs {
        if !o.has_pure_definition() {
            return Err(crate::error::Error::user(format!(
                "Can't compile Pipeline with undefined output Func: {}.",
                o.name()
            )));
        }
    }
    let name = outputs.first().map(|f| f.name()).unwrap_or_default();
    let options = LowerOptions { target: target.clone(), ..LowerOptions::default() };
    let lowered = lower_with(outputs, &name, &options)?;
    crate::module::check_arguments(&lowered.inputs, arguments)?;
    Ok(lowered.pipeline.render(format))
}

pub mod bound_constant_extent_loops;
pub mod lift_atomic_exprs;
pub mod lower_safe_promises;
pub mod partition_loops;
pub mod print_loop_nest;
pub mod privatize_atomic_reductions;
pub mod remove_unneeded_atomics;
pub mod simplify_definitions;
pub mod unroll_loops;
pub mod validate_device_loops;
pub mod validate_schedule;
pub mod vectorize_loops;
pub mod remove_undef;
pub mod skip_dead_stages;

/// A lowered pipeline plus the concrete input Buffers its Funcs read.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub pipeline: LoweredPipeline,
    /// Input buffers bound in the algorithm (`buf[x, y]` on a Buffer), by argument name.
    pub input_buffers: Vec<(String, Buffer)>,
    /// Per output, the region its loop nest writes, in terms of the output
    /// buffer's `f.min.d` / `f.extent.d` (splits may write beyond what is
    /// asked for; `realize` allocates that much and returns a crop).
    pub output_regions: Vec<Region>,
    /// The pipeline's inputs: ImageParams, bound Buffers and scalar Params.
    pub inputs: arguments::Inputs,
    /// The `hexagon()` loop nests offloaded from an ARM target
    /// (`inject_hexagon_rpc.rs`), as kernels for a Hexagon module.
    pub hexagon_kernels: Vec<LoweredPipeline>,
    /// The writable scalars (zero at load) the offload's host code keeps
    /// its state in, to embed in the module.
    pub state_buffers: Vec<String>,
}

/// Debug output: `HL_DEBUG_CODEGEN=2` (or higher) prints the IR after each
/// pass with its time to stderr.
struct PassLog {
    level: i32,
}

impl PassLog {
    fn new() -> PassLog {
        let level = std::env::var("HL_DEBUG_CODEGEN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        PassLog { level }
    }
    fn run(&self, name: &str, s: Stmt, pass: impl FnOnce(&Stmt) -> Result<Stmt>) -> Result<Stmt> {
        let t = Instant::now();
        let out = pass(&s)?;
        if self.level >= 2 {
            eprintln!(
                "--- {name} ({:.3} ms) ---\n{out}",
                t.elapsed().as_secs_f64() * 1e3
            );
        } else if self.level >= 1 {
            eprintln!("{name}: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(out)
    }
}

/// What lowering depends on besides the Funcs: the target, and the
/// pipeline's requirements.
#[derive(Clone, Debug, Default)]
pub struct LowerOptions {
    /// Halide's `no_asserts`: no run-time checks at all.
    pub no_asserts: bool,
    /// What the target queries (`target_bits()`, ...) answer; the unknown
    /// `Target()` stands for the host.
    pub target: crate::target::Target,
    /// Put the code a C caller needs in front (bounds queries, argument
    /// checks: `entry_checks.rs`); the JIT's driver checks on its side.
    pub entry_checks: bool,
    /// `Pipeline.add_requirement`s, checked first.
    pub requirements: Vec<crate::lang::requirement::Requirement>,
}

/// The loop partition policies the schedules set, by loop name.
fn partition_policies(
    env: &environment::Environment,
) -> std::collections::HashMap<String, crate::schedule::Partition> {
    let mut by_loop = std::collections::HashMap::new();
    for name in &env.order {
        for (k, stage) in env.get(name).stage_schedules() {
            let prefix = schedule_functions::stage_prefix(name, k);
            for d in stage.dims.iter().filter(|d| d.partition != Default::default()) {
                by_loop.insert(format!("{prefix}{}", d.var), d.partition);
            }
        }
    }
    by_loop
}

/// Lower the pipeline computing `outputs` to a single loop nest, in
/// Halide's pass order, with default options.
pub fn lower(outputs: &[Function], name: &str) -> Result<Lowered> {
    lower_with(outputs, name, &LowerOptions::default())
}

/// Lower the pipeline computing `outputs` to a single loop nest, in
/// Halide's pass order. Each line is one pass.
pub fn lower_with(outputs: &[Function], name: &str, options: &LowerOptions) -> Result<Lowered> {
    crate::stack::with_large_stack(|| lower_here(outputs, name, options))
}

/// `lower_with` on the current thread. The target queries (`hl.get_target()`
/// inside an Expr) answer for the compile target, set thread-locally here
/// because the large-stack thread is the one that lowers.
fn lower_here(outputs: &[Function], name: &str, options: &LowerOptions) -> Result<Lowered> {
    let target = if options.target == crate::target::Target::default() {
        crate::target::Target::host()
    } else {
        options.target.clone()
    };
    target.check_features_implemented()?;
    crate::lang::target_queries::with_compile_target(&target, || {
        lower_for_target(outputs, name, options, &target)
    })
}

/// A wrapper that runs work on another thread as part of this
/// compilation: with this thread's compile target and Func value bounds,
/// which lowering keeps thread-locally (`stack::parallel_map`'s setup).
pub(crate) fn in_this_compilation() -> impl Fn(&mut dyn FnMut()) + Sync {
    let target = crate::lang::target_queries::compile_target();
    let value_bounds = func_value_bounds::current_func_value_bounds();
    move |work: &mut dyn FnMut()| {
        let mut with_bounds = || match value_bounds.clone() {
            Some(vb) => func_value_bounds::with_func_value_bounds(vb, &mut *work),
            None => work(),
        };
        match &target {
            Some(t) => crate::lang::target_queries::with_compile_target(t, with_bounds),
            None => with_bounds(),
        }
    }
}

fn lower_for_target(
    outputs: &[Function],
    name: &str,
    options: &LowerOptions,
    target: &crate::target::Target,
) -> Result<Lowered> {
    // The Funcs, their realization order and compute_with groups.
    let env = environment::build_environment(outputs)?;
    schedule_expr_checks::check_schedule_exprs(&env)?;
    validate_device_loops::validate_device_loops(&env, target)?;
    let order: Vec<Function> = env.order.iter().map(|n| env.get(n).clone()).collect();
    let value_bounds = func_value_bounds::compute_func_value_bounds(&order);
    func_value_bounds::with_func_value_bounds(value_bounds, || {
        lower_environment(&env, outputs, name, options, target)
    })
}

/// Lower the pipeline of `env` (see `lower_for_target`), with the value
/// bounds of its Funcs installed.
fn lower_environment(
    env: &environment::Environment,
    outputs: &[Function],
    name: &str,
    options: &LowerOptions,
    target: &crate::target::Target,
) -> Result<Lowered> {
    use crate::analysis::simplify::simplify_stmt;
    let log = PassLog::new();
    let input_buffers = environment::bound_input_buffers(env)?;

    // Loop nests (a compute_with group as one nest: fuse_loop_nests.rs).
    let mut s = log.run("schedule functions", Stmt::no_op(), |_| {
        schedule_functions::schedule_functions(env, outputs)
    })?;
    if !options.requirements.is_empty() {
        let mut checks: Vec<Stmt> = options.requirements.iter().map(|r| r.check()).collect();
        checks.push(s);
        s = Stmt::block(checks);
    }
    s = log.run("target queries", s, |s| {
        Ok(target_query_ops::lower_target_query_ops(s, target))
    })?;
    let mut traced = tracing::TracedFuncs::default();
    s = log.run("tracing", s, |s| {
        let (out, funcs) = tracing::inject_tracing(s, &env, outputs, name, target)?;
        traced = funcs;
        Ok(out)
    })?;
    // Inputs (buffers, then scalars, each sorted by name), then one output
    // buffer per value: `f`, or `f.0`, `f.1`, ... for a Tuple.
    let inputs = arguments::infer_inputs(&s, env, outputs)?;
    let mut args: Vec<LoweredArgument> = inputs
        .buffers
        .iter()
        .map(|b| LoweredArgument {
            name: b.name(),
            kind: ArgumentKind::InputBuffer,
            ty: b.ty(),
            dimensions: b.dimensions(),
            estimates: Default::default(),
        })
        .collect();
    args.extend(inputs.scalars.iter().map(|p| LoweredArgument {
        name: p.name(),
        kind: ArgumentKind::InputScalar,
        ty: p.ty(),
        dimensions: 0,
        estimates: Default::default(),
    }));
    for o in outputs {
        let names = crate::lang::tuple::element_buffer_names(o);
        for (name, ty) in names.into_iter().zip(o.types()) {
            args.push(LoweredArgument {
                name,
                kind: ArgumentKind::OutputBuffer,
                ty,
                dimensions: o.dimensions(),
                estimates: Default::default(),
            });
        }
    }
    s = log.run("bounds inference", s, |s| {
        bounds_inference::bounds_inference(s, env, outputs)
    })?;
    s = log.run("split factor checks", s, |s| {
        Ok(add_split_factor_checks::add_split_factor_checks(s, env))
    })?;
    // Reads the simplifier proves dead are neither allocated for nor
    // checked (Halide measures after simplifying).
    s = log.run("simplify definitions", s, |s| {
        Ok(simplify_definitions::simplify_definitions(s))
    })?;
    // Storage and buffer checks are derived before sliding window (Halide
    // derives them after): sliding window only cuts a region when every
    // access stays inside the uncut one, and the boxes of the uncut loop
    // nests are tighter than interval analysis of the slid ones.
    s = log.run("allocation bounds inference", s, |s| {
        allocation_bounds_inference::allocation_bounds_inference(s, env)
    })?;
    s = log.run("trace tags", s, |s| Ok(tracing::add_type_and_dim_tags(s, &traced)))?;
    // The region of each output its loop nests touch: what `realize(sizes)`
    // allocates (Halide's bounds query on the outputs).
    let output_regions: Vec<Region> = outputs
        .iter()
        .map(|o| box_touched(&s, &o.name(), &Scope::default()).unwrap_or_default())
        .collect();
    let entry = if options.entry_checks {
        Some(entry_checks::entry_checks(&s, &inputs, outputs, target)?)
    } else {
        None
    };
    s = log.run("buffer checks", s, |s| {
        buffer_checks::add_buffer_checks(s.clone(), env, outputs)
    })?;
    // After the buffer checks, as Halide's skip_stages: inputs a dead stage
    // would read are still checked.
    let output_names: Vec<String> = outputs.iter().map(|o| o.name()).collect();
    s = log.run("skip dead stages", s, |s| {
        Ok(skip_dead_stages::skip_dead_stages(s, &output_names))
    })?;
    let mut slides = vec![];
    s = log.run("sliding window", s, |s| {
        let (out, made) = sliding_window::sliding_window(s, env)?;
        slides = made;
        Ok(out)
    })?;
    s = log.run("simplify", s, |s| Ok(simplify_stmt(s)))?;
    s = log.run("storage folding", s, |s| {
        storage_folding::storage_folding(s, env, &slides)
    })?;
    s = log.run("inject prefetch", s, |s| inject_prefetch::inject_prefetch(s, env))?;
    s = log.run("lower safe promises", s, |s| {
        Ok(lower_safe_promises::lower_safe_promises(s))
    })?;
    s = log.run("fork async producers", s, |s| async_producers::fork_async_producers(s, &env))?;
    s = log.run("simplify", s, |s| Ok(simplify_stmt(s)))?;
    s = log.run("split scatter/gather", s, split_scatter_gather::split_scatter_gather)?;
    s = log.run("storage flattening", s, |s| {
        storage_flattening::storage_flattening(s, env)
    })?;
    s = log.run("extern stage buffers", s, extern_stages::lower_extern_buffers)?;
    s = log.run("debug to file", s, |s| debug_to_file::dump_outputs(s.clone(), outputs))?;
    s = log.run("inject memoization", s, |s| {
        inject_memoization::inject_memoization(s, env, outputs)
    })?;
    s = log.run("add atomic mutex", s, add_atomic_mutex::add_atomic_mutex)?;
    s = log.run("shape constraints", s, |s| {
        Ok(buffer_checks::apply_shape_constraints(s, &inputs, outputs))
    })?;
    if options.no_asserts {
        s = log.run("strip asserts", s, |s| Ok(buffer_checks::strip_asserts(s)))?;
    }
    s = log.run("bound constant extent loops", s, bound_constant_extent_loops::bound_constant_extent_loops)?;
    s = log.run("unroll loops", s, unroll_loops::unroll_loops)?;
    s = log.run("lift out of atomics", s, |s| Ok(lift_atomic_exprs::lift_atomic_exprs(s)))?;
    s = log.run("vectorize loops", s, vectorize_loops::vectorize_loops)?;
    s = log.run("remove unneeded atomics", s, |s| {
        Ok(remove_unneeded_atomics::remove_unneeded_atomics(s))
    })?;
    s = log.run("simplify", s, |s| Ok(simplify_stmt(s)))?;
    s = log.run("privatize atomic reductions", s, |s| {
        Ok(privatize_atomic_reductions::privatize_atomic_reductions(s))
    })?;
    let policies = partition_loops::Policies::new(partition_policies(&env));
    s = log.run("partition loops", s, |s| partition_loops::partition_loops(s, &policies))?;
    s = log.run("strip likely", s, |s| Ok(partition_loops::strip_likely(s)))?;
    s = log.run("simplify", s, |s| Ok(simplify_stmt(s)))?;
    let update_dims = interleave_reductions::update_dims(env);
    s = log.run("interleave reductions", s, |s| {
        Ok(interleave_reductions::interleave_reductions(s, &update_dims))
    })?;
    if target.arch == crate::target::arch::HEXAGON {
        s = log.run("find intrinsics", s, |s| Ok(find_intrinsics::find_intrinsics(s)))?;
    }
    let buffer_shapes: std::collections::HashMap<String, (crate::ir::Type, usize)> = args
        .iter()
        .filter(|a| a.kind != ArgumentKind::InputScalar)
        .map(|a| (a.name.clone(), (a.ty, a.dimensions)))
        .collect();
    let mut offloaded = (vec![], vec![]);
    s = log.run("inject hexagon rpc", s, |s| {
        let o = inject_hexagon_rpc::inject_hexagon_rpc(s, target, &buffer_shapes)?;
        offloaded = (o.kernels, o.state_buffers);
        Ok(o.host)
    })?;
    if let Some(entry) = entry {
        let bounds_query = !target.has_feature(crate::target::feature::NO_BOUNDS_QUERY);
        s = log.run("entry checks", s, |s| {
            Ok(entry.wrap(s.clone(), bounds_query, !options.no_asserts))
        })?;
    }
    // After the entry code too: its regions repeat what they depend on.
    s = log.run("common subexpressions", s, |s| Ok(crate::analysis::cse_control_exprs(s)))?;

    Ok(Lowered {
        pipeline: LoweredPipeline {
            name: name.to_string(),
            args,
            body: s,
        },
        input_buffers,
        output_regions,
        inputs,
        hexagon_kernels: offloaded.0,
        state_buffers: offloaded.1,
    })
}
