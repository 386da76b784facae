//! Update definitions: `f[args] = values` on a Func that already has a
//! pure definition, compound assignment (`f[x] += e`, which also defines
//! an undefined Func with the operator's identity first), and the Func
//! methods that describe updates (`num_update_definitions`, `update_args`,
//! `rvars`, `update(i)`). Halide's checks and messages, raised when the
//! definition is made.

use crate::error::{Error, Result};
use crate::ir::visit::for_each_expr;
use crate::ir::{CallKind, Expr, ExprNode, Type};
use crate::lang::func::{undefined_variable, Func, FuncRef};
use crate::lang::function::{exported, Function, UpdateDefinition};
use crate::lang::operators::{py_binary, scalar_to_expr, Op, Operand, PyOp};
use crate::lang::print::ir_type_name;
use crate::lang::rdom::{domain_of, RVar, ReductionDomain};
use crate::lang::stage::Stage;
use crate::lang::var::Var;
use crate::schedule::{Dim, StageSchedule, OUTERMOST};

/// A definition that calls other Funcs uses them: as in Halide, they can
/// no longer get new update definitions.
pub(crate) fn freeze_callees(me: &Function, exprs: &[Expr]) {
    for e in exprs {
        for_each_expr(e, &mut |x| {
            if let ExprNode::Call {
                kind: CallKind::Halide { func, .. },
                ..
            } = x.node()
            {
                // (One that no longer exists fails when lowered.)
                if !me.is(func) {
                    if let Some(f) = Function::from_ptr(func) {
                        f.freeze();
                    }
                }
            }
        });
    }
}

/// The default loop nest of an update: its RVars innermost (`r.x`
/// first), then its pure vars (first arg innermost), then `__outermost`.
pub fn update_stage_schedule(
    domain: Option<&ReductionDomain>,
    pure_vars: &[String],
) -> StageSchedule {
    let mut dims: Vec<Dim> = vec![];
    if let Some(d) = domain {
        dims.extend(d.vars().into_iter().map(|v| Dim::serial(v.name, true)));
    }
    for v in pure_vars {
        if !dims.iter().any(|d| d.var == *v) {
            dims.push(Dim::serial(v.clone(), false));
        }
    }
    dims.push(Dim::serial(OUTERMOST, false));
    StageSchedule {
        dims,
        ..StageSchedule::default()
    }
}

/// `f[args] = values` on a Func with a pure definition.
pub fn define_update(f: &Func, args: Vec<Expr>, values: Vec<Expr>) -> Result<()> {
    let name = f.name();
    let function = &f.function;
    let index = function.read().updates.len();
    if function.is_frozen() {
        return Err(Error::user(format!(
            "Func {name} cannot be given a new update definition, because it has already been realized or used in the definition of another Func.\n"
        )));
    }
    let pure_args = function.args();
    // A placeholder `_` stands for the implicit vars of the pure
    // definition's remaining dimensions.
    let args = crate::lang::func::expand_placeholder(&name, args, pure_args.len())?;
    let args = f.call(args)?.args;
    if args.len() != pure_args.len() {
        return Err(Error::user(format!(
            "Func \"{name}\" was called with {} arguments, but was defined with {}\n",
            args.len(),
            pure_args.len()
        )));
    }
    let in_update = || format!("In update definition {index} of Func \"{name}\":\n");
    let pure_types = function.output_types();
    if values.len() != pure_types.len() {
        return Err(Error::user(format!(
            "{}Number of tuple elements for update definition must match number of tuple elements for pure definition.\n",
            in_update()
        )));
    }
    for (i, (v, t)) in values.iter().zip(&pure_types).enumerate() {
        if v.ty() != *t {
            return Err(Error::user(format!(
                "{}Tuple element {i} of update definition has type {}, but pure definition has type {}\n",
                in_update(),
                ir_type_name(v.ty()),
                ir_type_name(*t)
            )));
        }
    }

    let update = UpdateDefinition {
        args: args.clone(),
        values: values.clone(),
        domain: None,
        stage: StageSchedule::default(),
        specializations: vec![],
        lets: vec![],
    };
    let pure_vars = update.pure_vars(&pure_args);
    let all: Vec<&Expr> = args.iter().chain(values.iter()).collect();
    let domain = domain_of(&all, |_| {
        Error::user(format!(
            "Multiple reduction domains found in definition of Func \"{name}\"\n"
        ))
    })?;
    let mut checked: Vec<Expr> = all.iter().map(|e| (*e).clone()).collect();
    if let Some(d) = &domain {
        checked.push(d.predicate());
    }
    for e in &checked {
        if let Some(v) = undefined_variable(e, &pure_vars) {
            return Err(Error::user(format!(
                "Undefined variable \"{v}\" in definition of Func \"{name}\"\n"
            )));
        }
    }
    // A self-reference must read the point being defined in every pure
    // position, or the update would depend on its own iteration order
    // over pure vars, which Halide leaves free.
    let mut bad_self_ref = false;
    for e in &all {
        for_each_expr(e, &mut |x| {
            if let ExprNode::Call {
                args: call_args,
                kind: CallKind::Halide { func, .. },
                ..
            } = x.node()
            {
                if !function.is(func) {
                    return;
                }
                for (i, lhs) in args.iter().enumerate() {
                    let pure = pure_vars
                        .iter()
                        .any(|p| Some(p.as_str()) == lhs.as_variable())
                        && lhs.as_variable() == Some(pure_args[i].as_str());
                    if pure && call_args[i].as_variable() != lhs.as_variable() {
                        bad_self_ref = true;
                    }
                }
            }
        });
    }
    if bad_self_ref {
        return Err(Error::user(format!(
            "In definition of Func \"{name}\":\nAll of a function's recursive references to itself must contain the same pure variables in the same places as on the left-hand-side.\n"
        )));
    }

    let all_pure = pure_vars.len() == pure_args.len()
        && args
            .iter()
            .zip(&pure_args)
            .all(|(a, p)| a.as_variable() == Some(p.as_str()));
    let reads_itself = all.iter().any(|e| {
        let mut found = false;
        for_each_expr(e, &mut |x| {
            if let ExprNode::Call {
                kind: CallKind::Halide { func, .. },
                ..
            } = x.node()
            {
                found |= function.is(func);
            }
        });
        found
    });
    if all_pure && !reads_itself && domain.is_none() {
        crate::error::user_warning(&format!(
            "{}Update definition completely hides earlier definitions,  because all the arguments are pure, it contains no self-references,  and no reduction domain. This may be an accidental re-definition of  an already-defined function.\n",
            in_update()
        ));
    }
    freeze_callees(function, &checked);
    if let Some(d) = &domain {
        d.freeze();
    }
    let stage = update_stage_schedule(domain.as_ref(), &pure_vars);
    let (args, values) = lower_random_in_update(update.args, update.values, &pure_vars, domain.as_ref());
    function.push_update(UpdateDefinition {
        domain,
        stage,
        args,
        values,
        ..update
    })
}

/// An update's random calls (in its args, values and its domain's
/// predicate) hash its tag, its pure vars (in argument order) and then its
/// RVars.
fn lower_random_in_update(
    args: Vec<Expr>,
    values: Vec<Expr>,
    pure_vars: &[String],
    domain: Option<&ReductionDomain>,
) -> (Vec<Expr>, Vec<Expr>) {
    use crate::lang::random::{lower_random, next_definition_tag};
    let mut free: Vec<Expr> = pure_vars.iter().map(|v| Expr::var_i32(v.clone())).collect();
    if let Some(d) = domain {
        free.extend(d.vars().into_iter().map(|v| Expr::rvar(v.name, d.clone())));
    }
    let tag = next_definition_tag();
    if let Some(d) = domain.filter(|d| d.has_predicate()) {
        // The domain is shared; Halide rewrites its predicate the same way.
        d.set_predicate(Some(lower_random(&d.predicate(), &free, tag)));
    }
    let lower = |es: Vec<Expr>| es.iter().map(|e| lower_random(e, &free, tag)).collect();
    (lower(args), lower(values))
}

/// The identity of a compound assignment operator, of type `t`.
fn identity(op: Op, t: Type) -> Expr {
    match op {
        Op::Mul | Op::Div => Expr::one(t),
        _ => Expr::zero(t),
    }
}

impl FuncRef {
    /// `f[args] op= rhs` (Python: `f[args] = f[args] op rhs`). An
    /// undefined Func is first defined as the identity of `op` with the
    /// type of `rhs`, over the args that are plain Vars (implicit vars
    /// elsewhere).
    pub fn compound_update(&self, op: Op, rhs: Operand) -> Result<()> {
        let f = &self.func;
        if !f.defined() {
            let t = scalar_to_expr(&rhs).ty();
            let mut names: Vec<String> = vec![];
            for (i, a) in self.args.iter().enumerate() {
                let n = match a.node() {
                    ExprNode::Variable {
                        name,
                        param: None,
                        rdom: None,
                    } if !names.contains(name) && name != "_" => name.clone(),
                    _ => Var::implicit(i).name().to_string(),
                };
                names.push(n);
            }
            f.function
                .set_pure_definition(names, vec![identity(op, t)])?;
        }
        let lhs = self.to_expr()?;
        let value = py_binary(PyOp::Bin(op), Operand::Expr(lhs), rhs)?;
        f.define(self.args.clone(), vec![value])
    }
}

impl Func {
    pub fn num_update_definitions(&self) -> usize {
        self.function.read().updates.len()
    }
    pub fn has_update_definition(&self) -> bool {
        self.num_update_definitions() > 0
    }

    /// Update definition `i`, with Halide's errors for a missing one.
    fn update_definition(&self, i: usize) -> Result<UpdateDefinition> {
        let c = self.function.read();
        if c.updates.is_empty() {
            return Err(Error::user(format!(
                "Can't call Func::update_args() on Func \"{}\" as it has no update definition. Use Func::has_update_definition() to check for the existence of an update definition.\n",
                c.name
            )));
        }
        c.updates
            .get(i)
            .cloned()
            .ok_or_else(|| Error::user("Update definition index out of bounds.\n"))
    }

    pub fn update_args(&self, i: usize) -> Result<Vec<Expr>> {
        Ok(exported(&self.update_definition(i)?.args))
    }
    pub fn update_values(&self, i: usize) -> Result<Vec<Expr>> {
        Ok(exported(&self.update_definition(i)?.values))
    }
    pub fn update_value(&self, i: usize) -> Result<Expr> {
        let v = self.update_values(i)?;
        if v.len() > 1 {
            return Err(Error::user(format!(
                "Can't call Func::update_value() on Func \"{}\", because it has multiple values.\n",
                self.name()
            )));
        }
        Ok(v[0].clone())
    }
    /// The RVars update `i` iterates over (its domain's, in order).
    pub fn rvars(&self, i: usize) -> Result<Vec<RVar>> {
        let u = self.update_definition(i)?;
        Ok(match u.domain {
            Some(d) => (0..d.dimensions()).filter_map(|k| d.rvar(k)).collect(),
            None => vec![],
        })
    }
    /// `update(i)`: the Stage of update definition `i`.
    pub fn update(&self, i: usize) -> Result<Stage> {
        if i >= self.num_update_definitions() {
            return Err(Error::user(format!(
                "Call to update with index larger than last defined update stage for Func \"{}\".\n",
                self.name()
            )));
        }
        Ok(Stage::of_definition(&self.function, i + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    fn pure_func(name: &str) -> Func {
        let f = Func::new(Some(name));
        f.define(vec![x()], vec![x()]).unwrap();
        f
    }

    #[test]
    fn update_checks() {
        let f = pure_func("upd_checks");
        let self_ref = |a: Expr| f.call(vec![a]).unwrap().to_expr().unwrap();
        let e = f.define(vec![x()], vec![Expr::f32(0.5)]).unwrap_err();
        assert!(e
            .message
            .contains("Tuple element 0 of update definition has type float32, but pure definition has type int32"));
        let e = f
            .define(vec![x()], vec![self_ref(Expr::add(x(), Expr::i32(1)))])
            .unwrap_err();
        assert!(e.message.contains("recursive references to itself"));
        let e = f
            .define(vec![Expr::var_i32("y")], vec![Expr::i32(1)])
            .unwrap_err();
        assert!(e.message.starts_with("Undefined variable \"y\""));
        f.define(vec![x()], vec![Expr::mul(self_ref(x()), Expr::i32(2))])
            .unwrap();
        f.define(
            vec![Expr::i32(3)],
            vec![Expr::add(self_ref(Expr::i32(3)), self_ref(x()))],
        )
        .unwrap_err();
        assert_eq!(f.num_update_definitions(), 1);
        let g = Func::new(Some("upd_user"));
        g.define(vec![x()], vec![self_ref(x())]).unwrap();
        let e = f.define(vec![x()], vec![x()]).unwrap_err();
        assert!(e
            .message
            .contains("cannot be given a new update definition"));
    }

    #[test]
    fn rdom_updates_iterate_rvars_innermost() {
        let f = pure_func("upd_rdom");
        let r = ReductionDomain::new(None, vec![(Expr::i32(0), Expr::i32(3)); 2]).unwrap();
        let (rx, ry) = (r.rvar(0).unwrap(), r.rvar(1).unwrap());
        let v = f.call(vec![rx.expr()]).unwrap().to_expr().unwrap();
        f.define(vec![rx.expr()], vec![Expr::add(v, ry.expr())])
            .unwrap();
        let u = &f.function.read().updates[0];
        let dims: Vec<&str> = u.stage.dims.iter().map(|d| d.var.as_str()).collect();
        assert_eq!(dims, [rx.name(), ry.name(), OUTERMOST]);
        assert!(r.is_frozen());
        let h = Func::new(Some("upd_compound"));
        h.call(vec![x()])
            .unwrap()
            .compound_update(Op::Sub, Operand::Expr(Expr::uint_imm(Type::uint(8), 3)))
            .unwrap();
        assert_eq!(h.function.output_types(), [Type::uint(8)]);
        assert_eq!(h.num_update_definitions(), 1);
    }
}
