//! `FunctionPtr`: the link from a `Call` of kind `Halide` to the Func it
//! calls, strong or weak (Halide's FunctionPtr).
//!
//! Funcs live in groups (a Func and its wrappers) that are freed together
//! when nothing outside the group links to any of them. A definition that
//! reads its own Func (every update that reads `f`), or a wrapper that calls
//! the Func it wraps, links inside its group: those links are weak, so the
//! group is not kept alive by itself. Every other link is strong and keeps
//! the callee's group alive. The front end sets the strength when it stores
//! a definition (`lang::function`); the IR only carries it.
//!
//! The IR does not know what a Func holds: the target is an opaque
//! `FunctionTarget` whose owner (its group) strong links keep alive.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Weak};

/// What a `FunctionPtr` points at (the front end's Func state).
pub trait FunctionTarget: Any + Send + Sync {
    /// How many values (Tuple elements) the Func has.
    fn outputs(&self) -> usize;
    /// What keeps the target alive: its group, if it is still alive.
    fn owner(&self) -> Option<Arc<dyn Any + Send + Sync>>;
}

#[derive(Clone)]
enum Link {
    /// Keeps `owner` (the callee's group, which owns `target`) alive.
    Strong {
        #[allow(dead_code)] // held, never read: it keeps the target alive
        owner: Arc<dyn Any + Send + Sync>,
        target: Arc<dyn FunctionTarget>,
    },
    /// Valid while something else keeps the group alive.
    Weak(Weak<dyn FunctionTarget>),
}

#[derive(Clone)]
pub struct FunctionPtr(Link);

impl FunctionPtr {
    /// A strong link to `target`, owned by `owner`.
    pub fn strong(
        owner: Arc<dyn Any + Send + Sync>,
        target: Arc<dyn FunctionTarget>,
    ) -> FunctionPtr {
        FunctionPtr(Link::Strong { owner, target })
    }

    /// The same link, weak.
    pub fn weakened(&self) -> FunctionPtr {
        match &self.0 {
            Link::Strong { target, .. } => FunctionPtr(Link::Weak(Arc::downgrade(target))),
            Link::Weak(_) => self.clone(),
        }
    }

    /// The same link, strong; `None` if the target no longer exists.
    pub fn strengthened(&self) -> Option<FunctionPtr> {
        match &self.0 {
            Link::Strong { .. } => Some(self.clone()),
            Link::Weak(w) => {
                let target = w.upgrade()?;
                let owner = target.owner()?;
                Some(FunctionPtr::strong(owner, target))
            }
        }
    }

    pub fn is_weak(&self) -> bool {
        matches!(self.0, Link::Weak(_))
    }

    /// The target, if it still exists.
    pub fn target(&self) -> Option<Arc<dyn FunctionTarget>> {
        match &self.0 {
            Link::Strong { target, .. } => Some(target.clone()),
            Link::Weak(w) => w.upgrade(),
        }
    }

    /// A stable identity (the target's address), valid even for a weak
    /// link whose target is gone (the address is not reused while a weak
    /// link to it exists).
    pub fn id(&self) -> usize {
        match &self.0 {
            Link::Strong { target, .. } => Arc::as_ptr(target) as *const () as usize,
            Link::Weak(w) => Weak::as_ptr(w) as *const () as usize,
        }
    }

    pub fn same_as(&self, other: &FunctionPtr) -> bool {
        self.id() == other.id()
    }

    /// The callee's number of values; 1 if it no longer exists (only an
    /// Expr that outlived its Funcs can see that, when printed).
    pub fn outputs(&self) -> usize {
        self.target().map_or(1, |t| t.outputs())
    }
}

impl fmt::Debug for FunctionPtr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_weak() { "weak" } else { "strong" };
        write!(f, "FunctionPtr({kind} {:#x})", self.id())
    }
}
