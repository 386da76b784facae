//! Interval arithmetic over symbolic expressions (Halide's Bounds.cpp).
//!
//! `bounds_of_expr` gives an `Interval` that contains every value `e` can
//! take when each variable in `scope` ranges over its interval (variables not
//! in scope are treated as fixed symbols). `boxes_required` and
//! `boxes_provided` give, per Func or image, the box of coordinates touched
//! by a Stmt, walking into loops (whose variables then range over the loop)
//! and lets. Results are conservative: bigger than needed is allowed,
//! smaller never. `None` on either side means unbounded.

use crate::fast_hash::{FastMap as HashMap, FastSet as HashSet};

use crate::analysis::simplify::simplify;
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Mutator, Stmt, StmtNode, Type, TypeCode};

#[derive(Clone, Debug)]
pub struct Interval {
    pub min: Option<Expr>,
    pub max: Option<Expr>,
}

pub type Scope = HashMap<String, Interval>;

/// One interval per dimension.
pub type Region = Vec<Interval>;

impl Interval {
    pub fn new(min: Option<Expr>, max: Option<Expr>) -> Interval {
        Interval { min, max }
    }
    pub fn point(e: Expr) -> Interval {
        Interval {
            min: Some(e.clone()),
            max: Some(e),
        }
    }
    pub fn everything() -> Interval {
        Interval {
            min: None,
            max: None,
        }
    }
    pub fn is_bounded(&self) -> bool {
        self.min.is_some() && self.max.is_some()
    }
    /// The range of all values of a type: only for types of at most 16
    /// bits, as in Halide (a 32-bit value, e.g. an index read from an
    /// image, is unbounded for all practical purposes).
    pub fn of_type(ty: Type) -> Interval {
        if (ty.is_int_or_uint() && ty.bits <= 16) || ty.is_bool() {
            Interval::new(
                Some(Expr::type_min(ty.element_of())),
                Some(Expr::type_max(ty.element_of())),
            )
        } else {
            Interval::everything()
        }
    }
    pub fn union(&self, other: &Interval) -> Interval {
        Interval {
            min: zip_opt(&self.min, &other.min, Expr::min),
            max: zip_opt(&self.max, &other.max, Expr::max),
        }
    }
    pub fn simplified(&self) -> Interval {
        Interval {
            min: self.min.as_ref().map(simplify),
            max: self.max.as_ref().map(simplify),
        }
    }
}

fn zip_opt(a: &Option<Expr>, b: &Option<Expr>, f: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f(a.clone(), b.clone())),
        _ => None,
    }
}

/// `f(a, b)` if both are bounded, else whichever is.
fn either_opt(a: &Option<Expr>, b: &Option<Expr>, f: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f(a.clone(), b.clone())),
        (Some(x), None) | (None, Some(x)) => Some(x.clone()),
        (None, None) => None,
    }
}

fn map_opt(a: &Option<Expr>, f: impl Fn(Expr) -> Expr) -> Option<Expr> {
    a.as_ref().map(|x| f(x.clone()))
}

/// Types whose arithmetic we treat as non-overflowing, as Halide does.
fn no_overflow(ty: Type) -> bool {
    ty.is_float() || (ty.is_int() && ty.bits >= 32)
}

/// A constant upper bound of `e` whatever its free variables (the pipeline's
/// buffer shapes and parameters) are: `min(y1, 2) - max(y0, 0) + 1` is at
/// most 3 (Halide's constant bound of a register allocation).
pub fn constant_upper_bound(e: &Expr) -> Option<i64> {
    let mut scope = Scope::default();
    crate::ir::visit::for_each_expr(e, &mut |x| {
        if let Some(v) = x.as_variable() {
            scope.insert(v.to_string(), Interval::everything());
        }
    });
    simplify(&bounds_of_expr(e, &scope).max?).as_int_const()
}

pub fn bounds_of_expr(e: &Expr, scope: &Scope) -> Interval {
    let iv = bounds_raw(e, scope);
    // Narrow integer arithmetic may wrap: fall back to the type's range
    // unless both ends are constants that fit.
    let ty = e.ty();
    // min, max and select pick one of their operands, whose bounds are
    // already of the type's range: nothing wraps there (fuzz seed 2979:
    // `min(u8(x % 2), p)` is at most 1, not 255). A Euclidean remainder
    // never wraps, and its bounds are built so that they don't either
    // (fuzz seed 33725: an `i8 % i8` index is never negative).
    // A cast to a type that holds every value of its operand's type is
    // exact too (fuzz seed 60428: `i8(select(c, false, in[..]))` has a
    // symbolic end, and fell back to -128, below a clamp the simplifier
    // had rightly removed).
    let cannot_wrap = match e.node() {
        ExprNode::Binary {
            op: BinOp::Min | BinOp::Max | BinOp::Mod,
            ..
        }
        | ExprNode::Select { .. } => true,
        ExprNode::Cast(a) => ty.can_represent_type(a.ty()),
        _ => false,
    };
    if ty.is_int_or_uint() && !no_overflow(ty) && !cannot_wrap && single_point(&iv).is_none() {
        // (A single point is the expression's own value, wrapped as the
        // original wraps: it stays.)
        // Exact (unwrapped) evaluation: an endpoint that only fits after
        // wrapping is not a bound.
        let fits = |x: &Option<Expr>| {
            x.as_ref()
                .and_then(exact_const)
                .map(|v| v >= ty.min_int() && v <= ty.max_int())
                .unwrap_or(false)
        };
        if !(fits(&iv.min) && fits(&iv.max)) {
            return Interval::of_type(ty);
        }
        return Interval::new(iv.min.map(|m| simplify(&m)), iv.max.map(|m| simplify(&m)));
    }
    iv
}

/// The exact value of a constant integer expression, without wrapping.
fn exact_const(e: &Expr) -> Option<i128> {
    match e.node() {
        ExprNode::IntImm(v) => Some(*v as i128),
        ExprNode::UIntImm(v) => Some(*v as i128),
        ExprNode::Cast(a) if e.ty().can_represent_type(a.ty()) => exact_const(a),
        // A cast of a value that fits is that value (bounds narrow a wider
        // index this way).
        ExprNode::Cast(a) if e.ty().is_int_or_uint() => {
            // A float converts by truncation (bounds of a float-valued
            // Func's calls reach an index this way).
            let v = match a.node() {
                ExprNode::FloatImm(f) if f.is_finite() && f.abs() < 1e30 => f.trunc() as i128,
                _ => exact_const(a)?,
            };
            (v >= e.ty().min_int() && v <= e.ty().max_int()).then_some(v)
        }
        ExprNode::Binary { op, a, b } => {
            let (x, y) = (exact_const(a)?, exact_const(b)?);
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Min => Some(x.min(y)),
                BinOp::Max => Some(x.max(y)),
                BinOp::Div if y != 0 => Some(x.div_euclid(y)),
                BinOp::Mod if y != 0 => Some(x.rem_euclid(y)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn bounds_raw(e: &Expr, scope: &Scope) -> Interval {
    let ty = e.ty();
    match e.node() {
        ExprNode::IntImm(_) | ExprNode::UIntImm(_) | ExprNode::FloatImm(_) => {
            Interval::point(e.clone())
        }
        ExprNode::StringImm(_) => Interval::point(e.clone()),
        ExprNode::Variable { name, .. } => scope
            .get(name)
            .cloned()
            .unwrap_or_else(|| Interval::point(e.clone())),
        ExprNode::Cast(a) => {
            let ia = bounds_of_expr(a, scope);
            let from = a.ty();
            let safe = ty.can_represent_type(from) || (from.is_float() && ty.is_float());
            if safe {
                Interval::new(
                    map_opt(&ia.min, |x| Expr::cast(ty, x)),
                    map_opt(&ia.max, |x| Expr::cast(ty, x)),
                )
            } else if ty.is_float() {
                Interval::new(
                    map_opt(&ia.min, |x| Expr::cast(ty, x)),
                    map_opt(&ia.max, |x| Expr::cast(ty, x)),
                )
            } else if from.is_float() && ty.is_int() && ty.bits >= 32 {
                // A float converted to a 32- or 64-bit integer must be in
                // range (it is undefined otherwise, as in Halide, whose
                // bounds assume the same), so the conversion is monotonic
                // over the values that occur. The interval may be looser
                // than those values: its ends are first clamped to the
                // integer range, so a loose end cannot wrap around.
                let clamped = |x: Expr| Expr::cast(ty, clamp_to_int_range(x, ty));
                Interval::new(map_opt(&ia.min, clamped), map_opt(&ia.max, clamped))
            } else if let Some(point) = single_point(&ia) {
                // One value (a parameter, say): its cast, whatever it is.
                Interval::point(Expr::cast(ty, point))
            } else {
                // Might wrap or saturate: only constants known to fit pass through.
                let fits = |x: &Option<Expr>| match x.as_ref().map(simplify) {
                    Some(c) => match (c.as_int_const(), c.as_float_const()) {
                        (Some(v), _) => ty.can_represent_i64(v),
                        (None, Some(f)) => ty.can_represent_f64(f.trunc()),
                        _ => false,
                    },
                    None => false,
                };
                // The ends are constants that fit: fold their casts, so
                // that later steps read them as constants (a Bool cast of
                // `e & 1` left unfolded made `6 - u8(b)` look unbounded:
                // fuzz seed 10922).
                let folded = |x: Expr| simplify(&Expr::cast(ty, x));
                if fits(&ia.min) && fits(&ia.max) {
                    Interval::new(map_opt(&ia.min, folded), map_opt(&ia.max, folded))
                } else {
                    // The simplifier may still prove every value of `a`
                    // fits (through bitwise ops, say): then the cast is
                    // exact over those constant bounds.
                    let ic = constant_bounds(a);
                    if fits(&ic.min) && fits(&ic.max) {
                        Interval::new(map_opt(&ic.min, folded), map_opt(&ic.max, folded))
                    } else {
                        Interval::of_type(ty)
                    }
                }
            }
        }
        ExprNode::Reinterpret(_) => Interval::of_type(ty),
        // The simplifier's facts know the alignment of the dividend (`(2x +
        // 2) % 4` is 0 or 2, which is what it makes of a mirrored index).
        ExprNode::Binary {
            op: BinOp::Mod,
            a,
            b,
        } if ty.is_int_or_uint() && b.is_const() => {
            tighter_constants(&bounds_of_binary(BinOp::Mod, a, b, ty, scope), &constant_bounds(e))
        }
        ExprNode::Binary { op, a, b } => bounds_of_binary(*op, a, b, ty, scope),
        ExprNode::Not(_) => Interval::of_type(ty),
        ExprNode::Select { cond, t, f } => {
            let (it, i_f) = (bounds_of_expr(t, scope), bounds_of_expr(f, scope));
            // A condition on the pipeline's parameters alone picks one side
            // for the whole range (as Halide): keep the choice symbolic
            // instead of taking both sides' hull.
            if cond.ty().is_scalar() && cond.is_pure() && only_parameters(cond, scope) {
                let pick = |a: &Option<Expr>, b: &Option<Expr>| match (a, b) {
                    (Some(a), Some(b)) if crate::ir::equality::equal(a, b) => Some(a.clone()),
                    (Some(a), Some(b)) => Some(Expr::select(cond.clone(), a.clone(), b.clone())),
                    _ => None,
                };
                Interval::new(pick(&it.min, &i_f.min), pick(&it.max, &i_f.max))
            } else {
                it.union(&i_f)
            }
        }
        ExprNode::Load { .. } => Interval::of_type(ty),
        ExprNode::Ramp {
            base,
            stride,
            lanes,
        } => {
            let last = Expr::add(
                base.clone(),
                Expr::mul(
                    stride.clone(),
                    Expr::make_const_i64(stride.ty(), *lanes as i64 - 1),
                ),
            );
            bounds_of_expr(base, scope).union(&bounds_of_expr(&last, scope))
        }
        ExprNode::Broadcast { value, .. } => bounds_of_expr(value, scope),
        ExprNode::Let { name, value, body } => {
            let iv = bounds_of_expr(value, scope);
            let mut inner = scope.clone();
            inner.insert(name.clone(), iv);
            bounds_of_expr(body, &inner)
        }
        ExprNode::Call { name, args, kind } => match kind {
            // A Func's values lie in its value bounds (see func_value_bounds).
            CallKind::Halide { value_index, .. } => {
                let own = constant_bounds(e);
                match crate::analysis::func_value_bounds::value_bounds(name, *value_index) {
                    Some(iv) => Interval::new(iv.min.or(own.min), iv.max.or(own.max)),
                    None => own,
                }
            }
            // An input's element at one place is one value (Halide's
            // Bounds.cpp): a region may depend on the inputs' values, as in
            // `f[x + in[0]]`; the code computing it loads the input.
            CallKind::Image { .. } => match args_as_points(args, scope) {
                Some(p) => Interval::point(Expr::call(ty, name.clone(), p, kind.clone())),
                None => constant_bounds(e),
            },
            CallKind::Intrinsic(which @ (Intrinsic::Likely | Intrinsic::LikelyIfInnermost)) => {
                // The bounds keep the mark (as Halide's do), so loops over
                // regions derived from a likely clamp partition the same way.
                let ia = bounds_of_expr(&args[0], scope);
                let mark = |x: Expr| Expr::intrinsic(x.ty(), *which, vec![x]);
                Interval::new(map_opt(&ia.min, mark), map_opt(&ia.max, mark))
            }
            CallKind::Intrinsic(Intrinsic::MemoizeExpr) => bounds_of_expr(&args[0], scope),
            CallKind::Intrinsic(Intrinsic::ReturnSecond) => bounds_of_expr(&args[1], scope),
            // The user's promise bounds the value the same way (Halide relies
            // on it for bounds inference).
            CallKind::Intrinsic(Intrinsic::PromiseClamped | Intrinsic::UnsafePromiseClamped) => {
                promise_clamped_bounds(args, scope)
            }
            // The union of the values: every argument of a scatter/gather
            // packet, every one but the index of a mux (Halide's Bounds.cpp;
            // the index is not used to narrow it).
            CallKind::Intrinsic(which @ (Intrinsic::Mux | Intrinsic::ScatterGather)) => {
                let values = if *which == Intrinsic::Mux { args.get(1..).unwrap_or(&[]) } else { &args[..] };
                let mut it = values.iter().map(|a| bounds_of_expr(a, scope));
                let first = it.next().unwrap_or_else(Interval::everything);
                it.fold(first, |acc, x| acc.union(&x))
            }
            CallKind::Intrinsic(which) if lowered_for_bounds(*which, args) => {
                match lower_for_bounds(*which, ty, args) {
                    Some(lowered) => bounds_of_expr(&lowered, scope),
                    None => constant_bounds(e),
                }
            }
            // (A float's abs is at least 0 too: fuzz seed 41864 reads a
            // second output at `clamp(i32(abs(f32(x))), -4, 2)`.)
            CallKind::Intrinsic(Intrinsic::Abs)
                if ty.is_float() || (ty.is_int_or_uint() && no_overflow(args[0].ty())) =>
            {
                let ia = bounds_of_expr(&args[0], scope);
                match (&ia.min, &ia.max) {
                    (Some(lo), Some(hi)) => {
                        let m = Expr::max(Expr::sub(Expr::zero(lo.ty()), lo.clone()), hi.clone());
                        Interval::new(Some(Expr::zero(ty)), Some(Expr::cast(ty, m)))
                    }
                    _ => Interval::new(Some(Expr::zero(ty)), None),
                }
            }
            CallKind::Intrinsic(Intrinsic::Math(
                m @ (MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Trunc | MathFn::Sqrt),
            )) => {
                let ia = bounds_of_expr(&args[0], scope);
                let ap = |x: Expr| Expr::intrinsic(ty, Intrinsic::Math(*m), vec![x]);
                Interval::new(map_opt(&ia.min, ap), map_opt(&ia.max, ap))
            }
            // Of one value each, a pure intrinsic has one value (Halide's
            // simplifier folds the constant ones before its bounds).
            CallKind::Intrinsic(which) if e.is_pure() => {
                match args_as_points(args, scope) {
                    Some(p) if !args.is_empty() => {
                        Interval::point(Expr::intrinsic(ty, *which, p))
                    }
                    _ => constant_bounds(e),
                }
            }
            _ => constant_bounds(e),
        },
        ExprNode::Shuffle { vectors, .. } => {
            let mut it = vectors.iter().map(|v| bounds_of_expr(v, scope));
            let first = it.next().unwrap_or_else(Interval::everything);
            it.fold(first, |acc, x| acc.union(&x))
        }
        ExprNode::VectorReduce { .. } => Interval::of_type(ty),
    }
}

/// Each of `args` as the one value it takes over `scope` (None if one
/// varies): a call of those values is then one value too.
fn args_as_points(args: &[Expr], scope: &Scope) -> Option<Vec<Expr>> {
    args.iter().map(|a| single_point(&bounds_of_expr(a, scope))).collect()
}

/// Intrinsics bounded through what they compute, as Halide's bounds do:
/// the widening ones only when the widened operand has at most 32 bits.
fn lowered_for_bounds(which: Intrinsic, args: &[Expr]) -> bool {
    use Intrinsic::*;
    let narrow = |i: usize| args.get(i).is_some_and(|a| a.ty().bits <= 32);
    let all_narrow = || (0..args.len()).all(narrow);
    let ints = args.iter().all(|a| a.ty().is_int_or_uint());
    match which {
        WidenRightAdd | WidenRightMul | WidenRightSub => narrow(1),
        WideningShiftLeft | WideningShiftRight => narrow(0),
        RoundingShiftLeft | RoundingShiftRight | SaturatingCast => true,
        WideningAdd | WideningSub | WideningMul | SaturatingAdd | SaturatingSub | HalvingAdd
        | HalvingSub | RoundingHalvingAdd => ints && all_narrow(),
        _ => false,
    }
}

/// What `which(args)` (of type `ty`) computes, in plain IR whose bounds
/// are its bounds (Halide's Bounds.cpp lowers the same ones the same way):
/// the widening and averaging ones through wider arithmetic, saturating
/// ones as clamps.
fn lower_for_bounds(which: Intrinsic, ty: Type, args: &[Expr]) -> Option<Expr> {
    use Intrinsic::*;
    let wide = |e: &Expr| {
        let t = e.ty();
        Expr::cast(t.with_bits(t.bits * 2), e.clone())
    };
    let (a, b) = (args.first()?, args.get(1));
    // `e` (of a wider type) clamped to the range of `t`, in `e`'s type.
    let clamp_to = |e: Expr, t: Type| {
        let w = e.ty();
        let (lo, hi) = (Expr::make_const_i64(w, t.min_int() as i64), Expr::make_const_i64(w, t.max_int() as i64));
        Expr::max(Expr::min(e, hi), lo)
    };
    // The difference of unsigned values is signed: in a wider unsigned
    // type, u8 11 - 14 would wrap to 65533 and saturate to 255, not 0.
    let signed_difference = |a: &Expr, b: &Expr| {
        let t = a.ty().with_bits(a.ty().bits * 2).with_code(TypeCode::Int);
        Expr::sub(Expr::cast(t, a.clone()), Expr::cast(t, b.clone()))
    };
    Some(match which {
        SaturatingCast => saturating_cast_for_bounds(ty, a)?,
        WideningAdd => Expr::add(wide(a), wide(b?)),
        WideningMul => Expr::mul(wide(a), wide(b?)),
        WideningSub => signed_difference(a, b?),
        SaturatingAdd => Expr::cast(ty, clamp_to(Expr::add(wide(a), wide(b?)), ty)),
        SaturatingSub => Expr::cast(ty, clamp_to(signed_difference(a, b?), ty)),
        HalvingAdd | HalvingSub | RoundingHalvingAdd => {
            let w = if which == HalvingSub {
                Expr::sub(wide(a), wide(b?))
            } else {
                Expr::add(wide(a), wide(b?))
            };
            let w = if which == RoundingHalvingAdd {
                Expr::add(w.clone(), Expr::one(w.ty()))
            } else {
                w
            };
            Expr::cast(ty, Expr::div(w.clone(), Expr::make_const_i64(w.ty(), 2)))
        }
        _ => crate::analysis::lower_intrinsic::lower_intrinsic(which, ty, args)?,
    })
}

/// Halide's `lower_saturating_cast` to an integer type: the value clamped
/// to the target's range (as far as the source type can hold its ends),
/// then cast. `None` for float targets.
fn saturating_cast_for_bounds(t: Type, a: &Expr) -> Option<Expr> {
    if !t.is_int_or_uint() || t.is_bool() {
        return None;
    }
    let at = a.ty();
    if at == t {
        return Some(a.clone());
    }
    if at.is_float() {
        // To the nearest floats inside the range (not the range's ends
        // rounded to floats, which can lie outside it).
        return Some(Expr::cast(t, clamp_to_int_range(a.clone(), t)));
    }
    let fits = |v: i128| v >= at.min_int() && v <= at.max_int();
    let konst = |v: i128| Expr::make_const_i64(at, v as i64);
    let (lo, hi) = (t.min_int(), t.max_int());
    let mut e = a.clone();
    if fits(hi) && hi < at.max_int() {
        e = Expr::min(e, konst(hi));
    }
    if !at.is_uint() && fits(lo) && lo > at.min_int() {
        e = Expr::max(e, konst(lo));
    }
    Some(Expr::cast(t, e))
}

/// A float `x` clamped to the range of the integer type `ty`: the nearest
/// values of x's type inside it (the float just below 2^31 is 2^31 - 128
/// for f32).
fn clamp_to_int_range(x: Expr, ty: Type) -> Expr {
    let ft = x.ty();
    let lo = ty.min_int() as f64;
    // The largest float of `ft` not above the type's max.
    // Compared exactly (as i128): i64's max rounds up to 2^63 as a float,
    // which is out of range (fuzz seed 7269: the bounds of a saturating
    // cast of a float to i64 wrapped to i64's min).
    let mut hi = ty.max_int() as f64;
    if ft.bits == 32 {
        let mut h = hi as f32;
        while h as i128 > ty.max_int() {
            h = f32::from_bits(h.to_bits() - 1);
        }
        hi = h as f64;
    } else {
        let mut h = hi;
        while h as i128 > ty.max_int() {
            h = f64::from_bits(h.to_bits() - 1);
        }
        hi = h;
    }
    simplify(&Expr::max(
        Expr::min(x, Expr::make_const_f64(ft, hi)),
        Expr::make_const_f64(ft, lo),
    ))
}

/// `promise_clamped(a, lo, hi)` promises `lo <= a <= hi` where it is
/// evaluated: its bounds are those of `a` intersected with `[lo, hi]`. Where
/// `a` is a single point (inside the scope over which it varies) the
/// promise is dropped rather than lifted (as Halide: it holds at that
/// point of the IR only).
fn promise_clamped_bounds(args: &[Expr], scope: &Scope) -> Interval {
    let ia = bounds_of_expr(&args[0], scope);
    if args.len() < 3 || single_point(&ia).is_some() {
        return ia;
    }
    let lo = bounds_of_expr(&args[1], scope);
    let hi = bounds_of_expr(&args[2], scope);
    Interval::new(max_opt(ia.min, lo.min), min_opt(ia.max, hi.max))
}

/// `iv` with each end replaced by `c`'s where that is a tighter constant.
fn tighter_constants(iv: &Interval, c: &Interval) -> Interval {
    let pick = |a: &Option<Expr>, b: &Option<Expr>, lower: bool| match (a, b) {
        (Some(x), Some(y)) => match (x.as_int_const(), y.as_int_const()) {
            (Some(u), Some(v)) if (lower && v > u) || (!lower && v < u) => Some(y.clone()),
            _ => Some(x.clone()),
        },
        (None, y) => y.clone(),
        (x, None) => x.clone(),
    };
    Interval::new(pick(&iv.min, &c.min, true), pick(&iv.max, &c.max, false))
}

/// The constant bounds the simplifier proves for a scalar integer `e`
/// (it tracks bitwise operations, shifts and the like, which interval
/// arithmetic here does not); the type's range for anything else.
fn constant_bounds(e: &Expr) -> Interval {
    let ty = e.ty();
    if !ty.is_scalar() || !ty.is_int_or_uint() {
        return Interval::of_type(ty);
    }
    let info = crate::analysis::simplify::Simplifier::new().info(e);
    let range = Interval::of_type(ty);
    // Only a bound tighter than the type's own range says something (a
    // 32/64-bit value is unbounded here, as in Halide), except that an
    // unsigned value is never negative.
    // The simplifier's facts assume no signed overflow and may lie beyond
    // the type (2x + y + z of Int(32) reaches -2^33): outside the range
    // they say nothing (making a constant of one would wrap it).
    let tighter = |v: Option<i64>, edge: i128| {
        v.filter(|&v| (v as i128) >= ty.min_int() && (v as i128) <= ty.max_int())
            .filter(|&v| v as i128 != edge || (ty.is_uint() && edge == 0))
            .map(|v| Expr::make_const_i64(ty, v))
    };
    Interval::new(
        tighter(info.min, ty.min_int()).or(range.min),
        tighter(info.max, ty.max_int()).or(range.max),
    )
}

fn bounds_of_binary(op: BinOp, a: &Expr, b: &Expr, ty: Type, scope: &Scope) -> Interval {
    if op.is_comparison() || op.is_logical() {
        return Interval::of_type(ty);
    }
    let ia = bounds_of_expr(a, scope);
    let ib = bounds_of_expr(b, scope);
    // Two single values make a single value (a loop-invariant product or
    // quotient stays exact: a fused loop divides by the product of extents).
    if let (Some(pa), Some(pb)) = (single_point(&ia), single_point(&ib)) {
        return Interval::point(Expr::binary(op, pa, pb));
    }
    match op {
        BinOp::Add => Interval::new(
            zip_opt(&ia.min, &ib.min, Expr::add),
            zip_opt(&ia.max, &ib.max, Expr::add),
        ),
        BinOp::Sub => Interval::new(
            zip_opt(&ia.min, &ib.max, Expr::sub),
            zip_opt(&ia.max, &ib.min, Expr::sub),
        ),
        // An unbounded side does not unbound the other operand's side:
        // min(a, 10) is at most 10 whatever a is.
        BinOp::Min => Interval::new(
            zip_opt(&ia.min, &ib.min, Expr::min),
            either_opt(&ia.max, &ib.max, Expr::min),
        ),
        BinOp::Max => Interval::new(
            either_opt(&ia.min, &ib.min, Expr::max),
            zip_opt(&ia.max, &ib.max, Expr::max),
        ),
        BinOp::Mul => {
            if const_sign(b) == Some(0) || const_sign(a) == Some(0) {
                // Zero whatever the other side is (as Halide's bounds).
                Interval::point(Expr::zero(ty))
            } else if let Some(c) = const_sign(b) {
                scale(&ia, b, c, Expr::mul)
            } else if let Some(c) = const_sign(a) {
                scale(&ib, a, c, Expr::mul)
            } else {
                corners(&ia, &ib, Expr::mul)
            }
        }
        BinOp::Div => {
            if let Some(c) = const_sign(b) {
                if c == 0 {
                    return Interval::point(Expr::zero(ty));
                }
                scale(&ia, b, c, Expr::div)
            } else if let (Some(lo), Some(hi), Some(bv)) = (&ia.min, &ia.max, single_point(&ib)) {
                // Denominator is one (symbolic) value of unknown sign, as
                // Halide: a / b is monotonic in a, increasing when b > 0
                // and decreasing otherwise (b == 0 gives 0 both ways for
                // integers; for floats the quotient is not finite then, and
                // neither is anything computed from it, as in Halide).
                let pos = Expr::gt(bv.clone(), Expr::zero(bv.ty()));
                let e_lo = Expr::div(lo.clone(), bv.clone());
                let e_hi = Expr::div(hi.clone(), bv);
                Interval::new(
                    Some(Expr::select(pos.clone(), e_lo.clone(), e_hi.clone())),
                    Some(Expr::select(pos, e_hi, e_lo)),
                )
            } else if let (Some(lo), Some(hi), Some(blo), Some(bhi), false) =
                (&ia.min, &ia.max, &ib.min, &ib.max, ty.is_float())
            {
                // A divisor range of known sign: the quotient is monotonic
                // in each operand (Euclidean division rounds monotonically),
                // so its extremes are at the corners (Halide's Bounds.cpp;
                // fuzz seed 11004: n / clamp(d, 58, 59) is not |n|-wide).
                let known_sign = const_sign(blo) == Some(1) || const_sign(bhi) == Some(-1);
                if known_sign {
                    let q = |a: &Expr, b: &Expr| Expr::div(a.clone(), b.clone());
                    let corners = [q(lo, blo), q(lo, bhi), q(hi, blo), q(hi, bhi)];
                    let lowest = corners.iter().cloned().reduce(Expr::min);
                    let highest = corners.into_iter().reduce(Expr::max);
                    Interval::new(lowest, highest)
                } else {
                    within_magnitude(ty, lo, hi)
                }
            } else if let (Some(lo), Some(hi), false) = (&ia.min, &ia.max, ty.is_float()) {
                within_magnitude(ty, lo, hi)
            } else {
                Interval::everything()
            }
        }
        BinOp::Mod => {
            if ty.is_float() {
                // Halide's float mod is a - b * floor(a / b): in [0, b] for
                // a positive b (b itself only by rounding).
                return match ib.min.as_ref().and_then(const_sign) {
                    Some(1) => Interval::new(Some(Expr::zero(ty)), ib.max.clone()),
                    _ => Interval::everything(),
                };
            }
            let iv = match simplify(b).as_int_const() {
                // As in Halide, a % 0 is 0.
                Some(0) => Interval::point(Expr::zero(ty)),
                Some(c) if c > 0 => {
                    // Already within [0, c)? Keep the tighter bounds.
                    let within = |x: &Option<Expr>, lo: i64, hi: i64| {
                        x.as_ref()
                            .and_then(|x| simplify(x).as_int_const())
                            .map(|v| v >= lo && v <= hi)
                            .unwrap_or(false)
                    };
                    if within(&ia.min, 0, c - 1) && within(&ia.max, 0, c - 1) {
                        ia.clone()
                    } else {
                        Interval::new(Some(Expr::zero(ty)), Some(Expr::make_const_i64(ty, c - 1)))
                    }
                }
                _ => match &ib.max {
                    // Euclidean mod: 0 <= a % b < |b|, and a % 0 is 0 (as
                    // Halide's bounds, whose forms neither wrap nor lose
                    // that 0: an i8 divisor down to -128 has -1 - (-128) =
                    // 127, fuzz seed 33725; `x % p` with p = 0 reads at 0).
                    Some(bmax) => {
                        let zero = Expr::zero(ty);
                        let below_max = Expr::sub(bmax.clone(), Expr::one(ty));
                        let max = if ib.min.as_ref().and_then(const_sign) == Some(1) {
                            Some(below_max)
                        } else if ty.is_uint() {
                            Some(Expr::select(Expr::eq(bmax.clone(), zero.clone()), zero.clone(), below_max))
                        } else {
                            ib.min.as_ref().map(|bmin| {
                                let minus_min = Expr::sub(Expr::make_const_i64(ty, -1), bmin.clone());
                                Expr::max(Expr::max(zero.clone(), below_max), minus_min)
                            })
                        };
                        Interval::new(Some(zero), max)
                    }
                    None => Interval::new(Some(Expr::zero(ty)), None),
                },
            };
            // A non-negative a is its own remainder or larger than it
            // (Euclidean, any b; x % 0 is 0): `1 % d` is at most 1, not d - 1.
            let a_non_negative =
                ty.is_uint() || ia.min.as_ref().and_then(const_sign).is_some_and(|s| s >= 0);
            match (&ia.max, a_non_negative) {
                (Some(amax), true) => {
                    let max = match iv.max {
                        // A constant divisor's constant bound stays constant
                        // against a symbolic dividend (as Halide): a loop
                        // over `r % 4` must keep its constant extent to be
                        // vectorized (fuzz seed 1583).
                        Some(m) if m.is_const() && !simplify(amax).is_const() => m,
                        Some(m) => Expr::min(m, amax.clone()),
                        None => amax.clone(),
                    };
                    Interval::new(iv.min, Some(max))
                }
                _ => iv,
            }
        }
        _ => Interval::of_type(ty),
    }
}

/// `[-m, m]` with `m = max(-lo, hi)`: an integer quotient of a dividend
/// in `[lo, hi]` by a divisor of unknown sign (`|a / b| <= |a|`).
fn within_magnitude(ty: Type, lo: &Expr, hi: &Expr) -> Interval {
    let m = Expr::max(Expr::sub(Expr::zero(ty), lo.clone()), hi.clone());
    Interval::new(Some(Expr::sub(Expr::zero(ty), m.clone())), Some(m))
}

/// Is every variable of `e` a pipeline parameter (a Param, or a buffer's
/// shape) that `scope` does not bind? Then `e` has one value wherever a
/// bound is used. (Loop and let variables are not parameters: a bound in
/// terms of them could be used outside their definitions.)
fn only_parameters(e: &Expr, scope: &Scope) -> bool {
    let mut ok = true;
    crate::ir::visit::for_each_expr(e, &mut |x: &Expr| {
        if let ExprNode::Variable { name, param, .. } = x.node() {
            if param.is_none() || scope.contains_key(name) {
                ok = false;
            }
        }
    });
    ok
}

/// The one value of an interval whose bounds are the same expression.
fn single_point(iv: &Interval) -> Option<Expr> {
    match (&iv.min, &iv.max) {
        (Some(a), Some(b)) if crate::ir::equality::equal(a, b) => Some(a.clone()),
        _ => None,
    }
}

/// Sign of a constant expression: 1, 0 or -1.
fn const_sign(e: &Expr) -> Option<i32> {
    let s = simplify(e);
    if let Some(v) = s.as_int_const() {
        return Some(v.signum() as i32);
    }
    if let Some(v) = s.as_uint_const() {
        return Some((v > 0) as i32);
    }
    if let Some(v) = s.as_float_const() {
        if v.is_finite() {
            return Some(if v > 0.0 {
                1
            } else if v < 0.0 {
                -1
            } else {
                0
            });
        }
    }
    None
}

/// Multiply/divide an interval by a constant of known sign.
fn scale(iv: &Interval, c: &Expr, sign: i32, f: fn(Expr, Expr) -> Expr) -> Interval {
    let lo = map_opt(&iv.min, |x| f(x, c.clone()));
    let hi = map_opt(&iv.max, |x| f(x, c.clone()));
    if sign >= 0 {
        Interval::new(lo, hi)
    } else {
        Interval::new(hi, lo)
    }
}

fn corners(a: &Interval, b: &Interval, f: fn(Expr, Expr) -> Expr) -> Interval {
    match (&a.min, &a.max, &b.min, &b.max) {
        (Some(a0), Some(a1), Some(b0), Some(b1)) => {
            let c = [
                f(a0.clone(), b0.clone()),
                f(a0.clone(), b1.clone()),
                f(a1.clone(), b0.clone()),
                f(a1.clone(), b1.clone()),
            ];
            let lo = c
                .iter()
                .skip(1)
                .fold(c[0].clone(), |acc, x| Expr::min(acc, x.clone()));
            let hi = c
                .iter()
                .skip(1)
                .fold(c[0].clone(), |acc, x| Expr::max(acc, x.clone()));
            Interval::new(Some(lo), Some(hi))
        }
        _ => Interval::everything(),
    }
}

/// `old` widened to cover `new`, where `old`'s ends are chains of the
/// box's accesses (`min(min(a, b), c)`): an access whose end is a leaf of
/// the chain plus or minus a constant (`x - 1` against `x + 2`) replaces
/// that leaf or is dropped, at once, instead of lengthening a chain the
/// final simplification would order pairwise (a union of a stencil's
/// accesses is mostly such offsets). Exact: `min(e + a, e + b)` is
/// `e + min(a, b)`.
fn chain_union(old: &Interval, new: &Interval) -> Interval {
    Interval {
        min: zip_opt(&old.min, &new.min, |o, n| widen_chain(BinOp::Min, o, n)),
        max: zip_opt(&old.max, &new.max, |o, n| widen_chain(BinOp::Max, o, n)),
    }
}

fn widen_chain(op: BinOp, chain: Expr, e: Expr) -> Expr {
    /// `e` as (base, constant offset).
    fn split(e: &Expr) -> (&Expr, i64) {
        if let ExprNode::Binary { op: BinOp::Add, a, b } = e.node() {
            if let Some(k) = b.as_int_const() {
                return (a, k);
            }
        }
        (e, 0)
    }
    /// `chain` with the leaf whose base is `base` kept or replaced by
    /// `e`; None if no leaf has that base.
    fn merge(op: BinOp, chain: &Expr, e: &Expr, base: &Expr, k: i64, depth: usize) -> Option<Expr> {
        let (lb, lk) = split(chain);
        if lb.ty() == base.ty() && crate::ir::equality::equal(lb, base) {
            let keep_leaf = if op == BinOp::Min { lk <= k } else { lk >= k };
            return Some(if keep_leaf { chain.clone() } else { e.clone() });
        }
        match chain.node() {
            ExprNode::Binary { op: o, a, b } if *o == op && depth > 0 => {
                if let Some(nb) = merge(op, b, e, base, k, 0) {
                    return Some(Expr::binary(op, a.clone(), nb));
                }
                merge(op, a, e, base, k, depth - 1).map(|na| Expr::binary(op, na, b.clone()))
            }
            _ => None,
        }
    }
    if e.ty() != Type::i32() {
        return Expr::binary(op, chain, e);
    }
    let (base, k) = split(&e);
    // A long chain is searched only so far: beyond, it is left to the
    // simplifier (a bound, so a union stays linear in the accesses).
    match merge(op, &chain, &e, base, k, 16) {
        Some(merged) => merged,
        None => Expr::binary(op, chain, e),
    }
}

pub fn region_union(a: &Region, b: &Region) -> Region {
    a.iter().zip(b).map(|(x, y)| x.union(y)).collect()
}

/// What to collect in `boxes_touched`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    /// Reads: calls to Funcs and images.
    Required,
    /// Writes: Provide nodes.
    Provided,
    /// Both.
    Touched,
}

/// Which loops `box_touched` looks in: only accesses inside (`inside`) or
/// outside (`!inside`) some loop whose name starts with `prefix` count.
#[derive(Clone, Debug)]
pub struct LoopFilter {
    pub prefix: String,
    pub inside: bool,
}

struct BoxCollector {
    scope: Scope,
    /// Enclosing lets, outermost first. Kept symbolic and substituted before
    /// taking bounds, so correlated terms cancel (`min + (max - min + 1) - 1`
    /// is `max`, not the much wider difference of two intervals).
    lets: Vec<(String, Expr)>,
    /// Per enclosing let (as `lets`): about how many nodes its value has
    /// with the lets it uses substituted (`substituted_size`).
    let_sizes: Vec<usize>,
    /// Per let name, its positions in `lets` (ascending): lowered code has
    /// hundreds of enclosing lets, and scanning them all for every access
    /// was most of what resolving a few of them cost.
    let_index: HashMap<String, Vec<usize>>,
    /// The enclosing lets that are not substituted (`named_let`), with their
    /// values (resolved): the boxes name them, and get wrapped in `let`s of
    /// them when their statements end.
    named: HashMap<String, Expr>,
    touch: Touch,
    boxes: HashMap<String, Region>,
    /// The Funcs / images asked about (all of them when `None`).
    only: Option<Vec<String>>,
    /// With `only`: per statement of the walked tree (by address), whether
    /// it reads or writes one of those, found in one pass instead of a walk
    /// of each loop body (quadratic in the nesting).
    mentioning: HashMap<usize, bool>,
    loops: Option<LoopFilter>,
    /// How many enclosing loops match `loops.prefix`.
    matching_loops: usize,
    /// See `StageRegions`.
    stages: Option<StageRegions>,
    /// The stage variables currently taken over their regions.
    fixed: HashSet<String>,
    /// Their definitions from the loops (the lets `fixed` skips), innermost
    /// last: see `as_stage_variables`.
    fixed_definitions: Vec<(String, Expr)>,
    /// Take a `select` whose condition reads no Func as an `if`, each side
    /// touching only where it is taken. Computation bounds want only the
    /// points whose values are used (Halide's bounds inference does the
    /// same); the code still loads both sides, so allocations and buffer
    /// checks count both.
    selects_as_ifs: bool,
}

/// Halide's bounds inference takes what a stage needs from its definition
/// with the stage's pure variables over the stage's region
/// (`f.sN.x.min` .. `f.sN.x.max`), not from its loop nest: a split that
/// rounds up or shifts inwards runs its loops past the region, and what
/// those iterations read is not required of the producers (their
/// storage covers it; the values there are never used). With this map, a
/// stage whose whole loop nest is inside the statement is taken that way;
/// a stage whose outer loops enclose the statement still ranges over its
/// inner loops, as Halide's per-loop regions do. The map goes from the
/// prefix `g.sK.` of a stage whose `g.sK.__outermost` loop encloses whole
/// loop nests to those stages: (prefix `f.sN.`, the Func's pure argument
/// names). A stage's own outermost loop encloses its nest, except for a
/// stage fused into another's loops (compute_with), whose nest is only
/// whole inside the outermost loop of the stage it is fused into.
pub type StageRegions = HashMap<String, Vec<(String, Vec<String>)>>;

/// See `BoxCollector::named_let`.
const MAX_SUBSTITUTED_LET_SIZE: usize = 200;

impl BoxCollector {
    /// `e` with the enclosing lets substituted (except those whose interval
    /// an `if` refined), simplified.
    fn resolve(&self, e: &Expr) -> Expr {
        simplify(&self.substituted(e))
    }

    /// `e` with the enclosing lets substituted, as `resolve`, unsimplified:
    /// innermost first, each let whose name is still free (a value
    /// substituted may name lets further out), except those whose interval
    /// an `if` refined and the named ones.
    fn substituted(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        let mut used = crate::ir::visit::vars_used(&e);
        let mut below = self.lets.len();
        loop {
            let next = used
                .iter()
                .filter(|n| !self.scope.contains_key(*n) && !self.named.contains_key(*n))
                .filter_map(|n| self.let_below(n, below))
                .max();
            let Some(i) = next else { break };
            let (name, value) = &self.lets[i];
            e = crate::analysis::substitute::substitute(name, value, &e);
            used.remove(name);
            used.extend(crate::ir::visit::vars_used(value));
            below = i;
        }
        e
    }

    /// The position in `lets` of the innermost let of `name`.
    fn innermost_let(&self, name: &str) -> Option<usize> {
        self.let_index.get(name).and_then(|v| v.last().copied())
    }

    /// The position of the innermost let of `name` outside position `below`.
    fn let_below(&self, name: &str, below: usize) -> Option<usize> {
        let v = self.let_index.get(name)?;
        let k = v.partition_point(|&i| i < below);
        k.checked_sub(1).map(|k| v[k])
    }

    /// The last value of a loop from `min` over `extent`. Loop nests are
    /// built over `extent = (max - min) + 1` (through a let): that is just
    /// `max`, whose bounds stay tight where `min + extent - 1`, simplified,
    /// would split `max` from `min` (`a + min(7, m - a)` for `min(a + 7, m)`)
    /// and bound the two parts apart.
    fn loop_max(&self, min: &Expr, extent: &Expr) -> Expr {
        if let ExprNode::Binary {
            op: BinOp::Add,
            a,
            b,
        } = self.through_lets(extent).node()
        {
            if let ExprNode::Binary {
                op: BinOp::Sub,
                a: hi,
                b: lo,
            } = a.node()
            {
                if b.is_const_value(1)
                    && crate::ir::equal(&self.through_lets(lo), &self.through_lets(min))
                {
                    return hi.clone();
                }
            }
        }
        Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::one(min.ty()))
    }

    /// `e`, or if it is a let-bound variable the let's value, followed
    /// through renames (a bounded number of them: a let may rebind a name
    /// to itself).
    fn through_lets(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        for _ in 0..8 {
            let Some(n) = e.as_variable() else { break };
            match self.innermost_let(n) {
                Some(i) => e = self.lets[i].1.clone(),
                None => break,
            }
        }
        e
    }

    /// At a stage's outermost loop (`f.sN.__outermost`), with
    /// `StageRegions`, give its pure variables the stage's region. Returns
    /// the previous scope entries to restore.
    fn fix_stage_region(&mut self, loop_name: &str) -> Vec<(String, Option<Interval>)> {
        let Some(prefix) = loop_name.strip_suffix(crate::schedule::OUTERMOST) else {
            return vec![];
        };
        let Some(whole) = self.stages.as_ref().and_then(|st| st.get(prefix)).cloned() else {
            return vec![];
        };
        whole
            .iter()
            .flat_map(|(prefix, args)| args.iter().map(move |a| (prefix, a)))
            .map(|(prefix, a)| {
                let v = format!("{prefix}{a}");
                // The region's symbols, over the loops enclosing the stage
                // (a stage computed in a loop inside the statement has a
                // region per iteration; their union is what's needed here).
                let region = Interval::new(
                    self.bounds(&Expr::var_i32(format!("{v}.min"))).min,
                    self.bounds(&Expr::var_i32(format!("{v}.max"))).max,
                );
                let prev = self.scope.insert(v.clone(), region);
                self.fixed.insert(v.clone());
                (v, prev)
            })
            .collect()
    }

    fn bounds(&self, e: &Expr) -> Interval {
        bounds_of_expr(&self.resolve(e), &self.scope)
    }

    /// About how many nodes `value` has with the enclosing lets it uses
    /// substituted (as `resolve` would, before simplifying): a chain of
    /// lets that each use the one before twice (a pyramid's levels, each
    /// region from the next one's min and max) doubles at each step.
    fn substituted_size(&self, value: &Expr) -> usize {
        // Each occurrence counts (a tree's size), each shared node computed once.
        fn size(c: &BoxCollector, e: &Expr, memo: &mut HashMap<usize, usize>) -> usize {
            let key = e.node() as *const ExprNode as usize;
            if let Some(&n) = memo.get(&key) {
                return n;
            }
            let mut n = 1usize;
            if let Some(v) = e.as_variable() {
                if !c.named.contains_key(v) && !c.scope.contains_key(v) {
                    if let Some(i) = c.innermost_let(v) {
                        n = n.saturating_add(c.let_sizes[i]);
                    }
                }
            }
            crate::ir::visit::for_each_child(e, &mut |child| n = n.saturating_add(size(c, child, memo)));
            memo.insert(key, n);
            n
        }
        size(self, value, &mut HashMap::default())
    }

    /// Whether the let `name = value` (about to be entered) is kept as a
    /// name in the boxes instead of substituted, as Halide's bounds
    /// inference does for a let whose bounds are too large to substitute:
    /// its value, with the enclosing lets substituted, is large (so
    /// substituting it into every use would multiply the boxes' size,
    /// 119 KB for one of interpolate's input bounds), and it depends on
    /// no loop variable, so the name is exactly one point and the boxes
    /// stay exact. Returns the value to wrap the boxes with.
    /// `size`: the value's `substituted_size`.
    fn named_let(&self, name: &str, value: &Expr, size: usize) -> Option<Expr> {
        if size <= MAX_SUBSTITUTED_LET_SIZE
            || self.scope.contains_key(name)
            || self.innermost_let(name).is_some()
        {
            return None;
        }
        let resolved = self.resolve(value);
        let mut varies = false;
        crate::ir::visit::for_each_expr(&resolved, &mut |e| {
            if let Some(v) = e.as_variable() {
                varies |= self.scope.contains_key(v);
            }
        });
        (!varies).then_some(resolved)
    }

    /// Enter the let `name = value` (see `lets`, `let_sizes`).
    fn push_let(&mut self, name: &str, value: &Expr, size: usize) {
        self.let_index.entry(name.to_string()).or_default().push(self.lets.len());
        self.lets.push((name.to_string(), value.clone()));
        self.let_sizes.push(size);
    }

    fn pop_let(&mut self) {
        if let Some((name, _)) = self.lets.pop() {
            if let Some(v) = self.let_index.get_mut(&name) {
                v.pop();
                if v.is_empty() {
                    self.let_index.remove(&name);
                }
            }
        }
        self.let_sizes.pop();
    }

    /// At the end of the named let `name = value`: the boxes that name it
    /// get `let name = value in ...` around their bounds.
    fn wrap_boxes(&mut self, name: &str, value: &Expr) {
        let wrap = |b: &mut Option<Expr>| {
            if let Some(e) = b {
                if crate::ir::visit::expr_uses_var(e, name) {
                    *e = Expr::let_(name, value.clone(), e.clone());
                }
            }
        };
        for region in self.boxes.values_mut() {
            for iv in region.iter_mut() {
                wrap(&mut iv.min);
                wrap(&mut iv.max);
            }
        }
    }

    fn add(&mut self, name: &str, args: &[Expr]) {
        if self.only.as_ref().is_some_and(|o| !o.iter().any(|n| n == name)) {
            return;
        }
        if let Some(l) = &self.loops {
            if (self.matching_loops > 0) != l.inside {
                return;
            }
        }
        let region: Region = args
            .iter()
            .map(|a| match self.as_stage_variables(a) {
                // Both are sound; the named form is tighter where the
                // variable's interval is, the original where resolving it
                // kept its correlations (a refined let in a divisor).
                Some(named) => {
                    let (n, o) = (self.bounds(&named), self.bounds(a));
                    let tighter = |e: Option<Expr>| e.map(|e| simplify(&e));
                    Interval::new(tighter(max_opt(o.min, n.min)), tighter(min_opt(o.max, n.max)))
                }
                None => self.bounds(a),
            })
            .collect();
        self.add_region(name, region);
    }

    /// A call argument in which a variable whose interval can be narrower
    /// than its definition's (a stage variable taken over its region, or a
    /// let an `if` refined) appears spelled out by that definition, with the
    /// variable in its place; None if there is none. A `PredicateLoads`
    /// split rewrites the calls of its stage, with the lets substituted, to
    /// read through the guarded outer variable (`f.s1.y` becomes
    /// `y.y.guarded * 8 + y.t + min`, as Halide's `SubstitutionInCalls`),
    /// which would lose what confines `f.s1.y`: its stage's region, or a
    /// `GuardWithIf` split before it (`if (f.s1.y <= f.s1.y.loop_max)`).
    /// The region read then ran to the end of the last tile (fuzz seed
    /// 53867: an output's rows 9-15 of 9, refused by its entry check). A
    /// guarded variable is a let of `promise_clamped(v, ..)`, whose value
    /// is `v`'s, so reading it as `v`, and a definition as the variable it
    /// defines, change no value. Both sides are compared with the enclosing
    /// lets substituted as `resolve` does (not simplified), so a definition
    /// written through other lets (a fused variable's parts) still matches.
    fn as_stage_variables(&self, arg: &Expr) -> Option<Expr> {
        // Only a guarded variable (`apply_split`'s `<var>.guarded`) hides
        // a definition: other arguments name the variable itself.
        let guarded = crate::ir::visit::expr_contains(arg, &mut |e| {
            e.as_variable().is_some_and(|v| v.ends_with(".guarded"))
        });
        if !guarded {
            return None;
        }
        let refined_lets = self.lets.iter().filter(|(n, _)| self.scope.contains_key(n));
        let definitions: Vec<(&String, Expr)> = self
            .fixed_definitions
            .iter()
            .chain(refined_lets)
            .rev()
            .map(|(n, d)| (n, self.substituted(d)))
            .filter(|(_, d)| !matches!(d.node(), ExprNode::Variable { .. }) && d.as_int_const().is_none())
            .collect();
        if definitions.is_empty() {
            return None;
        }
        /// Reads each guarded variable as the variable it guards.
        struct Unguard<'a>(&'a BoxCollector);
        impl Mutator for Unguard<'_> {
            fn mutate_expr(&mut self, e: &Expr) -> Expr {
                let Some(v) = e.as_variable() else {
                    return crate::ir::visit::mutate_expr_children(self, e);
                };
                match self.0.through_lets(e).as_intrinsic(Intrinsic::PromiseClamped) {
                    Some([guarded, ..]) if guarded.as_variable().is_some_and(|g| g != v) => guarded.clone(),
                    _ => e.clone(),
                }
            }
        }
        /// Names each spelled-out definition (innermost first).
        struct Name<'a> {
            definitions: &'a [(&'a String, Expr)],
            matched: bool,
        }
        impl Mutator for Name<'_> {
            fn mutate_expr(&mut self, e: &Expr) -> Expr {
                match self.definitions.iter().find(|(_, d)| crate::ir::equal(d, e)) {
                    Some((name, _)) => {
                        self.matched = true;
                        Expr::var(e.ty(), (*name).clone())
                    }
                    None => crate::ir::visit::mutate_expr_children(self, e),
                }
            }
        }
        let spelled_out = self.substituted(&Unguard(self).mutate_expr(arg));
        let mut name = Name {
            definitions: &definitions,
            matched: false,
        };
        let named = name.mutate_expr(&spelled_out);
        name.matched.then_some(named)
    }

    /// `cond` with lets resolved, if it depends on no loop variable (a
    /// specialization condition over parameters): then which branch runs is
    /// known before any loop, and each branch's boxes can be kept apart.
    fn loop_invariant(&self, cond: &Expr) -> Option<Expr> {
        let uses_loop_variable = |e: &Expr| {
            let mut varies = false;
            crate::ir::visit::for_each_expr(e, &mut |e| {
                if let Some(v) = e.as_variable() {
                    varies |= self.scope.contains_key(v);
                }
            });
            varies
        };
        // Resolving the lets is costly; a condition naming a loop variable
        // itself varies without it (either answer is sound).
        if uses_loop_variable(cond) {
            return None;
        }
        let c = self.resolve(cond);
        (!uses_loop_variable(&c)).then_some(c)
    }

    /// Boxes of `if (c) then else`: a Func touched by both branches gets
    /// `select(c, then box, else box)` (not their union, which would claim
    /// a region neither branch touches, e.g. a vectorized branch's shifted
    /// tail when the other branch runs); one touched by a single branch
    /// keeps that branch's box.
    ///
    /// Each branch is also visited assuming its condition: a variable
    /// fixed at this level (a consumer's loop variable outside it) is one
    /// point, and `x < 2` makes the else branch's region start at
    /// `max(x, 2)`, empty where the branch is not taken (Halide's stage
    /// variables are always in its scope, so it trims them the same way;
    /// fuzz seed 9193).
    /// A branch a constant condition never takes touches nothing (fuzz seed
    /// 9484: `select(select(1, 2, 0, f[1, y] & 1, 0), 0, ..)`).
    fn conditional(&mut self, c: &Expr, then_case: &Stmt, else_case: Option<&Stmt>) {
        let c = &simplify(c);
        if self.constant_branch(c, then_case, else_case) {
            return;
        }
        let outer = std::mem::take(&mut self.boxes);
        let saved = self.scope.clone();
        self.assume(c);
        self.stmt(then_case);
        self.scope = saved.clone();
        let then_boxes = std::mem::take(&mut self.boxes);
        if let Some(e) = else_case {
            if let Some(negated) = negated_comparison(c) {
                self.assume(&negated);
            }
            self.stmt(e);
            self.scope = saved;
        }
        let mut else_boxes = std::mem::replace(&mut self.boxes, outer);
        let pick = |a: &Option<Expr>, b: &Option<Expr>| match (a, b) {
            (Some(a), Some(b)) => Some(Expr::select(c.clone(), a.clone(), b.clone())),
            _ => None,
        };
        for (name, t) in then_boxes {
            let region = match else_boxes.remove(&name) {
                Some(e) if e.len() == t.len() => t
                    .iter()
                    .zip(&e)
                    .map(|(a, b)| Interval::new(pick(&a.min, &b.min), pick(&a.max, &b.max)))
                    .collect(),
                Some(e) => region_union(&t, &e),
                None => t,
            };
            self.add_region(&name, region);
        }
        for (name, e) in else_boxes {
            self.add_region(&name, e);
        }
    }

    /// If the (simplified) condition `c` is a constant, visit only the
    /// branch it takes (the other touches nothing) and return true.
    fn constant_branch(&mut self, c: &Expr, then_case: &Stmt, else_case: Option<&Stmt>) -> bool {
        if c.is_true() {
            self.stmt(then_case);
        } else if c.is_false() {
            if let Some(e) = else_case {
                self.stmt(e);
            }
        } else {
            return false;
        }
        true
    }

    fn add_region(&mut self, name: &str, region: Region) {
        let merged = match self.boxes.get(name) {
            Some(old) if old.len() == region.len() => {
                old.iter().zip(&region).map(|(o, n)| chain_union(o, n)).collect()
            }
            _ => region,
        };
        self.boxes.insert(name.to_string(), merged);
    }

    fn expr(&mut self, e: &Expr) {
        match e.node() {
            ExprNode::Let { name, value, body } => {
                self.expr(value);
                self.push_let(name, value, self.substituted_size(value));
                let old = self.scope.remove(name);
                self.expr(body);
                restore(&mut self.scope, name, old);
                self.pop_let();
            }
            ExprNode::Call {
                args,
                kind: CallKind::Intrinsic(Intrinsic::IfThenElse),
                ..
            } if args.len() >= 2 => self.as_if(&args[0], &args[1], args.get(2)),
            ExprNode::Select { cond, t, f } if self.selects_as_ifs && cond.is_pure() => {
                self.as_if(cond, t, Some(f))
            }
            ExprNode::Call { name, args, kind } => {
                for a in args {
                    self.expr(a);
                }
                if self.touch != Touch::Provided
                    && matches!(kind, CallKind::Halide { .. } | CallKind::Image { .. })
                {
                    self.add(name, args);
                }
            }
            _ => crate::ir::visit::walk_expr(&mut ExprOnly(self), e),
        }
    }

    /// Narrow the scope to where `cond` holds. Let-bound variables the
    /// condition constrains get an interval, which the refinement then
    /// tightens.
    fn assume(&mut self, cond: &Expr) {
        let mut vars = vec![];
        crate::ir::visit::for_each_expr(cond, &mut |e| {
            if let Some(v) = e.as_variable() {
                vars.push(v.to_string());
            }
        });
        for v in vars {
            if !self.scope.contains_key(&v) && self.innermost_let(&v).is_some() {
                let iv = self.bounds(&Expr::var_i32(v.clone()));
                self.scope.insert(v, iv);
            }
        }
        refine_scope(&mut self.scope, cond);
    }

    /// An expression choosing between two values as an `if`: each side
    /// touches only where it is taken.
    fn as_if(&mut self, cond: &Expr, then_value: &Expr, else_value: Option<&Expr>) {
        let side = |e: &Expr| Stmt::evaluate(e.clone());
        let equivalent = Stmt::if_then_else(cond.clone(), side(then_value), else_value.map(side));
        self.stmt(&equivalent);
    }

    fn stmt(&mut self, s: &Stmt) {
        if self.only.is_some() && self.mentioning.get(&s.id()) == Some(&false) {
            // Nothing in `s` reads or writes the Funcs asked about: its
            // lets (often large bounds, which `named_let` would resolve)
            // and loops need no analysis. Without this, each Realize's walk
            // in allocation bounds inference analysed every let of the
            // rest of the pipeline (local_laplacian: 29 nested Realizes).
            return;
        }
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.expr(value);
                if self.fixed.contains(name) {
                    // A stage variable taken over its region: its
                    // definition from the loops does not apply.
                    self.fixed_definitions.push((name.clone(), value.clone()));
                    self.stmt(body);
                    self.fixed_definitions.pop();
                    return;
                }
                let size = self.substituted_size(value);
                let named = self.named_let(name, value, size);
                self.push_let(name, value, size);
                if let Some(v) = &named {
                    self.named.insert(name.clone(), v.clone());
                }
                let old = self.scope.remove(name);
                self.stmt(body);
                restore(&mut self.scope, name, old);
                if let Some(v) = named {
                    self.named.remove(name);
                    self.wrap_boxes(name, &v);
                }
                self.pop_let();
            }
            StmtNode::For {
                name,
                min,
                extent,
                body,
                ..
            } => {
                self.expr(min);
                self.expr(extent);
                let mentioned = |o: &[String]| match self.mentioning.get(&body.id()) {
                    Some(m) => *m,
                    // A statement this walk made (not in the tree).
                    None => mentions(body, o),
                };
                if self.only.as_deref().is_some_and(|o| !mentioned(o)) {
                    // Nothing inside touches the Funcs asked about: the
                    // loop's bounds are not needed.
                    return;
                }
                let lo = self.bounds(min);
                let max_e = self.loop_max(min, extent);
                let hi = self.bounds(&max_e);
                let old = self
                    .scope
                    .insert(name.clone(), Interval::new(lo.min, hi.max));
                let matching = self
                    .loops
                    .as_ref()
                    .is_some_and(|l| name.starts_with(&l.prefix));
                let fixed = self.fix_stage_region(name);
                self.matching_loops += matching as usize;
                self.stmt(body);
                self.matching_loops -= matching as usize;
                for (v, prev) in fixed.into_iter().rev() {
                    self.fixed.remove(&v);
                    restore(&mut self.scope, &v, prev);
                }
                restore(&mut self.scope, name, old);
            }
            StmtNode::IfThenElse {
                condition,
                then_case,
                else_case,
            } => {
                self.expr(condition);
                if let Some(c) = self.loop_invariant(condition) {
                    self.conditional(&c, then_case, else_case.as_ref());
                    return;
                }
                // The simplified condition may say more than its written
                // form (an RDom predicate `select(x != 2, y, y) == 1` is
                // `y == 1`: fuzz seed 71863), and the written form more
                // than the simplified one (which may reorder a
                // comparison): both hold, so each narrows the scope.
                let simplified = simplify(condition);
                if self.constant_branch(&simplified, then_case, else_case.as_ref()) {
                    return;
                }
                let saved = self.scope.clone();
                self.assume(condition);
                self.assume(&simplified);
                self.stmt(then_case);
                self.scope = saved.clone();
                if let Some(e) = else_case {
                    for c in [condition, &simplified] {
                        if let Some(negated) = negated_comparison(c) {
                            self.assume(&negated);
                        }
                    }
                    self.stmt(e);
                    self.scope = saved;
                }
            }
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                for v in values.iter().chain(args.iter()) {
                    self.expr(v);
                }
                self.expr(predicate);
                if self.touch != Touch::Required {
                    if predicate.is_true() {
                        self.add(name, args);
                    } else {
                        // The store happens only where the predicate holds.
                        let t = Expr::bool_const(true);
                        let store = Stmt::provide(name.clone(), vec![], args.clone(), t);
                        self.stmt(&Stmt::if_then_else(predicate.clone(), store, None));
                    }
                }
            }
            _ => crate::ir::visit::walk_stmt(&mut StmtWalker(self), s),
        }
    }
}

/// For each statement of `s` (by address), whether it reads or writes
/// one of `names` (as `mentions`), in one walk.
fn statements_mentioning(s: &Stmt, names: &[String]) -> HashMap<usize, bool> {
    struct Walk<'a> {
        names: &'a [String],
        found: bool,
        out: HashMap<usize, bool>,
    }
    impl crate::ir::Visitor for Walk<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.found {
                return;
            }
            if crate::ir::visit::read_by(e).is_some_and(|n| self.names.iter().any(|m| m == n)) {
                self.found = true;
                return;
            }
            crate::ir::visit::walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            let outer = std::mem::replace(&mut self.found, false);
            if crate::ir::visit::written_by(s).is_some_and(|n| self.names.iter().any(|m| m == n)) {
                self.found = true;
            }
            // Children are walked even once found: each needs its entry.
            let found_here = self.found;
            self.found = false;
            crate::ir::visit::walk_stmt(self, s);
            self.found |= found_here;
            self.out.insert(s.id(), self.found);
            self.found |= outer;
        }
    }
    let mut w = Walk { names, found: false, out: HashMap::default() };
    crate::ir::Visitor::visit_stmt(&mut w, s);
    w.out
}

/// Does `s` read or write one of `names` (a Func, an image or a buffer)?
fn mentions(s: &Stmt, names: &[String]) -> bool {
    crate::ir::visit::stmt_accesses(s, &|n| names.iter().any(|m| m == n))
}

/// `!(a op b)` as a comparison, for the `else` side of a condition.
fn negated_comparison(c: &Expr) -> Option<Expr> {
    let ExprNode::Binary { op, a, b } = c.node() else {
        return None;
    };
    let op = match op {
        BinOp::LT => BinOp::GE,
        BinOp::LE => BinOp::GT,
        BinOp::GT => BinOp::LE,
        BinOp::GE => BinOp::LT,
        _ => return None,
    };
    Some(Expr::binary(op, a.clone(), b.clone()))
}

/// Put back the binding of `name` a nested one replaced (`old`, from the
/// `insert` that made it), or remove it if there was none.
pub fn restore(scope: &mut Scope, name: &str, old: Option<Interval>) {
    match old {
        Some(o) => {
            scope.insert(name.to_string(), o);
        }
        None => {
            scope.remove(name);
        }
    }
}

/// Tighten variable intervals using a condition known to hold
/// (`v <= e`, `v < e`, `v >= e`, `v > e`, conjunctions, `likely`).
fn refine_scope(scope: &mut Scope, cond: &Expr) {
    match cond.node() {
        ExprNode::Binary {
            op: BinOp::And,
            a,
            b,
        } => {
            refine_scope(scope, a);
            refine_scope(scope, b);
        }
        ExprNode::Call {
            kind: CallKind::Intrinsic(Intrinsic::Likely | Intrinsic::LikelyIfInnermost),
            args,
            ..
        } => refine_scope(scope, &args[0]),
        ExprNode::Binary { op, a, b }
            if op.is_comparison() && a.ty().is_scalar() && a.ty().is_int() =>
        {
            // Each comparison as one or two one-sided ones, with the
            // mirrored form for the right-hand side (`x == c` bounds x on
            // both sides: fuzz seed 10282, an RDom `where(r.x == 2)`).
            let sides: &[(BinOp, BinOp)] = match op {
                BinOp::LE => &[(BinOp::LE, BinOp::GE)],
                BinOp::LT => &[(BinOp::LT, BinOp::GT)],
                BinOp::GE => &[(BinOp::GE, BinOp::LE)],
                BinOp::GT => &[(BinOp::GT, BinOp::LT)],
                BinOp::EQ => &[(BinOp::LE, BinOp::GE), (BinOp::GE, BinOp::LE)],
                _ => return,
            };
            // Refine whichever side is a variable with an interval (a loop
            // variable, or a let the caller gave one): `min <= x` bounds x.
            let in_scope = |e: &Expr| e.as_variable().is_some_and(|v| scope.contains_key(v));
            let (left, right) = (in_scope(a), in_scope(b));
            for &(forward, mirrored) in sides {
                if left || !right {
                    refine_variable(scope, a, forward, b);
                }
                if right {
                    refine_variable(scope, b, mirrored, a);
                }
            }
        }
        _ => {}
    }
}

/// Tighten the interval of variable `a` given that `a op b` holds.
fn refine_variable(scope: &mut Scope, a: &Expr, op: BinOp, b: &Expr) {
    let Some(v) = a.as_variable() else { return };
    let ib = bounds_of_expr(b, scope);
    let one = Expr::one(a.ty());
    let cur = scope
        .get(v)
        .cloned()
        .unwrap_or_else(|| Interval::point(a.clone()));
    let new = match op {
        BinOp::LE => Interval::new(cur.min, min_opt(cur.max, ib.max)),
        BinOp::LT => Interval::new(cur.min, min_opt(cur.max, ib.max.map(|m| Expr::sub(m, one)))),
        BinOp::GE => Interval::new(max_opt(cur.min, ib.min), cur.max),
        BinOp::GT => Interval::new(max_opt(cur.min, ib.min.map(|m| Expr::add(m, one))), cur.max),
        _ => return,
    };
    scope.insert(v.to_string(), new);
}

fn min_opt(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::min(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}
fn max_opt(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Expr::max(a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

// Adapters so the default walkers recurse back into the collector.
struct ExprOnly<'a>(&'a mut BoxCollector);
impl crate::ir::Visitor for ExprOnly<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        self.0.expr(e)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        self.0.stmt(s)
    }
}
struct StmtWalker<'a>(&'a mut BoxCollector);
impl crate::ir::Visitor for StmtWalker<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        self.0.expr(e)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        self.0.stmt(s)
    }
}

fn collect(s: &Stmt, scope: &Scope, touch: Touch, only: Option<&[String]>) -> HashMap<String, Region> {
    collect_filtered(s, scope, touch, only, None, None)
}

fn collect_filtered(
    s: &Stmt,
    scope: &Scope,
    touch: Touch,
    only: Option<&[String]>,
    loops: Option<LoopFilter>,
    stages: Option<&StageRegions>,
) -> HashMap<String, Region> {
    let mut c = BoxCollector {
        scope: scope.clone(),
        lets: vec![],
        let_index: HashMap::default(),
        fixed_definitions: vec![],
        let_sizes: vec![],
        named: HashMap::default(),
        touch,
        boxes: HashMap::default(),
        only: only.map(<[String]>::to_vec),
        mentioning: only.map(|o| statements_mentioning(s, o)).unwrap_or_default(),
        loops,
        matching_loops: 0,
        stages: stages.cloned(),
        fixed: HashSet::default(),
        // With stage regions: computation bounds (bounds inference).
        selects_as_ifs: stages.is_some(),
    };
    c.stmt(s);
    c.boxes
        .into_iter()
        .map(|(k, r)| (k, r.iter().map(Interval::simplified).collect()))
        .collect()
}

/// Region of each Func / image read by `s`.
pub fn boxes_required(s: &Stmt, scope: &Scope) -> HashMap<String, Region> {
    collect(s, scope, Touch::Required, None)
}

/// Region of Func `name` read by `s`, if it is read at all.
pub fn box_required(s: &Stmt, name: &str, scope: &Scope) -> Option<Region> {
    collect(s, scope, Touch::Required, Some(&[name.to_string()])).remove(name)
}

/// Region of Func `name` written (Provide) by `s`.
pub fn box_provided(s: &Stmt, name: &str, scope: &Scope) -> Option<Region> {
    collect(s, scope, Touch::Provided, Some(&[name.to_string()])).remove(name)
}

/// Region of Func `name` read or written by `s`.
pub fn box_touched(s: &Stmt, name: &str, scope: &Scope) -> Option<Region> {
    collect(s, scope, Touch::Touched, Some(&[name.to_string()])).remove(name)
}

/// Region of each of the Funcs / images `names` read or written by `s`
/// (those `s` touches): one walk, where a `box_touched` per name would
/// resolve the loops they share once for each.
pub fn boxes_touched_of(s: &Stmt, names: &[String], scope: &Scope) -> HashMap<String, Region> {
    collect(s, scope, Touch::Touched, Some(names))
}

/// Region of each Func / image read or written by `s`.
pub fn boxes_touched(s: &Stmt, scope: &Scope) -> HashMap<String, Region> {
    collect(s, scope, Touch::Touched, None)
}

/// Region of Func `name` read by `s`, counting only the accesses the loop
/// filter selects, with the stages `stages` lists taken over their
/// regions (see `StageRegions`).
pub fn box_required_filtered(
    s: &Stmt,
    name: &str,
    scope: &Scope,
    loops: Option<LoopFilter>,
    stages: &StageRegions,
) -> Option<Region> {
    collect_filtered(s, scope, Touch::Required, Some(&[name.to_string()]), loops, Some(stages)).remove(name)
}

/// Region of each Func / image read by an expression.
pub fn boxes_required_expr(e: &Expr, scope: &Scope) -> HashMap<String, Region> {
    collect(&Stmt::evaluate(e.clone()), scope, Touch::Required, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    #[test]
    fn a_box_union_merges_offsets_of_one_access_into_its_chain() {
        let y = Expr::var_i32("y");
        let plus = |e: Expr, k: i64| Expr::add(e, Expr::i32(k));
        let show = |e: &Expr| crate::lang::print::expr_to_string(e);
        // min(x + 1, y) widened by x - 1: the leaf x + 1 becomes x - 1.
        let chain = Expr::min(plus(x(), 1), y.clone());
        assert_eq!(show(&widen_chain(BinOp::Min, chain.clone(), plus(x(), -1))), show(&Expr::min(plus(x(), -1), y.clone())));
        // ... by x + 3: covered already.
        assert_eq!(show(&widen_chain(BinOp::Min, chain.clone(), plus(x(), 3))), show(&chain));
        // ... by x: x + 1 becomes x; by another base: appended.
        assert_eq!(show(&widen_chain(BinOp::Min, chain.clone(), x())), show(&Expr::min(x(), y.clone())));
        let z = Expr::var_i32("z");
        assert_eq!(show(&widen_chain(BinOp::Min, chain.clone(), z.clone())), show(&Expr::min(chain.clone(), z)));
        // The max side keeps the larger offset, also inside a longer chain.
        let chain = Expr::max(Expr::max(plus(x(), 2), y.clone()), Expr::var_i32("w"));
        let want = Expr::max(Expr::max(plus(x(), 5), y.clone()), Expr::var_i32("w"));
        assert_eq!(show(&widen_chain(BinOp::Max, chain.clone(), plus(x(), 5))), show(&want));
        assert_eq!(show(&widen_chain(BinOp::Max, chain.clone(), x())), show(&chain));
        // Only Int(32) offsets are merged (a u32 constant may be a wrapped
        // negative one).
        let u = Expr::var(Type::uint(32), "u");
        let uchain = Expr::min(Expr::add(u.clone(), Expr::uint_imm(Type::uint(32), 1)), Expr::var(Type::uint(32), "v"));
        let widened = widen_chain(BinOp::Min, uchain.clone(), u.clone());
        assert_eq!(show(&widened), show(&Expr::min(uchain, u)));
    }

    #[test]
    fn narrowing_cast_of_a_sum_past_the_int32_facts_is_the_type_range() {
        // The simplifier's facts for 2xo + xi + m lie beyond Int(32); they
        // once wrapped into the constant bounds [0, -4] (fuzz seed 1623).
        let (xo, xi, m) = (Expr::var_i32("xo"), Expr::var_i32("xi"), Expr::var_i32("m"));
        let sum = Expr::add(Expr::add(Expr::mul(xo, Expr::i32(2)), xi), m);
        let e = Expr::cast(Type::int(32), Expr::cast(Type::int(16), sum));
        let mut scope = Scope::default();
        scope.insert("xi".into(), Interval::new(Some(Expr::i32(0)), Some(Expr::i32(1))));
        let b = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&b.min.unwrap()).as_int_const(), Some(-32768));
        assert_eq!(simplify(&b.max.unwrap()).as_int_const(), Some(32767));
    }

    #[test]
    fn an_exact_cast_of_a_symbolic_bool_keeps_its_bounds() {
        // Fuzz seed 60428: `i8(select(c, false, img[x]))` of a bool image
        // has the symbolic bounds [i8(min(false, img[x])), ..]; the cast
        // holds every bool, so nothing wraps and the bounds must not fall
        // back to [-128, 127].
        let img = Expr::call(
            Type::bool(),
            "img",
            vec![x()],
            CallKind::Image { buffer: None, param: None },
        );
        let never = Expr::make_const_i64(Type::bool(), 0);
        let picked = Expr::select(Expr::lt(x(), Expr::i32(0)), never, img);
        let e = Expr::cast(Type::int(8), picked);
        let lo = bounds_of_expr(&e, &Scope::default()).min.unwrap();
        assert_ne!(simplify(&lo).as_int_const(), Some(-128), "{lo}");
        let nonnegative = Expr::le(Expr::make_const_i64(lo.ty(), 0), lo);
        assert!(simplify(&nonnegative).is_one(), "{nonnegative}");
    }

    #[test]
    fn linear_bounds() {
        let mut scope = Scope::default();
        scope.insert(
            "x".into(),
            Interval::new(Some(Expr::i32(0)), Some(Expr::i32(9))),
        );
        let e = Expr::sub(Expr::mul(x(), Expr::i32(-2)), Expr::i32(1));
        let iv = bounds_of_expr(&e, &scope);
        let lo = crate::analysis::simplify::simplify(iv.min.as_ref().unwrap());
        let hi = crate::analysis::simplify::simplify(iv.max.as_ref().unwrap());
        assert_eq!(eval_const(&lo), -19);
        assert_eq!(eval_const(&hi), -1);
    }

    #[test]
    fn a_chain_of_large_lets_stays_named_in_boxes() {
        // l_k = max(l_{k-1} / 2, l_{k-1} * 2 - 3): each level uses the one
        // before twice, so substituting them all would double the bound at
        // each level (a pyramid's regions). Named, the bound stays small
        // and means the same.
        let depth = 16;
        let img = Expr::call(
            Type::int(32),
            "img",
            vec![x()],
            CallKind::Image { buffer: None, param: None },
        );
        let top = format!("l{depth}");
        let mut s = Stmt::for_loop(
            "x",
            Expr::i32(0),
            Expr::add(Expr::var_i32(top), Expr::i32(1)),
            crate::ir::ForType::Serial,
            Stmt::evaluate(img),
        );
        for k in (1..=depth).rev() {
            let prev = Expr::var_i32(format!("l{}", k - 1));
            let value = Expr::max(
                Expr::binary(BinOp::Div, prev.clone(), Expr::i32(2)),
                Expr::sub(Expr::mul(prev, Expr::i32(2)), Expr::i32(3)),
            );
            s = Stmt::let_stmt(format!("l{k}"), value, s);
        }
        let s = Stmt::let_stmt("l0", Expr::var_i32("n"), s);
        let region = box_required(&s, "img", &Scope::default()).unwrap();
        let hi = region[0].max.clone().unwrap();
        assert!(hi.to_string().len() < 20_000, "{} characters", hi.to_string().len());
        for n in [0i64, 3, 5, 40] {
            let mut l = n;
            for _ in 0..depth {
                l = (l.div_euclid(2)).max(l * 2 - 3);
            }
            let vars = std::collections::HashMap::from([("n".to_string(), n)]);
            assert_eq!(crate::analysis::evaluate::eval_int(&hi, &vars), Some(l), "n = {n}");
            let lo = region[0].min.clone().unwrap();
            assert_eq!(crate::analysis::evaluate::eval_int(&lo, &vars), Some(0));
        }
    }

    #[test]
    fn narrow_types_fall_back_to_type_range() {
        let e = Expr::add(
            Expr::var(Type::uint(8), "a"),
            Expr::uint_imm(Type::uint(8), 1),
        );
        let mut scope = Scope::default();
        let u8c = |v| Expr::uint_imm(Type::uint(8), v);
        scope.insert("a".into(), Interval::new(Some(u8c(0)), Some(u8c(255))));
        let iv = bounds_of_expr(&e, &scope);
        let hi = iv.max.unwrap();
        assert_eq!(hi.as_uint_const(), Some(255), "{hi}");
        // One value (a parameter) is exact, wrapping included.
        let iv = bounds_of_expr(&e, &Scope::default());
        assert!(iv.min.is_some_and(|m| crate::ir::equality::equal(&m, &e)));
    }

    #[test]
    fn saturating_cast_is_bounded_through_a_clamp() {
        let mut scope = Scope::default();
        scope.insert("x".into(), Interval::new(Some(Expr::i32(0)), None));
        let v = Expr::add(
            Expr::cast(Type::uint(16), Expr::binary(BinOp::Mod, x(), Expr::i32(7))),
            Expr::uint_imm(Type::uint(16), 5),
        );
        let e = Expr::intrinsic(Type::int(32), Intrinsic::SaturatingCast, vec![v]);
        let iv = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&iv.max.unwrap()).as_int_const(), Some(11));
        let w = Expr::intrinsic(Type::uint(8), Intrinsic::SaturatingCast, vec![x()]);
        let iv = bounds_of_expr(&w, &scope);
        assert_eq!(simplify(&iv.max.unwrap()).as_uint_const(), Some(255));
        assert_eq!(simplify(&iv.min.unwrap()).as_uint_const(), Some(0));
    }

    /// Every intrinsic bounded through `lower_for_bounds` computes, through
    /// that lowering, what it computes itself (the evaluator's value), on
    /// each end of every integer type's range and values near zero: a
    /// lowering whose value differs gives bounds of another expression.
    #[test]
    fn lowerings_for_bounds_compute_what_the_intrinsics_compute() {
        use crate::analysis::evaluate::{eval_scalar, Value};
        use crate::lang::fixed_point::widen;
        let konst = |t: Type, v: i128| {
            if t.is_uint() {
                Expr::uint_imm(t, v as u64)
            } else {
                Expr::make_const_i64(t, v as i64)
            }
        };
        let samples = |t: Type| {
            let mut v = vec![t.min_int(), t.min_int() + 1, t.max_int(), t.max_int() - 1, 0, 1, 2, 3, 14, 100];
            if t.is_int() {
                v.extend([-1, -2, -3, -100]);
            }
            v.into_iter().filter(move |x| *x >= t.min_int() && *x <= t.max_int())
        };
        let value = |e: &Expr| match eval_scalar(e, &Default::default()) {
            Ok(Value::Int(v)) => Some(v),
            _ => None,
        };
        let mut checked = 0;
        for bits in [8u8, 16, 32] {
            for code in [TypeCode::Int, TypeCode::UInt] {
                let t = Type::int(bits).with_code(code);
                let w = widen(t);
                let signed_w = w.with_code(TypeCode::Int);
                // (intrinsic, result type, first argument's type, second's)
                let cases = [
                    (Intrinsic::WideningAdd, w, t, t),
                    (Intrinsic::WideningMul, w, t, t),
                    (Intrinsic::WideningSub, signed_w, t, t),
                    (Intrinsic::SaturatingAdd, t, t, t),
                    (Intrinsic::SaturatingSub, t, t, t),
                    (Intrinsic::HalvingAdd, t, t, t),
                    (Intrinsic::HalvingSub, t, t, t),
                    (Intrinsic::RoundingHalvingAdd, t, t, t),
                    (Intrinsic::WidenRightAdd, w, w, t),
                    (Intrinsic::WidenRightMul, w, w, t),
                    (Intrinsic::WidenRightSub, w, w, t),
                    (Intrinsic::WideningShiftLeft, w, t, t),
                    (Intrinsic::WideningShiftRight, w, t, t),
                    (Intrinsic::RoundingShiftLeft, t, t, t),
                    (Intrinsic::RoundingShiftRight, t, t, t),
                ];
                for (which, ty, ta, tb) in cases {
                    for a in samples(ta) {
                        for b in samples(tb) {
                            let args = [konst(ta, a), konst(tb, b)];
                            assert!(lowered_for_bounds(which, &args), "{which:?} {ta} {tb}");
                            let direct = Expr::intrinsic(ty, which, args.to_vec());
                            let lowered = lower_for_bounds(which, ty, &args).expect("lowered");
                            let (want, got) = (value(&direct), value(&lowered));
                            if want.is_none() {
                                continue;
                            }
                            assert_eq!(want, got, "{which:?}({a}: {ta}, {b}: {tb}) as {ty}: {lowered}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }

    #[test]
    fn an_unsigned_saturating_sub_is_bounded_below_by_zero() {
        // Found probing fuzz seed 85609: saturating_sub(u8 11, u8 x) for x
        // in [0, 15] is in [0, 11]; subtracting in u16 wrapped (11 - 14 is
        // 65533) and saturated to 255, so a Func read there was computed
        // at 255 while 0 was read.
        let mut scope = Scope::default();
        scope.insert("x".into(), Interval::new(Some(Expr::i32(0)), Some(Expr::i32(15))));
        let u8t = Type::uint(8);
        let e = Expr::intrinsic(
            u8t,
            Intrinsic::SaturatingSub,
            vec![Expr::uint_imm(u8t, 11), Expr::cast(u8t, x())],
        );
        let iv = bounds_of_expr(&Expr::cast(Type::int(32), e), &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_int_const(), Some(0));
        assert_eq!(simplify(&iv.max.unwrap()).as_int_const(), Some(11));
        // u32 operands subtract in i64.
        let u32t = Type::uint(32);
        let e = Expr::intrinsic(
            u32t,
            Intrinsic::SaturatingSub,
            vec![Expr::uint_imm(u32t, 3), Expr::cast(u32t, x())],
        );
        let iv = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_uint_const(), Some(0));
        assert_eq!(simplify(&iv.max.unwrap()).as_uint_const(), Some(3));
    }

    #[test]
    fn a_float_abs_is_at_least_zero_through_a_cast_to_int() {
        // Fuzz seed 41864: i32(abs(f32(v))) for any v is at least 0.
        let mut scope = Scope::default();
        scope.insert("v".into(), Interval::everything());
        let a = Expr::intrinsic(Type::float(32), Intrinsic::Abs, vec![Expr::cast(Type::float(32), Expr::var_i32("v"))]);
        let iv = bounds_of_expr(&Expr::cast(Type::int(32), a.clone()), &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_int_const(), Some(0));
        // With a bounded argument, the larger of the two ends' magnitudes.
        scope.insert("v".into(), Interval::new(Some(Expr::i32(-5)), Some(Expr::i32(3))));
        let iv = bounds_of_expr(&a, &scope);
        assert_eq!(simplify(&iv.max.unwrap()).as_float_const(), Some(5.0));
    }

    #[test]
    fn a_saturating_cast_of_an_unbounded_float_to_i64_stays_in_range() {
        // Fuzz seed 7269: i64's max rounds up to 2^63 as an f64; clamping to
        // that and converting wrapped the upper bound to i64's min.
        let mut scope = Scope::default();
        scope.insert("v".into(), Interval::everything());
        let v = Expr::var(Type::float(64), "v");
        for t in [Type::int(64), Type::uint(64), Type::int(32)] {
            let e = Expr::intrinsic(t, Intrinsic::SaturatingCast, vec![v.clone()]);
            let iv = bounds_of_expr(&e, &scope);
            let (lo, hi) = (simplify(&iv.min.unwrap()), simplify(&iv.max.unwrap()));
            let value = |e: &Expr| e.as_int_const().map(i128::from).or(e.as_uint_const().map(i128::from));
            let (lo, hi) = (value(&lo).unwrap(), value(&hi).unwrap());
            assert!(lo == t.min_int() && hi <= t.max_int() && hi > t.max_int() / 2, "{t}: {lo} .. {hi}");
        }
    }

    #[test]
    fn a_non_negative_remainder_is_at_most_its_numerator() {
        // Fuzz seed 6908: `u8(1) % d` for any u8 d is at most 1 (not 254),
        // and an int in [0, 5] mod an unknown divisor at most 5.
        let mut scope = Scope::default();
        scope.insert("x".into(), Interval::new(Some(Expr::i32(0)), Some(Expr::i32(5))));
        scope.insert("d".into(), Interval::of_type(Type::uint(8)));
        scope.insert("y".into(), Interval::new(None, None));
        let d = Expr::var(Type::uint(8), "d");
        let e = Expr::binary(BinOp::Mod, Expr::uint_imm(Type::uint(8), 1), d);
        let iv = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&iv.max.unwrap()).as_uint_const(), Some(1));
        let e = Expr::binary(BinOp::Mod, x(), Expr::var(Type::int(32), "y"));
        let iv = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&iv.max.unwrap()).as_int_const(), Some(5));
        assert_eq!(simplify(&iv.min.unwrap()).as_int_const(), Some(0));
    }

    #[test]
    fn a_narrow_remainder_by_a_symbolic_divisor_stays_non_negative() {
        // Fuzz seed 33725: `n % d` in i8 with d a parameter-valued point:
        // the max's `max(d, 0 - d) - 1` may wrap, the min 0 may not.
        let mut scope = Scope::default();
        scope.insert("n".into(), Interval::of_type(Type::int(8)));
        let d = Expr::var(Type::int(8), "d");
        let e = Expr::binary(BinOp::Mod, Expr::var(Type::int(8), "n"), d);
        let iv = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_int_const(), Some(0));
        // The max is |d| - 1, and 0 for d = 0 (n % 0 is 0), at every d.
        let max = iv.max.unwrap();
        for (dv, want) in [(-128, 127), (-1, 0), (0, 0), (5, 4), (127, 126)] {
            let at = crate::analysis::substitute::substitute("d", &Expr::make_const_i64(Type::int(8), dv), &max);
            assert_eq!(simplify(&at).as_int_const(), Some(want), "d = {dv}: {max}");
        }
    }

    #[test]
    fn a_remainder_by_a_divisor_that_may_be_zero_includes_zero() {
        // `x % p` is 0 where p is 0: the region read is [0, 0] there.
        for ty in [Type::int(32), Type::uint(32), Type::uint(8)] {
            let mut scope = Scope::default();
            scope.insert("n".into(), Interval::of_type(ty));
            let e = Expr::binary(BinOp::Mod, Expr::var(ty, "n"), Expr::var(ty, "p"));
            let max = bounds_of_expr(&e, &scope).max.unwrap();
            for (pv, want) in [(0, 0), (1, 0), (9, 8)] {
                let at = crate::analysis::substitute::substitute("p", &Expr::make_const_i64(ty, pv), &max);
                let v = simplify(&at);
                assert_eq!(v.as_int_const().or(v.as_uint_const().map(|u| u as i64)), Some(want), "{ty:?} p = {pv}: {max}");
            }
        }
    }

    #[test]
    fn a_divisor_of_known_sign_bounds_the_quotient_by_its_corners() {
        // Fuzz seed 11004: n in [-128, 127] divided by d in [58, 59] is in
        // [-3, 2] (Euclidean), not [-128, 128]; a negative range mirrors.
        let mut scope = Scope::default();
        scope.insert("n".into(), Interval::new(Some(Expr::i32(-128)), Some(Expr::i32(127))));
        scope.insert("d".into(), Interval::new(Some(Expr::i32(58)), Some(Expr::i32(59))));
        scope.insert("e".into(), Interval::new(Some(Expr::i32(-59)), Some(Expr::i32(-58))));
        let n = Expr::var_i32("n");
        let iv = bounds_of_expr(&Expr::div(n.clone(), Expr::var_i32("d")), &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_int_const(), Some(-3));
        assert_eq!(simplify(&iv.max.unwrap()).as_int_const(), Some(2));
        let iv = bounds_of_expr(&Expr::div(n, Expr::var_i32("e")), &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_int_const(), Some(-2));
        assert_eq!(simplify(&iv.max.unwrap()).as_int_const(), Some(3));
    }

    #[test]
    fn constant_ends_of_a_narrowing_cast_are_folded() {
        // Fuzz seed 10922: 6 - u8(bool(x & 1)) is 5 or 6, not any u8.
        let mut scope = Scope::default();
        let i16t = Type::int(16);
        scope.insert("x".into(), Interval::of_type(i16t));
        let bit = Expr::intrinsic(i16t, Intrinsic::BitwiseAnd, vec![Expr::var(i16t, "x"), Expr::int_imm(i16t, 1)]);
        let b = Expr::cast(Type::uint(8), Expr::cast(Type::bool(), bit));
        let e = Expr::sub(Expr::uint_imm(Type::uint(8), 6), b);
        let iv = bounds_of_expr(&e, &scope);
        assert_eq!(simplify(&iv.min.unwrap()).as_uint_const(), Some(5));
        assert_eq!(simplify(&iv.max.unwrap()).as_uint_const(), Some(6));
    }

    #[test]
    fn likely_marks_are_kept() {
        let mut scope = Scope::default();
        scope.insert(
            "x".into(),
            Interval::new(Some(Expr::i32(0)), Some(Expr::var_i32("n"))),
        );
        let e = Expr::min(
            Expr::likely(Expr::mul(x(), Expr::i32(8))),
            Expr::var_i32("e"),
        );
        let iv = bounds_of_expr(&e, &scope);
        let hi = iv.max.unwrap().to_string();
        assert!(hi.contains("likely("), "{hi}");
    }

    #[test]
    fn loop_over_a_clamped_tile_ends_at_the_clamp() {
        // for xo in [0, n): for x in [xo*8 + m, min(xo*8 + m + 7, mx)]:
        // f(x) = 0, with the inner loop's bounds in lets as loop nests
        // have them. The last x is at most mx, whatever tile it is in.
        let v = Expr::var_i32;
        let start = Expr::add(Expr::mul(v("xo"), Expr::i32(8)), v("m"));
        let end = Expr::min(Expr::add(start.clone(), Expr::i32(7)), v("mx"));
        let inner = Stmt::for_loop(
            "x",
            v("x.lo"),
            v("x.extent"),
            crate::ir::ForType::Serial,
            Stmt::provide(
                "f",
                vec![Expr::i32(0)],
                vec![v("x")],
                Expr::bool_const(true),
            ),
        );
        let body = Stmt::let_stmt(
            "x.lo",
            start,
            Stmt::let_stmt(
                "x.hi",
                end,
                Stmt::let_stmt(
                    "x.extent",
                    Expr::add(Expr::sub(v("x.hi"), v("x.lo")), Expr::i32(1)),
                    inner,
                ),
            ),
        );
        let s = Stmt::for_loop("xo", Expr::i32(0), v("n"), crate::ir::ForType::Serial, body);
        let region = box_provided(&s, "f", &Scope::default()).unwrap();
        let vars: std::collections::HashMap<String, i64> = [("m", 0), ("mx", 30), ("n", 4)]
            .map(|(k, x)| (k.to_string(), x))
            .into();
        let max = region[0].max.as_ref().unwrap();
        let max = crate::analysis::evaluate::eval_int(max, &vars).unwrap();
        assert_eq!(max, 30);
    }

    /// Tiny constant evaluator so this test doesn't depend on the simplifier.
    fn eval_const(e: &Expr) -> i64 {
        match e.node() {
            ExprNode::IntImm(v) => *v,
            ExprNode::Binary { op, a, b } => {
                let (a, b) = (eval_const(a), eval_const(b));
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Min => a.min(b),
                    BinOp::Max => a.max(b),
                    _ => panic!(),
                }
            }
            _ => panic!("not constant: {e}"),
        }
    }
}
#[cfg(test)]
mod guard_tests {
    use super::*;
    #[test]
    fn guard_with_var_on_the_right_refines() {
        let x = Expr::var_i32("x");
        let m = Expr::var_i32("m");
        let body = Stmt::if_then_else(
            Expr::likely(Expr::le(m.clone(), x.clone())),
            Stmt::provide("f", vec![Expr::i32(0)], vec![x.clone()], Expr::bool_const(true)),
            None,
        );
        let s = Stmt::for_loop("x", Expr::sub(m.clone(), Expr::i32(4)), Expr::i32(10), crate::ir::ForType::Serial, body);
        let b = box_provided(&s, "f", &Scope::default()).unwrap();
        assert_eq!(b[0].min.as_ref().unwrap().to_string(), "m");
    }

    #[test]
    fn an_equality_guard_bounds_both_sides() {
        let x = Expr::var_i32("x");
        let body = Stmt::if_then_else(
            Expr::eq(x.clone(), Expr::i32(2)),
            Stmt::provide("f", vec![Expr::i32(0)], vec![x.clone()], Expr::bool_const(true)),
            None,
        );
        let s = Stmt::for_loop("x", Expr::i32(-3), Expr::i32(16), crate::ir::ForType::Serial, body);
        let b = box_provided(&s, "f", &Scope::default()).unwrap();
        assert_eq!(simplify(b[0].min.as_ref().unwrap()).as_int_const(), Some(2));
        assert_eq!(simplify(b[0].max.as_ref().unwrap()).as_int_const(), Some(2));
    }
}
