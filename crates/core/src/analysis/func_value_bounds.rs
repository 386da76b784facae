//! The range of values each Func of a pipeline can take (Halide's
//! `compute_function_value_bounds`), used to bound a call to the Func.
//!
//! A Func with no update has a value in the bounds of its definition over
//! every point: `g(x, y) = i16(-13)` makes `clamp(i32(g(x, y)), 1, 2)` the
//! single point 1, so a consumer indexing another Func with it needs one row
//! there, not two. Halide's bounds inference, allocation bounds and buffer
//! checks all bound calls this way, which decides the regions it computes
//! and the sizes of outputs it grows (a bounds query); ferrohalide's match.
//! A Func with updates is bounded by its type alone (narrow integers) or
//! not at all, as in Halide.
//!
//! Lowering installs the bounds of its pipeline for the thread that lowers
//! (`with_func_value_bounds`); `bounds_of_expr` looks calls up by Func name
//! (`value_bounds`). Outside a lowering nothing is known about a Func's
//! values.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::analysis::bounds::{bounds_of_expr, Interval, Scope};
use crate::lang::function::Function;

/// Bounds of each (Func name, value index).
pub type FuncValueBounds = HashMap<(String, usize), Interval>;

thread_local! {
    static CURRENT: RefCell<Option<FuncValueBounds>> = const { RefCell::new(None) };
}

/// The value bounds of the Funcs in `order` (producers first, so a Func's
/// bounds can use those of the Funcs it calls).
pub fn compute_func_value_bounds(order: &[Function]) -> FuncValueBounds {
    with_func_value_bounds(FuncValueBounds::new(), || {
        for f in order {
            for (i, iv) in value_bounds_of(f).into_iter().enumerate() {
                CURRENT.with(|c| {
                    if let Some(m) = c.borrow_mut().as_mut() {
                        m.insert((f.name(), i), iv);
                    }
                });
            }
        }
        CURRENT.with(|c| c.borrow().clone().unwrap_or_default())
    })
}

/// The bounds of each value of `f` over all its points: those of its
/// definition with every argument unbounded, for a Func without updates.
fn value_bounds_of(f: &Function) -> Vec<Interval> {
    if f.has_updates() {
        return f.types().into_iter().map(Interval::of_type).collect();
    }
    let scope: Scope = f
        .args()
        .into_iter()
        .map(|a| (a, Interval::everything()))
        .collect();
    f.values()
        .iter()
        .map(|v| bounds_of_expr(v, &scope).simplified())
        .collect()
}

/// Run `f` with `fb` as the value bounds of the Funcs being lowered.
pub fn with_func_value_bounds<R>(fb: FuncValueBounds, f: impl FnOnce() -> R) -> R {
    let saved = CURRENT.with(|c| c.replace(Some(fb)));
    let out = f();
    CURRENT.with(|c| *c.borrow_mut() = saved);
    out
}

/// The value bounds installed on this thread (for work handed to another
/// thread of the same compilation).
pub fn current_func_value_bounds() -> Option<FuncValueBounds> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The bounds of value `index` of Func `name` in the pipeline being
/// lowered, if known.
pub fn value_bounds(name: &str, index: usize) -> Option<Interval> {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|m| m.get(&(name.to_string(), index)).cloned())
    })
}
