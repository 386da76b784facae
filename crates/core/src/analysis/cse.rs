//! Common-subexpression elimination: repeated non-trivial pure
//! subexpressions of an Expr are computed once in a Let with a fresh name
//! (`t0`, `t1`, ... skipping names already in use).
//!
//! 1. Global value numbering: the tree is rebuilt bottom-up so that equal
//!    subtrees become one shared node with one number (hashing a node by its
//!    kind, fields and its children's numbers, so each node is hashed once).
//! 2. Use counting over the numbered DAG, descending into a node's children
//!    only the first time it is reached: a subexpression repeated only
//!    inside one repeated parent is not lifted on its own.
//! 3. Nodes used more than once (pure, not trivial) become lets, ordered so
//!    each let's value only mentions earlier lets.
//!
//! A Let inside the expression is a barrier: its value and body are CSE'd
//! separately, so nothing that mentions its variable escapes its scope.

use crate::fast_hash::{FastMap as HashMap, FastSet as HashSet};
use std::hash::{Hash, Hasher};

use crate::ir::equality::{equal_nodes, hash_expr, hash_node};
use crate::ir::visit::{for_each_expr_in_stmt, mutate_stmt_children};
use crate::ir::{Expr, ExprNode, Intrinsic, Mutator, Stmt, StmtNode};

fn id(e: &Expr) -> usize {
    e.node() as *const ExprNode as usize
}

/// Equality of two nodes whose children are canonical (compared by
/// identity). Lets are barriers whose insides are not numbered, so they
/// compare deeply.
fn shallow_eq(a: &Expr, b: &Expr) -> bool {
    match (a.node(), b.node()) {
        (ExprNode::Let { .. }, ExprNode::Let { .. }) => crate::ir::equal(a, b),
        _ => equal_nodes(a, b, &mut |x, y| x.same_as(y)),
    }
}

fn shallow_hash<H: Hasher>(e: &Expr, h: &mut H) {
    match e.node() {
        ExprNode::Let { .. } => hash_expr(e, h),
        _ => hash_node(e, h, &mut |c, h| id(c).hash(h)),
    }
}

/// The children value numbering looks into: all but a Let's (a barrier).
fn each_child(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    if !matches!(e.node(), ExprNode::Let { .. }) {
        crate::ir::visit::for_each_child(e, f)
    }
}

struct Key(Expr);
impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        shallow_eq(&self.0, &o.0)
    }
}
impl Eq for Key {}
impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        shallow_hash(&self.0, h)
    }
}

fn is_trivial(e: &Expr) -> bool {
    match e.node() {
        ExprNode::IntImm(_)
        | ExprNode::UIntImm(_)
        | ExprNode::FloatImm(_)
        | ExprNode::StringImm(_)
        | ExprNode::Variable { .. } => true,
        ExprNode::Broadcast { value, .. } => is_trivial(value),
        _ => false,
    }
}

fn node_is_pure(e: &Expr) -> bool {
    match e.node() {
        ExprNode::Call { kind, .. } => kind.is_pure(),
        _ => true,
    }
}

/// Fresh names that collide with nothing in the input.
struct Names {
    used: HashSet<String>,
    next: usize,
}

impl Names {
    fn fresh(&mut self) -> String {
        loop {
            let n = format!("t{}", self.next);
            self.next += 1;
            if self.used.insert(n.clone()) {
                return n;
            }
        }
    }
}

struct Entry {
    expr: Expr,
    uses: usize,
    pure: bool,
}

struct Gvn<'a> {
    names: &'a mut Names,
    table: HashMap<Key, usize>,
    entries: Vec<Entry>,
    /// input node id -> (input kept alive, number)
    memo: HashMap<usize, (Expr, usize)>,
    /// canonical node id -> number
    number: HashMap<usize, usize>,
}

impl Gvn<'_> {
    fn canon(&mut self, e: &Expr) -> Expr {
        if let Some((_, n)) = self.memo.get(&id(e)) {
            return self.entries[*n].expr.clone();
        }
        let rebuilt = match e.node() {
            ExprNode::Let { name, value, body } => {
                let v = cse_with(value, self.names);
                let b = cse_with(body, self.names);
                if v.same_as(value) && b.same_as(body) {
                    e.clone()
                } else {
                    Expr::let_(name.clone(), v, b)
                }
            }
            _ => crate::ir::visit::mutate_expr_children(&mut Canon(self), e),
        };
        let mut pure = node_is_pure(&rebuilt);
        each_child(&rebuilt, &mut |c| {
            if let Some(n) = self.number.get(&id(c)) {
                pure &= self.entries[*n].pure;
            }
        });
        let n = match self.table.get(&Key(rebuilt.clone())) {
            Some(n) => *n,
            None => {
                let n = self.entries.len();
                self.entries.push(Entry {
                    expr: rebuilt.clone(),
                    uses: 0,
                    pure,
                });
                self.table.insert(Key(rebuilt.clone()), n);
                self.number.insert(id(&rebuilt), n);
                n
            }
        };
        self.memo.insert(id(e), (e.clone(), n));
        self.entries[n].expr.clone()
    }

    fn count(&mut self, e: &Expr) {
        let Some(&n) = self.number.get(&id(e)) else {
            return;
        };
        self.entries[n].uses += 1;
        if self.entries[n].uses > 1 {
            return;
        }
        if matches!(e.node(), ExprNode::Let { .. }) {
            return;
        }
        let mut kids = vec![];
        each_child(e, &mut |c| kids.push(c.clone()));
        for k in kids {
            self.count(&k);
        }
    }
}

struct Canon<'a, 'b>(&'a mut Gvn<'b>);
impl Mutator for Canon<'_, '_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        self.0.canon(e)
    }
}

/// Replaces lifted nodes by their variables.
struct Replace<'a> {
    number: &'a HashMap<usize, usize>,
    vars: &'a HashMap<usize, Expr>,
    memo: HashMap<usize, Expr>,
}

impl Mutator for Replace<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if let Some(n) = self.number.get(&id(e)) {
            if let Some(v) = self.vars.get(n) {
                return v.clone();
            }
        }
        if matches!(e.node(), ExprNode::Let { .. }) {
            return e.clone();
        }
        if let Some(r) = self.memo.get(&id(e)) {
            return r.clone();
        }
        let r = crate::ir::visit::mutate_expr_children(self, e);
        self.memo.insert(id(e), r.clone());
        r
    }
}

fn cse_with(e: &Expr, names: &mut Names) -> Expr {
    let mut g = Gvn {
        names,
        table: HashMap::default(),
        entries: vec![],
        memo: HashMap::default(),
        number: HashMap::default(),
    };
    let root = g.canon(e);
    g.count(&root);
    let lifted: Vec<usize> = (0..g.entries.len())
        .filter(|&n| {
            let en = &g.entries[n];
            en.uses > 1 && en.pure && !is_trivial(&en.expr) && !en.expr.ty().is_handle()
        })
        .collect();
    if lifted.is_empty() {
        return if crate::ir::equal(&root, e) {
            e.clone()
        } else {
            root
        };
    }
    let mut vars = HashMap::default();
    let mut names_of = vec![];
    for &n in &lifted {
        let name = g.names.fresh();
        vars.insert(n, Expr::var(g.entries[n].expr.ty(), name.clone()));
        names_of.push(name);
    }
    let mut rep = Replace {
        number: &g.number,
        vars: &vars,
        memo: HashMap::default(),
    };
    let values: Vec<Expr> = lifted
        .iter()
        .map(|&n| crate::ir::visit::mutate_expr_children(&mut rep, &g.entries[n].expr))
        .collect();
    let mut body = rep.mutate_expr(&root);
    for (name, value) in names_of.into_iter().zip(values).rev() {
        body = Expr::let_(name, value, body);
    }
    body
}

/// The names of the variables and lets of `e`, visiting each shared node
/// once (a tree walk of a heavily shared expression takes exponential time).
fn collect_names_expr(e: &Expr, used: &mut HashSet<String>) {
    fn walk(e: &Expr, seen: &mut HashSet<usize>, used: &mut HashSet<String>) {
        if !seen.insert(id(e)) {
            return;
        }
        if let ExprNode::Variable { name, .. } | ExprNode::Let { name, .. } = e.node() {
            used.insert(name.clone());
        }
        crate::ir::visit::for_each_child(e, &mut |c| walk(c, seen, used));
    }
    walk(e, &mut HashSet::default(), used);
}

/// The number of nodes of `e` as a tree (saturating) and as a DAG.
fn tree_and_dag_size(e: &Expr) -> (u64, usize) {
    fn tree(e: &Expr, memo: &mut HashMap<usize, u64>) -> u64 {
        if let Some(n) = memo.get(&id(e)) {
            return *n;
        }
        let mut n: u64 = 1;
        crate::ir::visit::for_each_child(e, &mut |c| n = n.saturating_add(tree(c, memo)));
        memo.insert(id(e), n);
        n
    }
    let mut memo = HashMap::default();
    let t = tree(e, &mut memo);
    (t, memo.len())
}

/// `cse(e)` if `e` shares subexpressions so much that its tree is far
/// larger than its DAG (`x ** (2**31 - 1)` builds 31 shared squarings): the
/// passes that walk expressions as trees would take exponential time on
/// it. Halide CSEs every definition; ferrohalide only these.
pub fn cse_if_heavily_shared(e: &Expr) -> Expr {
    let (tree, dag) = tree_and_dag_size(e);
    if tree > 10_000 && tree / 4 > dag as u64 {
        cse(e)
    } else {
        e.clone()
    }
}

/// Lift repeated subexpressions of `e` into lets.
pub fn cse(e: &Expr) -> Expr {
    let mut used = HashSet::default();
    collect_names_expr(e, &mut used);
    let mut names = Names { used, next: 0 };
    cse_with(e, &mut names)
}

/// CSE every expression of a statement separately, with names fresh for
/// the whole statement.
pub fn cse_stmt(s: &Stmt) -> Stmt {
    let used = stmt_names(s);
    struct M {
        names: Names,
    }
    impl Mutator for M {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            cse_with(e, &mut self.names)
        }
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            mutate_stmt_children(self, s)
        }
    }
    M {
        names: Names { used, next: 0 },
    }
    .mutate_stmt(s)
}

/// The names a statement's variables, lets, loops and buffers use.
fn stmt_names(s: &Stmt) -> HashSet<String> {
    let mut used = HashSet::default();
    for_each_expr_in_stmt(s, &mut |x| match x.node() {
        ExprNode::Variable { name, .. } | ExprNode::Let { name, .. } => {
            used.insert(name.clone());
        }
        _ => {}
    });
    collect_stmt_names(s, &mut used);
    used
}

/// CSE the scalar expressions that control a statement: let values, loop
/// bounds, conditions, assertions and allocation sizes. The bounds code of
/// a large pipeline repeats whole subexpressions (local_laplacian's pyramid
/// levels each restate the clamped sizes of the ones before), and LLVM
/// would spend its time finding them again. Every repeated node is lifted
/// (Halide's `lift_all`): a scalar let costs code generation nothing.
/// Stores, loads, calls and assertion messages stay as they are: code
/// generation matches patterns in them (a dense load's ramp, an atomic
/// update's form, an error message's parts).
pub fn cse_control_exprs(s: &Stmt) -> Stmt {
    struct M {
        names: Names,
        /// Inside a statement whose own expressions are left alone.
        leave: bool,
    }
    impl Mutator for M {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            if self.leave {
                return e.clone();
            }
            self.control(e)
        }
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            if let StmtNode::AssertStmt { condition, message } = s.node() {
                return self.assertion(condition, message);
            }
            let control = matches!(
                s.node(),
                StmtNode::LetStmt { .. }
                    | StmtNode::For { .. }
                    | StmtNode::IfThenElse { .. }
                    | StmtNode::Allocate { .. }
            );
            let outer = std::mem::replace(&mut self.leave, !control);
            let out = mutate_stmt_children(self, s);
            self.leave = outer;
            out
        }
    }
    impl M {
        /// An assertion whose condition and error message share values
        /// (the index checked and the index reported): the shared values
        /// are computed once, in lets around the assertion, so the failure
        /// path reports them instead of computing them again (the body
        /// function is compiled without LLVM's optimizer, which would
        /// otherwise find them: a third of its instructions were failure
        /// paths). A value only the message needs stays in the message,
        /// off the path that passes.
        fn assertion(&mut self, condition: &Expr, message: &Expr) -> Stmt {
            let (Some(parts), true) = (message.as_intrinsic(Intrinsic::Error), condition.ty().is_scalar()) else {
                return Stmt::assert(self.control(condition), message.clone());
            };
            let mut args = vec![condition.clone()];
            args.extend(parts.iter().cloned());
            let mut joint = cse_with(&Expr::intrinsic(message.ty(), Intrinsic::Error, args), &mut self.names);
            let mut lets = vec![];
            while let ExprNode::Let { name, value, body } = joint.node() {
                lets.push((name.clone(), value.clone()));
                let body = body.clone();
                joint = body;
            }
            let Some([condition, parts @ ..]) = joint.as_intrinsic(Intrinsic::Error) else {
                unreachable!("CSE keeps the root call of an expression")
            };
            // The lets the condition needs, directly or through later lets.
            let mut needed = crate::ir::visit::vars_used(condition);
            for (name, value) in lets.iter().rev() {
                if needed.contains(name) {
                    needed.extend(crate::ir::visit::vars_used(value));
                }
            }
            let (outside, inside): (Vec<_>, Vec<_>) = lets.into_iter().partition(|(n, _)| needed.contains(n));
            let inside_innermost_first: Vec<(&str, &Expr)> =
                inside.iter().rev().map(|(n, v)| (n.as_str(), v)).collect();
            let parts = parts
                .iter()
                .map(|p| crate::analysis::substitute::substitute_lets(p, inside_innermost_first.iter().copied()))
                .collect();
            Stmt::let_stmts(
                outside,
                Stmt::assert(condition.clone(), Expr::intrinsic(message.ty(), Intrinsic::Error, parts)),
            )
        }

        /// A control expression, CSE'd. A call at the root is left alone:
        /// code generation matches it (a runtime object whose let
        /// releases it, a buffer's creation).
        fn control(&mut self, e: &Expr) -> Expr {
            if !e.ty().is_scalar() || matches!(e.node(), ExprNode::Call { .. }) {
                return e.clone();
            }
            cse_with(e, &mut self.names)
        }
    }
    M { names: Names { used: stmt_names(s), next: 0 }, leave: false }.mutate_stmt(s)
}

fn collect_stmt_names(s: &Stmt, used: &mut HashSet<String>) {
    match s.node() {
        StmtNode::LetStmt { name, body, .. } | StmtNode::For { name, body, .. } => {
            used.insert(name.clone());
            collect_stmt_names(body, used);
        }
        StmtNode::Allocate { name, body, .. } | StmtNode::Realize { name, body, .. } => {
            used.insert(name.clone());
            collect_stmt_names(body, used);
        }
        StmtNode::ProducerConsumer { body, .. } => collect_stmt_names(body, used),
        StmtNode::Block(v) => v.iter().for_each(|x| collect_stmt_names(x, used)),
        StmtNode::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            collect_stmt_names(then_case, used);
            if let Some(e) = else_case {
                collect_stmt_names(e, used);
            }
        }
        StmtNode::Store { name, .. } | StmtNode::Provide { name, .. } | StmtNode::Free { name } => {
            used.insert(name.clone());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::simplify::fuzz_tests::{eval, random_env, Gen, Rng};
    use crate::ir::{Intrinsic, Type};

    fn x() -> Expr {
        Expr::var_i32("x")
    }
    fn y() -> Expr {
        Expr::var_i32("y")
    }

    #[test]
    fn lifts_repeated() {
        let s = Expr::add(x(), y());
        let e = Expr::mul(s.clone(), Expr::add(x(), y()));
        assert_eq!(cse(&e).to_string(), "(let t0 = (x + y) in (t0 * t0))");
        // nothing repeated
        let e = Expr::mul(s.clone(), x());
        assert!(cse(&e).same_as(&e));
        // trivial nodes are not lifted
        let e = Expr::mul(Expr::add(x(), Expr::i32(1)), Expr::i32(1));
        assert!(cse(&e).same_as(&e));
    }

    #[test]
    fn control_expressions_are_cse_d_and_stores_are_not() {
        let sum = || Expr::mul(Expr::add(x(), y()), Expr::add(x(), y()));
        let store = Stmt::store("f", sum(), x(), Expr::bool_const(true));
        let check = Stmt::assert(
            Expr::lt(sum(), Expr::i32(100)),
            Expr::error(crate::ir::ErrorCode::Generic, vec![sum()]),
        );
        let s = Stmt::let_stmt("m", sum(), Stmt::block(vec![check, store]));
        let out = cse_control_exprs(&s).to_string();
        // The let's value gets a let (names fresh for the whole
        // statement); the assertion's condition and message share their
        // product through lets around the assertion; the store's value
        // keeps its repeated sum.
        assert!(out.contains("let m = (let t0 = (x + y) in (t0 * t0))"), "{out}");
        assert!(out.contains("let t1 = (x + y)\n"), "{out}");
        assert!(out.contains("let t2 = (t1 * t1)\n"), "{out}");
        assert!(out.contains("assert((t2 < 100), error(-1, t2))"), "{out}");
        assert_eq!(out.matches("((x + y) * (x + y))").count(), 1, "{out}");
    }

    #[test]
    fn a_value_only_an_error_message_shares_stays_in_the_message() {
        // The message prints `x + y` twice; the condition does not need
        // it, so the passing path must not compute it.
        let sum = || Expr::add(x(), y());
        let check = Stmt::assert(
            Expr::lt(x(), Expr::i32(100)),
            Expr::error(crate::ir::ErrorCode::Generic, vec![sum(), sum()]),
        );
        let out = cse_control_exprs(&check).to_string();
        assert_eq!(out.trim(), "assert((x < 100), error(-1, (x + y), (x + y)))", "{out}");
        // A value the message shares with the condition is computed once,
        // and what only the message uses of it stays inside the message.
        let both = Stmt::assert(
            Expr::lt(Expr::mul(sum(), Expr::i32(3)), Expr::i32(100)),
            Expr::error(crate::ir::ErrorCode::Generic, vec![Expr::mul(sum(), Expr::i32(3)), Expr::mul(sum(), Expr::i32(5)), Expr::mul(sum(), Expr::i32(5))]),
        );
        let out = cse_control_exprs(&both).to_string();
        assert!(out.starts_with("let t0 = (x + y)\nlet t1 = (t0 * 3)\nassert((t1 < 100), error(-1, t1, "), "{out}");
        assert_eq!(out.matches("(t0 * 5)").count(), 2, "{out}");
    }

    #[test]
    fn nested_and_fresh_names() {
        let t0 = Expr::var_i32("t0");
        let a = Expr::add(x(), t0.clone());
        let b = Expr::mul(a.clone(), Expr::i32(2));
        let e = Expr::sub(b.clone(), Expr::mul(Expr::add(x(), t0), Expr::i32(2)));
        let r = cse(&e).to_string();
        // only the outer repeated node is lifted, and "t0" is taken
        assert_eq!(r, "(let t1 = ((x + t0) * 2) in (t1 - t1))");
        let e = Expr::add(Expr::mul(a.clone(), a.clone()), a.clone());
        assert_eq!(
            cse(&e).to_string(),
            "(let t1 = (x + t0) in ((t1 * t1) + t1))"
        );
    }

    #[test]
    fn impure_not_lifted() {
        let p = Expr::intrinsic(Type::i32(), Intrinsic::Print, vec![x()]);
        let e = Expr::add(p.clone(), p);
        assert_eq!(cse(&e).to_string(), "(print(x) + print(x))");
    }

    #[test]
    fn stmt_cse() {
        let s = Expr::add(x(), y());
        let st = Stmt::store(
            "t0",
            Expr::mul(s.clone(), s.clone()),
            Expr::i32(0),
            Expr::bool_const(true),
        );
        let r = cse_stmt(&st).to_string();
        assert_eq!(r, "t0[0] = (let t1 = (x + y) in (t1 * t1))\n");
    }

    #[test]
    fn fuzz_cse_preserves_value() {
        let mut gen = Gen::new(31337);
        let mut rng = Rng::new(5);
        let mut lifted = 0;
        for case in 0..1500 {
            let ty = [Type::i32(), Type::int(8), Type::uint(16)][case % 3];
            let e = gen.int_expr(ty, 4);
            // make repetition likely
            let e = Expr::add(e.clone(), Expr::mul(e, Expr::make_const_i64(ty, 3)));
            let c = cse(&e);
            if !c.same_as(&e) {
                lifted += 1;
            }
            for _ in 0..4 {
                let mut env = random_env(&mut rng);
                let (mut o1, mut o2) = (false, false);
                let v1 = eval(&e, &mut env, &mut o1);
                let v2 = eval(&c, &mut env, &mut o2);
                if !o1 && !o2 {
                    assert_eq!(v1, v2, "{e}\n=> {c}");
                }
            }
        }
        assert!(lifted > 1000);
    }
}
