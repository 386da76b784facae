//! Extern stages (`Func.define_extern`, `lang/extern_func.rs`) through
//! lowering, in three places:
//!
//! 1. `build_extern_produce` (schedule functions): the produce of an extern
//!    Func is one call of its C function, inside the Func's one-iteration
//!    outermost loop. Each buffer argument is an `extern_buffer` node whose
//!    two calls of the Func it describes (at the region's first and last
//!    points) make that region visible to the passes that measure what a
//!    loop nest touches: bounds inference sizes the inputs from them,
//!    allocation bounds inference the storage.
//! 2. `bounds_query` (bounds inference): where the extern Func's region is
//!    defined, the C function is called as a bounds query (every buffer's
//!    host null) and writes the region of each input Func it needs into
//!    that input's query buffer; the input's region symbols come from it.
//! 3. `lower_extern_buffers` (after storage flattening): each
//!    `extern_buffer` becomes a `halide_buffer_t` on the stack describing
//!    the flattened storage (an input's whole allocation, the output's
//!    region of its own).
//!
//! Assumes (checked, errors naming what is not supported): the extern
//! Func's Func inputs are computed and stored where it is computed, and
//! its loops are not scheduled. Images and Buffers are passed whole (their
//! own `halide_buffer_t`), checked to hold the region the query asked of
//! them (Halide's input buffer checks).

use crate::analysis::bounds::Interval;
use crate::error::{Error, Result};
use crate::ir::visit::mutate_expr_children;
use crate::ir::{CallKind, Expr, ExprNode, ForType, Intrinsic, Mutator, Stmt, Type};
use crate::lang::extern_func::{ExternDefinition, ExternFuncArgument};
use crate::lang::function::Function;
use crate::schedule::LoopLevel;

use super::entry_checks::USER_CONTEXT;
use super::schedule_functions::stage_prefix;

fn var(name: String) -> Expr {
    Expr::var_i32(name)
}

fn user_context() -> Expr {
    Expr::var(Type::handle(), USER_CONTEXT)
}

fn null() -> Expr {
    Expr::reinterpret(Type::handle(), Expr::uint_imm(Type::uint(64), 0))
}

/// The symbols holding the region extern stage `consumer` asked for of
/// its input Func `input`, dimension `d`.
fn query_symbol(input: &str, consumer: &str, which: &str, d: usize) -> String {
    format!("{input}.extern_query.{consumer}.{which}.{d}")
}

fn query_buffer_name(buffer: &str, consumer: &str) -> String {
    format!("{buffer}.bounds_query.{consumer}")
}

/// A `halide_buffer_t` on the stack: `host`, element type `ty`, and per
/// dimension (min, extent, stride).
pub(super) fn buffer_struct(host: Expr, ty: Type, dims: &[(Expr, Expr, Expr)]) -> Expr {
    let dim = if dims.is_empty() {
        null()
    } else {
        let fields = dims
            .iter()
            .flat_map(|(m, e, s)| [m.clone(), e.clone(), s.clone(), Expr::uint_imm(Type::uint(32), 0)])
            .collect();
        Expr::intrinsic(Type::handle(), Intrinsic::MakeStruct, fields)
    };
    Expr::intrinsic(
        Type::handle(),
        Intrinsic::MakeStruct,
        vec![
            Expr::uint_imm(Type::uint(64), 0),
            null(),
            host,
            Expr::uint_imm(Type::uint(64), 0),
            Expr::uint_imm(Type::uint(8), ty.code as u64),
            Expr::uint_imm(Type::uint(8), ty.bits as u64),
            Expr::uint_imm(Type::uint(16), 1),
            Expr::i32(dims.len() as i64),
            dim,
            null(),
        ],
    )
}

/// The names of the buffers of `f`'s values (`f`, or `f.0`, `f.1`, ...).
fn element_buffers(f: &Function) -> Vec<String> {
    crate::lang::tuple::element_buffer_names(f)
}

fn call_at(f: &Function, i: usize, args: Vec<Expr>) -> Expr {
    Expr::call(
        f.output_types()[i],
        f.name(),
        args,
        CallKind::Halide {
            func: f.ptr(),
            value_index: i,
        },
    )
}

/// Refuse the schedules the extern stage support does not cover: its
/// Func inputs must be computed and stored where it is computed (the
/// bounds query that sizes them runs there).
fn check_schedule(
    f: &Function,
    def: &ExternDefinition,
    level: &LoopLevel,
    is_output: &dyn Fn(&str) -> bool,
) -> Result<()> {
    let name = f.name();
    let c = f.read();
    let pure_loops = c.stage.splits.is_empty()
        && c.stage.dims.iter().all(|d| d.for_type == ForType::Serial && d.device.is_none());
    if !pure_loops {
        return Err(Error::unimplemented(&format!(
            "scheduling the loops of the extern stage {name}"
        )));
    }
    drop(c);
    for a in &def.args {
        if let ExternFuncArgument::Func(g) = a {
            let levels = if is_output(&g.name()) {
                crate::schedule::LockedLevels {
                    compute: LoopLevel::Root,
                    store: LoopLevel::Root,
                    hoist: LoopLevel::Root,
                }
            } else {
                g.read().schedule.locked_levels()?
            };
            if levels.compute.is_inlined() {
                return Err(Error::user(format!(
                    "Func {} cannot be scheduled to be computed inline, because it is used in the externally-computed function {name}\n",
                    g.name()
                )));
            }
            let at_level = |l: &LoopLevel| l.matches(level) || (l.is_inlined() && levels.compute.matches(level));
            if !levels.compute.matches(level) || !at_level(&levels.store) || !at_level(&levels.hoist) {
                return Err(Error::unimplemented(&format!(
                    "computing or storing {}, an input of the extern stage {name}, anywhere but where {name} is computed",
                    g.name()
                )));
            }
        }
    }
    Ok(())
}

/// The produce statement of extern stage `f` (see the module doc).
pub fn build_extern_produce(
    f: &Function,
    def: &ExternDefinition,
    level: &LoopLevel,
    is_output: &dyn Fn(&str) -> bool,
) -> Result<Stmt> {
    check_schedule(f, def, level, is_output)?;
    let name = f.name();
    let prefix = stage_prefix(&name, 0);
    let mut args = vec![];
    for a in &def.args {
        match a {
            ExternFuncArgument::Expr(e) => args.push(e.clone()),
            ExternFuncArgument::Buffer(b) => {
                args.push(Expr::var(Type::handle(), format!("{}.buffer", b.name())))
            }
            ExternFuncArgument::ImageParam(p) => {
                args.push(Expr::var(Type::handle(), format!("{}.buffer", p.name())))
            }
            ExternFuncArgument::Func(g) => {
                let dims = g.dimensions();
                let corner = |which: &str| -> Vec<Expr> {
                    (0..dims).map(|d| var(query_symbol(&g.name(), &name, which, d))).collect()
                };
                for i in 0..g.outputs() {
                    args.push(Expr::intrinsic(
                        Type::handle(),
                        Intrinsic::ExternBuffer,
                        vec![
                            Expr::i32(0),
                            Expr::i32(dims as i64),
                            call_at(g, i, corner("min")),
                            call_at(g, i, corner("max")),
                        ],
                    ));
                }
            }
        }
    }
    let fargs = f.args();
    let mins: Vec<Expr> = fargs.iter().map(|a| var(format!("{prefix}{a}.min"))).collect();
    let maxs: Vec<Expr> = fargs.iter().map(|a| var(format!("{prefix}{a}.max"))).collect();
    for i in 0..f.outputs() {
        let mut marker = vec![
            Expr::i32(1),
            Expr::i32(fargs.len() as i64),
            call_at(f, i, mins.clone()),
            call_at(f, i, maxs.clone()),
        ];
        for (mn, mx) in mins.iter().zip(&maxs) {
            marker.push(mn.clone());
            marker.push(Expr::add(Expr::sub(mx.clone(), mn.clone()), Expr::i32(1)));
        }
        args.push(Expr::intrinsic(Type::handle(), Intrinsic::ExternBuffer, marker));
    }
    let result = format!("{name}.extern_result");
    let call = Expr::call(Type::i32(), def.function_name.clone(), args, CallKind::Extern);
    let failed = Expr::call(
        Type::i32(),
        "halide_error_extern_stage_failed",
        vec![user_context(), Expr::string(def.function_name.clone()), var(result.clone())],
        CallKind::Extern,
    );
    let body = Stmt::let_stmt(
        result.clone(),
        call,
        Stmt::assert(Expr::eq(var(result), Expr::i32(0)), failed),
    );
    let outermost = format!("{prefix}{}", crate::schedule::OUTERMOST);
    let nest = Stmt::for_loop(outermost, Expr::i32(0), Expr::i32(1), ForType::Serial, body);
    Ok(Stmt::producer(name, nest))
}

/// What bounds inference puts where extern stage `f`'s region is defined:
/// the bounds query call (statements, in order) and the lets of the
/// regions of its input Funcs it returned.
pub fn bounds_query(f: &Function, def: &ExternDefinition) -> Result<Vec<QueryItem>> {
    let name = f.name();
    let prefix = stage_prefix(&name, 0);
    let mut items = vec![];
    let mut args = vec![];
    let mut regions = vec![];
    let mut images = vec![];
    for a in &def.args {
        match a {
            ExternFuncArgument::Expr(e) => args.push(e.clone()),
            ExternFuncArgument::Buffer(b) => {
                let q = image_query(&b.name(), b.ty(), b.dimensions(), &name, &mut items);
                images.push((b.name(), b.dimensions(), q.clone()));
                args.push(q);
            }
            ExternFuncArgument::ImageParam(p) => {
                let q = image_query(&p.name(), p.ty(), p.dimensions(), &name, &mut items);
                images.push((p.name(), p.dimensions(), q.clone()));
                args.push(q);
            }
            ExternFuncArgument::Func(g) => {
                let dims = g.dimensions();
                let types = g.output_types();
                for (i, b) in element_buffers(g).iter().enumerate() {
                    let q = query_buffer_name(b, &name);
                    let shape = vec![(Expr::i32(0), Expr::i32(0), Expr::i32(0)); dims];
                    items.push(QueryItem::Let(q.clone(), buffer_struct(null(), types[i], &shape)));
                    let qv = Expr::var(Type::handle(), q);
                    if i == 0 {
                        regions.push((g.name(), dims, qv.clone()));
                    }
                    args.push(qv);
                }
            }
        }
    }
    let types = f.output_types();
    for (i, b) in element_buffers(f).iter().enumerate() {
        let shape: Vec<(Expr, Expr, Expr)> = f
            .args()
            .iter()
            .map(|a| {
                let (mn, mx) = (var(format!("{prefix}{a}.min")), var(format!("{prefix}{a}.max")));
                (mn.clone(), Expr::add(Expr::sub(mx, mn), Expr::i32(1)), Expr::i32(0))
            })
            .collect();
        let q = query_buffer_name(b, &name);
        items.push(QueryItem::Let(q.clone(), buffer_struct(null(), types[i], &shape)));
        args.push(Expr::var(Type::handle(), q));
    }
    let result = format!("{name}.bounds_query_result");
    items.push(QueryItem::Let(
        result.clone(),
        Expr::call(Type::i32(), def.function_name.clone(), args, CallKind::Extern),
    ));
    let failed = Expr::call(
        Type::i32(),
        "halide_error_bounds_inference_call_failed",
        vec![user_context(), Expr::string(def.function_name.clone()), var(result.clone())],
        CallKind::Extern,
    );
    items.push(QueryItem::Check(Stmt::assert(Expr::eq(var(result), Expr::i32(0)), failed)));
    // The images must hold what the stage asked of them (Halide's input
    // buffer checks).
    for (image, dims, q) in images {
        let region: Vec<Interval> = (0..dims)
            .map(|d| {
                let dv = Expr::i32(d as i64);
                let min = Expr::intrinsic(Type::i32(), Intrinsic::BufferGetMin, vec![q.clone(), dv.clone()]);
                let extent = Expr::intrinsic(Type::i32(), Intrinsic::BufferGetExtent, vec![q.clone(), dv]);
                let max = Expr::sub(Expr::add(min.clone(), extent), Expr::i32(1));
                Interval::new(Some(min), Some(max))
            })
            .collect();
        let mut checks = vec![];
        super::buffer_checks::range_checks("Input", &image, &region, &mut checks)?;
        items.extend(checks.into_iter().map(QueryItem::Check));
    }
    for (g, dims, q) in regions {
        for d in 0..dims {
            let dv = Expr::i32(d as i64);
            let min = Expr::intrinsic(Type::i32(), Intrinsic::BufferGetMin, vec![q.clone(), dv.clone()]);
            let extent = Expr::intrinsic(Type::i32(), Intrinsic::BufferGetExtent, vec![q.clone(), dv]);
            let max = Expr::sub(Expr::add(var(query_symbol(&g, &name, "min", d)), extent), Expr::i32(1));
            items.push(QueryItem::Let(query_symbol(&g, &name, "min", d), min));
            items.push(QueryItem::Let(query_symbol(&g, &name, "max", d), max));
        }
    }
    Ok(items)
}

/// A copy of an image's `halide_buffer_t` with a null host: the query
/// buffer of an image argument (what the extern writes into it is not
/// used).
fn image_query(image: &str, ty: Type, dims: usize, consumer: &str, items: &mut Vec<QueryItem>) -> Expr {
    let shape: Vec<(Expr, Expr, Expr)> = (0..dims)
        .map(|d| {
            (
                var(format!("{image}.min.{d}")),
                var(format!("{image}.extent.{d}")),
                var(format!("{image}.stride.{d}")),
            )
        })
        .collect();
    let q = query_buffer_name(image, consumer);
    items.push(QueryItem::Let(q.clone(), buffer_struct(null(), ty, &shape)));
    Expr::var(Type::handle(), q)
}

/// One step of what bounds inference puts before a level's body.
pub enum QueryItem {
    Let(String, Expr),
    Check(Stmt),
}

/// Replace each `extern_buffer` by the buffer it describes (see the
/// module doc). Assumes storage flattening is done.
pub fn lower_extern_buffers(s: &Stmt) -> Result<Stmt> {
    struct Lower {
        error: Option<Error>,
    }
    impl Mutator for Lower {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            if let Some(args) = e.as_intrinsic(Intrinsic::ExternBuffer) {
                match buffer_of(args) {
                    Ok(b) => return b,
                    Err(err) => {
                        self.error.get_or_insert(err);
                        return e.clone();
                    }
                }
            }
            mutate_expr_children(self, e)
        }
    }
    let mut l = Lower { error: None };
    let out = l.mutate_stmt(s);
    match l.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn buffer_of(args: &[Expr]) -> Result<Expr> {
    let bad = || Error::internal("a malformed extern_buffer after storage flattening");
    let kind = args.first().and_then(|a| a.as_int_const()).ok_or_else(bad)?;
    let dims = args.get(1).and_then(|a| a.as_int_const()).ok_or_else(bad)? as usize;
    let ExprNode::Load { name, index, .. } = args.get(2).ok_or_else(bad)?.node() else {
        return Err(bad());
    };
    let ty = args[2].ty();
    let stride = |d: usize| var(format!("{name}.stride.{d}"));
    let host = Expr::var(Type::handle(), name.clone());
    if kind == 0 {
        let shape: Vec<(Expr, Expr, Expr)> = (0..dims)
            .map(|d| (var(format!("{name}.min.{d}")), var(format!("{name}.extent.{d}")), stride(d)))
            .collect();
        return Ok(buffer_struct(host, ty, &shape));
    }
    // The output: its region of the storage, from the element at its mins.
    let bytes = (ty.bits as u64).div_ceil(8).max(1);
    let offset = Expr::mul(Expr::cast(Type::int(64), index.clone()), Expr::i64(bytes as i64));
    let address = Expr::add(
        Expr::reinterpret(Type::int(64), host),
        offset,
    );
    let host = Expr::reinterpret(Type::handle(), address);
    let shape: Vec<(Expr, Expr, Expr)> = (0..dims)
        .map(|d| {
            let min = args.get(4 + 2 * d).cloned().unwrap_or(Expr::i32(0));
            let extent = args.get(5 + 2 * d).cloned().unwrap_or(Expr::i32(0));
            (min, extent, stride(d))
        })
        .collect();
    Ok(buffer_struct(host, ty, &shape))
}
