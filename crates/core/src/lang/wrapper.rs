//! Wrappers (`f.in_()`, `f.in_(g)`, `f.in_([g, h])`, `f.clone_in(...)`):
//! a new Func that stands in for `f` in some consumers, so it can be
//! scheduled separately. Here the wrapper is made and recorded on `f`
//! (`Function.wrappers`, keyed by consumer name, "" for every consumer);
//! the consumers' calls are redirected only when a pipeline is lowered
//! (`lower/wrap_calls.rs`), so the user's definitions never change.
//!
//! An `in_` wrapper is `w(args) = f(args)`, inlined by default; a
//! `clone_in` wrapper is a copy of `f`'s definition and schedule. Names and
//! caching follow Halide: `f_global_wrapper$n`, `f_in_g$n`, `f_wrapper$n`
//! (a list of consumers), `f_clone_in_g$n`, `f_clone$n`, where `n` counts
//! the consumer entries `f` already has; asking again for the same
//! consumers returns the same wrapper.

use crate::error::{Error, Result};
use crate::ir::{CallKind, Expr};
use crate::lang::func::Func;
use crate::lang::function::Function;

/// Which wrapper to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapperKind {
    /// `in_`: calls `f`.
    In,
    /// `clone_in`: a copy of `f`.
    Clone,
}

/// `w(args) = f(args)` for every value of `f`, in `f`'s group (each keeps
/// the other alive, through weak links).
fn make_in_wrapper(wrapped: &Function, name: &str) -> Result<Function> {
    let w = wrapped.new_in_group(name);
    let args = wrapped.args();
    let call_args: Vec<Expr> = args.iter().map(|a| Expr::var_i32(a.clone())).collect();
    let values = wrapped
        .types()
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            Expr::call(
                t,
                wrapped.name(),
                call_args.clone(),
                CallKind::Halide {
                    func: wrapped.ptr(),
                    value_index: i,
                },
            )
        })
        .collect();
    w.set_pure_definition(args, values)?;
    Ok(w)
}

/// Halide's checks when `consumers` ask for the wrapper `existing` that
/// `consumers[0]` already has: the consumers listed must all share it, and
/// no consumer outside the list may.
fn check_shared(
    wrapped: &Function,
    entries: &[(String, Function)],
    consumers: &[Func],
    existing: &Function,
) -> Result<()> {
    let first = consumers[0].name();
    for (key, w) in entries {
        if *key == first {
            continue;
        }
        let listed = consumers.iter().any(|c| c.name() == *key);
        if listed && !w.same_as(existing) {
            return Err(Error::user(format!(
                "{key} should have shared the same wrapper as {first}\n"
            )));
        }
        if !listed && w.same_as(existing) {
            return Err(Error::user(format!(
                "Redefinition of shared wrapper [{} -> {}] in {first} is illegal since {key} shares the same wrapper but is not part of the redefinition\n",
                wrapped.name(),
                existing.name()
            )));
        }
    }
    Ok(())
}

/// The wrapper of `wrapped` for `consumers` (all of them when empty),
/// made and recorded on first use. `base` is the name before the `$n`.
pub fn get_wrapper(
    wrapped: &Func,
    base: &str,
    consumers: &[Func],
    kind: WrapperKind,
) -> Result<Func> {
    let f = &wrapped.function;
    let fname = f.name();
    if kind == WrapperKind::In && !f.has_pure_definition() {
        // (Halide's text: it builds the wrapper's call from an undefined Func.
        // A clone of an undefined Func is just another undefined Func.)
        return Err(Error::user(format!(
            "Can't construct a Tuple from a call to Func \"{fname}\" because it does not return a Tuple.\n"
        )));
    }
    let entries = f.wrappers();
    let key = consumers.first().map(|c| c.name()).unwrap_or_default();
    if let Some((_, existing)) = entries.iter().find(|(k, _)| *k == key) {
        if !consumers.is_empty() {
            check_shared(f, &entries, consumers, existing)?;
        }
        return Ok(Func::from_function(existing.clone()));
    }
    let first = consumers.first().map(|c| c.name()).unwrap_or_default();
    for c in consumers.iter().skip(1) {
        if entries.iter().any(|(k, _)| *k == c.name()) {
            return Err(Error::user(format!(
                "Cannot define the wrapper since {} already has a wrapper while {first} doesn't \n",
                c.name()
            )));
        }
    }
    if consumers.iter().any(|c| c.name() == fname) {
        return Err(Error::user(format!(
            "Cannot create wrapper of itself (\"{fname}\")\n"
        )));
    }
    let name = format!("{base}${}", entries.len());
    let w = match kind {
        WrapperKind::In => make_in_wrapper(f, &name)?,
        WrapperKind::Clone => f.copy_in_group(name)?,
    };
    if consumers.is_empty() {
        f.add_wrapper(String::new(), &w);
    } else {
        for consumer in consumers {
            f.add_wrapper(consumer.name(), &w);
        }
    }
    Ok(Func::from_function(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(name: &str, value: impl Fn() -> Expr) -> Func {
        let f = Func::new(Some(name));
        let x = Expr::var_i32("x");
        f.define(vec![x], vec![value()]).unwrap();
        f
    }

    #[test]
    fn names_caching_and_sharing() {
        let f = func("wr_f", || Expr::var_i32("x"));
        let g = func("wr_g", || Expr::var_i32("x"));
        let h = func("wr_h", || Expr::var_i32("x"));
        let global = f.in_().unwrap();
        assert_eq!(global.name(), "wr_f_global_wrapper$0");
        assert!(global.function.same_as(&f.in_().unwrap().function));
        let wg = f.in_func(&g).unwrap();
        assert_eq!(wg.name(), "wr_f_in_wr_g$1");
        assert!(wg.function.same_as(&f.in_func(&g).unwrap().function));
        // g already has a wrapper: the list reuses it (h is not added).
        let shared = f.in_funcs(&[g.clone(), h.clone()]).unwrap();
        assert!(shared.function.same_as(&wg.function));
        let e = f.in_funcs(&[h.clone(), g.clone()]).unwrap_err();
        assert_eq!(
            e.message,
            "Cannot define the wrapper since wr_g already has a wrapper while wr_h doesn't \n"
        );
        assert_eq!(
            f.in_func(&f).unwrap_err().message,
            "Cannot create wrapper of itself (\"wr_f\")\n"
        );
        let clone = f.clone_in(&h).unwrap();
        assert_eq!(clone.name(), "wr_f_clone_in_wr_h$2");
        assert_eq!(clone.function.values()[0].to_string(), "x");
    }

    #[test]
    fn shared_wrapper_redefinition() {
        let a = func("wr_a", || Expr::var_i32("x"));
        let b = func("wr_b", || Expr::var_i32("x"));
        let c = func("wr_c", || Expr::var_i32("x"));
        let w = a.in_funcs(&[b.clone(), c.clone()]).unwrap();
        assert_eq!(w.name(), "wr_a_wrapper$0");
        assert!(a
            .in_funcs(&[c.clone(), b.clone()])
            .unwrap()
            .function
            .same_as(&w.function));
        let e = a.in_func(&b).unwrap_err();
        assert!(e.message.starts_with(
            "Redefinition of shared wrapper [wr_a -> wr_a_wrapper$0] in wr_b is illegal since wr_c"
        ));
        assert!(a.in_funcs(&[]).is_err());
    }
}
