//! The JIT compiles a pipeline's body cold (`EntryOptions::cold_body`):
//! its serial loops become functions of their own, optimized as usual, and
//! the body itself, run once per call, is `optnone`.

mod common;

use common::*;
use ferrohalide_codegen_llvm::{compile_to_llvm_ir, JitTarget};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Stmt, Type};

/// `for y: for x: out[x, y] = x * 10 + y` over the output's region.
fn nested_loops() -> ferrohalide_core::lower::LoweredPipeline {
    let value = Expr::add(Expr::mul(v("x"), i(10)), v("y"));
    let index = Expr::add(
        Expr::sub(v("x"), v("out.min.0")),
        Expr::mul(Expr::sub(v("y"), v("out.min.1")), v("out.stride.1")),
    );
    let store = Stmt::store("out", value, index, Expr::bool_const(true));
    let inner = Stmt::for_loop("x", v("out.min.0"), v("out.extent.0"), ForType::Serial, store);
    let outer = Stmt::for_loop("y", v("out.min.1"), v("out.extent.1"), ForType::Serial, inner);
    pipeline("cold_body", vec![out_arg("out", Type::i32(), 2)], outer)
}

/// The text of the function named `name` in `ir`, with its attribute group.
fn function<'a>(ir: &'a str, name: &str) -> &'a str {
    let start = ir
        .find(&format!("@{name}("))
        .unwrap_or_else(|| panic!("no function {name} in:\n{ir}"));
    let end = ir[start..].find("\n}").map_or(ir.len(), |e| start + e);
    &ir[start..end]
}

#[test]
fn the_body_is_optnone_and_its_loop_nest_a_function_of_its_own() {
    let ir = compile_to_llvm_ir(&nested_loops(), &JitTarget::host()).unwrap();
    let body = function(&ir, "cold_body.body");
    let header = body.lines().next().unwrap_or_default();
    let group = header
        .rsplit('#')
        .next()
        .and_then(|g| g.split_whitespace().next())
        .unwrap_or_else(|| panic!("no attribute group on {header}"));
    let attributes = ir
        .lines()
        .find(|l| l.starts_with(&format!("attributes #{group} ")))
        .unwrap_or_else(|| panic!("no attributes #{group} in:\n{ir}"));
    assert!(attributes.contains("optnone") && attributes.contains("noinline"), "{attributes}");
    assert!(body.contains("@cold_body.loop.y."), "the body calls its outlined loop nest:\n{ir}");
    // Only the outer loop is outlined: the nest inside it stays one function.
    assert!(!ir.contains("@cold_body.loop.x."), "the inner loop stays in its nest:\n{ir}");
}

#[test]
fn the_cold_body_computes_the_same_values() {
    let m = jit(&nested_loops());
    let out = Buffer::new(Type::i32(), &[5, 4], None).unwrap();
    out.set_min(&[-2, 3]).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    for y in 3..7i32 {
        for x in -2..3i32 {
            assert_eq!(out.get_i128(&[x, y]).unwrap(), (x * 10 + y) as i128, "at {x}, {y}");
        }
    }
}
