//! Loop partitioning (the idea of Halide's PartitionLoops, written anew).
//!
//! Assumes: `likely(c)` marks a boolean `c` expected to hold for most of a
//! loop's iterations, and `min(likely(a), b)` / `max(likely(a), b)` (either
//! operand order) a clamp expected to pick `a`. Loop variables are signed
//! integers of 32 or 64 bits and index arithmetic on them does not overflow
//! (Halide's convention).
//!
//! Guarantees: a Serial or Parallel loop whose body (including inner loops)
//! holds such marks whose condition is solvable for the loop variable is
//! partitioned. A Serial loop is split into prologue / steady state /
//! epilogue loops that together cover exactly the original iterations in
//! the original order; a Parallel loop stays one loop whose body picks the
//! steady state with an `if`, the
//! other iterations running the body with its marks dropped (Halide's
//! choice: no core waits on a one-iteration prologue). A mark inside an
//! inner loop counts when its condition can be made to hold for all of
//! that loop's iterations (each comparison taken at the end of the inner
//! range where it is tightest, from its monotonicity: Halide's
//! `and_condition_over_domain`), so the outer loop is partitioned once
//! instead of the inner loop inside every outer iteration. In the steady
//! state every solved mark is known to hold, so `likely(c)` becomes `true`
//! and a marked clamp becomes its likely operand, and the steady body is
//! simplified. Conditions are solved only when they are linear in the loop
//! variable with constant coefficients, built from comparisons, `&&`, `!`
//! and lets and loops bound inside the loop; a vector condition (after
//! vectorization: `likely` ramps, clamps of ramps against broadcasts) is
//! solved for all of its lanes at once through the lanes' bounds when
//! those are linear (ramps with constant strides, broadcasts, sums of
//! them); conditions that read memory, call impure
//! functions or are not monotonic in an inner loop's variable are left
//! alone, and a loop
//! with nothing solvable is returned unchanged. Outer loops are partitioned
//! before the loops inside each of their pieces; inside a prologue that
//! peels first iterations one more loop level is partitioned in full and
//! below that only innermost loops (their marks become
//! `likely_if_innermost`); other prologues and epilogues partition only
//! innermost loops, or nothing when they hold a loop nest (see
//! `Partitioner`). Loops that provably run at
//! most `MIN_PARTITIONED_EXTENT` iterations are left whole.
//! `strip_likely` removes the remaining marks afterwards.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use crate::analysis::monotonic::{is_monotonic, Monotonic};
use crate::analysis::simplify::{can_prove, simplify_stmt};
use crate::analysis::substitute::{substitute, substitute_lets, substitute_lets_unless_opaque};
use crate::error::{Error, Result};
use crate::ir::visit::{
    contains_loop, expr_uses_var, for_each_expr, for_each_expr_in_stmt, for_each_stmt, mutate_expr_children,
    mutate_stmt_children,
};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, ForType, Intrinsic, MathFn, Mutator, Stmt, StmtNode, Type};
use crate::lower::unroll_loops::{const_int_value, fold_binary};
use crate::schedule::Partition;

/// The partition policies the schedules set (`partition(x, ...)`), by loop
/// name; loops not listed are `Auto`. Collects the first `Always` loop
/// that could not be partitioned.
#[derive(Default)]
pub struct Policies {
    by_loop: HashMap<String, Partition>,
    failure: RefCell<Option<Error>>,
}

impl Policies {
    pub fn new(by_loop: HashMap<String, Partition>) -> Policies {
        Policies { by_loop, failure: RefCell::new(None) }
    }
    fn of(&self, loop_name: &str) -> Partition {
        self.by_loop.get(loop_name).copied().unwrap_or_default()
    }
    fn always(&self, s: &Stmt) -> bool {
        matches!(s.node(), StmtNode::For { name, .. } if self.of(name) == Partition::Always)
    }
    fn contains_always(&self, s: &Stmt) -> bool {
        let mut found = false;
        for_each_stmt(s, &mut |t| found |= self.always(t));
        found
    }
    fn fail(&self, loop_name: &str) {
        let mut f = self.failure.borrow_mut();
        if f.is_none() {
            *f = Some(Error::user(format!(
                "Loop Partition Policy is set to Always for {loop_name}, but no loop partitioning was performed.\n"
            )));
        }
    }
}

/// Partition every Serial and Parallel loop whose body holds solvable
/// `likely` marks, as `policies` allow.
pub fn partition_loops(s: &Stmt, policies: &Policies) -> Result<Stmt> {
    let s = MarkClampedRamps { in_index: false }.mutate_stmt(s);
    let out = Partitioner::run(&s, Depth::Full, policies);
    match policies.failure.borrow_mut().take() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Marks the clamped ramps of vector load and store indices `likely`
/// (`min(likely(ramp), b)`; Halide's `MarkClampedRampsAsLikely`). A
/// hand-written boundary condition (`f[clamp(2x - 1, 0, w)]`) vectorized is
/// a clamp of a ramp, a gather in every iteration; marked, its loop gets a
/// steady state that reads the ramp itself (a dense or strided load) and
/// only the ends clamp.
struct MarkClampedRamps {
    in_index: bool,
}

impl Mutator for MarkClampedRamps {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let is_ramp = |x: &Expr| matches!(x.node(), ExprNode::Ramp { .. });
        match e.node() {
            ExprNode::Binary {
                op: op @ (BinOp::Min | BinOp::Max),
                a,
                b,
            } if self.in_index && (is_ramp(a) || is_ramp(b)) => {
                // A ramp holds no other ramp: only the other side can hold
                // more clamps.
                if is_ramp(a) {
                    Expr::binary(*op, Expr::likely(a.clone()), self.mutate_expr(b))
                } else {
                    Expr::binary(*op, self.mutate_expr(a), Expr::likely(b.clone()))
                }
            }
            ExprNode::Load { .. } => {
                let outer = std::mem::replace(&mut self.in_index, true);
                let out = mutate_expr_children(self, e);
                self.in_index = outer;
                out
            }
            _ => mutate_expr_children(self, e),
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::Store {
            name,
            value,
            index,
            predicate,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        let outer = std::mem::replace(&mut self.in_index, true);
        let new_index = self.mutate_expr(index);
        self.in_index = outer;
        let new_value = self.mutate_expr(value);
        let new_predicate = self.mutate_expr(predicate);
        if new_index.same_as(index) && new_value.same_as(value) && new_predicate.same_as(predicate) {
            s.clone()
        } else {
            Stmt::store(name.clone(), new_value, new_index, new_predicate)
        }
    }
}

/// Replace every `likely(x)` / `likely_if_innermost(x)` by `x`.
pub fn strip_likely(s: &Stmt) -> Stmt {
    StripLikely.mutate_stmt(s)
}

/// `e` with every `likely(x)` / `likely_if_innermost(x)` replaced by `x`.
pub fn strip_likely_expr(e: &Expr) -> Expr {
    StripLikely.mutate_expr(e)
}

struct StripLikely;

impl Mutator for StripLikely {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match likely_arg(e) {
            Some(a) => self.mutate_expr(a),
            None => mutate_expr_children(self, e),
        }
    }
}

/// Turn every `likely(x)` into `likely_if_innermost(x)`: only innermost
/// loops will still be partitioned on it (loops that must be partitioned
/// keep theirs).
fn demote_likely(s: &Stmt, policies: &Policies) -> Stmt {
    DemoteLikely { policies }.mutate_stmt(s)
}

struct DemoteLikely<'a> {
    policies: &'a Policies,
}

impl Mutator for DemoteLikely<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.policies.always(s) {
            s.clone()
        } else {
            mutate_stmt_children(self, s)
        }
    }
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.as_intrinsic(Intrinsic::Likely) {
            Some(a) => Expr::likely_if_innermost(a[0].clone()),
            None => e,
        }
    }
}

fn likely_arg(e: &Expr) -> Option<&Expr> {
    e.as_intrinsic(Intrinsic::Likely)
        .or_else(|| e.as_intrinsic(Intrinsic::LikelyIfInnermost))
        .map(|a| &a[0])
}

/// Partitions loops outermost first. The pieces of a partitioned loop are
/// partitioned in turn, by `Depth`:
/// - the steady state, in full (at the same depth);
/// - a prologue that peels first iterations (bounded by a boolean mark,
///   such as sliding window's `likely(v > v_min)`, not only by clamps) at
///   one level of grace: the next loop level inside it that computes a
///   producer is still partitioned in full (a sliding window's peeled
///   first iteration runs a whole row of its consumer, each iteration
///   computing the producer, worth a clamp-free steady state), and the
///   pieces that makes only partition their innermost loops; loops
///   computing no producer are left to the innermost rule (a producer's
///   own few peeled rows are not worth three copies);
/// - other prologues and epilogues (boundary pieces, which run only at
///   the edges of the image): nothing when they hold a loop nest, else
///   innermost loops only (see `boundary_piece`);
/// - anything inside a graced piece: innermost loops only (their marks
///   become `likely_if_innermost`).
/// Code size so grows by a bounded factor instead of tripling at every
/// level.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    Full,
    Grace,
}

struct Partitioner<'a> {
    depth: Depth,
    policies: &'a Policies,
    /// LetStmts around the statement being visited (within this walk).
    lets: Vec<(String, Expr)>,
}

/// Loops that provably run at most this many iterations are not
/// partitioned: the steady state would run too few iterations to repay
/// the copies (a producer's rows computed in a sliding window's peeled
/// first iteration, whose scalar row clamps cost a min and a max).
const MIN_PARTITIONED_EXTENT: i64 = 4;

impl Partitioner<'_> {
    fn run(s: &Stmt, depth: Depth, policies: &Policies) -> Stmt {
        Partitioner {
            depth,
            policies,
            lets: vec![],
        }
        .mutate_stmt(s)
    }

    /// Does a loop of this extent provably run few iterations?
    fn few_iterations(&self, extent: &Expr) -> bool {
        let e = substitute_lets(extent, self.lets.iter().rev().map(|(n, v)| (n.as_str(), v)));
        let e = crate::analysis::simplify::simplify(&e);
        let bound = crate::analysis::simplify::Simplifier::new().info(&e).max;
        bound.is_some_and(|m| m <= MIN_PARTITIONED_EXTENT)
    }

    /// Partition a piece's body with only its innermost loops split.
    fn innermost_only(s: &Stmt, policies: &Policies) -> Stmt {
        Partitioner::run(&demote_likely(s, policies), Depth::Full, policies)
    }

    /// A prologue or epilogue made by clamps alone (not a peel): it runs
    /// only at the edges of the image. Around an outer loop (its body
    /// holds a loop nest), it is left unpartitioned: a few edge rows or
    /// planes do not repay three more copies of everything inside them
    /// (the channel clamps of a 3-D boundary condition made the Gaussian's
    /// JIT a third longer). Around an innermost level, its loops are
    /// partitioned as usual.
    fn boundary_piece(s: &Stmt, policies: &Policies) -> Stmt {
        if holds_loop_nest(s) && !policies.contains_always(s) {
            strip_likely(s)
        } else {
            Partitioner::innermost_only(s, policies)
        }
    }
    /// The iterations of a partitioned parallel loop outside its steady
    /// state (its `else` branch): the boundary rows or planes, and any
    /// iteration when the steady state is empty. Its marks are dropped,
    /// as Halide does in a partition's tail: partitioning inside it would
    /// copy the body's loops again for a few iterations (bilateral_grid's
    /// JIT is a quarter shorter). Loops that must be partitioned still
    /// are.
    fn parallel_tail(s: &Stmt, policies: &Policies) -> Stmt {
        if policies.contains_always(s) {
            Partitioner::innermost_only(s, policies)
        } else {
            strip_likely(s)
        }
    }
}

impl Mutator for Partitioner<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::LetStmt { name, value, body } = s.node() {
            self.lets.push((name.clone(), value.clone()));
            let b = self.mutate_stmt(body);
            self.lets.pop();
            return if b.same_as(body) {
                s.clone()
            } else {
                Stmt::let_stmt(name.clone(), value.clone(), b)
            };
        }
        if let StmtNode::For {
            name,
            min,
            extent,
            for_type: ft @ (ForType::Serial | ForType::Parallel),
            body,
        } = s.node()
        {
            let policy = self.policies.of(name);
            let always = policy == Partition::Always;
            if policy == Partition::Never || (!always && self.few_iterations(extent)) {
                return mutate_stmt_children(self, s);
            }
            let policies = self.policies;
            if !always && clamp_not_worth_a_copy(body) {
                return s.clone();
            }
            if !always && self.depth == Depth::Grace && !contains_produce(body) {
                // Not a loop of a consumer over its producer's rows.
                return Partitioner::innermost_only(s, policies);
            }
            // Outer loops first: a steady state often makes an inner loop
            // trivial (a producer computed per vector of its consumer gets
            // a one-iteration loop once the consumer's clamps are gone),
            // which the simplifier then removes instead of partitioning it.
            let full = self.depth == Depth::Full;
            let pieces = Pieces {
                prologue: &|b: &Stmt, peels: bool| {
                    if full && peels {
                        Partitioner::run(b, Depth::Grace, policies)
                    } else if peels {
                        Partitioner::innermost_only(b, policies)
                    } else {
                        Partitioner::boundary_piece(b, policies)
                    }
                },
                epilogue: &|b: &Stmt| Partitioner::boundary_piece(b, policies),
                parallel_tail: &|b: &Stmt| Partitioner::parallel_tail(b, policies),
                steady: &|b: &Stmt| {
                    if full {
                        Partitioner::run(b, Depth::Full, policies)
                    } else {
                        Partitioner::innermost_only(b, policies)
                    }
                },
            };
            if let Some(p) = partition(name, min, extent, *ft, body, &pieces) {
                return p;
            }
            if always {
                policies.fail(name);
            }
        }
        mutate_stmt_children(self, s)
    }
}

/// An innermost loop body whose math function calls weigh at least this
/// much (roughly, machine instructions an iteration: `math_weight`) is
/// not partitioned for scalar clamps alone, such as a ShiftInwards tail's
/// `min(likely(x.x * 8), extent - 8)`: the clamp costs an instruction or
/// two an iteration, a few percent of the body at most, while the
/// epilogue would be a second copy of the polynomials for LLVM to compile
/// (the bench's vectorized sin/cos demo: JIT ~10% shorter, run time within
/// 3%). Halide partitions these too; values are the same either way.
/// Bodies of ordinary arithmetic are partitioned at any size: measured
/// unpartitioned, local_laplacian's pyramid loops (~500 vector operations
/// each) ran 13% slower, though interpolate's ran 4% faster.
const HEAVY_MATH: usize = 80;

/// What one call of a math function weighs in `math_weight`: sin, exp,
/// pow and the like are polynomials of 20-60 instructions once expanded.
const MATH_CALL_WEIGHT: usize = 40;

/// Is `body` an innermost loop body heavy with math calls (`HEAVY_MATH`)
/// whose only likely marks are scalar clamps? A boolean mark (a
/// GuardWithIf tail, a sliding window's warm-up) or a vector clamp (a
/// boundary condition's, which unpartitioned turns dense loads into
/// gathers) is worth its copy at any weight.
fn clamp_not_worth_a_copy(body: &Stmt) -> bool {
    if contains_loop(body) {
        return false;
    }
    let mut only_scalar_clamps = true;
    let mut any = false;
    for_each_expr_in_stmt(body, &mut |e| {
        if let Some(inner) = likely_arg(e) {
            any = true;
            // The mark tags a clamp's operand: the clamp (a Min or Max)
            // is scalar exactly when the operand is.
            only_scalar_clamps &= !inner.ty().is_bool() && inner.ty().is_scalar();
        }
    });
    any && only_scalar_clamps && math_weight(body) >= HEAVY_MATH
}

/// The weight of the math function calls in one run of `body`.
fn math_weight(body: &Stmt) -> usize {
    let mut weight = 0;
    for_each_expr_in_stmt(body, &mut |e| {
        if let ExprNode::Call { kind: CallKind::Intrinsic(Intrinsic::Math(m)), .. } = e.node() {
            if is_polynomial(*m) {
                weight += MATH_CALL_WEIGHT;
            }
        }
    });
    weight
}

/// Math functions computed as polynomials (not one instruction).
fn is_polynomial(m: MathFn) -> bool {
    use MathFn::*;
    !matches!(
        m,
        Sqrt | Floor | Ceil | Round | Trunc | IsNan | IsInf | IsFinite | FastInverse | FastInverseSqrt
    )
}

/// How the bodies of a partitioned loop's pieces are partitioned in turn.
struct Pieces<'a> {
    /// Given whether the prologue peels first iterations.
    prologue: &'a dyn Fn(&Stmt, bool) -> Stmt,
    epilogue: &'a dyn Fn(&Stmt) -> Stmt,
    /// The iterations of a parallel loop outside its steady state.
    parallel_tail: &'a dyn Fn(&Stmt) -> Stmt,
    steady: &'a dyn Fn(&Stmt) -> Stmt,
}

/// An inclusive range of the loop variable; a missing end is unbounded.
#[derive(Clone)]
struct Interval {
    lo: Option<Expr>,
    hi: Option<Expr>,
}

fn both(a: Option<Expr>, b: Option<Expr>, op: BinOp) -> Option<Expr> {
    match (a, b) {
        (Some(x), Some(y)) => Some(fold_binary(op, x, y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn intersect(a: Interval, b: Interval) -> Interval {
    Interval {
        lo: both(a.lo, b.lo, BinOp::Max),
        hi: both(a.hi, b.hi, BinOp::Min),
    }
}

/// `e` as `k * var + rest` with a constant `k` and `rest` free of `var`.
fn linear(e: &Expr, var: &str) -> Option<(i64, Expr)> {
    if !expr_uses_var(e, var) {
        return Some((0, e.clone()));
    }
    let t = e.ty();
    match e.node() {
        ExprNode::Variable { name, .. } if name == var => Some((1, Expr::zero(t))),
        ExprNode::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            a,
            b,
        } => {
            let (ka, ra) = linear(a, var)?;
            let (kb, rb) = linear(b, var)?;
            let k = if *op == BinOp::Add {
                ka.checked_add(kb)?
            } else {
                ka.checked_sub(kb)?
            };
            Some((k, fold_binary(*op, ra, rb)))
        }
        ExprNode::Binary {
            op: BinOp::Mul,
            a,
            b,
        } => {
            let (k, r, c) = if let Some(c) = const_int_value(b) {
                let (k, r) = linear(a, var)?;
                (k, r, c)
            } else {
                let c = const_int_value(a)?;
                let (k, r) = linear(b, var)?;
                (k, r, c)
            };
            Some((
                k.checked_mul(c)?,
                fold_binary(BinOp::Mul, r, Expr::make_const_i64(t, c)),
            ))
        }
        _ => likely_arg(e).and_then(|a| linear(a, var)),
    }
}

/// floor(n / d) for a positive constant d (IR division rounds down).
fn floor_div(n: Expr, d: i64) -> Expr {
    if d == 1 {
        n
    } else {
        fold_binary(BinOp::Div, n.clone(), Expr::make_const_i64(n.ty(), d))
    }
}

/// The range of `var` on which `k * var + r < 0` (`strict`) or `<= 0` holds.
fn solve_negative(k: i64, r: Expr, strict: bool) -> Option<Interval> {
    let t = r.ty();
    let c = |v: i64| Expr::make_const_i64(t, v);
    if k > 0 {
        // k v <= -r - (strict as 1)  =>  v <= floor((-r - s) / k)
        let n = fold_binary(
            BinOp::Sub,
            fold_binary(BinOp::Sub, c(0), r),
            c(strict as i64),
        );
        Some(Interval {
            lo: None,
            hi: Some(floor_div(n, k)),
        })
    } else if k < 0 {
        // |k| v >= r + s  =>  v >= ceil((r + s) / |k|) = floor((r + s + |k| - 1) / |k|)
        let m = k.checked_neg()?;
        let n = fold_binary(BinOp::Add, r, c(strict as i64 + m - 1));
        Some(Interval {
            lo: Some(floor_div(n, m)),
            hi: None,
        })
    } else {
        None
    }
}

/// A range of `var` (of type `ty`) on which `c` certainly holds.
/// `bounds` are the loop's min and end (one past the last iteration).
fn solve(c: &Expr, var: &str, ty: Type, bounds: &(Expr, Expr)) -> Option<Interval> {
    if let Some(a) = likely_arg(c) {
        return solve(a, var, ty, bounds);
    }
    match c.node() {
        ExprNode::Binary {
            op: BinOp::And,
            a,
            b,
        } => Some(intersect(
            solve(a, var, ty, bounds)?,
            solve(b, var, ty, bounds)?,
        )),
        ExprNode::Not(a) => solve(&negate(a)?, var, ty, bounds),
        ExprNode::Binary { op, a, b } if op.is_comparison() => {
            solve_cmp(*op, a, b, var, ty, bounds)
        }
        _ => None,
    }
}

/// A condition implying that `c` holds for every value of `var` in
/// `[min, min + extent)` (Halide's `and_condition_over_domain`): each
/// comparison is taken at the end of the range where its two sides are
/// closest, found from the monotonicity of their difference. `None` if a
/// comparison is not monotonic in `var`. An empty range makes the result
/// irrelevant: the loop it bounds does not run.
fn for_all_iterations(c: &Expr, var: &str, min: &Expr, extent: &Expr) -> Option<Expr> {
    if !expr_uses_var(c, var) {
        return Some(c.clone());
    }
    if let Some(a) = likely_arg(c) {
        return for_all_iterations(a, var, min, extent);
    }
    match c.node() {
        ExprNode::Binary {
            op: BinOp::And,
            a,
            b,
        } => Some(Expr::and(
            for_all_iterations(a, var, min, extent)?,
            for_all_iterations(b, var, min, extent)?,
        )),
        ExprNode::Not(a) => for_all_iterations(&negate(a)?, var, min, extent),
        ExprNode::Binary {
            op: op @ (BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE),
            a,
            b,
        } => {
            let diff = strip_likely_expr(&Expr::sub(a.clone(), b.clone()));
            let last = fold_binary(
                BinOp::Sub,
                fold_binary(BinOp::Add, min.clone(), extent.clone()),
                Expr::one(min.ty()),
            );
            // `a - b` must stay below (LT/LE) or above (GT/GE) zero: the
            // worst case is where it is largest or smallest.
            let below = matches!(op, BinOp::LT | BinOp::LE);
            let worst = match is_monotonic(&diff, var) {
                // Any value will do (`0 * var` still names it).
                Monotonic::Constant => min.clone(),
                Monotonic::Increasing => if below { last } else { min.clone() },
                Monotonic::Decreasing => if below { min.clone() } else { last },
                Monotonic::Unknown => return None,
            };
            Some(substitute(var, &worst, c))
        }
        _ => None,
    }
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::LT => BinOp::GT,
        BinOp::LE => BinOp::GE,
        BinOp::GT => BinOp::LT,
        BinOp::GE => BinOp::LE,
        other => other,
    }
}

fn is_min_max(e: &Expr) -> bool {
    matches!(
        e.node(),
        ExprNode::Binary {
            op: BinOp::Min | BinOp::Max,
            ..
        }
    )
}

/// A range on which `a op b` holds. Min/max operands are split: a
/// condition that needs both of their sides intersects the two ranges; one
/// that needs either side uses one of them (the likely one first), which
/// under-approximates soundly.
fn solve_cmp(
    op: BinOp,
    a: &Expr,
    b: &Expr,
    var: &str,
    ty: Type,
    bounds: &(Expr, Expr),
) -> Option<Interval> {
    let a = likely_arg(a).unwrap_or(a);
    let b = likely_arg(b).unwrap_or(b);
    if a.ty() != ty {
        return None;
    }
    // `min(p, q) + r` is `min(p + r, q + r)`: bring min/max to the top so
    // that they can be split below (clamped coordinates offset by a
    // stencil tap look like this).
    if let Some(a2) = hoist_min_max(a) {
        return solve_cmp(op, &a2, b, var, ty, bounds);
    }
    if let Some(b2) = hoist_min_max(b) {
        return solve_cmp(op, a, &b2, var, ty, bounds);
    }
    if is_min_max(b) && !is_min_max(a) {
        return solve_cmp(flip(op), b, a, var, ty, bounds);
    }
    if let ExprNode::Binary {
        op: mm @ (BinOp::Min | BinOp::Max),
        a: p,
        b: q,
    } = a.node()
    {
        let (p, q) = if has_likely_tag(q, true) && !has_likely_tag(p, true) {
            (q, p)
        } else {
            (p, q)
        };
        let below = matches!(op, BinOp::LT | BinOp::LE);
        let above = matches!(op, BinOp::GT | BinOp::GE);
        let needs_both = (*mm == BinOp::Min && above) || (*mm == BinOp::Max && below);
        let needs_one = (*mm == BinOp::Min && below) || (*mm == BinOp::Max && above);
        if needs_both {
            return Some(intersect(
                solve_cmp(op, p, b, var, ty, bounds)?,
                solve_cmp(op, q, b, var, ty, bounds)?,
            ));
        }
        if needs_one {
            return solve_cmp(op, p, b, var, ty, bounds)
                .or_else(|| solve_cmp(op, q, b, var, ty, bounds));
        }
        return None;
    }
    let (Some((ka, ra)), Some((kb, rb))) = (linear(a, var), linear(b, var)) else {
        return solve_quotient_cmp(op, a, b, var, ty, bounds);
    };
    // a - b = k * var + r
    let k = ka.checked_sub(kb)?;
    let r = fold_binary(BinOp::Sub, ra, rb);
    solve_linear_cmp(op, k, r, ty, bounds)
}

/// A range on which `k * var + r op 0` holds.
fn solve_linear_cmp(op: BinOp, k: i64, r: Expr, ty: Type, bounds: &(Expr, Expr)) -> Option<Interval> {
    if k == 0 {
        // Loop-invariant (`a - b == r`): all iterations or none.
        let c = Expr::binary(op, r, Expr::zero(ty));
        let lo = Expr::select(c, bounds.0.clone(), bounds.1.clone());
        return Some(Interval {
            lo: Some(lo),
            hi: None,
        });
    }
    let neg = || fold_binary(BinOp::Sub, Expr::zero(ty), r.clone());
    match op {
        BinOp::LT => solve_negative(k, r, true),
        BinOp::LE => solve_negative(k, r, false),
        BinOp::GT => solve_negative(k.checked_neg()?, neg(), true),
        BinOp::GE => solve_negative(k.checked_neg()?, neg(), false),
        BinOp::EQ if k == 1 || k == -1 => {
            let v = if k == 1 { neg() } else { r.clone() };
            Some(Interval {
                lo: Some(v.clone()),
                hi: Some(v),
            })
        }
        _ => None,
    }
}

/// `a op b` where `a - b` is `c * (u / d) + r`, `u` linear in `var`
/// and `d` a positive constant: a fused loop's coordinates are quotients
/// of the fused var (`xo = t / 4`), and a ShiftInwards clamp of `xo * 8`
/// then bounds `t` through the division. Solved for `w = u / d` first;
/// floor division is monotonic, so `w <= h` is exactly `u <= h * d + d - 1`
/// and `w >= l` exactly `u >= l * d`, which are solved for `var`.
fn solve_quotient_cmp(
    op: BinOp,
    a: &Expr,
    b: &Expr,
    var: &str,
    ty: Type,
    bounds: &(Expr, Expr),
) -> Option<Interval> {
    let (ca, qa, ra) = quotient_linear(a, var)?;
    let (cb, qb, rb) = quotient_linear(b, var)?;
    let (u, d) = match (qa, qb) {
        (Some(q), None) | (None, Some(q)) => q,
        (Some(p), Some(q)) if p.1 == q.1 && crate::ir::equal(&p.0, &q.0) => p,
        _ => return None,
    };
    let c = ca.checked_sub(cb)?;
    let r = fold_binary(BinOp::Sub, ra, rb);
    if c == 0 {
        // Invariant in `var` after all (`0 * (u / d)`).
        return solve_linear_cmp(op, 0, r, ty, bounds);
    }
    let w = solve_linear_cmp(op, c, r, ty, bounds)?;
    // `h * d + d - 1` and `l * d` are new products, which must not wrap
    // (a wrapped lower bound would let the steady state cover iterations
    // where the condition fails): computed at 64 bits and clamped to the
    // loop variable's type (exact except where `u` itself is that type's
    // last value).
    if !ty.is_int() || ty.bits > 32 {
        return None;
    }
    let wide = Type::i64();
    let k = |v: i64| Expr::make_const_i64(wide, v);
    let narrow = |e: Expr| {
        let clamped = Expr::max(Expr::min(e, k(ty.max_int() as i64)), k(ty.min_int() as i64));
        Expr::cast(ty, clamped)
    };
    let mut out = Interval { lo: None, hi: None };
    if let Some(h) = w.hi {
        let top = fold_binary(BinOp::Add, fold_binary(BinOp::Mul, Expr::cast(wide, h), k(d)), k(d - 1));
        out = intersect(out, solve_cmp(BinOp::LE, &u, &narrow(top), var, ty, bounds)?);
    }
    if let Some(l) = w.lo {
        let bottom = fold_binary(BinOp::Mul, Expr::cast(wide, l), k(d));
        out = intersect(out, solve_cmp(BinOp::GE, &u, &narrow(bottom), var, ty, bounds)?);
    }
    Some(out)
}

/// `e` as `c * q + r` with `r` free of `var`, where `q` is `None` (then
/// `c` is 0) or the one quotient `(u, d)`, `u / d`, of an expression
/// linear in `var` by a positive constant that `e` reads `var` through.
#[allow(clippy::type_complexity)]
fn quotient_linear(e: &Expr, var: &str) -> Option<(i64, Option<(Expr, i64)>, Expr)> {
    if !expr_uses_var(e, var) {
        return Some((0, None, e.clone()));
    }
    if let Some(a) = likely_arg(e) {
        return quotient_linear(a, var);
    }
    let t = e.ty();
    match e.node() {
        ExprNode::Binary { op: BinOp::Div, a, b } => {
            let d = const_int_value(b).filter(|&d| d > 0)?;
            let (k, _) = linear(a, var)?;
            (k != 0).then(|| (1, Some((a.clone(), d)), Expr::zero(t)))
        }
        ExprNode::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            a,
            b,
        } => {
            let (ca, qa, ra) = quotient_linear(a, var)?;
            let (cb, qb, rb) = quotient_linear(b, var)?;
            let q = match (qa, qb) {
                (q, None) | (None, q) => q,
                (Some(p), Some(q)) if p.1 == q.1 && crate::ir::equal(&p.0, &q.0) => Some(p),
                _ => return None,
            };
            let c = if *op == BinOp::Add { ca.checked_add(cb)? } else { ca.checked_sub(cb)? };
            Some((c, q, fold_binary(*op, ra, rb)))
        }
        ExprNode::Binary { op: BinOp::Mul, a, b } => {
            let (x, m) = match (const_int_value(a), const_int_value(b)) {
                (_, Some(m)) => (a, m),
                (Some(m), _) => (b, m),
                _ => return None,
            };
            let (c, q, r) = quotient_linear(x, var)?;
            Some((c.checked_mul(m)?, q, fold_binary(BinOp::Mul, r, Expr::make_const_i64(t, m))))
        }
        _ => None,
    }
}

/// A scalar condition implying that the (possibly vector) condition `c`
/// holds in all of its lanes: vector comparisons compare the lanes'
/// extreme values (`lane_bounds`). `None` if that cannot be expressed.
fn all_lanes(c: &Expr) -> Option<Expr> {
    if c.ty().is_scalar() {
        return Some(c.clone());
    }
    if let Some(a) = likely_arg(c) {
        return all_lanes(a);
    }
    match c.node() {
        ExprNode::Broadcast { value, .. } => all_lanes(value),
        ExprNode::Binary {
            op: BinOp::And,
            a,
            b,
        } => Some(Expr::and(all_lanes(a)?, all_lanes(b)?)),
        ExprNode::Binary { op, a, b } if op.is_comparison() => {
            let (alo, ahi) = lane_bounds(a)?;
            let (blo, bhi) = lane_bounds(b)?;
            Some(match op {
                BinOp::LT | BinOp::LE => Expr::binary(*op, ahi, blo),
                BinOp::GT | BinOp::GE => Expr::binary(*op, alo, bhi),
                BinOp::EQ if alo.same_as(&ahi) && blo.same_as(&bhi) => Expr::eq(alo, blo),
                _ => return None,
            })
        }
        _ => None,
    }
}

/// The smallest and largest lane of an integer vector, as scalars, when
/// it is built linearly from ramps with constant strides and broadcasts.
fn lane_bounds(e: &Expr) -> Option<(Expr, Expr)> {
    if e.ty().is_scalar() {
        return Some((e.clone(), e.clone()));
    }
    if let Some(a) = likely_arg(e) {
        // Keep the mark on the bounds: solve_cmp prefers marked operands.
        let (lo, hi) = lane_bounds(a)?;
        return Some((Expr::likely(lo), Expr::likely(hi)));
    }
    match e.node() {
        ExprNode::Broadcast { value, .. } => lane_bounds(value),
        ExprNode::Binary {
            op: op @ (BinOp::Min | BinOp::Max),
            a,
            b,
        } => {
            let (alo, ahi) = lane_bounds(a)?;
            let (blo, bhi) = lane_bounds(b)?;
            Some((Expr::binary(*op, alo, blo), Expr::binary(*op, ahi, bhi)))
        }
        ExprNode::Ramp {
            base,
            stride,
            lanes,
        } if base.ty().is_scalar() => {
            let s = const_int_value(stride)?;
            let last = fold_binary(
                BinOp::Add,
                base.clone(),
                Expr::make_const_i64(base.ty(), s.checked_mul(*lanes as i64 - 1)?),
            );
            Some(if s >= 0 {
                (base.clone(), last)
            } else {
                (last, base.clone())
            })
        }
        ExprNode::Binary {
            op: BinOp::Add,
            a,
            b,
        } => {
            let (alo, ahi) = lane_bounds(a)?;
            let (blo, bhi) = lane_bounds(b)?;
            Some((
                fold_binary(BinOp::Add, alo, blo),
                fold_binary(BinOp::Add, ahi, bhi),
            ))
        }
        ExprNode::Binary {
            op: BinOp::Sub,
            a,
            b,
        } => {
            let (alo, ahi) = lane_bounds(a)?;
            let (blo, bhi) = lane_bounds(b)?;
            Some((
                fold_binary(BinOp::Sub, alo, bhi),
                fold_binary(BinOp::Sub, ahi, blo),
            ))
        }
        _ => None,
    }
}

/// `e` with a min/max under an addition or subtraction moved to the top
/// (`min(p, q) + r` → `min(p + r, q + r)`, `r - min(p, q)` →
/// `max(r - p, r - q)`), or `None` if there is none to move. A likely mark
/// on `p` stays on the moved operand.
fn hoist_min_max(e: &Expr) -> Option<Expr> {
    let ExprNode::Binary {
        op: op @ (BinOp::Add | BinOp::Sub),
        a,
        b,
    } = e.node()
    else {
        return None;
    };
    let split = |m: &Expr| -> Option<(BinOp, Expr, Expr)> {
        let m = hoist_min_max(m).unwrap_or_else(|| m.clone());
        match m.node() {
            ExprNode::Binary {
                op: mm @ (BinOp::Min | BinOp::Max),
                a,
                b,
            } => Some((*mm, a.clone(), b.clone())),
            _ => None,
        }
    };
    let apply = |x: &Expr, f: &dyn Fn(Expr) -> Expr| match likely_arg(x) {
        Some(inner) => Expr::likely(f(inner.clone())),
        None => f(x.clone()),
    };
    if let Some((mm, p, q)) = split(a) {
        let r = b.clone();
        let f = |x: Expr| Expr::binary(*op, x, r.clone());
        return Some(Expr::binary(mm, apply(&p, &f), apply(&q, &f)));
    }
    if let Some((mm, p, q)) = split(b) {
        let r = a.clone();
        let f = |x: Expr| Expr::binary(*op, r.clone(), x);
        // r - min(p, q) = max(r - p, r - q)
        let mm = match (op, mm) {
            (BinOp::Sub, BinOp::Min) => BinOp::Max,
            (BinOp::Sub, _) => BinOp::Min,
            (_, m) => m,
        };
        return Some(Expr::binary(mm, apply(&p, &f), apply(&q, &f)));
    }
    None
}

/// Is `e` a likely mark, or a min/max or sum with a marked operand?
fn has_likely_tag(e: &Expr, innermost: bool) -> bool {
    if e.as_intrinsic(Intrinsic::Likely).is_some()
        || (innermost && e.as_intrinsic(Intrinsic::LikelyIfInnermost).is_some())
    {
        return true;
    }
    match e.node() {
        ExprNode::Binary {
            op: BinOp::Min | BinOp::Max,
            a,
            b,
        } => has_likely_tag(a, innermost) || has_likely_tag(b, innermost),
        // The simplifier moves offsets into clamps
        // (`max(likely(x), 0) - m` → `max(likely(x) - m, -m)`): the offset
        // operand keeps the mark.
        ExprNode::Binary {
            op: BinOp::Add | BinOp::Sub,
            a,
            b,
        } => has_likely_tag(a, innermost) || has_likely_tag(b, innermost),
        _ => false,
    }
}

fn negate(c: &Expr) -> Option<Expr> {
    match c.node() {
        ExprNode::Binary { op, a, b } => {
            let flipped = match op {
                BinOp::LT => BinOp::GE,
                BinOp::LE => BinOp::GT,
                BinOp::GT => BinOp::LE,
                BinOp::GE => BinOp::LT,
                BinOp::EQ => BinOp::NE,
                BinOp::NE => BinOp::EQ,
                _ => return None,
            };
            Some(Expr::binary(flipped, a.clone(), b.clone()))
        }
        ExprNode::Not(a) => Some(a.clone()),
        _ => None,
    }
}

/// Does `e` read memory or call something impure (then its value may
/// change during the loop and cannot be hoisted)?
fn reads_state(e: &Expr) -> bool {
    let mut found = false;
    for_each_expr(e, &mut |x| match x.node() {
        ExprNode::Load { .. } => found = true,
        ExprNode::Call { kind, .. } if !kind.is_pure() => found = true,
        ExprNode::Call {
            kind: crate::ir::CallKind::Halide { .. } | crate::ir::CallKind::Image { .. },
            ..
        } => found = true,
        _ => {}
    });
    found
}

/// Does `s` hold a loop inside a loop?
fn holds_loop_nest(s: &Stmt) -> bool {
    let mut found = false;
    for_each_stmt(s, &mut |x| {
        if let StmtNode::For { body, .. } = x.node() {
            found |= contains_loop(body);
        }
    });
    found
}

/// Does `s` compute a Func (hold a produce node)?
fn contains_produce(s: &Stmt) -> bool {
    let mut found = false;
    for_each_stmt(s, &mut |x| {
        found |= matches!(
            x.node(),
            StmtNode::ProducerConsumer {
                is_producer: true,
                ..
            }
        )
    });
    found
}

/// Walks a loop body numbering the `likely` marks in a fixed order. In
/// collect mode it solves each mark's condition; in replace mode it
/// rewrites the marks whose numbers are in `replace` as holding.
struct LikelyWalker {
    var: String,
    ty: Type,
    innermost: bool,
    /// The loop's min and end.
    bounds: (Expr, Expr),
    replace: Option<HashSet<usize>>,
    counter: usize,
    /// Names bound inside the body: the binding's value expanded in terms
    /// of names bound outside the loop, or `None` if it cannot be hoisted.
    lets: Vec<(String, Option<Expr>)>,
    found: Vec<(usize, Interval)>,
    /// Loops inside the body around the statement being visited: name,
    /// min and extent.
    inner_loops: Vec<(String, Expr, Expr)>,
    /// A boolean mark (not a clamp) bounded the loop from below: the
    /// prologue peels first iterations (a sliding window's warm-up).
    peels: bool,
}

impl LikelyWalker {
    fn marks(&self, e: &Expr) -> bool {
        e.as_intrinsic(Intrinsic::Likely).is_some()
            || (self.innermost && e.as_intrinsic(Intrinsic::LikelyIfInnermost).is_some())
    }

    /// `e` with the lets bound inside the body substituted in.
    fn expand(&self, e: &Expr) -> Option<Expr> {
        substitute_lets_unless_opaque(e, self.lets.iter().rev().map(|(n, v)| (n.as_str(), v.as_ref())))
    }

    /// Record a let as written: `expand` substitutes the lets it uses in
    /// turn (a let that can't be hoisted makes every let using it `None`
    /// then). Expanding each value here instead would rebuild every chain
    /// of lets as a tree (31 lets squaring their predecessor become 2^31
    /// nodes).
    fn bind(&mut self, name: &str, value: &Expr) {
        let v = if self.replace.is_none() && !reads_state(value) {
            Some(value.clone())
        } else {
            None
        };
        self.lets.push((name.to_string(), v));
    }

    fn consider(&mut self, n: usize, cond: &Expr, boolean: bool) {
        let Some(c) = self.expand(cond) else { return };
        // A vector condition must hold in every lane.
        let Some(mut c) = all_lanes(&c) else { return };
        // A mark inside an inner loop must hold on all of its iterations
        // (innermost loop first: its bounds may use the loops around it).
        for (v, min, extent) in self.inner_loops.iter().rev() {
            if !expr_uses_var(&c, v) {
                continue;
            }
            let (Some(min), Some(extent)) = (self.expand(min), self.expand(extent)) else {
                return;
            };
            match for_all_iterations(&c, v, &min, &extent) {
                Some(all) => c = all,
                None => return,
            }
        }
        if reads_state(&c) || !expr_uses_var(&c, &self.var) {
            return;
        }
        if let Some(iv) = solve(&c, &self.var, self.ty, &self.bounds) {
            self.peels |= boolean && iv.lo.is_some();
            self.found.push((n, iv));
        }
    }

    fn take_number(&mut self) -> usize {
        self.counter += 1;
        self.counter - 1
    }

    fn replacing(&self, n: usize) -> bool {
        self.replace.as_ref().is_some_and(|r| r.contains(&n))
    }
}

fn fold_logic(e: Expr) -> Expr {
    match e.node() {
        ExprNode::Select { cond, t, f } if cond.ty().is_scalar() => {
            if cond.is_true() {
                return t.clone();
            }
            if cond.is_false() {
                return f.clone();
            }
            e
        }
        ExprNode::Binary {
            op: BinOp::And,
            a,
            b,
        } if e.ty().is_scalar() => {
            if a.is_true() {
                b.clone()
            } else if b.is_true() {
                a.clone()
            } else {
                e
            }
        }
        ExprNode::Binary {
            op: BinOp::Or,
            a,
            b,
        } if e.ty().is_scalar() && (a.is_true() || b.is_true()) => Expr::bool_const(true),
        ExprNode::Not(a) if a.ty().is_scalar() && a.is_true() => Expr::bool_const(false),
        _ => e,
    }
}

impl Mutator for LikelyWalker {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let t = e.ty();
        if self.marks(e) && t.is_bool() {
            let n = self.take_number();
            let ne = mutate_expr_children(self, e);
            if self.replace.is_none() {
                let c = likely_arg(e).unwrap().clone();
                self.consider(n, &c, true);
            }
            return if self.replacing(n) {
                Expr::broadcast_if(Expr::bool_const(true), t.lanes)
            } else {
                ne
            };
        }
        if let ExprNode::Binary {
            op: op @ (BinOp::Min | BinOp::Max),
            a,
            b,
        } = e.node()
        {
            let side = if has_likely_tag(a, self.innermost) && !t.is_bool() {
                Some(0)
            } else if has_likely_tag(b, self.innermost) && !t.is_bool() {
                Some(1)
            } else {
                None
            };
            if let Some(side) = side {
                let n = self.take_number();
                let ne = mutate_expr_children(self, e);
                let (l, other) = if side == 0 { (a, b) } else { (b, a) };
                if self.replace.is_none() {
                    let inner = l.clone();
                    let cond = if *op == BinOp::Min {
                        Expr::le(inner, other.clone())
                    } else {
                        Expr::ge(inner, other.clone())
                    };
                    self.consider(n, &cond, false);
                }
                if self.replacing(n) {
                    if let ExprNode::Binary { a: na, b: nb, .. } = ne.node() {
                        let l2 = if side == 0 { na } else { nb };
                        return likely_arg(l2).cloned().unwrap_or_else(|| l2.clone());
                    }
                }
                return ne;
            }
        }
        if let ExprNode::Let { name, value, body } = e.node() {
            let nv = self.mutate_expr(value);
            self.bind(name, value);
            let nb = self.mutate_expr(body);
            self.lets.pop();
            return if nv.same_as(value) && nb.same_as(body) {
                e.clone()
            } else {
                Expr::let_(name.clone(), nv, nb)
            };
        }
        let ne = mutate_expr_children(self, e);
        if self.replace.is_some() && !ne.same_as(e) {
            fold_logic(ne)
        } else {
            ne
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let nv = self.mutate_expr(value);
                self.bind(name, value);
                let nb = self.mutate_stmt(body);
                self.lets.pop();
                if nv.same_as(value) && nb.same_as(body) {
                    s.clone()
                } else {
                    Stmt::let_stmt(name.clone(), nv, nb)
                }
            }
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                let nmin = self.mutate_expr(min);
                let next = self.mutate_expr(extent);
                self.inner_loops
                    .push((name.clone(), min.clone(), extent.clone()));
                let nb = self.mutate_stmt(body);
                self.inner_loops.pop();
                if nmin.same_as(min) && next.same_as(extent) && nb.same_as(body) {
                    s.clone()
                } else {
                    Stmt::for_loop(name.clone(), nmin, next, *for_type, nb)
                }
            }
            StmtNode::IfThenElse { .. } => {
                let ns = mutate_stmt_children(self, s);
                if let StmtNode::IfThenElse {
                    condition,
                    then_case,
                    else_case,
                } = ns.node()
                {
                    if self.replace.is_some() && condition.ty().is_scalar() {
                        if condition.is_true() {
                            return then_case.clone();
                        }
                        if condition.is_false() {
                            return else_case.clone().unwrap_or_else(Stmt::no_op);
                        }
                    }
                }
                ns
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// The range of iterations of loop `name` on which the solvable marks of
/// `body` hold, and the simplified body with them replaced; `None` if no
/// mark is solvable.
/// The steady state's range, its body, and whether the prologue peels
/// (see `LikelyWalker::peels`).
fn steady_state(
    name: &str,
    min: &Expr,
    extent: &Expr,
    body: &Stmt,
) -> Option<(Interval, Stmt, bool)> {
    let ty = min.ty();
    let mut has_likely = false;
    for_each_expr_in_stmt(body, &mut |e| has_likely |= likely_arg(e).is_some());
    if !has_likely {
        return None;
    }
    let innermost = !contains_loop(body);
    let mut walker = LikelyWalker {
        var: name.to_string(),
        ty,
        innermost,
        bounds: (
            min.clone(),
            fold_binary(BinOp::Add, min.clone(), extent.clone()),
        ),
        replace: None,
        counter: 0,
        lets: vec![],
        found: vec![],
        inner_loops: vec![],
        peels: false,
    };
    walker.mutate_stmt(body);
    let mut solved = HashSet::new();
    let mut range: Option<Interval> = None;
    for (n, iv) in walker.found {
        solved.insert(n);
        range = Some(match range {
            None => iv,
            Some(r) => intersect(r, iv),
        });
    }
    let range = range?;
    if range.lo.is_none() && range.hi.is_none() {
        return None;
    }
    let peels = walker.peels;
    let mut replacer = LikelyWalker {
        var: name.to_string(),
        ty,
        innermost,
        bounds: (min.clone(), min.clone()),
        replace: Some(solved),
        counter: 0,
        lets: vec![],
        found: vec![],
        inner_loops: vec![],
        peels: false,
    };
    Some((range, simplify_stmt(&replacer.mutate_stmt(body)), peels))
}

/// Partition the loop `name` (see the module doc). Replacing the marks of
/// a loop often turns an inner loop into a single iteration that the
/// simplifier removes, exposing the marks that were inside it: the steady
/// state is solved again until nothing more is found, and the ranges
/// intersected, so the loop still splits into at most three pieces.
fn partition(
    name: &str,
    min: &Expr,
    extent: &Expr,
    ft: ForType,
    body: &Stmt,
    pieces: &Pieces,
) -> Option<Stmt> {
    let ty = min.ty();
    if !(ty.is_int() && ty.bits >= 32 && ty.is_scalar()) {
        return None;
    }
    let (mut range, mut steady_body, mut peels) = steady_state(name, min, extent, body)?;
    // Each round removes at least one mark, so this terminates.
    while let Some((r, b, p)) = steady_state(name, min, extent, &steady_body) {
        range = intersect(range, r);
        steady_body = b;
        peels |= p;
    }
    let end = fold_binary(BinOp::Add, min.clone(), extent.clone());
    let prologue_name = format!("{name}.prologue");
    let epilogue_name = format!("{name}.epilogue");
    let steady_body = (pieces.steady)(&steady_body);
    // Skip a side that provably never runs.
    let lo = range.lo.filter(|lo| !provably(BinOp::LE, lo, min));
    let hi = range.hi.filter(|hi| {
        !provably(
            BinOp::GE,
            &fold_binary(BinOp::Add, hi.clone(), Expr::one(ty)),
            &end,
        )
    });
    if lo.is_none() && hi.is_none() {
        // The whole loop is the steady state.
        return Some(Stmt::for_loop(name, min.clone(), extent.clone(), ft, steady_body));
    }
    let steady_start = match &lo {
        Some(_) => Expr::var(ty, prologue_name.clone()),
        None => min.clone(),
    };
    let steady_end = match &hi {
        Some(_) => Expr::var(ty, epilogue_name.clone()),
        None => end.clone(),
    };
    let mut out = if ft == ForType::Parallel {
        // Three parallel loops would run their prologue and epilogue,
        // often an iteration or two each, on one core while the others
        // wait: one loop picks the steady state with an `if` instead (as
        // Halide does).
        let v = Expr::var(ty, name);
        let in_steady = match (&lo, &hi) {
            (Some(_), Some(_)) => Expr::and(
                Expr::le(steady_start.clone(), v.clone()),
                Expr::lt(v, steady_end.clone()),
            ),
            (Some(_), None) => Expr::le(steady_start.clone(), v),
            _ => Expr::lt(v, steady_end.clone()),
        };
        let other = (pieces.parallel_tail)(body);
        Stmt::for_loop(
            name,
            min.clone(),
            extent.clone(),
            ft,
            Stmt::if_then_else(in_steady, steady_body, Some(other)),
        )
    } else {
        // The prologue and epilogue run few iterations (see `Partitioner`).
        let extent_of = |a: &Expr, b: &Expr| fold_binary(BinOp::Sub, b.clone(), a.clone());
        let mut loops = vec![];
        if lo.is_some() {
            loops.push(Stmt::for_loop(
                name,
                min.clone(),
                extent_of(min, &steady_start),
                ft,
                (pieces.prologue)(body, peels),
            ));
        }
        loops.push(Stmt::for_loop(
            name,
            steady_start.clone(),
            extent_of(&steady_start, &steady_end),
            ft,
            steady_body,
        ));
        if hi.is_some() {
            loops.push(Stmt::for_loop(
                name,
                steady_end.clone(),
                extent_of(&steady_end, &end),
                ft,
                (pieces.epilogue)(body),
            ));
        }
        Stmt::block(loops)
    };
    if let Some(hi) = hi {
        // Clamp the steady state's end to [steady_start, end].
        let v = fold_binary(
            BinOp::Max,
            fold_binary(
                BinOp::Min,
                fold_binary(BinOp::Add, hi, Expr::one(ty)),
                end.clone(),
            ),
            steady_start,
        );
        out = Stmt::let_stmt(epilogue_name, v, out);
    }
    if let Some(lo) = lo {
        // Clamp the steady state's start to [min, end].
        let v = fold_binary(BinOp::Min, fold_binary(BinOp::Max, lo, min.clone()), end);
        out = Stmt::let_stmt(prologue_name, v, out);
    }
    Some(out)
}

fn provably(op: BinOp, a: &Expr, b: &Expr) -> bool {
    if let (Some(x), Some(y)) = (const_int_value(a), const_int_value(b)) {
        return match op {
            BinOp::LE => x <= y,
            _ => x >= y,
        };
    }
    can_prove(&Expr::binary(op, a.clone(), b.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::vectorize_loops::test_interpreter::{random_memory, run, Memory, Rng};
    use crate::lower::vectorize_loops::vectorize_loops;
    use std::collections::HashMap;

    fn v(n: &str) -> Expr {
        Expr::var_i32(n)
    }
    fn c(x: i64) -> Expr {
        Expr::i32(x)
    }
    fn t() -> Expr {
        Expr::bool_const(true)
    }
    fn ld(buf: &str, i: Expr) -> Expr {
        Expr::load(Type::i32(), buf, i, t())
    }
    fn st(buf: &str, i: Expr, val: Expr) -> Stmt {
        Stmt::store(buf, val, i, t())
    }
    fn clamp_likely(e: Expr, lo: Expr, hi: Expr) -> Expr {
        Expr::max(Expr::min(Expr::likely(e), hi), lo)
    }
    fn count_loops(s: &Stmt) -> usize {
        s.to_string()
            .lines()
            .filter(|l| {
                l.trim_start().starts_with("for (") || l.trim_start().starts_with("parallel (")
            })
            .count()
    }

    fn count_loops_named(s: &Stmt, var: &str) -> usize {
        let head = format!("for ({var},");
        s.to_string()
            .lines()
            .filter(|l| l.trim_start().starts_with(&head))
            .count()
    }

    /// Compare `a` and `b` on random memories for each scalar setting.
    fn same(a: &Stmt, b: &Stmt, bufs: &[(&str, usize)], settings: &[Vec<(&str, i64)>]) {
        for (i, sc) in settings.iter().enumerate() {
            let mut rng = Rng::new(i as u64 + 11);
            let mut mem = Memory::new();
            for (name, len) in bufs {
                mem.insert(name.to_string(), random_memory(&mut rng, *len, -50, 50));
            }
            let env: HashMap<String, i64> = sc.iter().map(|(k, x)| (k.to_string(), *x)).collect();
            let ra = run(a, &mem, &env).unwrap_or_else(|e| panic!("original: {e}\n{a}"));
            let rb = run(b, &mem, &env).unwrap_or_else(|e| panic!("partitioned: {e}\n{b}"));
            assert_eq!(ra, rb, "scalars {sc:?}\noriginal:\n{a}\npartitioned:\n{b}");
        }
    }

    #[test]
    fn clamped_stencil_gets_clean_steady_state() {
        // for x in [0, n): out[x] = in[clamp(likely(x-1), 0, n-1)] + in[clamp(likely(x+1), 0, n-1)]
        let x = v("x");
        let n1 = Expr::sub(v("n"), c(1));
        let val = Expr::add(
            ld(
                "in",
                clamp_likely(Expr::sub(x.clone(), c(1)), c(0), n1.clone()),
            ),
            ld("in", clamp_likely(Expr::add(x.clone(), c(1)), c(0), n1)),
        );
        let s = Stmt::for_loop("x", c(0), v("n"), ForType::Serial, st("out", x, val));
        let p = partition_loops(&s, &Policies::default()).unwrap();
        assert_eq!(count_loops(&p), 3, "{p}");
        let text = p.to_string();
        // The steady state has no clamps left (whatever the simplifier's
        // spelling of x - 1).
        let steady = text
            .lines()
            .skip_while(|l| !l.starts_with("for (x, x.prologue"))
            .nth(1)
            .unwrap();
        assert!(steady.starts_with("  out[x] = (in[(x "), "{text}");
        assert!(
            !steady.contains("min(") && !steady.contains("max(") && !steady.contains("likely"),
            "{text}"
        );
        assert!(text.contains("let x.prologue"), "{text}");
        assert!(text.contains("let x.epilogue"), "{text}");
        let settings: Vec<Vec<(&str, i64)>> = (0..12).map(|n| vec![("n", n)]).collect();
        same(&s, &p, &[("in", 12), ("out", 12)], &settings);
        let stripped = strip_likely(&p);
        assert!(!stripped.to_string().contains("likely"), "{stripped}");
        same(&s, &stripped, &[("in", 12), ("out", 12)], &settings);
    }

    #[test]
    fn a_clamped_ramp_in_a_vector_load_gets_a_clean_steady_state() {
        // Vectorized f[x] = in[clamp(2x - 1, 0, w)]: for xx in [0, m):
        //   out[ramp(4 xx, 1, 4)] = in[max(min(ramp(8 xx - 1, 2, 4), x4(w)), x4(0))]
        // carries no `likely` mark; the clamp is marked (Halide's
        // MarkClampedRampsAsLikely) so that the steady state reads the
        // strided ramp itself, not a gather.
        let xx = v("xx");
        let lanes = 4;
        let ramp = Expr::ramp(Expr::sub(Expr::mul(xx.clone(), c(8)), c(1)), c(2), lanes);
        let idx = Expr::max(
            Expr::min(ramp, Expr::broadcast(v("w"), lanes)),
            Expr::broadcast(c(0), lanes),
        );
        let val = Expr::load(Type::i32().with_lanes(lanes), "in", idx, Expr::broadcast(t(), lanes));
        let store = Stmt::store(
            "out",
            val,
            Expr::ramp(Expr::mul(xx, c(4)), c(1), lanes),
            Expr::broadcast(t(), lanes),
        );
        let s = Stmt::for_loop("xx", c(0), v("m"), ForType::Serial, store);
        let p = partition_loops(&s, &Policies::default()).unwrap();
        assert_eq!(count_loops(&p), 3, "{p}");
        let text = p.to_string();
        let steady = text
            .lines()
            .skip_while(|l| !l.starts_with("for (xx, xx.prologue"))
            .nth(1)
            .unwrap();
        assert!(!steady.contains("min(") && !steady.contains("max("), "{text}");
        let settings: Vec<Vec<(&str, i64)>> = (0..6)
            .flat_map(|m| [0, 3, 8, 17, 40].into_iter().map(move |w| vec![("m", m), ("w", w)]))
            .collect();
        same(&s, &strip_likely(&p), &[("in", 48), ("out", 24)], &settings);
    }

    #[test]
    fn policies_never_and_always() {
        let x = v("x");
        let n1 = Expr::sub(v("n"), c(1));
        let val = ld("in", clamp_likely(Expr::sub(x.clone(), c(1)), c(0), n1));
        let s = Stmt::for_loop("x", c(0), v("n"), ForType::Serial, st("out", x.clone(), val));
        let never = Policies::new([("x".to_string(), Partition::Never)].into());
        assert_eq!(count_loops(&partition_loops(&s, &never).unwrap()), 1);
        let always = Policies::new([("x".to_string(), Partition::Always)].into());
        assert_eq!(count_loops(&partition_loops(&s, &always).unwrap()), 2);
        // Always with nothing to partition is an error naming the loop.
        let plain = Stmt::for_loop("x", c(0), v("n"), ForType::Serial, st("out", x.clone(), x));
        let e = partition_loops(&plain, &always).unwrap_err();
        assert!(e.message.contains("set to Always for x, but no loop partitioning"), "{}", e.message);
    }

    #[test]
    fn a_clamp_of_a_quotient_of_the_loop_var_is_partitioned() {
        // A ShiftInwards split of x by 8 whose outer var is fused with a
        // 4-iteration inner one: for t in [0, 4 m): let xo = t / 4;
        //   out[min(likely(xo * 8), n - 8) + t % 4] = in[...]
        let t = v("t");
        let xo = Expr::div(t.clone(), c(4));
        let base = Expr::min(Expr::likely(Expr::mul(v("xo"), c(8))), Expr::sub(v("n"), c(8)));
        let idx = Expr::add(base, Expr::modulo(t.clone(), c(4)));
        let body = Stmt::let_stmt("xo", xo, st("out", idx.clone(), ld("in", idx)));
        let s = Stmt::for_loop("t", c(0), Expr::mul(v("m"), c(4)), ForType::Serial, body);
        let p = partition_loops(&s, &Policies::default()).unwrap();
        assert_eq!(count_loops_named(&p, "t"), 2, "{p}");
        let settings: Vec<Vec<(&str, i64)>> = (1..5)
            .flat_map(|m| (8..=8 * m).map(move |n| vec![("m", m), ("n", n)]))
            .collect();
        same(&s, &p, &[("in", 40), ("out", 40)], &settings);
        // Both directions of the division's bound: xo * 8 >= 8 - n too.
        let lower = Expr::max(Expr::likely(Expr::sub(Expr::mul(Expr::div(t.clone(), c(3)), c(2)), c(1))), c(0));
        let s2 = Stmt::for_loop("t", c(0), v("m"), ForType::Serial, st("out", t.clone(), ld("in", lower)));
        let p2 = partition_loops(&s2, &Policies::default()).unwrap();
        assert_eq!(count_loops_named(&p2, "t"), 2, "{p2}");
        let settings2: Vec<Vec<(&str, i64)>> = (0..14).map(|m| vec![("m", m)]).collect();
        same(&s2, &p2, &[("in", 40), ("out", 40)], &settings2);
    }

    #[test]
    fn prologue_partitions_one_more_level() {
        // for y in [0, n): for x in [0, 8): for k in [0, 2):
        //   out[8 y + x] = in[8 clamp(likely(y - 1)) + clamp(likely(x - 1))]
        //                + in[8 clamp(likely(y + 1)) + clamp(likely(x + 1))]
        //                + in2[clamp(likely(x + k))] + select(likely(0 < y), 1, 2)
        // The prologue of y (a peeled first row) partitions its x loop,
        // which computes a producer, in full; the epilogue only its
        // innermost k loop.
        let (y, x, k) = (v("y"), v("x"), v("k"));
        let row = |d: i64| clamp_likely(Expr::add(y.clone(), c(d)), c(0), Expr::sub(v("n"), c(1)));
        let col = |d: i64| clamp_likely(Expr::add(x.clone(), c(d)), c(0), c(7));
        let at = |r: Expr, q: Expr| ld("in", Expr::add(Expr::mul(r, c(8)), q));
        // A first-iteration peel, as sliding window marks it.
        let peel = Expr::select(Expr::likely(Expr::lt(c(0), y.clone())), c(1), c(2));
        let val = Expr::add(
            Expr::add(at(row(-1), col(-1)), at(row(1), col(1))),
            Expr::add(
                ld("in2", clamp_likely(Expr::add(x.clone(), k), c(0), c(7))),
                peel,
            ),
        );
        let out = Expr::add(Expr::mul(y, c(8)), x);
        // The k loop stands for a producer computed per x.
        let inner = Stmt::producer(
            "p",
            Stmt::for_loop("k", c(0), c(2), ForType::Serial, st("out", out, val)),
        );
        let s = Stmt::for_loop(
            "y",
            c(0),
            v("n"),
            ForType::Serial,
            Stmt::for_loop("x", c(0), c(8), ForType::Serial, inner),
        );
        let p = partition_loops(&s, &Policies::default()).unwrap();
        let x_loops = count_loops_named(&p, "x");
        // prologue 3 + steady 3 + epilogue 1
        assert_eq!(x_loops, 7, "{p}");
        let settings: Vec<Vec<(&str, i64)>> = (0..6).map(|n| vec![("n", n)]).collect();
        same(
            &s,
            &strip_likely(&p),
            &[("in", 48), ("in2", 8), ("out", 48)],
            &settings,
        );
    }

    #[test]
    fn loops_of_few_iterations_are_not_partitioned() {
        // let e = select(c, 1, 3): for y in [m, m + e): out[y] = in[clamp(likely(y), 0, 9)]
        let y = v("y");
        let e = Expr::select(Expr::lt(c(0), v("c")), c(1), c(3));
        let body = st("out", y.clone(), ld("in", clamp_likely(y, c(0), c(9))));
        let s = Stmt::let_stmt(
            "e",
            e,
            Stmt::for_loop("y", v("m"), v("e"), ForType::Serial, body),
        );
        let p = partition_loops(&s, &Policies::default()).unwrap();
        assert_eq!(count_loops(&p), 1, "{p}");
        // With many iterations the same loop is partitioned.
        let body = st("out", v("y"), ld("in", clamp_likely(v("y"), c(0), c(9))));
        let s = Stmt::for_loop("y", v("m"), c(5), ForType::Serial, body);
        assert_eq!(count_loops(&partition_loops(&s, &Policies::default()).unwrap()), 3);
    }

    #[test]
    fn boundary_pieces_around_a_loop_nest_are_left_whole() {
        // for c in [0, 6): for y in [0, 4): for x in [0, 8):
        //   out[..] = in[clamp(likely(c), 0, nc - 1) * 32 + y * 8 + clamp(likely(x - 1), 0, 7)]
        // c's boundary pieces (rarely run) keep their loops whole; the
        // steady state still partitions x.
        let (cv, y, x) = (v("c"), v("y"), v("x"));
        let chan = clamp_likely(cv.clone(), c(0), Expr::sub(v("nc"), c(1)));
        let col = clamp_likely(Expr::sub(x.clone(), c(1)), c(0), c(7));
        let idx = Expr::add(
            Expr::add(Expr::mul(chan, c(32)), Expr::mul(y.clone(), c(8))),
            col,
        );
        let out = Expr::add(Expr::add(Expr::mul(cv, c(32)), Expr::mul(y, c(8))), x);
        let s = Stmt::for_loop(
            "c",
            c(0),
            c(6),
            ForType::Serial,
            Stmt::for_loop(
                "y",
                c(0),
                c(4),
                ForType::Serial,
                Stmt::for_loop(
                    "x",
                    c(0),
                    c(8),
                    ForType::Serial,
                    st("out", out, ld("in", idx)),
                ),
            ),
        );
        let p = partition_loops(&s, &Policies::default()).unwrap();
        let x_loops = count_loops_named(&p, "x");
        // c's prologue (all channels when nc < 1) and epilogue (channels
        // past nc) keep one x loop each; the steady state splits x in two.
        assert_eq!(x_loops, 4, "{p}");
        let settings: Vec<Vec<(&str, i64)>> = (1..8).map(|n| vec![("nc", n)]).collect();
        same(
            &s,
            &strip_likely(&p),
            &[("in", 192), ("out", 192)],
            &settings,
        );
    }

    #[test]
    fn vector_clamps_get_clean_steady_state() {
        // for xo in [0, n): out[ramp(8 xo, 1, 8)] =
        //     in[clamp(likely(ramp(8 xo - 1, 1, 8)), x8(0), x8(8 n - 1))]
        let base = Expr::mul(v("xo"), c(8));
        let lanes = |b: Expr| Expr::ramp(b, c(1), 8);
        let x8 = |e: Expr| Expr::broadcast(e, 8);
        let hi = Expr::sub(Expr::mul(v("n"), c(8)), c(1));
        let idx = |d: i64| {
            Expr::max(
                Expr::min(
                    Expr::likely(lanes(Expr::add(base.clone(), c(d)))),
                    x8(hi.clone()),
                ),
                x8(c(0)),
            )
        };
        let ld8 = |i: Expr| Expr::load(Type::i32().with_lanes(8), "in", i, x8(t()));
        let s = Stmt::for_loop(
            "xo",
            c(0),
            v("n"),
            ForType::Serial,
            Stmt::store(
                "out",
                Expr::add(ld8(idx(-1)), ld8(idx(1))),
                lanes(base),
                x8(t()),
            ),
        );
        let p = partition_loops(&s, &Policies::default()).unwrap();
        assert_eq!(count_loops(&p), 3, "{p}");
        let text = p.to_string();
        let steady = text
            .lines()
            .skip_while(|l| !l.starts_with("for (xo, xo.prologue"))
            .nth(1)
            .unwrap();
        assert!(
            !steady.contains("min(") && !steady.contains("max("),
            "{text}"
        );
        let settings: Vec<Vec<(&str, i64)>> = (0..5).map(|n| vec![("n", n)]).collect();
        same(&s, &strip_likely(&p), &[("in", 40), ("out", 40)], &settings);
    }

    #[test]
    fn likely_select_and_if() {
        // for x in [m, m + e): out[x - m] = select(likely(x < w), in[x - m], -1);
        //                      if (likely(x >= 3)) { out2[x - m] = 1 } else { out2[x - m] = 2 }
        let x = v("x");
        let i = Expr::sub(x.clone(), v("m"));
        let body = Stmt::block(vec![
            st(
                "out",
                i.clone(),
                Expr::select(
                    Expr::likely(Expr::lt(x.clone(), v("w"))),
                    ld("in", i.clone()),
                    c(-1),
                ),
            ),
            Stmt::if_then_else(
                Expr::likely(Expr::ge(x.clone(), c(3))),
                st("out2", i.clone(), c(1)),
                Some(st("out2", i, c(2))),
            ),
        ]);
        let s = Stmt::for_loop("x", v("m"), v("e"), ForType::Serial, body);
        let p = partition_loops(&s, &Policies::default()).unwrap();
        assert_eq!(count_loops(&p), 3, "{p}");
        assert!(
            p.to_string().contains("out[(x - m)] = in[(x - m)]\n"),
            "{p}"
        );
        let mut settings = vec![];
        for m in [-2, 0, 4] {
            for e in [0, 1, 5, 10] {
                for w in [-5, 0, 3, 7, 20] {
                    settings.push(vec![("m", m), ("e", e), ("w", w)]);
                }
            }
        }
        same(&s, &p, &[("in", 10), ("out", 10), ("out2", 10)], &settings);
    }

    #[test]
    fn unsolvable_conditions_leave_loop_alone() {
        let x = v("x");
        // Depends on memory.
        let s = Stmt::for_loop(
            "x",
            c(0),
            v("n"),
            ForType::Serial,
            st(
                "out",
                x.clone(),
                Expr::select(
                    Expr::likely(Expr::lt(x.clone(), ld("in", c(0)))),
                    c(1),
                    c(2),
                ),
            ),
        );
        assert!(partition_loops(&s, &Policies::default()).unwrap().same_as(&s));
        // Not linear.
        let s2 = Stmt::for_loop(
            "x",
            c(0),
            v("n"),
            ForType::Serial,
            st(
                "out",
                x.clone(),
                Expr::select(
                    Expr::likely(Expr::lt(Expr::mul(x.clone(), x.clone()), c(9))),
                    c(1),
                    c(2),
                ),
            ),
        );
        assert!(partition_loops(&s2, &Policies::default()).unwrap().same_as(&s2));
        // No likely at all.
        let s3 = Stmt::for_loop("x", c(0), v("n"), ForType::Serial, st("out", x.clone(), x));
        assert!(partition_loops(&s3, &Policies::default()).unwrap().same_as(&s3));
    }

    #[test]
    fn nested_loops_and_lets() {
        // for y in [0, h): for x in [0, w): let t = x + y in out[y*8 + x] = select(likely(t < k), 1, in[x])
        let (x, y) = (v("x"), v("y"));
        let body = Stmt::let_stmt(
            "t",
            Expr::add(x.clone(), y.clone()),
            st(
                "out",
                Expr::add(Expr::mul(y.clone(), c(8)), x.clone()),
                Expr::select(
                    Expr::likely(Expr::lt(v("t"), v("k"))),
                    c(1),
                    ld("in", x.clone()),
                ),
            ),
        );
        let s = Stmt::for_loop(
            "y",
            c(0),
            v("h"),
            ForType::Serial,
            Stmt::for_loop("x", c(0), v("w"), ForType::Parallel, body),
        );
        let p = partition_loops(&s, &Policies::default()).unwrap();
        // y splits where the condition holds for every x; in the rest, the
        // parallel x loop picks its steady state (first, no prologue)
        // with an `if`.
        assert_eq!(count_loops(&p), 4, "{p}");
        let text = p.to_string();
        assert!(text.contains("for (y, 0, y.epilogue) {\n  parallel (x, 0, w) {\n    out[((y * 8) + x)] = 1"), "{text}");
        assert!(text.contains("if ((x < x.epilogue)) {\n      out[((y * 8) + x)] = 1"), "{text}");
        let mut settings = vec![];
        for h in [0, 1, 4] {
            for w in [0, 3, 8] {
                for k in [-1, 2, 5, 30] {
                    settings.push(vec![("h", h), ("w", w), ("k", k)]);
                }
            }
        }
        same(&s, &p, &[("in", 8), ("out", 64)], &settings);
    }

    #[test]
    fn random_linear_conditions() {
        let mut rng = Rng::new(5);
        let ops = [BinOp::LT, BinOp::LE, BinOp::GT, BinOp::GE, BinOp::EQ];
        for _ in 0..300 {
            let x = v("x");
            let k = rng.range(-3, 3);
            let r = rng.range(-10, 10);
            let op = ops[rng.range(0, 4) as usize];
            let lhs = Expr::add(Expr::mul(c(k), x.clone()), Expr::add(c(r), v("q")));
            let cond = Expr::binary(op, lhs, Expr::mul(x.clone(), c(rng.range(-1, 1))));
            let cond = if rng.range(0, 3) == 0 {
                Expr::not(cond)
            } else {
                cond
            };
            partitions_select_like_the_original(cond, ("m", 2), ("e", 0));
        }
    }

    /// `for x in [m, m + e): out[x - m] = select(likely(cond), 1, 2)`,
    /// partitioned, computes what the original does, for three settings of
    /// m, e and q and one more (`m_last`, `e_last`, q = 1).
    fn partitions_select_like_the_original(cond: Expr, m_last: (&str, i64), e_last: (&str, i64)) {
        let i = Expr::sub(v("x"), v("m"));
        let body = st("out", i, Expr::select(Expr::likely(cond), c(1), c(2)));
        let s = Stmt::for_loop("x", v("m"), v("e"), ForType::Serial, body);
        let p = partition_loops(&s, &Policies::default()).unwrap();
        let settings = vec![
            vec![("m", -7), ("e", 15), ("q", 0)],
            vec![("m", 0), ("e", 15), ("q", 3)],
            vec![("m", 5), ("e", 3), ("q", -4)],
            vec![m_last, e_last, ("q", 1)],
        ];
        same(&s, &p, &[("out", 15)], &settings);
    }

    /// `for xo in [0, e): out[base] = value(in[base])`, base being a
    /// ShiftInwards tail's clamp `min(likely(xo * 2), n - 2)` (with `guard`,
    /// `xo` under a GuardWithIf tail's `if likely(xo < n)`), the value
    /// `in[base] + ...` with `terms` loads, or with `math`, two sines of it.
    fn shifted_tail_loop(terms: usize, math: bool, guard: bool) -> Stmt {
        let xo = v("xo");
        let base = if guard {
            xo.clone()
        } else {
            Expr::min(Expr::likely(Expr::mul(xo.clone(), c(2))), Expr::sub(v("n"), c(2)))
        };
        let mut value = ld("in", base.clone());
        for _ in 1..terms {
            value = Expr::add(value, ld("in", base.clone()));
        }
        if math {
            let sin = |e: Expr| Expr::intrinsic(Type::float(32), Intrinsic::Math(MathFn::Sin), vec![e]);
            let f = Expr::cast(Type::float(32), value);
            value = Expr::cast(Type::i32(), Expr::add(sin(f.clone()), sin(sin(f))));
        }
        let mut body = st("out", base, value);
        if guard {
            body = Stmt::if_then_else(Expr::likely(Expr::lt(xo, v("n"))), body, None);
        }
        Stmt::for_loop("xo", c(0), v("e"), ForType::Serial, body)
    }

    #[test]
    fn a_body_heavy_with_math_is_not_copied_for_a_scalar_clamp() {
        let loops = |s: &Stmt, p: &Policies| count_loops(&partition_loops(s, p).unwrap());
        let auto = Policies::default();
        // Arithmetic, however much: the steady state drops the clamp (and
        // the epilogue is a copy).
        assert_eq!(loops(&shifted_tail_loop(3, false, false), &auto), 2);
        assert_eq!(loops(&shifted_tail_loop(200, false, false), &auto), 2);
        let settings = vec![vec![("e", 5), ("n", 9)], vec![("e", 1), ("n", 2)]];
        let light = shifted_tail_loop(3, false, false);
        same(&light, &strip_likely(&partition_loops(&light, &auto).unwrap()), &[("out", 12), ("in", 12)], &settings);
        // Polynomials: one loop keeps its clamp, which costs little beside them.
        let heavy = shifted_tail_loop(1, true, false);
        assert_eq!(loops(&heavy, &auto), 1);
        // A boolean mark is worth its copy at any weight.
        assert!(loops(&shifted_tail_loop(1, true, true), &auto) >= 2);
        // So is a clamp the schedule asks to partition.
        let always = Policies::new(HashMap::from([("xo".to_string(), Partition::Always)]));
        assert_eq!(loops(&heavy, &always), 2);
    }

    #[test]
    fn a_quotient_bound_beyond_int32_is_not_wrapped() {
        // likely(t / 4 >= q) with q = 10^9: 4 q wraps in 32 bits, which
        // must not make every iteration steady.
        let t = v("t");
        let cond = Expr::ge(Expr::div(t.clone(), c(4)), v("q"));
        let body = st("out", t.clone(), Expr::select(Expr::likely(cond), c(1), c(2)));
        let s = Stmt::for_loop("t", c(0), v("e"), ForType::Serial, body);
        let p = partition_loops(&s, &Policies::default()).unwrap();
        let settings = vec![
            vec![("e", 12), ("q", 1_000_000_000)],
            vec![("e", 12), ("q", 2)],
            vec![("e", 12), ("q", -1_000_000_000)],
        ];
        same(&s, &p, &[("out", 12)], &settings);
    }

    #[test]
    fn random_conditions_on_quotients() {
        // likely(k * ((a x + b) / d) + r op q): every op, signs of k and a.
        let mut rng = Rng::new(9);
        let ops = [BinOp::LT, BinOp::LE, BinOp::GT, BinOp::GE, BinOp::EQ];
        for _ in 0..300 {
            let x = v("x");
            let num = Expr::add(Expr::mul(c(rng.range(-3, 3)), x.clone()), c(rng.range(-9, 9)));
            let quot = Expr::div(num, c(rng.range(1, 5)));
            let lhs = Expr::add(Expr::mul(c(rng.range(-3, 3)), quot), c(rng.range(-6, 6)));
            let op = ops[rng.range(0, 4) as usize];
            partitions_select_like_the_original(Expr::binary(op, lhs, v("q")), ("m", -3), ("e", 9));
        }
    }

    #[test]
    fn vectorized_tail_partitions_into_clean_vector_loop() {
        // for xo in [0, (n+7)/8): vectorized xi in [0, 8):
        //   if (likely(xo*8 + xi < n)) out[xo*8+xi] = in[xo*8+xi] * 3
        let xx = Expr::add(Expr::mul(v("xo"), c(8)), v("xi"));
        let inner = Stmt::if_then_else(
            Expr::likely(Expr::lt(xx.clone(), v("n"))),
            st("out", xx.clone(), Expr::mul(ld("in", xx), c(3))),
            None,
        );
        let ext = Expr::div(Expr::add(v("n"), c(7)), c(8));
        let s = Stmt::for_loop(
            "xo",
            c(0),
            ext,
            ForType::Serial,
            Stmt::for_loop("xi", c(0), c(8), ForType::Vectorized, inner),
        );
        let vec = vectorize_loops(&s).unwrap();
        let p = strip_likely(&partition_loops(&vec, &Policies::default()).unwrap());
        let text = p.to_string();
        // Steady state: an unpredicated vector store with no condition.
        assert!(text.contains("for (xo, 0, xo.epilogue) {\n  out[ramp((xo * 8), 1, 8)] = (in[ramp((xo * 8), 1, 8)] * x8(3))\n}"), "{text}");
        for n in [0, 1, 7, 8, 9, 16, 23] {
            let settings = vec![vec![("n", n)]];
            same(
                &s,
                &p,
                &[("in", n as usize), ("out", n as usize)],
                &settings,
            );
        }
    }

    #[test]
    fn conditions_over_inner_loops_partition_the_outer_loop() {
        // for y in [m, m + e) (serial or parallel):
        //   for x in [a y + b, a y + b + w):
        //     [for z in [0, 2):]
        //       let t = x + k y in
        //       out[...] = select(likely(cond(t, y, z)), 1, 2) + in[clamp(likely(x + j y + r), 0, 15)]
        // Marks solved over x's (and z's) iterations partition y; the
        // results must not change.
        let mut rng = Rng::new(21);
        let ops = [BinOp::LT, BinOp::LE, BinOp::GT, BinOp::GE];
        let mut outer_partitioned = 0;
        for case in 0..300 {
            let (y, x, z) = (v("y"), v("x"), v("z"));
            let xmin = Expr::add(Expr::mul(y.clone(), c(rng.range(-1, 1))), c(rng.range(-3, 3)));
            let with_z = rng.range(0, 1) == 1;
            let lhs = Expr::add(
                Expr::add(v("t"), Expr::mul(c(rng.range(-2, 2)), y.clone())),
                if with_z { Expr::mul(c(rng.range(-1, 1)), z.clone()) } else { c(0) },
            );
            let op = ops[rng.range(0, 3) as usize];
            let mut cond = Expr::binary(op, lhs, Expr::add(v("q"), c(rng.range(-8, 8))));
            if rng.range(0, 3) == 0 {
                cond = Expr::and(cond, Expr::lt(y.clone(), Expr::add(v("q"), c(4))));
            }
            let tap = Expr::add(
                Expr::add(x.clone(), Expr::mul(c(rng.range(-1, 1)), y.clone())),
                c(rng.range(-4, 4)),
            );
            let value = Expr::add(
                Expr::select(Expr::likely(cond), c(1), c(2)),
                ld("in", clamp_likely(tap, c(0), c(15))),
            );
            let row = Expr::add(
                Expr::mul(Expr::sub(y.clone(), v("m")), c(8)),
                Expr::sub(x.clone(), v("xmin")),
            );
            let index = Expr::add(Expr::mul(row, c(2)), if with_z { z.clone() } else { c(0) });
            let mut inner = Stmt::let_stmt(
                "t",
                Expr::add(x.clone(), Expr::mul(c(rng.range(-1, 1)), y.clone())),
                st("out", index, value),
            );
            if with_z {
                inner = Stmt::for_loop("z", c(0), c(2), ForType::Serial, inner);
            }
            let xloop = Stmt::let_stmt(
                "xmin",
                xmin,
                Stmt::for_loop("x", v("xmin"), v("w"), ForType::Serial, inner),
            );
            let ft = if case % 2 == 0 { ForType::Serial } else { ForType::Parallel };
            let s = Stmt::for_loop("y", v("m"), v("e"), ft, xloop);
            let p = partition_loops(&s, &Policies::default()).unwrap();
            let text = p.to_string();
            if text.contains("y.prologue") || text.contains("y.epilogue") {
                outer_partitioned += 1;
            }
            let mut settings = vec![];
            for (m, e) in [(-5, 9), (0, 1), (3, 0), (-2, 6)] {
                for w in [0, 1, 6] {
                    for q in [-6, 0, 5] {
                        settings.push(vec![("m", m), ("e", e), ("w", w), ("q", q)]);
                    }
                }
            }
            same(&s, &p, &[("in", 16), ("out", 144)], &settings);
            same(&s, &strip_likely(&p), &[("in", 16), ("out", 144)], &settings);
        }
        assert!(outer_partitioned >= 100, "{outer_partitioned}");
    }

    #[test]
    fn parallel_loop_picks_its_steady_state_with_an_if() {
        // parallel y in [0, h): for x in [0, 8): out[y*8 + x] = in[clamp(likely(y + x - 1), 0, h - 1)]
        let (y, x) = (v("y"), v("x"));
        let tap = clamp_likely(
            Expr::sub(Expr::add(y.clone(), x.clone()), c(1)),
            c(0),
            Expr::sub(v("h"), c(1)),
        );
        let body = st("out", Expr::add(Expr::mul(y.clone(), c(8)), x.clone()), ld("in", tap));
        let s = Stmt::for_loop(
            "y",
            c(0),
            v("h"),
            ForType::Parallel,
            Stmt::for_loop("x", c(0), c(8), ForType::Serial, body),
        );
        let p = partition_loops(&s, &Policies::default()).unwrap();
        let text = p.to_string();
        // One parallel loop, its body choosing the clamp-free steady state.
        assert_eq!(text.matches("parallel (y").count(), 1, "{text}");
        assert!(text.contains("if (((y.prologue <= y) && (y < y.epilogue)))"), "{text}");
        // The other iterations are not partitioned again (marks dropped).
        assert_eq!(text.matches("for (x").count(), 2, "{text}");
        assert!(!text.contains("likely"), "{text}");
        let settings: Vec<Vec<(&str, i64)>> = (0..20).map(|h| vec![("h", h)]).collect();
        same(&s, &p, &[("in", 20), ("out", 160)], &settings);
    }

    #[test]
    fn strip_likely_removes_all() {
        let e = Expr::add(
            Expr::likely(v("a")),
            Expr::intrinsic(
                Type::i32(),
                Intrinsic::LikelyIfInnermost,
                vec![Expr::likely(v("b"))],
            ),
        );
        let s = strip_likely(&Stmt::evaluate(e));
        assert_eq!(s.to_string(), "(a + b)\n");
    }
}
