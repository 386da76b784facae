//! `Function`: the shared, mutable definition of a Func — its pure
//! definition, output types and schedule. A `Func` handle in the front end
//! and every `Call` to it in the IR point at the same `Function`, so a Func
//! can be referenced before it is defined, and scheduled after.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::ir::visit::mutate_expr_children;
use crate::ir::{CallKind, Expr, ExprNode, Mutator, Type};
use crate::lang::rdom::ReductionDomain;
use crate::schedule::{FuncSchedule, StageSchedule};

#[derive(Debug)]
pub struct FunctionContents {
    pub name: String,
    /// Pure argument names, innermost (dimension 0) first.
    pub args: Vec<String>,
    /// The pure definition's values (one per tuple element); empty if undefined.
    pub values: Vec<Expr>,
    /// Output types; set on definition (or declared up front).
    pub output_types: Vec<Type>,
    pub schedule: FuncSchedule,
    /// Schedule of the pure definition (stage 0).
    pub stage: StageSchedule,
    /// Bumped on every definition or schedule change, to invalidate JIT caches.
    pub version: u64,
    /// Specializations of the pure definition, tried in order before its
    /// default schedule (`stage`).
    pub specializations: Vec<Specialization>,
    /// Wrappers made by `in_`/`clone_in`: (consumer name, wrapper), the
    /// empty name standing for the global wrapper. Several consumers may
    /// share one wrapper. Kept in creation order: a wrapper's name counts the
    /// entries that existed before it, as Halide's does. (An `in_` wrapper
    /// calls this Function, so the two keep each other alive: Halide weakens
    /// one side; here a wrapped Func and its wrappers are simply never freed,
    /// a few small allocations per wrapper.)
    pub wrappers: Vec<(String, Function)>,
    /// Update definitions, in the order they run after the pure one.
    pub updates: Vec<UpdateDefinition>,
    /// Used by another Func's definition or realized: no more updates.
    pub frozen: bool,
}

/// An update definition `f(args) = values`: stage `i + 1` of the Func for
/// `updates[i]`. It runs once per point of `domain` (the RDom whose RVars
/// it mentions, predicate included) and of its pure variables (the args
/// that are the pure arg of their position), and has its own schedule and
/// specializations, like the pure definition.
#[derive(Clone, Debug)]
pub struct UpdateDefinition {
    pub args: Vec<Expr>,
    pub values: Vec<Expr>,
    pub domain: Option<ReductionDomain>,
    pub stage: StageSchedule,
    pub specializations: Vec<Specialization>,
    /// Variables the definition's args, values and domain predicate use
    /// that stand for expressions of its loop variables, in order (each
    /// may use the ones before): the RVars rfactor split away, e.g.
    /// `r$x = ro * 64 + ri`. Lowering defines them inside the loops.
    pub lets: Vec<(String, Expr)>,
}

impl UpdateDefinition {
    /// The names of the args that are the pure var of their position.
    pub fn pure_vars(&self, pure_args: &[String]) -> Vec<String> {
        self.args
            .iter()
            .zip(pure_args)
            .filter_map(|(a, p)| match a.node() {
                ExprNode::Variable {
                    name,
                    param: None,
                    rdom: None,
                } if name == p => Some(name.clone()),
                _ => None,
            })
            .collect()
    }
}

/// One specialization of a definition: when `condition` holds, the
/// definition runs with `stage` (and, recursively, its own
/// specializations) instead of the schedule it was specialized from. Each
/// definition owns its list, so update definitions will carry theirs the
/// same way.
#[derive(Clone, Debug)]
pub struct Specialization {
    pub condition: Expr,
    pub stage: StageSchedule,
    pub specializations: Vec<Specialization>,
    /// Set by `specialize_fail`: reaching this specialization is a run-time
    /// error with this message (its condition is then always true).
    pub failure_message: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Function(Arc<RwLock<FunctionContents>>);

/// Calls to `from` become calls to `to` (named `name`).
struct RedirectSelf<'a> {
    from: &'a Function,
    to: &'a Function,
    name: String,
}

impl Mutator for RedirectSelf<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        match e.node() {
            ExprNode::Call {
                args,
                kind: CallKind::Halide { func, value_index },
                ..
            } if func.same_as(self.from) => Expr::call(
                e.ty(),
                self.name.clone(),
                args.clone(),
                CallKind::Halide {
                    func: self.to.clone(),
                    value_index: *value_index,
                },
            ),
            _ => e,
        }
    }
}

static NEXT_VERSION: AtomicU64 = AtomicU64::new(1);

/// A process-wide counter; any change to any Function takes a fresh value,
/// so a (function, version) pair never repeats.
pub fn next_version() -> u64 {
    NEXT_VERSION.fetch_add(1, Ordering::Relaxed)
}

impl Function {
    pub fn new(name: impl Into<String>) -> Function {
        Function(Arc::new(RwLock::new(FunctionContents {
            name: name.into(),
            args: vec![],
            values: vec![],
            output_types: vec![],
            schedule: FuncSchedule::default(),
            stage: StageSchedule::default(),
            version: next_version(),
            specializations: vec![],
            wrappers: vec![],
            updates: vec![],
            frozen: false,
        })))
    }

    /// A new Function named `name` with a copy of this one's definition,
    /// schedule and specializations (`clone_in`, and lowering's private
    /// copies). Wrappers are not copied: they are keyed by consumer, and a
    /// copy is a different producer.
    pub fn copy_as(&self, name: impl Into<String>) -> Function {
        let c = self.read();
        let copy = Function(Arc::new(RwLock::new(FunctionContents {
            name: name.into(),
            args: c.args.clone(),
            values: c.values.clone(),
            output_types: c.output_types.clone(),
            schedule: c.schedule.clone(),
            stage: c.stage.clone(),
            version: next_version(),
            specializations: c.specializations.clone(),
            wrappers: vec![],
            updates: c.updates.clone(),
            frozen: false,
        })));
        drop(c);
        // An update's references to the Func itself become references to
        // the copy.
        if copy.has_updates() {
            let mut r = RedirectSelf {
                from: self,
                to: &copy,
                name: copy.name(),
            };
            let mut d = copy.0.write().unwrap_or_else(|p| p.into_inner());
            for u in &mut d.updates {
                u.args = u.args.iter().map(|a| r.mutate_expr(a)).collect();
                u.values = u.values.iter().map(|v| r.mutate_expr(v)).collect();
            }
        }
        copy
    }

    /// Define `name(args) = values` directly, with a default schedule. For
    /// definitions the front end builds itself (wrappers), whose arguments
    /// may be implicit vars that user definitions can't name.
    pub fn set_pure_definition(&self, args: Vec<String>, values: Vec<Expr>) {
        let values = crate::lang::func::lower_random_calls(values, &args);
        let mut c = self.write();
        c.output_types = values.iter().map(|v| v.ty()).collect();
        c.values = values;
        c.stage = StageSchedule::for_pure_args(&args);
        c.schedule.storage_dims = args.clone();
        c.args = args;
        c.specializations.clear();
        c.updates.clear();
    }

    pub fn read(&self) -> RwLockReadGuard<'_, FunctionContents> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }
    /// Mutable access; bumps the version so compiled code is recompiled.
    pub fn write(&self) -> RwLockWriteGuard<'_, FunctionContents> {
        let mut g = self.0.write().unwrap_or_else(|p| p.into_inner());
        g.version = next_version();
        g
    }

    pub fn name(&self) -> String {
        self.read().name.clone()
    }
    pub fn args(&self) -> Vec<String> {
        self.read().args.clone()
    }
    pub fn dimensions(&self) -> usize {
        self.read().args.len()
    }
    pub fn outputs(&self) -> usize {
        let c = self.read();
        c.values.len().max(c.output_types.len()).max(1)
    }
    pub fn values(&self) -> Vec<Expr> {
        self.read().values.clone()
    }
    pub fn output_types(&self) -> Vec<Type> {
        self.read().output_types.clone()
    }
    /// The types of the values: declared output types, else the definition's.
    pub fn types(&self) -> Vec<Type> {
        let c = self.read();
        if c.output_types.is_empty() {
            c.values.iter().map(|v| v.ty()).collect()
        } else {
            c.output_types.clone()
        }
    }
    pub fn wrappers(&self) -> Vec<(String, Function)> {
        self.read().wrappers.clone()
    }
    pub fn updates(&self) -> Vec<UpdateDefinition> {
        self.read().updates.clone()
    }
    pub fn has_updates(&self) -> bool {
        !self.read().updates.is_empty()
    }
    /// Every Expr of every definition: pure values, update args and
    /// values, and the bounds and predicates of update domains (where
    /// calls to other Funcs and images can appear).
    pub fn definition_exprs(&self) -> Vec<Expr> {
        let c = self.read();
        let mut out = c.values.clone();
        for u in &c.updates {
            out.extend(u.lets.iter().map(|(_, v)| v.clone()));
            out.extend(u.args.iter().cloned());
            out.extend(u.values.iter().cloned());
            if let Some(d) = &u.domain {
                out.push(d.predicate());
                for v in d.vars() {
                    out.push(v.min);
                    out.push(v.extent);
                }
            }
        }
        out
    }
    /// Mark as used (by another definition or a realization): Halide then
    /// forbids new update definitions. Not a schedule change, so the
    /// version stays.
    pub fn freeze(&self) {
        self.0.write().unwrap_or_else(|p| p.into_inner()).frozen = true;
    }
    pub fn is_frozen(&self) -> bool {
        self.read().frozen
    }
    pub fn has_pure_definition(&self) -> bool {
        !self.read().values.is_empty()
    }
    pub fn version(&self) -> u64 {
        self.read().version
    }
    pub fn same_as(&self, other: &Function) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// A stable identity for hashing (the address of the shared contents).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }
}
