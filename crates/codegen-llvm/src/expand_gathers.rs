//! After the IR optimizer: every `llvm.masked.gather` with all lanes on
//! becomes one scalar load per lane, each through its own scalar index.
//!
//! Assumes: the module is optimized. Guarantees: no all-lanes-on gather
//! is left; predicated gathers are untouched (the back end lowers them).
//!
//! Why both forms: code generation emits an unpredicated gather as the
//! intrinsic (`gather_intrinsic_max_bits`), one instruction the IR
//! optimizer passes over, where the per-lane form is a long insertelement
//! chain that InstCombine and GVN walk again and again (half the blur
//! app's O3 time; a sixth of local_laplacian's IR). But the back end
//! would turn the intrinsic into a hardware gather where the CPU has a
//! fast one, or, expanding it, compute a vector of 64-bit pointers and
//! extract each, both slower than Halide's per-lane loads with scalar
//! indices (`[base + idx * 4]`). So the per-lane form is written here,
//! after the optimizer and before the back end. An index vector the
//! optimizer sign-extended to 64 bits is read at 32 bits, each lane
//! extended as a scalar (`vpextrd` + `movslq`, as Halide's code does):
//! extracting 64-bit lanes took twice the shuffles, and bilateral_grid's
//! 16 gathers per vector ran ~25% slower on an Intel Xeon for it.

use std::ffi::CStr;

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::LLVMTypeKind;

/// Expand the all-lanes-on gathers of every function of `module`; with
/// `hardware`, except those the CPU's gather instructions load
/// (`hardware_gathers`: the JIT measured them faster on this machine).
///
/// # Safety
/// `module` must be a valid module, not used by another thread meanwhile.
pub(crate) unsafe fn expand_all_lanes_gathers(module: LLVMModuleRef, hardware: bool) {
    let mut gathers = vec![];
    let mut f = LLVMGetFirstFunction(module);
    while !f.is_null() {
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                if is_all_lanes_gather(i) && !(hardware && has_gather_instruction(i)) {
                    gathers.push(i);
                }
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        f = LLVMGetNextFunction(f);
    }
    if gathers.is_empty() {
        return;
    }
    let builder = LLVMCreateBuilderInContext(LLVMGetModuleContext(module));
    for g in gathers {
        expand(builder, g);
    }
    LLVMDisposeBuilder(builder);
}

unsafe fn is_all_lanes_gather(i: LLVMValueRef) -> bool {
    if LLVMIsACallInst(i).is_null() {
        return false;
    }
    let callee = LLVMGetCalledValue(i);
    if callee.is_null() || LLVMIsAFunction(callee).is_null() {
        return false;
    }
    let mut len = 0;
    let name = LLVMGetValueName2(callee, &mut len);
    if name.is_null()
        || !CStr::from_ptr(name)
            .to_bytes()
            .starts_with(b"llvm.masked.gather.")
    {
        return false;
    }
    // Operands: pointers, alignment, mask, pass-through (then the callee).
    let mask = LLVMGetOperand(i, 2);
    // Constants are uniqued: an all-true mask is the all-ones constant.
    mask == LLVMConstAllOnes(LLVMTypeOf(mask))
}

/// Whether x86 has a gather instruction for the gather `call`: 32- or
/// 64-bit elements, in a power of two of at least 4 lanes (the back end
/// splits wider ones; narrower elements, or 2 lanes, it writes out itself,
/// with a vector of 64-bit pointers).
pub(crate) unsafe fn has_gather_instruction(call: LLVMValueRef) -> bool {
    let vt = LLVMTypeOf(call);
    if LLVMGetTypeKind(vt) != LLVMTypeKind::LLVMVectorTypeKind {
        return false;
    }
    let elem = LLVMGetElementType(vt);
    let bits = match LLVMGetTypeKind(elem) {
        LLVMTypeKind::LLVMIntegerTypeKind => LLVMGetIntTypeWidth(elem),
        LLVMTypeKind::LLVMFloatTypeKind => 32,
        LLVMTypeKind::LLVMDoubleTypeKind | LLVMTypeKind::LLVMPointerTypeKind => 64,
        _ => 0,
    };
    let lanes = LLVMGetVectorSize(vt);
    matches!(bits, 32 | 64) && lanes >= 4 && lanes.is_power_of_two()
}

/// Replace the gather `g` by per-lane loads.
unsafe fn expand(b: LLVMBuilderRef, g: LLVMValueRef) {
    let ptrs = LLVMGetOperand(g, 0);
    let align = LLVMConstIntGetZExtValue(LLVMGetOperand(g, 1)) as u32;
    let vt = LLVMTypeOf(g);
    let elem = LLVMGetElementType(vt);
    let lanes = LLVMGetVectorSize(vt);
    let i32t = LLVMInt32TypeInContext(LLVMGetTypeContext(vt));
    LLVMPositionBuilderBefore(b, g);
    // `getelementptr T, ptr %base, <N x iK> %idx`: each lane's address from
    // its own scalar index, as the per-lane form the optimizer would have
    // seen. Any other vector of pointers: its lanes.
    let gep = scalar_base_gep(ptrs);
    // A 64-bit index vector sign-extended from 32 bits: each lane's index
    // is extracted at 32 bits and extended as a scalar (`vpextrd` +
    // `movslq`, Halide's form), not extended as a vector and extracted at
    // 64 bits, which costs twice the extracts.
    let narrow = gep.and_then(|(_, _, index, _)| {
        (!LLVMIsAInstruction(index).is_null()
            && LLVMGetInstructionOpcode(index) == inkwell::llvm_sys::LLVMOpcode::LLVMSExt)
        .then(|| LLVMGetOperand(index, 0))
    });
    // The gather's alias tag (`buffer_tbaa`) carries over to each load.
    let tbaa_kind = LLVMGetMDKindIDInContext(LLVMGetTypeContext(vt), c"tbaa".as_ptr(), 4);
    let tbaa = LLVMGetMetadata(g, tbaa_kind);
    let mut acc = LLVMGetPoison(vt);
    for lane in 0..lanes {
        let at = LLVMConstInt(i32t, lane as u64, 0);
        let p = match gep {
            Some((source, base, index, inbounds)) => {
                let mut idx = match narrow {
                    Some(n) => {
                        let lane_index = LLVMBuildExtractElement(b, n, at, c"".as_ptr());
                        let i64t = LLVMGetElementType(LLVMTypeOf(index));
                        LLVMBuildSExt(b, lane_index, i64t, c"".as_ptr())
                    }
                    None => LLVMBuildExtractElement(b, index, at, c"".as_ptr()),
                };
                if inbounds {
                    LLVMBuildInBoundsGEP2(b, source, base, &mut idx, 1, c"".as_ptr())
                } else {
                    LLVMBuildGEP2(b, source, base, &mut idx, 1, c"".as_ptr())
                }
            }
            None => LLVMBuildExtractElement(b, ptrs, at, c"".as_ptr()),
        };
        let load = LLVMBuildLoad2(b, elem, p, c"".as_ptr());
        LLVMSetAlignment(load, align.max(1));
        if !tbaa.is_null() {
            LLVMSetMetadata(load, tbaa_kind, tbaa);
        }
        acc = LLVMBuildInsertElement(b, acc, load, at, c"".as_ptr());
    }
    LLVMReplaceAllUsesWith(g, acc);
    LLVMInstructionEraseFromParent(g);
    if gep.is_some() && LLVMGetFirstUse(ptrs).is_null() {
        LLVMInstructionEraseFromParent(ptrs);
        if let Some((_, _, index, _)) = gep {
            if narrow.is_some() && LLVMGetFirstUse(index).is_null() {
                LLVMInstructionEraseFromParent(index);
            }
        }
    }
}

/// `(source element type, base, vector index, inbounds)` of a GEP
/// instruction with a scalar base and one vector index.
unsafe fn scalar_base_gep(
    ptrs: LLVMValueRef,
) -> Option<(LLVMTypeRef, LLVMValueRef, LLVMValueRef, bool)> {
    if LLVMIsAGetElementPtrInst(ptrs).is_null() || LLVMGetNumOperands(ptrs) != 2 {
        return None;
    }
    let base = LLVMGetOperand(ptrs, 0);
    let index = LLVMGetOperand(ptrs, 1);
    let scalar_base = LLVMGetTypeKind(LLVMTypeOf(base)) == LLVMTypeKind::LLVMPointerTypeKind;
    let vector_index = LLVMGetTypeKind(LLVMTypeOf(index)) == LLVMTypeKind::LLVMVectorTypeKind;
    (scalar_base && vector_index).then(|| {
        (
            LLVMGetGEPSourceElementType(ptrs),
            base,
            index,
            LLVMIsInBounds(ptrs) != 0,
        )
    })
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// The module `ir` with its gathers expanded, verified, as text.
    fn expanded(ir: &str) -> String {
        expanded_for(ir, false)
    }

    /// The same, `hardware`: where the JIT keeps gather instructions.
    fn expanded_for(ir: &str, hardware: bool) -> String {
        let context = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test");
        let module = context.create_module_from_ir(buffer).unwrap();
        unsafe { super::expand_all_lanes_gathers(module.as_mut_ptr(), hardware) };
        module.verify().unwrap();
        module.print_to_string().to_string()
    }

    #[test]
    fn with_gather_instructions_only_what_they_cannot_load_is_expanded() {
        // 32- and 64-bit elements in 4 or more lanes stay gathers; 16-bit
        // elements and 2 lanes have no gather instruction.
        let ir = "
          define void @f(ptr %base, <8 x i32> %i8, <2 x i32> %i2, ptr %out) {
            %p8 = getelementptr inbounds float, ptr %base, <8 x i32> %i8
            %a = call <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr> %p8, i32 4, <8 x i1> <i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true>, <8 x float> zeroinitializer)
            %q8 = getelementptr inbounds i16, ptr %base, <8 x i32> %i8
            %b = call <8 x i16> @llvm.masked.gather.v8i16.v8p0(<8 x ptr> %q8, i32 2, <8 x i1> <i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true, i1 true>, <8 x i16> zeroinitializer)
            %p2 = getelementptr inbounds double, ptr %base, <2 x i32> %i2
            %c = call <2 x double> @llvm.masked.gather.v2f64.v2p0(<2 x ptr> %p2, i32 8, <2 x i1> <i1 true, i1 true>, <2 x double> zeroinitializer)
            store <8 x float> %a, ptr %out
            store <8 x i16> %b, ptr %out
            store <2 x double> %c, ptr %out
            ret void
          }
          declare <8 x float> @llvm.masked.gather.v8f32.v8p0(<8 x ptr>, i32, <8 x i1>, <8 x float>)
          declare <8 x i16> @llvm.masked.gather.v8i16.v8p0(<8 x ptr>, i32, <8 x i1>, <8 x i16>)
          declare <2 x double> @llvm.masked.gather.v2f64.v2p0(<2 x ptr>, i32, <2 x i1>, <2 x double>)";
        let calls = |text: &str| {
            text.lines()
                .filter(|l| l.contains("call") && l.contains("@llvm.masked.gather"))
                .map(|l| l.split('@').nth(1).unwrap_or("").split('(').next().unwrap_or("").to_string())
                .collect::<Vec<_>>()
        };
        let kept = expanded_for(ir, true);
        assert_eq!(calls(&kept), ["llvm.masked.gather.v8f32.v8p0"], "{kept}");
        assert_eq!(kept.matches("load i16").count(), 8, "{kept}");
        assert_eq!(kept.matches("load double").count(), 2, "{kept}");
        let lanes = expanded_for(ir, false);
        assert!(calls(&lanes).is_empty(), "{lanes}");
        assert_eq!(lanes.matches("load float").count(), 8, "{lanes}");
    }

    #[test]
    fn all_lanes_gathers_become_scalar_loads_and_predicated_ones_stay() {
        let ir = "
          define <4 x i32> @f(ptr %base, <4 x i32> %idx, <4 x i1> %m) {
            %p = getelementptr inbounds i32, ptr %base, <4 x i32> %idx
            %all = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> %p, i32 4, <4 x i1> <i1 true, i1 true, i1 true, i1 true>, <4 x i32> zeroinitializer)
            %some = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> %p, i32 4, <4 x i1> %m, <4 x i32> zeroinitializer)
            %splat = insertelement <4 x ptr> poison, ptr %base, i32 0
            %same = shufflevector <4 x ptr> %splat, <4 x ptr> poison, <4 x i32> zeroinitializer
            %one = call <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr> %same, i32 4, <4 x i1> <i1 true, i1 true, i1 true, i1 true>, <4 x i32> zeroinitializer)
            %s = add <4 x i32> %all, %some
            %t = add <4 x i32> %s, %one
            ret <4 x i32> %t
          }
          declare <4 x i32> @llvm.masked.gather.v4i32.v4p0(<4 x ptr>, i32, <4 x i1>, <4 x i32>)";
        let text = expanded(ir);
        let calls = text
            .lines()
            .filter(|l| l.contains("call") && l.contains("@llvm.masked.gather"))
            .count();
        assert_eq!(calls, 1, "{text}");
        // Four lanes through scalar indices, four through the splat's lanes.
        assert_eq!(text.matches("load i32").count(), 8, "{text}");
        assert_eq!(
            text.matches("getelementptr inbounds i32, ptr %base, i32")
                .count(),
            4,
            "{text}"
        );
    }

    #[test]
    fn a_sign_extended_index_is_extracted_at_32_bits() {
        // After O3 a gather's index vector is `sext <N x i32> to <N x i64>`:
        // each lane's index is extracted from the 32-bit vector and
        // extended as a scalar, and the vector extension goes.
        let ir = "
          define <4 x float> @f(ptr %base, <4 x i32> %idx) {
            %wide = sext <4 x i32> %idx to <4 x i64>
            %p = getelementptr inbounds float, ptr %base, <4 x i64> %wide
            %all = call <4 x float> @llvm.masked.gather.v4f32.v4p0(<4 x ptr> %p, i32 4, <4 x i1> <i1 true, i1 true, i1 true, i1 true>, <4 x float> zeroinitializer)
            ret <4 x float> %all
          }
          declare <4 x float> @llvm.masked.gather.v4f32.v4p0(<4 x ptr>, i32, <4 x i1>, <4 x float>)";
        let text = expanded(ir);
        assert_eq!(text.matches("extractelement <4 x i32> %idx").count(), 4, "{text}");
        assert_eq!(text.matches("sext i32").count(), 4, "{text}");
        assert!(!text.contains("<4 x i64>"), "{text}");
        assert_eq!(text.matches("load float").count(), 4, "{text}");
    }
}
