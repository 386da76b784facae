//! The `trace` intrinsic (`lower/tracing.rs`): one call of the runtime's
//! `halide_trace_helper`, which fills a `halide_trace_event_t` and passes it
//! to `halide_trace`. The value and the coordinates are laid out in stack
//! slots of the current function: the value's lanes, then each coordinate's
//! lanes in turn (Halide's grouping of vector events).

use ferrohalide_core::ir::{Expr, ExprNode};
use ferrohalide_core::lower::tracing::TraceEvent;
use ferrohalide_core::Result;

use crate::runtime_symbols::names;

use super::{CodeGen, Val};

impl CodeGen {
    pub(crate) fn codegen_trace(&mut self, args: &[Expr]) -> Result<Val> {
        let ev = TraceEvent::from_args(args)?;
        let func = self.global_string(&ev.func);
        let parent = self.codegen_expr(&ev.parent_id)?;
        // A value-less event has Halide's default Type(): handle, 0 bits, 0 lanes.
        let (value, (code, bits, lanes)) = match &ev.value {
            Some(v) => {
                let t = v.ty();
                let slot = self.value_slot(v)?;
                (slot, (t.code.as_halide_code() as i64, t.bits as i64, t.lanes as i64))
            }
            None => (self.null_ptr(), (3, 0, 0)),
        };
        let coord_lanes = lanes.max(1) as u32;
        let coords = self.coordinates_slot(&ev.coordinates, coord_lanes)?;
        let tag = self.tag_text(&ev.tag)?;
        let dimensions = ev.coordinates.len() as i64 * coord_lanes as i64;
        let call_args = [
            self.f.user_context,
            func,
            value,
            coords,
            self.i32c(code),
            self.i32c(bits),
            self.i32c(lanes),
            self.i32c(ev.event as i64),
            parent,
            self.i32c(ev.value_index as i64),
            self.i32c(dimensions),
            tag,
        ];
        Ok(self.call_extern(names::TRACE_HELPER, self.t_i32(), &call_args))
    }

    /// A stack slot holding `v` (bools as one byte per lane, as the
    /// runtime reads them).
    fn value_slot(&mut self, v: &Expr) -> Result<Val> {
        let mut val = self.codegen_expr(v)?;
        if v.ty().is_bool() {
            let byte = self.t_like(self.t_i8(), self.type_of(val));
            val = self.int_resize(val, byte, false);
        }
        let slot = self.entry_alloca(self.type_of(val), 16);
        self.store(val, slot, 1);
        Ok(slot)
    }

    /// `make_struct(args...)`: the scalars stored at C struct offsets (each
    /// field aligned to its size) in a stack slot of the function.
    pub(crate) fn codegen_make_struct(&mut self, args: &[Expr]) -> Result<Val> {
        let mut offsets = vec![];
        let mut size = 0u64;
        // Fields at their natural alignment, as a C struct of the same
        // members lays them out; a Handle is a pointer of the target.
        let ptr_bytes = self.ptr_bytes as u64;
        let field_bytes = move |t: ferrohalide_core::ir::Type| {
            if t.is_handle() { ptr_bytes } else { t.bytes() as u64 }
        };
        for a in args {
            let bytes = field_bytes(a.ty());
            if a.ty().lanes != 1 || bytes == 0 {
                return Err(ferrohalide_core::error::Error::internal("make_struct of a vector or empty type"));
            }
            size = size.div_ceil(bytes) * bytes;
            offsets.push(size);
            size += bytes;
        }
        let t = unsafe { inkwell::llvm_sys::core::LLVMArrayType2(self.t_i8(), size.max(1)) };
        let slot = self.entry_alloca(t, 16);
        for (a, off) in args.iter().zip(offsets) {
            let v = self.codegen_expr(a)?;
            let at = self.gep_bytes(slot, off);
            self.store(v, at, field_bytes(a.ty()) as u32);
        }
        Ok(slot)
    }

    /// A stack array of the coordinates as int32s, `lanes` per coordinate.
    fn coordinates_slot(&mut self, coords: &[Expr], lanes: u32) -> Result<Val> {
        if coords.is_empty() {
            return Ok(self.null_ptr());
        }
        let n = coords.len() as u64 * lanes as u64;
        let t = unsafe { inkwell::llvm_sys::core::LLVMArrayType2(self.t_i32(), n) };
        let slot = self.entry_alloca(t, 16);
        for (k, c) in coords.iter().enumerate() {
            let v = self.codegen_expr(c)?;
            let v = self.match_lanes(v, lanes);
            let want = self.t_like(self.t_i32(), self.type_of(v));
            let v = self.int_resize(v, want, c.ty().is_int());
            let at = self.gep_bytes(slot, k as u64 * lanes as u64 * 4);
            self.store(v, at, 4);
        }
        Ok(slot)
    }

    /// The tag's text: null without one, a constant string, or its parts
    /// formatted at run time.
    fn tag_text(&mut self, parts: &[Expr]) -> Result<Val> {
        match parts {
            [] => Ok(self.null_ptr()),
            [p] if matches!(p.node(), ExprNode::StringImm(_)) => {
                let ExprNode::StringImm(s) = p.node() else { unreachable!() };
                Ok(self.global_string(s))
            }
            _ => {
                let mut vals = Vec::with_capacity(parts.len());
                for p in parts {
                    vals.push(self.codegen_expr(p)?);
                }
                Ok(self.format_values(parts, &vals, None, "", ""))
            }
        }
    }
}
