//! Sliding window (the idea of Halide's SlidingWindow.cpp, written anew):
//! a Func stored outside a serial loop but computed inside it does not
//! recompute, on each iteration, what the previous iteration already
//! computed into the same storage.
//!
//! Assumes: the output of bounds_inference. A Func `f` computed inside a
//! loop has the lets `f.s0.d.min` / `f.s0.d.max` (the region its consumers
//! need) at the top of its compute loop's body, in dimension order, and its
//! loop nest is bounded by them; its Realize encloses the compute level;
//! a Func's lets come after those of its consumers computed at the same
//! level, and may refer to them.
//!
//! Guarantees: for each Func `f` and dimension `d`, let `v` be the
//! innermost loop between f's Realize and its compute site (the compute
//! loop included) on which d's required region depends. If `v` is serial,
//! the region's min and max both move the same way as `v` grows, no other
//! dimension's region depends on `v`, no loop between `v` and the compute
//! site has bounds that depend on `v`, and no condition sits between them,
//! then on every iteration but the first the region is cut to what the
//! previous iteration did not compute: growing, the min becomes
//! `select(likely(v > v_min), max(min, max(v - 1) + 1), min)`; shrinking,
//! the max becomes `select(likely(v > v_min), min(max, min(v - 1) - 1), max)`.
//! Producers of `f` computed at the same level read `f`'s lets, so they
//! shrink with it and may slide in turn. The Realize still covers
//! everything written: if a split in `f` writes past the cut region (a
//! RoundUp tail), its bounds grow to include that. The slides made are
//! returned, for storage folding (which must not fold across them).

use std::collections::{HashMap, HashSet};

use super::environment::Environment;
use crate::analysis::bounds::{box_provided, Interval, Region, Scope};
use crate::analysis::monotonic::{is_monotonic, Monotonic};
use crate::analysis::simplify::{can_prove, simplify};
use crate::analysis::substitute::substitute;
use crate::error::Result;
use crate::ir::equality::equal;
use crate::ir::visit::{expr_uses_var, mutate_expr_children, mutate_stmt_children};
use crate::ir::{Expr, ExprNode, ForType, Mutator, Range, Stmt, StmtNode};
use crate::schedule::{Split, TailStrategy};

/// One sliding of a Func's dimension over a loop.
#[derive(Clone, Debug)]
pub struct Slide {
    pub func: String,
    pub dim: String,
    pub loop_name: String,
    /// `likely(v > v_min)`: true on every iteration but the first.
    pub steady: Expr,
}

/// Apply sliding window to every Func stored outside the loop it is
/// computed in. Returns the new Stmt and the slides made.
pub fn sliding_window(s: &Stmt, env: &Environment) -> Result<(Stmt, Vec<Slide>)> {
    let mut m = SlidingWindow {
        env,
        stack: vec![],
        pending: HashMap::new(),
        slides: vec![],
        forbidden: HashSet::new(),
    };
    let out = m.mutate_stmt(s);
    Ok((out, m.slides))
}

/// What encloses the node being visited.
enum Frame {
    Loop {
        name: String,
        min: Expr,
        extent: Expr,
        for_type: ForType,
    },
    Let {
        name: String,
        value: Expr,
    },
    Realize(String),
    Condition,
}

struct SlidingWindow<'a> {
    env: &'a Environment,
    stack: Vec<Frame>,
    /// New values of `f.s0.d.max` lets further down (shrinking slides).
    pending: HashMap<String, Expr>,
    slides: Vec<Slide>,
    /// Funcs that must not slide (their Realize could not cover the writes).
    forbidden: HashSet<String>,
}

fn var(name: &str) -> Expr {
    Expr::var_i32(name)
}

/// The value of the let `name` among the LetStmts heading `s`.
fn let_ahead(s: &Stmt, name: &str) -> Option<Expr> {
    let mut cur = s;
    while let StmtNode::LetStmt {
        name: n,
        value,
        body,
    } = cur.node()
    {
        if n == name {
            return Some(value.clone());
        }
        cur = body;
    }
    None
}

impl SlidingWindow<'_> {
    /// `e` with the lets of `stack[from..to]` substituted, innermost first.
    fn expand(&self, e: &Expr, from: usize, to: usize) -> Expr {
        let mut e = e.clone();
        for f in self.stack[from..to].iter().rev() {
            if let Frame::Let { name, value } = f {
                if expr_uses_var(&e, name) {
                    e = substitute(name, value, &e);
                }
            }
        }
        e
    }

    /// The innermost let called `name` on the stack from index `from`.
    fn let_on_stack(&self, name: &str, from: usize) -> Option<Expr> {
        self.stack[from..].iter().rev().find_map(|f| match f {
            Frame::Let { name: n, value } if n == name => Some(value.clone()),
            _ => None,
        })
    }

    /// If `name` is `f.s0.d.min` for a Func `f` realized around here:
    /// (f, index of d, index of f's Realize frame).
    fn parse_min_let(&self, name: &str) -> Option<(String, usize, usize)> {
        for (i, f) in self.stack.iter().enumerate().rev() {
            let Frame::Realize(func) = f else { continue };
            let Some(rest) = name
                .strip_prefix(func.as_str())
                .and_then(|r| r.strip_prefix(".s0."))
                .and_then(|r| r.strip_suffix(".min"))
            else {
                continue;
            };
            let args = self.env.funcs.get(func)?.args();
            if let Some(d) = args.iter().position(|a| a == rest) {
                return Some((func.clone(), d, i));
            }
        }
        None
    }

    /// Try to slide dimension `d` of `func`, whose min let has value
    /// `min_value` and heads `body`. Returns the min's new value, if it
    /// changes (a shrinking slide records the max's new value in `pending`).
    fn try_slide(
        &mut self,
        func: &str,
        d: usize,
        realize_at: usize,
        min_value: &Expr,
        body: &Stmt,
    ) -> Option<Expr> {
        if self.forbidden.contains(func) {
            return None;
        }
        let args = self.env.funcs.get(func)?.args();
        let prefix = format!("{func}.s0.");
        // Every dimension's region, as it stands at the compute site.
        let mut regions: Vec<(Expr, Expr)> = vec![];
        for (i, a) in args.iter().enumerate() {
            let (mn, mx) = (format!("{prefix}{a}.min"), format!("{prefix}{a}.max"));
            let lookup = |n: &str| {
                self.let_on_stack(n, realize_at)
                    .or_else(|| let_ahead(body, n))
            };
            let lo = if i == d {
                min_value.clone()
            } else {
                lookup(&mn)?
            };
            regions.push((lo, lookup(&mx)?));
        }
        let top = self.stack.len();
        let inside = realize_at + 1;
        let full = |me: &Self, e: &Expr| simplify(&me.expand(e, inside, top));
        let (lo, hi) = (full(self, &regions[d].0), full(self, &regions[d].1));

        // Loops that may carry values between iterations: inside the
        // Realize and inside any condition (a skipped iteration computes
        // nothing).
        let first_candidate = self.stack[inside..]
            .iter()
            .rposition(|f| matches!(f, Frame::Condition))
            .map_or(inside, |i| inside + i + 1);
        let (w_at, w_name, w_min) = self.stack[first_candidate..]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, f)| match f {
                Frame::Loop { name, min, .. }
                    if expr_uses_var(&lo, name) || expr_uses_var(&hi, name) =>
                {
                    Some((first_candidate + i, name.clone(), min.clone()))
                }
                _ => None,
            })?;
        // The dependence may be on a loop outside any condition: no slide.
        let depends_outside = self.stack[inside..first_candidate].iter().any(|f| {
            matches!(f, Frame::Loop { name, .. } if expr_uses_var(&lo, name) || expr_uses_var(&hi, name))
        });
        if depends_outside {
            return None;
        }
        let Frame::Loop {
            for_type, extent, ..
        } = &self.stack[w_at]
        else {
            return None;
        };
        if !matches!(for_type, ForType::Serial | ForType::Unrolled) {
            return None;
        }
        let w_extent = simplify(&self.expand(extent, inside, w_at));
        if w_extent.as_int_const().is_some_and(|e| e <= 1) {
            return None;
        }
        let (mlo, mhi) = (is_monotonic(&lo, &w_name), is_monotonic(&hi, &w_name));
        let growing = if mlo.is_non_decreasing() && mhi.is_non_decreasing() {
            true
        } else if mlo.is_non_increasing() && mhi.is_non_increasing() {
            false
        } else {
            return None;
        };
        if mlo == Monotonic::Constant && mhi == Monotonic::Constant {
            return None;
        }
        // No other dimension moves with w.
        for (i, (a, b)) in regions.iter().enumerate() {
            if i != d && (expr_uses_var(&full(self, a), &w_name) || expr_uses_var(&full(self, b), &w_name)) {
                return None;
            }
        }
        // Loops inside w run over the same range on every iteration of w.
        for i in w_at + 1..top {
            if let Frame::Loop { min, extent, .. } = &self.stack[i] {
                let mn = self.expand(min, inside, i);
                let ex = self.expand(extent, inside, i);
                if expr_uses_var(&mn, &w_name) || expr_uses_var(&ex, &w_name) {
                    return None;
                }
            }
        }
        // w's min must mean the same at the compute site.
        let shadowed = self.stack[w_at + 1..].iter().any(|f| match f {
            Frame::Let { name, .. } | Frame::Loop { name, .. } => expr_uses_var(&w_min, name),
            _ => false,
        });
        if shadowed {
            return None;
        }
        let wv = var(&w_name);
        let prev = |e: &Expr| substitute(&w_name, &Expr::sub(wv.clone(), Expr::i32(1)), e);
        // Pointless if consecutive iterations never overlap.
        let disjoint = if growing {
            Expr::gt(lo.clone(), prev(&hi))
        } else {
            Expr::lt(hi.clone(), prev(&lo))
        };
        if can_prove(&disjoint) {
            return None;
        }
        let steady = Expr::likely(Expr::gt(wv.clone(), w_min));
        // The previous iteration's bound, in terms of names in scope here.
        let local = |me: &Self, e: &Expr| prev(&me.expand(e, w_at + 1, top));
        self.slides.push(Slide {
            func: func.to_string(),
            dim: args[d].clone(),
            loop_name: w_name.clone(),
            steady: steady.clone(),
        });
        if growing {
            let prev_max = local(self, &regions[d].1);
            let cut = Expr::max(min_value.clone(), Expr::add(prev_max, Expr::i32(1)));
            Some(Expr::select(steady, cut, min_value.clone()))
        } else {
            let max_value = regions[d].1.clone();
            let prev_min = local(self, &regions[d].0);
            let cut = Expr::min(max_value.clone(), Expr::sub(prev_min, Expr::i32(1)));
            self.pending.insert(
                format!("{prefix}{}.max", args[d]),
                Expr::select(steady, cut, max_value),
            );
            None
        }
    }

    /// Can cutting the region of `func` make its loop nest write outside
    /// what it wrote before? Only a RoundUp split can: it writes whole
    /// multiples of its factor from the (now larger) min, while GuardWithIf
    /// writes exactly the region and ShiftInwards never writes past the
    /// region's max nor before the old min.
    fn may_write_past_cut(&self, func: &str) -> bool {
        self.env.funcs.get(func).is_some_and(|f| {
            f.read().stage.splits.iter().any(|s| {
                matches!(
                    s,
                    Split::Split {
                        tail: TailStrategy::RoundUp,
                        ..
                    }
                )
            })
        })
    }

    /// The bounds of the Realize of `func` (body `body`) after its slides
    /// `slides`: grown where the cut regions' loops write outside the
    /// realized region. `None` if the writes cannot be bounded.
    fn realize_bounds(&self, func: &str, bounds: &[Range], body: &Stmt, slides: &[Slide]) -> Option<Vec<Range>> {
        // The first iteration of each slid loop writes what it did before
        // sliding; on the others, the cut applies. Bound each combination
        // of first / other iterations separately, so each bound is exact
        // enough to compare with the old one.
        let mut written: Option<Region> = None;
        for mask in 1u32..(1 << slides.len().min(8)) {
            let mut m = SteadyState {
                slides,
                mask,
            };
            let b = m.mutate_stmt(body);
            let r = box_provided(&b, func, &Scope::new())?;
            written = Some(match written {
                None => r,
                Some(w) => w.iter().zip(&r).map(|(x, y)| x.union(y)).collect(),
            });
        }
        let Some(written) = written else {
            return Some(bounds.to_vec());
        };
        let mut out = vec![];
        for (d, r) in bounds.iter().enumerate() {
            let Interval {
                min: Some(lo),
                max: Some(hi),
            } = written.get(d)?.clone()
            else {
                return None;
            };
            // The realized region's values are lets just outside the Realize.
            let value = |e: &Expr| match e.as_variable() {
                Some(n) => self.let_on_stack(n, 0).unwrap_or_else(|| e.clone()),
                None => e.clone(),
            };
            let old_lo = value(&r.min);
            let old_end = Expr::add(old_lo.clone(), value(&r.extent));
            let inside_lo = can_prove(&Expr::ge(lo.clone(), old_lo));
            let inside_hi = can_prove(&Expr::lt(hi.clone(), old_end));
            if inside_lo && inside_hi {
                out.push(r.clone());
                continue;
            }
            let new_lo = simplify(&Expr::min(r.min.clone(), lo));
            let end = Expr::add(r.min.clone(), r.extent.clone());
            let new_end = Expr::max(end, Expr::add(hi, Expr::i32(1)));
            out.push(Range::new(new_lo.clone(), simplify(&Expr::sub(new_end, new_lo))));
        }
        Some(out)
    }
}

/// The body as run on the iterations where the slides in `mask` are past
/// their first iteration (those loops start one later, their cut applies)
/// and the others are on any iteration with the cut not applied (a
/// superset of what those iterations write).
struct SteadyState<'a> {
    slides: &'a [Slide],
    mask: u32,
}

impl Mutator for SteadyState<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if matches!(e.node(), ExprNode::Call { .. }) {
            for (i, s) in self.slides.iter().enumerate() {
                if equal(e, &s.steady) {
                    return Expr::bool_const(self.mask & (1 << i) != 0);
                }
            }
        }
        mutate_expr_children(self, e)
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::For {
            name,
            min,
            extent,
            for_type,
            body,
        } = s.node()
        {
            let steady = self
                .slides
                .iter()
                .enumerate()
                .any(|(i, sl)| self.mask & (1 << i) != 0 && sl.loop_name == *name);
            if steady {
                let b = self.mutate_stmt(body);
                return Stmt::for_loop(
                    name.clone(),
                    Expr::add(min.clone(), Expr::i32(1)),
                    Expr::sub(extent.clone(), Expr::i32(1)),
                    *for_type,
                    b,
                );
            }
        }
        mutate_stmt_children(self, s)
    }
}

impl Mutator for SlidingWindow<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                self.stack.push(Frame::Loop {
                    name: name.clone(),
                    min: min.clone(),
                    extent: extent.clone(),
                    for_type: *for_type,
                });
                let b = self.mutate_stmt(body);
                self.stack.pop();
                if b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b)
                }
            }
            StmtNode::LetStmt { name, value, body } => {
                let mut v = value.clone();
                if let Some(p) = self.pending.remove(name) {
                    v = p;
                } else if let Some((func, d, at)) = self.parse_min_let(name) {
                    if let Some(nv) = self.try_slide(&func, d, at, value, body) {
                        v = nv;
                    }
                }
                self.stack.push(Frame::Let {
                    name: name.clone(),
                    value: v.clone(),
                });
                let b = self.mutate_stmt(body);
                self.stack.pop();
                if b.same_as(body) && v.same_as(value) {
                    s.clone()
                } else {
                    Stmt::let_stmt(name.clone(), v, b)
                }
            }
            StmtNode::IfThenElse { .. } => {
                self.stack.push(Frame::Condition);
                let out = mutate_stmt_children(self, s);
                self.stack.pop();
                out
            }
            StmtNode::Realize {
                name,
                types,
                memory_type,
                bounds,
                condition,
                body,
            } => {
                let first_slide = self.slides.len();
                self.stack.push(Frame::Realize(name.clone()));
                let mut b = self.mutate_stmt(body);
                self.stack.pop();
                let mine: Vec<Slide> = self.slides[first_slide..]
                    .iter()
                    .filter(|sl| sl.func == *name)
                    .cloned()
                    .collect();
                let mut new_bounds = bounds.clone();
                if !mine.is_empty() && self.may_write_past_cut(name) {
                    match self.realize_bounds(name, bounds, &b, &mine) {
                        Some(nb) => new_bounds = nb,
                        None => {
                            // Can't bound the writes: do this Func without sliding.
                            self.slides.truncate(first_slide);
                            self.forbidden.insert(name.clone());
                            self.stack.push(Frame::Realize(name.clone()));
                            b = self.mutate_stmt(body);
                            self.stack.pop();
                            self.forbidden.remove(name);
                        }
                    }
                }
                Stmt::new(StmtNode::Realize {
                    name: name.clone(),
                    types: types.clone(),
                    memory_type: *memory_type,
                    bounds: new_bounds,
                    condition: condition.clone(),
                    body: b,
                })
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}
