//! The pipeline body's computed root lets reach LLVM through an opaque
//! register copy (`codegen/stmt.rs::hide_root_let`), so that scalar
//! evolution does not rebuild every loop's bounds as one expression over
//! all of them; lets inside loops are left visible. The values are those
//! of the plain lets.

mod common;

use common::*;
use ferrohalide_codegen_llvm::{compile_to_llvm_ir, JitTarget};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Stmt, Type};

/// `let lo = max(min(out.min.0, 5), -5) + 1 in for x: (let t = x * 3 +
/// lo in out[x - out.min.0] = t * t)`, with both lets statements.
fn bounded_pipeline() -> ferrohalide_core::lower::LoweredPipeline {
    let lo = Expr::add(Expr::max(Expr::min(v("out.min.0"), i(5)), i(-5)), i(1));
    let t = Expr::add(Expr::mul(v("x"), i(3)), v("lo"));
    let index = Expr::sub(v("x"), v("out.min.0"));
    let store = Stmt::store("out", Expr::mul(v("t"), v("t")), index, Expr::bool_const(true));
    let each = Stmt::let_stmt("t", t, store);
    let lp = Stmt::for_loop("x", v("out.min.0"), v("out.extent.0"), ForType::Serial, each);
    pipeline("root_lets", vec![out_arg("out", Type::i32(), 1)], Stmt::let_stmt("lo", lo, lp))
}

#[test]
fn root_lets_are_opaque_copies_and_loop_lets_are_not() {
    let ir = compile_to_llvm_ir(&bounded_pipeline(), &JitTarget::host()).unwrap();
    // The body is inlined into each entry point (the wrappers taking
    // argv): count per function.
    let per_function: Vec<usize> = ir
        .split("\ndefine ")
        .skip(1)
        .map(|f| f.lines().filter(|l| l.contains("asm \"\", \"=r,0\"")).count())
        .collect();
    assert!(
        per_function.iter().any(|&n| n > 0) && per_function.iter().all(|&n| n <= 1),
        "one root let (lo), hidden once per function; the loop's let stays plain:\n{ir}"
    );
}

#[test]
fn hidden_root_lets_keep_their_values() {
    let m = jit(&bounded_pipeline());
    let out = Buffer::new(Type::i32(), &[9], None).unwrap();
    out.set_min(&[-3]).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    let lo = (-3i64).clamp(-5, 5) + 1;
    for x in -3..6i32 {
        let t = x as i64 * 3 + lo;
        assert_eq!(out.get_i128(&[x]).unwrap(), (t * t) as i128, "at {x}");
    }
}
