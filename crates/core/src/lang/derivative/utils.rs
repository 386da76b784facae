//! Helpers of reverse-mode differentiation that know nothing of adjoints:
//! the order to visit an expression DAG in, the RVars an expression uses,
//! the region of each Func a pipeline reads, and inverting a call argument.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::analysis::bounds::{bounds_of_expr, boxes_required_expr, region_union, Interval, Region, Scope};
use crate::analysis::cse::cse;
use crate::analysis::func_value_bounds::{compute_func_value_bounds, with_func_value_bounds};
use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute;
use crate::error::{Error, Result};
use crate::ir::visit::{expr_uses_var, for_each_child, for_each_expr};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Type};
use crate::lang::function::Function;
use crate::lang::rdom::ReductionDomain;

/// The nodes of `e` that adjoints flow through, each once (it is a DAG),
/// children before parents; `e` itself is last. Arguments of calls to Funcs
/// and images and conditions of selects are left out (no gradient flows
/// into an index or a condition); a use of a let variable leads to its
/// value.
pub fn sort_expressions(e: &Expr) -> Vec<Expr> {
    let mut lets: HashMap<String, Expr> = HashMap::new();
    let mut visited: HashSet<usize> = HashSet::new();
    let mut out = vec![];
    // Iterative post-order: user expressions can be very deep.
    let mut stack: Vec<(Expr, bool)> = vec![(e.clone(), false)];
    while let Some((node, expanded)) = stack.pop() {
        if expanded {
            out.push(node);
            continue;
        }
        if !visited.insert(node.id()) {
            continue;
        }
        stack.push((node.clone(), true));
        let mut children = vec![];
        match node.node() {
            ExprNode::Call {
                kind: CallKind::Halide { .. } | CallKind::Image { .. },
                ..
            } => {}
            ExprNode::Let { name, value, body } => {
                lets.insert(name.clone(), value.clone());
                children.push(body.clone());
            }
            ExprNode::Variable { name, .. } => {
                if let Some(v) = lets.get(name) {
                    children.push(v.clone());
                }
            }
            ExprNode::Select { t, f, .. } => children.extend([t.clone(), f.clone()]),
            _ => for_each_child(&node, &mut |c| children.push(c.clone())),
        }
        // Reversed, so that children are visited in order.
        for c in children.into_iter().rev() {
            if !visited.contains(&c.id()) {
                stack.push((c, false));
            }
        }
    }
    out
}

/// `e` without its lets, then wrapped in the lets of `let_variables` (in
/// that order, innermost first) that it uses, directly or through another.
pub fn add_let_expression(e: &Expr, lets: &HashMap<String, Expr>, let_variables: &[String]) -> Expr {
    let mut ret = strip_lets(e);
    let mut injected = vec![false; let_variables.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for (i, name) in let_variables.iter().enumerate() {
            if !injected[i] && expr_uses_var(&ret, name) {
                ret = Expr::let_(name.clone(), lets[name].clone(), ret);
                injected[i] = true;
                changed = true;
            }
        }
    }
    ret
}

/// `e` with every let replaced by its value.
pub fn substitute_in_all_lets(e: &Expr) -> Expr {
    struct Inline;
    impl crate::ir::Mutator for Inline {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            match e.node() {
                ExprNode::Let { name, value, body } => {
                    let value = self.mutate_expr(value);
                    let body = self.mutate_expr(body);
                    substitute(name, &value, &body)
                }
                _ => crate::ir::visit::mutate_expr_children(self, e),
            }
        }
    }
    crate::ir::Mutator::mutate_expr(&mut Inline, e)
}

fn strip_lets(e: &Expr) -> Expr {
    struct Strip;
    impl crate::ir::Mutator for Strip {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            match e.node() {
                ExprNode::Let { body, .. } => self.mutate_expr(body),
                _ => crate::ir::visit::mutate_expr_children(self, e),
            }
        }
    }
    crate::ir::Mutator::mutate_expr(&mut Strip, e)
}

/// One RVar an expression uses.
#[derive(Clone)]
pub struct RVarInfo {
    pub name: String,
    pub min: Expr,
    pub extent: Expr,
    pub index: usize,
    pub domain: ReductionDomain,
}

/// The RVars `exprs` use, by name.
pub fn gather_rvariables(exprs: &[&Expr]) -> BTreeMap<String, RVarInfo> {
    let mut out = BTreeMap::new();
    for e in exprs {
        for_each_expr(e, &mut |n| {
            if let ExprNode::Variable {
                name,
                rdom: Some(d),
                ..
            } = n.node()
            {
                if out.contains_key(name) {
                    return;
                }
                if let Some((index, v)) = d.vars().into_iter().enumerate().find(|(_, v)| &v.name == name) {
                    out.insert(
                        name.clone(),
                        RVarInfo {
                            name: name.clone(),
                            min: v.min,
                            extent: v.extent,
                            index,
                            domain: d.clone(),
                        },
                    );
                }
            }
        });
    }
    out
}

/// The reduction domain of some RVar `e` uses.
pub fn extract_rdom(e: &Expr) -> Option<ReductionDomain> {
    gather_rvariables(&[e]).into_values().next().map(|r| r.domain)
}

/// `e` with `name` replaced, also in the predicates of the reduction
/// domains whose RVars `e` uses (they are shared: Halide's behaviour).
pub fn substitute_rdom_predicate(name: &str, replacement: &Expr, e: &Expr) -> Expr {
    let out = substitute(name, replacement, e);
    let mut seen: Vec<ReductionDomain> = vec![];
    for r in gather_rvariables(&[&out]).into_values() {
        if seen.iter().any(|d| d.same_as(&r.domain)) {
            continue;
        }
        seen.push(r.domain.clone());
        if r.domain.has_predicate() {
            let p = r.domain.predicate();
            if expr_uses_var(&p, name) {
                r.domain.set_predicate(Some(substitute(name, replacement, &p)));
            }
        }
    }
    out
}

/// Does `e` (or a let value it uses) call `func` (any Func or image, if
/// `None`)?
pub fn is_calling_function(func: Option<&str>, e: &Expr, lets: &HashMap<String, Expr>) -> bool {
    let mut found = false;
    let mut pending = vec![e.clone()];
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(e) = pending.pop() {
        for_each_expr(&e, &mut |n| match n.node() {
            ExprNode::Call {
                name,
                kind: CallKind::Halide { .. } | CallKind::Image { .. },
                ..
            } => found |= func.is_none_or(|f| f == name),
            ExprNode::Variable { name, .. } => {
                if let Some(v) = lets.get(name) {
                    if seen.insert(name.clone()) {
                        pending.push(v.clone());
                    }
                }
            }
            _ => {}
        });
    }
    found
}

/// The indices in `vars` of the variables `e` uses, once per use.
pub fn gather_variables(e: &Expr, vars: &[String]) -> Vec<usize> {
    let mut out = vec![];
    let mut seen: HashSet<usize> = HashSet::new();
    for_each_expr(e, &mut |n| {
        if let ExprNode::Variable { name, .. } = n.node() {
            // A node shared in the DAG counts once, as in Halide.
            if seen.insert(n.id()) {
                out.extend(vars.iter().position(|v| v == name));
            }
        }
    });
    out
}

/// The Funcs `output` depends on (itself included), producers first. The
/// Funcs are not frozen: differentiating a pipeline does not realize it.
pub fn producers_first(output: &Function) -> Result<Vec<Function>> {
    let mut all: HashMap<String, Function> = HashMap::new();
    let mut stack = vec![output.clone()];
    while let Some(f) = stack.pop() {
        if all.contains_key(&f.name()) {
            continue;
        }
        stack.extend(crate::lower::environment::direct_callees(&f)?);
        all.insert(f.name(), f);
    }
    let mut funcs = HashMap::new();
    let mut order = vec![];
    crate::lower::environment::visit_producers_first(&output.name(), &all, &mut funcs, &mut order)?;
    Ok(order.into_iter().map(|n| all[&n].clone()).collect())
}

/// The region of every Func and image the Funcs `order` (producers first,
/// the output last) read when the output is computed over `output_box`
/// (Halide's `inference_bounds` in DerivativeUtils).
pub fn inference_bounds(order: &[Function], output_box: Region) -> Result<HashMap<String, Region>> {
    let mut scope: Scope = Scope::default();
    for f in order {
        for u in f.updates() {
            let exprs: Vec<&Expr> = u.values.iter().chain(&u.args).collect();
            for r in gather_rvariables(&exprs).into_values() {
                let max = Expr::sub(Expr::add(r.min.clone(), r.extent.clone()), Expr::i32(1));
                scope.insert(r.name, Interval::new(Some(r.min), Some(max)));
            }
        }
    }
    let value_bounds = compute_func_value_bounds(order);
    let mut bounds: HashMap<String, Region> = HashMap::new();
    let output = order.last().expect("the output is in the order");
    bounds.insert(output.name(), output_box);
    for f in order.iter().rev() {
        let name = f.name();
        let Some(current) = bounds.get(&name).cloned() else {
            return Err(Error::internal(format!("no bounds for {name} in propagate_adjoints")));
        };
        let mut inner = scope.clone();
        for (a, iv) in f.args().into_iter().zip(current) {
            inner.insert(a, iv);
        }
        let required = with_func_value_bounds(value_bounds.clone(), || {
            let mut all: HashMap<String, Region> = HashMap::new();
            for e in f.definition_exprs() {
                for (k, r) in boxes_required_expr(&e, &inner) {
                    let merged = match all.remove(&k) {
                        Some(old) => region_union(&old, &r),
                        None => r,
                    };
                    all.insert(k, merged);
                }
            }
            all
        });
        for (k, r) in required {
            if k == name {
                continue;
            }
            let merged = match bounds.remove(&k) {
                Some(old) => region_union(&old, &r),
                None => r,
            };
            bounds.insert(k, merged);
        }
    }
    for region in bounds.values_mut() {
        for iv in region.iter_mut() {
            iv.min = iv.min.as_ref().map(|e| cse(&simplify(e)));
            iv.max = iv.max.as_ref().map(|e| cse(&simplify(e)));
        }
    }
    Ok(bounds)
}

/// The bounds of each arg of an update over its RVars, which range one
/// past their domain's end (Halide's `[min, min + extent + 1]`, kept so the
/// overlap test errs the same way).
pub fn update_box(args: &[Expr]) -> Region {
    args.iter()
        .map(|a| {
            let mut scope = Scope::default();
            if let Some(d) = extract_rdom(a) {
                for v in d.vars() {
                    let max = simplify(&Expr::add(Expr::add(v.min.clone(), v.extent), Expr::i32(1)));
                    scope.insert(v.name, Interval::new(Some(v.min), Some(max)));
                }
            }
            bounds_of_expr(a, &scope)
        })
        .collect()
}

/// Could the boxes share a point? (False only when provably disjoint.)
pub fn boxes_overlap(a: &Region, b: &Region) -> bool {
    let mut overlap = Expr::bool_const(true);
    for (x, y) in a.iter().zip(b) {
        if let (Some(xmax), Some(ymin)) = (&x.max, &y.min) {
            overlap = Expr::and(overlap, Expr::ge(xmax.clone(), ymin.clone()));
        }
        if let (Some(ymax), Some(xmin)) = (&y.max, &x.min) {
            overlap = Expr::and(overlap, Expr::ge(ymax.clone(), xmin.clone()));
        }
    }
    !simplify(&overlap).is_false()
}

/// Solve `u == e` for `var` (used once in `e`, an Int(32) expression):
/// `Some((lo, extent))` when the solutions are `lo + k` for `k` in
/// `[0, extent)`, with `extent` a constant. Exact, never an
/// over-approximation: every such value solves the equation. Handles the
/// shapes call arguments take: `x + c`, `c - x`, `-x`, `x / c` (c > 0).
pub fn solve_inverse(u: &Expr, e: &Expr, var: &str) -> Option<(Expr, i64)> {
    if u.ty() != Type::i32() {
        return None;
    }
    let (lo, hi) = invert(e, var, u.clone(), u.clone())?;
    let (lo, hi) = (simplify(&lo), simplify(&hi));
    let extent = simplify(&Expr::add(Expr::sub(hi, lo.clone()), Expr::i32(1))).as_int_const()?;
    (extent >= 1).then_some((lo, extent))
}

/// The interval `[lo, hi]` of `var` for which `e` lies in `[lo_e, hi_e]`,
/// peeling the operations between `e` and `var`.
fn invert(e: &Expr, var: &str, lo: Expr, hi: Expr) -> Option<(Expr, Expr)> {
    if e.ty() != Type::i32() {
        return None;
    }
    match e.node() {
        ExprNode::Variable { name, .. } if name == var => Some((lo, hi)),
        ExprNode::Binary { op, a, b } => {
            let in_a = expr_uses_var(a, var);
            let in_b = expr_uses_var(b, var);
            if in_a == in_b {
                return None;
            }
            match (op, in_a) {
                (BinOp::Add, true) => invert(a, var, Expr::sub(lo, b.clone()), Expr::sub(hi, b.clone())),
                (BinOp::Add, false) => invert(b, var, Expr::sub(lo, a.clone()), Expr::sub(hi, a.clone())),
                (BinOp::Sub, true) => invert(a, var, Expr::add(lo, b.clone()), Expr::add(hi, b.clone())),
                (BinOp::Sub, false) => invert(b, var, Expr::sub(a.clone(), hi), Expr::sub(a.clone(), lo)),
                (BinOp::Mul, _) => {
                    let (x, c) = if in_a { (a, b) } else { (b, a) };
                    match c.as_int_const()? {
                        1 => invert(x, var, lo, hi),
                        -1 => invert(x, var, Expr::sub(Expr::i32(0), hi), Expr::sub(Expr::i32(0), lo)),
                        _ => None,
                    }
                }
                (BinOp::Div, true) => {
                    let c = b.as_int_const().filter(|c| *c > 0)?;
                    let lo = Expr::mul(lo, b.clone());
                    let hi = Expr::add(Expr::mul(hi, b.clone()), Expr::i32(c - 1));
                    invert(a, var, lo, hi)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Expr {
        Expr::var_i32("x")
    }
    fn u() -> Expr {
        Expr::var_i32("u")
    }

    #[test]
    fn solves_shifts_negations_and_downsamples() {
        let (lo, n) = solve_inverse(&u(), &Expr::add(x(), Expr::i32(3)), "x").unwrap();
        assert_eq!((lo.to_string(), n), ("(u + -3)".to_string(), 1));
        let (lo, n) = solve_inverse(&u(), &Expr::sub(Expr::i32(5), x()), "x").unwrap();
        assert_eq!((lo.to_string(), n), ("(5 - u)".to_string(), 1));
        let (lo, n) = solve_inverse(&u(), &Expr::div(x(), Expr::i32(2)), "x").unwrap();
        assert_eq!((lo.to_string(), n), ("(u * 2)".to_string(), 2));
    }

    #[test]
    fn refuses_what_it_cannot_invert_exactly() {
        assert!(solve_inverse(&u(), &Expr::mul(x(), Expr::i32(2)), "x").is_none());
        assert!(solve_inverse(&u(), &Expr::mul(x(), x()), "x").is_none());
        assert!(solve_inverse(&u(), &Expr::min(x(), Expr::i32(2)), "x").is_none());
    }

    #[test]
    fn sorts_children_before_parents_once_each() {
        let a = Expr::add(x(), Expr::i32(1));
        let e = Expr::mul(a.clone(), a.clone());
        let order = sort_expressions(&e);
        assert_eq!(order.len(), 4);
        assert!(order.last().unwrap().same_as(&e));
        let pos = |n: &Expr| order.iter().position(|o| o.same_as(n)).unwrap();
        assert!(pos(&a) < pos(&e));
    }
}
