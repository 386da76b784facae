//! Overlapping dense loads: `buf[ramp(b + c_i, 1, n)]` for several small
//! constants `c_i` in one stored value (a stencil's taps along x), also
//! through the same clamp or offset (a boundary condition's edge vectors:
//! each lane's index is the same lane-wise function of the ramp, so the
//! lanes shift with `c_i` all the same).
//!
//! A 3-tap blur's row loads the same input three times, shifted by one
//! element; each unaligned load of a full vector touches two cache lines,
//! so the load ports, not the arithmetic, bound its inner loop. When the
//! taps span at most one vector, the outermost two loads cover every
//! element the inner ones read, and each inner load becomes one two-source
//! lane permute of those two vectors (`vpermt2w`/`vpermt2d`): fewer loads
//! for the same work. On AMD Zen 4/5 this measured about 8% off the
//! steady-state blur loop.
//!
//! Strided taps (`buf[ramp(2x + c_i, 2, n)]`, a downsample's taps; stride
//! 2 to 4, plain ramps) share the same way: the elements all taps read,
//! when they are every element of a span, are covered by dense loads of
//! `stride * n` lanes (the last ending at the span's end), and each tap
//! picks its lanes from the one load that holds them (Halide's even/odd
//! lane shuffles of dense loads; local_laplacian's [1 3 3 1] pyramid
//! levels read each row with two loads instead of eight).
//!
//! Assumes: `value` is the value of one store; `shareable` says whether
//! the target permutes vectors of a type in one cheap instruction.
//! Guarantees: the result computes the same vector and loads only elements
//! the original loads read, at least once each time the store runs (only
//! loads the value reads unconditionally are grouped: those reached through
//! arithmetic, casts and lets, never through a select's arms or a call).

use ferrohalide_core::ir::visit::{expr_uses_var, for_each_expr, mutate_expr_children, Mutator};
use ferrohalide_core::ir::{equal, BinOp, Expr, ExprNode, Type};

/// An unpredicated load `name[F(ramp(b + offset, 1, lanes))]` for a
/// lane-wise `F` (see `tap_index`).
struct Tap {
    name: String,
    ty: Type,
    /// The index with the ramp's constant offset removed: taps with equal
    /// `base`s read the same lanes, shifted.
    base: Expr,
    offset: i64,
    /// 1 for a dense tap (possibly clamped or offset), 2 to 4 for a plain
    /// strided ramp.
    stride: i64,
    load: Expr,
}

/// `e` as `x + c` for a constant `c` (0 when there is none).
fn split_constant(e: &Expr) -> (Expr, i64) {
    if let ExprNode::Binary { op, a, b } = e.node() {
        if let Some(c) = b.as_int_const() {
            match op {
                BinOp::Add => return (a.clone(), c),
                BinOp::Sub => return (a.clone(), -c),
                _ => {}
            }
        }
    }
    (e.clone(), 0)
}

/// `index` as a lane-wise function of `ramp(b + c, 1, lanes)` (the ramp
/// itself, or it clamped or offset by broadcasts, as boundary conditions
/// read): the index with the ramp's base stripped of its constant, and
/// `c`. Shifting such a ramp by `k` shifts the index's lanes by `k`.
fn tap_index(index: &Expr, lanes: u16) -> Option<(Expr, i64)> {
    match index.node() {
        ExprNode::Ramp { .. } => {
            let (ramp, c, stride) = plain_ramp(index, lanes)?;
            (stride == 1).then_some((ramp, c))
        }
        ExprNode::Binary {
            op: op @ (BinOp::Add | BinOp::Sub | BinOp::Min | BinOp::Max),
            a,
            b,
        } => {
            let uniform = |e: &Expr| matches!(e.node(), ExprNode::Broadcast { .. });
            if uniform(b) {
                let (x, c) = tap_index(a, lanes)?;
                Some((Expr::binary(*op, x, b.clone()), c))
            } else if uniform(a) && *op != BinOp::Sub {
                let (x, c) = tap_index(b, lanes)?;
                Some((Expr::binary(*op, a.clone(), x), c))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `index` as `ramp(b + c, s, lanes)` with a scalar base and a constant
/// stride: `(ramp(b, s, lanes), c, s)`.
fn plain_ramp(index: &Expr, lanes: u16) -> Option<(Expr, i64, i64)> {
    let ExprNode::Ramp { base, stride, lanes: n } = index.node() else {
        return None;
    };
    let s = stride.as_int_const()?;
    if !base.ty().is_scalar() || *n != lanes {
        return None;
    }
    let (b, c) = split_constant(base);
    Some((Expr::ramp(b, stride.clone(), *n), c, s))
}

fn as_tap(e: &Expr) -> Option<Tap> {
    let ExprNode::Load {
        name,
        index,
        predicate,
    } = e.node()
    else {
        return None;
    };
    if !(predicate.is_true() || predicate.is_const_value(1)) {
        return None;
    }
    if let Some((base, offset)) = tap_index(index, e.ty().lanes) {
        return Some(Tap {
            name: name.clone(),
            ty: e.ty(),
            base,
            offset,
            stride: 1,
            load: e.clone(),
        });
    }
    let (base, offset, stride) = plain_ramp(index, e.ty().lanes)?;
    (2..=4).contains(&stride).then(|| Tap {
        name: name.clone(),
        ty: e.ty(),
        base,
        offset,
        stride,
        load: e.clone(),
    })
}

/// The taps `e` reads unconditionally (see the module comment).
fn collect_taps(e: &Expr, out: &mut Vec<Tap>) {
    match e.node() {
        ExprNode::Load { .. } => out.extend(as_tap(e)),
        ExprNode::Binary { a, b, .. } => {
            collect_taps(a, out);
            collect_taps(b, out);
        }
        ExprNode::Cast(x) | ExprNode::Reinterpret(x) | ExprNode::Not(x) => collect_taps(x, out),
        ExprNode::Let { value, body, .. } => {
            collect_taps(value, out);
            collect_taps(body, out);
        }
        _ => {}
    }
}

/// Names bound by lets inside `e`: a load whose index uses one cannot be
/// hoisted in front of the whole value.
fn names_bound_in(e: &Expr) -> Vec<String> {
    let mut names = Vec::new();
    for_each_expr(e, &mut |x| {
        if let ExprNode::Let { name, .. } = x.node() {
            names.push(name.clone());
        }
    });
    names
}

/// Replaces each grouped load with a lane permute of its group's two outer
/// loads (bound to variables).
struct ReplaceTaps {
    /// (load, replacement)
    replacements: Vec<(Expr, Expr)>,
}

impl Mutator for ReplaceTaps {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let ExprNode::Load { .. } = e.node() {
            if let Some((_, r)) = self.replacements.iter().find(|(l, _)| equal(l, e)) {
                return r.clone();
            }
        }
        mutate_expr_children(self, e)
    }
}

/// A group of strided taps (same buffer, type, stride and base; sorted by
/// offset) as dense loads of `stride * lanes` elements and a lane pick per
/// tap, when those loads read only elements the taps read and each tap's
/// lanes lie in one of them (see the module comment); else left alone.
fn share_strided(g: &[Tap], lets: &mut Vec<(Expr, Expr)>, replacements: &mut Vec<(Expr, Expr)>) {
    let (lanes, stride) = (g[0].ty.lanes as i64, g[0].stride);
    let width = stride * lanes;
    let read: std::collections::BTreeSet<i64> =
        g.iter().flat_map(|t| (0..lanes).map(move |i| t.offset + stride * i)).collect();
    let (Some(&first), Some(&last)) = (read.first(), read.last()) else { return };
    if last - first + 1 < width {
        return;
    }
    let mut starts = vec![];
    let mut p = first;
    while p + width - 1 < last {
        starts.push(p);
        p += width;
    }
    starts.push(last - width + 1);
    let every_element_read = starts.iter().all(|&st| (st..st + width).all(|e| read.contains(&e)));
    // Fewer loads than the taps' own (each a span of about `width`).
    if !every_element_read || starts.len() >= g.len() {
        return;
    }
    let load_of = |t: &Tap| {
        starts.iter().position(|&st| st <= t.offset && t.offset + stride * (lanes - 1) < st + width)
    };
    if g.iter().any(|t| load_of(t).is_none()) {
        return;
    }
    let ExprNode::Ramp { base: b, .. } = g[0].base.node() else {
        unreachable!("a strided tap's base is a ramp")
    };
    let wide = g[0].ty.with_lanes(width as u16);
    let k = lets.len();
    let vars: Vec<Expr> = starts
        .iter()
        .enumerate()
        .map(|(m, &st)| {
            let var = Expr::var(wide, format!("strided_load.{k}.{m}"));
            let first = Expr::add(b.clone(), Expr::make_const_i64(b.ty(), st));
            let index = Expr::ramp(first, Expr::make_const_i64(b.ty(), 1), width as u16);
            lets.push((var.clone(), Expr::load(wide, g[0].name.clone(), index, Expr::bool_const(true))));
            var
        })
        .collect();
    for t in g {
        let m = load_of(t).expect("checked above");
        let indices = (0..lanes).map(|i| (t.offset + stride * i - starts[m]) as i32).collect();
        replacements.push((t.load.clone(), Expr::shuffle(vec![vars[m].clone()], indices)));
    }
}

/// `value` with overlapping dense loads shared as described in the module
/// comment (unchanged when there are none).
pub(crate) fn share_overlapping_loads(value: &Expr, shareable: impl Fn(Type) -> bool) -> Expr {
    let mut taps = Vec::new();
    collect_taps(value, &mut taps);
    if taps.len() < 2 {
        return value.clone();
    }
    let bound = names_bound_in(value);
    taps.retain(|t| shareable(t.ty) && !bound.iter().any(|n| expr_uses_var(&t.base, n)));

    // Group by buffer, type and base (without its constant), in the order
    // the loads appear.
    let mut groups: Vec<Vec<Tap>> = Vec::new();
    for t in taps {
        let same = |g: &&mut Vec<Tap>| {
            g[0].name == t.name && g[0].ty == t.ty && g[0].stride == t.stride && equal(&g[0].base, &t.base)
        };
        match groups.iter_mut().find(same) {
            Some(g) => {
                if !g.iter().any(|o| o.offset == t.offset) {
                    g.push(t)
                }
            }
            None => groups.push(vec![t]),
        }
    }

    let mut lets = Vec::new();
    let mut replacements = Vec::new();
    for mut g in groups {
        g.sort_by_key(|t| t.offset);
        if g[0].stride > 1 {
            share_strided(&g, &mut lets, &mut replacements);
            continue;
        }
        let lanes = g[0].ty.lanes as i64;
        let (lo, hi) = (&g[0], &g[g.len() - 1]);
        let span = hi.offset - lo.offset;
        // Inner taps to replace, and the two outer ones must cover them.
        if g.len() < 3 || span > lanes {
            continue;
        }
        let k = lets.len();
        let lo_var = Expr::var(lo.ty, format!("overlapping_load.{k}.lo"));
        let hi_var = Expr::var(hi.ty, format!("overlapping_load.{k}.hi"));
        lets.push((lo_var.clone(), lo.load.clone()));
        lets.push((hi_var.clone(), hi.load.clone()));
        replacements.push((lo.load.clone(), lo_var.clone()));
        replacements.push((hi.load.clone(), hi_var.clone()));
        for t in &g[1..g.len() - 1] {
            // Element p (relative to the low tap) comes from the low vector
            // while it lasts, then from the high one.
            let indices = (0..lanes)
                .map(|j| {
                    let p = t.offset - lo.offset + j;
                    if p < lanes {
                        p as i32
                    } else {
                        (lanes + p - span) as i32
                    }
                })
                .collect();
            let permuted = Expr::shuffle(vec![lo_var.clone(), hi_var.clone()], indices);
            replacements.push((t.load.clone(), permuted));
        }
    }
    if lets.is_empty() {
        return value.clone();
    }
    let mut body = ReplaceTaps { replacements }.mutate_expr(value);
    for (var, load) in lets.into_iter().rev() {
        let ExprNode::Variable { name, .. } = var.node() else {
            unreachable!("overlapping load bound to a variable")
        };
        body = Expr::let_(name.clone(), load, body);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tap(base: &Expr, c: i64, lanes: u16) -> Expr {
        let t = Type::uint(16).with_lanes(lanes);
        let idx = Expr::ramp(
            Expr::add(base.clone(), Expr::make_const_i64(Type::i32(), c)),
            Expr::one(Type::i32()),
            lanes,
        );
        Expr::load(t, "in", idx, Expr::bool_const(true))
    }

    fn count_loads(e: &Expr) -> usize {
        let mut n = 0;
        for_each_expr(e, &mut |x| {
            n += matches!(x.node(), ExprNode::Load { .. }) as usize
        });
        n
    }

    #[test]
    fn three_taps_become_two_loads_and_a_permute() {
        let x = Expr::var(Type::i32(), "x");
        let v = Expr::add(Expr::add(tap(&x, -1, 8), tap(&x, 0, 8)), tap(&x, 1, 8));
        let r = share_overlapping_loads(&v, |_| true);
        assert_eq!(count_loads(&r), 2);
        let mut shuffles = Vec::new();
        for_each_expr(&r, &mut |e| {
            if let ExprNode::Shuffle { indices, .. } = e.node() {
                shuffles.push(indices.clone());
            }
        });
        // Lanes 1..7 of in[x-1..] then lane 6 of in[x+1..] (= in[x+7]).
        assert_eq!(shuffles, vec![vec![1, 2, 3, 4, 5, 6, 7, 14]]);
    }

    #[test]
    fn clamped_taps_share_their_loads_too() {
        let x = Expr::var(Type::i32(), "x");
        let hi = Expr::broadcast(Expr::var(Type::i32(), "hi"), 8);
        let zero = Expr::broadcast(Expr::i32(0), 8);
        let t = Type::uint(16).with_lanes(8);
        let clamped = |c: i64| {
            let r = Expr::ramp(
                Expr::add(x.clone(), Expr::i32(c)),
                Expr::one(Type::i32()),
                8,
            );
            let idx = Expr::max(Expr::min(r, hi.clone()), zero.clone());
            Expr::load(t, "in", idx, Expr::bool_const(true))
        };
        let v = Expr::add(Expr::add(clamped(-1), clamped(0)), clamped(1));
        let r = share_overlapping_loads(&v, |_| true);
        assert_eq!(count_loads(&r), 2);
        // A different clamp is a different group.
        let other = Expr::load(
            t,
            "in",
            Expr::min(Expr::ramp(x.clone(), Expr::one(Type::i32()), 8), hi.clone()),
            Expr::bool_const(true),
        );
        let w = Expr::add(Expr::add(clamped(-1), other), clamped(1));
        assert!(share_overlapping_loads(&w, |_| true).same_as(&w));
    }

    fn strided_tap(base: &Expr, c: i64, stride: i64, lanes: u16) -> Expr {
        let t = Type::float(32).with_lanes(lanes);
        let idx = Expr::ramp(
            Expr::add(base.clone(), Expr::make_const_i64(Type::i32(), c)),
            Expr::make_const_i64(Type::i32(), stride),
            lanes,
        );
        Expr::load(t, "in", idx, Expr::bool_const(true))
    }

    fn shuffles_of(e: &Expr) -> Vec<Vec<i32>> {
        let mut out = Vec::new();
        for_each_expr(e, &mut |x| {
            if let ExprNode::Shuffle { indices, .. } = x.node() {
                out.push(indices.clone());
            }
        });
        out
    }

    #[test]
    fn four_stride_two_taps_become_two_wide_loads() {
        // A [1 3 3 1] downsample row: in[2x - 1 + 2i], in[2x + 2i],
        // in[2x + 1 + 2i], in[2x + 2 + 2i] for 8 lanes read every element
        // of in[2x - 1 .. 2x + 16]: two loads of 16 (from 2x - 1 and from
        // 2x + 1), each tap the even or odd lanes of one.
        let x2 = Expr::mul(Expr::var(Type::i32(), "x"), Expr::i32(2));
        let v = Expr::add(
            Expr::add(strided_tap(&x2, -1, 2, 8), strided_tap(&x2, 0, 2, 8)),
            Expr::add(strided_tap(&x2, 1, 2, 8), strided_tap(&x2, 2, 2, 8)),
        );
        let r = share_overlapping_loads(&v, |_| true);
        assert_eq!(count_loads(&r), 2, "{r}");
        let even: Vec<i32> = (0..8).map(|i| 2 * i).collect();
        let odd: Vec<i32> = (0..8).map(|i| 2 * i + 1).collect();
        assert_eq!(shuffles_of(&r), vec![even.clone(), odd.clone(), even, odd]);
        let mut widths = Vec::new();
        for_each_expr(&r, &mut |x| {
            if let ExprNode::Load { index, .. } = x.node() {
                widths.push(index.ty().lanes);
            }
        });
        assert_eq!(widths, vec![16, 16]);
    }

    #[test]
    fn strided_taps_that_would_read_more_are_left_alone() {
        // in[2x + 2i] and in[2x + 2 + 2i] read only even elements: a dense
        // load would read odd ones no tap reads.
        let x2 = Expr::mul(Expr::var(Type::i32(), "x"), Expr::i32(2));
        let v = Expr::add(strided_tap(&x2, 0, 2, 8), strided_tap(&x2, 2, 2, 8));
        assert!(share_overlapping_loads(&v, |_| true).same_as(&v));
        // One tap alone: nothing to share.
        let one = Expr::add(strided_tap(&x2, 0, 2, 8), strided_tap(&x2, 0, 2, 8));
        assert!(share_overlapping_loads(&one, |_| true).same_as(&one));
    }

    #[test]
    fn left_alone_when_not_overlapping_or_not_shareable() {
        let x = Expr::var(Type::i32(), "x");
        let far = Expr::add(Expr::add(tap(&x, 0, 8), tap(&x, 4, 8)), tap(&x, 9, 8));
        assert!(share_overlapping_loads(&far, |_| true).same_as(&far));
        let near = Expr::add(Expr::add(tap(&x, -1, 8), tap(&x, 0, 8)), tap(&x, 1, 8));
        assert!(share_overlapping_loads(&near, |_| false).same_as(&near));
    }

    #[test]
    fn loads_under_a_select_arm_are_not_hoisted() {
        let x = Expr::var(Type::i32(), "x");
        let c = Expr::lt(
            Expr::broadcast(x.clone(), 8),
            Expr::broadcast(Expr::make_const_i64(Type::i32(), 3), 8),
        );
        let v = Expr::add(
            Expr::add(tap(&x, -1, 8), tap(&x, 0, 8)),
            Expr::select(c, tap(&x, 1, 8), tap(&x, 0, 8)),
        );
        assert!(share_overlapping_loads(&v, |_| true).same_as(&v));
    }
}
