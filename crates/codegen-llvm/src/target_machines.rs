//! LLVM target machines, kept between compiles and reused.
//!
//! Creating a target machine, and the subtarget its first function asks
//! for, parses the CPU's feature string against LLVM's feature tables
//! (`SetImpliedBits`): ~3.5 M instructions per compile, about an eighth
//! of compiling a trivial pipeline. A machine is used by one thread at a
//! time and compiles many modules one after another (as LLVM's own tools
//! and ORC's per-thread compilers do), so a machine finished with goes
//! back to a small pool and the next compile for the same target, on any
//! thread, takes it. A reused machine produces the same bytes as a fresh
//! one: its per-function state is reset from each function's attributes.

use std::ops::Deref;
use std::sync::Mutex;

use ferrohalide_core::{Error, Result};
use inkwell::targets::{CodeModel, RelocMode, Target, TargetMachine, TargetTriple};
use inkwell::OptimizationLevel;

use crate::target::JitTarget;

/// What a machine is for: CPU, features, triple, code model, relocations.
type Key = (String, String, String, CodeModel, RelocMode);

/// A target machine this compile holds; it goes back to the pool when
/// dropped.
pub(crate) struct PooledMachine {
    key: Key,
    machine: Option<TargetMachine>,
}

/// A machine in the pool, held by no thread.
struct Idle(Key, TargetMachine);

// SAFETY: a pooled machine is used by one thread at a time: the pool
// hands it out exclusively, and the holder gives it back when finished.
unsafe impl Send for Idle {}

/// Machines finished with. Few targets are in use at once: a handful of
/// machines per target (one per compile thread) is all that is ever taken.
static POOL: Mutex<Vec<Idle>> = Mutex::new(Vec::new());
const POOL_SIZE: usize = 16;

impl Deref for PooledMachine {
    type Target = TargetMachine;
    fn deref(&self) -> &TargetMachine {
        self.machine.as_ref().expect("a pooled machine is present until dropped")
    }
}

impl Drop for PooledMachine {
    fn drop(&mut self) {
        let Some(machine) = self.machine.take() else { return };
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() >= POOL_SIZE {
            pool.remove(0);
        }
        pool.push(Idle(self.key.clone(), machine));
    }
}

/// A target machine for `target` on `triple` (optimizing at O3): an idle
/// one from the pool, or a new one.
pub(crate) fn take(
    target: &JitTarget,
    triple: &TargetTriple,
    code_model: CodeModel,
    reloc: RelocMode,
) -> Result<PooledMachine> {
    let key: Key = (
        target.cpu.clone(),
        target.features.clone(),
        triple.as_str().to_string_lossy().into_owned(),
        code_model,
        reloc,
    );
    let idle = {
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        pool.iter().rposition(|m| m.0 == key).map(|i| pool.swap_remove(i).1)
    };
    let machine = match idle {
        Some(machine) => machine,
        None => create(target, triple, code_model, reloc)?,
    };
    Ok(PooledMachine { key, machine: Some(machine) })
}

fn create(
    target: &JitTarget,
    triple: &TargetTriple,
    code_model: CodeModel,
    reloc: RelocMode,
) -> Result<TargetMachine> {
    crate::jit::init_llvm();
    let t = Target::from_triple(triple).map_err(|e| Error::internal(format!("LLVM target: {e}")))?;
    t.create_target_machine(
        triple,
        &target.cpu,
        &target.features,
        OptimizationLevel::Aggressive,
        reloc,
        code_model,
    )
    .ok_or_else(|| Error::internal(format!("cannot create an LLVM target machine for {}", target.cpu)))
}
