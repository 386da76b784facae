//! Environment and realization order.
//!
//! Assumes: `outputs` are defined Funcs. Guarantees: every Func reachable
//! from an output is in the environment, and `order` lists them so that each
//! Func comes after every Func it calls (producers first, outputs last).
//! Undefined Funcs and cycles of pure definitions are user errors.

use std::collections::HashMap;

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::visit::for_each_expr;
use crate::ir::{CallKind, ExprNode};
use crate::lang::function::Function;

pub struct Environment {
    pub funcs: HashMap<String, Function>,
    /// Producers first; the outputs are last.
    pub order: Vec<String>,
}

impl Environment {
    pub fn get(&self, name: &str) -> &Function {
        &self.funcs[name]
    }
}

/// The Funcs called directly by `f`'s definition.
pub fn direct_callees(f: &Function) -> Vec<Function> {
    let mut out: Vec<Function> = vec![];
    for v in f.values() {
        for_each_expr(&v, &mut |e| {
            if let ExprNode::Call {
                kind: CallKind::Halide { func, .. },
                ..
            } = e.node()
            {
                if !out.iter().any(|g| g.same_as(func)) {
                    out.push(func.clone());
                }
            }
        });
    }
    out
}

pub fn build_environment(outputs: &[Function]) -> Result<Environment> {
    let mut funcs: HashMap<String, Function> = HashMap::new();
    let mut order: Vec<String> = vec![];
    #[derive(PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    let mut marks: HashMap<String, Mark> = HashMap::new();

    fn visit(
        f: &Function,
        funcs: &mut HashMap<String, Function>,
        order: &mut Vec<String>,
        marks: &mut HashMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Result<()> {
        let name = f.name();
        if let Some(existing) = funcs.get(&name) {
            if !existing.same_as(f) {
                return Err(Error::user(format!(
                    "Two different Funcs named \"{name}\" are used in the same pipeline; give them distinct names."
                )));
            }
        }
        match marks.get(&name) {
            Some(Mark::Done) => return Ok(()),
            Some(Mark::Visiting) => {
                path.push(name.clone());
                return Err(Error::user(format!(
                    "Cycle in the pipeline: {} depend on each other.",
                    path.join(" -> ")
                )));
            }
            None => {}
        }
        if !f.has_pure_definition() {
            return Err(Error::user(format!(
                "Func {name} is used but has no definition."
            )));
        }
        funcs.insert(name.clone(), f.clone());
        marks.insert(name.clone(), Mark::Visiting);
        path.push(name.clone());
        for g in direct_callees(f) {
            visit(&g, funcs, order, marks, path)?;
        }
        path.pop();
        marks.insert(name.clone(), Mark::Done);
        order.push(name);
        Ok(())
    }

    for f in outputs {
        if !f.has_pure_definition() {
            return Err(Error::user(format!(
                "Can't realize undefined Func {}.",
                f.name()
            )));
        }
        visit(f, &mut funcs, &mut order, &mut marks, &mut vec![])?;
    }
    Ok(Environment { funcs, order })
}

/// The concrete Buffers the pipeline's Funcs read (`buf[x, y]` on a Buffer),
/// by name, sorted. Two different Buffers under one name are an error.
pub fn bound_input_buffers(env: &Environment) -> Result<Vec<(String, Buffer)>> {
    let mut out: Vec<(String, Buffer)> = vec![];
    for name in &env.order {
        for v in env.get(name).values() {
            let mut err = None;
            for_each_expr(&v, &mut |e| {
                let ExprNode::Call {
                    name,
                    kind: CallKind::Image { buffer, .. },
                    ..
                } = e.node()
                else {
                    return;
                };
                match (buffer, out.iter().find(|(n, _)| n == name)) {
                    (None, _) => err = Some(Error::unimplemented("ImageParam inputs")),
                    (Some(b), Some((_, existing))) if !existing.same_as(b) => {
                        err = Some(Error::user(format!(
                            "Two different Buffers named \"{name}\" are used in the same pipeline."
                        )))
                    }
                    (Some(_), Some(_)) => {}
                    (Some(b), None) => out.push((name.clone(), b.clone())),
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}
