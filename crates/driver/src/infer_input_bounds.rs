//! `infer_input_bounds`: the regions of its unbound ImageParams a pipeline
//! needs for some output, found the way a C caller finds them (Halide's
//! `Pipeline::infer_input_bounds`): the pipeline is compiled with its entry
//! code (`lower/entry_checks.rs`) and called with bounds-query buffers (null
//! host) for those inputs, and for the outputs that are queries themselves.
//! The call writes the regions into the query buffers. Constraints can make
//! one buffer's region depend on another's, so the call is repeated until
//! nothing changes; then each ImageParam gets a zeroed Buffer of its region.

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::requirement::Requirement;
use ferrohalide_core::lower::arguments::InputBuffer;
use ferrohalide_core::lower::ArgumentKind;
use ferrohalide_core::target::Target;
use ferrohalide_core::{Error, Result};
use ferrohalide_runtime::{halide_buffer_t, halide_dimension_t, halide_type_t};

use ferrohalide_codegen_llvm::jit::ArgValue;

use crate::pipeline::compile_with;

/// Rounds of bounds queries before giving up (Halide's limit); `realize`
/// grows its outputs for as many rounds.
pub(crate) const MAX_ROUNDS: usize = 16;

/// One buffer argument of the query calls.
struct Slot {
    buffer: halide_buffer_t,
    dims: Vec<halide_dimension_t>,
    /// Set from the query (an ImageParam without a buffer), else None.
    param: Option<ferrohalide_core::lang::parameter::Parameter>,
    /// The caller's output Buffer, when it is a query buffer itself.
    output: Option<Buffer>,
}

fn query_buffer(ty: ferrohalide_core::ir::Type, dims: usize) -> Slot {
    let mut s = Slot {
        buffer: halide_buffer_t::default(),
        dims: vec![halide_dimension_t::default(); dims],
        param: None,
        output: None,
    };
    s.buffer.type_ = halide_type_t {
        code: ty.code.as_halide_code(),
        bits: ty.bits,
        lanes: 1,
    };
    s.buffer.dimensions = dims as i32;
    s
}

/// Infer and bind the regions of the unbound ImageParams of the pipeline
/// computing `outputs` into `buffers` (one per output value; a bounds-query
/// Buffer, with no storage, gets its own region written into it).
pub fn infer_input_bounds(
    outputs: &[Function],
    requirements: &[Requirement],
    buffers: &[Buffer],
    target: Option<&Target>,
) -> Result<()> {
    let compiled = compile_with(outputs, requirements, target, true)?;
    let mut slots: Vec<Option<Slot>> = vec![];
    let mut scalars = vec![];
    let mut out_index = 0;
    for a in &compiled.args {
        match a.kind {
            ArgumentKind::InputScalar => {
                let p = compiled
                    .inputs
                    .scalars
                    .iter()
                    .find(|p| p.name() == a.name)
                    .ok_or_else(|| Error::internal(format!("missing scalar input {}", a.name)))?;
                let v = p.scalar_for_run()?;
                let v = ferrohalide_core::lang::parameter::immediate_value(&v)
                    .ok_or_else(|| Error::internal(format!("Param {} holds a non-constant", a.name)))?;
                scalars.push(crate::pipeline::scalar_value(v));
                slots.push(None);
            }
            ArgumentKind::InputBuffer => {
                let found = compiled.inputs.buffers.iter().find(|b| b.name() == a.name);
                let bound = found.and_then(InputBuffer::buffer);
                let slot = match bound {
                    Some(b) => {
                        let mut s = query_buffer(a.ty, a.dimensions);
                        s.buffer = b.raw(&mut s.dims);
                        s
                    }
                    None => {
                        let mut s = query_buffer(a.ty, a.dimensions);
                        if let Some(InputBuffer::Param(p)) = found {
                            s.param = Some(p.clone());
                        }
                        s
                    }
                };
                slots.push(Some(slot));
            }
            ArgumentKind::OutputBuffer => {
                let b = buffers.get(out_index).ok_or_else(|| {
                    Error::user(format!(
                        "infer_input_bounds needs {} output buffer(s)\n",
                        compiled.args.iter().filter(|a| a.kind == ArgumentKind::OutputBuffer).count()
                    ))
                })?;
                out_index += 1;
                let mut s = query_buffer(a.ty, a.dimensions);
                s.buffer = b.raw(&mut s.dims);
                if b.host_ptr().is_null() {
                    s.output = Some(b.clone());
                }
                slots.push(Some(s));
            }
        }
    }
    let is_query = |s: &Slot| s.param.is_some() || s.output.is_some();
    if !slots.iter().flatten().any(is_query) {
        return Ok(());
    }
    let mut converged = false;
    for _ in 0..MAX_ROUNDS {
        let before: Vec<Vec<(i32, i32, i32)>> = slots
            .iter()
            .flatten()
            .map(|s| s.dims.iter().map(|d| (d.min, d.extent, d.stride)).collect())
            .collect();
        let mut scalar_iter = scalars.iter();
        let mut args = vec![];
        for s in slots.iter_mut() {
            match s {
                Some(s) => {
                    s.buffer.dim = s.dims.as_mut_ptr();
                    args.push(ArgValue::Buffer(&mut s.buffer as *mut _));
                }
                None => args.push(ArgValue::Scalar(
                    *scalar_iter.next().expect("one value per scalar argument"),
                )),
            }
        }
        compiled.module.run(&args)?;
        let after: Vec<Vec<(i32, i32, i32)>> = slots
            .iter()
            .flatten()
            .map(|s| s.dims.iter().map(|d| (d.min, d.extent, d.stride)).collect())
            .collect();
        if after == before {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(Error::user(format!(
            "Inferring input bounds on Pipeline didn't converge after {MAX_ROUNDS} iterations. There may be unsatisfiable constraints\n"
        )));
    }
    for s in slots.iter().flatten() {
        let shape: Vec<(i32, i32)> = s.dims.iter().map(|d| (d.min, d.extent)).collect();
        if let Some(p) = &s.param {
            // Laid out in the order of the queried strides (constraints
            // may ask for, say, interleaved channels).
            let ty = p.ty();
            let extents: Vec<i32> = shape.iter().map(|d| d.1).collect();
            let mut order: Vec<usize> = (0..s.dims.len()).collect();
            order.sort_by_key(|&d| (s.dims[d].stride.unsigned_abs(), d));
            let b = Buffer::new_with_storage_order(ty, &extents, &order, Some(p.name()))?;
            b.set_min(&shape.iter().map(|d| d.0).collect::<Vec<_>>())?;
            p.set_buffer(Some(b))?;
        }
        if let Some(out) = &s.output {
            out.write().dims = s.dims.clone();
        }
    }
    Ok(())
}

/// The region (min, extent per dimension) each of `outputs` must cover
/// when `realize(sizes)` asks for [0, sizes) of every output: the answer
/// of a bounds-query call with storage-less output buffers, which is how
/// Halide's `Pipeline::realize` sizes its outputs. Every input must be
/// bound (the query reads the inputs a data-dependent region depends on).
pub fn query_output_regions(
    outputs: &[Function],
    requirements: &[Requirement],
    sizes: &[i32],
    target: Option<&Target>,
) -> Result<Vec<Vec<(i32, i32)>>> {
    let mut queries = vec![];
    let mut firsts = vec![];
    for f in outputs {
        firsts.push(queries.len());
        for ty in f.types() {
            let b = Buffer::new_uninitialized(ty, sizes, Some(f.name()))?;
            b.deallocate();
            queries.push(b);
        }
    }
    infer_input_bounds(outputs, requirements, &queries, target)?;
    Ok(firsts
        .into_iter()
        .map(|i| queries[i].dims().iter().map(|d| (d.min, d.extent)).collect())
        .collect())
}
