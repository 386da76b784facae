//! Lowering of update definitions: one loop nest per stage (`f.sN.v`),
//! RVars innermost, predicates as `if`s, and bounds inference per stage
//! (earlier stages cover what later stages read and write; producers of an
//! update are bounded by its RVar loops).

use std::collections::HashMap;

use ferrohalide_core::analysis::evaluate::eval_int;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Type};
use ferrohalide_core::lang::func::{image_call, Func};
use ferrohalide_core::lang::rdom::ReductionDomain;
use ferrohalide_core::lang::stage::VarOrRVar;
use ferrohalide_core::lower::lower;
use ferrohalide_core::lower::schedule_functions::build_produce;

fn x() -> Expr {
    Expr::var_i32("x")
}
fn y() -> Expr {
    Expr::var_i32("y")
}

fn rdom(bounds: &[(i64, i64)]) -> ReductionDomain {
    ReductionDomain::new(
        Some("r"),
        bounds
            .iter()
            .map(|&(m, e)| (Expr::i32(m), Expr::i32(e)))
            .collect(),
    )
    .unwrap()
}

fn pure(name: &str, args: Vec<Expr>, value: Expr) -> Func {
    let f = Func::new(Some(name));
    f.define(args, vec![value]).unwrap();
    f
}

fn at(f: &Func, args: Vec<Expr>) -> Expr {
    f.call(args).unwrap().to_expr().unwrap()
}

/// The output region the pipeline writes, for an output of the given
/// extents (mins 0).
fn written_region(f: &Func, extents: &[i64]) -> Vec<(i64, i64)> {
    let l = lower(&[f.function.clone()], &f.name()).unwrap();
    let mut vars = HashMap::new();
    for (d, e) in extents.iter().enumerate() {
        vars.insert(format!("{}.min.{d}", f.name()), 0);
        vars.insert(format!("{}.extent.{d}", f.name()), *e);
    }
    l.output_regions[0]
        .iter()
        .map(|iv| {
            (
                eval_int(iv.min.as_ref().unwrap(), &vars).unwrap(),
                eval_int(iv.max.as_ref().unwrap(), &vars).unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_stage_has_its_own_loop_nest_rvars_innermost() {
    let r = rdom(&[(0, 3)]);
    let rx = r.rvar(0).unwrap().expr();
    let f = pure("st_nest", vec![x(), y()], Expr::add(x(), y()));
    f.define(vec![x(), y()], vec![Expr::add(at(&f, vec![x(), y()]), rx)])
        .unwrap();
    let text = build_produce(&f.function).unwrap().to_string();
    let pos = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} not in\n{text}"));
    // Stage 0, then stage 1, in one produce; in stage 1 the RVar is the
    // innermost loop, the pure vars outside it (x inside y).
    assert!(pos("for (st_nest.s0.y") < pos("for (st_nest.s0.x"));
    assert!(pos("for (st_nest.s0.x") < pos("for (st_nest.s1.y"));
    assert!(pos("for (st_nest.s1.y") < pos("for (st_nest.s1.x"));
    assert!(pos("for (st_nest.s1.x") < pos("for (st_nest.s1.r$x"));
    assert!(text.contains("st_nest.s1.r$x.loop_extent = 3"), "{text}");
    assert_eq!(text.matches("produce st_nest").count(), 1);
}

#[test]
fn where_predicates_and_conditional_undefs_become_ifs() {
    let r = rdom(&[(0, 10)]);
    let rx = r.rvar(0).unwrap().expr();
    r.where_(Expr::lt(rx.clone(), Expr::i32(4))).unwrap();
    let f = pure("st_where", vec![x()], Expr::i32(0));
    f.define(vec![rx.clone()], vec![Expr::i32(1)]).unwrap();
    let text = build_produce(&f.function).unwrap().to_string();
    assert!(text.contains("if ((st_where.s1.r$x < 4))"), "{text}");

    let g = pure("st_undef", vec![x()], x());
    let undef = ferrohalide_core::lang::math::undef(Type::i32());
    g.define(
        vec![x()],
        vec![Expr::select(
            Expr::lt(x(), Expr::i32(3)),
            undef,
            Expr::i32(7),
        )],
    )
    .unwrap();
    let text = build_produce(&g.function).unwrap().to_string();
    assert!(text.contains("if (!(st_undef.s1.x < 3))"), "{text}");
}

#[test]
fn earlier_stages_cover_what_later_stages_read_and_write() {
    // f(x) = x; f(7) = 1; f(0) = f(8) + 1; f(-1) = 100: realized over 5
    // points, the pure stage covers [-1, 8].
    let f = pure("st_cover", vec![x()], x());
    f.define(vec![Expr::i32(7)], vec![Expr::i32(1)]).unwrap();
    let v = Expr::add(at(&f, vec![Expr::i32(8)]), Expr::i32(1));
    f.define(vec![Expr::i32(0)], vec![v]).unwrap();
    f.define(vec![Expr::i32(-1)], vec![Expr::i32(100)]).unwrap();
    assert_eq!(written_region(&f, &[5]), vec![(-1, 8)]);
}

#[test]
fn rvar_loops_bound_what_an_update_reads_of_its_producers() {
    // g is computed at the root; f's update reads g(x + r.x), r in [0, 3).
    let r = rdom(&[(0, 3)]);
    let rx = r.rvar(0).unwrap().expr();
    let g = pure("st_prod_g", vec![x()], Expr::mul(x(), Expr::i32(10)));
    g.compute_root();
    let f = pure("st_prod_f", vec![x()], Expr::i32(0));
    let v = Expr::add(at(&f, vec![x()]), at(&g, vec![Expr::add(x(), rx)]));
    f.define(vec![x()], vec![v]).unwrap();
    let outputs = [f.function.clone()];
    let env = ferrohalide_core::lower::environment::build_environment(&outputs).unwrap();
    let s =
        ferrohalide_core::lower::schedule_functions::schedule_functions(&env, &outputs).unwrap();
    let b =
        ferrohalide_core::lower::bounds_inference::bounds_inference(&s, &env, &outputs).unwrap();
    let b = ferrohalide_core::lower::allocation_bounds_inference::allocation_bounds_inference(
        &b, &env,
    )
    .unwrap();
    // Evaluate the root lets for an output of 5 points: g's storage is
    // those 5 plus the 2 more the update's RVar loop reads.
    let mut lets = HashMap::new();
    lets.insert("st_prod_f.min.0".to_string(), 0);
    lets.insert("st_prod_f.extent.0".to_string(), 5);
    let mut cur = b;
    while let ferrohalide_core::ir::StmtNode::LetStmt { name, value, body } = cur.node() {
        if let Some(v) = eval_int(value, &lets) {
            lets.insert(name.clone(), v);
        }
        cur = body.clone();
    }
    assert_eq!(lets.get("st_prod_g.x.min_realized"), Some(&0));
    assert_eq!(lets.get("st_prod_g.x.extent_realized"), Some(&7));
}

#[test]
fn an_unbounded_update_location_is_an_error_when_lowered() {
    let img = Buffer::new(Type::i32(), &[8], Some("st_img".into())).unwrap();
    let r = rdom(&[(0, 8)]);
    let rx = r.rvar(0).unwrap().expr();
    let h = pure("st_hist", vec![x()], Expr::i32(0));
    let idx = image_call(&img, vec![rx]).unwrap();
    let v = Expr::add(at(&h, vec![idx.clone()]), Expr::i32(1));
    h.define(vec![idx], vec![v]).unwrap();
    let e = lower(&[h.function.clone()], "st_hist").unwrap_err();
    assert_eq!(
        e.message,
        "Update definition number 0 of Function st_hist calls function st_hist in an unbounded way in dimension 0\n"
    );
}

#[test]
fn a_narrow_data_dependent_location_is_bounded_by_its_type() {
    let img = Buffer::new(Type::uint(8), &[8], Some("st_img8".into())).unwrap();
    let r = rdom(&[(0, 8)]);
    let rx = r.rvar(0).unwrap().expr();
    let h = pure("st_hist8", vec![x()], Expr::i32(0));
    let idx = Expr::cast(Type::i32(), image_call(&img, vec![rx]).unwrap());
    let v = Expr::add(at(&h, vec![idx.clone()]), Expr::i32(1));
    h.define(vec![idx], vec![v]).unwrap();
    assert_eq!(written_region(&h, &[10]), vec![(0, 255)]);
}

/// `h(im(r)) += 1` over a 2-D domain, atomic, with the loop types given
/// (r.x, r.y), lowered.
fn atomic_histogram(name: &str, rx_type: ForType, ry_type: ForType) -> String {
    let img = Buffer::new(Type::uint(8), &[16, 4], Some(format!("{name}_img"))).unwrap();
    let r = rdom(&[(0, 16), (0, 4)]);
    let (rx, ry) = (r.rvar(0).unwrap(), r.rvar(1).unwrap());
    let h = pure(name, vec![x()], Expr::i32(0));
    let idx = Expr::cast(Type::i32(), image_call(&img, vec![rx.expr(), ry.expr()]).unwrap());
    let v = Expr::add(at(&h, vec![idx.clone()]), Expr::i32(1));
    h.define(vec![idx], vec![v]).unwrap();
    let s = h.update(0).unwrap();
    s.atomic(false).unwrap();
    s.set_for_type(VarOrRVar::rvar(rx.name()), rx_type).unwrap();
    s.set_for_type(VarOrRVar::rvar(ry.name()), ry_type).unwrap();
    let produce = build_produce(&h.function).unwrap().to_string();
    assert!(produce.contains(&format!("atomic ({name}")), "{produce}");
    lower(&[h.function.clone()], name).unwrap().pipeline.body.to_string()
}

#[test]
fn atomic_updates_keep_their_loop_types_and_an_atomic_section() {
    // Parallel: the racy loop stays parallel, the update is atomic inside it,
    // with only its read-modify-write left inside.
    let text = atomic_histogram("st_ahist_par", ForType::Serial, ForType::Parallel);
    let par = text.find("parallel (st_ahist_par.s1.r$y").expect(&text);
    let atomic = text.find("atomic (st_ahist_par) {").expect(&text);
    assert!(par < atomic, "{text}");
    let inside = &text[atomic..text[atomic..].find('}').map(|e| atomic + e).unwrap()];
    assert!(!inside.contains("st_ahist_par_img["), "{text}");
    assert!(!text.contains("mutex"), "{text}");
    // Serial loops: no atomic section is left.
    let text = atomic_histogram("st_ahist_ser", ForType::Serial, ForType::Serial);
    assert!(!text.contains("atomic") && !text.contains("parallel"), "{text}");
}
