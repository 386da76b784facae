//! Storage flattening (Halide's StorageFlattening.cpp, with the
//! register-size part of BoundSmallAllocations.cpp).
//!
//! Assumes: bounds inference is done, so every Realize has concrete bounds;
//! an Allocate that already exists is schedule_functions' marker for a
//! hoisted allocation (no extents, same name as a Realize inside it).
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

use super::environment::Environment;
use crate::analysis::bounds::{bounds_of_expr, Interval, Scope};
use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute;
use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, MemoryType, Mutator, Range, Stmt, StmtNode, Type};

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
                        let mut scope = Scope::new();
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
                .and_then(|b| b.as_int_const());
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

    fn flatten_realize(
        &mut self,
        name: &str,
        ty: Type,
        memory_type: MemoryType,
        bounds: &[Range],
        condition: &Expr,
        body: Stmt,
    ) -> Stmt {
        let mut extents: Vec<Expr> = bounds.iter().map(|r| r.extent.clone()).collect();
        if memory_type == MemoryType::Register {
            match self.register_extents(name, &extents) {
                Some(e) => extents = e,
                None => return body,
            }
        }
        let extent_vars: Vec<Expr> = (0..bounds.len())
            .map(|d| Expr::var_i32(format!("{name}.extent.{d}")))
            .collect();
        let hoisted = self.hoisted.iter().any(|h| h.name == name);
        let mut out = if hoisted {
            self.record_hoisted(name, &extents);
            body
        } else {
            Stmt::new(StmtNode::Allocate {
                name: name.to_string(),
                ty,
                memory_type,
                extents: extent_vars.clone(),
                condition: condition.clone(),
                body,
            })
        };
        // Strides: dense, in storage order.
        let perm = self.storage_permutation(name, bounds.len());
        for i in (0..perm.len()).rev() {
            let stride = if i == 0 {
                Expr::i32(1)
            } else {
                let prev = perm[i - 1];
                Expr::mul(
                    Expr::var_i32(format!("{name}.stride.{prev}")),
                    extent_vars[prev].clone(),
                )
            };
            out = Stmt::let_stmt(format!("{name}.stride.{}", perm[i]), stride, out);
        }
        for (d, r) in bounds.iter().enumerate().rev() {
            out = Stmt::let_stmt(format!("{name}.extent.{d}"), extents[d].clone(), out);
            out = Stmt::let_stmt(format!("{name}.min.{d}"), r.min.clone(), out);
        }
        out
    }
}

impl Mutator for Flatten<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e2 = mutate_expr_children(self, e);
        if let ExprNode::Call {
            name,
            args,
            kind: CallKind::Halide { .. } | CallKind::Image { .. },
        } = e2.node()
        {
            if args.iter().any(|a| a.ty() != Type::i32()) {
                self.fail(Error::internal(format!("non-Int(32) index into {name}")));
            }
            return Expr::load(
                e2.ty(),
                name.clone(),
                flat_index(name, args),
                Expr::bool_const(true),
            );
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
                if values.len() != 1 {
                    self.fail(Error::unimplemented("Tuple-valued Funcs"));
                    return s.clone();
                }
                let v = self.mutate_expr(&values[0]);
                let a: Vec<Expr> = args.iter().map(|x| self.mutate_expr(x)).collect();
                Stmt::store(
                    name.clone(),
                    v,
                    flat_index(name, &a),
                    self.mutate_expr(predicate),
                )
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
                    if self.error.is_none() {
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
                Stmt::new(StmtNode::Allocate {
                    name: name.clone(),
                    ty: *ty,
                    memory_type: *memory_type,
                    extents,
                    condition: Expr::bool_const(true),
                    body,
                })
            }
            StmtNode::Realize {
                name,
                types,
                memory_type,
                bounds,
                condition,
                body,
            } => {
                if types.len() != 1 {
                    self.fail(Error::unimplemented("Tuple-valued Funcs"));
                    return s.clone();
                }
                let body = self.mutate_stmt(body);
                self.flatten_realize(name, types[0], *memory_type, bounds, condition, body)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
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
