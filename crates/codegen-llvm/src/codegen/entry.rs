//! The pipeline's entry points.
//!
//! For a pipeline `name` with arguments `a0, a1, ...` we define:
//! - `i32 name(a0, a1, ...)`: Halide's C ABI; buffers are
//!   `halide_buffer_t*`, scalars are passed by value (bool as i1);
//! - `i32 name_argv(void** args)`: `args[i]` points at the
//!   `halide_buffer_t` of a buffer argument or at a scalar's storage (bool
//!   as one byte);
//! - `i32 name_argv_uc(void* user_context, void** args)`: the same with a
//!   user context, which is what the JIT calls;
//! - the body itself, `name.body(user_context, a0, a1, ...)` (internal).
//!
//! At the start of the body every buffer argument `b` defines `b.buffer`,
//! `b` (its host pointer) and `b.min.d`, `b.extent.d`, `b.stride.d`.

use ferrohalide_core::lower::{ArgumentKind, LoweredPipeline};
use ferrohalide_core::Result;
use ferrohalide_runtime::buffer_t::offsets;

use super::{CodeGen, FnState, Ty, Val};

/// The symbol names of the entry points of a pipeline called `name`.
pub fn argv_symbol(name: &str) -> String {
    format!("{name}_argv")
}
pub fn argv_uc_symbol(name: &str) -> String {
    format!("{name}_argv_uc")
}

impl CodeGen {
    fn arg_types(&self, p: &LoweredPipeline) -> Vec<Ty> {
        p.args
            .iter()
            .map(|a| match a.kind {
                ArgumentKind::InputScalar => self.scalar_ty(a.ty.element_of()),
                _ => self.t_ptr(),
            })
            .collect()
    }

    /// Generate the body and all entry points.
    pub(crate) fn compile_pipeline(&mut self, p: &LoweredPipeline) -> Result<()> {
        let arg_tys = self.arg_types(p);
        let i32t = self.t_i32();
        let ptr = self.t_ptr();

        // The body.
        let mut body_params = vec![ptr];
        body_params.extend(arg_tys.iter().copied());
        let body_ft = self.t_fn(i32t, &body_params);
        let body_fn = self.add_function(&format!("{}.body", p.name), body_ft, true);
        let entry = unsafe {
            inkwell::llvm_sys::core::LLVMAppendBasicBlockInContext(
                self.c,
                body_fn,
                c"entry".as_ptr(),
            )
        };
        self.f = FnState {
            function: body_fn,
            entry_block: entry,
            user_context: self.param(body_fn, 0),
            symbols: Default::default(),
            heap_allocs: Vec::new(),
            message_buffer: None,
        };
        self.position(entry);
        for (i, a) in p.args.iter().enumerate() {
            let v = self.param(body_fn, i as u32 + 1);
            match a.kind {
                ArgumentKind::InputScalar => self.push_sym(&a.name, v),
                ArgumentKind::InputBuffer | ArgumentKind::OutputBuffer => {
                    self.push_sym(&format!("{}.buffer", a.name), v);
                    let hp = self.gep_bytes(v, offsets::HOST);
                    let host = self.load(ptr, hp, 8);
                    self.push_sym(&a.name, host);
                    if a.dimensions > 0 {
                        let dp = self.gep_bytes(v, offsets::DIM);
                        let dims = self.load(ptr, dp, 8);
                        for d in 0..a.dimensions {
                            for (k, field) in ["min", "extent", "stride"].iter().enumerate() {
                                let off = d as u64 * offsets::DIM_SIZE + 4 * k as u64;
                                let fp = self.gep_bytes(dims, off);
                                let fv = self.load(i32t, fp, 4);
                                self.push_sym(&format!("{}.{}.{}", a.name, field, d), fv);
                            }
                        }
                    }
                }
            }
        }
        let body_bb = self.new_block("body");
        self.br(body_bb);
        self.position(body_bb);
        self.codegen_stmt(&p.body)?;
        self.ret(self.i32c(0));

        // name(args...)
        let ft = self.t_fn(i32t, &arg_tys);
        let f = self.add_function(&p.name, ft, false);
        self.begin_wrapper(f);
        let mut args = vec![self.null_ptr()];
        for i in 0..arg_tys.len() {
            args.push(self.param(f, i as u32));
        }
        let r = self.call(body_fn, body_ft, &args);
        self.ret(r);

        // name_argv(void**) and name_argv_uc(void*, void**)
        for with_uc in [false, true] {
            let (fname, params) = if with_uc {
                (argv_uc_symbol(&p.name), vec![ptr, ptr])
            } else {
                (argv_symbol(&p.name), vec![ptr])
            };
            let ft = self.t_fn(i32t, &params);
            let f = self.add_function(&fname, ft, false);
            self.begin_wrapper(f);
            let (uc, argv) = if with_uc {
                (self.param(f, 0), self.param(f, 1))
            } else {
                (self.null_ptr(), self.param(f, 0))
            };
            let mut args = vec![uc];
            for (i, a) in p.args.iter().enumerate() {
                let slot = self.gep(ptr, argv, self.i64c(i as i64));
                let pv = self.load(ptr, slot, 8);
                let v = match a.kind {
                    ArgumentKind::InputScalar => {
                        let t = a.ty.element_of();
                        let mt = self.mem_scalar_ty(t);
                        let raw = self.load(mt, pv, 1);
                        self.from_mem(raw, t)
                    }
                    _ => pv,
                };
                args.push(v);
            }
            let r = self.call(body_fn, body_ft, &args);
            self.ret(r);
        }
        Ok(())
    }

    fn begin_wrapper(&mut self, f: Val) {
        let entry = unsafe {
            inkwell::llvm_sys::core::LLVMAppendBasicBlockInContext(self.c, f, c"entry".as_ptr())
        };
        self.f = FnState {
            function: f,
            entry_block: entry,
            user_context: self.null_ptr(),
            symbols: Default::default(),
            heap_allocs: Vec::new(),
            message_buffer: None,
        };
        self.position(entry);
    }
}
