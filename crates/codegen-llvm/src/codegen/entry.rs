//! The pipeline's entry points.
//!
//! For a pipeline `name` with arguments `a0, a1, ...` we define:
//! - `i32 name(a0, a1, ...)`: Halide's C ABI; buffers are
//!   `halide_buffer_t*`, scalars are passed by value (bool as i1). A first
//!   argument `__user_context` (a handle: Halide's `user_context` target
//!   feature) is the user context of the call; without one it is null;
//! - `i32 name_argv(void** args)`: `args[i]` points at the
//!   `halide_buffer_t` of a buffer argument or at a scalar's storage (bool
//!   as one byte);
//! - `i32 name_argv_uc(void* user_context, void** args)`: the same with a
//!   user context, which is what the JIT calls (a JIT module has only
//!   this one; the two above are for ahead-of-time code);
//! - the body itself, `name.body(user_context, a0, a1, ...)` (internal).
//!
//! At the start of the body every buffer argument `b` is checked (not
//! null, the declared number of dimensions: Halide's error codes), then
//! defines `b.buffer`, `b` (its host pointer) and `b.min.d`, `b.extent.d`,
//! `b.stride.d`; so does every buffer the module embeds (`embedded`).
//! `__user_context` names the call's user context.

use ferrohalide_core::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};
use ferrohalide_core::Result;
use ferrohalide_runtime::buffer_t::DIM_SIZE;

use super::ops::IP;
use super::{CodeGen, FnState, Ty, Val};

/// The name of the user-context argument (Halide's).
pub const USER_CONTEXT_ARG: &str = ferrohalide_core::lower::entry_checks::USER_CONTEXT;

/// Is `a` the user-context argument?
pub fn is_user_context(a: &LoweredArgument) -> bool {
    a.name == USER_CONTEXT_ARG && a.kind == ArgumentKind::InputScalar && a.ty.is_handle()
}

/// What entry points `compile_pipeline` makes besides `name` and `name_argv`.
#[derive(Default)]
pub struct EntryOptions {
    /// `name_argv_uc`, which the JIT calls.
    pub jit_entry: bool,
    /// Buffers the module holds (not arguments): name, the address of
    /// their `halide_buffer_t`, their dimensions.
    pub embedded: Vec<(String, Val, usize)>,
    /// A Hexagon offload kernel (`Linkage::HexagonKernel`): buffer
    /// arguments are `{uint64 device, host*}` pseudo-buffers (only `b` and
    /// `b.buffer` are defined), and `name_argv` holds the HVX unit while
    /// the body runs, as QuRT requires of code using HVX.
    pub hexagon_kernel: bool,
    /// Compile the body cold: every serial loop in it becomes a function
    /// of its own (optimized as usual), and what is left, straight-line
    /// code that runs once per call (argument checks, allocations, calls
    /// of the loops), is `optnone`. LLVM's optimizer skips it and its code
    /// generator selects instructions the fast way: small pipelines' JIT
    /// compiles 7-12% faster (their bodies are half their code), for ~150
    /// more instructions per call. The JIT's choice, where every process
    /// pays the compile; ahead-of-time code keeps an optimized body.
    pub cold_body: bool,
}

/// QuRT's `QURT_HVX_MODE_128B`: lock HVX in 128-byte vector mode.
const QURT_HVX_MODE_128B: i64 = 1;
/// Offset of `host` in the offload's `{uint64 device, host*}` pseudo-buffer.
const PSEUDO_BUFFER_HOST: u64 = 8;

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
    pub(crate) fn compile_pipeline(&mut self, p: &LoweredPipeline, opts: &EntryOptions) -> Result<()> {
        let arg_tys = self.arg_types(p);
        let has_uc_arg = p.args.first().is_some_and(is_user_context);
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
        let (size, weight) = super::parallel::size_and_code_weight(&p.body);
        self.f = FnState::new(body_fn, entry, self.param(body_fn, 0), size);
        self.pipeline_weight = weight;
        self.f.is_pipeline_body = true;
        self.f.outline_serial_loops = opts.cold_body;
        self.position(entry);
        let uc = self.f.user_context;
        self.push_sym(USER_CONTEXT_ARG, uc);
        for (i, a) in p.args.iter().enumerate() {
            let v = self.param(body_fn, i as u32 + 1);
            match a.kind {
                ArgumentKind::InputScalar => self.push_sym(&a.name, v),
                ArgumentKind::InputBuffer | ArgumentKind::OutputBuffer if opts.hexagon_kernel => {
                    self.push_sym(&format!("{}.buffer", a.name), v);
                    let hp = self.gep_bytes(v, PSEUDO_BUFFER_HOST);
                    let host = self.load(ptr, hp, self.ptr_bytes);
                    self.push_sym(&a.name, host);
                }
                ArgumentKind::InputBuffer | ArgumentKind::OutputBuffer => {
                    self.check_buffer_argument(a, v);
                    self.define_buffer_symbols(&a.name, v, a.dimensions);
                }
            }
        }
        for (name, v, dims) in &opts.embedded {
            self.define_buffer_symbols(name, *v, *dims);
        }
        let body_bb = self.new_block("body");
        self.br(body_bb);
        self.position(body_bb);
        self.codegen_stmt(&p.body)?;
        self.ret(self.i32c(0));
        if opts.cold_body {
            self.add_enum_attribute(body_fn, c"noinline");
            self.add_enum_attribute(body_fn, c"optnone");
        }

        // The JIT calls only `name_argv_uc`, and every function costs its
        // compile time, called or not.
        if opts.jit_entry {
            self.argv_entry_point(p, opts, (body_fn, body_ft), has_uc_arg, true);
        } else {
            self.c_abi_entry_points(p, opts, (body_fn, body_ft), &arg_tys, has_uc_arg);
        }
        Ok(())
    }

    /// `name(args...)` and `name_argv(void**)`, Halide's C ABI.
    fn c_abi_entry_points(
        &mut self,
        p: &LoweredPipeline,
        opts: &EntryOptions,
        body: (Val, Ty),
        arg_tys: &[Ty],
        has_uc_arg: bool,
    ) {
        let (body_fn, body_ft) = body;
        // name(args...). A half-float scalar is passed as its bits (an
        // i16): C compilers disagree on how to pass a half float.
        let is_half = |a: &LoweredArgument| {
            a.kind == ArgumentKind::InputScalar && a.ty.is_float() && a.ty.bits == 16
        };
        let public_tys: Vec<Ty> = p
            .args
            .iter()
            .zip(arg_tys)
            .map(|(a, &t)| if is_half(a) { self.t_i16() } else { t })
            .collect();
        let ft = self.t_fn(self.t_i32(), &public_tys);
        let f = self.add_function(&p.name, ft, false);
        self.begin_wrapper(f);
        let mut args = vec![if has_uc_arg { self.param(f, 0) } else { self.null_ptr() }];
        for (i, a) in p.args.iter().enumerate() {
            let v = self.param(f, i as u32);
            args.push(if is_half(a) {
                self.cast(super::ops::Op::LLVMBitCast, v, arg_tys[i])
            } else {
                v
            });
        }
        let r = self.call(body_fn, body_ft, &args);
        self.ret(r);
        self.argv_entry_point(p, opts, body, has_uc_arg, false);
    }

    /// `name_argv(void**)`, or with `with_uc` `name_argv_uc(void*, void**)`:
    /// `argv[i]` points at argument i.
    fn argv_entry_point(&mut self, p: &LoweredPipeline, opts: &EntryOptions, body: (Val, Ty), has_uc_arg: bool, with_uc: bool) {
        let (body_fn, body_ft) = body;
        let ptr = self.t_ptr();
        let (fname, params) = if with_uc {
            (argv_uc_symbol(&p.name), vec![ptr, ptr])
        } else {
            (argv_symbol(&p.name), vec![ptr])
        };
        let ft = self.t_fn(self.t_i32(), &params);
        let f = self.add_function(&fname, ft, false);
        self.begin_wrapper(f);
        let (uc, argv) = if with_uc {
            (self.param(f, 0), self.param(f, 1))
        } else {
            (self.null_ptr(), self.param(f, 0))
        };
        let mut args = vec![uc];
        for (i, a) in p.args.iter().enumerate() {
            if i == 0 && has_uc_arg && !with_uc {
                // argv[0] points at the user context.
                let slot = self.gep(ptr, argv, self.i64c(0));
                let pv = self.load(ptr, slot, self.ptr_bytes);
                let ucv = self.load(ptr, pv, self.ptr_bytes);
                args[0] = ucv;
            }
            let slot = self.gep(ptr, argv, self.i64c(i as i64));
            let pv = self.load(ptr, slot, self.ptr_bytes);
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
        if opts.hexagon_kernel {
            self.call_holding_hvx(body_fn, body_ft, &args);
            return;
        }
        let r = self.call(body_fn, body_ft, &args);
        self.ret(r);
    }

    /// Return `body_fn(args)` called with the HVX unit locked (QuRT's
    /// `qurt_hvx_lock`), or -1 (`halide_error_code_generic_error`) if it
    /// cannot be locked.
    fn call_holding_hvx(&mut self, body_fn: Val, body_ft: Ty, args: &[Val]) {
        let i32t = self.t_i32();
        let locked = self.call_extern("qurt_hvx_lock", i32t, &[self.i32c(QURT_HVX_MODE_128B)]);
        let failed = self.icmp(IP::LLVMIntNE, locked, self.i32c(0));
        let fail = self.new_block("hvx_lock_failed");
        let ok = self.new_block("hvx_locked");
        self.cond_br(failed, fail, ok);
        self.position(fail);
        self.ret(self.i32c(-1));
        self.position(ok);
        let r = self.call(body_fn, body_ft, args);
        self.call_extern("qurt_hvx_unlock", i32t, &[]);
        self.ret(r);
    }

    /// Define `name.buffer`, `name` (the host pointer) and the shape
    /// variables of a `halide_buffer_t*` with `dimensions` dimensions.
    fn define_buffer_symbols(&mut self, name: &str, v: Val, dimensions: usize) {
        let ptr = self.t_ptr();
        let i32t = self.t_i32();
        self.push_sym(&format!("{name}.buffer"), v);
        let hp = self.gep_bytes(v, self.buffer_offsets.host);
        let host = self.load(ptr, hp, self.ptr_bytes);
        self.push_sym(name, host);
        if dimensions > 0 {
            let dp = self.gep_bytes(v, self.buffer_offsets.dim);
            let dims = self.load(ptr, dp, self.ptr_bytes);
            for d in 0..dimensions {
                for (k, field) in ["min", "extent", "stride"].iter().enumerate() {
                    let off = d as u64 * DIM_SIZE + 4 * k as u64;
                    let fp = self.gep_bytes(dims, off);
                    let fv = self.load(i32t, fp, 4);
                    self.push_sym(&format!("{name}.{field}.{d}"), fv);
                }
            }
        }
    }

    /// Return Halide's error from the body unless buffer argument `a`
    /// (the value `v`) is non-null and has its declared dimensionality:
    /// its shape is read right after.
    fn check_buffer_argument(&mut self, a: &LoweredArgument, v: Val) {
        let uc = self.f.user_context;
        let name = self.global_string(&a.name);
        let is_null = self.icmp(IP::LLVMIntEQ, v, self.null_ptr());
        let fail = self.new_block("buffer_is_null");
        let ok = self.new_block("buffer_not_null");
        self.cond_br(is_null, fail, ok);
        self.position(fail);
        let code = self.call_extern("halide_error_buffer_argument_is_null", self.t_i32(), &[uc, name]);
        self.ret(code);
        self.position(ok);
        let dp = self.gep_bytes(v, self.buffer_offsets.dimensions);
        let given = self.load(self.t_i32(), dp, 4);
        let wrong = self.icmp(IP::LLVMIntNE, given, self.i32c(a.dimensions as i64));
        let fail = self.new_block("bad_dimensions");
        let ok = self.new_block("dimensions_ok");
        self.cond_br(wrong, fail, ok);
        self.position(fail);
        let kind = if a.kind == ArgumentKind::OutputBuffer { "Output" } else { "Input" };
        let what = self.global_string(&format!("{kind} buffer {}", a.name));
        let want = self.i32c(a.dimensions as i64);
        let code = self.call_extern("halide_error_bad_dimensions", self.t_i32(), &[uc, what, given, want]);
        self.ret(code);
        self.position(ok);
    }

    fn begin_wrapper(&mut self, f: Val) {
        let entry = unsafe {
            inkwell::llvm_sys::core::LLVMAppendBasicBlockInContext(self.c, f, c"entry".as_ptr())
        };
        self.f = FnState::new(f, entry, self.null_ptr(), 0);
        self.position(entry);
    }
}
