//! Storage flattening (Halide's StorageFlattening.cpp).
//!
//! Assumes: bounds inference is done, so every Realize has concrete bounds.
//! Guarantees: no Realize, Provide or Func/image Calls remain. Each Realize
//! becomes an Allocate of the product of its extents, with `f.min.d`,
//! `f.extent.d` and `f.stride.d` lets (dimension 0 dense); Provides become
//! Stores and calls become Loads, indexed `sum((arg_d - f.min.d) * f.stride.d)`.
//! Output and input buffers use the same names, which the backend defines.
//! A Tuple-valued Func has one buffer per element, `f.0`, `f.1`, ...: a
//! Realize of several types makes one Allocate each, a Provide of several
//! values one Store each, and a call to element `i` loads from `f.i`.

use crate::error::{Error, Result};
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{CallKind, Expr, ExprNode, Mutator, Stmt, StmtNode};
use crate::lang::tuple::element_buffer_name;

/// The flat element index of `args` in buffer `name`.
pub fn flat_index(name: &str, args: &[Expr]) -> Expr {
    let mut idx: Option<Expr> = None;
    for (d, a) in args.iter().enumerate() {
        let off = Expr::sub(a.clone(), Expr::var_i32(format!("{name}.min.{d}")));
        let term = Expr::mul(off, Expr::var_i32(format!("{name}.stride.{d}")));
        idx = Some(match idx {
            None => term,
            Some(i) => Expr::add(i, term),
        });
    }
    idx.unwrap_or_else(|| Expr::i32(0))
}

struct Flatten {
    error: Option<Error>,
}

impl Mutator for Flatten {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e2 = mutate_expr_children(self, e);
        if let ExprNode::Call { name, args, kind } = e2.node() {
            let buffer = match kind {
                CallKind::Halide { func, value_index } => {
                    element_buffer_name(name, func.outputs(), *value_index)
                }
                CallKind::Image { .. } => name.clone(),
                _ => return e2,
            };
            if args.iter().any(|a| a.ty() != crate::ir::Type::i32()) {
                self.error
                    .get_or_insert(Error::internal(format!("non-Int(32) index into {name}")));
            }
            return Expr::load(
                e2.ty(),
                buffer.clone(),
                flat_index(&buffer, args),
                Expr::bool_const(true),
            );
        }
        e2
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::Provide {
                name,
                values,
                args,
                predicate,
            } => {
                let a: Vec<Expr> = args.iter().map(|x| self.mutate_expr(x)).collect();
                let predicate = self.mutate_expr(predicate);
                if values.len() == 1 {
                    let v = self.mutate_expr(&values[0]);
                    return Stmt::store(name.clone(), v, flat_index(name, &a), predicate);
                }
                // A Tuple: one store per element, into its own buffer. Every
                // value is computed before the first store, so a definition
                // that reads the Func it writes (an update) sees old values.
                let n = values.len();
                let buffers: Vec<String> =
                    (0..n).map(|i| element_buffer_name(name, n, i)).collect();
                let stores: Vec<Stmt> = buffers
                    .iter()
                    .zip(values)
                    .map(|(b, v)| {
                        let value = Expr::var(v.ty(), format!("{b}.value"));
                        Stmt::store(b.clone(), value, flat_index(b, &a), predicate.clone())
                    })
                    .collect();
                let mut out = Stmt::block(stores);
                for (b, v) in buffers.iter().zip(values).rev() {
                    out = Stmt::let_stmt(format!("{b}.value"), self.mutate_expr(v), out);
                }
                out
            }
            StmtNode::Realize {
                name,
                types,
                memory_type,
                bounds,
                condition,
                body,
            } => {
                // One allocation per Tuple element (`f.0`, `f.1`, ...), the
                // first outermost, each with its own min/extent/stride names.
                let mut out = self.mutate_stmt(body);
                for (i, ty) in types.iter().enumerate().rev() {
                    let name = element_buffer_name(name, types.len(), i);
                    let extents: Vec<Expr> = (0..bounds.len())
                        .map(|d| Expr::var_i32(format!("{name}.extent.{d}")))
                        .collect();
                    out = Stmt::new(StmtNode::Allocate {
                        name: name.clone(),
                        ty: *ty,
                        memory_type: *memory_type,
                        extents,
                        condition: condition.clone(),
                        body: out,
                    });
                    // Strides: dense, dimension 0 innermost.
                    for d in (0..bounds.len()).rev() {
                        let stride = if d == 0 {
                            Expr::i32(1)
                        } else {
                            Expr::mul(
                                Expr::var_i32(format!("{name}.stride.{}", d - 1)),
                                Expr::var_i32(format!("{name}.extent.{}", d - 1)),
                            )
                        };
                        out = Stmt::let_stmt(format!("{name}.stride.{d}"), stride, out);
                    }
                    for (d, r) in bounds.iter().enumerate().rev() {
                        out = Stmt::let_stmt(format!("{name}.extent.{d}"), r.extent.clone(), out);
                        out = Stmt::let_stmt(format!("{name}.min.{d}"), r.min.clone(), out);
                    }
                }
                out
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

pub fn storage_flattening(s: &Stmt) -> Result<Stmt> {
    let mut f = Flatten { error: None };
    let out = f.mutate_stmt(s);
    match f.error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::ir::{ForType, Range, Type};
    use crate::lang::function::Function;
    use crate::lower::vectorize_loops::test_interpreter::{run, Memory};

    /// A two-valued Func `f` (int32, uint8), defined only so calls can name it.
    fn pair() -> Function {
        let f = Function::new("f");
        f.set_pure_definition(
            vec!["x".into()],
            vec![
                Expr::var_i32("x"),
                Expr::cast(Type::uint(8), Expr::var_i32("x")),
            ],
        );
        f
    }

    fn element(f: &Function, i: usize, x: Expr) -> Expr {
        let ty = f.types()[i];
        Expr::call(
            ty,
            "f",
            vec![x],
            CallKind::Halide {
                func: f.clone(),
                value_index: i,
            },
        )
    }

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    fn serial(body: Stmt) -> Stmt {
        Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), ForType::Serial, body)
    }

    /// `realize f over [0, 4) { body }`, flattened.
    fn flatten_in_realize(f: &Function, body: Stmt) -> Stmt {
        let realize = Stmt::new(StmtNode::Realize {
            name: "f".into(),
            types: f.types(),
            memory_type: Default::default(),
            bounds: vec![Range::new(Expr::i32(0), Expr::i32(4))],
            condition: Expr::bool_const(true),
            body,
        });
        storage_flattening(&realize).unwrap()
    }

    fn output_memory() -> (Memory, HashMap<String, i64>) {
        let mem: Memory = [("out".to_string(), vec![0; 4])].into_iter().collect();
        let scalars = [("out.min.0", 0), ("out.stride.0", 1)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        (mem, scalars)
    }

    #[test]
    fn a_multi_value_realization_gets_one_allocation_per_element() {
        let f = pair();
        let produce = serial(Stmt::provide(
            "f",
            vec![
                Expr::mul(x(), Expr::i32(100)),
                Expr::cast(Type::uint(8), Expr::add(x(), Expr::i32(250))),
            ],
            vec![x()],
            Expr::bool_const(true),
        ));
        // out(x) = f(x)[0] + int32(f(x)[1])
        let consume = serial(Stmt::provide(
            "out",
            vec![Expr::add(
                element(&f, 0, x()),
                Expr::cast(Type::i32(), element(&f, 1, x())),
            )],
            vec![x()],
            Expr::bool_const(true),
        ));
        let s = flatten_in_realize(&f, Stmt::block(vec![produce, consume]));
        let text = s.to_string();
        for part in [
            "allocate f.0[int32",
            "allocate f.1[uint8",
            "let f.0.stride.0",
            "let f.1.min.0",
        ] {
            assert!(text.contains(part), "missing `{part}` in\n{text}");
        }
        assert!(!text.contains("allocate f["), "{text}");
        let (mem, scalars) = output_memory();
        let out = run(&s, &mem, &scalars).unwrap();
        // The uint8 element wraps: 250 + x mod 256.
        let want: Vec<i64> = (0..4).map(|x| x * 100 + (250 + x) % 256).collect();
        assert_eq!(out["out"], want);
    }

    #[test]
    fn every_value_is_computed_before_any_element_is_stored() {
        // f(x) = (x, x + 10), then f(x) = (f(x)[1], f(x)[0]) as an update
        // would: the second store must see the first element's old value.
        let f = Function::new("f");
        f.set_pure_definition(vec!["x".into()], vec![x(), x()]);
        let init = serial(Stmt::provide(
            "f",
            vec![x(), Expr::add(x(), Expr::i32(10))],
            vec![x()],
            Expr::bool_const(true),
        ));
        let swap = serial(Stmt::provide(
            "f",
            vec![element(&f, 1, x()), element(&f, 0, x())],
            vec![x()],
            Expr::bool_const(true),
        ));
        let read = serial(Stmt::provide(
            "out",
            vec![Expr::sub(
                Expr::mul(element(&f, 0, x()), Expr::i32(100)),
                element(&f, 1, x()),
            )],
            vec![x()],
            Expr::bool_const(true),
        ));
        let s = flatten_in_realize(&f, Stmt::block(vec![init, swap, read]));
        let (mem, scalars) = output_memory();
        let out = run(&s, &mem, &scalars).unwrap();
        let want: Vec<i64> = (0..4).map(|x| (x + 10) * 100 - x).collect();
        assert_eq!(out["out"], want);
    }

    #[test]
    fn single_values_keep_the_plain_name() {
        assert_eq!(element_buffer_name("f", 1, 0), "f");
        assert_eq!(element_buffer_name("f", 3, 2), "f.2");
        let f = Function::new("f");
        f.set_pure_definition(vec!["x".into()], vec![x()]);
        let s = flatten_in_realize(
            &f,
            serial(Stmt::provide(
                "f",
                vec![x()],
                vec![x()],
                Expr::bool_const(true),
            )),
        );
        let text = s.to_string();
        assert!(text.contains("allocate f[int32"), "{text}");
        assert!(!text.contains("f.0"), "{text}");
    }
}
