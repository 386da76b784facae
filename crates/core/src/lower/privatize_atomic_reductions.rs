//! Privatize atomic integer sums inside parallel loops: each iteration of
//! the parallel loop accumulates into a small buffer of its own, then adds
//! that buffer into the shared one, one atomic add per element it changed.
//!
//! `hist[i32(im[r.x, r.y])] += 1` with `atomic().parallel(r.y)` makes
//! every pixel an atomic add on one of 256 shared counters; with two
//! threads the counters' cache lines bounce between the cores, and the
//! update ran 70 times slower than the same loop serial (87 ms against
//! 1.2 ms for a 2560x1536 image; Halide 21 the same). OpenMP compilers do
//! this for a `reduction` clause; in Halide it is what `rfactor` spells
//! out by hand.
//!
//! Assumes: atomics were removed where no thread races
//! (`remove_unneeded_atomics`), and the loops are simplified (constant
//! extents are constants).
//!
//! Guarantees: a parallel loop's body is rewritten only when every atomic
//! section in it is a lone `b[i] = b[i] + v` of one buffer `b`, of an
//! integer type (whose addition is associative and commutative, so the
//! order of the adds does not change the sum), `b` is read or written
//! nowhere else in the body, the body calls nothing with side effects,
//! the indices it adds at span at most `MAX_PRIVATE_BYTES`, and each
//! iteration adds at least `MIN_ADDS_PER_ELEMENT` times per element of
//! that span. Everything else is left as it was.

use crate::analysis::bounds::{bounds_of_expr, restore, Interval, Scope};
use crate::analysis::simplify;
use crate::ir::visit::{for_each_expr_in_stmt, for_each_stmt, mutate_stmt_children};
use crate::ir::{BinOp, Expr, ExprNode, ForType, MemoryType, Mutator, Stmt, StmtNode, Type};

/// The largest private buffer, in bytes (on the stack of the thread that
/// runs the iteration).
const MAX_PRIVATE_BYTES: i64 = 16 * 1024;

/// How many adds an iteration must make per element of its private buffer:
/// clearing it and adding it back cost about two adds per element.
const MIN_ADDS_PER_ELEMENT: i64 = 4;

pub fn privatize_atomic_reductions(s: &Stmt) -> Stmt {
    Privatize.mutate_stmt(s)
}

struct Privatize;

impl Mutator for Privatize {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let StmtNode::For { name, min, extent, for_type: ForType::Parallel, body } = s.node() {
            if let Some(body) = privatized(name, body) {
                return Stmt::for_loop(name.clone(), min.clone(), extent.clone(), ForType::Parallel, body);
            }
        }
        mutate_stmt_children(self, s)
    }
}

/// One atomic `b[index] = b[index] + addend`.
struct AtomicSum {
    buffer: String,
    ty: Type,
    index: Expr,
    addend: Expr,
}

/// The atomic sum `s` (an `Atomic` section) holds, if it is one.
fn atomic_sum(s: &Stmt) -> Option<AtomicSum> {
    let StmtNode::Atomic { producer_name: _, mutex_name, body } = s.node() else {
        return None;
    };
    let StmtNode::Store { name, value, index, predicate } = body.node() else {
        return None;
    };
    let ty = value.ty();
    if !mutex_name.is_empty() || !ty.is_scalar() || !ty.is_int_or_uint() || ty.is_bool() || !predicate.is_true() {
        return None;
    }
    let ExprNode::Binary { op: BinOp::Add, a, b } = value.node() else {
        return None;
    };
    let reads_itself = |e: &Expr| {
        matches!(e.node(), ExprNode::Load { name: n, index: i, predicate: p }
            if n == name && crate::ir::equal(i, index) && p.is_true())
    };
    let addend = if reads_itself(a) {
        b
    } else if reads_itself(b) {
        a
    } else {
        return None;
    };
    if reads(addend, name) || reads(index, name) {
        return None;
    }
    Some(AtomicSum { buffer: name.clone(), ty, index: index.clone(), addend: addend.clone() })
}

/// Does `e` load from `buffer`?
fn reads(e: &Expr, buffer: &str) -> bool {
    crate::ir::visit::expr_contains(e, &mut |x| matches!(x.node(), ExprNode::Load { name, .. } if name == buffer))
}

/// The body of parallel loop `loop_name` with its atomic sums privatized,
/// or None when it does not qualify (see the module's comment).
fn privatized(loop_name: &str, body: &Stmt) -> Option<Stmt> {
    // Every atomic section must be a sum into the same buffer, and the
    // body must not start more threads or have other side effects.
    let mut sums: Vec<AtomicSum> = vec![];
    let mut ok = true;
    for_each_stmt(body, &mut |x| match x.node() {
        StmtNode::Atomic { .. } => match atomic_sum(x) {
            Some(sum) => sums.push(sum),
            None => ok = false,
        },
        StmtNode::For { for_type: ForType::Parallel | ForType::Fork, .. } => ok = false,
        _ => {}
    });
    let first = sums.first()?;
    let (buffer, ty) = (first.buffer.clone(), first.ty);
    // Flat indices are Int(32) but with large buffers.
    if !ok || sums.iter().any(|s| s.buffer != buffer || s.ty != ty || s.index.ty() != Type::i32()) {
        return None;
    }
    // The buffer is touched only by those sums: its loads are the sums'
    // own reads (one per sum), and no other store names it.
    let mut loads = 0;
    let mut stores = 0;
    let mut impure = false;
    for_each_expr_in_stmt(body, &mut |e| match e.node() {
        ExprNode::Load { name, .. } if *name == buffer => loads += 1,
        ExprNode::Variable { name, .. } if name.starts_with(&format!("{buffer}.buffer")) => impure = true,
        ExprNode::Call { kind, .. } if !kind.is_pure() => impure = true,
        _ => {}
    });
    for_each_stmt(body, &mut |x| {
        if let StmtNode::Store { name, .. } = x.node() {
            stores += usize::from(*name == buffer);
        }
    });
    if impure || loads != sums.len() || stores != sums.len() {
        return None;
    }
    // The span of indices the sums add at, and how often they add.
    let span = SumSpan::of(body, &buffer)?;
    let extent = simplify(&Expr::add(Expr::sub(span.max.clone(), span.min.clone()), Expr::i32(1))).as_int_const()?;
    let bytes = extent.checked_mul(ty.bytes() as i64)?;
    if extent < 1 || bytes > MAX_PRIVATE_BYTES {
        return None;
    }
    // Enough adds per iteration: known when the loops' extents are
    // constants, else decided per iteration (the body is kept for the
    // iterations with too few).
    let enough = simplify(&Expr::ge(span.adds, Expr::i64(MIN_ADDS_PER_ELEMENT * extent)));
    let private = rewrite(loop_name, body, &buffer, ty, &span.min, extent);
    if enough.is_true() {
        Some(private)
    } else if enough.is_false() {
        None
    } else {
        Some(Stmt::if_then_else(enough, private, Some(body.clone())))
    }
}

/// The bounds of the indices a parallel loop body's sums add at, in terms
/// of what the body does not define, and the number of adds one
/// iteration makes (a lower bound, in Int(64), in the same terms).
struct SumSpan {
    min: Expr,
    max: Expr,
    adds: Expr,
}

impl SumSpan {
    fn of(body: &Stmt, buffer: &str) -> Option<SumSpan> {
        use crate::ir::visit::{walk_stmt, Visitor};
        struct Walk<'a> {
            buffer: &'a str,
            scope: Scope,
            /// Iterations of the loops around the current statement (at
            /// least).
            trips: Expr,
            min: Option<Expr>,
            max: Option<Expr>,
            adds: Expr,
            ok: bool,
        }
        impl Visitor for Walk<'_> {
            fn visit_expr(&mut self, _: &Expr) {}
            fn visit_stmt(&mut self, s: &Stmt) {
                if !self.ok {
                    return;
                }
                match s.node() {
                    StmtNode::LetStmt { name, value, body } => {
                        let b = bounds_of_expr(value, &self.scope);
                        let outer = self.scope.insert(name.clone(), b);
                        self.visit_stmt(body);
                        restore(&mut self.scope, name, outer);
                    }
                    StmtNode::For { name, min, extent, body, .. } => {
                        let lo = bounds_of_expr(min, &self.scope);
                        let ext = bounds_of_expr(extent, &self.scope);
                        let (Some(lo_min), Some(lo_max), Some(ext_max)) = (lo.min, lo.max, ext.max.clone()) else {
                            self.ok = false;
                            return;
                        };
                        let range = Interval::new(
                            Some(lo_min),
                            Some(simplify(&Expr::add(lo_max, Expr::sub(ext_max, Expr::i32(1))))),
                        );
                        // The fewest iterations: the least the extent can be.
                        let fewest = match ext.min {
                            Some(m) => Expr::max(Expr::cast(Type::i64(), m), Expr::i64(0)),
                            None => Expr::i64(0),
                        };
                        let outer_trips = self.trips.clone();
                        self.trips = simplify(&Expr::mul(self.trips.clone(), fewest));
                        let outer = self.scope.insert(name.clone(), range);
                        self.visit_stmt(body);
                        restore(&mut self.scope, name, outer);
                        self.trips = outer_trips;
                    }
                    StmtNode::Atomic { body, .. } => {
                        if let StmtNode::Store { name, index, .. } = body.node() {
                            if name == self.buffer {
                                self.sum_at(index);
                            }
                        }
                    }
                    StmtNode::IfThenElse { then_case, else_case, .. } => {
                        // A guarded sum may not run: it counts for its span only.
                        let trips = std::mem::replace(&mut self.trips, Expr::i64(0));
                        self.visit_stmt(then_case);
                        if let Some(e) = else_case {
                            self.visit_stmt(e);
                        }
                        self.trips = trips;
                    }
                    _ => walk_stmt(self, s),
                }
            }
        }
        impl Walk<'_> {
            fn sum_at(&mut self, index: &Expr) {
                let b = bounds_of_expr(index, &self.scope);
                let (Some(lo), Some(hi)) = (b.min, b.max) else {
                    self.ok = false;
                    return;
                };
                self.min = Some(match self.min.take() {
                    Some(m) => Expr::min(m, lo),
                    None => lo,
                });
                self.max = Some(match self.max.take() {
                    Some(m) => Expr::max(m, hi),
                    None => hi,
                });
                self.adds = simplify(&Expr::add(self.adds.clone(), self.trips.clone()));
            }
        }
        let mut w = Walk {
            buffer,
            scope: Scope::default(),
            trips: Expr::i64(1),
            min: None,
            max: None,
            adds: Expr::i64(0),
            ok: true,
        };
        w.visit_stmt(body);
        if !w.ok {
            return None;
        }
        Some(SumSpan { min: simplify(&w.min?), max: simplify(&w.max?), adds: w.adds })
    }
}

/// `body` adding into a private buffer of `extent` elements that starts at
/// index `base` of `buffer`, cleared first and added into `buffer` last.
fn rewrite(loop_name: &str, body: &Stmt, buffer: &str, ty: Type, base: &Expr, extent: i64) -> Stmt {
    let private = format!("{buffer}.private.{loop_name}");
    let base_name = format!("{private}.base");
    let base_var = Expr::var(Type::i32(), base_name.clone());
    let i_name = format!("{private}.i");
    let i = Expr::var(Type::i32(), i_name.clone());
    let yes = Expr::bool_const(true);

    struct ToPrivate<'a> {
        buffer: &'a str,
        private: &'a str,
        base: &'a Expr,
    }
    impl Mutator for ToPrivate<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            e.clone()
        }
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match atomic_sum(s) {
                Some(sum) if sum.buffer == self.buffer => {
                    // (A sum's store is unpredicated: `atomic_sum`.)
                    let yes = Expr::bool_const(true);
                    let at = Expr::sub(sum.index, self.base.clone());
                    let old = Expr::load(sum.ty, self.private, at.clone(), yes.clone());
                    Stmt::store(self.private, Expr::add(old, sum.addend), at, yes)
                }
                _ => mutate_stmt_children(self, s),
            }
        }
    }
    let body = ToPrivate { buffer, private: &private, base: &base_var }.mutate_stmt(body);

    let clear = Stmt::for_loop(
        i_name.clone(),
        Expr::i32(0),
        Expr::i32(extent),
        ForType::Serial,
        Stmt::store(private.clone(), Expr::zero(ty), i.clone(), yes.clone()),
    );
    let element = Expr::load(ty, private.clone(), i.clone(), yes.clone());
    let shared_at = Expr::add(i.clone(), base_var.clone());
    let add_back = Stmt::for_loop(
        i_name,
        Expr::i32(0),
        Expr::i32(extent),
        ForType::Serial,
        Stmt::if_then_else(
            Expr::ne(element.clone(), Expr::zero(ty)),
            Stmt::atomic(
                buffer,
                "",
                Stmt::store(
                    buffer,
                    Expr::add(Expr::load(ty, buffer, shared_at.clone(), yes.clone()), element),
                    shared_at,
                    yes.clone(),
                ),
            ),
            None,
        ),
    );
    let allocation = Stmt::new(StmtNode::Allocate {
        name: private,
        ty,
        memory_type: MemoryType::Stack,
        extents: vec![Expr::i32(extent)],
        condition: yes,
        body: Stmt::block(vec![clear, body, add_back]),
    });
    Stmt::let_stmt(base_name, base.clone(), allocation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes() -> Expr {
        Expr::bool_const(true)
    }

    /// `parallel (y, 0, 8) { for (x, 0, extent) { atomic { hist[i] = hist[i] + v } } }`
    /// with `i = i32(im[x + 100 y])`.
    fn histogram(ty: Type, extent: Expr, addend: Expr) -> Stmt {
        let x = Expr::var_i32("x");
        let y = Expr::var_i32("y");
        let pixel = Expr::load(Type::uint(8), "im", Expr::add(x, Expr::mul(y, Expr::i32(100))), yes());
        let i = Expr::cast(Type::i32(), pixel);
        let sum = Stmt::store("hist", Expr::add(Expr::load(ty, "hist", i.clone(), yes()), addend), i, yes());
        let inner = Stmt::for_loop("x", Expr::i32(0), extent, ForType::Serial, Stmt::atomic("hist", "", sum));
        Stmt::for_loop("y", Expr::i32(0), Expr::i32(8), ForType::Parallel, inner)
    }

    #[test]
    fn an_integer_histogram_with_enough_adds_per_row_is_private() {
        let s = histogram(Type::i32(), Expr::i32(2000), Expr::i32(1));
        let out = privatize_atomic_reductions(&s).to_string();
        assert!(out.contains("allocate hist.private.y[int32 * 256]"), "{out}");
        // The only atomic left adds a private bin back.
        assert_eq!(out.matches("atomic").count(), 1, "{out}");
        assert!(out.contains("hist.private.y[hist.private.y.i] != 0"), "{out}");
    }

    #[test]
    fn too_few_adds_per_row_stay_atomic() {
        let s = histogram(Type::i32(), Expr::i32(300), Expr::i32(1));
        assert!(privatize_atomic_reductions(&s).same_as(&s));
    }

    #[test]
    fn a_row_of_unknown_length_decides_when_it_runs() {
        let s = histogram(Type::i32(), Expr::var_i32("width"), Expr::i32(1));
        let out = privatize_atomic_reductions(&s).to_string();
        assert!(out.contains("if (((int64)1024 <= max(int64(width), (int64)0)))"), "{out}");
        // Both versions: the private one and the atomic one.
        assert!(out.contains("allocate hist.private.y"), "{out}");
        assert_eq!(out.matches("atomic").count(), 2, "{out}");
    }

    #[test]
    fn float_sums_and_sums_that_read_their_buffer_stay_atomic() {
        let float = histogram(Type::float(32), Expr::i32(2000), Expr::f32(1.0));
        assert!(privatize_atomic_reductions(&float).same_as(&float));
        let reads_a_bin = histogram(
            Type::i32(),
            Expr::i32(2000),
            Expr::load(Type::i32(), "hist", Expr::i32(3), yes()),
        );
        assert!(privatize_atomic_reductions(&reads_a_bin).same_as(&reads_a_bin));
    }

    #[test]
    fn another_store_to_the_buffer_keeps_it_atomic() {
        let s = histogram(Type::i32(), Expr::i32(2000), Expr::i32(1));
        let StmtNode::For { name, min, extent, for_type, body } = s.node() else { unreachable!() };
        let reset = Stmt::store("hist", Expr::i32(0), Expr::i32(0), yes());
        let s = Stmt::for_loop(name.clone(), min.clone(), extent.clone(), *for_type, Stmt::block(vec![body.clone(), reset]));
        assert!(privatize_atomic_reductions(&s).same_as(&s));
    }
}
