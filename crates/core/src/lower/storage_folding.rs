//! Storage folding (the idea of Halide's StorageFolding.cpp, written anew):
//! a Func whose accessed region walks monotonically along a dimension as a
//! serial loop runs only needs storage for the span one iteration touches;
//! that dimension is stored modulo a fold factor (a circular buffer).
//!
//! Assumes: the output of sliding window and the simplifier, before
//! storage flattening (Realize, Provide and Func calls are still there);
//! `slides` are the slides sliding window made.
//!
//! Guarantees: for the Realize of a Func `f`, consider the serial loops `L`
//! inside it, outermost first, that contain every access (call or Provide)
//! of `f` in the Realize, are not inside f's own produce, and are not
//! inside a loop `f` slid over (each run of `L` must compute what it
//! reads). Dimension `d` is folded over `L` when the box of `f` touched by
//! one iteration of `L` has a min that only grows with L's variable (or a
//! max that only shrinks) and an extent bounded by a constant `K` on the
//! first iteration and on the others; the factor is the next power of two
//! from `K` (at most 1024), or the user's `fold_storage` factor, checked by
//! an assertion at the top of each iteration unless proven. Folding is
//! sound under that condition: a value written at coordinate `c` is
//! overwritten only by a coordinate `c' = c (mod factor)` touched in the
//! same window, which is `c` itself. Automatic folds skip dimensions that
//! a vectorized loop indexes (they would turn vector accesses into
//! gathers), as Halide does. A folded dimension's Realize bounds become
//! `[0, factor)` and every index `i` in it `i % factor` (never negative).
//! A requested fold whose region cannot be proven to move monotonically is
//! checked at run time, as Halide does: a tracker `f.fold.<dim>.<loop>`
//! (an int32 allocated around the Realize, starting at the realized
//! region's first row, or last when folding backwards) holds the leading
//! edge of the rows stored (for a forward fold, the largest coordinate
//! produced so far); each produce of `f` moves it and asserts that it
//! writes inside the window `(edge - factor, edge]`, each consume asserts
//! that it reads inside it (Halide's "accessed out of order").
//!
//! An async Func is folded only where the schedule asks, over a loop where
//! the rows it provides and reads are proven monotonic; its producer, on
//! another thread, is paced by a folding semaphore (see `pacing`).

use std::collections::HashSet;

use super::environment::Environment;
use super::sliding_window::Slide;
use crate::analysis::bounds::{box_provided, box_required, box_touched, Interval, Scope};
use crate::analysis::monotonic::{is_monotonic, Monotonic};
use crate::analysis::simplify::{can_prove, simplify, Info, Simplifier, VarFact};
use crate::analysis::substitute::substitute;
use crate::error::{Error, Result};
use crate::ir::visit::{
    expr_uses_var, mutate_expr_children, mutate_stmt_children, walk_expr, walk_stmt,
};
use crate::ir::{
    CallKind, Expr, ExprNode, ForType, MemoryType, Mutator, Range, Stmt, StmtNode, Type,
    Visitor,
};
use crate::schedule::StorageFold;

/// Largest automatic fold factor.
const MAX_FOLD: i64 = 1024;

pub fn storage_folding(s: &Stmt, env: &Environment, slides: &[Slide]) -> Result<Stmt> {
    let mut m = StorageFolding {
        env,
        slides,
        error: None,
    };
    let out = m.mutate_stmt(s);
    match m.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

struct StorageFolding<'a> {
    env: &'a Environment,
    slides: &'a [Slide],
    error: Option<Error>,
}

impl Mutator for StorageFolding<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::Realize {
            name,
            types,
            memory_type,
            bounds,
            condition,
            body,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        let body = self.mutate_stmt(body);
        let Some(f) = self.env.funcs.get(name) else {
            return s.clone();
        };
        // An async Func is folded only where the schedule asks (Halide
        // also folds it automatically, which saves memory, not time).
        let is_async = f.read().schedule.async_;
        if is_async && f.read().schedule.folds.is_empty() {
            return Stmt::new(StmtNode::Realize {
                name: name.clone(),
                types: types.clone(),
                memory_type: *memory_type,
                bounds: bounds.clone(),
                condition: condition.clone(),
                body,
            });
        }
        let mut search = FoldSearch {
            func: name,
            args: f.args(),
            requested: f.read().schedule.folds.clone(),
            slid_loops: self
                .slides
                .iter()
                .filter(|sl| sl.func == *name)
                .map(|sl| sl.loop_name.clone())
                .collect(),
            accesses: count_accesses(&body, name),
            is_async,
            folds: vec![],
            trackers: vec![],
            semaphore: None,
            error: None,
        };
        let body = search.mutate_stmt(&body);
        if let Some(e) = search.error {
            self.error.get_or_insert(e);
        }
        let mut folded = bounds.clone();
        let body = if search.folds.is_empty() {
            body
        } else {
            for (d, factor) in &search.folds {
                folded[*d] = Range::new(Expr::i32(0), factor.clone());
            }
            FoldIndices {
                func: name,
                folds: &search.folds,
            }
            .mutate_stmt(&body)
        };
        let realize = Stmt::new(StmtNode::Realize {
            name: name.clone(),
            types: types.clone(),
            memory_type: *memory_type,
            bounds: folded,
            condition: condition.clone(),
            body,
        });
        let realize = match &search.semaphore {
            Some(factor) => {
                super::async_producers::with_semaphore(&folding_semaphore_name(name), factor.clone(), realize)
            }
            None => realize,
        };
        search
            .trackers
            .iter()
            .fold(realize, |body, t| t.allocate_around(body, &bounds[t.dim]))
    }
}

/// Finds the loops to fold one Func over, inside its Realize.
struct FoldSearch<'a> {
    func: &'a str,
    args: Vec<String>,
    requested: Vec<StorageFold>,
    slid_loops: HashSet<String>,
    /// Accesses of the Func in the whole Realize.
    accesses: usize,
    /// The Func is async: its producer runs ahead of its consumer, on
    /// another thread, as far as the folding semaphore lets it.
    is_async: bool,
    /// The fold factor of an async Func's fold, whose semaphore starts at it.
    semaphore: Option<Expr>,
    /// (dimension, factor), at most one per dimension.
    folds: Vec<(usize, Expr)>,
    /// Run-time trackers of requested folds not proven monotonic.
    trackers: Vec<Tracker>,
    error: Option<Error>,
}

/// The leading edge of a fold checked at run time: an int32 named `name`
/// (allocated around the Realize) for dimension `dim`.
struct Tracker {
    name: String,
    dim: usize,
    forward: bool,
}

impl Tracker {
    /// The tracker's allocation around `body`, starting at the first row
    /// of the realized range `r` (the last, folding backwards).
    fn allocate_around(&self, body: Stmt, r: &Range) -> Stmt {
        let init = if self.forward {
            r.min.clone()
        } else {
            Expr::sub(Expr::add(r.min.clone(), r.extent.clone()), Expr::i32(1))
        };
        let store = Stmt::store(&self.name, init, Expr::i32(0), Expr::bool_const(true));
        Stmt::new(StmtNode::Allocate {
            name: self.name.clone(),
            ty: Type::i32(),
            memory_type: MemoryType::Stack,
            extents: vec![Expr::i32(1)],
            condition: Expr::bool_const(true),
            body: Stmt::block(vec![store, body]),
        })
    }
}

impl Mutator for FoldSearch<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::ProducerConsumer {
                name,
                is_producer: true,
                ..
            } if name == self.func => s.clone(),
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                if !matches!(for_type, ForType::Serial | ForType::Unrolled)
                    || count_accesses(body, self.func) != self.accesses
                {
                    return s.clone();
                }
                let (checked, keep_looking) = self.fold_over(name, min, extent, body);
                let b = if keep_looking && !self.slid_loops.contains(name) {
                    self.mutate_stmt(&checked)
                } else {
                    checked
                };
                if b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b)
                }
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

impl FoldSearch<'_> {
    /// Fold what can be folded over the loop `v` (min `vmin`, body
    /// `body`). Returns the body (with fold-size assertions added) and
    /// whether inner loops may still be searched (no fold here, or the
    /// folded spans of consecutive iterations never overlap).
    fn fold_over(&mut self, v: &str, vmin: &Expr, vextent: &Expr, body: &Stmt) -> (Stmt, bool) {
        let empty = Scope::default();
        // What the body writes and reads of the Func, in one walk.
        let Some(boxed) = box_touched(body, self.func, &empty) else {
            return (body.clone(), true);
        };
        let mut checks: Vec<Stmt> = vec![];
        let mut overlapping = false;
        let mut body_checked = body.clone();
        let mut pacing: Option<(Expr, Expr)> = None;
        for d in (0..self.args.len()).rev() {
            if self.folds.iter().any(|(fd, _)| *fd == d) {
                continue;
            }
            let Some(Interval {
                min: Some(lo),
                max: Some(hi),
            }) = boxed.get(d).cloned()
            else {
                continue;
            };
            let (lo, hi) = (simplify(&lo), simplify(&hi));
            if lo.is_const() || hi.is_const() {
                continue;
            }
            let var_name = self.args[d].clone();
            let moves = expr_uses_var(&lo, v) || expr_uses_var(&hi, v);
            let requested = self
                .requested
                .iter()
                .find(|f| f.var == var_name && moves)
                .cloned();
            if self.is_async && requested.is_none() {
                continue;
            }
            let mut forward = is_monotonic(&lo, v) == Monotonic::Increasing;
            let mut backward = is_monotonic(&hi, v) == Monotonic::Decreasing;
            let mut tracked = false;
            if !forward && !backward {
                let Some(r) = &requested else {
                    continue;
                };
                if self.is_async {
                    self.error.get_or_insert(Error::unimplemented(&format!(
                        "fold_storage({var_name}) on the async Func {} over loop {v}, where the rows it touches are not proven to move monotonically (Halide tracks them at run time)",
                        self.func
                    )));
                    continue;
                }
                // Checked as the loop runs instead.
                let tracker = Tracker {
                    name: format!("{}.fold.{var_name}.{v}", self.func),
                    dim: d,
                    forward: r.fold_forward,
                };
                match track_fold(&body_checked, self.func, &var_name, v, &tracker, &r.factor) {
                    Ok(b) => body_checked = b,
                    Err(e) => {
                        self.error.get_or_insert(e);
                        continue;
                    }
                }
                self.trackers.push(tracker);
                forward = r.fold_forward;
                backward = !forward;
                tracked = true;
            }
            let extent = simplify(&Expr::add(Expr::sub(hi.clone(), lo.clone()), Expr::i32(1)));
            let factor = match requested {
                Some(r) if tracked => r.factor,
                Some(r) => {
                    let fits = Expr::le(extent.clone(), r.factor.clone());
                    // Proven for every iteration from the loop's min on?
                    let bounded = match (max_extent(&extent, v, vmin), r.factor.as_int_const()) {
                        (Some(k), Some(f)) => k <= f,
                        _ => false,
                    };
                    if !bounded && !can_prove(&fits) {
                        checks.push(Stmt::assert(
                            fits,
                            fold_too_small(self.func, &var_name, &r.factor, v, &extent),
                        ));
                    }
                    r.factor
                }
                None => {
                    let Some(k) = max_extent(&extent, v, vmin) else {
                        continue;
                    };
                    if k > MAX_FOLD || indexed_by_vector_loop(body, self.func, d) {
                        continue;
                    }
                    Expr::i32((k.max(1) as u64).next_power_of_two() as i64)
                }
            };
            if self.is_async {
                if self.semaphore.is_some() {
                    self.error.get_or_insert(Error::unimplemented(&format!(
                        "fold_storage() of two dimensions of the async Func {}",
                        self.func
                    )));
                    continue;
                }
                match self.pacing(body, d, v, vmin, vextent, forward) {
                    Ok(p) => pacing = Some(p),
                    Err(e) => {
                        self.error.get_or_insert(e);
                        continue;
                    }
                }
                self.semaphore = Some(factor.clone());
            }
            self.folds.push((d, factor));
            // The next iteration's span starts after this one ends?
            let next = |e: &Expr| substitute(v, &Expr::add(Expr::var_i32(v), Expr::i32(1)), e);
            let apart = if forward {
                Expr::lt(hi.clone(), next(&lo))
            } else {
                Expr::gt(lo.clone(), next(&hi))
            };
            overlapping |= !can_prove(&apart);
        }
        let out = if checks.is_empty() {
            body_checked
        } else {
            checks.push(body_checked);
            Stmt::block(checks)
        };
        let out = match pacing {
            Some((acquire, release)) => {
                super::async_producers::paced_by(&folding_semaphore_name(self.func), acquire, out, release)
            }
            None => out,
        };
        (out, !overlapping)
    }

    /// How many rows of dimension `d` an iteration of loop `v` (over
    /// `[vmin, vmin + vextent)`) of an async Func's fold acquires before it
    /// is produced, and releases after it is consumed. The semaphore
    /// starts at the factor and counts the slots free for the producer:
    /// folding forwards, by the end of iteration `i` the producer has
    /// acquired `P(i) - R(vmin) + 1` (P: the last row provided, R: the
    /// first row required), and once iteration `j` is consumed the
    /// consumer has released `R(j + 1) - R(vmin)`; so the producer writes
    /// rows up to `P(i)` only while `P(i) - R(j + 1) < factor`, and never
    /// over a row the consumer still reads. The last iteration releases
    /// the rest, so the counts balance for the next run of the loop.
    /// Both amounts must be proven non-negative.
    fn pacing(
        &self,
        body: &Stmt,
        d: usize,
        v: &str,
        vmin: &Expr,
        vextent: &Expr,
        forward: bool,
    ) -> Result<(Expr, Expr)> {
        let empty = Scope::default();
        let edge = |b: Option<Vec<Interval>>, upper: bool| {
            let i = b?.get(d).cloned()?;
            if upper { i.max } else { i.min }.map(|e| simplify(&e))
        };
        // Forwards: the last row provided and the first required.
        let produced = edge(box_provided(body, self.func, &empty), forward);
        let required = edge(box_required(body, self.func, &empty), !forward);
        let (Some(p), Some(r)) = (produced, required) else {
            return Err(Error::unimplemented(&format!(
                "fold_storage() on the async Func {}: the rows that loop {v} provides or reads are unbounded",
                self.func
            )));
        };
        let direction = if forward { Monotonic::Increasing } else { Monotonic::Decreasing };
        let moves = |e: &Expr| matches!(is_monotonic(e, v), Monotonic::Constant) || is_monotonic(e, v) == direction;
        if !moves(&p) || !moves(&r) {
            return Err(Error::unimplemented(&format!(
                "fold_storage() on the async Func {} over loop {v}, where the rows provided and read are not proven to move {} (Halide tracks them at run time)",
                self.func,
                if forward { "forwards" } else { "backwards" }
            )));
        }
        let at = |e: &Expr, k: i64| substitute(v, &Expr::add(Expr::var_i32(v), Expr::i32(k)), e);
        // Rows from the first required to the last provided, forwards.
        let span = |p: &Expr, r: &Expr| {
            let (a, b) = if forward { (p.clone(), r.clone()) } else { (r.clone(), p.clone()) };
            Expr::add(Expr::sub(a, b), Expr::i32(1))
        };
        let ahead = |later: Expr, earlier: Expr| if forward { Expr::sub(later, earlier) } else { Expr::sub(earlier, later) };
        let here = Expr::var_i32(v);
        let vmax = Expr::sub(Expr::add(vmin.clone(), vextent.clone()), Expr::i32(1));
        let acquire = Expr::select(
            Expr::gt(here.clone(), vmin.clone()),
            ahead(p.clone(), at(&p, -1)),
            span(&p, &r),
        );
        let release = Expr::select(Expr::lt(here, vmax), ahead(at(&r, 1), r.clone()), span(&p, &r));
        Ok((simplify(&acquire), simplify(&release)))
    }
}

/// The semaphore pacing the producer of the async Func `f`'s fold; the fork
/// (async_producers.rs) gives its acquires to the producer and its releases
/// to the consumer.
pub(super) fn folding_semaphore_name(f: &str) -> String {
    format!("{f}.folding_semaphore")
}

/// Halide's run-time tracking of a fold (for a sequential Func without an
/// extern definition): at each produce of `func` in `body`, the leading
/// edge moves to the farthest row written and the rows written must fit
/// the fold and lie inside the window behind the edge; at each consume,
/// the rows read must lie inside that window.
fn track_fold(
    body: &Stmt,
    func: &str,
    var: &str,
    v: &str,
    t: &Tracker,
    factor: &Expr,
) -> Result<Stmt> {
    struct Inject<'a> {
        func: &'a str,
        var: &'a str,
        v: &'a str,
        t: &'a Tracker,
        factor: &'a Expr,
        error: Option<Error>,
    }
    impl Inject<'_> {
        fn edge(&self) -> Expr {
            Expr::load(
                Type::i32(),
                self.t.name.clone(),
                Expr::i32(0),
                Expr::bool_const(true),
            )
        }
        fn bad_fold(&self) -> Expr {
            Expr::error(
                crate::ir::ErrorCode::BadFold,
                vec![Expr::string(format!(
                    "The folded storage dimension {} of {} was accessed out of order by loop {}.",
                    self.var, self.func, self.v
                ))],
            )
        }
        /// The rows of the fold's dimension `b` spans; an unbounded span
        /// cannot be checked, which is an error.
        fn span(&mut self, b: Option<Vec<Interval>>) -> Option<(Expr, Expr)> {
            match b?.get(self.t.dim).cloned() {
                Some(Interval {
                    min: Some(lo),
                    max: Some(hi),
                }) => Some((lo, hi)),
                _ => {
                    self.error.get_or_insert(Error::unimplemented(format!(
                        "fold_storage of {}.{}: the rows of {} that an iteration of loop {} touches are unbounded, so the fold cannot be checked at run time",
                        self.func, self.var, self.func, self.v
                    )));
                    None
                }
            }
        }
        fn produce_checks(&mut self, body: &Stmt) -> Option<Stmt> {
            let (lo, hi) = self.span(box_provided(body, self.func, &Scope::default()))?;
            let edge_name = format!("{}.next", self.t.name);
            let edge = Expr::var_i32(&edge_name);
            let (new_edge, inside) = if self.t.forward {
                let e = Expr::max(hi.clone(), self.edge());
                (
                    e,
                    Expr::gt(lo.clone(), Expr::sub(edge.clone(), self.factor.clone())),
                )
            } else {
                let e = Expr::min(lo.clone(), self.edge());
                (
                    e,
                    Expr::lt(hi.clone(), Expr::add(edge.clone(), self.factor.clone())),
                )
            };
            let extent = Expr::add(Expr::sub(hi, lo), Expr::i32(1));
            let checks = Stmt::block(vec![
                Stmt::assert(
                    Expr::le(extent.clone(), self.factor.clone()),
                    fold_too_small(self.func, self.var, self.factor, self.v, &extent),
                ),
                Stmt::assert(inside, self.bad_fold()),
                Stmt::store(&self.t.name, edge, Expr::i32(0), Expr::bool_const(true)),
            ]);
            Some(Stmt::let_stmt(edge_name, new_edge, checks))
        }
        fn consume_check(&mut self, body: &Stmt) -> Option<Stmt> {
            let (lo, hi) = self.span(box_required(body, self.func, &Scope::default()))?;
            let edge = self.edge();
            let inside = if self.t.forward {
                Expr::and(
                    Expr::gt(lo, Expr::sub(edge.clone(), self.factor.clone())),
                    Expr::le(hi, edge),
                )
            } else {
                Expr::and(
                    Expr::lt(hi, Expr::add(edge.clone(), self.factor.clone())),
                    Expr::ge(lo, edge),
                )
            };
            Some(Stmt::assert(inside, self.bad_fold()))
        }
    }
    impl Mutator for Inject<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            e.clone()
        }
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                // Nothing else of the Func's is inside its own produce.
                StmtNode::ProducerConsumer {
                    name,
                    is_producer: true,
                    body,
                } if name == self.func => {
                    let checks = self.produce_checks(body);
                    Stmt::producer(name.clone(), prepend(checks, body.clone()))
                }
                StmtNode::ProducerConsumer {
                    name,
                    is_producer: false,
                    body,
                } if name == self.func => {
                    let check = self.consume_check(body);
                    let inner = self.mutate_stmt(body);
                    Stmt::consumer(name.clone(), prepend(check, inner))
                }
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    let mut inject = Inject {
        func,
        var,
        v,
        t,
        factor,
        error: None,
    };
    let out = inject.mutate_stmt(body);
    match inject.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// `s` after `first`, if any.
fn prepend(first: Option<Stmt>, s: Stmt) -> Stmt {
    match first {
        Some(f) => Stmt::block(vec![f, s]),
        None => s,
    }
}

/// Halide's fold-factor-too-small error, as an assertion message.
fn fold_too_small(func: &str, var: &str, factor: &Expr, v: &str, extent: &Expr) -> Expr {
    Expr::error(
        crate::ir::ErrorCode::FoldFactorTooSmall,
        vec![
            Expr::string("The fold factor ("),
            factor.clone(),
            Expr::string(format!(") of dimension {var} of {func} is too small to store the required region accessed by loop {v} (")),
            extent.clone(),
            Expr::string(")."),
        ],
    )
}

/// A constant bound on `extent` (a function of loop variable `v`, which
/// starts at `vmin`) over the first iteration and over all later ones,
/// where sliding window's `likely(v > vmin)` conditions hold.
fn max_extent(extent: &Expr, v: &str, vmin: &Expr) -> Option<i64> {
    let first = simplify(&substitute(v, vmin, extent)).as_int_const();
    // Later iterations: v = vmin + 1 + t with t >= 0.
    let t = format!("{v}.steps_after_first");
    let later = substitute(
        v,
        &Expr::add(Expr::add(vmin.clone(), Expr::i32(1)), Expr::var_i32(&t)),
        extent,
    );
    let mut s = Simplifier::new();
    s.push_var(&t, VarFact::Info(Info::bounds(Some(0), None)));
    let later = s.mutate(&later);
    let later = later.as_int_const().or_else(|| s.info(&later).max)?;
    Some(first?.max(later))
}

/// Does a vectorized loop's variable reach index `d` of an access of `func`?
fn indexed_by_vector_loop(s: &Stmt, func: &str, d: usize) -> bool {
    struct Find<'a> {
        func: &'a str,
        d: usize,
        vector_vars: Vec<String>,
        found: bool,
    }
    impl Find<'_> {
        fn check(&mut self, args: &[Expr]) {
            if let Some(a) = args.get(self.d) {
                self.found |= self.vector_vars.iter().any(|v| expr_uses_var(a, v));
            }
        }
        fn uses_vector(&self, e: &Expr) -> bool {
            self.vector_vars.iter().any(|v| expr_uses_var(e, v))
        }
    }
    impl Visitor for Find<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match e.node() {
                ExprNode::Call {
                    name,
                    args,
                    kind: CallKind::Halide { .. },
                } if name == self.func => self.check(args),
                ExprNode::Let { name, value, body } if self.uses_vector(value) => {
                    self.visit_expr(value);
                    self.vector_vars.push(name.clone());
                    self.visit_expr(body);
                    self.vector_vars.pop();
                    return;
                }
                _ => {}
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::Provide { name, args, .. } if name == self.func => self.check(args),
                StmtNode::For {
                    name,
                    for_type: ForType::Vectorized,
                    min,
                    extent,
                    body,
                } => {
                    self.visit_expr(min);
                    self.visit_expr(extent);
                    self.vector_vars.push(name.clone());
                    self.visit_stmt(body);
                    self.vector_vars.pop();
                    return;
                }
                StmtNode::LetStmt { name, value, body } if self.uses_vector(value) => {
                    self.visit_expr(value);
                    self.vector_vars.push(name.clone());
                    self.visit_stmt(body);
                    self.vector_vars.pop();
                    return;
                }
                _ => {}
            }
            walk_stmt(self, s)
        }
    }
    let mut f = Find {
        func,
        d,
        vector_vars: vec![],
        found: false,
    };
    f.visit_stmt(s);
    f.found
}

/// Calls and Provides of `func` in `s`.
fn count_accesses(s: &Stmt, func: &str) -> usize {
    struct Count<'a> {
        func: &'a str,
        n: usize,
    }
    impl Visitor for Count<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprNode::Call {
                name,
                kind: CallKind::Halide { .. },
                ..
            } = e.node()
            {
                if name == self.func {
                    self.n += 1;
                }
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Provide { name, .. } = s.node() {
                if name == self.func {
                    self.n += 1;
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut c = Count { func, n: 0 };
    c.visit_stmt(s);
    c.n
}

/// Rewrites every access of `func` to index folded dimensions modulo
/// their factor.
struct FoldIndices<'a> {
    func: &'a str,
    folds: &'a [(usize, Expr)],
}

impl FoldIndices<'_> {
    fn fold(&self, args: &[Expr]) -> Vec<Expr> {
        let mut out = args.to_vec();
        for (d, factor) in self.folds {
            out[*d] = Expr::modulo(out[*d].clone(), factor.clone());
        }
        out
    }
}

impl Mutator for FoldIndices<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        if let ExprNode::Call {
            name,
            args,
            kind: kind @ CallKind::Halide { .. },
        } = e.node()
        {
            if name == self.func {
                return Expr::call(e.ty(), name.clone(), self.fold(args), kind.clone());
            }
        }
        e
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        if let StmtNode::Provide {
            name,
            values,
            args,
            predicate,
        } = s.node()
        {
            if name == self.func {
                return Stmt::provide(
                    name.clone(),
                    values.clone(),
                    self.fold(args),
                    predicate.clone(),
                );
            }
        }
        s
    }
}
