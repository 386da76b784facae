//! Lowering effects of the placement and storage directives: aligned
//! realized regions, storage order (strides), hoisted allocations, register
//! storage, explicit-bound assertions, and placement validation.

use std::collections::HashMap;

use ferrohalide_core::analysis::evaluate::eval_int;
use ferrohalide_core::analysis::substitute::substitute;
use ferrohalide_core::ir::visit::{walk_stmt, Visitor};
use ferrohalide_core::ir::{Expr, MemoryType, Stmt, StmtNode};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::loop_level::LoopLevelHandle;
use ferrohalide_core::lower::allocation_bounds_inference::allocation_bounds_inference;
use ferrohalide_core::lower::bounds_inference::bounds_inference;
use ferrohalide_core::lower::environment::build_environment;
use ferrohalide_core::lower::schedule_functions::schedule_functions;
use ferrohalide_core::lower::storage_flattening::storage_flattening;
use ferrohalide_core::schedule::LoopLevel;
use ferrohalide_core::Result;

/// `g`'s pipeline lowered up to storage flattening (before the clean-up
/// passes that substitute lets away).
fn flattened(g: &Func) -> Result<Stmt> {
    let outputs = [g.function.clone()];
    let env = build_environment(&outputs)?;
    let s = schedule_functions(&env, &outputs)?;
    let s = bounds_inference(&s, &env, &outputs)?;
    let s = allocation_bounds_inference(&s, &env)?;
    storage_flattening(&s, &env)
}

fn v(name: &str) -> Expr {
    Expr::var_i32(name)
}

fn call(f: &Func, args: Vec<Expr>) -> Expr {
    f.call(args).unwrap().to_expr().unwrap()
}

/// f(x) = x * 2; g(x) = f(x) + f(x + 1).
fn one_d() -> (Func, Func) {
    let f = Func::new(Some("f"));
    f.define(vec![v("x")], vec![Expr::mul(v("x"), Expr::i32(2))])
        .unwrap();
    let g = Func::new(Some("g"));
    let e = Expr::add(
        call(&f, vec![v("x")]),
        call(&f, vec![Expr::add(v("x"), Expr::i32(1))]),
    );
    g.define(vec![v("x")], vec![e]).unwrap();
    (f, g)
}

/// f(x, y) = x + y; g(x, y) = f(x, y) + f(x + y, y).
fn two_d() -> (Func, Func) {
    let f = Func::new(Some("f"));
    f.define(vec![v("x"), v("y")], vec![Expr::add(v("x"), v("y"))])
        .unwrap();
    let g = Func::new(Some("g"));
    let e = Expr::add(
        call(&f, vec![v("x"), v("y")]),
        call(&f, vec![Expr::add(v("x"), v("y")), v("y")]),
    );
    g.define(vec![v("x"), v("y")], vec![e]).unwrap();
    (f, g)
}

/// What a walk of the lowered body found about one allocation.
#[derive(Default)]
struct AllocInfo {
    /// Lets enclosing the Allocate (outermost first), then inside it
    /// (down to the first loop).
    lets: Vec<(String, Expr)>,
    extents: Vec<Expr>,
    memory_type: Option<MemoryType>,
    /// Loops enclosing the Allocate.
    loops_outside: usize,
    asserts: Vec<String>,
}

struct Find<'a> {
    name: &'a str,
    lets: Vec<(String, Expr)>,
    loops: usize,
    info: Option<AllocInfo>,
    asserts: Vec<String>,
}

impl Visitor for Find<'_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::LetStmt { name, value, .. } => {
                self.lets.push((name.clone(), value.clone()));
                walk_stmt(self, s);
                if self.info.is_none() {
                    self.lets.pop();
                }
            }
            StmtNode::For { .. } => {
                self.loops += 1;
                walk_stmt(self, s);
                self.loops -= 1;
            }
            StmtNode::AssertStmt { message, .. } => {
                self.asserts.push(message.to_string());
            }
            StmtNode::Allocate {
                name,
                extents,
                memory_type,
                ..
            } if name == self.name && self.info.is_none() => {
                self.info = Some(AllocInfo {
                    lets: vec![],
                    extents: extents.clone(),
                    memory_type: Some(*memory_type),
                    loops_outside: self.loops,
                    asserts: vec![],
                });
            }
            _ => walk_stmt(self, s),
        }
    }
}

fn find_allocation(body: &Stmt, name: &str) -> AllocInfo {
    let mut f = Find {
        name,
        lets: vec![],
        loops: 0,
        info: None,
        asserts: vec![],
    };
    f.visit_stmt(body);
    let mut info = f
        .info
        .unwrap_or_else(|| panic!("no allocation of {name} in\n{body}"));
    info.lets = f.lets;
    info.asserts = f.asserts;
    info
}

/// Evaluate `e` with the lets in `info` substituted and the output's
/// buffer symbols set.
fn eval(info: &AllocInfo, e: &Expr, scalars: &[(String, i64)]) -> i64 {
    let mut e = e.clone();
    for (n, val) in info.lets.iter().rev() {
        e = substitute(n, val, &e);
    }
    let vars: HashMap<String, i64> = scalars.iter().cloned().collect();
    eval_int(&e, &vars).unwrap_or_else(|| panic!("can't evaluate {e}"))
}

fn let_value<'a>(info: &'a AllocInfo, name: &str) -> &'a Expr {
    &info
        .lets
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no let {name}"))
        .1
}

/// The output `g` over [0, 10).
fn g10(g: &Func) -> Vec<(String, i64)> {
    vec![
        (format!("{}.min.0", g.name()), 0),
        (format!("{}.extent.0", g.name()), 10),
    ]
}

/// The output `g` over [0, w) x [0, h).
fn g2d(g: &Func, w: i64, h: i64) -> Vec<(String, i64)> {
    let n = g.name();
    vec![
        (format!("{n}.min.0"), 0),
        (format!("{n}.extent.0"), w),
        (format!("{n}.min.1"), 0),
        (format!("{n}.extent.1"), h),
    ]
}

#[test]
fn align_bounds_rounds_the_realized_region() {
    // g over [0, 10) needs f over [0, 10].
    let (f, g) = one_d();
    f.compute_root();
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(eval(&info, &info.extents[0], &g10(&g)), 11);

    let (f, g) = one_d();
    f.compute_root();
    f.align_bounds("x", Expr::i32(8), Expr::i32(0)).unwrap();
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.min.0", f.name())),
            &g10(&g)
        ),
        0
    );
    assert_eq!(eval(&info, &info.extents[0], &g10(&g)), 16);

    // Remainder 3: min down to -5, end up to 11.
    let (f, g) = one_d();
    f.compute_root();
    f.align_bounds("x", Expr::i32(8), Expr::i32(3)).unwrap();
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.min.0", f.name())),
            &g10(&g)
        ),
        -5
    );
    assert_eq!(eval(&info, &info.extents[0], &g10(&g)), 16);
}

#[test]
fn align_extent_keeps_the_min() {
    let (f, g) = one_d();
    f.compute_root();
    f.align_extent("x", Expr::i32(4)).unwrap();
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.min.0", f.name())),
            &g10(&g)
        ),
        0
    );
    assert_eq!(eval(&info, &info.extents[0], &g10(&g)), 12);
}

#[test]
fn first_issued_bound_has_the_final_say() {
    let (f, g) = one_d();
    f.compute_root();
    f.bound("x", Expr::i32(-2), Expr::i32(20)).unwrap();
    f.align_bounds("x", Expr::i32(16), Expr::i32(0)).unwrap();
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.min.0", f.name())),
            &g10(&g)
        ),
        -2
    );
    assert_eq!(eval(&info, &info.extents[0], &g10(&g)), 20);
}

#[test]
fn bounds_are_checked_where_the_func_is_stored() {
    let (f, g) = one_d();
    f.compute_root();
    f.bound("x", Expr::i32(0), Expr::i32(3)).unwrap();
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert!(
        info.asserts
            .iter()
            .any(|m| m.contains(&format!("Bounds given for {} in x (from ", f.name()))),
        "{:?}",
        info.asserts
    );
}

#[test]
fn reorder_storage_changes_strides() {
    let (f, g) = two_d();
    f.compute_root();
    let sizes = g2d(&g, 5, 3);
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    let (w, h) = (
        eval(
            &info,
            let_value(&info, &format!("{}.extent.0", f.name())),
            &sizes,
        ),
        eval(
            &info,
            let_value(&info, &format!("{}.extent.1", f.name())),
            &sizes,
        ),
    );
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.stride.0", f.name())),
            &sizes
        ),
        1
    );
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.stride.1", f.name())),
            &sizes
        ),
        w
    );

    let (f, g) = two_d();
    f.compute_root();
    f.reorder_storage(&["y".into(), "x".into()]).unwrap();
    let sizes = g2d(&g, 5, 3);
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.stride.1", f.name())),
            &sizes
        ),
        1
    );
    assert_eq!(
        eval(
            &info,
            let_value(&info, &format!("{}.stride.0", f.name())),
            &sizes
        ),
        h
    );
}

#[test]
fn reorder_storage_errors() {
    let (f, _) = two_d();
    let e = f.reorder_storage(&["x".into()]).unwrap_err();
    assert!(e.message.contains("at least two dimensions"));
    let e = f.reorder_storage(&["x".into(), "x".into()]).unwrap_err();
    assert!(e.message.contains("references x twice"));
    let e = f.reorder_storage(&["z".into(), "x".into()]).unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "In schedule for {}, could not find variables z and x to reorder.\nVars: x y\n",
            f.name()
        )
    );
}

#[test]
fn hoisted_storage_is_allocated_outside_the_loops_for_the_largest_region() {
    // Computed per row y of g: f needs x in [0, W - 1 + y], so the
    // allocation hoisted to the root holds W + H - 1 elements by 1 row.
    let (f, g) = two_d();
    f.compute_at(&g, "y");
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert!(info.loops_outside > 0);

    let (f, g) = two_d();
    f.compute_at(&g, "y");
    f.hoist_storage_root();
    let sizes = g2d(&g, 5, 3);
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(info.loops_outside, 0, "{body}");
    let total: i64 = info
        .extents
        .iter()
        .map(|e| eval(&info, e, &sizes))
        .product();
    assert_eq!(total, 5 + 3 - 1);
}

#[test]
fn register_storage_has_constant_extents() {
    let (f, g) = one_d();
    f.compute_at(&g, "x");
    f.store_in(MemoryType::Register);
    let body = flattened(&g).unwrap();
    let info = find_allocation(&body, &f.name());
    assert_eq!(info.memory_type, Some(MemoryType::Register));
    let extent = let_value(&info, &format!("{}.extent.0", f.name()));
    assert_eq!(extent.as_int_const(), Some(2), "{body}");

    let (f, g) = two_d();
    f.compute_root();
    f.store_in(MemoryType::Register);
    let e = flattened(&g).unwrap_err();
    assert!(e
        .message
        .starts_with("Was unable to infer constant upper bound on extent of realization"));
}

#[test]
fn invalid_placements_are_rejected_at_lowering_with_the_legal_ones() {
    let (f, g) = one_d();
    f.compute_at(&g, "zz");
    let e = flattened(&g).unwrap_err();
    let (fname, gname) = (f.name(), g.name());
    assert_eq!(
        e.message,
        format!(
            "Func \"{fname}\" is computed at the following invalid location:\n  {fname}.compute_at({gname}, zz);\nLegal locations for this function are:\n  {fname}.compute_root();\n  {fname}.compute_at({gname}, Var::outermost());\n  {fname}.compute_at({gname}, x);\n\"{fname}\" is used in the following places:\n for {gname}.s0.x:\n  {gname} uses {fname}\n  {gname} uses {fname}\n"
        )
    );

    let (f, g) = one_d();
    f.store_root();
    let e = flattened(&g).unwrap_err();
    assert!(e
        .message
        .contains("is scheduled store_root(), but is inlined"));

    let (f, g) = one_d();
    g.parallel("x").unwrap();
    f.compute_at(&g, "x");
    f.hoist_storage_root();
    let e = flattened(&g).unwrap_err();
    assert!(e
        .message
        .contains("storage is hoisted outside the parallel/vectorized/gpu_block loop"));
}

#[test]
fn loop_level_handles_decide_placement_when_lowering() {
    let (f, g) = one_d();
    let h = LoopLevelHandle::new(LoopLevel::Undefined);
    f.compute_at_level(&h);
    let e = flattened(&g).unwrap_err();
    assert!(e.message.contains("no undefined LoopLevels"));
    h.set(LoopLevel::at(g.name(), "x")).unwrap();
    let body = flattened(&g).unwrap();
    assert!(find_allocation(&body, &f.name()).loops_outside > 0);
    h.set(LoopLevel::Root).unwrap();
    let body = flattened(&g).unwrap();
    assert_eq!(find_allocation(&body, &f.name()).loops_outside, 0);
}
