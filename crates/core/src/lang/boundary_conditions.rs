//! `BoundaryConditions`: Funcs that extend a source (a Func, a Buffer or an
//! ImageParam) beyond a region `[min, min + extent)` per dimension, as
//! Halide defines them: `constant_exterior`, `repeat_edge`,
//! `repeat_image`, `mirror_image`, `mirror_interior`.
//!
//! Each result is an ordinary Func of clamp/select/modulo expressions. The
//! in-bounds case is a `likely` clamp of a `likely` coordinate, so loop
//! partitioning (lower/partition_loops.rs) gives every consumer loop a
//! steady state that reads the source directly, with the boundary
//! arithmetic only in the prologue and epilogue.

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Expr, Type};
use crate::lang::func::Func;
use crate::lang::function::Function;
use crate::lang::image_param::ImageParam;
use crate::lang::lambda::lambda_over_implicit_vars;
use crate::lang::math::{clamp, select};
use crate::lang::operators::cast;
use crate::lang::var::{unique_func_name, Var};

/// What a boundary condition extends.
pub enum Source {
    Func(Func),
    Buffer(Buffer),
    ImageParam(ImageParam),
}

/// The region of one dimension: `None` leaves the dimension unbounded
/// (the coordinate passes through unchanged).
pub type Bound = Option<(Expr, Expr)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    ConstantExterior,
    RepeatEdge,
    RepeatImage,
    MirrorImage,
    MirrorInterior,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::ConstantExterior => "constant_exterior",
            Kind::RepeatEdge => "repeat_edge",
            Kind::RepeatImage => "repeat_image",
            Kind::MirrorImage => "mirror_image",
            Kind::MirrorInterior => "mirror_interior",
        }
    }
}

fn invalid(kind: Kind) -> Error {
    Error::value(format!("Invalid arguments to {}", kind.name()))
}

/// The source as a defined Func (Buffers and ImageParams are wrapped in a
/// lambda over implicit vars), and the bounds of its own shape where it
/// has one.
fn source_func(src: Source) -> Result<(Function, Option<Vec<Bound>>)> {
    match src {
        Source::Func(f) => Ok((f.function, None)),
        Source::Buffer(b) => {
            let dims = b.dims();
            let vars: Vec<Expr> = (0..dims.len()).map(|i| Var::implicit(i).expr()).collect();
            let call = crate::lang::func::image_call(&b, vars)?;
            let bounds = dims
                .iter()
                .map(|d| Some((Expr::i32(d.min as i64), Expr::i32(d.extent as i64))))
                .collect();
            Ok((lambda_over_implicit_vars(dims.len(), call)?, Some(bounds)))
        }
        Source::ImageParam(im) => {
            let n = im.dimensions();
            let vars: Vec<Expr> = (0..n).map(|i| Var::implicit(i).expr()).collect();
            let call = im.call(vars)?;
            let bounds = (0..n)
                .map(|d| {
                    let p = im.param();
                    Some((p.shape_var("min", d), p.shape_var("extent", d)))
                })
                .collect();
            Ok((lambda_over_implicit_vars(n, call)?, Some(bounds)))
        }
    }
}

fn i32_bound(e: Expr) -> Result<Expr> {
    if e.ty() == Type::i32() {
        Ok(e)
    } else {
        cast(Type::i32(), e)
    }
}

/// The coordinate to read the source at, in one bounded dimension.
fn coordinate(kind: Kind, x: Expr, min: Expr, extent: Expr) -> Result<Expr> {
    let max = Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::i32(1));
    let inside = clamp(Expr::likely(x.clone()), min.clone(), max.clone())?;
    let outside = Expr::or(
        Expr::lt(x.clone(), min.clone()),
        Expr::ge(x.clone(), Expr::add(min.clone(), extent.clone())),
    );
    let wrapped = match kind {
        Kind::RepeatEdge | Kind::ConstantExterior => return Ok(inside),
        // min + (x - min) mod extent (Euclidean, so never negative).
        Kind::RepeatImage => Expr::add(
            Expr::modulo(Expr::sub(x.clone(), min.clone()), extent.clone()),
            min.clone(),
        ),
        // Reflect including the edge sample: period 2 * extent.
        Kind::MirrorImage => {
            let period = Expr::mul(Expr::i32(2), extent.clone());
            let t = Expr::modulo(Expr::sub(x.clone(), min.clone()), period.clone());
            let reflected = Expr::select(
                Expr::ge(t.clone(), extent.clone()),
                Expr::sub(Expr::sub(period, Expr::i32(1)), t.clone()),
                t,
            );
            clamp(Expr::add(reflected, min.clone()), min.clone(), max.clone())?
        }
        // Reflect without repeating the edge: period 2 * (extent - 1); an
        // extent of 1 gives a period of 0 and x mod 0 is 0 (the one sample).
        Kind::MirrorInterior => {
            let last = Expr::sub(extent.clone(), Expr::i32(1));
            let t = Expr::modulo(
                Expr::sub(x.clone(), min.clone()),
                Expr::mul(Expr::i32(2), last.clone()),
            );
            let dist = Expr::max(
                Expr::sub(t.clone(), last.clone()),
                Expr::sub(last.clone(), t),
            );
            clamp(
                Expr::add(Expr::sub(last, dist), min.clone()),
                min.clone(),
                max.clone(),
            )?
        }
    };
    Ok(Expr::select(outside, wrapped, Expr::likely(inside)))
}

/// Build the boundary condition `kind` of `src` over `bounds` (one per
/// dimension from dimension 0; missing ones are unbounded; `None`: the
/// source's own shape, for Buffers and ImageParams). `exterior` is the
/// value of `constant_exterior`.
pub fn boundary_condition(
    kind: Kind,
    src: Source,
    bounds: Option<Vec<Bound>>,
    exterior: Option<Expr>,
) -> Result<Func> {
    if let Source::Func(f) = &src {
        if !f.defined() {
            return Err(invalid(kind));
        }
    }
    let (source, own) = source_func(src)?;
    let dims = source.dimensions();
    let bounds = match (bounds, own) {
        (Some(b), _) => b,
        (None, Some(own)) => own,
        (None, None) => return Err(invalid(kind)),
    };
    if bounds.len() > dims {
        return Err(invalid(kind));
    }
    let types = source.types();
    if kind == Kind::ConstantExterior && types.len() != 1 {
        return Err(invalid(kind));
    }
    let arg_names = source.args();
    let mut coords = vec![];
    let mut outside: Option<Expr> = None;
    for (d, name) in arg_names.iter().enumerate() {
        let x = Expr::var_i32(name.clone());
        match bounds.get(d).cloned().flatten() {
            None => coords.push(x),
            Some((min, extent)) => {
                let (min, extent) = (i32_bound(min)?, i32_bound(extent)?);
                let out = Expr::or(
                    Expr::lt(x.clone(), min.clone()),
                    Expr::ge(x.clone(), Expr::add(min.clone(), extent.clone())),
                );
                outside = Some(match outside {
                    None => out,
                    Some(o) => Expr::or(o, out),
                });
                coords.push(coordinate(kind, x, min, extent)?);
            }
        }
    }
    let call = Func::from_function(source.clone()).call(coords)?;
    let mut values = vec![];
    for i in 0..types.len() {
        values.push(if types.len() == 1 {
            call.to_expr()?
        } else {
            call.element(i)?
        });
    }
    if kind == Kind::ConstantExterior {
        let value = exterior.ok_or_else(|| invalid(kind))?;
        if let Some(out) = outside {
            values[0] = select(out, value, Expr::likely(values[0].clone()))?;
        }
    }
    let f = Function::new(unique_func_name(Some(kind.name())));
    f.set_pure_definition(arg_names, values)?;
    Ok(Func::from_function(f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::evaluate::eval_int;
    use crate::analysis::substitute::substitute;
    use std::collections::HashMap;

    /// The source coordinate `kind` reads at x, for bounds [min, min + extent).
    fn coord(kind: Kind, x: i64, min: i64, extent: i64) -> i64 {
        let e = coordinate(kind, Expr::var_i32("x"), Expr::i32(min), Expr::i32(extent)).unwrap();
        eval_int(&substitute("x", &Expr::i32(x), &e), &HashMap::new()).unwrap()
    }

    #[test]
    fn coordinates_follow_halide_definitions() {
        let row =
            |k: Kind, m: i64, e: i64| -> Vec<i64> { (-4..8).map(|x| coord(k, x, m, e)).collect() };
        assert_eq!(
            row(Kind::RepeatEdge, 0, 4),
            vec![0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3]
        );
        assert_eq!(
            row(Kind::RepeatImage, 0, 4),
            vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]
        );
        assert_eq!(
            row(Kind::MirrorImage, 0, 4),
            vec![3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0]
        );
        assert_eq!(
            row(Kind::MirrorInterior, 0, 4),
            vec![2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1]
        );
        assert_eq!(row(Kind::MirrorInterior, 3, 1), vec![3; 12]);
        assert_eq!(
            row(Kind::MirrorImage, 1, 2),
            vec![1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2]
        );
    }
}
