//! Outlined loops: loops whose code becomes a function of its own.
//!
//! - Parallel loops. The loop body becomes `i32 body(user_context, index,
//!   closure*)`, and the runtime's `ferrohalide_do_par_for` runs it for each
//!   index on the thread pool.
//! - Large serial loop nests (`should_outline`). A loop that is large, or a
//!   quarter of the whole pipeline, but not most of the function it is in,
//!   becomes `i32 f(user_context, 0, closure*)`, called once where the loop
//!   was. LLVM's optimizer and code
//!   generator take time that grows faster than a function's size, and
//!   separate functions compile on separate threads (`module_split`); a call
//!   per execution of a nest of thousands of instructions costs nothing
//!   measurable. They are `noinline`, or LLVM would merge them back.
//!
//! Either way the values the code uses from the enclosing scope (variables,
//! buffer pointers, allocations) are packed into a struct on the caller's
//! stack. A non-zero return makes the enclosing function free its heap
//! allocations and return that code.

use std::collections::BTreeSet;

use ferrohalide_core::fast_hash::FastSet;

use ferrohalide_core::ir::visit::{walk_expr, walk_stmt, Visitor};
use ferrohalide_core::ir::{Expr, ExprNode, ForType, Stmt, StmtNode};
use ferrohalide_core::{Error, Result};

use super::ops::IP;
use super::{CodeGen, FnState, Val};
use crate::runtime_symbols::names;

/// The IR size (`ir_size`) from which a serial loop nest is outlined...
const MIN_OUTLINED_SIZE: usize = 1500;
/// ...or from this fraction of the whole pipeline's code weight, however
/// small: a pipeline that is mostly one function (blur: one parallel loop
/// whose edge gathers are most of the code) could not be split otherwise.
/// Four: no unit much over half the pipeline remains, so two threads can
/// balance; a lower share outlines loops that balance nothing (with every
/// nest of weight 1,000 outlined, the larger apps, already balanced,
/// compiled 9-18% slower).
const PIPELINE_SHARE_TO_OUTLINE: usize = 4;
/// ...if it has at least this code weight, when no serial loop of its
/// function encloses it (it is then called once per call of its function).
/// Small pipelines compile faster split in two too
/// (`module_split::MIN_INSTRUCTIONS_TO_SPLIT`): the blur whose blur_x is
/// stored per strip and computed per x went from 37 to 26 ms when its
/// strip's warm-up rows became a unit of their own.
const MIN_SHARE_OUTLINED_WEIGHT: usize = 200;
/// ...or this much inside another serial loop (called once per iteration
/// of the loops around it: a small row loop outlined would pay a call and
/// a closure per row).
const MIN_NESTED_SHARE_OUTLINED_WEIGHT: usize = 1000;
/// ...unless it is more than this share of its function (outlining it
/// would only move that function).
const MAX_OUTLINED_SHARE: f64 = 0.7;

/// Every name a statement refers to (variables and buffer names).
#[derive(Default)]
struct NameCollector {
    names: BTreeSet<String>,
    seen: FastSet<usize>,
}

impl NameCollector {
    /// Records `name`, copying it only the first time (a loop body names
    /// the same few variables thousands of times).
    fn note(&mut self, name: &str) {
        if !self.names.contains(name) {
            self.names.insert(name.to_string());
        }
    }
}

impl Visitor for NameCollector {
    fn visit_expr(&mut self, e: &Expr) {
        if !self.seen.insert(e.node() as *const ExprNode as usize) {
            return;
        }
        match e.node() {
            ExprNode::Variable { name, .. } | ExprNode::Load { name, .. } => self.note(name),
            _ => {}
        }
        walk_expr(self, e)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        if let StmtNode::Store { name, .. } = s.node() {
            self.note(name);
        }
        walk_stmt(self, s)
    }
}

/// How much code a statement becomes: its nodes, each shared expression
/// once, and the lanes of its gathers.
#[derive(Default)]
struct SizeCounter {
    nodes: usize,
    gather_lanes: usize,
    seen: FastSet<usize>,
}

/// The IR nodes a gather's lane stands for once written out per lane: an
/// extract, an extension, an address, the load and an insert.
const GATHER_NODES_PER_LANE: usize = 5;

impl Visitor for SizeCounter {
    fn visit_expr(&mut self, e: &Expr) {
        if self.seen.insert(e.node() as *const ExprNode as usize) {
            self.nodes += 1;
            if let ExprNode::Load { index, .. } = e.node() {
                if index.ty().is_vector() && !matches!(index.node(), ExprNode::Ramp { .. }) {
                    self.gather_lanes += index.ty().lanes as usize;
                }
            }
            walk_expr(self, e)
        }
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        self.nodes += 1;
        walk_stmt(self, s)
    }
}

impl SizeCounter {
    /// Its nodes, and a gather as the per-lane code it becomes: one node
    /// until after the IR optimizer, blur's edge gathers are most of its
    /// machine code.
    fn weight(&self) -> usize {
        self.nodes + GATHER_NODES_PER_LANE * self.gather_lanes
    }
}

fn measure(s: &Stmt) -> SizeCounter {
    let mut c = SizeCounter::default();
    c.visit_stmt(s);
    c
}

/// Does the serial loop `s` only start parallel loops (no memory access
/// or serial loop of its own outside their bodies, which become closures
/// wherever the loop is)? Such a loop is never outlined, not even from
/// the cold body: it would be a unit of its own (~1 ms of LLVM's fixed
/// costs) holding a call per iteration, and the plan would weigh it by
/// the closures' code (the demo's loop over channels around its parallel
/// rows put the rows' closure in one partition with the checks).
pub(crate) fn only_starts_parallel_loops(s: &Stmt) -> bool {
    let StmtNode::For { body, .. } = s.node() else {
        return false;
    };
    struct Work {
        found: bool,
    }
    impl Visitor for Work {
        fn visit_expr(&mut self, e: &Expr) {
            if matches!(e.node(), ExprNode::Load { .. }) {
                self.found = true;
            } else if !self.found {
                walk_expr(self, e)
            }
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::For { min, extent, for_type: ForType::Parallel | ForType::Fork, .. } => {
                    self.visit_expr(min);
                    self.visit_expr(extent);
                }
                StmtNode::For { .. } | StmtNode::Store { .. } => self.found = true,
                _ if !self.found => walk_stmt(self, s),
                _ => {}
            }
        }
    }
    let mut w = Work { found: false };
    w.visit_stmt(body);
    !w.found && ferrohalide_core::ir::visit::contains_loop(body)
}

/// The number of nodes in a statement, each shared expression once.
pub(crate) fn ir_size(s: &Stmt) -> usize {
    measure(s).nodes
}

/// A statement's `ir_size` and about how much work it is for LLVM (see
/// `SizeCounter::weight`), in one walk.
pub(crate) fn size_and_code_weight(s: &Stmt) -> (usize, usize) {
    let c = measure(s);
    (c.nodes, c.weight())
}

impl CodeGen {
    /// If the serial loop `s` is compiled as a function of its own (see the
    /// module's comment), its IR size.
    pub(crate) fn should_outline(&self, s: &Stmt) -> Option<usize> {
        let min = if crate::jit::stress_codegen() {
            1
        } else {
            MIN_OUTLINED_SIZE
        };
        let whole = self.f.size;
        let m = measure(s);
        let weight = m.weight();
        let min_share_weight = if self.f.loop_depth == 0 {
            MIN_SHARE_OUTLINED_WEIGHT
        } else {
            MIN_NESTED_SHARE_OUTLINED_WEIGHT
        };
        let large_share = self.pipeline_weight > 0
            && weight >= min_share_weight
            && weight * PIPELINE_SHARE_TO_OUTLINE >= self.pipeline_weight;
        let large = m.nodes >= min || large_share;
        (large && (m.nodes as f64) <= whole as f64 * MAX_OUTLINED_SHARE).then_some(m.nodes)
    }

    /// The serial loop `s` (of IR size `size`) as a call of a function of
    /// its own.
    pub(crate) fn codegen_outlined_loop(&mut self, name: &str, s: &Stmt, size: usize) -> Result<()> {
        let (func, closure) = self.outline("loop", name, s, None, size)?;
        self.add_enum_attribute(func, c"noinline");
        let uc = self.f.user_context;
        let ft = self.t_fn(self.t_i32(), &[self.t_ptr(), self.t_i32(), self.t_ptr()]);
        let code = self.call(func, ft, &[uc, self.i32c(0), closure]);
        self.return_if_failed(code, "loop");
        Ok(())
    }

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
        let (func, closure) = self.outline("par_for", name, body, Some(name), ir_size(body))?;
        let uc = self.f.user_context;
        let code = self.call_extern(
            names::DO_PAR_FOR,
            self.t_i32(),
            &[uc, func, lo, ext, closure],
        );
        self.return_if_failed(code, "par_for");
        Ok(())
    }

    /// The fork of an async producer: iterations 0 (the producer) and 1
    /// (its consumer) of `body`, run at once by `ferrohalide_do_fork`.
    pub(crate) fn codegen_fork(&mut self, name: &str, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
        if min.as_int_const() != Some(0) || extent.as_int_const() != Some(2) {
            return Err(Error::internal(format!("the fork loop {name} does not run over [0, 2)")));
        }
        let (func, closure) = self.outline("fork", name, body, Some(name), ir_size(body))?;
        let uc = self.f.user_context;
        let code = self.call_extern(names::DO_FORK, self.t_i32(), &[uc, func, closure]);
        self.return_if_failed(code, "fork");
        Ok(())
    }

    /// If `code` is not zero, return it (after freeing what this function
    /// holds).
    fn return_if_failed(&mut self, code: Val, what: &str) {
        let ok = self.new_block(&format!("{what}_ok"));
        let fail = self.new_block(&format!("{what}_failed"));
        let failed = self.icmp(IP::LLVMIntNE, code, self.i32c(0));
        self.cond_br(failed, fail, ok);
        self.position(fail);
        self.return_error(code);
        self.position(ok);
    }

    /// Generate `s` as the function `<pipeline>.<kind>.<name>.<n>`, taking
    /// `(user_context, i32 index, closure*)` (the index is bound to `index`,
    /// when given), and fill the closure it needs, here. `size`: `s`'s IR
    /// size. Returns the function and the closure.
    fn outline(
        &mut self,
        kind: &str,
        name: &str,
        s: &Stmt,
        index: Option<&str>,
        size: usize,
    ) -> Result<(Val, Val)> {
        // What the code needs from here.
        let mut nc = NameCollector::default();
        nc.visit_stmt(s);
        let captured: Vec<(String, Val)> = nc
            .names
            .into_iter()
            .filter(|n| Some(n.as_str()) != index)
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

        // The function.
        self.closure_counter += 1;
        let fname = format!(
            "{}.{kind}.{name}.{}",
            self.pipeline_name, self.closure_counter
        );
        let ft = self.t_fn(self.t_i32(), &[self.t_ptr(), self.t_i32(), self.t_ptr()]);
        let func = self.add_function(&fname, ft, true);
        let saved_block = self.current_block();
        let entry = unsafe {
            inkwell::llvm_sys::core::LLVMAppendBasicBlockInContext(self.c, func, c"entry".as_ptr())
        };
        let new_state = FnState::new(func, entry, self.param(func, 0), size);
        let saved = std::mem::replace(&mut self.f, new_state);
        self.position(entry);
        // Unpack the closure; the entry block holds allocas and loads, then
        // jumps to the code.
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
        if let Some(index) = index {
            let idx = self.param(func, 1);
            self.push_sym(index, idx);
        }
        let body_bb = self.new_block("body");
        self.br(body_bb);
        self.position(body_bb);
        let r = self.codegen_stmt(s);
        if r.is_ok() {
            self.ret(self.i32c(0));
        }
        self.f = saved;
        self.position(saved_block);
        r?;
        Ok((func, closure))
    }
}
