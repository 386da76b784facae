//! Expressions. Arithmetic follows Halide's semantics: integer overflow
//! wraps; signed division is Euclidean (rounds down for positive divisors,
//! the remainder is never negative); `x / 0 == 0` and `x % 0 == 0` for
//! integers (no trap, including `INT_MIN / -1`, which wraps); float `%` is
//! `a - b * floor(a / b)`; float min/max follow `b < a ? b : a` and
//! `a > b ? a : b`.

use ferrohalide_core::ir::{BinOp, Expr, ExprNode, Type, TypeCode, VectorReduceOp};
use ferrohalide_core::{Error, Result};

use super::ops::{Op, FP, IP};
use super::{CodeGen, Ty, Val};

impl CodeGen {
    pub(crate) fn codegen_expr(&mut self, e: &Expr) -> Result<Val> {
        let t = e.ty();
        Ok(match e.node() {
            ExprNode::IntImm(v) => self.cint(self.llvm_ty(t), *v as u64),
            ExprNode::UIntImm(v) => self.cint(self.llvm_ty(t), *v),
            ExprNode::FloatImm(v) => self.cf(self.llvm_ty(t), *v),
            ExprNode::StringImm(s) => self.global_string(s),
            ExprNode::Cast(a) => {
                let v = self.codegen_expr(a)?;
                self.cast_value(v, a.ty(), t)
            }
            ExprNode::Reinterpret(a) => {
                let v = self.codegen_expr(a)?;
                self.reinterpret_value(v, a.ty(), t)
            }
            ExprNode::Variable { name, .. } => self.sym(name)?,
            ExprNode::Binary { op, a, b } => {
                if let Some(v) = self.hvx_sum_of_products(e)? {
                    return Ok(v);
                }
                let av = self.codegen_expr(a)?;
                let bv = self.codegen_expr(b)?;
                self.binary(*op, av, bv, a.ty())?
            }
            ExprNode::Not(a) => {
                let v = self.codegen_expr(a)?;
                self.not(v)
            }
            ExprNode::Select { cond, t: tv, f } => {
                let c = self.codegen_expr(cond)?;
                let a = self.codegen_expr(tv)?;
                let b = self.codegen_expr(f)?;
                self.select(c, a, b)
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => self.codegen_load(t, name, index, predicate)?,
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => {
                let b = self.codegen_expr(base)?;
                let s = self.codegen_expr(stride)?;
                self.ramp(b, s, base.ty(), *lanes as u32)
            }
            ExprNode::Broadcast { value, lanes } => {
                let v = self.codegen_expr(value)?;
                self.broadcast_value(v, *lanes as u32)
            }
            ExprNode::Let { name, value, body } => {
                let v = self.codegen_expr(value)?;
                self.push_sym(name, v);
                let r = self.codegen_expr(body);
                self.pop_sym(name);
                r?
            }
            ExprNode::Call { name, args, kind } => self.codegen_call(e, name, args, kind)?,
            ExprNode::Shuffle { vectors, indices } => {
                let mut parts = Vec::with_capacity(vectors.len());
                for v in vectors {
                    parts.push(self.codegen_expr(v)?);
                }
                let all = self.concat(&parts);
                if indices.len() == 1 {
                    if self.is_vec_ty(self.type_of(all)) {
                        self.extract(all, indices[0] as u32)
                    } else {
                        all
                    }
                } else {
                    self.shuffle1(all, indices)
                }
            }
            ExprNode::VectorReduce { op, value } => {
                let v = self.codegen_expr(value)?;
                self.vector_reduce(*op, v, value.ty(), t.lanes as u32)?
            }
        })
    }

    // ---- casts ---------------------------------------------------------------

    /// The low bit of each lane of the integer `v`, as the bool type `dst`.
    fn low_bit(&self, v: Val, dst: Ty) -> Val {
        if self.no_trunc_to_bool_vectors && self.is_vec_ty(dst) {
            let t = self.type_of(v);
            let bit = self.and(v, self.cint(t, 1));
            return self.icmp(IP::LLVMIntNE, bit, self.zero_of(t));
        }
        self.cast(Op::LLVMTrunc, v, dst)
    }

    pub(crate) fn cast_value(&self, v: Val, from: Type, to: Type) -> Val {
        if from == to {
            return v;
        }
        let dst = self.llvm_ty(to);
        if to.is_bool() {
            // Halide's cast to bool keeps the low bit (trunc / fptoui to i1):
            // bool(2) is false, bool(3.5f) is true.
            if from.is_float() {
                let i64t = self.t_like(self.t_i64(), self.type_of(v));
                let i = self.cast(Op::LLVMFPToSI, v, i64t);
                return self.low_bit(i, dst);
            }
            if from.is_handle() {
                let n = self.null_ptr();
                return self.icmp(IP::LLVMIntNE, v, self.match_lanes(n, to.lanes as u32));
            }
            if from.is_bool() {
                return v;
            }
            return self.low_bit(v, dst);
        }
        match (from.code, to.code) {
            (TypeCode::Handle, TypeCode::Handle) => v,
            (TypeCode::Handle, _) => self.cast(Op::LLVMPtrToInt, v, dst),
            (_, TypeCode::Handle) => self.cast(Op::LLVMIntToPtr, v, dst),
            (TypeCode::Int | TypeCode::UInt, TypeCode::Int | TypeCode::UInt) => {
                self.int_resize(v, dst, from.is_int())
            }
            (TypeCode::Int | TypeCode::UInt, _) => {
                if from.is_int() {
                    self.cast(Op::LLVMSIToFP, v, dst)
                } else {
                    self.cast(Op::LLVMUIToFP, v, dst)
                }
            }
            (_, TypeCode::Int | TypeCode::UInt) => {
                if to.is_int() {
                    self.cast(Op::LLVMFPToSI, v, dst)
                } else {
                    self.cast(Op::LLVMFPToUI, v, dst)
                }
            }
            _ => {
                // float <-> float (bfloat16 goes through f32)
                if from.code == TypeCode::BFloat || to.code == TypeCode::BFloat {
                    let f32t = self.t_like(self.t_f32(), dst);
                    let mid = self.float_resize(v, f32t);
                    return self.float_resize(mid, dst);
                }
                self.float_resize(v, dst)
            }
        }
    }

    pub(crate) fn float_resize(&self, v: Val, dst: super::Ty) -> Val {
        let fb = self.float_bits(self.type_of(v));
        let tb = self.float_bits(dst);
        if self.type_of(v) == dst {
            v
        } else if fb < tb {
            self.cast(Op::LLVMFPExt, v, dst)
        } else {
            self.cast(Op::LLVMFPTrunc, v, dst)
        }
    }

    fn float_bits(&self, t: super::Ty) -> u32 {
        use inkwell::llvm_sys::LLVMTypeKind::*;
        match unsafe { inkwell::llvm_sys::core::LLVMGetTypeKind(self.elem_ty(t)) } {
            LLVMHalfTypeKind | LLVMBFloatTypeKind => 16,
            LLVMFloatTypeKind => 32,
            _ => 64,
        }
    }

    pub(crate) fn reinterpret_value(&self, v: Val, from: Type, to: Type) -> Val {
        let dst = self.llvm_ty(to);
        match (from.is_handle(), to.is_handle()) {
            (true, true) => v,
            (true, false) => {
                let i = self.cast(
                    Op::LLVMPtrToInt,
                    v,
                    self.t_like(self.t_i64(), self.type_of(v)),
                );
                self.cast(Op::LLVMBitCast, i, dst)
            }
            (false, true) => {
                let it = self.t_like(self.t_i64(), dst);
                let i = self.cast(Op::LLVMBitCast, v, it);
                self.cast(Op::LLVMIntToPtr, i, dst)
            }
            _ => {
                if self.type_of(v) == dst {
                    v
                } else {
                    self.cast(Op::LLVMBitCast, v, dst)
                }
            }
        }
    }

    // ---- binary operators ------------------------------------------------------

    /// `a op b` where both operands have Halide type `t`.
    pub(crate) fn binary(&self, op: BinOp, a: Val, b: Val, t: Type) -> Result<Val> {
        let fl = t.is_float();
        let signed = t.is_int();
        let no_overflow = signed && t.bits >= 32;
        Ok(match op {
            BinOp::Add => {
                if fl {
                    self.fadd(a, b)
                } else if no_overflow {
                    self.add_nsw(a, b)
                } else {
                    self.add(a, b)
                }
            }
            BinOp::Sub => {
                if fl {
                    self.fsub(a, b)
                } else if no_overflow {
                    self.sub_nsw(a, b)
                } else {
                    self.sub(a, b)
                }
            }
            BinOp::Mul => {
                if fl {
                    self.fmul(a, b)
                } else if no_overflow {
                    self.mul_nsw(a, b)
                } else {
                    self.mul(a, b)
                }
            }
            BinOp::Div => {
                if fl {
                    self.fdiv(a, b)
                } else if signed {
                    self.sdiv_euclid(a, b)
                } else {
                    self.udiv_safe(a, b)
                }
            }
            BinOp::Mod => {
                if fl {
                    let q = self.fdiv(a, b);
                    let fq = self.floor_f(q);
                    // a - b * floor(a / b), with the multiply-subtract fused
                    // as Halide's code (compiled with FP contraction) does.
                    let nb = self.fneg(b);
                    self.fused_multiply_add(nb, fq, a)
                } else if signed {
                    self.smod_euclid(a, b)
                } else {
                    self.umod_safe(a, b)
                }
            }
            BinOp::Min => {
                if fl {
                    let c = self.fcmp(FP::LLVMRealOLT, b, a);
                    self.select(c, b, a)
                } else if t.is_bool() {
                    self.and(a, b)
                } else {
                    self.intrin2(if signed { "llvm.smin" } else { "llvm.umin" }, a, b)
                }
            }
            BinOp::Max => {
                if fl {
                    let c = self.fcmp(FP::LLVMRealOGT, a, b);
                    self.select(c, a, b)
                } else if t.is_bool() {
                    self.or(a, b)
                } else {
                    self.intrin2(if signed { "llvm.smax" } else { "llvm.umax" }, a, b)
                }
            }
            BinOp::EQ | BinOp::NE | BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE => {
                if fl {
                    let p = match op {
                        BinOp::EQ => FP::LLVMRealOEQ,
                        BinOp::NE => FP::LLVMRealUNE,
                        BinOp::LT => FP::LLVMRealOLT,
                        BinOp::LE => FP::LLVMRealOLE,
                        BinOp::GT => FP::LLVMRealOGT,
                        _ => FP::LLVMRealOGE,
                    };
                    self.fcmp(p, a, b)
                } else {
                    let p = match (op, signed) {
                        (BinOp::EQ, _) => IP::LLVMIntEQ,
                        (BinOp::NE, _) => IP::LLVMIntNE,
                        (BinOp::LT, true) => IP::LLVMIntSLT,
                        (BinOp::LE, true) => IP::LLVMIntSLE,
                        (BinOp::GT, true) => IP::LLVMIntSGT,
                        (BinOp::GE, true) => IP::LLVMIntSGE,
                        (BinOp::LT, false) => IP::LLVMIntULT,
                        (BinOp::LE, false) => IP::LLVMIntULE,
                        (BinOp::GT, false) => IP::LLVMIntUGT,
                        _ => IP::LLVMIntUGE,
                    };
                    self.icmp(p, a, b)
                }
            }
            BinOp::And => self.and(a, b),
            BinOp::Or => self.or(a, b),
        })
    }

    /// `k` if `b` is the constant `2^k` (every lane, positive), in an
    /// integer type of at most 64 bits.
    fn power_of_two_divisor(&self, b: Val) -> Option<u64> {
        if self.int_bits_of_ty(self.type_of(b)) > 64 {
            return None;
        }
        let c = self.const_int_value(b)?;
        (c > 0 && (c as u64).is_power_of_two()).then(|| u64::from(c.trailing_zeros()))
    }

    /// Euclidean signed division; `x / 0 == 0`; `MIN / -1 == MIN`.
    pub(crate) fn sdiv_euclid(&self, a: Val, b: Val) -> Val {
        let ty = self.type_of(a);
        let zero = self.cint(ty, 0);
        let one = self.cint(ty, 1);
        let m1 = self.cint(ty, u64::MAX);
        if let Some(k) = self.power_of_two_divisor(b) {
            // Floor division by 2^k is an arithmetic shift (as Halide's
            // code generator emits it): LLVM would reach the same shift
            // from the five-instruction form below, at a cost in compile
            // time (pyramids divide coordinates by 2 thousands of times).
            return self.ashr(a, self.cint(ty, k));
        }
        if let Some(c) = self.const_int_value(b) {
            if c > 0 {
                // Division by a positive constant: floor division. Let LLVM
                // pick the multiply-shift sequence.
                let q = self.binop(Op::LLVMSDiv, a, b);
                let r = self.binop(Op::LLVMSRem, a, b);
                let neg = self.icmp(IP::LLVMIntSLT, r, zero);
                let qm = self.sub(q, one);
                return self.select(neg, qm, q);
            }
        }
        let b_zero = self.icmp(IP::LLVMIntEQ, b, zero);
        let b_m1 = self.icmp(IP::LLVMIntEQ, b, m1);
        let unsafe_b = self.or(b_zero, b_m1);
        let b_safe = self.select(unsafe_b, one, b);
        let q = self.binop(Op::LLVMSDiv, a, b_safe);
        let r = self.binop(Op::LLVMSRem, a, b_safe);
        let r_neg = self.icmp(IP::LLVMIntSLT, r, zero);
        let b_pos = self.icmp(IP::LLVMIntSGT, b_safe, zero);
        let adj = self.select(b_pos, m1, one);
        let q_adj = self.add(q, adj);
        let q = self.select(r_neg, q_adj, q);
        let neg_a = self.sub(zero, a);
        let q = self.select(b_m1, neg_a, q);
        self.select(b_zero, zero, q)
    }

    /// Euclidean signed modulo (never negative); `x % 0 == 0`.
    pub(crate) fn smod_euclid(&self, a: Val, b: Val) -> Val {
        let ty = self.type_of(a);
        let zero = self.cint(ty, 0);
        let one = self.cint(ty, 1);
        let m1 = self.cint(ty, u64::MAX);
        if let Some(k) = self.power_of_two_divisor(b) {
            // The Euclidean remainder by 2^k is the low k bits.
            return self.and(a, self.cint(ty, (1u64 << k) - 1));
        }
        if let Some(c) = self.const_int_value(b) {
            if c > 0 {
                let r = self.binop(Op::LLVMSRem, a, b);
                let neg = self.icmp(IP::LLVMIntSLT, r, zero);
                let rb = self.add(r, b);
                return self.select(neg, rb, r);
            }
        }
        let b_zero = self.icmp(IP::LLVMIntEQ, b, zero);
        let b_m1 = self.icmp(IP::LLVMIntEQ, b, m1);
        let unsafe_b = self.or(b_zero, b_m1);
        let b_safe = self.select(unsafe_b, one, b);
        let r = self.binop(Op::LLVMSRem, a, b_safe);
        let r_neg = self.icmp(IP::LLVMIntSLT, r, zero);
        let abs_b = self
            .intrinsic("llvm.abs", &[ty], &[b_safe, self.bool_c(false)])
            .expect("llvm.abs");
        let r_adj = self.add(r, abs_b);
        let r = self.select(r_neg, r_adj, r);
        self.select(b_zero, zero, r)
    }

    pub(crate) fn udiv_safe(&self, a: Val, b: Val) -> Val {
        let ty = self.type_of(a);
        if let Some(c) = self.const_int_value(b) {
            if c != 0 {
                return self.binop(Op::LLVMUDiv, a, b);
            }
        }
        let zero = self.cint(ty, 0);
        let one = self.cint(ty, 1);
        let b_zero = self.icmp(IP::LLVMIntEQ, b, zero);
        let b_safe = self.select(b_zero, one, b);
        let q = self.binop(Op::LLVMUDiv, a, b_safe);
        self.select(b_zero, zero, q)
    }

    pub(crate) fn umod_safe(&self, a: Val, b: Val) -> Val {
        let ty = self.type_of(a);
        if let Some(c) = self.const_int_value(b) {
            if c != 0 {
                return self.binop(Op::LLVMURem, a, b);
            }
        }
        let zero = self.cint(ty, 0);
        let one = self.cint(ty, 1);
        let b_zero = self.icmp(IP::LLVMIntEQ, b, zero);
        let b_safe = self.select(b_zero, one, b);
        let r = self.binop(Op::LLVMURem, a, b_safe);
        self.select(b_zero, zero, r)
    }

    // ---- vectors ---------------------------------------------------------------

    /// `base + stride * [0, 1, ..., lanes-1]`; a vector base of k lanes
    /// gives k * lanes lanes (the ramp of vectors, concatenated).
    pub(crate) fn ramp(&self, base: Val, stride: Val, base_t: Type, lanes: u32) -> Val {
        let k = base_t.lanes as u32;
        let total = k * lanes;
        let b = self.broadcast_value(base, lanes);
        let s = self.broadcast_value(stride, lanes);
        let elem = self.elem_ty(self.type_of(base));
        let idx: Vec<Val> = (0..total)
            .map(|j| {
                let m = (j / k) as u64;
                if base_t.is_float() {
                    unsafe { inkwell::llvm_sys::core::LLVMConstReal(elem, m as f64) }
                } else {
                    unsafe { inkwell::llvm_sys::core::LLVMConstInt(elem, m, 0) }
                }
            })
            .collect();
        let iv = self.cvec(&idx);
        if base_t.is_float() {
            let p = self.fmul(s, iv);
            self.fadd(b, p)
        } else {
            let p = self.mul(s, iv);
            self.add(b, p)
        }
    }

    /// Repeat `v` (scalar or vector) `lanes` times.
    pub(crate) fn broadcast_value(&self, v: Val, lanes: u32) -> Val {
        if lanes <= 1 {
            return v;
        }
        if !self.is_vec_ty(self.type_of(v)) {
            return self.splat(v, lanes);
        }
        let k = self.lanes_of(v);
        let m: Vec<i32> = (0..k * lanes).map(|j| (j % k) as i32).collect();
        self.shuffle1(v, &m)
    }

    pub(crate) fn vector_reduce(
        &self,
        op: VectorReduceOp,
        v: Val,
        in_t: Type,
        out_lanes: u32,
    ) -> Result<Val> {
        let n = in_t.lanes as u32;
        let fl = in_t.is_float();
        let signed = in_t.is_int();
        if out_lanes == 0 || n % out_lanes != 0 {
            return Err(Error::internal(format!(
                "VectorReduce from {n} to {out_lanes} lanes"
            )));
        }
        let factor = n / out_lanes;
        if factor == 1 {
            return Ok(v);
        }
        let vt = self.type_of(v);
        if out_lanes == 1 && op != VectorReduceOp::SaturatingAdd {
            let name = match (op, fl) {
                (VectorReduceOp::Add, false) => "llvm.vector.reduce.add",
                (VectorReduceOp::Mul, false) => "llvm.vector.reduce.mul",
                (VectorReduceOp::Min, false) => {
                    if signed {
                        "llvm.vector.reduce.smin"
                    } else {
                        "llvm.vector.reduce.umin"
                    }
                }
                (VectorReduceOp::Max, false) => {
                    if signed {
                        "llvm.vector.reduce.smax"
                    } else {
                        "llvm.vector.reduce.umax"
                    }
                }
                (VectorReduceOp::And, _) => "llvm.vector.reduce.and",
                (VectorReduceOp::Or, _) => "llvm.vector.reduce.or",
                _ => "",
            };
            if !name.is_empty() {
                return self.intrinsic(name, &[vt], &[v]);
            }
        }
        // Tree of binary ops over the `factor` interleaved slices.
        let combine = |x: Val, y: Val| -> Result<Val> {
            Ok(match op {
                VectorReduceOp::Add => self.binary(BinOp::Add, x, y, in_t)?,
                VectorReduceOp::Mul => self.binary(BinOp::Mul, x, y, in_t)?,
                VectorReduceOp::Min => self.binary(BinOp::Min, x, y, in_t)?,
                VectorReduceOp::Max => self.binary(BinOp::Max, x, y, in_t)?,
                VectorReduceOp::And => self.and(x, y),
                VectorReduceOp::Or => self.or(x, y),
                VectorReduceOp::SaturatingAdd => {
                    if fl {
                        self.fadd(x, y)
                    } else {
                        self.intrin2(
                            if signed {
                                "llvm.sadd.sat"
                            } else {
                                "llvm.uadd.sat"
                            },
                            x,
                            y,
                        )
                    }
                }
            })
        };
        let mut acc: Option<Val> = None;
        for k in 0..factor {
            let idx: Vec<i32> = (0..out_lanes).map(|i| (i * factor + k) as i32).collect();
            let part = if out_lanes == 1 {
                self.extract(v, idx[0] as u32)
            } else {
                self.shuffle1(v, &idx)
            };
            acc = Some(match acc {
                None => part,
                Some(a) => combine(a, part)?,
            });
        }
        Ok(acc.unwrap())
    }

    // ---- loads -----------------------------------------------------------------

    /// `prefetch(load)`: a prefetch instruction for the address of the
    /// load's (first) element; the load itself does not happen.
    pub(crate) fn codegen_prefetch(&mut self, load: &Expr) -> Result<()> {
        let mut at = load;
        while let ExprNode::Cast(value) | ExprNode::Reinterpret(value) = at.node() {
            at = value;
        }
        let ExprNode::Load { name, index, .. } = at.node() else {
            return Err(Error::internal(format!("prefetch of {load}, not of a load")));
        };
        let first = match index.node() {
            ExprNode::Ramp { base, .. } => base.clone(),
            ExprNode::Broadcast { value, .. } => value.clone(),
            _ if index.ty().is_vector() => {
                return Err(Error::internal(format!("prefetch of a gather: {load}")));
            }
            _ => index.clone(),
        };
        let base = self.sym(name)?;
        let elem = self.mem_scalar_ty(at.ty().element_of());
        let idx = self.codegen_index(&first)?;
        let p = self.gep(elem, base, idx);
        let i32t = self.t_i32();
        let args = [p, self.cint(i32t, 0), self.cint(i32t, 3), self.cint(i32t, 1)];
        self.intrinsic("llvm.prefetch", &[self.t_ptr()], &args)?;
        Ok(())
    }

}

/// See `lane_chunks`.
pub(crate) const MAX_GATHER_LANES: u32 = 64;

/// One piece of a gather or scatter (`CodeGen::lane_chunks`).
pub(crate) struct LaneChunk {
    pub(crate) ptrs: Val,
    pub(crate) mask: Val,
    /// The lanes of the access it covers.
    pub(crate) lanes: u32,
    /// Its lanes with the masked-off padding (a power of two).
    pub(crate) padded: u32,
    /// For each padded lane, the lane of the whole access it takes.
    pub(crate) sel: Vec<i32>,
}

impl CodeGen {
    pub(crate) fn codegen_load(
        &mut self,
        t: Type,
        name: &str,
        index: &Expr,
        predicate: &Expr,
    ) -> Result<Val> {
        let base = self.sym(name)?;
        let tag = self.buffer_tbaa(name);
        let elem_t = t.element_of();
        let elem = self.mem_scalar_ty(elem_t);
        let align = self.elem_align(elem_t);
        let lanes = t.lanes as u32;
        let always = predicate.is_true() || predicate.is_const_value(1);
        if lanes == 1 {
            if always {
                let p = self.element_pointer(elem, base, index)?;
                let v = self.load(elem, p, align);
                self.set_tbaa(v, tag);
                return Ok(self.from_mem(v, t));
            }
            // Scalar predicated load: branch around it.
            let pred = self.codegen_expr(predicate)?;
            let idx = self.codegen_index(index)?;
            let before = self.current_block();
            let do_load = self.new_block("pred_load");
            let after = self.new_block("pred_load_done");
            self.cond_br(pred, do_load, after);
            self.position(do_load);
            let p = self.gep(elem, base, idx);
            let v = self.load(elem, p, align);
            self.set_tbaa(v, tag);
            let end = self.current_block();
            self.br(after);
            self.position(after);
            let phi = self.phi(elem, &[(v, end), (self.zero_of(elem), before)]);
            return Ok(self.from_mem(phi, t));
        }
        let vt = self.t_vec(elem, lanes);
        let mask = if always {
            None
        } else {
            let m = self.codegen_expr(predicate)?;
            Some(self.match_lanes(m, lanes))
        };
        // Dense ramps: one vector load (reversed for stride -1).
        if let ExprNode::Ramp {
            base: rb,
            stride,
            lanes: rl,
        } = index.node()
        {
            if rb.ty().is_scalar() && *rl as u32 == lanes {
                if let Some(s) = stride.as_int_const() {
                    if s == 1 || s == -1 {
                        let p = if s == 1 {
                            self.element_pointer(elem, base, rb)?
                        } else {
                            let b = self.codegen_index(rb)?;
                            let off = self.cint(self.type_of(b), (lanes - 1) as u64);
                            let first = self.sub(b, off);
                            self.gep(elem, base, first)
                        };
                        let rev: Vec<i32> = (0..lanes as i32).rev().collect();
                        let v = match mask {
                            None => {
                                let v = self.load(vt, p, align);
                                self.set_tbaa(v, tag);
                                v
                            }
                            Some(m) => {
                                let m = if s == 1 { m } else { self.shuffle1(m, &rev) };
                                self.masked_load(vt, p, align, m, tag)?
                            }
                        };
                        let v = if s == 1 { v } else { self.shuffle1(v, &rev) };
                        return Ok(self.from_mem(v, t));
                    }
                }
            }
        }
        // A strided read (`f[2 * x + c]`, a downsample): dense loads
        // covering the first element to the last, then every s-th lane, not
        // a gather. Only the elements between them are read: the span
        // ((lanes - 1) * s + 1 elements) is covered by loads of `lanes`
        // elements each, the last one ending at the last element (it
        // overlaps the one before), so every load is a whole vector (an
        // odd-sized one would be split into pieces of 8, 4, 2 and 1) and
        // the picks become two-source permutes (`vpermt2ps`).
        if always {
            if let ExprNode::Ramp { base: rb, stride, lanes: rl } = index.node() {
                if let Some(s) = stride.as_int_const() {
                    if (2..=4).contains(&s) && rb.ty().is_scalar() && *rl as u32 == lanes && lanes >= 2 {
                        let l = lanes as i64;
                        let width = (l - 1) * s + 1;
                        let count = (width + l - 1) / l;
                        let starts: Vec<i64> = (0..count).map(|j| if j + 1 < count { j * l } else { width - l }).collect();
                        let mut parts = vec![];
                        for &start in &starts {
                            let first = Expr::add(rb.clone(), Expr::make_const_i64(rb.ty(), start));
                            let dense = Expr::ramp(first, Expr::make_const_i64(rb.ty(), 1), lanes as u16);
                            parts.push(self.codegen_load(t, name, &dense, predicate)?);
                        }
                        let all = self.concat(&parts);
                        let pick: Vec<i32> = (0..l)
                            .map(|i| {
                                let o = i * s;
                                let j = (o / l).min(count - 1);
                                (j * l + (o - starts[j as usize])) as i32
                            })
                            .collect();
                        return Ok(self.shuffle1(all, &pick));
                    }
                }
            }
        }
        // An upsampling read, `f[x / k]` over a dense ramp of x: lanes
        // r, r + k, r + 2k, ... read the dense ramp from (b + r) / k, so it
        // is k dense loads interleaved (Halide's interleave_vectors), not a
        // gather. Exact for Euclidean division whatever b's remainder.
        if always {
            if let Some((b, k, offset)) = ramp_div_plus_offset(index) {
                if k > 1 && k <= 4 && lanes % k as u32 == 0 && lanes / k as u32 >= 2 {
                    let m = (lanes / k as u32) as u16;
                    let mut parts = vec![];
                    for r in 0..k {
                        let first = Expr::add(Expr::div(Expr::add(b.clone(), Expr::i32(r)), Expr::i32(k)), offset.clone());
                        let dense = Expr::ramp(first, Expr::i32(1), m);
                        parts.push(self.codegen_load(t.with_lanes(m), name, &dense, predicate)?);
                    }
                    let all = self.concat(&parts);
                    let order: Vec<i32> = (0..lanes as i32)
                        .map(|i| (i % k as i32) * m as i32 + i / k as i32)
                        .collect();
                    return Ok(self.shuffle1(all, &order));
                }
            }
        }
        // A clamped dense ramp (boundary conditions): two scalar loads and
        // a masked dense load, where the target has cheap masked loads.
        if always && self.has_cheap_masked_loads(elem_t.bits) {
            if let Some(e) = super::clamped_load::rewrite_clamped_load(t, name, index) {
                return self.codegen_expr(&e);
            }
        }
        // On HVX, a clamped dense ramp whose clamp range holds a whole
        // vector is one dense load and a lane shift (hvx.rs); otherwise the
        // gather below.
        let hvx_fast = if always { self.hvx_clamped_load(t, name, index)? } else { None };
        let slow = hvx_fast.map(|(fast, fast_end, slow)| {
            self.position(slow);
            (fast, fast_end)
        });
        // General case: a gather, one scalar load per lane unless masked.
        // On x86 an unpredicated gather goes through the masked gather
        // with every lane on, written out per lane after the IR optimizer
        // (see `gather_intrinsic_max_bits` and `expand_gathers`).
        let idx = self.codegen_expr(index)?;
        let mask = mask.or_else(|| {
            (elem_t.bits <= self.gather_intrinsic_max_bits).then(|| self.splat(self.bool_c(true), lanes))
        });
        let v = match mask {
            None => self.scalar_gather(elem, base, idx, lanes, align, tag),
            Some(m) => {
                let ptrs = self.gep(elem, base, idx);
                let ptrs = self.match_lanes(ptrs, lanes);
                let mut parts = vec![];
                for c in self.lane_chunks(ptrs, m, lanes) {
                    let part_t = self.t_vec(elem, c.padded);
                    let g = self.masked_gather(part_t, c.ptrs, align, c.mask, tag)?;
                    let n = c.lanes as i32;
                    parts.push(if c.padded == c.lanes { g } else { self.shuffle1(g, &(0..n).collect::<Vec<_>>()) });
                }
                if parts.len() == 1 { parts[0] } else { self.concat(&parts) }
            }
        };
        let v = self.from_mem(v, t);
        let Some((fast, fast_end)) = slow else { return Ok(v) };
        let slow_end = self.current_block();
        let join = self.new_block("clamped_load_done");
        self.br(join);
        self.position(fast_end);
        self.br(join);
        self.position(join);
        Ok(self.phi(self.type_of(v), &[(fast, fast_end), (v, slow_end)]))
    }

    /// A gather's or scatter's pointers and mask in pieces of at most
    /// `MAX_GATHER_LANES` lanes, in lane order: LLVM's code generator takes
    /// minutes on a wider one (a 768-lane gather, fuzz seed 20482: Halide
    /// hangs there too), and a piece is as many per-lane loads either way.
    /// Scattered stores keep their order (a later lane still wins).
    ///
    /// Every piece has a power-of-two lane count: a piece of another count
    /// is padded with copies of its first lane's pointer, masked off. LLVM
    /// 19's x86 back end widens a gather of another count with undefined
    /// lanes; a register-sized part made only of those becomes a gather
    /// whose index register is undefined, which the register allocator may
    /// then give the destination's register, and a gather whose index and
    /// destination are one register is an invalid instruction (SIGILL: a
    /// 24-lane masked gather on AVX-512, fuzz seed 75774). Each piece is
    /// (pointers, mask, its lanes, its padded lanes); `sel` of a piece picks
    /// the lanes of a value to scatter through it.
    pub(crate) fn lane_chunks(&self, ptrs: Val, mask: Val, lanes: u32) -> Vec<LaneChunk> {
        if lanes <= MAX_GATHER_LANES && lanes.is_power_of_two() {
            let sel = (0..lanes as i32).collect();
            return vec![LaneChunk { ptrs, mask, lanes, padded: lanes, sel }];
        }
        let off = self.zero_of(self.type_of(mask));
        (0..lanes)
            .step_by(MAX_GATHER_LANES as usize)
            .map(|start| {
                let n = MAX_GATHER_LANES.min(lanes - start);
                // At least two lanes: a one-lane piece would take a scalar type.
                let p = n.next_power_of_two().max(2);
                let sel: Vec<i32> = (start..start + p).map(|i| if i < start + n { i } else { start } as i32).collect();
                // Padding lanes take the mask of the all-off vector.
                let msel: Vec<i32> =
                    (start..start + p).map(|i| if i < start + n { i } else { lanes + i - start - n } as i32).collect();
                LaneChunk { ptrs: self.shuffle1(ptrs, &sel), mask: self.shuffle(mask, off, &msel), lanes: n, padded: p, sel }
            })
            .collect()
    }

    /// Masked vector loads of `bits`-wide elements are single instructions
    /// (AVX-512BW masks 8/16-bit lanes; AVX2 masks 32/64-bit lanes).
    fn has_cheap_masked_loads(&self, bits: u8) -> bool {
        match bits {
            8 | 16 => self.target.has_feature("avx512bw") && self.target.has_feature("avx512vl"),
            32 | 64 => self.target.has_feature("avx2"),
            _ => false,
        }
    }

    /// Is a two-source lane permute of vectors of type `t` one cheap
    /// instruction (so it can stand in for a load)? `vpermt2d/q` (AVX-512F)
    /// and `vpermt2b` (AVX-512 VBMI) are single micro-ops everywhere;
    /// `vpermt2w` is one on AMD Zen 4/5 but three on Intel's cores.
    pub(crate) fn has_cheap_two_source_permute(&self, t: Type) -> bool {
        if t.lanes < 2 || t.bits as u32 * t.lanes as u32 > 512 {
            return false;
        }
        let zen = self.target.cpu.starts_with("znver");
        match t.bits {
            8 => self.target.has_feature("avx512vbmi") && self.target.has_feature("avx512vl"),
            16 => zen && self.target.has_feature("avx512bw") && self.target.has_feature("avx512vl"),
            32 | 64 => self.target.has_feature("avx512f") && self.target.has_feature("avx512vl"),
            _ => false,
        }
    }

    /// The index of a scalar load or store, or the base of a dense vector
    /// one, computed in 64 bits: index arithmetic on int32 never overflows
    /// (Halide's convention), so widening each operand instead of the
    /// result lets LLVM fold the sign extensions into 64-bit induction
    /// variables and addressing modes, where an int32 sum that LLVM
    /// reassociated (dropping its no-overflow flag) needs a sign extension
    /// per access: in a histogram's scatter, and in a blur's row loops (a
    /// `lea` and `movslq` per row read, 4-5% of their time).
    pub(crate) fn codegen_index(&mut self, index: &Expr) -> Result<Val> {
        self.codegen_expr(&promote_index_64(index))
    }

    /// The address of element `index` (a scalar) of the buffer at `base`.
    /// An index whose terms LLVM's scalar evolution cannot follow (a
    /// loaded value: a histogram's `hist[i32(im[..]) - hist.min.0]`; a
    /// clamp: a ShiftInwards tail's `2 * (min(x.x * 8, e - 8) + m) -
    /// im.min.0`) is addressed in two steps, those terms last, on a
    /// pointer already offset by the others: apart, the others are
    /// loop-invariant or affine, and LLVM hoists or strength-reduces them,
    /// where in one sum they were recomputed per element (the serial
    /// histogram's inner loop carried a `sub` of hist's min: 1.29 ms, Halide
    /// the same; 1.12-1.18 ms without it, a C loop 1.07-1.11 ms; an
    /// unpartitioned downsample reloaded `m` and `im.min.0` from the stack
    /// every vector). Index arithmetic does not overflow (Halide's
    /// convention), so the two steps reach the same address.
    pub(crate) fn element_pointer(&mut self, elem: Ty, base: Val, index: &Expr) -> Result<Val> {
        if let Some((opaque, rest)) = split_opaque_terms(index) {
            let r = self.codegen_index(&rest)?;
            let partial = self.gep(elem, base, r);
            let o = self.codegen_index(&opaque)?;
            return Ok(self.gep(elem, partial, o));
        }
        let idx = self.codegen_index(index)?;
        Ok(self.gep(elem, base, idx))
    }
}

/// `index` (a scalar int32 sum, products by constants distributed) as
/// the sum of its terms that read memory or clamp (min, max, select) and
/// the sum of the others; None unless both are there.
fn split_opaque_terms(index: &Expr) -> Option<(Expr, Expr)> {
    if index.ty() != Type::i32() {
        return None;
    }
    let mut terms = vec![];
    linear_terms(index, 1, &mut terms);
    let opaque = |e: &Expr| {
        ferrohalide_core::ir::visit::expr_contains(e, &mut |x| {
            matches!(
                x.node(),
                ExprNode::Load { .. } | ExprNode::Select { .. } | ExprNode::Binary { op: BinOp::Min | BinOp::Max, .. }
            )
        })
    };
    let (last, first): (Vec<_>, Vec<_>) = terms.into_iter().partition(|(e, _)| opaque(e));
    if last.is_empty() || first.is_empty() {
        return None;
    }
    let sum = |ts: Vec<(Expr, i64)>| {
        ts.into_iter().fold(None, |acc: Option<Expr>, (e, k)| {
            let (term, negative) = match k {
                1 => (e, false),
                -1 => (e, true),
                k if k > 0 => (Expr::mul(e, Expr::i32(k)), false),
                k => (Expr::mul(e, Expr::i32(-k)), true),
            };
            Some(match (acc, negative) {
                (None, false) => term,
                (None, true) => Expr::sub(Expr::i32(0), term),
                (Some(a), false) => Expr::add(a, term),
                (Some(a), true) => Expr::sub(a, term),
            })
        })
    };
    Some((sum(last)?, sum(first)?))
}

/// The terms of `e` times `k`, a sum of additions, subtractions and
/// products by constants (distributed), each with its coefficient (a
/// constant is a term like any other). Each part is then computed at 64
/// bits (`codegen_index`), as the whole index was.
fn linear_terms(e: &Expr, k: i64, out: &mut Vec<(Expr, i64)>) {
    const LIMIT: i64 = 1 << 20;
    match e.node() {
        ExprNode::Binary { op: BinOp::Add, a, b } => {
            linear_terms(a, k, out);
            linear_terms(b, k, out);
        }
        ExprNode::Binary { op: BinOp::Sub, a, b } => {
            linear_terms(a, k, out);
            linear_terms(b, -k, out);
        }
        ExprNode::Binary { op: BinOp::Mul, a, b } => match (a.as_int_const(), b.as_int_const()) {
            (_, Some(c)) if (k * c).abs() < LIMIT => linear_terms(a, k * c, out),
            (Some(c), _) if (k * c).abs() < LIMIT => linear_terms(b, k * c, out),
            _ => out.push((e.clone(), k)),
        },
        _ => out.push((e.clone(), k)),
    }
}

/// `ramp(b, 1, n) / broadcast(k) + broadcast(c)` (any chain of added or
/// subtracted broadcasts): `(b, k, c)`, `c` a scalar.
fn ramp_div_plus_offset(index: &Expr) -> Option<(Expr, i64, Expr)> {
    match index.node() {
        ExprNode::Binary { op: op @ (BinOp::Add | BinOp::Sub), a, b } => {
            let (inner, c, negate) = match (a.node(), b.node()) {
                (_, ExprNode::Broadcast { value, .. }) => (a, value, *op == BinOp::Sub),
                (ExprNode::Broadcast { value, .. }, _) if *op == BinOp::Add => (b, value, false),
                _ => return None,
            };
            let (base, k, offset) = ramp_div_plus_offset(inner)?;
            let offset = if negate { Expr::sub(offset, c.clone()) } else { Expr::add(offset, c.clone()) };
            Some((base, k, offset))
        }
        ExprNode::Binary { op: BinOp::Div, a, b } => {
            let ExprNode::Ramp { base, stride, .. } = a.node() else { return None };
            let ExprNode::Broadcast { value, .. } = b.node() else { return None };
            if stride.as_int_const() != Some(1) || base.ty() != Type::i32() {
                return None;
            }
            let k = value.as_int_const()?;
            (k > 0).then(|| (base.clone(), k, Expr::i32(0)))
        }
        _ => None,
    }
}

/// `e` (a scalar int32 index) with additions, subtractions,
/// multiplications, mins and maxes done in int64.
fn promote_index_64(e: &Expr) -> Expr {
    let i32t = Type::i32();
    if e.ty() != i32t {
        return e.clone();
    }
    match e.node() {
        ExprNode::IntImm(v) => Expr::make_const_i64(Type::int(64), *v),
        ExprNode::Binary {
            op: op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Min | BinOp::Max),
            a,
            b,
        } => Expr::binary(*op, promote_index_64(a), promote_index_64(b)),
        _ => Expr::cast(Type::int(64), e.clone()),
    }
}
