//! Thin helpers over LLVM's C API: types, constants, arithmetic, casts,
//! control flow, calls and intrinsics, on raw `Val`/`Ty` references.
//! Every helper works on scalars and vectors alike.

use std::ffi::{c_char, CString};

use ferrohalide_core::{Error, Result};
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMAttributeFunctionIndex, LLVMInlineAsmDialect, LLVMTypeKind};

use super::{CodeGen, Ty, Val};

pub(crate) const NONAME: *const c_char = c"".as_ptr();

pub(crate) use inkwell::llvm_sys::LLVMIntPredicate as IP;
pub(crate) use inkwell::llvm_sys::LLVMOpcode as Op;
pub(crate) use inkwell::llvm_sys::LLVMRealPredicate as FP;

fn cstr(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

#[allow(dead_code)]
impl CodeGen {
    // ---- types -------------------------------------------------------------

    pub(crate) fn t_int(&self, bits: u32) -> Ty {
        unsafe { LLVMIntTypeInContext(self.c, bits) }
    }
    pub(crate) fn t_i1(&self) -> Ty {
        self.t_int(1)
    }
    pub(crate) fn t_i8(&self) -> Ty {
        self.t_int(8)
    }
    pub(crate) fn t_i16(&self) -> Ty {
        self.t_int(16)
    }
    pub(crate) fn t_i32(&self) -> Ty {
        self.t_int(32)
    }
    pub(crate) fn t_i64(&self) -> Ty {
        self.t_int(64)
    }
    pub(crate) fn t_f16(&self) -> Ty {
        unsafe { LLVMHalfTypeInContext(self.c) }
    }
    pub(crate) fn t_f32(&self) -> Ty {
        unsafe { LLVMFloatTypeInContext(self.c) }
    }
    pub(crate) fn t_f64(&self) -> Ty {
        unsafe { LLVMDoubleTypeInContext(self.c) }
    }
    pub(crate) fn t_ptr(&self) -> Ty {
        unsafe { LLVMPointerTypeInContext(self.c, 0) }
    }
    pub(crate) fn t_void(&self) -> Ty {
        unsafe { LLVMVoidTypeInContext(self.c) }
    }
    pub(crate) fn t_vec(&self, elem: Ty, lanes: u32) -> Ty {
        if lanes <= 1 {
            elem
        } else {
            unsafe { LLVMVectorType(elem, lanes) }
        }
    }
    pub(crate) fn t_fn(&self, ret: Ty, params: &[Ty]) -> Ty {
        let mut p = params.to_vec();
        unsafe { LLVMFunctionType(ret, p.as_mut_ptr(), p.len() as u32, 0) }
    }
    pub(crate) fn type_of(&self, v: Val) -> Ty {
        unsafe { LLVMTypeOf(v) }
    }
    pub(crate) fn is_vec_ty(&self, t: Ty) -> bool {
        unsafe { LLVMGetTypeKind(t) == LLVMTypeKind::LLVMVectorTypeKind }
    }
    pub(crate) fn lanes_of_ty(&self, t: Ty) -> u32 {
        if self.is_vec_ty(t) {
            unsafe { LLVMGetVectorSize(t) }
        } else {
            1
        }
    }
    pub(crate) fn lanes_of(&self, v: Val) -> u32 {
        self.lanes_of_ty(self.type_of(v))
    }
    pub(crate) fn elem_ty(&self, t: Ty) -> Ty {
        if self.is_vec_ty(t) {
            unsafe { LLVMGetElementType(t) }
        } else {
            t
        }
    }
    pub(crate) fn is_float_ty(&self, t: Ty) -> bool {
        let e = self.elem_ty(t);
        matches!(
            unsafe { LLVMGetTypeKind(e) },
            LLVMTypeKind::LLVMFloatTypeKind
                | LLVMTypeKind::LLVMDoubleTypeKind
                | LLVMTypeKind::LLVMHalfTypeKind
                | LLVMTypeKind::LLVMBFloatTypeKind
        )
    }
    pub(crate) fn int_bits_of_ty(&self, t: Ty) -> u32 {
        unsafe { LLVMGetIntTypeWidth(self.elem_ty(t)) }
    }
    /// Same shape as `like` (scalar or vector of its lane count), element `elem`.
    pub(crate) fn t_like(&self, elem: Ty, like: Ty) -> Ty {
        self.t_vec(elem, self.lanes_of_ty(like))
    }

    // ---- constants ---------------------------------------------------------

    /// Integer constant of type `t` (scalar or vector: splatted).
    pub(crate) fn cint(&self, t: Ty, v: u64) -> Val {
        unsafe {
            let e = self.elem_ty(t);
            let s = LLVMConstInt(e, v, 0);
            self.csplat(s, self.lanes_of_ty(t))
        }
    }
    /// Signed constant: sign-extended into element types wider than 64
    /// bits (the widened intermediates of mul_shift_right and friends).
    pub(crate) fn cint_s(&self, t: Ty, v: i64) -> Val {
        unsafe {
            let e = self.elem_ty(t);
            let s = LLVMConstInt(e, v as u64, 1);
            self.csplat(s, self.lanes_of_ty(t))
        }
    }
    /// A constant of any value a 128-bit integer holds, sign-extended.
    pub(crate) fn cint_i128(&self, t: Ty, v: i128) -> Val {
        match i64::try_from(v) {
            Ok(v) => self.cint_s(t, v),
            Err(_) => unsafe {
                let e = self.elem_ty(t);
                let words = [v as u64, (v >> 64) as u64];
                let s = LLVMConstIntOfArbitraryPrecision(e, 2, words.as_ptr());
                self.csplat(s, self.lanes_of_ty(t))
            },
        }
    }
    pub(crate) fn cf(&self, t: Ty, v: f64) -> Val {
        unsafe {
            let e = self.elem_ty(t);
            let s = LLVMConstReal(e, v);
            self.csplat(s, self.lanes_of_ty(t))
        }
    }
    pub(crate) fn csplat(&self, s: Val, lanes: u32) -> Val {
        if lanes <= 1 {
            return s;
        }
        let mut v = vec![s; lanes as usize];
        unsafe { LLVMConstVector(v.as_mut_ptr(), lanes) }
    }
    pub(crate) fn cvec(&self, vals: &[Val]) -> Val {
        let mut v = vals.to_vec();
        unsafe { LLVMConstVector(v.as_mut_ptr(), v.len() as u32) }
    }
    pub(crate) fn i32c(&self, v: i64) -> Val {
        self.cint(self.t_i32(), v as u64)
    }
    pub(crate) fn i64c(&self, v: i64) -> Val {
        self.cint(self.t_i64(), v as u64)
    }
    pub(crate) fn bool_c(&self, v: bool) -> Val {
        self.cint(self.t_i1(), v as u64)
    }
    pub(crate) fn undef(&self, t: Ty) -> Val {
        unsafe { LLVMGetUndef(t) }
    }
    pub(crate) fn poison(&self, t: Ty) -> Val {
        unsafe { LLVMGetPoison(t) }
    }
    pub(crate) fn null_ptr(&self) -> Val {
        unsafe { LLVMConstPointerNull(self.t_ptr()) }
    }
    pub(crate) fn zero_of(&self, t: Ty) -> Val {
        unsafe { LLVMConstNull(t) }
    }
    /// Integer constant value, if `v` is a (splat) integer constant.
    pub(crate) fn const_int_value(&self, v: Val) -> Option<i64> {
        unsafe {
            let s = if self.is_vec_ty(self.type_of(v)) {
                let c = LLVMIsAConstant(v);
                if c.is_null() {
                    return None;
                }
                let splat = LLVMGetAggregateElement(v, 0);
                if splat.is_null() {
                    return None;
                }
                // only if every lane is the same
                for i in 1..self.lanes_of(v) {
                    if LLVMGetAggregateElement(v, i) != splat {
                        return None;
                    }
                }
                splat
            } else {
                v
            };
            if LLVMIsAConstantInt(s).is_null() {
                return None;
            }
            Some(LLVMConstIntGetSExtValue(s))
        }
    }

    // ---- arithmetic --------------------------------------------------------

    pub(crate) fn binop(&self, op: Op, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildBinOp(self.b, op, a, b, NONAME) }
    }
    pub(crate) fn add(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMAdd, a, b)
    }
    /// Signed arithmetic that does not overflow (Halide's rule for signed
    /// 32/64-bit integers): lets LLVM widen index arithmetic into 64-bit
    /// addressing and induction variables.
    pub(crate) fn add_nsw(&self, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildNSWAdd(self.b, a, b, NONAME) }
    }
    pub(crate) fn sub_nsw(&self, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildNSWSub(self.b, a, b, NONAME) }
    }
    pub(crate) fn mul_nsw(&self, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildNSWMul(self.b, a, b, NONAME) }
    }
    pub(crate) fn sub(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMSub, a, b)
    }
    pub(crate) fn mul(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMMul, a, b)
    }
    pub(crate) fn and(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMAnd, a, b)
    }
    pub(crate) fn or(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMOr, a, b)
    }
    pub(crate) fn xor(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMXor, a, b)
    }
    pub(crate) fn shl(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMShl, a, b)
    }
    pub(crate) fn lshr(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMLShr, a, b)
    }
    pub(crate) fn ashr(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMAShr, a, b)
    }
    pub(crate) fn fadd(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMFAdd, a, b)
    }
    pub(crate) fn fsub(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMFSub, a, b)
    }
    pub(crate) fn fmul(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMFMul, a, b)
    }
    pub(crate) fn fdiv(&self, a: Val, b: Val) -> Val {
        self.binop(Op::LLVMFDiv, a, b)
    }
    pub(crate) fn fneg(&self, a: Val) -> Val {
        unsafe { LLVMBuildFNeg(self.b, a, NONAME) }
    }
    pub(crate) fn not(&self, a: Val) -> Val {
        unsafe { LLVMBuildNot(self.b, a, NONAME) }
    }
    pub(crate) fn neg(&self, a: Val) -> Val {
        unsafe { LLVMBuildNeg(self.b, a, NONAME) }
    }
    pub(crate) fn icmp(&self, p: IP, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildICmp(self.b, p, a, b, NONAME) }
    }
    pub(crate) fn fcmp(&self, p: FP, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildFCmp(self.b, p, a, b, NONAME) }
    }
    pub(crate) fn select(&self, c: Val, a: Val, b: Val) -> Val {
        unsafe { LLVMBuildSelect(self.b, c, a, b, NONAME) }
    }
    pub(crate) fn cast(&self, op: Op, v: Val, t: Ty) -> Val {
        if self.type_of(v) == t && op != Op::LLVMBitCast {
            return v;
        }
        unsafe { LLVMBuildCast(self.b, op, v, t, NONAME) }
    }
    /// Integer resize: truncate or extend (signed or not) to `t`.
    pub(crate) fn int_resize(&self, v: Val, t: Ty, signed: bool) -> Val {
        let from = self.int_bits_of_ty(self.type_of(v));
        let to = self.int_bits_of_ty(t);
        if from == to {
            v
        } else if from > to {
            self.cast(Op::LLVMTrunc, v, t)
        } else if signed {
            self.cast(Op::LLVMSExt, v, t)
        } else {
            self.cast(Op::LLVMZExt, v, t)
        }
    }

    // ---- vectors -----------------------------------------------------------

    /// `shufflevector a, b, mask` (mask entries < 0 are poison lanes).
    pub(crate) fn shuffle(&self, a: Val, b: Val, mask: &[i32]) -> Val {
        let i32t = self.t_i32();
        let m: Vec<Val> = mask
            .iter()
            .map(|&i| {
                if i < 0 {
                    self.poison(i32t)
                } else {
                    self.cint(i32t, i as u64)
                }
            })
            .collect();
        let mv = self.cvec(&m);
        unsafe { LLVMBuildShuffleVector(self.b, a, b, mv, NONAME) }
    }
    pub(crate) fn shuffle1(&self, a: Val, mask: &[i32]) -> Val {
        let p = self.poison(self.type_of(a));
        self.shuffle(a, p, mask)
    }
    pub(crate) fn extract(&self, v: Val, i: u32) -> Val {
        unsafe { LLVMBuildExtractElement(self.b, v, self.i32c(i as i64), NONAME) }
    }
    pub(crate) fn insert(&self, v: Val, e: Val, i: u32) -> Val {
        unsafe { LLVMBuildInsertElement(self.b, v, e, self.i32c(i as i64), NONAME) }
    }
    /// Broadcast a scalar to `lanes` lanes (identity for lanes == 1).
    pub(crate) fn splat(&self, s: Val, lanes: u32) -> Val {
        if lanes <= 1 {
            return s;
        }
        let t = self.t_vec(self.type_of(s), lanes);
        let v = self.insert(self.poison(t), s, 0);
        self.shuffle1(v, &vec![0; lanes as usize])
    }
    /// Make `v` have `lanes` lanes if it is a scalar.
    pub(crate) fn match_lanes(&self, v: Val, lanes: u32) -> Val {
        if self.lanes_of(v) == 1 && lanes > 1 {
            self.splat(v, lanes)
        } else {
            v
        }
    }
    /// Concatenate vectors (or scalars) into one vector.
    pub(crate) fn concat(&self, parts: &[Val]) -> Val {
        let mut acc: Option<Val> = None;
        for &p in parts {
            let p = if self.lanes_of(p) == 1 && !self.is_vec_ty(self.type_of(p)) {
                let t = self.t_vec(self.type_of(p), 2);
                let v = self.insert(self.poison(t), p, 0);
                self.shuffle1(v, &[0])
            } else {
                p
            };
            acc = Some(match acc {
                None => p,
                Some(a) => {
                    let na = self.lanes_of(a) as i32;
                    let np = self.lanes_of(p) as i32;
                    let w = na.max(np);
                    let pad = |v: Val, n: i32| -> Val {
                        if n == w {
                            v
                        } else {
                            let m: Vec<i32> = (0..w).map(|i| if i < n { i } else { -1 }).collect();
                            self.shuffle1(v, &m)
                        }
                    };
                    let a2 = pad(a, na);
                    let p2 = pad(p, np);
                    let m: Vec<i32> = (0..na).chain((0..np).map(|i| i + w)).collect();
                    self.shuffle(a2, p2, &m)
                }
            });
        }
        acc.expect("concat of nothing")
    }
    /// Lanes [start, start + n) of `v` (a scalar when n == 1).
    pub(crate) fn slice(&self, v: Val, start: u32, n: u32) -> Val {
        if n == 1 {
            return self.extract(v, start);
        }
        if start == 0 && n == self.lanes_of(v) {
            return v;
        }
        let m: Vec<i32> = (start..start + n).map(|i| i as i32).collect();
        self.shuffle1(v, &m)
    }

    // ---- memory ------------------------------------------------------------

    pub(crate) fn gep(&self, elem: Ty, ptr: Val, idx: Val) -> Val {
        let mut i = [idx];
        unsafe { LLVMBuildGEP2(self.b, elem, ptr, i.as_mut_ptr(), 1, NONAME) }
    }
    pub(crate) fn gep_bytes(&self, ptr: Val, offset: u64) -> Val {
        self.gep(self.t_i8(), ptr, self.i64c(offset as i64))
    }
    pub(crate) fn load(&self, t: Ty, ptr: Val, align: u32) -> Val {
        unsafe {
            let l = LLVMBuildLoad2(self.b, t, ptr, NONAME);
            LLVMSetAlignment(l, align.max(1));
            l
        }
    }
    pub(crate) fn store(&self, v: Val, ptr: Val, align: u32) -> Val {
        unsafe {
            let s = LLVMBuildStore(self.b, v, ptr);
            LLVMSetAlignment(s, align.max(1));
            s
        }
    }
    /// The type-based alias analysis tag of the elements of buffer `name`:
    /// a type of its own under one root, so LLVM knows that a store to one
    /// buffer leaves the others' values alone and can keep them in
    /// registers across it (the stores of an unrolled loop no longer
    /// force every load after them to be repeated). Buffers never overlap:
    /// each Func has its own allocation, and inputs and outputs are
    /// assumed not to alias (Halide's rule, which tags its accesses the
    /// same way). An access without a tag may alias anything.
    pub(crate) fn buffer_tbaa(&mut self, name: &str) -> Val {
        if let Some(&tag) = self.tbaa_tags.get(name) {
            return tag;
        }
        let tag = unsafe {
            let c = self.c;
            let text = |s: &str| LLVMMDStringInContext2(c, s.as_ptr() as *const c_char, s.len());
            let zero = LLVMValueAsMetadata(LLVMConstInt(LLVMInt64TypeInContext(c), 0, 0));
            let mut root = [text("ferrohalide buffer")];
            let root = LLVMMDNodeInContext2(c, root.as_mut_ptr(), 1);
            let mut ty = [text(name), root, zero];
            let ty = LLVMMDNodeInContext2(c, ty.as_mut_ptr(), 3);
            let mut access = [ty, ty, zero];
            LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, access.as_mut_ptr(), 3))
        };
        self.tbaa_tags.insert(name.to_string(), tag);
        tag
    }
    /// Tag the memory access `inst` (a load, a store, or a call of a masked
    /// memory intrinsic) with `buffer_tbaa`'s `tag`.
    pub(crate) fn set_tbaa(&self, inst: Val, tag: Val) {
        unsafe {
            if LLVMIsAInstruction(inst).is_null() {
                return;
            }
            let kind = LLVMGetMDKindIDInContext(self.c, c"tbaa".as_ptr(), 4);
            LLVMSetMetadata(inst, kind, tag);
        }
    }
    /// A static alloca in the entry block of the current function.
    pub(crate) fn entry_alloca(&self, t: Ty, align: u32) -> Val {
        unsafe {
            let tmp = LLVMCreateBuilderInContext(self.c);
            let first = LLVMGetFirstInstruction(self.f.entry_block);
            if first.is_null() {
                LLVMPositionBuilderAtEnd(tmp, self.f.entry_block);
            } else {
                LLVMPositionBuilderBefore(tmp, first);
            }
            let a = LLVMBuildAlloca(tmp, t, NONAME);
            LLVMSetAlignment(a, align.max(1));
            LLVMDisposeBuilder(tmp);
            a
        }
    }

    // ---- control flow ------------------------------------------------------

    pub(crate) fn new_block(&self, name: &str) -> LLVMBasicBlockRef {
        let n = cstr(name);
        unsafe { LLVMAppendBasicBlockInContext(self.c, self.f.function, n.as_ptr()) }
    }
    pub(crate) fn position(&self, bb: LLVMBasicBlockRef) {
        unsafe { LLVMPositionBuilderAtEnd(self.b, bb) }
    }
    pub(crate) fn current_block(&self) -> LLVMBasicBlockRef {
        unsafe { LLVMGetInsertBlock(self.b) }
    }
    pub(crate) fn br(&self, bb: LLVMBasicBlockRef) {
        unsafe {
            LLVMBuildBr(self.b, bb);
        }
    }
    pub(crate) fn cond_br(&self, c: Val, t: LLVMBasicBlockRef, f: LLVMBasicBlockRef) {
        unsafe {
            LLVMBuildCondBr(self.b, c, t, f);
        }
    }
    pub(crate) fn ret(&self, v: Val) {
        unsafe {
            LLVMBuildRet(self.b, v);
        }
    }
    pub(crate) fn phi(&self, t: Ty, incoming: &[(Val, LLVMBasicBlockRef)]) -> Val {
        unsafe {
            let p = LLVMBuildPhi(self.b, t, NONAME);
            for &(v, bb) in incoming {
                let mut vv = [v];
                let mut bbs = [bb];
                LLVMAddIncoming(p, vv.as_mut_ptr(), bbs.as_mut_ptr(), 1);
            }
            p
        }
    }
    pub(crate) fn add_incoming(&self, phi: Val, v: Val, bb: LLVMBasicBlockRef) {
        let mut vv = [v];
        let mut bbs = [bb];
        unsafe { LLVMAddIncoming(phi, vv.as_mut_ptr(), bbs.as_mut_ptr(), 1) }
    }

    // ---- functions and calls -----------------------------------------------

    /// Find or declare an external function.
    pub(crate) fn declare_fn(&self, name: &str, ret: Ty, params: &[Ty]) -> (Val, Ty) {
        let n = cstr(name);
        unsafe {
            let existing = LLVMGetNamedFunction(self.m, n.as_ptr());
            if !existing.is_null() {
                return (existing, LLVMGlobalGetValueType(existing));
            }
            let ft = self.t_fn(ret, params);
            let f = LLVMAddFunction(self.m, n.as_ptr(), ft);
            (f, ft)
        }
    }
    /// `v` through an empty inline-asm register copy: the same value,
    /// which LLVM's analyses cannot see through (an opaque operand for
    /// scalar evolution). Marked as touching no memory, so it can still be
    /// moved and merged.
    pub(crate) fn opaque_copy(&self, v: Val) -> Val {
        unsafe {
            let t = self.type_of(v);
            let ft = self.t_fn(t, &[t]);
            let asm = LLVMGetInlineAsm(
                ft,
                c"".as_ptr() as *mut _,
                0,
                c"=r,0".as_ptr() as *mut _,
                4,
                0,
                0,
                LLVMInlineAsmDialect::LLVMInlineAsmDialectATT,
                0,
            );
            let copy = self.call(asm, ft, &[v]);
            for (name, value) in [("nounwind", 0u64), ("willreturn", 0), ("memory", 0)] {
                let kind = LLVMGetEnumAttributeKindForName(name.as_ptr() as *const _, name.len());
                let attr = LLVMCreateEnumAttribute(self.c, kind, value);
                LLVMAddCallSiteAttribute(copy, LLVMAttributeFunctionIndex, attr);
            }
            copy
        }
    }
    pub(crate) fn call(&self, f: Val, ft: Ty, args: &[Val]) -> Val {
        let mut a = args.to_vec();
        unsafe { LLVMBuildCall2(self.b, ft, f, a.as_mut_ptr(), a.len() as u32, NONAME) }
    }
    /// Call an external function by name, declaring it from the argument types.
    pub(crate) fn call_extern(&self, name: &str, ret: Ty, args: &[Val]) -> Val {
        let params: Vec<Ty> = args.iter().map(|&a| self.type_of(a)).collect();
        let (f, ft) = self.declare_fn(name, ret, &params);
        self.call(f, ft, args)
    }
    /// Call an LLVM intrinsic (overloaded on `overloads`).
    pub(crate) fn intrinsic(&self, name: &str, overloads: &[Ty], args: &[Val]) -> Result<Val> {
        unsafe {
            let id = LLVMLookupIntrinsicID(name.as_ptr() as *const c_char, name.len());
            if id == 0 {
                return Err(Error::internal(format!("unknown LLVM intrinsic {name}")));
            }
            let mut ov = overloads.to_vec();
            let f = LLVMGetIntrinsicDeclaration(self.m, id, ov.as_mut_ptr(), ov.len());
            let ft = LLVMIntrinsicGetType(self.c, id, ov.as_mut_ptr(), ov.len());
            Ok(self.call(f, ft, args))
        }
    }
    /// A unary intrinsic overloaded on its argument type (e.g. llvm.floor).
    pub(crate) fn intrin1(&self, name: &str, a: Val) -> Val {
        self.intrinsic(name, &[self.type_of(a)], &[a])
            .expect("known intrinsic")
    }
    pub(crate) fn intrin2(&self, name: &str, a: Val, b: Val) -> Val {
        self.intrinsic(name, &[self.type_of(a)], &[a, b])
            .expect("known intrinsic")
    }

    /// A private global NUL-terminated string; returns its address.
    pub(crate) fn global_string(&mut self, s: &str) -> Val {
        if let Some(v) = self.strings.get(s) {
            return *v;
        }
        unsafe {
            let bytes = s.replace('\0', "");
            let init =
                LLVMConstStringInContext2(self.c, bytes.as_ptr() as *const c_char, bytes.len(), 0);
            let g = LLVMAddGlobal(self.m, LLVMTypeOf(init), c"str".as_ptr());
            LLVMSetInitializer(g, init);
            LLVMSetGlobalConstant(g, 1);
            LLVMSetLinkage(g, inkwell::llvm_sys::LLVMLinkage::LLVMPrivateLinkage);
            LLVMSetUnnamedAddress(g, inkwell::llvm_sys::LLVMUnnamedAddr::LLVMGlobalUnnamedAddr);
            self.strings.insert(s.to_string(), g);
            g
        }
    }

    /// Set the attributes every function we define carries: target CPU and
    /// features, vector width preferences, nounwind.
    pub(crate) fn set_function_attributes(&self, f: Val) {
        let mut attrs: Vec<(String, String)> = vec![
            ("target-cpu".into(), self.target.cpu.clone()),
            ("target-features".into(), self.target.features.clone()),
            ("no-trapping-math".into(), "true".into()),
        ];
        let w = self.native_vector_bits.to_string();
        attrs.push(("min-legal-vector-width".into(), w.clone()));
        attrs.push(("prefer-vector-width".into(), w));
        unsafe {
            for (k, v) in attrs {
                let a = LLVMCreateStringAttribute(
                    self.c,
                    k.as_ptr() as *const c_char,
                    k.len() as u32,
                    v.as_ptr() as *const c_char,
                    v.len() as u32,
                );
                LLVMAddAttributeAtIndex(f, u32::MAX, a);
            }
        }
        self.add_enum_attribute(f, c"nounwind");
    }

    /// Give function `f` the attribute `name` (one without a value).
    pub(crate) fn add_enum_attribute(&self, f: Val, name: &std::ffi::CStr) {
        let bytes = name.to_bytes();
        // SAFETY: `f` is a function of this context; the name outlives the call.
        unsafe {
            let kind = LLVMGetEnumAttributeKindForName(bytes.as_ptr() as *const c_char, bytes.len());
            let a = LLVMCreateEnumAttribute(self.c, kind, 0);
            LLVMAddAttributeAtIndex(f, u32::MAX, a);
        }
    }

    /// Add a function definition with internal or external linkage.
    pub(crate) fn add_function(&self, name: &str, ft: Ty, internal: bool) -> Val {
        let n = cstr(name);
        unsafe {
            let f = LLVMAddFunction(self.m, n.as_ptr(), ft);
            if internal {
                LLVMSetLinkage(f, inkwell::llvm_sys::LLVMLinkage::LLVMInternalLinkage);
            }
            self.set_function_attributes(f);
            f
        }
    }
    pub(crate) fn param(&self, f: Val, i: u32) -> Val {
        unsafe { LLVMGetParam(f, i) }
    }
    /// Whether the current block already ends in a terminator.
    pub(crate) fn block_terminated(&self) -> bool {
        unsafe {
            let bb = LLVMGetInsertBlock(self.b);
            !bb.is_null() && !LLVMGetBasicBlockTerminator(bb).is_null()
        }
    }
}
