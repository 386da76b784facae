//! Lowering of specializations (the if/else chain around a produce, constant
//! conditions pruned, bounds per branch) and of wrappers (calls redirected at
//! lowering, the user's Funcs untouched).

use ferrohalide_core::analysis::bounds::{box_provided, Scope};
use ferrohalide_core::analysis::simplify::simplify;
use ferrohalide_core::ir::{Expr, Stmt, StmtNode};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::output_buffer::output_buffer;
use ferrohalide_core::lower::environment::build_environment;
use ferrohalide_core::lower::lower;
use ferrohalide_core::lower::schedule_functions::build_produce;
use ferrohalide_core::schedule::TailStrategy;

fn x() -> Expr {
    Expr::var_i32("x")
}
fn y() -> Expr {
    Expr::var_i32("y")
}

fn func2(name: &str, value: Expr) -> Func {
    let f = Func::new(Some(name));
    f.define(vec![x(), y()], vec![value]).unwrap();
    f
}

fn call(f: &Func, args: Vec<Expr>) -> Expr {
    f.call(args).unwrap().to_expr().unwrap()
}

/// The body of `produce name { ... }`.
fn produce_body(s: &Stmt) -> Stmt {
    match s.node() {
        StmtNode::ProducerConsumer {
            is_producer: true,
            body,
            ..
        } => body.clone(),
        other => panic!("not a produce: {other:?}"),
    }
}

fn if_parts(s: &Stmt) -> (Expr, Stmt, Option<Stmt>) {
    match s.node() {
        StmtNode::IfThenElse {
            condition,
            then_case,
            else_case,
        } => (condition.clone(), then_case.clone(), else_case.clone()),
        other => panic!("expected an if, got {other:?}"),
    }
}

#[test]
fn specializations_become_an_if_chain_in_order() {
    let g = func2("spec_chain", Expr::add(x(), y()));
    let width = output_buffer(&g.function).unwrap().width().unwrap();
    let wide = Expr::gt(width.clone(), Expr::i32(16));
    let mid = Expr::gt(width, Expr::i32(4));
    g.specialize(wide.clone())
        .unwrap()
        .split_and_set_type(
            "x",
            Expr::i32(4),
            TailStrategy::Auto,
            ferrohalide_core::ir::ForType::Vectorized,
            true,
        )
        .unwrap();
    g.specialize(mid.clone())
        .unwrap()
        .split("x", "xo", "xi", Expr::i32(2), TailStrategy::Auto)
        .unwrap();
    g.specialize_fail("too narrow").unwrap();

    let p = build_produce(&g.function).unwrap();
    let (c1, then1, else1) = if_parts(&produce_body(&p));
    // (Conditions are simplified, as Halide does before scheduling.)
    assert_eq!(c1.to_string(), simplify(&wide).to_string());
    assert!(then1.to_string().contains("vectorized"));
    let (c2, then2, else2) = if_parts(&else1.expect("else branch"));
    assert_eq!(c2.to_string(), simplify(&mid).to_string());
    assert!(then2.to_string().contains("spec_chain.s0.x.xo"));
    let fail = else2.expect("specialize_fail branch").to_string();
    assert!(
        fail.contains("A schedule specialized with specialize_fail() was chosen: too narrow"),
        "{fail}"
    );
    // The default schedule is unreachable after specialize_fail.
    assert!(!fail.contains("for ("));
    // The user's default schedule is untouched by the specializations.
    let dims: Vec<String> = g
        .function
        .read()
        .stage
        .dims
        .iter()
        .map(|d| d.var.clone())
        .collect();
    assert_eq!(dims, ["x", "y", "__outermost"]);
}

#[test]
fn nested_specialization_is_nested_if() {
    let g = func2("spec_nested", Expr::mul(x(), y()));
    let ob = output_buffer(&g.function).unwrap();
    let outer = g
        .specialize(Expr::gt(ob.width().unwrap(), Expr::i32(8)))
        .unwrap();
    outer
        .set_for_type("y", ferrohalide_core::ir::ForType::Parallel)
        .unwrap();
    outer
        .specialize(Expr::gt(ob.height().unwrap(), Expr::i32(8)))
        .unwrap()
        .split("x", "xo", "xi", Expr::i32(2), TailStrategy::Auto)
        .unwrap();
    let (_, then1, else1) = if_parts(&produce_body(&build_produce(&g.function).unwrap()));
    let (c2, inner_then, inner_else) = if_parts(&then1);
    assert!(c2.to_string().contains("extent.1"));
    // The nested specialization starts from its parent's schedule.
    assert!(inner_then.to_string().contains("parallel"));
    assert!(inner_then.to_string().contains("spec_nested.s0.x.xo"));
    assert!(inner_else.unwrap().to_string().contains("parallel"));
    assert!(!else1.unwrap().to_string().contains("parallel"));
}

#[test]
fn constant_conditions_are_pruned() {
    let g = func2("spec_const", Expr::add(x(), y()));
    g.specialize(Expr::bool_const(false))
        .unwrap()
        .set_for_type("y", ferrohalide_core::ir::ForType::Parallel)
        .unwrap();
    g.specialize(Expr::gt(Expr::i32(3), Expr::i32(2)))
        .unwrap()
        .split("x", "xo", "xi", Expr::i32(2), TailStrategy::Auto)
        .unwrap();
    g.specialize_fail("never reached").unwrap();
    let body = produce_body(&build_produce(&g.function).unwrap()).to_string();
    assert!(!body.contains("if ("), "{body}");
    assert!(!body.contains("parallel"));
    assert!(!body.contains("never reached"));
    assert!(body.contains("spec_const.s0.x.xo"));
}

#[test]
fn branch_boxes_are_selected_not_unioned() {
    // A vectorized branch (ShiftInwards tail) and a scalar one: the region
    // written is per branch, so a narrow output is not required to extend
    // below its min.
    let g = func2("spec_box", Expr::add(x(), y()));
    let width = output_buffer(&g.function).unwrap().width().unwrap();
    g.specialize(Expr::gt(width, Expr::i32(8)))
        .unwrap()
        .split_and_set_type(
            "x",
            Expr::i32(8),
            TailStrategy::Auto,
            ferrohalide_core::ir::ForType::Vectorized,
            true,
        )
        .unwrap();
    let l = lower(&[g.function.clone()], "spec_box").unwrap();
    let region = &l.output_regions[0];
    let lo = region[0].min.as_ref().unwrap().to_string();
    assert!(lo.contains("select("), "{lo}");
    let s = build_produce(&g.function).unwrap();
    let provided = box_provided(&s, "spec_box", &Scope::default()).unwrap();
    assert!(provided[0]
        .min
        .as_ref()
        .unwrap()
        .to_string()
        .contains("select("));
}

#[test]
fn wrappers_redirect_calls_only_when_lowering() {
    let f = func2("wrap_f", Expr::add(x(), y()));
    let g = func2(
        "wrap_g",
        Expr::add(
            call(&f, vec![x(), y()]),
            call(&f, vec![Expr::add(x(), Expr::i32(1)), y()]),
        ),
    );
    let h = func2("wrap_h", Expr::mul(call(&f, vec![x(), y()]), Expr::i32(2)));
    let out = func2(
        "wrap_out",
        Expr::add(call(&g, vec![x(), y()]), call(&h, vec![x(), y()])),
    );
    let wg = f.in_func(&g).unwrap();
    let global = f.in_().unwrap();
    wg.compute_root();

    let env = build_environment(&[out.function.clone()]).unwrap();
    let names = &env.order;
    let pos = |n: &str| {
        names
            .iter()
            .position(|m| m == n)
            .unwrap_or_else(|| panic!("{n} missing"))
    };
    // g calls its own wrapper, h the global one; both wrappers call f.
    assert!(pos("wrap_f") < pos(&wg.name()) && pos(&wg.name()) < pos("wrap_g"));
    assert!(pos("wrap_f") < pos(&global.name()) && pos(&global.name()) < pos("wrap_h"));
    assert!(env.get("wrap_g").values()[0]
        .to_string()
        .contains(&wg.name()));
    assert!(env.get("wrap_h").values()[0]
        .to_string()
        .contains(&global.name()));
    // The user's definitions still call f.
    assert!(!g.function.values()[0].to_string().contains("in_"));
    assert!(env.sources.iter().any(|s| s.same_as(&wg.function)));

    let text = lower(&[out.function.clone()], "wrap_out")
        .unwrap()
        .pipeline
        .body
        .to_string();
    assert!(text.contains(&format!("produce {}", wg.name())), "{text}");
}

#[test]
fn wrapper_chain_and_unused_custom_wrapper() {
    let p = func2("chain_p", Expr::add(x(), y()));
    let q = func2("chain_q", call(&p, vec![x(), y()]));
    let w1 = p.in_func(&q).unwrap();
    let w2 = w1.in_func(&q).unwrap();
    assert_eq!(w2.name(), "chain_p_in_chain_q$0_in_chain_q$0");
    let env = build_environment(&[q.function.clone()]).unwrap();
    assert!(env.get("chain_q").values()[0]
        .to_string()
        .contains(&w2.name()));
    assert!(env.get(&w2.name()).values()[0]
        .to_string()
        .contains(&w1.name()));

    let k = func2("chain_k", Expr::add(x(), y()));
    let top = func2(
        "chain_top",
        Expr::add(call(&q, vec![x(), y()]), call(&k, vec![x(), y()])),
    );
    p.in_func(&k).unwrap();
    let e = build_environment(&[top.function.clone()]).err().unwrap();
    assert_eq!(
        e.message,
        "Cannot wrap \"chain_p\" in \"chain_k\" because \"chain_k\" does not call \"chain_p\"\nDirect callees of \"chain_k\" are:\n"
    );
}
