//! Clamped dense loads: `buf[clamp(ramp(b, 1, n), lo, hi) + k]`.
//!
//! Boundary conditions read their input through a clamped index (after
//! simplification, a unit ramp under adds, subtracts, mins and maxes with
//! broadcasts: `split_index`). Loop
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

/// A clamped ramp found in a load index: lane `k` reads
/// `min(max(base + k, lo), hi)`, with `lo <= hi` (see `clamp_ramp`).
pub(crate) struct ClampedRamp {
    pub(crate) base: Expr,
    pub(crate) lo: Expr,
    pub(crate) hi: Expr,
    pub(crate) lanes: u16,
}

impl ClampedRamp {
    fn clamp(&self, x: Expr) -> Expr {
        Expr::min(Expr::max(x, self.lo.clone()), self.hi.clone())
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
        (Some(v), None) if *op != BinOp::Sub => Some((*op, b, v)),
        _ => None,
    }
}

/// Which index shapes `split_index` takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClampShapes {
    /// `clamp(ramp) + offsets`: one `min` and one `max` right around the
    /// ramp, broadcast adds and subtracts outside them (x86: the masked-load
    /// form of longer chains measured slower on Halide's interpolate app).
    ClampThenOffsets,
    /// Any chain (HVX, where the alternative is a per-lane gather).
    AnyChain,
}

/// `index` as a clamped unit ramp: a `ramp(b, 1, n)` under a chain of
/// adding or subtracting broadcasts and `min`/`max` with broadcasts (of
/// the `shapes` given). Each step keeps the form `min(max(base + k, lo),
/// hi)`, `lo <= hi`:
/// - `+ c`: every part moves by `c`;
/// - `min(., h)`: `lo` becomes `min(lo, h)`, `hi` becomes `min(hi, h)`;
/// - `max(., l)`: `lo` becomes `max(lo, l)`, `hi` becomes `max(hi, l)`
///   (with `h < lo` every lane is `h`, which the new form gives too;
///   likewise `l > hi`). A side never bounded is the type's extreme.
/// `None` if `index` is not of that shape or is not clamped at all.
pub(crate) fn split_index(index: &Expr, shapes: ClampShapes) -> Option<(ClampedRamp, Expr)> {
    let chain = clamp_ramp(index, shapes)?;
    let t = chain.base.ty();
    if chain.lo.is_none() && chain.hi.is_none() {
        return None;
    }
    let extreme = |v: i64| Expr::make_const_i64(t, v);
    let (min, max) = if t.bits == 64 { (i64::MIN, i64::MAX) } else { (i32::MIN as i64, i32::MAX as i64) };
    let c = ClampedRamp {
        base: chain.base,
        lo: chain.lo.unwrap_or_else(|| extreme(min)),
        hi: chain.hi.unwrap_or_else(|| extreme(max)),
        lanes: chain.lanes,
    };
    Some((c, Expr::zero(t)))
}

/// A chain read so far (see `split_index`).
struct Chain {
    base: Expr,
    lo: Option<Expr>,
    hi: Option<Expr>,
    lanes: u16,
    /// Steps so far: `min`/`max` ones, and whether an add or subtract came.
    bounds: u8,
    offset: bool,
}

fn clamp_ramp(e: &Expr, shapes: ClampShapes) -> Option<Chain> {
    if let ExprNode::Ramp { base, stride, lanes } = e.node() {
        let plain = stride.as_int_const() == Some(1) && base.ty().is_scalar() && base.ty().is_int();
        return plain.then(|| Chain { base: base.clone(), lo: None, hi: None, lanes: *lanes, bounds: 0, offset: false });
    }
    let (op, x, v) = with_broadcast_operand(e)?;
    let c = clamp_ramp(x, shapes)?;
    let narrow = shapes == ClampShapes::ClampThenOffsets;
    let shift = |b: Option<Expr>, f: &dyn Fn(Expr) -> Expr| b.map(f);
    Some(match op {
        BinOp::Add | BinOp::Sub => {
            if narrow && c.bounds < 2 {
                return None;
            }
            let f = |y: Expr| if op == BinOp::Add { Expr::add(y, v.clone()) } else { Expr::sub(y, v.clone()) };
            Chain { base: f(c.base), lo: shift(c.lo, &f), hi: shift(c.hi, &f), offset: true, ..c }
        }
        BinOp::Min | BinOp::Max => {
            let repeated = (op == BinOp::Min && c.hi.is_some()) || (op == BinOp::Max && c.lo.is_some());
            if narrow && (c.offset || repeated) {
                return None;
            }
            let (lo, hi) = if op == BinOp::Min {
                let f = |y: Expr| Expr::min(y, v.clone());
                (shift(c.lo, &f), Some(c.hi.map_or_else(|| v.clone(), f)))
            } else {
                let f = |y: Expr| Expr::max(y, v.clone());
                (Some(c.lo.map_or_else(|| v.clone(), f)), shift(c.hi, &f))
            };
            Chain { lo, hi, bounds: c.bounds + 1, ..c }
        }
        _ => return None,
    })
}

/// The load `name[index]` of type `t` rewritten as described in the module
/// comment, or None when the index is not a clamped dense ramp.
pub(crate) fn rewrite_clamped_load(t: Type, name: &str, index: &Expr) -> Option<Expr> {
    let (c, off) = split_index(index, ClampShapes::ClampThenOffsets)?;
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
