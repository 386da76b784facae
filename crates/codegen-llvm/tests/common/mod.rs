#![allow(dead_code)]
//! Helpers for building small lowered pipelines by hand and running them.

use ferrohalide_codegen_llvm::{compile_jit, ArgValue, JitModule, JitTarget, ScalarValue};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Stmt, Type};
use ferrohalide_core::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};
use ferrohalide_runtime::{halide_buffer_t, halide_dimension_t};

pub fn out_arg(name: &str, ty: Type, dims: usize) -> LoweredArgument {
    LoweredArgument {
        name: name.into(),
        kind: ArgumentKind::OutputBuffer,
        ty,
        dimensions: dims,
        estimates: Default::default(),
    }
}
pub fn in_arg(name: &str, ty: Type, dims: usize) -> LoweredArgument {
    LoweredArgument {
        name: name.into(),
        kind: ArgumentKind::InputBuffer,
        ty,
        dimensions: dims,
        estimates: Default::default(),
    }
}
pub fn scalar_arg(name: &str, ty: Type) -> LoweredArgument {
    LoweredArgument {
        name: name.into(),
        kind: ArgumentKind::InputScalar,
        ty,
        dimensions: 0,
        estimates: Default::default(),
    }
}

pub fn pipeline(name: &str, args: Vec<LoweredArgument>, body: Stmt) -> LoweredPipeline {
    LoweredPipeline {
        name: name.into(),
        args,
        body,
    }
}

pub fn jit(p: &LoweredPipeline) -> JitModule {
    compile_jit(p, &JitTarget::host()).unwrap_or_else(|e| panic!("compile failed: {e}"))
}

/// Keeps the halide_buffer_t structs (and their dim arrays) alive for a call.
pub struct RawBufs {
    dims: Vec<Box<Vec<halide_dimension_t>>>,
    raws: Vec<Box<halide_buffer_t>>,
}

pub enum A<'a> {
    B(&'a Buffer),
    S(ScalarValue),
}

pub fn run(m: &JitModule, args: &[A]) -> ferrohalide_core::Result<()> {
    let mut keep = RawBufs {
        dims: vec![],
        raws: vec![],
    };
    let mut vals = vec![];
    for a in args {
        match a {
            A::B(b) => {
                let mut d = Box::new(Vec::new());
                let raw = Box::new(b.raw(&mut d));
                keep.dims.push(d);
                keep.raws.push(raw);
                let p: *mut halide_buffer_t = &mut **keep.raws.last_mut().unwrap();
                vals.push(ArgValue::Buffer(p));
            }
            A::S(s) => vals.push(ArgValue::Scalar(*s)),
        }
    }
    m.run(&vals)
}

pub fn v(name: &str) -> Expr {
    Expr::var_i32(name)
}
pub fn i(x: i64) -> Expr {
    Expr::i32(x)
}

/// `for x in out.min.0 .. + out.extent.0: out[x - out.min.0] = value(x)`
pub fn loop_1d(out: &str, x: &str, ty: Type, for_type: ForType, value: Expr) -> Stmt {
    let idx = Expr::sub(v(x), v(&format!("{out}.min.0")));
    let _ = ty;
    Stmt::for_loop(
        x,
        v(&format!("{out}.min.0")),
        v(&format!("{out}.extent.0")),
        for_type,
        Stmt::store(out, value, idx, Expr::bool_const(true)),
    )
}

/// `thread_index()`: a call that returns a small integer naming the calling
/// thread (0 for the first thread that asks, then 1, 2, ...), to see which
/// threads ran a parallel loop's iterations.
pub fn thread_index() -> Expr {
    extern "C" fn test_thread_index() -> i32 {
        use std::sync::atomic::{AtomicI32, Ordering};
        static NEXT: AtomicI32 = AtomicI32::new(0);
        thread_local! {
            static INDEX: i32 = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        INDEX.with(|i| *i)
    }
    ferrohalide_codegen_llvm::runtime_symbols::register_symbol(
        "test_thread_index",
        test_thread_index as *const () as usize,
    );
    Expr::call(
        Type::i32(),
        "test_thread_index",
        vec![],
        ferrohalide_core::ir::CallKind::Extern,
    )
}

/// Threads the JIT's parallel loops use.
pub fn num_threads() -> usize {
    ferrohalide_codegen_llvm::jit_runtime::num_threads().unwrap()
}
