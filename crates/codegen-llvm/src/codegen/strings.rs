//! Building text at run time: `print` lines and error messages. Values are
//! formatted by the runtime's string builder (`halide_*_to_string`), into
//! a scratch buffer on the stack of the current function; an error message
//! with few values is formatted by the runtime in one call
//! (`ferrohalide_error_formatted`).

use ferrohalide_core::ir::{Expr, ExprNode, Type};
use ferrohalide_core::Result;

use crate::runtime_symbols::names;

use super::ops::Op;
use super::{CodeGen, Val};

const MESSAGE_BYTES: u64 = 4096;

impl CodeGen {
    fn message_buffer(&mut self) -> Val {
        if let Some(b) = self.f.message_buffer {
            return b;
        }
        let t = unsafe { inkwell::llvm_sys::core::LLVMArrayType2(self.t_i8(), MESSAGE_BYTES) };
        let b = self.entry_alloca(t, 16);
        self.f.message_buffer = Some(b);
        b
    }

    /// Append one scalar value (or string) at `dst`; returns the new end.
    fn append_value(&mut self, dst: Val, end: Val, v: Val, t: Type, is_string: bool) -> Val {
        let p = self.t_ptr();
        if is_string {
            return self.call_extern(names::STRING_TO_STRING, p, &[dst, end, v]);
        }
        if t.is_handle() {
            return self.call_extern(names::POINTER_TO_STRING, p, &[dst, end, v]);
        }
        if t.is_bool() {
            // Halide prints bools as words.
            let (yes, no) = (self.global_string("true"), self.global_string("false"));
            let word = self.select(v, yes, no);
            return self.call_extern(names::STRING_TO_STRING, p, &[dst, end, word]);
        }
        if t.is_float() {
            let d = self.float_resize(v, self.t_f64());
            let sci = self.i32c(if t.bits == 64 { 1 } else { 0 });
            return self.call_extern(names::DOUBLE_TO_STRING, p, &[dst, end, d, sci]);
        }
        // At least one digit: no zero padding.
        let digits = self.i32c(1);
        if t.is_int() {
            let w = self.int_resize(v, self.t_i64(), true);
            return self.call_extern(names::INT64_TO_STRING, p, &[dst, end, w, digits]);
        }
        let w = self.int_resize(v, self.t_i64(), false);
        self.call_extern(names::UINT64_TO_STRING, p, &[dst, end, w, digits])
    }

    /// Format `vals` (lane `lane` of vector values) into the scratch buffer,
    /// separated by `sep` and followed by `end_with`; returns the buffer
    /// pointer.
    pub(crate) fn format_values(
        &mut self,
        args: &[Expr],
        vals: &[Val],
        lane: Option<u32>,
        sep: &str,
        end_with: &str,
    ) -> Val {
        let buf = self.message_buffer();
        let end = self.gep_bytes(buf, MESSAGE_BYTES);
        self.store(self.cint(self.t_i8(), 0), buf, 1);
        let mut dst = buf;
        let sep_v = if sep.is_empty() {
            None
        } else {
            Some(self.global_string(sep))
        };
        for (k, (a, &v)) in args.iter().zip(vals).enumerate() {
            if k > 0 {
                if let Some(s) = sep_v {
                    dst = self.call_extern(names::STRING_TO_STRING, self.t_ptr(), &[dst, end, s]);
                }
            }
            let is_string = matches!(a.node(), ExprNode::StringImm(_));
            let v = match lane {
                Some(l) if a.ty().is_vector() => self.extract(v, l),
                _ => v,
            };
            dst = self.append_value(dst, end, v, a.ty().element_of(), is_string);
        }
        if !end_with.is_empty() {
            let tail = self.global_string(end_with);
            self.call_extern(names::STRING_TO_STRING, self.t_ptr(), &[dst, end, tail]);
        }
        buf
    }

    /// `print(args...)`: one line, args separated by spaces; vector
    /// arguments print one line per lane. Returns the first argument. As in
    /// Halide, the line's newline is part of the message `halide_print` gets.
    pub(crate) fn codegen_print(&mut self, t: Type, args: &[Expr]) -> Result<Val> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.codegen_expr(a)?);
        }
        let lanes = args.iter().map(|a| a.ty().lanes).max().unwrap_or(1) as u32;
        let uc = self.f.user_context;
        for l in 0..lanes {
            let lane = if lanes > 1 { Some(l) } else { None };
            let msg = self.format_values(args, &vals, lane, " ", "\n");
            self.call_extern(names::PRINT, self.t_void(), &[uc, msg]);
        }
        Ok(match vals.first() {
            Some(&v) if !matches!(args[0].node(), ExprNode::StringImm(_)) || t.is_handle() => v,
            _ => self.zero_of(self.llvm_ty(t)),
        })
    }

    /// The arguments of an `Intrinsic::Error` (`Expr::error`): its code and
    /// the parts of its message.
    pub(crate) fn error_parts(args: &[Expr]) -> (i32, &[Expr]) {
        match args.split_first() {
            Some((c, rest)) if c.ty() == ferrohalide_core::ir::Type::i32() => match c.as_int_const() {
                Some(v) => (v as i32, rest),
                None => (-1, args),
            },
            _ => (-1, args),
        }
    }

    /// Concatenate `args` into a message, report it with `halide_error`
    /// and return `code` (an i32 value).
    pub(crate) fn report_error(&mut self, code: i32, args: &[Expr]) -> Result<Val> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.codegen_expr(a)?);
        }
        let uc = self.f.user_context;
        if let Some((format, values)) = self.formatted_error(args, &vals) {
            let mut call = vec![uc, format];
            call.extend(values);
            self.call_extern(names::ERROR_FORMATTED, self.t_void(), &call);
            return Ok(self.i32c(code as i64));
        }
        let msg = if args.is_empty() {
            self.global_string("Assertion failed")
        } else {
            self.format_values(args, &vals, Some(0), "", "")
        };
        self.call_extern(names::ERROR, self.t_void(), &[uc, msg]);
        Ok(self.i32c(code as i64))
    }

    /// The arguments of `ferrohalide_error_formatted` for a message of
    /// `args` (lane 0 of vector values): a constant format with a marker
    /// byte per value, and the four values as 64-bit words. None when the
    /// message has more values, or text holding a marker byte; such a
    /// message is built part by part.
    fn formatted_error(&mut self, args: &[Expr], vals: &[Val]) -> Option<(Val, Vec<Val>)> {
        let mut format = String::new();
        let mut words = Vec::new();
        for (a, &v) in args.iter().zip(vals) {
            if let ExprNode::StringImm(text) = a.node() {
                if text.bytes().any(|b| (1..=6).contains(&b)) {
                    return None;
                }
                format.push_str(text);
                continue;
            }
            let t = a.ty().element_of();
            let v = if a.ty().is_vector() { self.extract(v, 0) } else { v };
            let i64t = self.t_i64();
            let (marker, word) = if t.is_handle() {
                ('\u{6}', self.cast(Op::LLVMPtrToInt, v, i64t))
            } else if t.is_bool() {
                ('\u{5}', self.int_resize(v, i64t, false))
            } else if t.is_float() {
                let d = self.float_resize(v, self.t_f64());
                (if t.bits == 64 { '\u{3}' } else { '\u{4}' }, self.cast(Op::LLVMBitCast, d, i64t))
            } else if t.is_int() {
                ('\u{1}', self.int_resize(v, i64t, true))
            } else {
                ('\u{2}', self.int_resize(v, i64t, false))
            };
            format.push(marker);
            words.push(word);
        }
        if words.len() > 4 {
            return None;
        }
        words.resize(4, self.cint(self.t_i64(), 0));
        Some((self.global_string(&format), words))
    }
}
