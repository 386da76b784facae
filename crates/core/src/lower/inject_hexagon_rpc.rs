//! The Hexagon offload (Halide's `inject_hexagon_rpc`): on an ARM target
//! with `hvx`, each `hexagon()` loop nest becomes a kernel of a separate
//! Hexagon module, which the host calls through Halide's offload runtime
//! interface (`halide_hexagon_initialize_kernels`, `halide_hexagon_run`).
//!
//! Assumes: the final lowered statement (storage flattened, vectorized,
//! simplified), in which `schedule_functions` wrapped each offloaded loop in
//! a one-iteration marker loop (`device_api::OFFLOAD_LOOP_PREFIX`, kept by
//! the simplifier); the buffers the nests touch are the pipeline's
//! arguments or embedded buffers (`buffers`), whose shape symbols
//! (`b.extent.d`, `b.stride.d`) the code generator defines.
//!
//! Guarantees: no marker loop remains. Each one becomes, on the host, the
//! call of kernel `offload_rpc.<loop>` (unique): its closure is the
//! buffers the nest reads or writes, passed as Halide's `{uint64 device,
//! host*}` pseudo-buffers with flags (bit 0 read, bit 1 written), and the
//! scalars it uses, the int32 ones packed into one `scalar_indices` buffer
//! as Halide does. Unlike Halide, whose host runtime moves buffers in ION
//! device memory, the size passed for a buffer is the number of bytes from
//! its host pointer the kernel may touch: ferrohalide's host runtime
//! (`runtime/c/hexagon_host.c`) copies them to and from shared memory
//! around the call. The statement starts by loading the kernels
//! (`halide_hexagon_initialize_kernels` on the embedded shared objects
//! `halide_hexagon_code` and `halide_shared_runtime`, which the
//! ahead-of-time compiler makes from the kernels and adds to the module).
//! The kernels (`Linkage::HexagonKernel`) take their buffers first (read
//! only, then written, each by name) and their scalars last, the order
//! Halide's device side passes them in.
//!
//! Refused with an error naming them: a nest reading or writing an
//! allocation made on the host (Halide would give it a device buffer), a
//! nest using a host pointer, empty buffers and buffers with negative
//! strides (both at run time).

use std::collections::{BTreeMap, HashMap};

use crate::device_api::{is_offload_loop, OFFLOAD_LOOP_PREFIX};
use crate::error::{Error, Result};
use crate::ir::visit::{mutate_stmt_children, walk_expr, walk_stmt, Mutator, Visitor};
use crate::ir::{CallKind, ErrorCode, Expr, ExprNode, Stmt, StmtNode, Type};
use crate::lower::{ArgumentKind, LoweredArgument, LoweredPipeline};
use crate::target::Target;

/// The embedded shared object holding the kernels (Halide's name).
pub const CODE_BUFFER: &str = "halide_hexagon_code";
/// The embedded shared object holding the device runtime (Halide's name).
pub const RUNTIME_BUFFER: &str = "halide_shared_runtime";
/// The embedded scalar the host runtime keeps the loaded module's state in.
pub const MODULE_STATE_BUFFER: &str = "hexagon_module_state_buf";
/// The Hexagon pseudo-buffer the int32 scalars of a closure travel in.
const SCALARS_BUFFER: &str = "scalar_indices";
/// The user context, as the code generator names it.
const USER_CONTEXT: &str = crate::lower::entry_checks::USER_CONTEXT;

/// The embedded scalar holding a kernel's function handle.
pub fn kernel_handle_buffer(kernel: &str) -> String {
    format!("{kernel}_buf")
}

/// What the offload made: the host statement, the kernels, and the
/// writable embedded scalars (zero at load) the host code uses.
pub struct Offloaded {
    pub host: Stmt,
    pub kernels: Vec<LoweredPipeline>,
    pub state_buffers: Vec<String>,
}

/// A buffer the nest uses: its element type and dimensions, and how.
#[derive(Clone, Debug)]
struct ClosureBuffer {
    elem: Type,
    dimensions: usize,
    read: bool,
    written: bool,
}

/// The names a nest uses from outside itself.
#[derive(Default)]
struct Closure {
    bound: Vec<String>,
    vars: BTreeMap<String, Type>,
    buffers: BTreeMap<String, (Type, bool, bool)>,
}

impl Closure {
    fn of(s: &Stmt) -> Closure {
        let mut c = Closure::default();
        c.visit_stmt(s);
        c
    }
    fn is_bound(&self, name: &str) -> bool {
        self.bound.iter().any(|b| b == name)
    }
    fn scoped(&mut self, name: &str, f: impl FnOnce(&mut Closure)) {
        self.bound.push(name.to_string());
        f(self);
        self.bound.pop();
    }
    fn use_buffer(&mut self, name: &str, elem: Type, read: bool, written: bool) {
        if self.is_bound(name) {
            return;
        }
        let e = self.buffers.entry(name.to_string()).or_insert((elem, false, false));
        e.1 |= read;
        e.2 |= written;
    }
}

impl Visitor for Closure {
    fn visit_expr(&mut self, e: &Expr) {
        match e.node() {
            ExprNode::Variable { name, .. } if !self.is_bound(name) => {
                self.vars.insert(name.clone(), e.ty());
            }
            ExprNode::Load { name, .. } => self.use_buffer(name, e.ty().element_of(), true, false),
            ExprNode::Let { name, value, body } => {
                self.visit_expr(value);
                self.scoped(name, |c| c.visit_expr(body));
                return;
            }
            _ => {}
        }
        walk_expr(self, e)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.visit_expr(value);
                self.scoped(name, |c| c.visit_stmt(body));
                return;
            }
            StmtNode::For { name, min, extent, body, .. } => {
                self.visit_expr(min);
                self.visit_expr(extent);
                self.scoped(name, |c| c.visit_stmt(body));
                return;
            }
            StmtNode::Allocate { name, extents, condition, body, .. } => {
                extents.iter().for_each(|e| self.visit_expr(e));
                self.visit_expr(condition);
                self.scoped(name, |c| c.visit_stmt(body));
                return;
            }
            StmtNode::Store { name, value, .. } => self.use_buffer(name, value.ty().element_of(), false, true),
            _ => {}
        }
        walk_stmt(self, s)
    }
}

struct InjectRpc<'a> {
    /// Buffers defined for the whole pipeline: (element type, dimensions).
    buffers: &'a HashMap<String, (Type, usize)>,
    /// Allocations made around the current statement, on the host.
    host_allocations: Vec<String>,
    kernels: Vec<LoweredPipeline>,
    error: Option<Error>,
}

fn handle_var(name: &str) -> Expr {
    Expr::var(Type::handle(), name)
}

fn extern_call(ty: Type, name: &str, args: Vec<Expr>) -> Expr {
    Expr::call(ty, name, args, CallKind::Extern)
}

fn make_struct(fields: Vec<Expr>) -> Expr {
    Expr::intrinsic(Type::handle(), crate::ir::Intrinsic::MakeStruct, fields)
}

/// `let <result> = call in assert(result == 0, result)`: the call's
/// nonzero result (an error the runtime reported) is the pipeline's.
fn call_and_check(result: &str, call: Expr) -> Stmt {
    let r = Expr::var(Type::i32(), result);
    Stmt::let_stmt(result, call, Stmt::assert(Expr::eq(r.clone(), Expr::i32(0)), r))
}

/// The bytes from buffer `name`'s host pointer its elements span, with a
/// run-time check that no stride is negative (the span starts at the host
/// pointer only then).
fn buffer_span(name: &str, b: &ClosureBuffer) -> (Vec<Stmt>, Expr) {
    let mut checks = vec![];
    let mut last = Expr::i64(0);
    for d in 0..b.dimensions {
        let stride = Expr::var(Type::i32(), format!("{name}.stride.{d}"));
        let extent = Expr::var(Type::i32(), format!("{name}.extent.{d}"));
        checks.push(Stmt::assert(
            Expr::ge(stride.clone(), Expr::i32(0)),
            Expr::error(
                ErrorCode::Generic,
                vec![Expr::string(format!(
                    "Buffer {name} has a negative stride in dimension {d}; ferrohalide's Hexagon offload passes buffers whose strides are all nonnegative\n"
                ))],
            ),
        ));
        let reach = Expr::mul(
            Expr::cast(Type::i64(), Expr::sub(extent, Expr::i32(1))),
            Expr::cast(Type::i64(), stride),
        );
        last = Expr::add(last, reach);
    }
    // The runtime's argument list ends at the first size of 0, so an
    // empty buffer cannot travel (Halide's sizes are never 0).
    let empty = (0..b.dimensions)
        .map(|d| Expr::le(Expr::var(Type::i32(), format!("{name}.extent.{d}")), Expr::i32(0)))
        .reduce(Expr::or);
    if let Some(empty) = empty {
        checks.push(Stmt::assert(
            Expr::not(empty),
            Expr::error(
                ErrorCode::Generic,
                vec![Expr::string(format!(
                    "Buffer {name} is empty; ferrohalide's Hexagon offload passes only buffers with elements\n"
                ))],
            ),
        ));
    }
    let bytes = Expr::mul(Expr::add(last, Expr::i64(1)), Expr::i64(b.elem.bytes() as i64));
    (checks, Expr::cast(Type::uint(64), bytes))
}

impl InjectRpc<'_> {
    fn fail(&mut self, e: Error) -> Stmt {
        self.error.get_or_insert(e);
        Stmt::no_op()
    }

    /// The host code calling the nest `body` of marker loop `marker` as a
    /// kernel, after adding the kernel.
    fn offload(&mut self, marker: &str, body: &Stmt) -> Result<Stmt> {
        let kernel = format!("{marker}.{}", self.kernels.len());
        let loop_name = &marker[OFFLOAD_LOOP_PREFIX.len()..];
        let closure = Closure::of(body);

        let mut buffers: BTreeMap<String, ClosureBuffer> = BTreeMap::new();
        for (name, (elem, read, written)) in &closure.buffers {
            if self.host_allocations.contains(name) {
                return Err(Error::user(format!(
                    "The hexagon() loop {loop_name} uses {name}, which is computed on the host; ferrohalide's Hexagon offload passes only the pipeline's input and output buffers (compute {name} inside the offloaded loop).\n"
                )));
            }
            let (_, dimensions) = self.buffers.get(name).copied().ok_or_else(|| {
                Error::internal(format!("the hexagon() loop {loop_name} uses buffer {name}, which has no shape"))
            })?;
            buffers.insert(name.clone(), ClosureBuffer { elem: *elem, dimensions, read: *read, written: *written });
        }
        let mut ints = vec![];
        let mut scalars = vec![];
        for (name, ty) in &closure.vars {
            if buffers.contains_key(name) || name == USER_CONTEXT {
                continue;
            }
            if ty.is_handle() {
                return Err(Error::user(format!(
                    "The hexagon() loop {loop_name} uses the host pointer {name}, which ferrohalide's Hexagon offload cannot pass to the DSP.\n"
                )));
            }
            if *ty == Type::i32() {
                ints.push(name.clone());
            } else {
                scalars.push((name.clone(), *ty));
            }
        }

        // The kernel: the int32 scalars unpacked, then the nest (Hexagon
        // code, so with the intrinsics HVX has instructions for).
        let mut kbody = crate::lower::find_intrinsics::find_intrinsics(body);
        for (k, name) in ints.iter().enumerate().rev() {
            let load = Expr::load(Type::i32(), SCALARS_BUFFER, Expr::i32(k as i64), Expr::bool_const(true));
            kbody = Stmt::let_stmt(name.clone(), load, kbody);
        }
        let scalars_buffer = ClosureBuffer { elem: Type::i32(), dimensions: 1, read: true, written: false };
        if !ints.is_empty() {
            buffers.insert(SCALARS_BUFFER.to_string(), scalars_buffer.clone());
        }
        let buffer_arg = |(name, b): (&String, &ClosureBuffer)| LoweredArgument {
            name: name.clone(),
            kind: if b.written { ArgumentKind::OutputBuffer } else { ArgumentKind::InputBuffer },
            ty: b.elem,
            dimensions: b.dimensions,
            estimates: Default::default(),
        };
        let mut args: Vec<LoweredArgument> = buffers.iter().filter(|(_, b)| !b.written).map(buffer_arg).collect();
        args.extend(buffers.iter().filter(|(_, b)| b.written).map(buffer_arg));
        args.extend(scalars.iter().map(|(name, ty)| LoweredArgument {
            name: name.clone(),
            kind: ArgumentKind::InputScalar,
            ty: *ty,
            dimensions: 0,
            estimates: Default::default(),
        }));
        self.kernels.push(LoweredPipeline { name: kernel.clone(), args, body: kbody });

        // The host's call: buffers in name order, then the scalars; the
        // host runtime groups them as the kernel takes them.
        let mut checks = vec![];
        let (mut sizes, mut ptrs, mut flags) = (vec![], vec![], vec![]);
        for (name, b) in &buffers {
            let size = if name == SCALARS_BUFFER {
                Expr::cast(Type::uint(64), Expr::i64(4 * ints.len() as i64))
            } else {
                let (c, size) = buffer_span(name, b);
                checks.extend(c);
                size
            };
            sizes.push(size);
            ptrs.push(make_struct(vec![Expr::cast(Type::uint(64), Expr::i64(0)), handle_var(name)]));
            flags.push(Expr::i32(i64::from(b.read) | (i64::from(b.written) << 1)));
        }
        for (name, ty) in &scalars {
            sizes.push(Expr::cast(Type::uint(64), Expr::i64(ty.bytes() as i64)));
            ptrs.push(make_struct(vec![Expr::var(*ty, name.clone())]));
            flags.push(Expr::i32(0));
        }
        sizes.push(Expr::cast(Type::uint(64), Expr::i64(0)));
        let module_state = extern_call(
            Type::handle(),
            "halide_hexagon_get_module_state",
            vec![handle_var(USER_CONTEXT), handle_var(MODULE_STATE_BUFFER)],
        );
        let run = extern_call(
            Type::i32(),
            "halide_hexagon_run",
            vec![
                handle_var(USER_CONTEXT),
                module_state,
                Expr::string(format!("{kernel}_argv")),
                handle_var(&kernel_handle_buffer(&kernel)),
                make_struct(sizes),
                make_struct(ptrs),
                make_struct(flags),
            ],
        );
        let mut host = vec![];
        host.extend(checks);
        for (k, name) in ints.iter().enumerate() {
            host.push(Stmt::store(
                SCALARS_BUFFER,
                Expr::var(Type::i32(), name.clone()),
                Expr::i32(k as i64),
                Expr::bool_const(true),
            ));
        }
        host.push(call_and_check("halide_hexagon_run_result", run));
        let host = Stmt::block(host);
        if ints.is_empty() {
            return Ok(host);
        }
        Ok(Stmt::new(StmtNode::Allocate {
            name: SCALARS_BUFFER.to_string(),
            ty: Type::i32(),
            memory_type: crate::ir::MemoryType::Stack,
            extents: vec![Expr::i32(ints.len() as i64)],
            condition: Expr::bool_const(true),
            body: host,
        }))
    }
}

impl Mutator for InjectRpc<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if self.error.is_some() {
            return s.clone();
        }
        match s.node() {
            StmtNode::For { name, body, .. } if is_offload_loop(name) => {
                match self.offload(name, body) {
                    Ok(host) => host,
                    Err(e) => self.fail(e),
                }
            }
            StmtNode::Allocate { name, .. } => {
                self.host_allocations.push(name.clone());
                let out = mutate_stmt_children(self, s);
                self.host_allocations.pop();
                out
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// Replace the markers of `s` (see the module comment). `buffers`: the
/// pipeline's argument and embedded buffers, by name: element type and
/// dimensions.
pub fn inject_hexagon_rpc(
    s: &Stmt,
    target: &Target,
    buffers: &HashMap<String, (Type, usize)>,
) -> Result<Offloaded> {
    if target.arch == crate::target::arch::HEXAGON {
        // The target's own code: each marker is just its nest.
        let mut strip = StripMarkers;
        return Ok(Offloaded { host: strip.mutate_stmt(s), kernels: vec![], state_buffers: vec![] });
    }
    let mut m = InjectRpc { buffers, host_allocations: vec![], kernels: vec![], error: None };
    let host = m.mutate_stmt(s);
    if let Some(e) = m.error {
        return Err(e);
    }
    if m.kernels.is_empty() {
        return Ok(Offloaded { host, kernels: vec![], state_buffers: vec![] });
    }
    let code = |b: &str| (handle_var(b), Expr::cast(Type::uint(64), Expr::var(Type::i32(), format!("{b}.extent.0"))));
    let (code_ptr, code_size) = code(CODE_BUFFER);
    let (runtime_ptr, runtime_size) = code(RUNTIME_BUFFER);
    let init = extern_call(
        Type::i32(),
        "halide_hexagon_initialize_kernels",
        vec![handle_var(USER_CONTEXT), handle_var(MODULE_STATE_BUFFER), code_ptr, code_size, runtime_ptr, runtime_size],
    );
    let host = Stmt::block(vec![call_and_check("halide_hexagon_initialize_kernels_result", init), host]);
    let mut state_buffers = vec![MODULE_STATE_BUFFER.to_string()];
    state_buffers.extend(m.kernels.iter().map(|k| kernel_handle_buffer(&k.name)));
    Ok(Offloaded { host, kernels: m.kernels, state_buffers })
}

/// Replaces each marker loop by its body.
struct StripMarkers;

impl Mutator for StripMarkers {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::For { name, body, .. } if is_offload_loop(name) => self.mutate_stmt(body),
            _ => mutate_stmt_children(self, s),
        }
    }
}
