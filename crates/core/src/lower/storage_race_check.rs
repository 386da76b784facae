//! Rejects schedules that store a Func outside a parallel or vectorized loop
//! inside which it is computed: every iteration of that loop would write the
//! same storage concurrently (part of Halide's schedule validation).
//!
//! Assumes: the output of schedule_functions (each stored Func has a Realize
//! at its store level and its `produce` at its compute level; loops still
//! carry their Parallel/Vectorized types). Guarantees: returns an error
//! naming the Func and the loop, as Halide does, or changes nothing.

use crate::error::{Error, Result};
use crate::ir::{ForType, Stmt, StmtNode, Visitor};

struct RaceCheck {
    /// Enclosing loops, outermost first.
    loops: Vec<(String, ForType)>,
    /// For each enclosing Realize: its Func and how many loops enclosed it.
    realizes: Vec<(String, usize)>,
    error: Option<Error>,
}

/// Halide's user-facing loop name: the Func and the loop's own variable
/// (`c.s0.y.yo` is `c.yo`).
fn user_loop_name(name: &str) -> String {
    match name.split_once(".s0.") {
        Some((func, dims)) => format!("{func}.{}", dims.rsplit('.').next().unwrap_or(dims)),
        None => name.to_string(),
    }
}

impl Visitor for RaceCheck {
    fn visit_stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::For {
                name,
                for_type,
                body,
                ..
            } => {
                self.loops.push((name.clone(), *for_type));
                self.visit_stmt(body);
                self.loops.pop();
            }
            StmtNode::Realize { name, body, .. } => {
                self.realizes.push((name.clone(), self.loops.len()));
                self.visit_stmt(body);
                self.realizes.pop();
            }
            StmtNode::ProducerConsumer {
                name,
                is_producer: true,
                body,
            } => {
                let stored_at = self.realizes.iter().rev().find(|(f, _)| f == name);
                if let Some((_, depth)) = stored_at {
                    let racy = self.loops[*depth..]
                        .iter()
                        .find(|(_, t)| matches!(t, ForType::Parallel | ForType::Vectorized));
                    if let (Some((l, _)), None) = (racy, &self.error) {
                        self.error = Some(Error::user(format!(
                            "Func \"{name}\" is stored outside the parallel/vectorized/gpu_block loop over {} but computed within it. This is a potential race condition.",
                            user_loop_name(l)
                        )));
                    }
                }
                self.visit_stmt(body);
            }
            _ => crate::ir::visit::walk_stmt(self, s),
        }
    }
}

pub fn check_storage_races(s: &Stmt) -> Result<()> {
    let mut c = RaceCheck {
        loops: vec![],
        realizes: vec![],
        error: None,
    };
    c.visit_stmt(s);
    c.error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Expr, Range, Type};

    fn nest(store_outside: bool, t: ForType) -> Stmt {
        let produce = Stmt::producer("p", Stmt::evaluate(Expr::i32(0)));
        let realize = |body: Stmt| {
            Stmt::new(StmtNode::Realize {
                name: "p".into(),
                types: vec![Type::i32()],
                memory_type: Default::default(),
                bounds: vec![Range::new(Expr::i32(0), Expr::i32(4))],
                condition: Expr::bool_const(true),
                body,
            })
        };
        let inner = if store_outside { produce } else { realize(produce) };
        let lp = Stmt::for_loop("c.s0.y".to_string(), Expr::i32(0), Expr::i32(4), t, inner);
        if store_outside {
            realize(lp)
        } else {
            lp
        }
    }

    #[test]
    fn storage_outside_a_parallel_loop_is_rejected() {
        let e = check_storage_races(&nest(true, ForType::Parallel)).unwrap_err();
        assert!(e.message.contains("loop over c.y but computed within it"), "{}", e.message);
        assert!(check_storage_races(&nest(true, ForType::Vectorized)).is_err());
    }

    #[test]
    fn loops_are_named_by_func_and_variable() {
        assert_eq!(user_loop_name("c.s0.y.yo"), "c.yo");
        assert_eq!(user_loop_name("c.s0.y"), "c.y");
    }

    #[test]
    fn serial_loops_and_storage_inside_are_fine() {
        assert!(check_storage_races(&nest(true, ForType::Serial)).is_ok());
        assert!(check_storage_races(&nest(false, ForType::Parallel)).is_ok());
    }
}
