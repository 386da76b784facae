//! Tuples: the several values of a multi-valued Func (`f[x] = (a, b)`),
//! element access on a call to one (`f[x][1]`), and the operations Halide
//! defines over Tuples (select and mux, element by element).
//!
//! A Tuple-valued Func keeps one value per element in `Function.values`;
//! a call to element `i` is a `CallKind::Halide { value_index: i }`. Each
//! element gets its own storage when the Func is realized: a buffer named
//! `f.0`, `f.1`, ... (`element_buffer_name`), as in Halide; a Func with a
//! single value keeps the plain name `f`.

use crate::error::{Error, Result};
use crate::ir::{Expr, Type};
use crate::lang::func::FuncRef;
use crate::lang::function::Function;
use crate::lang::math::{mux, select};
use crate::lang::print::ir_type_name;

/// An ordered, non-empty list of Exprs, possibly of different types.
#[derive(Clone, Debug)]
pub struct Tuple {
    values: Vec<Expr>,
}

impl Tuple {
    pub fn new(values: Vec<Expr>) -> Result<Tuple> {
        if values.is_empty() {
            return Err(Error::user("Tuples must have at least one element\n"));
        }
        Ok(Tuple { values })
    }

    /// The values of a call: every element of a Tuple-valued Func, or the
    /// one value of a single-valued Func.
    pub fn from_func_ref(r: &FuncRef) -> Result<Tuple> {
        let n = r.size();
        if n == 1 {
            return Tuple::new(vec![r.to_expr()?]);
        }
        Tuple::new((0..n).map(|i| r.element(i)).collect::<Result<_>>()?)
    }

    pub fn size(&self) -> usize {
        self.values.len()
    }
    pub fn values(&self) -> &[Expr] {
        &self.values
    }
    pub fn into_values(self) -> Vec<Expr> {
        self.values
    }
    /// Element `i`, with Halide's error when out of range.
    pub fn get(&self, i: usize) -> Result<&Expr> {
        self.values
            .get(i)
            .ok_or_else(|| Error::user("Tuple access out of bounds\n"))
    }
}

impl FuncRef {
    /// How many values a call to this Func has: 0 while it is undefined
    /// (unless its types were declared up front).
    pub fn size(&self) -> usize {
        self.func.function.types().len()
    }

    /// Check `f[args][i]` as Halide does when the index is taken, and
    /// return the element number.
    pub fn tuple_index(&self, i: i64) -> Result<usize> {
        let f = &self.func;
        let name = f.name();
        if !f.defined() {
            return Err(Error::user(format!(
                "Can't call Func \"{name}\" because it has not yet been defined.\n"
            )));
        }
        let n = f.function.outputs();
        if n == 1 {
            return Err(Error::user(format!(
                "Can't index into a reference to Func \"{name}\", because it does not return a Tuple.\n"
            )));
        }
        if i < 0 || i as usize >= n {
            return Err(Error::user(format!(
                "Tuple index out of range in reference to Func \"{name}\".\n"
            )));
        }
        Ok(i as usize)
    }
}

/// The name of the buffer holding element `i` of the Func `func`, which
/// has `outputs` values: `f` for a single value, `f.i` otherwise.
pub fn element_buffer_name(func: &str, outputs: usize, i: usize) -> String {
    if outputs == 1 {
        func.to_string()
    } else {
        format!("{func}.{i}")
    }
}

/// The buffers holding the values of `f`, one per element.
pub fn element_buffer_names(f: &Function) -> Vec<String> {
    let (name, n) = (f.name(), f.types().len());
    (0..n).map(|i| element_buffer_name(&name, n, i)).collect()
}

/// Types as Halide prints them in messages: `int32`, or `(int32, float32)`.
pub fn types_text(types: &[Type]) -> String {
    if types.len() == 1 {
        return ir_type_name(types[0]);
    }
    let names: Vec<String> = types.iter().map(|t| ir_type_name(*t)).collect();
    format!("({})", names.join(", "))
}

fn check_same_size(sizes: &[usize]) -> Result<()> {
    if sizes.windows(2).any(|w| w[0] != w[1]) {
        return Err(Error::user(
            "select() on Tuples requires all Tuples to have identical sizes.\n",
        ));
    }
    Ok(())
}

/// `select(cond, t, f)` on Tuples: one select per element.
pub fn select_tuple(cond: &Expr, t: &Tuple, f: &Tuple) -> Result<Tuple> {
    check_same_size(&[t.size(), f.size()])?;
    let values = t
        .values
        .iter()
        .zip(&f.values)
        .map(|(a, b)| select(cond.clone(), a.clone(), b.clone()))
        .collect::<Result<_>>()?;
    Tuple::new(values)
}

/// `select((c0, c1, ...), t, f)`: element i chooses by condition i.
pub fn select_tuple_per_element(cond: &Tuple, t: &Tuple, f: &Tuple) -> Result<Tuple> {
    check_same_size(&[cond.size(), t.size(), f.size()])?;
    let values = cond
        .values
        .iter()
        .zip(t.values.iter().zip(&f.values))
        .map(|(c, (a, b))| select(c.clone(), a.clone(), b.clone()))
        .collect::<Result<_>>()?;
    Tuple::new(values)
}

/// The condition of one (condition, value) pair of a Tuple select chain.
#[derive(Clone, Debug)]
pub enum TupleCondition {
    /// One condition for every element.
    Shared(Expr),
    /// One condition per element.
    PerElement(Tuple),
}

/// `select(c0, v0, c1, v1, ..., default)` on Tuples: the first value whose
/// condition holds. Conditions are all shared or all per element.
pub fn select_tuple_chain(pairs: &[(TupleCondition, Tuple)], default: &Tuple) -> Result<Tuple> {
    let shared = pairs
        .iter()
        .filter(|(c, _)| matches!(c, TupleCondition::Shared(_)))
        .count();
    if shared != 0 && shared != pairs.len() {
        return Err(Error::user(
            "select() on Tuples may not mix Expr and Tuple for the condition elements.\n",
        ));
    }
    let mut acc = default.clone();
    for (c, v) in pairs.iter().rev() {
        acc = match c {
            TupleCondition::Shared(e) => select_tuple(e, v, &acc)?,
            TupleCondition::PerElement(cs) => select_tuple_per_element(cs, v, &acc)?,
        };
    }
    Ok(acc)
}

/// `mux(id, [t0, t1, ...])`: element i is `mux(id, [t0[i], t1[i], ...])`;
/// the first Tuple decides how many elements there are.
pub fn mux_tuples(id: &Expr, tuples: &[Tuple]) -> Result<Tuple> {
    let Some(first) = tuples.first() else {
        return Err(Error::user("mux() requires a non-empty vector of values\n"));
    };
    let values = (0..first.size())
        .map(|i| {
            let column = tuples
                .iter()
                .map(|t| t.get(i).cloned())
                .collect::<Result<Vec<_>>>()?;
            mux(id.clone(), column)
        })
        .collect::<Result<_>>()?;
    Tuple::new(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::func::Func;

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    #[test]
    fn empty_tuple_is_an_error() {
        let e = Tuple::new(vec![]).unwrap_err();
        assert_eq!(e.message, "Tuples must have at least one element\n");
    }

    #[test]
    fn select_on_tuples_is_per_element() {
        let a = Tuple::new(vec![x(), Expr::f32(1.0)]).unwrap();
        let b = Tuple::new(vec![Expr::i32(3), Expr::f32(2.0)]).unwrap();
        let c = Expr::gt(x(), Expr::i32(2));
        let r = select_tuple(&c, &a, &b).unwrap();
        assert_eq!(r.size(), 2);
        assert_eq!(r.values()[0].ty(), Type::i32());
        assert_eq!(r.values()[1].ty(), Type::float(32));
        let short = Tuple::new(vec![x()]).unwrap();
        let e = select_tuple(&c, &a, &short).unwrap_err();
        assert!(e.message.starts_with("select() on Tuples requires"));
        let mixed = select_tuple_chain(
            &[
                (TupleCondition::Shared(c.clone()), a.clone()),
                (
                    TupleCondition::PerElement(Tuple::new(vec![c.clone(), c.clone()]).unwrap()),
                    b.clone(),
                ),
            ],
            &a,
        )
        .unwrap_err();
        assert!(mixed.message.contains("may not mix Expr and Tuple"));
    }

    #[test]
    fn mux_of_tuples_uses_the_first_size() {
        let a = Tuple::new(vec![x(), x()]).unwrap();
        let b = Tuple::new(vec![x()]).unwrap();
        assert_eq!(mux_tuples(&x(), &[b.clone(), a.clone()]).unwrap().size(), 1);
        let e = mux_tuples(&x(), &[a, b]).unwrap_err();
        assert_eq!(e.message, "Tuple access out of bounds\n");
    }

    #[test]
    fn element_access_errors() {
        let f = Func::new(Some("tf"));
        let r = f.call(vec![x()]).unwrap();
        assert_eq!(r.size(), 0);
        assert!(r
            .tuple_index(0)
            .unwrap_err()
            .message
            .contains("has not yet been defined"));
        f.define(vec![x()], vec![x(), Expr::f32(0.5)]).unwrap();
        let r = f.call(vec![x()]).unwrap();
        assert_eq!(r.size(), 2);
        assert_eq!(r.tuple_index(1).unwrap(), 1);
        for bad in [-1, 2] {
            assert_eq!(
                r.tuple_index(bad).unwrap_err().message,
                format!(
                    "Tuple index out of range in reference to Func \"{}\".\n",
                    f.name()
                )
            );
        }
        let t = Tuple::from_func_ref(&r).unwrap();
        assert_eq!(t.values()[1].ty(), Type::float(32));
        let g = Func::new(Some("sg"));
        g.define(vec![x()], vec![x()]).unwrap();
        let e = g.call(vec![x()]).unwrap().tuple_index(0).unwrap_err();
        assert!(e.message.contains("because it does not return a Tuple"));
        assert_eq!(
            types_text(&[Type::i32(), Type::float(32)]),
            "(int32, float32)"
        );
    }
}
