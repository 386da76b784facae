//! Expressions nested deeper than a thread's stack allows recursion, and
//! long chains of Funcs: dropping, walking, printing, defining and lowering
//! them must not overflow the stack. Each test runs on a thread with a
//! 256 KiB stack (Python lets its threads have that little).

use ferrohalide_core::ir::visit::for_each_expr;
use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::operators::{check_depth, MAX_EXPR_DEPTH};
use ferrohalide_core::lang::print::expr_to_string;
use ferrohalide_core::lower::environment::build_environment;
use ferrohalide_core::lower::lower;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// `((x + 1) + 1) ... + 1`, `n` additions.
fn sum_chain(n: u32) -> Expr {
    let mut e = Expr::var_i32("x");
    for _ in 0..n {
        e = Expr::add(e, Expr::i32(1));
    }
    e
}

#[test]
fn a_million_deep_expression_drops_and_walks() {
    on_small_stack(|| {
        let e = sum_chain(1_000_000);
        assert_eq!(e.depth(), 1_000_001);
        let mut nodes = 0;
        for_each_expr(&e, &mut |_| nodes += 1);
        assert_eq!(nodes, 2_000_001);
        let err = check_depth(&e).unwrap_err().to_string();
        assert!(err.contains("1000001 levels deep"), "{err}");
        drop(e);
    });
}

#[test]
fn deep_expressions_print_shortened() {
    on_small_stack(|| {
        let s = expr_to_string(&sum_chain(100_000));
        assert!(
            s.starts_with("((((") && s.ends_with("+ 1)"),
            "{}",
            &s[..100]
        );
        assert!(s.contains("..."));
    });
}

#[test]
fn defining_and_lowering_the_deepest_accepted_expression() {
    on_small_stack(|| {
        let e = sum_chain(MAX_EXPR_DEPTH - 10);
        assert!(check_depth(&e).is_ok());
        let f = Func::new(Some("deep"));
        f.define(vec![Expr::var_i32("x")], vec![e]).unwrap();
        lower(&[f.function.clone()], "deep").unwrap();
    });
}

#[test]
fn a_long_chain_of_funcs_orders_and_drops() {
    on_small_stack(|| {
        let x = || Expr::var_i32("x");
        let mut f = Func::new(Some("f0"));
        f.define(vec![x()], vec![x()]).unwrap();
        for i in 1..=20_000 {
            let g = Func::new(Some(&format!("f{i}")));
            let call = f.call(vec![x()]).unwrap().to_expr().unwrap();
            g.define(vec![x()], vec![Expr::add(call, Expr::i32(1))])
                .unwrap();
            f = g;
        }
        let env = build_environment(&[f.function.clone()]).unwrap();
        assert_eq!(env.order.len(), 20_001);
        assert_eq!(env.order[0], "f0");
        drop(env);
        drop(f);
    });
}
