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
use ferrohalide_core::ir::visit::{expr_loads_from, mutate_expr_children};
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
    expr_loads_from(e, &|n| n == name)
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

/// An operator with an `atomicrmw` form: a binary operator, or a bitwise
/// intrinsic of two arguments.
#[derive(Clone, Copy, PartialEq)]
enum RmwOp {
    Bin(BinOp),
    Bits(Intrinsic),
}

fn rmw_op(e: &Expr) -> Option<(RmwOp, &Expr, &Expr)> {
    match e.node() {
        ExprNode::Binary { op, a, b } => Some((RmwOp::Bin(*op), a, b)),
        _ => [
            Intrinsic::BitwiseAnd,
            Intrinsic::BitwiseOr,
            Intrinsic::BitwiseXor,
        ]
        .into_iter()
        .find_map(|i| match e.as_intrinsic(i) {
            Some([a, b]) => Some((RmwOp::Bits(i), a, b)),
            _ => None,
        }),
    }
}

/// The operands of a chain of `op` rooted at `e`, left to right.
fn chain_operands<'e>(e: &'e Expr, op: RmwOp, out: &mut Vec<&'e Expr>) {
    match rmw_op(e) {
        Some((o, a, b)) if o == op => {
            chain_operands(a, op, out);
            chain_operands(b, op, out);
        }
        _ => out.push(e),
    }
}

/// `value` as `f[i] op y` (`y` an expression that does not read `f`), if
/// `op` has an `atomicrmw` form for the element type `t`. For integers the
/// operands of a chain of one exactly associative and commutative operator
/// may come in any order (`(f[i] + a) + b` is `f[i] + (a + b)`); a float
/// update must be `f[i] op y` itself, as reassociating would round
/// differently.
fn rmw_form(value: &Expr, name: &str, index: &Expr, t: Type) -> Option<(Rmw, Expr)> {
    let (op, a, b) = rmw_op(value)?;
    let int = t.is_int_or_uint() && !t.is_bool();
    let (rmw, reassociates) = match op {
        RmwOp::Bin(BinOp::Add) if int => (Rmw::LLVMAtomicRMWBinOpAdd, true),
        RmwOp::Bin(BinOp::Add) if t.is_float() => (Rmw::LLVMAtomicRMWBinOpFAdd, false),
        RmwOp::Bin(BinOp::Sub) if int => (Rmw::LLVMAtomicRMWBinOpSub, false),
        RmwOp::Bin(BinOp::Sub) if t.is_float() => (Rmw::LLVMAtomicRMWBinOpFSub, false),
        RmwOp::Bin(BinOp::Min) if t.is_int() => (Rmw::LLVMAtomicRMWBinOpMin, true),
        RmwOp::Bin(BinOp::Max) if t.is_int() => (Rmw::LLVMAtomicRMWBinOpMax, true),
        RmwOp::Bin(BinOp::Min) if int => (Rmw::LLVMAtomicRMWBinOpUMin, true),
        RmwOp::Bin(BinOp::Max) if int => (Rmw::LLVMAtomicRMWBinOpUMax, true),
        RmwOp::Bin(BinOp::And) if t.is_bool() => (Rmw::LLVMAtomicRMWBinOpAnd, true),
        RmwOp::Bin(BinOp::Or) if t.is_bool() => (Rmw::LLVMAtomicRMWBinOpOr, true),
        RmwOp::Bits(Intrinsic::BitwiseAnd) if int => (Rmw::LLVMAtomicRMWBinOpAnd, true),
        RmwOp::Bits(Intrinsic::BitwiseOr) if int => (Rmw::LLVMAtomicRMWBinOpOr, true),
        RmwOp::Bits(Intrinsic::BitwiseXor) if int => (Rmw::LLVMAtomicRMWBinOpXor, true),
        _ => return None,
    };
    let operands = if reassociates {
        let mut v = vec![];
        chain_operands(value, op, &mut v);
        v
    } else {
        vec![a, b]
    };
    // Exactly one operand is the old value (the first one, unless the
    // operator commutes), and no other reads the buffer.
    let old = operands.iter().position(|e| is_old_value(e, name, index))?;
    let commutes = !matches!(op, RmwOp::Bin(BinOp::Sub));
    if (old != 0 && !commutes) || operands.len() < 2 {
        return None;
    }
    let rest: Vec<&Expr> = operands
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != old)
        .map(|(_, e)| *e)
        .collect();
    if rest.iter().any(|e| reads(e, name)) {
        return None;
    }
    let combine = |x: Expr, y: Expr| match op {
        RmwOp::Bin(o) => Expr::binary(o, x, y),
        RmwOp::Bits(i) => Expr::intrinsic(x.ty(), i, vec![x, y]),
    };
    let y = rest[1..]
        .iter()
        .fold(rest[0].clone(), |acc, e| combine(acc, (*e).clone()));
    Some((rmw, y))
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
            let v = self.codegen_expr(&y)?;
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
