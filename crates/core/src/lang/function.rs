//! `Function`: the shared, mutable definition of a Func — its pure
//! definition, output types and schedule. A `Func` handle in the front end
//! and every `Call` to it in the IR point at the same `Function`, so a Func
//! can be referenced before it is defined, and scheduled after.
//!
//! Ownership (Halide's FunctionGroup): each Function belongs to a group, a
//! Func and the wrappers made for it, freed together once no strong link
//! reaches any member. A `Function` handle is strong. Links stored inside
//! a group's definitions (a Func reading itself in an update, a wrapper
//! calling what it wraps, the Func's list of its wrappers) are weak, so a
//! group never keeps itself alive; links to other groups are strong. The
//! strength is set whenever a definition is stored (`own`), never later,
//! so the IR stays immutable.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use crate::error::{Error, Result};
use crate::ir::visit::mutate_expr_children;
use crate::ir::{CallKind, Expr, ExprNode, FunctionPtr, FunctionTarget, Mutator, Type};
use crate::lang::rdom::ReductionDomain;
use crate::schedule::{FuncSchedule, StageSchedule};

#[derive(Debug)]
pub struct FunctionContents {
    pub name: String,
    /// Pure argument names, innermost (dimension 0) first.
    pub args: Vec<String>,
    /// The pure definition's values (one per tuple element); empty if undefined.
    pub values: Vec<Expr>,
    /// Output types; set on definition (or declared up front).
    pub output_types: Vec<Type>,
    pub schedule: FuncSchedule,
    /// Schedule of the pure definition (stage 0).
    pub stage: StageSchedule,
    /// Bumped on every definition or schedule change, to invalidate JIT caches.
    pub version: u64,
    /// Specializations of the pure definition, tried in order before its
    /// default schedule (`stage`).
    pub specializations: Vec<Specialization>,
    /// Wrappers made by `in_`/`clone_in`: (consumer name, wrapper), the
    /// empty name standing for the global wrapper. Several consumers may
    /// share one wrapper. Kept in creation order: a wrapper's name counts the
    /// entries that existed before it, as Halide's does. Wrappers are in
    /// this Function's group, so the links are weak (`Function::wrappers`
    /// gives handles).
    pub wrappers: Vec<(String, FunctionPtr)>,
    /// Update definitions, in the order they run after the pure one.
    pub updates: Vec<UpdateDefinition>,
    /// The trace events the Func reports when it runs.
    pub tracing: crate::lang::trace_settings::TraceSettings,
    /// The buffer parameters of this Func as an output (one per value),
    /// made on first use (`output_params`): where their estimates live.
    pub output_params: Vec<crate::lang::parameter::Parameter>,
    /// `define_extern`: the Func is computed by a C function (its values
    /// are undefs standing for what that function writes).
    pub extern_def: Option<crate::lang::extern_func::ExternDefinition>,
}

impl FunctionContents {
    /// The values' types are the declared output types, else the
    /// definition's: the one place that decides.
    fn value_count(&self) -> usize {
        if self.output_types.is_empty() {
            self.values.len()
        } else {
            self.output_types.len()
        }
    }
    fn value_type(&self, i: usize) -> Option<Type> {
        if self.output_types.is_empty() {
            self.values.get(i).map(|v| v.ty())
        } else {
            self.output_types.get(i).copied()
        }
    }
}

/// An update definition `f(args) = values`: stage `i + 1` of the Func for
/// `updates[i]`. It runs once per point of `domain` (the RDom whose RVars
/// it mentions, predicate included) and of its pure variables (the args
/// that are the pure arg of their position), and has its own schedule and
/// specializations, like the pure definition.
#[derive(Clone, Debug)]
pub struct UpdateDefinition {
    pub args: Vec<Expr>,
    pub values: Vec<Expr>,
    pub domain: Option<ReductionDomain>,
    pub stage: StageSchedule,
    pub specializations: Vec<Specialization>,
    /// Variables the definition's args, values and domain predicate use
    /// that stand for expressions of its loop variables, in order (each
    /// may use the ones before): the RVars rfactor split away, e.g.
    /// `r$x = ro * 64 + ri`. Lowering defines them inside the loops.
    pub lets: Vec<(String, Expr)>,
}

impl UpdateDefinition {
    /// The names of the args that are the pure var of their position.
    pub fn pure_vars(&self, pure_args: &[String]) -> Vec<String> {
        self.args
            .iter()
            .zip(pure_args)
            .filter_map(|(a, p)| match a.node() {
                ExprNode::Variable {
                    name,
                    param: None,
                    rdom: None,
                } if name == p => Some(name.clone()),
                _ => None,
            })
            .collect()
    }
}

/// One specialization of a definition: when `condition` holds, the
/// definition runs with `stage` (and, recursively, its own
/// specializations) instead of the schedule it was specialized from. Each
/// definition owns its list, so update definitions will carry theirs the
/// same way.
#[derive(Clone, Debug)]
pub struct Specialization {
    pub condition: Expr,
    pub stage: StageSchedule,
    pub specializations: Vec<Specialization>,
    /// Set by `specialize_fail`: reaching this specialization is a run-time
    /// error with this message (its condition is then always true).
    pub failure_message: Option<String>,
}

/// One Func's state, owned by its group: the definition and schedule, and
/// the code compiled for pipelines this Func is the first output of.
pub struct FunctionCell {
    group: Weak<FunctionGroup>,
    contents: RwLock<FunctionContents>,
    /// The backend's compiled pipelines (type-erased: the core knows no
    /// backend); freed with the Func, so compiled code never outlives what
    /// it was compiled from.
    compiled: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
    /// Set once the Func is used or realized. Outside `contents` so that
    /// realizing never takes the write lock: a realization freezes while
    /// another thread's lowering holds (nested) read locks on the same
    /// Func, and a queued writer would block those reads (a deadlock).
    frozen: AtomicBool,
}

/// Funcs freed together: a Func and the wrappers made for it. Every
/// member's state is owned here; strong links keep the group alive.
struct FunctionGroup {
    members: Mutex<Vec<Arc<FunctionCell>>>,
}

impl Drop for FunctionCell {
    fn drop(&mut self) {
        crate::live::FUNCTIONS.dropped();
    }
}

impl FunctionTarget for FunctionCell {
    fn outputs(&self) -> usize {
        let c = read_lock(&self.contents);
        c.values.len().max(c.output_types.len()).max(1)
    }
    fn owner(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        let g: Arc<dyn Any + Send + Sync> = self.group.upgrade()?;
        Some(g)
    }
}

fn read_lock(l: &RwLock<FunctionContents>) -> RwLockReadGuard<'_, FunctionContents> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

fn write_lock(l: &RwLock<FunctionContents>) -> RwLockWriteGuard<'_, FunctionContents> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

/// A strong handle on a Func's state (and so on its whole group).
#[derive(Clone)]
pub struct Function {
    group: Arc<FunctionGroup>,
    cell: Arc<FunctionCell>,
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // (try_read: a Function may be printed while it is being changed.)
        match self.cell.contents.try_read() {
            Ok(c) => write!(f, "Function({})", c.name),
            Err(_) => write!(f, "Function({:#x})", self.id()),
        }
    }
}

/// A new name and link for a call to a Func (given its name and link), or
/// `None` to leave the call as it is.
type Relink<'a> = dyn FnMut(&str, &FunctionPtr) -> Option<(String, FunctionPtr)> + 'a;

/// `e` with each call to a Func that `relink` changes rebuilt with its new
/// name and link (the one walk behind redirecting and re-linking calls).
fn relink_calls(e: &Expr, relink: &mut Relink<'_>) -> Expr {
    struct Walk<'a, 'b>(&'a mut Relink<'b>);
    impl Mutator for Walk<'_, '_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = mutate_expr_children(self, e);
            let ExprNode::Call {
                name,
                args,
                kind: CallKind::Halide { func, value_index },
            } = e.node()
            else {
                return e;
            };
            match (self.0)(name, func) {
                Some((name, func)) => Expr::call(
                    e.ty(),
                    name,
                    args.clone(),
                    CallKind::Halide {
                        func,
                        value_index: *value_index,
                    },
                ),
                None => e,
            }
        }
    }
    Walk(relink).mutate_expr(e)
}

/// Exprs of a definition, for the user: every link strong, since the user
/// may keep them after the Funcs they call are dropped. (The Funcs exist
/// now: the caller holds the one whose definition they come from.)
pub fn exported(es: &[Expr]) -> Vec<Expr> {
    let mut strengthen = |name: &str, p: &FunctionPtr| {
        if !p.is_weak() {
            return None;
        }
        Some((name.to_string(), p.strengthened()?))
    };
    es.iter().map(|e| relink_calls(e, &mut strengthen)).collect()
}

fn freed_error(name: &str) -> Error {
    Error::user(format!(
        "Func \"{name}\" no longer exists: every Func that referred to it was dropped, but an expression calling it was kept and used again.\n"
    ))
}

/// The state a link points at, if it still exists.
fn cell_of(p: &FunctionPtr) -> Option<Arc<FunctionCell>> {
    let target: Arc<dyn Any + Send + Sync> = p.target()?;
    target.downcast::<FunctionCell>().ok()
}

static NEXT_VERSION: AtomicU64 = AtomicU64::new(1);

/// A process-wide counter; any change to any Function takes a fresh value,
/// so a (function, version) pair never repeats.
pub fn next_version() -> u64 {
    NEXT_VERSION.fetch_add(1, Ordering::Relaxed)
}

/// The counter's current value: equal to an earlier reading only if no
/// Function was made or changed in between.
pub fn current_version() -> u64 {
    NEXT_VERSION.load(Ordering::Relaxed)
}

fn empty_contents(name: String) -> FunctionContents {
    FunctionContents {
        name,
        args: vec![],
        values: vec![],
        output_types: vec![],
        schedule: FuncSchedule::default(),
        stage: StageSchedule::default(),
        version: next_version(),
        specializations: vec![],
        wrappers: vec![],
        updates: vec![],
        tracing: Default::default(),
        output_params: vec![],
        extern_def: None,
    }
}

impl FunctionGroup {
    fn new() -> Arc<FunctionGroup> {
        Arc::new(FunctionGroup {
            members: Mutex::new(vec![]),
        })
    }

    /// A new member holding `contents`.
    fn add(self: &Arc<Self>, contents: FunctionContents) -> Function {
        crate::live::FUNCTIONS.created();
        let cell = Arc::new(FunctionCell {
            group: Arc::downgrade(self),
            contents: RwLock::new(contents),
            compiled: Mutex::new(vec![]),
            frozen: AtomicBool::new(false),
        });
        self.members
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(cell.clone());
        Function {
            group: self.clone(),
            cell,
        }
    }
}

impl Function {
    /// A new, undefined Func in a group of its own.
    pub fn new(name: impl Into<String>) -> Function {
        FunctionGroup::new().add(empty_contents(name.into()))
    }

    /// A new, undefined Func freed together with this one (a wrapper).
    pub fn new_in_group(&self, name: impl Into<String>) -> Function {
        self.group.add(empty_contents(name.into()))
    }

    /// A new Function named `name` with a copy of this one's definition,
    /// schedule and specializations, in a group of its own (lowering's
    /// private copies). Wrappers are not copied: they are keyed by
    /// consumer, and a copy is a different producer.
    pub fn copy_as(&self, name: impl Into<String>) -> Result<Function> {
        self.copy_into(&FunctionGroup::new(), name.into())
    }

    /// `copy_as`, freed together with this Func (`clone_in`).
    pub fn copy_in_group(&self, name: impl Into<String>) -> Result<Function> {
        self.copy_into(&self.group, name.into())
    }

    fn copy_into(&self, group: &Arc<FunctionGroup>, name: String) -> Result<Function> {
        let c = self.read();
        let copy = group.add(FunctionContents {
            name,
            args: c.args.clone(),
            values: c.values.clone(),
            output_types: c.output_types.clone(),
            schedule: c.schedule.clone(),
            stage: c.stage.clone(),
            version: next_version(),
            specializations: c.specializations.clone(),
            wrappers: vec![],
            updates: c.updates.clone(),
            tracing: c.tracing.clone(),
            output_params: c.output_params.clone(),
            extern_def: c.extern_def.clone(),
        });
        drop(c);
        // An update's references to the Func itself become references to
        // the copy.
        let copy_name = copy.name();
        let mut to_copy = |_: &str, p: &FunctionPtr| {
            self.is(p).then(|| (copy_name.clone(), copy.ptr()))
        };
        let mut updates = copy.updates();
        for u in &mut updates {
            u.args = u.args.iter().map(|a| relink_calls(a, &mut to_copy)).collect();
            u.values = u.values.iter().map(|v| relink_calls(v, &mut to_copy)).collect();
        }
        let values = copy.own_all(&copy.values())?;
        let updates = updates
            .into_iter()
            .map(|u| copy.own_update(u))
            .collect::<Result<Vec<_>>>()?;
        let mut d = write_lock(&copy.cell.contents);
        d.values = values;
        d.updates = updates;
        drop(d);
        Ok(copy)
    }

    /// `e` with its calls to Funcs linked as a definition of this Func
    /// must hold them: weakly inside this Func's group, strongly outside
    /// it. An error if it calls a Func that no longer exists.
    pub fn own(&self, e: &Expr) -> Result<Expr> {
        self.relink(e, false)
    }

    pub fn own_all(&self, es: &[Expr]) -> Result<Vec<Expr>> {
        es.iter().map(|e| self.own(e)).collect()
    }

    /// `e` with calls into this Func's group weak and (unless
    /// `weaken_only`) calls to other groups strong.
    fn relink(&self, e: &Expr, weaken_only: bool) -> Result<Expr> {
        let mut error = None;
        let mut own = |name: &str, p: &FunctionPtr| {
            let Some(cell) = cell_of(p) else {
                if !weaken_only {
                    error.get_or_insert_with(|| freed_error(name));
                }
                return None;
            };
            let inside = Weak::as_ptr(&cell.group) == Arc::as_ptr(&self.group);
            let link = match (inside, p.is_weak()) {
                (true, false) => p.weakened(),
                (false, true) if !weaken_only => p.strengthened()?,
                _ => return None,
            };
            Some((name.to_string(), link))
        };
        let out = relink_calls(e, &mut own);
        match error {
            Some(err) => Err(err),
            None => Ok(out),
        }
    }

    /// An update definition with its Exprs owned (`own`). Its domain is
    /// shared with the user's RDom (and maybe other Funcs), so calls in
    /// the predicate are only weakened (calls to this Func's group), never
    /// strengthened.
    pub fn own_update(&self, u: UpdateDefinition) -> Result<UpdateDefinition> {
        if let Some(d) = &u.domain {
            if d.has_predicate() {
                d.set_predicate(Some(self.relink(&d.predicate(), true)?));
            }
        }
        Ok(UpdateDefinition {
            args: self.own_all(&u.args)?,
            values: self.own_all(&u.values)?,
            lets: u
                .lets
                .iter()
                .map(|(n, v)| Ok((n.clone(), self.own(v)?)))
                .collect::<Result<_>>()?,
            ..u
        })
    }

    /// Define `name(args) = values` directly, with a default schedule. For
    /// definitions the front end builds itself (wrappers), whose arguments
    /// may be implicit vars that user definitions can't name.
    pub fn set_pure_definition(&self, args: Vec<String>, values: Vec<Expr>) -> Result<()> {
        let values = crate::lang::func::lower_random_calls(values, &args);
        let values = self.own_all(&values)?;
        let mut c = self.write();
        c.output_types = values.iter().map(|v| v.ty()).collect();
        c.values = values;
        c.stage = StageSchedule::for_pure_args(&args);
        c.schedule.storage_dims = args.clone();
        c.args = args;
        c.specializations.clear();
        c.updates.clear();
        Ok(())
    }

    /// Replace everything this Func is with `contents` (read back by
    /// `serialize`); the definitions' Exprs are owned as any definition's.
    pub fn restore(&self, mut contents: FunctionContents, frozen: bool) -> Result<()> {
        contents.values = self.own_all(&contents.values)?;
        contents.updates = std::mem::take(&mut contents.updates)
            .into_iter()
            .map(|u| self.own_update(u))
            .collect::<Result<_>>()?;
        contents.version = next_version();
        *write_lock(&self.cell.contents) = contents;
        if frozen {
            self.freeze();
        }
        Ok(())
    }

    /// Append an update definition (owned: `own_update`).
    pub fn push_update(&self, u: UpdateDefinition) -> Result<()> {
        let u = self.own_update(u)?;
        self.write().updates.push(u);
        Ok(())
    }

    /// Replace update definition `k` (owned: `own_update`).
    pub fn replace_update(&self, k: usize, u: UpdateDefinition) -> Result<()> {
        let u = self.own_update(u)?;
        self.write().updates[k] = u;
        Ok(())
    }

    /// A strong link to this Func, for a `Call` outside its group (a
    /// definition being stored re-links it: `own`).
    pub fn ptr(&self) -> FunctionPtr {
        let owner: Arc<dyn Any + Send + Sync> = self.group.clone();
        FunctionPtr::strong(owner, self.cell.clone())
    }

    /// The Func a link points at, if it still exists.
    pub fn from_ptr(p: &FunctionPtr) -> Option<Function> {
        let cell = cell_of(p)?;
        let group = cell.group.upgrade()?;
        Some(Function { group, cell })
    }

    /// The Func a `Call` named `name` points at; an error if it no longer exists.
    pub fn called(p: &FunctionPtr, name: &str) -> Result<Function> {
        Function::from_ptr(p).ok_or_else(|| freed_error(name))
    }

    /// Does `p` point at this Func?
    pub fn is(&self, p: &FunctionPtr) -> bool {
        p.id() == self.id()
    }

    /// The buffer parameters this Func is realized into as an output: one
    /// per value, named `f` (or `f.0`, `f.1`, ... for a Tuple), the same
    /// ones every time (their estimates are kept).
    pub fn output_params(&self) -> Vec<crate::lang::parameter::Parameter> {
        // Making them changes nothing compiled code depends on: no new
        // version (their constraints have a version of their own).
        let mut c = write_lock(&self.cell.contents);
        let types = c.output_types.clone();
        let dims = c.args.len();
        let fresh = c.output_params.len() != types.len()
            || c.output_params.iter().zip(&types).any(|(p, t)| p.ty() != *t || p.dimensions() != dims);
        if fresh {
            let name = c.name.clone();
            c.output_params = types
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let pname = if types.len() == 1 { name.clone() } else { format!("{name}.{i}") };
                    crate::lang::parameter::Parameter::new(*t, true, dims, pname)
                })
                .collect();
        }
        c.output_params.clone()
    }

    pub fn read(&self) -> RwLockReadGuard<'_, FunctionContents> {
        read_lock(&self.cell.contents)
    }
    /// Mutable access; bumps the version so compiled code is recompiled.
    pub fn write(&self) -> RwLockWriteGuard<'_, FunctionContents> {
        let mut g = write_lock(&self.cell.contents);
        g.version = next_version();
        g
    }

    /// Compiled pipelines whose first output is this Func, kept by the
    /// backend and freed with the Func.
    pub fn compiled_code(&self) -> MutexGuard<'_, Vec<Arc<dyn Any + Send + Sync>>> {
        self.cell.compiled.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn name(&self) -> String {
        self.read().name.clone()
    }
    pub fn args(&self) -> Vec<String> {
        self.read().args.clone()
    }
    pub fn dimensions(&self) -> usize {
        self.read().args.len()
    }
    pub fn outputs(&self) -> usize {
        self.cell.outputs()
    }
    pub fn values(&self) -> Vec<Expr> {
        self.read().values.clone()
    }
    pub fn output_types(&self) -> Vec<Type> {
        self.read().output_types.clone()
    }
    /// How many values the Func has (`types().len()`, without a copy).
    pub fn value_count(&self) -> usize {
        self.read().value_count()
    }
    /// The type of value `i` (`types()[i]`, without a copy).
    pub fn value_type(&self, i: usize) -> Option<Type> {
        self.read().value_type(i)
    }
    /// The types of the values: declared output types, else the definition's.
    pub fn types(&self) -> Vec<Type> {
        let c = self.read();
        (0..c.value_count()).filter_map(|i| c.value_type(i)).collect()
    }
    /// The wrappers made for this Func: (consumer name, wrapper).
    pub fn wrappers(&self) -> Vec<(String, Function)> {
        self.read()
            .wrappers
            .iter()
            .filter_map(|(k, w)| Some((k.clone(), Function::from_ptr(w)?)))
            .collect()
    }
    /// Record `wrapper` (made in this Func's group) for `consumer` ("" for
    /// every consumer).
    pub fn add_wrapper(&self, consumer: String, wrapper: &Function) {
        debug_assert!(Arc::ptr_eq(&self.group, &wrapper.group));
        self.write()
            .wrappers
            .push((consumer, wrapper.ptr().weakened()));
    }
    pub fn updates(&self) -> Vec<UpdateDefinition> {
        self.read().updates.clone()
    }
    pub fn has_updates(&self) -> bool {
        !self.read().updates.is_empty()
    }
    /// Every Expr of every definition: pure values, update args and
    /// values, and the bounds and predicates of update domains (where
    /// calls to other Funcs and images can appear).
    pub fn definition_exprs(&self) -> Vec<Expr> {
        let c = self.read();
        let mut out = c.values.clone();
        if let Some(e) = &c.extern_def {
            out.extend(e.argument_exprs());
        }
        for u in &c.updates {
            out.extend(u.lets.iter().map(|(_, v)| v.clone()));
            out.extend(u.args.iter().cloned());
            out.extend(u.values.iter().cloned());
            if let Some(d) = &u.domain {
                out.push(d.predicate());
                for v in d.vars() {
                    out.push(v.min);
                    out.push(v.extent);
                }
            }
        }
        out
    }
    /// Every stage schedule of every definition, specializations included
    /// (pure definition first, then each update), with the definition's
    /// index.
    pub fn stage_schedules(&self) -> Vec<(usize, StageSchedule)> {
        fn walk(index: usize, specs: &[Specialization], out: &mut Vec<(usize, StageSchedule)>) {
            for s in specs {
                out.push((index, s.stage.clone()));
                walk(index, &s.specializations, out);
            }
        }
        let c = self.read();
        let mut out = vec![(0, c.stage.clone())];
        walk(0, &c.specializations, &mut out);
        for (i, u) in c.updates.iter().enumerate() {
            out.push((i + 1, u.stage.clone()));
            walk(i + 1, &u.specializations, &mut out);
        }
        out
    }
    /// Every Expr of the schedule (split factors, bounds, storage folds,
    /// specialization conditions): like the definitions, they may mention
    /// Params, which are then inputs of the pipeline.
    pub fn schedule_exprs(&self) -> Vec<Expr> {
        fn conditions(specs: &[Specialization], out: &mut Vec<Expr>) {
            for s in specs {
                out.push(s.condition.clone());
                conditions(&s.specializations, out);
            }
        }
        let mut out = vec![];
        for (_, st) in self.stage_schedules() {
            out.extend(st.exprs());
        }
        let c = self.read();
        out.extend(c.schedule.exprs());
        conditions(&c.specializations, &mut out);
        for u in &c.updates {
            conditions(&u.specializations, &mut out);
        }
        out
    }
    /// Mark as used (by another definition or a realization): Halide then
    /// forbids new update definitions. Not a schedule change, so the
    /// version stays.
    pub fn freeze(&self) {
        self.cell.frozen.store(true, Ordering::Release);
    }
    pub fn is_frozen(&self) -> bool {
        self.cell.frozen.load(Ordering::Acquire)
    }
    pub fn has_pure_definition(&self) -> bool {
        !self.read().values.is_empty()
    }
    pub fn version(&self) -> u64 {
        self.read().version
    }
    /// An identity for the group of Funcs freed together (a Func and its
    /// wrappers), valid while the group lives.
    pub fn group_id(&self) -> usize {
        Arc::as_ptr(&self.group) as *const () as usize
    }
    pub fn same_as(&self, other: &Function) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }
    /// A stable identity for hashing (the address of the shared state;
    /// `FunctionPtr::id` gives the same value).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.cell) as *const () as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x() -> Expr {
        Expr::var_i32("x")
    }

    fn call(f: &Function) -> Expr {
        Expr::call(
            Type::i32(),
            f.name(),
            vec![x()],
            CallKind::Halide {
                func: f.ptr(),
                value_index: 0,
            },
        )
    }

    fn update(values: Vec<Expr>) -> UpdateDefinition {
        UpdateDefinition {
            args: vec![x()],
            values,
            domain: None,
            stage: StageSchedule::default(),
            specializations: vec![],
            lets: vec![],
        }
    }

    /// Is the Function behind `w` still alive?
    fn alive(w: &Weak<FunctionCell>) -> bool {
        w.upgrade().is_some()
    }

    /// The link of the first call to a Func in `e`.
    fn link_of(e: &Expr) -> FunctionPtr {
        let mut found = None;
        crate::ir::visit::for_each_expr(e, &mut |x| {
            if let ExprNode::Call {
                kind: CallKind::Halide { func, .. },
                ..
            } = x.node()
            {
                found.get_or_insert_with(|| func.clone());
            }
        });
        found.expect("a call to a Func")
    }

    #[test]
    fn a_func_reading_itself_is_freed() {
        let f = Function::new("own_f");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        f.push_update(update(vec![Expr::add(call(&f), Expr::i32(1))]))
            .unwrap();
        assert!(link_of(&f.updates()[0].values[0]).is_weak());
        let w = Arc::downgrade(&f.cell);
        drop(f);
        assert!(!alive(&w));
    }

    #[test]
    fn a_consumer_keeps_its_producer() {
        let f = Function::new("own_p");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        let g = Function::new("own_c");
        g.set_pure_definition(vec!["x".into()], vec![call(&f)]).unwrap();
        assert!(!link_of(&g.values()[0]).is_weak());
        let w = Arc::downgrade(&f.cell);
        drop(f);
        assert!(alive(&w));
        drop(g);
        assert!(!alive(&w));
    }

    #[test]
    fn a_func_and_its_wrapper_live_and_die_together() {
        let f = Function::new("own_w");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        let w = f.new_in_group("own_w_wrapper");
        w.set_pure_definition(vec!["x".into()], vec![call(&f)]).unwrap();
        f.add_wrapper(String::new(), &w);
        assert!(link_of(&w.values()[0]).is_weak());
        let (wf, ww) = (Arc::downgrade(&f.cell), Arc::downgrade(&w.cell));
        // The wrapper's handle is dropped: it lives on with f.
        drop(w);
        assert!(alive(&ww));
        assert_eq!(f.wrappers()[0].1.name(), "own_w_wrapper");
        // Only the wrapper is kept: it keeps f.
        let w = f.wrappers()[0].1.clone();
        drop(f);
        assert!(alive(&wf));
        drop(w);
        assert!(!alive(&wf) && !alive(&ww));
    }

    #[test]
    fn exported_exprs_keep_what_they_call() {
        let f = Function::new("own_e");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        f.push_update(update(vec![call(&f)])).unwrap();
        let v = exported(&f.updates()[0].values);
        assert!(!link_of(&v[0]).is_weak());
        let w = Arc::downgrade(&f.cell);
        drop(f);
        assert!(alive(&w));
        drop(v);
        assert!(!alive(&w));
    }

    #[test]
    fn storing_a_call_to_a_freed_func_is_an_error() {
        let f = Function::new("own_gone");
        f.set_pure_definition(vec!["x".into()], vec![x()]).unwrap();
        let weak_call = Expr::call(
            Type::i32(),
            "own_gone",
            vec![x()],
            CallKind::Halide {
                func: f.ptr().weakened(),
                value_index: 0,
            },
        );
        drop(f);
        let g = Function::new("own_g");
        let err = g
            .set_pure_definition(vec!["x".into()], vec![weak_call])
            .unwrap_err();
        assert!(err.message.contains("Func \"own_gone\" no longer exists"), "{}", err.message);
    }
}
