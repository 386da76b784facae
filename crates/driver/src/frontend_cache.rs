//! The front-end level of the persistent JIT cache: a fresh process that
//! realizes a pipeline some process compiled before skips lowering as well
//! as LLVM.
//!
//! The key is the pipeline as the user built it (`serialize::write_key`:
//! every Func's definitions and schedules, the Parameters' ranges and
//! constraints, bound Buffers' names and layouts, requirements), the Halide
//! target and whether entry checks are made, with the build, LLVM version
//! and CPU (`jit_cache::frontend_key`). The entry holds what `Compiled`
//! needs besides live objects: the arguments, each output's region, the
//! inputs by name (found again among the Parameters and Buffers the key's
//! walk met), the warnings lowering gave (given again on a hit), the key of
//! the lowered pipeline, and the object.
//!
//! A wrong hit would be a wrong answer, so a hit is only taken when every
//! input is found again unambiguously, and anything the entry cannot
//! describe exactly (an output region that reads memory, a linked RDom)
//! is simply not stored. `FERROHALIDE_CACHE_VERIFY=1` lowers on every hit
//! as well and fails if the lowered pipeline's key or the entry's
//! description differ from the stored ones.

use ferrohalide_codegen_llvm::jit::{compile_jit_keyed, load_jit, JitModule};
use ferrohalide_codegen_llvm::jit_cache::{self,
    frontend_key, pipeline_key, read_frontend_entry, verify_frontend_hits, write_frontend_entry, Digest,
};
use ferrohalide_codegen_llvm::target::JitTarget;
use ferrohalide_core::analysis::bounds::{Interval, Region};
use ferrohalide_core::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, Type};
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::parameter::Parameter;
use ferrohalide_core::lang::requirement::Requirement;
use ferrohalide_core::lower::arguments::{InputBuffer, Inputs};
use ferrohalide_core::lower::{ArgumentEstimates, ArgumentKind, Lowered, LoweredArgument};
use ferrohalide_core::serialize::wire::{Bytes, Cursor, Decode, Encode};
use ferrohalide_core::serialize::{write_key, PipelineKey};
use ferrohalide_core::target::Target;
use ferrohalide_core::{Error, Result};

/// What a pipeline compiles to, without the objects it was compiled from.
pub(crate) struct Interface {
    pub name: String,
    pub args: Vec<LoweredArgument>,
    pub output_regions: Vec<Region>,
    pub inputs: Inputs,
}

/// A pipeline's front-end key, and the objects its walk met.
pub(crate) struct FrontEnd {
    key: Digest,
    objects: PipelineKey,
}

/// The front-end key of a pipeline, or `None` when the pipeline has
/// something the key cannot describe (an extern stage), or the cache is off.
pub(crate) fn front_end(
    outputs: &[Function],
    requirements: &[Requirement],
    target: &Target,
    entry_checks: bool,
    jit_target: &JitTarget,
) -> Option<FrontEnd> {
    if !jit_cache::enabled() {
        return None;
    }
    let objects = match write_key(outputs, requirements) {
        Ok(o) => o,
        Err(e) => {
            debug(&format!("no front-end key: {e}"));
            return None;
        }
    };
    let options = format!("target={target} entry_checks={entry_checks}");
    let key = frontend_key(&objects.bytes, &options, jit_target);
    Some(FrontEnd { key, objects })
}

/// A compilation loaded from the front-end entry of `front`, if there is a
/// whole one whose inputs are all found again.
pub(crate) fn load(front: &FrontEnd) -> Option<(Interface, JitModule, Digest, Vec<u8>)> {
    let Some(payload) = read_frontend_entry(&front.key) else {
        debug("front-end miss");
        return None;
    };
    let loaded = decode_entry(front, &payload);
    debug(if loaded.is_some() { "front-end hit" } else { "front-end entry not usable" });
    loaded
}

fn decode_entry(front: &FrontEnd, payload: &[u8]) -> Option<(Interface, JitModule, Digest, Vec<u8>)> {
    let mut c = Cursor::new(payload);
    let lowered_key: Digest = c.take(32).ok()?.try_into().ok()?;
    let description = c.raw().ok()?.to_vec();
    let warnings: Vec<String> = Vec::decode(&mut c).ok()?;
    let object = c.raw().ok()?;
    let interface = decode_interface(&description, &front.objects)?;
    let module = load_jit(object, &interface.name, interface.args.clone()).ok()?;
    for w in warnings {
        ferrohalide_core::output::emit(w);
    }
    Some((interface, module, lowered_key, description))
}

/// Store the compilation of `lowered` (whose lowering emitted `warnings`)
/// under `front`, when the entry can describe it exactly.
pub(crate) fn store(front: &FrontEnd, lowered: &Lowered, warnings: &[String], lowered_key: &Digest, object: &[u8]) {
    let description = match encode_interface(lowered, &front.objects) {
        Ok(d) => d,
        Err(why) => {
            debug(&format!("no front-end entry: {why}"));
            return;
        }
    };
    let mut out = Bytes::default();
    out.out.extend_from_slice(lowered_key);
    out.raw(&description);
    warnings.to_vec().encode(&mut out);
    out.raw(object);
    write_frontend_entry(&front.key, &out.out);
}

fn debug(msg: &str) {
    if ferrohalide_codegen_llvm::jit::debug_level() >= 1 {
        eprintln!("JIT cache: {msg}");
    }
}

/// Should each hit be checked by lowering anyway?
pub(crate) fn verifying() -> bool {
    verify_frontend_hits()
}

/// The check `FERROHALIDE_CACHE_VERIFY` makes on a hit: lowering the
/// pipeline now must give the pipeline the entry was made from.
pub(crate) fn verify(
    front: &FrontEnd,
    lowered: &Lowered,
    jit_target: &JitTarget,
    stored_key: &Digest,
    stored_description: &[u8],
) -> Result<()> {
    let key = pipeline_key(&lowered.pipeline, jit_target);
    let description = encode_interface(lowered, &front.objects).ok();
    if key != *stored_key || description.as_deref() != Some(stored_description) {
        return Err(Error::internal(format!(
            "JIT cache verification failed for pipeline {}: its front-end entry was made from a \
             different lowered pipeline (the front-end key misses something lowering reads)",
            lowered.pipeline.name
        )));
    }
    Ok(())
}

/// Compile `lowered` for `jit_target`: the module, the lowered pipeline's
/// key and the object.
pub(crate) fn compile(lowered: &Lowered, jit_target: &JitTarget) -> Result<(JitModule, Digest, Vec<u8>)> {
    ferrohalide_core::stack::with_large_stack(|| compile_jit_keyed(&lowered.pipeline, jit_target))
}

// The entry's description of a compilation.

/// The description, or why there is none.
fn encode_interface(lowered: &Lowered, objects: &PipelineKey) -> std::result::Result<Vec<u8>, &'static str> {
    let mut b = Bytes::default();
    b.str(&lowered.pipeline.name);
    b.usize(lowered.pipeline.args.len());
    for LoweredArgument { name, kind, ty, dimensions, estimates } in &lowered.pipeline.args {
        // The JIT's lowering gives no estimates (they are for metadata).
        let ArgumentEstimates { scalar_def, scalar_min, scalar_max, scalar_estimate, buffer_estimates } =
            estimates;
        if scalar_def.is_some()
            || scalar_min.is_some()
            || scalar_max.is_some()
            || scalar_estimate.is_some()
            || !buffer_estimates.is_empty()
        {
            return Err("an argument has estimates");
        }
        b.str(name);
        b.u64(match kind {
            ArgumentKind::InputScalar => 0,
            ArgumentKind::InputBuffer => 1,
            ArgumentKind::OutputBuffer => 2,
        });
        ty.encode(&mut b);
        b.usize(*dimensions);
    }
    b.usize(lowered.output_regions.len());
    for region in &lowered.output_regions {
        b.usize(region.len());
        for Interval { min, max } in region {
            for bound in [min, max] {
                b.bool(bound.is_some());
                if let Some(e) = bound {
                    let mut budget = MAX_REGION_NODES;
                    encode_expr(&mut b, e, objects, &mut budget).ok_or("an output region is not plain arithmetic")?;
                }
            }
        }
    }
    let Inputs { buffers, scalars } = &lowered.inputs;
    b.usize(buffers.len());
    for input in buffers {
        // Found again by name: the name must pick out this very object.
        let (bound, name) = match input {
            InputBuffer::Bound(x) => {
                let mut found = objects.buffers.iter().filter(|y| y.name() == x.name());
                if !(found.next().is_some_and(|y| y.id() == x.id()) && found.next().is_none()) {
                    return Err("a bound Buffer's name is not unique");
                }
                (true, x.name())
            }
            InputBuffer::Param(p) => {
                unique_parameter(objects, &p.name())
                    .filter(|q| q.same_as(p))
                    .ok_or("an ImageParam's name is not unique")?;
                (false, p.name())
            }
        };
        b.bool(bound);
        b.str(&name);
    }
    b.usize(scalars.len());
    for p in scalars {
        unique_parameter(objects, &p.name())
            .filter(|q| q.same_as(p))
            .ok_or("a Param's name is not unique")?;
        b.str(&p.name());
    }
    Ok(b.out)
}

fn decode_interface(data: &[u8], objects: &PipelineKey) -> Option<Interface> {
    let mut c = Cursor::new(data);
    let name = c.str().ok()?;
    let mut args = vec![];
    for _ in 0..c.count().ok()? {
        let name = c.str().ok()?;
        let kind = match c.u64().ok()? {
            0 => ArgumentKind::InputScalar,
            1 => ArgumentKind::InputBuffer,
            2 => ArgumentKind::OutputBuffer,
            _ => return None,
        };
        let ty = Type::decode(&mut c).ok()?;
        let dimensions = c.usize().ok()?;
        args.push(LoweredArgument { name, kind, ty, dimensions, estimates: Default::default() });
    }
    let mut output_regions = vec![];
    for _ in 0..c.count().ok()? {
        let mut region = vec![];
        for _ in 0..c.count().ok()? {
            let mut bounds = [None, None];
            for bound in &mut bounds {
                if c.bool().ok()? {
                    *bound = Some(decode_expr(&mut c, objects)?);
                }
            }
            let [min, max] = bounds;
            region.push(Interval::new(min, max));
        }
        output_regions.push(region);
    }
    let mut buffers = vec![];
    for _ in 0..c.count().ok()? {
        let bound = c.bool().ok()?;
        let name = c.str().ok()?;
        buffers.push(if bound {
            let mut found = objects.buffers.iter().filter(|x| x.name() == name);
            let x = found.next()?;
            if found.next().is_some() {
                return None;
            }
            InputBuffer::Bound(x.clone())
        } else {
            InputBuffer::Param(unique_parameter(objects, &name)?.clone())
        });
    }
    let mut scalars = vec![];
    for _ in 0..c.count().ok()? {
        scalars.push(unique_parameter(objects, &c.str().ok()?)?.clone());
    }
    if !c.at_end() {
        return None;
    }
    Some(Interface { name, args, output_regions, inputs: Inputs { buffers, scalars } })
}

/// The one Parameter named `name` the pipeline refers to.
fn unique_parameter<'a>(objects: &'a PipelineKey, name: &str) -> Option<&'a Parameter> {
    let mut found = objects.parameters.iter().filter(|p| p.name() == name);
    let p = found.next()?;
    found.next().is_none().then_some(p)
}

/// Output region bounds are written as trees: a bound larger than this
/// (shared subexpressions unfolded) is not described.
const MAX_REGION_NODES: usize = 4096;

/// Output regions are arithmetic on the outputs' and inputs' shapes and
/// the Params; anything else (a read of memory, a call) is not described.
fn encode_expr(b: &mut Bytes, e: &Expr, objects: &PipelineKey, budget: &mut usize) -> Option<()> {
    let Some(left) = budget.checked_sub(1) else {
        debug("an output region is too large to describe");
        return None;
    };
    *budget = left;
    e.ty().encode(b);
    match e.node() {
        ExprNode::IntImm(v) => {
            b.u64(0);
            b.i64(*v);
        }
        ExprNode::UIntImm(v) => {
            b.u64(1);
            b.u64(*v);
        }
        ExprNode::FloatImm(v) => {
            b.u64(2);
            b.u64(v.to_bits());
        }
        ExprNode::Variable { name, param, rdom } => {
            if rdom.is_some() {
                return None;
            }
            b.u64(3);
            b.str(name);
            b.bool(param.is_some());
            if let Some(p) = param {
                let found = unique_parameter(objects, &p.name())?;
                if !found.same_as(p) {
                    return None;
                }
                b.str(&p.name());
            }
        }
        ExprNode::Cast(a) => {
            b.u64(4);
            encode_expr(b, a, objects, budget)?;
        }
        ExprNode::Binary { op, a, b: rhs } => {
            b.u64(5);
            op.encode(b);
            encode_expr(b, a, objects, budget)?;
            encode_expr(b, rhs, objects, budget)?;
        }
        ExprNode::Not(a) => {
            b.u64(6);
            encode_expr(b, a, objects, budget)?;
        }
        ExprNode::Select { cond, t, f } => {
            b.u64(7);
            encode_expr(b, cond, objects, budget)?;
            encode_expr(b, t, objects, budget)?;
            encode_expr(b, f, objects, budget)?;
        }
        ExprNode::Let { name, value, body } => {
            b.u64(8);
            b.str(name);
            encode_expr(b, value, objects, budget)?;
            encode_expr(b, body, objects, budget)?;
        }
        ExprNode::Call { name, args, kind: CallKind::Intrinsic(i) } => {
            b.u64(9);
            b.str(name);
            i.encode(b);
            b.usize(args.len());
            for a in args {
                encode_expr(b, a, objects, budget)?;
            }
        }
        ExprNode::StringImm(_)
        | ExprNode::Reinterpret(_)
        | ExprNode::Load { .. }
        | ExprNode::Ramp { .. }
        | ExprNode::Broadcast { .. }
        | ExprNode::Call { .. }
        | ExprNode::Shuffle { .. }
        | ExprNode::VectorReduce { .. } => {
            debug(&format!("an output region holds {e}"));
            return None;
        }
    }
    Some(())
}

fn decode_expr(c: &mut Cursor<'_>, objects: &PipelineKey) -> Option<Expr> {
    let ty = Type::decode(c).ok()?;
    let node = match c.u64().ok()? {
        0 => ExprNode::IntImm(c.i64().ok()?),
        1 => ExprNode::UIntImm(c.u64().ok()?),
        2 => ExprNode::FloatImm(f64::from_bits(c.u64().ok()?)),
        3 => {
            let name = c.str().ok()?;
            let param = if c.bool().ok()? {
                Some(unique_parameter(objects, &c.str().ok()?)?.clone())
            } else {
                None
            };
            ExprNode::Variable { name, param, rdom: None }
        }
        4 => ExprNode::Cast(decode_expr(c, objects)?),
        5 => {
            let op = BinOp::decode(c).ok()?;
            let a = decode_expr(c, objects)?;
            let b = decode_expr(c, objects)?;
            ExprNode::Binary { op, a, b }
        }
        6 => ExprNode::Not(decode_expr(c, objects)?),
        7 => {
            let cond = decode_expr(c, objects)?;
            let t = decode_expr(c, objects)?;
            let f = decode_expr(c, objects)?;
            ExprNode::Select { cond, t, f }
        }
        8 => {
            let name = c.str().ok()?;
            let value = decode_expr(c, objects)?;
            let body = decode_expr(c, objects)?;
            ExprNode::Let { name, value, body }
        }
        9 => {
            let name = c.str().ok()?;
            let i = Intrinsic::decode(c).ok()?;
            let mut args = vec![];
            for _ in 0..c.count().ok()? {
                args.push(decode_expr(c, objects)?);
            }
            ExprNode::Call { name, args, kind: CallKind::Intrinsic(i) }
        }
        _ => return None,
    };
    Some(Expr::new(ty, node))
}
