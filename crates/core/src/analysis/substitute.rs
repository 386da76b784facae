//! Replace free variables by expressions. Respects shadowing: a Let or
//! LetStmt that rebinds a name hides it from the substitution in its body.

use std::collections::HashMap;

use crate::fast_hash::FastMap;
use crate::ir::visit::{mutate_expr_children, mutate_stmt_children};
use crate::ir::{Expr, ExprNode, Mutator, Stmt, StmtNode};

struct Substitute<'a> {
    /// The caller's map, re-keyed for fast lookups: every variable node
    /// looks its name up (a std map would hash each with SipHash).
    replacements: FastMap<&'a str, &'a Expr>,
    hidden: Vec<String>,
    /// Results per shared inner node (by address; the node is kept so the
    /// address stays its own) while nothing is hidden: a node shared in the DAG is
    /// rewritten once and stays shared in the result. Without it, each
    /// substitution unfolds the DAG into a tree (bounds of image pyramids,
    /// whose every level reads the one below twice, grow exponentially).
    done: FastMap<usize, (Expr, Expr)>,
}

impl<'a> Substitute<'a> {
    fn new(replacements: FastMap<&'a str, &'a Expr>) -> Self {
        Substitute {
            replacements,
            hidden: vec![],
            done: FastMap::default(),
        }
    }

    fn lookup(&self, name: &str) -> Option<&Expr> {
        if self.hidden.iter().any(|h| h == name) {
            None
        } else {
            self.replacements.get(name).copied()
        }
    }

    fn rewrite(&mut self, e: &Expr) -> Expr {
        match e.node() {
            ExprNode::Variable { name, .. } => {
                self.lookup(name).cloned().unwrap_or_else(|| e.clone())
            }
            ExprNode::Let { name, value, body } => {
                let v = self.mutate_expr(value);
                self.hidden.push(name.clone());
                let b = self.mutate_expr(body);
                self.hidden.pop();
                if v.same_as(value) && b.same_as(body) {
                    e.clone()
                } else {
                    Expr::let_(name.clone(), v, b)
                }
            }
            _ => mutate_expr_children(self, e),
        }
    }
}

impl Mutator for Substitute<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        // Leaves are cheap to rewrite, and a node with one parent is
        // reached once unless an ancestor is reached twice (`is_shared`).
        if !self.hidden.is_empty() || e.depth() == 1 || !e.is_shared() {
            return self.rewrite(e);
        }
        if let Some((_, r)) = self.done.get(&e.id()) {
            return r.clone();
        }
        let r = self.rewrite(e);
        self.done.insert(e.id(), (e.clone(), r.clone()));
        r
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::LetStmt { name, value, body } => {
                let v = self.mutate_expr(value);
                self.hidden.push(name.clone());
                let b = self.mutate_stmt(body);
                self.hidden.pop();
                if v.same_as(value) && b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::let_stmt(name.clone(), v, b)
                }
            }
            StmtNode::For {
                name,
                min,
                extent,
                for_type,
                body,
            } => {
                let mn = self.mutate_expr(min);
                let ex = self.mutate_expr(extent);
                self.hidden.push(name.clone());
                let b = self.mutate_stmt(body);
                self.hidden.pop();
                if mn.same_as(min) && ex.same_as(extent) && b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::for_loop(name.clone(), mn, ex, *for_type, b)
                }
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

pub fn substitute_map(replacements: &HashMap<String, Expr>, e: &Expr) -> Expr {
    if replacements.is_empty() {
        return e.clone();
    }
    Substitute::new(replacements.iter().map(|(k, v)| (k.as_str(), v)).collect()).mutate_expr(e)
}

pub fn substitute(name: &str, replacement: &Expr, e: &Expr) -> Expr {
    Substitute::new(FastMap::from_iter([(name, replacement)])).mutate_expr(e)
}

pub fn substitute_map_in_stmt(replacements: &HashMap<String, Expr>, s: &Stmt) -> Stmt {
    if replacements.is_empty() {
        return s.clone();
    }
    Substitute::new(replacements.iter().map(|(k, v)| (k.as_str(), v)).collect()).mutate_stmt(s)
}

pub fn substitute_in_stmt(name: &str, replacement: &Expr, s: &Stmt) -> Stmt {
    Substitute::new(FastMap::from_iter([(name, replacement)])).mutate_stmt(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    /// Distinct nodes of `e` (by address), and the variables among them.
    fn dag(e: &Expr) -> (usize, Vec<String>) {
        fn walk(e: &Expr, seen: &mut std::collections::HashSet<usize>, vars: &mut Vec<String>) {
            if seen.insert(e.id()) {
                if let Some(v) = e.as_variable() {
                    vars.push(v.to_string());
                }
                crate::ir::visit::for_each_child(e, &mut |c| walk(c, seen, vars));
            }
        }
        let (mut seen, mut vars) = (std::collections::HashSet::new(), vec![]);
        walk(e, &mut seen, &mut vars);
        (seen.len(), vars)
    }

    #[test]
    fn shared_nodes_stay_shared() {
        // Each level uses the one below twice: 2^40 nodes as a tree.
        let mut e = Expr::var(Type::i32(), "x");
        for _ in 0..40 {
            e = Expr::add(Expr::binary(crate::ir::BinOp::Min, e.clone(), e), Expr::i32(1));
        }
        let (before, _) = dag(&e);
        let out = substitute("x", &Expr::var(Type::i32(), "y"), &e);
        assert_eq!(dag(&out), (before, vec!["y".to_string()]));
    }

    #[test]
    fn shadowing_lets_still_hide_the_name() {
        let x = Expr::var(Type::i32(), "x");
        // let x = 5 in x + x, with the outer x also used beside it.
        let inner = Expr::let_("x", Expr::i32(5), Expr::add(x.clone(), x.clone()));
        let e = Expr::add(inner, x.clone());
        let out = substitute("x", &Expr::i32(7), &e);
        assert_eq!(crate::lang::print::expr_to_string(&out), "((let x = 5 in (x + x)) + 7)");
    }
}

/// `e` with enclosing lets substituted: `lets` gives them innermost first
/// (name, value). The names `e` mentions are tracked through the
/// substitutions, so a let `e` does not use costs a set lookup instead of
/// a walk of `e` (loops nested in hundreds of lets asked this for every
/// loop).
pub fn substitute_lets<'a>(e: &Expr, lets: impl IntoIterator<Item = (&'a str, &'a Expr)>) -> Expr {
    // Every let has a value, so this is never None.
    substitute_lets_unless_opaque(e, lets.into_iter().map(|(n, v)| (n, Some(v)))).unwrap_or_else(|| e.clone())
}

/// `substitute_lets` where a let may have no value (`None`: it must not
/// be substituted); None if `e`, as it becomes, uses such a let.
pub fn substitute_lets_unless_opaque<'a>(
    e: &Expr,
    lets: impl IntoIterator<Item = (&'a str, Option<&'a Expr>)>,
) -> Option<Expr> {
    let mut e = e.clone();
    let mut used = crate::ir::visit::vars_used(&e);
    for (name, value) in lets {
        if !used.contains(name) {
            continue;
        }
        let value = value?;
        e = substitute(name, value, &e);
        used.remove(name);
        used.extend(crate::ir::visit::vars_used(value));
    }
    Some(e)
}
