//! Vectorization (the algorithm of Halide's VectorizeLoops, written anew).
//!
//! Assumes: runs after storage flattening (no Provide, Realize or Func
//! calls remain); every loop marked `ForType::Vectorized` has an extent that
//! folds to an integer constant greater than 1; names bound inside a
//! vectorized loop do not shadow the loop variable.
//!
//! Guarantees: no `ForType::Vectorized` loop remains. Each vectorized loop
//! over `v` with constant extent `N` is replaced by its body, in which `v`
//! is `Ramp(min, 1, N)` and every expression that depends on it is widened
//! to `N` lanes (scalar operands of a mixed operation are broadcast; ramps
//! and broadcasts are combined so that affine indices stay ramps). Lets
//! whose value becomes a vector keep their name and get a vector type (or
//! are substituted away when the value is a ramp or a broadcast). An `if`
//! with a lane-varying condition becomes predicated loads and stores (with
//! a scalar all-lanes-true fast path when the condition was `likely`); an
//! allocation inside the loop gets one copy per lane; inner loops whose
//! bounds vary per lane run over the union of the lanes' ranges with the
//! body predicated. Anything that cannot be vectorized (impure calls such
//! as `print`, vector assertions, unpredictable bodies) is scalarized: it
//! runs in a serial loop over the lanes; so does an atomic update that is
//! not a reduction across lanes (`VectorSubs::mutate_atomic`). A reduction
//! of all lanes into one location outside an atomic update is a user error.
//!
//! Nested vectorized loops (Halide's scheme): the outer loop is vectorized
//! first; at an inner vectorized loop its variable joins the stack of
//! vectorized variables and every expression inside gets the product of
//! their lanes, the innermost loop's lanes varying fastest (an outer
//! variable is a ramp of broadcasts, an inner one a broadcast of ramps:
//! vectors of vectors, which the backend flattens). Lets of the outer
//! loop whose values became vectors are widened again inside the inner
//! loop under new names (`t.widened.y`). An allocation inside gets one
//! copy per lane of every enclosing vectorized loop, sized for the largest
//! of the lanes' extents.

use std::collections::HashMap;

use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute_in_stmt;
use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, ForType, Intrinsic, Mutator, Stmt, StmtNode};
use crate::lower::tracing::TraceEvent;
use crate::lower::unroll_loops::{const_int_value, fold_binary};

#[cfg(test)]
#[path = "test_interpreter.rs"]
pub(crate) mod test_interpreter;

/// Replace every `ForType::Vectorized` loop in `s` by its widened body.
pub fn vectorize_loops(s: &Stmt) -> Result<Stmt> {
    let mut v = FindVectorLoops { error: None };
    let out = v.mutate_stmt(s);
    match v.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

struct FindVectorLoops {
    error: Option<Error>,
}

impl Mutator for FindVectorLoops {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        if let StmtNode::For {
            name,
            min,
            extent,
            for_type: ForType::Vectorized,
            body,
        } = s.node()
        {
            if let Ok(lanes) = vector_lanes(name, extent) {
                if let Some(chunked) = cap_vector_width(name, min, lanes, 1, body) {
                    return self.mutate_stmt(&chunked);
                }
            }
            return match vectorize_one(name, min, extent, body) {
                Ok(b) => b,
                Err(e) => {
                    self.error = Some(e);
                    s.clone()
                }
            };
        }
        mutate_stmt_children(self, s)
    }
}

/// The most lanes a vector gets, counting every enclosing vectorized loop.
///
/// Wider vectors are legal (Halide allows 65535 lanes) but LLVM's type
/// legalization and register allocation grow faster than linearly with
/// width: nested vectorized loops of 512 and 12 lanes made 6144-lane
/// vectors that took LLVM over 20 minutes (fuzz seed 77245; Halide never
/// finishes it either). A loop that would pass the cap is run as a serial
/// loop over chunks of the widest width that still fits, each chunk
/// vectorized. That runs the same lanes: the lanes of a vectorized loop are
/// independent (a pure var writes only its own sites, and an update's
/// self-references keep the pure vars in place; a vectorized RVar was
/// proven race-free or is atomic), so any order of them gives the same
/// values, and chunks keep the lanes' order.
pub const MAX_VECTOR_LANES: u32 = 256;

/// The loop over `name` (`lanes` lanes) chunked so that, inside
/// `lanes_outside` lanes of enclosing vectorized loops, no vector passes
/// `MAX_VECTOR_LANES`: a serial loop `name.lane_chunk` over vectorized
/// chunks of the largest divisor of `lanes` that fits, or a serial loop when
/// none does. `None` when the loop fits as it is.
fn cap_vector_width(
    name: &str,
    min: &Expr,
    lanes: u16,
    lanes_outside: u32,
    body: &Stmt,
) -> Option<Stmt> {
    let fits = |n: u32| lanes_outside.saturating_mul(n) <= MAX_VECTOR_LANES;
    if fits(lanes as u32) {
        return None;
    }
    let chunk = (2..lanes as u32)
        .rev()
        .find(|d| lanes as u32 % d == 0 && fits(*d));
    let Some(chunk) = chunk else {
        return Some(Stmt::for_loop(
            name,
            min.clone(),
            Expr::make_const_i64(min.ty(), lanes as i64),
            ForType::Serial,
            body.clone(),
        ));
    };
    let outer = format!("{name}.lane_chunk");
    let ty = min.ty().element_of();
    let chunk_min = fold_binary(
        BinOp::Add,
        min.clone(),
        fold_binary(
            BinOp::Mul,
            Expr::var(ty, outer.clone()),
            Expr::make_const_i64(ty, chunk as i64),
        ),
    );
    let inner = Stmt::for_loop(
        name,
        chunk_min,
        Expr::make_const_i64(ty, chunk as i64),
        ForType::Vectorized,
        body.clone(),
    );
    Some(Stmt::for_loop(
        outer,
        Expr::zero(ty),
        Expr::make_const_i64(ty, (lanes as u32 / chunk) as i64),
        ForType::Serial,
        inner,
    ))
}

fn vectorize_one(name: &str, min: &Expr, extent: &Expr, body: &Stmt) -> Result<Stmt> {
    let lanes = vector_lanes(name, extent)?;
    if !min.ty().is_scalar() || !min.ty().is_int_or_uint() {
        return Err(Error::internal(format!(
            "vectorized loop over {name} has a non-scalar or non-integer min {min}"
        )));
    }
    let vars = vec![VectorVar {
        name: name.to_string(),
        min: min.clone(),
        lanes,
    }];
    let mut subs = VectorSubs {
        replacements: replacements(&vars),
        vars,
        scope: vec![],
        containing_lets: vec![],
        needs_scalarize: false,
        error: None,
    };
    let out = subs.mutate_stmt(body);
    match subs.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The extent of a constant loop to vectorize, or the user error Halide
/// gives for any other.
fn vector_lanes(name: &str, extent: &Expr) -> Result<u16> {
    let simplified = simplify(extent);
    match const_int_value(&simplified) {
        Some(n) if n > 1 && n <= u16::MAX as i64 => Ok(n as u16),
        Some(n) if n > u16::MAX as i64 => Err(Error::user(format!(
            "Halide only supports vector types with up to 65535 lanes. {n} lanes requested. (Vectorizing the loop over {name}.)"
        ))),
        _ => Err(Error::user(format!(
            "Loop over {name} has extent {simplified}. Can only vectorize loops over a constant extent > 1"
        ))),
    }
}

/// One vectorized loop whose variable is being replaced: its first value
/// and its number of lanes.
#[derive(Clone, Debug)]
struct VectorVar {
    name: String,
    min: Expr,
    lanes: u16,
}

/// What each variable of the stack of nested vectorized loops `vars`
/// (outermost first) becomes: a vector with the product of their lanes,
/// the innermost loop's lanes varying fastest.
fn replacements(vars: &[VectorVar]) -> HashMap<String, Expr> {
    let mut r: Vec<Expr> = vars.iter().map(|v| v.min.clone()).collect();
    for ix in (0..vars.len()).rev() {
        let n = vars[ix].lanes;
        for (ik, e) in r.iter_mut().enumerate() {
            *e = if ik == ix {
                let one = Expr::make_const_i64(e.ty(), 1);
                Expr::ramp(e.clone(), one, n)
            } else {
                broadcast(e.clone(), n)
            };
        }
    }
    vars.iter().map(|v| v.name.clone()).zip(r).collect()
}

/// `e` repeated `n` times; a broadcast of a scalar stays one broadcast.
fn broadcast(e: Expr, n: u16) -> Expr {
    match e.node() {
        ExprNode::Broadcast { value, lanes } if value.ty().is_scalar() => {
            Expr::broadcast(value.clone(), lanes * n)
        }
        _ => Expr::broadcast(e, n),
    }
}

/// How an operand of a lanewise operation looks: the same value (a scalar,
/// or a vector of `w` lanes) repeated, an affine ramp whose base has `w`
/// lanes (lane `j` is `base[j % w] + stride[j % w] * (j / w)`), or
/// anything else.
enum Shape {
    Uniform(Expr),
    Ramp(Expr, Expr),
    Other,
}

fn shape(e: &Expr) -> Shape {
    if e.ty().is_scalar() {
        return Shape::Uniform(e.clone());
    }
    match e.node() {
        ExprNode::Broadcast { value, .. } => Shape::Uniform(value.clone()),
        ExprNode::Ramp { base, stride, .. } => Shape::Ramp(base.clone(), stride.clone()),
        _ => Shape::Other,
    }
}

/// The same value in every lane of `e`, if it is that simple.
fn scalar_uniform(e: &Expr) -> Option<Expr> {
    match shape(e) {
        Shape::Uniform(u) if u.ty().is_scalar() => Some(u),
        _ => None,
    }
}

/// Repeat `e` to `lanes` lanes (a whole number of copies); vectors of the
/// right width pass.
fn widen(e: Expr, lanes: u16) -> Expr {
    if e.lanes() == lanes {
        e
    } else {
        debug_assert_eq!(
            lanes % e.lanes(),
            0,
            "widening a {}-lane vector to {lanes} lanes",
            e.lanes()
        );
        let n = lanes / e.lanes();
        broadcast(e, n)
    }
}

/// `a op b` lanewise, widening a narrower operand (by repetition) and
/// keeping ramps and broadcasts in closed form where that is exact
/// (integer wrap-around arithmetic is a ring, so the ramp identities hold
/// for every width). Ramps and broadcasts of vectors combine when their
/// repeated units have the same width (the narrower one repeated to it).
pub(crate) fn vector_binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    let lanes = a.lanes().max(b.lanes());
    if lanes == 1 {
        return fold_binary(op, a, b);
    }
    let int = a.ty().is_int_or_uint();
    // `x` repeated to the unit width `w`, if `w` is a whole number of `x`s.
    let to_width = |x: Expr, w: u16| w.is_multiple_of(x.lanes()).then(|| widen(x, w));
    let ramp = |base: Expr, stride: Expr| {
        let n = lanes / base.lanes();
        if stride.is_zero() {
            broadcast(base, n)
        } else {
            Expr::ramp(base, stride, n)
        }
    };
    match (shape(&a), shape(&b)) {
        (Shape::Uniform(x), Shape::Uniform(y)) => {
            let w = x.lanes().max(y.lanes());
            if let (Some(x), Some(y)) = (to_width(x, w), to_width(y, w)) {
                return broadcast(vector_binary(op, x, y), lanes / w);
            }
        }
        (Shape::Ramp(b1, s1), Shape::Uniform(y)) if int => {
            if let Some(y) = to_width(y, b1.lanes()) {
                match op {
                    BinOp::Add | BinOp::Sub => return ramp(vector_binary(op, b1, y), s1),
                    BinOp::Mul => {
                        let base = vector_binary(op, b1, y.clone());
                        return ramp(base, vector_binary(op, s1, y));
                    }
                    _ => {}
                }
            }
        }
        (Shape::Uniform(x), Shape::Ramp(b2, s2)) if int => {
            if let Some(x) = to_width(x, b2.lanes()) {
                match op {
                    BinOp::Add => return ramp(vector_binary(op, x, b2), s2),
                    BinOp::Sub => {
                        let zero = Expr::make_const_i64(s2.ty(), 0);
                        let neg = vector_binary(BinOp::Sub, zero, s2);
                        return ramp(vector_binary(op, x, b2), neg);
                    }
                    BinOp::Mul => {
                        let base = vector_binary(op, x.clone(), b2);
                        return ramp(base, vector_binary(op, x, s2));
                    }
                    _ => {}
                }
            }
        }
        (Shape::Ramp(b1, s1), Shape::Ramp(b2, s2)) if int && b1.lanes() == b2.lanes() => {
            if let BinOp::Add | BinOp::Sub = op {
                return ramp(vector_binary(op, b1, b2), vector_binary(op, s1, s2));
            }
        }
        _ => {}
    }
    Expr::binary(op, widen(a, lanes), widen(b, lanes))
}

/// Lower and upper bounds over the lanes of `e`, as scalar expressions,
/// when `e` is a scalar, a broadcast or a ramp with a constant stride
/// (of such), assuming the ramps do not wrap around.
pub(crate) fn lane_bounds(e: &Expr) -> Option<(Expr, Expr)> {
    match shape(e) {
        Shape::Uniform(u) if u.ty().is_scalar() => Some((u.clone(), u)),
        Shape::Uniform(u) => lane_bounds(&u),
        Shape::Ramp(base, stride) => {
            let s = const_int_value(&stride)?;
            let n = e.lanes() / base.lanes();
            let (lo, hi) = lane_bounds(&base)?;
            let span = Expr::make_const_i64(lo.ty(), s * (n as i64 - 1));
            if s >= 0 {
                Some((lo, fold_binary(BinOp::Add, hi, span)))
            } else {
                Some((fold_binary(BinOp::Add, lo, span), hi))
            }
        }
        Shape::Other => None,
    }
}

/// The largest lane of `e`: in closed form when `lane_bounds` finds it,
/// else reduced across the lanes at run time (as Halide's bounds of lanes).
fn max_over_lanes(e: &Expr) -> Expr {
    match lane_bounds(e) {
        Some((_, hi)) => hi,
        None => Expr::vector_reduce(crate::ir::VectorReduceOp::Max, e.clone(), 1),
    }
}

/// A scalar condition that implies every lane of the vector condition `c`
/// is true (it may be stronger than needed), if one is easy to find.
pub(crate) fn all_lanes_true(c: &Expr) -> Option<Expr> {
    if c.ty().is_scalar() {
        return Some(c.clone());
    }
    if let Some(args) = c
        .as_intrinsic(Intrinsic::Likely)
        .or_else(|| c.as_intrinsic(Intrinsic::LikelyIfInnermost))
    {
        return all_lanes_true(&args[0]);
    }
    match c.node() {
        ExprNode::Broadcast { value, .. } if value.ty().is_scalar() => Some(value.clone()),
        ExprNode::Binary {
            op: BinOp::And,
            a,
            b,
        } => Some(Expr::and(all_lanes_true(a)?, all_lanes_true(b)?)),
        ExprNode::Binary { op, a, b }
            if matches!(op, BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE) =>
        {
            let (amin, amax) = lane_bounds(a)?;
            let (bmin, bmax) = lane_bounds(b)?;
            Some(match op {
                BinOp::LT => Expr::lt(amax, bmin),
                BinOp::LE => Expr::le(amax, bmin),
                BinOp::GT => Expr::gt(amin, bmax),
                _ => Expr::ge(amin, bmax),
            })
        }
        _ => None,
    }
}

/// `if_then_else(c, load)` with no false value (a PredicateLoads tail's
/// call) is the load predicated by `c`, as Halide vectorizes it. The
/// condition keeps its `likely`, so loop partitioning turns the
/// steady state's loads into dense unpredicated ones.
fn predicated_load(kind: &CallKind, wide: &[Expr]) -> Option<Expr> {
    if !matches!(kind, CallKind::Intrinsic(Intrinsic::IfThenElse)) || wide.len() != 2 {
        return None;
    }
    let ExprNode::Load {
        name,
        index,
        predicate,
    } = wide[1].node()
    else {
        return None;
    };
    let predicate = if predicate.is_true() {
        wide[0].clone()
    } else {
        Expr::and(predicate.clone(), wide[0].clone())
    };
    Some(Expr::load(
        wide[1].ty(),
        name.clone(),
        index.clone(),
        predicate,
    ))
}

fn strip_top_likely(c: &Expr) -> Expr {
    match c
        .as_intrinsic(Intrinsic::Likely)
        .or_else(|| c.as_intrinsic(Intrinsic::LikelyIfInnermost))
    {
        Some(args) => args[0].clone(),
        None => c.clone(),
    }
}

fn is_trace_event(e: &Expr) -> bool {
    matches!(
        e.node(),
        ExprNode::Call {
            kind: CallKind::Intrinsic(Intrinsic::Trace),
            ..
        }
    )
}

fn is_impure_call(kind: &CallKind) -> bool {
    !kind.is_pure()
}

/// Does `e` read the buffer `name`?
fn loads_from(e: &Expr, name: &str) -> bool {
    crate::ir::visit::expr_loads_from(e, &|n| n == name)
}

/// A let-bound name in scope inside the vectorized loops: `value` is the
/// widened value if it became a vector (`None` for a scalar binding, which
/// hides an outer vector binding of the same name), bound as `bound_as`
/// (the name itself, or its re-widened copy inside an inner vectorized
/// loop).
struct Binding {
    name: String,
    value: Option<Expr>,
    bound_as: String,
}

/// Substitutes vectors for the variables of the vectorized loops and
/// widens everything.
struct VectorSubs {
    /// The vectorized loops around the current node, outermost first.
    vars: Vec<VectorVar>,
    /// What each of their variables becomes (`replacements(vars)`).
    replacements: HashMap<String, Expr>,
    scope: Vec<Binding>,
    /// The original scalar values of the enclosing lets that became
    /// vectors, outermost first (used to rebuild lanes when scalarizing).
    containing_lets: Vec<(String, Expr)>,
    /// Set by an expression that cannot be widened; the innermost enclosing
    /// statement is then scalarized.
    needs_scalarize: bool,
    error: Option<Error>,
}

impl VectorSubs {
    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// The innermost vectorized loop's variable (for messages).
    fn var(&self) -> &str {
        self.vars
            .last()
            .map(|v| v.name.as_str())
            .unwrap_or_default()
    }

    /// Run the original statement `s` once per lane, in lane order: serial
    /// loops over the lanes of every enclosing vectorized loop. Vectorized
    /// loops inside `s` are vectorized by themselves.
    fn scalarize(&mut self, s: &Stmt) -> Stmt {
        let mut body = s.clone();
        for (name, value) in self.containing_lets.iter().rev() {
            body = substitute_in_stmt(name, value, &body);
        }
        // Innermost first: an inner loop's min may use an outer variable.
        for v in self.vars.iter().rev() {
            let lane = Expr::var(v.min.ty(), format!("{}.lane", v.name));
            let value = fold_binary(BinOp::Add, v.min.clone(), lane);
            body = substitute_in_stmt(&v.name, &value, &body);
        }
        for v in self.vars.iter().rev() {
            let ty = v.min.ty();
            body = Stmt::for_loop(
                format!("{}.lane", v.name),
                Expr::zero(ty),
                Expr::make_const_i64(ty, v.lanes as i64),
                ForType::Serial,
                body,
            );
        }
        match vectorize_loops(&body) {
            Ok(b) => b,
            Err(e) => {
                self.fail(e);
                body
            }
        }
    }

    /// A trace event of a vector value is one event (Halide's grouping):
    /// its value and each coordinate become vectors of the same lanes. The
    /// tag and the parent id must not vary across lanes.
    fn vector_trace(&mut self, e: &Expr, args: &[Expr]) -> Expr {
        let ev = match TraceEvent::from_args(args) {
            Ok(ev) => ev,
            Err(err) => {
                self.fail(err);
                return e.clone();
            }
        };
        let parent_id = self.mutate_expr(&ev.parent_id);
        let tag: Vec<Expr> = ev.tag.iter().map(|t| self.mutate_expr(t)).collect();
        if parent_id.ty().is_vector() || tag.iter().any(|t| t.ty().is_vector()) {
            self.needs_scalarize = true;
            return e.clone();
        }
        let value = ev.value.as_ref().map(|v| self.mutate_expr(v));
        let coords: Vec<Expr> = ev.coordinates.iter().map(|c| self.mutate_expr(c)).collect();
        let lanes = value
            .iter()
            .chain(&coords)
            .map(|x| x.lanes())
            .max()
            .unwrap_or(1);
        TraceEvent {
            parent_id,
            tag,
            value: value.map(|v| widen(v, lanes)),
            coordinates: coords.into_iter().map(|c| widen(c, lanes)).collect(),
            ..ev
        }
        .to_expr()
    }

    fn push_let(&mut self, name: &str, original: &Expr, widened: &Expr) -> bool {
        let vector = widened.ty().is_vector();
        self.scope.push(Binding {
            name: name.to_string(),
            value: vector.then(|| widened.clone()),
            bound_as: name.to_string(),
        });
        if vector {
            self.containing_lets
                .push((name.to_string(), original.clone()));
        }
        vector
    }

    fn pop_let(&mut self, vector: bool) {
        self.scope.pop();
        if vector {
            self.containing_lets.pop();
        }
    }

    /// Ramps and broadcasts are substituted into the body rather than
    /// bound, so later passes and the code generator see dense indices.
    fn inline_let_value(widened: &Expr) -> bool {
        !matches!(shape(widened), Shape::Other)
    }

    /// Add `cond` to the predicate of every vector load and store in `s`.
    /// `None` if `s` holds something that cannot be predicated.
    fn predicate(&self, s: &Stmt, cond: &Expr) -> Option<Stmt> {
        let mut p = Predicator {
            cond: cond.clone(),
            valid: true,
        };
        let out = p.mutate_stmt(s);
        p.valid.then_some(out)
    }

    fn mutate_if(
        &mut self,
        s: &Stmt,
        condition: &Expr,
        then_case: &Stmt,
        else_case: &Option<Stmt>,
    ) -> Stmt {
        let cond = self.mutate_expr(condition);
        let then_v = self.mutate_stmt(then_case);
        let else_v = else_case.as_ref().map(|e| self.mutate_stmt(e));
        if cond.ty().is_scalar() {
            let same = cond.same_as(condition)
                && then_v.same_as(then_case)
                && match (&else_v, else_case) {
                    (Some(a), Some(b)) => a.same_as(b),
                    (None, None) => true,
                    _ => false,
                };
            return if same {
                s.clone()
            } else {
                Stmt::if_then_else(cond, then_v, else_v)
            };
        }
        let pcond = strip_top_likely(&cond);
        let predicated = self.predicate(&then_v, &pcond).and_then(|t| match &else_v {
            Some(e) => self
                .predicate(e, &Expr::not(pcond.clone()))
                .map(|e| Stmt::block(vec![t, e])),
            None => Some(t),
        });
        let slow = match predicated {
            Some(p) => p,
            None => self.scalarize(s),
        };
        let is_likely = cond.as_intrinsic(Intrinsic::Likely).is_some()
            || cond.as_intrinsic(Intrinsic::LikelyIfInnermost).is_some();
        if is_likely {
            if let Some(all) = all_lanes_true(&pcond) {
                return Stmt::if_then_else(Expr::likely(all), then_v, Some(slow));
            }
        }
        slow
    }

    fn mutate_for(
        &mut self,
        s: &Stmt,
        name: &str,
        min: &Expr,
        extent: &Expr,
        for_type: ForType,
        body: &Stmt,
    ) -> Stmt {
        if for_type == ForType::Vectorized {
            if const_int_value(&simplify(extent)) == Some(1) {
                let inner = substitute_in_stmt(name, min, body);
                return self.mutate_stmt(&inner);
            }
            return match vector_lanes(name, extent) {
                Ok(lanes) => {
                    let outside = self.vars.iter().map(|v| v.lanes as u32).product();
                    match cap_vector_width(name, min, lanes, outside, body) {
                        Some(chunked) => self.mutate_stmt(&chunked),
                        None => self.mutate_nested_vector_loop(name, min, lanes, body),
                    }
                }
                Err(e) => {
                    self.fail(e);
                    s.clone()
                }
            };
        }
        let nmin = self.mutate_expr(min);
        let next = self.mutate_expr(extent);
        self.scope.push(Binding {
            name: name.to_string(),
            value: None,
            bound_as: name.to_string(),
        });
        let nbody = self.mutate_stmt(body);
        self.scope.pop();
        if nmin.ty().is_scalar() && next.ty().is_scalar() {
            if nmin.same_as(min) && next.same_as(extent) && nbody.same_as(body) {
                return s.clone();
            }
            return Stmt::for_loop(name, nmin, next, for_type, nbody);
        }
        // Bounds vary across lanes: iterate over the union of the lanes'
        // ranges and predicate the body to each lane's own range.
        let end = vector_binary(BinOp::Add, nmin.clone(), next.clone());
        let (Some((lo, _)), Some((_, hi))) = (lane_bounds(&nmin), lane_bounds(&end)) else {
            return self.scalarize(s);
        };
        let lanes = nmin.lanes().max(next.lanes());
        let v = Expr::broadcast(Expr::var(nmin.ty().element_of(), name), lanes);
        let inside = Expr::and(
            Expr::ge(v.clone(), widen(nmin, lanes)),
            Expr::lt(v, widen(end, lanes)),
        );
        match self.predicate(&nbody, &inside) {
            Some(pb) => Stmt::for_loop(
                name,
                lo.clone(),
                fold_binary(BinOp::Sub, hi, lo),
                for_type,
                pb,
            ),
            None => self.scalarize(s),
        }
    }

    /// A vectorized loop over `name` inside the vectorized loops so far:
    /// its variable joins them (a loop starting at a lane-varying min is
    /// rebased to start at 0 first), and the enclosing lets that became
    /// vectors are widened again, under new names, for its body.
    fn mutate_nested_vector_loop(
        &mut self,
        name: &str,
        min: &Expr,
        lanes: u16,
        body: &Stmt,
    ) -> Stmt {
        let nmin = self.mutate_expr(min);
        let (min, body) = if nmin.ty().is_vector() {
            let v = Expr::var(min.ty(), name);
            let shifted = substitute_in_stmt(name, &fold_binary(BinOp::Add, v, min.clone()), body);
            (Expr::zero(min.ty()), shifted)
        } else {
            (min.clone(), body.clone())
        };
        self.vars.push(VectorVar {
            name: name.to_string(),
            min,
            lanes,
        });
        self.replacements = replacements(&self.vars);
        let mark = self.scope.len();
        let mut rebound = vec![];
        for (n, original) in self.containing_lets.clone() {
            let w = self.mutate_expr(&original);
            let bound_as = format!("{n}.widened.{name}");
            if !Self::inline_let_value(&w) {
                rebound.push((bound_as.clone(), w.clone()));
            }
            self.scope.push(Binding {
                name: n,
                value: Some(w),
                bound_as,
            });
        }
        let out = Stmt::let_stmts(rebound, self.mutate_stmt(&body));
        self.scope.truncate(mark);
        self.vars.pop();
        self.replacements = replacements(&self.vars);
        out
    }

    fn mutate_allocate(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::Allocate {
            name,
            ty,
            memory_type,
            extents,
            condition,
            body,
        } = s.node()
        else {
            unreachable!()
        };
        // One copy per lane of every enclosing vectorized loop, each sized
        // for the largest of the lanes' extents.
        let mut new_extents: Vec<Expr> = self
            .vars
            .iter()
            .map(|v| Expr::i32(v.lanes as i64))
            .collect();
        for e in extents {
            let m = self.mutate_expr(e);
            new_extents.push(if m.ty().is_vector() {
                max_over_lanes(&m)
            } else {
                m
            });
        }
        // Allocated when some lane needs it.
        let cond = self.mutate_expr(condition);
        let cond = if cond.ty().is_vector() {
            Expr::vector_reduce(crate::ir::VectorReduceOp::Or, cond, 1)
        } else {
            cond
        };
        // Lane copies innermost: name[i] -> name[(i * lanes0 + lane0) * lanes1 + lane1].
        let mut rewritten = body.clone();
        for v in &self.vars {
            let lane = fold_binary(
                BinOp::Sub,
                Expr::var(v.min.ty(), v.name.clone()),
                v.min.clone(),
            );
            rewritten = RewriteAllocAccess {
                name: name.clone(),
                lanes: v.lanes,
                lane,
            }
            .mutate_stmt(&rewritten);
        }
        let nbody = self.mutate_stmt(&rewritten);
        Stmt::new(StmtNode::Allocate {
            name: name.clone(),
            ty: *ty,
            memory_type: *memory_type,
            extents: new_extents,
            condition: cond,
            body: nbody,
        })
    }

    fn mutate_store(
        &mut self,
        s: &Stmt,
        name: &str,
        value: &Expr,
        index: &Expr,
        predicate: &Expr,
    ) -> Stmt {
        let nv = self.mutate_expr(value);
        let ni = self.mutate_expr(index);
        let np = self.mutate_expr(predicate);
        if nv.same_as(value) && ni.same_as(index) && np.same_as(predicate) {
            return s.clone();
        }
        let lanes = nv.lanes().max(ni.lanes()).max(np.lanes());
        if ni.ty().is_scalar() && lanes > 1 && loads_from(value, name) {
            // Every lane updates one location. Schedule validation proved
            // that distinct lanes write distinct locations, so only the
            // simplifier's knowledge (a guard leaving one lane active, an
            // RDom of extent 1) made the index lane-invariant: the lanes
            // run one after another, in the loop's order (fuzz seed 11242).
            return self.scalarize(s);
        }
        Stmt::store(name, widen(nv, lanes), widen(ni, lanes), widen(np, lanes))
    }
}

impl VectorSubs {
    /// An atomic update (Halide's rules for Atomic nodes in VectorizeLoops):
    /// a store whose value does not read the buffer is vectorized as it is
    /// (one atomic store per lane); `f[i] = f[i] op y` with `op` one of
    /// + * min max (and && || on bools) becomes one update of `f[i]` by the
    /// reduction of `y` across the lanes when `i` is the same in every
    /// lane, or one vector update when `i` is a ramp with a constant
    /// non-zero stride (every lane its own element). Anything else, and
    /// any update holding a lock, runs lane by lane in a serial loop, each
    /// lane's update atomic by itself.
    fn mutate_atomic(&mut self, s: &Stmt, producer: &str, mutex: &str, body: &Stmt) -> Stmt {
        if !mutex.is_empty() {
            return self.scalarize(s);
        }
        let StmtNode::Store {
            name,
            value,
            index,
            predicate,
        } = body.node()
        else {
            return self.scalarize(s);
        };
        if !loads_from(value, name) && !loads_from(predicate, name) {
            let st = self.mutate_stmt(body);
            if st.same_as(body) {
                return s.clone();
            }
            return Stmt::atomic(producer, mutex, st);
        }
        match self.vector_reduce_update(name, value, index, predicate) {
            Some(st) if self.error.is_none() => Stmt::atomic(producer, mutex, st),
            _ => self.scalarize(s),
        }
    }

    /// `f[i] = f[i] op y` as a reduction across lanes (see `mutate_atomic`).
    fn vector_reduce_update(
        &mut self,
        name: &str,
        value: &Expr,
        index: &Expr,
        predicate: &Expr,
    ) -> Option<Stmt> {
        use crate::ir::VectorReduceOp as R;
        if !predicate.is_true() {
            return None;
        }
        let ExprNode::Binary { op, a, b } = value.node() else {
            return None;
        };
        let reduce = match op {
            BinOp::Add => R::Add,
            BinOp::Mul => R::Mul,
            BinOp::Min => R::Min,
            BinOp::Max => R::Max,
            BinOp::And => R::And,
            BinOp::Or => R::Or,
            _ => return None,
        };
        let same_place = |e: &Expr| match e.node() {
            ExprNode::Load {
                name: n,
                index: li,
                predicate: lp,
            } if n == name && lp.is_true() => Some(li.clone()),
            _ => None,
        };
        let (load_index, y) = match (same_place(a), same_place(b)) {
            (Some(li), _) if !loads_from(b, name) => (li, b),
            (_, Some(li)) if !loads_from(a, name) => (li, a),
            _ => return None,
        };
        let y = self.mutate_expr(y);
        if y.ty().is_scalar() {
            // The same update by every lane: not a reduction across lanes.
            return None;
        }
        let si = self.mutate_expr(index);
        let li = self.mutate_expr(&load_index);
        let elem_ty = value.ty().element_of();
        let (store_index, y) = match (scalar_uniform(&si), scalar_uniform(&li)) {
            (Some(s1), Some(l1)) => {
                if !crate::analysis::simplify::can_prove(&Expr::eq(s1.clone(), l1)) {
                    return None;
                }
                (s1, Expr::vector_reduce(reduce, y, 1))
            }
            _ => {
                let (Shape::Ramp(sb, ss), Shape::Ramp(lb, ls)) = (shape(&si), shape(&li)) else {
                    return None;
                };
                // (A ramp of vectors may repeat its values.)
                let distinct = sb.ty().is_scalar() && const_int_value(&ss).is_some_and(|k| k != 0);
                let same = crate::analysis::simplify::can_prove(&Expr::and(
                    Expr::eq(sb, lb),
                    Expr::eq(ss, ls),
                ));
                if !distinct || !same || si.lanes() != y.lanes() {
                    return None;
                }
                (si, y)
            }
        };
        let lanes = y.lanes();
        let old = Expr::load(
            elem_ty.with_lanes(lanes),
            name,
            store_index.clone(),
            Expr::bool_const(true),
        );
        let new_value = Expr::binary(*op, old, y);
        Some(Stmt::store(
            name,
            new_value,
            store_index,
            widen(Expr::bool_const(true), lanes),
        ))
    }
}

impl Mutator for VectorSubs {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if self.error.is_some() {
            return e.clone();
        }
        match e.node() {
            ExprNode::Variable { name, .. } => {
                if let Some(b) = self.scope.iter().rev().find(|b| b.name == *name) {
                    return match &b.value {
                        Some(w) if Self::inline_let_value(w) => w.clone(),
                        Some(w) => Expr::var(w.ty(), b.bound_as.clone()),
                        None => e.clone(),
                    };
                }
                if let Some(r) = self.replacements.get(name) {
                    if e.ty() == r.ty().element_of() {
                        return r.clone();
                    }
                    return Expr::cast(e.ty().with_lanes(r.lanes()), r.clone());
                }
                e.clone()
            }
            ExprNode::Binary { op, a, b } => {
                let na = self.mutate_expr(a);
                let nb = self.mutate_expr(b);
                if na.same_as(a) && nb.same_as(b) {
                    e.clone()
                } else {
                    vector_binary(*op, na, nb)
                }
            }
            ExprNode::Cast(a) => {
                let na = self.mutate_expr(a);
                if na.same_as(a) {
                    return e.clone();
                }
                let t = e.ty().with_lanes(na.lanes());
                match shape(&na) {
                    Shape::Uniform(u) if na.ty().is_vector() => {
                        let n = na.lanes() / u.lanes();
                        broadcast(Expr::cast(e.ty().with_lanes(u.lanes()), u), n)
                    }
                    _ => Expr::cast(t, na),
                }
            }
            ExprNode::Reinterpret(a) => {
                let na = self.mutate_expr(a);
                if na.same_as(a) {
                    e.clone()
                } else {
                    Expr::reinterpret(e.ty().with_lanes(na.lanes()), na)
                }
            }
            ExprNode::Select { cond, t, f } => {
                let (nc, nt, nf) = (
                    self.mutate_expr(cond),
                    self.mutate_expr(t),
                    self.mutate_expr(f),
                );
                if nc.same_as(cond) && nt.same_as(t) && nf.same_as(f) {
                    return e.clone();
                }
                let lanes = nc.lanes().max(nt.lanes()).max(nf.lanes());
                match (
                    scalar_uniform(&nc),
                    scalar_uniform(&nt),
                    scalar_uniform(&nf),
                ) {
                    (Some(c), Some(x), Some(y)) if lanes > 1 => {
                        Expr::broadcast(Expr::select(c, x, y), lanes)
                    }
                    _ => Expr::select(widen(nc, lanes), widen(nt, lanes), widen(nf, lanes)),
                }
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                let ni = self.mutate_expr(index);
                let np = self.mutate_expr(predicate);
                if ni.same_as(index) && np.same_as(predicate) {
                    return e.clone();
                }
                let lanes = ni.lanes().max(np.lanes());
                Expr::load(
                    e.ty().with_lanes(lanes),
                    name.clone(),
                    widen(ni, lanes),
                    widen(np, lanes),
                )
            }
            ExprNode::Let { name, value, body } => {
                let nv = self.mutate_expr(value);
                let vector = self.push_let(name, value, &nv);
                let nb = self.mutate_expr(body);
                self.pop_let(vector);
                if vector && Self::inline_let_value(&nv) {
                    nb
                } else if nv.same_as(value) && nb.same_as(body) {
                    e.clone()
                } else {
                    Expr::let_(name.clone(), nv, nb)
                }
            }
            ExprNode::Call {
                kind: CallKind::Intrinsic(Intrinsic::Trace),
                args,
                ..
            } => self.vector_trace(e, args),
            ExprNode::Call { name, args, kind } => {
                let nargs: Vec<Expr> = args.iter().map(|a| self.mutate_expr(a)).collect();
                if nargs.iter().zip(args).all(|(n, o)| n.same_as(o)) {
                    return e.clone();
                }
                let lanes = nargs.iter().map(|a| a.lanes()).max().unwrap_or(1);
                if lanes == 1 {
                    return Expr::call(e.ty(), name.clone(), nargs, kind.clone());
                }
                let has_string = nargs
                    .iter()
                    .any(|a| matches!(a.node(), ExprNode::StringImm(_)));
                if is_impure_call(kind) || has_string || matches!(kind, CallKind::Halide { .. }) {
                    self.needs_scalarize = true;
                    return e.clone();
                }
                let mut wide: Vec<Expr> = nargs.into_iter().map(|a| widen(a, lanes)).collect();
                if let Some(load) = predicated_load(kind, &wide) {
                    return load;
                }
                if matches!(kind, CallKind::Intrinsic(Intrinsic::IfThenElse))
                    && wide[0].ty().is_vector()
                    && args.get(1).is_some_and(is_trace_event)
                {
                    // A traced store of a PredicateStores tail: an event
                    // reports a whole vector, so lanes that do not store
                    // are reported one by one (tracing.rs).
                    self.needs_scalarize = true;
                    return e.clone();
                }
                if matches!(kind, CallKind::Intrinsic(Intrinsic::IfThenElse)) && wide.len() >= 2 {
                    // Lazy select: a lane reads memory only on its taken side.
                    let cond = strip_top_likely(&wide[0]);
                    wide[1] = Predicator {
                        cond: cond.clone(),
                        valid: true,
                    }
                    .mutate_expr(&wide[1]);
                    if wide.len() > 2 {
                        wide[2] = Predicator {
                            cond: Expr::not(cond),
                            valid: true,
                        }
                        .mutate_expr(&wide[2]);
                    }
                }
                Expr::call(e.ty().with_lanes(lanes), name.clone(), wide, kind.clone())
            }
            ExprNode::Ramp { .. }
            | ExprNode::Broadcast { .. }
            | ExprNode::Shuffle { .. }
            | ExprNode::VectorReduce { .. } => {
                let n = mutate_expr_children(self, e);
                if !n.same_as(e) {
                    // Loops are vectorized outermost first, on scalar code.
                    self.fail(Error::internal(format!(
                        "vectorizing the loop over {} around an expression that is already a vector ({e})",
                        self.var()
                    )));
                    return e.clone();
                }
                n
            }
            _ => mutate_expr_children(self, e),
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        let saved = std::mem::replace(&mut self.needs_scalarize, false);
        let mut out = match s.node() {
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } => self.mutate_store(s, name, value, index, predicate),
            StmtNode::LetStmt { name, value, body } => {
                let nv = self.mutate_expr(value);
                if self.needs_scalarize {
                    // Scalarized below, together with the body.
                    s.clone()
                } else {
                    let vector = self.push_let(name, value, &nv);
                    let nb = self.mutate_stmt(body);
                    self.pop_let(vector);
                    if vector && Self::inline_let_value(&nv) {
                        nb
                    } else if nv.same_as(value) && nb.same_as(body) {
                        s.clone()
                    } else {
                        Stmt::let_stmt(name.clone(), nv, nb)
                    }
                }
            }
            StmtNode::AssertStmt { condition, message } => {
                // The message's values may vary across lanes even when the
                // condition does not (e.g. an always-false check).
                let varying_message = self
                    .vars
                    .iter()
                    .map(|v| v.name.as_str())
                    .chain(
                        self.scope
                            .iter()
                            .filter(|b| b.value.is_some())
                            .map(|b| b.name.as_str()),
                    )
                    .any(|v| crate::ir::visit::expr_uses_var(message, v));
                if varying_message || self.mutate_expr(condition).ty().is_vector() {
                    self.needs_scalarize = true;
                }
                s.clone()
            }
            StmtNode::IfThenElse {
                condition,
                then_case,
                else_case,
            } => self.mutate_if(s, condition, then_case, else_case),
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => self.mutate_for(s, name, min, extent, *for_type, body),
            StmtNode::Allocate { .. } => self.mutate_allocate(s),
            StmtNode::Atomic {
                producer_name,
                mutex_name,
                body,
            } => self.mutate_atomic(s, producer_name, mutex_name, body),
            StmtNode::Provide { name, .. } | StmtNode::Realize { name, .. } => {
                self.fail(Error::internal(format!(
                    "vectorize_loops found a Provide/Realize of {name}; it must run after storage flattening"
                )));
                s.clone()
            }
            _ => mutate_stmt_children(self, s),
        };
        if self.needs_scalarize {
            out = self.scalarize(s);
        }
        self.needs_scalarize = saved;
        out
    }
}

/// Rewrites accesses to a per-iteration allocation inside a vectorized loop
/// so that each lane has its own copy (lane index innermost).
struct RewriteAllocAccess {
    name: String,
    lanes: u16,
    lane: Expr,
}

impl RewriteAllocAccess {
    fn index(&self, i: Expr) -> Expr {
        let scaled = fold_binary(
            BinOp::Mul,
            i,
            Expr::make_const_i64(self.lane.ty(), self.lanes as i64),
        );
        fold_binary(BinOp::Add, scaled, self.lane.clone())
    }
}

impl Mutator for RewriteAllocAccess {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Load {
                name,
                index,
                predicate,
            } if *name == self.name && index.ty().is_scalar() => Expr::load(
                e.ty(),
                name.clone(),
                self.index(index.clone()),
                predicate.clone(),
            ),
            _ => e,
        }
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::Allocate { name, .. } = s.node() {
            if *name == self.name {
                return s.clone(); // shadowed
            }
        }
        let s = mutate_stmt_children(self, s);
        match s.node() {
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } if *name == self.name && index.ty().is_scalar() => Stmt::store(
                name.clone(),
                value.clone(),
                self.index(index.clone()),
                predicate.clone(),
            ),
            _ => s,
        }
    }
}

/// Adds a vector condition to the predicates of vector loads and stores.
struct Predicator {
    cond: Expr,
    valid: bool,
}

impl Predicator {
    fn merge(&self, p: &Expr) -> Expr {
        if p.is_true() {
            self.cond.clone()
        } else {
            Expr::and(p.clone(), self.cond.clone())
        }
    }
}

impl Mutator for Predicator {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if !self.valid {
            return e.clone();
        }
        let e2 = mutate_expr_children(self, e);
        match e2.node() {
            ExprNode::Load {
                name,
                index,
                predicate,
            } if index.lanes() == self.cond.lanes() => {
                Expr::load(e2.ty(), name.clone(), index.clone(), self.merge(predicate))
            }
            ExprNode::Call { kind, .. } if !kind.is_pure() => {
                self.valid = false;
                e2
            }
            ExprNode::VectorReduce { .. } => {
                self.valid = false;
                e2
            }
            _ => e2,
        }
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if !self.valid {
            return s.clone();
        }
        match s.node() {
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } => {
                if index.lanes() != self.cond.lanes() {
                    // A store every lane makes to one place: cannot mask it.
                    self.valid = false;
                    return s.clone();
                }
                let nv = self.mutate_expr(value);
                let ni = self.mutate_expr(index);
                let np = self.mutate_expr(predicate);
                Stmt::store(name.clone(), nv, ni, self.merge(&np))
            }
            // Masked atomic updates are not supported (as in Halide): the
            // statement is scalarized instead.
            StmtNode::AssertStmt { .. } | StmtNode::Atomic { .. } => {
                self.valid = false;
                s.clone()
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_interpreter::{random_memory, run_full, Memory, Rng};
    use super::*;
    use crate::error::ErrorKind;
    use crate::ir::Type;
    use std::collections::HashMap;

    fn i32v(n: &str) -> Expr {
        Expr::var_i32(n)
    }
    fn c(v: i64) -> Expr {
        Expr::i32(v)
    }
    fn t() -> Expr {
        Expr::bool_const(true)
    }
    fn ld(buf: &str, idx: Expr) -> Expr {
        Expr::load(Type::i32(), buf, idx, t())
    }
    fn st(buf: &str, idx: Expr, v: Expr) -> Stmt {
        Stmt::store(buf, v, idx, t())
    }
    fn vloop(var: &str, min: Expr, ext: i64, body: Stmt) -> Stmt {
        Stmt::for_loop(var, min, c(ext), ForType::Vectorized, body)
    }
    fn has_vector_loop(s: &Stmt) -> bool {
        s.to_string().contains("vectorized")
    }

    /// Runs `s` before and after vectorization on random memories and
    /// checks that the results agree.
    fn check_same(s: &Stmt, bufs: &[(&str, usize)], scalars: &[(&str, i64)], seeds: u64) -> Stmt {
        let v = vectorize_loops(s).unwrap_or_else(|e| panic!("{e}\n{s}"));
        assert!(!has_vector_loop(&v), "{v}");
        for seed in 0..seeds {
            let mut rng = Rng::new(seed + 1);
            let mut mem = Memory::new();
            for (name, len) in bufs {
                mem.insert(name.to_string(), random_memory(&mut rng, *len, -10, 10));
            }
            let env: HashMap<String, i64> =
                scalars.iter().map(|(k, x)| (k.to_string(), *x)).collect();
            let a = run_full(s, &mem, &env).unwrap_or_else(|e| panic!("original failed: {e}\n{s}"));
            let b =
                run_full(&v, &mem, &env).unwrap_or_else(|e| panic!("vectorized failed: {e}\n{v}"));
            assert_eq!(
                a, b,
                "mismatch for seed {seed}\noriginal:\n{s}\nvectorized:\n{v}"
            );
        }
        v
    }

    #[test]
    fn basic_widening_prints() {
        // vectorized (x, 0, 8) { out[x] = in[x] * 2 + y }
        let x = i32v("x");
        let body = st(
            "out",
            x.clone(),
            Expr::add(Expr::mul(ld("in", x.clone()), c(2)), i32v("y")),
        );
        let s = vloop("x", c(0), 8, body);
        let v = vectorize_loops(&s).unwrap();
        assert_eq!(
            v.to_string(),
            "out[ramp(0, 1, 8)] = ((in[ramp(0, 1, 8)] * x8(2)) + x8(y))\n"
        );
        check_same(&s, &[("in", 8), ("out", 8)], &[("y", 3)], 5);
    }

    #[test]
    fn affine_index_stays_dense_ramp() {
        // out[x*1 + y*stride - m] = in[x*1 + y*stride - m], x in [m, m+8)
        let x = i32v("x");
        let idx = Expr::sub(
            Expr::add(
                Expr::mul(x.clone(), c(1)),
                Expr::mul(i32v("y"), i32v("stride")),
            ),
            i32v("m"),
        );
        let s = vloop("x", i32v("m"), 8, st("out", idx.clone(), ld("in", idx)));
        let v = vectorize_loops(&s).unwrap();
        assert_eq!(v.to_string(), "out[ramp(((m + (y * stride)) - m), 1, 8)] = in[ramp(((m + (y * stride)) - m), 1, 8)]\n");
        // Strided and scaled indices stay ramps too.
        let s2 = vloop(
            "x",
            c(0),
            4,
            st(
                "out",
                Expr::mul(Expr::add(x.clone(), c(1)), c(3)),
                Expr::sub(c(10), x),
            ),
        );
        let v2 = vectorize_loops(&s2).unwrap();
        assert_eq!(v2.to_string(), "out[ramp(3, 3, 4)] = ramp(10, -1, 4)\n");
    }

    #[test]
    fn lets_widen_without_renaming() {
        // let t = in[x] in let u = t * t in let k = y + 1 in out[x] = u + k + x
        let x = i32v("x");
        let body = Stmt::let_stmt(
            "t",
            ld("in", x.clone()),
            Stmt::let_stmt(
                "u",
                Expr::mul(i32v("t"), i32v("t")),
                Stmt::let_stmt(
                    "k",
                    Expr::add(i32v("y"), c(1)),
                    Stmt::let_stmt(
                        "r",
                        Expr::add(x.clone(), i32v("k")),
                        st(
                            "out",
                            x.clone(),
                            Expr::add(
                                i32v("u"),
                                Expr::let_(
                                    "q",
                                    Expr::mul(x, c(2)),
                                    Expr::add(i32v("q"), i32v("r")),
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        );
        let s = vloop("x", c(0), 8, body);
        let v = check_same(&s, &[("in", 8), ("out", 8)], &[("y", 5)], 5);
        let text = v.to_string();
        assert!(text.contains("let t = in[ramp(0, 1, 8)]"), "{text}");
        assert!(text.contains("let u = (t * t)"), "{text}");
        assert!(text.contains("let k = (y + 1)"), "{text}");
        // Ramp-valued lets are substituted away.
        assert!(!text.contains("let r"), "{text}");
    }

    #[test]
    fn guard_with_if_tail_becomes_predicated() {
        // for xo in [0, (n+7)/8): vectorized xi in [0, 8):
        //   if (likely(xo*8 + xi < n)) out[xo*8+xi] = in[xo*8+xi] + 1
        let xx = Expr::add(Expr::mul(i32v("xo"), c(8)), i32v("xi"));
        let cond = Expr::likely(Expr::lt(xx.clone(), i32v("n")));
        let inner = Stmt::if_then_else(
            cond,
            st("out", xx.clone(), Expr::add(ld("in", xx), c(1))),
            None,
        );
        let ext = Expr::div(Expr::add(i32v("n"), c(7)), c(8));
        let s = Stmt::for_loop(
            "xo",
            c(0),
            ext,
            ForType::Serial,
            vloop("xi", c(0), 8, inner),
        );
        for n in [1, 8, 13, 16, 21] {
            let v = check_same(
                &s,
                &[("in", n as usize), ("out", n as usize)],
                &[("n", n)],
                3,
            );
            let text = v.to_string();
            assert!(text.contains("if (likely((((xo * 8) + 7) < n)))"), "{text}");
            assert!(
                text.contains("predicate ((ramp((xo * 8), 1, 8) < x8(n)))"),
                "{text}"
            );
            assert!(
                text.contains("(in[ramp((xo * 8), 1, 8)] if (ramp((xo * 8), 1, 8) < x8(n)))"),
                "{text}"
            );
        }
    }

    #[test]
    fn vector_if_with_else_is_predicated() {
        let x = i32v("x");
        let cond = Expr::gt(ld("in", x.clone()), c(2));
        let s = vloop(
            "x",
            c(0),
            16,
            Stmt::if_then_else(
                cond,
                st("out", x.clone(), c(1)),
                Some(st("out", x.clone(), Expr::mul(ld("in", x), c(3)))),
            ),
        );
        let v = check_same(&s, &[("in", 16), ("out", 16)], &[], 10);
        assert!(!v.to_string().contains("if ("), "{v}");
    }

    #[test]
    fn scalar_if_stays_if() {
        let x = i32v("x");
        let s = vloop(
            "x",
            c(0),
            8,
            Stmt::if_then_else(Expr::gt(i32v("y"), c(0)), st("out", x.clone(), x), None),
        );
        let v = check_same(&s, &[("out", 8)], &[("y", 1)], 1);
        assert_eq!(
            v.to_string(),
            "if ((y > 0)) {\n  out[ramp(0, 1, 8)] = ramp(0, 1, 8)\n}\n"
        );
    }

    #[test]
    fn select_min_max_cast() {
        let x = i32v("x");
        let a = ld("a", x.clone());
        let val = Expr::select(
            Expr::lt(a.clone(), i32v("y")),
            Expr::min(a.clone(), Expr::mul(x.clone(), c(2))),
            Expr::max(
                Expr::cast(Type::i32(), Expr::cast(Type::int(8), Expr::mul(a, c(50)))),
                i32v("y"),
            ),
        );
        let s = vloop("x", c(2), 8, st("out", Expr::sub(x, c(2)), val));
        check_same(&s, &[("a", 10), ("out", 8)], &[("y", 2)], 10);
    }

    #[test]
    fn print_is_scalarized_in_lane_order() {
        let x = i32v("x");
        let p = Expr::intrinsic(
            Type::i32(),
            Intrinsic::Print,
            vec![Expr::string("v"), ld("in", x.clone())],
        );
        let s = vloop(
            "x",
            c(0),
            4,
            Stmt::let_stmt(
                "t",
                Expr::add(x.clone(), c(1)),
                st("out", x, Expr::add(p, i32v("t"))),
            ),
        );
        let v = check_same(&s, &[("in", 4), ("out", 4)], &[], 2);
        assert!(v.to_string().contains("for (x.lane, 0, 4)"), "{v}");
        let mut mem = Memory::new();
        mem.insert("in".into(), vec![5, 6, 7, 8]);
        mem.insert("out".into(), vec![0; 4]);
        let o = run_full(&v, &mem, &HashMap::new()).unwrap();
        assert_eq!(o.log, vec!["v 5", "v 6", "v 7", "v 8"]);
        assert_eq!(o.mem["out"], vec![6, 8, 10, 12]);
    }

    #[test]
    fn vector_assert_is_scalarized() {
        let x = i32v("x");
        let err = Expr::error(crate::ir::ErrorCode::Generic, vec![Expr::string("bad")]);
        let s = vloop(
            "x",
            c(0),
            4,
            Stmt::block(vec![
                Stmt::assert(Expr::lt(x.clone(), c(10)), err),
                st("out", x.clone(), x),
            ]),
        );
        let v = check_same(&s, &[("out", 4)], &[], 1);
        assert!(v.to_string().contains("x.lane"), "{v}");
    }

    #[test]
    fn allocation_inside_vector_loop_gets_a_copy_per_lane() {
        // vectorized x: allocate tmp[4]; for k in [0,4): tmp[k] = in[x] + k; out[x] = tmp[1] * tmp[3]
        let x = i32v("x");
        let k = i32v("k");
        let fill = Stmt::for_loop(
            "k",
            c(0),
            c(4),
            ForType::Serial,
            st("tmp", k.clone(), Expr::add(ld("in", x.clone()), k)),
        );
        let body = Stmt::new(StmtNode::Allocate {
            name: "tmp".into(),
            ty: Type::i32(),
            memory_type: Default::default(),
            extents: vec![c(4)],
            condition: t(),
            body: Stmt::block(vec![
                fill,
                st(
                    "out",
                    x.clone(),
                    Expr::mul(ld("tmp", c(1)), ld("tmp", c(3))),
                ),
            ]),
        });
        let s = vloop("x", c(0), 8, body);
        let v = check_same(&s, &[("in", 8), ("out", 8)], &[], 5);
        let text = v.to_string();
        assert!(text.contains("allocate tmp[int32 * 8 * 4]"), "{text}");
        assert!(text.contains("tmp[ramp((k * 8), 1, 8)]"), "{text}");
    }

    #[test]
    fn inner_loop_with_lane_varying_extent() {
        // vectorized x in [0,8): out[x] = 0; for r in [x, 8 - x... ) out[x] += in[r]
        let x = i32v("x");
        let r = i32v("r");
        let acc = st(
            "out",
            x.clone(),
            Expr::add(ld("out", x.clone()), ld("in", r)),
        );
        let inner = Stmt::for_loop(
            "r",
            Expr::div(x.clone(), c(2)),
            Expr::add(x.clone(), c(1)),
            ForType::Serial,
            acc,
        );
        let s = vloop(
            "x",
            c(0),
            8,
            Stmt::block(vec![st("out", x.clone(), c(0)), inner]),
        );
        let v = check_same(&s, &[("in", 16), ("out", 8)], &[], 5);
        assert!(v.to_string().contains("for (r, "), "{v}");
        // A ramp min: the loop runs over the union of the lanes' ranges,
        // with a predicated body (no scalarization).
        let acc = st(
            "out",
            x.clone(),
            Expr::add(ld("out", x.clone()), ld("in", i32v("r"))),
        );
        let inner = Stmt::for_loop(
            "r",
            x.clone(),
            Expr::sub(c(9), x.clone()),
            ForType::Serial,
            acc,
        );
        let s = vloop(
            "x",
            c(0),
            8,
            Stmt::block(vec![st("out", x.clone(), c(0)), inner]),
        );
        let v = check_same(&s, &[("in", 16), ("out", 8)], &[], 5);
        let text = v.to_string();
        assert!(!text.contains("x.lane"), "{text}");
        assert!(text.contains("for (r, 0, 9) {"), "{text}");
        assert!(
            text.contains("predicate (((x8(r) >= ramp(0, 1, 8)) && (x8(r) < x8(9))))"),
            "{text}"
        );
        // Lane-invariant bounds stay as they are.
        let inner2 = Stmt::for_loop(
            "r",
            c(0),
            i32v("n"),
            ForType::Serial,
            st("out", x.clone(), Expr::add(ld("out", x.clone()), i32v("r"))),
        );
        let v2 = check_same(&vloop("x", c(0), 8, inner2), &[("out", 8)], &[("n", 3)], 1);
        assert!(v2.to_string().starts_with("for (r, 0, n) {"), "{v2}");
    }

    #[test]
    fn store_to_lane_invariant_index() {
        // out[0] = in[x]: the last lane wins, as in the serial loop.
        let x = i32v("x");
        let s = vloop("x", c(0), 8, st("out", c(0), ld("in", x.clone())));
        let v = check_same(&s, &[("in", 8), ("out", 1)], &[], 3);
        assert!(v.to_string().contains("out[x8(0)]"), "{v}");
        // out[0] = out[0] + in[x] reads what the previous lane wrote: the
        // lanes run one after another, as the serial loop (schedule
        // validation refuses such a race before this pass, so only a
        // simplified index gets here: fuzz seed 11242).
        let s = vloop(
            "x",
            c(0),
            8,
            st("out", c(0), Expr::add(ld("out", c(0)), ld("in", x))),
        );
        let v = check_same(&s, &[("in", 8), ("out", 1)], &[], 3);
        assert!(v.to_string().contains("x.lane"), "{v}");
    }

    #[test]
    fn lazy_select_predicates_its_loads() {
        // out[x] = if_then_else(x < n, in[x], 0) with in of size n: the
        // masked lanes must not load.
        let x = i32v("x");
        let ite = Expr::intrinsic(
            Type::i32(),
            Intrinsic::IfThenElse,
            vec![Expr::lt(x.clone(), i32v("n")), ld("in", x.clone()), c(0)],
        );
        let s = vloop("x", c(0), 8, st("out", x, ite));
        let v = vectorize_loops(&s).unwrap();
        assert!(
            v.to_string()
                .contains("(in[ramp(0, 1, 8)] if (ramp(0, 1, 8) < x8(n)))"),
            "{v}"
        );
    }

    #[test]
    fn errors() {
        let x = i32v("x");
        let s = Stmt::for_loop(
            "x",
            c(0),
            i32v("n"),
            ForType::Vectorized,
            st("out", x.clone(), x.clone()),
        );
        let e = vectorize_loops(&s).unwrap_err();
        assert_eq!(e.kind, ErrorKind::User);
        assert_eq!(
            e.message,
            "Loop over x has extent n. Can only vectorize loops over a constant extent > 1"
        );
        let s = vloop("x", c(0), 1, st("out", x.clone(), x.clone()));
        assert!(vectorize_loops(&s).is_err());
        // An inner vectorized loop needs a constant extent too.
        let inner = Stmt::for_loop(
            "y",
            c(0),
            i32v("n"),
            ForType::Vectorized,
            st("out", Expr::add(x.clone(), i32v("y")), x.clone()),
        );
        let e = vectorize_loops(&vloop("x", c(0), 8, inner)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::User);
        assert!(
            e.message.starts_with("Loop over y has extent n"),
            "{}",
            e.message
        );
    }

    /// `vectorized x in [0, 4): vectorized y in [0, 3): body`
    fn nested(body: Stmt) -> Stmt {
        vloop("x", c(0), 4, vloop("y", c(0), 3, body))
    }

    /// The widest vector in `s`.
    fn max_lanes(s: &Stmt) -> u16 {
        struct Widest(u16);
        impl Mutator for Widest {
            fn mutate_expr(&mut self, e: &Expr) -> Expr {
                self.0 = self.0.max(e.ty().lanes);
                mutate_expr_children(self, e)
            }
        }
        let mut w = Widest(1);
        w.mutate_stmt(s);
        w.0
    }

    #[test]
    fn vectors_wider_than_the_cap_run_in_chunks() {
        // 64 x 12 nested lanes: the inner loop runs as 3 serial chunks of 4
        // lanes (64 x 4 = 256); a prime inner width that cannot fit runs
        // serially; a single 1000-lane loop runs as 4 chunks of 250.
        let (x, y) = (i32v("x"), i32v("y"));
        let idx = Expr::add(Expr::mul(x.clone(), c(12)), y.clone());
        let src = Expr::add(Expr::mul(y.clone(), c(64)), x.clone());
        let body = st("out", idx, Expr::add(Expr::mul(ld("in", src), c(2)), x.clone()));
        let s = vloop("x", c(0), 64, vloop("y", c(0), 12, body));
        let v = check_same(&s, &[("in", 768), ("out", 768)], &[], 2);
        assert_eq!(max_lanes(&v), 256, "{v}");
        assert!(v.to_string().contains("y.lane_chunk"), "{v}");

        let idx = Expr::add(Expr::mul(x.clone(), c(7)), y.clone());
        let body = st("out", idx, Expr::add(ld("in", Expr::add(x.clone(), y.clone())), y.clone()));
        let s = vloop("x", c(0), 64, vloop("y", c(0), 7, body));
        let v = check_same(&s, &[("in", 80), ("out", 448)], &[], 2);
        assert_eq!(max_lanes(&v), 64, "{v}");

        let body = st("out", x.clone(), Expr::mul(ld("in", x), c(3)));
        let s = vloop("x", c(5), 1000, body);
        let v = check_same(&s, &[("in", 1005), ("out", 1005)], &[], 2);
        assert_eq!(max_lanes(&v), 250, "{v}");
        assert!(v.to_string().contains("x.lane_chunk"), "{v}");
    }

    #[test]
    fn nested_vector_loops_widen_to_vectors_of_vectors() {
        // out[x*3 + y] = in[y*4 + x] * 2 + x: the inner loop's lanes vary fastest.
        let (x, y) = (i32v("x"), i32v("y"));
        let idx = Expr::add(Expr::mul(x.clone(), c(3)), y.clone());
        let src = Expr::add(Expr::mul(y, c(4)), x.clone());
        let s = nested(st("out", idx, Expr::add(Expr::mul(ld("in", src), c(2)), x)));
        let v = check_same(&s, &[("in", 12), ("out", 12)], &[], 4);
        let text = v.to_string();
        // One 12-lane store at a ramp of ramps: dense.
        assert!(
            text.contains("out[ramp(ramp(0, 1, 3), x3(3), 4)]"),
            "{text}"
        );
    }

    #[test]
    fn nested_vector_loops_rewiden_outer_lets() {
        // let t = in[x] * 5 (a vector of x's lanes) is widened again inside
        // the inner loop, under a new name.
        let (x, y) = (i32v("x"), i32v("y"));
        let inner = vloop(
            "y",
            c(0),
            3,
            st(
                "out",
                Expr::add(Expr::mul(x.clone(), c(3)), y.clone()),
                Expr::add(i32v("t"), ld("in", Expr::add(y, c(4)))),
            ),
        );
        let body = Stmt::let_stmt("t", Expr::mul(ld("in", x.clone()), c(5)), inner);
        let s = vloop("x", c(0), 4, body);
        let v = check_same(&s, &[("in", 8), ("out", 12)], &[], 4);
        assert!(v.to_string().contains("let t.widened.y = "), "{v}");
    }

    #[test]
    fn nested_vector_loop_with_lane_varying_min_is_rebased() {
        // vectorized y in [x, x + 3): out[x*3 + y - x] = in[y]
        let (x, y) = (i32v("x"), i32v("y"));
        let inner = vloop(
            "y",
            x.clone(),
            3,
            st(
                "out",
                Expr::sub(Expr::add(Expr::mul(x.clone(), c(3)), y.clone()), x.clone()),
                ld("in", y),
            ),
        );
        let s = vloop("x", c(0), 4, inner);
        check_same(&s, &[("in", 8), ("out", 12)], &[], 4);
    }

    #[test]
    fn nested_vector_loops_scalarize_and_predicate() {
        // An impure call inside both loops runs lane by lane in serial order.
        let (x, y) = (i32v("x"), i32v("y"));
        let p = Expr::intrinsic(
            Type::i32(),
            Intrinsic::Print,
            vec![Expr::string("v"), x.clone(), y.clone()],
        );
        let s = nested(st(
            "out",
            Expr::add(Expr::mul(x.clone(), c(3)), y.clone()),
            p,
        ));
        let v = check_same(&s, &[("out", 12)], &[], 1);
        let o = run_full(
            &v,
            &{
                let mut m = Memory::new();
                m.insert("out".into(), vec![0; 12]);
                m
            },
            &HashMap::new(),
        )
        .unwrap();
        assert_eq!(o.log[0..4], ["v 0 0", "v 0 1", "v 0 2", "v 1 0"]);
        // A lane-varying condition around the inner loop predicates it.
        let guarded = Stmt::if_then_else(
            Expr::lt(ld("in", x.clone()), c(3)),
            vloop(
                "y",
                c(0),
                3,
                st("out", Expr::add(Expr::mul(x.clone(), c(3)), y.clone()), y),
            ),
            None,
        );
        check_same(
            &vloop("x", c(0), 4, guarded),
            &[("in", 4), ("out", 12)],
            &[],
            6,
        );
    }

    #[test]
    fn allocation_sized_per_lane() {
        // vectorized x: allocate tmp[x + 1]; for k in [0, x + 1): tmp[k] = in[k] + x;
        // out[x] = tmp[x]: each lane gets a copy as large as the largest lane's.
        let (x, k) = (i32v("x"), i32v("k"));
        let fill = Stmt::for_loop(
            "k",
            c(0),
            Expr::add(x.clone(), c(1)),
            ForType::Serial,
            st("tmp", k.clone(), Expr::add(ld("in", k), x.clone())),
        );
        let alloc = |extent: Expr| {
            Stmt::new(StmtNode::Allocate {
                name: "tmp".into(),
                ty: Type::i32(),
                memory_type: Default::default(),
                extents: vec![extent],
                condition: t(),
                body: Stmt::block(vec![
                    fill.clone(),
                    st("out", x.clone(), ld("tmp", x.clone())),
                ]),
            })
        };
        let s = vloop("x", c(0), 8, alloc(Expr::add(x.clone(), c(1))));
        let v = check_same(&s, &[("in", 8), ("out", 8)], &[], 3);
        assert!(v.to_string().contains("allocate tmp[int32 * 8 * 8]"), "{v}");
        // An extent no closed form bounds: the largest lane, reduced at run time.
        let s = vloop(
            "x",
            c(0),
            8,
            alloc(Expr::add(
                Expr::modulo(Expr::mul(x.clone(), x.clone()), c(5)),
                x.clone(),
            )),
        );
        let s = substitute_in_stmt("k", &i32v("k"), &s);
        let v = vectorize_loops(&s).unwrap();
        assert!(v.to_string().contains("vector_reduce"), "{v}");
    }

    #[test]
    fn random_expressions_agree() {
        // Random arithmetic over x, a loaded value and a scalar; compare.
        let mut rng = Rng::new(99);
        for _ in 0..200 {
            let e = random_expr(&mut rng, 4);
            let x = i32v("x");
            let s = vloop("x", i32v("m"), 8, st("out", Expr::sub(x, i32v("m")), e));
            check_same(&s, &[("in", 8), ("out", 8)], &[("m", 3), ("y", -4)], 2);
        }
    }

    /// `for r (vectorized, 8 lanes): atomic(f) { f[index] = f[index] op value }`,
    /// with the operand lifted into a let as lift_atomic_exprs leaves it.
    fn atomic_update(index: Expr, op: BinOp, value: Expr, mutex: &str) -> Stmt {
        let update = Stmt::atomic(
            "f",
            mutex,
            st(
                "f",
                i32v("i"),
                Expr::binary(op, ld("f", i32v("i")), i32v("y")),
            ),
        );
        let body = Stmt::let_stmt("i", index, Stmt::let_stmt("y", value, update));
        vloop("r", c(0), 8, body)
    }

    fn lane_loops(s: &Stmt) -> usize {
        s.to_string().matches("for (r.lane").count()
    }

    #[test]
    fn atomic_update_of_one_element_is_a_lane_reduction() {
        for op in [BinOp::Add, BinOp::Mul, BinOp::Min, BinOp::Max] {
            let s = atomic_update(i32v("k"), op, ld("a", i32v("r")), "");
            let v = check_same(&s, &[("a", 8), ("f", 4)], &[("k", 2)], 4);
            let text = v.to_string();
            assert!(text.contains("vector_reduce"), "{text}");
            assert!(text.contains("atomic (f)"), "{text}");
            assert_eq!(lane_loops(&v), 0, "{text}");
        }
    }

    #[test]
    fn atomic_update_of_distinct_elements_is_one_vector_update() {
        let s = atomic_update(
            Expr::mul(i32v("r"), c(2)),
            BinOp::Add,
            ld("a", i32v("r")),
            "",
        );
        let v = check_same(&s, &[("a", 8), ("f", 16)], &[], 4);
        let text = v.to_string();
        assert!(text.contains("ramp(0, 2, 8)"), "{text}");
        assert!(
            !text.contains("vector_reduce") && lane_loops(&v) == 0,
            "{text}"
        );
    }

    #[test]
    fn atomic_updates_whose_lanes_may_collide_run_lane_by_lane() {
        // a histogram: f[a[r] % 4] += 1; lanes of one vector hit one bin
        let hist = atomic_update(
            Expr::modulo(ld("a", i32v("r")), c(4)),
            BinOp::Add,
            Expr::add(i32v("r"), c(1)),
            "",
        );
        // not an operator reduced across lanes
        let sub = atomic_update(i32v("k"), BinOp::Sub, ld("a", i32v("r")), "");
        // a lock held for the update
        let locked = atomic_update(i32v("k"), BinOp::Add, ld("a", i32v("r")), "f.mutex");
        // the same operand in every lane
        let uniform = atomic_update(i32v("k"), BinOp::Add, c(3), "");
        for s in [hist, sub, locked, uniform] {
            let v = check_same(&s, &[("a", 8), ("f", 4)], &[("k", 1)], 4);
            assert_eq!(lane_loops(&v), 1, "{v}");
            assert!(!v.to_string().contains("vector_reduce"), "{v}");
        }
    }

    #[test]
    fn atomic_stores_that_do_not_read_the_buffer_are_plain_vector_stores() {
        let body = Stmt::atomic(
            "f",
            "",
            st("f", ld("a", i32v("r")), Expr::mul(ld("a", i32v("r")), c(3))),
        );
        let s = vloop("r", c(0), 8, body);
        let v = vectorize_loops(&s).unwrap();
        assert_eq!(lane_loops(&v), 0, "{v}");
        assert!(v.to_string().contains("atomic (f)"), "{v}");
    }

    #[test]
    fn atomic_updates_under_a_lane_varying_condition_run_lane_by_lane() {
        let update = Stmt::atomic(
            "f",
            "",
            st("f", c(0), Expr::add(ld("f", c(0)), ld("a", i32v("r")))),
        );
        let s = vloop(
            "r",
            c(0),
            8,
            Stmt::if_then_else(Expr::lt(ld("a", i32v("r")), c(0)), update, None),
        );
        let v = check_same(&s, &[("a", 8), ("f", 1)], &[], 4);
        assert_eq!(lane_loops(&v), 1, "{v}");
    }

    fn random_expr(rng: &mut Rng, depth: u32) -> Expr {
        let x = i32v("x");
        if depth == 0 || rng.range(0, 5) == 0 {
            return match rng.range(0, 4) {
                0 => x,
                1 => i32v("y"),
                2 => c(rng.range(-5, 5)),
                3 => ld("in", Expr::sub(x, i32v("m"))),
                _ => Expr::add(x, c(1)),
            };
        }
        let a = random_expr(rng, depth - 1);
        let b = random_expr(rng, depth - 1);
        match rng.range(0, 8) {
            0 => Expr::add(a, b),
            1 => Expr::sub(a, b),
            2 => Expr::mul(a, b),
            3 => Expr::div(a, b),
            4 => Expr::min(a, b),
            5 => Expr::max(a, b),
            6 => Expr::select(Expr::lt(a.clone(), b.clone()), a, b),
            _ => Expr::let_("l", a, Expr::add(i32v("l"), b)),
        }
    }
}
