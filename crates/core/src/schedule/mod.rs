//! Schedules are data: what the user asked for with `split`, `reorder`,
//! `compute_root`, ... recorded per Func and per stage, and read by the
//! lowering passes. Nothing here generates code.

use crate::ir::{Expr, ForType, MemoryType};

/// How a split handles extents that are not a multiple of the factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TailStrategy {
    RoundUp,
    GuardWithIf,
    Predicate,
    PredicateLoads,
    PredicateStores,
    ShiftInwards,
    ShiftInwardsAndBlend,
    RoundUpAndBlend,
    Auto,
}

/// Where a Func is computed or stored (Halide's LoopLevel, as a value).
///
/// A user's `hl.LoopLevel` is a mutable handle (`lang::loop_level`) whose
/// current value is written into every schedule slot it was given to, so
/// schedules hold plain values and lowering never sees a handle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopLevel {
    /// `LoopLevel()`: a placeholder that must be `set` before lowering.
    Undefined,
    Inlined,
    Root,
    /// Inside the loop over `var` of Func `func`. `stage` is Halide's
    /// stage index: `None` (Halide's -1) means "whichever stage has the
    /// loop"; an explicit index only matches loops of that stage.
    At {
        func: String,
        var: String,
        stage: Option<usize>,
    },
}

impl LoopLevel {
    pub fn at(func: impl Into<String>, var: impl Into<String>) -> LoopLevel {
        LoopLevel::At {
            func: func.into(),
            var: var.into(),
            stage: None,
        }
    }
    pub fn is_inlined(&self) -> bool {
        matches!(self, LoopLevel::Inlined)
    }
    pub fn is_root(&self) -> bool {
        matches!(self, LoopLevel::Root)
    }
    /// The loop name this level refers to in the lowered IR
    /// (`func.s0.var`), or `None` for root/inlined. Split products keep
    /// their qualified names in the IR (`func.s0.x.xo`), so use `matches_loop`
    /// to find the loop.
    pub fn loop_name(&self) -> Option<String> {
        match self {
            LoopLevel::At { func, var, stage } => {
                Some(format!("{func}.s{}.{var}", stage.unwrap_or(0)))
            }
            _ => None,
        }
    }
    /// Halide's `LoopLevel::match(string)`: is `loop` (a lowered loop name,
    /// `func.sN.dims...var`) the loop this level designates?
    pub fn matches_loop(&self, loop_name: &str) -> bool {
        let LoopLevel::At { func, var, stage } = self else {
            return false;
        };
        let prefix = match stage {
            None => format!("{func}."),
            Some(k) => format!("{func}.s{k}."),
        };
        loop_name.starts_with(&prefix) && loop_name.ends_with(&format!(".{var}"))
    }
    /// Halide's `LoopLevel::match(LoopLevel)`: the same Func and stage, and
    /// var names equal or one a dotted suffix of the other (`x.xo` ~ `xo`).
    pub fn matches(&self, other: &LoopLevel) -> bool {
        match (self, other) {
            (LoopLevel::Inlined, LoopLevel::Inlined) | (LoopLevel::Root, LoopLevel::Root) => true,
            (
                LoopLevel::At {
                    func: f1,
                    var: v1,
                    stage: s1,
                },
                LoopLevel::At {
                    func: f2,
                    var: v2,
                    stage: s2,
                },
            ) => {
                f1 == f2
                    && s1 == s2
                    && (v1 == v2
                        || v1.ends_with(&format!(".{v2}"))
                        || v2.ends_with(&format!(".{v1}")))
            }
            _ => false,
        }
    }
    /// Halide's `LoopLevel::to_string` (`func.var`, or `func.sN.var` with an
    /// explicit stage); used in messages.
    pub fn describe(&self) -> String {
        match self {
            LoopLevel::Undefined => ".__undefined_loop_level_var_name".into(),
            LoopLevel::Inlined => ".".into(),
            LoopLevel::Root => ".__root".into(),
            LoopLevel::At {
                func,
                var,
                stage: None,
            } => format!("{func}.{var}"),
            LoopLevel::At {
                func,
                var,
                stage: Some(k),
            } => format!("{func}.s{k}.{var}"),
        }
    }
}

/// The three placement slots of a Func's schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelSlot {
    Compute,
    Store,
    HoistStorage,
}

/// One split, fuse or rename of loop dimensions, in the order issued.
#[derive(Clone, Debug)]
pub enum Split {
    /// `old` becomes `outer * factor + inner`.
    Split {
        old: String,
        outer: String,
        inner: String,
        factor: Expr,
        tail: TailStrategy,
    },
    /// `inner` and `outer` become one loop `fused`.
    Fuse {
        inner: String,
        outer: String,
        fused: String,
    },
    Rename {
        old: String,
        new: String,
    },
}

/// A loop in a stage's loop nest. `dims` lists them innermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    pub var: String,
    pub for_type: ForType,
    pub is_rvar: bool,
    /// Whether loop partitioning may, must or must not split this loop.
    pub partition: Partition,
    /// Set by the GPU directives and `hexagon()`: the loop runs on a device.
    pub device: Option<DeviceLoop>,
}

/// Halide's GPU loop types (`ForType::GPUBlock`, `GPUThread`, `GPULane`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuLoop {
    Block,
    Thread,
    Lane,
}

impl GpuLoop {
    /// As Halide's loop nest printout names the loop.
    pub fn name(self) -> &'static str {
        match self {
            GpuLoop::Block => "gpu_block",
            GpuLoop::Thread => "gpu_thread",
            GpuLoop::Lane => "gpu_lane",
        }
    }
}

/// A loop scheduled on a device: its GPU loop type (none for `hexagon()`,
/// which only moves the loop) and the device API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLoop {
    pub gpu: Option<GpuLoop>,
    pub api: crate::device_api::DeviceApi,
}

impl Dim {
    /// A serial loop over `var` with the default partition policy.
    pub fn serial(var: impl Into<String>, is_rvar: bool) -> Dim {
        Dim {
            var: var.into(),
            for_type: ForType::Serial,
            is_rvar,
            partition: Partition::Auto,
            device: None,
        }
    }
}

/// Halide's loop partition policy (`hl.Partition`, same values): `Auto`
/// partitions where the partitioner finds it worthwhile, `Never` leaves the
/// loop whole, `Always` partitions it even inside another loop's prologue
/// or epilogue, and fails compilation when nothing can be partitioned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Partition {
    #[default]
    Auto = 0,
    Never = 1,
    Always = 2,
}

impl Partition {
    pub fn name(self) -> &'static str {
        match self {
            Partition::Auto => "Auto",
            Partition::Never => "Never",
            Partition::Always => "Always",
        }
    }
}

/// How the loops of a stage computed with another (`compute_with`) line
/// up with the loops they are fused into, per fused dimension (Halide's
/// LoopAlignStrategy, same values). `Auto` is `NoAlign`, as in Halide 21.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoopAlignStrategy {
    /// The stage's first iteration runs with the parent's first.
    AlignStart = 0,
    /// The stage's last iteration runs with the parent's last.
    AlignEnd = 1,
    /// The stage's iteration `v` runs in the fused loop's iteration `v`.
    NoAlign = 2,
    Auto = 3,
}

/// `compute_with(stage, var, align)`: this stage's loops from `var` out
/// are fused with the same loops of another stage (Halide's
/// FuseLoopLevel). `level` is `At { func, var, stage }` (a LoopLevel the
/// user built may leave the stage unnamed; lowering then refuses it);
/// `align` maps dimension names to strategies, unnamed ones get `Auto`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuseLevel {
    pub level: LoopLevel,
    pub align: Vec<(String, LoopAlignStrategy)>,
}

/// The name of the implicit outermost loop every stage has (extent 1);
/// compute_at it to mean "once per realization of the consumer stage".
pub const OUTERMOST: &str = "__outermost";

/// Per-stage schedule: the loop nest shape.
#[derive(Clone, Debug, Default)]
pub struct StageSchedule {
    pub splits: Vec<Split>,
    pub dims: Vec<Dim>,
    /// A loop directive was applied (`unscheduled()` then fails).
    pub touched: bool,
    /// `atomic()`: parallel / vectorized RVars are allowed if the update
    /// is proven associative and commutative...
    pub atomic: bool,
    /// ...or without the proof (`atomic(true)`).
    pub override_atomic_check: bool,
    /// `allow_race_conditions()`: no race checks at all.
    pub allow_race_conditions: bool,
    /// `compute_with`: the stage whose loops this one shares (kept on the
    /// definition itself, never on a specialization).
    pub fuse_level: Option<FuseLevel>,
    /// `prefetch(...)` directives, in the order given (the last one for a
    /// given Func or image wins at a loop, as in Halide).
    pub prefetches: Vec<PrefetchDirective>,
}

/// How `prefetch` treats the part of the prefetched region outside the
/// buffer (Halide's `PrefetchBoundStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefetchBoundStrategy {
    /// Prefetch only the part inside the buffer.
    Clamp,
    /// Prefetch nothing unless the whole region is inside.
    GuardWithIf,
    /// Prefetch it all (prefetch instructions never fault).
    NonFaulting,
}

/// `stage.prefetch(name, at, from, offset, strategy)`: at the top of each
/// iteration of loop `at`, prefetch the region of `name` (a Func or an
/// image) that iteration `from + offset` of loop `from` touches.
#[derive(Clone, Debug)]
pub struct PrefetchDirective {
    pub name: String,
    pub at: String,
    pub from: String,
    pub offset: Expr,
    pub strategy: PrefetchBoundStrategy,
}

impl StageSchedule {
    /// The split factors and prefetch offsets.
    pub fn exprs(&self) -> Vec<Expr> {
        self.splits
            .iter()
            .filter_map(|s| match s {
                Split::Split { factor, .. } => Some(factor.clone()),
                _ => None,
            })
            .chain(self.prefetches.iter().map(|p| p.offset.clone()))
            .collect()
    }
    /// The default schedule for pure args `args` (args[0] innermost).
    pub fn for_pure_args(args: &[String]) -> StageSchedule {
        let mut dims: Vec<Dim> = args
            .iter()
            .map(|a| Dim::serial(a.clone(), false))
            .collect();
        dims.push(Dim::serial(OUTERMOST, false));
        StageSchedule {
            splits: vec![],
            dims,
            ..StageSchedule::default()
        }
    }
}

/// A user-given bound on a pure dimension: `bound(x, min, extent)` and
/// `bound_extent(x, extent)` set `min`/`extent`; `align_bounds(x, modulus,
/// remainder)` and `align_extent(x, modulus)` set `modulus`/`remainder`.
/// Kept in the order issued: bounds inference applies them last to first,
/// so the first one issued has the final say (as in Halide).
#[derive(Clone, Debug)]
pub struct Bound {
    pub var: String,
    pub min: Option<Expr>,
    pub extent: Option<Expr>,
    pub modulus: Option<Expr>,
    pub remainder: Option<Expr>,
}

/// A user-given storage fold (`f.fold_storage(var, factor, fold_forward)`):
/// dimension `var` is stored modulo `factor`.
#[derive(Clone, Debug)]
pub struct StorageFold {
    pub var: String,
    pub factor: Expr,
    pub fold_forward: bool,
}

/// Per-Func schedule: placement and storage.
#[derive(Clone, Debug)]
pub struct FuncSchedule {
    pub compute_level: LoopLevel,
    /// `Inlined` means "wherever it is computed" (resolved at lowering).
    pub store_level: LoopLevel,
    pub bounds: Vec<Bound>,
    /// `fold_storage` requests, by pure dimension.
    pub folds: Vec<StorageFold>,
    /// Storage order, innermost first (defaults to the pure args).
    pub storage_dims: Vec<String>,
    pub memory_type: MemoryType,
    /// Where the allocation is made, if further out than `store_level`
    /// (`hoist_storage`); `Inlined` means "at the store level".
    pub hoist_storage_level: LoopLevel,
    /// For each slot set from a user `hl.LoopLevel`, that handle's id: a
    /// later `set` on the handle rewrites the slot only while it still
    /// holds this id.
    pub level_handles: [Option<u64>; 3],
    /// `memoize()`: a process-unique id its cache keys start with (a new
    /// one per call, so a Func memoized again never sees older entries).
    pub memoized: Option<u64>,
    /// `bound_storage(var, extent)`: the storage of `var` has this extent
    /// whatever region is computed (checked when the pipeline runs).
    pub storage_bounds: Vec<(String, Expr)>,
    /// `align_storage(var, alignment)`: the storage extent of `var` is
    /// padded up to a multiple of `alignment` (so the strides of the
    /// dimensions outside it are multiples of it).
    pub storage_alignments: Vec<(String, Expr)>,
    /// `copy_to_host` / `copy_to_device(api)`: the Func is a copy of the
    /// one Func or image it calls, made on `api` (Halide makes it an extern
    /// `halide_buffer_copy` stage). On the host the copy is its definition.
    pub copy_to_device: Option<crate::device_api::DeviceApi>,
    /// `memoize(EvictionKey(e))`: the UInt(64) value `e` the cached
    /// realizations are stored under, so that
    /// `halide_memoization_cache_evict(uc, key)` can drop them.
    pub memoize_eviction_key: Option<Expr>,
    /// `debug_to_file(name)`: the realization is written to this file
    /// after its last use (storage flattening adds the runtime call).
    pub debug_file: Option<String>,
    /// `async_()`: produced on another thread (lower/async_producers.rs).
    pub async_: bool,
    /// `ring_buffer(extent)` (not implemented: lowering refuses it).
    pub ring_buffer: Option<Expr>,
}

impl Default for FuncSchedule {
    fn default() -> Self {
        FuncSchedule {
            compute_level: LoopLevel::Inlined,
            store_level: LoopLevel::Inlined,
            bounds: vec![],
            folds: vec![],
            storage_dims: vec![],
            memory_type: MemoryType::Auto,
            hoist_storage_level: LoopLevel::Inlined,
            level_handles: [None; 3],
            memoized: None,
            copy_to_device: None,
            memoize_eviction_key: None,
            debug_file: None,
            async_: false,
            ring_buffer: None,
            storage_bounds: vec![],
            storage_alignments: vec![],
        }
    }
}

impl FuncSchedule {
    /// The bounds' and storage folds' Exprs.
    pub fn exprs(&self) -> Vec<Expr> {
        let bounds = self.bounds.iter().flat_map(|b| {
            [&b.min, &b.extent, &b.modulus, &b.remainder]
                .into_iter()
                .flatten()
                .cloned()
        });
        bounds
            .chain(self.folds.iter().map(|f| f.factor.clone()))
            .chain(self.storage_bounds.iter().map(|(_, e)| e.clone()))
            .chain(self.storage_alignments.iter().map(|(_, e)| e.clone()))
            .chain(self.memoize_eviction_key.iter().cloned())
            .collect()
    }
    pub fn level(&self, slot: LevelSlot) -> &LoopLevel {
        match slot {
            LevelSlot::Compute => &self.compute_level,
            LevelSlot::Store => &self.store_level,
            LevelSlot::HoistStorage => &self.hoist_storage_level,
        }
    }
    pub fn level_mut(&mut self, slot: LevelSlot) -> &mut LoopLevel {
        match slot {
            LevelSlot::Compute => &mut self.compute_level,
            LevelSlot::Store => &mut self.store_level,
            LevelSlot::HoistStorage => &mut self.hoist_storage_level,
        }
    }
    pub fn handle_of(&self, slot: LevelSlot) -> Option<u64> {
        self.level_handles[slot as usize]
    }
    /// Set a slot to a plain value (`compute_root()`, `compute_at(f, x)`):
    /// no handle refers to it any more.
    pub fn set_level(&mut self, slot: LevelSlot, level: LoopLevel, handle: Option<u64>) {
        *self.level_mut(slot) = level;
        self.level_handles[slot as usize] = handle;
    }
    /// The levels as lowering sees them (Halide's `lock_loop_levels`): an
    /// inlined store level means the compute level, an inlined hoist level
    /// the store level. An undefined level is an error.
    pub fn locked_levels(&self) -> crate::Result<LockedLevels> {
        for l in [
            &self.compute_level,
            &self.store_level,
            &self.hoist_storage_level,
        ] {
            if *l == LoopLevel::Undefined {
                return Err(crate::Error::user(
                    "There should be no undefined LoopLevels at the start of lowering. (Did you mean to use LoopLevel::inlined() instead of LoopLevel() ?)",
                ));
            }
        }
        let compute = self.compute_level.clone();
        let store = if self.store_level.is_inlined() {
            compute.clone()
        } else {
            self.store_level.clone()
        };
        let hoist = if self.hoist_storage_level.is_inlined() {
            store.clone()
        } else {
            self.hoist_storage_level.clone()
        };
        Ok(LockedLevels {
            compute,
            store,
            hoist,
        })
    }
}

/// A Func's placement with defaults resolved (see `locked_levels`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockedLevels {
    pub compute: LoopLevel,
    pub store: LoopLevel,
    pub hoist: LoopLevel,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_level_matching_follows_halide() {
        let at = |f: &str, v: &str| LoopLevel::at(f, v);
        assert!(at("g", "xo").matches(&at("g", "x.xo")));
        assert!(at("g", "x.xo").matches(&at("g", "xo")));
        assert!(!at("g", "x").matches(&at("g", "xo")));
        assert!(!at("g", "x").matches(&at("h", "x")));
        let staged = LoopLevel::At {
            func: "g".into(),
            var: "x".into(),
            stage: Some(0),
        };
        assert!(!staged.matches(&at("g", "x")));
        assert!(LoopLevel::Root.matches(&LoopLevel::Root));
        assert!(!LoopLevel::Root.matches(&LoopLevel::Inlined));

        assert!(at("g", "xo").matches_loop("g.s0.x.xo"));
        assert!(!at("g", "x").matches_loop("g.s0.x.xo"));
        assert!(at("g", "x").matches_loop("g.s0.x.x"));
        assert!(staged.matches_loop("g.s0.x"));
        assert!(!staged.matches_loop("g.s1.x"));
        assert!(!at("g", "x").matches_loop("gg.s0.x"));
    }

    #[test]
    fn locked_levels_resolve_inlined_store_and_hoist() {
        let mut s = FuncSchedule::default();
        s.set_level(LevelSlot::Compute, LoopLevel::at("g", "x"), None);
        let l = s.locked_levels().unwrap();
        assert_eq!(l.store, LoopLevel::at("g", "x"));
        assert_eq!(l.hoist, LoopLevel::at("g", "x"));
        s.set_level(LevelSlot::Store, LoopLevel::Root, None);
        let l = s.locked_levels().unwrap();
        assert_eq!(
            (l.store.clone(), l.hoist),
            (LoopLevel::Root, LoopLevel::Root)
        );
        s.set_level(LevelSlot::HoistStorage, LoopLevel::Undefined, Some(7));
        assert_eq!(s.handle_of(LevelSlot::HoistStorage), Some(7));
        assert!(s
            .locked_levels()
            .unwrap_err()
            .message
            .contains("no undefined LoopLevels"));
    }
}
