//! Ahead-of-time output of a `Module`: object code, assembly, LLVM bitcode
//! and LLVM assembly, from one LLVM module built the way the JIT builds its
//! own (`jit::build_llvm_module`), plus the standalone runtime.
//!
//! An object carries the C runtime (linked in before optimization, its
//! functions weak so that several objects link together) unless the target
//! has `no_runtime`; then the program links a standalone runtime instead.
//! Code is position independent, so objects also go into shared libraries
//! (Python extensions).

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::lower::inject_hexagon_rpc::{CODE_BUFFER, RUNTIME_BUFFER};
use ferrohalide_core::module::Module;
use ferrohalide_core::target::{feature, Target};
use ferrohalide_core::{Error, Result};
use inkwell::context::Context;
use inkwell::targets::{CodeModel, FileType, RelocMode, TargetMachine, TargetTriple};

use crate::jit::{build_llvm_module, target_machine_for};
use crate::hexagon_shared_object::link_shared_object;
use crate::runtime_module::{runtime_module, runtime_module_for};
use crate::target::JitTarget;

/// The kinds of output this module writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LlvmOutput {
    Object,
    Assembly,
    Bitcode,
    LlvmAssembly,
}

fn machine(jt: &JitTarget, triple: &str) -> Result<crate::target_machines::PooledMachine> {
    target_machine_for(jt, &TargetTriple::create(triple), CodeModel::Default, RelocMode::PIC)
}

fn emit(machine: &TargetMachine, module: &inkwell::module::Module, kind: LlvmOutput) -> Result<Vec<u8>> {
    Ok(match kind {
        LlvmOutput::Object | LlvmOutput::Assembly => {
            let ft = if kind == LlvmOutput::Object { FileType::Object } else { FileType::Assembly };
            machine
                .write_to_memory_buffer(module, ft)
                .map_err(|e| Error::internal(format!("LLVM code generation failed: {}", e.to_string())))?
                .as_slice()
                .to_vec()
        }
        LlvmOutput::Bitcode => module.write_bitcode_to_memory().as_slice().to_vec(),
        LlvmOutput::LlvmAssembly => module.print_to_string().to_bytes().to_vec(),
    })
}

/// What one compilation produced: each requested output, in order, and
/// the symbols the object defines for other code (a static library's
/// index lists them).
pub struct Compiled {
    pub outputs: Vec<Vec<u8>>,
    pub symbols: Vec<String>,
}

/// The functions and variables `module` defines that other objects can see.
fn defined_symbols(module: &inkwell::module::Module) -> Vec<String> {
    use inkwell::module::Linkage as L;
    let visible = |l: L| !matches!(l, L::Internal | L::Private);
    let mut out = vec![];
    let mut f = module.get_first_function();
    while let Some(func) = f {
        if func.count_basic_blocks() > 0 && visible(func.get_linkage()) {
            out.push(func.get_name().to_string_lossy().into_owned());
        }
        f = func.get_next_function();
    }
    let mut g = module.get_first_global();
    while let Some(global) = g {
        if global.get_initializer().is_some() && visible(global.get_linkage()) {
            out.push(global.get_name().to_string_lossy().into_owned());
        }
        g = global.get_next_global();
    }
    out
}

/// Compile `m` once and write each of `kinds`, in order.
pub fn compile_module(m: &Module, kinds: &[LlvmOutput]) -> Result<Compiled> {
    // Code generation recurses as deep as the lowered expressions nest.
    ferrohalide_core::stack::with_large_stack(|| compile_module_here(m, kinds))
}

fn compile_module_here(m: &Module, kinds: &[LlvmOutput]) -> Result<Compiled> {
    if !m.hexagon_kernels.is_empty() {
        return compile_module_here(&with_hexagon_code(m)?, kinds);
    }
    let (jt, triple) = JitTarget::for_aot(&m.target)?;
    let machine = machine(&jt, triple)?;
    let ctx = Context::create();
    let runtime = if m.target.has_feature(feature::NO_RUNTIME) {
        None
    } else {
        Some(runtime_module_for(&ctx, triple, &m.target)?)
    };
    let module = build_llvm_module(&ctx, m, &jt, &machine, false, runtime)?;
    Ok(Compiled {
        outputs: kinds.iter().map(|&k| emit(&machine, &module, k)).collect::<Result<_>>()?,
        symbols: defined_symbols(&module),
    })
}

/// The runtime alone for `target` (Halide's `compile_standalone_runtime`):
/// what objects compiled with `no_runtime` link against.
pub fn standalone_runtime(target: &Target, kinds: &[LlvmOutput]) -> Result<Compiled> {
    let (jt, triple) = JitTarget::for_aot(target)?;
    let machine = machine(&jt, triple)?;
    let ctx = Context::create();
    let module = runtime_module_for(&ctx, triple, target)?;
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    Ok(Compiled {
        outputs: kinds.iter().map(|&k| emit(&machine, &module, k)).collect::<Result<_>>()?,
        symbols: defined_symbols(&module),
    })
}

/// What the shared objects of the Hexagon offload depend on: the DSP
/// side's offload library, which defines what QuRT programs get from it.
const HEXAGON_REMOTE_LIBRARY: &str = "libhalide_hexagon_remote_skel.so";

/// The Hexagon target the kernels offloaded from `host` compile for:
/// bare-metal Hexagon (the kernels call only the runtime and the C library,
/// which the DSP side provides) with the host target's HVX levels, no
/// runtime of their own (it is a shared object of its own), asserts as
/// the host's.
fn hexagon_device_target(host: &Target) -> Target {
    let mut t = Target::default();
    t.arch = ferrohalide_core::target::arch::HEXAGON;
    t.bits = 32;
    t.os = ferrohalide_core::target::os::NOOS;
    for f in [feature::HVX, feature::HVX_V62, feature::HVX_V65, feature::HVX_V66, feature::HVX_V68, feature::NO_ASSERTS] {
        t.set_feature(f, host.has_feature(f));
    }
    t.set_feature(feature::NO_RUNTIME, true);
    t
}

/// `m` with its Hexagon kernels compiled, as Halide lays them out: the
/// kernels and the device runtime, each a Hexagon shared object (made by
/// ferrohalide's own linker: no tool is needed at run time), embedded as
/// the buffers `CODE_BUFFER` and `RUNTIME_BUFFER` the host code loads.
fn with_hexagon_code(m: &Module) -> Result<Module> {
    let device = hexagon_device_target(&m.target);
    let mut kernels = Module::new(CODE_BUFFER, device.clone());
    kernels.functions = m.hexagon_kernels.clone();
    let object = compile_module_here(&kernels, &[LlvmOutput::Object])?.outputs.remove(0);
    let code = link_shared_object(&object, &format!("lib{CODE_BUFFER}.so"), &[HEXAGON_REMOTE_LIBRARY])?;
    let runtime = link_shared_object(&device_runtime_object(&device)?, &format!("lib{RUNTIME_BUFFER}.so"), &[HEXAGON_REMOTE_LIBRARY])?;
    let mut out = m.clone();
    out.hexagon_kernels.clear();
    out.buffers.push((CODE_BUFFER.to_string(), Buffer::from_bytes(&code)?));
    out.buffers.push((RUNTIME_BUFFER.to_string(), Buffer::from_bytes(&runtime)?));
    Ok(out)
}

/// What the DSP side's offload library gives the shared runtime, as Halide's
/// shared runtime imports them: its messages go to the library's log, which
/// the host runtime reads back (`halide_hexagon_remote_poll_log`).
const HEXAGON_REMOTE_PROVIDES: &[&str] = &["halide_print", "halide_error"];

/// The runtime for `device` as an object whose every definition is
/// exported: in a shared object of its own, the kernels reach even its
/// internal helpers (`ferrohalide_*`, hidden in static objects) through
/// the dynamic loader. What the offload library provides is imported.
fn device_runtime_object(device: &Target) -> Result<Vec<u8>> {
    use inkwell::GlobalVisibility;
    let (jt, triple) = JitTarget::for_aot(device)?;
    let machine = machine(&jt, triple)?;
    let ctx = Context::create();
    let module = runtime_module(&ctx, triple)?;
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let mut f = module.get_first_function();
    while let Some(func) = f {
        let provided = HEXAGON_REMOTE_PROVIDES.iter().any(|n| func.get_name().to_bytes() == n.as_bytes());
        if provided {
            // A function without a body is a declaration: imported.
            for block in func.get_basic_blocks() {
                // SAFETY: the block belongs to `func`, which keeps no other
                // reference to it.
                unsafe { block.delete() }.map_err(|()| Error::internal("cannot delete a runtime function's body"))?;
            }
            func.set_linkage(inkwell::module::Linkage::External);
        }
        if func.count_basic_blocks() > 0 || provided {
            func.as_global_value().set_visibility(GlobalVisibility::Default);
        }
        f = func.get_next_function();
    }
    let mut g = module.get_first_global();
    while let Some(global) = g {
        if global.get_initializer().is_some() {
            global.set_visibility(GlobalVisibility::Default);
        }
        g = global.get_next_global();
    }
    emit(&machine, &module, LlvmOutput::Object)
}
