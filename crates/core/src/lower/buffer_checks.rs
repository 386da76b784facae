//! Buffer checks: assertions, evaluated before any work, that every input
//! buffer contains the region the pipeline reads and every output buffer
//! the region it writes (Halide's AddImageChecks.cpp, bounds part).
//!
//! Assumes: the root body after bounds inference, with Func calls and
//! Provides not yet flattened. Guarantees: one AssertStmt per buffer, side
//! and dimension, whose failure message names the buffer, the dimension,
//! and the accessed and available coordinates.

use super::environment::Environment;
use crate::analysis::bounds::{box_provided, boxes_required, Scope};
use crate::analysis::simplify::simplify;
use crate::error::Result;
use crate::ir::{Expr, Intrinsic, Stmt, Type};
use crate::lang::function::Function;

pub(crate) fn error_message(parts: Vec<Expr>) -> Expr {
    Expr::intrinsic(Type::i32(), Intrinsic::Error, parts)
}

fn range_checks(
    kind: &str,
    buf: &str,
    region: &[crate::analysis::bounds::Interval],
    out: &mut Vec<Stmt>,
) {
    for (d, iv) in region.iter().enumerate() {
        let bmin = Expr::var_i32(format!("{buf}.min.{d}"));
        let bmax = Expr::sub(
            Expr::add(bmin.clone(), Expr::var_i32(format!("{buf}.extent.{d}"))),
            Expr::i32(1),
        );
        if let Some(lo) = &iv.min {
            let lo = simplify(lo);
            out.push(Stmt::assert(
                Expr::ge(lo.clone(), bmin.clone()),
                error_message(vec![
                    Expr::string(format!("{kind} buffer {buf} is accessed at ")),
                    lo,
                    Expr::string(", which is before the min ("),
                    bmin.clone(),
                    Expr::string(format!(") in dimension {d}")),
                ]),
            ));
        }
        if let Some(hi) = &iv.max {
            let hi = simplify(hi);
            out.push(Stmt::assert(
                Expr::le(hi.clone(), bmax.clone()),
                error_message(vec![
                    Expr::string(format!("{kind} buffer {buf} is accessed at ")),
                    hi,
                    Expr::string(", which is beyond the max ("),
                    simplify(&bmax),
                    Expr::string(format!(") in dimension {d}")),
                ]),
            ));
        }
    }
}

pub fn buffer_checks(s: &Stmt, env: &Environment, outputs: &[Function]) -> Result<Vec<Stmt>> {
    let mut checks = vec![];
    let empty = Scope::new();
    let images = super::environment::bound_input_buffers(env)?;
    let required = boxes_required(s, &empty);
    for (name, _) in &images {
        if let Some(region) = required.get(name) {
            // An index bounds analysis cannot bound (e.g. an int32 value
            // read from an image) could be anything: Halide rejects it.
            if let Some(d) = region.iter().position(|iv| !iv.is_bounded()) {
                return Err(crate::error::Error::user(format!(
                    "Buffer {name} may be accessed in an unbounded way in dimension {d}\n"
                )));
            }
            range_checks("Input", name, region, &mut checks);
        }
    }
    for o in outputs {
        let name = o.name();
        let buffers = crate::lang::tuple::element_buffer_names(o);
        if let Some(region) = box_provided(s, &name, &empty) {
            for b in &buffers {
                range_checks("Output", b, &region, &mut checks);
            }
        }
        tuple_shape_checks(&buffers, o.dimensions(), &mut checks);
    }
    Ok(checks)
}

/// The buffers of a Tuple output are written with one loop nest, sized by
/// the first: as in Halide, the others must have its mins and extents.
fn tuple_shape_checks(buffers: &[String], dims: usize, out: &mut Vec<Stmt>) {
    let Some((first, rest)) = buffers.split_first() else {
        return;
    };
    for b in rest {
        for d in 0..dims {
            for field in ["min", "extent"] {
                let mine = format!("{b}.{field}.{d}");
                let theirs = format!("{first}.{field}.{d}");
                let (v, w) = (Expr::var_i32(mine.clone()), Expr::var_i32(theirs.clone()));
                out.push(Stmt::assert(
                    Expr::eq(v.clone(), w.clone()),
                    error_message(vec![
                        Expr::string(format!("Constraint violated: {mine} (")),
                        v,
                        Expr::string(format!(") == {theirs} (")),
                        w,
                        Expr::string(")"),
                    ]),
                ));
            }
        }
    }
}

/// Halide's default constraint: every buffer argument's innermost stride is
/// 1. Assert it, then use the constant in the body so vector accesses to
/// dimension 0 are dense. Assumes storage flattening is done.
pub fn require_dense_innermost(s: &Stmt, args: &[super::LoweredArgument]) -> Stmt {
    let mut asserts = vec![];
    let mut subs = std::collections::HashMap::new();
    for a in args {
        if a.kind == super::ArgumentKind::InputScalar || a.dimensions == 0 {
            continue;
        }
        let name = format!("{}.stride.0", a.name);
        let v = Expr::var_i32(name.clone());
        asserts.push(Stmt::assert(
            Expr::eq(v.clone(), Expr::i32(1)),
            error_message(vec![
                Expr::string(format!("Constraint violated: {name} (")),
                v,
                Expr::string(") == 1 (1)"),
            ]),
        ));
        subs.insert(name, Expr::i32(1));
    }
    asserts.push(crate::analysis::substitute::substitute_map_in_stmt(
        &subs, s,
    ));
    Stmt::block(asserts)
}
