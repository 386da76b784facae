//! Randomized differential test: random integer expressions are simplified
//! and both versions are evaluated by a small reference interpreter with
//! Halide semantics (Euclidean div/mod, x/0 == 0, wrap-around for narrow and
//! unsigned types) on random variable values.
//!
//! Int(32) is treated by the simplifier as non-overflowing, so int32 cases
//! are only compared when neither evaluation overflows.

use std::collections::HashMap;

use super::simplify;
use crate::ir::{BinOp, Expr, ExprNode, Type};

/// xorshift64*: small, deterministic, no dependencies.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545F4914F6CDD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

const TYPES: [Type; 5] = [
    Type::int(32),
    Type::int(8),
    Type::uint(8),
    Type::int(16),
    Type::uint(16),
];

fn var_name(i: usize, ty: Type) -> String {
    format!("{}_{}", ["x", "y", "z"][i], ty)
}

pub(crate) struct Gen {
    pub(crate) rng: Rng,
    lets: usize,
    /// Mix int32 extremes (i32::MIN, i32::MAX, ...) into the constants.
    extreme: bool,
}

/// int32 constants at or near the edges of the type.
const EXTREMES: [i64; 10] = [
    i32::MIN as i64,
    i32::MAX as i64,
    -(i32::MAX as i64),
    i32::MIN as i64 + 2,
    i32::MAX as i64 - 1,
    1 << 30,
    -(1 << 30),
    (1 << 30) + 1,
    i32::MAX as i64 / 2,
    i32::MIN as i64 / 2,
];

impl Gen {
    pub(crate) fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            lets: 0,
            extreme: false,
        }
    }

    pub(crate) fn new_extreme(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            lets: 0,
            extreme: true,
        }
    }

    fn constant(&mut self, ty: Type) -> Expr {
        if self.extreme && ty == Type::int(32) && self.rng.below(2) == 0 {
            let v = EXTREMES[self.rng.below(EXTREMES.len() as u64) as usize];
            return Expr::make_const_i64(ty, v);
        }
        let v = match self.rng.below(10) {
            0 => {
                if ty.bits < 32 {
                    if self.rng.below(2) == 0 {
                        ty.max_int() as i64
                    } else {
                        ty.min_int() as i64
                    }
                } else {
                    self.rng.range(-1000, 1000)
                }
            }
            1 => 0,
            2 => 1,
            _ => self.rng.range(-10, 10),
        };
        Expr::make_const_i64(ty, v)
    }

    pub(crate) fn int_expr(&mut self, ty: Type, depth: u32) -> Expr {
        if depth == 0 || self.rng.below(8) == 0 {
            return if self.rng.below(3) == 0 {
                self.constant(ty)
            } else {
                Expr::var(ty, var_name(self.rng.below(3) as usize, ty))
            };
        }
        let d = depth - 1;
        match self.rng.below(14) {
            0..=1 => Expr::add(self.int_expr(ty, d), self.int_expr(ty, d)),
            2..=3 => Expr::sub(self.int_expr(ty, d), self.int_expr(ty, d)),
            4 => Expr::mul(self.int_expr(ty, d), self.int_expr(ty, d)),
            5 => Expr::mul(self.int_expr(ty, d), self.constant(ty)),
            6 => {
                let b = if self.rng.below(3) == 0 {
                    self.int_expr(ty, d)
                } else {
                    self.constant(ty)
                };
                Expr::div(self.int_expr(ty, d), b)
            }
            7 => {
                let b = if self.rng.below(3) == 0 {
                    self.int_expr(ty, d)
                } else {
                    self.constant(ty)
                };
                Expr::modulo(self.int_expr(ty, d), b)
            }
            8 => Expr::min(self.int_expr(ty, d), self.int_expr(ty, d)),
            9 => Expr::max(self.int_expr(ty, d), self.int_expr(ty, d)),
            10 => Expr::select(
                self.bool_expr(d),
                self.int_expr(ty, d),
                self.int_expr(ty, d),
            ),
            11 => {
                let other = TYPES[self.rng.below(TYPES.len() as u64) as usize];
                Expr::cast(ty, self.int_expr(other, d))
            }
            12 => {
                let name = format!("t{}", self.lets);
                self.lets += 1;
                let value = self.int_expr(ty, d);
                let v = Expr::var(ty, name.clone());
                let body = self.int_expr(ty, d);
                // use the let variable somewhere in the body
                let body = match self.rng.below(3) {
                    0 => Expr::add(body, v.clone()),
                    1 => Expr::min(v.clone(), body),
                    _ => Expr::sub(Expr::mul(v.clone(), self.constant(ty)), body),
                };
                Expr::let_(name, value, body)
            }
            _ => Expr::add(self.int_expr(ty, d), self.constant(ty)),
        }
    }

    pub(crate) fn bool_expr(&mut self, depth: u32) -> Expr {
        let d = depth.saturating_sub(1);
        match self.rng.below(9) {
            0 => Expr::and(self.bool_expr(d), self.bool_expr(d)),
            1 => Expr::or(self.bool_expr(d), self.bool_expr(d)),
            2 => Expr::not(self.bool_expr(d)),
            _ => {
                let ty = TYPES[self.rng.below(TYPES.len() as u64) as usize];
                let (a, b) = (self.int_expr(ty, d), self.int_expr(ty, d));
                let op = [
                    BinOp::LT,
                    BinOp::LE,
                    BinOp::GT,
                    BinOp::GE,
                    BinOp::EQ,
                    BinOp::NE,
                ][self.rng.below(6) as usize];
                Expr::binary(op, a, b)
            }
        }
    }
}

/// The oracle: the one evaluator (`analysis/evaluate.rs`). Returns the
/// value (bools as 0/1) and sets `overflow` if a non-overflowing type
/// (int32) overflowed somewhere.
pub(crate) fn eval(e: &Expr, env: &mut HashMap<String, i128>, overflow: &mut bool) -> i128 {
    eval_lane(e, 0, env, overflow)
}

/// Lane `lane` of a (possibly vector) expression.
pub(crate) fn eval_lane(
    e: &Expr,
    lane: i128,
    env: &mut HashMap<String, i128>,
    overflow: &mut bool,
) -> i128 {
    use crate::analysis::evaluate::{Evaluator, Value};
    let mut vars: HashMap<String, Value> =
        env.iter().map(|(k, v)| (k.clone(), Value::Int(*v))).collect();
    let mut ev = Evaluator::new(&mut vars);
    let v = ev
        .eval(e)
        .unwrap_or_else(|u| panic!("evaluator: {} in {e}", u.0));
    *overflow |= ev.overflowed;
    v[lane as usize]
        .as_int()
        .unwrap_or_else(|| panic!("a float value from {e}"))
}

pub(crate) fn random_env(rng: &mut Rng) -> HashMap<String, i128> {
    let mut env = HashMap::new();
    for ty in TYPES {
        for i in 0..3 {
            let v = if ty.bits >= 32 {
                match rng.below(4) {
                    0 => rng.range(-1000, 1000),
                    _ => rng.range(-20, 20),
                }
            } else {
                match rng.below(5) {
                    0 => ty.min_int() as i64,
                    1 => ty.max_int() as i64,
                    _ => rng.range(ty.min_int() as i64, ty.max_int() as i64),
                }
            };
            env.insert(var_name(i, ty), v as i128);
        }
    }
    env
}

#[test]
fn fuzz_simplify_matches_interpreter() {
    let seed: u64 = std::env::var("FH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12345);
    let cases: usize = std::env::var("FH_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let mut gen = Gen::new(seed);
    let mut env_rng = Rng::new(seed ^ 777);
    let mut compared = 0usize;
    let (mut changed, mut size_before, mut size_after) = (0usize, 0usize, 0usize);
    for case in 0..cases {
        let ty = TYPES[case % TYPES.len()];
        let depth = 2 + (case % 4) as u32;
        let e = if case % 7 == 0 {
            let b = gen.bool_expr(depth);
            Expr::select(b, Expr::make_const_i64(ty, 1), Expr::make_const_i64(ty, 0))
        } else {
            gen.int_expr(ty, depth)
        };
        let s = simplify(&e);
        assert_eq!(s.ty(), e.ty(), "type changed: {e} -> {s}");
        if !crate::ir::equal(&s, &e) {
            changed += 1;
        }
        size_before += node_count(&e);
        size_after += node_count(&s);
        if std::env::var("FH_FUZZ_SHOW").is_ok() && case % 50 == 0 {
            eprintln!("{e}\n  => {s}");
        }
        for _ in 0..12 {
            let mut env = random_env(&mut env_rng);
            let (mut o1, mut o2) = (false, false);
            let v1 = eval(&e, &mut env, &mut o1);
            let v2 = eval(&s, &mut env, &mut o2);
            if o1 || o2 {
                continue;
            }
            compared += 1;
            assert_eq!(
                v1,
                v2,
                "mismatch (case {case})\n  original:   {e}\n  simplified: {s}\n  env: {:?}",
                env.iter()
                    .filter(|(k, _)| e.to_string().contains(k.as_str()))
                    .collect::<Vec<_>>()
            );
        }
    }
    eprintln!("fuzz: {cases} cases, {changed} changed, nodes {size_before} -> {size_after}, {compared} comparisons");
    assert!(compared > cases * 5, "too few comparisons: {compared}");
}

/// int32 expressions built around extreme constants, with selects/min/max
/// (where the simplifier orders operands by building their difference) and
/// additions that move constants around. Values are compared only where
/// neither reference evaluation overflows int32 (reassociation may move an
/// overflow into an intermediate, as in Halide); a comparison the simplifier
/// decides outright must hold wherever the original does not overflow.
#[test]
fn fuzz_extreme_constants() {
    use super::can_prove;
    let seed: u64 = std::env::var("FH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(31337);
    let cases: usize = std::env::var("FH_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let mut gen = Gen::new_extreme(seed);
    let mut env_rng = Rng::new(seed ^ 4321);
    let t = Type::int(32);
    let (mut compared, mut proved) = (0usize, 0usize);
    for case in 0..cases {
        let depth = 2 + (case % 3) as u32;
        let e = match case % 6 {
            0 => Expr::max(gen.constant(t), gen.int_expr(t, depth)),
            1 => Expr::min(gen.int_expr(t, depth), gen.constant(t)),
            2 => {
                let s = Expr::select(gen.bool_expr(1), gen.constant(t), gen.constant(t));
                let (k0, k1) = (gen.constant(t), gen.constant(t));
                Expr::max(Expr::max(k0, s.clone()), Expr::min(k1, s))
            }
            3 => Expr::select(
                gen.bool_expr(depth),
                gen.int_expr(t, depth),
                gen.int_expr(t, depth),
            ),
            4 => Expr::sub(gen.int_expr(t, depth), gen.int_expr(t, depth)),
            _ => gen.int_expr(t, depth),
        };
        let s = simplify(&e);
        assert_eq!(s.ty(), e.ty(), "type changed: {e} -> {s}");
        // a comparison against another expression, for can_prove
        let other = if gen.rng.below(2) == 0 {
            gen.constant(t)
        } else {
            gen.int_expr(t, 2)
        };
        let op = [
            BinOp::LT,
            BinOp::LE,
            BinOp::GT,
            BinOp::GE,
            BinOp::EQ,
            BinOp::NE,
        ][gen.rng.below(6) as usize];
        let cond = Expr::binary(op, e.clone(), other);
        let sc = simplify(&cond);
        let p = sc.is_true();
        let np = sc.is_false();
        proved += (p || np) as usize;
        assert_eq!(p, can_prove(&cond));
        for _ in 0..12 {
            let mut env = random_env(&mut env_rng);
            // occasionally put variables at the edges too
            for name in ["x_int32", "y_int32", "z_int32"] {
                if env_rng.below(4) == 0 {
                    let v = EXTREMES[env_rng.below(EXTREMES.len() as u64) as usize];
                    env.insert(name.to_string(), v as i128);
                }
            }
            let show = |env: &HashMap<String, i128>, x: &Expr| {
                env.iter()
                    .filter(|(k, _)| x.to_string().contains(k.as_str()))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
            };
            let (mut o1, mut o2) = (false, false);
            let v1 = eval(&e, &mut env, &mut o1);
            let v2 = eval(&s, &mut env, &mut o2);
            if !o1 && !o2 {
                compared += 1;
                assert_eq!(
                    v1,
                    v2,
                    "mismatch (case {case})\n  original:   {e}\n  simplified: {s}\n  env: {:?}",
                    show(&env, &e)
                );
            }
            let (mut o3, mut o4) = (false, false);
            let c1 = eval(&cond, &mut env, &mut o3);
            let c2 = eval(&sc, &mut env, &mut o4);
            if !o3 {
                if p || np {
                    assert_eq!(
                        c1,
                        p as i128,
                        "wrong proof (case {case})\n  {cond}\n  => {sc}\n  env: {:?}",
                        show(&env, &cond)
                    );
                } else if !o4 {
                    assert_eq!(
                        c1,
                        c2,
                        "mismatch (case {case})\n  {cond}\n  => {sc}\n  env: {:?}",
                        show(&env, &cond)
                    );
                }
            }
        }
    }
    eprintln!("fuzz extreme: {cases} cases, {compared} comparisons, {proved} decided");
    assert!(compared > cases * 3, "too few comparisons: {compared}");
}

fn node_count(e: &Expr) -> usize {
    let mut n = 0;
    crate::ir::visit::for_each_expr(e, &mut |_| n += 1);
    n
}

#[test]
fn fuzz_simplify_is_idempotent_enough() {
    // Simplifying twice must not change the value either, and must not blow up.
    let mut gen = Gen::new(999);
    let mut env_rng = Rng::new(4242);
    for case in 0..1000 {
        let ty = TYPES[case % TYPES.len()];
        let e = gen.int_expr(ty, 4);
        let s1 = simplify(&e);
        let s2 = simplify(&s1);
        for _ in 0..4 {
            let mut env = random_env(&mut env_rng);
            let (mut o1, mut o2) = (false, false);
            let v1 = eval(&s1, &mut env, &mut o1);
            let v2 = eval(&s2, &mut env, &mut o2);
            if !o1 && !o2 {
                assert_eq!(v1, v2, "{s1} vs {s2}");
            }
        }
    }
}

#[test]
fn no_blowup_on_deep_or_shared_exprs() {
    use crate::ir::{ForType, Stmt};
    let t0 = std::time::Instant::now();
    let x = Expr::var_i32("x");
    // a long chain of constant additions collapses
    let mut e = x.clone();
    for i in 0..500 {
        e = Expr::add(e, Expr::i32(i % 7));
    }
    let s = simplify(&e);
    assert_eq!(
        s.to_string(),
        format!("(x + {})", (0..500).map(|i| i % 7).sum::<i64>())
    );
    // heavy DAG sharing: 2^40 tree nodes, 40 distinct ones
    let mut e = x.clone();
    for _ in 0..40 {
        e = Expr::add(Expr::mul(e.clone(), Expr::i32(3)), e);
    }
    let _ = simplify(&e);
    // nested min chain
    let mut e = x.clone();
    for i in 0..300 {
        e = Expr::min(e, Expr::add(Expr::var_i32(format!("v{i}")), Expr::i32(i)));
    }
    let _ = simplify(&e);
    // a long LetStmt chain, each used once below
    let mut body = Stmt::store("buf", Expr::i32(0), x.clone(), Expr::bool_const(true));
    for i in 0..300 {
        let v = Expr::var_i32(format!("l{i}"));
        body = Stmt::block(vec![
            Stmt::store("buf", v.clone(), v.clone(), Expr::bool_const(true)),
            body,
        ]);
        body = Stmt::let_stmt(
            format!("l{i}"),
            Expr::mul(x.clone(), Expr::var_i32(format!("w{i}"))),
            body,
        );
    }
    let s = Stmt::for_loop("x", Expr::i32(0), Expr::i32(100), ForType::Serial, body);
    let _ = super::simplify_stmt(&s);
    assert!(
        t0.elapsed().as_secs_f64() < 20.0,
        "too slow: {:?}",
        t0.elapsed()
    );
}

/// Turn a scalar expression into a 4-lane one: int32 `x` becomes a ramp,
/// other variables and constants become broadcasts.
fn widen(e: &Expr, stride: i64) -> Expr {
    const L: u16 = 4;
    let ty = e.ty().with_lanes(L);
    match e.node() {
        ExprNode::IntImm(_) | ExprNode::UIntImm(_) => Expr::broadcast(e.clone(), L),
        ExprNode::Variable { name, .. } => {
            if name.starts_with('t') {
                Expr::var(ty, name.clone())
            } else if name == "x_int32" {
                Expr::ramp(e.clone(), Expr::i32(stride), L)
            } else {
                Expr::broadcast(e.clone(), L)
            }
        }
        ExprNode::Binary { op, a, b } => Expr::binary(*op, widen(a, stride), widen(b, stride)),
        ExprNode::Not(a) => Expr::not(widen(a, stride)),
        ExprNode::Select { cond, t, f } => {
            Expr::select(widen(cond, stride), widen(t, stride), widen(f, stride))
        }
        ExprNode::Cast(a) => Expr::cast(ty, widen(a, stride)),
        ExprNode::Let { name, value, body } => {
            Expr::let_(name.clone(), widen(value, stride), widen(body, stride))
        }
        _ => panic!("widen: unexpected {e}"),
    }
}

#[test]
fn fuzz_vector_simplify_matches_interpreter() {
    let seed: u64 = std::env::var("FH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2024);
    let mut gen = Gen::new(seed);
    let mut env_rng = Rng::new(88);
    let mut compared = 0usize;
    for case in 0..2000 {
        let ty = TYPES[case % TYPES.len()];
        let e = widen(
            &gen.int_expr(ty, 2 + (case % 3) as u32),
            [1, 2, -1, 3][case % 4],
        );
        let s = simplify(&e);
        assert_eq!(s.ty(), e.ty(), "type changed: {e} -> {s}");
        for _ in 0..6 {
            let mut env = random_env(&mut env_rng);
            for lane in 0..4 {
                let (mut o1, mut o2) = (false, false);
                let v1 = eval_lane(&e, lane, &mut env, &mut o1);
                let v2 = eval_lane(&s, lane, &mut env, &mut o2);
                if o1 || o2 {
                    continue;
                }
                compared += 1;
                assert_eq!(
                    v1, v2,
                    "lane {lane} mismatch (case {case})\n  original:   {e}\n  simplified: {s}"
                );
            }
        }
    }
    assert!(compared > 20000, "{compared}");
}
