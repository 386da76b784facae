//! The JIT honours the target's features: code for `x86-64-linux-avx2`
//! uses no AVX-512 registers (even on an AVX-512 host), code for a target
//! with no vector features no AVX at all, and targets for another machine
//! are refused rather than run.

use ferrohalide_codegen_llvm::{compile_to_assembly, target::init_host_target, JitTarget};
use ferrohalide_core::ir::{Expr, Type};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::image_param::ImageParam;
use ferrohalide_core::lower::lower;
use ferrohalide_core::schedule::TailStrategy;
use ferrohalide_core::target::Target;

/// Assembly of `f(x) = in(x) * 3 + 1` over float32, vectorized by 16.
fn assembly_for(target: &str) -> Option<String> {
    init_host_target();
    let t = Target::parse(target).unwrap();
    // A host without the features cannot test this: skip.
    let jt = JitTarget::for_target(&t).ok()?;
    let input = ImageParam::new(Type::float(32), 1, Some("inp"));
    let f = Func::new(Some("target_test_f"));
    let x = Expr::var_i32("x");
    let v = Expr::add(
        Expr::mul(input.call(vec![x.clone()]).unwrap(), Expr::f32(3.0)),
        Expr::f32(1.0),
    );
    f.define(vec![x], vec![v]).unwrap();
    f.vectorize_by("x", Expr::i32(16), TailStrategy::ShiftInwards)
        .unwrap();
    let lowered = lower(&[f.function.clone()], "target_test").unwrap();
    Some(compile_to_assembly(&lowered.pipeline, &jt).unwrap())
}

#[test]
fn avx2_target_emits_no_avx512() {
    let Some(asm) = assembly_for("x86-64-linux-avx2-fma-f16c-sse41-avx") else {
        return;
    };
    assert!(asm.contains("ymm"), "expected 256-bit vectors:\n{asm}");
    assert!(
        !asm.contains("zmm"),
        "AVX-512 register in avx2 code:\n{asm}"
    );
}

#[test]
fn baseline_target_emits_no_avx() {
    let Some(asm) = assembly_for("x86-64-linux") else {
        return;
    };
    assert!(asm.contains("xmm"));
    assert!(
        !asm.contains("ymm") && !asm.contains("zmm"),
        "AVX register in SSE2 code:\n{asm}"
    );
    assert!(
        !asm.contains("vmul"),
        "VEX-encoded instruction in SSE2 code:\n{asm}"
    );
}

#[test]
fn host_target_and_foreign_targets() {
    init_host_target();
    let host = Target::host();
    assert!(JitTarget::for_target(&host).is_ok());
    let err = JitTarget::for_target(&Target::parse("arm-64-linux").unwrap()).unwrap_err();
    assert!(err
        .message
        .contains("Cannot run code compiled for target arm-64-linux"));
}

#[test]
fn a_feature_is_on_when_its_last_mention_adds_it() {
    let t = JitTarget::new("x86-64", "+sse2,+avx512f,-avx512fp16,+avx2,-avx2");
    assert!(t.has_feature("sse2"));
    assert!(t.has_feature("avx512f"));
    // A longer name with the same start is another feature.
    assert!(!t.has_feature("avx512fp16"));
    assert!(!t.has_feature("avx512"));
    // The last mention decides.
    assert!(!t.has_feature("avx2"));
    assert!(!t.has_feature("fma"));
    assert!(!t.has_feature(""));
    assert!(JitTarget::new("x86-64", " +fma , -sse4a").has_feature("fma"));
}
