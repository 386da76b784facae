//! Statements as C++ text (see `mod.rs` for the conventions).

use super::{cname, ctype, unsupported, CodeGenC};
use crate::error::{Error, Result};
use crate::ir::{Expr, ForType, MemoryType, Mutator, Stmt, StmtNode};

use crate::lower::allocation_placement::{placement, Placement, ALLOCATION_PADDING};

/// Replaces the loads of the stored element by its old value.
struct UseOldValue<'a> {
    name: &'a str,
    index: &'a Expr,
    old: &'a str,
}

impl crate::ir::Mutator for UseOldValue<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let crate::ir::ExprNode::Load { name, index, predicate } = e.node() {
            if name == self.name
                && crate::ir::equality::equal(index, self.index)
                && (predicate.is_true() || predicate.is_const_value(1))
            {
                return Expr::var(e.ty(), self.old);
            }
        }
        crate::ir::visit::mutate_expr_children(self, e)
    }
}

impl CodeGenC {
    /// A scalar expression's text, after the declarations it needs.
    fn scalar(&mut self, e: &Expr) -> Result<String> {
        let v = self.value(e, None)?;
        self.flush_hoisted();
        Ok(v)
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let cn = cname(name);
                let opened = !self.declare(&cn);
                if opened {
                    self.open("{");
                    self.declare(&cn);
                }
                let t = ctype(value.ty().element_of())?;
                if value.ty().is_vector() {
                    let lanes = value.ty().lanes;
                    let l = self.fresh("l");
                    self.line(&format!("{t} {cn}[{lanes}];"));
                    let v = self.value(value, Some(&l))?;
                    self.flush_hoisted();
                    self.line(&format!("for (int32_t {l} = 0; {l} < {lanes}; {l}++) {cn}[{l}] = {v};"));
                    self.arrays.insert(name.clone());
                } else {
                    let v = self.scalar(value)?;
                    self.line(&format!("{t} {cn} = {v};"));
                }
                self.stmt(body)?;
                if opened {
                    self.close("}");
                }
                Ok(())
            }
            StmtNode::AssertStmt { condition, message } => {
                let c = self.scalar(condition)?;
                self.open(&format!("if (!({c})) {{"));
                let m = self.scalar(message)?;
                self.line(&format!("return {m};"));
                self.close("}");
                Ok(())
            }
            StmtNode::ProducerConsumer { name, is_producer, body } => {
                self.line(&format!("// {} {name}", if *is_producer { "produce" } else { "consume" }));
                self.stmt(body)
            }
            StmtNode::For { name, min, extent, for_type, body } => self.for_loop(name, min, extent, *for_type, body),
            StmtNode::Store { name, value, index, predicate } => self.store(name, value, index, predicate),
            StmtNode::Allocate { name, ty, memory_type, extents, condition, body } => {
                self.allocate(name, *ty, *memory_type, extents, condition, body)
            }
            StmtNode::Free { name } => {
                self.line(&format!("{}_heap.release();", cname(name)));
                Ok(())
            }
            StmtNode::Block(v) => {
                for x in v {
                    self.stmt(x)?;
                }
                Ok(())
            }
            StmtNode::IfThenElse { condition, then_case, else_case } => {
                let c = self.scalar(condition)?;
                self.open(&format!("if ({c}) {{"));
                self.stmt(then_case)?;
                if let Some(e) = else_case {
                    self.close("} else {");
                    self.indent += 1;
                    self.declared.push(Default::default());
                    self.stmt(e)?;
                }
                self.close("}");
                Ok(())
            }
            StmtNode::Evaluate(e) => {
                if e.is_const() {
                    return Ok(());
                }
                if e.ty().is_vector() {
                    let l = self.fresh("l");
                    let v = self.value(e, Some(&l))?;
                    self.flush_hoisted();
                    self.line(&format!("for (int32_t {l} = 0; {l} < {}; {l}++) (void)({v});", e.ty().lanes));
                } else {
                    let v = self.scalar(e)?;
                    self.line(&format!("(void)({v});"));
                }
                Ok(())
            }
            StmtNode::Atomic { mutex_name, body, .. } => {
                // With a mutex, the lock and unlock are calls in the body and
                // its stores are plain; without, each store is atomic.
                let atomic = mutex_name.is_empty();
                self.atomic_depth += atomic as usize;
                let r = self.stmt(body);
                self.atomic_depth -= atomic as usize;
                r
            }
            StmtNode::Provide { name, .. } | StmtNode::Realize { name, .. } => Err(Error::internal(format!(
                "a multi-dimensional statement of {name} survived storage flattening"
            ))),
        }
    }

    fn for_loop(&mut self, name: &str, min: &Expr, extent: &Expr, for_type: ForType, body: &Stmt) -> Result<()> {
        let t = ctype(min.ty())?;
        let (lo, n) = (self.fresh("min"), self.fresh("extent"));
        let min_v = self.scalar(min)?;
        let ext_v = self.scalar(extent)?;
        self.open("{");
        self.line(&format!("{t} {lo} = {min_v};"));
        self.line(&format!("{t} {n} = {ext_v};"));
        let v = cname(name);
        match for_type {
            ForType::Serial | ForType::Unrolled | ForType::Vectorized => {
                self.open(&format!(
                    "for ({t} {v} = {lo}; (int64_t){v} < (int64_t){lo} + (int64_t){n}; {v}++) {{"
                ));
                self.stmt(body)?;
                self.close("}");
            }
            ForType::Parallel | ForType::Fork => {
                let (f, r) = (self.fresh("body"), self.fresh("r"));
                let uc = cname(crate::lower::entry_checks::USER_CONTEXT);
                self.open(&format!("auto {f} = [&](void *, int {v}_index) -> int {{"));
                self.line(&format!("{t} {v} = ({t}){v}_index;"));
                self.stmt(body)?;
                self.line("return 0;");
                self.close("};");
                let task = format!("fh_par_for_body<decltype({f})>");
                let call = if for_type == ForType::Fork {
                    // Always iterations 0 and 1 (lower/async_producers.rs).
                    format!("ferrohalide_do_fork({uc}, {task}, (uint8_t *)&{f})")
                } else {
                    format!("halide_do_par_for({uc}, {task}, {lo}, {n}, (uint8_t *)&{f})")
                };
                self.line(&format!("int {r} = {call};"));
                self.line(&format!("if ({r}) return {r};"));
            }
        }
        self.close("}");
        Ok(())
    }

    fn store(&mut self, name: &str, value: &Expr, index: &Expr, predicate: &Expr) -> Result<()> {
        if self.atomic_depth > 0 {
            return self.atomic_store(name, value, index, predicate);
        }
        let t = ctype(value.ty().element_of())?;
        let always = predicate.is_true() || predicate.is_const_value(1);
        let target = cname(name);
        if value.ty().is_scalar() && index.ty().is_scalar() {
            let v = self.value(value, None)?;
            let i = self.value(index, None)?;
            let p = if always { None } else { Some(self.value(predicate, None)?) };
            self.flush_hoisted();
            let store = format!("(({t} *){target})[{i}] = {v};");
            match p {
                None => self.line(&store),
                Some(p) => self.line(&format!("if ({p}) {store}")),
            }
            return Ok(());
        }
        // Every lane's value first, then the stores: a vector store writes
        // after all of its loads.
        let lanes = value.ty().lanes.max(index.ty().lanes);
        let (vals, l) = (self.fresh("v"), self.fresh("l"));
        let v = self.value(value, value.ty().is_vector().then_some(l.as_str()))?;
        let i = self.value(index, index.ty().is_vector().then_some(l.as_str()))?;
        let p = if always {
            None
        } else {
            Some(self.value(predicate, predicate.ty().is_vector().then_some(l.as_str()))?)
        };
        self.flush_hoisted();
        self.open("{");
        self.line(&format!("{t} {vals}[{lanes}];"));
        self.line(&format!("for (int32_t {l} = 0; {l} < {lanes}; {l}++) {vals}[{l}] = {v};"));
        let store = format!("(({t} *){target})[{i}] = {vals}[{l}];");
        let guarded = match p {
            None => store,
            Some(p) => format!("if ({p}) {store}"),
        };
        self.line(&format!("for (int32_t {l} = 0; {l} < {lanes}; {l}++) {guarded}"));
        self.close("}");
        Ok(())
    }

    /// A store made atomic lane by lane (each lane's update sees the
    /// previous lane's, as lanes may name one element): a value that does
    /// not read the buffer is stored atomically; otherwise a
    /// compare-and-swap loop computes it from the element's old value.
    fn atomic_store(&mut self, name: &str, value: &Expr, index: &Expr, predicate: &Expr) -> Result<()> {
        let et = value.ty().element_of();
        let t = ctype(et)?;
        let lanes = value.ty().lanes.max(index.ty().lanes).max(predicate.ty().lanes);
        let l = self.fresh("l");
        let lane = |e: &Expr| e.ty().is_vector().then_some(l.as_str());
        let old = format!("{name}.atomic_old");
        let reads = crate::ir::visit::expr_loads_from(value, &|n| n == name);
        let value = if reads {
            UseOldValue { name, index, old: &old }.mutate_expr(value)
        } else {
            value.clone()
        };
        let i = self.value(index, lane(index))?;
        let always = predicate.is_true() || predicate.is_const_value(1);
        let p = if always { None } else { Some(self.value(predicate, lane(predicate))?) };
        let v = self.value(&value, lane(&value))?;
        self.flush_hoisted();
        let target = cname(name);
        self.open(&format!("for (int32_t {l} = 0; {l} < {lanes}; {l}++) {{"));
        if let Some(p) = p {
            self.line(&format!("if (!({p})) continue;"));
        }
        self.line(&format!("{t} *fh_p = &(({t} *){target})[{i}];"));
        if reads {
            let o = cname(&old);
            self.line(&format!("{t} {o}, fh_new;"));
            self.line(&format!("__atomic_load(fh_p, &{o}, __ATOMIC_RELAXED);"));
            self.line(&format!(
                "do {{ fh_new = {v}; }} while (!__atomic_compare_exchange(fh_p, &{o}, &fh_new, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));"
            ));
        } else {
            self.line(&format!("{t} fh_new = {v};"));
            self.line("__atomic_store(fh_p, &fh_new, __ATOMIC_RELAXED);");
        }
        self.close("}");
        Ok(())
    }

    fn allocate(
        &mut self,
        name: &str,
        ty: crate::ir::Type,
        memory_type: MemoryType,
        extents: &[Expr],
        condition: &Expr,
        body: &Stmt,
    ) -> Result<()> {
        if ty.is_float() && ty.bits == 16 {
            return Err(unsupported("float16 allocations"));
        }
        let elem_bytes = ty.bytes() as u64 * ty.lanes as u64;
        let max = self.max_buffer_size;
        let placed = placement(name, ty, memory_type, extents, max, &max.to_string())?;
        let cn = cname(name);
        self.open("{");
        if let Placement::Stack(bytes) = placed {
            self.line(&format!("alignas(64) uint8_t {cn}_stack[{bytes}];"));
            self.line(&format!("void *{cn} = {cn}_stack;"));
            self.line(&format!("struct {{ void release() {{}} }} {cn}_heap;"));
        } else {
            let uc = cname(crate::lower::entry_checks::USER_CONTEXT);
            let size = self.fresh("size");
            let overflow = self.fresh("overflow");
            self.line(&format!("unsigned __int128 {size} = {elem_bytes};"));
            self.line(&format!("bool {overflow} = false;"));
            for e in extents {
                let v = self.scalar(e)?;
                self.line(&format!(
                    "{{ int64_t fh_x = (int64_t)({v}); if (fh_x < 0) fh_x = 0; {size} *= (unsigned __int128)fh_x; if ({size} >> 64) {overflow} = true; {size} = (uint64_t){size}; }}"
                ));
            }
            let always = condition.is_true() || condition.is_const_value(1);
            let cond = if always { "true".to_string() } else { self.scalar(condition)? };
            let max = self.max_buffer_size;
            self.open(&format!("if (({overflow} || {size} > (unsigned __int128){max}ULL) && ({cond})) {{"));
            let msg = crate::ir::Expr::error(
                crate::ir::ErrorCode::BufferAllocationTooLarge,
                vec![
                    Expr::string(format!("Total allocation for buffer {name} is ")),
                    Expr::var(crate::ir::Type::uint(64), "__alloc_size"),
                    Expr::string(format!(", which exceeds the maximum size of {max}")),
                ],
            );
            self.line(&format!("uint64_t {} = (uint64_t){size};", cname("__alloc_size")));
            let m = self.scalar(&msg)?;
            self.line(&format!("return {m};"));
            self.close("}");
            self.line(&format!(
                "fh_heap {cn}_heap({uc}, ({cond}) ? (size_t)((uint64_t){size} + {ALLOCATION_PADDING}) : 0);"
            ));
            let oom = crate::ir::Expr::error(
                crate::ir::ErrorCode::OutOfMemory,
                vec![Expr::string("Out of memory (halide_malloc returned nullptr)")],
            );
            let m = self.scalar(&oom)?;
            self.line(&format!("if (!{cn}_heap.p) return {m};"));
            self.line(&format!("void *{cn} = {cn}_heap.p;"));
        }
        self.stmt(body)?;
        self.close("}");
        Ok(())
    }
}
