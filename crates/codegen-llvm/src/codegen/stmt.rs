//! Statements: lets, assertions, loops, stores, allocations, branches.

use ferrohalide_core::ir::{Expr, ExprNode, ForType, MemoryType, Stmt, StmtNode, Type};
use ferrohalide_core::{Error, Result};

use super::ops::IP;
use super::{CodeGen, LiveResource, Ty, Val};
use inkwell::llvm_sys::prelude::LLVMBasicBlockRef;
use crate::runtime_symbols::{self, names};

/// A loop whose constant bounds end beyond Int(32) (an RDom starting near
/// 2^31) would count with a wrapping counter, which the no-overflow rule
/// of loop counters makes undefined: report it as Halide's constant
/// folding does.
fn check_loop_end(min: &Expr, extent: &Expr) -> Result<()> {
    if let (Some(m), Some(e)) = (min.as_int_const(), extent.as_int_const()) {
        if e > 0 && min.ty().bits <= 32 && i32::try_from(m + e).is_err() {
            return Err(Error::user(
                "Signed integer overflow occurred during constant-folding. Signed integer overflow for int32 and int64 is undefined behavior in Halide.\n",
            ));
        }
    }
    Ok(())
}

use ferrohalide_core::lower::allocation_placement::{placement, Placement, ALLOCATION_PADDING};

/// The maximum buffer size without `large_buffers`, 2^31 - 1.
const DEFAULT_MAX_BUFFER_SIZE: u64 = i32::MAX as u64;

/// A call of one of the runtime's `halide_error_*` functions, which report
/// an error and return its code.
fn is_error_reporter(e: &Expr) -> bool {
    matches!(e.node(), ferrohalide_core::ir::ExprNode::Call { name, kind: ferrohalide_core::ir::CallKind::Extern, .. }
        if name.starts_with("halide_error_"))
}

impl CodeGen {
    pub(crate) fn codegen_stmt(&mut self, s: &Stmt) -> Result<()> {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                if let Some(release) = runtime_symbols::release_function_of(value) {
                    return self.codegen_owned_let(name, value, release, body);
                }
                let v = self.codegen_expr(value)?;
                let v = self.hide_root_let(value, v);
                self.push_sym(name, v);
                let r = self.codegen_stmt(body);
                self.pop_sym(name);
                r
            }
            StmtNode::AssertStmt { condition, message } => {
                let c = self.codegen_expr(condition)?;
                let c = self.all_lanes(c);
                let ok = self.new_block("assert_ok");
                let fail = self.new_block("assert_failed");
                self.cond_br(c, ok, fail);
                self.position(fail);
                let code = match message.as_intrinsic(ferrohalide_core::ir::Intrinsic::Error) {
                    Some(args) => {
                        let (code, parts) = CodeGen::error_parts(args);
                        self.report_error(code, parts)?
                    }
                    // A runtime reporter (halide_error_*) reports and returns the code.
                    None if is_error_reporter(message) => self.codegen_expr(message)?,
                    // An error code already reported by the callee that
                    // computed it (a multi-target wrapper's call): passed on.
                    None if matches!(message.node(), ExprNode::Variable { .. })
                        && message.ty() == Type::i32() =>
                    {
                        self.codegen_expr(message)?
                    }
                    None if message.ty().is_int_or_uint() => {
                        let args = [Expr::string("Assertion failed: "), Expr::string(condition.to_string())];
                        self.report_error(-1, &args)?;
                        let v = self.codegen_expr(message)?;
                        self.int_resize(v, self.t_i32(), message.ty().is_int())
                    }
                    None => {
                        let args = [Expr::string("Assertion failed: "), message.clone()];
                        self.report_error(-1, &args)?
                    }
                };
                // A zero code would read as success: use -1 then.
                let is_zero = self.icmp(IP::LLVMIntEQ, code, self.i32c(0));
                let code = self.select(is_zero, self.i32c(-1), code);
                self.return_error(code);
                self.position(ok);
                Ok(())
            }
            StmtNode::ProducerConsumer { body, .. } => self.codegen_stmt(body),
            StmtNode::For { name, min, extent, for_type, body } => {
                check_loop_end(min, extent)?;
                match for_type {
                    ForType::Parallel => self.codegen_parallel_for(name, min, extent, body),
                    ForType::Fork => self.codegen_fork(name, min, extent, body),
                    _ if super::parallel::only_starts_parallel_loops(s) => {
                        self.codegen_serial_for(name, min, extent, body)
                    }
                    _ if self.f.outline_serial_loops => {
                        self.codegen_outlined_loop(name, s, super::parallel::ir_size(s))
                    }
                    _ => match self.should_outline(s) {
                        Some(size) => self.codegen_outlined_loop(name, s, size),
                        None => self.codegen_serial_for(name, min, extent, body),
                    },
                }
            }
            StmtNode::Store { name, value, index, predicate } if self.atomic_stores => {
                self.codegen_atomic_store(name, value, index, predicate)
            }
            StmtNode::Store { name, value, index, predicate } => self.codegen_store(name, value, index, predicate),
            StmtNode::Atomic { mutex_name, body, .. } => self.codegen_atomic(mutex_name, body),
            StmtNode::Provide { name, .. } => Err(Error::internal(format!(
                "Provide to `{name}` reached code generation (storage flattening should have removed it)"
            ))),
            StmtNode::Realize { name, .. } => Err(Error::internal(format!(
                "Realize of `{name}` reached code generation (storage flattening should have removed it)"
            ))),
            StmtNode::Allocate { name, ty, memory_type, extents, condition, body } => {
                self.codegen_allocate(name, *ty, *memory_type, extents, condition, body)
            }
            StmtNode::Free { .. } => Ok(()),
            StmtNode::Block(stmts) => {
                for s in stmts {
                    self.codegen_stmt(s)?;
                }
                Ok(())
            }
            StmtNode::IfThenElse { condition, then_case, else_case } => {
                let c = self.codegen_expr(condition)?;
                let c = self.all_lanes(c);
                let then_bb = self.new_block("then");
                let after = self.new_block("endif");
                let else_bb = if else_case.is_some() { self.new_block("else") } else { after };
                self.cond_br(c, then_bb, else_bb);
                self.position(then_bb);
                self.codegen_stmt(then_case)?;
                self.br(after);
                if let Some(e) = else_case {
                    self.position(else_bb);
                    self.codegen_stmt(e)?;
                    self.br(after);
                }
                self.position(after);
                Ok(())
            }
            StmtNode::Evaluate(e) => {
                if !e.is_const() {
                    self.codegen_expr(e)?;
                }
                Ok(())
            }
        }
    }

    /// If `failed` (an i1) holds, call the runtime's error reporter
    /// `reporter(user_context, args...)` (one of Halide's `halide_error_*`,
    /// which formats the message and returns its code) and return that
    /// code from the pipeline: one call where a message built inline
    /// costs a call per part.
    fn fail_with_reporter(&mut self, failed: Val, reporter: &str, args: &[Val]) {
        let ok = self.new_block("check_ok");
        let fail = self.new_block("check_failed");
        self.cond_br(failed, fail, ok);
        self.position(fail);
        let mut all = vec![self.f.user_context];
        all.extend_from_slice(args);
        let code = self.call_extern(reporter, self.t_i32(), &all);
        self.return_error(code);
        self.position(ok);
    }

    /// The byte size of a heap allocation (element size times the extents,
    /// negative extents counting as 0), with Halide's check that it neither
    /// overflows 64 bits nor exceeds the target's maximum buffer size
    /// (checked only where `condition` holds, when there is one).
    fn checked_allocation_size(
        &mut self,
        name: &str,
        elem_bytes: u64,
        extents: &[Expr],
        condition: Option<Val>,
    ) -> Result<Val> {
        let (i64t, i128t) = (self.t_i64(), self.t_int(128));
        let mut size = self.i64c(elem_bytes as i64);
        let mut overflow = self.bool_c(false);
        for e in extents {
            let v = self.codegen_expr(e)?;
            let v = self.int_resize(v, i64t, e.ty().is_int());
            let negative = self.icmp(IP::LLVMIntSLT, v, self.i64c(0));
            let v = self.select(negative, self.i64c(0), v);
            // The product in 128 bits: its high half says whether 64 overflowed.
            let wide = self.mul(
                self.int_resize(size, i128t, false),
                self.int_resize(v, i128t, false),
            );
            let high = self.lshr(wide, self.cint(i128t, 64));
            let lost = self.icmp(IP::LLVMIntNE, high, self.cint(i128t, 0));
            overflow = self.or(overflow, lost);
            size = self.int_resize(wide, i64t, false);
        }
        let max = self.target.max_buffer_size;
        let above = self.icmp(IP::LLVMIntUGT, size, self.cint(i64t, max));
        let mut too_large = self.or(overflow, above);
        if let Some(c) = condition {
            too_large = self.and(too_large, c);
        }
        let name_v = self.global_string(name);
        let max_v = self.cint(i64t, max);
        self.fail_with_reporter(too_large, names::ERROR_BUFFER_ALLOCATION_TOO_LARGE, &[name_v, size, max_v]);
        Ok(size)
    }

    /// Release the live resources of this function and return `code`.
    pub(crate) fn return_error(&mut self, code: Val) {
        let Some(top) = self.f.heap_allocs.len().checked_sub(1) else {
            self.ret(code);
            return;
        };
        let from = self.current_block();
        let (bb, phi) = self.release_on_error(top, self.type_of(code));
        self.position(from);
        self.br(bb);
        self.add_incoming(phi, code, from);
    }

    /// The shared block releasing live resources `k`, `k - 1`, ..., 0 and
    /// returning the error code of its phi (of type `code_t`); made on
    /// first use. Leaves the builder positioned anywhere.
    fn release_on_error(&mut self, k: usize, code_t: Ty) -> (LLVMBasicBlockRef, Val) {
        if let Some(made) = self.f.heap_allocs[k].cleanup {
            return made;
        }
        let bb = self.new_block("release_on_error");
        self.position(bb);
        let code = self.phi(code_t, &[]);
        let (value, release) = (self.f.heap_allocs[k].value, self.f.heap_allocs[k].release);
        self.call_extern(release, self.t_void(), &[self.f.user_context, value]);
        if k == 0 {
            self.ret(code);
        } else {
            let (next, next_code) = self.release_on_error(k - 1, code_t);
            self.position(bb);
            self.br(next);
            self.add_incoming(next_code, code, bb);
        }
        self.f.heap_allocs[k].cleanup = Some((bb, code));
        (bb, code)
    }

    /// `let name = create(...)` where `create` makes a runtime resource
    /// (`runtime_symbols::release_function_of`): a null result is an out of
    /// memory error, and the resource is released when the body ends or
    /// fails.
    fn codegen_owned_let(&mut self, name: &str, value: &Expr, release: &'static str, body: &Stmt) -> Result<()> {
        let p = self.codegen_expr(value)?;
        let is_null = self.icmp(IP::LLVMIntEQ, p, self.null_ptr());
        self.fail_with_reporter(is_null, names::ERROR_OUT_OF_MEMORY, &[]);
        self.f.heap_allocs.push(LiveResource::new(p, release));
        self.push_sym(name, p);
        let r = self.codegen_stmt(body);
        self.pop_sym(name);
        self.f.heap_allocs.pop();
        r?;
        let uc = self.f.user_context;
        self.call_extern(release, self.t_void(), &[uc, p]);
        Ok(())
    }

    /// The value `v` of a let, passed through an empty inline-asm copy
    /// when the let is a 32-bit integer computed (not read) at the top
    /// of the pipeline's body function, outside every loop: there the
    /// lets are the Funcs' bounds, chains of min/max over one another,
    /// and LLVM's scalar evolution would otherwise rebuild each loop's
    /// bounds and addresses as one expression over all of them. Loop
    /// strength reduction then re-expands those expressions at 64 bits:
    /// in local_laplacian it took ~0.14 s on six small loops of this
    /// function (its optimization and machine code cost 2.8 G
    /// instructions before, 1.9 G after; the module's 10.1 G -> 9.3 G).
    /// Closures and outlined loops read their lets from memory, which
    /// hides them already. The copy is free at run time (a register).
    fn hide_root_let(&mut self, value: &Expr, v: Val) -> Val {
        let t = value.ty();
        let computed = !matches!(
            value.node(),
            ExprNode::Variable { .. }
                | ExprNode::IntImm(_)
                | ExprNode::UIntImm(_)
                | ExprNode::Load { .. }
                | ExprNode::Call { .. }
        );
        if self.f.is_pipeline_body && self.f.loop_depth == 0 && computed && t.is_scalar() && t.is_int_or_uint() && t.bits == 32 {
            self.opaque_copy(v)
        } else {
            v
        }
    }

    /// The counter `i` of a serial loop as its body sees it: through an
    /// empty inline-asm copy when the body holds another loop. Scalar
    /// evolution would otherwise fold the outer counter into every inner
    /// address (a row's base is `{start,+,stride}` of the outer loop), and
    /// loop strength reduction weighs each inner use again for the outer
    /// loop: in the blur whose blur_x is computed per row of a strip, IV
    /// users and LSR were a quarter of the closure's machine code. Inner
    /// loops keep their counters visible, so their addressing is reduced
    /// as before; an outer iteration pays at most a multiply for its row
    /// base, once per inner loop run.
    fn hide_outer_loop_counter(&self, i: Val, body: &Stmt) -> Val {
        if ferrohalide_core::ir::visit::contains_loop(body) {
            self.opaque_copy(i)
        } else {
            i
        }
    }

    fn codegen_serial_for(
        &mut self,
        name: &str,
        min: &Expr,
        extent: &Expr,
        body: &Stmt,
    ) -> Result<()> {
        let lo = self.codegen_expr(min)?;
        let ext = self.codegen_expr(extent)?;
        let ext = self.int_resize(ext, self.type_of(lo), true);
        // Loop counters do not overflow (Halide's rule), which lets LLVM
        // widen them and the indices derived from them to 64 bits.
        let hi = self.add_nsw(lo, ext);
        let pre = self.current_block();
        let loop_bb = self.new_block(&format!("{name}.loop"));
        let after = self.new_block(&format!("{name}.end"));
        let enter = self.icmp(IP::LLVMIntSGT, ext, self.cint(self.type_of(ext), 0));
        self.cond_br(enter, loop_bb, after);
        self.position(loop_bb);
        let ty = self.type_of(lo);
        let i = self.phi(ty, &[(lo, pre)]);
        self.push_sym(name, self.hide_outer_loop_counter(i, body));
        self.f.loop_depth += 1;
        let r = self.codegen_stmt(body);
        self.f.loop_depth -= 1;
        self.pop_sym(name);
        r?;
        let next = self.add_nsw(i, self.cint(ty, 1));
        let end_bb = self.current_block();
        self.add_incoming(i, next, end_bb);
        let more = self.icmp(IP::LLVMIntNE, next, hi);
        self.cond_br(more, loop_bb, after);
        self.position(after);
        Ok(())
    }

    fn codegen_store(
        &mut self,
        name: &str,
        value: &Expr,
        index: &Expr,
        predicate: &Expr,
    ) -> Result<()> {
        let t = value.ty();
        let base = self.sym(name)?;
        let tag = self.buffer_tbaa(name);
        let elem_t = t.element_of();
        let elem = self.mem_scalar_ty(elem_t);
        let align = self.elem_align(elem_t);
        let lanes = t.lanes as u32;
        let always = predicate.is_true() || predicate.is_const_value(1);
        let value = super::overlapping_loads::share_overlapping_loads(value, |t| {
            self.has_cheap_two_source_permute(t)
        });
        let v = self.codegen_expr(&value)?;
        let v = self.to_mem(v, t);
        if lanes == 1 {
            if always {
                let p = self.element_pointer(elem, base, index)?;
                let s = self.store(v, p, align);
                self.set_tbaa(s, tag);
                return Ok(());
            }
            let idx = self.codegen_index(index)?;
            let pred = self.codegen_expr(predicate)?;
            let do_store = self.new_block("pred_store");
            let after = self.new_block("pred_store_done");
            self.cond_br(pred, do_store, after);
            self.position(do_store);
            let p = self.gep(elem, base, idx);
            let s = self.store(v, p, align);
            self.set_tbaa(s, tag);
            self.br(after);
            self.position(after);
            return Ok(());
        }
        let mask = if always {
            None
        } else {
            let m = self.codegen_expr(predicate)?;
            Some(self.match_lanes(m, lanes))
        };
        if let ExprNode::Ramp {
            base: rb,
            stride,
            lanes: rl,
        } = index.node()
        {
            if rb.ty().is_scalar() && *rl as u32 == lanes {
                if let Some(s) = stride.as_int_const() {
                    if s == 1 || s == -1 {
                        let rev: Vec<i32> = (0..lanes as i32).rev().collect();
                        let (p, v, mask) = if s == 1 {
                            (self.element_pointer(elem, base, rb)?, v, mask)
                        } else {
                            let b = self.codegen_index(rb)?;
                            let off = self.cint(self.type_of(b), (lanes - 1) as u64);
                            let first = self.sub(b, off);
                            (
                                self.gep(elem, base, first),
                                self.shuffle1(v, &rev),
                                mask.map(|m| self.shuffle1(m, &rev)),
                            )
                        };
                        match mask {
                            None => {
                                let s = self.store(v, p, align);
                                self.set_tbaa(s, tag);
                            }
                            Some(m) => self.masked_store(v, p, align, m, tag)?,
                        }
                        return Ok(());
                    }
                }
            }
        }
        let idx = self.codegen_expr(index)?;
        let Some(m) = mask else {
            self.scalar_scatter(v, elem, base, idx, lanes, align, tag);
            return Ok(());
        };
        let ptrs = self.gep(elem, base, idx);
        let ptrs = self.match_lanes(ptrs, lanes);
        for c in self.lane_chunks(ptrs, m, lanes) {
            let part = if c.padded == lanes { v } else { self.shuffle1(v, &c.sel) };
            self.masked_scatter(part, c.ptrs, align, c.mask, tag)?;
        }
        Ok(())
    }

    fn codegen_allocate(
        &mut self,
        name: &str,
        ty: Type,
        memory_type: MemoryType,
        extents: &[Expr],
        condition: &Expr,
        body: &Stmt,
    ) -> Result<()> {
        let elem_bytes = (ty.bytes() as u64) * ty.lanes as u64;
        let max = if self.target.max_buffer_size > DEFAULT_MAX_BUFFER_SIZE {
            "2^63 - 1"
        } else {
            "2^31 - 1"
        };
        let placed = placement(name, ty, memory_type, extents, self.target.max_buffer_size, max)?;
        if let Placement::Stack(bytes) = placed {
            let at = unsafe { inkwell::llvm_sys::core::LLVMArrayType2(self.t_i8(), bytes) };
            let p = self.entry_alloca(at, 64);
            self.push_sym(name, p);
            let r = self.codegen_stmt(body);
            self.pop_sym(name);
            return r;
        }
        let always = condition.is_true() || condition.is_const_value(1);
        let cond = if always {
            None
        } else {
            Some(self.codegen_expr(condition)?)
        };
        let size = self.checked_allocation_size(name, elem_bytes, extents, cond)?;
        let size = self.add(size, self.i64c(ALLOCATION_PADDING as i64));
        let size = match cond {
            None => size,
            Some(c) => self.select(c, size, self.i64c(0)),
        };
        let uc = self.f.user_context;
        // halide_malloc takes a size_t; the size was checked against the
        // target's maximum buffer size, which fits a 32-bit size_t.
        let size = self.int_resize(size, self.t_int(self.ptr_bytes * 8), false);
        let p = self.call_extern(names::MALLOC, self.t_ptr(), &[uc, size]);
        let is_null = self.icmp(IP::LLVMIntEQ, p, self.null_ptr());
        self.fail_with_reporter(is_null, names::ERROR_OUT_OF_MEMORY, &[]);
        self.f.heap_allocs.push(LiveResource::new(p, names::FREE));
        self.push_sym(name, p);
        let r = self.codegen_stmt(body);
        self.pop_sym(name);
        self.f.heap_allocs.pop();
        r?;
        self.call_extern(names::FREE, self.t_void(), &[uc, p]);
        Ok(())
    }
}
