//! Printing the IR, close to Halide's `Stmt` printing. Used for
//! `compile_to_lowered_stmt`, per-pass debug dumps and snapshot tests.
//!
//! One walk (`IrPrinter`) decides what is printed and in which order; it
//! hands classified pieces of text (`Token`) and the block structure to an
//! `IrSink`. The plain-text sink here ignores the classes; the HTML sink
//! (`printer_html.rs`) turns them into styled, foldable markup. Keeping the
//! walk in one place means both formats always show the same statement.

use std::fmt::{self, Display, Formatter};

use super::expr::{BinOp, CallKind, Expr, ExprNode};
use super::stmt::{MemoryType, Stmt, StmtNode};

/// What a piece of printed text is, for renderers that style it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token {
    /// Statement keywords: `let`, `for`, `produce`, `allocate`, ...
    Keyword,
    /// Variables, buffers and Funcs.
    Name,
    /// Numeric immediates.
    Number,
    /// String immediates (already quoted).
    Str,
    /// Types in casts, allocations and realizations.
    Type,
    /// Operators and punctuation.
    Op,
    /// Names of called functions and intrinsics.
    Call,
}

/// Where printed IR goes. Lines are delimited by `start_line`/`end_line`;
/// a statement with a body (loop, produce, realize, if, ...) is bracketed by
/// `open_block` (before its header line), `begin_body` (after it) and
/// `close_block` (after its closing line), so a renderer can fold it.
pub trait IrSink {
    fn token(&mut self, kind: Token, text: &str) -> fmt::Result;
    fn start_line(&mut self, depth: usize) -> fmt::Result;
    fn end_line(&mut self) -> fmt::Result;
    fn open_block(&mut self) -> fmt::Result {
        Ok(())
    }
    fn begin_body(&mut self) -> fmt::Result {
        Ok(())
    }
    /// The body is done; the block's closing line (if any) follows.
    fn end_body(&mut self) -> fmt::Result {
        Ok(())
    }
    fn close_block(&mut self) -> fmt::Result {
        Ok(())
    }
}

/// The plain-text sink: two spaces of indentation per nesting level.
pub struct TextSink<'a, W: fmt::Write + ?Sized> {
    out: &'a mut W,
}

impl<'a, W: fmt::Write + ?Sized> TextSink<'a, W> {
    pub fn new(out: &'a mut W) -> Self {
        TextSink { out }
    }
}

impl<W: fmt::Write + ?Sized> IrSink for TextSink<'_, W> {
    fn token(&mut self, _kind: Token, text: &str) -> fmt::Result {
        self.out.write_str(text)
    }
    fn start_line(&mut self, depth: usize) -> fmt::Result {
        for _ in 0..depth {
            self.out.write_str("  ")?;
        }
        Ok(())
    }
    fn end_line(&mut self) -> fmt::Result {
        self.out.write_char('\n')
    }
}

/// The walk shared by every output format.
pub struct IrPrinter<'a, S: IrSink + ?Sized> {
    sink: &'a mut S,
    depth: usize,
}

impl<'a, S: IrSink + ?Sized> IrPrinter<'a, S> {
    pub fn new(sink: &'a mut S) -> Self {
        IrPrinter { sink, depth: 0 }
    }

    fn kw(&mut self, s: &str) -> fmt::Result {
        self.sink.token(Token::Keyword, s)
    }
    fn op(&mut self, s: &str) -> fmt::Result {
        self.sink.token(Token::Op, s)
    }
    fn name(&mut self, s: &str) -> fmt::Result {
        self.sink.token(Token::Name, s)
    }
    fn ty(&mut self, t: &impl Display) -> fmt::Result {
        self.sink.token(Token::Type, &t.to_string())
    }
    fn num(&mut self, s: &str) -> fmt::Result {
        self.sink.token(Token::Number, s)
    }

    /// `items` separated by `sep`, each printed by `each`.
    fn list<T>(
        &mut self,
        items: &[T],
        sep: &str,
        mut each: impl FnMut(&mut Self, &T) -> fmt::Result,
    ) -> fmt::Result {
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                self.op(sep)?;
            }
            each(self, it)?;
        }
        Ok(())
    }

    fn exprs(&mut self, items: &[Expr], sep: &str) -> fmt::Result {
        self.list(items, sep, |p, e| p.expr(e))
    }

    /// `(type)` prefix of a non-default-width immediate.
    fn imm(&mut self, prefix: Option<&dyn Display>, value: &str) -> fmt::Result {
        if let Some(t) = prefix {
            self.op("(")?;
            self.ty(&t)?;
            self.op(")")?;
        }
        self.num(value)
    }

    pub fn expr(&mut self, e: &Expr) -> fmt::Result {
        let ty = e.ty();
        match e.node() {
            ExprNode::IntImm(v) => {
                let t = (ty.bits != 32).then_some(&ty as &dyn Display);
                self.imm(t, &v.to_string())
            }
            ExprNode::UIntImm(v) => {
                if ty.is_bool() {
                    self.imm(Some(&"uint1"), if *v != 0 { "1" } else { "0" })
                } else {
                    self.imm(Some(&ty), &v.to_string())
                }
            }
            ExprNode::FloatImm(v) => {
                if ty.bits == 32 {
                    self.num(&format!("{v:?}f"))
                } else {
                    self.imm(Some(&ty), &format!("{v:?}"))
                }
            }
            ExprNode::StringImm(s) => self.sink.token(Token::Str, &format!("{s:?}")),
            ExprNode::Cast(a) => {
                self.ty(&ty)?;
                self.op("(")?;
                self.expr(a)?;
                self.op(")")
            }
            ExprNode::Reinterpret(a) => {
                self.sink.token(Token::Call, "reinterpret")?;
                self.op("<")?;
                self.ty(&ty)?;
                self.op(">(")?;
                self.expr(a)?;
                self.op(")")
            }
            ExprNode::Variable { name, .. } => self.name(name),
            ExprNode::Binary {
                op: op @ (BinOp::Min | BinOp::Max),
                a,
                b,
            } => self.call_form(op.symbol(), &[a.clone(), b.clone()]),
            ExprNode::Binary { op, a, b } => {
                self.op("(")?;
                self.expr(a)?;
                self.op(&format!(" {} ", op.symbol()))?;
                self.expr(b)?;
                self.op(")")
            }
            ExprNode::Not(a) => {
                self.op("!")?;
                self.expr(a)
            }
            ExprNode::Select { cond, t, f } => {
                self.call_form("select", &[cond.clone(), t.clone(), f.clone()])
            }
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                let plain = predicate.is_true() || predicate.is_const_value(1);
                if !plain {
                    self.op("(")?;
                }
                self.name(name)?;
                self.op("[")?;
                self.expr(index)?;
                self.op("]")?;
                if !plain {
                    self.kw(" if ")?;
                    self.expr(predicate)?;
                    self.op(")")?;
                }
                Ok(())
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => {
                let lanes = Expr::i32(*lanes as i64);
                self.call_form("ramp", &[base.clone(), stride.clone(), lanes])
            }
            ExprNode::Broadcast { value, lanes } => {
                self.call_form(&format!("x{lanes}"), std::slice::from_ref(value))
            }
            ExprNode::Let { name, value, body } => {
                self.op("(")?;
                self.kw("let ")?;
                self.name(name)?;
                self.op(" = ")?;
                self.expr(value)?;
                self.kw(" in ")?;
                self.expr(body)?;
                self.op(")")
            }
            ExprNode::Call { name, args, kind } => {
                let callee = match kind {
                    CallKind::Halide { value_index, func } if func.outputs() > 1 => {
                        format!("{name}.{value_index}")
                    }
                    _ => name.clone(),
                };
                self.call_form(&callee, args)
            }
            ExprNode::Shuffle { vectors, indices } => {
                self.sink.token(Token::Call, "shuffle")?;
                self.op("(")?;
                for v in vectors {
                    self.expr(v)?;
                    self.op(", ")?;
                }
                self.num(&format!("{indices:?}"))?;
                self.op(")")
            }
            ExprNode::VectorReduce { op, value } => {
                self.op("(")?;
                self.ty(&ty)?;
                self.op(")")?;
                self.call_form(&format!("vector_reduce_{op:?}"), std::slice::from_ref(value))
            }
        }
    }

    fn call_form(&mut self, callee: &str, args: &[Expr]) -> fmt::Result {
        self.sink.token(Token::Call, callee)?;
        self.op("(")?;
        self.exprs(args, ", ")?;
        self.op(")")
    }

    fn begin(&mut self) -> fmt::Result {
        self.sink.start_line(self.depth)
    }
    fn end(&mut self) -> fmt::Result {
        self.sink.end_line()
    }
    /// A whole line holding one expression.
    fn expr_line(&mut self, e: &Expr) -> fmt::Result {
        self.begin()?;
        self.expr(e)?;
        self.end()
    }

    /// Finish a block's header line (which ends in `{`), print `body` one
    /// level deeper, and close it with `}`.
    fn block_body(&mut self, body: &Stmt) -> fmt::Result {
        self.end()?;
        self.sink.begin_body()?;
        self.depth += 1;
        self.stmt(body)?;
        self.depth -= 1;
        self.sink.end_body()?;
        self.begin()?;
        self.op("}")?;
        self.end()?;
        self.sink.close_block()
    }

    pub fn stmt(&mut self, s: &Stmt) -> fmt::Result {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.begin()?;
                self.kw("let ")?;
                self.name(name)?;
                self.op(" = ")?;
                self.expr(value)?;
                self.end()?;
                self.stmt(body)
            }
            StmtNode::AssertStmt { condition, message } => {
                self.begin()?;
                self.kw("assert")?;
                self.op("(")?;
                self.expr(condition)?;
                self.op(", ")?;
                self.expr(message)?;
                self.op(")")?;
                self.end()
            }
            StmtNode::ProducerConsumer {
                name,
                is_producer,
                body,
            } => {
                self.sink.open_block()?;
                self.begin()?;
                self.kw(if *is_producer { "produce " } else { "consume " })?;
                self.name(name)?;
                self.op(" {")?;
                self.block_body(body)
            }
            StmtNode::Atomic {
                producer_name,
                mutex_name,
                body,
            } => {
                self.sink.open_block()?;
                self.begin()?;
                self.kw("atomic")?;
                self.op(" (")?;
                self.name(producer_name)?;
                if !mutex_name.is_empty() {
                    self.op(", ")?;
                    self.name(mutex_name)?;
                }
                self.op(") {")?;
                self.block_body(body)
            }
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                self.sink.open_block()?;
                self.begin()?;
                self.kw(for_type.name())?;
                self.op(" (")?;
                self.name(name)?;
                self.op(", ")?;
                self.expr(min)?;
                self.op(", ")?;
                self.expr(extent)?;
                self.op(") {")?;
                self.block_body(body)
            }
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } => {
                self.begin()?;
                if !predicate.is_const_value(1) {
                    self.kw("predicate")?;
                    self.op(" (")?;
                    self.expr(predicate)?;
                    self.op(")")?;
                    self.end()?;
                    self.begin()?;
                    self.op("  ")?;
                }
                self.name(name)?;
                self.op("[")?;
                self.expr(index)?;
                self.op("] = ")?;
                self.expr(value)?;
                self.end()
            }
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                self.begin()?;
                if !predicate.is_const_value(1) {
                    self.kw("predicate")?;
                    self.op(" (")?;
                    self.expr(predicate)?;
                    self.op(") ")?;
                }
                self.name(name)?;
                self.op("(")?;
                self.exprs(args, ", ")?;
                self.op(") = ")?;
                if values.len() > 1 {
                    self.op("{")?;
                    self.exprs(values, ", ")?;
                    self.op("}")?;
                } else {
                    self.exprs(values, ", ")?;
                }
                self.end()
            }
            StmtNode::Allocate {
                name,
                ty,
                memory_type,
                extents,
                condition,
                body,
            } => {
                self.begin()?;
                self.kw("allocate ")?;
                self.name(name)?;
                self.op("[")?;
                self.ty(ty)?;
                self.op(" * ")?;
                self.exprs(extents, " * ")?;
                self.op("]")?;
                if !matches!(memory_type, MemoryType::Auto) {
                    self.kw(" in ")?;
                    self.name(&format!("{memory_type:?}"))?;
                }
                if !condition.is_const_value(1) {
                    self.kw(" if ")?;
                    self.expr(condition)?;
                }
                self.end()?;
                self.stmt(body)
            }
            StmtNode::Free { name } => {
                self.begin()?;
                self.kw("free ")?;
                self.name(name)?;
                self.end()
            }
            StmtNode::Realize {
                name,
                types,
                bounds,
                condition,
                body,
                ..
            } => {
                self.sink.open_block()?;
                self.begin()?;
                self.kw("realize ")?;
                self.name(name)?;
                self.op("(")?;
                self.list(types, ", ", |p, t| p.ty(t))?;
                self.op(", ")?;
                self.list(bounds, ", ", |p, r| {
                    p.op("[")?;
                    p.expr(&r.min)?;
                    p.op(", ")?;
                    p.expr(&r.extent)?;
                    p.op("]")
                })?;
                self.op(")")?;
                if !condition.is_const_value(1) {
                    self.kw(" if ")?;
                    self.expr(condition)?;
                }
                self.op(" {")?;
                self.block_body(body)
            }
            StmtNode::Block(stmts) => stmts.iter().try_for_each(|s| self.stmt(s)),
            StmtNode::IfThenElse {
                condition,
                then_case,
                else_case,
            } => {
                self.sink.open_block()?;
                self.begin()?;
                self.kw("if")?;
                self.op(" (")?;
                self.expr(condition)?;
                self.op(") {")?;
                match else_case {
                    None => self.block_body(then_case),
                    Some(e) => {
                        self.end()?;
                        self.sink.begin_body()?;
                        self.depth += 1;
                        self.stmt(then_case)?;
                        self.depth -= 1;
                        self.sink.end_body()?;
                        self.sink.close_block()?;
                        // The else branch folds on its own.
                        self.sink.open_block()?;
                        self.begin()?;
                        self.op("} ")?;
                        self.kw("else")?;
                        self.op(" {")?;
                        self.block_body(e)
                    }
                }
            }
            StmtNode::Evaluate(e) => self.expr_line(e),
        }
    }

    /// `func name (arg, ...) {` body `}`: a whole lowered pipeline.
    pub fn function(&mut self, name: &str, args: &[String], body: &Stmt) -> fmt::Result {
        self.sink.open_block()?;
        self.begin()?;
        self.kw("func ")?;
        self.name(name)?;
        self.op(" (")?;
        self.list(args, ", ", |p, a| p.name(a))?;
        self.op(") {")?;
        self.block_body(body)
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        IrPrinter::new(&mut TextSink::new(f)).expr(self)
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        IrPrinter::new(&mut TextSink::new(f)).stmt(self)
    }
}

/// The text form of a whole lowered function (`compile_to_lowered_stmt`).
pub fn function_to_text(name: &str, args: &[String], body: &Stmt) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = IrPrinter::new(&mut TextSink::new(&mut out)).function(name, args, body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ForType, Type};

    fn sample() -> Stmt {
        let x = Expr::var_i32("x");
        let store = Stmt::provide(
            "f".to_string(),
            vec![Expr::add(x.clone(), Expr::i32(1))],
            vec![x.clone()],
            Expr::bool_const(true),
        );
        let body = Stmt::if_then_else(
            Expr::lt(x.clone(), Expr::i32(3)),
            store.clone(),
            Some(Stmt::evaluate(Expr::cast(Type::int(16), x))),
        );
        Stmt::producer(
            "f",
            Stmt::for_loop("x".to_string(), Expr::i32(0), Expr::i32(8), ForType::Serial, body),
        )
    }

    #[test]
    fn text_layout_matches_halide_style() {
        let expected = "produce f {\n  for (x, 0, 8) {\n    if ((x < 3)) {\n      f(x) = (x + 1)\n    } else {\n      int16(x)\n    }\n  }\n}\n";
        assert_eq!(sample().to_string(), expected);
    }

    #[test]
    fn function_wraps_the_body() {
        let s = function_to_text("f", &["in".into(), "f".into()], &sample());
        assert!(s.starts_with("func f (in, f) {\n  produce f {\n"));
        assert!(s.ends_with("  }\n}\n"));
    }

    #[test]
    fn immediates_carry_their_type_unless_int32() {
        assert_eq!(Expr::i32(-3).to_string(), "-3");
        assert_eq!(Expr::bool_const(true).to_string(), "(uint1)1");
        assert_eq!(Expr::cast(Type::int(16), Expr::i32(2)).to_string(), "int16(2)");
    }
}
