//! A small term-rewriting language for the simplifier's rules.
//!
//! Patterns are built with ordinary Rust operators over wildcards, so a rule
//! reads like the algebra it encodes:
//!
//! ```ignore
//! rule((x + c0) + c1, x + (c0 + c1))
//! rule_if((x * c0) / c1, x * (c0 / c1), (c1 > 0) & ((c0 % c1) == 0) & no_overflow())
//! ```
//!
//! `x, y, z, w` match any expression (repeated uses must be equal); `c0..c3`
//! match constants (scalars or broadcasts of scalars); integer literals match
//! constants of that value. The right-hand side is instantiated bottom-up
//! through the simplifier's own node constructors, so constant sub-terms such
//! as `c0 + c1` are folded and new nodes get simplified once (no re-walk of
//! the already-simplified operands). A predicate is instantiated the same way
//! and must fold to `true`.
//!
//! Pattern nodes are allocated once per process (rule tables live in
//! `OnceLock`s) and referenced by `&'static`, which keeps `P` `Copy`.

use std::ops;

use super::fold::const_of;
use super::info::no_overflow;
use super::Simplifier;
use crate::ir::{equal, BinOp, Expr, ExprNode, Type};

#[derive(Debug)]
pub enum PatNode {
    Wild(usize),
    ConstWild(usize),
    Lit(i64),
    Bin(BinOp, P, P),
    Not(P),
    Select(P, P, P),
    /// Predicate helper: the operand type of the matched root never overflows.
    NoOverflow,
    /// Predicate helper: the operand type of the matched root is signed.
    IsInt,
    /// Predicate helper: `a + b` (both instantiated) provably stays inside
    /// its type, from the facts known about `a` and `b`. For rules that
    /// build a new sum (`x + c0 < y  ->  x < y - c0`): the original did not
    /// overflow, but the new sum may, unless its operands' bounds say no.
    SumFits(P, P),
}

#[derive(Clone, Copy, Debug)]
pub struct P(pub &'static PatNode);

fn mk(n: PatNode) -> P {
    P(Box::leak(Box::new(n)))
}

pub fn wild(i: usize) -> P {
    mk(PatNode::Wild(i))
}
pub fn cwild(i: usize) -> P {
    mk(PatNode::ConstWild(i))
}
pub fn lit(v: i64) -> P {
    mk(PatNode::Lit(v))
}
pub fn no_overflow_p() -> P {
    mk(PatNode::NoOverflow)
}
pub fn is_int_p() -> P {
    mk(PatNode::IsInt)
}
/// See `PatNode::SumFits`.
pub fn sum_fits(a: impl Into<P>, b: impl Into<P>) -> P {
    mk(PatNode::SumFits(a.into(), b.into()))
}

impl From<i64> for P {
    fn from(v: i64) -> P {
        lit(v)
    }
}

fn bin(op: BinOp, a: impl Into<P>, b: impl Into<P>) -> P {
    mk(PatNode::Bin(op, a.into(), b.into()))
}

pub fn min(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::Min, a, b)
}
pub fn max(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::Max, a, b)
}
pub fn lt(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::LT, a, b)
}
pub fn le(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::LE, a, b)
}
pub fn gt(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::GT, a, b)
}
pub fn ge(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::GE, a, b)
}
pub fn eq(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::EQ, a, b)
}
pub fn ne(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::NE, a, b)
}
pub fn and(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::And, a, b)
}
pub fn or(a: impl Into<P>, b: impl Into<P>) -> P {
    bin(BinOp::Or, a, b)
}
pub fn not(a: P) -> P {
    mk(PatNode::Not(a))
}
pub fn select(c: P, t: impl Into<P>, f: impl Into<P>) -> P {
    mk(PatNode::Select(c, t.into(), f.into()))
}

macro_rules! pat_ops {
    ($($tr:ident $m:ident $op:expr;)*) => {$(
        impl ops::$tr<P> for P {
            type Output = P;
            fn $m(self, r: P) -> P { bin($op, self, r) }
        }
        impl ops::$tr<i64> for P {
            type Output = P;
            fn $m(self, r: i64) -> P { bin($op, self, lit(r)) }
        }
        impl ops::$tr<P> for i64 {
            type Output = P;
            fn $m(self, r: P) -> P { bin($op, lit(self), r) }
        }
    )*};
}
pat_ops! {
    Add add BinOp::Add;
    Sub sub BinOp::Sub;
    Mul mul BinOp::Mul;
    Div div BinOp::Div;
    Rem rem BinOp::Mod;
    BitAnd bitand BinOp::And;
    BitOr bitor BinOp::Or;
}

impl ops::Not for P {
    type Output = P;
    fn not(self) -> P {
        not(self)
    }
}

/// Comparison helpers usable as methods in predicates: `c1.gt(0)`.
impl P {
    pub fn gt(self, o: impl Into<P>) -> P {
        gt(self, o)
    }
    pub fn ge(self, o: impl Into<P>) -> P {
        ge(self, o)
    }
    pub fn lt(self, o: impl Into<P>) -> P {
        lt(self, o)
    }
    pub fn le(self, o: impl Into<P>) -> P {
        le(self, o)
    }
    pub fn eq(self, o: impl Into<P>) -> P {
        eq(self, o)
    }
    pub fn ne(self, o: impl Into<P>) -> P {
        ne(self, o)
    }
}

/// The standard wildcards.
pub struct W {
    pub x: P,
    pub y: P,
    pub z: P,
    pub w: P,
    pub u: P,
    pub c0: P,
    pub c1: P,
    pub c2: P,
    pub c3: P,
}

pub fn wilds() -> W {
    W {
        x: wild(0),
        y: wild(1),
        z: wild(2),
        w: wild(3),
        u: wild(4),
        c0: cwild(0),
        c1: cwild(1),
        c2: cwild(2),
        c3: cwild(3),
    }
}

pub struct Rule {
    pub lhs: P,
    pub rhs: P,
    pub pred: Option<P>,
    /// What the left-hand side's first two operands must look like: a
    /// cheap test that rejects most rules before `matches` walks them.
    operands: [Shape; 2],
}

/// The outline of a pattern node, for `Rule::operands`.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Any,
    Const,
    Bin(BinOp),
    Not,
    Select,
}

fn shape(p: P) -> Shape {
    match p.0 {
        PatNode::ConstWild(_) | PatNode::Lit(_) => Shape::Const,
        PatNode::Bin(op, ..) => Shape::Bin(*op),
        PatNode::Not(_) => Shape::Not,
        PatNode::Select(..) => Shape::Select,
        PatNode::Wild(_) | PatNode::NoOverflow | PatNode::IsInt | PatNode::SumFits(..) => Shape::Any,
    }
}

fn operand_shapes(lhs: P) -> [Shape; 2] {
    match lhs.0 {
        PatNode::Bin(_, a, b) => [shape(*a), shape(*b)],
        PatNode::Not(a) => [shape(*a), Shape::Any],
        PatNode::Select(c, t, _) => [shape(*c), shape(*t)],
        _ => [Shape::Any, Shape::Any],
    }
}

/// The first two operands of `e`, in the order `operand_shapes` uses.
fn operands(e: &Expr) -> [Option<&Expr>; 2] {
    match e.node() {
        ExprNode::Binary { a, b, .. } => [Some(a), Some(b)],
        ExprNode::Not(a) => [Some(a), None],
        ExprNode::Select { cond, t, .. } => [Some(cond), Some(t)],
        _ => [None, None],
    }
}

/// How many operand kinds `kind_of` tells apart: anything else, a
/// constant, a Not, a Select, and each binary operator (`Or` is the last).
const KINDS: usize = 4 + BinOp::Or as usize + 1;

/// The kind of an operand (`None`: no such operand). `e` can match a
/// pattern of outline `s` only if `shape_fits_kind(s, kind_of(Some(e)))`.
fn kind_of(e: Option<&Expr>) -> usize {
    let Some(e) = e else { return 0 };
    if const_of(e).is_some() {
        return 1;
    }
    match e.node() {
        ExprNode::Not(_) => 2,
        ExprNode::Select { .. } => 3,
        ExprNode::Binary { op, .. } => 4 + *op as usize,
        _ => 0,
    }
}

fn shape_fits_kind(s: Shape, kind: usize) -> bool {
    match s {
        Shape::Any => true,
        Shape::Const => kind == 1,
        Shape::Not => kind == 2,
        Shape::Select => kind == 3,
        Shape::Bin(op) => kind == 4 + op as usize,
    }
}

/// A table of rules, tried in order, with the rules that can match each
/// pair of operand kinds precomputed: a node is then tried against those
/// few rules only, in the table's order, so the first rule that applies
/// still wins. (Scanning whole tables was a tenth of a large pipeline's
/// lowering.)
pub struct RuleSet {
    rules: Vec<Rule>,
    candidates: Vec<Vec<u16>>,
}

impl RuleSet {
    pub fn new(rules: Vec<Rule>) -> RuleSet {
        assert!(rules.len() <= u16::MAX as usize, "rule table too large");
        let candidates = (0..KINDS * KINDS)
            .map(|k| {
                let (k0, k1) = (k / KINDS, k % KINDS);
                (0..rules.len())
                    .filter(|&i| {
                        let [s0, s1] = rules[i].operands;
                        shape_fits_kind(s0, k0) && shape_fits_kind(s1, k1)
                    })
                    .map(|i| i as u16)
                    .collect()
            })
            .collect();
        RuleSet { rules, candidates }
    }
}

impl std::ops::Deref for RuleSet {
    type Target = [Rule];
    fn deref(&self) -> &[Rule] {
        &self.rules
    }
}

pub fn rule(lhs: P, rhs: impl Into<P>) -> Rule {
    Rule {
        lhs,
        rhs: rhs.into(),
        pred: None,
        operands: operand_shapes(lhs),
    }
}
pub fn rule_if(lhs: P, rhs: impl Into<P>, pred: P) -> Rule {
    Rule {
        lhs,
        rhs: rhs.into(),
        pred: Some(pred),
        operands: operand_shapes(lhs),
    }
}

/// What the wildcards matched: borrowed from the expression being
/// rewritten (a rule that fails to match, the common case, then costs no
/// reference counting), cloned only into a rewrite's result.
pub struct Binds<'e> {
    w: [Option<&'e Expr>; 5],
    c: [Option<&'e Expr>; 4],
    /// Operand type of the matched root node.
    op_ty: Type,
}

fn matches<'e>(p: P, e: &'e Expr, b: &mut Binds<'e>) -> bool {
    match p.0 {
        PatNode::Wild(i) => match b.w[*i] {
            Some(prev) => equal(prev, e),
            None => {
                b.w[*i] = Some(e);
                true
            }
        },
        PatNode::ConstWild(i) => {
            if const_of(e).is_none() {
                return false;
            }
            match b.c[*i] {
                Some(prev) => equal(prev, e),
                None => {
                    b.c[*i] = Some(e);
                    true
                }
            }
        }
        PatNode::Lit(v) => !e.ty().is_float() && const_of(e).is_some() && e.is_const_value(*v),
        PatNode::Bin(op, pa, pb) => match e.node() {
            ExprNode::Binary { op: eop, a, b: eb } if eop == op => {
                matches(*pa, a, b) && matches(*pb, eb, b)
            }
            _ => false,
        },
        PatNode::Not(pa) => match e.node() {
            ExprNode::Not(a) => matches(*pa, a, b),
            _ => false,
        },
        PatNode::Select(pc, pt, pf) => match e.node() {
            ExprNode::Select { cond, t, f } => {
                matches(*pc, cond, b) && matches(*pt, t, b) && matches(*pf, f, b)
            }
            _ => false,
        },
        PatNode::NoOverflow | PatNode::IsInt | PatNode::SumFits(..) => false,
    }
}

fn pat_type(p: P, b: &Binds) -> Option<Type> {
    match p.0 {
        PatNode::Wild(i) => b.w[*i].map(|e| e.ty()),
        PatNode::ConstWild(i) => b.c[*i].map(|e| e.ty()),
        PatNode::Lit(_) => None,
        PatNode::Bin(op, x, y) => {
            let t = pat_type(*x, b).or_else(|| pat_type(*y, b))?;
            if op.is_comparison() || op.is_logical() {
                Some(Type::bool().with_lanes(t.lanes))
            } else {
                Some(t)
            }
        }
        PatNode::Not(x) => pat_type(*x, b),
        PatNode::Select(_, t, f) => pat_type(*t, b).or_else(|| pat_type(*f, b)),
        // lane-agnostic: takes its type from its sibling
        PatNode::NoOverflow | PatNode::IsInt | PatNode::SumFits(..) => None,
    }
}

impl Simplifier {
    /// Instantiate a pattern. `hint` is the type to give bare literals.
    fn build(&mut self, p: P, b: &Binds, hint: Option<Type>) -> Option<Expr> {
        Some(match p.0 {
            PatNode::Wild(i) => b.w[*i]?.clone(),
            PatNode::ConstWild(i) => b.c[*i]?.clone(),
            PatNode::Lit(v) => {
                let t = hint?;
                if t.is_bool() {
                    Expr::make_const_i64(t, (*v != 0) as i64)
                } else {
                    Expr::make_const_i64(t, *v)
                }
            }
            PatNode::Bin(op, x, y) => {
                // comparison operands get their type from their wildcards;
                // arithmetic and logical operands share the result's type
                let operand_hint = if op.is_comparison() { None } else { hint };
                let t = pat_type(*x, b)
                    .or_else(|| pat_type(*y, b))
                    .or(operand_hint)?;
                let ex = self.build(*x, b, Some(t))?;
                let ey = self.build(*y, b, Some(t))?;
                if ex.ty() != ey.ty() {
                    return None;
                }
                self.mk_bin(*op, ex, ey)
            }
            PatNode::Not(x) => {
                let ex = self.build(*x, b, hint)?;
                self.mk_not(ex)
            }
            PatNode::Select(c, t, f) => {
                let ty = pat_type(*t, b).or_else(|| pat_type(*f, b)).or(hint)?;
                let ec = self.build(*c, b, Some(Type::bool().with_lanes(ty.lanes)))?;
                let et = self.build(*t, b, Some(ty))?;
                let ef = self.build(*f, b, Some(ty))?;
                self.mk_select(ec, et, ef)
            }
            PatNode::NoOverflow => {
                Expr::make_const_i64(hint.unwrap_or(Type::bool()), no_overflow(b.op_ty) as i64)
            }
            PatNode::IsInt => {
                Expr::make_const_i64(hint.unwrap_or(Type::bool()), b.op_ty.is_int() as i64)
            }
            PatNode::SumFits(x, y) => {
                let t = pat_type(*x, b).or_else(|| pat_type(*y, b)).unwrap_or(b.op_ty);
                let ex = self.build(*x, b, Some(t))?;
                let ey = self.build(*y, b, Some(t))?;
                let fits = if t.is_float() {
                    true
                } else {
                    let (ix, iy) = (self.info(&ex), self.info(&ey));
                    match (ix.min, ix.max, iy.min, iy.max) {
                        (Some(a0), Some(a1), Some(b0), Some(b1)) => {
                            let (lo, hi) = (a0 as i128 + b0 as i128, a1 as i128 + b1 as i128);
                            lo >= t.min_int() && hi <= t.max_int()
                        }
                        _ => false,
                    }
                };
                Expr::make_const_i64(hint.unwrap_or(Type::bool()), fits as i64)
            }
        })
    }

    /// Try each rule in order on `e`; return the first rewrite that applies.
    pub(crate) fn rewrite(&mut self, e: &Expr, rules: &RuleSet) -> Option<Expr> {
        let op_ty = match e.node() {
            ExprNode::Binary { a, .. } => a.ty(),
            ExprNode::Not(a) => a.ty(),
            ExprNode::Select { t, .. } => t.ty(),
            _ => e.ty(),
        };
        let [ea, eb] = operands(e);
        for &i in &rules.candidates[kind_of(ea) * KINDS + kind_of(eb)] {
            let r = &rules.rules[i as usize];
            let mut b = Binds {
                w: [None; 5],
                c: [None; 4],
                op_ty,
            };
            if !matches(r.lhs, e, &mut b) {
                continue;
            }
            // A constant folded with overflow in a non-overflowing type
            // (e.g. `c1 - c0` in `x + c0 < c1  ->  x < c1 - c0`) makes the
            // rewrite unsound: the rule is skipped.
            let saved = std::mem::replace(&mut self.overflowed, false);
            let ok = match r.pred {
                Some(pred) => {
                    matches!(self.build(pred, &b, Some(Type::bool())), Some(v) if v.is_true())
                }
                None => true,
            };
            let out = if ok && !self.overflowed {
                self.build(r.rhs, &b, Some(e.ty()))
            } else {
                None
            };
            let bad = self.overflowed;
            self.overflowed = saved;
            if bad {
                continue;
            }
            if let Some(out) = out {
                return Some(out);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    /// Which outlines an expression can match, said directly.
    fn fits(s: Shape, e: &Expr) -> bool {
        match (s, e.node()) {
            (Shape::Any, _) => true,
            (Shape::Const, _) => const_of(e).is_some(),
            (Shape::Bin(op), ExprNode::Binary { op: o, .. }) => op == *o,
            (Shape::Not, ExprNode::Not(_)) | (Shape::Select, ExprNode::Select { .. }) => true,
            _ => false,
        }
    }

    #[test]
    fn operand_kinds_agree_with_outlines() {
        let x = Expr::var(Type::i32(), "x");
        let c = Expr::i32(3);
        let b = Expr::lt(x.clone(), c.clone());
        let mut exprs = vec![
            x.clone(),
            c.clone(),
            Expr::broadcast(c.clone(), 4),
            Expr::broadcast(x.clone(), 4),
            Expr::not(b.clone()),
            Expr::select(b.clone(), x.clone(), c.clone()),
        ];
        for op in [
            BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod, BinOp::Min, BinOp::Max,
            BinOp::EQ, BinOp::NE, BinOp::LT, BinOp::LE, BinOp::GT, BinOp::GE,
        ] {
            exprs.push(Expr::binary(op, x.clone(), c.clone()));
        }
        exprs.push(Expr::and(b.clone(), b.clone()));
        exprs.push(Expr::or(b.clone(), b));
        let mut shapes = vec![Shape::Any, Shape::Const, Shape::Not, Shape::Select];
        for e in &exprs {
            if let ExprNode::Binary { op, .. } = e.node() {
                shapes.push(Shape::Bin(*op));
            }
        }
        for s in &shapes {
            for e in &exprs {
                assert_eq!(fits(*s, e), shape_fits_kind(*s, kind_of(Some(e))), "{e}");
            }
            assert_eq!(*s == Shape::Any, shape_fits_kind(*s, kind_of(None)));
        }
    }
}
