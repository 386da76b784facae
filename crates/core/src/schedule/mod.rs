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

/// Where a Func is computed or stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoopLevel {
    Inlined,
    Root,
    /// Inside the loop over `var` of stage `stage` of Func `func`.
    At {
        func: String,
        var: String,
        stage: usize,
    },
}

impl LoopLevel {
    pub fn is_inlined(&self) -> bool {
        matches!(self, LoopLevel::Inlined)
    }
    pub fn is_root(&self) -> bool {
        matches!(self, LoopLevel::Root)
    }
    /// The loop name this level refers to in the lowered IR
    /// (`func.s0.var`), or `None` for root/inlined.
    pub fn loop_name(&self) -> Option<String> {
        match self {
            LoopLevel::At { func, var, stage } => Some(format!("{func}.s{stage}.{var}")),
            _ => None,
        }
    }
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
}

/// The name of the implicit outermost loop every stage has (extent 1);
/// compute_at it to mean "once per realization of the consumer stage".
pub const OUTERMOST: &str = "__outermost";

/// Per-stage schedule: the loop nest shape.
#[derive(Clone, Debug, Default)]
pub struct StageSchedule {
    pub splits: Vec<Split>,
    pub dims: Vec<Dim>,
}

impl StageSchedule {
    /// The default schedule for pure args `args` (args[0] innermost).
    pub fn for_pure_args(args: &[String]) -> StageSchedule {
        let mut dims: Vec<Dim> = args
            .iter()
            .map(|a| Dim {
                var: a.clone(),
                for_type: ForType::Serial,
                is_rvar: false,
            })
            .collect();
        dims.push(Dim {
            var: OUTERMOST.to_string(),
            for_type: ForType::Serial,
            is_rvar: false,
        });
        StageSchedule {
            splits: vec![],
            dims,
        }
    }
}

/// A user-given bound on a pure dimension (`f.bound(x, min, extent)`).
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
    pub store_level: LoopLevel,
    pub bounds: Vec<Bound>,
    /// `fold_storage` requests, by pure dimension.
    pub folds: Vec<StorageFold>,
    /// Storage order, innermost first (defaults to the pure args).
    pub storage_dims: Vec<String>,
    pub memory_type: MemoryType,
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
        }
    }
}
