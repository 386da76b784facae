//! The loop nest of a compute_with group: the stages of several Funcs in
//! shared loops (Halide's build_pipeline_group, the shift of aligned
//! loops and the union bounds of the fused loops, in ScheduleFunctions).
//!
//! Assumes: the group's pairs were checked (lower/fused_groups.rs): a
//! child stage's loops from its fuse var outwards match its parent's.
//! Guarantees: one Stmt `produce m1 { produce m2 { ... } }` over every
//! member, in which
//! - stages run in an order that respects both the stages of each Func
//!   and compute_with (a child stage right after its parent stage in the
//!   innermost fused loop: it is appended to the body of that loop);
//! - every stage's loop bounds (`f.sN.v.loop_min/max/extent`) are defined
//!   at the top, so the shared loops can use them;
//! - a fused loop position (counted from the outermost loop) is owned by
//!   the outermost stage that has it and is not fused there itself: its
//!   loop, renamed `f.sN.fused.v` (still a site for `compute_at(f, v)`),
//!   runs over the union of the ranges of every stage fused into it, each
//!   shifted by its alignment; the stage's own variable is a let of it;
//! - a stage fused into a loop keeps an extent-1 loop `g.sK.fused.v` at
//!   the owner's variable, in which its variable is `let g.sK.v =
//!   g.sK.fused.v + shift` (AlignStart / AlignEnd: its first / last
//!   iteration meets its parent's; NoAlign and Auto: no shift);
//! - every stage with shared loops runs its body only inside its own
//!   bounds there (`likely` guards, schedule_functions::fused_loop_guards);
//! - a fused stage's `__outermost` loop stays where Halide has it, inside
//!   the shared loops; bounds inference knows that its whole nest is in
//!   the outermost loop of the root of its compute_with tree
//!   (`fused_groups::fusion_root`).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::ir::visit::mutate_stmt_children;
use crate::ir::{Expr, ForType, Mutator, Stmt, StmtNode};
use crate::schedule::{LoopAlignStrategy, LoopLevel, StageSchedule};

use super::environment::Environment;
use super::fused_groups::{fused_dim_index, stage_schedule, stage_specializations};
use super::schedule_functions::{build_stage_nest, stage_prefix};

/// A stage of the group: (index of its Func in the group, stage index).
type Key = (usize, usize);

/// What the group's construction needs to know about one stage.
struct GroupStage {
    prefix: String,
    /// Its parent stage, if any, and the var it is fused at.
    parent: Option<Key>,
    fuse_var: String,
    align: Vec<(String, LoopAlignStrategy)>,
    /// How many of its loops (from the outermost) it shares with its parent.
    fused: usize,
    /// The dims index from which its loops are shared with another stage.
    guarded_from: Option<usize>,
    /// Its loop names at each shared position, outermost first (of the
    /// definition, not of its specializations).
    loop_names: Vec<String>,
}

/// Halide's name of a fused loop: `.fused` before the last component, so
/// the name still designates the same LoopLevel.
fn fused_name(loop_name: &str) -> String {
    match loop_name.rfind('.') {
        Some(i) => format!("{}.fused{}", &loop_name[..i], &loop_name[i..]),
        None => format!("fused.{loop_name}"),
    }
}

fn var(name: impl Into<String>) -> Expr {
    Expr::var_i32(name)
}

/// The loop names of `st` at the first `count` positions, outermost first.
fn loop_names(st: &StageSchedule, prefix: &str, count: usize) -> Vec<String> {
    let n = st.dims.len();
    (0..count)
        .map(|j| format!("{prefix}{}", st.dims[n - 2 - j].var))
        .collect()
}

struct Group {
    stages: HashMap<Key, GroupStage>,
}

impl Group {
    fn new(env: &Environment, names: &[String]) -> Result<Group> {
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let mut stages: HashMap<Key, GroupStage> = HashMap::new();
        for (i, name) in names.iter().enumerate() {
            let c = env.get(name).read();
            for k in 0..=c.updates.len() {
                let st = stage_schedule(&c, k);
                let (mut parent, mut fused, mut guarded_from) = (None, 0, None);
                let mut fuse_var = String::new();
                if let Some(fl) = &st.fuse_level {
                    let LoopLevel::At {
                        func,
                        var,
                        stage: Some(ps),
                    } = &fl.level
                    else {
                        return Err(Error::internal("unchecked compute_with level"));
                    };
                    let from = fused_dim_index(&st.dims, var)
                        .ok_or_else(|| Error::internal("unchecked compute_with var"))?;
                    let pi = *index
                        .get(func.as_str())
                        .ok_or_else(|| Error::internal("compute_with parent outside its group"))?;
                    parent = Some((pi, *ps));
                    fused = st.dims.len() - 1 - from;
                    guarded_from = Some(from);
                    fuse_var = var.clone();
                }
                for p in env.fused_pairs.iter() {
                    if p.parent == *name && p.parent_stage == k {
                        let at = fused_dim_index(&st.dims, &p.var)
                            .ok_or_else(|| Error::internal("unchecked compute_with var"))?;
                        guarded_from = Some(guarded_from.map_or(at, |g: usize| g.min(at)));
                    }
                }
                let prefix = stage_prefix(name, k);
                let shared = guarded_from.map_or(0, |g| st.dims.len() - 1 - g);
                stages.insert(
                    (i, k),
                    GroupStage {
                        loop_names: loop_names(st, &prefix, shared),
                        prefix,
                        parent,
                        fuse_var,
                        align: st
                            .fuse_level
                            .as_ref()
                            .map(|f| f.align.clone())
                            .unwrap_or_default(),
                        fused,
                        guarded_from,
                    },
                );
            }
        }
        Ok(Group { stages })
    }

    /// Where the nest of `key`, fused with `parent`, goes: at the end of
    /// the body of the loop that owns its innermost shared position (its
    /// parent's loop over the fused var, unless the parent is itself fused
    /// there: a parent fused at an inner loop has its own extent-1 loops
    /// inside that one, where `key` would run once per inner iteration;
    /// Halide puts it there).
    fn injection_level(&self, key: Key, parent: Key, names: &[String]) -> LoopLevel {
        let s = &self.stages[&key];
        let (owner, var) = match s.fused.checked_sub(1) {
            None => (parent, s.fuse_var.clone()),
            Some(j) => {
                let o = self.owner(key, j);
                let os = &self.stages[&o];
                let n = &os.loop_names[j];
                (o, n.strip_prefix(&os.prefix).unwrap_or(n).to_string())
            }
        };
        LoopLevel::At {
            func: names[owner.0].clone(),
            var,
            stage: Some(owner.1),
        }
    }

    /// The root of `key`'s compute_with tree (whose nest it runs in).
    fn root(&self, key: Key) -> Key {
        match self.stages[&key].parent {
            Some(p) => self.root(p),
            None => key,
        }
    }

    /// The stage that owns the shared loop at position `j` of `key`.
    fn owner(&self, key: Key, j: usize) -> Key {
        let s = &self.stages[&key];
        match s.parent {
            Some(p) if j < s.fused => self.owner(p, j),
            _ => key,
        }
    }

    /// The offset of `key`'s variable from the owner's at position `j`
    /// (`key` is fused there; `owner_loop` is the owner's loop name).
    fn shift(&self, key: Key, j: usize, owner_loop: &str) -> Expr {
        let s = &self.stages[&key];
        let Some(p) = s.parent.filter(|_| j < s.fused) else {
            return Expr::i32(0);
        };
        let ps = &self.stages[&p];
        let (p_loop, p_shift) = if j < ps.fused && ps.parent.is_some() {
            (ps.loop_names[j].clone(), self.shift(p, j, owner_loop))
        } else {
            (owner_loop.to_string(), Expr::i32(0))
        };
        let own = &s.loop_names[j];
        let dim = own.strip_prefix(&s.prefix).unwrap_or(own);
        // Halide takes the first strategy (in name order) naming the dim.
        let mut named: Vec<&(String, LoopAlignStrategy)> = s
            .align
            .iter()
            .filter(|(v, _)| crate::lang::func::var_name_match(dim, v))
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let end = match named.first().map(|(_, a)| *a) {
            Some(LoopAlignStrategy::AlignStart) => "loop_min",
            Some(LoopAlignStrategy::AlignEnd) => "loop_max",
            _ => return Expr::i32(0),
        };
        // The parent's end, where it runs in the owner's loop.
        let parent_end = Expr::sub(var(format!("{p_loop}.{end}")), p_shift);
        Expr::sub(var(format!("{own}.{end}")), parent_end)
    }

    /// The stages sharing the loop `j` that `owner` owns (with it).
    fn owned(&self, owner: Key, j: usize) -> Vec<Key> {
        let mut keys: Vec<Key> = self
            .stages
            .iter()
            .filter(|(k, s)| **k == owner || (j < s.fused && self.owner(**k, j) == owner))
            .map(|(k, _)| *k)
            .collect();
        keys.sort();
        keys
    }
}

/// Halide's order of the group's stages: each Func's stages in sequence,
/// a child stage after its parent stage, and the earlier stages of a
/// child's Func before the nest it runs in (unless consecutive stages
/// share one parent stage). That nest is the one of the root of the
/// parent's compute_with tree, which is where the child runs; Halide
/// orders them before the parent stage only, which for a parent that is
/// itself fused runs the child before the earlier stages of its Func.
fn stage_order(env: &Environment, names: &[String], group: &Group) -> Result<Vec<Key>> {
    let counts: Vec<usize> = names
        .iter()
        .map(|n| env.get(n).read().updates.len() + 1)
        .collect();
    let mut deps: Vec<Vec<usize>> = counts.iter().map(|&c| vec![0; c]).collect();
    let mut adj: Vec<Vec<Vec<Key>>> = counts.iter().map(|&c| vec![vec![]; c]).collect();
    for (i, &count) in counts.iter().enumerate() {
        let mut prev: Option<Key> = group.stages[&(i, 0)].parent;
        for k in 0..count {
            let Some(p) = group.stages[&(i, k)].parent else {
                continue;
            };
            deps[i][k] += 1;
            adj[p.0][p.1].push((i, k));
            if k > 0 {
                if prev != Some(p) {
                    let root = group.root(p);
                    deps[root.0][root.1] += k;
                    for edges in &mut adj[i][..k] {
                        edges.push(root);
                    }
                }
                prev = Some(p);
            }
        }
    }
    let mut next = vec![0usize; names.len()];
    let mut order = vec![];
    while next.iter().zip(&counts).any(|(n, c)| n < c) {
        let mut progress = false;
        for i in 0..names.len() {
            while next[i] < counts[i] && deps[i][next[i]] == 0 {
                for &(fi, si) in &adj[i][next[i]] {
                    deps[fi][si] -= 1;
                }
                order.push((i, next[i]));
                next[i] += 1;
                progress = true;
            }
        }
        if !progress {
            let mut msg = "There is a cycle inside of the fused group: \n".to_string();
            for i in 0..names.len() {
                if next[i] < counts[i] {
                    msg.push_str(&format!(
                        "{}.s{} has {} unsatisfied dependencies; \n",
                        names[i], next[i], deps[i][next[i]]
                    ));
                }
            }
            return Err(Error::user(msg));
        }
    }
    Ok(order)
}

/// Append `stmt` to the body of every loop `level` names.
struct InjectAt<'a> {
    level: &'a LoopLevel,
    stmt: &'a Stmt,
    found: bool,
}

impl Mutator for InjectAt<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::For {
            name,
            min,
            extent,
            for_type,
            body,
        } = s.node()
        else {
            return mutate_stmt_children(self, s);
        };
        let mut b = self.mutate_stmt(body);
        if self.level.matches_loop(name) {
            b = Stmt::block(vec![b, self.stmt.clone()]);
            self.found = true;
        }
        Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, b)
    }
}

/// Rewrite the shared loops (see the module comment).
struct FuseLoops<'a> {
    group: &'a Group,
    /// Loop name -> (stage, position), for every shared loop, in the
    /// stages' definitions and their specializations.
    loops: HashMap<String, (Key, usize)>,
    /// The owners' loops being walked: (owner, position) -> (loop name,
    /// fused loop variable).
    scope: HashMap<(Key, usize), (String, String)>,
    error: Option<Error>,
}

impl FuseLoops<'_> {
    fn shared_loop(
        &mut self,
        name: &str,
        key: Key,
        j: usize,
        for_type: ForType,
        body: &Stmt,
    ) -> Stmt {
        let group = self.group;
        let fused = fused_name(name);
        let s = &group.stages[&key];
        let (lo, hi, for_type, alias) = if j < s.fused {
            let owner = group.owner(key, j);
            let Some((owner_loop, owner_var)) = self.scope.get(&(owner, j)).cloned() else {
                self.error.get_or_insert(Error::internal(format!(
                    "fused loop {name} is not inside the loop it is fused into"
                )));
                return Stmt::no_op();
            };
            let shift = group.shift(key, j, &owner_loop);
            // One iteration, at the owner's; never parallel or vectorized
            // itself (the owner's loop is).
            (
                var(owner_var.clone()),
                var(owner_var),
                ForType::Serial,
                Expr::add(var(fused.clone()), shift),
            )
        } else {
            let mut lo = var(format!("{name}.loop_min"));
            let mut hi = var(format!("{name}.loop_max"));
            for m in group.owned(key, j) {
                if m == key {
                    continue;
                }
                let ms = &group.stages[&m];
                let shift = group.shift(m, j, name);
                let l = &ms.loop_names[j];
                lo = Expr::min(lo, Expr::sub(var(format!("{l}.loop_min")), shift.clone()));
                hi = Expr::max(hi, Expr::sub(var(format!("{l}.loop_max")), shift));
            }
            self.scope
                .insert((key, j), (name.to_string(), fused.clone()));
            (lo, hi, for_type, var(fused.clone()))
        };
        let b = self.mutate_stmt(body);
        self.scope.remove(&(key, j));
        let inner = Stmt::let_stmt(name.to_string(), alias, b);
        let mut out = Stmt::for_loop(
            fused.clone(),
            var(format!("{fused}.loop_min")),
            var(format!("{fused}.loop_extent")),
            for_type,
            inner,
        );
        let extent = Expr::add(
            Expr::sub(
                var(format!("{fused}.loop_max")),
                var(format!("{fused}.loop_min")),
            ),
            Expr::i32(1),
        );
        out = Stmt::let_stmt(format!("{fused}.loop_extent"), extent, out);
        out = Stmt::let_stmt(format!("{fused}.loop_max"), hi, out);
        Stmt::let_stmt(format!("{fused}.loop_min"), lo, out)
    }
}

impl Mutator for FuseLoops<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::For {
            name,
            for_type,
            body,
            ..
        } = s.node()
        {
            if let Some(&(key, j)) = self.loops.get(name) {
                return self.shared_loop(name, key, j, *for_type, body);
            }
        }
        mutate_stmt_children(self, s)
    }
}

/// Every shared loop's name in `st` and its specializations.
fn collect_loops(
    st: &StageSchedule,
    specs: &[crate::lang::function::Specialization],
    prefix: &str,
    count: usize,
    key: Key,
    out: &mut HashMap<String, (Key, usize)>,
) {
    for (j, n) in loop_names(st, prefix, count).into_iter().enumerate() {
        out.insert(n, (key, j));
    }
    for sp in specs {
        collect_loops(&sp.stage, &sp.specializations, prefix, count, key, out);
    }
}

/// `stmt` without its leading lets, which are pushed on `lets`.
fn strip_lets(mut stmt: Stmt, lets: &mut Vec<(String, Expr)>) -> Stmt {
    while let StmtNode::LetStmt { name, value, body } = stmt.node() {
        lets.push((name.clone(), value.clone()));
        let b = body.clone();
        stmt = b;
    }
    stmt
}

/// The produce of the compute_with group `names` (see the module comment).
pub fn build_group_produce(env: &Environment, names: &[String]) -> Result<Stmt> {
    let group = Group::new(env, names)?;
    let order = stage_order(env, names, &group)?;
    let mut producer: Option<Stmt> = None;
    let mut lets: Vec<(String, Expr)> = vec![];
    for key in &order {
        let gs = &group.stages[key];
        let f = env.get(&names[key.0]);
        let nest = strip_lets(build_stage_nest(f, key.1, gs.guarded_from)?, &mut lets);
        let Some(parent) = gs.parent else {
            producer = Some(match producer {
                None => nest,
                Some(p) => Stmt::block(vec![p, nest]),
            });
            continue;
        };
        let level = group.injection_level(*key, parent, names);
        let mut inject = InjectAt {
            level: &level,
            stmt: &nest,
            found: false,
        };
        let p = producer.ok_or_else(|| Error::internal("fused stage before its parent"))?;
        let p = inject.mutate_stmt(&p);
        if !inject.found {
            return Err(Error::internal(format!(
                "the loop {} of a compute_with was not found",
                level.describe()
            )));
        }
        producer = Some(p);
    }
    let mut loops = HashMap::new();
    for (key, gs) in &group.stages {
        let c = env.get(&names[key.0]).read();
        let count = gs
            .guarded_from
            .map_or(0, |g| stage_schedule(&c, key.1).dims.len() - 1 - g);
        collect_loops(
            stage_schedule(&c, key.1),
            stage_specializations(&c, key.1),
            &gs.prefix,
            count,
            *key,
            &mut loops,
        );
    }
    let mut fuse = FuseLoops {
        group: &group,
        loops,
        scope: HashMap::new(),
        error: None,
    };
    let mut s = fuse.mutate_stmt(&producer.unwrap_or_else(Stmt::no_op));
    if let Some(e) = fuse.error {
        return Err(e);
    }
    for (n, v) in lets.into_iter().rev() {
        s = Stmt::let_stmt(n, v, s);
    }
    for n in names {
        s = Stmt::producer(n.clone(), s);
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_names_keep_the_last_component() {
        assert_eq!(fused_name("g.s0.y"), "g.s0.fused.y");
        assert_eq!(fused_name("g.s1.x.xo"), "g.s1.x.fused.xo");
        assert!(LoopLevel::at("g", "xo").matches_loop(&fused_name("g.s1.x.xo")));
    }
}
