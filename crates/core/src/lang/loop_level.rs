//! `LoopLevel` handles: Halide's LoopLevel is a shared, mutable object. A
//! LoopLevel given to `compute_at` / `store_at` / `hoist_storage` and
//! `set` afterwards changes where the Func goes, up to the moment the
//! pipeline is lowered.
//!
//! Schedules store plain `schedule::LoopLevel` values. A handle remembers
//! the schedule slots it was given to and, on `set`, rewrites those that
//! still come from it (a later `compute_root()` on the Func detaches the
//! slot). Writing through the Func bumps its version, so compiled code is
//! recompiled; lowering never needs to know about handles.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::ir::FunctionPtr;
use crate::lang::function::Function;
use crate::schedule::{LevelSlot, LoopLevel};

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

#[derive(Debug)]
struct HandleContents {
    value: LoopLevel,
    /// The slots taken from this handle, with weak links to their Funcs: a
    /// handle the user keeps (even `LoopLevel.root()` in a module global)
    /// must not keep every Func it was ever given to alive.
    users: Vec<(FunctionPtr, LevelSlot)>,
}

impl HandleContents {
    /// The users still alive whose slot still comes from handle `id`.
    fn live_users(&mut self, id: u64) -> Vec<(Function, LevelSlot)> {
        let live: Vec<(Function, LevelSlot)> = self
            .users
            .iter()
            .filter_map(|(p, slot)| Some((Function::from_ptr(p)?, *slot)))
            .filter(|(f, slot)| f.read().schedule.handle_of(*slot) == Some(id))
            .collect();
        self.users = live.iter().map(|(f, s)| (f.ptr().weakened(), *s)).collect();
        live
    }
}

#[derive(Clone, Debug)]
pub struct LoopLevelHandle {
    id: u64,
    contents: Arc<Mutex<HandleContents>>,
}

impl LoopLevelHandle {
    pub fn new(value: LoopLevel) -> LoopLevelHandle {
        LoopLevelHandle {
            id: NEXT_HANDLE.fetch_add(1, Ordering::Relaxed),
            contents: Arc::new(Mutex::new(HandleContents {
                value,
                users: vec![],
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HandleContents> {
        self.contents.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn get(&self) -> LoopLevel {
        self.lock().value.clone()
    }

    /// `set(other)`: take `value`, and rewrite every schedule slot this
    /// handle still controls.
    pub fn set(&self, value: LoopLevel) {
        let mut c = self.lock();
        c.value = value.clone();
        // Slots re-scheduled since, and dropped Funcs, are forgotten.
        for (f, slot) in c.live_users(self.id) {
            f.write()
                .schedule
                .set_level(slot, value.clone(), Some(self.id));
        }
    }

    /// `stage_index()`: Halide only lets locked LoopLevels (the copies
    /// lowering makes) be inspected; a user's handle never is.
    pub fn stage_index(&self) -> crate::Result<usize> {
        let (func, var) = match self.get() {
            LoopLevel::Undefined => (String::new(), "__undefined_loop_level_var_name".to_string()),
            LoopLevel::Inlined => (String::new(), String::new()),
            LoopLevel::Root => (String::new(), "__root".to_string()),
            LoopLevel::At { func, var, .. } => (func, var),
        };
        Err(crate::Error::user(format!(
            "Cannot inspect an unlocked LoopLevel: {func}.{var}\n"
        )))
    }

    /// Put this handle's current value in `slot` of `f`'s schedule and keep
    /// the slot in sync with later `set`s.
    pub fn attach(&self, f: &Function, slot: LevelSlot) {
        let mut c = self.lock();
        f.write()
            .schedule
            .set_level(slot, c.value.clone(), Some(self.id));
        let live = c.live_users(self.id);
        if !live.iter().any(|(g, s)| g.same_as(f) && *s == slot) {
            c.users.push((f.ptr().weakened(), slot));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_after_attach_rewrites_the_slot_until_detached() {
        let f = Function::new("f_ll_test");
        let h = LoopLevelHandle::new(LoopLevel::Undefined);
        h.attach(&f, LevelSlot::Compute);
        assert_eq!(f.read().schedule.compute_level, LoopLevel::Undefined);
        let v0 = f.version();
        h.set(LoopLevel::at("g", "x"));
        assert_eq!(f.read().schedule.compute_level, LoopLevel::at("g", "x"));
        assert!(f.version() > v0);
        // A plain compute_root detaches the slot from the handle.
        f.write()
            .schedule
            .set_level(LevelSlot::Compute, LoopLevel::Root, None);
        h.set(LoopLevel::Inlined);
        assert_eq!(f.read().schedule.compute_level, LoopLevel::Root);
    }
}
