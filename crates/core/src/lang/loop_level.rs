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
//!
//! As in Halide, `compute_with(loop_level)` locks the handle: its value is
//! read once, and a later `set` is an error.

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
    /// Locked by `compute_with`: no more `set`.
    locked: bool,
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
                locked: false,
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
    pub fn set(&self, value: LoopLevel) -> crate::Result<()> {
        let mut c = self.lock();
        if c.locked {
            return Err(crate::Error::user(format!(
                "Cannot call set() on a locked LoopLevel: {}\n",
                raw_name(&c.value)
            )));
        }
        c.value = value.clone();
        // Slots re-scheduled since, and dropped Funcs, are forgotten.
        for (f, slot) in c.live_users(self.id) {
            f.write()
                .schedule
                .set_level(slot, value.clone(), Some(self.id));
        }
        Ok(())
    }

    /// Halide's `lock()`: the value from now on, which must be defined
    /// (the handle stays locked even when it is not, as in Halide).
    pub fn lock_value(&self) -> crate::Result<LoopLevel> {
        let mut c = self.lock();
        c.locked = true;
        if c.value == LoopLevel::Undefined {
            return Err(crate::Error::user(
                "There should be no undefined LoopLevels at the start of lowering. (Did you mean to use LoopLevel::inlined() instead of LoopLevel() ?)",
            ));
        }
        Ok(c.value.clone())
    }

    /// `stage_index()`: Halide only lets locked LoopLevels (the copies
    /// lowering makes) be inspected; a user's handle never is.
    pub fn stage_index(&self) -> crate::Result<usize> {
        let c = self.lock();
        match (&c.value, c.locked) {
            (LoopLevel::At { stage: Some(k), .. }, true) => Ok(*k),
            (value, true) => Err(crate::Error::user(format!(
                "LoopLevel {} names no stage\n",
                raw_name(value)
            ))),
            (value, false) => Err(crate::Error::user(format!(
                "Cannot inspect an unlocked LoopLevel: {}\n",
                raw_name(value)
            ))),
        }
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

/// Halide's `func.var` of a LoopLevel's contents, as its messages print it
/// (no stage; `.__root`, `.__undefined_loop_level_var_name`).
fn raw_name(l: &LoopLevel) -> String {
    match l {
        LoopLevel::Undefined => ".__undefined_loop_level_var_name".into(),
        LoopLevel::Inlined => ".".into(),
        LoopLevel::Root => ".__root".into(),
        LoopLevel::At { func, var, .. } => format!("{func}.{var}"),
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
        h.set(LoopLevel::at("g", "x")).unwrap();
        assert_eq!(f.read().schedule.compute_level, LoopLevel::at("g", "x"));
        assert!(f.version() > v0);
        // A plain compute_root detaches the slot from the handle.
        f.write()
            .schedule
            .set_level(LevelSlot::Compute, LoopLevel::Root, None);
        h.set(LoopLevel::Inlined).unwrap();
        assert_eq!(f.read().schedule.compute_level, LoopLevel::Root);
    }

    #[test]
    fn a_locked_handle_cannot_be_set() {
        let h = LoopLevelHandle::new(LoopLevel::at("g", "y"));
        assert_eq!(h.lock_value().unwrap(), LoopLevel::at("g", "y"));
        let e = h.set(LoopLevel::Root).unwrap_err();
        assert!(e.message.contains("locked LoopLevel: g.y"), "{}", e.message);
        let u = LoopLevelHandle::new(LoopLevel::Undefined);
        assert!(u.lock_value().is_err());
        assert!(u.set(LoopLevel::Root).is_err());
    }
}
