//! Parallel loops. The loop body becomes its own function
//! `i32 body(user_context, index, closure*)`; the values it uses from the
//! enclosing scope (variables, buffer pointers, allocations) are packed
//! into a struct on the caller's stack, and the runtime's
//! `ferrohalide_do_par_for` runs the body for each index on the thread pool.
//! A non-zero return from any iteration makes the enclosing function free
//! its heap allocations and return that code.

use std::collections::{BTreeSet, HashSet};

use ferrohalide_core::ir::visit::{walk_expr, walk_stmt, Visitor};
use ferrohalide_core::ir::{Expr, ExprNode, Stmt, StmtNode};
use ferrohalide_core::Result;

use super::ops::IP;
use super::{CodeGen, FnState};
use crate::runtime_symbols::names;

/// Every name a statement refers to (variables and buffer names).
#[derive(Default)]
struct NameCollector {
    names: BTreeSet<String>,
    seen: HashSet<usize>,
}

impl Visitor for NameCollector {
    fn visit_expr(&mut self, e: &Expr) {
        if !self.seen.insert(e.node() as *const ExprNode as usize) {
            return;
        }
        match e.node() {
            ExprNode::Variable { name, .. } => {
                self.names.insert(name.clone());
            }
            ExprNode::Load { name, .. } => {
                self.names.insert(name.clone());
            }
            _ => {}
        }
        walk_expr(self, e)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        if let StmtNode::Store { name, .. } = s.node() {
            self.names.insert(name.clone());
        }
        walk_stmt(self, s)
    }
}

impl CodeGen {
    pub(crate) fn codegen_parallel_for(
        &mut self,
        name: &str,
        min: &Expr,
        extent: &Expr,
        body: &Stmt,
    ) -> Result<()> {
        let lo = self.codegen_expr(min)?;
        let ext = self.codegen_expr(extent)?;
        let lo = self.int_resize(lo, self.t_i32(), true);
        let ext = self.int_resize(ext, self.t_i32(), true);

        // What the body needs from here.
        let mut nc = NameCollector::default();
        nc.visit_stmt(body);
        let captured: Vec<(String, super::Val)> = nc
            .names
            .into_iter()
            .filter(|n| n != name)
            .filter_map(|n| self.sym(&n).ok().map(|v| (n, v)))
            .collect();
        let mut field_tys: Vec<super::Ty> =
            captured.iter().map(|(_, v)| self.type_of(*v)).collect();
        let closure_ty = unsafe {
            inkwell::llvm_sys::core::LLVMStructTypeInContext(
                self.c,
                field_tys.as_mut_ptr(),
                field_tys.len() as u32,
                0,
            )
        };
        let closure = self.entry_alloca(closure_ty, 16);
        for (k, (_, v)) in captured.iter().enumerate() {
            let p = unsafe {
                inkwell::llvm_sys::core::LLVMBuildStructGEP2(
                    self.b,
                    closure_ty,
                    closure,
                    k as u32,
                    super::ops::NONAME,
                )
            };
            self.store(*v, p, 1);
        }

        // The body function.
        self.closure_counter += 1;
        let fname = format!(
            "{}.par_for.{}.{}",
            self.pipeline_name, name, self.closure_counter
        );
        let ft = self.t_fn(self.t_i32(), &[self.t_ptr(), self.t_i32(), self.t_ptr()]);
        let func = self.add_function(&fname, ft, true);
        let saved_block = self.current_block();
        let entry = unsafe {
            inkwell::llvm_sys::core::LLVMAppendBasicBlockInContext(self.c, func, c"entry".as_ptr())
        };
        let new_state = FnState {
            function: func,
            entry_block: entry,
            user_context: self.param(func, 0),
            symbols: Default::default(),
            heap_allocs: Vec::new(),
            message_buffer: None,
        };
        let saved = std::mem::replace(&mut self.f, new_state);
        self.position(entry);
        // Unpack the closure; the entry block holds allocas and loads, then
        // jumps to the body.
        let cl = self.param(func, 2);
        for (k, (n, v)) in captured.iter().enumerate() {
            let p = unsafe {
                inkwell::llvm_sys::core::LLVMBuildStructGEP2(
                    self.b,
                    closure_ty,
                    cl,
                    k as u32,
                    super::ops::NONAME,
                )
            };
            let val = self.load(self.type_of(*v), p, 1);
            self.push_sym(n, val);
        }
        let idx = self.param(func, 1);
        self.push_sym(name, idx);
        let body_bb = self.new_block("body");
        self.br(body_bb);
        self.position(body_bb);
        let r = self.codegen_stmt(body);
        if r.is_ok() {
            self.ret(self.i32c(0));
        }
        self.f = saved;
        self.position(saved_block);
        r?;

        let uc = self.f.user_context;
        let code = self.call_extern(
            names::DO_PAR_FOR,
            self.t_i32(),
            &[uc, func, lo, ext, closure],
        );
        let ok = self.new_block("par_for_ok");
        let fail = self.new_block("par_for_failed");
        let failed = self.icmp(IP::LLVMIntNE, code, self.i32c(0));
        self.cond_br(failed, fail, ok);
        self.position(fail);
        self.return_error(code);
        self.position(ok);
        Ok(())
    }
}
