//! Schedule validation (after Halide's `validate_schedule`): is a Func's
//! placement possible, given where its consumers ended up?
//!
//! Assumes: `s` is the loop nest schedule_functions has built so far, in
//! which every consumer of `f` is already placed (or inlined); loops are
//! named `func.sN.dims...var`; `levels` are locked (`FuncSchedule::
//! locked_levels`), outputs already forced to the root.
//! Guarantees: `Ok(true)` only if `f`'s hoist, store and compute levels are
//! the root or loops that enclose every use of `f`, nested in that order,
//! with no parallel or vectorized loop between the allocation and the
//! computation; `Ok(false)` if nothing uses `f` (nothing to realize);
//! otherwise a user error in Halide's words, listing the legal locations
//! and the uses. An inlined Func must not have a storage level, nor
//! parallel, vectorized or unrolled loops.

use crate::error::{Error, Result};
use crate::ir::visit::{walk_expr, walk_stmt, Visitor};
use crate::ir::{CallKind, Expr, ExprNode, ForType, Stmt, StmtNode};
use crate::lang::function::Function;
use crate::schedule::{Bound, LockedLevels, LoopLevel, Split, OUTERMOST};

/// A place a Func could be computed or stored: the root or a loop.
#[derive(Clone, Debug)]
struct Site {
    level: LoopLevel,
    /// Parallel or vectorized: iterations may run at the same time.
    is_parallel: bool,
}

/// The LoopLevel of a lowered loop `func.sN....var` (Halide names it by
/// the Func and the last component only).
fn site_of_loop(name: &str, for_type: ForType) -> Site {
    let func = name.split('.').next().unwrap_or(name);
    let var = name.rsplit('.').next().unwrap_or(name);
    Site {
        level: LoopLevel::at(func, var),
        is_parallel: matches!(for_type, ForType::Parallel | ForType::Vectorized),
    }
}

fn is_call_to(e: &Expr, func: &str) -> bool {
    matches!(e.node(), ExprNode::Call { name, kind: CallKind::Halide { .. }, .. } if name == func)
}

/// The sites enclosing every use of `func`: the intersection of the loop
/// stacks at its call sites (Halide's ComputeLegalSchedules).
struct LegalSites<'a> {
    func: &'a str,
    stack: Vec<Site>,
    allowed: Option<Vec<Site>>,
    /// The loop stack at each use (distinct ones): the levels must nest in
    /// the right order in every one of them, not only exist in all (a
    /// specialization may reorder the consumer's loops).
    use_stacks: Vec<Vec<Site>>,
}

impl Visitor for LegalSites<'_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        if let StmtNode::For { name, for_type, .. } = s.node() {
            self.stack.push(site_of_loop(name, *for_type));
            walk_stmt(self, s);
            self.stack.pop();
            return;
        }
        walk_stmt(self, s);
    }
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e);
        if is_call_to(e, self.func) {
            let same = |a: &Vec<Site>| {
                a.len() == self.stack.len()
                    && a.iter().zip(&self.stack).all(|(p, q)| p.level.matches(&q.level))
            };
            if !self.use_stacks.iter().any(same) {
                self.use_stacks.push(self.stack.clone());
            }
            self.allowed = Some(match self.allowed.take() {
                None => self.stack.clone(),
                Some(prev) => self
                    .stack
                    .iter()
                    .filter(|s| prev.iter().any(|p| s.level.matches(&p.level)))
                    .cloned()
                    .collect(),
            });
        }
    }
}

pub(crate) fn stmt_uses_func(s: &Stmt, func: &str) -> bool {
    crate::ir::visit::stmt_contains(s, &|e| is_call_to(e, func), &|_| false)
}

/// The uses of `func`, as the loops around them (Halide's PrintUsesOfFunc):
/// loops not containing a use collapse to "...".
struct PrintUses<'a> {
    func: &'a str,
    caller: String,
    indent: usize,
    last_was_ellipsis: bool,
    out: String,
}

impl Visitor for PrintUses<'_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        match s.node() {
            StmtNode::For { name, body, .. } if !name.ends_with(OUTERMOST) => {
                let old = self.indent;
                if stmt_uses_func(body, self.func) {
                    self.out
                        .push_str(&format!("{}for {name}:\n", " ".repeat(self.indent)));
                    self.last_was_ellipsis = false;
                    self.indent += 1;
                } else if !self.last_was_ellipsis {
                    self.out
                        .push_str(&format!("{}...\n", " ".repeat(self.indent)));
                    self.last_was_ellipsis = true;
                }
                walk_stmt(self, s);
                self.indent = old;
            }
            StmtNode::ProducerConsumer {
                name,
                is_producer: true,
                body,
            } => {
                let old = std::mem::replace(&mut self.caller, name.clone());
                self.visit_stmt(body);
                self.caller = old;
            }
            _ => walk_stmt(self, s),
        }
    }
    fn visit_expr(&mut self, e: &Expr) {
        if is_call_to(e, self.func) {
            self.out.push_str(&format!(
                "{}{} uses {}\n",
                " ".repeat(self.indent),
                self.caller,
                self.func
            ));
            self.last_was_ellipsis = false;
        } else {
            walk_expr(self, e);
        }
    }
}

fn var_in_source(var: &str) -> String {
    if var == OUTERMOST {
        "Var::outermost()".to_string()
    } else {
        var.to_string()
    }
}

/// The schedule as the C++ a user would write (Halide's schedule_to_source).
fn schedule_to_source(func: &str, store: &LoopLevel, compute: &LoopLevel) -> String {
    let mut s = func.to_string();
    if compute.is_inlined() {
        s.push_str(".compute_inline()");
    } else {
        if !store.matches(compute) {
            match store {
                LoopLevel::At { func, var, .. } => {
                    s.push_str(&format!(".store_at({func}, {})", var_in_source(var)))
                }
                _ => s.push_str(".store_root()"),
            }
        }
        match compute {
            LoopLevel::At { func, var, .. } => {
                s.push_str(&format!(".compute_at({func}, {})", var_in_source(var)))
            }
            _ => s.push_str(".compute_root()"),
        }
    }
    s.push(';');
    s
}

/// An inlined Func may not have loop types or a storage schedule.
fn validate_inlined(f: &Function, name: &str) -> Result<()> {
    let c = f.read();
    for d in &c.stage.dims {
        let what = match d.for_type {
            // A fork is made by lowering, never scheduled.
            ForType::Parallel | ForType::Fork => "parallelize",
            ForType::Unrolled => "unroll",
            ForType::Vectorized => "vectorize",
            ForType::Serial => continue,
        };
        return Err(Error::user(format!(
            "Cannot {what} dimension {} of function {name} because the function is scheduled inline.\n",
            d.var
        )));
    }
    if c.updates.is_empty() {
        warn_meaningless_inline_schedule(&c.stage.splits, &c.schedule.bounds, name);
    }
    Ok(())
}

/// Halide's warnings for loop and bounds directives of an inlined Func,
/// which have nothing to act on. Halide gives them when it validates the
/// schedule and again when it inlines the Func; so does ferrohalide.
pub(crate) fn warn_meaningless_inline_schedule(splits: &[Split], bounds: &[Bound], name: &str) {
    use crate::error::user_warning;
    use crate::lang::print::expr_to_string as text;
    for split in splits {
        user_warning(&match split {
            Split::Rename { old, new } => format!(
                "It is meaningless to rename variable {old} of function {name} to {new} because {name} is scheduled inline.\n"
            ),
            Split::Fuse { inner, outer, .. } => format!(
                "It is meaningless to fuse variables {inner} and {outer} because {name} is scheduled inline.\n"
            ),
            Split::Split { old, outer, inner, factor, .. } => format!(
                "It is meaningless to split variable {old} of function {name} into {outer} * {} + {inner} because {name} is scheduled inline.\n",
                text(factor)
            ),
        });
    }
    for b in bounds {
        if let (Some(min), Some(extent)) = (&b.min, &b.extent) {
            user_warning(&format!(
                "It is meaningless to bound dimension {} of function {name} to be within [{}, {}] because the function is scheduled inline.\n",
                b.var, text(min), text(extent)
            ));
        } else if let (Some(m), Some(r)) = (&b.modulus, &b.remainder) {
            user_warning(&format!(
                "It is meaningless to align the bounds of dimension {} of function {name} to have modulus/remainder [{}, {}] because the function is scheduled inline.\n",
                b.var, text(m), text(r)
            ));
        }
    }
}

/// The innermost site enclosing every use of `func` in `s` (the root if
/// only the root does), or `None` if `s` does not use it.
pub fn innermost_use_site(func: &str, s: &Stmt) -> Option<LoopLevel> {
    let mut legal = LegalSites {
        func,
        stack: vec![Site {
            level: LoopLevel::Root,
            is_parallel: false,
        }],
        allowed: None,
        use_stacks: vec![],
    };
    legal.visit_stmt(s);
    legal.allowed?.pop().map(|site| site.level)
}

/// Do `levels` nest (hoist, then store, then compute) in the loop stack
/// `sites`, and (if `check_races`) with no parallel loop between the
/// storage and the computation? The error is the race condition's text, or
/// empty when a level is missing or out of order.
fn check_nesting(
    sites: &[Site],
    levels: &LockedLevels,
    name: &str,
    check_races: bool,
) -> std::result::Result<(), String> {
    let LockedLevels {
        compute,
        store,
        hoist,
    } = levels;
    // The last site matching each level, each inside the one before.
    let (mut hoist_idx, mut store_idx, mut compute_idx) = (None, None, None);
    for (i, site) in sites.iter().enumerate() {
        if site.level.matches(hoist) {
            hoist_idx = Some(i);
        }
        if site.level.matches(store) && hoist_idx.is_some() {
            store_idx = Some(i);
        }
        if site.level.matches(compute) && store_idx.is_some() && hoist_idx.is_some() {
            compute_idx = Some(i);
        }
    }
    let (Some(hi), Some(si), Some(ci)) = (hoist_idx, store_idx, compute_idx) else {
        return Err(String::new());
    };
    if !check_races {
        return Ok(());
    }
    if let Some(p) = (si + 1..=ci).find(|&i| sites[i].is_parallel) {
        return Err(format!(
            "Func \"{name}\" is stored outside the parallel/vectorized/gpu_block loop over {} but computed within it. This is a potential race condition.\n",
            sites[p].level.describe()
        ));
    }
    if let Some(p) = (hi + 1..=ci).find(|&i| sites[i].is_parallel) {
        return Err(format!(
            "Func \"{name}\" storage is hoisted outside the parallel/vectorized/gpu_block loop over {} but computed within it. This is a potential race condition.\n",
            sites[p].level.describe()
        ));
    }
    Ok(())
}

/// See the module comment.
pub fn validate_schedule(
    f: &Function,
    levels: &LockedLevels,
    s: &Stmt,
    is_output: bool,
) -> Result<bool> {
    let name = f.name();
    if is_output {
        return Ok(true);
    }
    let mut legal = LegalSites {
        func: &name,
        stack: vec![Site {
            level: LoopLevel::Root,
            is_parallel: false,
        }],
        allowed: None,
        use_stacks: vec![],
    };
    legal.visit_stmt(s);
    let Some(sites) = legal.allowed else {
        return Ok(false);
    };
    let LockedLevels {
        compute,
        store,
        hoist,
    } = levels;
    if compute.is_inlined() {
        if store.is_root() {
            return Err(Error::user(format!(
                "Func \"{name}\" is scheduled store_root(), but is inlined. Funcs that use store_root must also call compute_root or compute_at.\n"
            )));
        } else if !store.is_inlined() {
            return Err(Error::user(format!(
                "Func \"{name}\" is scheduled store_at(), but is inlined. Funcs that use store_at must also call compute_at.\n"
            )));
        }
        if hoist.is_root() {
            return Err(Error::user(format!(
                "Func \"{name}\" is scheduled hoist_storage_root(), but is inlined. Funcs that use hoist_storage_root must also call compute_root or compute_at.\n"
            )));
        } else if !hoist.is_inlined() {
            return Err(Error::user(format!(
                "Func \"{name}\" is scheduled hoist_storage(), but is inlined. Funcs that use hoist_storage_root must also call compute_at.\n"
            )));
        }
        validate_inlined(f, &name)?;
        return Ok(true);
    }

    // The levels must nest in every use's loop stack (a specialization may
    // reorder the consumer's loops). Races are judged as Halide judges
    // them: on the sites common to all uses, with the loop types of the
    // last use visited, so Halide's accepted schedules stay accepted. For a
    // pure Func that is never wrong: sliding window and storage folding act
    // only on serial loops, and parallel iterations that overlap write the
    // same values. An update would reinitialize what another iteration is
    // still updating, so a Func with updates is checked at every use.
    let mut err = String::new();
    let mut ok = true;
    let impure = !f.read().updates.is_empty();
    let stacks = legal.use_stacks.iter().map(|s| (s, impure));
    for (stack, check_races) in stacks.chain(std::iter::once((&sites, true))) {
        match check_nesting(stack, levels, &name, check_races) {
            Ok(()) => {}
            Err(race) => {
                ok = false;
                if !err.contains(&race) {
                    err.push_str(&race);
                }
            }
        }
    }
    if ok {
        return Ok(true);
    }
    err.push_str(&format!(
        "Func \"{name}\" is computed at the following invalid location:\n  {}\nLegal locations for this function are:\n",
        schedule_to_source(&name, store, compute)
    ));
    for site in &sites {
        err.push_str(&format!(
            "  {}\n",
            schedule_to_source(&name, &site.level, &site.level)
        ));
    }
    err.push_str(&format!("\"{name}\" is used in the following places:\n"));
    let mut uses = PrintUses {
        func: &name,
        caller: String::new(),
        indent: 1,
        last_was_ellipsis: false,
        out: String::new(),
    };
    uses.visit_stmt(s);
    err.push_str(&uses.out);
    Err(Error::user(err))
}
