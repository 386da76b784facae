//! Prefetch directives (Halide's Prefetch.cpp): `stage.prefetch(f, at,
//! from, offset, strategy)` asks that, at the top of each iteration of the
//! stage's loop `at`, the part of `f` (a Func or an image) that iteration
//! `from + offset` of the enclosing (or same) loop `from` touches be brought
//! into the cache.
//!
//! Assumes: after storage folding, before storage flattening: loops are
//! named `func.sK.var...`, Func accesses are still calls, each Func's
//! storage is a `Realize` with its box, an image's shape is its
//! `name.min.d` / `name.extent.d`. Guarantees: the values computed do not
//! change. The region is `box_touched` of the loop body with `from`
//! replaced by `from + offset`; it is walked by a serial loop nest, one
//! `prefetch(f(coords))` per cache line of dimension 0 and per coordinate
//! of the others, limited by the strategy: `GuardWithIf` prefetches only
//! when the region lies in the buffer, `Clamp` only the part in it,
//! `NonFaulting` all of it (prefetch instructions never fault). Storage
//! flattening makes the calls Loads; code generation emits the prefetch
//! instruction for the Load's address and reads nothing. At a vectorized
//! loop, whose iterations run as one, the prefetch covers every lane's
//! region and goes before the loop. A directive given
//! on one specialization applies to the stage's loops in every branch (the
//! branches share loop names).

use std::collections::HashMap;

use super::environment::Environment;
use crate::analysis::bounds::{box_touched, Scope};
use crate::analysis::simplify::simplify;
use crate::error::{user_warning, Error, Result};
use crate::ir::visit::{for_each_expr_in_stmt, mutate_stmt_children, Mutator};
use crate::ir::{CallKind, Expr, ExprNode, ForType, Intrinsic, Stmt, StmtNode, Type};
use crate::lang::func::var_name_match;
use crate::schedule::{PrefetchBoundStrategy, PrefetchDirective};

/// The cache line size prefetches step by.
const CACHE_LINE_BYTES: i64 = 64;

/// See the module comment.
pub fn inject_prefetch(s: &Stmt, env: &Environment) -> Result<Stmt> {
    let mut by_prefix: HashMap<String, Vec<PrefetchDirective>> = HashMap::new();
    for name in &env.order {
        for (index, stage) in env.get(name).stage_schedules() {
            for p in &stage.prefetches {
                let position = |var: &str| stage.dims.iter().position(|d| var_name_match(&d.var, var));
                for (what, var) in [("at", &p.at), ("from", &p.from)] {
                    if position(var).is_none() {
                        return Err(Error::user(format!(
                            "In schedule for {name}, could not find prefetch '{what}' dimension {var} in vars for function\n"
                        )));
                    }
                }
                // `from` must be `at`'s loop or enclose it (dims are
                // innermost first). Checked here, from the loop order, so
                // that a loop that runs once, which is gone by the time
                // prefetches are placed, does not hide the mistake.
                if position(&p.from) < position(&p.at) {
                    return Err(from_not_active(&p.from));
                }
                let list = by_prefix.entry(format!("{name}.s{index}.")).or_default();
                // A specialization repeats its parent's directives.
                if !list.iter().any(|q| same_directive(q, p)) {
                    list.push(p.clone());
                }
            }
        }
    }
    if by_prefix.is_empty() {
        return Ok(s.clone());
    }
    let mut inject = Inject { by_prefix, loops: vec![], realized: HashMap::new(), env, error: None, placed: vec![] };
    let out = inject.mutate_stmt(s);
    if let Some(e) = inject.error {
        return Err(e);
    }
    // A directive whose loop is gone (one iteration, turned into a let
    // before this pass) is not applied: say so rather than drop it silently.
    let mut missing: Vec<String> = vec![];
    for (prefix, list) in &inject.by_prefix {
        for p in list {
            if !inject.placed.iter().any(|(q, at, name)| q == prefix && *at == p.at && *name == p.name) {
                missing.push(format!(
                    "Removing prefetch of {} at loop {}{}: that loop runs once and is no longer a loop where prefetches are placed.",
                    p.name, prefix, p.at
                ));
            }
        }
    }
    missing.sort();
    missing.dedup();
    for m in missing {
        user_warning(&m);
    }
    Ok(out)
}

/// Halide's error for a prefetch whose `from` loop does not enclose its
/// `at` loop.
fn from_not_active(from: &str) -> Error {
    Error::user(format!(
        "Prefetch 'from' variable '{from}' could not be found in an active loop. (Are the 'at' and 'from' variables swapped?)\n"
    ))
}

fn same_directive(a: &PrefetchDirective, b: &PrefetchDirective) -> bool {
    a.name == b.name && a.at == b.at && a.from == b.from && a.strategy == b.strategy && a.offset.same_as(&b.offset)
}

struct Inject<'a> {
    by_prefix: HashMap<String, Vec<PrefetchDirective>>,
    /// The enclosing loops, outermost first.
    loops: Vec<(String, ForType)>,
    /// Each Func realized around this point: its box (min, extent) per dim.
    realized: HashMap<String, Vec<Vec<(Expr, Expr)>>>,
    env: &'a Environment,
    error: Option<Error>,
    /// (stage prefix, `at` var, prefetched name) of each directive that
    /// found its loop.
    placed: Vec<(String, String, String)>,
}

impl Inject<'_> {
    /// The prefetches of loop `name` (with the already mutated `body`, and
    /// the loop's `min` and `extent`). A vectorized loop's iterations run
    /// as one: its prefetches cover every lane's region and go before the
    /// loop (as Halide's, which its vectorizer scalarizes lane by lane).
    fn prefetches_at(
        &mut self,
        name: &str,
        for_type: ForType,
        min: &Expr,
        extent: &Expr,
        body: &Stmt,
    ) -> Result<Vec<Stmt>> {
        let Some((prefix, list)) = self
            .by_prefix
            .iter()
            .find(|(prefix, _)| name.starts_with(prefix.as_str()))
            .map(|(p, l)| (p.clone(), l.clone()))
        else {
            return Ok(vec![]);
        };
        let mut out = vec![];
        let mut seen: Vec<String> = vec![];
        // The most recent directive for a Func or image wins.
        for p in list.iter().rev() {
            if !name.ends_with(&format!(".{}", p.at)) || seen.contains(&p.name) {
                continue;
            }
            seen.push(p.name.clone());
            self.placed.push((prefix.clone(), p.at.clone(), p.name.clone()));
            let from_var = self
                .loops
                .iter()
                .map(|(l, _)| l.as_str())
                .chain(std::iter::once(name))
                .rev()
                .find(|l| l.starts_with(prefix.as_str()) && l.ends_with(&format!(".{}", p.from)))
                .map(str::to_string);
            // `from` encloses `at` (checked from the loop order), so a
            // `from` loop that is not here ran once and is a let by now
            // (fuzz seed 53588): removed as a prefetch at such a loop is.
            let Some(from_var) = from_var else {
                user_warning(&format!(
                    "Removing prefetch of {} at loop {name}: its 'from' loop {}{} runs once and is no longer a loop where prefetches are placed.",
                    p.name, prefix, p.from
                ));
                continue;
            };
            let lanes;
            let region_of = if for_type == ForType::Vectorized {
                // All lanes, `offset` iterations ahead: of the loop itself
                // when it is the `from` loop, else of the loop inside the
                // shifted `from` iteration.
                let start = if from_var == name { Expr::add(min.clone(), p.offset.clone()) } else { min.clone() };
                lanes = Stmt::for_loop(name, start, extent.clone(), ForType::Serial, body.clone());
                &lanes
            } else {
                body
            };
            if let Some(s) = self.prefetch(name, &from_var, p, region_of)? {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// The prefetch loop nest of one directive, if it touches anything.
    fn prefetch(&self, at: &str, from: &str, p: &PrefetchDirective, body: &Stmt) -> Result<Option<Stmt>> {
        let from_v = Expr::var_i32(from);
        let ahead = Stmt::let_stmt(from, Expr::add(from_v, p.offset.clone()), body.clone());
        let region = box_touched(&ahead, &p.name, &Scope::default());
        let Some(call) = first_call(body, &p.name) else {
            user_warning(&format!(
                "Removing prefetch of {} at loop nest of {at} from location {from} + offset {}) since the prefetched area will always be empty.",
                p.name,
                crate::lang::print::expr_to_string(&p.offset)
            ));
            return Ok(None);
        };
        let Some(region) = region.filter(|r| r.iter().all(|i| i.min.is_some() && i.max.is_some())) else {
            return Ok(None);
        };
        let buffer = self.buffer_box(&p.name, region.len())?;
        let mut mins = vec![];
        let mut maxs = vec![];
        let mut inside = Expr::bool_const(true);
        for (iv, (bmin, bext)) in region.iter().zip(&buffer) {
            let (lo, hi) = (iv.min.clone().expect("checked"), iv.max.clone().expect("checked"));
            let bmax = Expr::sub(Expr::add(bmin.clone(), bext.clone()), Expr::i32(1));
            match p.strategy {
                PrefetchBoundStrategy::Clamp => {
                    mins.push(Expr::max(lo, bmin.clone()));
                    maxs.push(Expr::min(hi, bmax));
                }
                PrefetchBoundStrategy::GuardWithIf => {
                    inside = Expr::and(
                        inside,
                        Expr::and(Expr::ge(lo.clone(), bmin.clone()), Expr::le(hi.clone(), bmax)),
                    );
                    mins.push(lo);
                    maxs.push(hi);
                }
                PrefetchBoundStrategy::NonFaulting => {
                    mins.push(lo);
                    maxs.push(hi);
                }
            }
        }
        let ty = call.ty();
        let step = (CACHE_LINE_BYTES / (ty.bytes() as i64).max(1)).max(1);
        let coord = |d: usize| format!("{at}.prefetch.{}.{d}", p.name);
        let coords: Vec<Expr> = (0..mins.len())
            .map(|d| {
                let v = Expr::var_i32(coord(d));
                if d == 0 {
                    Expr::add(mins[0].clone(), Expr::mul(v, Expr::i32(step)))
                } else {
                    v
                }
            })
            .collect();
        let ExprNode::Call { name, kind, .. } = call.node() else { unreachable!("first_call returns calls") };
        let fetch = Expr::call(ty, name.clone(), coords, kind.clone());
        let mut s = Stmt::evaluate(Expr::intrinsic(Type::i32(), Intrinsic::Prefetch, vec![fetch]));
        for d in 0..mins.len() {
            let extent = simplify(&Expr::add(Expr::sub(maxs[d].clone(), mins[d].clone()), Expr::i32(1)));
            let (min, extent) = if d == 0 {
                // Cache lines covering the extent (rounded up).
                let lines = Expr::div(Expr::add(extent, Expr::i32(step - 1)), Expr::i32(step));
                (Expr::i32(0), simplify(&lines))
            } else {
                (simplify(&mins[d]), extent)
            };
            s = Stmt::for_loop(coord(d), min, Expr::max(extent, Expr::i32(0)), ForType::Serial, s);
        }
        if p.strategy == PrefetchBoundStrategy::GuardWithIf {
            s = Stmt::if_then_else(simplify(&inside), s, None);
        }
        Ok(Some(s))
    }

    /// The box (min, extent per dimension) of the buffer `name` holds.
    fn buffer_box(&self, name: &str, dims: usize) -> Result<Vec<(Expr, Expr)>> {
        if let Some(b) = self.realized.get(name).and_then(|stack| stack.last()) {
            return Ok(b.clone());
        }
        if self.env.funcs.contains_key(name) {
            return Err(Error::user(format!(
                "Prefetch to buffer \"{name}\" which has not been allocated\n"
            )));
        }
        Ok((0..dims)
            .map(|d| (Expr::var_i32(format!("{name}.min.{d}")), Expr::var_i32(format!("{name}.extent.{d}"))))
            .collect())
    }
}

/// The first call of Func or image `name` in `s` (value 0 of a Tuple
/// first): what the prefetch calls, at other coordinates.
fn first_call(s: &Stmt, name: &str) -> Option<Expr> {
    let mut found: Option<Expr> = None;
    for_each_expr_in_stmt(s, &mut |e| {
        if let ExprNode::Call { name: n, kind, .. } = e.node() {
            let index = match kind {
                CallKind::Halide { value_index, .. } => *value_index,
                CallKind::Image { .. } => 0,
                _ => return,
            };
            if n == name && (found.is_none() || index == 0) && e.ty().is_scalar() {
                found = Some(e.clone());
            }
        }
    });
    found
}

impl Mutator for Inject<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        match s.node() {
            StmtNode::For { name, min, extent, for_type, body } => {
                self.loops.push((name.clone(), *for_type));
                let new_body = self.mutate_stmt(body);
                self.loops.pop();
                match self.prefetches_at(name, *for_type, min, extent, &new_body) {
                    Ok(mut pre) if !pre.is_empty() && *for_type == ForType::Vectorized => {
                        pre.push(Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, new_body));
                        Stmt::block(pre)
                    }
                    Ok(mut pre) if !pre.is_empty() => {
                        pre.push(new_body);
                        Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, Stmt::block(pre))
                    }
                    Ok(_) => Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, new_body),
                    Err(e) => {
                        self.error = Some(e);
                        s.clone()
                    }
                }
            }
            StmtNode::Realize { name, bounds, .. } => {
                let b = bounds.iter().map(|r| (r.min.clone(), r.extent.clone())).collect();
                self.realized.entry(name.clone()).or_default().push(b);
                let out = mutate_stmt_children(self, s);
                if let Some(stack) = self.realized.get_mut(name) {
                    stack.pop();
                }
                out
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}
