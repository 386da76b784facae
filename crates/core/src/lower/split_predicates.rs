//! The body transformations of predicating and blending tail strategies
//! (Halide's SubstituteIn and AddPredicates in ScheduleFunctions.cpp),
//! applied to a definition's body (its Provide, with the lets and `if`
//! around it) while its loop nest is built.
//!
//! Only calls to Funcs are predicated or see the guarded variable; reads of
//! input images are left alone (as in Halide: their buffers must cover the
//! rounded-up tile).

use crate::analysis::substitute::{substitute, substitute_lets};
use crate::ir::visit::{expr_uses_var, mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Mutator, Stmt, StmtNode};
use crate::lang::function::Function;

/// Where a guarded variable replaces the plain one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The arguments of calls to Funcs.
    Calls,
    /// The coordinates a Provide stores to.
    Provides,
}

/// Replace dimension `old` by `guarded` in the `target` expressions of
/// `body`. The body refers to the definition's own variables, which the
/// split definitions so far (`defs`, innermost first) and the lets inside
/// the body define in terms of the current loop dimensions; those are
/// expanded first where `old` hides behind them (as Halide substitutes
/// all lets in before substituting).
pub fn substitute_guarded(
    body: &Stmt,
    old: &str,
    guarded: &Expr,
    target: Target,
    defs: &[(String, Expr)],
) -> Stmt {
    SubstituteIn {
        old,
        guarded,
        target,
        defs,
        lets: vec![],
    }
    .mutate_stmt(body)
}

struct SubstituteIn<'a> {
    old: &'a str,
    guarded: &'a Expr,
    target: Target,
    defs: &'a [(String, Expr)],
    /// Lets of the body around the current node, outermost first.
    lets: Vec<(String, Expr)>,
}

impl SubstituteIn<'_> {
    /// `e` in terms of the loop dimensions, with `old` guarded; `e`
    /// itself if it does not depend on `old`.
    fn guard(&self, e: &Expr) -> Expr {
        // Only the definitions that lead to `old` are expanded: the others
        // stay names, so an `if` on them (another split's guard) still
        // bounds this expression (seed 1203: expanding `c` into its loops
        // hid the guard `c <= c.loop_max` from bounds inference).
        let chain: Vec<&(String, Expr)> = self.lets.iter().rev().chain(self.defs.iter()).collect();
        let mut leads_to_old = std::collections::HashSet::from([self.old.to_string()]);
        for (n, v) in chain.iter().rev() {
            if leads_to_old.iter().any(|d| expr_uses_var(v, d)) {
                leads_to_old.insert(n.clone());
            }
        }
        let lets = chain
            .into_iter()
            .filter(|(n, _)| n != self.old && leads_to_old.contains(n))
            .map(|(n, v)| (n.as_str(), v));
        let x = substitute_lets(e, lets);
        if expr_uses_var(&x, self.old) {
            substitute(self.old, self.guarded, &x)
        } else {
            e.clone()
        }
    }
}

impl Mutator for SubstituteIn<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Let { name, value, body } => {
                let v = self.mutate_expr(value);
                self.lets.push((name.clone(), value.clone()));
                let b = self.mutate_expr(body);
                self.lets.pop();
                Expr::let_(name.clone(), v, b)
            }
            _ => {
                let e = mutate_expr_children(self, e);
                match e.node() {
                    ExprNode::Call {
                        name,
                        args,
                        kind: kind @ CallKind::Halide { .. },
                    } if self.target == Target::Calls => {
                        let args = args.iter().map(|a| self.guard(a)).collect();
                        Expr::call(e.ty(), name.clone(), args, kind.clone())
                    }
                    _ => e,
                }
            }
        }
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let v = self.mutate_expr(value);
                self.lets.push((name.clone(), value.clone()));
                let b = self.mutate_stmt(body);
                self.lets.pop();
                Stmt::let_stmt(name.clone(), v, b)
            }
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                let values = values.iter().map(|v| self.mutate_expr(v)).collect();
                let args = args
                    .iter()
                    .map(|a| {
                        let a = self.mutate_expr(a);
                        if self.target == Target::Provides {
                            self.guard(&a)
                        } else {
                            a
                        }
                    })
                    .collect();
                let predicate = self.mutate_expr(predicate);
                Stmt::provide(name.clone(), values, args, predicate)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// Every call to a Func in `body` reads only where `cond` holds:
/// `if_then_else(cond, call)`.
pub fn predicate_calls(body: &Stmt, cond: &Expr) -> Stmt {
    PredicateCalls { cond }.mutate_stmt(body)
}

struct PredicateCalls<'a> {
    cond: &'a Expr,
}

impl Mutator for PredicateCalls<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call {
                kind: CallKind::Halide { .. },
                ..
            } => Expr::intrinsic(e.ty(), Intrinsic::IfThenElse, vec![self.cond.clone(), e]),
            _ => e,
        }
    }
}

/// Every Provide in `body` stores only where `cond` holds.
pub fn predicate_provides(body: &Stmt, cond: &Expr) -> Stmt {
    map_provides(body, &mut |name, values, args, predicate| {
        let predicate = if predicate.is_true() {
            cond.clone()
        } else {
            Expr::and(predicate.clone(), cond.clone())
        };
        Stmt::provide(name, values.to_vec(), args.to_vec(), predicate)
    })
}

/// Every Provide of `func` in `body` stores, where `mask` is false, the
/// value already stored at its coordinates.
pub fn blend_provides(body: &Stmt, mask: &Expr, func: &Function) -> Stmt {
    map_provides(body, &mut |name, values, args, predicate| {
        let blended = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let old = Expr::call(
                    v.ty(),
                    name,
                    args.to_vec(),
                    CallKind::Halide {
                        func: func.ptr(),
                        value_index: i,
                    },
                );
                Expr::select(mask.clone(), v.clone(), old)
            })
            .collect();
        Stmt::provide(name, blended, args.to_vec(), predicate.clone())
    })
}

type ProvideFn<'a> = dyn FnMut(&str, &[Expr], &[Expr], &Expr) -> Stmt + 'a;

/// `body` with each Provide replaced by `f(name, values, args, predicate)`.
fn map_provides(body: &Stmt, f: &mut ProvideFn<'_>) -> Stmt {
    struct MapProvides<'a, 'b> {
        f: &'a mut ProvideFn<'b>,
    }
    impl Mutator for MapProvides<'_, '_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            e.clone()
        }
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::Provide {
                    name,
                    values,
                    args,
                    predicate,
                } => (self.f)(name, values, args, predicate),
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    MapProvides { f }.mutate_stmt(body)
}
