//! A tiny reference interpreter for scalar and vector Stmts, used only by
//! the tests of the loop passes (vectorize, unroll, partition). Integer and
//! bool types only. Every loop type runs serially; loads and stores are
//! bounds-checked (an out-of-bounds access is an error, so tests also catch
//! a missing predicate). Memories are `Vec<i64>` per buffer name.

use std::collections::HashMap;

use crate::analysis::evaluate::{wrap, Env, Evaluator, Unsupported, Value};
use crate::ir::{Expr, Stmt, StmtNode, Type};

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

fn spread(v: Vec<i64>, lanes: usize) -> Vec<i64> {
    if v.len() == lanes {
        v
    } else if v.len() == 1 {
        vec![v[0]; lanes]
    } else {
        panic!("lane mismatch: {} vs {lanes}", v.len())
    }
}

impl Env for State {
    fn var(&mut self, name: &str, lanes: usize) -> Option<Vec<Value>> {
        let v = self.lookup(name).ok()?;
        let v = if v.len() == 1 { vec![v[0]; lanes] } else { v };
        Some(v.into_iter().map(|x| Value::Int(x as i128)).collect())
    }
    fn load(&mut self, name: &str, ty: Type, index: i128) -> Result<Value, Unsupported> {
        let buf = self
            .mem
            .get(name)
            .ok_or_else(|| Unsupported(format!("unknown buffer {name}")))?;
        if index < 0 || index as usize >= buf.len() {
            return Err(Unsupported(format!(
                "out-of-bounds load {name}[{index}] (size {})",
                buf.len()
            )));
        }
        Ok(Value::Int(wrap(ty, buf[index as usize] as i128)))
    }
    fn print(&mut self, parts: Vec<String>) {
        self.log.push(parts.join(" "));
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

    /// Expressions go through the one evaluator (`analysis/evaluate.rs`),
    /// with this state's variables, memories and print log.
    fn eval(&mut self, e: &Expr) -> Result<Vec<i64>, String> {
        if e.ty().is_float() {
            return Err(format!(
                "float values are not supported by the test interpreter: {e}"
            ));
        }
        let values = Evaluator::new(self).eval(e).map_err(|u| u.0)?;
        values
            .into_iter()
            .map(|v| {
                v.as_int()
                    .map(|i| i as i64)
                    .ok_or_else(|| format!("a float value inside {e}"))
            })
            .collect()
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
                    buf[idx[i] as usize] = wrap(et, v[i] as i128) as i64;
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
