//! JIT compilation and calling of a lowered pipeline.
//!
//! `compile_jit` generates LLVM IR for the pipeline, optimizes it once with
//! the new pass manager (`OPTIMIZATION_PIPELINE`) for the target CPU, compiles it to
//! a position-independent object (or takes that object from the persistent
//! cache, `jit_cache`) and loads it (`jit_loader`). Every function the
//! object calls is bound by address when it loads
//! (`runtime_symbols::lookup`): runtime functions to the process's one
//! JIT-compiled runtime (`jit_runtime`), which pipelines share. The
//! result, a [`JitModule`], is `Send + Sync` and can be run any number of
//! times, from any thread.

use std::ffi::c_void;
use std::sync::Once;

use ferrohalide_core::ir::{Type, TypeCode};
use ferrohalide_core::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};
use ferrohalide_core::{Error, Result};
use ferrohalide_runtime::halide_buffer_t;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
};

use crate::codegen::entry::argv_uc_symbol;
use crate::codegen::CodeGen;
use crate::jit_loader::{load_object, LoadedObject};
use crate::jit_runtime::RunContext;
use crate::target::JitTarget;
use crate::target_machines::PooledMachine;

/// A scalar argument value. It is converted to the argument's declared type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    Int(i64),
    UInt(u64),
    Float(f64),
    Bool(bool),
}

/// One argument of a pipeline call, in the order of `LoweredPipeline::args`.
#[derive(Clone, Copy, Debug)]
pub enum ArgValue {
    Buffer(*mut halide_buffer_t),
    Scalar(ScalarValue),
}

/// A compiled pipeline, ready to run.
pub struct JitModule {
    name: String,
    args: Vec<LoweredArgument>,
    entry: extern "C" fn(*mut c_void, *mut *mut c_void) -> i32,
    /// The code `entry` points into.
    _code: LoadedObject,
}

impl Drop for JitModule {
    fn drop(&mut self) {
        ferrohalide_core::live::COMPILED_PIPELINES.dropped();
    }
}

pub(crate) fn init_llvm() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        Target::initialize_x86(&InitializationConfig::default());
        Target::initialize_aarch64(&InitializationConfig::default());
        Target::initialize_arm(&InitializationConfig::default());
        Target::initialize_hexagon(&InitializationConfig::default());
        // The schedule decides vectorization (Halide's loops are
        // vectorized by its own lowering): LLVM's loop and SLP vectorizers
        // only cost compile time, and LLVM 19's SLP vectorizer miscompiles
        // narrowed integer code (a uitofp of an 8-bit value whose 16-bit
        // extension it dropped: fuzz seed 9159). The pass builder's
        // options alone do not keep them out of `default<O3>`.
        // LLVM 19's software pipeliner (MachinePipeliner, which only the
        // Hexagon back end of ours runs) crashes in its register pressure
        // filter on some loops (`LiveRange::find`, cross fuzz seed 86 on
        // hexagon-32-noos-hvx_128), so it is off.
        // Innermost loops start on a 64-byte boundary (x86's default is
        // 16): a tight loop that crosses one runs at about half speed on
        // this machine's cores (the rfactor histogram's 5-instruction
        // scatter loop: 2.1 ms at an address 16 bytes further, 0.9 ms
        // aligned), and which loops cross was left to chance.
        // x86's domain reassignment (moving chains of integer operations
        // to AVX-512 mask registers) took ~10% of machine-code time on
        // local_laplacian and changed no instruction of the four apps'
        // code on an AVX-512 machine, so it is off.
        // LLVM's non-trivial loop unswitching (O3) copies a loop nest once
        // per loop-invariant condition in it. Loop partitioning has already
        // split Halide's loops on the conditions that matter; what it
        // found left were the guards of the split tails, so it tripled the
        // copy's inner loop. Off (a threshold of 0), the copy compiles 15%
        // faster and the blur with store_at 13%, and no bench case (the
        // four apps included) runs slower. Trivial unswitching stays.
        // `FERROHALIDE_LLVM_ARGS` adds LLVM options (e.g. `-time-passes`),
        // for studying compile time.
        let extra = std::env::var("FERROHALIDE_LLVM_ARGS").unwrap_or_default();
        let args: Vec<std::ffi::CString> = [
            "ferrohalide",
            "-vectorize-slp=false",
            "-vectorize-loops=false",
            "-enable-pipeliner=false",
            "-x86-experimental-pref-innermost-loop-alignment=6",
            "-disable-x86-domain-reassignment",
            "-unswitch-threshold=0",
        ]
        .into_iter()
        .chain(extra.split_whitespace())
        .filter_map(|a| std::ffi::CString::new(a).ok())
        .collect();
        let argv: Vec<*const std::os::raw::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let overview = std::ffi::CString::new("").expect("no NUL");
        // SAFETY: argv points at NUL-terminated strings that outlive the call.
        unsafe {
            inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
                argv.len() as i32,
                argv.as_ptr(),
                overview.as_ptr(),
            )
        };
    });
}

fn target_machine(target: &JitTarget) -> Result<PooledMachine> {
    target_machine_for(
        target,
        &TargetMachine::get_default_triple(),
        CodeModel::JITDefault,
        RelocMode::Default,
    )
}

/// An LLVM target machine for `target` on `triple` (from the pool of
/// machines finished with, `target_machines`).
pub(crate) fn target_machine_for(
    target: &JitTarget,
    triple: &TargetTriple,
    code_model: CodeModel,
    reloc: RelocMode,
) -> Result<PooledMachine> {
    crate::target_machines::take(target, triple, code_model, reloc)
}

/// Generate and optimize the LLVM module of a `Module`. `jit`: with the
/// JIT's entry points and no metadata. `runtime`: the runtime module to
/// link in before optimizing (ahead-of-time objects carry it).
pub(crate) fn build_llvm_module<'ctx>(
    ctx: &'ctx Context,
    m: &ferrohalide_core::module::Module,
    target: &JitTarget,
    machine: &TargetMachine,
    jit: bool,
    runtime: Option<Module<'ctx>>,
) -> Result<Module<'ctx>> {
    let module = generate_unverified(ctx, m, target, machine, jit, runtime)?;
    verify_generated(&module)?;
    optimize_llvm_module(&module, target, machine)?;
    Ok(module)
}

/// `build_llvm_module` before optimization: generated and linked, not yet
/// verified. Every caller runs `verify_generated` over what it keeps of
/// the module before optimizing it (a JIT partition's thread, only its
/// partition).
fn generate_unverified<'ctx>(
    ctx: &'ctx Context,
    m: &ferrohalide_core::module::Module,
    target: &JitTarget,
    machine: &TargetMachine,
    jit: bool,
    runtime: Option<Module<'ctx>>,
) -> Result<Module<'ctx>> {
    let t = std::time::Instant::now();
    crate::codegen::module::check_module(m)?;
    let module = ctx.create_module(&m.name);
    let triple: TargetTriple = machine.get_triple();
    module.set_triple(&triple);
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    {
        // SAFETY: context and module outlive the code generator.
        let mut cg = unsafe { CodeGen::new(ctx.raw(), module.as_mut_ptr(), target, &m.name) };
        cg.compile_module(m, jit)?;
    }
    if let Some(rt) = runtime {
        module.link_in_module(rt).map_err(|e| {
            Error::internal(format!("linking the runtime failed: {}", e.to_string()))
        })?;
    }
    debug_time("generating LLVM IR", t);
    Ok(module)
}

/// LLVM's verifier over generated IR: invalid IR is an internal error
/// here, with a message, instead of a crash or a miscompile in LLVM.
fn verify_generated(module: &Module) -> Result<()> {
    let t = std::time::Instant::now();
    if let Err(e) = module.verify() {
        if std::env::var_os("FERROHALIDE_DUMP_BAD_IR").is_some() {
            eprintln!("{}", module.print_to_string().to_string());
        }
        return Err(Error::internal(format!(
            "generated LLVM IR is invalid: {}",
            e.to_string()
        )));
    }
    debug_time("verifying the LLVM IR", t);
    Ok(())
}

/// The optimization pipeline run over every generated module, instead of
/// LLVM's generic `default<O3>`. The code comes in simplified (ferrohalide's
/// simplifier, CSE, loop partitioning), vectorized and unrolled as the
/// schedule says, its loops already in rotated form and with no calls to
/// inline but the few helpers: what it still needs is promoting the
/// closures' loads (SROA), CSE of the address arithmetic, hoisting it out
/// of loops (LICM), widening the induction variables (`indvars`, so
/// indices stay 64-bit), GVN and dead code removal, each at its most
/// useful point. O3's ~70 passes (eight InstCombines among them) cost
/// twice the time for the same machine code: on the bench (two cores,
/// three rounds) the micro cases' JIT took 0.75-0.94 of the time,
/// bilateral_grid, interpolate and local_laplacian 0.88-0.90, with run
/// times equal within noise (app interpolate 0.95, bilateral_grid
/// 1.01, the blur with a sliding window 1.01; unscheduled scalar code:
/// repeat_edge blur and float selects equal, a 7x7 RDom box 1.01, a
/// lookup 0.8). `FERROHALIDE_LLVM_PIPELINE` replaces it, for study.
const OPTIMIZATION_PIPELINE: &str = "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg),\
     cgscc(inline),\
     function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,loop-mssa(licm),\
     loop(indvars,loop-deletion),gvn,instcombine<no-verify-fixpoint>,dse,adce,simplifycfg),\
     globaldce";

/// Optimize a generated module in place, for `machine` (made for
/// `target`).
fn optimize_llvm_module(module: &Module, target: &JitTarget, machine: &TargetMachine) -> Result<()> {
    // The schedule decides vectorization and unrolling (as in Halide, whose
    // JIT leaves LLVM's loop vectorizer and unroller off by default); LLVM's
    // own versions only cost compile time.
    let opts = PassBuilderOptions::create();
    opts.set_loop_vectorization(false);
    opts.set_loop_slp_vectorization(false);
    opts.set_loop_unrolling(false);
    opts.set_merge_functions(false);
    let t = std::time::Instant::now();
    module
        .run_passes(
            &std::env::var("FERROHALIDE_LLVM_PIPELINE").unwrap_or_else(|_| OPTIMIZATION_PIPELINE.into()),
            machine,
            opts,
        )
        .map_err(|e| Error::internal(format!("LLVM optimization failed: {}", e.to_string())))?;
    // SAFETY: the module is valid and this thread's alone.
    unsafe {
        crate::expand_gathers::expand_all_lanes_gathers(
            module.as_mut_ptr(),
            crate::hardware_gathers::enabled(target),
        )
    };
    debug_time("LLVM optimization", t);
    if debug_level() >= 3 {
        eprintln!(
            "--- optimized LLVM IR ---\n{}",
            module.print_to_string().to_string()
        );
    }
    Ok(())
}

/// Generate and optimize the LLVM module of one JIT pipeline.
fn build_module<'ctx>(
    ctx: &'ctx Context,
    p: &LoweredPipeline,
    target: &JitTarget,
    machine: &TargetMachine,
) -> Result<Module<'ctx>> {
    let module = generate_module(ctx, p, target, machine)?;
    verify_generated(&module)?;
    optimize_llvm_module(&module, target, machine)?;
    Ok(module)
}

/// Generate the (unoptimized, not yet verified) LLVM module of one JIT
/// pipeline.
fn generate_module<'ctx>(
    ctx: &'ctx Context,
    p: &LoweredPipeline,
    target: &JitTarget,
    machine: &TargetMachine,
) -> Result<Module<'ctx>> {
    let mut m = ferrohalide_core::module::Module::new(
        p.name.clone(),
        ferrohalide_core::target::Target::default(),
    );
    m.functions.push(ferrohalide_core::module::ModuleFunction {
        pipeline: p.clone(),
        linkage: ferrohalide_core::module::Linkage::External,
    });
    generate_unverified(ctx, &m, target, machine, true, None)
}

/// `HL_DEBUG_CODEGEN`: 1 times each step, 2 also prints each lowering
/// pass's statement and the split plan, 3 the optimized LLVM IR, 4 what each
/// unit of a split module costs to compile alone (`profile_units`).
pub fn debug_level() -> i32 {
    std::env::var("HL_DEBUG_CODEGEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// With `HL_DEBUG_CODEGEN` >= 1, report how long a backend step took.
pub(crate) fn debug_time(step: &str, since: std::time::Instant) {
    if debug_level() >= 1 {
        eprintln!("{step}: {:.3} ms", since.elapsed().as_secs_f64() * 1e3);
    }
}

/// Compile a lowered pipeline to machine code for `target` and load it
/// (the machine code comes from the persistent cache when it has it).
pub fn compile_jit(p: &LoweredPipeline, target: &JitTarget) -> Result<JitModule> {
    Ok(compile_jit_keyed(p, target)?.0)
}

/// `compile_jit`, also giving the cache key of the lowered pipeline and its
/// object (what a front-end cache entry stores).
pub fn compile_jit_keyed(
    p: &LoweredPipeline,
    target: &JitTarget,
) -> Result<(JitModule, crate::jit_cache::Digest, Vec<u8>)> {
    let key = crate::jit_cache::pipeline_key(p, target);
    let object = crate::jit_cache::object_for(key, || compile_object(p, target))?;
    let module = load_jit(&object, &p.name, p.args.clone())?;
    Ok((module, key, object))
}

/// Load the object of a JIT pipeline named `name` with arguments `args`.
pub fn load_jit(object: &[u8], name: &str, args: Vec<LoweredArgument>) -> Result<JitModule> {
    let t = std::time::Instant::now();
    let code = load_object(object, name, crate::runtime_symbols::lookup)?;
    let addr = code.lookup(&argv_uc_symbol(name))?;
    debug_time("loading the machine code", t);
    // SAFETY: the function has this signature (see codegen::entry).
    let entry: extern "C" fn(*mut c_void, *mut *mut c_void) -> i32 =
        unsafe { std::mem::transmute(addr) };
    ferrohalide_core::live::COMPILED_PIPELINES.created();
    Ok(JitModule {
        name: name.to_string(),
        args,
        entry,
        _code: code,
    })
}

/// The machine code of a JIT pipeline: relocatable, position-independent
/// objects (so they load anywhere, in this process or, from the cache, in
/// another), packed into one blob for `jit_loader`. A large module is
/// split (`module_split`) and its partitions compile on parallel threads.
///
/// Each partition's thread generates the LLVM IR itself, in a context of
/// its own (generation is deterministic, so every copy has the same
/// functions under the same names, and one plan fits them all): about as
/// fast as reading a copy of the module from bitcode, and no copy is
/// written first. For a pipeline that is likely to be split, those threads
/// start when this one starts generating, so every partition starts
/// optimizing at about the same time (local_laplacian: ~28 ms after the
/// lowering on both threads, against ~34 ms for the first partition and
/// ~49 ms for the second when the module went through bitcode).
fn compile_object(p: &LoweredPipeline, target: &JitTarget) -> Result<Vec<u8>> {
    let threads = ferrohalide_core::stack::compile_threads();
    let early = threads >= 2 && likely_to_split(p);
    std::thread::scope(|s| -> Result<Vec<u8>> {
        let mut others: Vec<PartitionThread> = Vec::new();
        if early {
            for index in 1..threads {
                others.push(PartitionThread::spawn(s, p, target, index)?);
            }
        }
        let machine = jit_object_machine(target)?;
        let ctx = Context::create();
        let module = generate_module(&ctx, p, target, &machine)?;
        let t = std::time::Instant::now();
        let plan = crate::module_split::plan(
            module.as_mut_ptr(),
            threads,
            early,
            crate::hardware_gathers::enabled(target),
        );
        debug_time("planning the module's partitions", t);
        let Some(plan) = plan else {
            // Dropping the threads' channels tells them to stop.
            drop(others);
            verify_generated(&module)?;
            optimize_llvm_module(&module, target, &machine)?;
            return Ok(crate::jit_loader::pack_objects(vec![emit_object(&machine, &module)?]));
        };
        if debug_level() >= 4 {
            profile_units(&module, target, &machine)?;
        }
        let plan = std::sync::Arc::new(plan);
        for index in others.len() + 1..plan.partitions() {
            others.push(PartitionThread::spawn(s, p, target, index)?);
        }
        for other in &others {
            // A thread that has already stopped (its generation failed)
            // reports why when joined.
            let _ = other.plan.send(Some(plan.clone()));
        }
        let t = std::time::Instant::now();
        plan.keep_partition(module.as_mut_ptr(), 0);
        verify_generated(&module)?;
        optimize_llvm_module(&module, target, &machine)?;
        let mut objects = vec![emit_object(&machine, &module)?];
        debug_time("compiling partition 0", t);
        for other in others {
            if let Some(object) = other
                .handle
                .join()
                .map_err(|_| Error::internal("a code generation thread panicked"))??
            {
                objects.push(object);
            }
        }
        Ok(crate::jit_loader::pack_objects(objects))
    })
}

/// `HL_DEBUG_CODEGEN=4`: each unit of a split module compiled alone (in a
/// copy of the module), with its weight and the thread's CPU time of its
/// optimization and machine code (the fastest of three), to fit the
/// split's weights against (`module_split::weight`).
fn profile_units(module: &Module, target: &JitTarget, machine: &TargetMachine) -> Result<()> {
    fn thread_cpu_ms() -> f64 {
        extern "C" {
            fn clock_gettime(clock: i32, time: *mut [i64; 2]) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut time = [0i64; 2];
        // SAFETY: a valid clock and a struct timespec's layout on 64-bit Linux.
        unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
        time[0] as f64 * 1e3 + time[1] as f64 / 1e6
    }
    let hardware_gathers = crate::hardware_gathers::enabled(target);
    for (name, weight, plan) in crate::module_split::single_unit_plans(module.as_mut_ptr(), hardware_gathers) {
        let mut best = f64::MAX;
        for _ in 0..3 {
            // SAFETY: the clone is a new module of the same context, owned here.
            let copy = unsafe { Module::new(inkwell::llvm_sys::core::LLVMCloneModule(module.as_mut_ptr())) };
            plan.keep_partition(copy.as_mut_ptr(), 0);
            let start = thread_cpu_ms();
            optimize_llvm_module(&copy, target, machine)?;
            emit_object(machine, &copy)?;
            best = best.min(thread_cpu_ms() - start);
        }
        eprintln!("module split: unit {name} (weight {weight}) compiles alone in {best:.3} ms");
    }
    Ok(())
}

/// Whether `p` is large enough that its module will probably be split:
/// its IR's code weight (`codegen::parallel`), against the split's
/// threshold in LLVM instructions. Measured on Halide's apps and the
/// tests' pipelines: a module has about as many LLVM instructions as its
/// IR weight, or more. A wrong guess costs only time: a partition thread
/// started early for a module compiled whole generates IR nobody uses, on
/// another core; one started late generates after the plan.
fn likely_to_split(p: &LoweredPipeline) -> bool {
    let (_, weight) = crate::codegen::parallel::size_and_code_weight(&p.body);
    if debug_level() >= 2 {
        eprintln!("module split: the pipeline's IR weighs {weight}");
    }
    if stress_codegen() {
        // Small modules split too: start early for about half of them, so
        // the tests run both paths.
        return weight % 2 == 0;
    }
    weight >= crate::module_split::MIN_INSTRUCTIONS_TO_SPLIT
}

/// A thread compiling one partition of a split module: it generates the
/// module, waits for the plan (None, or a closed channel: the module is
/// not split, or not into this many partitions), and compiles its part.
struct PartitionThread<'scope> {
    plan: std::sync::mpsc::Sender<Option<std::sync::Arc<crate::module_split::Plan>>>,
    handle: std::thread::ScopedJoinHandle<'scope, Result<Option<Vec<u8>>>>,
}

impl<'scope> PartitionThread<'scope> {
    fn spawn<'env>(
        s: &'scope std::thread::Scope<'scope, 'env>,
        p: &'env LoweredPipeline,
        target: &'env JitTarget,
        index: usize,
    ) -> Result<Self> {
        let (plan, receiver) = std::sync::mpsc::channel();
        // LLVM recurses deeply on large functions: give the other threads
        // the stack the main thread has, not Rust's 2 MB default.
        let handle = std::thread::Builder::new()
            .name("ferrohalide-codegen".into())
            .stack_size(COMPILE_THREAD_STACK)
            .spawn_scoped(s, move || compile_partition(p, target, index, receiver))
            .map_err(|e| Error::internal(format!("cannot start a code generation thread: {e}")))?;
        Ok(PartitionThread { plan, handle })
    }
}

/// The stack of each extra code generation thread (address space only until
/// touched).
const COMPILE_THREAD_STACK: usize = 64 << 20;

/// Generate the module of `p` in a context of this thread's own, then, if
/// the plan that arrives gives the module a partition `index`, optimize
/// and compile that partition.
fn compile_partition(
    p: &LoweredPipeline,
    target: &JitTarget,
    index: usize,
    plan: std::sync::mpsc::Receiver<Option<std::sync::Arc<crate::module_split::Plan>>>,
) -> Result<Option<Vec<u8>>> {
    let t = std::time::Instant::now();
    let machine = jit_object_machine(target)?;
    let ctx = Context::create();
    let module = generate_module(&ctx, p, target, &machine)?;
    let Ok(Some(plan)) = plan.recv() else {
        return Ok(None);
    };
    if index >= plan.partitions() {
        return Ok(None);
    }
    plan.keep_partition(module.as_mut_ptr(), index);
    verify_generated(&module)?;
    optimize_llvm_module(&module, target, &machine)?;
    let object = emit_object(&machine, &module)?;
    debug_time(&format!("compiling partition {index}"), t);
    Ok(Some(object))
}

/// The target machine of JIT objects: small code model, position-independent.
fn jit_object_machine(target: &JitTarget) -> Result<PooledMachine> {
    target_machine_for(
        target,
        &TargetMachine::get_default_triple(),
        CodeModel::Small,
        RelocMode::PIC,
    )
}

fn emit_object(machine: &TargetMachine, module: &Module) -> Result<Vec<u8>> {
    let t = std::time::Instant::now();
    let buf = machine
        .write_to_memory_buffer(module, FileType::Object)
        .map_err(|e| {
            Error::internal(format!("machine code generation failed: {}", e.to_string()))
        })?;
    debug_time("LLVM machine code", t);
    Ok(buf.as_slice().to_vec())
}

/// `FERROHALIDE_STRESS_CODEGEN=1`, for testing: outline every serial loop
/// that is not most of its function, and split every module with two
/// functions to split, so that small test pipelines exercise what only
/// large ones otherwise reach (`codegen::parallel`, `module_split`).
pub(crate) fn stress_codegen() -> bool {
    static STRESS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STRESS.get_or_init(|| std::env::var("FERROHALIDE_STRESS_CODEGEN").is_ok_and(|v| v == "1"))
}


/// The optimized LLVM IR of a pipeline, as text.
pub fn compile_to_llvm_ir(p: &LoweredPipeline, target: &JitTarget) -> Result<String> {
    let machine = target_machine(target)?;
    let ctx = Context::create();
    let module = build_module(&ctx, p, target, &machine)?;
    Ok(module.print_to_string().to_string())
}

/// The target assembly of a pipeline, as text.
pub fn compile_to_assembly(p: &LoweredPipeline, target: &JitTarget) -> Result<String> {
    let machine = target_machine(target)?;
    let ctx = Context::create();
    let module = build_module(&ctx, p, target, &machine)?;
    emit_assembly(&machine, &module)
}

pub(crate) fn emit_assembly(machine: &TargetMachine, module: &Module) -> Result<String> {
    let buf = machine
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|e| Error::internal(format!("assembly output failed: {}", e.to_string())))?;
    Ok(String::from_utf8_lossy(buf.as_slice()).into_owned())
}

fn write_scalar(slot: &mut [u8; 16], ty: Type, v: ScalarValue) -> Result<()> {
    let (i, u, f) = match v {
        ScalarValue::Int(x) => (x, x as u64, x as f64),
        ScalarValue::UInt(x) => (x as i64, x, x as f64),
        ScalarValue::Float(x) => (x as i64, x as u64, x),
        ScalarValue::Bool(b) => (b as i64, b as u64, b as u8 as f64),
    };
    match (ty.code, ty.bits) {
        (TypeCode::Float, 32) => slot[..4].copy_from_slice(&(f as f32).to_le_bytes()),
        (TypeCode::Float, 64) => slot[..8].copy_from_slice(&f.to_le_bytes()),
        (TypeCode::Float, 16) => slot[..2]
            .copy_from_slice(&ferrohalide_runtime::half::f32_to_f16_bits(f as f32).to_le_bytes()),
        (TypeCode::UInt, 1) => slot[0] = (u != 0) as u8,
        (TypeCode::Int, _) => slot[..8].copy_from_slice(&i.to_le_bytes()),
        (TypeCode::UInt, _) | (TypeCode::Handle, _) => slot[..8].copy_from_slice(&u.to_le_bytes()),
        _ => {
            return Err(Error::type_error(format!(
                "unsupported scalar argument type {ty}"
            )))
        }
    }
    Ok(())
}

impl JitModule {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn arguments(&self) -> &[LoweredArgument] {
        &self.args
    }

    /// Run the pipeline. `args` follow `LoweredPipeline::args` in order.
    pub fn run(&self, args: &[ArgValue]) -> Result<()> {
        if args.len() != self.args.len() {
            return Err(Error::type_error(format!(
                "pipeline {} takes {} arguments but {} were given",
                self.name,
                self.args.len(),
                args.len()
            )));
        }
        // On the stack for the usual few arguments (a realize in a loop
        // allocates nothing here).
        const ON_STACK: usize = 16;
        let (mut scalars_on_stack, mut argv_on_stack) = ([[0u8; 16]; ON_STACK], [std::ptr::null_mut(); ON_STACK]);
        let (mut scalars_on_heap, mut argv_on_heap) = (Vec::new(), Vec::new());
        let (scalars, argv): (&mut [[u8; 16]], &mut [*mut c_void]) = if args.len() <= ON_STACK {
            (&mut scalars_on_stack[..args.len()], &mut argv_on_stack[..args.len()])
        } else {
            scalars_on_heap.resize(args.len(), [0u8; 16]);
            argv_on_heap.resize(args.len(), std::ptr::null_mut());
            (&mut scalars_on_heap[..], &mut argv_on_heap[..])
        };
        for (i, (decl, val)) in self.args.iter().zip(args).enumerate() {
            match (decl.kind, val) {
                (ArgumentKind::InputScalar, ArgValue::Scalar(s)) => {
                    write_scalar(&mut scalars[i], decl.ty.element_of(), *s)?;
                }
                (ArgumentKind::InputBuffer | ArgumentKind::OutputBuffer, ArgValue::Buffer(b)) => {
                    if b.is_null() {
                        return Err(Error::type_error(format!(
                            "buffer argument {} is null",
                            decl.name
                        )));
                    }
                    // SAFETY: the caller passes a valid halide_buffer_t.
                    let dims = unsafe { (**b).dimensions };
                    if dims as usize != decl.dimensions {
                        return Err(Error::value(format!(
                            "buffer {} has {} dimensions, but the pipeline expects {}",
                            decl.name, dims, decl.dimensions
                        )));
                    }
                    argv[i] = *b as *mut c_void;
                }
                (ArgumentKind::InputScalar, ArgValue::Buffer(_)) => {
                    return Err(Error::type_error(format!(
                        "argument {} is a scalar, but a buffer was given",
                        decl.name
                    )))
                }
                (_, ArgValue::Scalar(_)) => {
                    return Err(Error::type_error(format!(
                        "argument {} is a buffer, but a scalar was given",
                        decl.name
                    )))
                }
            }
        }
        for (i, decl) in self.args.iter().enumerate() {
            if decl.kind == ArgumentKind::InputScalar {
                argv[i] = scalars[i].as_mut_ptr() as *mut c_void;
            }
        }
        let rc = RunContext::new();
        let code = (self.entry)(rc.as_user_context(), argv.as_mut_ptr());
        let printed = rc.take_printed();
        if !printed.is_empty() {
            ferrohalide_core::output::emit(printed);
        }
        if code != 0 {
            let msg = rc
                .take_error()
                .unwrap_or_else(|| format!("pipeline {} failed with error code {code}", self.name));
            return Err(Error::runtime(msg));
        }
        Ok(())
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<JitModule>();
}
