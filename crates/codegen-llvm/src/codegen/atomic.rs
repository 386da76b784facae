//! Atomic updates: the stores inside an `Atomic` node with no mutex (the
//! contract in `lower/mod.rs`). Each store is made atomic by itself, lane
//! by lane for vectors (lanes may name the same element; each lane's update
//! then sees the previous lane's):
//!
//! - a value that does not read the stored buffer: an atomic store;
//! - `f[i] op y` with `y` not reading `f` and `op` one the hardware
//!   updates in place (integer + - min max & | ^, float + -, bool && ||):
//!   an `atomicrmw` of `y`;
//! - anything else: a compare-and-swap loop that loads the element,
//!   computes the value from that old value (the reads of `f[i]` in the
//!   value are replaced by it), and stores it only if the element still
//!   holds the old value, otherwise retries from what it found.
//!
//! An `Atomic` with a mutex only runs its body: its lock and unlock are
//! calls in the body (`lower/add_atomic_mutex.rs`), its stores are plain.

use ferrohalide_core::ir::equality::equal;
use ferrohalide_core::ir::visit::{for_each_expr, mutate_expr_children};
use ferrohalide_core::ir::{BinOp, Expr, ExprNode, Intrinsic, Mutator, Stmt, Type};
use ferrohalide_core::Result;
use inkwell::llvm_sys::core::{
    LLVMBuildAtomicCmpXchg, LLVMBuildAtomicRMW, LLVMBuildExtractValue, LLVMBuildStore,
    LLVMSetAlignment, LLVMSetOrdering,
};
use inkwell::llvm_sys::{LLVMAtomicOrdering, LLVMAtomicRMWBinOp as Rmw};

use super::ops::{Op, NONAME};
use super::{CodeGen, Val};

/// Halide uses monotonic (relaxed) ordering: each element's updates are
/// totally ordered, and nothing else is ordered by them.
const ORDERING: LLVMAtomicOrdering = LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic;

/// The name the old value of the element takes inside a CAS loop.
fn old_value_name(buffer: &str) -> String {
    format!("{buffer}.atomic_old")
}

/// Does `e` read buffer `name` anywhere?
fn reads(e: &Expr, name: &str) -> bool {
    let mut found = false;
    for_each_expr(e, &mut |x| {
        if let ExprNode::Load { name: n, .. } = x.node() {
            found |= n == name;
        }
    });
    found
}

/// Is `e` a load of exactly the stored element?
fn is_old_value(e: &Expr, name: &str, index: &Expr) -> bool {
    matches!(e.node(), ExprNode::Load { name: n, index: i, predicate }
        if n == name && equal(i, index) && (predicate.is_true() || predicate.is_const_value(1)))
}

/// Replaces the loads of the stored element by the old-value variable.
struct UseOldValue<'a> {
    name: &'a str,
    index: &'a Expr,
}

impl Mutator for UseOldValue<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if is_old_value(e, self.name, self.index) {
            return Expr::var(e.ty(), old_value_name(self.name));
        }
        mutate_expr_children(self, e)
    }
}

/// `value` as `f[i] op y`, if `op` has an `atomicrmw` form for `t`.
fn rmw_form<'e>(value: &'e Expr, name: &str, index: &Expr, t: Type) -> Option<(Rmw, &'e Expr)> {
    let (op, a, b) = match value.node() {
        ExprNode::Binary { op, a, b } => (Some(*op), a, b),
        ExprNode::Call { args, .. } if args.len() == 2 => {
            let op = match () {
                _ if value.as_intrinsic(Intrinsic::BitwiseAnd).is_some() => Rmw::LLVMAtomicRMWBinOpAnd,
                _ if value.as_intrinsic(Intrinsic::BitwiseOr).is_some() => Rmw::LLVMAtomicRMWBinOpOr,
                _ if value.as_intrinsic(Intrinsic::BitwiseXor).is_some() => Rmw::LLVMAtomicRMWBinOpXor,
                _ => return None,
            };
            if !t.is_int_or_uint() || t.is_bool() {
                return None;
            }
            return pick_operand(&args[0], &args[1], name, index, true).map(|y| (op, y));
        }
        _ => (None, value, value),
    };
    let op = op?;
    let int = t.is_int_or_uint() && !t.is_bool();
    let (rmw, commutative) = match op {
        BinOp::Add if int => (Rmw::LLVMAtomicRMWBinOpAdd, true),
        BinOp::Add if t.is_float() => (Rmw::LLVMAtomicRMWBinOpFAdd, true),
        BinOp::Sub if int => (Rmw::LLVMAtomicRMWBinOpSub, false),
        BinOp::Sub if t.is_float() => (Rmw::LLVMAtomicRMWBinOpFSub, false),
        BinOp::Min if t.is_int() => (Rmw::LLVMAtomicRMWBinOpMin, true),
        BinOp::Max if t.is_int() => (Rmw::LLVMAtomicRMWBinOpMax, true),
        BinOp::Min if int => (Rmw::LLVMAtomicRMWBinOpUMin, true),
        BinOp::Max if int => (Rmw::LLVMAtomicRMWBinOpUMax, true),
        BinOp::And if t.is_bool() => (Rmw::LLVMAtomicRMWBinOpAnd, true),
        BinOp::Or if t.is_bool() => (Rmw::LLVMAtomicRMWBinOpOr, true),
        _ => return None,
    };
    pick_operand(a, b, name, index, commutative).map(|y| (rmw, y))
}

/// Of `a op b`, the operand other than the stored element's old value.
fn pick_operand<'e>(
    a: &'e Expr,
    b: &'e Expr,
    name: &str,
    index: &Expr,
    commutative: bool,
) -> Option<&'e Expr> {
    if is_old_value(a, name, index) && !reads(b, name) {
        Some(b)
    } else if commutative && is_old_value(b, name, index) && !reads(a, name) {
        Some(a)
    } else {
        None
    }
}

impl CodeGen {
    pub(crate) fn codegen_atomic(&mut self, mutex: &str, body: &Stmt) -> Result<()> {
        if !mutex.is_empty() {
            return self.codegen_stmt(body);
        }
        let saved = std::mem::replace(&mut self.atomic_stores, true);
        let r = self.codegen_stmt(body);
        self.atomic_stores = saved;
        r
    }

    /// A store inside an `Atomic` (see the module comment).
    pub(crate) fn codegen_atomic_store(
        &mut self,
        name: &str,
        value: &Expr,
        index: &Expr,
        predicate: &Expr,
    ) -> Result<()> {
        let t = value.ty();
        let et = t.element_of();
        let lanes = t.lanes as u32;
        let base = self.sym(name)?;
        let elem = self.mem_scalar_ty(et);
        let always = predicate.is_true() || predicate.is_const_value(1);
        let mask = if always {
            None
        } else {
            let m = self.codegen_expr(predicate)?;
            Some(self.match_lanes(m, lanes))
        };
        let idx = self.codegen_expr(index)?;
        let idx = self.match_lanes(idx, lanes);
        // What is computed once, before any lane: the stored value, or the
        // operand of a read-modify-write.
        enum Plan {
            Store(Val),
            Rmw(Rmw, Val),
            Cas(Expr),
        }
        let plan = if !reads(value, name) {
            let v = self.codegen_expr(value)?;
            let v = self.to_mem(v, t);
            Plan::Store(self.match_lanes(v, lanes))
        } else if let Some((op, y)) = rmw_form(value, name, index, et) {
            let v = self.codegen_expr(y)?;
            let v = self.to_mem(v, y.ty());
            Plan::Rmw(op, self.match_lanes(v, lanes))
        } else {
            Plan::Cas(UseOldValue { name, index }.mutate_expr(value))
        };
        for lane in 0..lanes {
            let pick = |cg: &Self, v: Val| if lanes > 1 { cg.extract(v, lane) } else { v };
            let after = match mask {
                None => None,
                Some(m) => {
                    let on = pick(self, m);
                    let go = self.new_block("atomic_store");
                    let after = self.new_block("atomic_store_done");
                    self.cond_br(on, go, after);
                    self.position(go);
                    Some(after)
                }
            };
            let ptr = self.gep(elem, base, pick(self, idx));
            let align = self.elem_align(et);
            match &plan {
                Plan::Store(v) => unsafe {
                    let st = LLVMBuildStore(self.b, pick(self, *v), ptr);
                    LLVMSetAlignment(st, align);
                    LLVMSetOrdering(st, ORDERING);
                },
                Plan::Rmw(op, v) => unsafe {
                    LLVMBuildAtomicRMW(self.b, *op, ptr, pick(self, *v), ORDERING, 0);
                },
                Plan::Cas(value) => {
                    self.cas_loop(ptr, et, name, |cg, old| {
                        let old = if lanes > 1 { cg.splat(old, lanes) } else { old };
                        cg.push_sym(&old_value_name(name), old);
                        let v = cg.codegen_expr(value);
                        cg.pop_sym(&old_value_name(name));
                        let v = cg.match_lanes(v?, lanes);
                        Ok(pick(cg, v))
                    })?;
                }
            }
            if let Some(after) = after {
                self.br(after);
                self.position(after);
            }
        }
        Ok(())
    }

    /// `*ptr = compute(*ptr)` as a compare-and-swap loop on an element of
    /// type `et`. `compute` gets and returns register values; it may add
    /// blocks. Floats are exchanged as integers of their width.
    fn cas_loop(
        &mut self,
        ptr: Val,
        et: Type,
        buffer: &str,
        mut compute: impl FnMut(&mut Self, Val) -> Result<Val>,
    ) -> Result<()> {
        let mem = self.mem_scalar_ty(et);
        let bits = if et.is_bool() { 8 } else { et.bits as u32 };
        let int = self.t_int(bits);
        let align = self.elem_align(et);
        let orig = self.load(int, ptr, align);
        unsafe { LLVMSetOrdering(orig, ORDERING) };
        let entry = self.current_block();
        let retry = self.new_block(&format!("{buffer}.casloop"));
        self.br(retry);
        self.position(retry);
        let expected = self.phi(int, &[(orig, entry)]);
        let bitcast = |cg: &Self, v: Val, to| {
            if cg.type_of(v) == to {
                v
            } else {
                cg.cast(Op::LLVMBitCast, v, to)
            }
        };
        let old = self.from_mem(bitcast(self, expected, mem), et);
        let new = compute(self, old)?;
        let new = bitcast(self, self.to_mem(new, et), int);
        let (found, ok) = unsafe {
            let pair = LLVMBuildAtomicCmpXchg(self.b, ptr, expected, new, ORDERING, ORDERING, 0);
            (
                LLVMBuildExtractValue(self.b, pair, 0, NONAME),
                LLVMBuildExtractValue(self.b, pair, 1, NONAME),
            )
        };
        let end = self.current_block();
        self.add_incoming(expected, found, end);
        let done = self.new_block(&format!("{buffer}.casloop_done"));
        self.cond_br(ok, done, retry);
        self.position(done);
        Ok(())
    }
}
