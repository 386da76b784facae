mod common;

use common::*;
use ferrohalide_codegen_llvm::ScalarValue;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Stmt, Type};
use ferrohalide_core::ErrorKind;

#[test]
fn store_x_times_two() {
    let body = loop_1d(
        "out",
        "x",
        Type::i32(),
        ForType::Serial,
        Expr::mul(v("x"), i(2)),
    );
    let p = pipeline("times_two", vec![out_arg("out", Type::i32(), 1)], body);
    let m = jit(&p);
    let out = Buffer::new(Type::i32(), &[100], None).unwrap();
    out.set_min(&[-10]).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    for x in -10..90 {
        assert_eq!(out.get_i128(&[x]).unwrap(), 2 * x as i128);
    }
}

#[test]
fn scalar_args_and_input_buffer() {
    // out[x] = in[x] * k + off (f32)
    let f = Type::float(32);
    let val = Expr::add(
        Expr::mul(
            Expr::load(
                f,
                "inp",
                Expr::sub(v("x"), v("inp.min.0")),
                Expr::bool_const(true),
            ),
            Expr::var(f, "k"),
        ),
        Expr::cast(f, Expr::var(Type::int(16), "off")),
    );
    let body = loop_1d("out", "x", f, ForType::Serial, val);
    let p = pipeline(
        "affine",
        vec![
            in_arg("inp", f, 1),
            scalar_arg("k", f),
            scalar_arg("off", Type::int(16)),
            out_arg("out", f, 1),
        ],
        body,
    );
    let m = jit(&p);
    let inp = Buffer::new(f, &[16], None).unwrap();
    for x in 0..16 {
        inp.set_f64(&[x], x as f64 * 0.5).unwrap();
    }
    let out = Buffer::new(f, &[16], None).unwrap();
    run(
        &m,
        &[
            A::B(&inp),
            A::S(ScalarValue::Float(3.0)),
            A::S(ScalarValue::Int(-7)),
            A::B(&out),
        ],
    )
    .unwrap();
    for x in 0..16 {
        assert_eq!(out.get_f64(&[x]).unwrap(), x as f64 * 1.5 - 7.0);
    }
}

#[test]
fn vector_loop_with_ramps() {
    // for xo in 0..extent/8: out[ramp(xo*8, 1, 8)] = ramp(xo*8,1,8) * 3 + load(in, ramp(xo*8 + 7, -1, 8))
    let t = Type::i32();
    let base = Expr::mul(v("xo"), i(8));
    let idx = Expr::ramp(base.clone(), i(1), 8);
    let rev = Expr::ramp(Expr::add(base.clone(), i(7)), i(-1), 8);
    let val = Expr::add(
        Expr::mul(idx.clone(), Expr::broadcast(i(3), 8)),
        Expr::load(
            t.with_lanes(8),
            "inp",
            rev,
            Expr::broadcast(Expr::bool_const(true), 8),
        ),
    );
    let store = Stmt::store("out", val, idx, Expr::broadcast(Expr::bool_const(true), 8));
    let body = Stmt::for_loop(
        "xo",
        i(0),
        Expr::div(v("out.extent.0"), i(8)),
        ForType::Serial,
        store,
    );
    let p = pipeline("vec", vec![in_arg("inp", t, 1), out_arg("out", t, 1)], body);
    let m = jit(&p);
    let inp = Buffer::new(t, &[64], None).unwrap();
    for x in 0..64 {
        inp.set_i128(&[x], 1000 * x as i128).unwrap();
    }
    let out = Buffer::new(t, &[64], None).unwrap();
    run(&m, &[A::B(&inp), A::B(&out)]).unwrap();
    for x in 0..64 {
        let r = (x / 8) * 8 + 7 - (x % 8);
        assert_eq!(
            out.get_i128(&[x]).unwrap(),
            3 * x as i128 + 1000 * r as i128,
            "x = {x}"
        );
    }
}

#[test]
fn gather_and_predicated_store() {
    // out[ramp(8*xo,1,8)] = in[ramp(2*8*xo, 2, 8)] where lane index < 5 (predicated store)
    let t = Type::int(16);
    let base = Expr::mul(v("xo"), i(8));
    let idx = Expr::ramp(base.clone(), i(1), 8);
    let gidx = Expr::ramp(Expr::mul(base.clone(), i(2)), i(2), 8);
    let pred = Expr::lt(Expr::ramp(i(0), i(1), 8), Expr::broadcast(i(5), 8));
    let val = Expr::load(
        t.with_lanes(8),
        "inp",
        gidx,
        Expr::broadcast(Expr::bool_const(true), 8),
    );
    let store = Stmt::store("out", val, idx, pred);
    let body = Stmt::for_loop("xo", i(0), i(4), ForType::Serial, store);
    let p = pipeline(
        "gather",
        vec![in_arg("inp", t, 1), out_arg("out", t, 1)],
        body,
    );
    let m = jit(&p);
    let inp = Buffer::new(t, &[64], None).unwrap();
    for x in 0..64 {
        inp.set_i128(&[x], x as i128 - 30).unwrap();
    }
    let out = Buffer::new(t, &[32], None).unwrap();
    for x in 0..32 {
        out.set_i128(&[x], 999).unwrap();
    }
    run(&m, &[A::B(&inp), A::B(&out)]).unwrap();
    for x in 0..32 {
        let want = if x % 8 < 5 { 2 * x as i128 - 30 } else { 999 };
        assert_eq!(out.get_i128(&[x]).unwrap(), want, "x = {x}");
    }
}

#[test]
fn assertion_failure_is_a_runtime_error() {
    let msg = Expr::intrinsic(
        Type::i32(),
        ferrohalide_core::ir::Intrinsic::Error,
        vec![
            Expr::string("extent of out is "),
            v("out.extent.0"),
            Expr::string(", but must be < 5"),
        ],
    );
    let check = Stmt::assert(Expr::lt(v("out.extent.0"), i(5)), msg);
    let body = Stmt::block(vec![
        check,
        loop_1d("out", "x", Type::i32(), ForType::Serial, v("x")),
    ]);
    let p = pipeline("checked", vec![out_arg("out", Type::i32(), 1)], body);
    let m = jit(&p);
    let ok = Buffer::new(Type::i32(), &[4], None).unwrap();
    run(&m, &[A::B(&ok)]).unwrap();
    let bad = Buffer::new(Type::i32(), &[7], None).unwrap();
    let e = run(&m, &[A::B(&bad)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert_eq!(e.message, "extent of out is 7, but must be < 5");
    // It stays usable after a failure.
    run(&m, &[A::B(&ok)]).unwrap();
}

#[test]
fn heap_and_stack_allocations() {
    // allocate tmp[n]; for x: tmp[x] = x*x; for x: out[x] = tmp[x] + tmp[n-1-x]
    let t = Type::i32();
    for (n_const, name) in [(true, "stack"), (false, "heap")] {
        let n = if n_const { i(64) } else { v("out.extent.0") };
        let fill = Stmt::for_loop(
            "x",
            i(0),
            n.clone(),
            ForType::Serial,
            Stmt::store(
                "tmp",
                Expr::mul(v("x"), v("x")),
                v("x"),
                Expr::bool_const(true),
            ),
        );
        let read = Stmt::for_loop(
            "y",
            i(0),
            n.clone(),
            ForType::Serial,
            Stmt::store(
                "out",
                Expr::add(
                    Expr::load(t, "tmp", v("y"), Expr::bool_const(true)),
                    Expr::load(
                        t,
                        "tmp",
                        Expr::sub(Expr::sub(n.clone(), i(1)), v("y")),
                        Expr::bool_const(true),
                    ),
                ),
                v("y"),
                Expr::bool_const(true),
            ),
        );
        let body = Stmt::new(ferrohalide_core::ir::StmtNode::Allocate {
            name: "tmp".into(),
            ty: t,
            memory_type: Default::default(),
            extents: vec![n.clone()],
            condition: Expr::bool_const(true),
            body: Stmt::block(vec![fill, read]),
        });
        let p = pipeline(name, vec![out_arg("out", t, 1)], body);
        let m = jit(&p);
        let out = Buffer::new(t, &[64], None).unwrap();
        run(&m, &[A::B(&out)]).unwrap();
        for x in 0..64i128 {
            assert_eq!(
                out.get_i128(&[x as i32]).unwrap(),
                x * x + (63 - x) * (63 - x)
            );
        }
        let ir = ferrohalide_codegen_llvm::compile_to_llvm_ir(&p, &ferrohalide_codegen_llvm::JitTarget::host()).unwrap();
        assert_eq!(ir.contains("halide_malloc"), !n_const, "{name}");
    }
}

#[test]
fn bool_buffers_and_selects() {
    // out_b[x] = x % 3 == 0 ; out[x] = select(out_b-like cond, x, -x)
    let body = Stmt::block(vec![
        loop_1d(
            "flags",
            "x",
            Type::bool(),
            ForType::Serial,
            Expr::eq(Expr::modulo(v("x"), i(3)), i(0)),
        ),
        loop_1d(
            "out",
            "x",
            Type::i32(),
            ForType::Serial,
            Expr::select(
                Expr::load(Type::bool(), "flags", v("x"), Expr::bool_const(true)),
                v("x"),
                Expr::sub(i(0), v("x")),
            ),
        ),
    ]);
    let p = pipeline(
        "bools",
        vec![
            out_arg("flags", Type::bool(), 1),
            out_arg("out", Type::i32(), 1),
        ],
        body,
    );
    let m = jit(&p);
    let flags = Buffer::new(Type::bool(), &[10], None).unwrap();
    let out = Buffer::new(Type::i32(), &[10], None).unwrap();
    run(&m, &[A::B(&flags), A::B(&out)]).unwrap();
    for x in 0..10 {
        assert_eq!(flags.get_i128(&[x]).unwrap(), (x % 3 == 0) as i128);
        assert_eq!(
            out.get_i128(&[x]).unwrap(),
            if x % 3 == 0 { x as i128 } else { -(x as i128) }
        );
    }
}

#[test]
fn float16_scalar_and_math() {
    let h = Type::float(16);
    let f = Type::float(32);
    // out[x] = f32(sin(f16(x) * k))
    let val = Expr::cast(
        f,
        Expr::intrinsic(
            h,
            ferrohalide_core::ir::Intrinsic::Math(ferrohalide_core::ir::MathFn::Sin),
            vec![Expr::mul(Expr::cast(h, v("x")), Expr::var(h, "k"))],
        ),
    );
    let body = loop_1d("out", "x", f, ForType::Serial, val);
    let p = pipeline("half", vec![scalar_arg("k", h), out_arg("out", f, 1)], body);
    let m = jit(&p);
    let out = Buffer::new(f, &[8], None).unwrap();
    run(&m, &[A::S(ScalarValue::Float(0.25)), A::B(&out)]).unwrap();
    for x in 0..8 {
        let want = (x as f64 * 0.25).sin();
        let got = out.get_f64(&[x]).unwrap();
        assert!((got - want).abs() < 1e-3, "x = {x}: {got} vs {want}");
    }
}

#[test]
fn the_jit_runtime_exports_only_its_own_functions() {
    let rt = ferrohalide_codegen_llvm::jit_runtime::shared().unwrap();
    assert!(rt.symbol("halide_malloc").is_some());
    assert!(rt.symbol("halide_do_par_for").is_some());
    // What it imports from the C library is not the runtime's: lookups of
    // such names go on to symbols users registered (runtime_symbols).
    assert!(rt.symbol("memcpy").is_none());
    assert!(rt.symbol("no_such_function_anywhere").is_none());
}
