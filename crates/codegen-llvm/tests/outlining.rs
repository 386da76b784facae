//! Large loop nests become functions of their own (`codegen::parallel`),
//! and a large module compiles on several threads (`module_split`): the
//! results are those of the code compiled whole.

mod common;

use common::*;
use ferrohalide_codegen_llvm::compile_to_assembly;
use ferrohalide_codegen_llvm::JitTarget;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Stmt, Type};

const STEPS: i64 = 250;

/// A long chain of arithmetic on x, y (about 2,000 IR nodes): enough to
/// make a loop nest computing it worth outlining.
fn chain(salt: i64) -> Expr {
    let mut acc = Expr::add(v("x"), i(salt));
    for k in 0..STEPS {
        let stepped = Expr::add(
            Expr::sub(Expr::mul(acc, i(2)), v("x")),
            Expr::add(v("y"), i(k * salt)),
        );
        acc = Expr::max(Expr::min(stepped, i(100_000)), i(-100_000));
    }
    acc
}

fn chain_value(x: i64, y: i64, salt: i64) -> i64 {
    let mut acc = x + salt;
    for k in 0..STEPS {
        acc = (acc * 2 - x + (y + k * salt)).clamp(-100_000, 100_000);
    }
    acc
}

/// for y, for x: out[x, y] = chain(salt), over out's 2-D region.
fn nest(out: &str, salt: i64, outer: ForType) -> Stmt {
    let m = |d: usize| v(&format!("{out}.min.{d}"));
    let idx = Expr::add(
        Expr::sub(v("x"), m(0)),
        Expr::mul(Expr::sub(v("y"), m(1)), v(&format!("{out}.stride.1"))),
    );
    let inner = Stmt::for_loop(
        "x",
        m(0),
        v(&format!("{out}.extent.0")),
        ForType::Serial,
        Stmt::store(out, chain(salt), idx, Expr::bool_const(true)),
    );
    Stmt::for_loop("y", m(1), v(&format!("{out}.extent.1")), outer, inner)
}

fn three_nests() -> ferrohalide_core::lower::LoweredPipeline {
    let t = Type::i32();
    let body = Stmt::block(vec![
        nest("a", 1, ForType::Serial),
        nest("b", 2, ForType::Serial),
        nest("c", 3, ForType::Parallel),
    ]);
    pipeline(
        "three_nests",
        vec![out_arg("a", t, 2), out_arg("b", t, 2), out_arg("c", t, 2)],
        body,
    )
}

/// How many outlined serial loop functions `p`'s assembly defines.
fn outlined_loops(p: &ferrohalide_core::lower::LoweredPipeline) -> usize {
    let asm = compile_to_assembly(p, &JitTarget::host()).unwrap();
    let label = format!("{}.loop.", p.name);
    asm.lines().filter(|l| l.starts_with(&label) && l.ends_with(':')).count()
}

#[test]
fn large_loop_nests_are_outlined() {
    assert_eq!(
        outlined_loops(&three_nests()),
        2,
        "the two serial nests should be functions of their own"
    );
}

#[test]
fn outlined_and_split_code_computes_the_same() {
    let m = jit(&three_nests());
    let t = Type::i32();
    let bufs: Vec<Buffer> = (0..3)
        .map(|_| Buffer::new(t, &[13, 7], None).unwrap())
        .collect();
    run(&m, &[A::B(&bufs[0]), A::B(&bufs[1]), A::B(&bufs[2])]).unwrap();
    for (b, salt) in bufs.iter().zip(1..) {
        for y in 0..7 {
            for x in 0..13 {
                assert_eq!(
                    b.get_i128(&[x, y]).unwrap(),
                    chain_value(x as i64, y as i64, salt) as i128,
                    "salt {salt} at ({x}, {y})"
                );
            }
        }
    }
}

const LUT: i64 = 64;
const TAPS: i64 = 8;

/// for x: out[32x .. 32x + 32] = the sum over k < TAPS of
/// lut[((32x + lane + k) * 7 + salt) % LUT]: eight 32-lane gathers, a loop
/// of under a hundred IR nodes that becomes a few thousand instructions.
fn gather_nest(out: &str, salt: i64) -> Stmt {
    let t = Type::i32();
    let mut sum = Expr::broadcast(i(0), 32);
    for k in 0..TAPS {
        let lanes = Expr::ramp(Expr::add(Expr::mul(v("x"), i(32)), i(k)), i(1), 32);
        let index = Expr::modulo(
            Expr::add(Expr::mul(lanes, Expr::broadcast(i(7), 32)), Expr::broadcast(i(salt), 32)),
            Expr::broadcast(i(LUT), 32),
        );
        let tap = Expr::load(t.with_lanes(32), "lut", index, Expr::broadcast(Expr::bool_const(true), 32));
        sum = Expr::add(sum, tap);
    }
    let store_at = Expr::ramp(Expr::mul(v("x"), i(32)), i(1), 32);
    let store = Stmt::store(out, sum, store_at, Expr::broadcast(Expr::bool_const(true), 32));
    Stmt::for_loop("x", i(0), Expr::div(v(&format!("{out}.extent.0")), i(32)), ForType::Serial, store)
}

fn two_gather_nests() -> ferrohalide_core::lower::LoweredPipeline {
    let t = Type::i32();
    pipeline(
        "gathers",
        vec![in_arg("lut", t, 1), out_arg("a", t, 1), out_arg("b", t, 1)],
        Stmt::block(vec![gather_nest("a", 1), gather_nest("b", 2)]),
    )
}

#[test]
fn small_loop_nests_that_are_most_of_the_pipeline_are_outlined() {
    // Each nest is far under the size that outlines a nest on its own, but
    // with its gathers counted per lane it is half of the pipeline: as one
    // function the pipeline could not be compiled on two threads (blur).
    assert_eq!(outlined_loops(&two_gather_nests()), 2, "both gather nests should be functions of their own");
    let m = jit(&two_gather_nests());
    let t = Type::i32();
    let lut = Buffer::new(t, &[LUT as i32], None).unwrap();
    for j in 0..LUT {
        lut.set_i128(&[j as i32], (3 * j + 1) as i128).unwrap();
    }
    let outs: Vec<Buffer> = (0..2).map(|_| Buffer::new(t, &[64], None).unwrap()).collect();
    run(&m, &[A::B(&lut), A::B(&outs[0]), A::B(&outs[1])]).unwrap();
    for (b, salt) in outs.iter().zip(1..) {
        for x in 0..64i64 {
            let expected: i64 = (0..TAPS).map(|k| 3 * (((x + k) * 7 + salt) % LUT) + 1).sum();
            assert_eq!(b.get_i128(&[x as i32]).unwrap(), expected as i128, "salt {salt} at {x}");
        }
    }
}
