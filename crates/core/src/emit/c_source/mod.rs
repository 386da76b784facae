//! The C backend (Halide's `compile_to_c`, output `c_source`): a module's
//! lowered functions as C++ source with Halide's C ABI (`NAME(args...)`
//! and `NAME_argv(void **)`), to be compiled by a C++ compiler and linked
//! with a Halide runtime.
//!
//! Assumes: fully lowered functions (storage flattened, vectorized). Vector
//! values are computed one lane at a time: a vector expression is printed
//! for a lane index (`expr.rs`), a vector store writes its lanes in a loop
//! after computing them all, and a vector let becomes an array. Parallel
//! loops run on the runtime's thread pool (`halide_do_par_for`, the body a
//! C++ lambda), heap allocations are freed on every return. What is not
//! supported yet (float16 types, tracing, `atomic()`, devices) is an error
//! naming it, at compile time.

mod expr;
mod prelude;
mod stmt;

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

use crate::error::{Error, Result};
use crate::ir::{Type, TypeCode};
use crate::lower::{ArgumentKind, LoweredPipeline};
use crate::module::{Linkage, Module};

/// The module as C++ source.
pub fn c_source(m: &Module) -> Result<String> {
    let max_buffer_size = m.target.maximum_buffer_size() as u64;
    let mut g = CodeGenC {
        out: String::new(),
        indent: 0,
        externs: BTreeMap::new(),
        arrays: HashSet::new(),
        declared: vec![HashSet::new()],
        hoisted: vec![],
        let_names: vec![],
        next_id: 0,
        max_buffer_size,
        atomic_depth: 0,
    };
    let mut buffers = String::new();
    for (name, b) in &m.buffers {
        buffers.push_str(&embedded_buffer(name, b)?);
    }
    for f in &m.functions {
        g.function(&f.pipeline, f.linkage, m)?;
        if f.linkage == Linkage::ExternalPlusMetadata {
            g.metadata(&f.pipeline, &m.target.to_string(), &m.metadata_name_map)?;
        }
    }
    let mut text = String::from(prelude::PRELUDE);
    text.push_str("\nextern \"C\" {\n");
    for decl in g.externs.values() {
        text.push_str(decl);
        text.push('\n');
    }
    text.push_str("}\n\n");
    text.push_str(&buffers);
    text.push_str(&g.out);
    Ok(text)
}

/// Runtime functions the prelude declares with their real prototypes.
const DECLARED_IN_PRELUDE: &[&str] = &[
    "halide_malloc",
    "halide_free",
    "halide_error",
    "halide_print",
    "halide_do_par_for",
    "ferrohalide_do_fork",
    "halide_string_to_string",
    "halide_int64_to_string",
    "halide_uint64_to_string",
    "halide_double_to_string",
    "halide_pointer_to_string",
    "halide_error_buffer_argument_is_null",
    "halide_error_bad_dimensions",
];

pub(super) struct CodeGenC {
    out: String,
    indent: usize,
    /// `extern "C"` declarations of the functions the code calls, by name.
    externs: BTreeMap<String, String>,
    /// Vector lets held as arrays, indexed by lane.
    arrays: HashSet<String>,
    /// Names declared in each open C block.
    declared: Vec<HashSet<String>>,
    /// Declarations an expression needs before the statement printing it
    /// (`make_struct`).
    hoisted: Vec<String>,
    /// Let variables of the expression being printed (a hoisted
    /// declaration may not use them).
    let_names: Vec<String>,
    next_id: usize,
    max_buffer_size: u64,
    /// Inside an `Atomic` without a mutex: stores are atomic.
    atomic_depth: usize,
}

/// A C identifier for an IR name: every character outside `[A-Za-z0-9]`
/// escaped, so different names stay different (`f.s0.x` is `_f_ds0_dx`).
pub(super) fn cname(name: &str) -> String {
    let mut s = String::from("_");
    for ch in name.chars() {
        match ch {
            'a'..='z' | 'A'..='Z' | '0'..='9' => s.push(ch),
            '_' => s.push_str("__"),
            '.' => s.push_str("_d"),
            '$' => s.push_str("_s"),
            c => {
                let _ = write!(s, "_x{:x}_", c as u32);
            }
        }
    }
    s
}

/// The C type of one element of `t` (half floats are not supported yet).
pub(super) fn ctype(t: Type) -> Result<&'static str> {
    if t.is_handle() {
        return Ok("void *");
    }
    let c = super::c_scalar_type(t);
    if c == "void *" || (t.bits == 16 && matches!(t.code, TypeCode::Float | TypeCode::BFloat)) {
        return Err(Error::unimplemented(&format!(
            "the C backend for values of type {}",
            crate::lang::print::ir_type_name(t)
        )));
    }
    Ok(c)
}

pub(super) fn unsupported(what: &str) -> Error {
    Error::unimplemented(&format!("{what} in the C backend (compile_to_c)"))
}

impl CodeGenC {
    pub(super) fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("fh_{prefix}{}", self.next_id)
    }

    pub(super) fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Print the declarations hoisted while printing an expression.
    pub(super) fn flush_hoisted(&mut self) {
        for d in std::mem::take(&mut self.hoisted) {
            self.line(&d);
        }
    }

    pub(super) fn open(&mut self, text: &str) {
        self.line(text);
        self.indent += 1;
        self.declared.push(HashSet::new());
    }

    pub(super) fn close(&mut self, text: &str) {
        self.indent -= 1;
        self.declared.pop();
        self.line(text);
    }

    /// Declare `name` in the current block; false if it already is there
    /// (the caller opens a block first).
    pub(super) fn declare(&mut self, name: &str) -> bool {
        self.declared.last_mut().expect("a block is open").insert(name.to_string())
    }

    /// Record a call of the extern function `name` with these argument
    /// types (a string literal's type is `None`) and result.
    pub(super) fn declare_extern(&mut self, name: &str, ret: Type, args: &[Option<Type>]) -> Result<()> {
        if DECLARED_IN_PRELUDE.contains(&name) || self.externs.contains_key(name) {
            return Ok(());
        }
        let params = args
            .iter()
            .map(|a| match a {
                None => Ok("const char *"),
                Some(t) => ctype(*t),
            })
            .collect::<Result<Vec<_>>>()?;
        let ret = if ret.is_handle() { "void *" } else { ctype(ret)? };
        self.externs.insert(name.to_string(), format!("{ret} {name}({});", params.join(", ")));
        Ok(())
    }

    /// `NAME(args...)` and `NAME_argv(void **args)`.
    fn function(&mut self, p: &LoweredPipeline, linkage: Linkage, m: &Module) -> Result<()> {
        let uc_name = crate::lower::entry_checks::USER_CONTEXT;
        let has_uc = p.args.first().is_some_and(|a| a.name == uc_name && a.ty.is_handle());
        let mut params = vec![];
        for a in &p.args {
            let t = match a.kind {
                ArgumentKind::InputScalar => {
                    if a.ty.is_float() && a.ty.bits == 16 {
                        return Err(unsupported("half-float scalar arguments"));
                    }
                    ctype(a.ty.element_of())?.to_string()
                }
                _ => "struct halide_buffer_t *".to_string(),
            };
            let n = if a.kind == ArgumentKind::InputScalar {
                cname(&a.name)
            } else {
                cname(&format!("{}.buffer", a.name))
            };
            params.push(format!("{t} {n}"));
        }
        let storage = if linkage == Linkage::Internal { "static " } else { "extern \"C\" " };
        self.declared = vec![HashSet::new()];
        self.open(&format!("{storage}int {}({}) {{", p.name, params.join(", ")));
        if !has_uc {
            self.line(&format!("void *{} = nullptr;", cname(uc_name)));
        }
        let uc = cname(uc_name);
        for a in &p.args {
            if a.kind == ArgumentKind::InputScalar {
                continue;
            }
            let b = cname(&format!("{}.buffer", a.name));
            self.line(&format!(
                "if (!{b}) return halide_error_buffer_argument_is_null({uc}, {});",
                expr::c_string(&a.name)
            ));
            let kind = if a.kind == ArgumentKind::OutputBuffer { "Output" } else { "Input" };
            self.line(&format!(
                "if ({b}->dimensions != {d}) return halide_error_bad_dimensions({uc}, {}, {b}->dimensions, {d});",
                expr::c_string(&format!("{kind} buffer {}", a.name)),
                d = a.dimensions
            ));
            self.buffer_symbols(&a.name, &b, a.dimensions);
        }
        for (name, buf) in &m.buffers {
            let b = cname(&format!("{name}.buffer"));
            self.line(&format!("struct halide_buffer_t *{b} = &{};", embedded_name(name)));
            self.buffer_symbols(name, &b, buf.dimensions());
        }
        self.stmt(&p.body)?;
        self.line("return 0;");
        self.close("}");
        self.line("");

        // NAME_argv: each argument through a pointer.
        self.open(&format!("{storage}int {}_argv(void **args) {{", p.name));
        let mut call_args = vec![];
        for (i, a) in p.args.iter().enumerate() {
            call_args.push(match a.kind {
                ArgumentKind::InputScalar => format!("*({} *)args[{i}]", ctype(a.ty.element_of())?),
                _ => format!("(struct halide_buffer_t *)args[{i}]"),
            });
        }
        self.line(&format!("return {}({});", p.name, call_args.join(", ")));
        self.close("}");
        self.line("");
        Ok(())
    }

    /// `name` (the host pointer) and `name.min.d`, `.extent.d`, `.stride.d`
    /// of the `halide_buffer_t *` held in `buffer`.
    fn buffer_symbols(&mut self, name: &str, buffer: &str, dims: usize) {
        self.line(&format!("void *{} = (void *){buffer}->host;", cname(name)));
        for d in 0..dims {
            for field in ["min", "extent", "stride"] {
                self.line(&format!(
                    "int32_t {} = {buffer}->dim[{d}].{field};",
                    cname(&format!("{name}.{field}.{d}"))
                ));
            }
        }
    }
}

/// `halide_filter_metadata_t::version`.
const METADATA_VERSION: i32 = 1;

impl CodeGenC {
    /// `NAME_metadata()`: Halide's description of the arguments.
    fn metadata(
        &mut self,
        p: &LoweredPipeline,
        target: &str,
        names: &BTreeMap<String, String>,
    ) -> Result<()> {
        let n = &p.name;
        let mut entries = vec![];
        for (i, a) in p.args.iter().enumerate() {
            let shown = names.get(&a.name).map_or(a.name.as_str(), String::as_str);
            let kind = match a.kind {
                ArgumentKind::InputScalar => 0,
                ArgumentKind::InputBuffer => 1,
                ArgumentKind::OutputBuffer => 2,
            };
            let prefix = format!("fh_{n}_argument_{i}");
            let e = &a.estimates;
            let mut scalar = |what: &str, v: &Option<crate::ir::Expr>| -> String {
                match v.as_ref().and_then(|v| super::scalar_value_bits(a.ty, v)) {
                    Some(bits) => {
                        self.line(&format!("static const uint64_t {prefix}_{what} = {bits}ULL;"));
                        format!("(const void *)&{prefix}_{what}")
                    }
                    None => "nullptr".into(),
                }
            };
            let (def, min, max, est) = if a.kind == ArgumentKind::InputScalar {
                (
                    scalar("def", &e.scalar_def),
                    scalar("min", &e.scalar_min),
                    scalar("max", &e.scalar_max),
                    scalar("estimate", &e.scalar_estimate),
                )
            } else {
                ("nullptr".into(), "nullptr".into(), "nullptr".into(), "nullptr".into())
            };
            let estimates = if a.kind == ArgumentKind::InputScalar {
                "nullptr".to_string()
            } else {
                let mut items = vec![];
                for d in 0..a.dimensions {
                    let (mn, ex) = e.buffer_estimates.get(d).cloned().unwrap_or((None, None));
                    for (what, v) in [("min", mn), ("extent", ex)] {
                        items.push(match v.and_then(|v| v.as_int_const()) {
                            Some(c) => {
                                self.line(&format!("static const int64_t {prefix}_{what}_{d} = {c}LL;"));
                                format!("&{prefix}_{what}_{d}")
                            }
                            None => "nullptr".into(),
                        });
                    }
                }
                items.push("nullptr".into());
                self.line(&format!("static const int64_t *const {prefix}_estimates[] = {{{}}};", items.join(", ")));
                format!("{prefix}_estimates")
            };
            entries.push(format!(
                "{{{}, {kind}, {}, {{{}, {}, {}}}, {def}, {min}, {max}, {est}, {estimates}}}",
                expr::c_string(shown),
                a.dimensions,
                a.ty.code as u8,
                a.ty.bits,
                a.ty.lanes
            ));
        }
        self.line(&format!(
            "static const struct fh_filter_argument_t fh_{n}_arguments[] = {{{}}};",
            if entries.is_empty() { "{}".to_string() } else { entries.join(", ") }
        ));
        self.line(&format!(
            "static const struct fh_filter_metadata_t fh_{n}_metadata = {{{METADATA_VERSION}, {}, fh_{n}_arguments, {}, {}}};",
            entries.len(),
            expr::c_string(target),
            expr::c_string(n)
        ));
        self.line(&format!(
            "extern \"C\" const void *{n}_metadata() {{ return &fh_{n}_metadata; }}"
        ));
        self.line("");
        Ok(())
    }
}

fn embedded_name(name: &str) -> String {
    format!("fh_embedded{}", cname(name))
}

/// A Buffer the code reads, as static data with its `halide_buffer_t`.
fn embedded_buffer(name: &str, b: &crate::buffer::Buffer) -> Result<String> {
    let base = embedded_name(name);
    let dims = b.dims();
    let mut s = String::new();
    // The elements in memory order, from the lowest address any reaches.
    let t = b.ty();
    let elem = (t.bits as usize).div_ceil(8).max(1);
    let (mut lo, mut hi) = (0i64, 0i64);
    for d in &dims {
        if d.extent > 0 {
            let span = (d.extent as i64 - 1) * d.stride as i64;
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
    }
    let bytes = ((hi - lo + 1) as usize) * elem;
    let data = unsafe { std::slice::from_raw_parts(b.host_ptr().offset((lo * elem as i64) as isize), bytes) };
    let _ = write!(s, "alignas(128) static uint8_t {base}_data[{}] = {{", bytes.max(1));
    for (i, byte) in data.iter().enumerate() {
        if i % 24 == 0 {
            s.push_str("\n    ");
        }
        let _ = write!(s, "{byte},");
    }
    s.push_str("\n};\n");
    let _ = write!(s, "static struct halide_dimension_t {base}_dim[{}] = {{", dims.len().max(1));
    for d in &dims {
        let _ = write!(s, "{{{}, {}, {}, 0}}, ", d.min, d.extent, d.stride);
    }
    s.push_str("};\n");
    let _ = writeln!(
        s,
        "static struct halide_buffer_t {base} = {{0, nullptr, {base}_data + {}, 0, {{{}, {}, 1}}, {}, {base}_dim, nullptr}};\n",
        -lo * elem as i64,
        t.code as u8,
        t.bits,
        dims.len()
    );
    Ok(s)
}
