//! A read `g(args)` inside the definition of the current Func `f` sends
//! `f`'s adjoint to `g`'s: `d_g(args) += adjoint`. An update may only write
//! at `g`'s pure variables or RVars, so the write is rewritten:
//!
//! - an argument that uses one of `f`'s variables in a way that can be
//!   inverted exactly (`x + 1`, `x / 2`) becomes `d_g`'s pure variable `u`,
//!   and `x` in the adjoint becomes the solution (`u - 1`, `2u + r` for `r`
//!   in `[0, 2)`); reads of other Funcs in the adjoint clamp `x` to `f`'s
//!   region;
//! - any other argument is a scatter: `f`'s variables become RVars over
//!   `f`'s region;
//! - `f`'s variables left in the adjoint are summed over, by RVars over
//!   `f`'s region;
//! - a write at exactly one RVar covering `g`'s region becomes a write at
//!   the pure variable;
//! - all RVars are merged into one RDom (an update has one), and the write
//!   joins the adjoint's last definition where that has the same left side
//!   and domain.
//!
//! Halide's `propagate_halide_function_call`, except that its rewrite of
//! `s * r.x + r.y` into a pure variable is not done (the scatter it leaves
//! computes the same values).

use std::collections::{HashMap, HashSet};

use super::reverse_accumulation::{call_element, op, replace_implicit_vars, Phase, ReverseAccumulation};
use super::utils::{
    add_let_expression, extract_rdom, gather_rvariables, gather_variables, is_calling_function, solve_inverse,
    substitute_in_all_lets, substitute_rdom_predicate, RVarInfo,
};
use crate::analysis::cse::cse;
use crate::analysis::simplify::{can_prove, simplify};
use crate::analysis::substitute::{substitute, substitute_map};
use crate::error::{Error, Result};
use crate::ir::equality::equal;
use crate::ir::visit::expr_uses_var;
use crate::ir::{CallKind, Expr, ExprNode, Type};
use crate::lang::func::Func;
use crate::lang::function::{Function, UpdateDefinition};
use crate::lang::math;
use crate::lang::operators::Op;
use crate::lang::rdom::ReductionDomain;

fn simplified(e: &Expr) -> Expr {
    simplify(&cse(e))
}

/// An RDom over `(min, extent)` pairs (unnamed, so fresh).
fn rdom(bounds: Vec<(Expr, Expr)>) -> Result<(ReductionDomain, Vec<Expr>)> {
    let d = ReductionDomain::new(None, bounds)?;
    let vars = (0..d.dimensions())
        .map(|i| d.rvar(i).expect("dimension exists").expr())
        .collect();
    Ok((d, vars))
}

/// `f(x)` reads of `func` in `e` with argument `i` replaced by `func`'s
/// pure variable `i`.
fn call_arg_to_pure_arg(func: &Func, i: usize, e: &Expr) -> Expr {
    struct M<'a> {
        name: String,
        pure: &'a Expr,
        i: usize,
    }
    impl crate::ir::Mutator for M<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = crate::ir::visit::mutate_expr_children(self, e);
            if let ExprNode::Call {
                name,
                args,
                kind: kind @ CallKind::Halide { .. },
            } = e.node()
            {
                if *name == self.name && self.i < args.len() {
                    let mut args = args.clone();
                    args[self.i] = self.pure.clone();
                    return Expr::call(e.ty(), name.clone(), args, kind.clone());
                }
            }
            e
        }
    }
    let pure = func.args()[i].expr();
    simplify(&crate::ir::Mutator::mutate_expr(
        &mut M {
            name: func.name(),
            pure: &pure,
            i,
        },
        e,
    ))
}

impl ReverseAccumulation {
    /// Send `adjoint` to the adjoint of the read `name(call_args)[value_index]`
    /// of a Func (`func`), an image or a scalar parameter (no args).
    pub(super) fn propagate_call(
        &mut self,
        adjoint: Expr,
        name: &str,
        func: Option<&Function>,
        call_args: &[Expr],
        value_index: usize,
        ty: Type,
    ) -> Result<()> {
        if !ty.is_float() {
            return Ok(());
        }
        let with_lets = |e: &Expr| add_let_expression(e, &self.lets, &self.let_variables);
        let mut adjoint = with_lets(&adjoint);
        let mut lhs: Vec<Expr> = call_args.iter().map(with_lets).collect();
        let adjoint_before = adjoint.clone();
        let lhs_before = lhs.clone();
        let current = self.current_func.clone();
        let is_self = func.is_some_and(|f| f.same_as(&current.function));
        match self.phase {
            Phase::ForwardOverwriteDetection => {
                if is_self {
                    let sum = op(Op::Add, self.self_reference_adjoint[value_index].clone(), adjoint)?;
                    self.self_reference_adjoint[value_index] = simplify(&sum);
                    self.self_reference_args.push(lhs);
                }
                return Ok(());
            }
            Phase::SelfReferences if !is_self => return Ok(()),
            Phase::Others if is_self => return Ok(()),
            _ => {}
        }

        let key = match func {
            Some(f) if self.is_current_non_overwriting_scan && self.phase == Phase::SelfReferences => {
                (f.name(), self.current_update_id)
            }
            Some(f) if is_self => (f.name(), self.current_update_id - 1),
            Some(f) => (f.name(), f.updates().len() as i32 - 1),
            None => (name.to_string(), -1),
        };
        let Some(func_to_update) = self.adjoint_funcs.get(&key).cloned() else {
            return Err(Error::internal(format!("no adjoint for {} ({})", key.0, key.1)));
        };
        if func_to_update.dimensions()? != lhs.len() {
            return Err(Error::internal(format!("adjoint of {name} has the wrong dimensions")));
        }
        adjoint = simplified(&adjoint);

        let current_adjoint = self.adjoint_funcs[&(current.name(), self.current_update_id)].clone();
        let current_args: Vec<String> = current_adjoint.args().iter().map(|v| v.name().to_string()).collect();
        let current_bounds = self.func_bounds.get(&current.name()).cloned().unwrap_or_default();
        for l in lhs.iter_mut() {
            *l = replace_implicit_vars(l, &current_args);
        }
        adjoint = replace_implicit_vars(&adjoint, &current_args);

        // Invert the arguments that use one of f's variables once.
        let new_args: Vec<String> = (0..lhs.len())
            .map(|i| format!("{}$u{i}", crate::lang::var::unique_name('u')))
            .collect();
        let mut canonicalized = vec![false; lhs.len()];
        let mut canonicalized_vars: HashSet<String> = HashSet::new();
        let mut lhs_substitutions: HashMap<String, Expr> = HashMap::new();
        for arg_id in 0..lhs.len() {
            let ids = gather_variables(&lhs[arg_id], &current_args);
            if ids.len() != 1 {
                continue;
            }
            let vid = ids[0];
            let variable = current_args[vid].clone();
            let u = Expr::var_i32(new_args[arg_id].clone());
            let arg = substitute_in_all_lets(&simplify(&lhs[arg_id]));
            let Some((lo, extent)) = solve_inverse(&u, &arg, &variable) else {
                continue;
            };
            let solution = if extent == 1 {
                lo
            } else {
                let (_, r) = rdom(vec![(Expr::i32(0), Expr::i32(extent))])?;
                Expr::add(lo, r[0].clone())
            };
            let Some(iv) = current_bounds.get(vid) else { continue };
            let (Some(min), Some(max)) = (iv.min.clone(), iv.max.clone()) else {
                continue;
            };
            let clamped = math::clamp(Expr::likely(Expr::var_i32(variable.clone())), min, max)?;
            adjoint = substitute_rdom_predicate(&variable, &clamped, &adjoint);
            // ... but the current adjoint is read at the variable itself: it
            // is zero outside f's region.
            adjoint = call_arg_to_pure_arg(&current_adjoint, vid, &adjoint);
            adjoint = substitute_rdom_predicate(&variable, &solution, &adjoint);
            lhs[arg_id] = u.clone();
            canonicalized[arg_id] = true;
            canonicalized_vars.insert(variable.clone());
            lhs_substitutions.insert(variable, u);
        }
        for l in lhs.iter_mut() {
            *l = substitute_map(&lhs_substitutions, l);
        }

        // Scatter the other arguments over f's region.
        let region: Vec<(Expr, Expr)> = current_bounds
            .iter()
            .map(|iv| {
                let (min, max) = (iv.min.clone().unwrap_or(Expr::i32(0)), iv.max.clone().unwrap_or(Expr::i32(0)));
                (min.clone(), Expr::add(Expr::sub(max, min), Expr::i32(1)))
            })
            .collect();
        let mut r_bounds: Option<Vec<Expr>> = None;
        for lhs_id in 0..lhs.len() {
            if canonicalized[lhs_id] {
                continue;
            }
            for vid in gather_variables(&lhs[lhs_id], &current_args) {
                let variable = &current_args[vid];
                if canonicalized_vars.contains(variable) || vid >= region.len() {
                    continue;
                }
                if r_bounds.is_none() {
                    r_bounds = Some(rdom(region.clone())?.1);
                }
                let rv = r_bounds.as_ref().expect("made above")[vid].clone();
                lhs[lhs_id] = substitute(variable, &rv, &lhs[lhs_id]);
                adjoint = substitute(variable, &rv, &adjoint);
            }
        }

        // Sum over f's variables the adjoint still uses.
        let free: Vec<usize> = (0..current_args.len().min(region.len()))
            .filter(|&i| expr_uses_var(&adjoint, &current_args[i]))
            .collect();
        if !free.is_empty() {
            let (_, r) = rdom(free.iter().map(|&i| region[i].clone()).collect())?;
            for (k, &i) in free.iter().enumerate() {
                adjoint = substitute(&current_args[i], &r[k], &adjoint);
            }
        }
        adjoint = simplified(&adjoint);
        for l in lhs.iter_mut() {
            *l = simplified(l);
        }

        let target_args: Vec<String> = func_to_update.args().iter().map(|v| v.name().to_string()).collect();
        if !is_calling_function(Some(&func_to_update.name()), &adjoint, &HashMap::new()) {
            self.write_at_pure_vars(name, &target_args, &mut lhs, &mut adjoint)?;
        }

        // One RDom for the update: the new RVars first, then the read's own.
        let mut rvars = gather_rvariables(&std::iter::once(&adjoint).chain(&lhs).collect::<Vec<_>>());
        let original = gather_rvariables(&std::iter::once(&adjoint_before).chain(&lhs_before).collect::<Vec<_>>());
        if self.is_current_non_overwriting_scan {
            // The scan runs backwards.
            let flips: HashMap<String, Expr> = original
                .values()
                .map(|r| {
                    let max = simplify(&Expr::sub(Expr::add(r.min.clone(), r.extent.clone()), Expr::i32(1)));
                    let rv = Expr::rvar(r.name.clone(), r.domain.clone());
                    (r.name.clone(), Expr::sub(max, rv))
                })
                .collect();
            for l in lhs.iter_mut() {
                *l = substitute_map(&flips, l);
            }
            adjoint = substitute_map(&flips, &adjoint);
            rvars = gather_rvariables(&std::iter::once(&adjoint).chain(&lhs).collect::<Vec<_>>());
        }
        let sort_key = |r: &RVarInfo| (r.name.split('$').next().unwrap_or("").to_string(), r.index);
        let (mut old, mut new): (Vec<RVarInfo>, Vec<RVarInfo>) =
            rvars.values().cloned().partition(|r| original.contains_key(&r.name));
        new.sort_by_key(sort_key);
        old.sort_by_key(sort_key);
        let all: Vec<RVarInfo> = new.into_iter().chain(old).collect();
        let mut merged: Option<ReductionDomain> = None;
        if !all.is_empty() {
            let (d, vars) = rdom(all.iter().map(|r| (r.min.clone(), r.extent.clone())).collect())?;
            let mut predicate = Expr::bool_const(true);
            let mut seen: Vec<ReductionDomain> = vec![];
            for r in &all {
                if !seen.iter().any(|s| s.same_as(&r.domain)) {
                    seen.push(r.domain.clone());
                    predicate = simplify(&Expr::and(predicate, r.domain.predicate()));
                }
            }
            let renames: HashMap<String, Expr> = all.iter().map(|r| r.name.clone()).zip(vars).collect();
            adjoint = substitute_map(&renames, &adjoint);
            for l in lhs.iter_mut() {
                *l = substitute_map(&renames, l);
            }
            let predicate = substitute_map(&renames, &predicate);
            if !predicate.is_const() {
                let to_target: HashMap<String, Expr> = new_args
                    .iter()
                    .zip(&target_args)
                    .map(|(u, t)| (u.clone(), Expr::var_i32(t.clone())))
                    .collect();
                d.where_(substitute_map(&to_target, &predicate))?;
            }
            merged = Some(d);
        }

        // Back to the target's own variable names.
        for (u, t) in new_args.iter().zip(&target_args) {
            let tv = Expr::var_i32(t.clone());
            for l in lhs.iter_mut() {
                *l = substitute(u, &tv, l);
            }
            adjoint = substitute_rdom_predicate(u, &tv, &adjoint);
        }
        adjoint = simplified(&adjoint);
        for l in lhs.iter_mut() {
            *l = simplified(l);
        }

        let overwrite = self.phase == Phase::SelfReferences;
        self.write_adjoint(&func_to_update, lhs, value_index, adjoint, merged.as_ref(), overwrite)
    }

    /// `d_g(r.x) += a(r.x)` with `r.x` covering g's region becomes
    /// `d_g(x) += select(x in r, a(x), 0)`: a pure update, no scatter.
    fn write_at_pure_vars(
        &self,
        name: &str,
        target_args: &[String],
        lhs: &mut [Expr],
        adjoint: &mut Expr,
    ) -> Result<()> {
        let target_bounds = self.func_bounds.get(name).cloned().unwrap_or_default();
        for i in 0..lhs.len() {
            let arg = substitute_in_all_lets(&lhs[i]);
            let ExprNode::Variable {
                name: rname,
                rdom: Some(d),
                ..
            } = arg.node()
            else {
                continue;
            };
            if d.has_predicate() {
                continue;
            }
            let Some(rv) = d.vars().into_iter().find(|v| v.name == *rname) else {
                continue;
            };
            let Some(t) = target_bounds.get(i) else { continue };
            let (Some(tmin), Some(tmax)) = (t.min.clone(), t.max.clone()) else {
                continue;
            };
            let rmin = simplify(&rv.min);
            let rmax = simplify(&Expr::sub(Expr::add(rv.min.clone(), rv.extent.clone()), Expr::i32(1)));
            let covers = Expr::and(
                op(Op::Le, rmin.clone(), simplify(&tmin))?,
                op(Op::Ge, rmax.clone(), simplify(&tmax))?,
            );
            if !can_prove(&covers) {
                continue;
            }
            let x = Expr::var_i32(target_args[i].clone());
            lhs[i] = x.clone();
            let clamped = math::clamp(x.clone(), rmin.clone(), rmax.clone())?;
            for (j, l) in lhs.iter_mut().enumerate() {
                if j != i {
                    *l = simplify(&substitute(rname, &clamped, l));
                }
            }
            let inside = Expr::and(op(Op::Ge, x.clone(), rmin)?, op(Op::Le, x, rmax)?);
            let zero = Expr::zero(adjoint.ty());
            *adjoint = math::select(inside, simplify(&substitute(rname, &clamped, adjoint)), zero)?;
        }
        Ok(())
    }

    /// `d_g(lhs)[value_index] += adjoint` (or `=` when `overwrite`), joined
    /// to d_g's last definition when that writes the same points over the
    /// same domain.
    fn write_adjoint(
        &self,
        target: &Func,
        lhs: Vec<Expr>,
        value_index: usize,
        mut adjoint: Expr,
        merged: Option<&ReductionDomain>,
        overwrite: bool,
    ) -> Result<()> {
        let n_updates = target.num_update_definitions();
        let can_merge = if n_updates == 0 {
            lhs.iter().zip(target.args()).all(|(l, a)| equal(l, &a.expr())) && extract_rdom(&adjoint).is_none()
        } else {
            let prev = target.update_args(n_updates - 1)?;
            let rvars = target.rvars(n_updates - 1)?;
            lhs.len() == prev.len()
                && lhs.iter().zip(&prev).all(|(a, b)| equal(a, b))
                && match merged {
                    None => rvars.is_empty(),
                    Some(m) => {
                        let mv = m.vars();
                        rvars.len() == mv.len()
                            && rvars.iter().zip(&mv).all(|(r, m)| {
                                matches!((r.min(), r.extent()), (Ok(a), Ok(b)) if equal(&a, &m.min) && equal(&b, &m.extent))
                            })
                    }
                }
        };
        let outputs = target.outputs()?;
        if !can_merge {
            let value = if overwrite {
                adjoint
            } else {
                op(Op::Add, call_element(target, lhs.clone(), value_index)?, adjoint)?
            };
            let values = if outputs == 1 {
                vec![value]
            } else {
                let types = target.output_types()?;
                (0..outputs)
                    .map(|i| if i == value_index { value.clone() } else { math::undef(types[i]) })
                    .collect()
            };
            return target.define(lhs, values);
        }
        // Join the last definition, using its RVars.
        if n_updates > 0 {
            if let (Some(m), Some(d)) = (merged, target.function.updates()[n_updates - 1].domain.clone()) {
                let renames: HashMap<String, Expr> = m
                    .vars()
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| d.rvar(i).map(|r| (v.name.clone(), r.expr())))
                    .collect();
                adjoint = substitute_map(&renames, &adjoint);
            }
        }
        let mut values = if n_updates == 0 {
            target.values()?
        } else {
            target.update_values(n_updates - 1)?
        };
        let old = values[value_index].clone();
        values[value_index] = if overwrite {
            adjoint
        } else if old.as_intrinsic(crate::ir::Intrinsic::Undef).is_some() {
            // Unchanged by that update: its value is the previous one.
            op(Op::Add, call_element(target, lhs.clone(), value_index)?, adjoint)?
        } else {
            simplify(&op(Op::Add, old, adjoint)?)
        };
        let function = &target.function;
        if n_updates == 0 {
            function.set_pure_definition(function.args(), values)
        } else {
            let u = function.updates()[n_updates - 1].clone();
            function.replace_update(n_updates - 1, UpdateDefinition { values, ..u })
        }
    }
}
