//! compute_with groups: which stages share loops with which (Halide's
//! FusedPair), the groups of Funcs computed together, the order they are
//! realized in, and Halide's legality checks on them (RealizationOrder.cpp
//! and ScheduleFunctions' validate_fused_groups_schedule).
//!
//! Assumes: the environment's Funcs (after wrap_calls). Guarantees: every
//! pair names two stages of two different Funcs of the pipeline with no
//! dependency (direct or through other Funcs) between them, the stages of
//! one Func are fused in an order that keeps them in sequence, and the
//! compute_with edges have no cycle; `realization_order` lists the groups
//! producers first, each group's members children first (the parent of a
//! fused loop is realized after, i.e. is outside, what is fused into it).
//! `validate_group_schedules` adds what needs the locked levels: members
//! computed at one level, none inline, and the fused loops of a child and
//! of its parent (and of each of the parent's specializations) matching
//! from the fused var outwards in name, loop type and kind.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::ir::ForType;
use crate::lang::func::var_name_match;
use crate::lang::function::{Function, FunctionContents, Specialization};
use crate::lang::stage::Stage;
use crate::schedule::{Dim, FuseLevel, LockedLevels, LoopLevel, StageSchedule};

use super::environment::direct_callees;

/// Stage `child_stage` of `child` runs in the loops of stage
/// `parent_stage` of `parent` from the loop over `var` outwards, after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedPair {
    pub parent: String,
    pub parent_stage: usize,
    pub child: String,
    pub child_stage: usize,
    pub var: String,
}

/// The schedule of definition `k` (0 pure, `i + 1` update `i`).
pub fn stage_schedule(c: &FunctionContents, k: usize) -> &StageSchedule {
    if k == 0 {
        &c.stage
    } else {
        &c.updates[k - 1].stage
    }
}

/// The specializations of definition `k`.
pub fn stage_specializations(c: &FunctionContents, k: usize) -> &[Specialization] {
    if k == 0 {
        &c.specializations
    } else {
        &c.updates[k - 1].specializations
    }
}

/// The fuse levels of `f`'s stages, by stage index.
fn fuse_levels(f: &Function) -> Vec<(usize, FuseLevel)> {
    let c = f.read();
    (0..=c.updates.len())
        .filter_map(|k| stage_schedule(&c, k).fuse_level.clone().map(|l| (k, l)))
        .collect()
}

/// Halide's check that `f`'s stages can still run in order: a later
/// stage may not be fused with an earlier stage of the same parent than
/// an earlier stage was (except consecutive stages sharing one).
fn check_stages_in_order(
    name: &str,
    levels: &[(usize, String, usize)],
    stages: usize,
) -> Result<()> {
    let mut last: HashMap<&str, (i64, i64)> = HashMap::new();
    let mut consecutive = false;
    for i in 0..stages {
        let Some((_, parent, ps)) = levels.iter().find(|(k, _, _)| *k == i) else {
            consecutive = false;
            continue;
        };
        let (mi, ms) = last.get(parent.as_str()).copied().unwrap_or((-1, -1));
        let ps = *ps as i64;
        if !(ps > ms || (ps == ms && consecutive)) {
            return Err(Error::user(format!(
                "Invalid compute_with: impossible to establish correct stage order between {name}.s{mi} with {parent}.s{ms} and {name}.s{i} with {parent}.s{ps}\n"
            )));
        }
        last.insert(parent, (i as i64, ps));
        consecutive = true;
    }
    Ok(())
}

/// Every Func `f` calls, directly or through others.
fn transitive_callees(f: &Function) -> Result<HashSet<String>> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut stack = direct_callees(f)?;
    while let Some(g) = stack.pop() {
        if seen.insert(g.name()) {
            stack.extend(direct_callees(&g)?);
        }
    }
    Ok(seen)
}

/// The pairs of the pipeline's stages fused by compute_with, checked as
/// Halide checks them before ordering the realizations.
pub fn fused_pairs(funcs: &HashMap<String, Function>) -> Result<Vec<FusedPair>> {
    let mut names: Vec<&String> = funcs.keys().collect();
    names.sort();
    let mut pairs = vec![];
    for name in names {
        let f = &funcs[name];
        let mut levels = vec![];
        for (k, fl) in fuse_levels(f) {
            let LoopLevel::At {
                func: parent,
                var,
                stage,
            } = &fl.level
            else {
                return Err(Error::internal("compute_with level is not a loop"));
            };
            let Some(p) = funcs.get(parent) else {
                return Err(Error::user(format!(
                    "Illegal compute_with: \"{name}\" is scheduled to be computed with \"{parent}\" which is not used anywhere.\n"
                )));
            };
            let Some(ps) = *stage else {
                return Err(Error::user(format!(
                    "Invalid compute_with: {name}.s{k} is scheduled to be computed with LoopLevel {parent}.{var}, which names no stage of {parent}: use compute_with({parent}, {var}) or a LoopLevel with a stage_index.\n"
                )));
            };
            if ps > p.read().updates.len() {
                return Err(Error::user(format!(
                    "Invalid compute_with: {name}.s{k} is scheduled to be computed with {parent}.s{ps}, but {parent} has no stage {ps}.\n"
                )));
            }
            levels.push((k, parent.clone(), ps));
            pairs.push(FusedPair {
                parent: parent.clone(),
                parent_stage: ps,
                child: name.clone(),
                child_stage: k,
                var: var.clone(),
            });
        }
        check_stages_in_order(name, &levels, f.read().updates.len() + 1)?;
    }
    let mut callees: HashMap<String, HashSet<String>> = HashMap::new();
    for p in &pairs {
        for n in [&p.parent, &p.child] {
            if !callees.contains_key(n) {
                callees.insert(n.clone(), transitive_callees(&funcs[n])?);
            }
        }
        if callees[&p.parent].contains(&p.child) || callees[&p.child].contains(&p.parent) {
            return Err(Error::user(format!(
                "Invalid compute_with: there is dependency between {} and {}\n",
                p.parent, p.child
            )));
        }
    }
    for p in &pairs {
        if pairs
            .iter()
            .any(|q| q.parent == p.child && q.child == p.parent)
        {
            return Err(Error::user(format!(
                "Found cyclic dependencies between compute_with of {} and {}\n",
                p.parent, p.child
            )));
        }
    }
    Ok(pairs)
}

/// The groups of Funcs whose loops are fused (connected by pairs), each
/// ordered children first, listed producers first: every Func a member
/// calls is in an earlier group. `order` is the realization order without
/// compute_with (producers first); it breaks ties.
pub fn realization_order(
    funcs: &HashMap<String, Function>,
    order: &[String],
    pairs: &[FusedPair],
) -> Result<Vec<Vec<String>>> {
    let position: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    // Connected components of the compute_with pairs.
    let mut group_of: HashMap<String, usize> = order
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect();
    loop {
        let mut changed = false;
        for p in pairs {
            let (a, b) = (group_of[&p.parent], group_of[&p.child]);
            if a != b {
                let (keep, drop) = (a.min(b), a.max(b));
                for g in group_of.values_mut() {
                    if *g == drop {
                        *g = keep;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut members: HashMap<usize, Vec<String>> = HashMap::new();
    for n in order {
        members.entry(group_of[n]).or_default().push(n.clone());
    }
    for m in members.values_mut() {
        *m = children_first(m, pairs, &position)?;
    }

    #[derive(PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    struct Walk<'a> {
        funcs: &'a HashMap<String, Function>,
        group_of: &'a HashMap<String, usize>,
        members: &'a HashMap<usize, Vec<String>>,
        marks: HashMap<usize, Mark>,
        out: Vec<Vec<String>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, g: usize) -> Result<()> {
            match self.marks.get(&g) {
                Some(Mark::Done) => return Ok(()),
                Some(Mark::Visiting) => {
                    return Err(Error::user(format!(
                        "Stuck in a loop computing a realization order. Perhaps this pipeline has a loop involving {}?\n",
                        self.members[&g].join(", ")
                    )))
                }
                None => {}
            }
            self.marks.insert(g, Mark::Visiting);
            for m in &self.members[&g] {
                for callee in direct_callees(&self.funcs[m])? {
                    let cg = self.group_of[&callee.name()];
                    if cg != g {
                        self.visit(cg)?;
                    }
                }
            }
            self.marks.insert(g, Mark::Done);
            self.out.push(self.members[&g].clone());
            Ok(())
        }
    }
    let mut walk = Walk {
        funcs,
        group_of: &group_of,
        members: &members,
        marks: HashMap::new(),
        out: vec![],
    };
    // Outputs are last in `order`; visiting every Func in order reaches
    // each group after its producers.
    for n in order {
        walk.visit(group_of[n])?;
    }
    Ok(walk.out)
}

/// `group` ordered so that each Func comes before the Funcs it is fused
/// into (Halide realizes a fused loop's parent last), ties in `position`
/// order. A cycle of compute_with edges is Halide's realization order error.
fn children_first(
    group: &[String],
    pairs: &[FusedPair],
    position: &HashMap<&str, usize>,
) -> Result<Vec<String>> {
    let mut left: Vec<String> = group.to_vec();
    left.sort_by_key(|n| position[n.as_str()]);
    let mut out: Vec<String> = vec![];
    while !left.is_empty() {
        // A Func all of whose compute_with children are placed.
        let ready = left.iter().position(|n| {
            pairs
                .iter()
                .filter(|p| p.parent == *n && p.child != *n)
                .all(|p| out.contains(&p.child))
        });
        let Some(i) = ready else {
            return Err(Error::user(format!(
                "Stuck in a loop computing a realization order. Perhaps this pipeline has a loop involving {}?\n",
                left[0]
            )));
        };
        out.push(left.remove(i));
    }
    Ok(out)
}

/// The stage at the root of the compute_with tree of stage `k` of `name`
/// (itself if it is not fused into another): its loop nest encloses the
/// whole loop nest of stage `k`.
pub fn fusion_root(pairs: &[FusedPair], name: &str, k: usize) -> (String, usize) {
    let mut at = (name.to_string(), k);
    // Pairs have no cycles (checked): at most one step per pair.
    for _ in 0..=pairs.len() {
        match pairs
            .iter()
            .find(|p| p.child == at.0 && p.child_stage == at.1)
        {
            Some(p) => at = (p.parent.clone(), p.parent_stage),
            None => break,
        }
    }
    at
}

/// Halide's kinds of loop dimensions, for the matching check.
fn dim_type(f: &Function, k: usize, st: &StageSchedule, d: &Dim) -> &'static str {
    if !d.is_rvar {
        "PureVar"
    } else if Stage::of_definition(f, k).dim_is_pure(st, &d.var) {
        "PureRVar"
    } else {
        "ImpureRVar"
    }
}


/// Where the loop over `var` is in `dims` (innermost first).
pub fn fused_dim_index(dims: &[Dim], var: &str) -> Option<usize> {
    dims.iter().position(|d| var_name_match(&d.var, var))
}

/// Halide's symmetric name match of two loop dims (`x.xo` ~ `xo`).
fn dims_match(a: &str, b: &str) -> bool {
    a == b || a.ends_with(&format!(".{b}")) || b.ends_with(&format!(".{a}"))
}

/// The fused loops of `pair` in the parent's schedule `st1` (its
/// definition or one of its specializations) and the child's match.
fn check_fused_dims(
    env: &HashMap<String, Function>,
    p: &FusedPair,
    st1: &StageSchedule,
) -> Result<()> {
    let (f1, f2) = (&env[&p.parent], &env[&p.child]);
    let c2 = f2.read();
    let st2 = stage_schedule(&c2, p.child_stage);
    let (n1, n2) = (
        format!("{}.s{}", p.parent, p.parent_stage),
        format!("{}.s{}", p.child, p.child_stage),
    );
    let Some(i1) = fused_dim_index(&st1.dims, &p.var) else {
        return Err(Error::user(format!(
            "Invalid compute_with: cannot find {} in {n1}\n",
            p.var
        )));
    };
    let Some(i2) = fused_dim_index(&st2.dims, &p.var) else {
        return Err(Error::user(format!(
            "Invalid compute_with: cannot find {} in {n2}\n",
            p.var
        )));
    };
    let fused = st1.dims.len() - i1 - 1;
    if fused != st2.dims.len() - i2 - 1 {
        return Err(Error::user(format!(
            "Invalid compute_with: # of fused dims of {n1} and {n2} do not match.\n"
        )));
    }
    for i in 0..fused {
        let (d1, d2) = (&st1.dims[i1 + i], &st2.dims[i2 + i]);
        if !dims_match(&d1.var, &d2.var) {
            return Err(Error::user(format!(
                "Invalid compute_with: names of dim {i} of {n1}({}) and {n2}({}) do not match.\n",
                d1.var, d2.var
            )));
        }
        if d1.for_type != d2.for_type {
            return Err(Error::user(format!(
                "Invalid compute_with: for types of dim {i} of {n1}({} is {}) and {n2}({} is {}) do not match.\n",
                d1.var,
                ForType::name(d1.for_type),
                d2.var,
                ForType::name(d2.for_type)
            )));
        }
        let (t1, t2) = (
            dim_type(f1, p.parent_stage, st1, d1),
            dim_type(f2, p.child_stage, st2, d2),
        );
        if t1 != t2 {
            return Err(Error::user(format!(
                "Invalid compute_with: types of dim {i} of {n1}({} is {t1}) and {n2}({} is {t2}) do not match.\n",
                d1.var, d2.var
            )));
        }
    }
    Ok(())
}

/// Halide's checks of the fused stages against the locked schedules: see
/// the module comment. `levels` are the locked levels of every Func
/// (outputs at the root).
pub fn validate_group_schedules(
    env: &HashMap<String, Function>,
    pairs: &[FusedPair],
    levels: &HashMap<String, LockedLevels>,
) -> Result<()> {
    for p in pairs {
        let child = env[&p.child].read();
        // Halide checks the child's pure definition; a specialized child
        // stage could not share the loops either.
        if !child.specializations.is_empty()
            || !stage_specializations(&child, p.child_stage).is_empty()
        {
            return Err(Error::user(format!(
                "Func {} is scheduled to be computed with {}, so it must not have any specializations.\n",
                p.child, p.parent
            )));
        }
        drop(child);
        let (l1, l2) = (&levels[&p.parent].compute, &levels[&p.child].compute);
        for (n, s, l) in [
            (&p.parent, p.parent_stage, l1),
            (&p.child, p.child_stage, l2),
        ] {
            if l.is_inlined() {
                return Err(Error::user(format!(
                    "Invalid compute_with: {n}.s{s} is scheduled inline.\n"
                )));
            }
        }
        if l1 != l2 {
            return Err(Error::user(format!(
                "Invalid compute_with: the compute levels of {}.s{} (computed at {}) and {}.s{} ({}) do not match.\n",
                p.parent,
                p.parent_stage,
                l1.describe(),
                p.child,
                p.child_stage,
                l2.describe()
            )));
        }
        let parent = env[&p.parent].read();
        check_fused_dims(env, p, stage_schedule(&parent, p.parent_stage))?;
        for s in stage_specializations(&parent, p.parent_stage) {
            check_fused_dims(env, p, &s.stage)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_order_follows_halide() {
        // f.compute_with(g, y); f.update(1).compute_with(g, y): f.s1 would
        // have to run after g.s0 but before f.s2.
        let lv = |k: usize, p: &str, s: usize| (k, p.to_string(), s);
        assert!(check_stages_in_order("f", &[lv(0, "g", 0), lv(2, "g", 0)], 3).is_err());
        // Consecutive stages may share one parent stage.
        assert!(check_stages_in_order("f", &[lv(0, "g", 0), lv(1, "g", 0)], 3).is_ok());
        assert!(
            check_stages_in_order("f", &[lv(0, "g", 1), lv(1, "g", 0)], 2)
                .unwrap_err()
                .message
                .contains("f.s0 with g.s1 and f.s1 with g.s0")
        );
    }

    #[test]
    fn children_come_before_their_parents() {
        let pair = |p: &str, c: &str| FusedPair {
            parent: p.into(),
            parent_stage: 0,
            child: c.into(),
            child_stage: 0,
            var: "y".into(),
        };
        let names = ["f".to_string(), "g".to_string(), "h".to_string()];
        let position: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let pairs = [pair("f", "g"), pair("g", "h")];
        assert_eq!(
            children_first(&names, &pairs, &position).unwrap(),
            ["h", "g", "f"]
        );
        let cycle = [pair("f", "g"), pair("g", "h"), pair("h", "f")];
        assert!(children_first(&names, &cycle, &position).is_err());
    }
}
