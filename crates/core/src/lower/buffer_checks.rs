//! Buffer and parameter checks (Halide's AddImageChecks.cpp and
//! AddParameterChecks.cpp): assertions evaluated before any work, in
//! Halide's order —
//! 1. every input buffer contains the region the pipeline reads and every
//!    output buffer the region it writes (the buffers' actual shapes);
//! 2. the buffers satisfy their shape constraints (an ImageParam's
//!    `dim(d).set_min/extent/stride`, the default `stride.0 == 1` of
//!    ImageParams and outputs, a dense bound Buffer staying dense);
//! 3. scalar Params lie within their ranges.
//!
//! Assumes: the root body after sliding window and allocation bounds
//! inference (so the boxes are those of the final loop nests: a slid
//! loop's warm-up iterations and a shifted tile read what they read), with
//! Func calls and Provides not yet flattened. Guarantees: the checks come first, then the
//! body. Element types, dimensionality and null buffers are checked by the
//! caller before the pipeline runs.
//!
//! `apply_shape_constraints` (after storage flattening, when buffer
//! accesses mention the shape variables) then replaces each constrained
//! shape variable by its constraint everywhere but in the assertions (so
//! that, for instance, loads from a buffer with `stride.0 == 1` are
//! dense); that is sound because the body only runs once the constraints
//! hold.

use super::arguments::{infer_inputs, InputBuffer, Inputs};
use super::environment::Environment;
use crate::analysis::bounds::{boxes_touched_of, Scope};
use crate::analysis::simplify::simplify;
use crate::analysis::widen::ExactInt32;
use crate::error::{Error, Result};
use crate::ir::{ErrorCode, Expr, Stmt, Type};
use crate::lang::function::Function;
use crate::lang::print::expr_to_string;

pub(crate) fn error_message(code: ErrorCode, parts: Vec<Expr>) -> Expr {
    Expr::error(code, parts)
}

/// Halide's "is accessed at ..., which is before the min / beyond the max"
/// assertions: buffer `buf` (kind "Input" or "Output") covers `region`.
pub(super) fn range_checks(
    kind: &str,
    buf: &str,
    region: &[crate::analysis::bounds::Interval],
    out: &mut Vec<Stmt>,
) -> Result<()> {
    range_checks_in(kind, buf, region, &mut ExactInt32::default(), out)
}

/// `range_checks` of a region that may name the lets `exact` was told of.
fn range_checks_in(
    kind: &str,
    buf: &str,
    region: &[crate::analysis::bounds::Interval],
    exact: &mut ExactInt32,
    out: &mut Vec<Stmt>,
) -> Result<()> {
    for (d, iv) in region.iter().enumerate() {
        if iv.min.is_none() || iv.max.is_none() {
            // Unchecked reads could touch any memory: refuse to compile.
            return Err(Error::user(format!(
                "Buffer {buf} may be accessed in an unbounded way in dimension {d}\n"
            )));
        }
        // Exact (64-bit) bounds: an offset near 2^31 wraps the 32-bit ones
        // back inside the buffer (analysis/widen.rs).
        let bmin = Expr::cast(Type::i64(), Expr::var_i32(format!("{buf}.min.{d}")));
        let bmax = Expr::sub(
            Expr::add(bmin.clone(), Expr::cast(Type::i64(), Expr::var_i32(format!("{buf}.extent.{d}")))),
            Expr::i64(1),
        );
        if let Some(lo) = &iv.min {
            let lo = simplify(&exact.exact(lo));
            out.push(Stmt::assert(
                Expr::ge(lo.clone(), bmin.clone()),
                error_message(ErrorCode::AccessOutOfBounds, vec![
                    Expr::string(format!("{kind} buffer {buf} is accessed at ")),
                    lo,
                    Expr::string(", which is before the min ("),
                    bmin.clone(),
                    Expr::string(format!(") in dimension {d}")),
                ]),
            ));
        }
        if let Some(hi) = &iv.max {
            let hi = simplify(&exact.exact(hi));
            out.push(Stmt::assert(
                Expr::le(hi.clone(), bmax.clone()),
                error_message(ErrorCode::AccessOutOfBounds, vec![
                    Expr::string(format!("{kind} buffer {buf} is accessed at ")),
                    hi,
                    Expr::string(", which is beyond the max ("),
                    simplify(&bmax),
                    Expr::string(format!(") in dimension {d}")),
                ]),
            ));
        }
    }
    Ok(())
}

/// A shape constraint `name == value` on buffer shape variable `name`.
pub(crate) struct Constraint {
    pub(crate) name: String,
    pub(crate) value: Expr,
}

fn constraint_check(c: &Constraint) -> Stmt {
    let v = Expr::var_i32(c.name.clone());
    Stmt::assert(
        Expr::eq(v.clone(), c.value.clone()),
        error_message(ErrorCode::ConstraintViolated, vec![
            Expr::string(format!("Constraint violated: {} (", c.name)),
            v,
            Expr::string(format!(") == {} (", expr_to_string(&c.value))),
            c.value.clone(),
            Expr::string(")"),
        ]),
    )
}

/// `p >= min` / `p <= max` for a scalar Param with a range. Values are
/// printed as 64-bit numbers (floats in `%e` style), as Halide does.
fn param_range_checks(p: &crate::lang::parameter::Parameter, out: &mut Vec<Stmt>) {
    let v = p.expr();
    let wide = |e: Expr| {
        let t = e.ty();
        let w = if t.is_float() {
            Type::float(64)
        } else if t.is_uint() {
            Type::uint(64)
        } else {
            Type::int(64)
        };
        Expr::cast(w, e)
    };
    let name = p.name();
    for (bound, is_min) in [(p.min_value(), true), (p.max_value(), false)] {
        let Some(b) = bound else { continue };
        let (cond, words, code) = if is_min {
            (Expr::ge(v.clone(), b.clone()), "at least", ErrorCode::ParamTooSmall)
        } else {
            (Expr::le(v.clone(), b.clone()), "at most", ErrorCode::ParamTooLarge)
        };
        out.push(Stmt::assert(
            cond,
            error_message(code, vec![
                Expr::string(format!("Parameter {name} is ")),
                wide(v.clone()),
                Expr::string(format!(" but must be {words} ")),
                wide(b),
            ]),
        ));
    }
}

/// `host % bytes == 0` for a buffer whose parameter promises more
/// alignment than its element size (Halide checks it with the host checks).
fn host_alignment_check(buf: &str, p: &crate::lang::parameter::Parameter, out: &mut Vec<Stmt>) {
    let bytes = p.host_alignment();
    if bytes == p.ty().bytes() as i32 {
        return;
    }
    let host = Expr::reinterpret(Type::uint(64), Expr::var(Type::handle(), buf.to_string()));
    out.push(Stmt::assert(
        Expr::eq(
            Expr::modulo(host, Expr::uint_imm(Type::uint(64), bytes as u64)),
            Expr::uint_imm(Type::uint(64), 0),
        ),
        error_message(ErrorCode::UnalignedHostPtr, vec![Expr::string(format!(
            "The host pointer of {buf} is not aligned to a {bytes} bytes boundary."
        ))]),
    ));
}

/// The shape constraints of the pipeline's buffers: each ImageParam's
/// `dim(d).set_*` (including the default `stride.0 == 1`), `stride.0 == 1`
/// for a bound Buffer that is dense (code for a bound Buffer is compiled
/// for its layout; the cache key records whether it is dense) and for
/// every output.
pub(crate) fn shape_constraints(inputs: &Inputs, outputs: &[Function]) -> Vec<Constraint> {
    let mut out = vec![];
    for b in &inputs.buffers {
        let name = b.name();
        match b {
            InputBuffer::Param(p) => {
                for (d, c) in p.constraints().into_iter().enumerate() {
                    for (field, e) in [("min", c.min), ("extent", c.extent), ("stride", c.stride)] {
                        if let Some(value) = e {
                            out.push(Constraint {
                                name: format!("{name}.{field}.{d}"),
                                value,
                            });
                        }
                    }
                }
            }
            InputBuffer::Bound(buf) => {
                if buf.dim(0).is_ok_and(|d| d.stride == 1) {
                    out.push(Constraint {
                        name: format!("{name}.stride.0"),
                        value: Expr::i32(1),
                    });
                }
            }
        }
    }
    // Each output buffer's constraints: `stride.0 == 1` unless removed, and
    // the user's (`f.output_buffer().dim(d).set_*`).
    for o in outputs.iter().filter(|o| o.dimensions() > 0) {
        let names = crate::lang::tuple::element_buffer_names(o);
        for (b, p) in names.iter().zip(o.output_params()) {
            for (d, c) in p.constraints().into_iter().enumerate() {
                for (field, e) in [("min", c.min), ("extent", c.extent), ("stride", c.stride)] {
                    if let Some(value) = e {
                        out.push(Constraint {
                            name: format!("{b}.{field}.{d}"),
                            value,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The lets that open the root body (the Funcs' bounds from bounds
/// inference and allocation bounds inference), as long as their values are
/// plain arithmetic: no load and no call but pure intrinsics, so that
/// evaluating them before any check is safe. The checks go inside them and
/// name them, as Halide's go at the marker bounds inference leaves: a box
/// measured over the whole root body restates every let it depends on, in
/// every check (local_laplacian: ~6k LLVM instructions of its ~64k).
pub(crate) fn split_root_lets(s: &Stmt) -> (Vec<(String, Expr)>, Stmt) {
    use crate::ir::visit::for_each_expr;
    use crate::ir::{CallKind, ExprNode, StmtNode};
    let plain = |e: &Expr| {
        let mut ok = true;
        for_each_expr(e, &mut |x| match x.node() {
            ExprNode::Load { .. } => ok = false,
            ExprNode::Call { kind, .. } => ok &= matches!(kind, CallKind::Intrinsic(i) if i.is_pure()),
            _ => {}
        });
        ok
    };
    let mut lets = vec![];
    let mut rest = s;
    while let StmtNode::LetStmt { name, value, body } = rest.node() {
        if !plain(value) {
            break;
        }
        lets.push((name.clone(), value.clone()));
        rest = body;
    }
    (lets, rest.clone())
}

/// Put the checks in front of `s`, the root body (see the module doc),
/// inside the lets that open it (`split_root_lets`).
pub fn add_buffer_checks(s: Stmt, env: &Environment, outputs: &[Function]) -> Result<Stmt> {
    let inputs = infer_inputs(&s, env, outputs)?;
    let (root_lets, s) = split_root_lets(&s);
    // The boxes of the inputs and outputs only, in one walk: the boxes of
    // every Func of a large pipeline cost far more than theirs
    // (interpolate: 1.1 s of its JIT compile), and a walk per buffer
    // resolves the loops they share once for each. An input is only read,
    // so the box it is touched in is the box it is read in.
    let names: Vec<String> =
        inputs.buffers.iter().map(|b| b.name()).chain(outputs.iter().map(|o| o.name())).collect();
    let mut boxes = boxes_touched_of(&s, &names, &Scope::default());
    // The access checks compare exact (64-bit) bounds, and so read exact
    // copies of the root lets, bound around them alone.
    let mut exact = ExactInt32::default();
    let exact_lets: Vec<(String, Expr)> = root_lets.iter().filter_map(|(n, v)| exact.bind(n, v)).collect();
    let mut access_checks = vec![];
    for b in &inputs.buffers {
        let name = b.name();
        if let Some(region) = boxes.remove(&name) {
            range_checks_in("Input", &name, &region, &mut exact, &mut access_checks)?;
        }
    }
    for o in outputs {
        let name = o.name();
        let buffers = crate::lang::tuple::element_buffer_names(o);
        if let Some(region) = boxes.get(&name) {
            for b in &buffers {
                range_checks_in("Output", b, region, &mut exact, &mut access_checks)?;
            }
        }
        tuple_shape_checks(&buffers, o.dimensions(), &mut access_checks);
    }
    let mut checks = vec![Stmt::let_stmts(exact_lets, Stmt::block(access_checks))];
    checks.extend(
        shape_constraints(&inputs, outputs)
            .iter()
            .map(constraint_check),
    );
    for p in &inputs.scalars {
        param_range_checks(p, &mut checks);
    }
    for b in &inputs.buffers {
        if let InputBuffer::Param(p) = b {
            host_alignment_check(&b.name(), p, &mut checks);
        }
    }
    for o in outputs.iter() {
        let names = crate::lang::tuple::element_buffer_names(o);
        for (b, p) in names.iter().zip(o.output_params()) {
            host_alignment_check(b, &p, &mut checks);
        }
    }
    checks.push(s);
    Ok(Stmt::let_stmts(root_lets, Stmt::block(checks)))
}

/// Replace the constrained shape variables by their constraints outside
/// the assertions (see the module doc). Assumes storage flattening is done.
pub fn apply_shape_constraints(s: &Stmt, inputs: &Inputs, outputs: &[Function]) -> Stmt {
    use crate::analysis::substitute::substitute_map;
    use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
    use crate::ir::{Mutator, StmtNode};
    struct Apply(std::collections::HashMap<String, Expr>);
    impl Mutator for Apply {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            match e.as_variable() {
                Some(n) if self.0.contains_key(n) => substitute_map(&self.0, &e),
                _ => e,
            }
        }
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::AssertStmt { .. } => s.clone(),
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    let map = shape_constraints(inputs, outputs)
        .into_iter()
        .map(|c| (c.name, c.value))
        .collect();
    Apply(map).mutate_stmt(s)
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
                    error_message(ErrorCode::ConstraintViolated, vec![
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

/// Halide's `no_asserts` target feature: drop every assertion.
pub fn strip_asserts(s: &Stmt) -> Stmt {
    use crate::ir::visit::mutate_stmt_children;
    use crate::ir::{Mutator, StmtNode};
    struct Strip;
    impl Mutator for Strip {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s.node() {
                StmtNode::AssertStmt { .. } => Stmt::no_op(),
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    Strip.mutate_stmt(s)
}

#[cfg(test)]
mod tests {
    use crate::ir::{Expr, Type};
    use crate::lang::func::Func;
    use crate::lang::image_param::ImageParam;
    use crate::lang::parameter::Parameter;

    #[test]
    fn checks_in_halide_order_and_constraints_applied_outside_them() {
        let im = ImageParam::new(Type::int(32), 1, Some("bc_im"));
        im.dim(0).unwrap().set_extent(Some(Expr::i32(4))).unwrap();
        let p = Parameter::new(Type::int(32), false, 0, "bc_p");
        p.set_max_value(Some(Expr::i32(3))).unwrap();
        let f = Func::new(Some("bc_f"));
        let x = Expr::var_i32("x");
        let v = Expr::add(im.call(vec![x.clone()]).unwrap(), p.expr());
        f.define(vec![x], vec![v]).unwrap();
        let l = crate::lower::lower(&[f.function.clone()], "bc").unwrap();
        let text = l.pipeline.body.to_string();
        let at = |s: &str| {
            text.find(s)
                .unwrap_or_else(|| panic!("{s} missing:\n{text}"))
        };
        assert!(at("Input buffer bc_im is accessed") < at("Constraint violated: bc_im.extent.0"));
        assert!(at("Constraint violated: bc_im.stride.0") < at("Parameter bc_p is "));
        // Outside the assertions the constrained stride is the constant 1.
        let body: Vec<&str> = text.lines().filter(|l| !l.contains("assert(")).collect();
        assert!(!body.iter().any(|l| l.contains("bc_im.stride.0")), "{text}");
        let names: Vec<String> = l.pipeline.args.iter().map(|a| a.name.clone()).collect();
        assert_eq!(names, ["bc_im", "bc_p", "bc_f"]);
    }

    #[test]
    fn access_checks_name_the_root_lets_exactly() {
        // g reads f, f reads the image: the image's box depends on f's
        // bounds, root lets the checks go inside and read (in Int(64))
        // instead of restating them.
        let im = ImageParam::new(Type::int(32), 1, Some("bc2_im"));
        let x = Expr::var_i32("x");
        let f = Func::new(Some("bc2_f"));
        let fv = Expr::add(im.call(vec![x.clone()]).unwrap(), im.call(vec![Expr::add(x.clone(), Expr::i32(1))]).unwrap());
        f.define(vec![x.clone()], vec![fv]).unwrap();
        f.compute_root();
        let g = Func::new(Some("bc2_g"));
        let twice = Expr::mul(x.clone(), Expr::i32(2));
        let gv = Expr::add(
            f.call(vec![twice.clone()]).unwrap().to_expr().unwrap(),
            f.call(vec![Expr::add(twice, Expr::i32(1))]).unwrap().to_expr().unwrap(),
        );
        g.define(vec![x], vec![gv]).unwrap();
        let l = crate::lower::lower(&[g.function.clone()], "bc2").unwrap();
        let text = l.pipeline.body.to_string();
        // Each check with the lets CSE put around it (the values its
        // condition and message share).
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let checks: Vec<String> = (0..lines.len())
            .filter(|&i| lines[i].contains("Input buffer bc2_im is accessed"))
            .map(|i| {
                let first = (0..i).rev().take_while(|&j| lines[j].starts_with("let t")).last().unwrap_or(i);
                lines[first..=i].join("\n")
            })
            .collect();
        assert_eq!(checks.len(), 2, "{text}");
        for c in checks {
            assert!(c.contains(".s0.x.min.i64") || c.contains(".s0.x.max.i64"), "{c}");
            assert!(!c.contains("let bc2_"), "{c}");
        }
    }
}
