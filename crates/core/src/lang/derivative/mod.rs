//! Automatic differentiation: `propagate_adjoints` (Halide's
//! Derivative.cpp, after Li et al., "Differentiable programming for image
//! processing and deep learning in Halide", SIGGRAPH 2018).
//!
//! Given an output Func and the adjoint of its value (the derivative of
//! some scalar loss by each of its points), it builds, for every Func the
//! output depends on and for each of that Func's definitions (the pure one
//! and every update), a new Func holding the adjoint of that definition's
//! values; and one for every float image and scalar parameter read. They
//! are ordinary Funcs: the user schedules and realizes them.
//!
//! The adjoints flow in reverse: consumers before producers
//! (`reverse_accumulation.rs`), each definition's expression visited
//! parents first, and each read of a Func or image becomes an update of
//! that callee's adjoint (`scatter.rs`), rewritten so that it writes at the
//! callee's own pure variables where the read can be inverted, and as a
//! scatter over an RDom otherwise.
//!
//! Assumes: the Funcs are defined. Guarantees: the user's Funcs are not
//! changed (nor frozen); updates whose gradients would need values that a
//! later update overwrote are reported as errors, as Halide reports them.

mod reverse_accumulation;
mod scatter;
pub mod utils;

use std::collections::HashMap;

use crate::analysis::bounds::Interval;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::lang::boundary_conditions::{boundary_condition, Kind, Source};
use crate::lang::func::Func;

/// A Func's name and the definition: -1 for the pure one, `i` for update `i`.
pub type FuncKey = (String, i32);

/// The adjoint Funcs `propagate_adjoints` made.
pub struct Derivative {
    adjoints: HashMap<FuncKey, Func>,
}

impl Derivative {
    /// The adjoint of definition `update` (-1: the pure one) of the Func, or
    /// of the image or parameter, called `name`; `None` if the output does
    /// not depend on it differentiably.
    pub fn get(&self, name: &str, update: i32) -> Option<Func> {
        self.adjoints.get(&(name.to_string(), update)).cloned()
    }
}

/// Back-propagate `adjoint` (defined over the output's dimensions) from
/// `output`, whose region of interest is `bounds` (min, extent per
/// dimension; Halide takes the region as one point larger at the top).
pub fn propagate_adjoints(output: &Func, adjoint: &Func, bounds: &[(Expr, Expr)]) -> Result<Derivative> {
    if !output.defined() {
        return Err(Error::user(format!(
            "Can't propagate adjoints through undefined Func {}\n",
            output.name()
        )));
    }
    let dims = adjoint.dimensions()?;
    if output.dimensions()? != dims {
        return Err(Error::user("output dimensions and adjoint dimensions must match\n"));
    }
    if bounds.len() != dims {
        return Err(Error::user("output_bounds and adjoint dimensions must match\n"));
    }
    let output_box = bounds
        .iter()
        .map(|(min, extent)| Interval::new(Some(min.clone()), Some(Expr::add(min.clone(), extent.clone()))))
        .collect();
    let adjoints = reverse_accumulation::ReverseAccumulation::run(output, adjoint, output_box)?;
    Ok(Derivative { adjoints })
}

/// Back-propagate an adjoint of one at every point of `output` (the
/// gradient of a scalar loss), over the region of a single point at 0.
pub fn propagate_adjoints_of_one(output: &Func) -> Result<Derivative> {
    let t = output.value()?.ty();
    let adjoint = Func::new(Some("adjoint"));
    let args = output.args().iter().map(|v| v.expr()).collect();
    adjoint.define(args, vec![Expr::one(t)])?;
    let bounds = vec![(Expr::i32(0), Expr::i32(0)); output.dimensions()?];
    propagate_adjoints(output, &adjoint, &bounds)
}

/// Back-propagate the float32 adjoint held in `adjoint` (zero outside it).
/// As in Halide, the region is `[min, min + extent - 1]` taken as a
/// (min, extent) pair.
pub fn propagate_adjoints_from_buffer(output: &Func, adjoint: &Buffer) -> Result<Derivative> {
    if adjoint.ty() != crate::ir::Type::float(32) {
        return Err(Error::type_error("propagate_adjoints(): the adjoint Buffer must be of type float32"));
    }
    if output.dimensions()? != adjoint.dimensions() {
        return Err(Error::user("output dimensions and adjoint dimensions must match\n"));
    }
    let bounds: Vec<(Expr, Expr)> = adjoint
        .dims()
        .iter()
        .map(|d| (Expr::i32(d.min as i64), Expr::i32(d.min as i64 + d.extent as i64 - 1)))
        .collect();
    let adjoint_func = boundary_condition(
        Kind::ConstantExterior,
        Source::Buffer(adjoint.clone()),
        None,
        Some(Expr::f32(0.0)),
    )?;
    propagate_adjoints(output, &adjoint_func, &bounds)
}
