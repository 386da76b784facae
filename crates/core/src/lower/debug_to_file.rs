//! `Func.debug_to_file(file)` (Halide's DebugToFile.cpp): once a Func's
//! realization is no longer used, the runtime's `halide_debug_to_file`
//! writes it to the file; a failure is Halide's "Failed to dump function
//! ..." error.
//!
//! Assumes: called by storage flattening for each flattened allocation
//! (where its min, extent and stride variables are defined) and, for the
//! outputs, on the finished body (their `f.buffer` arguments). Guarantees:
//! values are unchanged; a Tuple-valued Func is an error, as in Halide.

use crate::error::{Error, Result};
use crate::ir::{CallKind, Expr, Stmt, Type};
use crate::lang::function::Function;

use super::entry_checks::{reporter, USER_CONTEXT};
use super::extern_stages::buffer_struct;

/// The file `f` is dumped to, if any (an error for a Tuple).
pub fn debug_file(f: &Function) -> Result<Option<String>> {
    let c = f.read();
    let Some(file) = c.schedule.debug_file.clone() else { return Ok(None) };
    if c.output_types.len() > 1 {
        return Err(Error::user(
            "debug_to_file doesn't handle functions with multiple values yet\n",
        ));
    }
    Ok(Some(file))
}

/// Write `buffer` (a `halide_buffer_t*`) of Func `func` to `file`.
fn dump(func: &str, file: &str, buffer: Expr) -> Stmt {
    let result = format!("{func}.debug_to_file_result");
    let r = Expr::var_i32(&result);
    let call = Expr::call(
        Type::i32(),
        "halide_debug_to_file",
        vec![Expr::var(Type::handle(), USER_CONTEXT), Expr::string(file), buffer],
        CallKind::Extern,
    );
    let failed = reporter(
        "halide_error_debug_to_file_failed",
        vec![Expr::string(func), Expr::string(file), r.clone()],
    );
    Stmt::let_stmt(result, call, Stmt::assert(Expr::eq(r, Expr::i32(0)), failed))
}

/// The dump of the allocation `buffer` (its `buffer.min.d`, `.extent.d`
/// and `.stride.d` defined around it) of Func `func`, with `dims`
/// dimensions of type `ty`.
pub fn dump_allocation(func: &str, file: &str, buffer: &str, ty: Type, dims: usize) -> Stmt {
    let shape: Vec<(Expr, Expr, Expr)> = (0..dims)
        .map(|d| {
            let v = |f: &str| Expr::var_i32(format!("{buffer}.{f}.{d}"));
            (v("min"), v("extent"), v("stride"))
        })
        .collect();
    let host = Expr::var(Type::handle(), buffer.to_string());
    dump(func, file, buffer_struct(host, ty, &shape))
}

/// `body` followed by the dumps of the outputs that ask for one.
pub fn dump_outputs(body: Stmt, outputs: &[Function]) -> Result<Stmt> {
    let mut out = vec![body];
    for o in outputs {
        if let Some(file) = debug_file(o)? {
            let name = o.name();
            out.push(dump(&name, &file, Expr::var(Type::handle(), format!("{name}.buffer"))));
        }
    }
    Ok(if out.len() == 1 { out.pop().expect("one") } else { Stmt::block(out) })
}
