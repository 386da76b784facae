//! LLVM's non-trivial loop unswitching is off (`init_llvm`): a loop with a
//! loop-invariant branch inside stays one loop, instead of one copy per
//! side of the branch, which only cost compile time in Halide's loops.

mod common;

use common::*;
use ferrohalide_codegen_llvm::{compile_to_llvm_ir, JitTarget, ScalarValue};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Stmt, Type};

/// `for x: if (p > 0) out[x] = x`: the branch does not leave the loop,
/// so only non-trivial unswitching could hoist it.
fn loop_with_invariant_branch() -> ferrohalide_core::lower::LoweredPipeline {
    let index = Expr::sub(v("x"), v("out.min.0"));
    let store = Stmt::store("out", v("x"), index, Expr::bool_const(true));
    let guarded = Stmt::if_then_else(Expr::gt(v("p"), i(0)), store, None);
    let lp = Stmt::for_loop("x", v("out.min.0"), v("out.extent.0"), ForType::Serial, guarded);
    pipeline(
        "unswitch",
        vec![scalar_arg("p", Type::i32()), out_arg("out", Type::i32(), 1)],
        lp,
    )
}

#[test]
fn a_loop_invariant_branch_does_not_copy_the_loop() {
    let ir = compile_to_llvm_ir(&loop_with_invariant_branch(), &JitTarget::host()).unwrap();
    // LLVM names the blocks of an unswitched loop's copies `*.us`.
    assert!(!ir.contains(".us"), "the loop was unswitched:\n{ir}");
}

#[test]
fn the_branch_still_computes_the_same_values() {
    let m = jit(&loop_with_invariant_branch());
    for p in [-1i64, 1] {
        let out = Buffer::new(Type::i32(), &[6], None).unwrap();
        out.set_min(&[2]).unwrap();
        run(&m, &[A::S(ScalarValue::Int(p)), A::B(&out)]).unwrap();
        for x in 2..8i32 {
            let want = if p > 0 { x } else { 0 };
            assert_eq!(out.get_i128(&[x]).unwrap(), want as i128, "p = {p}, x = {x}");
        }
    }
}
