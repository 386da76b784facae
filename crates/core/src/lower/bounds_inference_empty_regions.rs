//! Regression tests for regions that are empty in some loop iterations: a
//! producer computed inside a consumer's loop whose iteration does nothing
//! (the tail of a GuardWithIf split) must get an empty allocation, never a
//! negative one, and the pipeline must still compute the right values.

use std::collections::HashMap;

use crate::ir::Expr;
use crate::lang::func::Func;
use crate::lang::var::Var;
use crate::lower::lower;
use crate::lower::vectorize_loops::test_interpreter::{run, Memory};
use crate::schedule::TailStrategy;

/// `g(x, y) = f(y, x)` with `f(x, y) = x + 100 y`, `g` split in y by 5 with
/// GuardWithIf, `f` computed at `g`'s inner y loop and split by 3 with
/// RoundUp: in the tail iterations `f`'s required x-range is empty and
/// rounding it up would give a negative extent.
fn pipeline() -> Func {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new(Some("empty_region_f"));
    let value = Expr::add(x.expr(), Expr::mul(y.expr(), Expr::i32(100)));
    f.define(vec![x.expr(), y.expr()], vec![value]).unwrap();
    let g = Func::new(Some("empty_region_g"));
    let call = f.call(vec![y.expr(), x.expr()]).unwrap().to_expr().unwrap();
    g.define(vec![x.expr(), y.expr()], vec![call]).unwrap();
    g.split("y", "yo", "yi", Expr::i32(5), TailStrategy::GuardWithIf)
        .unwrap();
    // (Placement calls return nothing on some branches, a Result on others.)
    #[allow(clippy::let_unit_value)]
    let _ = f.compute_at(&g, "yi");
    f.split("x", "xo", "xi", Expr::i32(3), TailStrategy::RoundUp)
        .unwrap();
    g
}

#[test]
fn guarded_tail_gives_empty_not_negative_allocations() {
    let g = pipeline();
    let name = g.name();
    let lowered = lower(&[g.function.clone()], &name).unwrap();
    let (w, h, min_y) = (4i64, 26i64, -3i64);
    let scalars: HashMap<String, i64> = [
        (format!("{name}.min.0"), 0),
        (format!("{name}.extent.0"), w),
        (format!("{name}.stride.0"), 1),
        (format!("{name}.min.1"), min_y),
        (format!("{name}.extent.1"), h),
        (format!("{name}.stride.1"), w),
    ]
    .into_iter()
    .collect();
    let mut mem = Memory::new();
    mem.insert(name.clone(), vec![-1; (w * h) as usize]);
    // The interpreter rejects negative allocations and out-of-bounds accesses.
    let out = run(&lowered.pipeline.body, &mem, &scalars).unwrap();
    for yy in 0..h {
        for xx in 0..w {
            let expect = (yy + min_y) + 100 * xx;
            assert_eq!(out[&name][(xx + yy * w) as usize], expect, "at ({xx}, {yy})");
        }
    }
}
