//! The one evaluator of Halide's semantics: the value of an expression,
//! lane by lane, given values for its free variables (and, through `Env`,
//! the contents of buffers). Constant folding (`simplify/fold.rs`), the
//! simplifier's fuzz test, the loop passes' test interpreter
//! (`lower/test_interpreter.rs`) and realize-time bound evaluation all use
//! it, so they agree on every corner: Euclidean integer division and modulo
//! (`x / 0 == 0`, `x % 0 == 0`), wrap-around to the width of every integer
//! type (a signed 32/64-bit overflow, undefined in Halide, wraps and is
//! reported in `overflowed`), IEEE arithmetic in the type's own precision.
//!
//! Integer and bool values are kept as `Value::Int` already wrapped into
//! their type's range (u64 fits in i128); floats as `Value::Float` rounded
//! to their type. What the evaluator does not model (float16, most math
//! functions, Func calls) is `Err(Unsupported)`, never a guess.

use std::collections::HashMap;

use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Type, TypeCode, VectorReduceOp};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer or bool (0 / 1), in its type's range.
    Int(i128),
    Float(f64),
}

impl Value {
    pub fn as_int(self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(v),
            Value::Float(_) => None,
        }
    }
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
        }
    }
    pub fn is_true(self) -> bool {
        match self {
            Value::Int(v) => v != 0,
            Value::Float(v) => v != 0.0,
        }
    }
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsupported(pub String);

fn unsupported<T>(what: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(what.into()))
}

/// Where free variables and buffer contents come from.
pub trait Env {
    /// The value of variable `name` in each of `lanes` lanes (a scalar
    /// variable repeats its value).
    fn var(&mut self, name: &str, lanes: usize) -> Option<Vec<Value>>;
    /// Element `index` of buffer `name` (of element type `ty`).
    fn load(&mut self, name: &str, ty: Type, index: i128) -> Result<Value, Unsupported> {
        let _ = (ty, index);
        unsupported(format!("load from {name}"))
    }
    /// A `print` intrinsic ran with these parts.
    fn print(&mut self, parts: Vec<String>) {
        let _ = parts;
    }
}

/// Scalar variables by name.
impl Env for HashMap<String, Value> {
    fn var(&mut self, name: &str, lanes: usize) -> Option<Vec<Value>> {
        self.get(name).map(|v| vec![*v; lanes])
    }
}

// ---- one operation on scalars -------------------------------------------------

/// `v` wrapped into the range of integer or bool type `ty` (a bool keeps
/// its low bit).
pub fn wrap(ty: Type, v: i128) -> i128 {
    if ty.is_bool() {
        return v & 1;
    }
    let bits = ty.bits as u32;
    if bits >= 128 {
        return v;
    }
    let span = 1i128 << bits;
    let mut r = v.rem_euclid(span);
    if ty.is_int() && r > ty.max_int() {
        r -= span;
    }
    r
}

/// Halide's integer division: Euclidean (the remainder is never negative),
/// and zero for a zero divisor.
pub fn div_euclid(a: i128, b: i128) -> i128 {
    if b == 0 {
        0
    } else {
        a.div_euclid(b)
    }
}

/// Halide's integer modulo: in `[0, |b|)`, and zero for a zero divisor.
pub fn mod_euclid(a: i128, b: i128) -> i128 {
    if b == 0 {
        0
    } else {
        a.rem_euclid(b)
    }
}

/// A float result rounded to `ty`'s precision.
fn round_to(ty: Type, v: f64) -> Result<f64, Unsupported> {
    match (ty.code, ty.bits) {
        (TypeCode::Float, 32) => Ok(v as f32 as f64),
        (TypeCode::Float, 64) => Ok(v),
        _ => unsupported(format!("arithmetic on {ty:?}")),
    }
}

/// `a op b` for operands of type `ty`. Returns the value and whether a
/// signed 32/64-bit result overflowed (it is returned wrapped).
pub fn binary(op: BinOp, ty: Type, a: Value, b: Value) -> Result<(Value, bool), Unsupported> {
    let truth = |v: bool| Ok((Value::Int(v as i128), false));
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            match op {
                BinOp::EQ => return truth(x == y),
                BinOp::NE => return truth(x != y),
                BinOp::LT => return truth(x < y),
                BinOp::LE => return truth(x <= y),
                BinOp::GT => return truth(x > y),
                BinOp::GE => return truth(x >= y),
                BinOp::And | BinOp::Or => return unsupported("logical op on floats"),
                _ => {}
            }
            // Compute in the type's precision: for f32, operands are exact
            // f32 values and one IEEE operation in f64 then rounded to f32
            // is the correctly rounded f32 result (+, -, *, /).
            let v = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                // Halide's float modulo: a - b * floor(a / b), the
                // multiply-subtract fused (one rounding), as its code is.
                BinOp::Mod => {
                    let q = round_to(ty, x / y)?.floor();
                    if ty.bits == 32 {
                        (-(y as f32)).mul_add(q as f32, x as f32) as f64
                    } else {
                        (-y).mul_add(q, x)
                    }
                }
                // As code generation selects: a NaN operand gives the
                // other operand or itself depending on its side.
                BinOp::Min => {
                    if y < x {
                        y
                    } else {
                        x
                    }
                }
                BinOp::Max => {
                    if x > y {
                        x
                    } else {
                        y
                    }
                }
                _ => unreachable!("comparisons handled above"),
            };
            Ok((Value::Float(round_to(ty, v)?), false))
        }
        (Value::Int(x), Value::Int(y)) => {
            let exact = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div => div_euclid(x, y),
                BinOp::Mod => mod_euclid(x, y),
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::EQ => return truth(x == y),
                BinOp::NE => return truth(x != y),
                BinOp::LT => return truth(x < y),
                BinOp::LE => return truth(x <= y),
                BinOp::GT => return truth(x > y),
                BinOp::GE => return truth(x >= y),
                BinOp::And => return truth(x != 0 && y != 0),
                BinOp::Or => return truth(x != 0 || y != 0),
            };
            let r = wrap(ty, exact);
            // i64 * i64 fits in i128, so `exact` is exact for every type
            // Halide treats as non-overflowing.
            let overflowed = ty.is_int() && ty.bits >= 32 && r != exact;
            Ok((Value::Int(r), overflowed))
        }
        _ => unsupported(format!("mixed operands of {op:?}")),
    }
}

/// A value of type `from` converted to type `to`.
pub fn cast(to: Type, from: Type, v: Value) -> Result<Value, Unsupported> {
    let _ = from;
    if to.is_bool() {
        // Halide keeps the low bit (LLVM trunc / fptoui to i1).
        return Ok(Value::Int(match v {
            Value::Int(x) => x & 1,
            Value::Float(f) => float_to_int(Type::int(64), f)? & 1,
        }));
    }
    match (to.code, v) {
        (TypeCode::Int | TypeCode::UInt, Value::Int(x)) => Ok(Value::Int(wrap(to, x))),
        (TypeCode::Int | TypeCode::UInt, Value::Float(f)) => Ok(Value::Int(float_to_int(to, f)?)),
        (TypeCode::Float, Value::Int(x)) => Ok(Value::Float(match to.bits {
            // Rust's integer-to-float conversions round once, correctly.
            32 if x < 0 => x as i64 as f32 as f64,
            32 => x as u64 as f32 as f64,
            64 if x < 0 => x as i64 as f64,
            64 => x as u64 as f64,
            _ => return unsupported(format!("cast to {to:?}")),
        })),
        (TypeCode::Float, Value::Float(f)) if from.bits >= 32 && from.code == TypeCode::Float => {
            Ok(Value::Float(round_to(to, f)?))
        }
        _ => unsupported(format!("cast from {from:?} to {to:?}")),
    }
}

/// Truncation toward zero; a value the type can't hold is undefined in
/// Halide (and platform-dependent in LLVM), so it is not evaluated.
fn float_to_int(to: Type, f: f64) -> Result<i128, Unsupported> {
    let t = f.trunc();
    if !t.is_finite() || t < to.min_int() as f64 || t > to.max_int() as f64 {
        return unsupported("float to int cast out of range");
    }
    Ok(t as i128)
}

/// Halide's shifts as code generation emits them: a negative signed amount
/// shifts the other way; amounts past the width give 0 (or the sign for an
/// arithmetic right shift).
fn shift(ty: Type, a: i128, amount: i128, left: bool) -> i128 {
    let bits = ty.bits as i128;
    let (left, amount) = if amount < 0 { (!left, -amount) } else { (left, amount) };
    if amount >= bits {
        return if left || !ty.is_int() || a >= 0 { 0 } else { -1 };
    }
    if left {
        wrap(ty, a << amount)
    } else {
        // `a` is in range: >> on i128 is arithmetic for signed values and
        // logical for the non-negative unsigned ones.
        a >> amount
    }
}

fn bitwise(ty: Type, op: Intrinsic, a: i128, b: i128) -> i128 {
    wrap(
        ty,
        match op {
            Intrinsic::BitwiseAnd => a & b,
            Intrinsic::BitwiseOr => a | b,
            _ => a ^ b,
        },
    )
}

// ---- expressions, lane by lane ------------------------------------------------

/// Evaluate `e`, one value per lane.
pub fn eval_lanes(e: &Expr, env: &mut dyn Env) -> Result<Vec<Value>, Unsupported> {
    let mut ev = Evaluator {
        env,
        lets: vec![],
        overflowed: false,
    };
    ev.eval(e)
}

/// Evaluate scalar `e` with scalar variables `vars`.
pub fn eval_scalar(e: &Expr, vars: &HashMap<String, Value>) -> Result<Value, Unsupported> {
    let mut env = vars.clone();
    let v = eval_lanes(e, &mut env)?;
    match v.as_slice() {
        [x] => Ok(*x),
        _ => unsupported("a vector where a scalar was expected"),
    }
}

/// The value of a scalar integer expression whose variables are integers
/// (`None` if it uses anything else). Wraps as its type does.
pub fn eval_int(e: &Expr, vars: &HashMap<String, i64>) -> Option<i64> {
    let vars = vars
        .iter()
        .map(|(k, v)| (k.clone(), Value::Int(*v as i128)))
        .collect();
    eval_scalar(e, &vars).ok()?.as_int().and_then(|v| i64::try_from(v).ok())
}

/// The walk, with the lets in scope and whether a signed 32/64-bit
/// operation overflowed anywhere.
pub struct Evaluator<'a> {
    pub env: &'a mut dyn Env,
    lets: Vec<(String, Vec<Value>)>,
    pub overflowed: bool,
}

/// `v` repeated to `lanes` lanes if it is a scalar.
fn spread(v: Vec<Value>, lanes: usize) -> Result<Vec<Value>, Unsupported> {
    match v.len() {
        n if n == lanes => Ok(v),
        1 => Ok(vec![v[0]; lanes]),
        n => unsupported(format!("{n} lanes where {lanes} were expected")),
    }
}

impl<'a> Evaluator<'a> {
    pub fn new(env: &'a mut dyn Env) -> Evaluator<'a> {
        Evaluator {
            env,
            lets: vec![],
            overflowed: false,
        }
    }

    fn var(&mut self, name: &str, lanes: usize) -> Result<Vec<Value>, Unsupported> {
        if let Some((_, v)) = self.lets.iter().rev().find(|(n, _)| n == name) {
            return spread(v.clone(), lanes);
        }
        self.env
            .var(name, lanes)
            .ok_or_else(|| Unsupported(format!("unbound variable {name}")))
    }

    pub fn eval(&mut self, e: &Expr) -> Result<Vec<Value>, Unsupported> {
        let ty = e.ty();
        let lanes = ty.lanes as usize;
        let et = ty.element_of();
        Ok(match e.node() {
            ExprNode::IntImm(v) => vec![Value::Int(*v as i128)],
            ExprNode::UIntImm(v) => vec![Value::Int(*v as i128)],
            ExprNode::FloatImm(v) => vec![Value::Float(round_to(et, *v)?)],
            ExprNode::StringImm(_) => return unsupported("a string"),
            ExprNode::Variable { name, .. } => self.var(name, lanes)?,
            ExprNode::Cast(a) => {
                let from = a.ty().element_of();
                self.eval(a)?
                    .into_iter()
                    .map(|v| cast(et, from, v))
                    .collect::<Result<_, _>>()?
            }
            ExprNode::Reinterpret(a) if a.lanes() as usize != lanes => {
                regroup_bits(et, a.ty().element_of(), &self.eval(a)?, lanes)?
            }
            ExprNode::Reinterpret(a) => {
                let from = a.ty().element_of();
                self.eval(a)?
                    .into_iter()
                    .map(|v| reinterpret(et, from, v))
                    .collect::<Result<_, _>>()?
            }
            ExprNode::Binary { op, a, b } => {
                let at = a.ty().element_of();
                let x = spread(self.eval(a)?, lanes)?;
                let y = spread(self.eval(b)?, lanes)?;
                let mut out = Vec::with_capacity(lanes);
                for (p, q) in x.into_iter().zip(y) {
                    let (v, o) = binary(*op, at, p, q)?;
                    self.overflowed |= o;
                    out.push(v);
                }
                out
            }
            ExprNode::Not(a) => self
                .eval(a)?
                .into_iter()
                .map(|v| Value::Int(!v.is_true() as i128))
                .collect(),
            ExprNode::Select { cond, t, f } => {
                // Halide's select evaluates both sides.
                let c = spread(self.eval(cond)?, lanes)?;
                let x = spread(self.eval(t)?, lanes)?;
                let y = spread(self.eval(f)?, lanes)?;
                (0..lanes)
                    .map(|i| if c[i].is_true() { x[i] } else { y[i] })
                    .collect()
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                let idx = spread(self.eval(index)?, lanes)?;
                let p = spread(self.eval(predicate)?, lanes)?;
                let mut out = Vec::with_capacity(lanes);
                for i in 0..lanes {
                    out.push(if p[i].is_true() {
                        let at = idx[i]
                            .as_int()
                            .ok_or_else(|| Unsupported("a float index".into()))?;
                        self.env.load(name, et, at)?
                    } else if et.is_float() {
                        Value::Float(0.0)
                    } else {
                        Value::Int(0)
                    });
                }
                out
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes: n,
            } => {
                let b = self.eval(base)?;
                let s = spread(self.eval(stride)?, b.len())?;
                let bt = base.ty().element_of();
                let mut out = Vec::with_capacity(lanes);
                for i in 0..*n as i128 {
                    for (bv, sv) in b.iter().zip(&s) {
                        let (step, o1) = binary(BinOp::Mul, bt, *sv, Value::Int(i))?;
                        let (v, o2) = binary(BinOp::Add, bt, *bv, step)?;
                        self.overflowed |= o1 || o2;
                        out.push(v);
                    }
                }
                out
            }
            ExprNode::Broadcast { value, lanes: n } => {
                let v = self.eval(value)?;
                let mut out = Vec::with_capacity(lanes);
                for _ in 0..*n {
                    out.extend_from_slice(&v);
                }
                out
            }
            ExprNode::Let { name, value, body } => {
                let v = self.eval(value)?;
                self.lets.push((name.clone(), v));
                let r = self.eval(body);
                self.lets.pop();
                r?
            }
            ExprNode::Call {
                args,
                kind: CallKind::Intrinsic(i),
                ..
            } => self.intrinsic(*i, args, et, lanes)?,
            ExprNode::Call { name, .. } => return unsupported(format!("call to {name}")),
            ExprNode::Shuffle { vectors, indices } => {
                let mut all = vec![];
                for v in vectors {
                    all.extend(self.eval(v)?);
                }
                indices
                    .iter()
                    .map(|&i| {
                        all.get(i as usize)
                            .copied()
                            .ok_or_else(|| Unsupported(format!("shuffle index {i}")))
                    })
                    .collect::<Result<_, _>>()?
            }
            ExprNode::VectorReduce { op, value } => {
                let v = self.eval(value)?;
                let per = v.len() / lanes.max(1);
                let mut out = Vec::with_capacity(lanes);
                for chunk in v.chunks(per.max(1)) {
                    let mut acc = chunk[0];
                    for &x in &chunk[1..] {
                        acc = self.reduce(*op, et, acc, x)?;
                    }
                    out.push(acc);
                }
                out
            }
        })
    }

    fn reduce(&mut self, op: VectorReduceOp, ty: Type, a: Value, b: Value) -> Result<Value, Unsupported> {
        let bin = match op {
            VectorReduceOp::Add => BinOp::Add,
            VectorReduceOp::Mul => BinOp::Mul,
            VectorReduceOp::Min => BinOp::Min,
            VectorReduceOp::Max => BinOp::Max,
            VectorReduceOp::And => BinOp::And,
            VectorReduceOp::Or => BinOp::Or,
            VectorReduceOp::SaturatingAdd => {
                return match (a, b) {
                    (Value::Int(x), Value::Int(y)) => {
                        Ok(Value::Int((x + y).clamp(ty.min_int(), ty.max_int())))
                    }
                    _ => unsupported("saturating add of floats"),
                }
            }
        };
        let (v, o) = binary(bin, ty, a, b)?;
        self.overflowed |= o;
        Ok(v)
    }

    fn ints(&mut self, e: &Expr, lanes: usize) -> Result<Vec<i128>, Unsupported> {
        spread(self.eval(e)?, lanes)?
            .into_iter()
            .map(|v| v.as_int().ok_or_else(|| Unsupported("a float operand".into())))
            .collect()
    }

    fn intrinsic(
        &mut self,
        i: Intrinsic,
        args: &[Expr],
        et: Type,
        lanes: usize,
    ) -> Result<Vec<Value>, Unsupported> {
        let ints = |v: Vec<i128>| v.into_iter().map(Value::Int).collect::<Vec<_>>();
        Ok(match i {
            Intrinsic::Likely
            | Intrinsic::LikelyIfInnermost
            | Intrinsic::PromiseClamped
            | Intrinsic::UnsafePromiseClamped
            | Intrinsic::MemoizeExpr
            | Intrinsic::StrictFloat => spread(self.eval(&args[0])?, lanes)?,
            Intrinsic::ReturnSecond => {
                self.eval(&args[0])?;
                spread(self.eval(&args[1])?, lanes)?
            }
            Intrinsic::WidenRightAdd
            | Intrinsic::WidenRightMul
            | Intrinsic::WidenRightSub
            | Intrinsic::WideningShiftLeft
            | Intrinsic::WideningShiftRight
            | Intrinsic::RoundingShiftLeft
            | Intrinsic::RoundingShiftRight
            | Intrinsic::ExtractBits
            | Intrinsic::ConcatBits
            | Intrinsic::Mux => {
                let ty = et.with_lanes(lanes as u16);
                match crate::analysis::lower_intrinsic::lower_intrinsic(i, ty, args) {
                    Some(lowered) => spread(self.eval(&lowered)?, lanes)?,
                    None => return unsupported(format!("intrinsic {i:?} of {ty:?}")),
                }
            }
            Intrinsic::SignedIntegerOverflow => {
                self.overflowed = true;
                vec![Value::Int(0); lanes]
            }
            Intrinsic::BitwiseAnd | Intrinsic::BitwiseOr | Intrinsic::BitwiseXor if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                ints(a.iter().zip(&b).map(|(&x, &y)| bitwise(et, i, x, y)).collect())
            }
            Intrinsic::BitwiseNot if !et.is_float() => {
                ints(self.ints(&args[0], lanes)?.into_iter().map(|x| wrap(et, !x)).collect())
            }
            Intrinsic::ShiftLeft | Intrinsic::ShiftRight if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                let left = i == Intrinsic::ShiftLeft;
                // A shift by the width or more is undefined (LLVM poison).
                self.overflowed |= b.iter().any(|&y| y.abs() >= et.bits as i128);
                ints(a.iter().zip(&b).map(|(&x, &y)| shift(et, x, y, left)).collect())
            }
            // The two used by the rounding shifts' lowering: exact in
            // wider arithmetic, as code generation computes them.
            Intrinsic::RoundingHalvingAdd if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                ints(a.iter().zip(&b).map(|(&x, &y)| (x + y + 1) >> 1).collect())
            }
            Intrinsic::HalvingAdd | Intrinsic::HalvingSub if !et.is_float() => {
                // In a wider type: no overflow, rounded down.
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                let add = i == Intrinsic::HalvingAdd;
                ints(a.iter().zip(&b).map(|(&x, &y)| wrap(et, (if add { x + y } else { x - y }) >> 1)).collect())
            }
            Intrinsic::WideningAdd | Intrinsic::WideningSub | Intrinsic::WideningMul if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                let f = |x: i128, y: i128| match i {
                    Intrinsic::WideningAdd => x + y,
                    Intrinsic::WideningSub => x - y,
                    _ => x * y,
                };
                ints(a.iter().zip(&b).map(|(&x, &y)| wrap(et, f(x, y))).collect())
            }
            Intrinsic::MulShiftRight | Intrinsic::RoundingMulShiftRight if !et.is_float() => {
                // The exact product shifted right (rounding half up), then
                // saturated to the result type.
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                let q = self.ints(&args[2], lanes)?;
                let rounding = i == Intrinsic::RoundingMulShiftRight;
                let mut out = Vec::with_capacity(lanes);
                for k in 0..lanes {
                    let q = q[k].clamp(0, 120) as u32;
                    let mut p = a[k] * b[k];
                    if rounding && q > 0 {
                        p += 1i128 << (q - 1);
                    }
                    out.push((p >> q).clamp(et.min_int(), et.max_int()));
                }
                ints(out)
            }
            Intrinsic::SaturatingCast if !et.is_float() && !args[0].ty().is_float() => {
                ints(self.ints(&args[0], lanes)?.into_iter().map(|x| x.clamp(et.min_int(), et.max_int())).collect())
            }
            Intrinsic::Popcount | Intrinsic::CountLeadingZeros | Intrinsic::CountTrailingZeros
                if !args[0].ty().is_float() =>
            {
                let bits = args[0].ty().bits as u32;
                let mask = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
                let count = |x: i128| {
                    let w = (x as u128) & mask;
                    match i {
                        Intrinsic::Popcount => w.count_ones(),
                        Intrinsic::CountLeadingZeros => w.leading_zeros() - (128 - bits),
                        _ => w.trailing_zeros().min(bits),
                    }
                };
                ints(self.ints(&args[0], lanes)?.into_iter().map(|x| wrap(et, count(x) as i128)).collect())
            }
            Intrinsic::DivRoundToZero | Intrinsic::ModRoundToZero if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                if b.contains(&0) {
                    return unsupported("a division by zero rounded to zero");
                }
                let div = i == Intrinsic::DivRoundToZero;
                ints(a.iter().zip(&b).map(|(&x, &y)| wrap(et, if div { x / y } else { x % y })).collect())
            }
            Intrinsic::SaturatingAdd | Intrinsic::SaturatingSub if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                let sum = |x: i128, y: i128| if i == Intrinsic::SaturatingAdd { x + y } else { x - y };
                ints(a.iter().zip(&b).map(|(&x, &y)| sum(x, y).clamp(et.min_int(), et.max_int())).collect())
            }
            Intrinsic::Abs => {
                let v = spread(self.eval(&args[0])?, lanes)?;
                v.into_iter()
                    .map(|x| match x {
                        // abs of a signed type has the unsigned type of its width.
                        Value::Int(x) => Value::Int(wrap(et, x.abs())),
                        Value::Float(f) => Value::Float(f.abs()),
                    })
                    .collect()
            }
            Intrinsic::Absd if !et.is_float() => {
                let (a, b) = (self.ints(&args[0], lanes)?, self.ints(&args[1], lanes)?);
                ints(a.iter().zip(&b).map(|(&x, &y)| wrap(et, (x - y).abs())).collect())
            }
            Intrinsic::IfThenElse if lanes == 1 => {
                // Lazy: only the side taken is evaluated (it may load out
                // of bounds where its condition is false).
                if self.eval(&args[0])?[0].is_true() {
                    self.eval(&args[1])?
                } else if let Some(f) = args.get(2) {
                    self.eval(f)?
                } else {
                    vec![if et.is_float() { Value::Float(0.0) } else { Value::Int(0) }]
                }
            }
            Intrinsic::IfThenElse => {
                let c = spread(self.eval(&args[0])?, lanes)?;
                let t = spread(self.eval(&args[1])?, lanes)?;
                let f = match args.get(2) {
                    Some(f) => spread(self.eval(f)?, lanes)?,
                    None => t.clone(),
                };
                (0..lanes).map(|k| if c[k].is_true() { t[k] } else { f[k] }).collect()
            }
            // A cache hint: reads nothing, so it cannot fail either.
            Intrinsic::Prefetch | Intrinsic::PrefetchPlaceholder => vec![Value::Int(0); lanes],
            Intrinsic::Print => {
                let mut parts = vec![];
                let mut first = None;
                for a in args {
                    if let ExprNode::StringImm(s) = a.node() {
                        parts.push(s.clone());
                        continue;
                    }
                    let v = self.eval(a)?;
                    parts.push(
                        v.iter()
                            .map(|x| match x {
                                Value::Int(i) => i.to_string(),
                                Value::Float(f) => f.to_string(),
                            })
                            .collect::<Vec<_>>()
                            .join(","),
                    );
                    first.get_or_insert(v);
                }
                self.env.print(parts);
                spread(first.unwrap_or_else(|| vec![Value::Int(0)]), lanes)?
            }
            Intrinsic::Math(m @ (MathFn::Floor | MathFn::Ceil | MathFn::Trunc | MathFn::Round | MathFn::Sqrt))
                if et.is_float() =>
            {
                let v = spread(self.eval(&args[0])?, lanes)?;
                v.into_iter()
                    .map(|x| {
                        let f = x.as_f64();
                        let r = match m {
                            MathFn::Floor => f.floor(),
                            MathFn::Ceil => f.ceil(),
                            MathFn::Trunc => f.trunc(),
                            // Halide rounds halves to even.
                            MathFn::Round => f.round_ties_even(),
                            _ => f.sqrt(),
                        };
                        round_to(et, r).map(Value::Float)
                    })
                    .collect::<Result<_, _>>()?
            }
            other => return unsupported(format!("intrinsic {other:?}")),
        })
    }
}

/// A vector of `from` lanes read as `lanes` lanes of `to` (the same total
/// bits; lane 0 holds the lowest bits, as on a little-endian machine).
fn regroup_bits(to: Type, from: Type, v: &[Value], lanes: usize) -> Result<Vec<Value>, Unsupported> {
    let mut bits: Vec<bool> = Vec::with_capacity(v.len() * from.bits as usize);
    for &x in v {
        let word = match reinterpret(Type::uint(from.bits), from, x)? {
            Value::Int(w) => w as u128,
            Value::Float(_) => return unsupported("a float as bits"),
        };
        bits.extend((0..from.bits as u32).map(|k| (word >> k) & 1 == 1));
    }
    if bits.len() != to.bits as usize * lanes {
        return unsupported(format!("reinterpret of {} bits as {lanes} x {to:?}", bits.len()));
    }
    bits.chunks(to.bits as usize)
        .map(|chunk| {
            let word = chunk.iter().rev().fold(0u128, |w, &b| (w << 1) | b as u128);
            reinterpret(to, Type::uint(to.bits), Value::Int(word as i128))
        })
        .collect()
}

/// The bits of a value of type `from` read as type `to` (same width).
fn reinterpret(to: Type, from: Type, v: Value) -> Result<Value, Unsupported> {
    let bits = match (from.code, from.bits, v) {
        (TypeCode::Float, 32, Value::Float(f)) => (f as f32).to_bits() as u128,
        (TypeCode::Float, 64, Value::Float(f)) => f.to_bits() as u128,
        (TypeCode::Int | TypeCode::UInt, _, Value::Int(x)) => (x as u128) & (u128::MAX >> (128 - from.bits as u32)),
        _ => return unsupported(format!("reinterpret from {from:?}")),
    };
    Ok(match (to.code, to.bits) {
        (TypeCode::Float, 32) => Value::Float(f32::from_bits(bits as u32) as f64),
        (TypeCode::Float, 64) => Value::Float(f64::from_bits(bits as u64)),
        (TypeCode::Int | TypeCode::UInt, _) => Value::Int(wrap(to, bits as i128)),
        _ => return unsupported(format!("reinterpret to {to:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_i(e: &Expr) -> i128 {
        match eval_scalar(e, &HashMap::new()).unwrap() {
            Value::Int(v) => v,
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn fixed_point_and_bit_count_intrinsics() {
        let (i16t, u16t, u8t) = (Type::int(16), Type::uint(16), Type::uint(8));
        let c = |t: Type, v: i64| if t.is_uint() { Expr::uint_imm(t, v as u64) } else { Expr::int_imm(t, v) };
        let msr = |w, a, b, q| Expr::intrinsic(i16t, w, vec![c(i16t, a), c(i16t, b), Expr::uint_imm(i16t.with_code(TypeCode::UInt), q)]);
        assert_eq!(eval_i(&msr(Intrinsic::MulShiftRight, 0, -1, 3)), 0);
        assert_eq!(eval_i(&msr(Intrinsic::MulShiftRight, -3, 5, 2)), -4); // -15 >> 2
        assert_eq!(eval_i(&msr(Intrinsic::RoundingMulShiftRight, -3, 5, 2)), -4); // (-15 + 2) >> 2
        assert_eq!(eval_i(&msr(Intrinsic::MulShiftRight, 30000, 30000, 1)), 32767);
        let two = |w, t, a, b| Expr::intrinsic(t, w, vec![c(u8t, a), c(u8t, b)]);
        assert_eq!(eval_i(&two(Intrinsic::HalvingSub, u8t, 0, 2)), 255);
        assert_eq!(eval_i(&two(Intrinsic::HalvingAdd, u8t, 255, 255)), 255);
        assert_eq!(eval_i(&two(Intrinsic::WideningMul, u16t, 255, 255)), 65025);
        let one = |w, v| Expr::intrinsic(u8t, w, vec![c(u8t, v)]);
        assert_eq!(eval_i(&one(Intrinsic::CountLeadingZeros, 1)), 7);
        assert_eq!(eval_i(&one(Intrinsic::CountTrailingZeros, 0)), 8);
        assert_eq!(eval_i(&one(Intrinsic::Popcount, 255)), 8);
    }

    #[test]
    fn floor_semantics() {
        assert_eq!(div_euclid(-7, 2), -4);
        assert_eq!(div_euclid(7, -2), -3);
        assert_eq!(div_euclid(-7, -2), 4);
        assert_eq!(div_euclid(7, 0), 0);
        assert_eq!(mod_euclid(-7, 3), 2);
        assert_eq!(mod_euclid(7, -3), 1);
    }

    #[test]
    fn evaluates_with_bindings() {
        let e = Expr::max(Expr::sub(Expr::var_i32("a"), Expr::i32(8)), Expr::i32(0));
        let mut m = HashMap::new();
        m.insert("a".to_string(), 5);
        assert_eq!(eval_int(&e, &m), Some(0));
    }

    #[test]
    fn int32_wraps_and_reports_it() {
        let e = Expr::add(Expr::i32(i32::MAX as i64), Expr::i32(1));
        let mut env: HashMap<String, Value> = HashMap::new();
        let mut ev = Evaluator::new(&mut env);
        assert_eq!(ev.eval(&e).unwrap(), vec![Value::Int(i32::MIN as i128)]);
        assert!(ev.overflowed);
        // Narrow types wrap without it being an overflow.
        let u8t = Type::uint(8);
        let e = Expr::sub(Expr::uint_imm(u8t, 3), Expr::uint_imm(u8t, 5));
        let mut ev = Evaluator::new(&mut env);
        assert_eq!(ev.eval(&e).unwrap(), vec![Value::Int(254)]);
        assert!(!ev.overflowed);
    }

    #[test]
    fn f32_arithmetic_rounds_to_f32() {
        let e = Expr::add(Expr::f32(0.1), Expr::f32(0.2));
        let v = eval_scalar(&e, &HashMap::new()).unwrap();
        assert_eq!(v, Value::Float((0.1f32 + 0.2f32) as f64));
    }

    #[test]
    fn casts() {
        let c = |to: Type, from: Type, v: Value| cast(to, from, v).unwrap();
        assert_eq!(c(Type::uint(8), Type::i32(), Value::Int(-1)), Value::Int(255));
        assert_eq!(c(Type::bool(), Type::i32(), Value::Int(2)), Value::Int(0));
        assert_eq!(c(Type::i32(), Type::float(32), Value::Float(-2.7)), Value::Int(-2));
        assert!(cast(Type::int(8), Type::float(32), Value::Float(300.0)).is_err());
    }

    #[test]
    fn ramps_and_vectors() {
        let r = Expr::ramp(Expr::i32(3), Expr::i32(2), 4);
        let mut env: HashMap<String, Value> = HashMap::new();
        let v = eval_lanes(&r, &mut env).unwrap();
        assert_eq!(v, [3, 5, 7, 9].map(Value::Int).to_vec());
    }

    #[test]
    fn reinterpret_regroups_lanes_little_endian() {
        let v = Expr::shuffle(
            vec![Expr::uint_imm(Type::uint(8), 0x34), Expr::uint_imm(Type::uint(8), 0x12)],
            vec![0, 1],
        );
        let e = Expr::reinterpret(Type::uint(16), v);
        assert_eq!(eval_scalar(&e, &HashMap::new()).unwrap(), Value::Int(0x1234));
        let w = Expr::reinterpret(Type::int(8).with_lanes(2), Expr::uint_imm(Type::uint(16), 0xff01));
        let mut env: HashMap<String, Value> = HashMap::new();
        assert_eq!(eval_lanes(&w, &mut env).unwrap(), vec![Value::Int(1), Value::Int(-1)]);
    }

    #[test]
    fn shift_past_the_width_is_undefined() {
        let e = Expr::intrinsic(
            Type::uint(8),
            Intrinsic::ShiftLeft,
            vec![Expr::var(Type::uint(8), "x"), Expr::uint_imm(Type::uint(8), 8)],
        );
        let mut env: HashMap<String, Value> = HashMap::new();
        env.insert("x".into(), Value::Int(3));
        let mut ev = Evaluator::new(&mut env);
        ev.eval(&e).unwrap();
        assert!(ev.overflowed);
    }

    #[test]
    fn shifts_follow_code_generation() {
        let i8t = Type::int(8);
        assert_eq!(shift(i8t, -16, 2, false), -4);
        assert_eq!(shift(i8t, 3, -1, true), 1);
        assert_eq!(shift(i8t, -3, 9, false), -1);
        assert_eq!(shift(Type::uint(8), 200, 9, false), 0);
        assert_eq!(shift(Type::uint(8), 200, 1, true), 144);
    }
}
