//! Masked vector loads and stores (predicated accesses, GuardWithIf tails,
//! gathers and scatters): LLVM's `llvm.masked.*` intrinsics, or, where the
//! target's LLVM back end gets them wrong, one branch per lane. Unmasked
//! gathers and scatters are one scalar access per lane.
//!
//! LLVM 19's Hexagon back end computes wrong values for masked loads,
//! stores and gathers of vectors narrower than an HVX register (16 x f32
//! under a GuardWithIf tail: cross fuzzing, seed 24), so Hexagon code reads
//! and writes each active lane by itself instead. Every other target uses
//! the intrinsics (which its back end lowers to masked instructions or
//! scalarizes itself).

use super::{CodeGen, Ty, Val};
use ferrohalide_core::Result;

impl CodeGen {
    /// `llvm.masked.load` of a `vt` vector at `p`, inactive lanes zero.
    /// `tag`, here and below: the buffer's alias tag (`buffer_tbaa`).
    pub(crate) fn masked_load(&mut self, vt: Ty, p: Val, align: u32, mask: Val, tag: Val) -> Result<Val> {
        if self.lane_by_lane_masked_memory {
            let lanes = self.lanes_of(mask);
            let elem = self.elem_ty(vt);
            let steps: Vec<Val> = (0..lanes).map(|i| self.i32c(i as i64)).collect();
            let ptrs = self.gep(elem, p, self.cvec(&steps));
            return Ok(self.load_lanes(elem, ptrs, mask, align, tag));
        }
        let pass = self.zero_of(vt);
        let v = self.intrinsic("llvm.masked.load", &[vt, self.t_ptr()], &[p, self.i32c(align as i64), mask, pass])?;
        self.set_tbaa(v, tag);
        Ok(v)
    }

    /// `llvm.masked.store` of `v` at `p`.
    pub(crate) fn masked_store(&mut self, v: Val, p: Val, align: u32, mask: Val, tag: Val) -> Result<()> {
        if self.lane_by_lane_masked_memory {
            let lanes = self.lanes_of(mask);
            let elem = self.elem_ty(self.type_of(v));
            let steps: Vec<Val> = (0..lanes).map(|i| self.i32c(i as i64)).collect();
            let ptrs = self.gep(elem, p, self.cvec(&steps));
            self.store_lanes(v, ptrs, mask, align, tag);
            return Ok(());
        }
        let s = self.intrinsic("llvm.masked.store", &[self.type_of(v), self.t_ptr()], &[v, p, self.i32c(align as i64), mask])?;
        self.set_tbaa(s, tag);
        Ok(())
    }

    /// `llvm.masked.gather` of `part_t` through the pointers `ptrs`,
    /// inactive lanes zero.
    pub(crate) fn masked_gather(&mut self, part_t: Ty, ptrs: Val, align: u32, mask: Val, tag: Val) -> Result<Val> {
        if self.lane_by_lane_masked_memory {
            return Ok(self.load_lanes(self.elem_ty(part_t), ptrs, mask, align, tag));
        }
        let pass = self.zero_of(part_t);
        let v = self.intrinsic(
            "llvm.masked.gather",
            &[part_t, self.type_of(ptrs)],
            &[ptrs, self.i32c(align as i64), mask, pass],
        )?;
        self.set_tbaa(v, tag);
        Ok(v)
    }

    /// `llvm.masked.scatter` of `v` through the pointers `ptrs` (a later
    /// lane's store wins, as the intrinsic's).
    pub(crate) fn masked_scatter(&mut self, v: Val, ptrs: Val, align: u32, mask: Val, tag: Val) -> Result<()> {
        if self.lane_by_lane_masked_memory {
            self.store_lanes(v, ptrs, mask, align, tag);
            return Ok(());
        }
        let s = self.intrinsic(
            "llvm.masked.scatter",
            &[self.type_of(v), self.type_of(ptrs)],
            &[v, ptrs, self.i32c(align as i64), mask],
        )?;
        self.set_tbaa(s, tag);
        Ok(())
    }

    /// An unpredicated gather of `lanes` elements of `base[idx]`: one scalar
    /// load per lane, as Halide emits it. Each lane's address is formed from
    /// its own scalar index (no vector of 64-bit pointers), and on x86 this
    /// beats the hardware gather (measured on a 4-lane histogram: 8.4 ms
    /// against 9.2 ms), which LLVM's other back ends scalarize anyway.
    pub(crate) fn scalar_gather(&mut self, elem: Ty, base: Val, idx: Val, lanes: u32, align: u32, tag: Val) -> Val {
        let vt = self.t_vec(elem, lanes);
        let mut acc = self.zero_of(vt);
        for i in 0..lanes {
            let p = self.lane_ptr(elem, base, idx, i);
            let e = self.load(elem, p, align);
            self.set_tbaa(e, tag);
            acc = self.insert(acc, e, i);
        }
        acc
    }

    /// An unpredicated scatter of `v` to `base[idx]`: one scalar store per
    /// lane in lane order, so a later lane wins where two alias. Hardware
    /// scatters are slower than this on x86 (microcoded on AMD).
    pub(crate) fn scalar_scatter(&mut self, v: Val, elem: Ty, base: Val, idx: Val, lanes: u32, align: u32, tag: Val) {
        for i in 0..lanes {
            let p = self.lane_ptr(elem, base, idx, i);
            let e = self.extract(v, i);
            let s = self.store(e, p, align);
            self.set_tbaa(s, tag);
        }
    }

    /// The address of lane `i` of the access `base[idx]` (`idx` a vector,
    /// or a scalar shared by every lane).
    fn lane_ptr(&self, elem: Ty, base: Val, idx: Val, i: u32) -> Val {
        let at = if self.is_vec_ty(self.type_of(idx)) { self.extract(idx, i) } else { idx };
        self.gep(elem, base, at)
    }

    /// Each lane whose mask bit is set loaded through its pointer, behind a
    /// branch of its own; the others zero.
    fn load_lanes(&mut self, elem: Ty, ptrs: Val, mask: Val, align: u32, tag: Val) -> Val {
        let lanes = self.lanes_of(mask);
        let mut acc = self.zero_of(self.t_vec(elem, lanes));
        for i in 0..lanes {
            let on = self.extract(mask, i);
            let before = self.current_block();
            let load = self.new_block("masked_lane_load");
            let next = self.new_block("masked_lane_next");
            self.cond_br(on, load, next);
            self.position(load);
            let p = self.extract(ptrs, i);
            let e = self.load(elem, p, align);
            self.set_tbaa(e, tag);
            let with = self.insert(acc, e, i);
            self.br(next);
            self.position(next);
            acc = self.phi(self.type_of(acc), &[(with, load), (acc, before)]);
        }
        acc
    }

    /// Each lane of `v` whose mask bit is set stored through its pointer,
    /// in lane order, behind a branch of its own.
    fn store_lanes(&mut self, v: Val, ptrs: Val, mask: Val, align: u32, tag: Val) {
        let lanes = self.lanes_of(mask);
        for i in 0..lanes {
            let on = self.extract(mask, i);
            let store = self.new_block("masked_lane_store");
            let next = self.new_block("masked_lane_next");
            self.cond_br(on, store, next);
            self.position(store);
            let p = self.extract(ptrs, i);
            let e = self.extract(v, i);
            let s = self.store(e, p, align);
            self.set_tbaa(s, tag);
            self.br(next);
            self.position(next);
        }
    }
}
