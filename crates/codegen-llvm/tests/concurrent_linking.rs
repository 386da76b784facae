//! Pipelines compiled, linked, run and dropped on many threads at once
//! all compute their own values. LLVM's ORC, linking several objects at
//! once without the loader's lock, now and then gave out an entry point
//! whose callee was not mapped: a segfault (the `math` tests, run on eight
//! threads, crashed about one run in six).

mod common;

use common::*;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Intrinsic, MathFn, Stmt, Type};
use ferrohalide_core::lower::LoweredPipeline;

const LANES: u16 = 16;
const LEN: i32 = 256;

/// `out[x] = sin(a[x]) + k`, vectorized: its loop is outlined, so the
/// entry point calls into code the linker places apart from it.
fn sine_plus(k: f32) -> LoweredPipeline {
    let f = Type::float(32);
    let t = f.with_lanes(LANES);
    let idx = Expr::ramp(Expr::mul(v("xo"), i(LANES as i64)), i(1), LANES);
    let all = Expr::broadcast(Expr::bool_const(true), LANES);
    let a = Expr::load(t, "a", idx.clone(), all.clone());
    let sin = Expr::intrinsic(t, Intrinsic::Math(MathFn::Sin), vec![a]);
    let val = Expr::add(sin, Expr::broadcast(Expr::f32(k as f64), LANES));
    let body = Stmt::for_loop(
        "xo",
        i(0),
        Expr::div(v("out.extent.0"), i(LANES as i64)),
        ForType::Serial,
        Stmt::store("out", val, idx, all),
    );
    pipeline(
        &format!("sine_plus_{}", k as i32),
        vec![in_arg("a", f, 1), out_arg("out", f, 1)],
        body,
    )
}

#[test]
fn pipelines_linked_on_many_threads_at_once_compute_their_own_values() {
    let f = Type::float(32);
    std::thread::scope(|s| {
        for thread in 0..8 {
            s.spawn(move || {
                for round in 0..40 {
                    // Distinct constants, so no two threads share a cache entry.
                    let k = (thread * 100 + round) as f32;
                    let m = jit(&sine_plus(k));
                    let a = Buffer::new(f, &[LEN], None).unwrap();
                    for x in 0..LEN {
                        a.set_f64(&[x], x as f64 * 0.01).unwrap();
                    }
                    let out = Buffer::new(f, &[LEN], None).unwrap();
                    run(&m, &[A::B(&a), A::B(&out)]).unwrap();
                    for x in 0..LEN {
                        let want = (x as f32 * 0.01).sin() + k;
                        let got = out.get_f64(&[x]).unwrap() as f32;
                        assert!((got - want).abs() <= 1e-3 * want.abs().max(1.0), "k {k}, x {x}: {got} != {want}");
                    }
                }
            });
        }
    });
}
