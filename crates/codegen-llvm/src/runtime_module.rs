//! The C runtime as an LLVM module, for the JIT (`jit_runtime`) and for
//! AOT objects, which link it in (unless `no_runtime`) or emit it alone
//! (a standalone runtime).

use ferrohalide_core::{Error, Result};
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use inkwell::targets::TargetTriple;

/// The runtime for `triple` (e.g. `x86_64-unknown-linux-gnu`; the vendor
/// part is ignored), parsed from the bitcode embedded in this library into
/// `ctx`. Its module triple is `triple` as given (so linking it into a
/// module of that triple raises no mismatch warning); every
/// function Halide lets programs replace (`halide_malloc`, `halide_error`,
/// `halide_do_par_for`, ...) is a weak definition with default visibility,
/// internal helpers (`ferrohalide_*`) are weak and hidden. It imports only
/// C library functions (malloc, pthreads, write, snprintf, ...).
///
/// An error names the triple when the runtime is not built for it.
pub fn runtime_module<'ctx>(ctx: &'ctx Context, triple: &str) -> Result<Module<'ctx>> {
    let bitcode = ferrohalide_runtime::bitcode::bitcode_for(triple).ok_or_else(|| {
        let built: Vec<&str> = ferrohalide_runtime::bitcode::triples().collect();
        Error::user(format!(
            "the ferrohalide runtime is not built for target triple {triple} (built for: {})",
            built.join(", ")
        ))
    })?;
    let buffer = MemoryBuffer::create_from_memory_range_copy(bitcode, "ferrohalide_runtime");
    let module = Module::parse_bitcode_from_buffer(&buffer, ctx).map_err(|e| {
        Error::internal(format!(
            "cannot read the runtime bitcode for {triple}: {}",
            e.to_string()
        ))
    })?;
    module.set_triple(&TargetTriple::create(triple));
    Ok(module)
}

/// The runtime an object for `target` (LLVM triple `triple`) links: the
/// C runtime, plus Halide's Hexagon offload host runtime
/// (`c/hexagon_host.c`) on an ARM target with `hvx`, as Halide links it.
pub fn runtime_module_for<'ctx>(
    ctx: &'ctx Context,
    triple: &str,
    target: &ferrohalide_core::target::Target,
) -> Result<Module<'ctx>> {
    use ferrohalide_core::target::{arch, feature};
    let module = runtime_module(ctx, triple)?;
    if target.arch != arch::ARM || !target.has_feature(feature::HVX) {
        return Ok(module);
    }
    let bitcode = ferrohalide_runtime::bitcode::hexagon_host_bitcode_for(triple).ok_or_else(|| {
        Error::user(format!(
            "the Hexagon offload host runtime is not built for target triple {triple} (target {target})\n"
        ))
    })?;
    let buffer = MemoryBuffer::create_from_memory_range_copy(bitcode, "ferrohalide_hexagon_host");
    let host = Module::parse_bitcode_from_buffer(&buffer, ctx).map_err(|e| {
        Error::internal(format!("cannot read the Hexagon host runtime bitcode for {triple}: {}", e.to_string()))
    })?;
    host.set_triple(&TargetTriple::create(triple));
    module
        .link_in_module(host)
        .map_err(|e| Error::internal(format!("cannot link the Hexagon host runtime: {}", e.to_string())))?;
    Ok(module)
}
