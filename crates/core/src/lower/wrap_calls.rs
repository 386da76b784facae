//! Wrap calls: redirect each consumer's calls to a wrapped Func to the
//! wrapper made for it by `in_` / `clone_in` (Halide's WrapCalls.cpp).
//!
//! Assumes: `funcs` holds, by name, every Func the pipeline can reach
//! through calls and through wrappers, as the user built them. Guarantees:
//! the returned map has the same names; a Func whose calls change is
//! replaced by a private copy (the user's Func is never modified, so
//! re-scheduling or re-wrapping later keeps working), every other entry is
//! the user's Func itself. A custom wrapper takes precedence over a global
//! one; a wrapper's own definition and the wrapped Func are never
//! redirected; chains (`f.in_(g).in_(g)`) resolve to the outermost
//! wrapper. A custom wrapper for a consumer in the pipeline that does not
//! call the wrapped Func is an error, as in Halide. An ImageParam's
//! wrappers (`im.in_()`, recorded on its Parameter) redirect the image's
//! reads the same way.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};
use crate::ir::visit::mutate_expr_children;
use crate::ir::{CallKind, Expr, ExprNode, Mutator};
use crate::lang::function::Function;

use super::environment::direct_callees;

/// For one consumer: (wrapped Func name, the wrapper its calls go to).
type Substitutions = Vec<(String, Function)>;

/// Record that `consumer` calls `wrapper` instead of `wrapped`, merging
/// with chains already recorded: if `wrapped` is itself the wrapper of an
/// earlier entry, that entry now goes to `wrapper`; if `wrapper` is
/// itself wrapped in this consumer, `wrapped` goes to that outer wrapper.
fn add_substitution(subs: &mut Substitutions, wrapped: &str, wrapper: &Function) {
    for i in 0..subs.len() {
        if subs[i].1.name() == wrapped {
            subs[i].1 = wrapper.clone();
            return;
        }
        if subs[i].0 == wrapper.name() {
            let outer = subs.remove(i).1;
            subs.push((wrapped.to_string(), outer));
            return;
        }
    }
    subs.push((wrapped.to_string(), wrapper.clone()));
}

/// Replace calls to the wrapped Funcs by calls to their wrappers.
struct Redirect<'a> {
    subs: &'a Substitutions,
}

impl Mutator for Redirect<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        let e = mutate_expr_children(self, e);
        // An image read through its `in_` wrapper.
        if let ExprNode::Call { name, args, kind: CallKind::Image { param: Some(_), .. } } = e.node() {
            if let Some((_, w)) = self.subs.iter().find(|(n, _)| n == name) {
                return Expr::call(
                    e.ty(),
                    w.name(),
                    args.clone(),
                    CallKind::Halide { func: w.ptr(), value_index: 0 },
                );
            }
        }
        if let ExprNode::Call {
            name,
            args,
            kind: CallKind::Halide { value_index, .. },
        } = e.node()
        {
            if let Some((_, w)) = self.subs.iter().find(|(n, _)| n == name) {
                return Expr::call(
                    e.ty(),
                    w.name(),
                    args.clone(),
                    CallKind::Halide {
                        func: w.ptr(),
                        value_index: *value_index,
                    },
                );
            }
        }
        e
    }
}

/// Redirect the calls in an update's RDom predicate too. The RDom is the
/// user's (shared with the user's Func): the copy gets a domain of its own,
/// with the same RVars, and its RVars are linked to it.
fn redirect_predicate(u: &mut crate::lang::function::UpdateDefinition, r: &mut Redirect) {
    use crate::analysis::substitute::substitute_map;
    use crate::lang::rdom::ReductionDomain;
    let Some(d) = u.domain.clone() else { return };
    if !d.has_predicate() {
        return;
    }
    let old = d.predicate();
    let redirected = r.mutate_expr(&old);
    if redirected.same_as(&old) {
        return;
    }
    let own = ReductionDomain::from_vars(d.vars());
    let relink: HashMap<String, Expr> = d
        .vars()
        .into_iter()
        .map(|v| (v.name.clone(), Expr::rvar(v.name, own.clone())))
        .collect();
    own.set_predicate(Some(substitute_map(&relink, &redirected)));
    u.args = u.args.iter().map(|a| substitute_map(&relink, a)).collect();
    u.values = u.values.iter().map(|v| substitute_map(&relink, v)).collect();
    u.domain = Some(own);
}

/// Record what `wrappers` of `wrapped` (a Func, or an image) redirect: a
/// custom wrapper the calls of its consumer, the global one those of every
/// other Func of the pipeline except `wrapped` itself, its wrappers and
/// the consumers with a custom one.
fn record_wrappers(
    wrapped: &str,
    mut wrappers: Vec<(String, Function)>,
    sorted: &BTreeMap<&String, &Function>,
    subs: &mut BTreeMap<String, Substitutions>,
    global_wrappers: &mut Vec<String>,
) {
    wrappers.sort_by(|a, b| a.0.cmp(&b.0));
    let wrapper_names: Vec<String> = wrappers.iter().map(|(_, w)| w.name()).collect();
    for (consumer, wrapper) in &wrappers {
        if consumer.is_empty() {
            global_wrappers.push(wrapper.name());
            for in_func in sorted.keys() {
                let skip = in_func.as_str() == wrapped
                    || wrapper_names.contains(in_func)
                    || wrappers.iter().any(|(c, _)| c == *in_func);
                if !skip {
                    add_substitution(subs.entry((*in_func).clone()).or_default(), wrapped, wrapper);
                }
            }
        } else if sorted.contains_key(consumer) {
            // (A consumer outside this pipeline never calls anything here.)
            add_substitution(subs.entry(consumer.clone()).or_default(), wrapped, wrapper);
        }
    }
}

pub fn wrap_calls(funcs: &HashMap<String, Function>) -> Result<HashMap<String, Function>> {
    // Sorted, so chains merge the same way on every run.
    let sorted: BTreeMap<&String, &Function> = funcs.iter().collect();
    let mut subs: BTreeMap<String, Substitutions> = BTreeMap::new();
    let mut global_wrappers: Vec<String> = vec![];
    for (wrapped_name, wrapped) in &sorted {
        record_wrappers(wrapped_name, wrapped.wrappers(), &sorted, &mut subs, &mut global_wrappers);
    }
    // Images wrapped by `im.in_()`: the same rules, the image standing for
    // the wrapped Func.
    let mut images: Vec<crate::lang::parameter::Parameter> = vec![];
    for f in sorted.values() {
        for p in super::environment::wrapped_images_read_by(f) {
            if !images.iter().any(|q| q.same_as(&p)) {
                images.push(p);
            }
        }
    }
    for p in &images {
        record_wrappers(&p.name(), p.image_wrappers(), &sorted, &mut subs, &mut global_wrappers);
    }

    let mut out = funcs.clone();
    for (consumer, s) in &subs {
        if s.is_empty() {
            continue;
        }
        let original = &funcs[consumer];
        let copy = original.copy_as(consumer.clone())?;
        {
            let mut c = copy.write();
            let mut r = Redirect { subs: s };
            c.values = c.values.iter().map(|v| r.mutate_expr(v)).collect();
            for u in &mut c.updates {
                u.args = u.args.iter().map(|v| r.mutate_expr(v)).collect();
                u.values = u.values.iter().map(|v| r.mutate_expr(v)).collect();
                redirect_predicate(u, &mut r);
            }
        }
        out.insert(consumer.clone(), copy);
    }

    // Checked after redirection so chains of custom wrappers count as used.
    for (consumer, s) in &subs {
        let callees = direct_callees(&out[consumer])?;
        for (wrapped, wrapper) in s {
            let wname = wrapper.name();
            if global_wrappers.contains(&wname) || callees.iter().any(|c| c.name() == wname) {
                continue;
            }
            let mut names: Vec<String> = callees.iter().map(|c| c.name()).collect();
            names.sort();
            let listing: String = names.iter().map(|n| format!("  {n}\n")).collect();
            return Err(Error::user(format!(
                "Cannot wrap \"{wrapped}\" in \"{consumer}\" because \"{consumer}\" does not call \"{wrapped}\"\nDirect callees of \"{consumer}\" are:\n{listing}"
            )));
        }
    }
    Ok(out)
}
