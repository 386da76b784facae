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
use crate::analysis::substitute::substitute;
use crate::ir::visit::{mutate_stmt_children, walk_stmt, Mutator, Visitor};
use crate::ir::{Expr, Stmt, StmtNode};
use crate::lang::function::{Function, Specialization};
use crate::schedule::{DeviceLoop, StageSchedule};

/// The loop nest of the pipeline computing `outputs`.
pub fn print_loop_nest(outputs: &[Function]) -> Result<String> {
    crate::stack::with_large_stack(|| {
        let env = build_environment(outputs)?;
        schedule_expr_checks::check_schedule_exprs(&env)?;
        let s = schedule_functions::schedule_functions(&env, outputs)?;
        let s = bounds_inference::bounds_inference(&s, &env, outputs)?;
        let s = allocation_bounds_inference::allocation_bounds_inference(&s, &env)?;
        let (s, _) = sliding_window::sliding_window(&s, &env)?;
        let mut p = Printer { env: &env, out: String::new(), indent: 0, constants: vec![] };
        // Device loops show even with one iteration (as in Halide), so the
        // simplifier must not see that extent.
        let s = KeepDeviceLoops(&p).mutate_stmt(&s);
        let s = simplify_stmt(&s);
        p.visit_stmt(&s);
        Ok(p.out)
    })
}

/// Stands for 0 in a device loop's extent until the loop is printed.
const DEVICE_EXTENT_PAD: &str = "print_loop_nest.device_loop";

/// Adds `DEVICE_EXTENT_PAD` to every device loop's extent.
struct KeepDeviceLoops<'a, 'b>(&'a Printer<'b>);

impl Mutator for KeepDeviceLoops<'_, '_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        match s.node() {
            StmtNode::For { name, min, extent, for_type, body } if self.0.device_of_loop(name).is_some() => {
                let padded = Expr::add(extent.clone(), Expr::var_i32(DEVICE_EXTENT_PAD));
                Stmt::for_loop(name.clone(), min.clone(), padded, *for_type, body.clone())
            }
            _ => s,
        }
    }
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

    /// The device a loop is scheduled on (GPU directives, `hexagon()`),
    /// from its stage's schedule: the loop is `f.sK.` + a dim's var.
    fn device_of_loop(&self, loop_name: &str) -> Option<DeviceLoop> {
        fn find(st: &StageSchedule, specs: &[Specialization], var: &str) -> Option<DeviceLoop> {
            st.dims
                .iter()
                .find(|d| d.var == var)
                .and_then(|d| d.device)
                .or_else(|| specs.iter().find_map(|s| find(&s.stage, &s.specializations, var)))
        }
        let (func, rest) = loop_name.split_once(".s")?;
        let (k, var) = rest.split_once('.')?;
        let k: usize = k.parse().ok()?;
        let c = self.env.funcs.get(func)?.read();
        match k {
            0 => find(&c.stage, &c.specializations, var),
            _ => c.updates.get(k - 1).and_then(|u| find(&u.stage, &u.specializations, var)),
        }
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
                let extent = simplify(&substitute(DEVICE_EXTENT_PAD, &Expr::i32(0), extent));
                let range = match (self.constant(min), self.constant(&extent)) {
                    (Some(m), Some(e)) => format!(" in [{m}, {}]", m + e - 1),
                    _ => String::new(),
                };
                let device = self.device_of_loop(name);
                let kind = device.and_then(|d| d.gpu).map_or(for_type.name(), |g| g.name());
                let api = device.map_or(String::new(), |d| format!("<{}>", d.api.display_name()));
                let header = format!("{kind} {}{range}{api}:", loop_var_name(name));
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
