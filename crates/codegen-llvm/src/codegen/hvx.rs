//! HVX instruction selection (as Halide's Hexagon back end does it): the
//! lane-wise intrinsics HVX computes in one instruction — averages,
//! saturating adds and subtracts, absolute differences — become those
//! instructions. LLVM's Hexagon back end would expand the generic IR
//! instead (averages through lanes of twice the width, saturation through
//! min/max or compares and selects), several instructions each.
//!
//! Assumes 128-byte HVX (`native_vector_bits` 1024). Vectors of a whole
//! number of 128-byte registers are computed a register at a time; any
//! other vector keeps the generic code. Every instruction used exists from
//! HVX v60 on, and computes exactly Halide's definition of its intrinsic:
//! `halving_add` floors, `rounding_halving_add` rounds halves up,
//! `halving_sub` floors the exact difference, `absd` is the difference of
//! the larger and the smaller (as the unsigned type).

use ferrohalide_core::ir::{Intrinsic, Type, TypeCode};

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

impl CodeGen {
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
        let register = self.t_vec(self.t_i32(), HVX_BITS / 32);
        let name = format!("llvm.hexagon.V6.{insn}.128B");
        let mut pieces = vec![];
        for k in 0..lanes / per_register {
            let range: Vec<i32> = (k * per_register..(k + 1) * per_register).map(|l| l as i32).collect();
            let piece = |v: Val| {
                let part = if lanes == per_register { v } else { self.shuffle1(v, &range) };
                self.cast(super::ops::Op::LLVMBitCast, part, register)
            };
            let r = self.intrinsic(&name, &[], &[piece(a), piece(b)]).ok()?;
            let back = self.t_vec(self.elem_ty(ta), per_register);
            pieces.push(self.cast(super::ops::Op::LLVMBitCast, r, back));
        }
        Some(if pieces.len() == 1 { pieces[0] } else { self.concat(&pieces) })
    }
}
