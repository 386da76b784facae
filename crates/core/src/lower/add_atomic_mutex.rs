//! Atomic updates that need a lock (after Halide's AddAtomicMutex.cpp).
//!
//! Assumes: storage flattening is done; every `Atomic` node holds the
//! Stores of its producer (`f`, or the Tuple element buffers `f.i`), and
//! keeps a mutex name only where its stores must happen together (a Tuple
//! cluster updated by parallel loops, see storage_flattening.rs); an
//! Atomic with a mutex lies inside the `produce` of its producer.
//!
//! Guarantees: no atomic store's index reads the producer's current value
//! (Halide's user error otherwise: no single lock or atomic instruction
//! could protect such an update), and no locked update holds a `require()`
//! (a failure would leave its lock held: refused as not implemented). Each
//! Atomic with a mutex `f.mutex` takes
//! the lock of its stored element first and releases it last:
//! `halide_mutex_array_lock(f.mutex, i % MUTEX_LOCKS)` ... `unlock`, where
//! `i` is the flat index of its first store; and the `produce f` it belongs
//! to starts with `let f.mutex = halide_mutex_array_create(MUTEX_LOCKS)`
//! (the runtime's lock array; the code generator destroys it when the
//! let's body ends or fails, as it frees heap allocations).
//! Difference from Halide, which has one lock per element of
//! the Func: a fixed array of locks shared by elements with equal index
//! modulo its size, so neither the lock array's size nor the index range
//! depend on the buffer's shape (strided outputs included); elements that
//! share a lock only wait for each other.

use crate::error::{Error, Result};
use crate::ir::visit::{expr_loads_from, mutate_stmt_children, walk_stmt, Visitor};
use crate::ir::{CallKind, Expr, Intrinsic, Mutator, Stmt, StmtNode, Type};

/// Number of locks in each mutex array.
pub const MUTEX_LOCKS: i64 = 1024;
/// The runtime's lock array entry points (Halide's names).
pub const MUTEX_ARRAY_CREATE: &str = "halide_mutex_array_create";
pub const MUTEX_LOCK: &str = "halide_mutex_array_lock";
pub const MUTEX_UNLOCK: &str = "halide_mutex_array_unlock";

pub fn add_atomic_mutex(s: &Stmt) -> Result<Stmt> {
    let mut check = CheckIndices { error: None };
    check.visit_stmt(s);
    if let Some(e) = check.error {
        return Err(e);
    }
    reject_failures_under_lock(s)?;
    Ok(AddMutex { needed: vec![] }.mutate_stmt(s))
}

/// Is `name` the buffer of `producer` or of one of its Tuple elements?
pub fn is_producer_buffer(name: &str, producer: &str) -> bool {
    name == producer
        || name
            .strip_prefix(producer)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()))
}

fn reads_producer(e: &Expr, producer: &str) -> bool {
    expr_loads_from(e, &|name| is_producer_buffer(name, producer))
}

/// The stores to `producer`'s buffers in `s`, in order.
fn producer_stores(s: &Stmt, producer: &str) -> Vec<Stmt> {
    struct Find<'a> {
        producer: &'a str,
        found: Vec<Stmt>,
    }
    impl Visitor for Find<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Store { name, .. } = s.node() {
                if is_producer_buffer(name, self.producer) {
                    self.found.push(s.clone());
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut f = Find {
        producer,
        found: vec![],
    };
    f.visit_stmt(s);
    f.found
}

struct CheckIndices {
    error: Option<Error>,
}

impl Visitor for CheckIndices {
    fn visit_stmt(&mut self, s: &Stmt) {
        if let StmtNode::Atomic {
            producer_name,
            body,
            ..
        } = s.node()
        {
            let bad = producer_stores(body, producer_name)
                .iter()
                .any(|st| match st.node() {
                    StmtNode::Store { index, .. } => reads_producer(index, producer_name),
                    _ => false,
                });
            if bad && self.error.is_none() {
                self.error = Some(Error::user(
                    "Can't use atomic() on an update where the index written to depends on the current value of the Func\n"
                        .to_string(),
                ));
            }
        }
        walk_stmt(self, s)
    }
}

/// A `require()` that fails inside a locked update would leave the
/// pipeline with the lock still held and the other threads waiting for it:
/// refused here rather than risking a hang.
fn reject_failures_under_lock(s: &Stmt) -> Result<()> {
    struct Find(Option<String>);
    impl Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtNode::Atomic {
                producer_name,
                mutex_name,
                body,
            } = s.node()
            {
                if !mutex_name.is_empty() {
                    let mut fails = false;
                    crate::ir::visit::for_each_expr_in_stmt(body, &mut |e| {
                        fails |= e.as_intrinsic(Intrinsic::Require).is_some();
                    });
                    if fails && self.0.is_none() {
                        self.0 = Some(producer_name.clone());
                    }
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut f = Find(None);
    f.visit_stmt(s);
    match f.0 {
        Some(func) => Err(Error::unimplemented(format!(
            "require() in the update of Func {func}, which atomic() runs under a lock (a Tuple update whose elements read each other, in a parallel loop)"
        ))),
        None => Ok(()),
    }
}

fn runtime_call(name: &str, mutex: &str, index: Expr) -> Stmt {
    Stmt::evaluate(Expr::call(
        Type::i32(),
        name,
        vec![Expr::var(Type::handle(), mutex), index],
        CallKind::Extern,
    ))
}

/// A lock array of `MUTEX_LOCKS` locks named `mutex` around `body`.
fn allocate_mutex(mutex: &str, body: Stmt) -> Stmt {
    let create = Expr::call(
        Type::handle(),
        MUTEX_ARRAY_CREATE,
        vec![Expr::make_const_i64(Type::uint(64), MUTEX_LOCKS)],
        CallKind::Extern,
    );
    Stmt::let_stmt(mutex, create, body)
}

struct AddMutex {
    /// Per enclosing `produce`, the mutexes its Atomics use.
    needed: Vec<Vec<String>>,
}

impl Mutator for AddMutex {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s.node() {
            StmtNode::ProducerConsumer {
                name,
                is_producer: true,
                body,
            } => {
                self.needed.push(vec![]);
                let mut b = self.mutate_stmt(body);
                let mutexes = self.needed.pop().unwrap_or_default();
                for m in mutexes.iter().rev() {
                    b = allocate_mutex(m, b);
                }
                if b.same_as(body) {
                    s.clone()
                } else {
                    Stmt::producer(name.clone(), b)
                }
            }
            StmtNode::Atomic {
                producer_name,
                mutex_name,
                body,
            } if !mutex_name.is_empty() => {
                let first_index = producer_stores(body, producer_name)
                    .into_iter()
                    .find_map(|st| match st.node() {
                        StmtNode::Store { index, .. } => Some(index.clone()),
                        _ => None,
                    })
                    .unwrap_or_else(|| Expr::i32(0));
                let lock = Expr::modulo(first_index, Expr::i32(MUTEX_LOCKS));
                if let Some(needed) = self.needed.last_mut() {
                    if !needed.contains(mutex_name) {
                        needed.push(mutex_name.clone());
                    }
                }
                let locked = Stmt::block(vec![
                    runtime_call(MUTEX_LOCK, mutex_name, lock.clone()),
                    body.clone(),
                    runtime_call(MUTEX_UNLOCK, mutex_name, lock),
                ]);
                Stmt::atomic(producer_name.clone(), mutex_name.clone(), locked)
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, index: Expr) -> Expr {
        Expr::load(Type::i32(), name, index, Expr::bool_const(true))
    }

    #[test]
    fn producer_buffers_are_the_func_and_its_elements() {
        assert!(is_producer_buffer("f", "f"));
        assert!(is_producer_buffer("f.1", "f"));
        assert!(!is_producer_buffer("f.mutex", "f"));
        assert!(!is_producer_buffer("fg", "f"));
        assert!(!is_producer_buffer("f.", "f"));
    }

    #[test]
    fn an_index_that_reads_the_func_is_rejected() {
        let x = Expr::var_i32("x");
        let store = Stmt::store("f", Expr::i32(1), load("f", x), Expr::bool_const(true));
        let err = add_atomic_mutex(&Stmt::atomic("f", "", store)).unwrap_err();
        assert!(err
            .to_string()
            .contains("index written to depends on the current value"));
    }

    #[test]
    fn a_mutex_locks_the_first_stored_element_inside_its_produce() {
        let x = Expr::var_i32("x");
        let stores = Stmt::block(vec![
            Stmt::store(
                "f.0",
                load("f.1", x.clone()),
                x.clone(),
                Expr::bool_const(true),
            ),
            Stmt::store(
                "f.1",
                load("f.0", x.clone()),
                x.clone(),
                Expr::bool_const(true),
            ),
        ]);
        let s = Stmt::producer("f", Stmt::atomic("f", "f.mutex", stores));
        let out = add_atomic_mutex(&s).unwrap().to_string();
        let alloc = out
            .find("let f.mutex = halide_mutex_array_create((uint64)1024)")
            .expect(&out);
        let lock = out
            .find("halide_mutex_array_lock(f.mutex, (x % 1024))")
            .expect(&out);
        let unlock = out.find("halide_mutex_array_unlock").expect("unlocked");
        let store = out.find("f.1[x]").expect("stored");
        assert!(alloc < lock && lock < store && store < unlock, "{out}");
    }

    #[test]
    fn a_require_under_a_lock_is_refused() {
        let x = Expr::var_i32("x");
        let checked = Expr::intrinsic(
            Type::i32(),
            Intrinsic::Require,
            vec![
                Expr::bool_const(true),
                load("f", x.clone()),
                Expr::string("bad"),
            ],
        );
        let store = Stmt::store("f", checked, x, Expr::bool_const(true));
        let locked = Stmt::producer("f", Stmt::atomic("f", "f.mutex", store.clone()));
        let err = add_atomic_mutex(&locked).unwrap_err();
        assert!(
            err.to_string()
                .contains("require() in the update of Func f"),
            "{err}"
        );
        // Without a lock nothing stays held on failure.
        assert!(add_atomic_mutex(&Stmt::producer("f", Stmt::atomic("f", "", store))).is_ok());
    }

    #[test]
    fn an_atomic_without_mutex_is_left_alone() {
        let x = Expr::var_i32("x");
        let store = Stmt::store(
            "f",
            Expr::add(load("f", x.clone()), Expr::i32(1)),
            x,
            Expr::bool_const(true),
        );
        let s = Stmt::producer("f", Stmt::atomic("f", "", store));
        let out = add_atomic_mutex(&s).unwrap();
        assert!(out.same_as(&s));
    }
}
