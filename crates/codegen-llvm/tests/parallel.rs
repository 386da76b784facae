mod common;

use std::collections::HashSet;

use common::*;
use ferrohalide_codegen_llvm::runtime_symbols::register_symbol;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{CallKind, Expr, ForType, Intrinsic, Stmt, StmtNode, Type};
use ferrohalide_core::ErrorKind;

extern "C" fn test_sleep_us(us: i32) -> i32 {
    std::thread::sleep(std::time::Duration::from_micros(us as u64));
    0
}

#[test]
fn parallel_loop_uses_several_threads() {
    register_symbol("test_sleep_us", test_sleep_us as *const () as usize);
    let sleep = Expr::call(
        Type::i32(),
        "test_sleep_us",
        vec![i(2000)],
        CallKind::Extern,
    );
    // out[x] = thread_index() + sleep(2ms) (sleep returns 0)
    let body = loop_1d(
        "out",
        "x",
        Type::i32(),
        ForType::Parallel,
        Expr::add(thread_index(), sleep),
    );
    let p = pipeline("par_threads", vec![out_arg("out", Type::i32(), 1)], body);
    let m = jit(&p);
    let out = Buffer::new(Type::i32(), &[32], None).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    let ids: HashSet<i128> = (0..32).map(|x| out.get_i128(&[x]).unwrap()).collect();
    if num_threads() > 1 {
        assert!(ids.len() > 1, "all iterations ran on one thread: {ids:?}");
    }
}

#[test]
fn nested_parallel_loops_with_captures() {
    // for y (parallel): for x (parallel): out[x + y*stride] = x * k + y
    let t = Type::i32();
    let idx = Expr::add(
        Expr::sub(v("x"), v("out.min.0")),
        Expr::mul(Expr::sub(v("y"), v("out.min.1")), v("out.stride.1")),
    );
    let val = Expr::add(Expr::mul(v("x"), Expr::var(t, "k")), v("y"));
    let inner = Stmt::for_loop(
        "x",
        v("out.min.0"),
        v("out.extent.0"),
        ForType::Parallel,
        Stmt::store("out", val, idx, Expr::bool_const(true)),
    );
    let body = Stmt::for_loop(
        "y",
        v("out.min.1"),
        v("out.extent.1"),
        ForType::Parallel,
        inner,
    );
    let p = pipeline(
        "nested",
        vec![scalar_arg("k", t), out_arg("out", t, 2)],
        body,
    );
    let m = jit(&p);
    let out = Buffer::new(t, &[37, 23], None).unwrap();
    out.set_min(&[-3, 5]).unwrap();
    run(
        &m,
        &[
            A::S(ferrohalide_codegen_llvm::ScalarValue::Int(100)),
            A::B(&out),
        ],
    )
    .unwrap();
    for y in 5..28 {
        for x in -3..34 {
            assert_eq!(out.get_i128(&[x, y]).unwrap(), (x * 100 + y) as i128);
        }
    }
}

#[test]
fn error_inside_parallel_loop_with_heap_allocation() {
    // parallel x: allocate tmp[n] (heap); tmp[0] = x; assert(x != 37); out[x] = tmp[0]
    let t = Type::i32();
    let msg = Expr::intrinsic(t, Intrinsic::Error, vec![Expr::string("x was "), v("x")]);
    let inner = Stmt::block(vec![
        Stmt::store("tmp", v("x"), i(0), Expr::bool_const(true)),
        Stmt::assert(Expr::ne(v("x"), i(37)), msg),
        Stmt::store(
            "out",
            Expr::load(t, "tmp", i(0), Expr::bool_const(true)),
            v("x"),
            Expr::bool_const(true),
        ),
    ]);
    let alloc = Stmt::new(StmtNode::Allocate {
        name: "tmp".into(),
        ty: t,
        memory_type: Default::default(),
        extents: vec![v("n")],
        condition: Expr::bool_const(true),
        body: inner,
    });
    let body = Stmt::for_loop("x", i(0), v("out.extent.0"), ForType::Parallel, alloc);
    let p = pipeline(
        "par_err",
        vec![scalar_arg("n", t), out_arg("out", t, 1)],
        body,
    );
    let m = jit(&p);
    let small = Buffer::new(t, &[30], None).unwrap();
    run(
        &m,
        &[
            A::S(ferrohalide_codegen_llvm::ScalarValue::Int(100000)),
            A::B(&small),
        ],
    )
    .unwrap();
    assert_eq!(small.get_i128(&[29]).unwrap(), 29);
    let big = Buffer::new(t, &[100], None).unwrap();
    let e = run(
        &m,
        &[
            A::S(ferrohalide_codegen_llvm::ScalarValue::Int(100000)),
            A::B(&big),
        ],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert_eq!(e.message, "x was 37");
}
