//! `print_loop_nest()`: the pipeline's loop nest as pseudo-code, the way
//! Halide's PrintLoopNest shows it: the first lowering passes (loop nests,
//! bounds inference, sliding window), then only the produce / consume /
//! store structure, the loops (with their range where it is a constant) and
//! one `f(...) = ...` line per definition.
//!
//! Assumes the Funcs lower without error up to sliding window; guarantees
//! nothing about the later passes (vectorization and loop partitioning do
//! not show, as in Halide).

use super::environment::{build_environment, Environment};
use super::{
    allocation_bounds_inference, bounds_inference, schedule_expr_checks, schedule_functions,
    sliding_window,
};
use crate::analysis::simplify::{simplify, simplify_stmt};
use crate::error::Result;
use crate::ir::visit::{walk_stmt, Visitor};
use crate::ir::{Expr, Stmt, StmtNode};
use crate::lang::function::Function;

/// The loop nest of the pipeline computing `outputs`.
pub fn print_loop_nest(outputs: &[Function]) -> Result<String> {
    crate::stack::with_large_stack(|| {
        let env = build_environment(outputs)?;
        schedule_expr_checks::check_schedule_exprs(&env)?;
        let s = schedule_functions::schedule_functions(&env, outputs)?;
        let s = bounds_inference::bounds_inference(&s, &env, outputs)?;
        let s = allocation_bounds_inference::allocation_bounds_inference(&s, &env)?;
        let (s, _) = sliding_window::sliding_window(&s, &env)?;
        let s = simplify_stmt(&s);
        let mut p = Printer { env: &env, out: String::new(), indent: 0, constants: vec![] };
        p.visit_stmt(&s);
        Ok(p.out)
    })
}

/// A loop's name without its Func and stage (`f.s0.x.xi` -> `x.xi`) and
/// without `$n` uniquifiers.
fn loop_var_name(name: &str) -> String {
    let rest = name.splitn(3, '.').nth(2).unwrap_or(name);
    strip_uniquifiers(rest)
}

fn strip_uniquifiers(name: &str) -> String {
    name.split('.')
        .map(|c| c.split('$').next().unwrap_or(c))
        .collect::<Vec<_>>()
        .join(".")
}

struct Printer<'a> {
    env: &'a Environment,
    out: String,
    indent: usize,
    /// Lets bound to constants around the statement being printed.
    constants: Vec<(String, Expr)>,
}

impl Printer<'_> {
    fn line(&mut self, text: &str) {
        self.out.push_str(&"  ".repeat(self.indent));
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn nested(&mut self, header: &str, body: &Stmt) {
        self.line(header);
        self.indent += 1;
        self.visit_stmt(body);
        self.indent -= 1;
    }

    /// `e`, or the constant a let bound its variable to.
    fn constant(&self, e: &Expr) -> Option<i64> {
        if let Some(v) = e.as_int_const() {
            return Some(v);
        }
        let name = e.as_variable()?;
        let (_, value) = self.constants.iter().rev().find(|(n, _)| n == name)?;
        value.as_int_const()
    }

}

impl Visitor for Printer<'_> {
    /// Only statements print.
    fn visit_expr(&mut self, _: &Expr) {}

    fn visit_stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::For { name, min, extent, for_type, body } => {
                let range = match (self.constant(min), self.constant(extent)) {
                    (Some(m), Some(e)) => format!(" in [{m}, {}]", m + e - 1),
                    _ => String::new(),
                };
                let header = format!("{} {}{range}:", for_type.name(), loop_var_name(name));
                self.nested(&header, body);
            }
            StmtNode::Realize { name, body, .. } => {
                let separate_store = self.env.funcs.get(name).is_some_and(|f| {
                    let c = f.read();
                    let store = &c.schedule.store_level;
                    !store.is_inlined() && *store != c.schedule.compute_level
                });
                if separate_store {
                    self.nested(&format!("store {}:", strip_uniquifiers(name)), body);
                } else {
                    self.visit_stmt(body);
                }
            }
            StmtNode::ProducerConsumer { name, is_producer, body } => {
                let word = if *is_producer { "produce" } else { "consume" };
                self.nested(&format!("{word} {}:", func_name(name)), body);
            }
            StmtNode::Provide { name, .. } => self.line(&format!("{}(...) = ...", func_name(name))),
            StmtNode::LetStmt { name, value, body } => {
                let value = simplify(value);
                let is_const = value.as_int_const().is_some();
                if is_const {
                    self.constants.push((name.clone(), value));
                }
                self.visit_stmt(body);
                if is_const {
                    self.constants.pop();
                }
            }
            _ => walk_stmt(self, s),
        }
    }
}

/// A Func's name as printed: without its `$n` uniquifier.
fn func_name(name: &str) -> String {
    name.split('$').next().unwrap_or(name).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_names_lose_func_and_stage() {
        assert_eq!(loop_var_name("f.s0.x.xi"), "x.xi");
        assert_eq!(loop_var_name("f$2.s1.r4$x"), "r4");
        assert_eq!(func_name("blur$3"), "blur");
    }
}
