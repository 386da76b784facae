//! Atomic updates: `Atomic` nodes become atomic instructions (atomicrmw for
//! operators the hardware has, compare-and-swap loops otherwise), updates of
//! one element from every thread of a parallel loop all count, and atomic()
//! schedules lowered from Funcs run their racy loops on several threads.

#[path = "../../codegen-llvm/tests/common/mod.rs"]
mod common;

use std::collections::HashSet;

use common::*;
use ferrohalide_codegen_llvm::runtime_symbols::register_symbol;
use ferrohalide_codegen_llvm::{compile_to_llvm_ir, JitTarget};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{BinOp, CallKind, Expr, ForType, Stmt, Type};
use ferrohalide_core::lang::func::{image_call, Func};
use ferrohalide_core::lang::rdom::ReductionDomain;
use ferrohalide_core::lang::stage::VarOrRVar;
use ferrohalide_core::lower::{lower, LoweredPipeline};

/// `parallel for r in [0, n): atomic(out) { out[index] = out[index] op y }`
fn parallel_update(
    name: &str,
    ty: Type,
    n: i64,
    index: Expr,
    op: BinOp,
    y: Expr,
) -> LoweredPipeline {
    let old = Expr::load(ty, "out", index.clone(), Expr::bool_const(true));
    let update = Stmt::atomic(
        "out",
        "",
        Stmt::store(
            "out",
            Expr::binary(op, old, y),
            index,
            Expr::bool_const(true),
        ),
    );
    let body = Stmt::for_loop("r", i(0), i(n), ForType::Parallel, update);
    pipeline(name, vec![out_arg("out", ty, 1)], body)
}

fn ir_of(p: &LoweredPipeline) -> String {
    compile_to_llvm_ir(p, &JitTarget::host()).unwrap()
}

#[test]
fn an_add_to_one_element_from_every_thread_counts_every_time() {
    let n = 200_000;
    let p = parallel_update("atomic_count", Type::i32(), n, i(0), BinOp::Add, i(1));
    assert!(ir_of(&p).contains("atomicrmw add"), "{}", ir_of(&p));
    let m = jit(&p);
    for _ in 0..3 {
        let out = Buffer::new(Type::i32(), &[1], None).unwrap();
        run(&m, &[A::B(&out)]).unwrap();
        assert_eq!(out.get_i128(&[0]).unwrap(), n as i128);
    }
}

#[test]
fn operators_without_an_instruction_use_a_compare_and_swap_loop() {
    // out[0] = out[0] * 3 (wrapping): 3^n mod 2^32 whatever the order.
    let n = 100_000u32;
    let p = parallel_update(
        "atomic_mul",
        Type::uint(32),
        n as i64,
        i(0),
        BinOp::Mul,
        Expr::make_const_i64(Type::uint(32), 3),
    );
    let ir = ir_of(&p);
    assert!(ir.contains("cmpxchg") && !ir.contains("atomicrmw"), "{ir}");
    let m = jit(&p);
    let out = Buffer::new(Type::uint(32), &[1], None).unwrap();
    out.set_i128(&[0], 1).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    let want = (0..n).fold(1u32, |a, _| a.wrapping_mul(3));
    assert_eq!(out.get_i128(&[0]).unwrap(), want as i128);
}

#[test]
fn float_max_is_computed_from_the_value_it_replaces() {
    // out[r % 4] = max(out[r % 4], float(r)): a CAS loop on the float's bits.
    let n = 50_000;
    let idx = Expr::modulo(v("r"), i(4));
    let y = Expr::cast(Type::float(32), v("r"));
    let p = parallel_update("atomic_fmax", Type::float(32), n, idx, BinOp::Max, y);
    assert!(ir_of(&p).contains("cmpxchg"));
    let m = jit(&p);
    let out = Buffer::new(Type::float(32), &[4], None).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    for k in 0..4i32 {
        let want = (n - 4 + k as i64) as f64;
        assert_eq!(out.get_f64(&[k]).unwrap(), want);
    }
}

#[test]
fn float_add_is_an_atomic_fadd() {
    let n = 1 << 16;
    let p = parallel_update(
        "atomic_fadd",
        Type::float(32),
        n,
        i(0),
        BinOp::Add,
        Expr::make_const_f64(Type::float(32), 0.5),
    );
    assert!(ir_of(&p).contains("atomicrmw fadd"));
    let m = jit(&p);
    let out = Buffer::new(Type::float(32), &[1], None).unwrap();
    run(&m, &[A::B(&out)]).unwrap();
    assert_eq!(out.get_f64(&[0]).unwrap(), n as f64 / 2.0);
}

extern "C" fn atomic_test_sleep_us(us: i32) -> i32 {
    std::thread::sleep(std::time::Duration::from_micros(us as u64));
    0
}

/// A histogram of the threads that ran each iteration of an atomic()
/// update lowered from a Func: `h[thread()] += 1 + sleep()` over a 2-D
/// domain, atomic, parallel over r.y.
#[test]
fn an_atomic_racy_loop_lowered_from_a_func_runs_on_several_threads() {
    register_symbol(
        "atomic_test_sleep_us",
        atomic_test_sleep_us as *const () as usize,
    );
    let r = ReductionDomain::new(Some("r"), vec![(i(0), i(4)), (i(0), i(32))]).unwrap();
    let (rx, ry) = (r.rvar(0).unwrap(), r.rvar(1).unwrap());
    let h = Func::new(Some("atomic_threads"));
    h.define(vec![v("x")], vec![i(0)]).unwrap();
    let thread = thread_index();
    // (ry * 0 keeps r.y in the definition; the sleep spreads the work.)
    let sleep = Expr::call(
        Type::i32(),
        "atomic_test_sleep_us",
        vec![i(300)],
        CallKind::Extern,
    );
    let slot = Expr::add(Expr::modulo(thread, i(64)), Expr::mul(ry.expr(), i(0)));
    let old = h.call(vec![slot.clone()]).unwrap().to_expr().unwrap();
    let one = Expr::add(Expr::add(i(1), sleep), Expr::mul(rx.expr(), i(0)));
    h.define(vec![slot], vec![Expr::add(old, one)]).unwrap();
    let s = h.update(0).unwrap();
    s.atomic(false).unwrap();
    s.set_for_type(VarOrRVar::rvar(ry.name()), ForType::Parallel)
        .unwrap();
    let lowered = lower(&[h.function.clone()], "atomic_threads").unwrap();
    let text = lowered.pipeline.body.to_string();
    assert!(
        text.contains("parallel (") && text.contains("atomic (atomic_threads)"),
        "{text}"
    );
    assert!(ir_of(&lowered.pipeline).contains("atomicrmw add"), "{text}");
    let out = ferrohalide_driver::pipeline::realize(&[h.function.clone()], &[64]).unwrap();
    let counts: Vec<i128> = (0..64).map(|k| out[0].get_i128(&[k]).unwrap()).collect();
    assert_eq!(counts.iter().sum::<i128>(), 4 * 32, "{counts:?}");
    let threads: HashSet<usize> = (0..64usize).filter(|&k| counts[k] > 0).collect();
    if num_threads() > 1 {
        assert!(
            threads.len() > 1,
            "all iterations ran on one thread: {counts:?}"
        );
    }
}

#[test]
fn atomic_histogram_lowered_from_a_func_uses_atomic_adds() {
    let a: Vec<u8> = (0..64 * 16).map(|k| ((k * 7919) % 251) as u8).collect();
    let img = Buffer::new(Type::uint(8), &[64, 16], Some("atomic_hist_img".into())).unwrap();
    for (k, &b) in a.iter().enumerate() {
        img.set_i128(&[(k % 64) as i32, (k / 64) as i32], b as i128)
            .unwrap();
    }
    let r = ReductionDomain::new(Some("r"), vec![(i(0), i(64)), (i(0), i(16))]).unwrap();
    let (rx, ry) = (r.rvar(0).unwrap(), r.rvar(1).unwrap());
    let h = Func::new(Some("atomic_hist"));
    h.define(vec![v("x")], vec![i(0)]).unwrap();
    let bin = Expr::cast(
        Type::i32(),
        image_call(&img, vec![rx.expr(), ry.expr()]).unwrap(),
    );
    let old = h.call(vec![bin.clone()]).unwrap().to_expr().unwrap();
    h.define(vec![bin], vec![Expr::add(old, i(1))]).unwrap();
    let s = h.update(0).unwrap();
    s.atomic(false).unwrap();
    s.set_for_type(VarOrRVar::rvar(ry.name()), ForType::Parallel)
        .unwrap();
    let lowered = lower(&[h.function.clone()], "atomic_hist").unwrap();
    let ir = ir_of(&lowered.pipeline);
    assert!(ir.contains("atomicrmw add"), "{ir}");
    let out = ferrohalide_driver::pipeline::realize(&[h.function.clone()], &[256]).unwrap();
    let mut want = vec![0i128; 256];
    for &b in &a {
        want[b as usize] += 1;
    }
    let got: Vec<i128> = (0..256).map(|k| out[0].get_i128(&[k]).unwrap()).collect();
    assert_eq!(got, want);
}
