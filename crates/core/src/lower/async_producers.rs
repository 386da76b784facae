//! `Func.async_()`: the producer of an async Func runs on another thread,
//! concurrently with what its consumers do before they need it (Halide's
//! AsyncProducers.cpp). A folded async Func's producer is paced by the
//! folding semaphore storage_folding.rs puts around each iteration: the
//! producer side keeps its acquires, the consumer side its releases.
//!
//! The body of each realization of an async Func `f` is split in two:
//! - the producer side keeps the loops, lets and conditions around
//!   `produce f` and the produce itself, followed by the release of a
//!   semaphore; everything else is dropped, including another Func's
//!   pacing waits around `f`'s production (they pace that Func's producer)
//!   and another async Func's consumer wait whose producer this side
//!   dropped (`f`'s production does not read that Func);
//! - the consumer side drops `produce f` and, in each `consume f`, waits
//!   for the semaphore right before the first statement that reads `f`
//!   (so that work not needing `f`, such as producing other Funcs, runs
//!   meanwhile).
//! The two run as the two iterations of a parallel loop (producer first:
//! the loop's owner claims iteration 0 before anything else, so a waiting
//! consumer's producer is always running, done, or about to run on the
//! owner), or, when the producer of a folded
//! Func also waits for its consumer, of a fork loop (`ForType::Fork`: the
//! runtime runs them at once, on two threads). The semaphore counts
//! productions, so a producer inside loops (storage hoisted out of them)
//! runs ahead of the consumer's iterations. A failed producer makes the
//! waiting consumer give up (runtime `ferrohalide_semaphore_acquire`), and
//! a failed consumer a producer waiting for a folded Func's rows.
//!
//! Ring buffers (`ring_buffer`) are injected first (`inject_ring_buffers`).
//!
//! Assumes: loop nests with realizations, before storage flattening.
//! Guarantees: the same values as without async (the consumer reads `f`
//! only after the productions it waits for). Errors: a producer needing a
//! Func the producer side no longer computes (Halide's message), and async
//! Funcs fused by compute_with (not implemented).

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::ir::visit::stmt_contains;
use crate::ir::{CallKind, Expr, ExprNode, ForType, Intrinsic, Mutator, Stmt, StmtNode, Type};

use super::environment::Environment;

fn semaphore_name(f: &str) -> String {
    format!("{f}.semaphore")
}

fn semaphore(f: &str) -> Expr {
    Expr::var(Type::handle(), semaphore_name(f))
}

fn runtime_call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::call(Type::i32(), name, args, CallKind::Extern)
}

fn is_no_op(s: &Stmt) -> bool {
    match s.node() {
        StmtNode::Evaluate(e) => e.is_const(),
        StmtNode::Block(v) => v.iter().all(is_no_op),
        _ => false,
    }
}

/// Does `s` read or write Func `f` (or its Tuple elements)?
fn touches(s: &Stmt, f: &str) -> bool {
    let elem = format!("{f}.");
    let is_f = |n: &str| n == f || n.starts_with(&elem);
    stmt_contains(
        s,
        &|e| matches!(e.node(), ExprNode::Call { name, kind: CallKind::Halide { .. }, .. } if is_f(name)),
        &|st| matches!(st.node(), StmtNode::Provide { name, .. } if is_f(name)),
    )
}

pub fn fork_async_producers(s: &Stmt, env: &Environment) -> Result<Stmt> {
    let async_funcs: HashSet<String> = env
        .order
        .iter()
        .filter(|n| env.get(n).read().schedule.async_)
        .cloned()
        .collect();
    // Async ring buffers fork at their hoisted storage (as Halide's do),
    // with the slot count: the producer runs up to that many iterations
    // ahead. Not across a parallel loop, whose iterations would produce
    // and consume in any order: those fork per realization.
    let ring_forks: HashMap<String, Expr> = env
        .order
        .iter()
        .filter(|n| async_funcs.contains(*n) && !parallel_inside_hoisted_storage(s, n))
        .filter_map(|n| env.get(n).read().schedule.ring_buffer.clone().map(|e| (n.clone(), e)))
        .collect();
    let s = &inject_ring_buffers(s, env, &ring_forks)?;
    if async_funcs.is_empty() {
        return Ok(s.clone());
    }
    for name in &async_funcs {
        if env.fused_pairs.iter().any(|p| &p.parent == name || &p.child == name) {
            return Err(Error::unimplemented(&format!(
                "async() on {name}, which is fused with another Func by compute_with"
            )));
        }
    }
    for name in ring_forks.keys() {
        if !env.get(name).read().schedule.folds.is_empty() {
            return Err(Error::unimplemented(&format!(
                "fold_storage() together with ring_buffer() on the async Func {name}"
            )));
        }
    }
    // Funcs whose productions are not idempotent: a production that
    // overwrites a point an earlier update changed is not a rewrite of
    // the same value (`pace_repeated_production`).
    let updated: HashSet<String> =
        async_funcs.iter().filter(|n| !env.get(n).read().updates.is_empty()).cloned().collect();
    fork(s, &Forks { async_funcs: &async_funcs, ring_forks: &ring_forks, updated: &updated })
}

/// What `fork` needs to know of the async Funcs.
struct Forks<'a> {
    async_funcs: &'a HashSet<String>,
    /// Async ring buffers, with their slot counts.
    ring_forks: &'a HashMap<String, Expr>,
    /// Async Funcs with update definitions.
    updated: &'a HashSet<String>,
}

/// Is there a parallel loop inside the hoisted storage of `f` (the
/// `Allocate` of its name without extents)?
fn parallel_inside_hoisted_storage(s: &Stmt, f: &str) -> bool {
    stmt_contains(s, &|_| false, &|st| match st.node() {
        StmtNode::Allocate { name, extents, body, .. } if name == f && extents.is_empty() => stmt_contains(
            body,
            &|_| false,
            &|l| matches!(l.node(), StmtNode::For { for_type: ForType::Parallel, .. }),
        ),
        _ => false,
    })
}

/// The semaphore pacing the producer of an async ring buffer `f`: it starts
/// at the number of slots, the producer takes one before each iteration
/// and the consumer gives it back after (Halide's
/// `f.folding_semaphore.ring_buffer`).
pub(super) fn ring_semaphore_name(f: &str) -> String {
    format!("{f}.ring_buffer_semaphore")
}

/// `ring_buffer(extent)`: the storage of `f`, hoisted out of some loops
/// (`hoist_storage`), gets one more dimension of `extent` slots, and each
/// iteration of those loops computes and reads `f` in slot `iteration %
/// extent` (Halide's InjectRingBuffering). Values are those without ring
/// buffering: an iteration reads only its own slot (sliding window, which
/// would read the previous iteration's, is not applied to ring-buffered
/// Funcs). An async ring buffer (`ring_forks`) also waits for a free slot
/// before each realization and frees it after: its fork, at the hoisted
/// storage, lets the producer run up to `extent` iterations ahead.
fn inject_ring_buffers(s: &Stmt, env: &Environment, ring_forks: &HashMap<String, Expr>) -> Result<Stmt> {
    let ringed: Vec<(String, Expr)> = env
        .order
        .iter()
        .filter_map(|n| env.get(n).read().schedule.ring_buffer.clone().map(|e| (n.clone(), e)))
        .collect();
    let mut out = s.clone();
    for (name, extent) in ringed {
        match extent.as_int_const() {
            Some(k) if k > 0 => {}
            _ => {
                return Err(Error::user(format!(
                    "The ring_buffer() extent of {name} must be a positive integer constant, not {}\n",
                    crate::lang::print::expr_to_string(&extent)
                )))
            }
        }
        let mut loops = vec![];
        let mut found = false;
        let paced = ring_forks.contains_key(&name);
        out = ring(&out, &name, &extent, paced, &mut loops, None, &mut found);
        // A Func left with no realization (every read of it folded away)
        // has nothing to ring, whatever its storage levels.
        if !found && stmt_realizes(&out, &name) {
            return Err(Error::user(format!(
                "Func \"{name}\" is scheduled with ring_buffer(), but has matching store_at and hoist_storage levels. Add an explicit hoist_storage directive to the schedule to fix the issue.\n"
            )));
        }
    }
    Ok(out)
}

/// `s` with the ring buffer of `f` injected; `loops` are the loops around
/// `s` and `hoisted_at` how many of them are outside `f`'s hoisted storage.
/// `paced`: `f` is async, so each realization waits for a free slot (the
/// fork, at the hoisted storage, gives the wait to the producer and the
/// release after it to the consumer).
fn ring(
    s: &Stmt,
    f: &str,
    extent: &Expr,
    paced: bool,
    loops: &mut Vec<(String, Expr, Expr)>,
    hoisted_at: Option<usize>,
    found: &mut bool,
) -> Stmt {
    match s.node() {
        StmtNode::Allocate { name, extents, body, .. } if name == f && extents.is_empty() => {
            let b = ring(body, f, extent, paced, loops, Some(loops.len()), found);
            map_children(s, &mut |_| Ok(b.clone())).expect("infallible")
        }
        StmtNode::For { name, min, extent: e, .. } => {
            loops.push((name.clone(), min.clone(), e.clone()));
            let out = map_children(s, &mut |c| Ok(ring(c, f, extent, paced, loops, hoisted_at, found)))
                .expect("infallible");
            loops.pop();
            out
        }
        StmtNode::Realize { name, types, memory_type, bounds, condition, body } if name == f => {
            let Some(first) = hoisted_at else {
                return s.clone();
            };
            *found = true;
            // The iteration number over the loops between the hoisted
            // storage and here, row-major.
            let mut index = Expr::i32(0);
            for (v, min, e) in &loops[first..] {
                index = Expr::add(Expr::mul(index, e.clone()), Expr::sub(Expr::var_i32(v.clone()), min.clone()));
            }
            let slot = Expr::modulo(index, extent.clone());
            let mut bounds = bounds.clone();
            bounds.push(crate::ir::Range::new(Expr::i32(0), extent.clone()));
            let realize = Stmt::new(StmtNode::Realize {
                name: name.clone(),
                types: types.clone(),
                memory_type: *memory_type,
                bounds,
                condition: condition.clone(),
                body: AddSlot { f, slot: &slot }.mutate_stmt(body),
            });
            // A realization whose production was skipped (nothing reads it:
            // `skip_dead_stages`) takes no slot: the producer side, which
            // waits for the slot, has nothing of it, so a release on the
            // consumer side would free a slot never taken and let the
            // producer overwrite one still being read.
            if !paced || !stmt_produces(body, f) {
                return realize;
            }
            paced_by(&ring_semaphore_name(f), Expr::i32(1), realize, Expr::i32(1))
        }
        _ => map_children(s, &mut |c| Ok(ring(c, f, extent, paced, loops, hoisted_at, found))).expect("infallible"),
    }
}

/// Every access of `f` gets the slot as its last coordinate.
struct AddSlot<'a> {
    f: &'a str,
    slot: &'a Expr,
}

impl Mutator for AddSlot<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = crate::ir::visit::mutate_expr_children(self, e);
        if let ExprNode::Call { name, args, kind: kind @ CallKind::Halide { .. } } = e.node() {
            if name == self.f {
                let mut args = args.clone();
                args.push(self.slot.clone());
                return Expr::call(e.ty(), name.clone(), args, kind.clone());
            }
        }
        e
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = crate::ir::visit::mutate_stmt_children(self, s);
        if let StmtNode::Provide { name, values, args, predicate } = s.node() {
            if name == self.f {
                let mut args = args.clone();
                args.push(self.slot.clone());
                return Stmt::new(StmtNode::Provide {
                    name: name.clone(),
                    values: values.clone(),
                    args,
                    predicate: predicate.clone(),
                });
            }
        }
        s
    }
}

/// `s` with every realization of an async Func forked, or, for an async
/// ring buffer (`ring_forks`: its slot count), its hoisted storage.
fn fork(s: &Stmt, forks: &Forks) -> Result<Stmt> {
    let (async_funcs, ring_forks) = (forks.async_funcs, forks.ring_forks);
    let rebuilt = |s: &Stmt| -> Result<Stmt> {
        Ok(match s.node() {
            StmtNode::Allocate { name, extents, body, .. } if extents.is_empty() && ring_forks.contains_key(name) => {
                let mut b = fork(body, forks)?;
                let sema = ring_semaphore_name(name);
                if stmt_produces(&b, name) {
                    // Within a slot, a production inside a loop shares the
                    // slot with the other iterations': paced as any
                    // storage produced more than once.
                    let mut paced = false;
                    b = pace_realizations(name, &b, forks.updated.contains(name), &mut paced);
                    let mut forked = fork_body(name, &b)?;
                    if paced {
                        forked = with_semaphore(&run_ahead_semaphore_name(name), Expr::i32(1), forked);
                    }
                    b = with_semaphore(&sema, ring_forks[name].clone(), forked);
                } else if stmt_reads_var(&b, &sema) {
                    // The production folded away (its only read was in a
                    // branch never taken) but the pacing around it stayed:
                    // it still needs its semaphore (each acquire is released
                    // in the same iteration).
                    b = with_semaphore(&sema, ring_forks[name].clone(), b);
                }
                map_children(s, &mut |_| Ok(b.clone()))?
            }
            StmtNode::Realize { name, types, memory_type, bounds, condition, body } => {
                let mut b = fork(body, forks)?;
                if async_funcs.contains(name) && !ring_forks.contains_key(name) && stmt_produces(&b, name) {
                    match pace_repeated_production(name, &b, forks.updated.contains(name)) {
                        Some(paced) => {
                            b = with_semaphore(&run_ahead_semaphore_name(name), Expr::i32(1), fork_body(name, &paced)?);
                        }
                        None => b = fork_body(name, &b)?,
                    }
                }
                Stmt::new(StmtNode::Realize {
                    name: name.clone(),
                    types: types.clone(),
                    memory_type: *memory_type,
                    bounds: bounds.clone(),
                    condition: condition.clone(),
                    body: b,
                })
            }
            _ => map_children(s, &mut |c| fork(c, forks))?,
        })
    };
    rebuilt(s)
}

/// The semaphore pacing an async Func produced more than once into the same
/// storage (hoisted out of its compute loop, not folded).
fn run_ahead_semaphore_name(f: &str) -> String {
    format!("{f}.run_ahead_semaphore")
}

/// `body` (a realization of the async `f`) with each iteration's
/// production paced, when `f` is produced inside a loop of it: iteration
/// i + 1 produces once iteration i has been consumed. Unpaced, the
/// producer runs ahead into the storage the consumer is still reading,
/// and where successive iterations' regions overlap (a shifted-in tail, an
/// update's scatter) a later production overwrites values an earlier
/// consumer needed (fuzz seed 58561; Halide 21 computes those wrong
/// values). None when nothing needs pacing.
///
/// A folded `f` is already paced by its folding semaphore, which keeps the
/// producer from reusing a slot the consumer still reads; but it counts
/// the regions the consumer requires, not points produced again. When `f`
/// has updates, a production can write a point again that an earlier
/// production's update changed and an earlier consumer has still to read
/// (a ShiftInwards split reaching back below the required region): fuzz
/// seed 82591, `f0[x] = x; f0[x] *= 2` split by 2 ShiftInwards, folded by
/// 2 and read at x + 1, gave [1, 4, 3, 8, ...] for [2, 4, 6, 8, ...]
/// (Halide 21 is wrong when the fold has more slots than the split).
/// Such a Func is paced
/// here too, conservatively: its producer no longer runs more than one
/// iteration ahead. Without updates a point produced again gets the value
/// it had, so the folding semaphore suffices.
fn pace_repeated_production(f: &str, body: &Stmt, has_updates: bool) -> Option<Stmt> {
    let in_loop = stmt_contains(body, &|_| false, &|st| {
        matches!(st.node(), StmtNode::For { body, .. } if stmt_produces(body, f))
    });
    let folded = stmt_reads_var(body, &super::storage_folding::folding_semaphore_name(f));
    if !in_loop || (folded && !has_updates) {
        return None;
    }
    let mut paced = false;
    let out = pace_iterations(f, body, &mut paced);
    paced.then_some(out)
}

/// `s` with the body of each realization of `f` paced by
/// `pace_repeated_production` (the run-ahead semaphore, declared by the
/// caller around the fork, then paces every slot's iterations; it also
/// keeps the producer from starting the next slot before the consumer has
/// read the last iteration of this one: conservative, as for folded Funcs).
fn pace_realizations(f: &str, s: &Stmt, has_updates: bool, paced: &mut bool) -> Stmt {
    match s.node() {
        StmtNode::Realize { name, body, .. } if name == f => match pace_repeated_production(f, body, has_updates) {
            Some(b) => {
                *paced = true;
                map_children(s, &mut |_| Ok(b.clone())).expect("infallible")
            }
            None => s.clone(),
        },
        _ => map_children(s, &mut |c| Ok(pace_realizations(f, c, has_updates, paced))).expect("infallible"),
    }
}

/// `s` with the innermost block holding both `produce f` and `consume f`
/// run under the run-ahead semaphore (`paced_by`).
fn pace_iterations(f: &str, s: &Stmt, paced: &mut bool) -> Stmt {
    if let StmtNode::Block(v) = s.node() {
        let consumes = |x: &Stmt| {
            stmt_contains(x, &|_| false, &|st| {
                matches!(st.node(), StmtNode::ProducerConsumer { name, is_producer: false, .. } if name == f)
            })
        };
        let producer = v.iter().position(|x| stmt_produces(x, f));
        let consumer = v.iter().position(consumes);
        if let (Some(p), Some(c)) = (producer, consumer) {
            if p != c {
                *paced = true;
                return paced_by(&run_ahead_semaphore_name(f), Expr::i32(1), s.clone(), Expr::i32(1));
            }
        }
    }
    map_children(s, &mut |c| Ok(pace_iterations(f, c, paced))).expect("infallible")
}

/// Does `s` read the variable `name`?
fn stmt_reads_var(s: &Stmt, name: &str) -> bool {
    stmt_contains(s, &|e| matches!(e.node(), ExprNode::Variable { name: n, .. } if n == name), &|_| false)
}

/// Does `s` contain `realize f`?
fn stmt_realizes(s: &Stmt, f: &str) -> bool {
    stmt_contains(s, &|_| false, &|st| matches!(st.node(), StmtNode::Realize { name, .. } if name == f))
}

/// Does `s` contain `produce f`?
fn stmt_produces(s: &Stmt, f: &str) -> bool {
    stmt_contains(s, &|_| false, &|st| {
        matches!(st.node(), StmtNode::ProducerConsumer { name, is_producer: true, .. } if name == f)
    })
}

/// The fork of the body of a realization of `f`.
fn fork_body(f: &str, body: &Stmt) -> Result<Stmt> {
    let mut dropped = HashSet::new();
    let producer = producer_side(f, body, &mut dropped)?;
    let consumer = consumer_side(f, body);
    let task = format!("{f}.fork");
    let is_producer = Expr::eq(Expr::var_i32(task.clone()), Expr::i32(0));
    // A producer paced by a folding semaphore waits for its consumer, so
    // the two need threads of their own; otherwise the thread pool may
    // run them one after the other on one thread, which is cheaper.
    let paced = stmt_contains(
        &producer,
        &|e| matches!(e.node(), ExprNode::Variable { name, .. } if is_pacing_semaphore(name, f)),
        &|_| false,
    );
    let forked = Stmt::for_loop(
        task,
        Expr::i32(0),
        Expr::i32(2),
        if paced { ForType::Fork } else { ForType::Parallel },
        Stmt::if_then_else(is_producer, producer, Some(consumer)),
    );
    Ok(with_semaphore(&semaphore_name(f), Expr::i32(0), forked))
}

/// `body` inside the let of a semaphore `name` (eight zero bytes on the
/// stack, its count) that starts at `initial`.
pub(super) fn with_semaphore(name: &str, initial: Expr, body: Stmt) -> Stmt {
    let sema = Expr::var(Type::handle(), name);
    let init = Stmt::evaluate(runtime_call("ferrohalide_semaphore_init", vec![sema, initial]));
    let storage = Expr::intrinsic(Type::handle(), Intrinsic::MakeStruct, vec![Expr::uint_imm(Type::uint(64), 0)]);
    Stmt::let_stmt(name, storage, Stmt::block(vec![init, body]))
}

/// `s` paced by semaphore `name`: it runs once `acquire` is taken from the
/// semaphore (not at all if a task around failed), and `release` is given
/// back after it. The fork gives the wait to the producer side and the
/// release to the consumer side (`is_pacing_acquire`).
pub(super) fn paced_by(name: &str, acquire: Expr, s: Stmt, release: Expr) -> Stmt {
    let sema = Expr::var(Type::handle(), name);
    let taken = Expr::eq(
        runtime_call("ferrohalide_semaphore_acquire", vec![sema.clone(), acquire]),
        Expr::i32(0),
    );
    Stmt::block(vec![
        Stmt::if_then_else(taken, s, None),
        Stmt::evaluate(runtime_call("ferrohalide_semaphore_release", vec![sema, release])),
    ])
}

/// Is `name` a semaphore pacing the producer of `f` (a folded Func's or a
/// ring buffer's)?
fn is_pacing_semaphore(name: &str, f: &str) -> bool {
    pacing_semaphore_owner(name) == Some(f)
}

/// The Func a pacing semaphore (folding, ring buffer or run-ahead) belongs
/// to, from its name; None for any other semaphore.
fn pacing_semaphore_owner(name: &str) -> Option<&str> {
    [
        super::storage_folding::folding_semaphore_name(""),
        ring_semaphore_name(""),
        run_ahead_semaphore_name(""),
    ]
    .iter()
    .find_map(|suffix| name.strip_suffix(suffix.as_str()))
}

/// The producer side: the statements around `produce f` and the produce,
/// followed by a release; `dropped` collects the Funcs whose produce was
/// dropped on the way.
fn producer_side(f: &str, s: &Stmt, dropped: &mut HashSet<String>) -> Result<Stmt> {
    match s.node() {
        StmtNode::ProducerConsumer { name, is_producer: true, body } if name == f => {
            if let Some(g) = dropped.iter().find(|g| touches(body, g)) {
                return Err(Error::user(format!(
                    "The Func {g} is consumed by async Func {f} and has a compute_at location in between the store_at location and the compute_at location of {f}. This is only legal when {g} is both async and has a store_at location outside the store_at location of the consumer.\n"
                )));
            }
            let release = Stmt::evaluate(runtime_call("ferrohalide_semaphore_release", vec![semaphore(f), Expr::i32(1)]));
            Ok(Stmt::block(vec![s.clone(), release]))
        }
        StmtNode::ProducerConsumer { name, is_producer, body } => {
            if *is_producer {
                dropped.insert(name.clone());
            }
            let b = producer_side(f, body, dropped)?;
            Ok(if is_no_op(&b) || *is_producer { b } else { Stmt::consumer(name.clone(), b) })
        }
        StmtNode::Block(v) => {
            let parts = v
                .iter()
                .map(|x| producer_side(f, x, dropped))
                .collect::<Result<Vec<_>>>()?
                .into_iter()
                .filter(|x| !is_no_op(x))
                .collect::<Vec<_>>();
            Ok(if parts.is_empty() { Stmt::no_op() } else { Stmt::block(parts) })
        }
        // Another Func's pacing (a wait for a free slot of its ring buffer
        // or rows of its fold) paces that Func's producer, whose production
        // this one is nested in: `f`'s producer keeps what is inside. (Its
        // own copy of that semaphore would never be released: fuzz seed
        // 57820, two nested async ring buffers, hung.)
        StmtNode::IfThenElse { condition, then_case, else_case: None } if paces_another_func(condition, f) => {
            producer_side(f, then_case, dropped)
        }
        // The consumer's wait for another async Func g, whose fork (inside
        // `f`'s realization) is nested around `f`'s production: this side
        // dropped g's producer, so nothing here would release it (fuzz seed
        // 73232 hung). `f`'s production does not read g (checked at
        // `produce f`), so it needs no wait. (Halide refuses this nesting:
        // "The Func g is consumed by async Func f and has a compute_at
        // location in between ...".)
        StmtNode::IfThenElse { condition, then_case, else_case: None }
            if waits_for_dropped_func(condition, f, dropped) =>
        {
            producer_side(f, then_case, dropped)
        }
        StmtNode::LetStmt { .. }
        | StmtNode::For { .. }
        | StmtNode::IfThenElse { .. }
        | StmtNode::Realize { .. }
        | StmtNode::Allocate { .. } => {
            if !stmt_produces(s, f) {
                return Ok(Stmt::no_op());
            }
            map_children(s, &mut |c| producer_side(f, c, dropped))
        }
        _ => Ok(Stmt::no_op()),
    }
}

/// The consumer side: no `produce f`, and a wait before `f` is first read
/// in each `consume f`.
fn consumer_side(f: &str, s: &Stmt) -> Stmt {
    match s.node() {
        StmtNode::ProducerConsumer { name, is_producer: true, .. } if name == f => Stmt::no_op(),
        // The producer's wait for free rows of a folded `f`.
        StmtNode::IfThenElse { condition, then_case, else_case: None } if is_pacing_acquire(condition, f) => {
            consumer_side(f, then_case)
        }
        StmtNode::ProducerConsumer { name, is_producer: false, body } if name == f => {
            Stmt::consumer(name.clone(), wait_before_use(f, body))
        }
        _ => map_children(s, &mut |c| Ok(consumer_side(f, c))).expect("infallible"),
    }
}

/// `s` with the wait for `f`'s semaphore put right before the first
/// statement that reads `f` (descending through blocks and the wrappers
/// whose own expressions do not read it).
fn wait_before_use(f: &str, s: &Stmt) -> Stmt {
    let wait = || {
        // The statements after the wait run only if the producer did not fail.
        let acquired = Expr::eq(
            runtime_call("ferrohalide_semaphore_acquire", vec![semaphore(f), Expr::i32(1)]),
            Expr::i32(0),
        );
        move |rest: Stmt| Stmt::if_then_else(acquired, rest, None)
    };
    if !touches(s, f) {
        // Nothing reads it here: still wait, so each production is consumed.
        return wait()(s.clone());
    }
    match s.node() {
        StmtNode::Block(v) => {
            let i = v.iter().position(|x| touches(x, f)).unwrap_or(0);
            let mut parts: Vec<Stmt> = v[..i].to_vec();
            if i + 1 == v.len() {
                parts.push(wait_before_use(f, &v[i]));
            } else {
                // The wait guards everything from the first use on.
                parts.push(wait()(Stmt::block(v[i..].to_vec())));
            }
            Stmt::block(parts)
        }
        StmtNode::LetStmt { name, value, body } if !expr_reads(value, f) => {
            Stmt::let_stmt(name.clone(), value.clone(), wait_before_use(f, body))
        }
        StmtNode::Realize { bounds, condition, .. }
            if !expr_reads(condition, f)
                && !bounds.iter().any(|r| expr_reads(&r.min, f) || expr_reads(&r.extent, f)) =>
        {
            map_children(s, &mut |c| Ok(wait_before_use(f, c))).expect("infallible")
        }
        StmtNode::ProducerConsumer { name, is_producer, body } => {
            Stmt::new(StmtNode::ProducerConsumer {
                name: name.clone(),
                is_producer: *is_producer,
                body: wait_before_use(f, body),
            })
        }
        _ => wait()(s.clone()),
    }
}

/// Is `cond` the producer's wait for free rows of the folded async Func
/// `f` (storage_folding.rs) or for a free slot of its ring buffer? The
/// producer keeps it; its consumer keeps the matching releases (the
/// producer side drops every statement that does not produce `f`).
fn is_pacing_acquire(cond: &Expr, f: &str) -> bool {
    acquired_semaphore(cond).is_some_and(|name| is_pacing_semaphore(name, f))
}

/// Is `cond` the consumer's wait for the production of a Func other than
/// `f` whose producer the producer side of `f` dropped?
fn waits_for_dropped_func(cond: &Expr, f: &str, dropped: &HashSet<String>) -> bool {
    acquired_semaphore(cond)
        .and_then(|name| name.strip_suffix(semaphore_name("").as_str()))
        .is_some_and(|g| g != f && dropped.contains(g))
}

/// Is `cond` such a wait of a Func other than `f`?
fn paces_another_func(cond: &Expr, f: &str) -> bool {
    acquired_semaphore(cond)
        .and_then(pacing_semaphore_owner)
        .is_some_and(|owner| owner != f)
}

/// The semaphore `cond` (`ferrohalide_semaphore_acquire(s, n) == 0`)
/// acquires.
fn acquired_semaphore(cond: &Expr) -> Option<&str> {
    let ExprNode::Binary { a, .. } = cond.node() else {
        return None;
    };
    let ExprNode::Call { name, args, .. } = a.node() else {
        return None;
    };
    if name != "ferrohalide_semaphore_acquire" {
        return None;
    }
    match args.first().map(|x| x.node()) {
        Some(ExprNode::Variable { name, .. }) => Some(name.as_str()),
        _ => None,
    }
}

fn expr_reads(e: &Expr, f: &str) -> bool {
    touches(&Stmt::evaluate(e.clone()), f)
}

/// `s` with each child statement replaced by `m(child)`.
fn map_children(s: &Stmt, m: &mut dyn FnMut(&Stmt) -> Result<Stmt>) -> Result<Stmt> {
    Ok(match s.node() {
        StmtNode::LetStmt { name, value, body } => Stmt::let_stmt(name.clone(), value.clone(), m(body)?),
        StmtNode::ProducerConsumer { name, is_producer, body } => Stmt::new(StmtNode::ProducerConsumer {
            name: name.clone(),
            is_producer: *is_producer,
            body: m(body)?,
        }),
        StmtNode::For { name, min, extent, for_type, body } => {
            Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, m(body)?)
        }
        StmtNode::Block(v) => Stmt::block(v.iter().map(&mut *m).collect::<Result<Vec<_>>>()?),
        StmtNode::IfThenElse { condition, then_case, else_case } => Stmt::if_then_else(
            condition.clone(),
            m(then_case)?,
            else_case.as_ref().map(&mut *m).transpose()?,
        ),
        StmtNode::Realize { name, types, memory_type, bounds, condition, body } => Stmt::new(StmtNode::Realize {
            name: name.clone(),
            types: types.clone(),
            memory_type: *memory_type,
            bounds: bounds.clone(),
            condition: condition.clone(),
            body: m(body)?,
        }),
        StmtNode::Allocate { name, ty, memory_type, extents, condition, body } => Stmt::new(StmtNode::Allocate {
            name: name.clone(),
            ty: *ty,
            memory_type: *memory_type,
            extents: extents.clone(),
            condition: condition.clone(),
            body: m(body)?,
        }),
        StmtNode::Atomic { producer_name, mutex_name, body } => Stmt::new(StmtNode::Atomic {
            producer_name: producer_name.clone(),
            mutex_name: mutex_name.clone(),
            body: m(body)?,
        }),
        _ => s.clone(),
    })
}
