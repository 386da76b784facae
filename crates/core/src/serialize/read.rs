//! Reading a pipeline back: the sections in file order (see `mod.rs`),
//! each object made once and linked by index. Every index and every
//! Expr's typing is checked as it is read, so a damaged file is an error,
//! never a panic later in lowering.

use std::collections::HashMap;

use super::codec::ExprLookup;
use super::wire::{corrupt, Cursor, Decode, HasCursor};
use super::{FORMAT_VERSION, MAGIC};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Type};
use crate::lang::function::{Function, FunctionContents, Specialization, UpdateDefinition};
use crate::lang::parameter::{DimConstraint, Parameter};
use crate::lang::rdom::{ReductionDomain, ReductionVariable};
use crate::lang::requirement::Requirement;
use crate::lang::trace_settings::TraceSettings;
use crate::schedule::{FuncSchedule, StageSchedule};

struct ParamHeader {
    name: String,
    ty: Type,
    is_buffer: bool,
    dimensions: usize,
    external: bool,
}

pub(super) struct Reader<'a> {
    cur: Cursor<'a>,
    buffers: Vec<Buffer>,
    headers: Vec<ParamHeader>,
    params: Vec<Parameter>,
    rdom_vars: Vec<Vec<(String, (u64, u64))>>,
    rdoms: Vec<Option<ReductionDomain>>,
    funcs: Vec<Function>,
    exprs: Vec<Expr>,
}

impl<'a> HasCursor<'a> for Reader<'a> {
    fn cursor(&mut self) -> &mut Cursor<'a> {
        &mut self.cur
    }
}

impl<'a> ExprLookup<'a> for Reader<'a> {
    fn expr_at(&self, index: u64) -> Result<Expr> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.exprs.get(i))
            .cloned()
            .ok_or_else(|| corrupt("an expression index is out of range"))
    }
}

/// Checks the magic number, version and checksum; the contents after the
/// header, without the checksum.
fn body_of(data: &[u8]) -> Result<&[u8]> {
    if !data.starts_with(MAGIC) {
        return Err(Error::user(
            "deserialize_pipeline: the data is not a ferrohalide pipeline (it does not start with \
             ferrohalide's header; pipelines serialized by Halide itself, in its .hlpipe format, \
             cannot be read).\n",
        ));
    }
    let rest = &data[MAGIC.len()..];
    if rest.len() < 8 {
        return Err(corrupt("it ends early"));
    }
    let (body, sum) = rest.split_at(rest.len() - 8);
    if super::checksum(body).to_le_bytes() != sum {
        return Err(corrupt(
            "its checksum does not match: the data was changed or cut short",
        ));
    }
    let mut c = Cursor::new(body);
    let version = c.u64()?;
    if version != FORMAT_VERSION {
        return Err(Error::user(format!(
            "deserialize_pipeline: the pipeline was written in format version {version}, \
             but this ferrohalide reads version {FORMAT_VERSION}.\n"
        )));
    }
    Ok(&body[body.len() - c.remaining()..])
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8]) -> Result<Reader<'a>> {
        Ok(Reader {
            cur: Cursor::new(body_of(data)?),
            buffers: vec![],
            headers: vec![],
            params: vec![],
            rdom_vars: vec![],
            rdoms: vec![],
            funcs: vec![],
            exprs: vec![],
        })
    }

    fn at<T: Clone>(items: &[T], i: u64, what: &str) -> Result<T> {
        usize::try_from(i)
            .ok()
            .and_then(|i| items.get(i))
            .cloned()
            .ok_or_else(|| corrupt(&format!("a {what} index is out of range")))
    }

    fn read_buffers(&mut self) -> Result<()> {
        let n = self.cur.count()?;
        for _ in 0..n {
            let name = self.cur.str()?;
            let ty = Type::decode(self)?;
            let shape: Vec<(i32, i32)> = Vec::decode(self)?;
            let extents: Vec<i32> = shape.iter().map(|d| d.1).collect();
            let b = Buffer::new(ty, &extents, Some(name))
                .map_err(|_| corrupt("a buffer's shape is invalid"))?;
            b.set_min(&shape.iter().map(|d| d.0).collect::<Vec<_>>())?;
            if self.cur.bool()? {
                let data = self.cur.raw()?;
                let size = ty.bytes();
                if data.len() != b.number_of_elements() * size {
                    return Err(corrupt("a buffer's data does not match its shape"));
                }
                let mut chunks = data.chunks_exact(size);
                b.for_each_element_ptr(|_, p| {
                    if let Some(c) = chunks.next() {
                        // SAFETY: `p` points at an element of the new buffer, `size` bytes long.
                        unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), p, size) }
                    }
                });
            } else {
                b.deallocate();
            }
            self.buffers.push(b);
        }
        Ok(())
    }

    fn read_param_headers(&mut self) -> Result<()> {
        let n = self.cur.count()?;
        for _ in 0..n {
            let h = ParamHeader {
                name: self.cur.str()?,
                ty: Type::decode(self)?,
                is_buffer: self.cur.bool()?,
                dimensions: self.cur.usize()?,
                external: self.cur.bool()?,
            };
            self.headers.push(h);
        }
        Ok(())
    }

    /// Make the Parameters: an external one is the caller's of that name,
    /// if given, else a new one with Halide's defaults.
    fn make_params(&mut self, user_params: &HashMap<String, Parameter>) -> Result<()> {
        for h in &self.headers {
            let p = match user_params.get(&h.name).filter(|_| h.external) {
                Some(p) => {
                    if p.ty() != h.ty
                        || p.is_buffer() != h.is_buffer
                        || p.dimensions() != h.dimensions
                    {
                        return Err(Error::user(format!(
                            "deserialize_pipeline: the Parameter given for \"{}\" does not match the serialized one (type, kind or dimensions differ).\n",
                            h.name
                        )));
                    }
                    p.clone()
                }
                None => Parameter::new(h.ty, h.is_buffer, h.dimensions, h.name.clone()),
            };
            self.params.push(p);
        }
        Ok(())
    }

    fn read_rdom_headers(&mut self) -> Result<()> {
        self.rdom_vars = Vec::decode(self)?;
        self.rdoms = vec![None; self.rdom_vars.len()];
        Ok(())
    }

    /// RDom `i`, made on first use (its bounds are read by then).
    fn rdom(&mut self, i: u64) -> Result<ReductionDomain> {
        let k = usize::try_from(i)
            .ok()
            .filter(|&k| k < self.rdoms.len())
            .ok_or_else(|| corrupt("an RDom index is out of range"))?;
        if let Some(r) = &self.rdoms[k] {
            return Ok(r.clone());
        }
        let mut vars = vec![];
        for (name, (min, extent)) in self.rdom_vars[k].clone() {
            let (min, extent) = (self.expr_at(min)?, self.expr_at(extent)?);
            if min.ty() != Type::i32() || extent.ty() != Type::i32() {
                return Err(corrupt("an RDom bound is not an int32"));
            }
            vars.push(ReductionVariable { name, min, extent });
        }
        let r = ReductionDomain::from_vars(vars);
        self.rdoms[k] = Some(r.clone());
        Ok(r)
    }

    fn read_funcs(&mut self) -> Result<()> {
        let n = self.cur.count()?;
        let mut groups: Vec<Function> = vec![];
        for _ in 0..n {
            let name = self.cur.str()?;
            let g = self.cur.usize()?;
            let f = match g {
                g if g < groups.len() => groups[g].new_in_group(name),
                g if g == groups.len() => {
                    let f = Function::new(name);
                    groups.push(f.clone());
                    f
                }
                _ => return Err(corrupt("a Func group index is out of range")),
            };
            self.funcs.push(f);
        }
        Ok(())
    }

    fn read_exprs(&mut self) -> Result<()> {
        let n = self.cur.count()?;
        self.exprs.reserve(n);
        for _ in 0..n {
            let e = self.expr_node()?;
            self.exprs.push(e);
        }
        Ok(())
    }

    fn expr_node(&mut self) -> Result<Expr> {
        let ty = Type::decode(self)?;
        let node = match self.cur.u64()? {
            0 => ExprNode::IntImm(self.cur.i64()?),
            1 => ExprNode::UIntImm(self.cur.u64()?),
            2 => ExprNode::FloatImm(f64::from_bits(self.cur.u64()?)),
            3 => ExprNode::StringImm(self.cur.str()?),
            4 => ExprNode::Cast(Expr::decode(self)?),
            5 => ExprNode::Reinterpret(Expr::decode(self)?),
            6 => {
                let name = self.cur.str()?;
                let param = Option::<u64>::decode(self)?
                    .map(|i| Self::at(&self.params, i, "parameter"))
                    .transpose()?;
                let rdom = match Option::<u64>::decode(self)? {
                    Some(i) => Some(self.rdom(i)?),
                    None => None,
                };
                ExprNode::Variable { name, param, rdom }
            }
            7 => ExprNode::Binary {
                op: BinOp::decode(self)?,
                a: Expr::decode(self)?,
                b: Expr::decode(self)?,
            },
            8 => ExprNode::Not(Expr::decode(self)?),
            9 => ExprNode::Select {
                cond: Expr::decode(self)?,
                t: Expr::decode(self)?,
                f: Expr::decode(self)?,
            },
            10 => return Err(corrupt("a Load in a definition")),
            11 => ExprNode::Ramp {
                base: Expr::decode(self)?,
                stride: Expr::decode(self)?,
                lanes: u16::decode(self)?,
            },
            12 => ExprNode::Broadcast {
                value: Expr::decode(self)?,
                lanes: u16::decode(self)?,
            },
            13 => ExprNode::Let {
                name: self.cur.str()?,
                value: Expr::decode(self)?,
                body: Expr::decode(self)?,
            },
            14 => {
                let name = self.cur.str()?;
                let args = Vec::decode(self)?;
                let kind = self.call_kind()?;
                ExprNode::Call { name, args, kind }
            }
            15 => ExprNode::Shuffle {
                vectors: Vec::decode(self)?,
                indices: Vec::decode(self)?,
            },
            16 => ExprNode::VectorReduce {
                op: crate::ir::VectorReduceOp::decode(self)?,
                value: Expr::decode(self)?,
            },
            _ => return Err(corrupt("unknown expression node")),
        };
        check_typing(ty, &node)?;
        Ok(Expr::new(ty, node))
    }

    fn call_kind(&mut self) -> Result<CallKind> {
        Ok(match self.cur.u64()? {
            0 => CallKind::Intrinsic(crate::ir::Intrinsic::decode(self)?),
            1 => CallKind::PureExtern,
            2 => CallKind::Extern,
            3 => {
                let f = Self::at(&self.funcs, self.cur.u64()?, "Func")?;
                CallKind::Halide {
                    func: f.ptr(),
                    value_index: self.cur.usize()?,
                }
            }
            4 => {
                let buffer = Option::<u64>::decode(self)?
                    .map(|i| Self::at(&self.buffers, i, "buffer"))
                    .transpose()?;
                let param = Option::<u64>::decode(self)?
                    .map(|i| Self::at(&self.params, i, "parameter"))
                    .transpose()?;
                CallKind::Image { buffer, param }
            }
            _ => return Err(corrupt("unknown call kind")),
        })
    }

    /// Parameter bodies; only internal ones (an output's buffer
    /// constraints and estimates) take them, as in Halide.
    fn read_param_bodies(&mut self) -> Result<()> {
        for i in 0..self.params.len() {
            let scalar: Option<Expr> = Option::decode(self)?;
            let range: [Option<Expr>; 4] = [
                Option::decode(self)?,
                Option::decode(self)?,
                Option::decode(self)?,
                Option::decode(self)?,
            ];
            let alignment = match self.cur.usize()? {
                0 => None,
                a => Some(
                    i32::try_from(a).map_err(|_| corrupt("a host alignment out of range"))?,
                ),
            };
            let n = self.cur.count()?;
            let mut constraints = Vec::with_capacity(n);
            for _ in 0..n {
                constraints.push(DimConstraint {
                    min: Option::decode(self)?,
                    extent: Option::decode(self)?,
                    stride: Option::decode(self)?,
                    min_estimate: Option::decode(self)?,
                    extent_estimate: Option::decode(self)?,
                });
            }
            let tracing = TraceSettings::decode(self)?;
            if self.headers[i].external {
                continue;
            }
            let mut c = self.params[i].lock();
            if constraints.len() != if c.is_buffer { c.dimensions } else { 0 } {
                return Err(corrupt(
                    "a parameter's constraints do not match its dimensions",
                ));
            }
            let [min, max, estimate, default_value] = range;
            c.default_value = default_value;
            c.host_alignment = alignment;
            c.scalar = scalar;
            c.min_value = min;
            c.max_value = max;
            c.estimate = estimate;
            c.constraints = constraints;
            c.tracing = tracing;
        }
        Ok(())
    }

    fn read_predicates(&mut self) -> Result<()> {
        for i in 0..self.rdoms.len() {
            let p: Option<Expr> = Option::decode(self)?;
            let r = self.rdom(i as u64)?;
            if let Some(p) = p {
                if !p.ty().is_bool() {
                    return Err(corrupt("an RDom predicate is not a condition"));
                }
                r.set_predicate(Some(p));
            }
        }
        Ok(())
    }

    fn read_func_bodies(&mut self) -> Result<()> {
        for f in self.funcs.clone() {
            let args = Vec::decode(self)?;
            let values = Vec::decode(self)?;
            let output_types = Vec::decode(self)?;
            let schedule = FuncSchedule::decode(self)?;
            let stage = StageSchedule::decode(self)?;
            let specializations: Vec<Specialization> = Vec::decode(self)?;
            let wrappers: Vec<(String, u64)> = Vec::decode(self)?;
            let wrappers = wrappers
                .into_iter()
                .map(|(k, i)| {
                    let w = Self::at(&self.funcs, i, "Func")?;
                    if w.group_id() != f.group_id() {
                        return Err(corrupt("a wrapper is not in its Func's group"));
                    }
                    Ok((k, w.ptr().weakened()))
                })
                .collect::<Result<_>>()?;
            let n = self.cur.count()?;
            let mut updates = Vec::with_capacity(n);
            for _ in 0..n {
                let args = Vec::decode(self)?;
                let values = Vec::decode(self)?;
                let domain = match Option::<u64>::decode(self)? {
                    Some(i) => Some(self.rdom(i)?),
                    None => None,
                };
                updates.push(UpdateDefinition {
                    args,
                    values,
                    domain,
                    stage: StageSchedule::decode(self)?,
                    specializations: Vec::decode(self)?,
                    lets: Vec::decode(self)?,
                });
            }
            let tracing = TraceSettings::decode(self)?;
            let output_params: Vec<u64> = Vec::decode(self)?;
            let output_params = output_params
                .into_iter()
                .map(|i| Self::at(&self.params, i, "parameter"))
                .collect::<Result<_>>()?;
            let frozen = self.cur.bool()?;
            let contents = FunctionContents {
                name: f.name(),
                args,
                values,
                output_types,
                schedule,
                stage,
                version: 0,
                specializations,
                wrappers,
                updates,
                tracing,
                output_params,
                extern_def: None,
            };
            f.restore(contents, frozen)?;
        }
        Ok(())
    }

    fn read_requirements(&mut self) -> Result<Vec<Requirement>> {
        let n = self.cur.count()?;
        (0..n)
            .map(|_| {
                let condition = Expr::decode(self)?;
                let message = Vec::decode(self)?;
                Requirement::new(condition, message)
            })
            .collect()
    }
}

/// The Funcs (outputs first) and requirements of a pipeline file.
pub fn read_pipeline(
    data: &[u8],
    user_params: &HashMap<String, Parameter>,
) -> Result<(Vec<Function>, Vec<Requirement>)> {
    crate::stack::with_large_stack(|| {
        let mut r = Reader::new(data)?;
        r.read_buffers()?;
        r.read_param_headers()?;
        r.make_params(user_params)?;
        r.read_rdom_headers()?;
        r.read_funcs()?;
        r.read_exprs()?;
        r.read_param_bodies()?;
        r.read_predicates()?;
        r.read_func_bodies()?;
        let outputs: Vec<u64> = Vec::decode(&mut r)?;
        let outputs = outputs
            .into_iter()
            .map(|i| Reader::at(&r.funcs, i, "Func"))
            .collect::<Result<Vec<_>>>()?;
        let requirements = r.read_requirements()?;
        if !r.cur.at_end() {
            return Err(corrupt("there is data after the pipeline"));
        }
        Ok((outputs, requirements))
    })
}

/// The external Parameters of a pipeline file, made anew (Halide's
/// `deserialize_parameters`).
pub fn read_parameters(data: &[u8]) -> Result<Vec<Parameter>> {
    let mut r = Reader::new(data)?;
    r.read_buffers()?;
    r.read_param_headers()?;
    Ok(r.headers
        .iter()
        .filter(|h| h.external)
        .map(|h| Parameter::new(h.ty, h.is_buffer, h.dimensions, h.name.clone()))
        .collect())
}

/// The typing rules every node must follow, so that what lowering and code
/// generation assume of the IR holds for what was read.
fn check_typing(ty: Type, node: &ExprNode) -> Result<()> {
    let ok = match node {
        ExprNode::IntImm(_) => ty.is_int() && ty.is_scalar(),
        ExprNode::UIntImm(_) => ty.is_uint() && ty.is_scalar(),
        ExprNode::FloatImm(_) => ty.is_float() && ty.is_scalar(),
        ExprNode::StringImm(_) => ty.is_handle(),
        ExprNode::Cast(a) => a.ty().lanes == ty.lanes,
        ExprNode::Reinterpret(a) => {
            u32::from(a.ty().bits) * u32::from(a.ty().lanes)
                == u32::from(ty.bits) * u32::from(ty.lanes)
        }
        ExprNode::Variable { .. } => true,
        ExprNode::Binary { op, a, b } => {
            a.ty() == b.ty()
                && match op {
                    _ if op.is_comparison() => ty == Type::bool().with_lanes(a.ty().lanes),
                    BinOp::And | BinOp::Or => a.ty().is_bool() && ty == a.ty(),
                    _ => ty == a.ty(),
                }
        }
        ExprNode::Not(a) => a.ty().is_bool() && ty == a.ty(),
        ExprNode::Select { cond, t, f } => {
            cond.ty().is_bool()
                && (cond.ty().lanes == 1 || cond.ty().lanes == ty.lanes)
                && t.ty() == ty
                && f.ty() == ty
        }
        ExprNode::Load { .. } => false,
        ExprNode::Ramp {
            base,
            stride,
            lanes,
        } => {
            base.ty().is_scalar() && stride.ty() == base.ty() && ty == base.ty().with_lanes(*lanes)
        }
        ExprNode::Broadcast { value, lanes } => {
            u32::from(value.ty().lanes) * u32::from(*lanes) == u32::from(ty.lanes)
                && value.ty().element_of() == ty.element_of()
        }
        ExprNode::Let { body, .. } => body.ty() == ty,
        ExprNode::Call { .. } => true,
        ExprNode::Shuffle { vectors, indices } => {
            let total: usize = vectors.iter().map(|v| usize::from(v.ty().lanes)).sum();
            !vectors.is_empty()
                && vectors
                    .iter()
                    .all(|v| v.ty().element_of() == ty.element_of())
                && indices.len() == usize::from(ty.lanes)
                && indices.iter().all(|&i| i >= 0 && (i as usize) < total)
        }
        ExprNode::VectorReduce { value, .. } => {
            value.ty().element_of() == ty.element_of() && value.ty().lanes % ty.lanes == 0
        }
    };
    if ok {
        Ok(())
    } else {
        Err(corrupt("an expression is not well typed"))
    }
}
