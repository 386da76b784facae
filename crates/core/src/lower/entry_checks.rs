//! What a compiled pipeline does on entry, before its own checks and work,
//! when it is called through Halide's C ABI by code that did not check
//! anything (ahead-of-time objects; Halide's AddImageChecks.cpp):
//!
//! 1. **Bounds queries.** A buffer argument whose host and device are both
//!    null asks what region the pipeline needs: the pipeline writes into
//!    every such buffer's shape the region it would access (an input: what
//!    it reads; an output: what its loop nests write, at least the region
//!    asked for), passed through the buffer's shape constraints (dense
//!    strides by default), and returns 0 without doing anything else.
//! 2. **Argument checks**, otherwise: every buffer's element type (its
//!    dimensionality is checked by the entry code before its shape is read),
//!    non-negative extents, a host pointer, and Halide's size limits.
//!
//! Assumes: the root body at the point where `buffer_checks` runs (the
//! accesses of the final loop nests, Func calls not yet flattened); the
//! regions are expressions in the buffers' shape variables and the Params.
//! Guarantees: `EntryChecks::wrap` puts the query and the checks in front
//! of the finished body, so only the control-expression CSE sees them; with
//! `no_asserts` the checks are dropped and the query kept.

use std::collections::HashMap;

use super::arguments::{InputBuffer, Inputs};
use super::buffer_checks::shape_constraints;
use super::storage_flattening::flat_index;
use crate::analysis::bounds::{box_touched, boxes_required, Interval, Region, Scope};
use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute_map;
use crate::error::Result;
use crate::ir::visit::mutate_expr_children;
use crate::ir::{CallKind, ErrorCode, Expr, ExprNode, Intrinsic, Mutator, Stmt, Type};
use crate::lang::function::Function;
use crate::target::Target;

/// The entry code of one pipeline (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct EntryChecks {
    /// Required and proposed shapes, in order.
    lets: Vec<(String, Expr)>,
    /// In a bounds query, the constraints must not shrink the region.
    query_checks: Vec<Stmt>,
    /// One `if (b is a query) set its shape` per buffer.
    rewrites: Vec<Stmt>,
    /// Any buffer is a bounds query.
    any_query: Option<Expr>,
    /// Checks of a real call.
    call_checks: Vec<Stmt>,
}

/// A buffer argument the entry code looks at.
struct EntryBuffer {
    /// `f`, `f.0`, `b0`: the prefix of its shape variables.
    name: String,
    /// "Input buffer b0": how messages name it.
    error_name: String,
    ty: Type,
    dimensions: usize,
    /// What the pipeline touches, per dimension (None: nothing).
    region: Option<Region>,
}

fn var(name: String) -> Expr {
    Expr::var_i32(name)
}

fn handle(name: &str) -> Expr {
    Expr::var(Type::handle(), format!("{name}.buffer"))
}

/// A call of one of the runtime's `halide_error_*` reporters (their first
/// argument is the call's user context).
pub(crate) fn reporter(name: &str, args: Vec<Expr>) -> Expr {
    let mut all = vec![Expr::var(Type::handle(), USER_CONTEXT)];
    all.extend(args);
    Expr::call(Type::i32(), name, all, CallKind::Extern)
}

/// The variable holding the call's user context (defined by the backend).
pub const USER_CONTEXT: &str = "__user_context";

/// `halide_type_t` packed as Halide's `as_u32`: code, bits, lanes (LE).
fn packed_type(ty: Type) -> u32 {
    (ty.code as u32) | ((ty.bits as u32) << 8) | ((ty.lanes as u32) << 16)
}

/// A region read from the unflattened body, as the entry code can compute
/// it: a bound that depends on an input's values (an output read at a
/// place loaded from an input, which Halide's bounds allow) loads that
/// input as the body does, but only where the element exists: the entry
/// code runs before any check (and in a query the buffer may have no
/// memory). The names of the buffers loaded are added to `loaded`.
fn loads_in_region(region: Region, loaded: &mut Vec<String>) -> Region {
    struct ImageLoads<'a>(&'a mut Vec<String>);
    impl Mutator for ImageLoads<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            let ExprNode::Call { name, args, kind: CallKind::Image { .. } } = e.node() else {
                return e;
            };
            if !self.0.contains(name) {
                self.0.push(name.clone());
            }
            let mut exists = Expr::not(is_bounds_query(name));
            for (d, a) in args.iter().enumerate() {
                let min = var(format!("{name}.min.{d}"));
                let end = Expr::add(min.clone(), var(format!("{name}.extent.{d}")));
                exists = Expr::and(exists, Expr::and(Expr::le(min, a.clone()), Expr::lt(a.clone(), end)));
            }
            Expr::load(e.ty(), name.clone(), flat_index(name, args), exists)
        }
    }
    let mut m = ImageLoads(loaded);
    region
        .into_iter()
        .map(|iv| Interval {
            min: iv.min.map(|e| m.mutate_expr(&e)),
            max: iv.max.map(|e| m.mutate_expr(&e)),
        })
        .collect()
}

fn is_bounds_query(buffer: &str) -> Expr {
    Expr::intrinsic(Type::bool(), Intrinsic::BufferIsBoundsQuery, vec![handle(buffer)])
}

/// The buffer arguments, and the buffers whose values some region depends on.
fn buffers(inputs: &Inputs, outputs: &[Function], s: &Stmt) -> (Vec<EntryBuffer>, Vec<String>) {
    let empty = Scope::default();
    let mut loaded = vec![];
    let required: HashMap<String, Region> = boxes_required(s, &empty)
        .into_iter()
        .map(|(n, r)| (n, loads_in_region(r, &mut loaded)))
        .collect();
    let mut out = vec![];
    for b in &inputs.buffers {
        // A Buffer bound in the algorithm is part of the code, not an argument.
        let InputBuffer::Param(p) = b else { continue };
        let name = p.name();
        out.push(EntryBuffer {
            error_name: format!("Input buffer {name}"),
            region: required.get(&name).cloned(),
            ty: p.ty(),
            dimensions: p.dimensions(),
            name,
        });
    }
    for o in outputs {
        let region = box_touched(s, &o.name(), &empty).map(|r| loads_in_region(r, &mut loaded));
        for (name, ty) in crate::lang::tuple::element_buffer_names(o).into_iter().zip(o.types()) {
            out.push(EntryBuffer {
                error_name: format!("Output buffer {name}"),
                region: region.clone(),
                ty,
                dimensions: o.dimensions(),
                name,
            });
        }
    }
    (out, loaded)
}

/// Build the entry code of a pipeline whose root body (at buffer-check
/// time) is `s`.
pub fn entry_checks(
    s: &Stmt,
    inputs: &Inputs,
    outputs: &[Function],
    target: &Target,
) -> Result<EntryChecks> {
    // As in Halide, what the pipeline touches is measured with the shapes
    // constrained (an output constrained to start at 0 is computed from 0
    // on): a query's answer then satisfies the constraints, and one buffer's
    // answer can grow another's (infer_input_bounds repeats the query).
    let constrained = super::buffer_checks::apply_shape_constraints(s, inputs, outputs);
    // The regions are measured inside the root body's opening lets and
    // name them (see `split_root_lets`). The entry code runs in front of
    // the finished body, where those lets may have been rewritten or
    // dropped, so it binds its own copies, renamed.
    let (root_lets, body) = super::buffer_checks::split_root_lets(&constrained);
    let rename: HashMap<String, Expr> = root_lets
        .iter()
        .map(|(n, v)| (n.clone(), Expr::var(v.ty(), entry_name(n))))
        .collect();
    let (mut bufs, loaded) = buffers(inputs, outputs, &body);
    for b in &mut bufs {
        if let Some(r) = &mut b.region {
            for iv in r.iter_mut() {
                for bound in [&mut iv.min, &mut iv.max].into_iter().flatten() {
                    *bound = substitute_map(&rename, bound);
                }
            }
        }
    }
    let mut e = EntryChecks::default();
    e.lets = used_root_lets(&root_lets, &rename, &bufs);
    // A query can't be answered from the values of a buffer that is a
    // query itself.
    for b in bufs.iter().filter(|b| loaded.contains(&b.name)) {
        e.query_checks.push(Stmt::assert(
            Expr::not(is_bounds_query(&b.name)),
            Expr::error(
                ErrorCode::Generic,
                vec![Expr::string(format!(
                    "{} is a bounds query, but the region the pipeline needs depends on its values",
                    b.error_name
                ))],
            ),
        ));
    }
    // Each shape variable, as its required value (to pass the required
    // region through the constraints).
    let mut to_required: HashMap<String, Expr> = HashMap::new();
    for b in &bufs {
        for d in 0..b.dimensions {
            for field in ["min", "extent", "stride"] {
                let n = format!("{}.{field}.{d}", b.name);
                to_required.insert(n.clone(), var(format!("{n}.required")));
            }
        }
    }
    let constraints: HashMap<String, Expr> = shape_constraints(inputs, outputs)
        .into_iter()
        .map(|c| (c.name, c.value))
        .collect();
    let max_size = target.maximum_buffer_size();
    let mut query_terms = vec![];
    for b in &bufs {
        let n = &b.name;
        for d in 0..b.dimensions {
            let actual_min = var(format!("{n}.min.{d}"));
            let actual_extent = var(format!("{n}.extent.{d}"));
            let (min, extent) = match b.region.as_ref().and_then(|r| r.get(d)) {
                Some(iv) => match (&iv.min, &iv.max) {
                    (Some(lo), Some(hi)) => (
                        lo.clone(),
                        simplify(&Expr::sub(Expr::add(hi.clone(), Expr::i32(1)), lo.clone())),
                    ),
                    // buffer_checks refuses unbounded accesses already.
                    _ => (actual_min, actual_extent),
                },
                None => (actual_min, actual_extent),
            };
            let stride = if d == 0 {
                Expr::i32(1)
            } else {
                Expr::mul(
                    var(format!("{n}.stride.{}.required", d - 1)),
                    var(format!("{n}.extent.{}.required", d - 1)),
                )
            };
            e.lets.push((format!("{n}.extent.{d}.required"), extent));
            e.lets.push((format!("{n}.min.{d}.required"), min));
            e.lets.push((format!("{n}.stride.{d}.required"), stride));
        }
    }
    for b in &bufs {
        let n = &b.name;
        let is_query = is_bounds_query(n);
        query_terms.push(is_query.clone());
        let mut set_dims = vec![];
        for d in 0..b.dimensions {
            let mut proposed = vec![];
            for field in ["min", "extent", "stride"] {
                let shape = format!("{n}.{field}.{d}");
                let value = match constraints.get(&shape) {
                    Some(c) => substitute_map(&to_required, c),
                    None => var(format!("{shape}.required")),
                };
                e.lets.push((format!("{shape}.proposed"), value));
                proposed.push(var(format!("{shape}.proposed")));
            }
            let (pmin, pext) = (proposed[0].clone(), proposed[1].clone());
            let rmin = var(format!("{n}.min.{d}.required"));
            let rext = var(format!("{n}.extent.{d}.required"));
            let pmax = Expr::sub(Expr::add(pmin.clone(), pext.clone()), Expr::i32(1));
            let rmax = Expr::sub(Expr::add(rmin.clone(), rext), Expr::i32(1));
            let covers = Expr::and(Expr::le(pmin.clone(), rmin.clone()), Expr::ge(pmax.clone(), rmax.clone()));
            e.query_checks.push(Stmt::assert(
                Expr::or(Expr::not(is_query.clone()), covers),
                reporter(
                    "halide_error_constraints_make_required_region_smaller",
                    vec![Expr::string(b.error_name.clone()), Expr::i32(d as i64), pmin, pmax, rmin, rmax],
                ),
            ));
            set_dims.push(Stmt::evaluate(Expr::call(
                Type::i32(),
                "ferrohalide_buffer_set_dim",
                [vec![handle(n), Expr::i32(d as i64)], proposed].concat(),
                CallKind::Extern,
            )));
        }
        if !set_dims.is_empty() {
            e.rewrites.push(Stmt::if_then_else(is_query, Stmt::block(set_dims), None));
        }
        e.call_checks.extend(call_checks(b, max_size));
    }
    e.any_query = query_terms.into_iter().reduce(Expr::or);
    Ok(e)
}

/// The entry code's copy of root let `name`.
fn entry_name(name: &str) -> String {
    format!("{name}.entry")
}

/// The entry code's copies of the root lets its regions read, directly or
/// through another copy, in order.
fn used_root_lets(root_lets: &[(String, Expr)], rename: &HashMap<String, Expr>, bufs: &[EntryBuffer]) -> Vec<(String, Expr)> {
    use crate::ir::visit::vars_used;
    let mut used = std::collections::HashSet::new();
    for b in bufs {
        for iv in b.region.iter().flatten() {
            for bound in [&iv.min, &iv.max].into_iter().flatten() {
                used.extend(vars_used(bound));
            }
        }
    }
    let mut kept = vec![];
    for (n, v) in root_lets.iter().rev() {
        let copy = entry_name(n);
        if used.contains(&copy) {
            let v = substitute_map(rename, v);
            used.extend(vars_used(&v));
            kept.push((copy, v));
        }
    }
    kept.reverse();
    kept
}

/// The checks of a real (not a bounds query) call on one buffer, in
/// Halide's order: type, extents, host pointer, sizes.
fn call_checks(b: &EntryBuffer, max_size: i64) -> Vec<Stmt> {
    let n = &b.name;
    let mut out = vec![];
    let given = Expr::intrinsic(Type::uint(32), Intrinsic::BufferGetTypeCode, vec![handle(n)]);
    let bits = Expr::intrinsic(Type::uint(32), Intrinsic::BufferGetTypeBits, vec![handle(n)]);
    let lanes = Expr::intrinsic(Type::uint(32), Intrinsic::BufferGetTypeLanes, vec![handle(n)]);
    let packed = Expr::add(
        given,
        Expr::add(
            Expr::mul(bits, Expr::uint_imm(Type::uint(32), 1 << 8)),
            Expr::mul(lanes, Expr::uint_imm(Type::uint(32), 1 << 16)),
        ),
    );
    let correct = Expr::uint_imm(Type::uint(32), packed_type(b.ty) as u64);
    out.push(Stmt::assert(
        Expr::eq(packed.clone(), correct.clone()),
        reporter("halide_error_bad_type", vec![Expr::string(b.error_name.clone()), packed, correct]),
    ));
    for d in 0..b.dimensions {
        let extent = var(format!("{n}.extent.{d}"));
        out.push(Stmt::assert(
            Expr::ge(extent.clone(), Expr::i32(0)),
            reporter(
                "halide_error_buffer_extents_negative",
                vec![Expr::string(b.error_name.clone()), Expr::i32(d as i64), extent],
            ),
        ));
    }
    let host = Expr::intrinsic(Type::handle(), Intrinsic::BufferGetHost, vec![handle(n)]);
    out.push(Stmt::assert(
        Expr::ne(
            Expr::reinterpret(Type::uint(64), host),
            Expr::uint_imm(Type::uint(64), 0),
        ),
        reporter("halide_error_host_is_null", vec![Expr::string(b.error_name.clone())]),
    ));
    // No dimension may span more than the maximum size, nor may the
    // elements of any prefix of the dimensions number more.
    let max = Expr::uint_imm(Type::uint(64), max_size as u64);
    let mut total: Option<Expr> = None;
    for d in 0..b.dimensions {
        let extent = Expr::cast(Type::i64(), var(format!("{n}.extent.{d}")));
        let stride = Expr::cast(Type::i64(), var(format!("{n}.stride.{d}")));
        let span = Expr::cast(
            Type::uint(64),
            Expr::intrinsic(Type::int(64), Intrinsic::Abs, vec![Expr::mul(extent.clone(), stride)]),
        );
        out.push(Stmt::assert(
            Expr::le(span.clone(), max.clone()),
            reporter(
                "halide_error_buffer_allocation_too_large",
                vec![Expr::string(n.clone()), span, max.clone()],
            ),
        ));
        let t = match total {
            None => extent,
            Some(t) => Expr::mul(t, extent),
        };
        if d > 0 {
            out.push(Stmt::assert(
                Expr::le(t.clone(), Expr::i64(max_size)),
                reporter(
                    "halide_error_buffer_extents_too_large",
                    vec![Expr::string(n.clone()), t.clone(), Expr::i64(max_size)],
                ),
            ));
        }
        total = Some(t);
    }
    out
}

impl EntryChecks {
    /// `body` behind the entry code. `bounds_query` false (Halide's
    /// `no_bounds_query`) leaves the query out; `asserts` false
    /// (`no_asserts`) leaves the checks out.
    pub fn wrap(self, body: Stmt, bounds_query: bool, asserts: bool) -> Stmt {
        let keep = |v: Vec<Stmt>| if asserts { v } else { vec![] };
        let mut call = keep(self.call_checks);
        call.push(body);
        let mut s = Stmt::block(call);
        let mut front = vec![];
        if bounds_query {
            if let Some(q) = self.any_query {
                s = Stmt::if_then_else(Expr::not(q), s, None);
                front.extend(keep(self.query_checks));
                front.extend(self.rewrites);
            }
        }
        front.push(s);
        let s = Stmt::block(front);
        if bounds_query {
            Stmt::let_stmts(self.lets, s)
        } else {
            s
        }
    }
}
