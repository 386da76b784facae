//! `Func.memoize()`: a memoized Func's realization is copied from the
//! runtime's cache when an earlier run computed the same one, and copied
//! into it after being computed otherwise (runtime/c/memoize.c).
//!
//! The cache key holds the `memoize()` call's id, the versions of the Func
//! and of every Func it reads (a definition or schedule changed since is a
//! different computation), its realized region, and the values of every
//! parameter its computation reads (scalar Params and buffer shapes). As in
//! Halide, the contents of input buffers are not part of the key.
//!
//! A Func memoized with an eviction key stores its realizations under the
//! key's value, and `halide_memoization_cache_evict(uc, key)` drops them.
//!
//! Assumes: storage flattening has run, so the Func's allocation is named
//! after it and sits inside the lets of its region (`f.min.d`,
//! `f.extent.d`). Guarantees: the Func's producer runs only on a miss; its
//! consumers see the same values either way.

use std::collections::{BTreeMap, HashSet};

use crate::error::{Error, Result};
use crate::ir::visit::{for_each_expr, mutate_stmt_children, Mutator};
use crate::ir::{CallKind, Expr, ExprNode, MemoryType, Stmt, StmtNode, Type};
use crate::lang::function::Function;
use crate::schedule::LoopLevel;

use super::entry_checks::USER_CONTEXT;
use super::environment::Environment;

/// The Funcs `f` reads, transitively, `f` included.
fn reachable(f: &Function, env: &Environment) -> Vec<Function> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut stack = vec![f.clone()];
    let mut out = vec![];
    while let Some(g) = stack.pop() {
        if !seen.insert(g.name()) {
            continue;
        }
        for e in g.definition_exprs() {
            for_each_expr(&e, &mut |x| {
                if let ExprNode::Call { name, kind: CallKind::Halide { .. }, .. } = x.node() {
                    if let Some(h) = env.funcs.get(name) {
                        stack.push(h.clone());
                    }
                }
            });
        }
        out.push(g);
    }
    out
}

/// `e` as the bits of one 64-bit key word.
fn key_word(e: &Expr) -> Expr {
    let t = e.ty();
    let u64t = Type::uint(64);
    if t.is_float() {
        Expr::cast(u64t, Expr::reinterpret(Type::uint(t.bits), e.clone()))
    } else {
        Expr::cast(u64t, e.clone())
    }
}

/// The key words of memoized Func `f` (see the module comment).
fn key_words(f: &Function, id: u64, env: &Environment) -> Vec<Expr> {
    let u64c = |v: u64| Expr::uint_imm(Type::uint(64), v);
    let mut words = vec![u64c(id)];
    let funcs = reachable(f, env);
    let mut params: BTreeMap<String, Expr> = BTreeMap::new();
    for g in &funcs {
        words.push(u64c(g.version()));
        for e in g.definition_exprs() {
            for_each_expr(&e, &mut |x| {
                if let ExprNode::Variable { name, param: Some(p), .. } = x.node() {
                    if !p.is_buffer() || name.contains(".min.") || name.contains(".extent.") {
                        params.entry(name.clone()).or_insert_with(|| x.clone());
                    }
                }
            });
        }
    }
    let name = f.name();
    for d in 0..f.dimensions() {
        words.push(key_word(&Expr::var_i32(format!("{name}.min.{d}"))));
        words.push(key_word(&Expr::var_i32(format!("{name}.extent.{d}"))));
    }
    words.extend(params.values().filter(|p| !p.ty().is_handle()).map(key_word));
    words
}

struct Inject<'a> {
    env: &'a Environment,
}

impl Inject<'_> {
    fn memoized(&self, name: &str) -> Option<(Function, u64)> {
        let f = self.env.funcs.get(name)?;
        let id = f.read().schedule.memoized?;
        Some((f.clone(), id))
    }
}

impl Mutator for Inject<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let StmtNode::Allocate { name, ty, memory_type, extents, condition, body } = s.node() else {
            return s;
        };
        let Some((f, id)) = self.memoized(name) else {
            return s;
        };
        let words = key_words(&f, id, self.env);
        let key = format!("{name}.memoize_key");
        let hit = format!("{name}.memoize_miss");
        let handle = |n: &str| Expr::var(Type::handle(), n);
        let key_bytes = Expr::i32(8 * words.len() as i64);
        let mut bytes = Expr::i64(ty.bytes() as i64 * ty.lanes as i64);
        for e in extents {
            bytes = Expr::mul(bytes, Expr::cast(Type::i64(), e.clone()));
        }
        let call = |fname: &str, ret: Type| {
            Expr::call(
                ret,
                fname,
                vec![handle(USER_CONTEXT), handle(&key), key_bytes.clone(), handle(name), bytes.clone()],
                CallKind::Extern,
            )
        };
        // The producer runs on a miss, then stores what it made.
        struct OnMiss<'a> {
            func: &'a str,
            miss: Expr,
            store: Stmt,
        }
        impl Mutator for OnMiss<'_> {
            fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
                match s.node() {
                    StmtNode::ProducerConsumer { name, is_producer: true, body } if name == self.func => {
                        let guarded = Stmt::if_then_else(
                            self.miss.clone(),
                            Stmt::block(vec![body.clone(), self.store.clone()]),
                            None,
                        );
                        Stmt::producer(name.clone(), guarded)
                    }
                    _ => mutate_stmt_children(self, s),
                }
            }
        }
        let miss = Expr::ne(Expr::var_i32(&hit), Expr::i32(0));
        // Stored under the eviction key, if the Func has one.
        let eviction = f.read().schedule.memoize_eviction_key.clone();
        let store = match call("halide_memoization_cache_copy_out", Type::i32()).node() {
            ExprNode::Call { name: fname, args, kind } => {
                let mut args = args.clone();
                args.push(Expr::i32(eviction.is_some() as i64));
                args.push(eviction.unwrap_or_else(|| Expr::uint_imm(Type::uint(64), 0)));
                Stmt::evaluate(Expr::call(Type::i32(), fname.clone(), args, kind.clone()))
            }
            _ => unreachable!("call() makes a call"),
        };
        let body = OnMiss { func: name, miss, store }.mutate_stmt(body);
        let body = Stmt::let_stmt(hit, call("halide_memoization_cache_copy_in", Type::i32()), body);
        let fill: Vec<Stmt> = words
            .iter()
            .enumerate()
            .map(|(i, w)| Stmt::store(key.clone(), w.clone(), Expr::i32(i as i64), Expr::bool_const(true)))
            .chain([body])
            .collect();
        let keyed = Stmt::new(StmtNode::Allocate {
            name: key,
            ty: Type::uint(64),
            memory_type: MemoryType::Stack,
            extents: vec![Expr::i32(words.len() as i64)],
            condition: Expr::bool_const(true),
            body: Stmt::block(fill),
        });
        Stmt::new(StmtNode::Allocate {
            name: name.clone(),
            ty: *ty,
            memory_type: *memory_type,
            extents: extents.clone(),
            condition: condition.clone(),
            body: keyed,
        })
    }
}

/// Halide's checks of memoized Funcs: not an output, stored where
/// computed; a Tuple-valued one is not supported yet.
fn check(env: &Environment, outputs: &[Function], pipeline: &str) -> Result<()> {
    for name in &env.order {
        let f = env.get(name);
        let c = f.read();
        if c.schedule.memoized.is_none() || c.schedule.compute_level.is_inlined() {
            continue;
        }
        if outputs.iter().any(|o| o.name() == *name) {
            return Err(Error::user(format!(
                "Function {name} cannot be memoized because it an output of pipeline {pipeline}.\n"
            )));
        }
        let store = &c.schedule.store_level;
        let hoisted = !matches!(c.schedule.hoist_storage_level, LoopLevel::Inlined);
        if (!store.is_inlined() && *store != c.schedule.compute_level) || hoisted {
            return Err(Error::user(format!(
                "Function {name} cannot be memoized because it has compute and storage scheduled at different loop levels.\n"
            )));
        }
        if c.output_types.len() > 1 {
            return Err(Error::user(format!(
                "memoize() of the Tuple-valued Func {name} is not implemented in ferrohalide yet.\n"
            )));
        }
    }
    Ok(())
}

/// See the module comment.
pub fn inject_memoization(s: &Stmt, env: &Environment, outputs: &[Function], pipeline: &str) -> Result<Stmt> {
    check(env, outputs, pipeline)?;
    Ok(Inject { env }.mutate_stmt(s))
}
