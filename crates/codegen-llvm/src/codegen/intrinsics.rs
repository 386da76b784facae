//! `Call` nodes: Halide intrinsics, math functions (see `math`), and calls
//! to extern C functions.

use ferrohalide_core::analysis::lower_intrinsic::lower_intrinsic;
use ferrohalide_core::ir::{CallKind, Expr, ExprNode, Intrinsic, Type};
use ferrohalide_core::lang::print::ir_type_name;
use ferrohalide_core::{Error, Result};

use super::ops::{Op, IP};
use super::{CodeGen, Val};

impl CodeGen {
    pub(crate) fn codegen_call(
        &mut self,
        e: &Expr,
        name: &str,
        args: &[Expr],
        kind: &CallKind,
    ) -> Result<Val> {
        let t = e.ty();
        match kind {
            CallKind::Intrinsic(i) => self.codegen_intrinsic(*i, t, args),
            CallKind::PureExtern | CallKind::Extern => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.codegen_expr(a)?);
                }
                if t.is_vector() {
                    // Call the scalar function lane by lane.
                    let lanes = t.lanes as u32;
                    let mut out = self.poison(self.llvm_ty(t));
                    for l in 0..lanes {
                        let lane_args: Vec<Val> = vals
                            .iter()
                            .map(|&v| if self.is_vec_ty(self.type_of(v)) { self.extract(v, l) } else { v })
                            .collect();
                        let r = self.call_extern(name, self.scalar_ty(t), &lane_args);
                        out = self.insert(out, r, l);
                    }
                    Ok(out)
                } else {
                    Ok(self.call_extern(name, self.llvm_ty(t), &vals))
                }
            }
            CallKind::Halide { .. } | CallKind::Image { .. } => Err(Error::internal(format!(
                "call to Func or image `{name}` reached code generation (storage flattening should have removed it)"
            ))),
        }
    }

    pub(crate) fn codegen_intrinsic(
        &mut self,
        i: Intrinsic,
        t: Type,
        args: &[Expr],
    ) -> Result<Val> {
        use Intrinsic as I;
        let want = |n: usize| -> Result<()> {
            if args.len() < n {
                Err(Error::internal(format!(
                    "intrinsic {} needs {n} arguments, got {}",
                    i.name(),
                    args.len()
                )))
            } else {
                Ok(())
            }
        };
        match i {
            I::SignedIntegerOverflow => Err(Error::user(
                "Signed integer overflow occurred during constant-folding. Signed integer overflow for int32 and int64 is undefined behavior in Halide.\n"
                    .to_string(),
            )),
            I::Likely
            | I::LikelyIfInnermost
            | I::PromiseClamped
            | I::UnsafePromiseClamped
            | I::MemoizeExpr
            | I::StrictFloat => {
                want(1)?;
                self.codegen_expr(&args[0])
            }
            I::WidenRightAdd
            | I::WidenRightMul
            | I::WidenRightSub
            | I::WideningShiftLeft
            | I::WideningShiftRight
            | I::RoundingShiftLeft
            | I::RoundingShiftRight
            | I::ExtractBits
            | I::ConcatBits
            | I::Mux => {
                let lowered = lower_intrinsic(i, t, args).ok_or_else(|| {
                    Error::user(format!("{} of {} is not supported\n", i.name(), ir_type_name(t)))
                })?;
                self.codegen_expr(&lowered)
            }
            // Replaced when Funcs are defined or lowered.
            I::ScatterGather
            | I::TargetArchIs
            | I::TargetOsIs
            | I::TargetBits
            | I::TargetHasFeature
            | I::TargetNaturalVectorSize
            | I::Random => Err(Error::internal(format!(
                "intrinsic {} reached code generation",
                i.name()
            ))),
            I::Undef => Ok(self.undef(self.llvm_ty(t))),
            I::BitwiseAnd | I::BitwiseOr | I::BitwiseXor => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                let (a, b, back) = self.as_int_bits(a, b, args[0].ty());
                let r = match i {
                    I::BitwiseAnd => self.and(a, b),
                    I::BitwiseOr => self.or(a, b),
                    _ => self.xor(a, b),
                };
                Ok(back(self, r))
            }
            I::BitwiseNot => {
                want(1)?;
                let a = self.codegen_expr(&args[0])?;
                let (a, _, back) = self.as_int_bits(a, a, args[0].ty());
                let r = self.not(a);
                Ok(back(self, r))
            }
            I::ShiftLeft | I::ShiftRight => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                Ok(self.shift(a, b, args[0].ty(), args[1].ty(), i == I::ShiftLeft))
            }
            I::Abs => {
                want(1)?;
                let a = self.codegen_expr(&args[0])?;
                let at = args[0].ty();
                if at.is_float() {
                    Ok(self.intrin1("llvm.fabs", a))
                } else if at.is_int() {
                    let r =
                        self.intrinsic("llvm.abs", &[self.type_of(a)], &[a, self.bool_c(false)])?;
                    Ok(self.int_resize(r, self.llvm_ty(t), false))
                } else {
                    Ok(self.int_resize(a, self.llvm_ty(t), false))
                }
            }
            I::Absd => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                let at = args[0].ty();
                if at.is_float() {
                    let d = self.fsub(a, b);
                    return Ok(self.intrin1("llvm.fabs", d));
                }
                if let Some(r) = self.hvx_lanewise(i, at.element_of(), a, b) {
                    return Ok(r);
                }
                let gt = self.icmp(
                    if at.is_int() {
                        IP::LLVMIntSGT
                    } else {
                        IP::LLVMIntUGT
                    },
                    a,
                    b,
                );
                let d1 = self.sub(a, b);
                let d2 = self.sub(b, a);
                let r = self.select(gt, d1, d2);
                Ok(self.int_resize(r, self.llvm_ty(t), false))
            }
            I::Popcount | I::CountLeadingZeros | I::CountTrailingZeros => {
                want(1)?;
                let a = self.codegen_expr(&args[0])?;
                let r = match i {
                    I::Popcount => self.intrin1("llvm.ctpop", a),
                    I::CountLeadingZeros => self.intrin2("llvm.ctlz", a, self.bool_c(false)),
                    _ => self.intrin2("llvm.cttz", a, self.bool_c(false)),
                };
                Ok(self.int_resize(r, self.llvm_ty(t), false))
            }
            I::IfThenElse => {
                want(2)?;
                self.lazy_select(t, args)
            }
            I::Print => self.codegen_print(t, args),
            I::Trace => self.codegen_trace(args),
            I::MakeStruct => self.codegen_make_struct(args),
            I::ExternBuffer => Err(Error::internal(
                "an extern_buffer survived lowering (lower/extern_stages.rs replaces it)",
            )),
            I::PrefetchPlaceholder => Err(Error::internal(
                "a prefetch placeholder survived lowering (lower/inject_prefetch.rs replaces it)",
            )),
            I::Prefetch => {
                want(1)?;
                self.codegen_prefetch(&args[0])?;
                Ok(self.cint(self.llvm_ty(t), 0))
            }
            I::ReturnSecond => {
                want(2)?;
                self.codegen_expr(&args[0])?;
                self.codegen_expr(&args[1])
            }
            I::Require => {
                want(2)?;
                let c = self.codegen_expr(&args[0])?;
                let c = self.all_lanes(c);
                let ok = self.new_block("require_ok");
                let fail = self.new_block("require_failed");
                self.cond_br(c, ok, fail);
                self.position(fail);
                let code = self.report_error(
                    ferrohalide_core::ir::ErrorCode::RequirementFailed.value(),
                    &args[2..],
                )?;
                self.return_error(code);
                self.position(ok);
                self.codegen_expr(&args[1])
            }
            I::Error => {
                let (code, parts) = CodeGen::error_parts(args);
                let code = self.report_error(code, parts)?;
                Ok(self.int_resize(code, self.llvm_ty(t), true))
            }
            I::Math(m) => self.codegen_math(m, t, args),
            I::SaturatingAdd | I::SaturatingSub => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                if t.is_float() {
                    return Ok(if i == I::SaturatingAdd {
                        self.fadd(a, b)
                    } else {
                        self.fsub(a, b)
                    });
                }
                if let Some(r) = self.hvx_lanewise(i, t.element_of(), a, b) {
                    return Ok(r);
                }
                let name = match (i, t.is_int()) {
                    (I::SaturatingAdd, true) => "llvm.sadd.sat",
                    (I::SaturatingAdd, false) => "llvm.uadd.sat",
                    (_, true) => "llvm.ssub.sat",
                    _ => "llvm.usub.sat",
                };
                Ok(self.intrin2(name, a, b))
            }
            I::SaturatingCast => {
                want(1)?;
                let a = self.codegen_expr(&args[0])?;
                if let Some(r) = self.hvx_saturating_narrow(a, args[0].ty().element_of(), t.element_of()) {
                    return Ok(r);
                }
                Ok(self.saturating_cast(a, args[0].ty(), t))
            }
            I::HalvingAdd | I::HalvingSub | I::RoundingHalvingAdd => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                let at = args[0].ty();
                if at.is_float() {
                    let s = if i == I::HalvingSub {
                        self.fsub(a, b)
                    } else {
                        self.fadd(a, b)
                    };
                    return Ok(self.fmul(s, self.cf(self.type_of(s), 0.5)));
                }
                if let Some(r) = self.hvx_lanewise(i, at.element_of(), a, b) {
                    return Ok(r);
                }
                if at.bits == 64 {
                    // No 128-bit arithmetic: LLVM's loop strength reduction
                    // may then give a loop an i128 induction variable and
                    // turn a division using it into a call of compiler-rt's
                    // `__udivti3` (fuzz seed 39442). Halves first, then the
                    // low bits' carry: floor((a + b) / 2) is
                    // `(a >> 1) + (b >> 1) + (a & b & 1)`, the rounding
                    // form adds `(a | b) & 1`, and floor((a - b) / 2) is
                    // `(a >> 1) - (b >> 1) - (!a & b & 1)`.
                    let one = self.cint(self.type_of(a), 1);
                    let half = |cg: &mut Self, v| if at.is_int() { cg.ashr(v, one) } else { cg.lshr(v, one) };
                    let (ha, hb) = (half(self, a), half(self, b));
                    let (s, low) = match i {
                        I::HalvingAdd => (self.add(ha, hb), self.and(self.and(a, b), one)),
                        I::RoundingHalvingAdd => (self.add(ha, hb), self.and(self.or(a, b), one)),
                        _ => (self.sub(ha, hb), self.and(self.and(self.not(a), b), one)),
                    };
                    let r = if i == I::HalvingSub { self.sub(s, low) } else { self.add(s, low) };
                    return Ok(r);
                }
                let wt = self.t_like(self.t_int(at.bits as u32 * 2), self.type_of(a));
                let wa = self.int_resize(a, wt, at.is_int());
                let wb = self.int_resize(b, wt, at.is_int());
                let mut s = if i == I::HalvingSub {
                    self.sub(wa, wb)
                } else {
                    self.add(wa, wb)
                };
                if i == I::RoundingHalvingAdd {
                    s = self.add(s, self.cint(wt, 1));
                }
                let h = self.ashr(s, self.cint(wt, 1));
                Ok(self.int_resize(h, self.llvm_ty(t), true))
            }
            I::WideningAdd | I::WideningSub | I::WideningMul => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                if t.is_float() {
                    let dt = self.llvm_ty(t);
                    let a = self.cast_value(a, args[0].ty(), t);
                    let b = self.cast_value(b, args[1].ty(), t);
                    let _ = dt;
                    return Ok(match i {
                        I::WideningAdd => self.fadd(a, b),
                        I::WideningSub => self.fsub(a, b),
                        _ => self.fmul(a, b),
                    });
                }
                if i == I::WideningMul && args[0].ty() == args[1].ty() {
                    if let Some(r) = self.hvx_widening_mul(args[0].ty().element_of(), a, b) {
                        return Ok(r);
                    }
                }
                let dt = self.llvm_ty(t);
                let wa = self.int_resize(a, dt, args[0].ty().is_int());
                let wb = self.int_resize(b, dt, args[1].ty().is_int());
                Ok(match i {
                    I::WideningAdd => self.add(wa, wb),
                    I::WideningSub => self.sub(wa, wb),
                    _ => self.mul(wa, wb),
                })
            }
            I::MulShiftRight | I::RoundingMulShiftRight => {
                want(3)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                let q = self.codegen_expr(&args[2])?;
                let (at, bt) = (args[0].ty(), args[1].ty());
                let wbits = (at.bits.max(bt.bits) as u32) * 2 + 2;
                let wt = self.t_like(self.t_int(wbits), self.type_of(a));
                let wa = self.int_resize(a, wt, at.is_int());
                let wb = self.int_resize(b, wt, bt.is_int());
                let wq = self.int_resize(self.match_lanes(q, self.lanes_of(a)), wt, false);
                let mut p = self.mul(wa, wb);
                if i == I::RoundingMulShiftRight {
                    // + (1 << q) >> 1, which is 0 when q == 0
                    let one = self.cint(wt, 1);
                    let r = self.lshr(self.shl(one, wq), one);
                    p = self.add(p, r);
                }
                let s = self.ashr(p, wq);
                let wty = Type::int(wbits.min(255) as u8).with_lanes(t.lanes);
                Ok(self.saturating_cast(s, wty, t))
            }
            I::DivRoundToZero | I::ModRoundToZero => {
                want(2)?;
                let a = self.codegen_expr(&args[0])?;
                let b = self.codegen_expr(&args[1])?;
                if t.is_float() {
                    return Ok(if i == I::DivRoundToZero {
                        let d = self.fdiv(a, b);
                        self.trunc_f(d)
                    } else {
                        self.binop(Op::LLVMFRem, a, b)
                    });
                }
                let ty = self.type_of(a);
                let zero = self.cint(ty, 0);
                let one = self.cint(ty, 1);
                let b_zero = self.icmp(IP::LLVMIntEQ, b, zero);
                if t.is_uint() {
                    let bs = self.select(b_zero, one, b);
                    let r = self.binop(
                        if i == I::DivRoundToZero {
                            Op::LLVMUDiv
                        } else {
                            Op::LLVMURem
                        },
                        a,
                        bs,
                    );
                    return Ok(self.select(b_zero, zero, r));
                }
                let m1 = self.cint(ty, u64::MAX);
                let b_m1 = self.icmp(IP::LLVMIntEQ, b, m1);
                let bad = self.or(b_zero, b_m1);
                let bs = self.select(bad, one, b);
                let r = if i == I::DivRoundToZero {
                    let q = self.binop(Op::LLVMSDiv, a, bs);
                    let na = self.sub(zero, a);
                    self.select(b_m1, na, q)
                } else {
                    let r = self.binop(Op::LLVMSRem, a, bs);
                    self.select(b_m1, zero, r)
                };
                Ok(self.select(b_zero, zero, r))
            }
            I::BufferGetHost => {
                want(1)?;
                let b = self.codegen_expr(&args[0])?;
                let p = self.gep_bytes(b, self.buffer_offsets.host);
                Ok(self.load(self.t_ptr(), p, self.ptr_bytes))
            }
            I::BufferGetMin | I::BufferGetExtent | I::BufferGetStride => {
                want(2)?;
                let b = self.codegen_expr(&args[0])?;
                let d = self.codegen_expr(&args[1])?;
                let field = match i {
                    I::BufferGetMin => 0,
                    I::BufferGetExtent => 1,
                    _ => 2,
                };
                let dimp = self.gep_bytes(b, self.buffer_offsets.dim);
                let dims = self.load(self.t_ptr(), dimp, self.ptr_bytes);
                let d64 = self.int_resize(d, self.t_i64(), true);
                let idx = self.add(self.mul(d64, self.i64c(4)), self.i64c(field));
                let p = self.gep(self.t_i32(), dims, idx);
                let v = self.load(self.t_i32(), p, 4);
                Ok(self.int_resize(v, self.llvm_ty(t), true))
            }
            I::BufferGetDimensions => {
                want(1)?;
                let b = self.codegen_expr(&args[0])?;
                let p = self.gep_bytes(b, self.buffer_offsets.dimensions);
                let v = self.load(self.t_i32(), p, 4);
                Ok(self.int_resize(v, self.llvm_ty(t), true))
            }
            I::BufferGetTypeCode | I::BufferGetTypeBits | I::BufferGetTypeLanes => {
                want(1)?;
                let b = self.codegen_expr(&args[0])?;
                let (off, ty) = match i {
                    I::BufferGetTypeCode => (self.buffer_offsets.type_, self.t_i8()),
                    I::BufferGetTypeBits => (self.buffer_offsets.type_ + 1, self.t_i8()),
                    _ => (self.buffer_offsets.type_ + 2, self.t_i16()),
                };
                let p = self.gep_bytes(b, off);
                let v = self.load(ty, p, 1);
                Ok(self.int_resize(v, self.llvm_ty(t), false))
            }
            I::BufferIsBoundsQuery => {
                want(1)?;
                let b = self.codegen_expr(&args[0])?;
                let p = self.gep_bytes(b, self.buffer_offsets.host);
                let host = self.load(self.t_ptr(), p, self.ptr_bytes);
                let dev = self.load(self.t_i64(), b, 8);
                let h0 = self.icmp(IP::LLVMIntEQ, host, self.null_ptr());
                let d0 = self.icmp(IP::LLVMIntEQ, dev, self.i64c(0));
                let r = self.and(h0, d0);
                Ok(self.int_resize(r, self.llvm_ty(t), false))
            }
        }
    }

    /// View float operands of bitwise ops as integers of the same width.
    #[allow(clippy::type_complexity)]
    fn as_int_bits(
        &self,
        a: Val,
        b: Val,
        t: Type,
    ) -> (Val, Val, Box<dyn Fn(&CodeGen, Val) -> Val>) {
        if t.is_float() {
            let it = self.t_like(self.t_int(t.bits as u32), self.type_of(a));
            let orig = self.type_of(a);
            let ai = self.cast(Op::LLVMBitCast, a, it);
            let bi = self.cast(Op::LLVMBitCast, b, it);
            (
                ai,
                bi,
                Box::new(move |cg: &CodeGen, v: Val| cg.cast(Op::LLVMBitCast, v, orig)),
            )
        } else {
            (a, b, Box::new(|_: &CodeGen, v: Val| v))
        }
    }

    /// Halide shifts: a negative amount (signed `b`) shifts the other way;
    /// the amount is masked as x86 does for 32- and 64-bit shifts, and
    /// amounts >= the width give 0 (or the sign for arithmetic right shifts).
    pub(crate) fn shift(&self, a: Val, b: Val, at: Type, bt: Type, left: bool) -> Val {
        let ty = self.type_of(a);
        let bits = at.bits as u32;
        let b = self.match_lanes(b, self.lanes_of(a));
        let b = if bt.bits as u32 != bits {
            self.int_resize(b, ty, bt.is_int())
        } else {
            b
        };
        let mask = self.cint(ty, (bits.max(32) - 1) as u64);
        let clamp = |amt: Val, left: bool| -> Val {
            let amt = self.and(amt, mask);
            let big = self.icmp(IP::LLVMIntUGE, amt, self.cint(ty, bits as u64));
            let safe = self.select(big, self.cint(ty, (bits - 1) as u64), amt);
            let r = if left {
                self.shl(a, safe)
            } else if at.is_int() {
                self.ashr(a, safe)
            } else {
                self.lshr(a, safe)
            };
            if !left && at.is_int() {
                r
            } else {
                self.select(big, self.cint(ty, 0), r)
            }
        };
        let fwd = clamp(b, left);
        if !bt.is_int() {
            return fwd;
        }
        if let Some(c) = self.const_int_value(b) {
            if c >= 0 {
                return fwd;
            }
        }
        let nb = self.neg(b);
        let back = clamp(nb, !left);
        let neg = self.icmp(IP::LLVMIntSLT, b, self.cint(ty, 0));
        self.select(neg, back, fwd)
    }

    /// Clamp to the range of `to`, then convert (NaN becomes 0 for float to int).
    pub(crate) fn saturating_cast(&self, v: Val, from: Type, to: Type) -> Val {
        let dst = self.llvm_ty(to);
        if from.is_float() && (to.is_int() || to.is_uint()) && !to.is_bool() {
            let name = if to.is_int() {
                "llvm.fptosi.sat"
            } else {
                "llvm.fptoui.sat"
            };
            return self
                .intrinsic(name, &[dst, self.type_of(v)], &[v])
                .expect("fpto*i.sat");
        }
        if from.is_float() && to.is_float() {
            if to.bits < from.bits {
                let maxv = match to.bits {
                    16 => 65504.0,
                    _ => f32::MAX as f64,
                };
                let ty = self.type_of(v);
                let hi = self.cf(ty, maxv);
                let lo = self.cf(ty, -maxv);
                let c1 = self.fcmp(super::ops::FP::LLVMRealOGT, v, hi);
                let v = self.select(c1, hi, v);
                let c2 = self.fcmp(super::ops::FP::LLVMRealOLT, v, lo);
                let v = self.select(c2, lo, v);
                return self.float_resize(v, dst);
            }
            return self.cast_value(v, from, to);
        }
        if (from.is_int() || from.is_uint()) && (to.is_int() || to.is_uint()) && !to.is_bool() {
            let ty = self.type_of(v);
            let (smin, smax) = (from.min_int(), from.max_int());
            let (tmin, tmax) = (to.min_int(), to.max_int());
            let mut v = v;
            if tmin > smin {
                let c = self.cint_i128(ty, tmin);
                v = self.intrin2(
                    if from.is_int() {
                        "llvm.smax"
                    } else {
                        "llvm.umax"
                    },
                    v,
                    c,
                );
            }
            if tmax < smax {
                let c = self.cint_i128(ty, tmax);
                v = self.intrin2(
                    if from.is_int() {
                        "llvm.smin"
                    } else {
                        "llvm.umin"
                    },
                    v,
                    c,
                );
            }
            return self.int_resize(v, dst, from.is_int());
        }
        self.cast_value(v, from, to)
    }

    /// All lanes of a bool vector are true (identity for scalars).
    pub(crate) fn all_lanes(&self, c: Val) -> Val {
        if self.is_vec_ty(self.type_of(c)) {
            self.intrinsic("llvm.vector.reduce.and", &[self.type_of(c)], &[c])
                .expect("reduce.and")
        } else {
            c
        }
    }

    /// `if_then_else(c, a, b)`: only the taken side runs (scalar condition);
    /// with a vector condition both sides are evaluated and blended.
    fn lazy_select(&mut self, t: Type, args: &[Expr]) -> Result<Val> {
        let c = self.codegen_expr(&args[0])?;
        if self.is_vec_ty(self.type_of(c)) {
            let a = self.codegen_expr(&args[1])?;
            let b = if args.len() > 2 {
                self.codegen_expr(&args[2])?
            } else {
                self.zero_of(self.llvm_ty(t))
            };
            return Ok(self.select(c, a, b));
        }
        let then_bb = self.new_block("ite_then");
        let else_bb = self.new_block("ite_else");
        let done = self.new_block("ite_done");
        self.cond_br(c, then_bb, else_bb);
        self.position(then_bb);
        let a = self.codegen_expr(&args[1])?;
        let a_end = self.current_block();
        self.br(done);
        self.position(else_bb);
        let b = if args.len() > 2 {
            self.codegen_expr(&args[2])?
        } else {
            self.zero_of(self.llvm_ty(t))
        };
        let b_end = self.current_block();
        self.br(done);
        self.position(done);
        let ty = self.type_of(a);
        Ok(self.phi(ty, &[(a, a_end), (b, b_end)]))
    }
}

#[allow(dead_code)]
fn is_string(e: &Expr) -> bool {
    matches!(e.node(), ExprNode::StringImm(_))
}
