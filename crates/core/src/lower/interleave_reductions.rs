//! Interleaving the reductions of a pure loop's iterations (unroll-and-jam).
//!
//! Assumes: runs on the final loop nests (after vectorization, loop
//! partitioning and the last simplify); loops are named `{func}.s{k}.{dim}`
//! (`schedule_functions`); storage is flattened, so a Func's values are
//! stores to the buffers `func` or `func.i`.
//!
//! Guarantees: the same values, stored in a different order. A serial loop
//! over a pure dimension of an update whose whole body is a serial loop
//! over an RVar of the same update (the shape of a matrix multiply:
//! `for xo { for r { c[xo] += a[r] * b[xo, r] } }`, vectorized inside:
//! the body stores vectors) becomes a loop over
//! groups of `JAM` iterations whose RVar loop runs the `JAM` bodies side by
//! side, plus a loop over the iterations left over. Each iteration's
//! reduction was one chain of dependent operations, as long as the RVar
//! loop, which the processor runs at the latency of one operation per
//! step; `JAM` independent chains overlap. No sum is reordered: each site
//! still sees its RVar iterations in order.
//!
//! Why it is legal: Halide's front end requires an update's
//! self-references to hold its pure variables in their places, so the
//! iterations of a pure loop touch disjoint sites of the Func, and the
//! other buffers the body reads are not written in it. The rewrite is
//! limited to bodies that only store to the Func and compute values
//! without side effects (no producer, loop, allocation, atomic section,
//! print or trace inside), so no other order is observable.

use crate::fast_hash::FastMap;
use crate::ir::visit::{expr_uses_var, for_each_expr_in_stmt, for_each_stmt, mutate_stmt_children, stmt_uses_var};
use crate::ir::{BinOp, Expr, ExprNode, ForType, Mutator, Stmt, StmtNode};
use crate::lower::environment::Environment;
use crate::lower::schedule_functions::stage_prefix;
use crate::lower::unroll_loops::fold_binary;

/// How many iterations run side by side: enough independent chains to
/// cover an add's latency (4 cycles on current x86 and Arm cores) at one
/// step a cycle, few enough that their accumulators stay in registers.
const JAM: i64 = 4;

/// The most expression nodes a body may have: the interleaved loop holds
/// `JAM` copies of it.
const MAX_BODY_NODES: usize = 256;

/// The loop names of the update stages' dimensions: for each, the Func it
/// computes and whether the dimension is pure.
pub fn update_dims(env: &Environment) -> FastMap<String, (String, bool)> {
    let mut dims: FastMap<String, (String, bool)> = FastMap::default();
    let mut conflicting = vec![];
    for name in &env.order {
        for (k, stage) in env.get(name).stage_schedules() {
            if k == 0 {
                continue;
            }
            let prefix = stage_prefix(name, k);
            for d in &stage.dims {
                let pure = !d.is_rvar;
                let loop_name = format!("{prefix}{}", d.var);
                match dims.get(&loop_name) {
                    Some((_, p)) if *p != pure => conflicting.push(loop_name),
                    _ => {
                        dims.insert(loop_name, (name.clone(), pure));
                    }
                }
            }
        }
    }
    for n in conflicting {
        dims.remove(&n);
    }
    dims
}

/// Interleave the reductions of the pure loops of `s` (see the module
/// comment); `dims` is `update_dims` of the pipeline.
pub fn interleave_reductions(s: &Stmt, dims: &FastMap<String, (String, bool)>) -> Stmt {
    Interleave { dims }.mutate_stmt(s)
}

struct Interleave<'a> {
    dims: &'a FastMap<String, (String, bool)>,
}

impl Mutator for Interleave<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        // Expressions hold no loops.
        e.clone()
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match self.jammed(s) {
            Some(out) => out,
            None => mutate_stmt_children(self, s),
        }
    }
}

impl Interleave<'_> {
    /// `s` interleaved, if it is a pure loop around a reduction loop of
    /// the same update whose body qualifies.
    fn jammed(&self, s: &Stmt) -> Option<Stmt> {
        let StmtNode::For { name, min, extent, for_type: ForType::Serial, body } = s.node() else {
            return None;
        };
        let (func, true) = self.dims.get(name)? else {
            return None;
        };
        let StmtNode::For {
            name: r_name,
            min: r_min,
            extent: r_extent,
            for_type: ForType::Serial,
            body: r_body,
        } = body.node()
        else {
            return None;
        };
        match self.dims.get(r_name) {
            Some((f, false)) if f == func => {}
            _ => return None,
        }
        let uses_outer = |e: &Expr| expr_uses_var(e, name);
        if uses_outer(r_min) || uses_outer(r_extent) || !only_stores_to(r_body, func) {
            return None;
        }
        if extent.as_int_const().is_some_and(|n| n < 2 * JAM) || !stmt_uses_var(r_body, name) {
            return None;
        }
        // Scalar bodies are left alone: the copies cost compile time (a
        // scalar merge loop of rfactor's histogram took 4 ms more) and
        // LLVM's own unroller already overlaps scalar integer chains.
        let mut stores_vector = false;
        for_each_stmt(r_body, &mut |s| {
            stores_vector |= matches!(s.node(), StmtNode::Store { value, .. } if value.ty().is_vector());
        });
        if !stores_vector {
            return None;
        }
        Some(jam(name, min, extent, body, r_name, r_min, r_extent, r_body))
    }
}

/// Does `body` only compute values (no side effects) and store them to
/// the buffers of `func`, in straight-line code and conditions of bounded
/// size?
fn only_stores_to(body: &Stmt, func: &str) -> bool {
    let mut ok = true;
    for_each_stmt(body, &mut |s| {
        ok &= match s.node() {
            StmtNode::Store { name, .. } => {
                name == func || name.strip_prefix(func).and_then(|t| t.strip_prefix('.')).is_some_and(|i| i.parse::<u32>().is_ok())
            }
            StmtNode::LetStmt { .. } | StmtNode::Block(_) | StmtNode::IfThenElse { .. } => true,
            _ => false,
        }
    });
    let mut nodes = 0usize;
    for_each_expr_in_stmt(body, &mut |e| {
        nodes += 1;
        ok &= !matches!(e.node(), ExprNode::Call { kind, .. } if !kind.is_pure());
    });
    ok && nodes <= MAX_BODY_NODES
}

/// `for (v, min, extent) { for (r, ..) { body } }` as a loop over groups of
/// `JAM` values of `v`, whose loop over `r` runs the body for each of them
/// (`v` bound by a let in each copy), then the loop over the rest.
#[allow(clippy::too_many_arguments)]
fn jam(
    v: &str,
    min: &Expr,
    extent: &Expr,
    inner: &Stmt,
    r: &str,
    r_min: &Expr,
    r_extent: &Expr,
    r_body: &Stmt,
) -> Stmt {
    let ty = min.ty();
    let c = |n: i64| Expr::make_const_i64(ty, n);
    let count_name = format!("{v}.jammed_groups");
    let count = Expr::var(ty, count_name.clone());
    let group = Expr::var(ty, format!("{v}.jammed"));
    let first = fold_binary(BinOp::Add, min.clone(), fold_binary(BinOp::Mul, group, c(JAM)));
    let copies = (0..JAM)
        .map(|k| Stmt::let_stmt(v, fold_binary(BinOp::Add, first.clone(), c(k)), r_body.clone()))
        .collect();
    let side_by_side = Stmt::for_loop(
        format!("{v}.jammed"),
        Expr::zero(ty),
        count.clone(),
        ForType::Serial,
        Stmt::for_loop(r, r_min.clone(), r_extent.clone(), ForType::Serial, Stmt::block(copies)),
    );
    let done = fold_binary(BinOp::Mul, count, c(JAM));
    let rest = Stmt::for_loop(
        v,
        fold_binary(BinOp::Add, min.clone(), done.clone()),
        fold_binary(BinOp::Sub, Expr::max(extent.clone(), Expr::zero(ty)), done),
        ForType::Serial,
        inner.clone(),
    );
    let groups = fold_binary(BinOp::Div, Expr::max(extent.clone(), Expr::zero(ty)), c(JAM));
    Stmt::let_stmt(count_name, groups, Stmt::block(vec![side_by_side, rest]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;
    use crate::lower::vectorize_loops::test_interpreter::{random_memory, run, Memory, Rng};
    use std::collections::HashMap;

    /// Four lanes from `base` of `buf`.
    fn ld(buf: &str, base: Expr) -> Expr {
        let all = Expr::broadcast(Expr::bool_const(true), 4);
        Expr::load(Type::i32().with_lanes(4), buf, Expr::ramp(base, Expr::i32(1), 4), all)
    }
    fn st(buf: &str, base: Expr, v: Expr) -> Stmt {
        let all = Expr::broadcast(Expr::bool_const(true), 4);
        Stmt::store(buf, v, Expr::ramp(base, Expr::i32(1), 4), all)
    }
    fn dims() -> FastMap<String, (String, bool)> {
        [("f.s1.x", true), ("f.s1.r$x", false)]
            .into_iter()
            .map(|(n, p)| (n.to_string(), ("f".to_string(), p)))
            .collect()
    }
    /// for (f.s1.x, 1, n) { for (f.s1.r$x, 0, 5) { body(x, r) } }
    fn nest(body: Stmt) -> Stmt {
        let inner = Stmt::for_loop("f.s1.r$x", Expr::i32(0), Expr::i32(5), ForType::Serial, body);
        Stmt::for_loop("f.s1.x", Expr::i32(1), Expr::var_i32("n"), ForType::Serial, inner)
    }

    #[test]
    fn reductions_interleave_and_keep_their_values() {
        // f[4x..] = f[4x..] * 3 + in[4x + r..]: each x's chain runs in r's order.
        let (x, r) = (Expr::var_i32("f.s1.x"), Expr::var_i32("f.s1.r$x"));
        let x4 = Expr::mul(x.clone(), Expr::i32(4));
        let three = Expr::broadcast(Expr::i32(3), 4);
        let value = Expr::add(Expr::mul(ld("f", x4.clone()), three), ld("in", Expr::add(x4.clone(), r)));
        let s = nest(st("f", x4, value));
        let out = interleave_reductions(&s, &dims());
        assert!(out.to_string().contains("f.s1.x.jammed"), "{out}");
        for n in [-3, 0, 1, 3, 4, 5, 8, 11] {
            let mut rng = Rng::new(n as u64 + 7);
            let mut mem = Memory::new();
            mem.insert("f".into(), random_memory(&mut rng, 48, -9, 9));
            mem.insert("in".into(), random_memory(&mut rng, 56, -9, 9));
            let env: HashMap<String, i64> = [("n".to_string(), n)].into();
            assert_eq!(run(&s, &mem, &env), run(&out, &mem, &env), "n = {n}\n{out}");
        }
    }

    #[test]
    fn other_stores_and_side_effects_are_left_alone() {
        let (x, r) = (Expr::var_i32("f.s1.x"), Expr::var_i32("f.s1.r$x"));
        let rv = Expr::broadcast(r.clone(), 4);
        // A store to another buffer: its order across x would change.
        let s = nest(st("g", r.clone(), ld("f", x.clone())));
        assert!(interleave_reductions(&s, &dims()).same_as(&s));
        // A body that does not depend on x, and a constant extent too short.
        let s = nest(st("f", Expr::i32(0), rv.clone()));
        assert!(interleave_reductions(&s, &dims()).same_as(&s));
        let inner = Stmt::for_loop("f.s1.r$x", Expr::i32(0), Expr::i32(5), ForType::Serial, st("f", x.clone(), rv));
        let s = Stmt::for_loop("f.s1.x", Expr::i32(0), Expr::i32(7), ForType::Serial, inner);
        assert!(interleave_reductions(&s, &dims()).same_as(&s));
        // A scalar body (LLVM overlaps its chains itself).
        let inner = Stmt::for_loop(
            "f.s1.r$x",
            Expr::i32(0),
            Expr::i32(5),
            ForType::Serial,
            Stmt::store("f", r.clone(), x.clone(), Expr::bool_const(true)),
        );
        let s = Stmt::for_loop("f.s1.x", Expr::i32(0), Expr::var_i32("n"), ForType::Serial, inner);
        assert!(interleave_reductions(&s, &dims()).same_as(&s));
    }
}
