//! Halide's textual form of expressions, as printed by Halide's
//! `operator<<(ostream&, Expr)` (the form users see in `str(expr)` and in
//! error messages): `(x + 1)`, `(x/2)`, `(uint8)3`, `float32(x)`,
//! `1.500000f`, `(float32)floor_f32(x)`, `min(a, b)`.
//!
//! This is separate from `ir::printer` (the lowering dump format) because
//! user-visible text must match Halide's exactly.

use crate::ir::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Type, TypeCode};

/// Type as Halide's IR printer writes it (`bool` is `uint1`).
pub fn ir_type_name(t: Type) -> String {
    let code = match t.code {
        TypeCode::Int => "int",
        TypeCode::UInt => "uint",
        TypeCode::Float => "float",
        TypeCode::Handle => "handle",
        TypeCode::BFloat => "bfloat",
    };
    let mut s = format!("{code}{}", t.bits);
    if t.lanes > 1 {
        s.push_str(&format!("x{}", t.lanes));
    }
    s
}

/// Type as Halide's Python bindings name it in reprs (`bool`, `int32x4`).
pub fn py_type_name(t: Type) -> String {
    t.to_string()
}

/// Halide's `std::fixed`/`std::scientific` float formatting with precision 6.
pub fn format_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v != 0.0 && v.abs().log10() < -6.0 {
        // C-style %e: mantissa with 6 digits, exponent with sign and >= 2 digits.
        let s = format!("{v:.6e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = if let Some(d) = exp.strip_prefix('-') {
            ('-', d)
        } else {
            ('+', exp)
        };
        let digits = if digits.len() < 2 {
            format!("0{digits}")
        } else {
            digits.to_string()
        };
        return format!("{mant}e{sign}{digits}");
    }
    format!("{v:.6}")
}

fn math_call_name(m: MathFn, t: Type) -> String {
    match m {
        // Halide's round is an intrinsic without a type suffix.
        MathFn::Round => "round".into(),
        _ => format!("{}_f{}", m.name(), t.bits),
    }
}

/// Longest text printed for one expression: a heavily shared expression
/// (`x ** (2**31 - 1)` is 31 shared squarings) would print as a tree of
/// billions of nodes, so printing stops here with `...`.
const MAX_PRINTED: usize = 1 << 20;

/// Deepest nesting printed: deeper subexpressions print as `...`, so that
/// printing recurses at most this deep.
const MAX_PRINT_DEPTH: usize = 10_000;

struct Printer {
    out: String,
    depth: usize,
    max_depth: usize,
}

impl Printer {
    fn print(&mut self, e: &Expr) {
        self.visit(e, false)
    }
    fn print_no_parens(&mut self, e: &Expr) {
        self.visit(e, true)
    }
    fn list(&mut self, args: &[Expr]) {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.print_no_parens(a);
        }
    }
    fn typep(&mut self, t: Type) {
        self.out.push('(');
        self.out.push_str(&ir_type_name(t));
        self.out.push(')');
    }

    fn visit(&mut self, e: &Expr, no_parens: bool) {
        if self.out.len() >= MAX_PRINTED || self.depth >= self.max_depth {
            if !self.out.ends_with("...") {
                self.out.push_str("...");
            }
            return;
        }
        self.depth += 1;
        self.visit_node(e, no_parens);
        self.depth -= 1;
    }

    fn visit_node(&mut self, e: &Expr, no_parens: bool) {
        let ty = e.ty();
        match e.node() {
            ExprNode::IntImm(v) => {
                if ty != Type::i32() {
                    self.typep(ty);
                }
                self.out.push_str(&v.to_string());
            }
            ExprNode::UIntImm(v) => {
                self.typep(ty);
                self.out.push_str(&v.to_string());
            }
            ExprNode::FloatImm(v) => {
                self.out.push_str(&format_float(*v));
                match ty.bits {
                    32 => self.out.push('f'),
                    16 => self.out.push('h'),
                    _ => {}
                }
            }
            ExprNode::StringImm(s) => {
                self.out.push('"');
                for c in s.bytes() {
                    if (b' '..=b'~').contains(&c) && c != b'\\' && c != b'"' {
                        self.out.push(c as char);
                    } else {
                        self.out.push('\\');
                        match c {
                            b'"' => self.out.push('"'),
                            b'\\' => self.out.push('\\'),
                            b'\t' => self.out.push('t'),
                            b'\r' => self.out.push('r'),
                            b'\n' => self.out.push('n'),
                            _ => self.out.push_str(&format!("x{c:02X}")),
                        }
                    }
                }
                self.out.push('"');
            }
            ExprNode::Cast(a) => {
                self.out.push_str(&ir_type_name(ty));
                self.out.push('(');
                self.print_no_parens(a);
                self.out.push(')');
            }
            ExprNode::Reinterpret(a) => {
                self.out
                    .push_str(&format!("reinterpret<{}>(", ir_type_name(ty)));
                self.print_no_parens(a);
                self.out.push(')');
            }
            ExprNode::Variable { name, .. } => {
                if ty != Type::i32() {
                    self.typep(ty);
                }
                self.out.push_str(name);
            }
            ExprNode::Binary {
                op: op @ (BinOp::Min | BinOp::Max),
                a,
                b,
            } => {
                self.out
                    .push_str(if *op == BinOp::Min { "min(" } else { "max(" });
                self.print_no_parens(a);
                self.out.push_str(", ");
                self.print_no_parens(b);
                self.out.push(')');
            }
            ExprNode::Binary { op, a, b } => {
                let sym = match op {
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                    other => other.symbol(),
                };
                if !no_parens {
                    self.out.push('(');
                }
                self.print(a);
                if matches!(op, BinOp::Mul | BinOp::Div) {
                    self.out.push_str(sym);
                } else {
                    self.out.push(' ');
                    self.out.push_str(sym);
                    self.out.push(' ');
                }
                self.print(b);
                if !no_parens {
                    self.out.push(')');
                }
            }
            ExprNode::Not(a) => {
                self.out.push('!');
                self.print(a);
            }
            ExprNode::Select { cond, t, f } => {
                self.out.push_str("select(");
                self.print_no_parens(cond);
                self.out.push_str(", ");
                self.print_no_parens(t);
                self.out.push_str(", ");
                self.print_no_parens(f);
                self.out.push(')');
            }
            ExprNode::Load { name, index, .. } => {
                self.out.push_str(name);
                self.out.push('[');
                self.print_no_parens(index);
                self.out.push(']');
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } => {
                self.out.push_str("ramp(");
                self.print_no_parens(base);
                self.out.push_str(", ");
                self.print_no_parens(stride);
                self.out.push_str(&format!(", {lanes})"));
            }
            ExprNode::Broadcast { value, lanes } => {
                self.out.push_str(&format!("x{lanes}("));
                self.print_no_parens(value);
                self.out.push(')');
            }
            ExprNode::Let { name, value, body } => {
                if !no_parens {
                    self.out.push('(');
                }
                self.out.push_str(&format!("let {name} = "));
                self.print(value);
                self.out.push_str(" in ");
                self.print(body);
                if !no_parens {
                    self.out.push(')');
                }
            }
            ExprNode::Call { name, args, kind } => {
                let call_name = match kind {
                    CallKind::Intrinsic(Intrinsic::Math(m)) => {
                        let arg_ty = args.first().map(|a| a.ty()).unwrap_or(ty);
                        math_call_name(*m, arg_ty)
                    }
                    _ => name.clone(),
                };
                if ty != Type::i32() {
                    if ty.is_handle() {
                        self.out.push_str(&ir_type_name(ty));
                    } else {
                        self.typep(ty);
                    }
                }
                self.out.push_str(&call_name);
                self.out.push('(');
                self.list(args);
                self.out.push(')');
            }
            ExprNode::Shuffle { vectors, indices } => {
                self.out.push_str("shuffle(");
                self.list(vectors);
                self.out.push_str(&format!(", {indices:?})"));
            }
            ExprNode::VectorReduce { op, value } => {
                self.out
                    .push_str(&format!("({})vector_reduce_{op:?}(", ir_type_name(ty)));
                self.print_no_parens(value);
                self.out.push(')');
            }
        }
    }
}

/// `e` as Halide prints it.
pub fn expr_to_string(e: &Expr) -> String {
    let print = |max_depth| {
        let mut p = Printer {
            out: String::new(),
            depth: 0,
            max_depth,
        };
        p.print(e);
        p.out
    };
    if e.depth() <= crate::stack::SHALLOW_DEPTH {
        return print(MAX_PRINT_DEPTH);
    }
    // Without a thread to print on, a deep expression prints shortened.
    crate::stack::try_on_large_stack(|| print(MAX_PRINT_DEPTH))
        .unwrap_or_else(|_| print(crate::stack::SHALLOW_DEPTH as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        assert_eq!(format_float(1.5), "1.500000");
        assert_eq!(format_float(1e-7), "1.000000e-07");
        assert_eq!(format_float(-2.5e-10), "-2.500000e-10");
        assert_eq!(format_float(f64::INFINITY), "inf");
        assert_eq!(format_float(0.0), "0.000000");
    }

    #[test]
    fn exprs() {
        let x = Expr::var_i32("x");
        let e = Expr::add(x.clone(), Expr::i32(1));
        assert_eq!(expr_to_string(&e), "(x + 1)");
        let d = Expr::div(x.clone(), Expr::i32(2));
        assert_eq!(expr_to_string(&d), "(x/2)");
        let u = Expr::cast(Type::uint(8), x.clone());
        assert_eq!(
            expr_to_string(&Expr::add(u.clone(), Expr::uint_imm(Type::uint(8), 3))),
            "(uint8(x) + (uint8)3)"
        );
        assert_eq!(expr_to_string(&Expr::bool_const(true)), "(uint1)1");
        assert_eq!(expr_to_string(&Expr::f32(1.5)), "1.500000f");
        assert_eq!(expr_to_string(&Expr::f64(0.1)), "0.100000");
    }
}
