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
//! region and goes before the loop. Where the directives apply comes from
//! the placeholders the loop nests were built with
//! (`schedule_functions`): each sits in its `at` loop's body, so a
//! specialization's branch carries only its own directives (a
//! specialization copies the schedule when it is made, as in Halide).
//! A loop that ran once is a let by now; its placeholders, still where its
//! body began, are placed there, over the statements after them (Halide
//! keeps its Prefetch node there too). Every placeholder is removed.

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
    let mut any = false;
    for name in &env.order {
        for (_, stage) in env.get(name).stage_schedules() {
            for p in &stage.prefetches {
                any = true;
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
            }
        }
    }
    if !any {
        return Ok(s.clone());
    }
    let mut inject = Inject { pending: vec![], loops: vec![], realized: HashMap::new(), env, error: None };
    let out = inject.mutate_stmt(s);
    match inject.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// A prefetch directive, to be placed at its `at` loop, named `at_loop`,
/// from the loop (or, once it runs once, the let) named `from_loop`.
struct Placeholder {
    at_loop: String,
    from_loop: String,
    directive: PrefetchDirective,
}

const STRATEGIES: [PrefetchBoundStrategy; 3] =
    [PrefetchBoundStrategy::Clamp, PrefetchBoundStrategy::GuardWithIf, PrefetchBoundStrategy::NonFaulting];

/// The placeholder of directive `d`, to go at the top of the body of its
/// `at` loop, named `at_loop`; `from_loop` names its `from` loop.
pub fn placeholder(at_loop: &str, from_loop: &str, d: &PrefetchDirective) -> Stmt {
    let strategy = STRATEGIES.iter().position(|s| *s == d.strategy).unwrap_or(0);
    let args = vec![
        Expr::string(at_loop),
        Expr::string(from_loop),
        Expr::string(d.name.clone()),
        Expr::string(d.at.clone()),
        Expr::string(d.from.clone()),
        d.offset.clone(),
        Expr::i32(strategy as i64),
    ];
    Stmt::evaluate(Expr::intrinsic(Type::i32(), Intrinsic::PrefetchPlaceholder, args))
}

/// The directive a placeholder statement holds, if `s` is one.
fn parse_placeholder(s: &Stmt) -> Option<Placeholder> {
    let StmtNode::Evaluate(e) = s.node() else { return None };
    let args = e.as_intrinsic(Intrinsic::PrefetchPlaceholder)?;
    let text = |i: usize| match args.get(i).map(|a| a.node()) {
        Some(ExprNode::StringImm(t)) => Some(t.clone()),
        _ => None,
    };
    let strategy = *STRATEGIES.get(usize::try_from(args.get(6)?.as_int_const()?).ok()?)?;
    Some(Placeholder {
        at_loop: text(0)?,
        from_loop: text(1)?,
        directive: PrefetchDirective {
            name: text(2)?,
            at: text(3)?,
            from: text(4)?,
            offset: args.get(5)?.clone(),
            strategy,
        },
    })
}

/// The placeholders that open `s` (a block starting with them) and the
/// rest of it: a pass that wraps a loop's body keeps them first.
pub fn split_leading_placeholders(s: &Stmt) -> (Vec<Stmt>, Stmt) {
    let StmtNode::Block(v) = s.node() else { return (vec![], s.clone()) };
    let n = v.iter().take_while(|c| parse_placeholder(c).is_some()).count();
    if n == 0 {
        return (vec![], s.clone());
    }
    (v[..n].to_vec(), Stmt::block(v[n..].to_vec()))
}

/// Halide's error for a prefetch whose `from` loop does not enclose its
/// `at` loop.
fn from_not_active(from: &str) -> Error {
    Error::user(format!(
        "Prefetch 'from' variable '{from}' could not be found in an active loop. (Are the 'at' and 'from' variables swapped?)\n"
    ))
}

struct Inject<'a> {
    /// The placeholders met inside the loops being visited, waiting for
    /// their loop, in program order.
    pending: Vec<Placeholder>,
    /// The enclosing loops, outermost first.
    loops: Vec<(String, ForType)>,
    /// Each Func realized around this point: its box (min, extent) per dim.
    realized: HashMap<String, Vec<Vec<(Expr, Expr)>>>,
    env: &'a Environment,
    error: Option<Error>,
}

impl Inject<'_> {
    /// The prefetches of the placeholders `here` of loop `name` (with the
    /// already mutated `body`; `vectorized`: the loop's `min` and `extent`
    /// when it is a vectorized loop, whose iterations run as one: its
    /// prefetches cover every lane's region and go before the loop, as
    /// Halide's, which its vectorizer scalarizes lane by lane). A loop that
    /// ran once is a let by now: its placeholders are placed where they
    /// are, with the statements after them as `body`.
    fn prefetches_at(
        &mut self,
        here: &[Placeholder],
        name: &str,
        vectorized: Option<(&Expr, &Expr)>,
        body: &Stmt,
    ) -> Result<Vec<Stmt>> {
        let mut out = vec![];
        let mut seen: Vec<&str> = vec![];
        // The most recent directive for a Func or image wins.
        for Placeholder { from_loop, directive: p, .. } in here.iter().rev() {
            if seen.contains(&p.name.as_str()) {
                continue;
            }
            seen.push(&p.name);
            let lanes;
            let region_of = if let Some((min, extent)) = vectorized {
                // All lanes, `offset` iterations ahead: of the loop itself
                // when it is the `from` loop, else of the loop inside the
                // shifted `from` iteration.
                let start = if from_loop == name { Expr::add(min.clone(), p.offset.clone()) } else { min.clone() };
                lanes = Stmt::for_loop(name, start, extent.clone(), ForType::Serial, body.clone());
                &lanes
            } else {
                body
            };
            if let Some(s) = self.prefetch(name, from_loop, p, region_of)? {
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

impl Inject<'_> {
    /// Is the loop `name` one of those around this point?
    fn inside(&self, name: &str) -> bool {
        self.loops.iter().any(|(l, _)| l == name)
    }

    /// Placeholders whose loop is gone, placed where they are, before the
    /// (mutated) statements `after` them.
    fn place_here(&mut self, orphans: &[Placeholder], after: Stmt) -> Stmt {
        let Some(last) = orphans.last() else { return after };
        let at = last.at_loop.clone();
        match self.prefetches_at(orphans, &at, None, &after) {
            Ok(mut pre) if !pre.is_empty() => {
                pre.push(after);
                Stmt::block(pre)
            }
            Ok(_) => after,
            Err(e) => {
                self.error = Some(e);
                after
            }
        }
    }
}

impl Mutator for Inject<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        match s.node() {
            StmtNode::For { name, min, extent, for_type, body } => {
                self.loops.push((name.clone(), *for_type));
                let first = self.pending.len();
                let new_body = self.mutate_stmt(body);
                self.loops.pop();
                let (here, rest): (Vec<Placeholder>, Vec<Placeholder>) =
                    self.pending.drain(first..).partition(|m| m.at_loop == *name);
                self.pending.extend(rest);
                let vectorized = (*for_type == ForType::Vectorized).then_some((min, extent));
                match self.prefetches_at(&here, name, vectorized, &new_body) {
                    Ok(mut pre) if !pre.is_empty() && vectorized.is_some() => {
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
            StmtNode::Block(children) => {
                // A run of placeholders waits for its loop, or, if the loop
                // is gone (it ran once, and is a let now), covers the rest
                // of the block.
                let mut out = vec![];
                let mut i = 0;
                while i < children.len() {
                    let run = children[i..].iter().take_while(|c| parse_placeholder(c).is_some()).count();
                    if run == 0 {
                        out.push(self.mutate_stmt(&children[i]));
                        i += 1;
                        continue;
                    }
                    let (waiting, orphans): (Vec<Placeholder>, Vec<Placeholder>) = children[i..i + run]
                        .iter()
                        .filter_map(parse_placeholder)
                        .partition(|m| self.inside(&m.at_loop));
                    self.pending.extend(waiting);
                    i += run;
                    if !orphans.is_empty() {
                        let after = self.mutate_stmt(&Stmt::block(children[i..].to_vec()));
                        out.push(self.place_here(&orphans, after));
                        break;
                    }
                }
                Stmt::block(out)
            }
            StmtNode::Evaluate(_) => match parse_placeholder(s) {
                Some(m) if self.inside(&m.at_loop) => {
                    self.pending.push(m);
                    Stmt::no_op()
                }
                Some(m) => self.place_here(&[m], Stmt::no_op()),
                None => s.clone(),
            },
            _ => mutate_stmt_children(self, s),
        }
    }
}
