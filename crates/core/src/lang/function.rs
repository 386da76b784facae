//! `Function`: the shared, mutable definition of a Func — its pure
//! definition, output types and schedule. A `Func` handle in the front end
//! and every `Call` to it in the IR point at the same `Function`, so a Func
//! can be referenced before it is defined, and scheduled after.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::ir::{Expr, Type};
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
}

#[derive(Clone, Debug)]
pub struct Function(Arc<RwLock<FunctionContents>>);

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
        })))
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
