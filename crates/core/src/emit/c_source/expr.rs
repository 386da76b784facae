//! Expressions as C++ text. `value(e, lane)` prints a scalar expression
//! (`lane` None) or one lane of a vector expression (`lane` a C expression
//! giving the lane index); a vector's operands are printed for the same
//! lane, or for the lanes a ramp, broadcast, shuffle or reduction maps it
//! to.

use super::{cname, ctype, unsupported, CodeGenC};
use crate::analysis::lower_intrinsic::lower_intrinsic;
use crate::error::{Error, Result};
use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Type, VectorReduceOp};

/// A C string literal.
pub(super) fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

fn float_literal(t: Type, v: f64) -> String {
    let c = if t.bits == 32 { "float" } else { "double" };
    if v.is_nan() {
        format!("(({c})NAN)")
    } else if v.is_infinite() {
        format!("(({c}){}INFINITY)", if v < 0.0 { "-" } else { "" })
    } else {
        // Rust's shortest round-trip text of the (exact) value.
        format!("(({c}){v:?})")
    }
}

fn int_literal(t: Type, v: i64) -> Result<String> {
    let c = ctype(t)?;
    Ok(if v == i64::MIN {
        format!("(({c})(-9223372036854775807LL - 1))")
    } else {
        format!("(({c}){v}LL)")
    })
}

impl CodeGenC {
    /// The lane of `e` a vector operand of a node printed for `lane` has.
    fn same_lane<'a>(e: &Expr, lane: Option<&'a str>) -> Option<&'a str> {
        if e.ty().is_vector() {
            lane
        } else {
            None
        }
    }

    pub(super) fn value(&mut self, e: &Expr, lane: Option<&str>) -> Result<String> {
        if e.ty().is_vector() && lane.is_none() {
            return Err(Error::internal(format!(
                "the C backend met the vector value {} where a scalar was expected",
                crate::lang::print::expr_to_string(e)
            )));
        }
        let t = e.ty().element_of();
        let l = |x: &Expr| Self::same_lane(x, lane);
        Ok(match e.node() {
            ExprNode::IntImm(v) => int_literal(t, *v)?,
            ExprNode::UIntImm(v) => {
                if t.is_bool() {
                    (if *v != 0 { "true" } else { "false" }).to_string()
                } else {
                    format!("(({}){v}ULL)", ctype(t)?)
                }
            }
            ExprNode::FloatImm(v) => {
                if t.bits != 32 && t.bits != 64 {
                    return Err(unsupported("float16 values"));
                }
                float_literal(t, *v)
            }
            ExprNode::StringImm(s) => c_string(s),
            ExprNode::Cast(v) => {
                let x = self.value(v, l(v))?;
                self.cast_text(t, v.ty().element_of(), x)?
            }
            ExprNode::Reinterpret(v) if v.ty().lanes != e.ty().lanes => {
                // Lanes of another width: through the bytes of all lanes.
                let (to, from) = (ctype(t)?, ctype(v.ty().element_of())?);
                let n = v.ty().lanes;
                let (src, k) = (self.fresh("src"), self.fresh("k"));
                let x = if v.ty().is_vector() { self.value(v, Some(&k))? } else { self.value(v, None)? };
                let at = lane.unwrap_or("0");
                format!(
                    "({{ {from} {src}[{n}]; for (int32_t {k} = 0; {k} < {n}; {k}++) {src}[{k}] = {x}; {to} fh_r; memcpy(&fh_r, (const char *){src} + (size_t)({at}) * sizeof(fh_r), sizeof(fh_r)); fh_r; }})"
                )
            }
            ExprNode::Reinterpret(v) => {
                let x = self.value(v, l(v))?;
                let (to, from) = (ctype(t)?, ctype(v.ty().element_of())?);
                if t.is_handle() {
                    format!("((void *)(uintptr_t)({x}))")
                } else if v.ty().is_handle() {
                    format!("(({to})(uintptr_t)({x}))")
                } else {
                    format!("fh_reinterpret<{to}, {from}>({x})")
                }
            }
            ExprNode::Variable { name, .. } => match lane {
                Some(i) if self.arrays.contains(name) => format!("{}[{i}]", cname(name)),
                _ => cname(name),
            },
            ExprNode::Binary { op, a, b } => {
                let (x, y) = (self.value(a, l(a))?, self.value(b, l(b))?);
                self.binary_text(*op, a.ty().element_of(), x, y)?
            }
            ExprNode::Not(a) => format!("(!{})", self.value(a, l(a))?),
            ExprNode::Select { cond, t: tv, f } => {
                let c = self.value(cond, l(cond))?;
                let (x, y) = (self.value(tv, l(tv))?, self.value(f, l(f))?);
                format!("({c} ? {x} : {y})")
            }
            ExprNode::Load { name, index, predicate } => {
                let i = self.value(index, l(index))?;
                let load = format!("(({} *){})[{i}]", ctype(t)?, cname(name));
                if predicate.is_true() || predicate.is_const_value(1) {
                    load
                } else {
                    let p = self.value(predicate, l(predicate))?;
                    format!("({p} ? {load} : ({})0)", ctype(t)?)
                }
            }
            ExprNode::Ramp { base, stride, .. } => {
                let i = lane.expect("a ramp is a vector");
                let bl = base.ty().lanes as usize;
                let (j, k) = if bl == 1 {
                    (None, i.to_string())
                } else {
                    (Some(format!("(({i}) % {bl})")), format!("(({i}) / {bl})"))
                };
                let b = self.value(base, j.as_deref())?;
                let s = self.value(stride, j.as_deref())?;
                let c = ctype(t)?;
                if t.is_float() {
                    format!("({b} + {s} * ({c})({k}))")
                } else {
                    format!("fh_add<{c}>({b}, fh_mul<{c}>({s}, ({c})({k})))")
                }
            }
            ExprNode::Broadcast { value, .. } => {
                let vl = value.ty().lanes as usize;
                let j = (vl > 1).then(|| format!("(({}) % {vl})", lane.expect("a broadcast is a vector")));
                self.value(value, j.as_deref())?
            }
            ExprNode::Let { name, value, body } => {
                let v = self.value(value, l(value))?;
                self.let_names.push(name.clone());
                let b = self.value(body, l(body));
                self.let_names.pop();
                format!("({{ {} {} = {v}; {}; }})", ctype(value.ty().element_of())?, cname(name), b?)
            }
            ExprNode::Shuffle { vectors, indices } => self.shuffle(vectors, indices, lane)?,
            ExprNode::VectorReduce { op, value } => self.vector_reduce(*op, value, e.ty().lanes as usize, t, lane)?,
            ExprNode::Call { name, args, kind } => self.call(e, name, args, kind, lane)?,
        })
    }

    fn shuffle(&mut self, vectors: &[Expr], indices: &[i32], lane: Option<&str>) -> Result<String> {
        let k = match lane {
            None => indices.first().copied().unwrap_or(0).to_string(),
            Some(i) => {
                let table = self.fresh("shuffle");
                let list: Vec<String> = indices.iter().map(|x| x.to_string()).collect();
                self.hoisted_static(&format!("static const int32_t {table}[] = {{{}}};", list.join(", ")));
                format!("{table}[{i}]")
            }
        };
        let kv = self.fresh("k");
        let mut text = String::new();
        let mut start = 0usize;
        let mut parts = vec![];
        for v in vectors {
            let n = v.ty().lanes as usize;
            let idx = format!("({kv} - {start})");
            let val = if v.ty().is_vector() { self.value(v, Some(&idx))? } else { self.value(v, None)? };
            parts.push((start + n, val));
            start += n;
        }
        let last = parts.len() - 1;
        let mut chain = String::new();
        for (i, (end, val)) in parts.into_iter().enumerate() {
            if i == last {
                chain.push_str(&val);
            } else {
                chain.push_str(&format!("{kv} < {end} ? {val} : "));
            }
        }
        text.push_str(&format!("({{ int32_t {kv} = {k}; {chain}; }})"));
        Ok(text)
    }

    /// A `static const` table an expression reads, declared before the
    /// statement (its contents are constants).
    fn hoisted_static(&mut self, decl: &str) {
        self.hoisted.push(decl.to_string());
    }

    fn vector_reduce(&mut self, op: VectorReduceOp, value: &Expr, lanes: usize, t: Type, lane: Option<&str>) -> Result<String> {
        let factor = value.ty().lanes as usize / lanes.max(1);
        let base = lane.unwrap_or("0");
        let (acc, j) = (self.fresh("acc"), self.fresh("j"));
        let first = self.value(value, Some(&format!("(({base}) * {factor})")))?;
        let next = self.value(value, Some(&format!("(({base}) * {factor} + {j})")))?;
        let c = ctype(t)?;
        let combine = match op {
            VectorReduceOp::Add if t.is_float() => format!("{acc} + {next}"),
            VectorReduceOp::Add => format!("fh_add<{c}>({acc}, {next})"),
            VectorReduceOp::SaturatingAdd => format!("fh_sat_add<{c}>({acc}, {next})"),
            VectorReduceOp::Mul if t.is_float() => format!("{acc} * {next}"),
            VectorReduceOp::Mul => format!("fh_mul<{c}>({acc}, {next})"),
            VectorReduceOp::Min => format!("fh_min<{c}>({acc}, {next})"),
            VectorReduceOp::Max => format!("fh_max<{c}>({acc}, {next})"),
            VectorReduceOp::And => format!("({acc} && {next})"),
            VectorReduceOp::Or => format!("({acc} || {next})"),
        };
        Ok(format!(
            "({{ {c} {acc} = {first}; for (int32_t {j} = 1; {j} < {factor}; {j}++) {acc} = {combine}; {acc}; }})"
        ))
    }

    /// `x` (of type `from`) converted to `to`, as Halide converts.
    fn cast_text(&mut self, to: Type, from: Type, x: String) -> Result<String> {
        let c = ctype(to)?;
        Ok(if to.is_bool() {
            if from.is_float() {
                format!("((bool)((int64_t)({x}) & 1))")
            } else if from.is_bool() {
                x
            } else {
                format!("((bool)(({x}) & 1))")
            }
        } else if to.is_handle() || from.is_handle() {
            return Err(unsupported("casts of handles"));
        } else {
            format!("(({c})({x}))")
        })
    }

    fn binary_text(&mut self, op: BinOp, t: Type, x: String, y: String) -> Result<String> {
        let c = ctype(t)?;
        let float = t.is_float();
        let int = !float && !t.is_bool();
        Ok(match op {
            BinOp::Add if int => format!("fh_add<{c}>({x}, {y})"),
            BinOp::Sub if int => format!("fh_sub<{c}>({x}, {y})"),
            BinOp::Mul if int => format!("fh_mul<{c}>({x}, {y})"),
            BinOp::Div if int => format!("fh_div<{c}>({x}, {y})"),
            BinOp::Mod if int => format!("fh_mod<{c}>({x}, {y})"),
            BinOp::Mod if float => format!("fh_fmod(({c})({x}), ({c})({y}))"),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div if float => {
                format!("(({c})({x} {} {y}))", op.symbol())
            }
            BinOp::Min => format!("fh_min<{c}>({x}, {y})"),
            BinOp::Max => format!("fh_max<{c}>({x}, {y})"),
            BinOp::EQ | BinOp::NE | BinOp::LT | BinOp::LE | BinOp::GT | BinOp::GE => {
                format!("({x} {} {y})", op.symbol())
            }
            BinOp::And => format!("({x} && {y})"),
            BinOp::Or => format!("({x} || {y})"),
            _ => return Err(unsupported(&format!("the operator {} on {}", op.symbol(), crate::lang::print::ir_type_name(t)))),
        })
    }

    fn call(&mut self, e: &Expr, name: &str, args: &[Expr], kind: &CallKind, lane: Option<&str>) -> Result<String> {
        let t = e.ty().element_of();
        match kind {
            CallKind::Intrinsic(i) => self.intrinsic(e, *i, args, lane),
            CallKind::Extern | CallKind::PureExtern => {
                let types: Vec<Option<Type>> = args
                    .iter()
                    .map(|a| (!matches!(a.node(), ExprNode::StringImm(_))).then(|| a.ty().element_of()))
                    .collect();
                self.declare_extern(name, t, &types)?;
                let vals = args
                    .iter()
                    .map(|a| self.value(a, Self::same_lane(a, lane)))
                    .collect::<Result<Vec<_>>>()?;
                Ok(format!("{name}({})", vals.join(", ")))
            }
            CallKind::Halide { .. } | CallKind::Image { .. } => Err(Error::internal(format!(
                "a call to {name} survived storage flattening"
            ))),
        }
    }

    fn args(&mut self, args: &[Expr], lane: Option<&str>) -> Result<Vec<String>> {
        args.iter().map(|a| self.value(a, Self::same_lane(a, lane))).collect()
    }

    fn intrinsic(&mut self, e: &Expr, i: Intrinsic, args: &[Expr], lane: Option<&str>) -> Result<String> {
        use Intrinsic::*;
        let t = e.ty().element_of();
        if let Some(lowered) = lower_intrinsic(i, e.ty(), args) {
            return self.value(&lowered, lane);
        }
        let c = ctype(t)?;
        let a = self.args(args, lane)?;
        let arg_t = |k: usize| args[k].ty().element_of();
        Ok(match i {
            BitwiseAnd | BitwiseOr | BitwiseXor => {
                let op = match i {
                    BitwiseAnd => "&",
                    BitwiseOr => "|",
                    _ => "^",
                };
                format!("(({c})({} {op} {}))", a[0], a[1])
            }
            BitwiseNot if t.is_bool() => format!("(!{})", a[0]),
            BitwiseNot => format!("(({c})(~{}))", a[0]),
            ShiftLeft | ShiftRight => {
                format!("fh_shift<{c}>({}, {}, {})", a[0], a[1], i == ShiftLeft)
            }
            Abs if t.is_float() => format!("(({c})fabs({}))", a[0]),
            Abs => format!("(({c})fh_abs<{}>({}))", ctype(arg_t(0))?, a[0]),
            Absd => {
                let at = ctype(arg_t(0))?;
                format!(
                    "({{ {at} fh_x = {}, fh_y = {}; ({c})(fh_x < fh_y ? ({c})fh_y - ({c})fh_x : ({c})fh_x - ({c})fh_y); }})",
                    a[0], a[1]
                )
            }
            Popcount => format!("fh_popcount<{c}>({})", a[0]),
            CountLeadingZeros => format!("fh_clz<{c}>({})", a[0]),
            CountTrailingZeros => format!("fh_ctz<{c}>({})", a[0]),
            Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped | StrictFloat | MemoizeExpr => {
                a[0].clone()
            }
            IfThenElse => format!("({} ? {} : {})", a[0], a[1], a.get(2).cloned().unwrap_or_else(|| "0".into())),
            ReturnSecond => format!("((void)({}), {})", a[0], a[1]),
            Math(m) => self.math(m, t, &a)?,
            SaturatingAdd => format!("fh_sat_add<{c}>({}, {})", a[0], a[1]),
            SaturatingSub => format!("fh_sat_sub<{c}>({}, {})", a[0], a[1]),
            SaturatingCast => format!("fh_sat_cast<{c}, {}>({})", ctype(arg_t(0))?, a[0]),
            HalvingAdd => format!("fh_halving_add<{c}>({}, {})", a[0], a[1]),
            HalvingSub => format!("fh_halving_sub<{c}>({}, {})", a[0], a[1]),
            RoundingHalvingAdd => format!("fh_rounding_halving_add<{c}>({}, {})", a[0], a[1]),
            WideningAdd | WideningSub | WideningMul => {
                let op = match i {
                    WideningAdd => "add",
                    WideningSub => "sub",
                    _ => "mul",
                };
                if t.is_float() {
                    let sym = match i {
                        WideningAdd => "+",
                        WideningSub => "-",
                        _ => "*",
                    };
                    format!("(({c})({c})({}) {sym} ({c})({}))", a[0], a[1])
                } else {
                    format!("fh_{op}<{c}>(({c})({}), ({c})({}))", a[0], a[1])
                }
            }
            MulShiftRight | RoundingMulShiftRight => format!(
                "fh_mul_shift_right<{c}>({}, {}, (int64_t)({}), {})",
                a[0],
                a[1],
                a[2],
                i == RoundingMulShiftRight
            ),
            DivRoundToZero => format!("fh_div_round_to_zero<{c}>({}, {})", a[0], a[1]),
            ModRoundToZero => format!("fh_mod_round_to_zero<{c}>({}, {})", a[0], a[1]),
            BufferGetHost => format!("((void *)((struct halide_buffer_t *)({}))->host)", a[0]),
            BufferGetMin | BufferGetExtent | BufferGetStride => {
                let field = match i {
                    BufferGetMin => "min",
                    BufferGetExtent => "extent",
                    _ => "stride",
                };
                format!("((struct halide_buffer_t *)({}))->dim[{}].{field}", a[0], a[1])
            }
            BufferGetDimensions => format!("((struct halide_buffer_t *)({}))->dimensions", a[0]),
            BufferGetTypeCode => format!("(({c})((struct halide_buffer_t *)({}))->type.code)", a[0]),
            BufferGetTypeBits => format!("(({c})((struct halide_buffer_t *)({}))->type.bits)", a[0]),
            BufferGetTypeLanes => format!("(({c})((struct halide_buffer_t *)({}))->type.lanes)", a[0]),
            BufferIsBoundsQuery => format!(
                "({{ struct halide_buffer_t *fh_b = (struct halide_buffer_t *)({}); fh_b->host == nullptr && fh_b->device == 0; }})",
                a[0]
            ),
            Error => {
                let (code, parts) = match args.split_first() {
                    Some((c0, rest)) if c0.ty() == Type::i32() && c0.as_int_const().is_some() => {
                        (c0.as_int_const().unwrap_or(-1), rest)
                    }
                    _ => (-1, args),
                };
                let msg = self.format_message(parts, lane, "", "")?;
                format!(
                    "({{ {msg} halide_error({}, fh_msg); (int32_t){code}; }})",
                    cname(crate::lower::entry_checks::USER_CONTEXT)
                )
            }
            Print => {
                if args.iter().any(|x| x.ty().is_vector()) && lane.is_none() {
                    return Err(unsupported("print of vector values"));
                }
                let msg = self.format_message(args, lane, " ", "\n")?;
                let first = match args.first().map(|x| x.node()) {
                    Some(ExprNode::StringImm(_)) | None => format!("({c})0"),
                    _ => a[0].clone(),
                };
                format!(
                    "({{ {msg} halide_print({}, fh_msg); {first}; }})",
                    cname(crate::lower::entry_checks::USER_CONTEXT)
                )
            }
            Prefetch => match args.first().map(|x| x.node()) {
                Some(ExprNode::Load { name, index, .. }) if index.ty().is_scalar() => {
                    let idx = self.value(index, None)?;
                    let et = ctype(args[0].ty().element_of())?;
                    format!("(__builtin_prefetch(&(({et} *){})[{idx}]), ({c})0)", cname(name))
                }
                _ => format!("(({c})0)"),
            },
            MakeStruct => self.make_struct(args, &a, lane)?,
            SignedIntegerOverflow => {
                return Err(crate::error::Error::user(
                    "Signed integer overflow occurred during constant-folding. Signed integer overflow for int32 and int64 is undefined behavior in Halide.\n",
                ))
            }
            Trace => return Err(unsupported("tracing (trace_loads, trace_stores, trace_realizations)")),
            other => return Err(unsupported(&format!("the intrinsic {}", other.name()))),
        })
    }

    /// Declarations that format `parts` into `fh_msg` (the runtime's
    /// string builder, as the compiled code formats messages).
    fn format_message(&mut self, parts: &[Expr], lane: Option<&str>, sep: &str, end: &str) -> Result<String> {
        let mut s = String::from("char fh_msg[4096]; char *fh_d = fh_msg, *fh_e = fh_msg + sizeof(fh_msg); fh_msg[0] = 0; ");
        if parts.is_empty() {
            s.push_str("fh_d = halide_string_to_string(fh_d, fh_e, \"Assertion failed\"); ");
        }
        for (k, p) in parts.iter().enumerate() {
            if k > 0 && !sep.is_empty() {
                s.push_str(&format!("fh_d = halide_string_to_string(fh_d, fh_e, {}); ", c_string(sep)));
            }
            let v = self.value(p, Self::same_lane(p, lane))?;
            let t = p.ty().element_of();
            let call = if matches!(p.node(), ExprNode::StringImm(_)) {
                format!("halide_string_to_string(fh_d, fh_e, {v})")
            } else if t.is_handle() {
                format!("halide_pointer_to_string(fh_d, fh_e, {v})")
            } else if t.is_bool() {
                format!("halide_string_to_string(fh_d, fh_e, ({v}) ? \"true\" : \"false\")")
            } else if t.is_float() {
                format!("halide_double_to_string(fh_d, fh_e, (double)({v}), {})", (t.bits == 64) as i32)
            } else if t.is_int() {
                format!("halide_int64_to_string(fh_d, fh_e, (int64_t)({v}), 1)")
            } else {
                format!("halide_uint64_to_string(fh_d, fh_e, (uint64_t)({v}), 1)")
            };
            s.push_str(&format!("fh_d = {call}; "));
        }
        if !end.is_empty() {
            s.push_str(&format!("fh_d = halide_string_to_string(fh_d, fh_e, {}); ", c_string(end)));
        }
        s.push_str("(void)fh_d;");
        Ok(s)
    }

    /// `make_struct(args...)`: a struct declared before the statement (it
    /// must stay valid until the function returns, as Halide's does).
    fn make_struct(&mut self, args: &[Expr], vals: &[String], lane: Option<&str>) -> Result<String> {
        if lane.is_some() {
            return Err(unsupported("make_struct of vector values"));
        }
        let uses_let = args.iter().any(|x| {
            self.let_names
                .iter()
                .any(|n| crate::ir::visit::expr_uses_var(x, n))
        });
        if uses_let {
            return Err(unsupported("make_struct of a let variable's value"));
        }
        if args.is_empty() {
            return Ok("((void *)nullptr)".into());
        }
        let s = self.fresh("struct");
        let mut fields = vec![];
        for (k, x) in args.iter().enumerate() {
            let ct = ctype(x.ty().element_of())?;
            fields.push(format!("{ct} f{k};"));
        }
        self.hoisted.push(format!(
            "struct {{ {} }} {s} = {{ {} }};",
            fields.join(" "),
            vals.join(", ")
        ));
        Ok(format!("((void *)&{s})"))
    }

    fn math(&mut self, m: MathFn, t: Type, a: &[String]) -> Result<String> {
        use MathFn::*;
        if !(t.is_float() && (t.bits == 32 || t.bits == 64)) && !matches!(m, IsNan | IsInf | IsFinite) {
            return Err(unsupported(&format!("{} on {}", m.name(), crate::lang::print::ir_type_name(t))));
        }
        let f = if t.bits == 32 { "f" } else { "" };
        let one = |name: &str| format!("{name}{f}({})", a[0]);
        Ok(match m {
            Sqrt => one("sqrt"),
            Sin | FastSin => one("sin"),
            Cos | FastCos => one("cos"),
            Tan => one("tan"),
            Asin => one("asin"),
            Acos => one("acos"),
            Atan => one("atan"),
            Sinh => one("sinh"),
            Cosh => one("cosh"),
            Tanh => one("tanh"),
            Asinh => one("asinh"),
            Acosh => one("acosh"),
            Atanh => one("atanh"),
            Exp | FastExp => one("exp"),
            Log | FastLog => one("log"),
            Floor => one("floor"),
            Ceil => one("ceil"),
            Trunc => one("trunc"),
            // To nearest, ties to even (the default rounding mode).
            Round => one("rint"),
            Erf => one("erf"),
            Atan2 => format!("atan2{f}({}, {})", a[0], a[1]),
            Hypot => format!("hypot{f}({}, {})", a[0], a[1]),
            Pow | FastPow => format!("pow{f}({}, {})", a[0], a[1]),
            FastInverse => format!("(1.0{f} / ({}))", a[0]),
            FastInverseSqrt => format!("(1.0{f} / sqrt{f}({}))", a[0]),
            IsNan => format!("((bool)isnan({}))", a[0]),
            IsInf => format!("((bool)isinf({}))", a[0]),
            IsFinite => format!("((bool)isfinite({}))", a[0]),
        })
    }
}
