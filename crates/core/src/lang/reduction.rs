//! Inline reductions: `sum`, `product`, `maximum`, `minimum`, `argmax`,
//! `argmin`. Each makes a hidden Func over the expression's free Vars,
//! defined as the reduction's identity and updated once per point of the
//! reduction domain (Halide's InlineReductions), and returns a call to it.
//!
//! As in Halide: no widening (the result has the expression's type, and
//! sums wrap); the domain is the one RDom whose RVars the expression uses,
//! or the one given (an expression that does not use it is then applied
//! once); RVars of other domains are free variables of the hidden Func
//! (so using the result in a pure definition is an error there); ties in
//! argmax / argmin keep the first point in iteration order.

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::ir::visit::{for_each_expr, mutate_expr_children};
use crate::ir::{Expr, ExprNode, Mutator, Type};
use crate::lang::func::Func;
use crate::lang::math::select;
use crate::lang::rdom::{domain_of, ReductionDomain};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Product,
    Maximum,
    Minimum,
    ArgMax,
    ArgMin,
}

impl Reduction {
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Sum => "sum",
            Reduction::Product => "product",
            Reduction::Maximum => "maximum",
            Reduction::Minimum => "minimum",
            Reduction::ArgMax => "argmax",
            Reduction::ArgMin => "argmin",
        }
    }
}

/// The lowest value of `t`: -infinity for floats (Halide's `Type::min`).
pub fn lowest(t: Type) -> Expr {
    if t.is_float() {
        Expr::make_const_f64(t, f64::NEG_INFINITY)
    } else {
        Expr::type_min(t)
    }
}

/// The highest value of `t`: +infinity for floats.
pub fn highest(t: Type) -> Expr {
    if t.is_float() {
        Expr::make_const_f64(t, f64::INFINITY)
    } else {
        Expr::type_max(t)
    }
}

/// Replaces the RVars of other domains by plain Vars of the same name:
/// inside the hidden Func they are pure arguments.
struct FreeRVars<'a> {
    domain: &'a ReductionDomain,
}

impl Mutator for FreeRVars<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let ExprNode::Variable {
            name,
            rdom: Some(d),
            ..
        } = e.node()
        {
            if !d.same_as(self.domain) {
                return Expr::var(e.ty(), name.clone());
            }
        }
        mutate_expr_children(self, e)
    }
}

/// The free variables of `e` in order of appearance: Vars and RVars not of
/// `domain`, not bound by a Let inside `e`, not parameters.
fn free_vars(e: &Expr, domain: &ReductionDomain) -> Vec<Expr> {
    let mut bound: HashSet<String> = HashSet::new();
    for_each_expr(e, &mut |x| {
        if let ExprNode::Let { name, .. } = x.node() {
            bound.insert(name.clone());
        }
    });
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = vec![];
    for_each_expr(e, &mut |x| {
        if let ExprNode::Variable {
            name,
            param: None,
            rdom,
        } = x.node()
        {
            let mine = rdom.as_ref().is_some_and(|d| d.same_as(domain));
            if !mine && !bound.contains(name) && seen.insert(name.clone()) {
                out.push(x.clone());
            }
        }
    });
    out
}

/// `kind(e)` or `kind(rdom, e)`, with the hidden Func named after `name`.
/// Returns the call (one Expr; for argmax / argmin one Int(32) index per
/// domain dimension, then the value).
pub fn inline_reduction(
    kind: Reduction,
    rdom: Option<ReductionDomain>,
    e: Expr,
    name: &str,
) -> Result<Vec<Expr>> {
    // Rewriting `e` recurses as deep as it nests.
    crate::stack::for_depth(e.depth(), || inline_reduction_here(kind, rdom, e, name))
}

/// `inline_reduction` on the current thread.
fn inline_reduction_here(
    kind: Reduction,
    rdom: Option<ReductionDomain>,
    e: Expr,
    name: &str,
) -> Result<Vec<Expr>> {
    let what = kind.name();
    let domain = match rdom {
        Some(d) => d,
        None => domain_of(&[&e], |names| {
            Error::user(format!(
                "Inline reduction \"{name}\" refers to reduction variables from multiple reduction domains: {}\n",
                names.join(", ")
            ))
        })?
        .ok_or_else(|| {
            Error::user(format!(
                "Expression passed to {what} must reference a reduction domain\n"
            ))
        })?,
    };
    let args = free_vars(&e, &domain);
    let body = FreeRVars { domain: &domain }.mutate_expr(&e);
    let pure_args: Vec<Expr> = args
        .iter()
        .map(|a| Expr::var(a.ty(), a.as_variable().unwrap_or_default().to_string()))
        .collect();
    let f = Func::new(Some(name));
    let t = e.ty();
    let old = |i: usize| -> Result<Expr> { f.call(pure_args.clone())?.element(i) };
    match kind {
        Reduction::Sum | Reduction::Product | Reduction::Maximum | Reduction::Minimum => {
            let init = match kind {
                Reduction::Sum => Expr::zero(t),
                Reduction::Product => Expr::one(t),
                Reduction::Maximum => lowest(t),
                _ => highest(t),
            };
            f.define(pure_args.clone(), vec![init])?;
            let o = old(0)?;
            let v = match kind {
                Reduction::Sum => Expr::add(o, body),
                Reduction::Product => Expr::mul(o, body),
                Reduction::Maximum => Expr::max(o, body),
                _ => Expr::min(o, body),
            };
            f.define(pure_args.clone(), vec![v])?;
        }
        Reduction::ArgMax | Reduction::ArgMin => {
            let n = domain.dimensions();
            let mut init: Vec<Expr> = vec![Expr::i32(0); n];
            init.push(if kind == Reduction::ArgMax {
                lowest(t)
            } else {
                highest(t)
            });
            f.define(pure_args.clone(), init)?;
            let value = old(n)?;
            // Strictly better: ties keep the first point.
            let better = if kind == Reduction::ArgMax {
                Expr::gt(body.clone(), value.clone())
            } else {
                Expr::lt(body.clone(), value.clone())
            };
            let mut update = vec![];
            for i in 0..n {
                let r = domain
                    .rvar(i)
                    .map(|r| r.expr())
                    .unwrap_or_else(|| Expr::i32(0));
                update.push(select(better.clone(), r, old(i)?)?);
            }
            update.push(select(better, body, value)?);
            f.define(pure_args.clone(), update)?;
        }
    }
    let call = f.call(args)?;
    (0..f.function.outputs()).map(|i| call.element(i)).collect()
}
