//! Clamped dense loads: `buf[clamp(ramp(b, 1, n), lo, hi) + k]`.
//!
//! Boundary conditions read their input through a clamped index. Loop
//! partitioning leaves the steady state clamp-free, but the edge
//! iterations (and the first rows of a sliding window) still load through
//! the clamp, which is a gather; for 8- and 16-bit elements x86 has no
//! gather instruction, so LLVM emits one scalar load per lane. Because a
//! clamp is monotonic, every lane of such a vector reads either lane 0's
//! element, lane n-1's element, or its own unclamped element. So the load
//! becomes two scalar loads (broadcast) and one dense load masked to the
//! unclamped lanes, blended together: a handful of instructions where the
//! gather took several per lane.
//!
//! Assumes: `index` has lanes > 1, `k` is a broadcast (sum of broadcasts).
//! Guarantees: the rewritten expression computes the same vector and only
//! touches elements the original load touches (lane 0's and lane n-1's
//! elements, and the lanes whose index is left unchanged by the clamp), so
//! it is as memory-safe as the gather it replaces.

use ferrohalide_core::ir::{BinOp, Expr, ExprNode, Type};

/// A clamped ramp found in a load index.
pub(crate) struct ClampedRamp {
    pub(crate) base: Expr,
    pub(crate) lo: Expr,
    pub(crate) hi: Expr,
    /// `true` for `max(min(r, hi), lo)`, `false` for `min(max(r, lo), hi)`:
    /// the two differ only when `lo > hi`, and the scalar end lanes must be
    /// clamped the same way as the vector.
    min_inside: bool,
    pub(crate) lanes: u16,
}

impl ClampedRamp {
    fn clamp(&self, x: Expr) -> Expr {
        if self.min_inside {
            Expr::max(Expr::min(x, self.hi.clone()), self.lo.clone())
        } else {
            Expr::min(Expr::max(x, self.lo.clone()), self.hi.clone())
        }
    }
}

fn broadcast_value(e: &Expr) -> Option<&Expr> {
    match e.node() {
        ExprNode::Broadcast { value, .. } => Some(value),
        _ => None,
    }
}

/// `e` as `op(x, broadcast(v))` in either operand order: (op, x, v).
fn with_broadcast_operand(e: &Expr) -> Option<(BinOp, &Expr, &Expr)> {
    let ExprNode::Binary { op, a, b } = e.node() else {
        return None;
    };
    match (broadcast_value(a), broadcast_value(b)) {
        (None, Some(v)) => Some((*op, a, v)),
        (Some(v), None) => Some((*op, b, v)),
        _ => None,
    }
}

/// `clamp(ramp(b, 1, n), lo, hi)` with broadcast bounds, in either order.
fn clamped_ramp(e: &Expr) -> Option<ClampedRamp> {
    let (outer, inner, outer_bound) = with_broadcast_operand(e)?;
    let (inner_op, ramp, inner_bound) = with_broadcast_operand(inner)?;
    let ExprNode::Ramp {
        base,
        stride,
        lanes,
    } = ramp.node()
    else {
        return None;
    };
    if stride.as_int_const() != Some(1) || !base.ty().is_scalar() {
        return None;
    }
    let (lo, hi, min_inside) = match (outer, inner_op) {
        (BinOp::Max, BinOp::Min) => (outer_bound, inner_bound, true),
        (BinOp::Min, BinOp::Max) => (inner_bound, outer_bound, false),
        _ => return None,
    };
    Some(ClampedRamp {
        base: base.clone(),
        lo: lo.clone(),
        hi: hi.clone(),
        min_inside,
        lanes: *lanes,
    })
}

/// Split `index` into a clamped ramp plus a scalar offset.
pub(crate) fn split_index(index: &Expr) -> Option<(ClampedRamp, Expr)> {
    if let Some(c) = clamped_ramp(index) {
        let zero = Expr::zero(c.base.ty());
        return Some((c, zero));
    }
    let ExprNode::Binary { op, a, b } = index.node() else {
        return None;
    };
    match op {
        BinOp::Add => {
            if let Some(k) = broadcast_value(b) {
                let (c, off) = split_index(a)?;
                Some((c, Expr::add(off, k.clone())))
            } else {
                let k = broadcast_value(a)?;
                let (c, off) = split_index(b)?;
                Some((c, Expr::add(off, k.clone())))
            }
        }
        BinOp::Sub => {
            let k = broadcast_value(b)?;
            let (c, off) = split_index(a)?;
            Some((c, Expr::sub(off, k.clone())))
        }
        _ => None,
    }
}

/// The load `name[index]` of type `t` rewritten as described in the module
/// comment, or None when the index is not a clamped dense ramp.
pub(crate) fn rewrite_clamped_load(t: Type, name: &str, index: &Expr) -> Option<Expr> {
    let (c, off) = split_index(index)?;
    let n = c.lanes;
    if n < 2 || n != t.lanes {
        return None;
    }
    let it = c.base.ty();
    let v = |s: &str| Expr::var(it, format!("clamped_load.{s}"));
    let (b, lo, hi, k) = (v("base"), v("lo"), v("hi"), v("offset"));
    let bound = ClampedRamp {
        base: b.clone(),
        lo: lo.clone(),
        hi: hi.clone(),
        min_inside: c.min_inside,
        lanes: n,
    };
    let scalar_t = t.element_of();
    let end_lane = |x: Expr| {
        Expr::broadcast(
            Expr::load(
                scalar_t,
                name,
                Expr::add(bound.clamp(x), k.clone()),
                Expr::bool_const(true),
            ),
            n,
        )
    };
    let first = end_lane(b.clone());
    let last = end_lane(Expr::add(
        b.clone(),
        Expr::make_const_i64(it, (n - 1) as i64),
    ));
    let ramp = Expr::ramp(b.clone(), Expr::one(it), n);
    let below = Expr::lt(ramp.clone(), Expr::broadcast(lo.clone(), n));
    let above = Expr::gt(ramp.clone(), Expr::broadcast(hi.clone(), n));
    let inside = Expr::and(Expr::not(below.clone()), Expr::not(above));
    let middle = Expr::load(
        t,
        name,
        Expr::ramp(Expr::add(b.clone(), k.clone()), Expr::one(it), n),
        inside.clone(),
    );
    let body = Expr::select(inside, middle, Expr::select(below, first, last));
    Some(Expr::let_(
        "clamped_load.base",
        c.base,
        Expr::let_(
            "clamped_load.lo",
            c.lo,
            Expr::let_(
                "clamped_load.hi",
                c.hi,
                Expr::let_("clamped_load.offset", off, body),
            ),
        ),
    ))
}
