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
//! A Tuple-valued Func has one buffer per element, each its own cache
//! entry (the key ends with the element's index): the producer runs when
//! any element misses, and then stores every element (an entry already
//! there is replaced by the same values).
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

/// The key words of memoized Func `f` (see the module comment); the
/// region is its first buffer's (all of a Tuple's elements share it).
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
    let name = &crate::lang::tuple::element_buffer_names(f)[0];
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

/// A memoized Func's buffer: the Func, its `memoize()` id, and which of
/// its elements the buffer holds (of how many).
struct MemoBuffer {
    func: Function,
    id: u64,
    element: usize,
    elements: usize,
}

/// The names a memoized buffer's cache lookup binds around its body.
fn key_name(buffer: &str) -> String {
    format!("{buffer}.memoize_key")
}
fn miss_name(buffer: &str) -> String {
    format!("{buffer}.memoize_miss")
}
fn bytes_name(buffer: &str) -> String {
    format!("{buffer}.memoize_bytes")
}

impl Inject<'_> {
    /// The memoized Func whose buffer (or one of whose Tuple elements'
    /// buffers) is `buffer`.
    fn memoized(&self, buffer: &str) -> Option<MemoBuffer> {
        let (func, element) = match self.env.funcs.get(buffer) {
            Some(f) => (f.clone(), 0),
            None => {
                let (name, index) = buffer.rsplit_once('.')?;
                (self.env.funcs.get(name)?.clone(), index.parse().ok()?)
            }
        };
        let id = func.read().schedule.memoized?;
        let elements = func.output_types().len().max(1);
        let names = crate::lang::tuple::element_buffer_names(&func);
        (names.get(element).map(String::as_str) == Some(buffer)).then_some(MemoBuffer { func, id, element, elements })
    }

    /// `produce f` run only when some element of `f` missed the cache,
    /// each element then copied into it (under the eviction key, if any).
    fn guard_producer(&self, func: &Function, id: u64, body: &Stmt) -> Stmt {
        let buffers = crate::lang::tuple::element_buffer_names(func);
        let words = key_words(func, id, self.env).len() + usize::from(buffers.len() > 1);
        let handle = |n: &str| Expr::var(Type::handle(), n);
        let eviction = func.read().schedule.memoize_eviction_key.clone();
        let missed = buffers
            .iter()
            .map(|b| Expr::ne(Expr::var_i32(miss_name(b)), Expr::i32(0)))
            .reduce(Expr::or)
            .expect("a Func has at least one buffer");
        let stores = buffers.iter().map(|b| {
            Stmt::evaluate(Expr::call(
                Type::i32(),
                "halide_memoization_cache_copy_out",
                vec![
                    handle(USER_CONTEXT),
                    handle(&key_name(b)),
                    Expr::i32(8 * words as i64),
                    handle(b),
                    Expr::var(Type::i64(), bytes_name(b)),
                    Expr::i32(eviction.is_some() as i64),
                    eviction.clone().unwrap_or_else(|| Expr::uint_imm(Type::uint(64), 0)),
                ],
                CallKind::Extern,
            ))
        });
        let then = Stmt::block(std::iter::once(body.clone()).chain(stores).collect());
        Stmt::if_then_else(missed, then, None)
    }
}

impl Mutator for Inject<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let StmtNode::Allocate { name, ty, memory_type, extents, condition, body } = s.node() else {
            return s;
        };
        let Some(m) = self.memoized(name) else {
            return s;
        };
        // The outermost of the Func's buffers (the one whose body holds the
        // others) guards its producer: every lookup is in scope there.
        let buffers = crate::lang::tuple::element_buffer_names(&m.func);
        let outermost = buffers.iter().filter(|b| *b != name).all(|b| {
            crate::ir::visit::stmt_contains(
                body,
                &|_| false,
                &|st| matches!(st.node(), StmtNode::Allocate { name: n, .. } if n == b),
            )
        });
        let body = if outermost {
            let func = m.func.name();
            let mut guard = GuardProducer { inject: self, func: &func, func_ref: &m.func, id: m.id };
            guard.mutate_stmt(body)
        } else {
            body.clone()
        };
        self.look_up(name, &m, *ty, *memory_type, extents, condition, &body)
    }
}

/// Wraps `produce func` in the guard of `Inject::guard_producer`.
struct GuardProducer<'a, 'b> {
    inject: &'a Inject<'b>,
    func: &'a str,
    func_ref: &'a Function,
    id: u64,
}

impl Mutator for GuardProducer<'_, '_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::ProducerConsumer { name, is_producer: true, body } if name == self.func => {
                Stmt::producer(name.clone(), self.inject.guard_producer(self.func_ref, self.id, body))
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

impl Inject<'_> {
    /// The allocation of memoized buffer `name`, its body run after a cache
    /// lookup keyed by the Func (and, for a Tuple, the element): `let
    /// name.memoize_miss = copy_in(..)` (0 on a hit, the buffer filled).
    #[allow(clippy::too_many_arguments)]
    fn look_up(
        &self,
        name: &str,
        m: &MemoBuffer,
        ty: Type,
        memory_type: MemoryType,
        extents: &[Expr],
        condition: &Expr,
        body: &Stmt,
    ) -> Stmt {
        let mut words = key_words(&m.func, m.id, self.env);
        if m.elements > 1 {
            words.push(Expr::uint_imm(Type::uint(64), m.element as u64));
        }
        let key = key_name(name);
        let handle = |n: &str| Expr::var(Type::handle(), n);
        let mut bytes = Expr::i64(ty.bytes() as i64 * ty.lanes as i64);
        for e in extents {
            bytes = Expr::mul(bytes, Expr::cast(Type::i64(), e.clone()));
        }
        let copy_in = Expr::call(
            Type::i32(),
            "halide_memoization_cache_copy_in",
            vec![
                handle(USER_CONTEXT),
                handle(&key),
                Expr::i32(8 * words.len() as i64),
                handle(name),
                Expr::var(Type::i64(), bytes_name(name)),
            ],
            CallKind::Extern,
        );
        let body = Stmt::let_stmt(miss_name(name), copy_in, body.clone());
        let fill: Vec<Stmt> = words
            .iter()
            .enumerate()
            .map(|(i, w)| Stmt::store(key.clone(), w.clone(), Expr::i32(i as i64), Expr::bool_const(true)))
            .chain([body])
            .collect();
        let keyed = Stmt::new(StmtNode::Allocate {
            name: key.clone(),
            ty: Type::uint(64),
            memory_type: MemoryType::Stack,
            extents: vec![Expr::i32(words.len() as i64)],
            condition: Expr::bool_const(true),
            body: Stmt::block(fill),
        });
        Stmt::new(StmtNode::Allocate {
            name: name.to_string(),
            ty,
            memory_type,
            extents: extents.to_vec(),
            condition: condition.clone(),
            body: Stmt::let_stmt(bytes_name(name), bytes, keyed),
        })
    }
}

/// Halide's refusal of a memoized computation that reads a buffer or
/// handle parameter (an ImageParam, an extern stage's buffer): the cache
/// key cannot hold its contents, so a new image would find the old
/// results. Reads inside `memoize_tag(e, tags..)` count only through the
/// tags, as in Halide (the user vouches that the tags identify e).
fn check_key_dependencies(f: &Function, env: &Environment) -> Result<()> {
    struct Find<'a> {
        env: &'a Environment,
        stack: Vec<Function>,
        error: Option<Error>,
    }
    impl Find<'_> {
        fn refuse(&mut self, kind: &str, name: &str) {
            self.error.get_or_insert_with(|| {
                Error::user(format!(
                    "{} parameter {name} encountered in computed_cached computation.\nComputations which depend on {kind} parameters cannot be scheduled compute_cached.\nUse memoize_tag to provide cache key information for {kind}.\n",
                    if kind == "buffer" { "Buffer" } else { "Handle" }
                ))
            });
        }
    }
    impl crate::ir::Visitor for Find<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match e.node() {
                // `memoize_tag(e)` alone keys on e's value, which must then
                // not read an image (Halide fails there too, less clearly).
                ExprNode::Call { kind: CallKind::Intrinsic(crate::ir::Intrinsic::MemoizeExpr), args, .. }
                    if args.len() > 1 =>
                {
                    for a in args.iter().skip(1) {
                        self.visit_expr(a);
                    }
                    return;
                }
                ExprNode::Call { kind: CallKind::Image { param: Some(p), .. }, .. } => {
                    self.refuse("buffer", &p.name());
                }
                ExprNode::Call { name, kind: CallKind::Halide { .. }, .. } => {
                    if let Some(g) = self.env.funcs.get(name) {
                        self.stack.push(g.clone());
                    }
                }
                ExprNode::Variable { param: Some(p), .. } if !p.is_buffer() && p.ty().is_handle() => {
                    self.refuse("handle", &p.name());
                }
                _ => {}
            }
            crate::ir::visit::walk_expr(self, e);
        }
    }
    let mut find = Find { env, stack: vec![f.clone()], error: None };
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(g) = find.stack.pop() {
        if !seen.insert(g.name()) {
            continue;
        }
        if let Some(ext) = &g.read().extern_def {
            for a in &ext.args {
                match a {
                    crate::lang::extern_func::ExternFuncArgument::Buffer(b) => find.refuse("buffer", &b.name()),
                    crate::lang::extern_func::ExternFuncArgument::ImageParam(p) => find.refuse("buffer", &p.name()),
                    _ => {}
                }
            }
        }
        for e in g.definition_exprs() {
            crate::ir::Visitor::visit_expr(&mut find, &e);
        }
    }
    find.error.map_or(Ok(()), Err)
}

/// Halide's checks of memoized Funcs: not an output, stored where
/// computed, reading no buffer or handle parameter.
fn check(env: &Environment, outputs: &[Function]) -> Result<()> {
    for o in outputs {
        if o.read().schedule.memoized.is_some() {
            return Err(Error::user(format!(
                "Can't compile Pipeline with memoized output Func: {}. Memoization is valid only on intermediate Funcs because it takes control of buffer allocation.",
                o.name()
            )));
        }
    }
    for name in &env.order {
        let f = env.get(name);
        let c = f.read();
        if c.schedule.memoized.is_none() || c.schedule.compute_level.is_inlined() {
            continue;
        }
        let store = &c.schedule.store_level;
        let hoisted = !matches!(c.schedule.hoist_storage_level, LoopLevel::Inlined);
        if (!store.is_inlined() && *store != c.schedule.compute_level) || hoisted {
            return Err(Error::user(format!(
                "Function {name} cannot be memoized because it has compute and storage scheduled at different loop levels.\n"
            )));
        }
        drop(c);
        check_key_dependencies(&f, env)?;
    }
    Ok(())
}

/// See the module comment.
pub fn inject_memoization(s: &Stmt, env: &Environment, outputs: &[Function]) -> Result<Stmt> {
    check(env, outputs)?;
    Ok(Inject { env }.mutate_stmt(s))
}
