//! Lowered IR (`Stmt`/`Expr`) to LLVM IR.
//!
//! The code generator talks to LLVM through its C API (`llvm_sys`, as
//! re-exported by inkwell) on raw value and type references: that keeps the
//! many generic operations (scalar or vector, int or float) uniform. One
//! concept per file:
//!
//! - `ops`: thin typed helpers over the C API (constants, arithmetic, casts,
//!   blocks, calls, intrinsics).
//! - `types`: Halide `Type` to LLVM types.
//! - `expr`: expressions (arithmetic with Halide semantics, casts, loads,
//!   ramps, shuffles, reductions).
//! - `intrinsics`: `Call` nodes (bitwise, saturating, widening, buffer
//!   accessors, print, require, ...).
//! - `math`: vectorizable math functions.
//! - `stmt`: statements (loops, allocations, stores, assertions).
//! - `clamped_load`: clamped dense loads as masked loads (boundary conditions).
//! - `masked_memory`: masked loads, stores, gathers and scatters (lane by
//!   lane on Hexagon).
//! - `overlapping_loads`: a stencil's overlapping taps as two loads and
//!   lane permutes.
//! - `atomic`: stores inside `Atomic` nodes (atomicrmw, compare-and-swap).
//! - `parallel`: outlined loops (parallel loop bodies, large serial loop
//!   nests) as functions of their own, with closures.
//! - `strings`: building print lines and error messages at run time.
//! - `entry`: the pipeline's entry points and argument unpacking.
//! - `module`: a whole Module: its functions, embedded buffers, metadata.

pub mod atomic;
pub(crate) mod clamped_load;
pub mod entry;
pub mod expr;
pub(crate) mod hvx;
pub mod intrinsics;
pub mod math;
pub(crate) mod masked_memory;
pub mod module;
pub mod ops;
pub(crate) mod overlapping_loads;
pub mod parallel;
pub mod stmt;
pub mod strings;
pub mod trace;
pub mod types;

use ferrohalide_core::fast_hash::FastMap;
use ferrohalide_core::{Error, Result};
use inkwell::llvm_sys::prelude::*;

use crate::target::JitTarget;
use ferrohalide_runtime::buffer_t::BufferOffsets;

/// A raw LLVM value reference.
pub type Val = LLVMValueRef;
/// A raw LLVM type reference.
pub type Ty = LLVMTypeRef;

/// Per-function code generation state (swapped out while a parallel loop
/// body is generated as its own function).
pub(crate) struct FnState {
    pub function: Val,
    /// First block of the function: static allocas go here.
    pub entry_block: LLVMBasicBlockRef,
    pub user_context: Val,
    /// Name -> stack of values (innermost last).
    pub symbols: FastMap<String, Vec<Val>>,
    /// Runtime resources live at the current point (heap allocations,
    /// lock arrays), innermost last, released on error return.
    pub heap_allocs: Vec<LiveResource>,
    /// Scratch buffer for formatting messages, created on first use.
    pub message_buffer: Option<Val>,
    /// The IR size of the statement this function generates (`ir_size`;
    /// 0 for wrappers): what outlining measures loops against.
    pub size: usize,
    /// How many serial loops enclose the current point.
    pub loop_depth: u32,
    /// Whether this is the pipeline's body function, whose root lets are
    /// hidden from LLVM's loop analyses (`hide_root_let`).
    pub is_pipeline_body: bool,
    /// Whether every serial loop here becomes a function of its own (the
    /// body of a JIT pipeline, compiled cold: `EntryOptions::cold_body`).
    pub outline_serial_loops: bool,
}

/// A runtime resource live at the current point of a function.
pub(crate) struct LiveResource {
    pub value: Val,
    /// The runtime function that releases it, called as
    /// `f(user_context, resource)`.
    pub release: &'static str,
    /// The block, made on the first error exit while the resource is
    /// live, that releases it and the resources below it and returns the
    /// error code its phi receives. Every error exit at this depth
    /// branches there instead of releasing everything inline.
    pub cleanup: Option<(LLVMBasicBlockRef, Val)>,
}

impl LiveResource {
    pub(crate) fn new(value: Val, release: &'static str) -> LiveResource {
        LiveResource { value, release, cleanup: None }
    }
}

impl FnState {
    pub(crate) fn new(function: Val, entry_block: LLVMBasicBlockRef, user_context: Val, size: usize) -> FnState {
        FnState {
            function,
            entry_block,
            user_context,
            symbols: FastMap::default(),
            heap_allocs: Vec::new(),
            message_buffer: None,
            size,
            loop_depth: 0,
            is_pipeline_body: false,
            outline_serial_loops: false,
        }
    }
}

pub struct CodeGen {
    pub(crate) c: LLVMContextRef,
    pub(crate) m: LLVMModuleRef,
    pub(crate) b: LLVMBuilderRef,
    pub(crate) target: JitTarget,
    pub(crate) f: FnState,
    pub(crate) pipeline_name: String,
    pub(crate) closure_counter: usize,
    pub(crate) strings: FastMap<String, Val>,
    /// Widest vector (in bits) the target handles natively.
    pub(crate) native_vector_bits: u32,
    /// Bytes in a pointer of the target (the module's data layout): the
    /// size of a Handle in memory and of `size_t` in runtime calls.
    pub(crate) ptr_bytes: u32,
    /// Where `halide_buffer_t`'s fields are, for that pointer size.
    pub(crate) buffer_offsets: BufferOffsets,
    /// Round, floor, ceil and trunc in float arithmetic (`math.rs`), not
    /// LLVM's intrinsics: 32-bit ARM (LLVM cannot select a vector
    /// round-to-even there) and Hexagon (the intrinsics become calls of the
    /// C library's floor, roundeven, ..., which a bare-metal program lacks).
    pub(crate) soft_rounding: bool,
    /// Hexagon: no f64 fused multiply-add (`llvm.fma` becomes a call of the
    /// C library's fma); multiply, then add.
    pub(crate) no_f64_fma: bool,
    /// Hexagon: masked vector memory operations lane by lane
    /// (`masked_memory`).
    pub(crate) lane_by_lane_masked_memory: bool,
    /// Hexagon: a vector's low bits as bools by comparison, not `trunc`
    /// (LLVM cannot select a truncation to a short i1 vector there: "Cannot
    /// select: v4i1 = truncate", cross fuzz seed 74).
    pub(crate) no_trunc_to_bool_vectors: bool,
    /// Inside an `Atomic` node without a mutex: stores are atomic updates.
    pub(crate) atomic_stores: bool,
    /// The widest element (in bits) whose unpredicated gathers are emitted
    /// as `llvm.masked.gather` with every lane on (`codegen_load`), which
    /// the IR optimizer passes over in one instruction instead of a long
    /// insertelement chain; `expand_gathers` writes them out per lane after
    /// it. 0: none (the per-lane loads from the start).
    pub(crate) gather_intrinsic_max_bits: u8,
    /// The code weight (`size_and_code_weight`) of the pipeline's whole
    /// body (0 before it is generated): loops that are a large share of it
    /// are outlined (`should_outline`).
    pub(crate) pipeline_weight: usize,
    /// The alias analysis tag of each buffer's elements (`buffer_tbaa`).
    pub(crate) tbaa_tags: FastMap<String, Val>,
}

impl CodeGen {
    /// # Safety
    /// `context` and `module` must be valid and outlive the CodeGen.
    pub(crate) unsafe fn new(
        context: LLVMContextRef,
        module: LLVMModuleRef,
        target: &JitTarget,
        name: &str,
    ) -> CodeGen {
        let b = inkwell::llvm_sys::core::LLVMCreateBuilderInContext(context);
        let native_vector_bits = if target.has_feature("hvx-length128b") {
            1024
        } else if target.has_feature("avx512f") {
            512
        } else if target.has_feature("avx") {
            256
        } else {
            128
        };
        let ptr_bytes = inkwell::llvm_sys::target::LLVMPointerSize(
            inkwell::llvm_sys::target::LLVMGetModuleDataLayout(module),
        );
        let triple = std::ffi::CStr::from_ptr(inkwell::llvm_sys::core::LLVMGetTarget(module)).to_string_lossy();
        let hexagon = triple.starts_with("hexagon");
        let x86 = triple.starts_with("x86_64") || triple.starts_with("i386") || triple.starts_with("i686");
        let soft_rounding = hexagon || triple.starts_with("arm") && !triple.starts_with("arm64") || triple.starts_with("thumb");
        CodeGen {
            c: context,
            m: module,
            b,
            ptr_bytes,
            soft_rounding,
            no_f64_fma: hexagon,
            lane_by_lane_masked_memory: hexagon,
            no_trunc_to_bool_vectors: hexagon,
            buffer_offsets: BufferOffsets::for_pointer_bytes(ptr_bytes as u64),
            target: target.clone(),
            f: FnState::new(std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0),
            pipeline_name: name.to_string(),
            closure_counter: 0,
            strings: FastMap::default(),
            native_vector_bits,
            atomic_stores: false,
            pipeline_weight: 0,
            tbaa_tags: FastMap::default(),
            gather_intrinsic_max_bits: if x86 { 64 } else { 0 },
        }
    }

    pub(crate) fn push_sym(&mut self, name: &str, v: Val) {
        self.f.symbols.entry(name.to_string()).or_default().push(v);
    }
    pub(crate) fn pop_sym(&mut self, name: &str) {
        if let Some(s) = self.f.symbols.get_mut(name) {
            s.pop();
            if s.is_empty() {
                self.f.symbols.remove(name);
            }
        }
    }
    pub(crate) fn sym(&self, name: &str) -> Result<Val> {
        self.f
            .symbols
            .get(name)
            .and_then(|s| s.last().copied())
            .ok_or_else(|| Error::internal(format!("codegen: symbol not found: {name}")))
    }
}

impl Drop for CodeGen {
    fn drop(&mut self) {
        // SAFETY: created in `new`.
        unsafe { inkwell::llvm_sys::core::LLVMDisposeBuilder(self.b) }
    }
}
