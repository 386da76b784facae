//! Splitting one pipeline's LLVM module into partitions that compile on
//! separate threads.
//!
//! LLVM optimizes and generates code for a module on one thread, and that
//! is most of a JIT compile. A pipeline's code is mostly separate
//! functions that never inline into each other: the body, and one closure
//! per parallel loop, which the runtime calls by address
//! (`halide_do_par_for`). So whole functions can go to different
//! partitions, each compiled into its own object; the loader links the
//! objects together (`jit_loader`).
//!
//! Assumes: a verified, unoptimized module whose globals are all constant
//! (pipeline code keeps no state in globals; a module with a mutable one
//! is not split). Guarantees, for a [`Plan`] applied to a copy of the
//! module per partition ([`Plan::keep_partition`]):
//! - each *unit* (a function that is defined with external linkage, or
//!   whose address is taken, or that is `noinline`) is defined in exactly one partition, with
//!   external linkage, and only declared in the others;
//! - each *helper* (an internal function called directly from one place)
//!   stays defined, internal, in every partition, so it still inlines
//!   where it is called (copies nobody calls are dropped by the optimizer);
//! - constant globals stay in every partition (private copies).

use std::collections::{HashMap, HashSet};

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::{LLVMModuleRef, LLVMTypeRef, LLVMValueRef};
use inkwell::llvm_sys::{LLVMLinkage, LLVMTypeKind};

/// Below this many LLVM instructions (a gather's lanes counted as the code
/// they become: `weight`) a module compiles on one thread. A second thread
/// generates the module again (0.2-0.6 ms for a small pipeline, on the
/// other core) and pays LLVM's fixed costs again, but LLVM's cost is
/// mostly per function even for a few hundred instructions: with two
/// cores, `f[x] = x + k` (a body, its argv wrapper and one helper unit)
/// compiles in 3.9 instead of 5.0 ms split, the bench's histograms in
/// 7 instead of 10, its matmul and convolution in 13-14 instead of 21.
/// (Until stop 65 this was 2,000, from blur on AVX2: ~2,600 instructions,
/// 200 -> 120 ms split.)
pub(crate) const MIN_INSTRUCTIONS_TO_SPLIT: usize = 100;

/// Which partition defines each unit.
pub(crate) struct Plan {
    partition_of: HashMap<String, usize>,
    partitions: usize,
}

impl Plan {
    pub(crate) fn partitions(&self) -> usize {
        self.partitions
    }

    /// Make `module` (a copy of the module the plan was made for) hold
    /// only what partition `index` compiles: the units of other partitions
    /// become declarations, and its own units external.
    pub(crate) fn keep_partition(&self, module: LLVMModuleRef, index: usize) {
        // SAFETY: `module` is a live module; functions are collected before
        // any is replaced, and each is used only while it exists.
        unsafe {
            for f in functions(module) {
                if LLVMIsDeclaration(f) != 0 {
                    continue;
                }
                let Some(&owner) = self.partition_of.get(&name_of(f)) else {
                    continue;
                };
                if owner == index {
                    LLVMSetLinkage(f, LLVMLinkage::LLVMExternalLinkage);
                } else {
                    replace_with_declaration(module, f);
                }
            }
        }
    }
}

/// A plan that spreads the module's units over at most `threads`
/// partitions with about equal numbers of instructions (heaviest first,
/// each to the lightest partition so far); None when the module should be
/// compiled whole (one thread, a small module, a single unit, a mutable
/// global, an unnamed unit). `started_early`: the other partitions' threads
/// started generating their copies when this one did (`jit`).
/// `hardware_gathers`: gathers stay gather instructions (`hardware_gathers`).
pub(crate) fn plan(
    module: LLVMModuleRef,
    threads: usize,
    started_early: bool,
    hardware_gathers: bool,
) -> Option<Plan> {
    if threads < 2 {
        return None;
    }
    // SAFETY: `module` is a live module, only read here.
    unsafe {
        if globals(module).any(|g| LLVMIsGlobalConstant(g) == 0) {
            return None;
        }
        let (defined, helpers) = defined_functions(module);
        let mut units: Vec<(usize, String)> = Vec::new();
        let mut total = 0;
        for &f in defined.iter().filter(|f| !helpers.contains(f)) {
            let name = name_of(f);
            if name.is_empty() {
                return None;
            }
            let weight = weight(f, &helpers, hardware_gathers);
            total += weight;
            units.push((weight, name));
        }
        let min_total = if crate::jit::stress_codegen() {
            0
        } else {
            MIN_INSTRUCTIONS_TO_SPLIT
        };
        if units.len() < 2 || total < min_total * SCALAR_WEIGHT {
            if crate::jit::debug_level() >= 2 {
                eprintln!("module split: compiled whole ({} units, weight {total})", units.len());
            }
            return None;
        }
        units.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let partitions = threads.min(units.len());
        // Every partition but the first (this thread's) generates its own
        // copy of the module. Started late, after the plan, a partition
        // begins optimizing a generation later than this thread: about 6%
        // of the time its half of local_laplacian then takes to compile
        // (~25 of ~370 ms), i.e. ~3% of the module's weight.
        let late = if started_early { 0 } else { total * 3 / 100 };
        let mut load: Vec<usize> = (0..partitions).map(|i| if i == 0 { 0 } else { late }).collect();
        let mut partition_of = HashMap::new();
        let debug = crate::jit::debug_level() >= 2;
        for (w, name) in units {
            let lightest = (0..partitions).min_by_key(|&i| (load[i], i)).unwrap_or(0);
            load[lightest] += w;
            if debug {
                eprintln!("module split: {name} (weight {w}) -> partition {lightest}");
            }
            partition_of.insert(name, lightest);
        }
        if debug {
            eprintln!("module split: partition weights {load:?}");
        }
        Some(Plan {
            partition_of,
            partitions,
        })
    }
}

/// Each unit of `module` (see the module's comment) with its `weight`,
/// and a plan that gives it partition 0 alone (every other unit
/// partition 1): for measuring what each unit costs to compile
/// (`HL_DEBUG_CODEGEN=4`), the data the weights are fitted to.
pub(crate) fn single_unit_plans(module: LLVMModuleRef, hardware_gathers: bool) -> Vec<(String, usize, Plan)> {
    // SAFETY: `module` is a live module, only read here.
    unsafe {
        let (defined, helpers) = defined_functions(module);
        let units: Vec<(String, usize)> = defined
            .iter()
            .filter(|f| !helpers.contains(f))
            .map(|&f| (name_of(f), weight(f, &helpers, hardware_gathers)))
            .collect();
        units
            .iter()
            .map(|(name, w)| {
                let partition_of = units
                    .iter()
                    .map(|(other, _)| (other.clone(), usize::from(other != name)))
                    .collect();
                (name.clone(), *w, Plan { partition_of, partitions: 2 })
            })
            .collect()
    }
}

/// Does function `f` carry the enum attribute `name`?
unsafe fn has_attribute(f: LLVMValueRef, name: &std::ffi::CStr) -> bool {
    let kind = LLVMGetEnumAttributeKindForName(name.as_ptr(), name.to_bytes().len());
    !LLVMGetEnumAttributeAtIndex(f, u32::MAX, kind).is_null()
}

/// The functions `module` defines, and which of them are helpers.
///
/// # Safety
/// `module` must be a live module.
unsafe fn defined_functions(module: LLVMModuleRef) -> (Vec<LLVMValueRef>, HashSet<LLVMValueRef>) {
    let defined: Vec<LLVMValueRef> = functions(module)
        .into_iter()
        .filter(|&f| LLVMIsDeclaration(f) == 0)
        .collect();
    let helpers = defined.iter().copied().filter(|&f| is_helper(f)).collect();
    (defined, helpers)
}

/// An internal function, not `noinline`, whose one use is a direct call
/// to it (a function called from several places, like the pipeline's body
/// function, would be compiled once per caller's partition).
unsafe fn is_helper(f: LLVMValueRef) -> bool {
    let linkage = LLVMGetLinkage(f);
    if !matches!(
        linkage,
        LLVMLinkage::LLVMInternalLinkage | LLVMLinkage::LLVMPrivateLinkage
    ) {
        return false;
    }
    if has_attribute(f, c"noinline") {
        return false;
    }
    let mut calls = 0;
    let mut u = LLVMGetFirstUse(f);
    while !u.is_null() {
        let user = LLVMGetUser(u);
        if LLVMIsACallInst(user).is_null() || LLVMGetCalledValue(user) != f {
            return false;
        }
        calls += 1;
        u = LLVMGetNextUse(u);
    }
    calls == 1
}

/// The weight of a scalar and of a vector instruction (see `weight`).
const SCALAR_WEIGHT: usize = 10;
const VECTOR_WEIGHT: usize = 4;

/// About how long compiling `f` takes: its instructions and those of the
/// helpers it calls (which are copied into its partition), counted once
/// each, a vector instruction as 4/10 of a scalar one, and its loops
/// (`LOOP_WEIGHT`). A function's O3 and machine code cost about 0.17 M
/// instructions of LLVM per instruction of its IR (callgrind, each unit
/// of Halide's apps compiled in a partition of its own, LLVM 19,
/// 2026-12), scalar code (the body's checks, the closures' setup) more
/// and vector-heavy loops less.
///
/// Refitted in stop 59 on each unit's own compile time in the process
/// (`HL_DEBUG_CODEGEN=4` prints it: each unit optimized and compiled
/// alone, 55 units of the four apps). The straight vector code of the
/// apps' inner loops is cheap to compile (bilateral_grid's output
/// loops, 1,065 vector and ~470 scalar instructions: 8 ms each) and
/// loop-heavy scalar code is not (its blurz closure, 1,731 scalar
/// instructions and 38 loops: 57 ms, 44% of the module; the earlier
/// weights, 7 per vector instruction and 250 per loop, put it at 28%,
/// and bilateral_grid's two partitions took 86 and 39 ms). With these
/// weights its partitions are within 7% of each other and its cold
/// compile went 117 -> 100 ms (median of 7, side by side), interpolate's
/// 423 -> 413 ms; local_laplacian's, balanced by chance under the old
/// weights, 437 -> 454 ms (its plan is 5% off the best one now). No
/// weights of this form balanced all three better: the units' costs are
/// not linear in these counts (local_laplacian's two largest differ
/// 2.4-fold in cost and 1.9-fold in weight), so the plan is only as good
/// as the estimate of its few largest units.
///
/// An `optnone` function (a JIT pipeline's cold body) costs about half as
/// much per instruction (callgrind, 2026-12: interpolate's body of ~2.8k
/// instructions, 0.27 G less LLVM work).
unsafe fn weight(f: LLVMValueRef, helpers: &HashSet<LLVMValueRef>, hardware_gathers: bool) -> usize {
    let w = instruction_weight(f, helpers, hardware_gathers);
    if has_attribute(f, c"optnone") {
        w / 2
    } else {
        w
    }
}

/// `weight` before its corrections: instructions, of `f` and its helpers.
unsafe fn instruction_weight(
    f: LLVMValueRef,
    helpers: &HashSet<LLVMValueRef>,
    hardware_gathers: bool,
) -> usize {
    let mut seen = HashSet::new();
    let mut stack = vec![f];
    let mut total = 0;
    while let Some(g) = stack.pop() {
        if !seen.insert(g) {
            continue;
        }
        total += back_edges(g) * LOOP_WEIGHT;
        for inst in instructions(g) {
            total += if is_vector(LLVMTypeOf(inst)) { VECTOR_WEIGHT } else { SCALAR_WEIGHT };
            if !LLVMIsACallInst(inst).is_null() {
                let callee = LLVMGetCalledValue(inst);
                if helpers.contains(&callee) {
                    stack.push(callee);
                }
                total += gather_lanes(inst, callee, hardware_gathers) * GATHER_INSTRUCTIONS_PER_LANE * SCALAR_WEIGHT;
            }
        }
    }
    total
}

/// The weight of a loop, counted as a branch back to an earlier block:
/// LLVM's loop passes (rotation, LICM, induction variables, strength
/// reduction) cost per loop beyond its instructions. Measured (each
/// unit's own compile time, stop 59): a least-squares fit over the apps'
/// units puts a loop at 60-150 scalar instructions; strength reduction
/// alone is 54% of the machine code of bilateral_grid's blurz closure
/// (38 loops whose addresses step by a run-time stride). 80 balanced the
/// apps' plans best (stop 56 had taken 25, a sixth of its fit, when the
/// vector instructions were weighed higher).
const LOOP_WEIGHT: usize = 800;

/// The branches of `f` to a block at or before their own (code generation
/// emits a loop's header before its body, so each loop has one).
unsafe fn back_edges(f: LLVMValueRef) -> usize {
    let mut index = HashMap::new();
    let mut b = LLVMGetFirstBasicBlock(f);
    while !b.is_null() {
        let n = index.len();
        index.insert(b, n);
        b = LLVMGetNextBasicBlock(b);
    }
    let mut count = 0;
    for (&block, &at) in &index {
        let term = LLVMGetBasicBlockTerminator(block);
        if term.is_null() {
            continue;
        }
        for k in 0..LLVMGetNumSuccessors(term) {
            if index.get(&LLVMGetSuccessor(term, k)).is_some_and(|&to| to <= at) {
                count += 1;
            }
        }
    }
    count
}

/// The scalar instructions a lane of a masked gather or scatter becomes:
/// one instruction until after the optimizer, it is written out per lane
/// (`expand_gathers`, or the back end's scalarization) into an extract, an
/// extension, an address, the access and an insert. blur's edge gathers
/// are half its machine code while a tenth of its instructions.
const GATHER_INSTRUCTIONS_PER_LANE: usize = 5;

/// The lanes of `call` if it calls `llvm.masked.gather` or
/// `llvm.masked.scatter` (the pointer vector is the first operand of
/// the gather and the second of the scatter); else 0. A gather that
/// stays a gather instruction (`hardware_gathers`) is one instruction.
unsafe fn gather_lanes(call: LLVMValueRef, callee: LLVMValueRef, hardware_gathers: bool) -> usize {
    let name = name_of(callee);
    let operand = if name.starts_with("llvm.masked.gather.") {
        if hardware_gathers && crate::expand_gathers::has_gather_instruction(call) {
            return 0;
        }
        0
    } else if name.starts_with("llvm.masked.scatter.") {
        1
    } else {
        return 0;
    };
    let ptrs = LLVMTypeOf(LLVMGetOperand(call, operand));
    if is_vector(ptrs) {
        LLVMGetVectorSize(ptrs) as usize
    } else {
        0
    }
}

/// Replace the definition `f` with a declaration of the same name and type
/// (a new one: the definition's flags, such as being local to this object,
/// must not carry over to a symbol another object defines).
unsafe fn replace_with_declaration(module: LLVMModuleRef, f: LLVMValueRef) {
    let name = name_of(f);
    let moved = format!("{name}.defined_elsewhere");
    LLVMSetValueName2(f, moved.as_ptr() as *const _, moved.len());
    let c = std::ffi::CString::new(name).unwrap_or_default();
    let decl = LLVMAddFunction(module, c.as_ptr(), LLVMGlobalGetValueType(f));
    LLVMSetFunctionCallConv(decl, LLVMGetFunctionCallConv(f));
    LLVMReplaceAllUsesWith(f, decl);
    LLVMDeleteFunction(f);
}

unsafe fn is_vector(t: LLVMTypeRef) -> bool {
    LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind
}

unsafe fn name_of(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    let p = LLVMGetValueName2(v, &mut len);
    if p.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
}

unsafe fn functions(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut f = LLVMGetFirstFunction(module);
    while !f.is_null() {
        out.push(f);
        f = LLVMGetNextFunction(f);
    }
    out
}

unsafe fn globals(module: LLVMModuleRef) -> impl Iterator<Item = LLVMValueRef> {
    let mut g = LLVMGetFirstGlobal(module);
    std::iter::from_fn(move || {
        if g.is_null() {
            return None;
        }
        let this = g;
        g = LLVMGetNextGlobal(g);
        Some(this)
    })
}

unsafe fn instructions(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    let mut b = LLVMGetFirstBasicBlock(f);
    while !b.is_null() {
        let mut i = LLVMGetFirstInstruction(b);
        while !i.is_null() {
            out.push(i);
            i = LLVMGetNextInstruction(i);
        }
        b = LLVMGetNextBasicBlock(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    #[test]
    fn a_loop_is_one_back_edge_and_a_diamond_none() {
        let text = r#"
define void @loop(i32 %n) {
entry:
  br label %header
header:
  %i = phi i32 [ 0, %entry ], [ %next, %header ]
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %header
exit:
  ret void
}
define i32 @diamond(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  br label %join
b:
  br label %join
join:
  %v = phi i32 [ 1, %a ], [ 2, %b ]
  ret i32 %v
}
"#;
        let context = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "test");
        let module = context.create_module_from_ir(buffer).unwrap();
        let f = |name: &str| inkwell::values::AsValueRef::as_value_ref(&module.get_function(name).unwrap());
        // SAFETY: the functions belong to the live module.
        unsafe {
            assert_eq!(back_edges(f("loop")), 1);
            assert_eq!(back_edges(f("diamond")), 0);
        }
    }
}
