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
//! A requested fold that cannot be proven monotonic is an error (Halide
//! would track the footprint at run time; that is not implemented).

use std::collections::HashSet;

use super::environment::Environment;
use super::sliding_window::Slide;
use crate::analysis::bounds::{box_provided, box_required, Interval, Scope};
use crate::analysis::monotonic::{is_monotonic, Monotonic};
use crate::analysis::simplify::{can_prove, simplify, Info, Simplifier, VarFact};
use crate::analysis::substitute::substitute;
use crate::error::{Error, Result};
use crate::ir::visit::{
    expr_uses_var, mutate_expr_children, mutate_stmt_children, walk_expr, walk_stmt,
};
use crate::ir::{
    CallKind, Expr, ExprNode, ForType, Intrinsic, Mutator, Range, Stmt, StmtNode, Type, Visitor,
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
            folds: vec![],
            error: None,
        };
        let body = search.mutate_stmt(&body);
        if let Some(e) = search.error {
            self.error.get_or_insert(e);
        }
        let mut bounds = bounds.clone();
        let body = if search.folds.is_empty() {
            body
        } else {
            for (d, factor) in &search.folds {
                bounds[*d] = Range::new(Expr::i32(0), factor.clone());
            }
            FoldIndices {
                func: name,
                folds: &search.folds,
            }
            .mutate_stmt(&body)
        };
        Stmt::new(StmtNode::Realize {
            name: name.clone(),
            types: types.clone(),
            memory_type: *memory_type,
            bounds,
            condition: condition.clone(),
            body,
        })
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
    /// (dimension, factor), at most one per dimension.
    folds: Vec<(usize, Expr)>,
    error: Option<Error>,
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
                let (checked, keep_looking) = self.fold_over(name, min, body);
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
    fn fold_over(&mut self, v: &str, vmin: &Expr, body: &Stmt) -> (Stmt, bool) {
        let empty = Scope::new();
        let boxed = match (
            box_provided(body, self.func, &empty),
            box_required(body, self.func, &empty),
        ) {
            (Some(p), Some(r)) => p.iter().zip(&r).map(|(a, b)| a.union(b)).collect(),
            (Some(b), None) | (None, Some(b)) => b,
            (None, None) => return (body.clone(), true),
        };
        let mut checks: Vec<Stmt> = vec![];
        let mut overlapping = false;
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
            let forward = is_monotonic(&lo, v) == Monotonic::Increasing;
            let backward = is_monotonic(&hi, v) == Monotonic::Decreasing;
            if !forward && !backward {
                if requested.is_some() {
                    self.error.get_or_insert(Error::unimplemented(format!(
                        "fold_storage of {}.{var_name}: the region of {} that loop {v} accesses does not move monotonically, so the fold needs run-time tracking of the live region",
                        self.func, self.func
                    )));
                }
                continue;
            }
            let extent = simplify(&Expr::add(Expr::sub(hi.clone(), lo.clone()), Expr::i32(1)));
            let factor = match requested {
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
            body.clone()
        } else {
            checks.push(body.clone());
            Stmt::block(checks)
        };
        (out, !overlapping)
    }
}

/// Halide's fold-factor-too-small error, as an assertion message.
fn fold_too_small(func: &str, var: &str, factor: &Expr, v: &str, extent: &Expr) -> Expr {
    Expr::intrinsic(
        Type::i32(),
        Intrinsic::Error,
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
