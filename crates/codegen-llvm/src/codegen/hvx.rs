//! HVX instruction selection (as Halide's Hexagon back end does it): the
//! intrinsics HVX computes in one instruction — averages, saturating adds
//! and subtracts, absolute differences, saturating narrowing casts,
//! widening multiplies — become those instructions. LLVM's Hexagon back
//! end would expand the generic IR instead (averages through lanes of
//! twice the width, saturation through min/max or compares and selects,
//! widening through unpacks), several instructions each.
//!
//! HVX's widening instructions leave their result in a register pair
//! holding the even lanes in one register and the odd lanes in the
//! other; a `vshuff` puts them back in order. A sum of widening products
//! (`u16(a) * 3 + u16(b) * 5 + u16(c)`, after `find_intrinsics`) stays in
//! that order through HVX's multiply-accumulates and is shuffled once.
//! Its `vpack` narrowing concatenates, so natural order goes in and comes
//! out.
//!
//! A load through a clamped dense ramp (`buf[clamp(ramp(b, 1, n), lo,
//! hi) + k]`, boundary conditions) of one whole register, whose clamp
//! range holds at least `n` elements (checked at run time; otherwise the
//! per-lane gather), is one dense load at `p = clamp(b, lo, hi - n + 1)`
//! — inside the range, so it touches only elements the gather may touch —
//! shifted by `b - p` lanes with `valign`/`vlalign`, the lanes shifted in
//! being copies of the end lane (what the clamp repeats).
//!
//! Assumes 128-byte HVX (`native_vector_bits` 1024). Vectors of a whole
//! number of 128-byte registers are computed a register at a time; any
//! other vector keeps the generic code. Every instruction used exists from
//! HVX v60 on, and computes exactly Halide's definition of its intrinsic:
//! `halving_add` floors, `rounding_halving_add` rounds halves up,
//! `halving_sub` floors the exact difference, `absd` is the difference of
//! the larger and the smaller (as the unsigned type).

use ferrohalide_core::ir::{BinOp, Expr, ExprNode, Intrinsic, Type, TypeCode};
use ferrohalide_core::Result;
use inkwell::llvm_sys::prelude::LLVMBasicBlockRef;

use super::ops::IP;

use super::{CodeGen, Val};

/// Bits in one HVX register in 128-byte mode.
const HVX_BITS: u32 = 1024;

/// (intrinsic, element type code, element bits, HVX instruction).
const LANEWISE: &[(Intrinsic, TypeCode, u8, &str)] = &[
    (Intrinsic::HalvingAdd, TypeCode::UInt, 8, "vavgub"),
    (Intrinsic::HalvingAdd, TypeCode::UInt, 16, "vavguh"),
    (Intrinsic::HalvingAdd, TypeCode::Int, 16, "vavgh"),
    (Intrinsic::HalvingAdd, TypeCode::Int, 32, "vavgw"),
    (Intrinsic::RoundingHalvingAdd, TypeCode::UInt, 8, "vavgubrnd"),
    (Intrinsic::RoundingHalvingAdd, TypeCode::UInt, 16, "vavguhrnd"),
    (Intrinsic::RoundingHalvingAdd, TypeCode::Int, 16, "vavghrnd"),
    (Intrinsic::RoundingHalvingAdd, TypeCode::Int, 32, "vavgwrnd"),
    (Intrinsic::HalvingSub, TypeCode::Int, 16, "vnavgh"),
    (Intrinsic::HalvingSub, TypeCode::Int, 32, "vnavgw"),
    (Intrinsic::SaturatingAdd, TypeCode::UInt, 8, "vaddubsat"),
    (Intrinsic::SaturatingAdd, TypeCode::UInt, 16, "vadduhsat"),
    (Intrinsic::SaturatingAdd, TypeCode::Int, 16, "vaddhsat"),
    (Intrinsic::SaturatingAdd, TypeCode::Int, 32, "vaddwsat"),
    (Intrinsic::SaturatingSub, TypeCode::UInt, 8, "vsububsat"),
    (Intrinsic::SaturatingSub, TypeCode::UInt, 16, "vsubuhsat"),
    (Intrinsic::SaturatingSub, TypeCode::Int, 16, "vsubhsat"),
    (Intrinsic::SaturatingSub, TypeCode::Int, 32, "vsubwsat"),
    (Intrinsic::Absd, TypeCode::UInt, 8, "vabsdiffub"),
    (Intrinsic::Absd, TypeCode::UInt, 16, "vabsdiffuh"),
    (Intrinsic::Absd, TypeCode::Int, 16, "vabsdiffh"),
    (Intrinsic::Absd, TypeCode::Int, 32, "vabsdiffw"),
];

/// (source element bits, destination type code) of a saturating narrowing
/// cast from a signed type to half its width, and its HVX instruction
/// (which reads its source lanes as signed).
const NARROWING: &[(u8, TypeCode, &str)] = &[
    (16, TypeCode::UInt, "vpackhub.sat"),
    (16, TypeCode::Int, "vpackhb.sat"),
    (32, TypeCode::UInt, "vpackwuh.sat"),
    (32, TypeCode::Int, "vpackwh.sat"),
];

/// (operand type code, operand bits, HVX instruction) of a widening
/// multiply of two vectors of that type, and the `vshuff` element size
/// that puts its result lanes back in order.
/// (The accumulating form of each is the same name with `_acc`.)
const WIDENING_MUL: &[(TypeCode, u8, &str, i64)] = &[
    (TypeCode::UInt, 8, "vmpyubv", -2),
    (TypeCode::Int, 8, "vmpybv", -2),
    (TypeCode::UInt, 16, "vmpyuhv", -4),
    (TypeCode::Int, 16, "vmpyhv", -4),
];

impl CodeGen {
    fn hvx_register(&self) -> super::Ty {
        self.t_vec(self.t_i32(), HVX_BITS / 32)
    }

    /// Lanes `from..from + n` of vector `v`, as one HVX register.
    fn hvx_piece(&self, v: Val, from: u32, n: u32) -> Val {
        let part = if self.lanes_of(v) == n {
            v
        } else {
            let range: Vec<i32> = (from..from + n).map(|l| l as i32).collect();
            self.shuffle1(v, &range)
        };
        self.cast(super::ops::Op::LLVMBitCast, part, self.hvx_register())
    }

    /// `saturating_cast` of vector `v` from `from` to `to` as HVX `vpack`s,
    /// where one exists (a signed source of twice the width).
    pub(crate) fn hvx_saturating_narrow(&self, v: Val, from: Type, to: Type) -> Option<Val> {
        if self.native_vector_bits != HVX_BITS || !from.is_int() || from.bits != 2 * to.bits {
            return None;
        }
        let (.., insn) = NARROWING.iter().find(|(bits, code, _)| *bits == from.bits && *code == to.code)?;
        let lanes = self.lanes_of(v);
        let per_output = HVX_BITS / to.bits as u32;
        if !self.is_vec_ty(self.type_of(v)) || lanes % per_output != 0 {
            return None;
        }
        let half = per_output / 2;
        let name = format!("llvm.hexagon.V6.{insn}.128B");
        let out = self.t_vec(self.t_int(to.bits as u32), per_output);
        let mut pieces = vec![];
        for k in 0..lanes / per_output {
            let lo = self.hvx_piece(v, k * per_output, half);
            let hi = self.hvx_piece(v, k * per_output + half, half);
            let r = self.intrinsic(&name, &[], &[hi, lo]).ok()?;
            pieces.push(self.cast(super::ops::Op::LLVMBitCast, r, out));
        }
        Some(if pieces.len() == 1 { pieces[0] } else { self.concat(&pieces) })
    }

    /// `widening_mul(a, b)` of two vectors of `elem` as HVX widening
    /// multiplies, each followed by the `vshuff` restoring lane order.
    pub(crate) fn hvx_widening_mul(&self, elem: Type, a: Val, b: Val) -> Option<Val> {
        if self.native_vector_bits != HVX_BITS || self.type_of(a) != self.type_of(b) || !self.is_vec_ty(self.type_of(a)) {
            return None;
        }
        let (.., insn, shuffle) =
            WIDENING_MUL.iter().find(|(code, bits, ..)| *code == elem.code && *bits == elem.bits)?;
        let lanes = self.lanes_of(a);
        let per_register = HVX_BITS / elem.bits as u32;
        if lanes % per_register != 0 {
            return None;
        }
        let mul = format!("llvm.hexagon.V6.{insn}.128B");
        let pair_ty = self.t_vec(self.t_int(2 * elem.bits as u32), per_register);
        let mut pieces = vec![];
        for k in 0..lanes / per_register {
            let (pa, pb) = (self.hvx_piece(a, k * per_register, per_register), self.hvx_piece(b, k * per_register, per_register));
            let pair = self.intrinsic(&mul, &[], &[pa, pb]).ok()?;
            let lo = self.intrinsic("llvm.hexagon.V6.lo.128B", &[], &[pair]).ok()?;
            let hi = self.intrinsic("llvm.hexagon.V6.hi.128B", &[], &[pair]).ok()?;
            let ordered = self.intrinsic("llvm.hexagon.V6.vshuffvdd.128B", &[], &[hi, lo, self.i32c(*shuffle)]).ok()?;
            pieces.push(self.cast(super::ops::Op::LLVMBitCast, ordered, pair_ty));
        }
        Some(if pieces.len() == 1 { pieces[0] } else { self.concat(&pieces) })
    }

    /// `i(a, b)` (both vectors of elements of type `elem`) as HVX
    /// instructions, if there is one for it (see the module comment).
    pub(crate) fn hvx_lanewise(&self, i: Intrinsic, elem: Type, a: Val, b: Val) -> Option<Val> {
        if self.native_vector_bits != HVX_BITS {
            return None;
        }
        let (.., insn) = LANEWISE
            .iter()
            .find(|(op, code, bits, _)| *op == i && *code == elem.code && *bits == elem.bits)?;
        let (ta, tb) = (self.type_of(a), self.type_of(b));
        if !self.is_vec_ty(ta) || ta != tb {
            return None;
        }
        let lanes = self.lanes_of(a);
        let per_register = HVX_BITS / elem.bits as u32;
        if lanes % per_register != 0 {
            return None;
        }
        let name = format!("llvm.hexagon.V6.{insn}.128B");
        let mut pieces = vec![];
        for k in 0..lanes / per_register {
            let piece = |v: Val| self.hvx_piece(v, k * per_register, per_register);
            let r = self.intrinsic(&name, &[], &[piece(a), piece(b)]).ok()?;
            let back = self.t_vec(self.elem_ty(ta), per_register);
            pieces.push(self.cast(super::ops::Op::LLVMBitCast, r, back));
        }
        Some(if pieces.len() == 1 { pieces[0] } else { self.concat(&pieces) })
    }

    /// A sum (an `Add` tree) of two or more widening products of vectors
    /// of one narrow type — `widening_mul(a, b)`, or `W(a)` as a product by
    /// one — as one HVX widening multiply and multiply-accumulates per
    /// register, shuffled back into lane order once. `None` if `e` is not
    /// such a sum.
    pub(crate) fn hvx_sum_of_products(&mut self, e: &Expr) -> Result<Option<Val>> {
        if self.native_vector_bits != HVX_BITS {
            return Ok(None);
        }
        let mut terms = vec![];
        if !matches!(e.node(), ExprNode::Binary { op: BinOp::Add, .. }) || !collect_products(e, &mut terms) {
            return Ok(None);
        }
        let narrow = terms[0].0.ty();
        let Some((.., insn, shuffle)) = WIDENING_MUL
            .iter()
            .find(|(code, bits, ..)| *code == narrow.code && *bits == narrow.bits)
            .copied()
        else {
            return Ok(None);
        };
        let lanes = narrow.lanes as u32;
        let per_register = HVX_BITS / narrow.bits as u32;
        if terms.len() < 2
            || e.ty().bits != 2 * narrow.bits
            || lanes % per_register != 0
            || terms.iter().any(|(a, b)| a.ty() != narrow || b.as_ref().is_some_and(|b| b.ty() != narrow))
        {
            return Ok(None);
        }
        let one = Expr::make_const_i64(narrow, 1);
        let mut values = vec![];
        for (a, b) in &terms {
            let va = self.codegen_expr(a)?;
            let vb = self.codegen_expr(b.as_ref().unwrap_or(&one))?;
            values.push((va, vb));
        }
        let mul = format!("llvm.hexagon.V6.{insn}.128B");
        let acc = format!("llvm.hexagon.V6.{insn}.acc.128B");
        let wide = self.t_vec(self.t_int(2 * narrow.bits as u32), per_register);
        let mut pieces = vec![];
        for k in 0..lanes / per_register {
            let piece = |v: Val| self.hvx_piece(v, k * per_register, per_register);
            let (a0, b0) = values[0];
            let mut pair = self.intrinsic(&mul, &[], &[piece(a0), piece(b0)])?;
            for &(a, b) in &values[1..] {
                pair = self.intrinsic(&acc, &[], &[pair, piece(a), piece(b)])?;
            }
            let lo = self.intrinsic("llvm.hexagon.V6.lo.128B", &[], &[pair])?;
            let hi = self.intrinsic("llvm.hexagon.V6.hi.128B", &[], &[pair])?;
            let ordered = self.intrinsic("llvm.hexagon.V6.vshuffvdd.128B", &[], &[hi, lo, self.i32c(shuffle)])?;
            pieces.push(self.cast(super::ops::Op::LLVMBitCast, ordered, wide));
        }
        Ok(Some(if pieces.len() == 1 { pieces[0] } else { self.concat(&pieces) }))
    }

    /// `min(max(x, lo), hi)`, signed scalars.
    fn clamp_signed(&self, x: Val, lo: Val, hi: Val) -> Val {
        let below = self.icmp(IP::LLVMIntSLT, x, lo);
        let x = self.select(below, lo, x);
        let above = self.icmp(IP::LLVMIntSGT, x, hi);
        self.select(above, hi, x)
    }

    /// The fast path of an HVX clamped load (see the module comment):
    /// emits the run-time check, branching to a new block where the fast
    /// path is built, and returns (its value, the block it ends in, the
    /// block the caller must fill with the slow path and join). `None` if
    /// the load is not such a load.
    pub(crate) fn hvx_clamped_load(
        &mut self,
        t: Type,
        name: &str,
        index: &Expr,
    ) -> Result<Option<(Val, LLVMBasicBlockRef, LLVMBasicBlockRef)>> {
        let elem_bits = t.bits as u32;
        if self.native_vector_bits != HVX_BITS || t.lanes as u32 * elem_bits != HVX_BITS || t.is_float() {
            return Ok(None);
        }
        let Some((c, offset)) = super::clamped_load::split_index(index, super::clamped_load::ClampShapes::AnyChain) else { return Ok(None) };
        if c.base.ty() != Type::i32() || c.lanes != t.lanes {
            return Ok(None);
        }
        let n = t.lanes as i64;
        let i64t = self.t_i64();
        let wide = |cg: &mut CodeGen, e: &Expr| -> Result<Val> {
            let v = cg.codegen_expr(e)?;
            Ok(cg.int_resize(v, i64t, true))
        };
        let (b, lo, hi, k) = (wide(self, &c.base)?, wide(self, &c.lo)?, wide(self, &c.hi)?, wide(self, &offset)?);
        // The range holds a whole vector: hi - lo >= n - 1 (in 64 bits).
        let span = self.sub(hi, lo);
        let fits = self.icmp(IP::LLVMIntSGE, span, self.cint_s(i64t, n - 1));
        let fast_bb = self.new_block("clamped_load_dense");
        let slow_bb = self.new_block("clamped_load_gather");
        self.cond_br(fits, fast_bb, slow_bb);
        self.position(fast_bb);
        let top = self.sub(hi, self.cint_s(i64t, n - 1));
        let p = self.clamp_signed(b, lo, top);
        let elem = self.mem_scalar_ty(t.element_of());
        let at = self.add(p, k);
        let ptr = self.gep(elem, self.sym(name)?, at);
        let v = self.load(self.t_vec(elem, t.lanes as u32), ptr, 1);
        // Shift by s = b - p lanes (|s| < n: more only shifts in more
        // copies of the end lane, which n - 1 already fills every lane with).
        let s = self.clamp_signed(self.sub(b, p), self.cint_s(i64t, 1 - n), self.cint_s(i64t, n - 1));
        let first = self.splat(self.extract(v, 0), t.lanes as u32);
        let last = self.splat(self.extract(v, t.lanes as u32 - 1), t.lanes as u32);
        let bytes = |cg: &CodeGen, lanes: Val| {
            let b = cg.mul(lanes, cg.cint_s(i64t, (elem_bits / 8) as i64));
            cg.int_resize(b, cg.t_i32(), true)
        };
        let reg = |cg: &CodeGen, x: Val| cg.cast(super::ops::Op::LLVMBitCast, x, cg.hvx_register());
        let left = self.intrinsic("llvm.hexagon.V6.valignb.128B", &[], &[reg(self, last), reg(self, v), bytes(self, s)])?;
        let neg = self.sub(self.cint_s(i64t, 0), s);
        let right = self.intrinsic("llvm.hexagon.V6.vlalignb.128B", &[], &[reg(self, v), reg(self, first), bytes(self, neg)])?;
        let up = self.icmp(IP::LLVMIntSGE, s, self.cint_s(i64t, 0));
        let r = self.select(up, left, right);
        let r = self.cast(super::ops::Op::LLVMBitCast, r, self.type_of(v));
        let r = self.from_mem(r, t);
        Ok(Some((r, self.current_block(), slow_bb)))
    }
}

/// The terms of the `Add` tree `e`, each a widening product `(a, Some(b))`
/// or a widening cast `(a, None)`, into `terms`; false if some term is
/// neither.
fn collect_products(e: &Expr, terms: &mut Vec<(Expr, Option<Expr>)>) -> bool {
    match e.node() {
        ExprNode::Binary { op: BinOp::Add, a, b } => collect_products(a, terms) && collect_products(b, terms),
        ExprNode::Cast(a) if a.ty().is_int_or_uint() && a.ty().bits * 2 == e.ty().bits && a.ty().code == e.ty().code => {
            terms.push((a.clone(), None));
            true
        }
        _ => match e.as_intrinsic(Intrinsic::WideningMul) {
            Some([a, b]) => {
                terms.push((a.clone(), Some(b.clone())));
                true
            }
            _ => false,
        },
    }
}
