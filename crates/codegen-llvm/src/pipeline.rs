//! Realizing Funcs from Rust: lower, JIT-compile (cached), run.
//!
//! Compiled code is cached per thread, keyed by the identity and version of
//! every Func in the pipeline (any definition or schedule change bumps a
//! version) and by the types and dimensionality of the bound input buffers,
//! so realizing the same Func again reuses its machine code.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use ferrohalide_core::analysis::evaluate::eval_int;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::Type;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::print::ir_type_name;
use ferrohalide_core::lang::tuple::{element_buffer_name, element_buffer_names};
use ferrohalide_core::lower::environment::{bound_input_buffers, build_environment};
use ferrohalide_core::lower::{lower, ArgumentKind, Lowered};
use ferrohalide_core::{Error, Result};
use ferrohalide_runtime::halide_dimension_t;

use crate::jit::{compile_jit, ArgValue, JitModule};
use crate::target::JitTarget;

/// What a compiled pipeline depends on: the Funcs (identity and version)
/// and, per bound input Buffer, what lowering specializes on (its type,
/// rank, and whether its innermost stride is 1).
#[derive(Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    outputs: Vec<usize>,
    funcs: Vec<(usize, u64)>,
    inputs: Vec<(String, Type, usize, bool)>,
}

pub struct Compiled {
    pub lowered: Lowered,
    pub module: JitModule,
}

const CACHE_CAPACITY: usize = 64;

thread_local! {
    static CACHE: RefCell<HashMap<CacheKey, Rc<Compiled>>> = RefCell::new(HashMap::new());
}

fn cache_key(outputs: &[Function]) -> Result<CacheKey> {
    let env = build_environment(outputs)?;
    let mut funcs: Vec<(usize, u64)> = env.sources.iter().map(|f| (f.id(), f.version())).collect();
    funcs.sort();
    let inputs = bound_input_buffers(&env)?
        .into_iter()
        .map(|(n, b)| {
            let dense = b.dim(0).map_or(true, |d| d.stride == 1);
            (n, b.ty(), b.dimensions(), dense)
        })
        .collect();
    Ok(CacheKey {
        outputs: outputs.iter().map(|f| f.id()).collect(),
        funcs,
        inputs,
    })
}

/// Lower and compile `outputs`, or fetch the cached compilation.
pub fn compile(outputs: &[Function]) -> Result<Rc<Compiled>> {
    let key = cache_key(outputs)?;
    if let Some(c) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(c);
    }
    let name = outputs.first().map(|f| f.name()).unwrap_or_default();
    let lowered = lower(outputs, &name)?;
    let module = compile_jit(&lowered.pipeline, &JitTarget::host())?;
    let compiled = Rc::new(Compiled { lowered, module });
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_CAPACITY {
            c.clear();
        }
        c.insert(key, compiled.clone());
    });
    Ok(compiled)
}

/// Check the buffer passed for output buffer `name` (a value of `f`, of type `ty`).
fn check_output_buffer(f: &Function, name: &str, ty: Type, b: &Buffer) -> Result<()> {
    if b.ty() != ty {
        return Err(Error::user(format!(
            "Output buffer {name} has type {} but type of the buffer passed in is {}\n",
            ir_type_name(ty),
            ir_type_name(b.ty())
        )));
    }
    if b.dimensions() != f.dimensions() {
        return Err(Error::user(format!(
            "Output buffer {name} requires a buffer of exactly {} dimensions, but the buffer passed in has {} dimensions\n",
            f.dimensions(),
            b.dimensions()
        )));
    }
    Ok(())
}

/// Realize `outputs` over a region of the given extents (mins 0), returning
/// one Buffer per output value (tuple elements flattened in order).
///
/// As in Halide, when the schedule writes beyond the requested region (a
/// split that rounds up or shifts inwards), the storage is made large enough
/// and the returned Buffer is a view of the requested region.
pub fn realize(outputs: &[Function], sizes: &[i32]) -> Result<Vec<Buffer>> {
    for f in outputs {
        if !f.has_pure_definition() {
            return Err(Error::user("Can't realize undefined Func."));
        }
        if sizes.len() != f.dimensions() {
            return Err(Error::user(format!(
                "Func {} is defined with {} dimensions, but realize() is requesting a realization with {} dimensions.",
                f.name(),
                f.dimensions(),
                sizes.len()
            )));
        }
    }
    let compiled = compile(outputs)?;
    let mut full = vec![];
    let mut views = vec![];
    for (i, f) in outputs.iter().enumerate() {
        let name = f.name();
        // The written region is in terms of the first output buffer's shape.
        let first = element_buffer_name(&name, f.types().len(), 0);
        let mut vars = HashMap::new();
        for (d, &e) in sizes.iter().enumerate() {
            vars.insert(format!("{first}.min.{d}"), 0i64);
            vars.insert(format!("{first}.extent.{d}"), e as i64);
        }
        let region = compiled
            .lowered
            .output_regions
            .get(i)
            .cloned()
            .unwrap_or_default();
        let mut mins = vec![];
        let mut extents = vec![];
        for (d, &e) in sizes.iter().enumerate() {
            let lo = region
                .get(d)
                .and_then(|iv| iv.min.as_ref())
                .and_then(|m| eval_int(m, &vars));
            let hi = region
                .get(d)
                .and_then(|iv| iv.max.as_ref())
                .and_then(|m| eval_int(m, &vars));
            let lo = lo.unwrap_or(0).min(0);
            let hi = hi.unwrap_or(e as i64 - 1).max(e as i64 - 1);
            mins.push(lo as i32);
            extents.push((hi - lo + 1) as i32);
        }
        for ty in f.types() {
            let b = Buffer::new_uninitialized(ty, &extents, Some(name.clone()))?;
            b.set_min(&mins)?;
            views.push(
                if extents.as_slice() == sizes && mins.iter().all(|&m| m == 0) {
                    b.clone()
                } else {
                    crop_view(&b, sizes)?
                },
            );
            full.push(b);
        }
    }
    realize_into(outputs, &full)?;
    Ok(views)
}

/// A Buffer viewing the region [0, sizes) of `b`, sharing its storage.
fn crop_view(b: &Buffer, sizes: &[i32]) -> Result<Buffer> {
    let v = b.alias();
    v.set_name(b.name());
    v.crop_rect(&sizes.iter().map(|&e| (0, e)).collect::<Vec<_>>())?;
    Ok(v)
}

/// Realize `outputs` into caller-provided buffers (one per output value,
/// the elements of a Tuple in order).
pub fn realize_into(outputs: &[Function], buffers: &[Buffer]) -> Result<()> {
    for f in outputs {
        if !f.has_pure_definition() {
            return Err(Error::user(format!(
                "Can't realize undefined Func {}.",
                f.name()
            )));
        }
    }
    let values: Vec<(&Function, String, Type)> = outputs
        .iter()
        .flat_map(|f| {
            element_buffer_names(f)
                .into_iter()
                .zip(f.types())
                .map(move |(n, t)| (f, n, t))
        })
        .collect();
    if values.len() != buffers.len() {
        return Err(Error::user(format!(
            "Realization requires {} output(s) but pipeline produces {} result(s).\n",
            buffers.len(),
            values.len()
        )));
    }
    for ((f, name, ty), b) in values.iter().zip(buffers) {
        check_output_buffer(f, name, *ty, b)?;
    }
    let compiled = compile(outputs)?;
    let p = &compiled.lowered.pipeline;

    // Build halide_buffer_t's for every buffer argument; keep their
    // dimension arrays alive for the duration of the call.
    let mut dims_storage: Vec<Vec<halide_dimension_t>> = vec![Vec::new(); p.args.len()];
    let mut raws = Vec::with_capacity(p.args.len());
    let mut out_index = 0;
    for (i, a) in p.args.iter().enumerate() {
        let buf = match a.kind {
            ArgumentKind::InputBuffer => compiled
                .lowered
                .input_buffers
                .iter()
                .find(|(n, _)| n == &a.name)
                .map(|(_, b)| b.clone())
                .ok_or_else(|| Error::internal(format!("missing input buffer {}", a.name)))?,
            ArgumentKind::OutputBuffer => {
                out_index += 1;
                buffers[out_index - 1].clone()
            }
            ArgumentKind::InputScalar => return Err(Error::unimplemented("scalar Params")),
        };
        raws.push(buf.raw(&mut dims_storage[i]));
    }
    let mut args: Vec<ArgValue> = raws
        .iter_mut()
        .map(|r| ArgValue::Buffer(r as *mut _))
        .collect();
    compiled.module.run(&mut args)
}
