//! Sliding window (the idea of Halide's SlidingWindow.cpp, written anew):
//! a Func stored outside a serial loop but computed inside it does not
//! recompute, on each iteration, what the previous iteration already
//! computed into the same storage.
//!
//! Assumes: the output of bounds_inference. A Func `f` computed inside a
//! loop has the lets `f.sN.d.min` / `f.sN.d.max` of its last stage N (the
//! region its consumers need), then those of the earlier stages, at the
//! top of its compute loop's body, in dimension order, and each stage's
//! loop nest is bounded by its own; its Realize encloses the compute level;
//! a Func's lets come after those of its consumers computed at the same
//! level, and may refer to them.
//!
//! Guarantees: for each Func `f` and dimension `d`, let `v` be the
//! innermost loop between f's Realize and its compute site (the compute
//! loop included) on which d's required region depends. If `v` is serial,
//! the region's min and max both move the same way as `v` grows, no other
//! dimension's region depends on `v`, no loop between `v` and the compute
//! site has bounds that depend on `v`, and no condition sits between them,
//! and, for a Func with updates, no stage splits d with ShiftInwards and
//! every update runs over d's pure variable
//! and reads the Func only at that same coordinate in d (each row of d
//! goes through all stages independently; the earlier stages' lets must
//! be the later stages' own), then on every iteration but the first the
//! region (of every stage) is cut to what the previous iteration did not
//! compute: growing, the min becomes
//! `select(likely_if_innermost(v > v_min), max(min, max(v - 1) + 1), min)`;
//! shrinking, the max becomes
//! `select(likely_if_innermost(v > v_min), min(max, min(v - 1) - 1), max)`.
//! (Marked only for an innermost loop, as in Halide: peeling the first
//! iteration of a loop holding the producer's loops would copy the whole
//! loop body for one iteration, while the select costs a few scalar
//! operations per iteration.)
//! A growing slide of a Func without updates whose region has a constant
//! width `W` and moves by a constant step `s` dividing `W - s`, in a
//! dimension no stage splits with ShiftInwards (see `shifts_inwards`), over a
//! serial loop whose body runs nothing but that Func's produce and consume
//! (its consumers live inside the consume), is rewound instead (see
//! `Rewind`): the loop starts `(W - s) / s` iterations early, the min
//! becomes `max(max(v - 1) + 1, min at v_min)` on every iteration, and the
//! Func's consume runs under `if (likely(v >= v_min))`. The warm-up then
//! computes one step per iteration through the same code as the steady
//! state, where a peeled first iteration would compute the whole window
//! through its own, slower code; every region stays inside the first
//! iteration's uncut region. When the consume sits directly in the
//! rewound loop's body (no loop between them) the guard is
//! `likely_if_innermost` instead, as Halide writes it: skipping the
//! consumer costs one branch per iteration, so loop partitioning need not
//! peel the warm-up iterations into a second copy of the producer's loops.
//! Inside a loop of the body it would be a branch per inner iteration,
//! and the peeled warm-up pays (the blur app runs 7% faster with it).
//! Producers of `f` computed at the same level read `f`'s lets, so they
//! shrink with it and may slide in turn. Every iteration still writes and
//! reads inside what it did before the cut (dimensions split with RoundUp
//! or fused are not cut, see `cut_stays_inside`), so the Realize's bounds
//! and the buffer checks made by bounds inference stay valid. The slides
//! made are returned, for storage folding (which must not fold across
//! them).

use std::collections::{HashMap, HashSet};

use super::environment::Environment;
use crate::analysis::monotonic::{is_monotonic, Monotonic};
use crate::analysis::simplify::{can_prove, simplify};
use crate::analysis::substitute::{substitute, substitute_lets};
use crate::error::Result;
use crate::ir::visit::{expr_uses_var, mutate_stmt_children};
use crate::ir::{BinOp, Expr, ExprNode, ForType, Intrinsic, Mutator, Stmt, StmtNode};
use crate::lang::function::Function;
use crate::schedule::{Split, TailStrategy};

/// One sliding of a Func's dimension over a loop.
#[derive(Clone, Debug)]
pub struct Slide {
    pub func: String,
    pub dim: String,
    pub loop_name: String,
}

/// Apply sliding window to every Func stored outside the loop it is
/// computed in. Returns the new Stmt and the slides made.
pub fn sliding_window(s: &Stmt, env: &Environment) -> Result<(Stmt, Vec<Slide>)> {
    let mut m = SlidingWindow {
        env,
        stack: vec![],
        pending: HashMap::new(),
        slides: vec![],
        rewinds: vec![],
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
        /// The loop's body before sliding (to check a rewind is safe).
        body: Stmt,
    },
    Let {
        name: String,
        value: Expr,
    },
    Realize(String),
    /// An `if`; `guard` is its condition when it has no else branch and
    /// reads `likely(a <= b)` or `likely(a < b)` (a GuardWithIf split's
    /// guard), which holds on a prefix of a loop's iterations when `a`
    /// grows with the loop and `b` does not depend on it.
    Condition {
        guard: Option<Expr>,
    },
}

struct SlidingWindow<'a> {
    env: &'a Environment,
    stack: Vec<Frame>,
    /// New values of `f.s0.d.max` lets further down (shrinking slides).
    pending: HashMap<String, Expr>,
    slides: Vec<Slide>,
    /// Loops to start earlier (see `Rewind`), applied when their For
    /// node is rebuilt.
    rewinds: Vec<Rewind>,
}

/// A slid loop that starts `iterations` early so that its first
/// iterations warm up `func`'s window one step at a time (Halide's loop
/// rewinding), instead of the first iteration computing the whole window.
/// The consumers of `func` skip the extra iterations.
struct Rewind {
    loop_name: String,
    func: String,
    iterations: i64,
}

fn var(name: &str) -> Expr {
    Expr::var_i32(name)
}

/// Does cutting the region of dimension `arg` of `f` keep its loop nest's
/// writes (and so its reads) inside what the uncut region's iteration
/// wrote? GuardWithIf writes exactly the region, and ShiftInwards writes
/// whole tiles ending at the region's max, which the uncut region's tiles
/// also covered. A RoundUp tile starting at the cut min can run past the
/// max, into rows no bounds check or allocation accounted for (so can the
/// stores of RoundUpAndBlend and PredicateLoads tiles), and a fused
/// loop split with ShiftInwards can shift back across rows: such
/// dimensions are not cut.
fn cut_stays_inside(f: &Function, arg: &str) -> bool {
    dim_splits(f, arg).iter().all(|s| match s {
        Split::Split { tail, .. } => !matches!(
            tail,
            TailStrategy::RoundUp | TailStrategy::RoundUpAndBlend | TailStrategy::PredicateLoads
        ),
        Split::Fuse { .. } => false,
        Split::Rename { .. } => true,
    })
}

/// Does some stage split dimension `arg` of `f` with ShiftInwards? A
/// shifted tile ends at the region's max and so reaches up to a tile's
/// width before a cut min: inside what the previous iteration computed in
/// the steady state, but before the first real iteration's region in the
/// warm-up iterations a rewind adds. Such slides are peeled, not rewound.
fn shifts_inwards(f: &Function, arg: &str) -> bool {
    dim_splits(f, arg).iter().any(|s| {
        matches!(
            s,
            Split::Split {
                tail: TailStrategy::ShiftInwards
                    | TailStrategy::ShiftInwardsAndBlend
                    | TailStrategy::Auto,
                ..
            }
        )
    })
}

/// The splits and fusions, in every stage of `f`, of loop dimensions made
/// from pure dimension `arg`.
fn dim_splits(f: &Function, arg: &str) -> Vec<Split> {
    let c = f.read();
    let mut out = vec![];
    for stage in std::iter::once(&c.stage).chain(c.updates.iter().map(|u| &u.stage)) {
        // The pure dimensions each loop dimension is made of.
        let mut parts: HashMap<String, HashSet<String>> = c
            .args
            .iter()
            .map(|a| (a.clone(), HashSet::from([a.clone()])))
            .collect();
        for s in &stage.splits {
            let (p, made) = match s {
                Split::Split { old, outer, inner, .. } => {
                    (parts.remove(old).unwrap_or_default(), vec![outer, inner])
                }
                Split::Fuse { inner, outer, fused } => {
                    let mut p = parts.remove(inner).unwrap_or_default();
                    p.extend(parts.remove(outer).unwrap_or_default());
                    (p, vec![fused])
                }
                Split::Rename { old, new } => (parts.remove(old).unwrap_or_default(), vec![new]),
            };
            if p.contains(arg) {
                out.push(s.clone());
            }
            for m in made {
                parts.insert(m.clone(), p.clone());
            }
        }
    }
    out
}

/// Can dimension `d` of `f`'s region be cut for every stage? Each update
/// must run over the pure variable of `d` and read `f` itself only at
/// that same coordinate in `d`: then every row of `d` goes through all
/// stages independently of the others, and computing only the new rows
/// of each iteration (through every stage) gives the same values as
/// recomputing the whole window. Specialized updates are not cut.
fn updates_slide_with(f: &Function, d: usize) -> bool {
    let c = f.read();
    let pure = &c.args[d];
    let is_pure = |e: &Expr| e.as_variable() == Some(pure.as_str());
    c.updates.iter().all(|u| {
        if !is_pure(&u.args[d]) || !u.specializations.is_empty() {
            return false;
        }
        let mut same_row = true;
        for e in u.args.iter().chain(&u.values) {
            crate::ir::visit::for_each_expr(e, &mut |x| {
                if let crate::ir::ExprNode::Call { name, args, .. } = x.node() {
                    if *name == c.name && !args.get(d).is_some_and(is_pure) {
                        same_row = false;
                    }
                }
            });
        }
        same_row
    })
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
        let lets = self.stack[from..to].iter().rev().filter_map(|f| match f {
            Frame::Let { name, value } => Some((name.as_str(), value)),
            _ => None,
        });
        substitute_lets(e, lets)
    }

    /// The innermost let called `name` on the stack from index `from`.
    fn let_on_stack(&self, name: &str, from: usize) -> Option<Expr> {
        self.stack[from..].iter().rev().find_map(|f| match f {
            Frame::Let { name: n, value } if n == name => Some(value.clone()),
            _ => None,
        })
    }

    /// If `name` is `f.sN.d.min` for a Func `f` realized around here, and
    /// N its last stage (whose region is what f's consumers need; the
    /// earlier stages' regions are defined from it): (f, index of d, index
    /// of f's Realize frame).
    fn parse_min_let(&self, name: &str) -> Option<(String, usize, usize)> {
        for (i, f) in self.stack.iter().enumerate().rev() {
            let Frame::Realize(func) = f else { continue };
            let Some(function) = self.env.funcs.get(func) else {
                continue;
            };
            let stage = format!(".s{}.", function.updates().len());
            let Some(rest) = name
                .strip_prefix(func.as_str())
                .and_then(|r| r.strip_prefix(stage.as_str()))
                .and_then(|r| r.strip_suffix(".min"))
            else {
                continue;
            };
            let args = function.args();
            if let Some(d) = args.iter().position(|a| a == rest) {
                return Some((func.clone(), d, i));
            }
        }
        None
    }

    /// Does `guard` (`a <= b` or `a < b`, at `stack[at]`) hold on a prefix
    /// of loop `w`'s iterations: `a` never shrinks as `w` grows and `b`
    /// does not depend on `w` (lets from the Realize at `inside` expanded)?
    fn holds_on_a_prefix(&self, guard: &Expr, w: &str, inside: usize, at: usize) -> bool {
        let ExprNode::Binary { a, b, .. } = guard.node() else {
            return false;
        };
        let (a, b) = (self.expand(a, inside, at), self.expand(b, inside, at));
        is_monotonic(&a, w).is_non_decreasing() && !expr_uses_var(&simplify(&b), w)
    }

    /// How many iterations early loop `stack[w_at]` can start to warm up a
    /// growing slide of `func` whose region in the slid dimension is
    /// `[lo, hi]` (expanded, in terms of the loop variable): `None` unless
    /// the conditions in the module comment hold.
    fn rewind_iterations(
        &self,
        func: &str,
        arg: &str,
        w_at: usize,
        lo: &Expr,
        hi: &Expr,
    ) -> Option<i64> {
        let Frame::Loop {
            name,
            for_type: ForType::Serial,
            body,
            ..
        } = &self.stack[w_at]
        else {
            return None;
        };
        let function = self.env.funcs.get(func)?;
        if !function.updates().is_empty()
            || self.rewinds.iter().any(|r| r.loop_name == *name)
            || shifts_inwards(function, arg)
        {
            return None;
        }
        let prev = substitute(name, &Expr::sub(var(name), Expr::i32(1)), hi);
        let step = simplify(&Expr::sub(hi.clone(), prev)).as_int_const()?;
        let width =
            simplify(&Expr::add(Expr::sub(hi.clone(), lo.clone()), Expr::i32(1))).as_int_const()?;
        if step <= 0 || width <= step || (width - step) % step != 0 {
            return None;
        }
        only_runs_func(body, func).then_some((width - step) / step)
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
        let function = self.env.funcs.get(func)?;
        let args = function.args();
        let last = function.updates().len();
        if !updates_slide_with(function, d) || !cut_stays_inside(function, &args[d]) {
            return None;
        }
        // A ring buffer gives each iteration its own slot: nothing is left
        // from the previous one to slide over.
        if function.read().schedule.ring_buffer.is_some() {
            return None;
        }
        // A shifted tile of an earlier stage would recompute points whose
        // later stages already ran in a previous iteration, and the later
        // stages would not run on them again: their results would be lost.
        if last > 0 && shifts_inwards(function, &args[d]) {
            return None;
        }
        // The earlier stages' regions in d must follow the last stage's:
        // each `f.sK.d.min` / `.max` ahead is the next stage's let itself.
        for k in 0..last {
            for end in ["min", "max"] {
                let next = Expr::var_i32(format!("{func}.s{}.{}.{end}", k + 1, args[d]));
                match let_ahead(body, &format!("{func}.s{k}.{}.{end}", args[d])) {
                    Some(v) if crate::ir::equal(&v, &next) => {}
                    _ => return None,
                }
            }
        }
        let prefix = format!("{func}.s{last}.");
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
        // nothing), but for guards, checked below to hold on a prefix of
        // the loop's iterations (no iteration runs after a skipped one).
        let first_candidate = self.stack[inside..]
            .iter()
            .rposition(|f| matches!(f, Frame::Condition { guard: None }))
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
        let Frame::Loop {
            for_type, extent, ..
        } = &self.stack[w_at]
        else {
            return None;
        };
        if !matches!(for_type, ForType::Serial | ForType::Unrolled) {
            return None;
        }
        for i in w_at + 1..top {
            if let Frame::Condition { guard: Some(g) } = &self.stack[i] {
                if !self.holds_on_a_prefix(g, &w_name, inside, i) {
                    return None;
                }
            }
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
            if i != d
                && (expr_uses_var(&full(self, a), &w_name)
                    || expr_uses_var(&full(self, b), &w_name))
            {
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
        let steady = Expr::likely_if_innermost(Expr::gt(wv.clone(), w_min));
        // The previous iteration's bound, in terms of names in scope here.
        let local = |me: &Self, e: &Expr| prev(&me.expand(e, w_at + 1, top));
        self.slides.push(Slide {
            func: func.to_string(),
            dim: args[d].clone(),
            loop_name: w_name.clone(),
        });
        if growing {
            let prev_max = local(self, &regions[d].1);
            if let Some(iterations) = self.rewind_iterations(func, &args[d], w_at, &lo, &hi) {
                let orig = var(&format!("{w_name}.loop_min.orig"));
                let lo_at_orig = substitute(&w_name, &orig, &self.expand(min_value, w_at + 1, top));
                self.rewinds.push(Rewind {
                    loop_name: w_name.clone(),
                    func: func.to_string(),
                    iterations,
                });
                return Some(Expr::max(Expr::add(prev_max, Expr::i32(1)), lo_at_orig));
            }
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
}

/// Does `body` (a loop body) run nothing but `func`'s produce and consume,
/// and lets, loops and allocations around them? Anything else would also
/// run on a rewound loop's warm-up iterations, outside its region.
fn only_runs_func(body: &Stmt, func: &str) -> bool {
    match body.node() {
        StmtNode::ProducerConsumer { name, .. } => name == func,
        StmtNode::LetStmt { body, .. } | StmtNode::For { body, .. } => only_runs_func(body, func),
        StmtNode::Allocate { body, .. } => only_runs_func(body, func),
        StmtNode::Free { .. } => true,
        StmtNode::Block(stmts) => stmts.iter().all(|s| only_runs_func(s, func)),
        // A guard on the way to the compute site (checked by `try_slide`
        // to hold on a prefix of the loop, so on its warm-up iterations).
        StmtNode::IfThenElse {
            then_case,
            else_case: None,
            ..
        } => only_runs_func(then_case, func),
        _ => false,
    }
}

/// Runs the body of `func`'s consume nodes only where `condition` holds:
/// `likely_if_innermost` when no loop lies between the rewound loop and the
/// consume (a branch per iteration, no peeled copy), else `likely`.
struct GuardConsume<'a> {
    func: &'a str,
    condition: Expr,
    /// Loops entered between the rewound loop and here.
    depth: usize,
}

impl Mutator for GuardConsume<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::ProducerConsumer {
                name,
                is_producer: false,
                body,
            } if name == self.func => {
                let guard = if self.depth == 0 {
                    Expr::likely_if_innermost(self.condition.clone())
                } else {
                    Expr::likely(self.condition.clone())
                };
                Stmt::consumer(name.clone(), Stmt::if_then_else(guard, body.clone(), None))
            }
            StmtNode::For { .. } => {
                self.depth += 1;
                let out = mutate_stmt_children(self, s);
                self.depth -= 1;
                out
            }
            _ => mutate_stmt_children(self, s),
        }
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
                    body: body.clone(),
                });
                let b = self.mutate_stmt(body);
                self.stack.pop();
                if let Some(at) = self.rewinds.iter().position(|r| r.loop_name == *name) {
                    let r = self.rewinds.remove(at);
                    let orig_name = format!("{name}.loop_min.orig");
                    let orig = var(&orig_name);
                    let b = GuardConsume {
                        func: &r.func,
                        condition: Expr::ge(var(name), orig.clone()),
                        depth: 0,
                    }
                    .mutate_stmt(&b);
                    let early = Expr::i32(r.iterations);
                    let rewound = Stmt::for_loop(
                        name.clone(),
                        Expr::sub(orig, early.clone()),
                        Expr::add(extent.clone(), early),
                        *for_type,
                        b,
                    );
                    return Stmt::let_stmt(orig_name, min.clone(), rewound);
                }
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
            StmtNode::IfThenElse {
                condition,
                else_case,
                ..
            } => {
                let guard = match (condition.as_intrinsic(Intrinsic::Likely), else_case) {
                    (Some(args), None) => match args[0].node() {
                        ExprNode::Binary {
                            op: BinOp::LE | BinOp::LT,
                            ..
                        } => Some(args[0].clone()),
                        _ => None,
                    },
                    _ => None,
                };
                self.stack.push(Frame::Condition { guard });
                let out = mutate_stmt_children(self, s);
                self.stack.pop();
                out
            }
            StmtNode::Realize { name, .. } => {
                self.stack.push(Frame::Realize(name.clone()));
                let out = mutate_stmt_children(self, s);
                self.stack.pop();
                out
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}
