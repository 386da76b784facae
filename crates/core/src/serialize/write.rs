//! Writing a pipeline: walk everything its outputs reach (Funcs, their
//! wrappers, Parameters, bound Buffers, RDoms, Exprs), give each object
//! one index, and write the sections in the order the reader needs them
//! (see `mod.rs` for the layout).
//!
//! Exprs are a table written children first, so an Expr shared by many
//! definitions (or many times within one) is stored once, and a node's
//! children are always read before it.

use std::collections::HashMap;

use super::codec::ExprTable;
use super::wire::{Bytes, Encode, HasBytes};
use super::{FORMAT_VERSION, MAGIC};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{CallKind, Expr, ExprNode};
use crate::lang::function::{Function, FunctionContents, UpdateDefinition};
use crate::lang::parameter::{DimConstraint, Parameter, ParameterContents};
use crate::lang::rdom::ReductionDomain;
use crate::lang::requirement::Requirement;

/// One kind of object the file lists, each once, by first use.
struct Table<T> {
    items: Vec<T>,
    index: HashMap<usize, u64>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table {
            items: vec![],
            index: HashMap::new(),
        }
    }
}

impl<T: Clone> Table<T> {
    /// The index of `item` (identified by `id`), and whether it is new.
    fn add(&mut self, id: usize, item: &T) -> (u64, bool) {
        if let Some(&i) = self.index.get(&id) {
            return (i, false);
        }
        let i = self.items.len() as u64;
        self.items.push(item.clone());
        self.index.insert(id, i);
        (i, true)
    }
}

pub(super) struct Writer {
    /// Where values are being written now (a section, or an Expr node).
    out: Bytes,
    exprs: Bytes,
    /// The Exprs written so far, kept alive so their addresses stay unique.
    expr_table: Table<Expr>,
    funcs: Table<Function>,
    params: Table<Parameter>,
    /// Parameters an Expr refers to: Halide's "external" parameters, which
    /// a reader takes from the caller or makes anew.
    external: Vec<bool>,
    rdoms: Table<ReductionDomain>,
    /// Per RDom: each variable's name and the indices of its bounds.
    rdom_vars: Vec<Vec<(String, (u64, u64))>>,
    buffers: Table<Buffer>,
    error: Option<Error>,
    /// Writing a cache key (`write_key`) rather than a file: values that do
    /// not change the compiled code are left out (a Param's current value,
    /// a Buffer's elements) and everything lowering reads is put in, even
    /// what a file does not store (a Buffer's strides, an ImageParam's
    /// wrappers and memory type).
    for_key: bool,
}

impl HasBytes for Writer {
    fn bytes(&mut self) -> &mut Bytes {
        &mut self.out
    }
}

impl ExprTable for Writer {
    fn expr_index(&mut self, e: &Expr) -> u64 {
        if let Some(&i) = self.expr_table.index.get(&e.id()) {
            return i;
        }
        // The node is written to a buffer of its own; its children, met
        // on the way, are added to the table before it.
        let outer = std::mem::take(&mut self.out);
        self.node(e);
        let node = std::mem::replace(&mut self.out, outer);
        self.exprs.out.extend_from_slice(&node.out);
        self.expr_table.add(e.id(), e).0
    }
}

impl Writer {
    fn new() -> Writer {
        Writer {
            out: Bytes::default(),
            exprs: Bytes::default(),
            expr_table: Table::default(),
            funcs: Table::default(),
            params: Table::default(),
            external: vec![],
            rdoms: Table::default(),
            rdom_vars: vec![],
            buffers: Table::default(),
            error: None,
            for_key: false,
        }
    }

    fn node(&mut self, e: &Expr) {
        e.ty().encode(self);
        match e.node() {
            ExprNode::IntImm(v) => {
                self.out.u64(0);
                self.out.i64(*v);
            }
            ExprNode::UIntImm(v) => {
                self.out.u64(1);
                self.out.u64(*v);
            }
            ExprNode::FloatImm(v) => {
                self.out.u64(2);
                self.out.u64(v.to_bits());
            }
            ExprNode::StringImm(s) => {
                self.out.u64(3);
                self.out.str(s);
            }
            ExprNode::Cast(a) => {
                self.out.u64(4);
                a.encode(self);
            }
            ExprNode::Reinterpret(a) => {
                self.out.u64(5);
                a.encode(self);
            }
            ExprNode::Variable { name, param, rdom } => {
                // The RDom and its bounds go in first: a reader makes the
                // domain when it meets its first variable.
                let param = param.as_ref().map(|p| self.param(p, true));
                let rdom = rdom.as_ref().map(|r| self.rdom(r));
                self.out.u64(6);
                self.out.str(name);
                param.encode(self);
                rdom.encode(self);
            }
            ExprNode::Binary { op, a, b } => {
                self.out.u64(7);
                op.encode(self);
                a.encode(self);
                b.encode(self);
            }
            ExprNode::Not(a) => {
                self.out.u64(8);
                a.encode(self);
            }
            ExprNode::Select { cond, t, f } => {
                self.out.u64(9);
                cond.encode(self);
                t.encode(self);
                f.encode(self);
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                self.out.u64(10);
                self.out.str(name);
                index.encode(self);
                predicate.encode(self);
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => {
                self.out.u64(11);
                base.encode(self);
                stride.encode(self);
                lanes.encode(self);
            }
            ExprNode::Broadcast { value, lanes } => {
                self.out.u64(12);
                value.encode(self);
                lanes.encode(self);
            }
            ExprNode::Let { name, value, body } => {
                self.out.u64(13);
                self.out.str(name);
                value.encode(self);
                body.encode(self);
            }
            ExprNode::Call { name, args, kind } => {
                let kind = self.call_kind(name, kind);
                self.out.u64(14);
                self.out.str(name);
                args.encode(self);
                self.out.out.extend_from_slice(&kind.out);
            }
            ExprNode::Shuffle { vectors, indices } => {
                self.out.u64(15);
                vectors.encode(self);
                indices.encode(self);
            }
            ExprNode::VectorReduce { op, value } => {
                self.out.u64(16);
                op.encode(self);
                value.encode(self);
            }
        }
    }

    /// A call's kind, encoded apart (registering what it links).
    fn call_kind(&mut self, name: &str, kind: &CallKind) -> Bytes {
        let mut b = Bytes::default();
        match kind {
            CallKind::Intrinsic(i) => {
                b.u64(0);
                i.encode(&mut b);
            }
            CallKind::PureExtern => b.u64(1),
            CallKind::Extern => b.u64(2),
            CallKind::Halide { func, value_index } => match Function::called(func, name) {
                Ok(f) => {
                    b.u64(3);
                    b.u64(self.func(&f));
                    b.usize(*value_index);
                }
                Err(e) => {
                    self.error.get_or_insert(e);
                    b.u64(2);
                }
            },
            CallKind::Image { buffer, param } => {
                b.u64(4);
                let buffer = buffer.as_ref().map(|x| self.buffer(x));
                let param = param.as_ref().map(|p| self.param(p, true));
                buffer.encode(&mut b);
                param.encode(&mut b);
            }
        }
        b
    }

    fn func(&mut self, f: &Function) -> u64 {
        self.funcs.add(f.id(), f).0
    }
    fn buffer(&mut self, b: &Buffer) -> u64 {
        self.buffers.add(b.id(), b).0
    }
    fn param(&mut self, p: &Parameter, from_expr: bool) -> u64 {
        let (i, new) = self.params.add(p.id(), p);
        if new {
            self.external.push(false);
        }
        self.external[i as usize] |= from_expr;
        i
    }
    fn rdom(&mut self, r: &ReductionDomain) -> u64 {
        if let Some(&i) = self.rdoms.index.get(&r.id()) {
            return i;
        }
        let vars = r
            .vars()
            .into_iter()
            .map(|v| {
                (
                    v.name,
                    (self.expr_index(&v.min), self.expr_index(&v.extent)),
                )
            })
            .collect();
        self.rdom_vars.push(vars);
        self.rdoms.add(r.id(), r).0
    }

    /// A Func's definition, schedule and links. Destructured in full, so a
    /// field added to a Func does not compile until it is stored here (the
    /// JIT cache's key is this encoding).
    fn func_body(&mut self, f: &Function) {
        let c = f.read();
        let FunctionContents {
            name: _,    // in the file's Func list
            version: _, // this process's change counter
            args,
            values,
            output_types,
            schedule,
            stage,
            specializations,
            wrappers,
            updates,
            tracing,
            output_params,
            extern_def,
        } = &*c;
        if extern_def.is_some() {
            self.error.get_or_insert_with(|| {
                Error::unimplemented(&format!("serializing the extern stage {}", c.name))
            });
        }
        args.encode(self);
        values.encode(self);
        output_types.encode(self);
        schedule.encode(self);
        stage.encode(self);
        specializations.encode(self);
        let wrappers: Vec<(String, u64)> = wrappers
            .iter()
            .filter_map(|(k, w)| Some((k.clone(), self.func(&Function::from_ptr(w)?))))
            .collect();
        wrappers.encode(self);
        self.out.usize(updates.len());
        for UpdateDefinition { args, values, domain, stage, specializations, lets } in updates {
            args.encode(self);
            values.encode(self);
            let domain = domain.as_ref().map(|r| self.rdom(r));
            domain.encode(self);
            stage.encode(self);
            specializations.encode(self);
            lets.encode(self);
        }
        tracing.encode(self);
        let outputs: Vec<u64> = output_params.iter().map(|p| self.param(p, false)).collect();
        outputs.encode(self);
        drop(c);
        f.is_frozen().encode(self);
    }

    fn param_body(&mut self, p: &Parameter) {
        // Copied out first: encoding may lock other Parameters.
        let (scalar, range, constraints, tracing, alignment, memory_type, image_wrappers) = {
            let c = p.lock();
            let ParameterContents {
                name: _, // with its type and shape, in the file's Parameter list
                ty: _,
                is_buffer: _,
                dimensions: _,
                buffer: _, // the run's input, not part of the pipeline
                scalar,
                min_value,
                max_value,
                estimate,
                default_value,
                constraints,
                tracing,
                host_alignment,
                memory_type,
                image_wrappers,
            } = &*c;
            let range = [min_value.clone(), max_value.clone(), estimate.clone(), default_value.clone()];
            (
                scalar.clone(),
                range,
                constraints.clone(),
                tracing.clone(),
                *host_alignment,
                *memory_type,
                image_wrappers.clone(),
            )
        };
        if self.for_key {
            // The value a run uses, not part of the code.
            None::<Expr>.encode(self);
        } else {
            scalar.encode(self);
        }
        for x in &range {
            x.encode(self);
        }
        // 0: the element size (no promise).
        self.out.usize(alignment.map_or(0, |a| a as usize));
        self.out.usize(constraints.len());
        for DimConstraint {
            min,
            extent,
            stride,
            min_estimate,
            extent_estimate,
        } in &constraints
        {
            for x in [min, extent, stride, min_estimate, extent_estimate] {
                x.encode(self);
            }
        }
        tracing.encode(self);
        if self.for_key {
            // Not in files yet (a pipeline read back has no ImageParam
            // wrappers); lowering reads both.
            memory_type.encode(self);
            let wrappers: Vec<(String, u64)> = image_wrappers
                .iter()
                .filter_map(|(k, w)| Some((k.clone(), self.func(&Function::from_ptr(w)?))))
                .collect();
            wrappers.encode(self);
        }
    }

    /// Encode with `f` into a section of its own.
    fn section(&mut self, f: impl FnOnce(&mut Writer)) -> Vec<u8> {
        let outer = std::mem::take(&mut self.out);
        f(self);
        std::mem::replace(&mut self.out, outer).out
    }
}

/// The file for a pipeline of `outputs` with `requirements`, and the
/// external Parameters it refers to.
pub fn write_pipeline(
    outputs: &[Function],
    requirements: &[Requirement],
) -> Result<(Vec<u8>, Vec<Parameter>)> {
    crate::stack::with_large_stack(|| {
        let (bytes, w) = write_pipeline_inner(outputs, requirements, false)?;
        let external = w
            .params
            .items
            .iter()
            .zip(&w.external)
            .filter(|(_, &e)| e)
            .map(|(p, _)| p.clone())
            .collect();
        Ok((bytes, external))
    })
}

/// A pipeline as a JIT cache key sees it: the encoding of everything that
/// decides the code lowering makes from `outputs` (definitions, schedules,
/// Parameters' ranges and constraints, bound Buffers' names, types and
/// layouts), with what only a run uses left out (Params' values, Buffers'
/// elements); plus the objects the pipeline refers to, by which a cached
/// compilation's inputs are found again.
pub struct PipelineKey {
    pub bytes: Vec<u8>,
    pub parameters: Vec<Parameter>,
    pub buffers: Vec<Buffer>,
}

/// The `PipelineKey` of `outputs` with `requirements`; an error for what
/// a file cannot hold either (extern stages).
pub fn write_key(outputs: &[Function], requirements: &[Requirement]) -> Result<PipelineKey> {
    crate::stack::with_large_stack(|| {
        let (bytes, w) = write_pipeline_inner(outputs, requirements, true)?;
        Ok(PipelineKey {
            bytes,
            parameters: w.params.items,
            buffers: w.buffers.items,
        })
    })
}

fn write_pipeline_inner(
    outputs: &[Function],
    requirements: &[Requirement],
    for_key: bool,
) -> Result<(Vec<u8>, Writer)> {
    let mut w = Writer::new();
    w.for_key = for_key;
    let output_ids: Vec<u64> = outputs.iter().map(|f| w.func(f)).collect();
    let reqs = w.section(|w| {
        w.out.usize(requirements.len());
        for r in requirements {
            r.condition.encode(w);
            r.message.encode(w);
        }
    });
    // Bodies discover more objects; go on until every one found has its body.
    let (mut func_bodies, mut param_bodies, mut predicates) = (vec![], vec![], vec![]);
    loop {
        if let Some(f) = w.funcs.items.get(func_bodies.len()).cloned() {
            func_bodies.push(w.section(|w| w.func_body(&f)));
        } else if let Some(p) = w.params.items.get(param_bodies.len()).cloned() {
            param_bodies.push(w.section(|w| w.param_body(&p)));
        } else if let Some(r) = w.rdoms.items.get(predicates.len()).cloned() {
            predicates.push(w.section(|w| {
                let p = r.has_predicate().then(|| r.predicate());
                p.encode(w)
            }));
        } else {
            break;
        }
    }
    if let Some(e) = w.error.take() {
        return Err(e);
    }

    let mut file = Bytes::default();
    file.u64(FORMAT_VERSION);
    file.usize(w.buffers.items.len());
    for b in &w.buffers.items {
        write_buffer(&mut file, b, for_key);
    }
    file.usize(w.params.items.len());
    for (p, external) in w.params.items.iter().zip(&w.external) {
        file.str(&p.name());
        p.ty().encode(&mut file);
        file.bool(p.is_buffer());
        file.usize(p.dimensions());
        file.bool(*external);
    }
    file.usize(w.rdom_vars.len());
    for vars in &w.rdom_vars {
        vars.encode(&mut file);
    }
    let mut groups: HashMap<usize, u64> = HashMap::new();
    file.usize(w.funcs.items.len());
    for f in &w.funcs.items {
        let next = groups.len() as u64;
        let g = *groups.entry(f.group_id()).or_insert(next);
        file.str(&f.name());
        file.u64(g);
    }
    file.u64(w.expr_table.items.len() as u64);
    file.out.extend_from_slice(&w.exprs.out);
    for section in param_bodies.iter().chain(&predicates).chain(&func_bodies) {
        file.out.extend_from_slice(section);
    }
    output_ids.encode(&mut file);
    file.out.extend_from_slice(&reqs);

    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&file.out);
    out.extend_from_slice(&super::checksum(&file.out).to_le_bytes());
    Ok((out, w))
}

/// A Buffer's name, type, shape and elements (densely, dimension 0
/// fastest); an unallocated Buffer has no elements. For a key, the strides
/// instead of the elements: the code compiled for a bound Buffer depends
/// on its layout (it is specialized to a dense one), not on its values.
fn write_buffer(file: &mut Bytes, b: &Buffer, for_key: bool) {
    file.str(&b.name());
    b.ty().encode(file);
    let dims = b.dims();
    file.usize(dims.len());
    for d in &dims {
        d.min.encode(file);
        d.extent.encode(file);
        if for_key {
            d.stride.encode(file);
        }
    }
    let allocated = !b.host_ptr().is_null();
    file.bool(allocated);
    if allocated && !for_key {
        let size = b.ty().bytes();
        let mut data = Vec::with_capacity(b.number_of_elements() * size);
        b.for_each_element_ptr(|_, p| {
            // SAFETY: `p` points at an element of the buffer, `size` bytes long.
            data.extend_from_slice(unsafe { std::slice::from_raw_parts(p, size) })
        });
        file.raw(&data);
    }
}

#[cfg(test)]
mod tests {
    //! The JIT cache's front-end key: what only a run uses stays out of it,
    //! what lowering reads goes in.
    use super::*;
    use crate::ir::Type;
    use crate::lang::func::{image_call, Func};
    use crate::lang::parameter::ScalarInput;

    /// `f(x) = table(x) + p + im(x)`, with `table` a bound Buffer.
    fn pipeline(p: &Parameter, im: &Parameter, table: &Buffer) -> Func {
        let x = Expr::var_i32("x");
        let f = Func::new(Some("f"));
        let im_call = Expr::call(
            Type::int(32),
            im.name(),
            vec![x.clone()],
            CallKind::Image { buffer: None, param: Some(im.clone()) },
        );
        let value = Expr::add(Expr::add(image_call(table, vec![x.clone()]).unwrap(), p.expr()), im_call);
        f.define(vec![x], vec![value]).unwrap();
        f
    }

    fn key_of(f: &Func) -> Vec<u8> {
        write_key(&[f.function.clone()], &[]).unwrap().bytes
    }

    #[test]
    fn values_a_run_uses_are_not_in_the_key_but_ranges_and_layouts_are() {
        let p = Parameter::new(Type::int(32), false, 0, "p");
        let im = Parameter::new(Type::int(32), true, 1, "im");
        let table = Buffer::new(Type::int(32), &[8], Some("table".into())).unwrap();
        let f = pipeline(&p, &im, &table);
        let base = key_of(&f);
        // A Param's value and a Buffer's elements: the same code.
        p.set_scalar(ScalarInput::Int(7)).unwrap();
        table.set_i128(&[3], 99).unwrap();
        assert_eq!(key_of(&f), base);
        // A Param's range: other checks in the code.
        p.set_min_value(Some(Expr::i32(0))).unwrap();
        let ranged = key_of(&f);
        assert_ne!(ranged, base);
        // An ImageParam's constraint.
        im.constrain(0, |c| c.min = Some(Expr::i32(0)));
        let constrained = key_of(&f);
        assert_ne!(constrained, ranged);
        // A bound Buffer's layout (the same shape, transposed strides).
        let square = Buffer::new(Type::int(32), &[8, 8], Some("square".into())).unwrap();
        let (x, y) = (Expr::var_i32("x"), Expr::var_i32("y"));
        let g = Func::new(Some("g"));
        g.define(vec![x.clone(), y.clone()], vec![image_call(&square, vec![x, y]).unwrap()]).unwrap();
        let before = key_of(&g);
        square.transpose(0, 1).unwrap();
        assert_ne!(key_of(&g), before);
    }
}
