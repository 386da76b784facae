//! Prints how long JIT compilation takes for a few small pipelines.
//! `cargo run --release -p ferrohalide-codegen-llvm --example compile_time`

use std::time::Instant;

use ferrohalide_codegen_llvm::{compile_jit, JitTarget};
use ferrohalide_core::ir::{Expr, ForType, Intrinsic, MathFn, Stmt, Type};
use ferrohalide_core::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};

fn arg(name: &str, kind: ArgumentKind) -> LoweredArgument {
    LoweredArgument {
        name: name.into(),
        kind,
        ty: Type::float(32),
        dimensions: 1,
        estimates: Default::default(),
    }
}

fn pipeline(name: &str, m: Option<MathFn>, lanes: u16) -> LoweredPipeline {
    let base = Expr::mul(Expr::var_i32("xo"), Expr::i32(lanes as i64));
    let idx = Expr::ramp(base, Expr::i32(1), lanes);
    let tru = Expr::broadcast(Expr::bool_const(true), lanes);
    let t = Type::float(32).with_lanes(lanes);
    let a = Expr::load(t, "a", idx.clone(), tru.clone());
    let val = match m {
        Some(m) => Expr::intrinsic(t, Intrinsic::Math(m), vec![a]),
        None => Expr::mul(a, Expr::broadcast(Expr::f32(2.0), lanes)),
    };
    let body = Stmt::for_loop(
        "xo",
        Expr::i32(0),
        Expr::div(Expr::var_i32("out.extent.0"), Expr::i32(lanes as i64)),
        ForType::Parallel,
        Stmt::store("out", val, idx, tru),
    );
    LoweredPipeline {
        name: name.into(),
        args: vec![
            arg("a", ArgumentKind::InputBuffer),
            arg("out", ArgumentKind::OutputBuffer),
        ],
        body,
    }
}

fn main() {
    if std::env::var_os("DUMP").is_some() {
        dump("sin");
        return;
    }
    let target = JitTarget::host();
    println!(
        "target: {} {}",
        target.cpu,
        if target.has_feature("avx512f") {
            "(avx512)"
        } else {
            ""
        }
    );
    for (name, m) in [
        ("scale", None),
        ("sin", Some(MathFn::Sin)),
        ("exp", Some(MathFn::Exp)),
        ("erf", Some(MathFn::Erf)),
    ] {
        for rep in 0..3 {
            let p = pipeline(name, m, 16);
            let t0 = Instant::now();
            let jm = compile_jit(&p, &target).unwrap();
            let dt = t0.elapsed();
            if rep == 2 {
                println!("{name:8} {:7.2} ms", dt.as_secs_f64() * 1e3);
            }
            drop(jm);
        }
    }
}

#[allow(dead_code)]
pub fn dump(name: &str) {
    let p = pipeline(name, Some(MathFn::Sin), 16);
    println!(
        "{}",
        ferrohalide_codegen_llvm::compile_to_assembly(&p, &JitTarget::host()).unwrap()
    );
}
