//! A whole `Module`: its functions (`entry`), the buffers it carries and,
//! for each public function with metadata, Halide's `NAME_metadata()`
//! returning a constant `halide_filter_metadata_t` (the layout of
//! HalideRuntime.h, checked by the runtime crate's C layout test).

use std::ffi::c_char;

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ExprNode, Type, TypeCode};
use ferrohalide_core::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};
use ferrohalide_core::module::{Linkage, Module};
use ferrohalide_core::{Error, Result};
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::LLVMLinkage;

use super::entry::EntryOptions;
use super::{CodeGen, Ty, Val};

/// `halide_filter_metadata_t::version`.
const METADATA_VERSION: i64 = 1;

impl CodeGen {
    /// Generate every function of `m`. `jit`: also the JIT's entry point,
    /// and no metadata.
    pub(crate) fn compile_module(&mut self, m: &Module, jit: bool) -> Result<()> {
        let mut embedded = vec![];
        for (name, b) in &m.buffers {
            let writable = m.writable_buffers.contains(name);
            embedded.push((name.clone(), self.embed_buffer(name, b, writable)?, b.dimensions()));
        }
        let mut opts = EntryOptions {
            jit_entry: jit,
            embedded,
            hexagon_kernel: false,
            cold_body: jit,
        };
        for f in &m.functions {
            opts.hexagon_kernel = f.linkage == Linkage::HexagonKernel;
            self.compile_pipeline(&f.pipeline, &opts)?;
            if f.linkage == Linkage::Internal {
                for sym in [f.pipeline.name.clone(), super::entry::argv_symbol(&f.pipeline.name)] {
                    self.set_linkage(&sym, LLVMLinkage::LLVMInternalLinkage);
                }
            }
            if f.linkage == Linkage::ExternalPlusMetadata && !jit {
                self.compile_metadata(&f.pipeline, &m.target.to_string(), &m.metadata_name_map)?;
            }
        }
        Ok(())
    }

    fn set_linkage(&self, symbol: &str, linkage: LLVMLinkage) {
        let n = std::ffi::CString::new(symbol).unwrap_or_default();
        unsafe {
            let f = LLVMGetNamedFunction(self.m, n.as_ptr());
            if !f.is_null() {
                LLVMSetLinkage(f, linkage);
            }
        }
    }

    /// A private constant global initialized to `init`; returns its address.
    fn constant_global(&self, name: &str, init: Val) -> Val {
        let n = std::ffi::CString::new(name).unwrap_or_default();
        unsafe {
            let g = LLVMAddGlobal(self.m, LLVMTypeOf(init), n.as_ptr());
            LLVMSetInitializer(g, init);
            LLVMSetGlobalConstant(g, 1);
            LLVMSetLinkage(g, LLVMLinkage::LLVMPrivateLinkage);
            g
        }
    }

    fn const_struct(&self, fields: &mut [Val]) -> Val {
        unsafe { LLVMConstStructInContext(self.c, fields.as_mut_ptr(), fields.len() as u32, 0) }
    }

    fn const_array(&self, elem: Ty, items: &mut [Val]) -> Val {
        unsafe { LLVMConstArray2(elem, items.as_mut_ptr(), items.len() as u64) }
    }

    fn const_int(&self, t: Ty, v: u64) -> Val {
        unsafe { LLVMConstInt(t, v, 0) }
    }

    /// `halide_type_t {code, bits, lanes}` as a constant.
    fn const_halide_type(&self, t: Type) -> Val {
        let mut f = [
            self.const_int(self.t_i8(), t.code as u64),
            self.const_int(self.t_i8(), t.bits as u64),
            self.const_int(self.t_i16(), t.lanes as u64),
        ];
        self.const_struct(&mut f)
    }

    /// The contents and shape of `b` as constants (its contents `writable`
    /// if the code stores into them), and a `halide_buffer_t` describing
    /// them (dense, with `b`'s mins); returns its address.
    fn embed_buffer(&mut self, name: &str, b: &Buffer, writable: bool) -> Result<Val> {
        let ty = b.ty();
        let elem = ty.bytes().max(1);
        let dims = b.dims();
        let count: usize = dims.iter().map(|d| d.extent.max(0) as usize).product();
        let mut bytes = vec![0u8; count * elem];
        b.for_each_element_ptr(|coords, ptr| {
            let mut index = 0usize;
            let mut stride = 1usize;
            for (c, d) in coords.iter().zip(&dims) {
                index += (c - d.min) as usize * stride;
                stride *= d.extent as usize;
            }
            // SAFETY: ptr points at one element of `elem` bytes of b.
            let src = unsafe { std::slice::from_raw_parts(ptr, elem) };
            bytes[index * elem..(index + 1) * elem].copy_from_slice(src);
        });
        let data = unsafe {
            LLVMConstStringInContext2(self.c, bytes.as_ptr() as *const c_char, bytes.len(), 1)
        };
        let data = self.constant_global(&format!("{name}.data"), data);
        unsafe {
            LLVMSetAlignment(data, 64);
            LLVMSetGlobalConstant(data, i32::from(!writable));
        }
        let i32t = self.t_i32();
        let dim_ty = unsafe {
            let mut f = [i32t, i32t, i32t, i32t];
            LLVMStructTypeInContext(self.c, f.as_mut_ptr(), 4, 0)
        };
        let mut stride = 1i64;
        let mut dim_vals = vec![];
        for d in &dims {
            let mut f = [
                self.const_int(i32t, d.min as i64 as u64),
                self.const_int(i32t, d.extent as i64 as u64),
                self.const_int(i32t, stride as u64),
                self.const_int(i32t, 0),
            ];
            dim_vals.push(self.const_struct(&mut f));
            stride *= d.extent as i64;
        }
        let dim_ptr = if dim_vals.is_empty() {
            self.null_ptr()
        } else {
            let arr = self.const_array(dim_ty, &mut dim_vals);
            self.constant_global(&format!("{name}.dims"), arr)
        };
        let mut fields = [
            self.const_int(self.t_i64(), 0),
            self.null_ptr(),
            data,
            self.const_int(self.t_i64(), 0),
            self.const_halide_type(ty),
            self.const_int(i32t, dims.len() as u64),
            dim_ptr,
            self.null_ptr(),
        ];
        let init = self.const_struct(&mut fields);
        // The buffer struct itself is never written (the entry code only
        // checks arguments), but it is not `const` in C.
        let g = self.constant_global(&format!("{name}.buffer"), init);
        Ok(g)
    }

    /// A constant scalar of type `t` as a `halide_scalar_value_t` (8 bytes)
    /// global; null when there is none or it is not a constant.
    fn scalar_value(&self, name: &str, t: Type, e: &Option<Expr>) -> Result<Val> {
        let Some(e) = e else { return Ok(self.null_ptr()) };
        let bytes = match (e.node(), t.code) {
            (ExprNode::FloatImm(v), TypeCode::Float) if t.bits == 16 => {
                ferrohalide_runtime::half::f32_to_f16_bits(*v as f32) as u64
            }
            _ => match ferrohalide_core::emit::scalar_value_bits(t, e) {
                Some(b) => b,
                None => return Ok(self.null_ptr()),
            },
        };
        let init = self.const_int(self.t_i64(), bytes);
        Ok(self.constant_global(name, init))
    }

    fn compile_metadata(
        &mut self,
        p: &LoweredPipeline,
        target: &str,
        names: &std::collections::BTreeMap<String, String>,
    ) -> Result<()> {
        let ptr = self.t_ptr();
        let i32t = self.t_i32();
        let mut args = vec![];
        for (i, a) in p.args.iter().enumerate() {
            let shown = names.get(&a.name).map_or(a.name.as_str(), String::as_str);
            args.push(self.argument_metadata(&p.name, i, a, shown)?);
        }
        let arg_ty = unsafe {
            let ty_t = {
                let mut f = [self.t_i8(), self.t_i8(), self.t_i16()];
                LLVMStructTypeInContext(self.c, f.as_mut_ptr(), 3, 0)
            };
            let mut f = [ptr, i32t, i32t, ty_t, ptr, ptr, ptr, ptr, ptr];
            LLVMStructTypeInContext(self.c, f.as_mut_ptr(), f.len() as u32, 0)
        };
        let n_args = args.len();
        let arr = self.const_array(arg_ty, &mut args);
        let arr = self.constant_global(&format!("{}_metadata_arguments", p.name), arr);
        let target = self.global_string(target);
        let name = self.global_string(&p.name);
        let mut fields = [
            self.const_int(i32t, METADATA_VERSION as u64),
            self.const_int(i32t, n_args as u64),
            arr,
            target,
            name,
        ];
        let md = self.const_struct(&mut fields);
        let md = self.constant_global(&format!("{}_metadata_struct", p.name), md);
        let ft = self.t_fn(ptr, &[]);
        let f = self.add_function(&format!("{}_metadata", p.name), ft, false);
        let bb = self.new_block_in(f, "entry");
        self.position(bb);
        self.ret(md);
        Ok(())
    }

    fn argument_metadata(&mut self, fname: &str, i: usize, a: &LoweredArgument, shown: &str) -> Result<Val> {
        let ptr = self.t_ptr();
        let i32t = self.t_i32();
        let kind = match a.kind {
            ArgumentKind::InputScalar => 0,
            ArgumentKind::InputBuffer => 1,
            ArgumentKind::OutputBuffer => 2,
        };
        let e = &a.estimates;
        let prefix = format!("{fname}_argument_{i}");
        let (def, min, max, est) = if a.kind == ArgumentKind::InputScalar {
            (
                self.scalar_value(&format!("{prefix}_def"), a.ty, &e.scalar_def)?,
                self.scalar_value(&format!("{prefix}_min"), a.ty, &e.scalar_min)?,
                self.scalar_value(&format!("{prefix}_max"), a.ty, &e.scalar_max)?,
                self.scalar_value(&format!("{prefix}_estimate"), a.ty, &e.scalar_estimate)?,
            )
        } else {
            let n = self.null_ptr();
            (n, n, n, n)
        };
        let buffer_estimates = if a.kind == ArgumentKind::InputScalar {
            self.null_ptr()
        } else {
            let mut items = vec![];
            for d in 0..a.dimensions {
                let (mn, ex) = e.buffer_estimates.get(d).cloned().unwrap_or((None, None));
                for (what, v) in [("min", mn), ("extent", ex)] {
                    items.push(match v.and_then(|v| v.as_int_const()) {
                        Some(c) => {
                            let init = self.const_int(self.t_i64(), c as u64);
                            self.constant_global(&format!("{prefix}_{what}_{d}"), init)
                        }
                        None => self.null_ptr(),
                    });
                }
            }
            if items.is_empty() {
                // A 0-dimensional buffer: an empty (non-null) list.
                let init = self.const_array(ptr, &mut []);
                self.constant_global(&format!("{prefix}_estimates"), init)
            } else {
                let arr = self.const_array(ptr, &mut items);
                self.constant_global(&format!("{prefix}_estimates"), arr)
            }
        };
        let name = self.global_string(shown);
        let mut fields = [
            name,
            self.const_int(i32t, kind),
            self.const_int(i32t, a.dimensions as u64),
            self.const_halide_type(a.ty),
            def,
            min,
            max,
            est,
            buffer_estimates,
        ];
        Ok(self.const_struct(&mut fields))
    }

    fn new_block_in(&self, f: Val, name: &str) -> inkwell::llvm_sys::prelude::LLVMBasicBlockRef {
        let n = std::ffi::CString::new(name).unwrap_or_default();
        unsafe { LLVMAppendBasicBlockInContext(self.c, f, n.as_ptr()) }
    }
}

/// Module functions must have distinct, C-declarable names.
pub(crate) fn check_module(m: &Module) -> Result<()> {
    for (i, f) in m.functions.iter().enumerate() {
        if m.functions[..i].iter().any(|g| g.pipeline.name == f.pipeline.name) {
            return Err(Error::user(format!(
                "Module {} has two functions named {}\n",
                m.name, f.pipeline.name
            )));
        }
    }
    Ok(())
}
