//! Structural equality and hashing of expressions (Halide's `equal` and
//! `IRDeepCompare`). Two Exprs are equal if they are the same tree,
//! regardless of sharing. Func/Buffer links on calls compare by name.

use std::hash::{Hash, Hasher};

use super::expr::{CallKind, Expr, ExprNode};

pub fn equal(a: &Expr, b: &Expr) -> bool {
    a.same_as(b) || equal_nodes(a, b, &mut equal)
}

/// Do `a` and `b` have the same type, node kind and fields, with their
/// children compared by `children`? `equal` passes itself (a deep
/// comparison); value numbering passes identity (a shallow one).
pub fn equal_nodes(a: &Expr, b: &Expr, children: &mut dyn FnMut(&Expr, &Expr) -> bool) -> bool {
    if a.ty() != b.ty() {
        return false;
    }
    use ExprNode::*;
    let c = children;
    fn all(c: &mut dyn FnMut(&Expr, &Expr) -> bool, xs: &[Expr], ys: &[Expr]) -> bool {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| c(x, y))
    }
    match (a.node(), b.node()) {
        (IntImm(x), IntImm(y)) => x == y,
        (UIntImm(x), UIntImm(y)) => x == y,
        (FloatImm(x), FloatImm(y)) => x.to_bits() == y.to_bits(),
        (StringImm(x), StringImm(y)) => x == y,
        (Cast(x), Cast(y)) | (Reinterpret(x), Reinterpret(y)) | (Not(x), Not(y)) => c(x, y),
        (Variable { name: x, .. }, Variable { name: y, .. }) => x == y,
        (
            Binary {
                op: o1,
                a: a1,
                b: b1,
            },
            Binary {
                op: o2,
                a: a2,
                b: b2,
            },
        ) => o1 == o2 && c(a1, a2) && c(b1, b2),
        (
            Select {
                cond: c1,
                t: t1,
                f: f1,
            },
            Select {
                cond: c2,
                t: t2,
                f: f2,
            },
        ) => c(c1, c2) && c(t1, t2) && c(f1, f2),
        (
            Load {
                name: n1,
                index: i1,
                predicate: p1,
            },
            Load {
                name: n2,
                index: i2,
                predicate: p2,
            },
        ) => n1 == n2 && c(i1, i2) && c(p1, p2),
        (
            Ramp {
                base: b1,
                stride: s1,
                lanes: l1,
            },
            Ramp {
                base: b2,
                stride: s2,
                lanes: l2,
            },
        ) => l1 == l2 && c(b1, b2) && c(s1, s2),
        (
            Broadcast {
                value: v1,
                lanes: l1,
            },
            Broadcast {
                value: v2,
                lanes: l2,
            },
        ) => l1 == l2 && c(v1, v2),
        (
            Let {
                name: n1,
                value: v1,
                body: b1,
            },
            Let {
                name: n2,
                value: v2,
                body: b2,
            },
        ) => n1 == n2 && c(v1, v2) && c(b1, b2),
        (
            Call {
                name: n1,
                args: a1,
                kind: k1,
            },
            Call {
                name: n2,
                args: a2,
                kind: k2,
            },
        ) => n1 == n2 && same_call_kind(k1, k2) && all(c, a1, a2),
        (
            Shuffle {
                vectors: v1,
                indices: i1,
            },
            Shuffle {
                vectors: v2,
                indices: i2,
            },
        ) => i1 == i2 && all(c, v1, v2),
        (VectorReduce { op: o1, value: v1 }, VectorReduce { op: o2, value: v2 }) => {
            o1 == o2 && c(v1, v2)
        }
        _ => false,
    }
}

fn same_call_kind(a: &CallKind, b: &CallKind) -> bool {
    match (a, b) {
        (CallKind::Intrinsic(x), CallKind::Intrinsic(y)) => x == y,
        (CallKind::PureExtern, CallKind::PureExtern) | (CallKind::Extern, CallKind::Extern) => true,
        (CallKind::Halide { value_index: x, .. }, CallKind::Halide { value_index: y, .. }) => {
            x == y
        }
        (CallKind::Image { .. }, CallKind::Image { .. }) => true,
        _ => false,
    }
}

/// A structural hash consistent with `equal`.
pub fn hash_expr<H: Hasher>(e: &Expr, h: &mut H) {
    hash_node(e, h, &mut |c, h| hash_expr(c, h))
}

/// Hash `e`'s type, node kind and fields, and its children with `children`
/// (consistent with `equal_nodes` given a matching child comparison).
pub fn hash_node<H: Hasher>(e: &Expr, h: &mut H, children: &mut dyn FnMut(&Expr, &mut H)) {
    e.ty().hash(h);
    std::mem::discriminant(e.node()).hash(h);
    use ExprNode::*;
    match e.node() {
        IntImm(x) => x.hash(h),
        UIntImm(x) => x.hash(h),
        FloatImm(x) => x.to_bits().hash(h),
        StringImm(s) => s.hash(h),
        Variable { name, .. } => name.hash(h),
        Binary { op, .. } => op.hash(h),
        Load { name, .. } | Let { name, .. } | Call { name, .. } => name.hash(h),
        Ramp { lanes, .. } | Broadcast { lanes, .. } => lanes.hash(h),
        Shuffle { indices, .. } => indices.hash(h),
        VectorReduce { op, .. } => op.hash(h),
        Cast(_) | Reinterpret(_) | Not(_) | Select { .. } => {}
    }
    crate::ir::visit::for_each_child(e, &mut |c| children(c, h));
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
