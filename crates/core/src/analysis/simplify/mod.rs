//! The simplifier: constant folding, algebraic rewriting and fact-driven
//! proofs over expressions and statements.
//!
//! Structure (after Halide's Simplify_*.cpp, rewritten from scratch):
//! - `Simplifier::mutate` walks an expression bottom-up once; each node is
//!   rebuilt through a per-family constructor (`add.rs`, `sub.rs`, ...) that
//!   receives already-simplified operands.
//! - Facts (`info.rs`): constant bounds and modulus/remainder alignment of
//!   every integer subexpression, computed lazily and memoized per node and
//!   per scope; variables bound by Let/LetStmt/For carry facts in a scope.
//! - Rules (`pattern.rs`): declarative rewrite tables per family. A rule's
//!   right-hand side is instantiated through the same node constructors, so
//!   it is folded and simplified without re-walking its operands.
//! - Signed 32/64-bit integer arithmetic is assumed not to overflow (Halide's
//!   convention); narrower ints and all uints wrap, and rules that depend on
//!   ordering are guarded with `no_overflow`.

// Rule tables are written as algebra over patterns (`x * 0`, `x % 1`, ...),
// which clippy would otherwise read as arithmetic mistakes.
#![allow(clippy::erasing_op, clippy::modulo_one, clippy::identity_op)]


use crate::fast_hash::FastMap;

use crate::ir::{BinOp, Expr, ExprNode, Stmt};

mod add;
mod call;
mod cast;
mod cmp;
mod div_mod;
pub mod fold;
pub mod info;
mod let_;
mod logical;
mod min_max;
mod mul;
pub mod pattern;
mod select;
mod stmt;
mod sub;
#[cfg(test)]
mod test_util;
mod vector;

#[cfg(test)]
pub(crate) mod fuzz_tests;

pub use info::Info;

/// Simplify an expression.
pub fn simplify(e: &Expr) -> Expr {
    Simplifier::new().mutate(e)
}

/// Simplify a statement.
pub fn simplify_stmt(s: &Stmt) -> Stmt {
    Simplifier::new().mutate_stmt(s)
}

/// Simplify `e` knowing that each variable `name` of `ranges` lies in
/// `[min, max]`.
pub fn simplify_in_ranges(e: &Expr, ranges: &[(String, i64, i64)]) -> Expr {
    let mut s = Simplifier::new();
    for (name, min, max) in ranges {
        s.push_var(name, VarFact::Info(Info::bounds(Some(*min), Some(*max))));
    }
    s.mutate(e)
}

/// True only if `e` is provably true for all values of its free variables.
pub fn can_prove(e: &Expr) -> bool {
    simplify(e).is_true()
}

/// What is known about a variable in scope.
#[derive(Clone, Debug)]
pub(crate) enum VarFact {
    /// Bounds/alignment of the variable's value.
    Info(Info),
    /// The variable is replaced by this (already simplified) expression.
    Replace(Expr),
}

/// Guard against runaway rule chains: past this depth of nested node
/// constructions, nodes are built without further rewriting.
const MAX_DEPTH: u32 = 48;

pub struct Simplifier {
    vars: FastMap<String, Vec<VarFact>>,
    /// Identifies the current scope state; memo tables are keyed by it.
    version: u64,
    next_version: u64,
    version_stack: Vec<u64>,
    info_cache: FastMap<(usize, u64), (Expr, Info)>,
    mutate_cache: FastMap<(usize, u64), (Expr, Expr)>,
    /// `provable_order` answers, by the two operands' identities and the scope
    /// state (the operands are kept, so their addresses are not reused).
    /// An answer cut short by `MAX_DEPTH` is kept too: it is only a proof
    /// not found, never a wrong one.
    prove_cache: FastMap<(usize, usize, u64), (Expr, Expr, Option<bool>)>,
    /// Use counts of variables in simplified output, for dead-let removal.
    uses: FastMap<String, usize>,
    /// Memo hits so far. A hit's result is not re-walked for uses, so every
    /// let bound around it counts as possibly used: a let sees whether
    /// this moved while it was bound (`with_binding`).
    memo_hits: u64,
    depth: u32,
    /// Set when constant folding in a non-overflowing type (int32/int64)
    /// overflowed. Code that builds expressions the program never
    /// evaluates (rule right-hand sides, differences used for proofs)
    /// clears it first and discards its result if it got set: a wrapped
    /// constant there is not the exact value the reasoning assumes.
    pub(crate) overflowed: bool,
    /// Inside `clamped_difference_info`: the differences it builds are not
    /// split again, so its cost stays a few rewrites per subtraction
    /// however deeply mins, maxes and lets nest.
    pub(crate) in_clamped_difference: bool,
    /// Per name in scope (parallel to `vars`), the value of a let kept as
    /// a variable, so differences of two such lets can cancel.
    let_values: FastMap<String, Vec<Option<Expr>>>,
    /// `leaf_signature` of each node asked about (the node is kept, so its
    /// address is not reused).
    leaf_signatures: FastMap<usize, (Expr, LeafSignature)>,
    /// The signature of the names that have a let value in scope, when
    /// known (recomputed after a let with a value goes out of scope).
    let_signature: Option<LeafSignature>,
}

/// A 128-bit Bloom filter of the names of the variables, buffers and
/// functions an expression reads (all bits for an opaque call), so that
/// "do these two expressions share a leaf?" costs two cached lookups.
pub(crate) type LeafSignature = u128;

fn name_signature(name: &str) -> LeafSignature {
    use std::hash::BuildHasher;
    let h = std::hash::BuildHasherDefault::<crate::fast_hash::FastHasher>::default()
        .hash_one(name);
    (1u128 << (h % 128)) | (1u128 << ((h >> 32) % 128))
}

impl Default for Simplifier {
    fn default() -> Self {
        Simplifier::new()
    }
}

impl Simplifier {
    pub fn new() -> Simplifier {
        Simplifier {
            vars: FastMap::default(),
            version: 0,
            next_version: 1,
            version_stack: vec![],
            info_cache: FastMap::default(),
            mutate_cache: FastMap::default(),
            prove_cache: FastMap::default(),
            uses: FastMap::default(),
            memo_hits: 0,
            depth: 0,
            overflowed: false,
            in_clamped_difference: false,
            let_values: FastMap::default(),
            leaf_signatures: FastMap::default(),
            let_signature: Some(0),
        }
    }

    // ---- scope -------------------------------------------------------------

    pub(crate) fn push_var(&mut self, name: &str, fact: VarFact) {
        self.vars.entry(name.to_string()).or_default().push(fact);
        self.let_values
            .entry(name.to_string())
            .or_default()
            .push(None);
        self.version_stack.push(self.version);
        self.version = self.next_version;
        self.next_version += 1;
    }

    pub(crate) fn pop_var(&mut self, name: &str) {
        if let Some(v) = self.vars.get_mut(name) {
            v.pop();
            if v.is_empty() {
                self.vars.remove(name);
            }
        }
        if let Some(v) = self.let_values.get_mut(name) {
            if v.pop().flatten().is_some() {
                self.let_signature = None;
            }
            if v.is_empty() {
                self.let_values.remove(name);
            }
        }
        self.version = self.version_stack.pop().unwrap_or(0);
    }

    /// Signature of the names that currently have a let value.
    pub(crate) fn let_signature(&mut self) -> LeafSignature {
        if let Some(s) = self.let_signature {
            return s;
        }
        let s = self
            .let_values
            .iter()
            .filter(|(_, v)| v.last().is_some_and(|x| x.is_some()))
            .fold(0, |s, (name, _)| s | name_signature(name));
        self.let_signature = Some(s);
        s
    }

    /// Signature of the leaves of `e` (see `LeafSignature`), memoized per
    /// node; computed bottom-up on an explicit stack (expressions can nest
    /// deeper than recursion allows).
    pub(crate) fn leaf_signature(&mut self, e: &Expr) -> LeafSignature {
        if let Some((_, s)) = self.leaf_signatures.get(&expr_id(e)) {
            return *s;
        }
        let mut pending: Vec<(&Expr, bool)> = vec![(e, false)];
        while let Some((n, children_done)) = pending.pop() {
            if self.leaf_signatures.contains_key(&expr_id(n)) {
                continue;
            }
            let known = &self.leaf_signatures;
            if !children_done {
                pending.push((n, true));
                crate::ir::visit::for_each_child(n, &mut |c| {
                    if !known.contains_key(&expr_id(c)) {
                        pending.push((c, false));
                    }
                });
                continue;
            }
            let mut s = match n.node() {
                ExprNode::Variable { name, .. } | ExprNode::Load { name, .. } => {
                    name_signature(name)
                }
                ExprNode::Call { .. } => LeafSignature::MAX,
                _ => 0,
            };
            crate::ir::visit::for_each_child(n, &mut |c| {
                s |= known.get(&expr_id(c)).map_or(LeafSignature::MAX, |(_, x)| *x);
            });
            self.leaf_signatures.insert(expr_id(n), (n.clone(), s));
        }
        self.leaf_signatures
            .get(&expr_id(e))
            .map_or(LeafSignature::MAX, |(_, s)| *s)
    }

    /// Record the value of the let most recently pushed as `name`.
    pub(crate) fn set_let_value(&mut self, name: &str, value: Expr) {
        if let Some(top) = self.let_values.get_mut(name).and_then(|v| v.last_mut()) {
            *top = Some(value);
            if let Some(s) = &mut self.let_signature {
                *s |= name_signature(name);
            }
        }
    }

    /// The value of `e`, if it is a variable bound by a let in scope.
    pub(crate) fn let_value(&self, e: &Expr) -> Option<Expr> {
        let name = e.as_variable()?;
        self.let_values.get(name)?.last()?.clone()
    }

    pub(crate) fn var_fact(&self, name: &str) -> Option<&VarFact> {
        self.vars.get(name).and_then(|v| v.last())
    }

    pub(crate) fn count_uses(&mut self, e: &Expr) {
        crate::ir::visit::for_each_expr(e, &mut |x| {
            if let ExprNode::Variable { name, .. } = x.node() {
                count_use(&mut self.uses, name);
            }
        });
    }

    // ---- facts ---------------------------------------------------------------

    /// Bounds and alignment of an integer expression in the current scope.
    pub fn info(&mut self, e: &Expr) -> Info {
        let ty = e.ty();
        if !ty.is_int() && !ty.is_uint() {
            return Info::unknown();
        }
        match e.node() {
            ExprNode::IntImm(v) => return Info::exact(*v),
            ExprNode::UIntImm(v) => {
                return if *v <= i64::MAX as u64 {
                    Info::exact(*v as i64)
                } else {
                    Info::type_range(ty)
                };
            }
            ExprNode::Variable { name, .. } => {
                return match self.var_fact(name).cloned() {
                    Some(VarFact::Info(i)) => Info::intersect(ty, &i, &Info::type_range(ty)),
                    Some(VarFact::Replace(r)) => self.info(&r),
                    None => Info::type_range(ty),
                };
            }
            _ => {}
        }
        let key = (expr_id(e), self.version);
        if let Some((_, i)) = self.info_cache.get(&key) {
            return *i;
        }
        let i = self.compute_info(e);
        self.info_cache.insert(key, (e.clone(), i));
        i
    }

    fn compute_info(&mut self, e: &Expr) -> Info {
        let ty = e.ty();
        let range = Info::type_range(ty);
        match e.node() {
            ExprNode::Binary { op, a, b } => {
                if op.is_comparison() || op.is_logical() {
                    return range;
                }
                let (ia, ib) = (self.info(a), self.info(b));
                match op {
                    BinOp::Add => Info::add(ty, &ia, &ib),
                    BinOp::Sub => {
                        let i = Info::sub(ty, &ia, &ib);
                        match self.let_difference_info(a, b) {
                            Some(d) => Info::intersect(ty, &i, &d),
                            None => i,
                        }
                    }
                    BinOp::Mul => Info::mul(ty, &ia, &ib),
                    BinOp::Div => Info::div(ty, &ia, &ib),
                    BinOp::Mod => Info::modulo(ty, &ia, &ib),
                    BinOp::Min => Info::min(ty, &ia, &ib),
                    BinOp::Max => Info::max(ty, &ia, &ib),
                    _ => range,
                }
            }
            ExprNode::Select { t, f, .. } => {
                let (it, iff) = (self.info(t), self.info(f));
                Info::union(ty, &it, &iff)
            }
            ExprNode::Cast(a) => {
                let st = a.ty();
                if st.is_bool() {
                    return Info::bounds(Some(0), Some(1)).fit(ty);
                }
                if st.is_int() || st.is_uint() {
                    let ia = self.info(a);
                    let fits = |v: Option<i64>| v.is_some_and(|v| ty.can_represent_i64(v));
                    if fits(ia.min) && fits(ia.max) {
                        return ia.fit(ty);
                    }
                    // Widening or same-width reinterpretation keeps low bits: the
                    // alignment survives modulo 2^min(bits).
                    return range;
                }
                range
            }
            ExprNode::Broadcast { value, .. } => {
                let i = self.info(value);
                i.fit(ty)
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => {
                let (ib, is) = (self.info(base), self.info(stride));
                let last = Info::mul(ty.element_of(), &is, &Info::exact(*lanes as i64 - 1));
                let end = Info::add(ty.element_of(), &ib, &last);
                let mut u = Info::union(ty.element_of(), &ib, &end);
                // every lane is base + i*stride
                let m = Info::add(
                    ty.element_of(),
                    &ib,
                    &Info::mul(ty.element_of(), &is, &Info::bounds(None, None)),
                );
                u.modulus = m.modulus;
                u.remainder = m.remainder;
                u.fit(ty)
            }
            ExprNode::Call { .. } => call::call_info(self, e),
            ExprNode::Let { body, .. } => {
                // the bound variable is unknown here; be conservative
                let ib = self.info(body);
                Info::bounds(ib.min, ib.max).fit(ty)
            }
            _ => range,
        }
    }

    // ---- expressions -----------------------------------------------------------

    pub fn mutate(&mut self, e: &Expr) -> Expr {
        let cacheable = !matches!(
            e.node(),
            ExprNode::IntImm(_)
                | ExprNode::UIntImm(_)
                | ExprNode::FloatImm(_)
                | ExprNode::StringImm(_)
                | ExprNode::Variable { .. }
        ) && e.is_shared();
        // (An unshared node is reached again only through a shared
        // ancestor, whose own entry answers first.)
        let key = (expr_id(e), self.version);
        if cacheable {
            if let Some((_, r)) = self.mutate_cache.get(&key) {
                let r = r.clone();
                self.memo_hits += 1;
                return r;
            }
        }
        let r = self.mutate_inner(e);
        if cacheable {
            self.mutate_cache.insert(key, (e.clone(), r.clone()));
        }
        r
    }

    fn mutate_inner(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::IntImm(_)
            | ExprNode::UIntImm(_)
            | ExprNode::FloatImm(_)
            | ExprNode::StringImm(_) => e.clone(),
            ExprNode::Variable { name, .. } => match self.var_fact(name).cloned() {
                Some(VarFact::Replace(r)) => {
                    self.count_uses(&r);
                    r
                }
                // Facts that pin the variable to one value (a loop of one
                // iteration narrowed by an `if`) make it that constant, as
                // in Halide.
                Some(VarFact::Info(i)) if pinned(e.ty(), &i).is_some() => {
                    Expr::make_const_i64(e.ty(), pinned(e.ty(), &i).unwrap_or_default())
                }
                _ => {
                    count_use(&mut self.uses, name);
                    e.clone()
                }
            },
            ExprNode::Cast(a) => {
                let na = self.mutate(a);
                self.simplify_cast(e, e.ty(), na)
            }
            ExprNode::Reinterpret(a) => {
                let na = self.mutate(a);
                if na.same_as(a) {
                    e.clone()
                } else {
                    Expr::reinterpret(e.ty(), na)
                }
            }
            ExprNode::Binary { op, a, b } => {
                let na = self.mutate(a);
                let nb = self.mutate(b);
                let orig = if na.same_as(a) && nb.same_as(b) {
                    Some(e)
                } else {
                    None
                };
                self.bin(*op, na, nb, orig)
            }
            ExprNode::Not(a) => {
                let na = self.mutate(a);
                let orig = if na.same_as(a) { Some(e) } else { None };
                self.not_node(na, orig)
            }
            ExprNode::Select { cond, t, f } => {
                let nc = self.mutate(cond);
                let nt = self.mutate(t);
                let nf = self.mutate(f);
                let orig = if nc.same_as(cond) && nt.same_as(t) && nf.same_as(f) {
                    Some(e)
                } else {
                    None
                };
                self.select_node(nc, nt, nf, orig)
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                let ni = self.mutate(index);
                let np = self.mutate(predicate);
                if ni.same_as(index) && np.same_as(predicate) {
                    e.clone()
                } else {
                    Expr::load(e.ty().with_lanes(ni.lanes()), name.clone(), ni, np)
                }
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => {
                let nb = self.mutate(base);
                let ns = self.mutate(stride);
                let orig = if nb.same_as(base) && ns.same_as(stride) {
                    Some(e)
                } else {
                    None
                };
                self.ramp_node(nb, ns, *lanes, orig)
            }
            ExprNode::Broadcast { value, lanes } => {
                let nv = self.mutate(value);
                let orig = if nv.same_as(value) { Some(e) } else { None };
                self.broadcast_node(nv, *lanes, orig)
            }
            ExprNode::Let { name, value, body } => self.simplify_let(e, name, value, body),
            ExprNode::Call { .. } => self.simplify_call(e),
            ExprNode::Shuffle { .. } | ExprNode::VectorReduce { .. } => {
                crate::ir::visit::mutate_expr_children(&mut MutateAdapter(self), e)
            }
        }
    }

    /// Replace an integer expression whose facts pin it to a single value.
    pub(crate) fn finish(&mut self, e: Expr) -> Expr {
        let ty = e.ty();
        if (ty.is_int() || ty.is_uint()) && !ty.is_bool() && !e.is_const() {
            if let Some(v) = self.info(&e).as_exact() {
                // The exact value of an expression the simplifier built
                // itself may not fit the type; never wrap it.
                if ty.element_of().can_represent_i64(v) {
                    return Expr::make_const_i64(ty, v);
                }
                self.overflowed = true;
            }
        }
        e
    }

    /// Build (and simplify) a binary node from simplified operands.
    pub fn mk_bin(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        self.bin(op, a, b, None)
    }

    fn bin(&mut self, op: BinOp, a: Expr, b: Expr, orig: Option<&Expr>) -> Expr {
        if let Some((c, overflow)) = fold::fold_bin_checked(op, &a, &b) {
            if overflow {
                // As in Halide: the result is a marker that code generation
                // reports as "Signed integer overflow occurred during
                // constant-folding". Speculative callers (rule right-hand
                // sides, proofs) see `overflowed` and discard it.
                self.overflowed = true;
                return fold::signed_integer_overflow(c.ty());
            }
            return c;
        }
        // (After folding: a node folded away is never allocated.)
        let node = match orig {
            Some(o) => o.clone(),
            None => Expr::binary(op, a.clone(), b.clone()),
        };
        if self.depth > MAX_DEPTH {
            return node;
        }
        self.depth += 1;
        let r = if let Some(v) = self.vector_bin(op, &a, &b) {
            Some(v)
        } else {
            match op {
                BinOp::Add => self.simplify_add(&node, &a, &b),
                BinOp::Sub => self.simplify_sub(&node, &a, &b),
                BinOp::Mul => self.simplify_mul(&node, &a, &b),
                BinOp::Div => self.simplify_div(&node, &a, &b),
                BinOp::Mod => self.simplify_mod(&node, &a, &b),
                BinOp::Min | BinOp::Max => self.simplify_min_max(op, &node, &a, &b),
                BinOp::EQ | BinOp::NE | BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE => {
                    self.simplify_cmp(op, &node, &a, &b)
                }
                BinOp::And | BinOp::Or => self.simplify_logical(op, &node, &a, &b),
            }
        };
        self.depth -= 1;
        match r {
            Some(x) => x,
            None => self.finish(node),
        }
    }

    /// Build `a - b` for reasoning about the order of `a` and `b`, and
    /// return its facts. `None` if building it overflowed a constant (the
    /// result would not be the exact difference).
    pub(crate) fn difference_info(&mut self, a: &Expr, b: &Expr) -> Option<Info> {
        let saved = std::mem::replace(&mut self.overflowed, false);
        let d = self.mk_bin(BinOp::Sub, a.clone(), b.clone());
        let i = self.info(&d);
        let bad = self.overflowed;
        self.overflowed = saved;
        if bad {
            None
        } else {
            Some(i)
        }
    }

    pub fn mk_not(&mut self, a: Expr) -> Expr {
        self.not_node(a, None)
    }

    pub fn mk_select(&mut self, c: Expr, t: Expr, f: Expr) -> Expr {
        self.select_node(c, t, f, None)
    }
}

/// Count one use of `name` (without allocating when it is counted already,
/// as the names being tracked always are).
fn count_use(uses: &mut FastMap<String, usize>, name: &str) {
    match uses.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            uses.insert(name.to_string(), 1);
        }
    }
}

/// The one value an integer variable of type `ty` with facts `i` can
/// have, if there is one that the type can represent.
fn pinned(ty: crate::ir::Type, i: &Info) -> Option<i64> {
    let int = (ty.is_int() || ty.is_uint()) && !ty.is_bool();
    let v = i.as_exact().filter(|_| int)?;
    ty.element_of().can_represent_i64(v).then_some(v)
}

/// Identity of an Expr node: the address of its shared allocation. Memo
/// tables keep a clone of the key Expr alive, so addresses are not reused.
pub(crate) fn expr_id(e: &Expr) -> usize {
    e.node() as *const ExprNode as usize
}

/// Lets the generic child mutator call back into the simplifier.
pub(crate) struct MutateAdapter<'a>(pub &'a mut Simplifier);

impl crate::ir::Mutator for MutateAdapter<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        self.0.mutate(e)
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        self.0.mutate_stmt(s)
    }
}
