//! Reverse accumulation over a pipeline: the order of Funcs and
//! definitions, the check for updates that cannot be differentiated, the
//! adjoint Funcs' first definitions, and the derivative of each expression
//! node (Halide's `ReverseAccumulationVisitor`). Reads of Funcs, images and
//! parameters are handed to `scatter.rs`.

use std::collections::{HashMap, HashSet};

use super::utils::{
    boxes_overlap, inference_bounds, is_calling_function, producers_first, sort_expressions, update_box,
};
use super::FuncKey;
use crate::analysis::bounds::Region;
use crate::analysis::simplify::{can_prove, simplify};
use crate::error::{user_warning, Error, Result};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Type};
use crate::lang::func::Func;
use crate::lang::function::Function;
use crate::lang::math;
use crate::lang::operators::{binary, cast, neg, Op};
use crate::lang::var::Var;

/// Which reads of Funcs a pass over a definition's expressions follows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Only collect the derivative of an update by the Func's own previous
    /// value, to find updates that cannot be differentiated.
    ForwardOverwriteDetection,
    /// Only reads of the Func being defined (its previous value).
    SelfReferences,
    /// Every read but those of the Func being defined.
    Others,
}

pub(super) struct ReverseAccumulation {
    /// The adjoint of each node of the definition being visited (by node
    /// identity: the expression is a DAG), with the node.
    pub(super) expr_adjoints: HashMap<usize, (Expr, Expr)>,
    pub(super) adjoint_funcs: HashMap<FuncKey, Func>,
    /// The lets of the definition being visited (names are unique in it).
    pub(super) lets: HashMap<String, Expr>,
    pub(super) let_variables: Vec<String>,
    /// The region of each Func and image the output's region reads.
    pub(super) func_bounds: HashMap<String, Region>,
    pub(super) current_func: Func,
    pub(super) current_update_id: i32,
    pub(super) phase: Phase,
    pub(super) is_current_non_overwriting_scan: bool,
    /// Forward phase: the derivative of the update by the Func's previous
    /// value (per tuple element), and where that value was read.
    pub(super) self_reference_adjoint: Vec<Expr>,
    pub(super) self_reference_args: Vec<Vec<Expr>>,
}

pub(super) fn op(o: Op, a: Expr, b: Expr) -> Result<Expr> {
    binary(o, a, b)
}

/// `f(args)[i]`.
pub(super) fn call_element(f: &Func, args: Vec<Expr>, i: usize) -> Result<Expr> {
    f.call(args)?.element(i)
}

/// Every value of `f(args)`.
pub(super) fn call_all(f: &Func, args: Vec<Expr>) -> Result<Vec<Expr>> {
    let r = f.call(args)?;
    (0..f.outputs()?).map(|i| r.element(i)).collect()
}

fn zeros(types: &[Type]) -> Vec<Expr> {
    types.iter().map(|t| Expr::zero(*t)).collect()
}

fn cant_differentiate(name: &str) -> Error {
    Error::user(format!(
        "Can't take the gradients of {name}, which depend on intermediate values. Use a scan (which saves intermediate results) instead.\n"
    ))
}

/// The pure arguments of `f` as Exprs, with implicit vars replaced by fresh
/// ones (an adjoint's definition may not use implicit vars).
fn adjoint_args(f: &Func) -> Vec<Expr> {
    f.args()
        .into_iter()
        .map(|v| if v.is_implicit() { Var::fresh().expr() } else { v.expr() })
        .collect()
}

/// `args` with implicit vars (`_i`) replaced by `pure[i]`.
pub(super) fn replace_implicit_vars(e: &Expr, pure: &[String]) -> Expr {
    let mut map = HashMap::new();
    crate::ir::visit::for_each_expr(e, &mut |n| {
        if let Some(name) = n.as_variable() {
            if crate::lang::var::is_implicit_name(name) {
                if let Ok(i) = name[1..].parse::<usize>() {
                    if let Some(p) = pure.get(i) {
                        map.insert(name.to_string(), Expr::var_i32(p.clone()));
                    }
                }
            }
        }
    });
    crate::analysis::substitute::substitute_map(&map, e)
}

impl ReverseAccumulation {
    pub(super) fn run(output: &Func, adjoint: &Func, output_box: Region) -> Result<HashMap<FuncKey, Func>> {
        let order: Vec<Function> = producers_first(&output.function)?;
        let funcs: Vec<Func> = order.iter().cloned().map(Func::from_function).collect();
        let mut state = ReverseAccumulation {
            expr_adjoints: HashMap::new(),
            adjoint_funcs: HashMap::new(),
            lets: HashMap::new(),
            let_variables: vec![],
            func_bounds: HashMap::new(),
            current_func: output.clone(),
            current_update_id: -1,
            phase: Phase::ForwardOverwriteDetection,
            is_current_non_overwriting_scan: false,
            self_reference_adjoint: vec![],
            self_reference_args: vec![],
        };
        let non_overwriting_scans = state.detect_overwrites(&funcs)?;

        state.func_bounds = inference_bounds(&order, output_box)?;
        let mut names: Vec<&String> = state.func_bounds.keys().collect();
        names.sort();
        for name in names {
            for (d, iv) in state.func_bounds[name].iter().enumerate() {
                if !iv.is_bounded() {
                    return Err(Error::user(format!(
                        "Access to function or buffer {name} at dimension {d} is not bounded. We can only differentiate bounded accesses.\n"
                    )));
                }
            }
        }

        state.make_adjoint_stubs(&funcs, adjoint)?;

        for func in funcs.iter().rev() {
            state.current_func = func.clone();
            let n = func.num_update_definitions() as i32;
            for update_id in (-1..n).rev() {
                state.propagate_definition(func, update_id, &non_overwriting_scans)?;
            }
        }
        Ok(state.adjoint_funcs)
    }

    /// The forward pass: find the updates whose gradients need values a
    /// later update overwrites (errors), and the updates that are scans
    /// never overwriting what they read (their adjoints flow to
    /// themselves).
    fn detect_overwrites(&mut self, funcs: &[Func]) -> Result<HashSet<FuncKey>> {
        self.phase = Phase::ForwardOverwriteDetection;
        let mut scans = HashSet::new();
        for func in funcs {
            self.current_func = func.clone();
            let n = func.num_update_definitions();
            let boxes: Vec<Region> = (0..n)
                .map(|u| Ok(update_box(&func.update_args(u)?)))
                .collect::<Result<_>>()?;
            let types = func.output_types()?;
            for update_id in 0..n {
                self.self_reference_adjoint = zeros(&types);
                self.self_reference_args.clear();
                let values = func.update_values(update_id)?;
                let (expr_list, outputs) = self.sort_definition(&values);
                for o in &outputs {
                    self.expr_adjoints.insert(o.id(), (o.clone(), Expr::f32(1.0)));
                }
                self.visit_all(&expr_list)?;

                let mut used_by_others = false;
                let adjoints: Vec<(Expr, Expr)> = self.expr_adjoints.drain().map(|(_, v)| v).collect();
                for (target, adjoint) in &adjoints {
                    let ExprNode::Call {
                        name,
                        kind: CallKind::Halide { .. } | CallKind::Image { .. },
                        ..
                    } = target.node()
                    else {
                        continue;
                    };
                    if is_calling_function(Some(&func.name()), adjoint, &self.lets) {
                        // The derivative reads the Func's own value: fine
                        // only if nothing it reads was overwritten.
                        for v in func.values()? {
                            if is_calling_function(None, &v, &self.lets) {
                                return Err(cant_differentiate(&func.name()));
                            }
                        }
                        for prev in &boxes[..update_id] {
                            if boxes_overlap(&boxes[update_id], prev) {
                                return Err(cant_differentiate(&func.name()));
                            }
                        }
                    }
                    if *name != func.name() {
                        used_by_others = true;
                    }
                }

                let zero_or_one = self
                    .self_reference_adjoint
                    .iter()
                    .all(|a| a.is_zero() || a.is_one());
                let has_rvars = !func.rvars(update_id)?.is_empty();
                if !zero_or_one && has_rvars {
                    // Does every instance of the update read a different
                    // point than it writes?
                    let update_args = func.update_args(update_id)?;
                    let mut not_overwriting = true;
                    for read in &self.self_reference_args {
                        let mut differs = Expr::bool_const(false);
                        for (r, w) in read.iter().zip(&update_args) {
                            differs = simplify(&Expr::or(differs, op(Op::Ne, r.clone(), w.clone())?));
                        }
                        not_overwriting &= can_prove(&differs);
                    }
                    if !not_overwriting && used_by_others {
                        return Err(cant_differentiate(&func.name()));
                    }
                    if not_overwriting {
                        scans.insert((func.name(), update_id as i32));
                    }
                }
            }
        }
        Ok(scans)
    }

    /// One adjoint Func per definition of every Func (zero, or `adjoint`
    /// for the output's last definition), and one per float image and
    /// scalar parameter read.
    fn make_adjoint_stubs(&mut self, funcs: &[Func], adjoint: &Func) -> Result<()> {
        for (fi, func) in funcs.iter().enumerate() {
            let n = func.num_update_definitions() as i32;
            let types = func.output_types()?;
            for update_id in -1..n {
                let adj = Func::new(Some(&format!("{}_{}_d_def__", func.name(), update_id + 1)));
                let args = adjoint_args(func);
                if fi == funcs.len() - 1 && update_id == n - 1 {
                    adj.define(args.clone(), call_all(adjoint, args)?)?;
                } else {
                    adj.define(args, zeros(&types))?;
                }
                self.adjoint_funcs.insert((func.name(), update_id), adj);
            }
        }
        let mut inputs: Vec<(String, usize, Type)> = vec![];
        for func in funcs {
            for e in func.function.definition_exprs() {
                crate::ir::visit::for_each_expr(&e, &mut |n| {
                    let found = match n.node() {
                        ExprNode::Variable { param: Some(p), .. } if n.ty().is_float() => Some((p.name(), 0)),
                        ExprNode::Call {
                            name,
                            kind: CallKind::Image { buffer, param },
                            ..
                        } if n.ty().is_float() => {
                            let dims = match (buffer, param) {
                                (Some(b), _) => b.dimensions(),
                                (None, Some(p)) => p.dimensions(),
                                (None, None) => 0,
                            };
                            Some((name.clone(), dims))
                        }
                        _ => None,
                    };
                    if let Some((name, dims)) = found {
                        if !inputs.iter().any(|(n, _, _)| *n == name) {
                            inputs.push((name, dims, n.ty()));
                        }
                    }
                });
            }
        }
        for (name, dims, t) in inputs {
            let key = (name.clone(), -1);
            if self.adjoint_funcs.contains_key(&key) {
                return Err(Error::user(format!(
                    "Naming conflict between buffer/parameters and function:{name}\n"
                )));
            }
            let adj = Func::new(Some(&format!("{}_d__", name.replace('.', "_"))));
            let args = (0..dims).map(|_| Var::fresh().expr()).collect();
            adj.define(args, vec![Expr::zero(t)])?;
            self.adjoint_funcs.insert(key, adj);
        }
        Ok(())
    }

    /// Propagate the adjoint of definition `update_id` of `func` to what it
    /// reads: first to its own previous value, then to everything else.
    fn propagate_definition(&mut self, func: &Func, update_id: i32, scans: &HashSet<FuncKey>) -> Result<()> {
        self.current_update_id = update_id;
        let key = (func.name(), update_id);
        let adjoint_func = self.adjoint_funcs[&key].clone();
        self.is_current_non_overwriting_scan = update_id >= 0 && scans.contains(&key);
        if update_id >= 0 && !self.is_current_non_overwriting_scan {
            self.mask_previous_update(func, update_id)?;
        }
        let values = if update_id < 0 {
            func.values()?
        } else {
            func.update_values(update_id as usize)?
        };
        let (expr_list, outputs) = self.sort_definition(&values);
        let update_args: Vec<Expr> = if update_id >= 0 {
            func.update_args(update_id as usize)?
        } else {
            adjoint_func.args().iter().map(|v| v.expr()).collect()
        };

        self.phase = Phase::SelfReferences;
        self.seed_outputs(&key, &outputs, &update_args)?;
        self.visit_all(&expr_list)?;

        if self.is_current_non_overwriting_scan {
            // The scan's adjoints accumulate into this update's own adjoint;
            // the previous update starts from a copy of it.
            let args: Vec<Expr> = adjoint_func.args().iter().map(|v| v.expr()).collect();
            let prev = Func::new(None);
            prev.define(args.clone(), call_all(&self.adjoint_funcs[&key], args)?)?;
            self.adjoint_funcs.insert((func.name(), update_id - 1), prev);
            self.mask_previous_update(func, update_id)?;
        }

        self.phase = Phase::Others;
        self.seed_outputs(&key, &outputs, &update_args)?;
        self.visit_all(&expr_list)
    }

    fn seed_outputs(&mut self, key: &FuncKey, outputs: &[Expr], args: &[Expr]) -> Result<()> {
        self.expr_adjoints.clear();
        let adj = self.adjoint_funcs[key].clone();
        for (i, o) in outputs.iter().enumerate() {
            let a = call_element(&adj, args.to_vec(), i)?;
            self.expr_adjoints.insert(o.id(), (o.clone(), a));
        }
        Ok(())
    }

    /// The adjoint of the definition before update `update_id`: the
    /// update's adjoint, except at the points the update overwrote (their
    /// previous values did not reach the output).
    fn mask_previous_update(&mut self, func: &Func, update_id: i32) -> Result<()> {
        let prev_key = (func.name(), update_id - 1);
        let prev = self.adjoint_funcs[&prev_key].clone();
        let prev_args: Vec<String> = prev.args().iter().map(|v| v.name().to_string()).collect();
        let update_args: Vec<Expr> = func
            .update_args(update_id as usize)?
            .iter()
            .map(|a| replace_implicit_vars(a, &prev_args))
            .collect();
        let is_noop = prev_args
            .iter()
            .zip(&update_args)
            .all(|(p, a)| a.as_variable() == Some(p.as_str()));
        let types = func.output_types()?;
        let pure: Vec<Expr> = prev_args.iter().map(|n| Expr::var_i32(n.clone())).collect();
        let masked = Func::new(Some(&prev.name()));
        if is_noop {
            masked.define(pure, zeros(&types))?;
        } else {
            let key = (func.name(), update_id);
            masked.define(pure.clone(), call_all(&self.adjoint_funcs[&key], pure)?)?;
            masked.define(update_args, zeros(&types))?;
        }
        self.adjoint_funcs.insert(prev_key, masked);
        Ok(())
    }

    /// The nodes of the definition's values in visiting order, and the
    /// values themselves; collects the definition's lets.
    fn sort_definition(&mut self, values: &[Expr]) -> (Vec<Expr>, Vec<Expr>) {
        let mut list = vec![];
        let mut outputs = vec![];
        for v in values {
            let sorted = sort_expressions(v);
            outputs.push(sorted.last().cloned().unwrap_or_else(|| v.clone()));
            list.extend(sorted);
        }
        self.lets.clear();
        self.let_variables.clear();
        for e in &list {
            if let ExprNode::Let { name, value, .. } = e.node() {
                if !self.lets.contains_key(name) {
                    self.lets.insert(name.clone(), value.clone());
                    self.let_variables.push(name.clone());
                }
            }
        }
        (list, outputs)
    }

    fn visit_all(&mut self, list: &[Expr]) -> Result<()> {
        for e in list.iter().rev() {
            if e.ty().is_handle() {
                continue;
            }
            self.visit(e)?;
        }
        Ok(())
    }

    /// Add `adjoint` to the adjoint of `stub`.
    pub(super) fn accumulate(&mut self, stub: &Expr, adjoint: Expr) -> Result<()> {
        let adjoint = move_into_select_with_zero(adjoint)?;
        let sum = match self.expr_adjoints.remove(&stub.id()) {
            Some((_, old)) => op(Op::Add, old, adjoint)?,
            None => adjoint,
        };
        self.expr_adjoints.insert(stub.id(), (stub.clone(), sum));
        Ok(())
    }

    /// Propagate the adjoint of node `e` to its children.
    fn visit(&mut self, e: &Expr) -> Result<()> {
        let Some((_, adj)) = self.expr_adjoints.get(&e.id()).cloned() else {
            return Ok(());
        };
        let zero_of = |x: &Expr| Expr::zero(x.ty());
        match e.node() {
            ExprNode::IntImm(_) | ExprNode::UIntImm(_) | ExprNode::FloatImm(_) | ExprNode::StringImm(_) => Ok(()),
            ExprNode::Cast(v) => {
                if e.ty().is_float() {
                    self.accumulate(v, cast(v.ty(), adj)?)
                } else {
                    self.accumulate(v, zero_of(v))
                }
            }
            ExprNode::Reinterpret(v) => self.accumulate(v, Expr::zero(e.ty())),
            ExprNode::Variable { param: Some(p), .. } => {
                self.propagate_call(adj, &p.name(), None, &[], 0, e.ty())
            }
            ExprNode::Variable { name, .. } => match self.lets.get(name).cloned() {
                Some(value) => self.accumulate(&value, Expr::let_(name.clone(), value.clone(), adj)),
                None => Ok(()),
            },
            ExprNode::Binary { op: bop, a, b } => self.visit_binary(*bop, a, b, adj),
            ExprNode::Not(a) => self.accumulate(a, zero_of(a)),
            ExprNode::Select { cond, t, f } => {
                let z = Expr::zero(adj.ty());
                self.accumulate(t, math::select(cond.clone(), adj.clone(), z.clone())?)?;
                self.accumulate(f, math::select(cond.clone(), z, adj)?)
            }
            ExprNode::Let { body, .. } => self.accumulate(body, adj),
            ExprNode::Call { name, args, kind } => match kind {
                CallKind::Intrinsic(Intrinsic::Math(m)) => self.visit_math(*m, e, args, adj),
                CallKind::Intrinsic(i) => self.visit_intrinsic(*i, name, e, args, adj),
                CallKind::Halide { func, value_index } => {
                    let f = Function::called(func, name)?;
                    self.propagate_call(adj, name, Some(&f), args, *value_index, e.ty())
                }
                CallKind::Image { .. } => self.propagate_call(adj, name, None, args, 0, e.ty()),
                CallKind::PureExtern | CallKind::Extern => Err(Error::user(format!(
                    "The derivative of {name} is not implemented.\n"
                ))),
            },
            ExprNode::Load { .. } | ExprNode::Ramp { .. } | ExprNode::Broadcast { .. } | ExprNode::Shuffle { .. } | ExprNode::VectorReduce { .. } => Err(Error::internal(format!(
                "Encounter unexpected expression \"{}\" when differentiating.",
                e.node_type_name()
            ))),
        }
    }

    fn visit_binary(&mut self, bop: BinOp, a: &Expr, b: &Expr, adj: Expr) -> Result<()> {
        let (a_, b_) = (a.clone(), b.clone());
        match bop {
            BinOp::Add => {
                self.accumulate(a, adj.clone())?;
                self.accumulate(b, adj)
            }
            BinOp::Sub => {
                self.accumulate(a, adj.clone())?;
                self.accumulate(b, neg(adj)?)
            }
            BinOp::Mul => {
                self.accumulate(a, op(Op::Mul, adj.clone(), b_)?)?;
                self.accumulate(b, op(Op::Mul, adj, a_)?)
            }
            BinOp::Div => {
                // d/da a/b = 1/b; d/db a/b = -a/b^2. A select with a zero
                // side takes the factors inside, so that the other side's
                // NaNs and infinities never multiply a zero.
                let b2 = op(Op::Mul, b_.clone(), b_.clone())?;
                if let ExprNode::Select { cond, t, f } = adj.node() {
                    let da = |x: &Expr| op(Op::Div, x.clone(), b_.clone());
                    let db = |x: &Expr| op(Op::Div, op(Op::Mul, neg(x.clone())?, a_.clone())?, b2.clone());
                    if t.is_zero() {
                        self.accumulate(a, math::select(cond.clone(), t.clone(), da(f)?)?)?;
                        return self.accumulate(b, math::select(cond.clone(), t.clone(), db(f)?)?);
                    }
                    if f.is_zero() {
                        self.accumulate(a, math::select(cond.clone(), da(t)?, f.clone())?)?;
                        return self.accumulate(b, math::select(cond.clone(), db(t)?, f.clone())?);
                    }
                }
                self.accumulate(a, op(Op::Div, adj.clone(), b_.clone())?)?;
                self.accumulate(b, op(Op::Div, op(Op::Mul, neg(adj)?, a_)?, b2)?)
            }
            BinOp::Mod => {
                self.accumulate(a, adj.clone())?;
                if a.ty().is_float() {
                    // a % b = a - trunc(a / b) * b
                    let q = math::trunc(op(Op::Div, a_, b_)?)?;
                    self.accumulate(b, op(Op::Mul, neg(adj)?, q)?)
                } else {
                    self.accumulate(b, Expr::zero(b.ty()))
                }
            }
            BinOp::Min | BinOp::Max => {
                let (ca, cb) = if bop == BinOp::Min {
                    (Op::Le, Op::Le)
                } else {
                    (Op::Ge, Op::Ge)
                };
                let z = Expr::zero(adj.ty());
                self.accumulate(
                    a,
                    math::select(op(ca, a_.clone(), b_.clone())?, adj.clone(), z.clone())?,
                )?;
                self.accumulate(b, math::select(op(cb, b_, a_)?, adj, z)?)
            }
            BinOp::EQ | BinOp::NE | BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE | BinOp::And | BinOp::Or => {
                // A boolean: nothing flows back.
                self.accumulate(a, Expr::zero(a.ty()))?;
                self.accumulate(b, Expr::zero(b.ty()))
            }
        }
    }

    fn visit_math(&mut self, m: MathFn, e: &Expr, args: &[Expr], adj: Expr) -> Result<()> {
        use MathFn::*;
        let t = e.ty();
        let x = args[0].clone();
        let one = Expr::one(t);
        let mul = |a: Expr, b: Expr| op(Op::Mul, a, b);
        let div = |a: Expr, b: Expr| op(Op::Div, a, b);
        let add = |a: Expr, b: Expr| op(Op::Add, a, b);
        let sub = |a: Expr, b: Expr| op(Op::Sub, a, b);
        let f = |m: MathFn, x: Expr| math::unary_math(m, x);
        let sq = |x: Expr| mul(x.clone(), x);
        let d = match m {
            Exp => mul(adj, f(Exp, x)?)?,
            FastExp => mul(adj, f(FastExp, x)?)?,
            Log | FastLog => div(adj, x)?,
            Sin => mul(adj, f(Cos, x)?)?,
            FastSin => mul(adj, f(FastCos, x)?)?,
            Asin => div(adj, f(Sqrt, sub(one, sq(x)?)?)?)?,
            Cos => mul(neg(adj)?, f(Sin, x)?)?,
            FastCos => mul(neg(adj)?, f(FastSin, x)?)?,
            Acos => div(neg(adj)?, f(Sqrt, sub(one, sq(x)?)?)?)?,
            Tan => div(adj, sq(f(Cos, x)?)?)?,
            Atan => div(adj, add(one, sq(x)?)?)?,
            Atan2 => {
                let (y, xx) = (args[0].clone(), args[1].clone());
                let r2 = add(sq(y.clone())?, sq(xx.clone())?)?;
                self.accumulate(&args[0], mul(adj.clone(), div(xx, r2.clone())?)?)?;
                return self.accumulate(&args[1], mul(adj, div(neg(y)?, r2)?)?);
            }
            Hypot => {
                let h = e.clone();
                self.accumulate(&args[0], mul(adj.clone(), div(args[0].clone(), h.clone())?)?)?;
                return self.accumulate(&args[1], mul(adj, div(args[1].clone(), h)?)?);
            }
            Sinh => mul(adj, f(Cosh, x)?)?,
            Asinh => div(adj, f(Sqrt, add(one, sq(x)?)?)?)?,
            Cosh => mul(adj, f(Sinh, x)?)?,
            Acosh => div(adj, mul(f(Sqrt, sub(x.clone(), one.clone())?)?, f(Sqrt, add(x, one)?)?)?)?,
            Tanh => div(adj, sq(f(Cosh, x)?)?)?,
            Atanh => div(adj, sub(one, sq(x)?)?)?,
            Ceil | Floor | Round | Trunc | IsNan | IsInf | IsFinite => Expr::zero(x.ty()),
            Sqrt => mul(adj, div(Expr::make_const_f64(t, 0.5), f(Sqrt, x)?)?)?,
            Erf => {
                // 2 / sqrt(pi) * exp(-x^2)
                let k = Expr::make_const_f64(t, std::f64::consts::FRAC_2_SQRT_PI);
                mul(adj, mul(k, f(Exp, neg(sq(x)?)?)?)?)?
            }
            Pow | FastPow => {
                let y = args[1].clone();
                let (pw, lg) = if m == Pow { (math::pow as fn(Expr, Expr) -> Result<Expr>, Log) } else { (math::fast_pow as fn(Expr, Expr) -> Result<Expr>, FastLog) };
                self.accumulate(&args[0], mul(mul(adj.clone(), y.clone())?, pw(x.clone(), sub(y.clone(), one)?)?)?)?;
                return self.accumulate(&args[1], mul(mul(adj, pw(x.clone(), y)?)?, f(lg, x)?)?);
            }
            FastInverse => {
                let inv = f(FastInverse, x)?;
                mul(mul(neg(adj)?, inv.clone())?, inv)?
            }
            FastInverseSqrt => {
                let inv = f(FastInverseSqrt, x)?;
                let h = Expr::make_const_f64(t, -0.5);
                mul(mul(mul(mul(h, adj)?, inv.clone())?, inv.clone())?, inv)?
            }
        };
        self.accumulate(&args[0], d)
    }

    fn visit_intrinsic(&mut self, i: Intrinsic, name: &str, e: &Expr, args: &[Expr], adj: Expr) -> Result<()> {
        use Intrinsic::*;
        match i {
            Abs if e.ty().is_float() => {
                let t = e.ty();
                let sign = math::select(
                    op(Op::Gt, args[0].clone(), Expr::zero(args[0].ty()))?,
                    Expr::one(t),
                    Expr::make_const_f64(t, -1.0),
                )?;
                self.accumulate(&args[0], op(Op::Mul, adj, sign)?)
            }
            Abs => self.accumulate(&args[0], Expr::zero(args[0].ty())),
            // Tags: the value is the first argument.
            Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped | StrictFloat | MemoizeExpr | Print => {
                self.accumulate(&args[0], adj)
            }
            ReturnSecond => {
                self.accumulate(&args[0], Expr::zero(args[0].ty()))?;
                self.accumulate(&args[1], adj)
            }
            // As the select chain it stands for: each value where the index
            // picks it (the last one also out of range).
            Mux if args.len() >= 2 => {
                let (id, values) = (&args[0], &args[1..]);
                let z = Expr::zero(adj.ty());
                let mut picked_earlier: Option<Expr> = None;
                for (i, v) in values.iter().enumerate() {
                    let last = i + 1 == values.len();
                    let here = if last {
                        match &picked_earlier {
                            Some(p) => math::select(p.clone(), z.clone(), adj.clone())?,
                            None => adj.clone(),
                        }
                    } else {
                        let c = op(Op::Eq, id.clone(), Expr::make_const_i64(id.ty(), i as i64))?;
                        picked_earlier = Some(match picked_earlier {
                            Some(p) => op(Op::LogicalOr, p, c.clone())?,
                            None => c.clone(),
                        });
                        math::select(c, adj.clone(), z.clone())?
                    };
                    self.accumulate(v, here)?;
                }
                self.accumulate(id, Expr::zero(id.ty()))
            }
            Undef => Ok(()),
            BitwiseAnd | BitwiseOr | BitwiseXor | BitwiseNot | ShiftLeft | ShiftRight => {
                for a in args {
                    self.accumulate(a, Expr::zero(a.ty()))?;
                }
                Ok(())
            }
            _ => {
                user_warning(&format!("Dropping gradients at call to {name}\n"));
                for a in args {
                    self.accumulate(a, Expr::zero(a.ty()))?;
                }
                Ok(())
            }
        }
    }
}

/// `select(c, x, 0) * y` -> `select(c, x * y, 0)` (and the like for `/`):
/// keeps a NaN or infinity on the unselected side out of the product.
fn move_into_select_with_zero(adjoint: Expr) -> Result<Expr> {
    let ExprNode::Binary { op: bop, a, b } = adjoint.node() else {
        return Ok(adjoint);
    };
    let (sel, other, o) = match (bop, a.node(), b.node()) {
        (BinOp::Mul, ExprNode::Select { .. }, _) => (a, b, Op::Mul),
        (BinOp::Mul, _, ExprNode::Select { .. }) => (b, a, Op::Mul),
        (BinOp::Div, ExprNode::Select { .. }, _) => (a, b, Op::Div),
        _ => return Ok(adjoint),
    };
    let ExprNode::Select { cond, t, f } = sel.node() else {
        unreachable!("matched a select above")
    };
    if t.is_zero() {
        return math::select(cond.clone(), t.clone(), op(o, f.clone(), other.clone())?);
    }
    if f.is_zero() {
        return math::select(cond.clone(), op(o, t.clone(), other.clone())?, f.clone());
    }
    Ok(adjoint)
}
