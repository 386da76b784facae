//! Storage flattening (Halide's StorageFlattening.cpp, with the
//! register-size part of BoundSmallAllocations.cpp).
//!
//! Assumes: bounds inference is done, so every Realize has concrete bounds;
//! an Allocate without extents that already exists is schedule_functions'
//! marker for a hoisted allocation (same name as a Realize inside it);
//! others (storage folding's trackers) are kept as they are.
//! Guarantees: no Realize, Provide or Func/image Calls remain. Each Realize
//! becomes `f.min.d`, `f.extent.d` and `f.stride.d` lets and an Allocate of
//! the product of its extents, dense in the Func's storage order
//! (`reorder_storage`; dimension 0 innermost by default), in the Func's
//! memory type. A Register allocation has constant extents (their upper
//! bounds), or the pipeline is rejected as in Halide. A hoisted Realize
//! gets no Allocate of its own: the marker becomes one, big enough for the
//! largest region the Realize takes inside it. Provides become Stores and
//! calls become Loads, indexed `sum((arg_d - f.min.d) * f.stride.d)`.
//! Output and input buffers use the same names, which the backend defines.
//! A Tuple-valued Func has one buffer per element, `f.0`, `f.1`, ...: a
//! Realize of several types makes one Allocate each, a Provide of several
//! values one Store each, and a call to element `i` loads from `f.i`
//! (a hoisted one, one Allocate per element at the hoist level).
//! An `Atomic` around a Provide keeps its mutex only where stores must
//! happen together (see `flatten_atomic`).

use super::environment::Environment;
use crate::analysis::bounds::{bounds_of_expr, Interval, Scope};
use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute;
use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, MemoryType, Mutator, Range, Stmt, StmtNode, Type};
use crate::lang::tuple::element_buffer_name;

/// The extent of dimension `d` of Func `func`'s hoisted allocation (a ring
/// buffer's layout, the same in every iteration).
fn hoisted_extent_name(func: &str, d: usize) -> String {
    format!("{func}.hoisted_extent.{d}")
}

/// The flat element index of `args` in buffer `name`.
pub fn flat_index(name: &str, args: &[Expr]) -> Expr {
    let mut idx: Option<Expr> = None;
    for (d, a) in args.iter().enumerate() {
        let off = Expr::sub(a.clone(), Expr::var_i32(format!("{name}.min.{d}")));
        let term = Expr::mul(off, Expr::var_i32(format!("{name}.stride.{d}")));
        idx = Some(match idx {
            None => term,
            Some(i) => Expr::add(i, term),
        });
    }
    idx.unwrap_or_else(|| Expr::i32(0))
}

/// The load a call to element `args` of buffer `buffer` becomes.
pub fn buffer_load(ty: Type, buffer: &str, args: &[Expr]) -> Expr {
    Expr::load(ty, buffer.to_string(), flat_index(buffer, args), Expr::bool_const(true))
}

/// A let or loop between the root and the node being flattened.
enum PathEntry {
    Let(String, Expr),
    Loop(String, Expr, Expr),
}

/// A hoisted allocation whose size is being found.
struct Hoisted {
    name: String,
    /// Length of the path at the marker: entries after it are inside.
    depth: usize,
    /// Per dimension, the largest extent of any Realize inside.
    extents: Option<Vec<Expr>>,
}

struct Flatten<'a> {
    env: &'a Environment,
    error: Option<Error>,
    path: Vec<PathEntry>,
    hoisted: Vec<Hoisted>,
}

impl Flatten<'_> {
    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    /// An upper bound of `e` (valid at this point of the path) that holds
    /// for every iteration of the loops after `path[depth]`: innermost
    /// first, substitute the lets (so correlated terms cancel, as in
    /// `max - min + 1`) and take the maximum over the loops. `None` if
    /// unbounded.
    fn upper_bound_over_path(&self, depth: usize, e: &Expr) -> Option<Expr> {
        let mut e = simplify(e);
        for entry in self.path[depth..].iter().rev() {
            match entry {
                PathEntry::Let(n, v) => {
                    if crate::ir::visit::expr_uses_var(&e, n) {
                        e = simplify(&substitute(n, v, &e));
                    }
                }
                PathEntry::Loop(n, min, extent) => {
                    if crate::ir::visit::expr_uses_var(&e, n) {
                        let last = Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::i32(1));
                        let mut scope = Scope::default();
                        scope.insert(n.clone(), Interval::new(Some(min.clone()), Some(last)));
                        e = simplify(&bounds_of_expr(&e, &scope).max?);
                    }
                }
            }
        }
        Some(e)
    }

    /// Register storage must have a constant size: replace each extent by
    /// its constant upper bound (Halide allows one trailing run of unknown
    /// extents only if every later one is 1; the size must still be known).
    fn register_extents(&mut self, name: &str, extents: &[Expr]) -> Option<Vec<Expr>> {
        let mut out = Vec::with_capacity(extents.len());
        let mut found_unknown = false;
        for e in extents {
            let bound = self
                .upper_bound_over_path(0, e)
                .and_then(|b| b.as_int_const().or_else(|| crate::analysis::bounds::constant_upper_bound(&b)));
            if found_unknown && bound != Some(1) {
                self.fail(Error::user(format!(
                    "Was unable to infer constant upper bound on extent of realization {name}. Use Func::bound_extent to specify it manually."
                )));
                return None;
            }
            match bound {
                Some(k) => out.push(Expr::i32(k)),
                None => {
                    found_unknown = true;
                    out.push(e.clone());
                }
            }
        }
        if found_unknown {
            self.fail(Error::user(format!(
                "Allocation {name} has a dynamic size. Only fixed-size allocations can be stored in registers. Try storing on the heap or stack instead."
            )));
            return None;
        }
        Some(out)
    }

    /// Record, in the hoisted allocation of `name`, the extents of one
    /// Realize inside it, as upper bounds valid for the whole hoist level.
    fn record_hoisted(&mut self, name: &str, extents: &[Expr]) {
        let Some(h) = self.hoisted.iter().rposition(|h| h.name == name) else {
            return;
        };
        let depth = self.hoisted[h].depth;
        let mut bounded = Vec::with_capacity(extents.len());
        for e in extents {
            match self.upper_bound_over_path(depth, e) {
                Some(b) => bounded.push(b),
                None => {
                    self.fail(Error::user(format!(
                        "Couldn't infer the upper bound for the storage size of {name}, consider using bound_storage."
                    )));
                    return;
                }
            }
        }
        let h = &mut self.hoisted[h];
        h.extents = Some(match h.extents.take() {
            None => bounded,
            Some(prev) => prev
                .into_iter()
                .zip(bounded)
                .map(|(a, b)| simplify(&Expr::max(a, b)))
                .collect(),
        });
    }

    fn is_ring_buffered(&self, func: &str) -> bool {
        self.env.funcs.get(func).is_some_and(|f| f.read().schedule.ring_buffer.is_some())
    }

    /// The Func's storage order as dimension indices, innermost first.
    fn storage_permutation(&self, name: &str, dims: usize) -> Vec<usize> {
        let Some(f) = self.env.funcs.get(name) else {
            return (0..dims).collect();
        };
        let c = f.read();
        let perm: Vec<usize> = c
            .schedule
            .storage_dims
            .iter()
            .filter_map(|v| c.args.iter().position(|a| a == v))
            .collect();
        if perm.len() == dims {
            perm
        } else {
            (0..dims).collect()
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn flatten_realize(
        &mut self,
        func: &str,
        name: &str,
        ty: Type,
        memory_type: MemoryType,
        bounds: &[Range],
        condition: &Expr,
        body: Stmt,
    ) -> Stmt {
        let mut extents: Vec<Expr> = bounds.iter().map(|r| r.extent.clone()).collect();
        // `bound_storage` fixes a dimension's storage extent (checked to
        // cover the region computed); `align_storage` pads it. The
        // `.extent` lets stay the region's own extents (memoization keys
        // and traces read them): only the allocation and strides change.
        let (storage_bounds, alignments) = self.storage_directives(func, bounds.len());
        let mut checks = vec![];
        let extent_vars: Vec<Expr> = (0..bounds.len())
            .map(|d| Expr::var_i32(format!("{name}.extent.{d}")))
            .collect();
        let mut storage = extent_vars.clone();
        for d in 0..bounds.len() {
            if let Some((var, bound)) = &storage_bounds[d] {
                if simplify(&Expr::gt(extents[d].clone(), bound.clone())).is_const_value(1) {
                    self.fail(Error::user(format!(
                        "Explicit storage bound ({}) for variable {var} of function {func} is smaller than required ({})\n",
                        bound,
                        simplify(&extents[d])
                    )));
                }
                checks.push(Stmt::assert(
                    Expr::le(extent_vars[d].clone(), bound.clone()),
                    super::buffer_checks::error_message(crate::ir::ErrorCode::StorageBoundTooSmall, vec![
                        Expr::string("The explicit allocation bound ("),
                        bound.clone(),
                        Expr::string(format!(") of dimension {var} of {func} is too small to store the required region (")),
                        extent_vars[d].clone(),
                        Expr::string(")."),
                    ]),
                ));
                storage[d] = bound.clone();
            }
            if let Some(a) = &alignments[d] {
                let padded = Expr::add(storage[d].clone(), Expr::sub(a.clone(), Expr::i32(1)));
                storage[d] = Expr::mul(Expr::div(padded, a.clone()), a.clone());
            }
        }
        if memory_type == MemoryType::Register {
            match self.register_extents(name, &extents) {
                Some(e) => extents = e,
                None => return body,
            }
        }
        // A hoisted allocation is marked by the Func's name (its Tuple
        // elements share the region); it is sized by the storage extents.
        let hoisted = self.hoisted.iter().any(|h| h.name == func);
        let mut out = if hoisted {
            let own: std::collections::HashMap<String, Expr> = (0..bounds.len())
                .map(|d| (format!("{name}.extent.{d}"), extents[d].clone()))
                .collect();
            let sizes: Vec<Expr> = storage.iter().map(|e| crate::analysis::substitute::substitute_map(&own, e)).collect();
            self.record_hoisted(func, &sizes);
            if self.is_ring_buffered(func) {
                // Every iteration's slot must sit at the same place: an
                // async producer writes the next iterations' slots while
                // its consumer reads this one (fuzz seed 51875, where the
                // region, and so a per-iteration slot stride, varied). So
                // the layout is the hoisted allocation's, not this region's.
                for (d, s) in storage.iter_mut().enumerate() {
                    *s = Expr::var_i32(hoisted_extent_name(func, d));
                }
            }
            body
        } else {
            Stmt::new(StmtNode::Allocate {
                name: name.to_string(),
                ty,
                memory_type,
                extents: storage.clone(),
                condition: condition.clone(),
                body,
            })
        };
        // Strides: dense, in storage order.
        let perm = self.storage_permutation(func, bounds.len());
        for i in (0..perm.len()).rev() {
            let stride = if i == 0 {
                Expr::i32(1)
            } else {
                let prev = perm[i - 1];
                Expr::mul(
                    Expr::var_i32(format!("{name}.stride.{prev}")),
                    storage[prev].clone(),
                )
            };
            out = Stmt::let_stmt(format!("{name}.stride.{}", perm[i]), stride, out);
        }
        if !checks.is_empty() {
            checks.push(out);
            out = Stmt::block(checks);
        }
        for (d, r) in bounds.iter().enumerate().rev() {
            out = Stmt::let_stmt(format!("{name}.extent.{d}"), extents[d].clone(), out);
            out = Stmt::let_stmt(format!("{name}.min.{d}"), r.min.clone(), out);
        }
        out
    }

    /// Per dimension of `func`'s storage, its `bound_storage` (var and
    /// extent) and `align_storage` alignment.
    #[allow(clippy::type_complexity)]
    fn storage_directives(
        &self,
        func: &str,
        dims: usize,
    ) -> (Vec<Option<(String, Expr)>>, Vec<Option<Expr>>) {
        let mut bounds = vec![None; dims];
        let mut aligns = vec![None; dims];
        if let Some(f) = self.env.funcs.get(func) {
            let c = f.read();
            for (d, arg) in c.args.iter().enumerate().take(dims) {
                let find = |list: &[(String, Expr)]| list.iter().find(|(v, _)| v == arg).map(|(_, e)| e.clone());
                bounds[d] = find(&c.schedule.storage_bounds).map(|e| (arg.clone(), e));
                aligns[d] = find(&c.schedule.storage_alignments);
            }
        }
        (bounds, aligns)
    }
}

impl Mutator for Flatten<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e2 = mutate_expr_children(self, e);
        if let ExprNode::Call { name, args, kind } = e2.node() {
            let buffer = match kind {
                CallKind::Halide { func, value_index } => {
                    element_buffer_name(name, func.outputs(), *value_index)
                }
                CallKind::Image { .. } => name.clone(),
                _ => return e2,
            };
            if args.iter().any(|a| a.ty() != Type::i32()) {
                self.fail(Error::internal(format!("non-Int(32) index into {name}")));
            }
            return buffer_load(e2.ty(), &buffer, args);
        }
        e2
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                let a: Vec<Expr> = args.iter().map(|x| self.mutate_expr(x)).collect();
                let predicate = self.mutate_expr(predicate);
                if values.len() == 1 {
                    let v = self.mutate_expr(&values[0]);
                    return Stmt::store(name.clone(), v, flat_index(name, &a), predicate);
                }
                // A Tuple: one store per element, into its own buffer. Every
                // value is computed before the first store, so a definition
                // that reads the Func it writes (an update) sees old values.
                let n = values.len();
                let buffers: Vec<String> =
                    (0..n).map(|i| element_buffer_name(name, n, i)).collect();
                let stores: Vec<Stmt> = buffers
                    .iter()
                    .zip(values)
                    .map(|(b, v)| {
                        let value = Expr::var(v.ty(), format!("{b}.value"));
                        Stmt::store(b.clone(), value, flat_index(b, &a), predicate.clone())
                    })
                    .collect();
                let mut out = Stmt::block(stores);
                for (b, v) in buffers.iter().zip(values).rev() {
                    out = Stmt::let_stmt(format!("{b}.value"), self.mutate_expr(v), out);
                }
                out
            }
            StmtNode::LetStmt { name, value, body } => {
                let value = self.mutate_expr(value);
                self.path.push(PathEntry::Let(name.clone(), value.clone()));
                let body = self.mutate_stmt(body);
                self.path.pop();
                Stmt::let_stmt(name.clone(), value, body)
            }
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                let (min, extent) = (self.mutate_expr(min), self.mutate_expr(extent));
                self.path
                    .push(PathEntry::Loop(name.clone(), min.clone(), extent.clone()));
                let body = self.mutate_stmt(body);
                self.path.pop();
                Stmt::for_loop(name.clone(), min, extent, *for_type, body)
            }
            // An allocation of its own (storage folding's trackers).
            StmtNode::Allocate { extents, .. } if !extents.is_empty() => {
                mutate_stmt_children(self, s)
            }
            StmtNode::Allocate {
                name,
                ty,
                memory_type,
                body,
                ..
            } => {
                self.hoisted.push(Hoisted {
                    name: name.clone(),
                    depth: self.path.len(),
                    extents: None,
                });
                let body = self.mutate_stmt(body);
                let h = self.hoisted.pop().expect("pushed above");
                let Some(mut extents) = h.extents else {
                    // The Func is computed nowhere: its only consumers were
                    // found dead after the storage was hoisted (fuzz seed
                    // 34850: a Tuple element read only where a select
                    // folds to its other side), so the storage goes too.
                    // A buffer still used without a Realize is a bug.
                    if uses_buffer(&body, name) && self.error.is_none() {
                        self.fail(Error::internal(format!(
                            "hoisted storage of {name} has no Realize inside it"
                        )));
                    }
                    return body;
                };
                // The Realize's extents are in dimension order; the
                // allocation only needs their product.
                if extents.is_empty() {
                    extents.push(Expr::i32(1));
                }
                // One allocation per Tuple element, the first outermost.
                let types = match self.env.funcs.get(name) {
                    Some(f) => f.types(),
                    None => vec![*ty],
                };
                let mut out = body;
                for (i, t) in types.iter().enumerate().rev() {
                    out = Stmt::new(StmtNode::Allocate {
                        name: element_buffer_name(name, types.len(), i),
                        ty: *t,
                        memory_type: *memory_type,
                        extents: extents.clone(),
                        condition: Expr::bool_const(true),
                        body: out,
                    });
                }
                if self.is_ring_buffered(name) {
                    for (d, e) in extents.iter().enumerate().rev() {
                        out = Stmt::let_stmt(hoisted_extent_name(name, d), e.clone(), out);
                    }
                }
                out
            }
            StmtNode::Realize {
                name,
                types,
                memory_type,
                bounds,
                condition,
                body,
            } => {
                let mut out = self.mutate_stmt(body);
                // debug_to_file: written once the realization's uses are done.
                let dump = match self.env.funcs.get(name).map(super::debug_to_file::debug_file) {
                    Some(Ok(file)) => file,
                    Some(Err(e)) => {
                        self.fail(e);
                        None
                    }
                    None => None,
                };
                if let Some(file) = dump {
                    let buffer = element_buffer_name(name, types.len(), 0);
                    let d = super::debug_to_file::dump_allocation(name, &file, &buffer, types[0], bounds.len());
                    out = Stmt::block(vec![out, d]);
                }
                // One allocation per Tuple element (`f.0`, `f.1`, ...), the
                // first outermost, each with its own min/extent/stride names.
                for (i, ty) in types.iter().enumerate().rev() {
                    let buffer = element_buffer_name(name, types.len(), i);
                    out = self.flatten_realize(name, &buffer, *ty, *memory_type, bounds, condition, out);
                }
                out
            }
            StmtNode::Atomic {
                producer_name,
                mutex_name,
                body,
            } => self.flatten_atomic(producer_name, mutex_name, body),
            _ => mutate_stmt_children(self, s),
        }
    }
}

impl Flatten<'_> {
    /// An atomic update (Halide's SplitTuples and RemoveUnnecessaryMutexUse
    /// for Atomic nodes). A single store can be made atomic by itself (a
    /// read-modify-write or a compare-and-swap loop), so it needs no lock.
    /// The elements of a Tuple are grouped into clusters of elements whose
    /// new values read each other at the stored point; when every cluster
    /// is one element, or nothing runs in parallel (no mutex was named),
    /// each cluster gets its own lock-free `Atomic`; otherwise the whole
    /// update holds the mutex of the stored element.
    fn flatten_atomic(&mut self, producer: &str, mutex: &str, body: &Stmt) -> Stmt {
        let StmtNode::Provide {
            name,
            values,
            args,
            predicate,
        } = body.node()
        else {
            let b = self.mutate_stmt(body);
            return Stmt::atomic(producer, mutex, b);
        };
        if values.len() == 1 {
            let b = self.mutate_stmt(body);
            return Stmt::atomic(producer, "", b);
        }
        let n = values.len();
        let clusters = tuple_clusters(name, values, args);
        let a: Vec<Expr> = args.iter().map(|x| self.mutate_expr(x)).collect();
        let predicate = self.mutate_expr(predicate);
        let buffers: Vec<String> = (0..n).map(|i| element_buffer_name(name, n, i)).collect();
        let separate = mutex.is_empty() || clusters.len() == n;
        let mut out = vec![];
        for c in &clusters {
            let stmt = if let [i] = c.as_slice() {
                let v = self.mutate_expr(&values[*i]);
                Stmt::store(buffers[*i].clone(), v, flat_index(&buffers[*i], &a), predicate.clone())
            } else {
                // Every value of the cluster is computed before its first store.
                let stores: Vec<Stmt> = c
                    .iter()
                    .map(|&i| {
                        let b = &buffers[i];
                        let value = Expr::var(values[i].ty(), format!("{b}.value"));
                        Stmt::store(b.clone(), value, flat_index(b, &a), predicate.clone())
                    })
                    .collect();
                let mut st = Stmt::block(stores);
                for &i in c.iter().rev() {
                    let v = self.mutate_expr(&values[i]);
                    st = Stmt::let_stmt(format!("{}.value", buffers[i]), v, st);
                }
                st
            };
            out.push(if separate {
                Stmt::atomic(producer, "", stmt)
            } else {
                stmt
            });
        }
        let block = Stmt::block(out);
        if separate {
            block
        } else {
            Stmt::atomic(producer, mutex, block)
        }
    }
}

/// Clusters (sorted element indices, in order of their first element) of
/// the values of a Tuple-valued Provide to `func` at `args`: two elements
/// are in one cluster when the new value of one reads the other at a point
/// that may be the stored one.
fn tuple_clusters(func: &str, values: &[Expr], args: &[Expr]) -> Vec<Vec<usize>> {
    let n = values.len();
    let reads: Vec<Vec<usize>> = values
        .iter()
        .map(|v| {
            let mut deps = vec![];
            crate::ir::visit::for_each_expr(v, &mut |e| {
                if let ExprNode::Call {
                    name,
                    args: call_args,
                    kind: CallKind::Halide { value_index, .. },
                } = e.node()
                {
                    let elsewhere = call_args.len() == args.len()
                        && call_args.iter().zip(args).any(|(c, p)| {
                            crate::analysis::simplify::can_prove(&Expr::ne(c.clone(), p.clone()))
                        });
                    if name == func && !elsewhere && !deps.contains(value_index) {
                        deps.push(*value_index);
                    }
                }
            });
            deps
        })
        .collect();
    // Union-find over the elements.
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while p[r] != r {
            r = p[r];
        }
        p[i] = r;
        r
    }
    for (i, deps) in reads.iter().enumerate() {
        for &j in deps {
            if j < n {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut clusters: Vec<Vec<usize>> = vec![];
    let mut of_root: Vec<Option<usize>> = vec![None; n];
    for i in 0..n {
        let r = root(&mut parent, i);
        match of_root[r] {
            Some(k) => clusters[k].push(i),
            None => {
                of_root[r] = Some(clusters.len());
                clusters.push(vec![i]);
            }
        }
    }
    clusters
}

pub fn storage_flattening(s: &Stmt, env: &Environment) -> Result<Stmt> {
    let mut f = Flatten {
        env,
        error: None,
        path: vec![],
        hoisted: vec![],
    };
    let out = f.mutate_stmt(s);
    match f.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Whether `s` reads or writes the buffer(s) of Func `name` (any Tuple
/// element's), after flattening.
fn uses_buffer(s: &Stmt, name: &str) -> bool {
    let ours = |n: &str| n == name || n.strip_prefix(name).is_some_and(|rest| rest.starts_with('.'));
    crate::ir::visit::stmt_accesses(s, &ours)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::ir::{ForType, Range, Type};
    use crate::lang::function::Function;
    use crate::lower::vectorize_loops::test_interpreter::{run, Memory};

    /// A two-valued Func `f` (int32, uint8), defined only so calls can name it.
    fn pair() -> Function {
        let f = Function::new("f");
        f.set_pure_definition(
            vec!["x".into()],
            vec![
                Expr::var_i32("x"),
                Expr::cast(Type::uint(8), Expr::var_i32("x")),
            ],
        ).unwrap();
        f
    }

    fn element(f: &Function, i: usize, x: Expr) -> Expr {
        let ty = f.types()[i];
        Expr::call(
            ty,
            "f",
            vec![x],
            CallKind::Halide {
                func: f.ptr(),
                value_index: i,
            },
        )
    }

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    fn serial(body: Stmt) -> Stmt {
        Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), ForType::Serial, body)
    }

    /// `realize f over [0, 4) { body }`, flattened.
    fn flatten_in_realize(f: &Function, body: Stmt) -> Stmt {
        let realize = Stmt::new(StmtNode::Realize {
            name: "f".into(),
            types: f.types(),
            memory_type: Default::default(),
            bounds: vec![Range::new(Expr::i32(0), Expr::i32(4))],
            condition: Expr::bool_const(true),
            body,
        });
        let env = crate::lower::environment::Environment {
            funcs: [("f".to_string(), f.clone())].into_iter().collect(),
            order: vec!["f".into()],
            groups: vec![vec!["f".into()]],
            fused_pairs: vec![],
            sources: vec![],
        };
        storage_flattening(&realize, &env).unwrap()
    }

    fn output_memory() -> (Memory, HashMap<String, i64>) {
        let mem: Memory = [("out".to_string(), vec![0; 4])].into_iter().collect();
        let scalars = [("out.min.0", 0), ("out.stride.0", 1)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        (mem, scalars)
    }

    #[test]
    fn a_multi_value_realization_gets_one_allocation_per_element() {
        let f = pair();
        let produce = serial(Stmt::provide(
            "f",
            vec![
                Expr::mul(x(), Expr::i32(100)),
                Expr::cast(Type::uint(8), Expr::add(x(), Expr::i32(250))),
            ],
            vec![x()],
            Expr::bool_const(true),
        ));
        // out(x) = f(x)[0] + int32(f(x)[1])
        let consume = serial(Stmt::provide(
            "out",
            vec![Expr::add(
                element(&f, 0, x()),
                Expr::cast(Type::i32(), element(&f, 1, x())),
            )],
            vec![x()],
            Expr::bool_const(true),
        ));
        let s = flatten_in_realize(&f, Stmt::block(vec![produce, consume]));
        let text = s.to_string();
        for part in [
            "allocate f.0[int32",
            "allocate f.1[uint8",
            "let f.0.stride.0",
            "let f.1.min.0",
        ] {
            assert!(text.contains(part), "missing `{part}` in\n{text}");
        }
        assert!(!text.contains("allocate f["), "{text}");
        let (mem, scalars) = output_memory();
        let out = run(&s, &mem, &scalars).unwrap();
        // The uint8 element wraps: 250 + x mod 256.
        let want: Vec<i64> = (0..4).map(|x| x * 100 + (250 + x) % 256).collect();
        assert_eq!(out["out"], want);
    }

    #[test]
    fn every_value_is_computed_before_any_element_is_stored() {
        // f(x) = (x, x + 10), then f(x) = (f(x)[1], f(x)[0]) as an update
        // would: the second store must see the first element's old value.
        let f = Function::new("f");
        f.set_pure_definition(vec!["x".into()], vec![x(), x()]).unwrap();
        let init = serial(Stmt::provide(
            "f",
            vec![x(), Expr::add(x(), Expr::i32(10))],
            vec![x()],
            Expr::bool_const(true),
        ));
        let swap = serial(Stmt::provide(
            "f",
            vec![element(&f, 1, x()), element(&f, 0, x())],
            vec![x()],
            Expr::bool_const(true),
        ));
        let read = serial(Stmt::provide(
            "out",
            vec![Expr::sub(
                Expr::mul(element(&f, 0, x()), Expr::i32(100)),
                element(&f, 1, x()),
            )],
            vec![x()],
            Expr::bool_const(true),
        ));
        let s = flatten_in_realize(&f, Stmt::block(vec![init, swap, read]));
        let (mem, scalars) = output_memory();
        let out = run(&s, &mem, &scalars).unwrap();
        let want: Vec<i64> = (0..4).map(|x| (x + 10) * 100 - x).collect();
        assert_eq!(out["out"], want);
    }

    /// The atomic update `f(x) = values` of a three-valued Func, flattened.
    fn flatten_atomic_update(values: impl Fn(&Function) -> Vec<Expr>, mutex: &str) -> String {
        let f = Function::new("f");
        f.set_pure_definition(vec!["x".into()], vec![x(), x(), x()]).unwrap();
        let update = Stmt::atomic(
            "f",
            mutex,
            Stmt::provide("f", values(&f), vec![x()], Expr::bool_const(true)),
        );
        flatten_in_realize(&f, serial(update)).to_string()
    }

    #[test]
    fn atomic_tuple_elements_that_read_each_other_share_a_lock() {
        // element 1 reads element 0 at the stored point; element 2 only itself
        let values = |f: &Function| {
            vec![
                Expr::min(element(f, 0, x()), Expr::i32(3)),
                Expr::select(
                    Expr::lt(element(f, 0, x()), Expr::i32(3)),
                    element(f, 1, x()),
                    x(),
                ),
                Expr::add(element(f, 2, x()), Expr::i32(1)),
            ]
        };
        let text = flatten_atomic_update(values, "f.mutex");
        assert_eq!(text.matches("atomic (").count(), 1, "{text}");
        assert!(text.contains("atomic (f, f.mutex)"), "{text}");
        assert!(text.contains("let f.0.value") && text.contains("let f.1.value"), "{text}");
        // Without parallel loops (no mutex), one lock-free section per cluster.
        let text = flatten_atomic_update(values, "");
        assert_eq!(text.matches("atomic (f) {").count(), 2, "{text}");
        assert!(!text.contains("mutex"), "{text}");
    }

    #[test]
    fn atomic_tuple_elements_that_are_independent_need_no_lock() {
        let values = |f: &Function| {
            vec![
                Expr::add(element(f, 0, x()), Expr::i32(1)),
                Expr::mul(element(f, 1, x()), Expr::i32(2)),
                // reads element 0 elsewhere only
                Expr::add(element(f, 2, x()), element(f, 0, Expr::add(x(), Expr::i32(1)))),
            ]
        };
        let text = flatten_atomic_update(values, "f.mutex");
        assert_eq!(text.matches("atomic (f) {").count(), 3, "{text}");
        assert!(!text.contains("mutex") && !text.contains(".value"), "{text}");
    }

    #[test]
    fn an_atomic_single_value_needs_no_lock() {
        let f = Function::new("f");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        let call = Expr::call(
            Type::i32(),
            "f",
            vec![x()],
            CallKind::Halide {
                func: f.ptr(),
                value_index: 0,
            },
        );
        let update = Stmt::atomic(
            "f",
            "f.mutex",
            Stmt::provide("f", vec![Expr::mul(call, Expr::i32(3))], vec![x()], Expr::bool_const(true)),
        );
        let text = flatten_in_realize(&f, serial(update)).to_string();
        assert!(text.contains("atomic (f) {") && !text.contains("mutex"), "{text}");
    }

    #[test]
    fn single_values_keep_the_plain_name() {
        assert_eq!(element_buffer_name("f", 1, 0), "f");
        assert_eq!(element_buffer_name("f", 3, 2), "f.2");
        let f = Function::new("f");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        let s = flatten_in_realize(
            &f,
            serial(Stmt::provide(
                "f",
                vec![x()],
                vec![x()],
                Expr::bool_const(true),
            )),
        );
        let text = s.to_string();
        assert!(text.contains("allocate f[int32"), "{text}");
        assert!(!text.contains("f.0"), "{text}");
    }
}

