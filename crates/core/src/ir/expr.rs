//! Expression nodes. An `Expr` is an immutable, reference-counted tree; every
//! node carries its type. Constructors here are the *raw* IR constructors:
//! they expect operand types to already match (Halide's `Add::make` etc.).
//! The user-facing coercion rules live in `lang::operators`.

use std::fmt;
use std::sync::Arc;

use super::types::{Type, TypeCode};
use crate::buffer::Buffer;
use crate::ir::function_ptr::FunctionPtr;
use crate::lang::parameter::Parameter;
use crate::lang::rdom::ReductionDomain;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Min,
    Max,
    EQ,
    NE,
    LT,
    LE,
    GT,
    GE,
    And,
    Or,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::EQ | BinOp::NE | BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE
        )
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            BinOp::Add
                | BinOp::Mul
                | BinOp::Min
                | BinOp::Max
                | BinOp::EQ
                | BinOp::NE
                | BinOp::And
                | BinOp::Or
        )
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::EQ => "==",
            BinOp::NE => "!=",
            BinOp::LT => "<",
            BinOp::LE => "<=",
            BinOp::GT => ">",
            BinOp::GE => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VectorReduceOp {
    Add,
    SaturatingAdd,
    Mul,
    Min,
    Max,
    And,
    Or,
}

/// Math functions. Float-only unless noted; the codegen picks a vectorizable
/// implementation for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    Sqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Exp,
    Log,
    Pow,
    Floor,
    Ceil,
    Round,
    Trunc,
    IsNan,
    IsInf,
    IsFinite,
    FastSin,
    FastCos,
    FastExp,
    FastLog,
    FastPow,
    FastInverse,
    FastInverseSqrt,
    Erf,
    Hypot,
}

impl MathFn {
    pub fn name(self) -> &'static str {
        use MathFn::*;
        match self {
            Sqrt => "sqrt",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Atan2 => "atan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Exp => "exp",
            Log => "log",
            Pow => "pow",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            IsNan => "is_nan",
            IsInf => "is_inf",
            IsFinite => "is_finite",
            FastSin => "fast_sin",
            FastCos => "fast_cos",
            FastExp => "fast_exp",
            FastLog => "fast_log",
            FastPow => "fast_pow",
            FastInverse => "fast_inverse",
            FastInverseSqrt => "fast_inverse_sqrt",
            Erf => "erf",
            Hypot => "hypot",
        }
    }
}

/// Calls that the compiler understands (Halide's `Call::IntrinsicOp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Intrinsic {
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    BitwiseNot,
    ShiftLeft,
    ShiftRight,
    Abs,
    Absd,
    Popcount,
    CountLeadingZeros,
    CountTrailingZeros,
    /// `likely(x)`: value is x; marks the branch that loop partitioning keeps.
    Likely,
    LikelyIfInnermost,
    /// Lazy select: only the taken side is evaluated.
    IfThenElse,
    /// Print the arguments (strings and numbers) and return the first.
    Print,
    /// `require(cond, value, msg...)`.
    Require,
    Undef,
    Math(MathFn),
    SaturatingAdd,
    SaturatingSub,
    SaturatingCast,
    HalvingAdd,
    HalvingSub,
    RoundingHalvingAdd,
    WideningAdd,
    WideningSub,
    WideningMul,
    MulShiftRight,
    RoundingMulShiftRight,
    DivRoundToZero,
    ModRoundToZero,
    /// Reads a field of a `halide_buffer_t*` (arg 0); arg 1 is the dimension where needed.
    BufferGetHost,
    BufferGetMin,
    BufferGetExtent,
    BufferGetStride,
    BufferGetDimensions,
    BufferGetTypeCode,
    BufferGetTypeBits,
    BufferGetTypeLanes,
    BufferIsBoundsQuery,
    /// Runtime error reporting (an assertion's message, `Expr::error`):
    /// arg 0 is the error code (an Int32 constant) the pipeline returns,
    /// the others (strings and values) are concatenated into the message.
    Error,
    /// Left by the simplifier where constant folding a signed 32/64-bit
    /// operation overflowed (undefined in Halide); code generation reports it.
    SignedIntegerOverflow,
    /// Marks a pure value for the optimizer; returns arg 0.
    PromiseClamped,
    StrictFloat,
    /// `widen_right_add/mul/sub(a, b)`: `a` of twice `b`'s width combined
    /// with `b` widened (FindIntrinsics.cpp's lowering).
    WidenRightAdd,
    WidenRightMul,
    WidenRightSub,
    /// `widening_shift_left/right(a, b)`: `a` widened, then shifted by `b`.
    WideningShiftLeft,
    WideningShiftRight,
    /// `rounding_shift_left/right(a, b)`: shifts that round to nearest
    /// (halves up) where bits are dropped.
    RoundingShiftLeft,
    RoundingShiftRight,
    /// `extract_bits(e, lsb)`: the bits of `e` from `lsb` up, as the call's type.
    ExtractBits,
    /// `concat_bits(e0, e1, ...)`: the arguments' bits, `e0` lowest.
    ConcatBits,
    /// `mux(id, v0, v1, ...)`: `v_id`, or the last value when `id` is out
    /// of range. Kept whole until code generation, as Halide does, so that
    /// bounds inference reads every value (their union), not each under
    /// its `id == i` condition as a select chain would be.
    Mux,
    /// `unsafe_promise_clamped(value, min, max)`: `value`, which the user
    /// promises lies in `[min, max]` (bounds inference relies on it).
    UnsafePromiseClamped,
    /// `memoize_tag(value, keys...)`: `value`; the keys only name a cache entry.
    MemoizeExpr,
    /// `scatter(...)` / `gather(...)`: several values of one update definition,
    /// split into one store each before storage flattening.
    ScatterGather,
    /// Facts of the compile target, replaced by constants when lowering:
    /// `target_arch_is(arch)`, `target_os_is(os)`, `target_bits()`,
    /// `target_has_feature(feature)` (Halide's enum values as int32 args) and
    /// `target_natural_vector_size(zero of the element type)`.
    TargetArchIs,
    TargetOsIs,
    TargetBits,
    TargetHasFeature,
    TargetNaturalVectorSize,
    /// `random(seed?, id)`: replaced by a hash of its arguments and the
    /// defining Func's free vars when the Func is defined (`lang/random.rs`).
    Random,
    /// `trace(...)`: reports a trace event to the runtime (`halide_trace`)
    /// and returns its id; the arguments are laid out by
    /// `lower::tracing::TraceEvent`.
    Trace,
    /// `return_second(a, b)`: evaluates `a` (for its effect), then `b`,
    /// whose value it returns.
    ReturnSecond,
    /// `prefetch(load)`: a hint to bring the cache line holding the element
    /// that `load` (a scalar Load after storage flattening; a Func or image
    /// call before it) would read into the cache; reads nothing, never
    /// faults (`lower/inject_prefetch.rs`).
    Prefetch,
    /// `prefetch_placeholder(loop, stage, name, at, from, offset,
    /// strategy)`: where a stage's `prefetch` directive asks for
    /// prefetches, put at the top of its `at` loop's body when the loop
    /// nest is built, so that each specialization carries only its own
    /// directives; `lower/inject_prefetch.rs` replaces it.
    PrefetchPlaceholder,
    /// `make_struct(a, b, ...)`: a handle to a copy of the scalar
    /// arguments laid out as a C struct, on the calling function's stack
    /// (Halide's `Call::make_struct`; valid until the function returns).
    MakeStruct,
    /// `extern_buffer(kind, dims, f(mins), f(maxs), min0, extent0, ...)`:
    /// the `halide_buffer_t*` an extern stage gets for Func `f` — an input
    /// (kind 0: all of `f`'s storage; it reads the region from `mins` to
    /// `maxs`) or its output (kind 1: the region `min_d`, `extent_d` it
    /// writes, from `mins` to `maxs`). The two calls make the region visible
    /// to bounds inference; `lower/extern_stages.rs` replaces the node by
    /// the buffer once storage is flattened.
    ExternBuffer,
}

impl Intrinsic {
    pub fn name(self) -> String {
        match self {
            Intrinsic::Math(m) => m.name().to_string(),
            other => {
                let s = format!("{other:?}");
                // CamelCase -> snake_case
                let mut out = String::new();
                for (i, ch) in s.chars().enumerate() {
                    if ch.is_uppercase() {
                        if i > 0 {
                            out.push('_');
                        }
                        out.extend(ch.to_lowercase());
                    } else {
                        out.push(ch);
                    }
                }
                out
            }
        }
    }
    /// Pure intrinsics can be freely duplicated, hoisted and removed.
    pub fn is_pure(self) -> bool {
        !matches!(
            self,
            Intrinsic::Print
                | Intrinsic::Require
                | Intrinsic::Error
                | Intrinsic::Undef
                | Intrinsic::Trace
                | Intrinsic::Prefetch
                | Intrinsic::PrefetchPlaceholder
        )
    }
}

#[derive(Clone)]
pub enum CallKind {
    Intrinsic(Intrinsic),
    /// A call to a side-effect free C function by name.
    PureExtern,
    /// A call to a C function with possible side effects.
    Extern,
    /// A call to a Halide Func (before storage flattening).
    Halide {
        /// Weak for calls inside the callee's group (see `function_ptr`).
        func: FunctionPtr,
        value_index: usize,
    },
    /// A read of an input image: a concrete Buffer or an ImageParam.
    Image {
        buffer: Option<Buffer>,
        param: Option<Parameter>,
    },
}

impl CallKind {
    pub fn is_pure(&self) -> bool {
        match self {
            CallKind::Intrinsic(i) => i.is_pure(),
            CallKind::PureExtern | CallKind::Halide { .. } | CallKind::Image { .. } => true,
            CallKind::Extern => false,
        }
    }
}

impl fmt::Debug for CallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallKind::Intrinsic(i) => write!(f, "Intrinsic({i:?})"),
            CallKind::PureExtern => write!(f, "PureExtern"),
            CallKind::Extern => write!(f, "Extern"),
            CallKind::Halide { value_index, .. } => write!(f, "Halide[{value_index}]"),
            CallKind::Image { .. } => write!(f, "Image"),
        }
    }
}

#[derive(Clone, Debug)]
pub enum ExprNode {
    IntImm(i64),
    UIntImm(u64),
    FloatImm(f64),
    StringImm(String),
    Cast(Expr),
    Reinterpret(Expr),
    /// A named variable. `param` links scalar pipeline parameters; `rdom`
    /// marks a reduction variable (an RVar) and links its domain.
    Variable {
        name: String,
        param: Option<Parameter>,
        rdom: Option<ReductionDomain>,
    },
    Binary {
        op: BinOp,
        a: Expr,
        b: Expr,
    },
    Not(Expr),
    Select {
        cond: Expr,
        t: Expr,
        f: Expr,
    },
    /// A (possibly vector) load from a flat buffer. `index` is in elements.
    Load {
        name: String,
        index: Expr,
        predicate: Expr,
    },
    Ramp {
        base: Expr,
        stride: Expr,
        lanes: u16,
    },
    Broadcast {
        value: Expr,
        lanes: u16,
    },
    Let {
        name: String,
        value: Expr,
        body: Expr,
    },
    Call {
        name: String,
        args: Vec<Expr>,
        kind: CallKind,
    },
    /// Concatenate `vectors` and pick lanes by `indices`.
    Shuffle {
        vectors: Vec<Expr>,
        indices: Vec<i32>,
    },
    /// Reduce groups of adjacent lanes of `value` to the result's lane count.
    VectorReduce {
        op: VectorReduceOp,
        value: Expr,
    },
}

#[derive(Debug)]
pub struct ExprInner {
    pub ty: Type,
    /// Nodes on the longest path down to a leaf (1 for a leaf): how deep
    /// recursive passes over this expression go.
    depth: u32,
    pub node: ExprNode,
}

/// Dropping a deep expression (a sum of 100000 terms built by a Python
/// loop, or a chain of 100000 Funcs each calling the previous one) must
/// not recurse once per level, which would overflow the stack: the
/// children a node owns alone are taken apart on an explicit worklist, and
/// drops that happen while it runs (an Expr inside a Func a call held)
/// only add to it.
impl Drop for ExprInner {
    fn drop(&mut self) {
        let mut unique = false;
        crate::ir::visit::for_each_child_of_node(&self.node, &mut |c| {
            unique |= Arc::strong_count(&c.0) == 1
        });
        if !unique {
            return;
        }
        let mut children = Vec::new();
        take_children(&mut self.node, &mut children);
        let _ = PENDING_DROPS.try_with(|pending| {
            if let Ok(mut p) = pending.try_borrow_mut() {
                let outermost = p.is_none();
                p.get_or_insert_with(Vec::new).append(&mut children);
                if !outermost {
                    return;
                }
            } else {
                return;
            }
            // The outermost drop empties the worklist.
            loop {
                let next = pending.borrow_mut().as_mut().and_then(|p| p.pop());
                let Some(mut e) = next else { break };
                if let Some(inner) = Arc::get_mut(&mut e.0) {
                    let mut more = Vec::new();
                    take_children(&mut inner.node, &mut more);
                    if let Some(p) = pending.borrow_mut().as_mut() {
                        p.append(&mut more);
                    }
                }
                drop(e);
            }
            *pending.borrow_mut() = None;
        });
        // (Without the worklist, during thread teardown, `children` drop
        // recursively here.)
    }
}

thread_local! {
    /// Expressions waiting to be taken apart by the outermost drop running
    /// on this thread (`None`: no drop is running).
    static PENDING_DROPS: std::cell::RefCell<Option<Vec<Expr>>> =
        const { std::cell::RefCell::new(None) };
}

/// Move the children of `node` to `stack`, leaving a leaf behind.
fn take_children(node: &mut ExprNode, stack: &mut Vec<Expr>) {
    match std::mem::replace(node, ExprNode::IntImm(0)) {
        ExprNode::Cast(a)
        | ExprNode::Reinterpret(a)
        | ExprNode::Not(a)
        | ExprNode::Broadcast { value: a, .. }
        | ExprNode::VectorReduce { value: a, .. } => stack.push(a),
        ExprNode::Binary { a, b, .. }
        | ExprNode::Ramp {
            base: a, stride: b, ..
        }
        | ExprNode::Load {
            index: a,
            predicate: b,
            ..
        }
        | ExprNode::Let {
            value: a, body: b, ..
        } => stack.extend([a, b]),
        ExprNode::Select { cond, t, f } => stack.extend([cond, t, f]),
        ExprNode::Call { args, .. } => stack.extend(args),
        ExprNode::Shuffle { vectors, .. } => stack.extend(vectors),
        ExprNode::IntImm(_)
        | ExprNode::UIntImm(_)
        | ExprNode::FloatImm(_)
        | ExprNode::StringImm(_)
        | ExprNode::Variable { .. } => {}
    }
}

/// An immutable IR expression. Clone is cheap (a refcount bump).
#[derive(Clone)]
pub struct Expr(Arc<ExprInner>);

impl Expr {
    pub fn new(ty: Type, node: ExprNode) -> Expr {
        let mut below = 0u32;
        crate::ir::visit::for_each_child_of_node(&node, &mut |c| below = below.max(c.0.depth));
        Expr(Arc::new(ExprInner {
            ty,
            depth: below.saturating_add(1),
            node,
        }))
    }
    /// How deeply nested this expression is (1 for a leaf).
    pub fn depth(&self) -> u32 {
        self.0.depth
    }
    #[inline]
    pub fn ty(&self) -> Type {
        self.0.ty
    }
    #[inline]
    pub fn node(&self) -> &ExprNode {
        &self.0.node
    }
    /// True if both handles point at the same node (cheap identity check).
    /// An identity for the node (its address), valid while it lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
    pub fn same_as(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// True if another handle holds this node too. A walk from one root
    /// can reach a node twice only through a node with two parents, so a
    /// memo of shared nodes alone keeps a DAG walk linear.
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }
    pub fn lanes(&self) -> u16 {
        self.ty().lanes
    }

    /// Halide's name of the node's class (`IntImm`, `Add`, `Call`, ...),
    /// which some of its error messages show.
    pub fn node_type_name(&self) -> String {
        match self.node() {
            ExprNode::IntImm(_) => "IntImm".into(),
            ExprNode::UIntImm(_) => "UIntImm".into(),
            ExprNode::FloatImm(_) => "FloatImm".into(),
            ExprNode::StringImm(_) => "StringImm".into(),
            ExprNode::Cast(_) => "Cast".into(),
            ExprNode::Reinterpret(_) => "Reinterpret".into(),
            ExprNode::Variable { .. } => "Variable".into(),
            ExprNode::Binary { op, .. } => format!("{op:?}"),
            ExprNode::Not(_) => "Not".into(),
            ExprNode::Select { .. } => "Select".into(),
            ExprNode::Load { .. } => "Load".into(),
            ExprNode::Ramp { .. } => "Ramp".into(),
            ExprNode::Broadcast { .. } => "Broadcast".into(),
            ExprNode::Let { .. } => "Let".into(),
            ExprNode::Call { .. } => "Call".into(),
            ExprNode::Shuffle { .. } => "Shuffle".into(),
            ExprNode::VectorReduce { .. } => "VectorReduce".into(),
        }
    }

    // ---- constants -------------------------------------------------------

    /// A constant of type `ty` (scalar or broadcast) with integer value `v`,
    /// wrapped to the type's width as Halide's `make_const` does.
    pub fn make_const_i64(ty: Type, v: i64) -> Expr {
        if ty.is_vector() {
            return Expr::broadcast(Expr::make_const_i64(ty.element_of(), v), ty.lanes);
        }
        match ty.code {
            TypeCode::Int => Expr::int_imm(ty, v),
            TypeCode::UInt => Expr::uint_imm(ty, v as u64),
            TypeCode::Float | TypeCode::BFloat => Expr::float_imm(ty, v as f64),
            TypeCode::Handle => Expr::uint_imm(Type::uint(64), v as u64),
        }
    }
    pub fn make_const_f64(ty: Type, v: f64) -> Expr {
        if ty.is_vector() {
            return Expr::broadcast(Expr::make_const_f64(ty.element_of(), v), ty.lanes);
        }
        match ty.code {
            TypeCode::Int => Expr::int_imm(ty, v as i64),
            TypeCode::UInt => Expr::uint_imm(ty, v as u64),
            _ => Expr::float_imm(ty, v),
        }
    }
    pub fn int_imm(ty: Type, v: i64) -> Expr {
        debug_assert!(ty.is_int() && ty.is_scalar());
        // Wrap to the type's width, sign-extending.
        let shift = 64 - ty.bits as u32;
        let v = if shift > 0 && shift < 64 {
            (v << shift) >> shift
        } else {
            v
        };
        Expr::new(ty, ExprNode::IntImm(v))
    }
    pub fn uint_imm(ty: Type, v: u64) -> Expr {
        debug_assert!(ty.is_uint() && ty.is_scalar());
        let v = if ty.bits < 64 {
            v & ((1u64 << ty.bits) - 1)
        } else {
            v
        };
        Expr::new(ty, ExprNode::UIntImm(v))
    }
    pub fn float_imm(ty: Type, v: f64) -> Expr {
        debug_assert!(ty.is_float() && ty.is_scalar());
        let v = match ty.bits {
            16 => ferrohalide_runtime::half::round_to_f16(v),
            32 => v as f32 as f64,
            _ => v,
        };
        Expr::new(ty, ExprNode::FloatImm(v))
    }
    pub fn i32(v: i64) -> Expr {
        Expr::int_imm(Type::i32(), v)
    }
    pub fn i64(v: i64) -> Expr {
        Expr::int_imm(Type::i64(), v)
    }
    pub fn f32(v: f64) -> Expr {
        Expr::float_imm(Type::float(32), v)
    }
    pub fn f64(v: f64) -> Expr {
        Expr::float_imm(Type::float(64), v)
    }
    pub fn bool_const(v: bool) -> Expr {
        Expr::uint_imm(Type::bool(), v as u64)
    }
    pub fn string(s: impl Into<String>) -> Expr {
        Expr::new(Type::handle(), ExprNode::StringImm(s.into()))
    }
    pub fn zero(ty: Type) -> Expr {
        Expr::make_const_i64(ty, 0)
    }
    pub fn one(ty: Type) -> Expr {
        Expr::make_const_i64(ty, 1)
    }
    /// Largest value of the type (as a constant of that type).
    pub fn type_max(ty: Type) -> Expr {
        let e = ty.element_of();
        let s = match e.code {
            TypeCode::Int => Expr::int_imm(e, e.max_int() as i64),
            TypeCode::UInt => Expr::uint_imm(e, e.max_int() as u64),
            _ => Expr::float_imm(
                e,
                if e.bits == 32 {
                    f32::MAX as f64
                } else {
                    f64::MAX
                },
            ),
        };
        Expr::broadcast_if(s, ty.lanes)
    }
    pub fn type_min(ty: Type) -> Expr {
        let e = ty.element_of();
        let s = match e.code {
            TypeCode::Int => Expr::int_imm(e, e.min_int() as i64),
            TypeCode::UInt => Expr::uint_imm(e, 0),
            _ => Expr::float_imm(
                e,
                if e.bits == 32 {
                    f32::MIN as f64
                } else {
                    f64::MIN
                },
            ),
        };
        Expr::broadcast_if(s, ty.lanes)
    }

    // ---- constant queries --------------------------------------------------

    /// The value of an integer constant (signed or unsigned, scalar or broadcast).
    pub fn as_int_const(&self) -> Option<i64> {
        match self.node() {
            ExprNode::IntImm(v) => Some(*v),
            ExprNode::UIntImm(v) if *v <= i64::MAX as u64 => Some(*v as i64),
            ExprNode::Broadcast { value, .. } => value.as_int_const(),
            _ => None,
        }
    }
    pub fn as_uint_const(&self) -> Option<u64> {
        match self.node() {
            ExprNode::UIntImm(v) => Some(*v),
            ExprNode::Broadcast { value, .. } => value.as_uint_const(),
            _ => None,
        }
    }
    pub fn as_float_const(&self) -> Option<f64> {
        match self.node() {
            ExprNode::FloatImm(v) => Some(*v),
            ExprNode::Broadcast { value, .. } => value.as_float_const(),
            _ => None,
        }
    }
    /// Halide's `is_pure`: no side effects and no reads of a Func (whose
    /// values depend on where the read is placed relative to its
    /// computation); reads of input images are pure.
    pub fn is_pure(&self) -> bool {
        let mut pure = true;
        crate::ir::visit::for_each_expr(self, &mut |x| {
            if let ExprNode::Call { kind, .. } = x.node() {
                pure &= kind.is_pure() && !matches!(kind, CallKind::Halide { .. });
            }
        });
        pure
    }
    pub fn is_const(&self) -> bool {
        match self.node() {
            ExprNode::IntImm(_) | ExprNode::UIntImm(_) | ExprNode::FloatImm(_) => true,
            ExprNode::Broadcast { value, .. } => value.is_const(),
            _ => false,
        }
    }
    pub fn is_const_value(&self, v: i64) -> bool {
        match self.node() {
            ExprNode::IntImm(x) => *x == v,
            ExprNode::UIntImm(x) => v >= 0 && *x == v as u64,
            ExprNode::FloatImm(x) => *x == v as f64,
            ExprNode::Broadcast { value, .. } => value.is_const_value(v),
            _ => false,
        }
    }
    pub fn is_zero(&self) -> bool {
        self.is_const_value(0)
    }
    pub fn is_one(&self) -> bool {
        self.is_const_value(1)
    }
    pub fn is_true(&self) -> bool {
        self.ty().is_bool() && self.is_const_value(1)
    }
    pub fn is_false(&self) -> bool {
        self.ty().is_bool() && self.is_const_value(0)
    }
    pub fn as_variable(&self) -> Option<&str> {
        match self.node() {
            ExprNode::Variable { name, .. } => Some(name),
            _ => None,
        }
    }
    pub fn as_intrinsic(&self, which: Intrinsic) -> Option<&[Expr]> {
        match self.node() {
            ExprNode::Call {
                args,
                kind: CallKind::Intrinsic(i),
                ..
            } if *i == which => Some(args),
            _ => None,
        }
    }

    // ---- raw node constructors ---------------------------------------------

    pub fn var(ty: Type, name: impl Into<String>) -> Expr {
        Expr::new(
            ty,
            ExprNode::Variable {
                name: name.into(),
                param: None,
                rdom: None,
            },
        )
    }
    /// A reduction variable of `rdom` (always Int(32)).
    pub fn rvar(name: impl Into<String>, rdom: ReductionDomain) -> Expr {
        Expr::new(
            Type::i32(),
            ExprNode::Variable {
                name: name.into(),
                param: None,
                rdom: Some(rdom),
            },
        )
    }
    pub fn var_i32(name: impl Into<String>) -> Expr {
        Expr::var(Type::i32(), name)
    }
    pub fn param_var(ty: Type, name: impl Into<String>, param: Parameter) -> Expr {
        Expr::new(
            ty,
            ExprNode::Variable {
                name: name.into(),
                param: Some(param),
                rdom: None,
            },
        )
    }
    pub fn cast(ty: Type, value: Expr) -> Expr {
        if value.ty() == ty {
            return value;
        }
        debug_assert_eq!(ty.lanes, value.ty().lanes, "cast lane mismatch");
        Expr::new(ty, ExprNode::Cast(value))
    }
    pub fn reinterpret(ty: Type, value: Expr) -> Expr {
        if value.ty() == ty {
            return value;
        }
        Expr::new(ty, ExprNode::Reinterpret(value))
    }
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        debug_assert_eq!(a.ty(), b.ty(), "operand types of {op:?} differ: {a} vs {b}");
        let ty = if op.is_comparison() || op.is_logical() {
            Type::bool().with_lanes(a.lanes())
        } else {
            a.ty()
        };
        Expr::new(ty, ExprNode::Binary { op, a, b })
    }
    pub fn add(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Add, a, b)
    }
    pub fn sub(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Sub, a, b)
    }
    pub fn mul(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Mul, a, b)
    }
    pub fn div(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Div, a, b)
    }
    pub fn modulo(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Mod, a, b)
    }
    pub fn min(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Min, a, b)
    }
    pub fn max(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Max, a, b)
    }
    pub fn eq(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::EQ, a, b)
    }
    pub fn ne(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::NE, a, b)
    }
    pub fn lt(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::LT, a, b)
    }
    pub fn le(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::LE, a, b)
    }
    pub fn gt(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::GT, a, b)
    }
    pub fn ge(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::GE, a, b)
    }
    pub fn and(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::And, a, b)
    }
    pub fn or(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Or, a, b)
    }
    pub fn not(a: Expr) -> Expr {
        Expr::new(a.ty(), ExprNode::Not(a))
    }
    pub fn select(cond: Expr, t: Expr, f: Expr) -> Expr {
        debug_assert_eq!(t.ty(), f.ty());
        Expr::new(t.ty(), ExprNode::Select { cond, t, f })
    }
    pub fn load(ty: Type, name: impl Into<String>, index: Expr, predicate: Expr) -> Expr {
        Expr::new(
            ty,
            ExprNode::Load {
                name: name.into(),
                index,
                predicate,
            },
        )
    }
    pub fn ramp(base: Expr, stride: Expr, lanes: u16) -> Expr {
        let ty = base.ty().with_lanes(base.lanes() * lanes);
        Expr::new(
            ty,
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            },
        )
    }
    pub fn broadcast(value: Expr, lanes: u16) -> Expr {
        let ty = value.ty().with_lanes(value.lanes() * lanes);
        Expr::new(ty, ExprNode::Broadcast { value, lanes })
    }
    /// Broadcast only if `lanes > 1`.
    pub fn broadcast_if(value: Expr, lanes: u16) -> Expr {
        if lanes == 1 {
            value
        } else {
            Expr::broadcast(value, lanes)
        }
    }
    pub fn let_(name: impl Into<String>, value: Expr, body: Expr) -> Expr {
        Expr::new(
            body.ty(),
            ExprNode::Let {
                name: name.into(),
                value,
                body,
            },
        )
    }
    pub fn call(ty: Type, name: impl Into<String>, args: Vec<Expr>, kind: CallKind) -> Expr {
        Expr::new(
            ty,
            ExprNode::Call {
                name: name.into(),
                args,
                kind,
            },
        )
    }
    /// An assertion's message: reports the concatenation of `parts`
    /// (strings and values) and makes the pipeline return `code`.
    pub fn error(code: crate::ir::ErrorCode, parts: Vec<Expr>) -> Expr {
        let mut args = vec![Expr::i32(code.value() as i64)];
        args.extend(parts);
        Expr::intrinsic(Type::i32(), Intrinsic::Error, args)
    }

    pub fn intrinsic(ty: Type, which: Intrinsic, args: Vec<Expr>) -> Expr {
        Expr::call(ty, which.name(), args, CallKind::Intrinsic(which))
    }
    pub fn likely(e: Expr) -> Expr {
        Expr::intrinsic(e.ty(), Intrinsic::Likely, vec![e])
    }
    pub fn likely_if_innermost(e: Expr) -> Expr {
        Expr::intrinsic(e.ty(), Intrinsic::LikelyIfInnermost, vec![e])
    }
    pub fn shuffle(vectors: Vec<Expr>, indices: Vec<i32>) -> Expr {
        let ty = vectors[0].ty().with_lanes(indices.len() as u16);
        Expr::new(ty, ExprNode::Shuffle { vectors, indices })
    }
    pub fn vector_reduce(op: VectorReduceOp, value: Expr, lanes: u16) -> Expr {
        let ty = value.ty().with_lanes(lanes);
        Expr::new(ty, ExprNode::VectorReduce { op, value })
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Half-open interval description used by Realize and bounds: `min` and `extent`.
#[derive(Clone, Debug)]
pub struct Range {
    pub min: Expr,
    pub extent: Expr,
}

impl Range {
    pub fn new(min: Expr, extent: Expr) -> Range {
        Range { min, extent }
    }
}
