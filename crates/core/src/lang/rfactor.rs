//! `Stage::rfactor`: split an associative reduction in two. For update
//! `f(args) = op(f(args), y)` over RVars R and named RVars S ⊂ R with new
//! Vars V (one each), it makes the intermediate Func
//!
//! ```text
//! intm(P, V) = identity
//! intm(args[S := V], V) = op(intm(args[S := V], V), y[S := V])   over R \ S
//! ```
//!
//! (P: f's pure args) and replaces the update by
//! `f(P) = op(f(P), intm(P, S))` over S. Because `op` is associative (the
//! proof is required, `analysis/associativity.rs`) the result is the same,
//! but the loops over V are pure and can run in parallel. Splits of RVars
//! made before are turned into new RVars first (`ro`, `ri`: Halide names
//! them by the split products' names), with a predicate for GuardWithIf
//! tails; splits of pure vars stay in both schedules. Halide's names and
//! errors; the intermediate is `<f>_intm`.

use std::collections::HashMap;

use crate::analysis::associativity::{apply, prove_associativity};
use crate::ir::visit::{mutate_expr_children, Mutator};
use crate::ir::{CallKind, ExprNode};
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::lang::func::{dump_dims, var_name_match, Func};
use crate::lang::function::UpdateDefinition;
use crate::lang::rdom::{ReductionDomain, ReductionVariable};
use crate::lang::stage::{Stage, VarOrRVar};
use crate::schedule::{Dim, Split, StageSchedule, TailStrategy, OUTERMOST};

/// An RVar dim of the stage as it stands after its splits.
struct RVarDim {
    /// The dim's (qualified) name in the schedule.
    qualified: String,
    /// The name its RVar gets: the user's name of the split product.
    short: String,
    min: Expr,
    extent: Expr,
}

/// The stage's RVar dims after its RVar splits, and what undoes the
/// splits: lets (in split order) defining each split RVar from its
/// products (`r$x = r$x.ro * 64 + r$x.ri + min`, names as in the
/// schedule), and the conditions GuardWithIf tails add, over those names.
/// Pure-var splits are left alone; fusing an RVar with a pure var is not
/// supported here.
struct SplitDomain {
    dims: Vec<RVarDim>,
    lets: Vec<(String, Expr)>,
    guards: Vec<Expr>,
}

fn split_domain(st: &StageSchedule, rvars: &[ReductionVariable]) -> Result<SplitDomain> {
    let v = |n: &str| Expr::var_i32(n.to_string());
    let mut bounds: HashMap<String, (Expr, Expr)> = rvars
        .iter()
        .map(|r| (r.name.clone(), (r.min.clone(), r.extent.clone())))
        .collect();
    let mut lets: Vec<(String, Expr)> = vec![];
    let mut guards: Vec<Expr> = vec![];
    for s in &st.splits {
        match s {
            Split::Split {
                old,
                outer,
                inner,
                factor,
                tail,
            } => {
                let Some((m, e)) = bounds.remove(old) else {
                    continue;
                };
                let one = Expr::i32(1);
                let outer_extent = Expr::div(
                    Expr::add(e.clone(), Expr::sub(factor.clone(), one.clone())),
                    factor.clone(),
                );
                bounds.insert(outer.clone(), (Expr::i32(0), outer_extent));
                bounds.insert(inner.clone(), (Expr::i32(0), factor.clone()));
                lets.push((
                    old.clone(),
                    Expr::add(
                        Expr::add(Expr::mul(v(outer), factor.clone()), v(inner)),
                        m.clone(),
                    ),
                ));
                if *tail != TailStrategy::RoundUp {
                    guards.push(Expr::le(v(old), Expr::sub(Expr::add(m, e), one)));
                }
            }
            Split::Rename { old, new } => {
                let Some(b) = bounds.remove(old) else {
                    continue;
                };
                bounds.insert(new.clone(), b);
                lets.push((old.clone(), v(new)));
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => match (bounds.remove(inner), bounds.remove(outer)) {
                (None, None) => {}
                (Some((mi, ei)), Some((mo, eo))) => {
                    bounds.insert(fused.clone(), (Expr::i32(0), Expr::mul(ei.clone(), eo)));
                    let f = v(fused);
                    lets.push((
                        inner.clone(),
                        Expr::add(Expr::modulo(f.clone(), ei.clone()), mi),
                    ));
                    lets.push((outer.clone(), Expr::add(Expr::div(f, ei), mo)));
                }
                _ => {
                    return Err(Error::unimplemented(
                        "rfactor() of an update that fuses an RVar with a pure var",
                    ))
                }
            },
        }
    }
    let dims = st
        .dims
        .iter()
        .filter(|d| d.is_rvar)
        .filter_map(|d| {
            bounds.get(&d.var).map(|(min, extent)| RVarDim {
                qualified: d.var.clone(),
                short: d.var.rsplit('.').next().unwrap_or(&d.var).to_string(),
                min: min.clone(),
                extent: extent.clone(),
            })
        })
        .collect();
    Ok(SplitDomain { dims, lets, guards })
}

/// The splits of `st` that only involve pure vars (not derived from RVars).
fn pure_splits(st: &StageSchedule, rvars: &[String]) -> Vec<Split> {
    let mut rvar_derived: Vec<String> = rvars.to_vec();
    let mut out = vec![];
    for s in &st.splits {
        let (from, to): (Vec<&String>, Vec<&String>) = match s {
            Split::Split {
                old, outer, inner, ..
            } => (vec![old], vec![outer, inner]),
            Split::Fuse {
                inner,
                outer,
                fused,
            } => (vec![inner, outer], vec![fused]),
            Split::Rename { old, new } => (vec![old], vec![new]),
        };
        if from.iter().any(|n| rvar_derived.contains(n)) {
            rvar_derived.extend(to.into_iter().cloned());
        } else {
            out.push(s.clone());
        }
    }
    out
}

impl Stage {
    /// `rfactor([(rvar, var), ...])`: see the module comment. Returns the
    /// intermediate Func.
    pub fn rfactor(&self, pairs: &[(VarOrRVar, String)]) -> Result<Func> {
        let name = self.name();
        if self.index == 0 {
            return Err(Error::user(format!(
                "In schedule for {name}: rfactor() applies to update definitions only.\n"
            )));
        }
        if !self.path.is_empty() {
            return Err(Error::unimplemented("rfactor() of a specialization"));
        }
        let k = self.index - 1;
        let f = Func::from_function(self.function.clone());
        let st = self
            .schedule()
            .ok_or_else(|| Error::internal("rfactor of a missing stage"))?;
        let dump = dump_dims(&st.dims);
        let Some(op) = prove_associativity(&self.function, k) else {
            return Err(Error::user(format!(
                "In schedule for {name}: can't perform rfactor() because we can't prove associativity of the operator\n{dump}"
            )));
        };
        let (u, pure_args) = {
            let c = self.function.read();
            (c.updates[k].clone(), c.args.clone())
        };
        let rvars: Vec<ReductionVariable> = u.domain.as_ref().map(|d| d.vars()).unwrap_or_default();
        let split = split_domain(&st, &rvars)?;

        // Which RVar dims are named, and the Var each becomes.
        let mut named: HashMap<String, String> = HashMap::new();
        for (rv, var) in pairs {
            let Some(d) = split.dims.iter().find(|d| {
                var_name_match(&d.qualified, &rv.name) && !named.contains_key(&d.qualified)
            }) else {
                return Err(Error::user(format!(
                    "In schedule for {name}: can't perform rfactor() on {} since either it is not in the reduction domain, or has already been consumed by another scheduling directive\n{dump}",
                    rv.name
                )));
            };
            if st.dims.iter().any(|x| var_name_match(&x.var, var))
                || pure_args.contains(var)
                || named.values().any(|v| v == var)
            {
                return Err(Error::user(format!(
                    "In schedule for {name}: can't perform rfactor() on {} because the name {var} is already used elsewhere in the Func's schedule.\n{dump}",
                    rv.name
                )));
            }
            named.insert(d.qualified.clone(), var.clone());
        }

        // The two domains: what stays in the intermediate, what stays in f.
        let part = |keep_named: bool| {
            split
                .dims
                .iter()
                .filter(|d| named.contains_key(&d.qualified) == keep_named)
                .map(|d| ReductionVariable {
                    name: d.short.clone(),
                    min: d.min.clone(),
                    extent: d.extent.clone(),
                })
                .collect::<Vec<_>>()
        };
        let intm_domain = ReductionDomain::from_vars(part(false));
        let f_domain = ReductionDomain::from_vars(part(true));

        // In the intermediate: named dims are its new Vars, the others
        // RVars; the definition keeps its names, which lets define from
        // the new loop variables (the final dims first, then the splits
        // undone innermost first, then lets of an earlier rfactor).
        let mut lets: Vec<(String, Expr)> = vec![];
        for d in &split.dims {
            let e = match named.get(&d.qualified) {
                Some(v) => Expr::var_i32(v.clone()),
                None => Expr::rvar(d.short.clone(), intm_domain.clone()),
            };
            if e.as_variable() != Some(d.qualified.as_str()) {
                lets.push((d.qualified.clone(), e));
            }
        }
        lets.extend(split.lets.iter().rev().cloned());
        lets.extend(u.lets.iter().cloned());
        let mut predicate: Option<Expr> = u
            .domain
            .as_ref()
            .filter(|d| d.has_predicate())
            .map(|d| d.predicate());
        for g in &split.guards {
            predicate = Some(match predicate {
                None => g.clone(),
                Some(p) => Expr::and(p, g.clone()),
            });
        }
        intm_domain.set_predicate(predicate.clone());

        // The intermediate Func: f's pure args, then the new Vars in the
        // order of their RVars (innermost first).
        let new_vars: Vec<String> = split
            .dims
            .iter()
            .filter_map(|d| named.get(&d.qualified).cloned())
            .collect();
        let intm = Func::new(Some(&format!("{}_intm", f.name())));
        let mut intm_args: Vec<Expr> = pure_args.iter().map(|a| Expr::var_i32(a.clone())).collect();
        intm_args.extend(new_vars.iter().map(|v| Expr::var_i32(v.clone())));
        intm.define(intm_args.clone(), op.identities.clone())?;

        let mut lhs: Vec<Expr> = u.args.clone();
        lhs.extend(new_vars.iter().map(|v| Expr::var_i32(v.clone())));
        // As Halide: f's own values, its reads of itself now reads of the
        // intermediate (not the prover's simplified form: a Func read only
        // in a branch the simplifier removes is still used, and its
        // schedule still checked; fuzz seed 820).
        let func_name = f.name();
        let mut self_reads = SelfReadsToIntermediate {
            func: &func_name,
            intm: &intm,
            new_vars: &new_vars,
            error: None,
        };
        let intm_values: Vec<Expr> = u.values.iter().map(|v| self_reads.mutate_expr(v)).collect();
        if let Some(e) = self_reads.error {
            return Err(e);
        }
        let has_domain = !intm_domain.vars().is_empty() || predicate.is_some();

        // Schedules: pure-var splits stay; named RVar dims become the new
        // Vars in the intermediate and stay RVars in f.
        let rvar_names: Vec<String> = rvars.iter().map(|r| r.name.clone()).collect();
        let kept_splits = pure_splits(&st, &rvar_names);
        let rename = |d: &Dim, as_var: Option<&String>| Dim {
            var: as_var
                .cloned()
                .unwrap_or_else(|| d.var.rsplit('.').next().unwrap_or(&d.var).to_string()),
            for_type: d.for_type,
            is_rvar: as_var.is_none(),
            partition: d.partition,
            device: d.device,
        };
        let intm_dims: Vec<Dim> = st
            .dims
            .iter()
            .map(|d| {
                if d.is_rvar {
                    rename(d, named.get(&d.var))
                } else {
                    d.clone()
                }
            })
            .collect();
        let mut f_dims: Vec<Dim> = st
            .dims
            .iter()
            .filter(|d| !d.is_rvar || named.contains_key(&d.var))
            .map(|d| {
                if d.is_rvar {
                    rename(d, None)
                } else {
                    d.clone()
                }
            })
            .collect();
        // f's update now runs over every pure var.
        let sources = crate::lang::stage::dim_sources(&st, &pure_args);
        for a in &pure_args {
            let present = st
                .dims
                .iter()
                .any(|d| !d.is_rvar && sources.get(&d.var).is_some_and(|s| s.contains(a)));
            if !present {
                let at = f_dims.len() - 1;
                f_dims.insert(
                    at,
                    Dim::serial(a.clone(), false),
                );
            }
        }
        debug_assert_eq!(f_dims.last().map(|d| d.var.as_str()), Some(OUTERMOST));

        intm.function.push_update(UpdateDefinition {
            args: lhs,
            values: intm_values,
            domain: has_domain.then(|| intm_domain.clone()),
            stage: StageSchedule {
                splits: kept_splits.clone(),
                dims: intm_dims,
                ..StageSchedule::default()
            },
            specializations: vec![],
            lets,
        })?;

        // f(P) = op(f(P), intm(P, S)).
        let p_args: Vec<Expr> = pure_args.iter().map(|a| Expr::var_i32(a.clone())).collect();
        let mut call_args = p_args.clone();
        for d in &split.dims {
            if named.contains_key(&d.qualified) {
                call_args.push(Expr::rvar(d.short.clone(), f_domain.clone()));
            }
        }
        let intm_call = intm.call(call_args)?;
        let f_old = f.call(p_args.clone())?;
        let xs = (0..op.ys.len())
            .map(|i| f_old.element(i))
            .collect::<Result<Vec<_>>>()?;
        let ys = (0..op.ys.len())
            .map(|i| intm_call.element(i))
            .collect::<Result<Vec<_>>>()?;
        let values = apply(&op, &xs, &ys);
        intm.function.freeze();
        self.function.replace_update(
            k,
            UpdateDefinition {
                args: p_args,
                values,
                domain: (!f_domain.vars().is_empty()).then_some(f_domain),
                stage: StageSchedule {
                    splits: kept_splits,
                    dims: f_dims,
                    touched: true,
                    // Halide rewrites the loops in place: a compute_with stays.
                    fuse_level: st.fuse_level.clone(),
                    ..StageSchedule::default()
                },
                specializations: vec![],
                lets: vec![],
            },
        )?;
        Ok(intm)
    }
}

/// Replaces the reads `f(args)[i]` of the Func being factored by reads of
/// its intermediate, `intm(args, new_vars)[i]` (Halide's
/// substitute_self_reference).
struct SelfReadsToIntermediate<'a> {
    func: &'a str,
    intm: &'a Func,
    new_vars: &'a [String],
    error: Option<Error>,
}

impl Mutator for SelfReadsToIntermediate<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        let ExprNode::Call {
            name,
            args,
            kind: CallKind::Halide { value_index, .. },
        } = e.node()
        else {
            return e;
        };
        if name != self.func {
            return e;
        }
        let mut intm_args = args.clone();
        intm_args.extend(self.new_vars.iter().map(|v| Expr::var_i32(v.clone())));
        match self.intm.call(intm_args).and_then(|r| r.element(*value_index)) {
            Ok(read) => read,
            Err(err) => {
                self.error.get_or_insert(err);
                e
            }
        }
    }
}
