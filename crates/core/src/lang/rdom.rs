//! `RDom` / `RVar`: reduction domains. An RDom is a box of reduction
//! variables (each with a min and an extent) plus an optional predicate
//! (`where`); an update definition that mentions its RVars iterates over
//! every point of the box where the predicate holds, `r.x` fastest.
//!
//! An RVar in an Expr is a `Variable` whose `rdom` links the domain, so a
//! definition can tell which domain it iterates over (Halide's
//! `Variable::reduction_domain`). The domain is shared: `where` changes it
//! in place, which is only allowed until a definition or inline reduction
//! uses it (`freeze`), since definitions read the predicate when lowered.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::analysis::substitute::substitute_map;
use crate::error::{Error, Result};
use crate::ir::visit::for_each_expr;
use crate::ir::{Expr, ExprNode, Type};
use crate::lang::operators::cast;
use crate::lang::print::expr_to_string;
use crate::lang::var::unique_name;

/// One dimension of a reduction domain.
#[derive(Clone, Debug)]
pub struct ReductionVariable {
    pub name: String,
    /// Int(32).
    pub min: Expr,
    /// Int(32).
    pub extent: Expr,
}

#[derive(Debug)]
pub struct RDomContents {
    pub vars: Vec<ReductionVariable>,
    /// The `where` conditions, ANDed in the order given, with this
    /// domain's RVars stored as plain Variables: an RVar links its domain,
    /// so keeping them would make the domain keep itself alive (Halide
    /// drops the links too). `ReductionDomain::predicate` restores them.
    predicate: Option<Expr>,
    /// Used by a definition: no more predicates.
    pub frozen: bool,
}

impl Drop for RDomContents {
    fn drop(&mut self) {
        crate::live::REDUCTION_DOMAINS.dropped();
    }
}

#[derive(Clone, Debug)]
pub struct ReductionDomain(Arc<RwLock<RDomContents>>);

/// The suffix Halide gives reduction variable `i`: x, y, z, w, then the index.
fn dim_suffix(i: usize) -> String {
    match i {
        0 => "x".into(),
        1 => "y".into(),
        2 => "z".into(),
        3 => "w".into(),
        n => n.to_string(),
    }
}

/// One side of a `Range(min, extent)`, which must convert to Int(32)
/// without changing its value (Halide's `Range` constructor): `2.0` becomes
/// `2`, while `2.5`, `2**40` or a uint32 Param are user errors.
pub fn range_bound(e: &Expr, what: &str) -> Result<Expr> {
    crate::lang::math::lossless_cast(Type::i32(), e).ok_or_else(|| {
        Error::user(format!(
            "Range {what} is not representable as an int32: {}",
            expr_to_string(e)
        ))
    })
}

/// The message for an RDom given an undefined bound.
pub fn undefined_bound_error(name: Option<&str>) -> Error {
    Error::user(format!(
        "The RDom {}may not be constructed with undefined Exprs.\n",
        name.map(|n| format!("{n} ")).unwrap_or_default()
    ))
}

impl ReductionDomain {
    /// `RDom([(min, extent), ...], name)`. Bounds must be integers and
    /// may not depend on Vars or RVars; they are cast to Int(32). An
    /// unnamed domain gets a fresh prefix (`r<n>`).
    pub fn new(name: Option<&str>, bounds: Vec<(Expr, Expr)>) -> Result<ReductionDomain> {
        let prefix = match name {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => unique_name('r'),
        };
        let mut vars = Vec::with_capacity(bounds.len());
        for (i, (min, extent)) in bounds.into_iter().enumerate() {
            for e in [&min, &extent] {
                if !(e.ty().is_int_or_uint() || e.ty().is_bool()) || !e.ty().is_scalar() {
                    return Err(Error::type_error(format!(
                        "RDom bounds must be integers, but dimension {i} has a bound of type {}",
                        crate::lang::print::ir_type_name(e.ty())
                    )));
                }
            }
            for e in [&min, &extent] {
                if let Some(v) = crate::ir::visit::first_free_variable(e) {
                    return Err(Error::user(format!(
                        "The bounds of the RDom {prefix} in dimension {i} are:\n  {} ... {}\nThese depend on the variable {v}.\nThe bounds of an RDom may not depend on a free variable.\n",
                        expr_to_string(&min),
                        expr_to_string(&extent)
                    )));
                }
            }
            let to_i32 = |e: Expr| -> Result<Expr> {
                if e.ty() == Type::i32() {
                    Ok(e)
                } else {
                    cast(Type::i32(), e)
                }
            };
            vars.push(ReductionVariable {
                name: format!("{prefix}${}", dim_suffix(i)),
                min: to_i32(min)?,
                extent: to_i32(extent)?,
            });
        }
        crate::live::REDUCTION_DOMAINS.created();
        Ok(ReductionDomain(Arc::new(RwLock::new(RDomContents {
            vars,
            predicate: None,
            frozen: false,
        }))))
    }

    /// A domain with the given variables (names as given) and predicate;
    /// for the domains `rfactor` splits a reduction into.
    pub fn from_vars(vars: Vec<ReductionVariable>) -> ReductionDomain {
        crate::live::REDUCTION_DOMAINS.created();
        ReductionDomain(Arc::new(RwLock::new(RDomContents {
            vars,
            predicate: None,
            frozen: true,
        })))
    }

    /// Replace the predicate (of a domain `from_vars` made, or re-linked
    /// when a definition stores it).
    pub fn set_predicate(&self, predicate: Option<Expr>) {
        let stored = predicate.map(|p| self.unlinked(&p));
        self.write().predicate = stored;
    }

    /// `e` with this domain's RVars as plain Variables (how the predicate
    /// is stored).
    fn unlinked(&self, e: &Expr) -> Expr {
        let plain = self
            .vars()
            .into_iter()
            .map(|v| (v.name.clone(), Expr::var_i32(v.name)))
            .collect();
        substitute_map(&plain, e)
    }

    /// The stored predicate with this domain's RVars linked again.
    fn relinked(&self, e: &Expr) -> Expr {
        let linked = self
            .vars()
            .into_iter()
            .map(|v| (v.name.clone(), Expr::rvar(v.name, self.clone())))
            .collect();
        substitute_map(&linked, e)
    }

    fn read(&self) -> RwLockReadGuard<'_, RDomContents> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }
    fn write(&self) -> RwLockWriteGuard<'_, RDomContents> {
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn vars(&self) -> Vec<ReductionVariable> {
        self.read().vars.clone()
    }
    pub fn dimensions(&self) -> usize {
        self.read().vars.len()
    }
    /// The conjunction of the `where` conditions (true if none).
    pub fn predicate(&self) -> Expr {
        let stored = self.read().predicate.clone();
        match stored {
            Some(p) => self.relinked(&p),
            None => Expr::bool_const(true),
        }
    }
    pub fn has_predicate(&self) -> bool {
        self.read().predicate.is_some()
    }
    pub fn same_as(&self, other: &ReductionDomain) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// An identity for the domain (its address), valid while it lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }
    pub fn is_frozen(&self) -> bool {
        self.read().frozen
    }
    /// Called when a definition uses the domain.
    pub fn freeze(&self) {
        // Only the first use writes: a write lock queued behind another
        // thread's nested read locks would deadlock it.
        if !self.is_frozen() {
            self.write().frozen = true;
        }
    }

    /// Dimension `i` as an RVar.
    pub fn rvar(&self, i: usize) -> Option<RVar> {
        let c = self.read();
        c.vars.get(i).map(|v| RVar {
            name: v.name.clone(),
            domain: Some((self.clone(), i)),
        })
    }

    /// Halide's text for messages and `repr`: `RDom(\n  r$x(0, 5)\n)`.
    pub fn describe(&self) -> String {
        let mut s = String::from("RDom(\n");
        for v in &self.read().vars {
            s.push_str(&format!(
                "  {}({}, {})\n",
                v.name,
                expr_to_string(&v.min),
                expr_to_string(&v.extent)
            ));
        }
        s.push(')');
        s
    }

    /// `where(predicate)`: AND a condition into the domain. It may use
    /// this domain's RVars, pure Vars and parameters, not another domain's
    /// RVars; not allowed once a definition used the domain.
    pub fn where_(&self, predicate: Expr) -> Result<()> {
        if self.is_frozen() {
            return Err(Error::user(format!(
                "{} cannot be given a new predicate, because it has already been used in the update definition of some function.\n",
                self.describe()
            )));
        }
        let mut foreign = false;
        for_each_expr(&predicate, &mut |e| {
            if let ExprNode::Variable { rdom: Some(d), .. } = e.node() {
                foreign |= !d.same_as(self);
            }
        });
        if foreign {
            return Err(Error::user(format!(
                "An RDom's predicate may only refer to its own RVars,  not the RVars of some other RDom. Cannot set the predicate to : {}\n",
                expr_to_string(&predicate)
            )));
        }
        if !predicate.ty().is_bool() || !predicate.ty().is_scalar() {
            // Halide's words: it ANDs the new condition into the old one.
            return Err(Error::user("lhs of And is not a bool\n"));
        }
        let predicate = self.unlinked(&predicate);
        let mut c = self.write();
        let new = match c.predicate.take() {
            None => predicate,
            Some(p) => Expr::and(p, predicate),
        };
        c.predicate = Some(new);
        Ok(())
    }
}

/// An RVar: a dimension of an RDom, or (with no domain) a name for the
/// products of splitting RVars in a schedule.
#[derive(Clone, Debug)]
pub struct RVar {
    pub name: String,
    pub domain: Option<(ReductionDomain, usize)>,
}

impl RVar {
    /// `RVar(name)`: a schedule name, with no domain.
    pub fn named(name: impl Into<String>) -> RVar {
        RVar {
            name: name.into(),
            domain: None,
        }
    }
    /// `RVar()`: a fresh schedule name.
    pub fn fresh() -> RVar {
        RVar::named(unique_name('r'))
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The RVar as an Expr.
    pub fn expr(&self) -> Expr {
        match &self.domain {
            Some((d, _)) => Expr::rvar(self.name.clone(), d.clone()),
            None => Expr::var_i32(self.name.clone()),
        }
    }
    fn bound(&self, what: &str) -> Result<Expr> {
        let Some((d, i)) = &self.domain else {
            return Err(Error::user(format!(
                "Can't get the {what} of RVar {}, because it does not belong to an RDom.\n",
                self.name
            )));
        };
        let v = d.read().vars[*i].clone();
        Ok(if what == "min" { v.min } else { v.extent })
    }
    pub fn min(&self) -> Result<Expr> {
        self.bound("min")
    }
    pub fn extent(&self) -> Result<Expr> {
        self.bound("extent")
    }
}

/// The one reduction domain whose RVars `exprs` use, if any; two different
/// domains are an error, built by `multiple` from the RVar names found.
pub fn domain_of(
    exprs: &[&Expr],
    multiple: impl Fn(&[String]) -> Error,
) -> Result<Option<ReductionDomain>> {
    let mut found: Option<ReductionDomain> = None;
    let mut names: Vec<String> = vec![];
    let mut clash = false;
    for e in exprs {
        for_each_expr(e, &mut |x| {
            if let ExprNode::Variable {
                name,
                rdom: Some(d),
                ..
            } = x.node()
            {
                match &found {
                    None => found = Some(d.clone()),
                    Some(f) if !f.same_as(d) => clash = true,
                    _ => {}
                }
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        });
    }
    if clash {
        return Err(multiple(&names));
    }
    Ok(found)
}

/// Does `e` use an RVar (of any domain)?
pub fn uses_rvars(e: &Expr) -> bool {
    let mut found = false;
    for_each_expr(e, &mut |x| {
        found |= matches!(x.node(), ExprNode::Variable { rdom: Some(_), .. });
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_bounds() {
        let r = ReductionDomain::new(Some("dom"), vec![(Expr::i32(0), Expr::i32(3)); 6]).unwrap();
        let names: Vec<String> = r.vars().into_iter().map(|v| v.name).collect();
        assert_eq!(
            names,
            ["dom$x", "dom$y", "dom$z", "dom$w", "dom$4", "dom$5"]
        );
        let u8 = Expr::uint_imm(Type::uint(8), 250);
        let r = ReductionDomain::new(None, vec![(u8.clone(), u8)]).unwrap();
        assert_eq!(r.vars()[0].min.ty(), Type::i32());
        assert!(r.vars()[0].name.starts_with('r'));
    }

    #[test]
    fn a_predicate_on_its_own_rvars_does_not_keep_the_domain() {
        let r = ReductionDomain::new(None, vec![(Expr::i32(0), Expr::i32(5)); 2]).unwrap();
        let (rx, ry) = (r.rvar(0).unwrap().expr(), r.rvar(1).unwrap().expr());
        r.where_(Expr::lt(rx, ry)).unwrap();
        // The getter gives the RVars back, linked to the domain.
        let p = r.predicate();
        let d = domain_of(&[&p], |_| Error::user("two domains")).unwrap();
        assert!(d.is_some_and(|d| d.same_as(&r)));
        drop(p);
        let w = Arc::downgrade(&r.0);
        drop(r);
        assert!(w.upgrade().is_none());
    }

    #[test]
    fn bad_bounds_and_predicates() {
        let e = ReductionDomain::new(None, vec![(Expr::var_i32("x"), Expr::i32(5))]).unwrap_err();
        assert!(e.message.contains("may not depend on a free variable"));
        let e = ReductionDomain::new(None, vec![(Expr::f32(0.5), Expr::i32(5))]).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Type);
        let r = ReductionDomain::new(None, vec![(Expr::i32(0), Expr::i32(5))]).unwrap();
        let s = ReductionDomain::new(None, vec![(Expr::i32(0), Expr::i32(5))]).unwrap();
        let sx = s.rvar(0).unwrap().expr();
        let e = r.where_(Expr::lt(sx.clone(), Expr::i32(1))).unwrap_err();
        assert!(e.message.contains("may only refer to its own RVars"));
        let rx = r.rvar(0).unwrap().expr();
        r.where_(Expr::lt(rx.clone(), Expr::i32(1))).unwrap();
        r.where_(Expr::gt(rx.clone(), Expr::i32(0))).unwrap();
        assert_eq!(
            expr_to_string(&r.predicate()),
            format!("(({0} < 1) && ({0} > 0))", r.vars()[0].name)
        );
        assert!(r.where_(Expr::add(rx.clone(), Expr::i32(1))).is_err());
        r.freeze();
        assert!(r.where_(Expr::lt(rx, Expr::i32(1))).is_err());
        let e = domain_of(&[&Expr::add(sx, r.rvar(0).unwrap().expr())], |n| {
            Error::user(n.join(","))
        })
        .unwrap_err();
        assert!(e.message.contains(','));
    }
}
