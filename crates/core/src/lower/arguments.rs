//! The inputs of a pipeline (Halide's InferArguments.cpp): every ImageParam
//! and bound Buffer it reads and every scalar Param it mentions, in the
//! algorithm, the schedule, or another input's constraints.
//!
//! Assumes: a Stmt containing the whole pipeline (the loop nest after
//! schedule_functions or later, before storage flattening, so reads are
//! still `Image` calls carrying their Buffer or Parameter), and the
//! environment's Funcs. Guarantees: each input appears once, buffers first
//! then scalars, each group sorted by name (Halide's order); two different
//! inputs under one name are Halide's user error. Shape variables of the
//! outputs (`f.min.0`, ...) are not inputs.

use std::collections::HashSet;

use super::environment::Environment;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::visit::{for_each_expr, for_each_expr_in_stmt};
use crate::ir::{CallKind, Expr, ExprNode, Stmt};
use crate::lang::function::Function;
use crate::lang::parameter::Parameter;

/// Where an input buffer's contents come from.
#[derive(Clone, Debug)]
pub enum InputBuffer {
    /// An ImageParam: bound at realize time or passed to a Callable.
    Param(Parameter),
    /// A Buffer used directly in the algorithm (`buf[x, y]`).
    Bound(Buffer),
}

impl InputBuffer {
    pub fn name(&self) -> String {
        match self {
            InputBuffer::Param(p) => p.name(),
            InputBuffer::Bound(b) => b.name(),
        }
    }
    pub fn ty(&self) -> crate::ir::Type {
        match self {
            InputBuffer::Param(p) => p.ty(),
            InputBuffer::Bound(b) => b.ty(),
        }
    }
    pub fn dimensions(&self) -> usize {
        match self {
            InputBuffer::Param(p) => p.dimensions(),
            InputBuffer::Bound(b) => b.dimensions(),
        }
    }
    /// The Buffer it reads now (None for an ImageParam not bound yet).
    pub fn buffer(&self) -> Option<Buffer> {
        match self {
            InputBuffer::Param(p) => p.buffer(),
            InputBuffer::Bound(b) => Some(b.clone()),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Inputs {
    pub buffers: Vec<InputBuffer>,
    pub scalars: Vec<Parameter>,
}

enum Found {
    Scalar(Parameter),
    Buffer(InputBuffer),
}

impl Found {
    fn name(&self) -> String {
        match self {
            Found::Scalar(p) => p.name(),
            Found::Buffer(b) => b.name(),
        }
    }
    fn same_as(&self, other: &Found) -> bool {
        match (self, other) {
            (Found::Scalar(a), Found::Scalar(b)) => a.same_as(b),
            (Found::Buffer(InputBuffer::Param(a)), Found::Buffer(InputBuffer::Param(b))) => {
                a.same_as(b)
            }
            (Found::Buffer(InputBuffer::Bound(a)), Found::Buffer(InputBuffer::Bound(b))) => {
                a.same_as(b)
            }
            _ => false,
        }
    }
}

struct Collector {
    outputs: HashSet<String>,
    found: Vec<Found>,
    error: Option<Error>,
    /// ImageParams whose constraints are still to be scanned.
    pending: Vec<Parameter>,
}

impl Collector {
    fn add(&mut self, f: Found) {
        let name = f.name();
        if let Some(existing) = self.found.iter().find(|g| g.name() == name) {
            if !existing.same_as(&f) && self.error.is_none() {
                self.error = Some(Error::user(format!(
                    "All Params and embedded Buffers must have unique names, but the name '{name}' was seen multiple times.\n"
                )));
            }
            return;
        }
        if let Found::Buffer(InputBuffer::Param(p)) = &f {
            self.pending.push(p.clone());
        }
        self.found.push(f);
    }

    fn visit(&mut self, e: &Expr) {
        match e.node() {
            ExprNode::Variable {
                name,
                param: Some(p),
                ..
            } => {
                if p.name() == super::entry_checks::USER_CONTEXT {
                    // `user_context_value()`: every pipeline has it.
                } else if !p.is_buffer() {
                    self.add(Found::Scalar(p.clone()));
                } else if !self.outputs.contains(&p.name()) {
                    // A shape variable of an input (`im.width()` with no read).
                    let _ = name;
                    self.add(Found::Buffer(InputBuffer::Param(p.clone())));
                }
            }
            ExprNode::Call {
                kind: CallKind::Image { buffer, param },
                ..
            } => match (buffer, param) {
                (Some(b), _) => self.add(Found::Buffer(InputBuffer::Bound(b.clone()))),
                (None, Some(p)) => self.add(Found::Buffer(InputBuffer::Param(p.clone()))),
                (None, None) => {}
            },
            _ => {}
        }
    }
}

/// The inputs of the pipeline whose loop nest is `s` (see the module doc).
pub fn infer_inputs(s: &Stmt, env: &Environment, outputs: &[Function]) -> Result<Inputs> {
    let mut c = Collector {
        outputs: outputs
            .iter()
            .flat_map(crate::lang::tuple::element_buffer_names)
            .collect(),
        found: vec![],
        error: None,
        pending: vec![],
    };
    for_each_expr_in_stmt(s, &mut |e| c.visit(e));
    for name in &env.order {
        let f = env.get(name);
        for v in f.definition_exprs().iter().chain(&f.schedule_exprs()) {
            for_each_expr(v, &mut |e| c.visit(e));
        }
    }
    while let Some(p) = c.pending.pop() {
        for d in p.constraints() {
            for e in [d.min, d.extent, d.stride].into_iter().flatten() {
                for_each_expr(&e, &mut |x| c.visit(x));
            }
        }
    }
    if let Some(e) = c.error {
        return Err(e);
    }
    let mut inputs = Inputs::default();
    for f in c.found {
        match f {
            Found::Scalar(p) => inputs.scalars.push(p),
            Found::Buffer(b) => inputs.buffers.push(b),
        }
    }
    inputs.buffers.sort_by_key(|b| b.name());
    inputs.scalars.sort_by_key(|p| p.name());
    Ok(inputs)
}

/// The inputs of the pipeline computing `outputs`, without lowering it
/// further than building its loop nest (`Pipeline.infer_arguments`).
pub fn pipeline_inputs(outputs: &[Function]) -> Result<Inputs> {
    crate::stack::with_large_stack(|| {
        let env = super::environment::build_environment(outputs)?;
        let s = super::schedule_functions::schedule_functions(&env, outputs)?;
        infer_inputs(&s, &env, outputs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;
    use crate::lang::image_param::ImageParam;

    #[test]
    fn finds_params_through_constraints_and_rejects_duplicates() {
        let im = ImageParam::new(Type::uint(8), 1, Some("im"));
        let w = Parameter::new(Type::int(32), false, 0, "w");
        im.dim(0).unwrap().set_extent(Some(w.expr())).unwrap();
        let f = Function::new("arg_test_f");
        f.set_pure_definition(
            vec!["x".into()],
            vec![im.call(vec![Expr::var_i32("x")]).unwrap()],
        ).unwrap();
        let env = crate::lower::environment::build_environment(&[f.clone()]).unwrap();
        let inputs = infer_inputs(&Stmt::no_op(), &env, &[f]).unwrap();
        assert_eq!(inputs.buffers.len(), 1);
        assert_eq!(inputs.scalars.len(), 1);
        assert_eq!(inputs.scalars[0].name(), "w");

        let k1 = Parameter::new(Type::int(32), false, 0, "k");
        let k2 = Parameter::new(Type::int(32), false, 0, "k");
        let g = Function::new("arg_test_g");
        g.set_pure_definition(vec!["x".into()], vec![Expr::add(k1.expr(), k2.expr())]).unwrap();
        let env = crate::lower::environment::build_environment(&[g.clone()]).unwrap();
        let err = infer_inputs(&Stmt::no_op(), &env, &[g]).unwrap_err();
        assert!(err.message.contains("the name 'k' was seen multiple times"));
    }
}
