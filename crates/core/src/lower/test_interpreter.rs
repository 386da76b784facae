//! A tiny reference interpreter for scalar and vector Stmts, used only by
//! the tests of the loop passes (vectorize, unroll, partition). Integer and
//! bool types only. Every loop type runs serially; loads and stores are
//! bounds-checked (an out-of-bounds access is an error, so tests also catch
//! a missing predicate). Memories are `Vec<i64>` per buffer name.

use std::collections::HashMap;

use crate::analysis::evaluate::{div_euclid as halide_div, mod_euclid as halide_mod};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, Stmt, StmtNode, Type};

pub type Memory = HashMap<String, Vec<i64>>;

/// A small deterministic xorshift generator.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }
}

pub fn random_memory(rng: &mut Rng, len: usize, lo: i64, hi: i64) -> Vec<i64> {
    (0..len).map(|_| rng.range(lo, hi)).collect()
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub mem: Memory,
    pub log: Vec<String>,
}

/// Run `s` on a copy of `mem` with scalar variables `scalars`; return the
/// final memory (allocations local to `s` are dropped).
pub fn run(s: &Stmt, mem: &Memory, scalars: &HashMap<String, i64>) -> Result<Memory, String> {
    run_full(s, mem, scalars).map(|o| o.mem)
}

/// Like `run`, also returning the lines printed by `print` calls.
pub fn run_full(s: &Stmt, mem: &Memory, scalars: &HashMap<String, i64>) -> Result<Outcome, String> {
    let mut st = State {
        mem: mem.clone(),
        env: scalars.iter().map(|(k, v)| (k.clone(), vec![*v])).collect(),
        log: vec![],
    };
    st.exec(s)?;
    Ok(Outcome {
        mem: st.mem,
        log: st.log,
    })
}

struct State {
    mem: Memory,
    env: Vec<(String, Vec<i64>)>,
    log: Vec<String>,
}

fn wrap(t: Type, v: i64) -> i64 {
    if t.is_bool() {
        return (v != 0) as i64;
    }
    if t.bits >= 64 {
        return v;
    }
    let shift = 64 - t.bits as u32;
    if t.is_int() {
        (v << shift) >> shift
    } else {
        ((v as u64) << shift >> shift) as i64
    }
}

fn spread(v: Vec<i64>, lanes: usize) -> Vec<i64> {
    if v.len() == lanes {
        v
    } else if v.len() == 1 {
        vec![v[0]; lanes]
    } else {
        panic!("lane mismatch: {} vs {lanes}", v.len())
    }
}

impl State {
    fn lookup(&self, name: &str) -> Result<Vec<i64>, String> {
        self.env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("unbound variable {name}"))
    }

    fn scalar(&mut self, e: &Expr) -> Result<i64, String> {
        let v = self.eval(e)?;
        if v.len() != 1 {
            return Err(format!("expected a scalar, got {} lanes: {e}", v.len()));
        }
        Ok(v[0])
    }

    fn eval(&mut self, e: &Expr) -> Result<Vec<i64>, String> {
        let t = e.ty();
        let lanes = t.lanes as usize;
        if t.is_float() {
            return Err(format!(
                "float values are not supported by the test interpreter: {e}"
            ));
        }
        Ok(match e.node() {
            ExprNode::IntImm(v) => vec![*v],
            ExprNode::UIntImm(v) => vec![*v as i64],
            ExprNode::FloatImm(_) | ExprNode::StringImm(_) => {
                return Err(format!("unsupported constant {e}"))
            }
            ExprNode::Cast(a) => self.eval(a)?.into_iter().map(|v| wrap(t, v)).collect(),
            ExprNode::Reinterpret(_) => return Err("reinterpret unsupported".into()),
            ExprNode::Variable { name, .. } => self.lookup(name)?,
            ExprNode::Binary { op, a, b } => {
                let at = a.ty();
                let x = spread(self.eval(a)?, lanes);
                let y = spread(self.eval(b)?, lanes);
                x.iter()
                    .zip(&y)
                    .map(|(&p, &q)| {
                        let r = match op {
                            BinOp::Add => p.wrapping_add(q),
                            BinOp::Sub => p.wrapping_sub(q),
                            BinOp::Mul => p.wrapping_mul(q),
                            BinOp::Div => halide_div(p, q),
                            BinOp::Mod => halide_mod(p, q),
                            BinOp::Min => p.min(q),
                            BinOp::Max => p.max(q),
                            BinOp::EQ => (p == q) as i64,
                            BinOp::NE => (p != q) as i64,
                            BinOp::LT => (p < q) as i64,
                            BinOp::LE => (p <= q) as i64,
                            BinOp::GT => (p > q) as i64,
                            BinOp::GE => (p >= q) as i64,
                            BinOp::And => (p != 0 && q != 0) as i64,
                            BinOp::Or => (p != 0 || q != 0) as i64,
                        };
                        if op.is_comparison() || op.is_logical() {
                            r
                        } else {
                            wrap(at, r)
                        }
                    })
                    .collect()
            }
            ExprNode::Not(a) => self.eval(a)?.into_iter().map(|v| (v == 0) as i64).collect(),
            ExprNode::Select { cond, t: tv, f } => {
                let c = spread(self.eval(cond)?, lanes);
                let x = spread(self.eval(tv)?, lanes);
                let y = spread(self.eval(f)?, lanes);
                (0..lanes)
                    .map(|i| if c[i] != 0 { x[i] } else { y[i] })
                    .collect()
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                let idx = self.eval(index)?;
                if idx.len() != lanes {
                    return Err(format!("load index lanes differ from load type: {e}"));
                }
                let p = spread(self.eval(predicate)?, lanes);
                let buf = self
                    .mem
                    .get(name)
                    .ok_or_else(|| format!("unknown buffer {name}"))?;
                let mut out = Vec::with_capacity(lanes);
                for i in 0..lanes {
                    if p[i] == 0 {
                        out.push(0);
                    } else if idx[i] < 0 || idx[i] as usize >= buf.len() {
                        return Err(format!(
                            "out-of-bounds load {name}[{}] (size {})",
                            idx[i],
                            buf.len()
                        ));
                    } else {
                        out.push(wrap(t.element_of(), buf[idx[i] as usize]));
                    }
                }
                out
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes: n,
            } => {
                let b = self.eval(base)?;
                let s = spread(self.eval(stride)?, b.len());
                let et = base.ty();
                let mut out = Vec::with_capacity(lanes);
                for i in 0..*n as i64 {
                    for (bv, sv) in b.iter().zip(&s) {
                        out.push(wrap(et, bv.wrapping_add(sv.wrapping_mul(i))));
                    }
                }
                out
            }
            ExprNode::Broadcast { value, lanes: n } => {
                let v = self.eval(value)?;
                let mut out = Vec::with_capacity(lanes);
                for _ in 0..*n {
                    out.extend_from_slice(&v);
                }
                out
            }
            ExprNode::Let { name, value, body } => {
                let v = self.eval(value)?;
                self.env.push((name.clone(), v));
                let r = self.eval(body);
                self.env.pop();
                r?
            }
            ExprNode::Call {
                args,
                kind: CallKind::Intrinsic(i),
                ..
            } => match i {
                Intrinsic::Likely | Intrinsic::LikelyIfInnermost | Intrinsic::PromiseClamped => {
                    self.eval(&args[0])?
                }
                Intrinsic::Print => {
                    let mut parts = vec![];
                    let mut first = None;
                    for a in args {
                        if let ExprNode::StringImm(s) = a.node() {
                            parts.push(s.clone());
                        } else {
                            let v = self.eval(a)?;
                            parts.push(
                                v.iter()
                                    .map(|x| x.to_string())
                                    .collect::<Vec<_>>()
                                    .join(","),
                            );
                            first.get_or_insert(v);
                        }
                    }
                    self.log.push(parts.join(" "));
                    spread(first.unwrap_or_else(|| vec![0]), lanes)
                }
                Intrinsic::Abs => self
                    .eval(&args[0])?
                    .into_iter()
                    .map(|v| wrap(t, v.wrapping_abs()))
                    .collect(),
                other => return Err(format!("intrinsic {other:?} unsupported")),
            },
            ExprNode::Call { .. } => return Err(format!("call unsupported: {e}")),
            ExprNode::Shuffle { vectors, indices } => {
                let mut all = vec![];
                for v in vectors {
                    all.extend(self.eval(v)?);
                }
                indices.iter().map(|&i| all[i as usize]).collect()
            }
            ExprNode::VectorReduce { op, value } => {
                use crate::ir::VectorReduceOp as R;
                let v = self.eval(value)?;
                let per = v.len() / lanes.max(1);
                let et = t.element_of();
                (0..lanes)
                    .map(|i| {
                        let chunk = &v[i * per..(i + 1) * per];
                        let r = chunk.iter().copied().reduce(|a, b| match op {
                            R::Add => a.wrapping_add(b),
                            R::Mul => a.wrapping_mul(b),
                            R::Min => a.min(b),
                            R::Max => a.max(b),
                            R::And => (a != 0 && b != 0) as i64,
                            R::Or => (a != 0 || b != 0) as i64,
                            R::SaturatingAdd => a.saturating_add(b),
                        });
                        wrap(et, r.unwrap_or(0))
                    })
                    .collect()
            }
        })
    }

    fn exec(&mut self, s: &Stmt) -> Result<(), String> {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let v = self.eval(value)?;
                self.env.push((name.clone(), v));
                let r = self.exec(body);
                self.env.pop();
                r
            }
            StmtNode::AssertStmt { condition, .. } => {
                let c = self.eval(condition)?;
                if c.iter().all(|&v| v != 0) {
                    Ok(())
                } else {
                    Err(format!("assertion failed: {condition}"))
                }
            }
            StmtNode::ProducerConsumer { body, .. } | StmtNode::Atomic { body, .. } => {
                self.exec(body)
            }
            StmtNode::For {
                name,
                min,
                extent,
                body,
                ..
            } => {
                let m = self.scalar(min)?;
                let n = self.scalar(extent)?;
                for i in m..m + n {
                    self.env.push((name.clone(), vec![i]));
                    let r = self.exec(body);
                    self.env.pop();
                    r?;
                }
                Ok(())
            }
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } => {
                let idx = self.eval(index)?;
                let lanes = idx.len();
                let v = self.eval(value)?;
                if v.len() != lanes {
                    return Err(format!("store value/index lanes differ: {s}"));
                }
                let p = spread(self.eval(predicate)?, lanes);
                let et = value.ty().element_of();
                let buf = self
                    .mem
                    .get_mut(name)
                    .ok_or_else(|| format!("unknown buffer {name}"))?;
                for i in 0..lanes {
                    if p[i] == 0 {
                        continue;
                    }
                    if idx[i] < 0 || idx[i] as usize >= buf.len() {
                        return Err(format!(
                            "out-of-bounds store {name}[{}] (size {})",
                            idx[i],
                            buf.len()
                        ));
                    }
                    buf[idx[i] as usize] = wrap(et, v[i]);
                }
                Ok(())
            }
            StmtNode::Provide { .. } | StmtNode::Realize { .. } => {
                Err("provide/realize unsupported".into())
            }
            StmtNode::Allocate {
                name,
                extents,
                body,
                ..
            } => {
                let mut size = 1i64;
                for e in extents {
                    size *= self.scalar(e)?;
                }
                if size < 0 {
                    return Err(format!("allocation of {name} with negative size {size}"));
                }
                let old = self.mem.insert(name.clone(), vec![0; size.max(0) as usize]);
                let r = self.exec(body);
                match old {
                    Some(o) => {
                        self.mem.insert(name.clone(), o);
                    }
                    None => {
                        self.mem.remove(name);
                    }
                }
                r
            }
            StmtNode::Free { .. } => Ok(()),
            StmtNode::Block(v) => v.iter().try_for_each(|x| self.exec(x)),
            StmtNode::IfThenElse {
                condition,
                then_case,
                else_case,
            } => {
                if self.scalar(condition)? != 0 {
                    self.exec(then_case)
                } else if let Some(e) = else_case {
                    self.exec(e)
                } else {
                    Ok(())
                }
            }
            StmtNode::Evaluate(e) => self.eval(e).map(|_| ()),
        }
    }
}
