//! Text form of the IR, close to Halide's `Stmt` printing. Used for
//! `compile_to_lowered_stmt`, per-pass debug dumps and snapshot tests.

use std::fmt::{self, Display, Formatter, Write};

use super::expr::{BinOp, CallKind, Expr, ExprNode};
use super::stmt::{Stmt, StmtNode};

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let ty = self.ty();
        match self.node() {
            ExprNode::IntImm(v) => {
                if ty.bits == 32 {
                    write!(f, "{v}")
                } else {
                    write!(f, "({ty}){v}")
                }
            }
            ExprNode::UIntImm(v) => {
                if ty.is_bool() {
                    write!(f, "{}", if *v != 0 { "(uint1)1" } else { "(uint1)0" })
                } else {
                    write!(f, "({ty}){v}")
                }
            }
            ExprNode::FloatImm(v) => {
                if ty.bits == 32 {
                    write!(f, "{v:?}f")
                } else {
                    write!(f, "({ty}){v:?}")
                }
            }
            ExprNode::StringImm(s) => write!(f, "{s:?}"),
            ExprNode::Cast(a) => write!(f, "{ty}({a})"),
            ExprNode::Reinterpret(a) => write!(f, "reinterpret<{ty}>({a})"),
            ExprNode::Variable { name, .. } => write!(f, "{name}"),
            ExprNode::Binary {
                op: op @ (BinOp::Min | BinOp::Max),
                a,
                b,
            } => write!(f, "{}({a}, {b})", op.symbol()),
            ExprNode::Binary { op, a, b } => write!(f, "({a} {} {b})", op.symbol()),
            ExprNode::Not(a) => write!(f, "!{a}"),
            ExprNode::Select { cond, t, f: fv } => write!(f, "select({cond}, {t}, {fv})"),
            ExprNode::Load {
                name,
                index,
                predicate,
            } => {
                if predicate.is_true() || (predicate.is_const_value(1)) {
                    write!(f, "{name}[{index}]")
                } else {
                    write!(f, "({name}[{index}] if {predicate})")
                }
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => write!(f, "ramp({base}, {stride}, {lanes})"),
            ExprNode::Broadcast { value, lanes } => write!(f, "x{lanes}({value})"),
            ExprNode::Let { name, value, body } => write!(f, "(let {name} = {value} in {body})"),
            ExprNode::Call { name, args, kind } => {
                let prefix = match kind {
                    CallKind::Halide { value_index, func } if func.outputs() > 1 => {
                        format!("{name}.{value_index}")
                    }
                    _ => name.clone(),
                };
                write!(f, "{prefix}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
            ExprNode::Shuffle { vectors, indices } => {
                write!(f, "shuffle(")?;
                for v in vectors {
                    write!(f, "{v}, ")?;
                }
                write!(f, "{indices:?})")
            }
            ExprNode::VectorReduce { op, value } => {
                write!(f, "({ty})vector_reduce_{op:?}({value})")
            }
        }
    }
}

struct StmtPrinter<'a> {
    out: &'a mut String,
    indent: usize,
}

impl StmtPrinter<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn print(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                self.line(&format!("let {name} = {value}"));
                self.print(body);
            }
            StmtNode::AssertStmt { condition, message } => {
                self.line(&format!("assert({condition}, {message})"))
            }
            StmtNode::ProducerConsumer {
                name,
                is_producer,
                body,
            } => {
                self.line(&format!(
                    "{} {name} {{",
                    if *is_producer { "produce" } else { "consume" }
                ));
                self.nested(body);
            }
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                self.line(&format!("{} ({name}, {min}, {extent}) {{", for_type.name()));
                self.nested(body);
            }
            StmtNode::Store {
                name,
                value,
                index,
                predicate,
            } => {
                if predicate.is_const_value(1) {
                    self.line(&format!("{name}[{index}] = {value}"));
                } else {
                    self.line(&format!("predicate ({predicate})"));
                    self.line(&format!("  {name}[{index}] = {value}"));
                }
            }
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                let args = args
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let vals = values
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let vals = if values.len() > 1 {
                    format!("{{{vals}}}")
                } else {
                    vals
                };
                if predicate.is_const_value(1) {
                    self.line(&format!("{name}({args}) = {vals}"));
                } else {
                    self.line(&format!("predicate ({predicate}) {name}({args}) = {vals}"));
                }
            }
            StmtNode::Allocate {
                name,
                ty,
                memory_type,
                extents,
                condition,
                body,
            } => {
                let ext = extents
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(" * ");
                let mut l = format!("allocate {name}[{ty} * {ext}]");
                if !matches!(memory_type, super::stmt::MemoryType::Auto) {
                    let _ = write!(l, " in {memory_type:?}");
                }
                if !condition.is_const_value(1) {
                    let _ = write!(l, " if {condition}");
                }
                self.line(&l);
                self.print(body);
            }
            StmtNode::Free { name } => self.line(&format!("free {name}")),
            StmtNode::Realize {
                name,
                types,
                bounds,
                condition,
                body,
                ..
            } => {
                let b = bounds
                    .iter()
                    .map(|r| format!("[{}, {}]", r.min, r.extent))
                    .collect::<Vec<_>>()
                    .join(", ");
                let t = types
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut l = format!("realize {name}({t}, {b})");
                if !condition.is_const_value(1) {
                    let _ = write!(l, " if {condition}");
                }
                l.push_str(" {");
                self.line(&l);
                self.nested(body);
            }
            StmtNode::Block(stmts) => stmts.iter().for_each(|s| self.print(s)),
            StmtNode::IfThenElse {
                condition,
                then_case,
                else_case,
            } => {
                self.line(&format!("if ({condition}) {{"));
                self.indent += 1;
                self.print(then_case);
                self.indent -= 1;
                if let Some(e) = else_case {
                    self.line("} else {");
                    self.nested(e);
                } else {
                    self.line("}");
                }
            }
            StmtNode::Evaluate(e) => self.line(&e.to_string()),
        }
    }

    fn nested(&mut self, body: &Stmt) {
        self.indent += 1;
        self.print(body);
        self.indent -= 1;
        self.line("}");
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        StmtPrinter {
            out: &mut out,
            indent: 0,
        }
        .print(self);
        f.write_str(&out)
    }
}
