//! `Stage`: one definition of a Func (today only the pure one) or one of
//! its specializations, and the directives that shape its loop nest (split,
//! fuse, reorder, tile, loop types) plus `specialize` / `specialize_fail`.
//! `Func`'s loop directives act on the Stage of its pure definition; the
//! Stage that `specialize` returns applies them to that specialization's
//! own copy of the schedule.
//!
//! Schedule data written here (read by lowering): the `StageSchedule` of the
//! definition or specialization (see `func.rs` for the naming of dims and
//! splits) and the `Specialization` lists of `Function`.

use crate::analysis::simplify::simplify;
use crate::error::{Error, Result};
use crate::ir::equality::equal;
use crate::ir::{Expr, ExprNode, ForType};
use crate::lang::func::{dump_dims, set_dim_type, split_stage, var_name_match};
use crate::lang::function::{Function, FunctionContents, Specialization};
use crate::lang::print::expr_to_string;
use crate::lang::var::Var;
use crate::schedule::{Split, StageSchedule, TailStrategy, OUTERMOST};

#[derive(Clone, Debug)]
pub struct Stage {
    pub function: Function,
    /// Where the schedule lives: indices into nested specialization lists,
    /// outermost first; empty for the definition itself.
    pub path: Vec<usize>,
}

/// The schedule and specialization list at `path` (the definition's own
/// when `path` is empty).
fn definition_at<'a>(
    c: &'a mut FunctionContents,
    path: &[usize],
) -> Option<(&'a mut StageSchedule, &'a mut Vec<Specialization>)> {
    let mut stage = &mut c.stage;
    let mut specs = &mut c.specializations;
    for &i in path {
        let s = specs.get_mut(i)?;
        stage = &mut s.stage;
        specs = &mut s.specializations;
    }
    Some((stage, specs))
}

/// The first Var (not a parameter) in a specialization condition, which
/// Halide forbids: conditions are evaluated once, outside every loop.
fn free_variable(e: &Expr) -> Option<String> {
    let mut found = None;
    crate::ir::visit::for_each_expr(e, &mut |x| {
        if let ExprNode::Variable { name, param: None } = x.node() {
            found.get_or_insert_with(|| name.clone());
        }
    });
    found
}

impl Stage {
    /// The pure definition of `function`.
    pub fn pure(function: &Function) -> Stage {
        Stage {
            function: function.clone(),
            path: vec![],
        }
    }

    /// Halide's stage name: the Func's name for its pure definition.
    pub fn name(&self) -> String {
        self.function.name()
    }

    /// Apply `f` to a copy of this stage's schedule and store the result,
    /// so a failing directive leaves the schedule untouched.
    fn with_schedule<R>(
        &self,
        directive: &str,
        f: impl FnOnce(&mut StageSchedule, &str) -> Result<R>,
    ) -> Result<R> {
        let name = self.name();
        if !self.function.has_pure_definition() {
            return Err(Error::user(format!(
                "In schedule for {name}: can't apply {directive} to Func \"{name}\" because it has not been defined yet.\n"
            )));
        }
        let mut stage = self
            .schedule()
            .ok_or_else(|| Error::internal("stage refers to a missing specialization"))?;
        let r = f(&mut stage, &name)?;
        let mut c = self.function.write();
        if let Some((st, _)) = definition_at(&mut c, &self.path) {
            *st = stage;
        }
        Ok(r)
    }

    /// This stage's schedule (a copy).
    pub fn schedule(&self) -> Option<StageSchedule> {
        let c = self.function.read();
        let mut stage = &c.stage;
        let mut specs = &c.specializations;
        for &i in &self.path {
            let s = specs.get(i)?;
            stage = &s.stage;
            specs = &s.specializations;
        }
        Some(stage.clone())
    }

    /// `split(old, outer, inner, factor, tail)`.
    pub fn split(
        &self,
        old: &str,
        outer: &str,
        inner: &str,
        factor: Expr,
        tail: TailStrategy,
    ) -> Result<()> {
        self.with_schedule("split", |st, name| {
            split_stage(st, name, old, outer, inner, factor, tail)
        })
    }

    /// `fuse(inner, outer, fused)`.
    pub fn fuse(&self, inner: &str, outer: &str, fused: &str) -> Result<()> {
        self.with_schedule("fuse", |st, name| {
            let dims = &mut st.dims;
            let Some(oi) = dims.iter().position(|d| var_name_match(&d.var, outer)) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find outer fuse dimension: {outer}\n{}",
                    dump_dims(dims)
                )));
            };
            let outer_dim = dims.remove(oi);
            let Some(ii) = dims.iter().position(|d| var_name_match(&d.var, inner)) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find inner fuse dimension: {inner}\n{}",
                    dump_dims(dims)
                )));
            };
            let inner_name = dims[ii].var.clone();
            let fused_name = format!("{inner_name}.{fused}");
            dims[ii].var = fused_name.clone();
            st.splits.push(Split::Fuse {
                inner: inner_name,
                outer: outer_dim.var,
                fused: fused_name,
            });
            Ok(())
        })
    }

    /// `reorder(vars...)`, innermost first.
    pub fn reorder(&self, vars: &[String]) -> Result<()> {
        self.with_schedule("reorder", |st, name| reorder_stage(st, name, vars))
    }

    /// Set the loop type of every dim matching `var`.
    pub fn set_for_type(&self, var: &str, t: ForType) -> Result<()> {
        self.with_schedule(t.name(), |st, name| set_dim_type(st, name, var, t))
    }

    /// Split `var` by `factor` into itself and a fresh inner var, and give
    /// the inner (`inner_gets_type`) or the outer var the loop type `t`
    /// (`vectorize`/`unroll`/`parallel` with a factor).
    pub fn split_and_set_type(
        &self,
        var: &str,
        factor: Expr,
        tail: TailStrategy,
        t: ForType,
        inner_gets_type: bool,
    ) -> Result<()> {
        let directive = match t {
            ForType::Vectorized => "vectorize",
            ForType::Unrolled => "unroll",
            ForType::Parallel => "parallel",
            ForType::Serial => "serial",
        };
        self.with_schedule(directive, |st, name| {
            let tmp = Var::fresh();
            split_stage(st, name, var, var, tmp.name(), factor, tail)?;
            let typed = if inner_gets_type { tmp.name() } else { var };
            set_dim_type(st, name, typed, t)
        })
    }

    /// `tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail)`.
    #[allow(clippy::too_many_arguments)]
    pub fn tile(
        &self,
        x: &str,
        y: &str,
        xo: &str,
        yo: &str,
        xi: &str,
        yi: &str,
        xfactor: Expr,
        yfactor: Expr,
        tail: TailStrategy,
    ) -> Result<()> {
        self.with_schedule("split", |st, name| {
            split_stage(st, name, x, xo, xi, xfactor, tail)?;
            split_stage(st, name, y, yo, yi, yfactor, tail)?;
            reorder_stage(
                st,
                name,
                &[
                    xi.to_string(),
                    yi.to_string(),
                    xo.to_string(),
                    yo.to_string(),
                ],
            )
        })
    }

    /// `specialize(condition)`: the Stage used when `condition` holds (an
    /// existing one if a structurally equal condition was given before).
    /// The new specialization starts from a copy of this stage's schedule.
    pub fn specialize(&self, condition: Expr) -> Result<Stage> {
        let name = self.name();
        if !condition.ty().is_bool() || !condition.ty().is_scalar() {
            return Err(Error::user(
                "Argument passed to specialize must be of type bool\n",
            ));
        }
        if let Some(v) = free_variable(&condition) {
            return Err(Error::user(format!(
                "Specialization condition {} for {name} depends on Var or RVar {v}. Specialization conditions may not depend on any Vars or RVars.\n",
                expr_to_string(&condition)
            )));
        }
        self.undefined_check("specialize")?;
        let mut c = self.function.write();
        let (st, specs) = definition_at(&mut c, &self.path)
            .ok_or_else(|| Error::internal("stage refers to a missing specialization"))?;
        let mut path = self.path.clone();
        if let Some(i) = specs.iter().position(|s| equal(&s.condition, &condition)) {
            path.push(i);
            return Ok(Stage {
                function: self.function.clone(),
                path,
            });
        }
        if specs.last().is_some_and(|s| s.failure_message.is_some()) {
            return Err(Error::user(
                "Cannot add new specializations after specialize_fail().",
            ));
        }
        specs.push(Specialization {
            condition,
            stage: st.clone(),
            specializations: vec![],
            failure_message: None,
        });
        path.push(specs.len() - 1);
        Ok(Stage {
            function: self.function.clone(),
            path,
        })
    }

    /// `specialize_fail(message)`: when no earlier specialization applies,
    /// the pipeline fails at run time with `message`.
    pub fn specialize_fail(&self, message: &str) -> Result<()> {
        if message.is_empty() {
            return Err(Error::user(
                "Argument passed to specialize_fail() must not be empty.\n",
            ));
        }
        self.undefined_check("specialize_fail")?;
        let mut c = self.function.write();
        let (st, specs) = definition_at(&mut c, &self.path)
            .ok_or_else(|| Error::internal("stage refers to a missing specialization"))?;
        if specs.last().is_some_and(|s| s.failure_message.is_some()) {
            return Err(Error::user(
                "Only one specialize_fail() may be defined per Stage.",
            ));
        }
        specs.push(Specialization {
            condition: Expr::bool_const(true),
            stage: st.clone(),
            specializations: vec![],
            failure_message: Some(message.to_string()),
        });
        Ok(())
    }

    fn undefined_check(&self, what: &str) -> Result<()> {
        if self.function.has_pure_definition() {
            return Ok(());
        }
        let name = self.name();
        Err(Error::user(format!(
            "In schedule for {name}: can't apply {what} to Func \"{name}\" because it has not been defined yet.\n"
        )))
    }
}

/// Which specializations of a definition can run, after Halide's pruning
/// of constant conditions: false ones never run, nothing after a true one
/// runs, and a final true one (not a `specialize_fail`) replaces the
/// default schedule. Returns the live specializations in order and the
/// specialization standing in for the default, if any. Conditions come
/// back simplified.
pub fn live_specializations(
    specs: &[Specialization],
) -> (Vec<Specialization>, Option<Specialization>) {
    let mut live: Vec<Specialization> = vec![];
    for s in specs {
        let c = simplify(&s.condition);
        if c.is_false() {
            continue;
        }
        let always = c.is_true();
        live.push(Specialization {
            condition: c,
            ..s.clone()
        });
        if always {
            break;
        }
    }
    let replaces_default = live
        .last()
        .is_some_and(|s| s.condition.is_true() && s.failure_message.is_none());
    let default = if replaces_default { live.pop() } else { None };
    (live, default)
}

/// Whether any specialization survives the pruning of constant conditions
/// (a final always-true one counts only through its own specializations).
pub fn has_live_specializations(specs: &[Specialization]) -> bool {
    let (live, default) = live_specializations(specs);
    !live.is_empty() || default.is_some_and(|d| has_live_specializations(&d.specializations))
}

// ---- schedule edits (split_stage, set_dim_type and dump_dims are func.rs's) ---------

fn reorder_stage(st: &mut StageSchedule, name: &str, vars: &[String]) -> Result<()> {
    let dims_old = st.dims.clone();
    let mut idx = Vec::with_capacity(vars.len());
    for (i, v) in vars.iter().enumerate() {
        let found = dims_old.iter().rposition(|d| var_name_match(&d.var, v));
        let Some(j) = found else {
            return Err(Error::user(format!(
                "In schedule for {name}, could not find var {v} to reorder in the argument list.\n{}",
                dump_dims(&dims_old)
            )));
        };
        if idx[..i].contains(&j) {
            return Err(Error::user(format!(
                "In schedule for {name}, call to reorder references {v} twice.\n"
            )));
        }
        idx.push(j);
    }
    let mut sorted = idx.clone();
    sorted.sort_unstable();
    let mut dims = dims_old.clone();
    for (i, &s) in sorted.iter().enumerate() {
        dims[s] = dims_old[idx[i]].clone();
    }
    if dims.last().map(|d| d.var.as_str()) != Some(OUTERMOST) {
        return Err(Error::user(
            "Var::outermost() may not be reordered inside any other var.\n",
        ));
    }
    st.dims = dims;
    Ok(())
}
