//! Structural equality and hashing of expressions (Halide's `equal` and
//! `IRDeepCompare`). Two Exprs are equal if they are the same tree,
//! regardless of sharing. Func/Buffer links on calls compare by name.

use std::hash::{Hash, Hasher};

use super::expr::{CallKind, Expr, ExprNode};

pub fn equal(a: &Expr, b: &Expr) -> bool {
    if a.same_as(b) {
        return true;
    }
    if a.ty() != b.ty() {
        return false;
    }
    use ExprNode::*;
    match (a.node(), b.node()) {
        (IntImm(x), IntImm(y)) => x == y,
        (UIntImm(x), UIntImm(y)) => x == y,
        (FloatImm(x), FloatImm(y)) => x.to_bits() == y.to_bits(),
        (StringImm(x), StringImm(y)) => x == y,
        (Cast(x), Cast(y)) | (Reinterpret(x), Reinterpret(y)) | (Not(x), Not(y)) => equal(x, y),
        (Variable { name: x, .. }, Variable { name: y, .. }) => x == y,
        (Binary { op: o1, a: a1, b: b1 }, Binary { op: o2, a: a2, b: b2 }) => o1 == o2 && equal(a1, a2) && equal(b1, b2),
        (Select { cond: c1, t: t1, f: f1 }, Select { cond: c2, t: t2, f: f2 }) => {
            equal(c1, c2) && equal(t1, t2) && equal(f1, f2)
        }
        (Load { name: n1, index: i1, predicate: p1 }, Load { name: n2, index: i2, predicate: p2 }) => {
            n1 == n2 && equal(i1, i2) && equal(p1, p2)
        }
        (Ramp { base: b1, stride: s1, lanes: l1 }, Ramp { base: b2, stride: s2, lanes: l2 }) => {
            l1 == l2 && equal(b1, b2) && equal(s1, s2)
        }
        (Broadcast { value: v1, lanes: l1 }, Broadcast { value: v2, lanes: l2 }) => l1 == l2 && equal(v1, v2),
        (Let { name: n1, value: v1, body: b1 }, Let { name: n2, value: v2, body: b2 }) => {
            n1 == n2 && equal(v1, v2) && equal(b1, b2)
        }
        (Call { name: n1, args: a1, kind: k1 }, Call { name: n2, args: a2, kind: k2 }) => {
            n1 == n2 && same_call_kind(k1, k2) && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| equal(x, y))
        }
        (Shuffle { vectors: v1, indices: i1 }, Shuffle { vectors: v2, indices: i2 }) => {
            i1 == i2 && v1.len() == v2.len() && v1.iter().zip(v2).all(|(x, y)| equal(x, y))
        }
        (VectorReduce { op: o1, value: v1 }, VectorReduce { op: o2, value: v2 }) => o1 == o2 && equal(v1, v2),
        _ => false,
    }
}

fn same_call_kind(a: &CallKind, b: &CallKind) -> bool {
    match (a, b) {
        (CallKind::Intrinsic(x), CallKind::Intrinsic(y)) => x == y,
        (CallKind::PureExtern, CallKind::PureExtern) | (CallKind::Extern, CallKind::Extern) => true,
        (CallKind::Halide { value_index: x, .. }, CallKind::Halide { value_index: y, .. }) => x == y,
        (CallKind::Image { .. }, CallKind::Image { .. }) => true,
        _ => false,
    }
}

/// A structural hash consistent with `equal`.
pub fn hash_expr<H: Hasher>(e: &Expr, h: &mut H) {
    e.ty().hash(h);
    std::mem::discriminant(e.node()).hash(h);
    use ExprNode::*;
    match e.node() {
        IntImm(x) => x.hash(h),
        UIntImm(x) => x.hash(h),
        FloatImm(x) => x.to_bits().hash(h),
        StringImm(s) => s.hash(h),
        Cast(x) | Reinterpret(x) | Not(x) => hash_expr(x, h),
        Variable { name, .. } => name.hash(h),
        Binary { op, a, b } => {
            op.hash(h);
            hash_expr(a, h);
            hash_expr(b, h);
        }
        Select { cond, t, f } => {
            hash_expr(cond, h);
            hash_expr(t, h);
            hash_expr(f, h);
        }
        Load { name, index, predicate } => {
            name.hash(h);
            hash_expr(index, h);
            hash_expr(predicate, h);
        }
        Ramp { base, stride, lanes } => {
            lanes.hash(h);
            hash_expr(base, h);
            hash_expr(stride, h);
        }
        Broadcast { value, lanes } => {
            lanes.hash(h);
            hash_expr(value, h);
        }
        Let { name, value, body } => {
            name.hash(h);
            hash_expr(value, h);
            hash_expr(body, h);
        }
        Call { name, args, .. } => {
            name.hash(h);
            args.iter().for_each(|a| hash_expr(a, h));
        }
        Shuffle { vectors, indices } => {
            indices.hash(h);
            vectors.iter().for_each(|a| hash_expr(a, h));
        }
        VectorReduce { op, value } => {
            op.hash(h);
            hash_expr(value, h);
        }
    }
}

/// Wrapper that makes an Expr usable as a HashMap key by structure.
#[derive(Clone, Debug)]
pub struct ExprKey(pub Expr);

impl PartialEq for ExprKey {
    fn eq(&self, other: &Self) -> bool {
        equal(&self.0, &other.0)
    }
}
impl Eq for ExprKey {}
impl Hash for ExprKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_expr(&self.0, state)
    }
}
