//! A complete, deterministic byte encoding of a statement: two statements
//! get the same bytes exactly when a backend cannot tell them apart. The
//! persistent compile cache keys machine code by it, so it must leave out
//! nothing code generation reads; the matches below name every field of
//! every node (no `..`), so adding a field to the IR fails to compile here
//! until the encoding covers it.
//!
//! Shared nodes are written once and then referred to by number, so the
//! encoding grows with the size of the DAG, not of the tree it unfolds to.
//! Links that code generation does not follow (a Variable's Parameter or
//! reduction domain) are left out: lowering has already turned what they
//! mean into the statement.

use std::collections::HashMap;

use super::expr::{CallKind, Expr, ExprNode, Range};
use super::stmt::{Stmt, StmtNode};
use super::types::Type;

/// Appends the encoding of statements and expressions to a byte vector.
#[derive(Default)]
pub struct Fingerprint {
    pub bytes: Vec<u8>,
    seen_exprs: HashMap<usize, u32>,
    seen_stmts: HashMap<usize, u32>,
}

// Tags: one byte per node kind, then the node's fields in order.
const BACK_REFERENCE: u8 = 0xff;

impl Fingerprint {
    pub fn new() -> Fingerprint {
        Fingerprint::default()
    }

    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes.extend_from_slice(s.as_bytes());
    }
    /// A value's `Debug` text: complete for the derived `Debug` of plain
    /// enums and structs (operators, intrinsics, memory and loop types).
    pub fn debug(&mut self, v: &dyn std::fmt::Debug) {
        self.str(&format!("{v:?}"));
    }
    pub fn ty(&mut self, t: Type) {
        let Type { code, bits, lanes } = t;
        self.u8(code.as_halide_code());
        self.u8(bits);
        self.u64(lanes as u64);
    }
    fn exprs(&mut self, es: &[Expr]) {
        self.u64(es.len() as u64);
        for e in es {
            self.expr(e);
        }
    }
    fn range(&mut self, r: &Range) {
        let Range { min, extent } = r;
        self.expr(min);
        self.expr(extent);
    }

    pub fn expr(&mut self, e: &Expr) {
        if let Some(&n) = self.seen_exprs.get(&e.id()) {
            self.u8(BACK_REFERENCE);
            self.u64(n as u64);
            return;
        }
        let n = self.seen_exprs.len() as u32;
        self.seen_exprs.insert(e.id(), n);
        self.ty(e.ty());
        match e.node() {
            ExprNode::IntImm(v) => {
                self.u8(0);
                self.u64(*v as u64);
            }
            ExprNode::UIntImm(v) => {
                self.u8(1);
                self.u64(*v);
            }
            ExprNode::FloatImm(v) => {
                self.u8(2);
                self.u64(v.to_bits());
            }
            ExprNode::StringImm(s) => {
                self.u8(3);
                self.str(s);
            }
            ExprNode::Cast(a) => {
                self.u8(4);
                self.expr(a);
            }
            ExprNode::Reinterpret(a) => {
                self.u8(5);
                self.expr(a);
            }
            ExprNode::Variable { name, param: _, rdom: _ } => {
                self.u8(6);
                self.str(name);
            }
            ExprNode::Binary { op, a, b } => {
                self.u8(7);
                self.debug(op);
                self.expr(a);
                self.expr(b);
            }
            ExprNode::Not(a) => {
                self.u8(8);
                self.expr(a);
            }
            ExprNode::Select { cond, t, f } => {
                self.u8(9);
                self.expr(cond);
                self.expr(t);
                self.expr(f);
            }
            ExprNode::Load { name, index, predicate } => {
                self.u8(10);
                self.str(name);
                self.expr(index);
                self.expr(predicate);
            }
            ExprNode::Ramp { base, stride, lanes } => {
                self.u8(11);
                self.expr(base);
                self.expr(stride);
                self.u64(*lanes as u64);
            }
            ExprNode::Broadcast { value, lanes } => {
                self.u8(12);
                self.expr(value);
                self.u64(*lanes as u64);
            }
            ExprNode::Let { name, value, body } => {
                self.u8(13);
                self.str(name);
                self.expr(value);
                self.expr(body);
            }
            ExprNode::Call { name, args, kind } => {
                self.u8(14);
                self.str(name);
                match kind {
                    CallKind::Intrinsic(i) => {
                        self.u8(0);
                        self.debug(i);
                    }
                    CallKind::PureExtern => self.u8(1),
                    CallKind::Extern => self.u8(2),
                    CallKind::Halide { func, value_index } => {
                        self.u8(3);
                        self.u64(func.id() as u64);
                        self.u64(*value_index as u64);
                    }
                    CallKind::Image { buffer, param } => {
                        // Not code a backend compiles (it is flattened to
                        // loads first); what it reads is identified anyway.
                        self.u8(4);
                        self.u64(buffer.as_ref().map_or(0, |b| b.id() as u64));
                        self.str(&param.as_ref().map(|p| p.name()).unwrap_or_default());
                    }
                }
                self.exprs(args);
            }
            ExprNode::Shuffle { vectors, indices } => {
                self.u8(15);
                self.exprs(vectors);
                self.u64(indices.len() as u64);
                for i in indices {
                    self.u64(*i as i64 as u64);
                }
            }
            ExprNode::VectorReduce { op, value } => {
                self.u8(16);
                self.debug(op);
                self.expr(value);
            }
        }
    }

    pub fn stmt(&mut self, s: &Stmt) {
        let id = s.id();
        if let Some(&n) = self.seen_stmts.get(&id) {
            self.u8(BACK_REFERENCE);
            self.u64(n as u64);
            return;
        }
        let n = self.seen_stmts.len() as u32;
        self.seen_stmts.insert(id, n);
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.u8(0);
                self.str(name);
                self.expr(value);
                self.stmt(body);
            }
            StmtNode::AssertStmt { condition, message } => {
                self.u8(1);
                self.expr(condition);
                self.expr(message);
            }
            StmtNode::ProducerConsumer { name, is_producer, body } => {
                self.u8(2);
                self.str(name);
                self.u8(*is_producer as u8);
                self.stmt(body);
            }
            StmtNode::For { name, min, extent, for_type, body } => {
                self.u8(3);
                self.str(name);
                self.expr(min);
                self.expr(extent);
                self.debug(for_type);
                self.stmt(body);
            }
            StmtNode::Store { name, value, index, predicate } => {
                self.u8(4);
                self.str(name);
                self.expr(value);
                self.expr(index);
                self.expr(predicate);
            }
            StmtNode::Provide { name, values, args, predicate } => {
                self.u8(5);
                self.str(name);
                self.exprs(values);
                self.exprs(args);
                self.expr(predicate);
            }
            StmtNode::Allocate { name, ty, memory_type, extents, condition, body } => {
                self.u8(6);
                self.str(name);
                self.ty(*ty);
                self.debug(memory_type);
                self.exprs(extents);
                self.expr(condition);
                self.stmt(body);
            }
            StmtNode::Free { name } => {
                self.u8(7);
                self.str(name);
            }
            StmtNode::Realize { name, types, memory_type, bounds, condition, body } => {
                self.u8(8);
                self.str(name);
                self.u64(types.len() as u64);
                for t in types {
                    self.ty(*t);
                }
                self.debug(memory_type);
                self.u64(bounds.len() as u64);
                for r in bounds {
                    self.range(r);
                }
                self.expr(condition);
                self.stmt(body);
            }
            StmtNode::Block(v) => {
                self.u8(9);
                self.u64(v.len() as u64);
                for s in v {
                    self.stmt(s);
                }
            }
            StmtNode::IfThenElse { condition, then_case, else_case } => {
                self.u8(10);
                self.expr(condition);
                self.stmt(then_case);
                match else_case {
                    Some(e) => {
                        self.u8(1);
                        self.stmt(e);
                    }
                    None => self.u8(0),
                }
            }
            StmtNode::Evaluate(e) => {
                self.u8(11);
                self.expr(e);
            }
            StmtNode::Atomic { producer_name, mutex_name, body } => {
                self.u8(12);
                self.str(producer_name);
                self.str(mutex_name);
                self.stmt(body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ForType;

    fn bytes_of(s: &Stmt) -> Vec<u8> {
        let mut f = Fingerprint::new();
        f.stmt(s);
        f.bytes
    }

    fn store(value: Expr) -> Stmt {
        Stmt::store("out", value, Expr::var(Type::i32(), "x"), Expr::bool_const(true))
    }

    #[test]
    fn the_encoding_is_deterministic() {
        // Sharing is part of the encoding (a different sharing of the same
        // tree only misses the cache); the same statement always encodes alike.
        let x = Expr::var(Type::i32(), "x");
        let shared = Expr::add(x, Expr::i32(1));
        let a = store(Expr::mul(shared.clone(), shared));
        assert_eq!(bytes_of(&a), bytes_of(&a));
    }

    #[test]
    fn every_difference_shows() {
        let x = Expr::var(Type::i32(), "x");
        let base = |t: Type, v: f64, ft: ForType| {
            let value = Expr::add(Expr::float_imm(t, v), Expr::cast(t, x.clone()));
            Stmt::for_loop("x", Expr::i32(0), Expr::i32(8), ft, store(Expr::cast(Type::i32(), value)))
        };
        let a = bytes_of(&base(Type::float(32), 0.5, ForType::Serial));
        assert_ne!(a, bytes_of(&base(Type::float(64), 0.5, ForType::Serial)));
        assert_ne!(a, bytes_of(&base(Type::float(32), 0.25, ForType::Serial)));
        assert_ne!(a, bytes_of(&base(Type::float(32), 0.5, ForType::Parallel)));
        assert_eq!(a, bytes_of(&base(Type::float(32), 0.5, ForType::Serial)));
    }

    #[test]
    fn a_shared_dag_encodes_in_linear_size() {
        let mut e = Expr::var(Type::i32(), "x");
        for _ in 0..64 {
            e = Expr::add(e.clone(), e);
        }
        assert!(bytes_of(&store(e)).len() < 64 * 64);
    }
}
