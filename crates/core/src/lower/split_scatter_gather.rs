//! Split each store whose arguments or values hold `scatter`/`gather`
//! packets into one store per element (Halide's SplitScatterGather): every
//! element's arguments and values are computed first, then stored in
//! order, so the last of repeated locations wins and a definition can
//! permute elements in place. Runs right before storage flattening.

use crate::error::{Error, Result};
use crate::ir::visit::{
    for_each_child, for_each_expr_in_stmt, mutate_expr_children, mutate_stmt_children, Mutator,
};
use crate::ir::{CallKind, Expr, ExprNode, Intrinsic, Stmt, StmtNode};
use crate::lang::var::unique_name;

pub fn split_scatter_gather(s: &Stmt) -> Result<Stmt> {
    let mut m = Split { error: None };
    let out = m.mutate_stmt(s);
    if let Some(e) = m.error {
        return Err(e);
    }
    if stmt_has_packet(&out) {
        return Err(Error::user(
            "scatter/gather expression used outside of a Func definition\n",
        ));
    }
    Ok(out)
}

fn is_packet(e: &Expr) -> bool {
    matches!(e.node(), ExprNode::Call { kind: CallKind::Intrinsic(Intrinsic::ScatterGather), .. })
}

fn stmt_has_packet(s: &Stmt) -> bool {
    let mut found = false;
    for_each_expr_in_stmt(s, &mut |e| found |= is_packet(e));
    found
}

/// The packet size of the expressions of one store: 0 without packets.
fn packet_size(name: &str, exprs: &[Expr]) -> Result<usize> {
    let mut size = 0;
    let mut err = None;
    for e in exprs {
        check_packets(e, name, false, &mut size, &mut err);
    }
    err.map_or(Ok(size), Err)
}

fn check_packets(e: &Expr, name: &str, inside: bool, size: &mut usize, err: &mut Option<Error>) {
    if is_packet(e) {
        let ExprNode::Call { args, .. } = e.node() else { unreachable!() };
        if inside {
            err.get_or_insert_with(|| {
                Error::user(format!("Can't nest an expression tuple inside another in definition of {name}\n"))
            });
        } else if *size != 0 && *size != args.len() {
            err.get_or_insert_with(|| {
                Error::user(format!(
                    "Expression tuples of mismatched sizes used in definition of {name}: {size} vs {}\n",
                    args.len()
                ))
            });
        }
        *size = args.len();
        for a in args {
            check_packets(a, name, true, size, err);
        }
        return;
    }
    let mut children = vec![];
    for_each_child(e, &mut |c| children.push(c.clone()));
    for c in &children {
        check_packets(c, name, inside, size, err);
    }
}

/// `e` with every packet replaced by its element `idx`.
fn element(e: &Expr, idx: usize) -> Expr {
    struct Extract(usize);
    impl Mutator for Extract {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            match e.node() {
                ExprNode::Call { args, kind: CallKind::Intrinsic(Intrinsic::ScatterGather), .. } => {
                    args[self.0].clone()
                }
                _ => mutate_expr_children(self, e),
            }
        }
    }
    Extract(idx).mutate_expr(e)
}

struct Split {
    error: Option<Error>,
}

impl Mutator for Split {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let StmtNode::Provide { name, values, args, predicate } = s.node() else {
            return mutate_stmt_children(self, s);
        };
        // Values first, as Halide's visitor sees them (it decides which
        // size a mismatch message names first).
        let all: Vec<Expr> = values.iter().chain(args).cloned().collect();
        let size = match packet_size(name, &all) {
            Ok(n) => n,
            Err(e) => {
                self.error.get_or_insert(e);
                return s.clone();
            }
        };
        if size == 0 {
            return s.clone();
        }
        // Each element's args and values become lets, all bound before the
        // first store.
        let mut lets: Vec<(String, Expr)> = vec![];
        let mut bind = |e: Expr| {
            let v = Expr::var(e.ty(), unique_name('t'));
            if let ExprNode::Variable { name, .. } = v.node() {
                lets.push((name.clone(), e));
            }
            v
        };
        let mut stores = vec![];
        for idx in 0..size {
            let a: Vec<Expr> = args.iter().map(|e| bind(element(e, idx))).collect();
            let v: Vec<Expr> = values.iter().map(|e| bind(element(e, idx))).collect();
            stores.push(Stmt::provide(name.clone(), v, a, predicate.clone()));
        }
        let mut out = Stmt::block(stores);
        for (n, e) in lets.into_iter().rev() {
            out = Stmt::let_stmt(n, e, out);
        }
        out
    }
}
