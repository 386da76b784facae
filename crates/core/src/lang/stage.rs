//! `Stage`: one definition of a Func (the pure one, index 0, or update
//! definition `i - 1` at index `i`) or one of its specializations, and the
//! directives that shape its loop nest (split, fuse, rename, reorder, tile,
//! loop types) plus `specialize` / `specialize_fail`, `atomic`,
//! `allow_race_conditions` and `unscheduled`. `Func`'s loop directives act
//! on the Stage of its pure definition; `Func.update(i)` returns an
//! update's Stage.
//!
//! Update stages follow Halide's legality rules, checked by the directive
//! itself: RVars stay RVars (split, fuse and rename products), split tails
//! must not compute points outside the domain (RVars: GuardWithIf,
//! Predicate or Auto; never ShiftInwards in an update), RVars may only be
//! made parallel or vectorized when no two iterations can touch the same
//! point (`analysis/parallel_rvar.rs`) or the stage is `atomic` and its
//! operator associative and commutative (`analysis/associativity.rs`), and
//! two impure RVars may only swap order under the same proof.
//!
//! Schedule data written here (read by lowering): the `StageSchedule` of the
//! definition or specialization (see `func.rs` for the naming of dims and
//! splits) and the `Specialization` lists of `Function`.

use std::collections::HashMap;

use crate::analysis::simplify::simplify;
use crate::error::{Error, Result};
use crate::ir::equality::equal;
use crate::ir::{Expr, ForType};
use crate::lang::func::{dump_dims, set_dim_type, split_stage, var_name_match};
use crate::lang::function::{Function, FunctionContents, Specialization};
use crate::lang::print::expr_to_string;
use crate::lang::var::Var;
use crate::lang::split_tail::{check_blend_races, SplitContext};
use crate::schedule::{Partition, Split, StageSchedule, TailStrategy, OUTERMOST};

#[derive(Clone, Debug)]
pub struct Stage {
    pub function: Function,
    /// Where the schedule lives: indices into nested specialization lists,
    /// outermost first; empty for the definition itself.
    pub path: Vec<usize>,
    /// Which definition: 0 for the pure one, `i + 1` for update `i`.
    pub index: usize,
}

/// A loop dimension named in a directive: a Var or an RVar (Halide's
/// `VarOrRVar`). Update stages check that RVars stay RVars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarOrRVar {
    pub name: String,
    pub is_rvar: bool,
}

/// A plain name is a Var (the pure definition's directives take names).
impl From<&str> for VarOrRVar {
    fn from(name: &str) -> VarOrRVar {
        VarOrRVar::var(name)
    }
}
impl From<&String> for VarOrRVar {
    fn from(name: &String) -> VarOrRVar {
        VarOrRVar::var(name.as_str())
    }
}
impl From<&VarOrRVar> for VarOrRVar {
    fn from(v: &VarOrRVar) -> VarOrRVar {
        v.clone()
    }
}

impl VarOrRVar {
    pub fn var(name: impl Into<String>) -> VarOrRVar {
        VarOrRVar {
            name: name.into(),
            is_rvar: false,
        }
    }
    pub fn rvar(name: impl Into<String>) -> VarOrRVar {
        VarOrRVar {
            name: name.into(),
            is_rvar: true,
        }
    }
    fn kind(&self) -> &'static str {
        if self.is_rvar {
            "RVar"
        } else {
            "Var"
        }
    }
}

/// The schedule and specialization list of definition `index` at `path`.
pub(crate) fn definition_at<'a>(
    c: &'a mut FunctionContents,
    index: usize,
    path: &[usize],
) -> Option<(&'a mut StageSchedule, &'a mut Vec<Specialization>)> {
    let (mut stage, mut specs) = if index == 0 {
        (&mut c.stage, &mut c.specializations)
    } else {
        let u = c.updates.get_mut(index - 1)?;
        (&mut u.stage, &mut u.specializations)
    };
    for &i in path {
        let s = specs.get_mut(i)?;
        stage = &mut s.stage;
        specs = &mut s.specializations;
    }
    Some((stage, specs))
}

/// The dims of the definition's default loop nest that each current dim
/// is made of (through splits, fuses and renames).
pub fn dim_sources(st: &StageSchedule, initial: &[String]) -> HashMap<String, Vec<String>> {
    let mut parts: HashMap<String, Vec<String>> = initial
        .iter()
        .map(|a| (a.clone(), vec![a.clone()]))
        .collect();
    for s in &st.splits {
        match s {
            Split::Split {
                old, outer, inner, ..
            } => {
                let p = parts.remove(old).unwrap_or_default();
                parts.insert(outer.clone(), p.clone());
                parts.insert(inner.clone(), p);
            }
            Split::Fuse {
                inner,
                outer,
                fused,
            } => {
                let mut p = parts.remove(inner).unwrap_or_default();
                p.extend(parts.remove(outer).unwrap_or_default());
                parts.insert(fused.clone(), p);
            }
            Split::Rename { old, new } => {
                let p = parts.remove(old).unwrap_or_default();
                parts.insert(new.clone(), p);
            }
        }
    }
    parts
}

impl Stage {
    /// The pure definition of `function`.
    pub fn pure(function: &Function) -> Stage {
        Stage::of_definition(function, 0)
    }

    /// Definition `index` of `function` (0 pure, `i + 1` update `i`).
    pub fn of_definition(function: &Function, index: usize) -> Stage {
        Stage {
            function: function.clone(),
            path: vec![],
            index,
        }
    }

    pub(crate) fn is_update(&self) -> bool {
        self.index > 0
    }

    /// Halide's stage name: `f` for the pure definition, `f.update(i)`.
    pub fn name(&self) -> String {
        let f = self.function.name();
        if self.is_update() {
            format!("{f}.update({})", self.index - 1)
        } else {
            f
        }
    }

    /// Apply `f` to a copy of this stage's schedule and store the result,
    /// so a failing directive leaves the schedule untouched.
    pub(crate) fn with_schedule<R>(
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
        stage.touched = true;
        self.set_schedule(stage);
        Ok(r)
    }

    /// Replace this stage's schedule.
    fn set_schedule(&self, stage: StageSchedule) {
        let mut c = self.function.write();
        if let Some((st, _)) = definition_at(&mut c, self.index, &self.path) {
            *st = stage;
        }
    }

    /// This stage's schedule (a copy).
    pub fn schedule(&self) -> Option<StageSchedule> {
        let c = self.function.read();
        let (mut stage, mut specs) = if self.index == 0 {
            (&c.stage, &c.specializations)
        } else {
            let u = c.updates.get(self.index - 1)?;
            (&u.stage, &u.specializations)
        };
        for &i in &self.path {
            let s = specs.get(i)?;
            stage = &s.stage;
            specs = &s.specializations;
        }
        Some(stage.clone())
    }

    /// The names of the dims of the definition's default loop nest.
    fn initial_dims(&self) -> Vec<String> {
        let c = self.function.read();
        if self.index == 0 {
            c.args.clone()
        } else {
            let u = &c.updates[self.index - 1];
            let mut dims: Vec<String> = u
                .domain
                .iter()
                .flat_map(|d| d.vars().into_iter().map(|v| v.name))
                .collect();
            dims.extend(u.pure_vars(&c.args));
            dims
        }
    }

    /// Whether no two iterations of the loop over `dim` of this (update)
    /// stage can touch the same point of the Func: true for dims made of
    /// pure vars and of RVars the analysis proves safe.
    pub(crate) fn dim_is_pure(&self, st: &StageSchedule, dim: &str) -> bool {
        if !self.is_update() {
            return true;
        }
        let sources = dim_sources(st, &self.initial_dims());
        let Some(src) = sources.get(dim) else {
            return true;
        };
        let c = self.function.read();
        let u = &c.updates[self.index - 1];
        let rvars: Vec<String> = u
            .domain
            .iter()
            .flat_map(|d| d.vars().into_iter().map(|v| v.name))
            .collect();
        src.iter().all(|s| {
            !rvars.contains(s)
                || crate::analysis::parallel_rvar::can_parallelize_rvar(&self.function, u, s)
        })
    }

    /// May the update's iterations run in any order? Yes if its operator is
    /// proven associative and commutative, or if it only scatters values
    /// that do not depend on its RVars or on the Func (Halide exempts those).
    fn is_commutative_reduction(&self) -> bool {
        use crate::analysis::associativity::{is_const_assignment, prove_associativity};
        let update = self.index - 1;
        is_const_assignment(&self.function, update)
            || prove_associativity(&self.function, update).is_some_and(|op| op.commutative)
    }

    /// The dim matching `v`, with its kind.
    pub(crate) fn find_dim(st: &StageSchedule, v: &str) -> Option<usize> {
        st.dims.iter().position(|d| var_name_match(&d.var, v))
    }

    /// `split(old, outer, inner, factor, tail)`.
    pub fn split(
        &self,
        old: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        inner: impl Into<VarOrRVar>,
        factor: Expr,
        tail: TailStrategy,
    ) -> Result<()> {
        let (old, outer, inner) = (&old.into(), &outer.into(), &inner.into());
        let update = self.is_update();
        self.with_schedule("split", |st, name| {
            let exact = if update {
                check_split_kinds(st, old, outer, inner)?
            } else {
                false
            };
            let ctx = SplitContext { update, exact };
            split_stage(st, name, &old.name, &outer.name, &inner.name, factor, tail, ctx)
        })
    }

    /// `fuse(inner, outer, fused)`.
    pub fn fuse(
        &self,
        inner: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        fused: impl Into<VarOrRVar>,
    ) -> Result<()> {
        let (inner, outer, fused) = (&inner.into(), &outer.into(), &fused.into());
        let update = self.is_update();
        let fused_rvar = fused.is_rvar;
        // One transaction: a fuse that fails leaves the schedule as it
        // was, without the reorder that made its loops adjacent.
        let before = self.schedule();
        self.make_adjacent(&inner.name, &outer.name)?;
        let fused_result = self.with_schedule("fuse", |st, name| {
            let (inner, outer, fused) = (&inner.name, &outer.name, &fused.name);
            let dims = &mut st.dims;
            let Some(oi) = dims.iter().position(|d| var_name_match(&d.var, outer)) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find outer fuse dimension: {outer}\n{}",
                    dump_dims(dims)
                )));
            };
            // Halide's order: the outer dim is removed before the inner
            // one is looked up (its message lists the dims without it).
            let outer_dim = dims.remove(oi);
            let Some(ii) = dims.iter().position(|d| var_name_match(&d.var, inner)) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find inner fuse dimension: {inner}\n{}",
                    dump_dims(dims)
                )));
            };
            let any_rvar = outer_dim.is_rvar || dims[ii].is_rvar;
            if update && any_rvar && !fused_rvar {
                let rv = if outer_dim.is_rvar {
                    &outer_dim
                } else {
                    &dims[ii]
                };
                return Err(Error::user(format!(
                    "Can't fuse Var {fused} from RVar {}\n",
                    rv.var
                )));
            }
            let inner_name = dims[ii].var.clone();
            let fused_name = format!("{inner_name}.{fused}");
            dims[ii].var = fused_name.clone();
            dims[ii].is_rvar = any_rvar;
            let for_type = dims[ii].for_type;
            st.splits.push(Split::Fuse {
                inner: inner_name,
                outer: outer_dim.var,
                fused: fused_name,
            });
            // The fused loop keeps the inner one's type (as Halide): a
            // parallel or vectorized loop now also runs over the other's
            // points, which needs the same proof as marking it so.
            if update && matches!(for_type, ForType::Parallel | ForType::Vectorized) {
                self.check_race(st, fused)?;
            }
            Ok(())
        });
        if fused_result.is_err() {
            if let Some(before) = before {
                self.set_schedule(before);
            }
        }
        fused_result
    }

    /// As Halide's `fuse`: two loops are fused where they are adjacent, so
    /// `outer` is first moved to just outside `inner` by a `reorder`, which
    /// refuses a move that changes the order of an update's reduction
    /// (fuzz seed 37223: fusing the inner piece of a split RVar as the outer
    /// loop reversed which iteration wrote last). Names not found are left
    /// to `fuse` to report.
    fn make_adjacent(&self, inner: &str, outer: &str) -> Result<()> {
        let Some(st) = self.schedule() else { return Ok(()) };
        let dims: Vec<&str> =
            st.dims.iter().map(|d| d.var.as_str()).filter(|v| *v != crate::schedule::OUTERMOST).collect();
        let (Some(ii), Some(oi)) = (
            dims.iter().position(|d| var_name_match(d, inner)),
            dims.iter().position(|d| var_name_match(d, outer)),
        ) else {
            return Ok(());
        };
        if oi == ii + 1 || oi == ii {
            return Ok(());
        }
        let mut order = vec![];
        for (k, d) in dims.iter().enumerate() {
            if k == oi {
                continue;
            }
            order.push(VarOrRVar { name: d.to_string(), is_rvar: st.dims[k].is_rvar });
            if k == ii {
                order.push(VarOrRVar { name: dims[oi].to_string(), is_rvar: st.dims[oi].is_rvar });
            }
        }
        self.reorder(&order)
    }

    /// `rename(old, new)`.
    pub fn rename(&self, old: impl Into<VarOrRVar>, new: impl Into<VarOrRVar>) -> Result<()> {
        let (old, new) = (&old.into(), &new.into());
        self.with_schedule("rename", |st, name| {
            let Some(i) = Stage::find_dim(st, &old.name) else {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find rename dimension: {}\n{}",
                    old.name,
                    dump_dims(&st.dims)
                )));
            };
            let d = &st.dims[i];
            if d.is_rvar != new.is_rvar {
                let from = if d.is_rvar { "RVar" } else { "Var" };
                return Err(Error::user(format!(
                    "In schedule for {name}, can't rename {from} {} to {} {}\n",
                    old.name,
                    new.kind(),
                    new.name
                )));
            }
            if st.dims.iter().any(|d| var_name_match(&d.var, &new.name)) {
                return Err(Error::user(format!(
                    "In schedule for {name}, can't rename {} to {} because {} is already used in this Func's schedule elsewhere.\n{}",
                    old.name,
                    new.name,
                    new.name,
                    dump_dims(&st.dims)
                )));
            }
            let old_name = st.dims[i].var.clone();
            let new_name = format!("{old_name}.{}", new.name);
            st.dims[i].var = new_name.clone();
            // As Halide does: rename the output of the split, fuse or rename
            // that made the dim, so the schedule has no extra step.
            let mut rewritten = false;
            for split in st.splits.iter_mut().rev() {
                let output = match split {
                    Split::Fuse { inner, outer, fused } => {
                        if *inner == old_name || *outer == old_name {
                            return Err(Error::user(format!(
                                "In schedule for {name}, can't rename variable {old_name} because it has already been fused into {fused}\n{}",
                                dump_dims(&st.dims)
                            )));
                        }
                        Some(fused)
                    }
                    Split::Split { inner, outer, .. } => {
                        [inner, outer].into_iter().find(|n| **n == old_name)
                    }
                    Split::Rename { new: made, .. } => Some(made),
                };
                if let Some(output) = output.filter(|n| **n == old_name) {
                    *output = new_name.clone();
                    rewritten = true;
                    break;
                }
            }
            if !rewritten {
                st.splits.push(Split::Rename {
                    old: old_name,
                    new: new_name,
                });
            }
            Ok(())
        })
    }

    /// `reorder(vars...)`, innermost first. In an update, two impure RVars
    /// may only change order if the update is associative and commutative.
    pub fn reorder<'a, T>(&self, vars: &'a [T]) -> Result<()>
    where
        &'a T: Into<VarOrRVar>,
    {
        let names: Vec<String> = vars.iter().map(|v| v.into().name).collect();
        let before = self.schedule();
        self.with_schedule("reorder", |st, name| reorder_stage(st, name, &names))?;
        if let (true, Some(before)) = (self.is_update(), before) {
            if let Err(e) = self.check_rvar_order(&before) {
                self.restore(before);
                return Err(e);
            }
        }
        Ok(())
    }

    pub(crate) fn restore(&self, st: StageSchedule) {
        let mut c = self.function.write();
        if let Some((s, _)) = definition_at(&mut c, self.index, &self.path) {
            *s = st;
        }
    }

    /// After a reorder of an update: no pair of impure RVars swapped
    /// order, unless the update is associative and commutative.
    fn check_rvar_order(&self, before: &StageSchedule) -> Result<()> {
        let Some(after) = self.schedule() else {
            return Ok(());
        };
        let st = after.clone();
        if st.allow_race_conditions {
            return Ok(());
        }
        let pos = |dims: &[crate::schedule::Dim], v: &str| dims.iter().position(|d| d.var == v);
        let impure: Vec<&crate::schedule::Dim> = after
            .dims
            .iter()
            .filter(|d| d.is_rvar && !self.dim_is_pure(&st, &d.var))
            .collect();
        for (i, a) in impure.iter().enumerate() {
            for b in &impure[i + 1..] {
                let (Some(a0), Some(b0)) = (pos(&before.dims, &a.var), pos(&before.dims, &b.var))
                else {
                    continue;
                };
                if a0 > b0 && !self.is_commutative_reduction() {
                    return Err(Error::user(format!(
                        "In schedule for {}, can't reorder RVars {} and {} because it may change the meaning of the algorithm.\n",
                        self.name(),
                        short_name(&a.var),
                        short_name(&b.var)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Set the loop type of every dim matching `var`. Making an RVar of an
    /// update parallel or vectorized needs proof that it is race-free.
    pub fn set_for_type(&self, var: impl Into<VarOrRVar>, t: ForType) -> Result<()> {
        let var = &var.into();
        let parallel = matches!(t, ForType::Parallel | ForType::Vectorized);
        let update = self.is_update();
        let check = |me: &Stage, st: &StageSchedule| -> Result<()> {
            if !update || !parallel {
                return Ok(());
            }
            me.check_race(st, &var.name)
        };
        let st = self.schedule();
        if let Some(st) = &st {
            if Stage::find_dim(st, &var.name).is_some() {
                check(self, st)?;
            }
        }
        self.with_schedule(t.name(), |st, name| {
            set_dim_type(st, name, &var.name, t)?;
            if t == ForType::Parallel {
                check_blend_races(st)?;
            }
            Ok(())
        })
    }

    /// Halide's race check for marking `var` parallel or vectorized.
    pub(crate) fn check_race(&self, st: &StageSchedule, var: &str) -> Result<()> {
        if st.allow_race_conditions {
            return Ok(());
        }
        // As in Halide, only an impure RVar needs a proof: a pure one
        // writes a different point in every iteration.
        let impure = st
            .dims
            .iter()
            .any(|d| var_name_match(&d.var, var) && d.is_rvar && !self.dim_is_pure(st, &d.var));
        if !impure {
            return Ok(());
        }
        if st.atomic {
            if st.override_atomic_check || self.is_commutative_reduction() {
                return Ok(());
            }
            return Err(Error::user(format!(
                "Failed to call atomic() on {} since it can't prove associativity or commutativity of the operator.\n",
                self.name()
            )));
        }
        Err(Error::user(format!(
            "In schedule for {}, marking var {var} as parallel or vectorized may introduce a race condition resulting in incorrect output. It is possible to parallelize this by using the atomic() method if the operation is associative, or set override_associativity_test to true in the atomic method if you are certain that the operation is associative. It is also possible to override this error using the allow_race_conditions() method. Use allow_race_conditions() with great caution, and only when you are willing to accept non-deterministic output, or you can prove that any race conditions in this code do not change the output, or you can prove that there are actually no race conditions, and that Halide is not smart enough to detect it.\n",
            self.name()
        )))
    }

    /// Split `var` by `factor` into itself and a fresh inner var, and give
    /// the inner (`inner_gets_type`) or the outer var the loop type `t`
    /// (`vectorize`/`unroll`/`parallel` with a factor).
    pub fn split_and_set_type(
        &self,
        var: impl Into<VarOrRVar>,
        factor: Expr,
        tail: TailStrategy,
        t: ForType,
        inner_gets_type: bool,
    ) -> Result<()> {
        let var = &var.into();
        let before = self.schedule();
        let is_rvar = before
            .as_ref()
            .and_then(|st| Stage::find_dim(st, &var.name).map(|i| st.dims[i].is_rvar))
            .unwrap_or(var.is_rvar);
        let tmp = VarOrRVar {
            name: Var::fresh().name().to_string(),
            is_rvar,
        };
        let same = VarOrRVar {
            name: var.name.clone(),
            is_rvar,
        };
        self.split(&same, &same, &tmp, factor, tail)?;
        let typed = if inner_gets_type { &tmp } else { &same };
        if let Err(e) = self.set_for_type(typed, t) {
            if let Some(b) = before {
                self.restore(b);
            }
            return Err(e);
        }
        Ok(())
    }

    /// `tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail)`.
    #[allow(clippy::too_many_arguments)]
    pub fn tile(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        yo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        xfactor: Expr,
        yfactor: Expr,
        tail: TailStrategy,
    ) -> Result<()> {
        let (x, y, xo, yo, xi, yi) = (
            &x.into(),
            &y.into(),
            &xo.into(),
            &yo.into(),
            &xi.into(),
            &yi.into(),
        );
        self.tile_n(
            &[x.clone(), y.clone()],
            &[xo.clone(), yo.clone()],
            &[xi.clone(), yi.clone()],
            vec![xfactor, yfactor],
            tail,
        )
    }

    /// `tile(previous, outers, inners, factors, tail)` over any number of
    /// dimensions: each `previous[i]` split into `outers[i]` and
    /// `inners[i]`, then the inners innermost, in order, and the outers
    /// around them. All or nothing: a failure leaves the schedule as it was.
    pub fn tile_n(
        &self,
        previous: &[VarOrRVar],
        outers: &[VarOrRVar],
        inners: &[VarOrRVar],
        factors: Vec<Expr>,
        tail: TailStrategy,
    ) -> Result<()> {
        let n = previous.len();
        if outers.len() != n || inners.len() != n || factors.len() != n {
            return Err(Error::user("Vectors passed to Stage::tile must all be the same length.\n"));
        }
        let before = self.schedule();
        let r = (|| {
            for ((v, (o, i)), f) in previous.iter().zip(outers.iter().zip(inners)).zip(factors) {
                self.split(v, o, i, f, tail)?;
            }
            let order: Vec<VarOrRVar> = inners.iter().chain(outers).cloned().collect();
            self.reorder(&order)
        })();
        if r.is_err() {
            if let Some(b) = before {
                self.restore(b);
            }
        }
        r
    }

    /// `atomic(override_associativity_test)`: parallel or vectorized RVars
    /// are then allowed if the update's operator is associative and
    /// commutative (checked when such a loop is marked, or not at all
    /// with the override). Never fails itself.
    pub fn atomic(&self, override_check: bool) -> Result<()> {
        self.with_flags(|st| {
            st.atomic = true;
            st.override_atomic_check = override_check;
        })
    }

    /// `allow_race_conditions()`: no race checks for this stage.
    pub fn allow_race_conditions(&self) -> Result<()> {
        self.with_flags(|st| st.allow_race_conditions = true)
    }

    /// `prefetch(name, at, from, offset, strategy)` (see
    /// `schedule::PrefetchDirective`; placed by `lower/inject_prefetch.rs`).
    /// The offset is an integer (made Int(32)).
    pub fn prefetch(
        &self,
        name: &str,
        at: &VarOrRVar,
        from: &VarOrRVar,
        offset: Expr,
        strategy: crate::schedule::PrefetchBoundStrategy,
    ) -> Result<()> {
        if !offset.ty().is_int_or_uint() || !offset.ty().is_scalar() {
            return Err(Error::user(format!(
                "The offset of a prefetch of {name} must be an integer, not {}.\n",
                offset.ty()
            )));
        }
        let offset = crate::lang::operators::cast(crate::ir::Type::i32(), offset)?;
        let directive = crate::schedule::PrefetchDirective {
            name: name.to_string(),
            at: at.name.clone(),
            from: from.name.clone(),
            offset,
            strategy,
        };
        self.with_flags(|st| {
            st.touched = true;
            st.prefetches.push(directive);
        })
    }

    fn with_flags(&self, f: impl FnOnce(&mut StageSchedule)) -> Result<()> {
        let mut c = self.function.write();
        if let Some((st, _)) = definition_at(&mut c, self.index, &self.path) {
            f(st);
        }
        Ok(())
    }

    /// `partition(var, policy)`: the loop partition policy of every dim
    /// matching `var`.
    pub fn partition(&self, var: impl Into<VarOrRVar>, policy: Partition) -> Result<()> {
        let var = var.into();
        self.with_schedule("partition", |st, name| {
            let mut found = false;
            for d in st.dims.iter_mut().filter(|d| var_name_match(&d.var, &var.name)) {
                d.partition = policy;
                found = true;
            }
            if found {
                Ok(())
            } else {
                Err(Error::user(format!(
                    "In schedule for {name}, could not find var {} to set loop partition policy.\n{}",
                    var.name,
                    dump_dims(&st.dims)
                )))
            }
        })
    }

    /// `never_partition_all()` / `always_partition_all()`: one policy for
    /// every loop of the stage (the implicit outermost one included).
    pub fn partition_all(&self, policy: Partition) -> Result<()> {
        self.with_schedule("partition", |st, _| {
            st.dims.iter_mut().for_each(|d| d.partition = policy);
            Ok(())
        })
    }

    /// `unscheduled()`: declares the stage deliberately left with its
    /// default schedule; an error if it was scheduled.
    pub fn unscheduled(&self) -> Result<()> {
        if self.schedule().is_some_and(|st| st.touched) {
            return Err(Error::user(
                "Stage::unscheduled called on an update definition with a schedule\n",
            ));
        }
        // Deliberately unscheduled: no "not scheduled" warning.
        self.with_flags(|st| st.touched = true)
    }

    /// `dump_argument_list()`: the loop dims, innermost first.
    pub fn dump_argument_list(&self) -> String {
        self.schedule()
            .map(|st| dump_dims(&st.dims))
            .unwrap_or_default()
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
        if let Some(v) = crate::ir::visit::first_free_variable(&condition) {
            return Err(Error::user(format!(
                "Specialization condition {} for {name} depends on Var or RVar {v}. Specialization conditions may not depend on any Vars or RVars.\n",
                expr_to_string(&condition)
            )));
        }
        self.undefined_check("specialize")?;
        let mut c = self.function.write();
        let (st, specs) = definition_at(&mut c, self.index, &self.path)
            .ok_or_else(|| Error::internal("stage refers to a missing specialization"))?;
        let mut path = self.path.clone();
        if let Some(i) = specs.iter().position(|s| equal(&s.condition, &condition)) {
            path.push(i);
            return Ok(Stage {
                function: self.function.clone(),
                path,
                index: self.index,
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
            index: self.index,
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
        let (st, specs) = definition_at(&mut c, self.index, &self.path)
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

/// The user's name of a dim for messages: its last component.
fn short_name(dim: &str) -> &str {
    dim.rsplit('.').next().unwrap_or(dim)
}

/// Halide's kind checks of a split in an update: RVars split into RVars,
/// Vars into Vars. Returns whether an RVar is split (the split must then
/// stay inside the domain).
fn check_split_kinds(
    st: &StageSchedule,
    old: &VarOrRVar,
    outer: &VarOrRVar,
    inner: &VarOrRVar,
) -> Result<bool> {
    let Some(i) = Stage::find_dim(st, &old.name) else {
        return Ok(false);
    };
    let is_rvar = st.dims[i].is_rvar;
    let old_name = &old.name;
    if is_rvar {
        if let Some(v) = [outer, inner].into_iter().find(|v| !v.is_rvar) {
            return Err(Error::user(format!(
                "Can't split RVar {old_name} into Var {}\n",
                v.name
            )));
        }
    } else if let Some(v) = [outer, inner].into_iter().find(|v| v.is_rvar) {
        return Err(Error::user(format!(
            "Can't split Var {old_name} into RVar {}\n",
            v.name
        )));
    }
    Ok(is_rvar)
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
