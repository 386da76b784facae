//! Statement nodes, immutable and reference-counted like `Expr`.

use std::fmt;
use std::sync::Arc;

use super::expr::{Expr, Range};
use super::types::Type;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForType {
    Serial,
    Parallel,
    Vectorized,
    Unrolled,
    /// The fork of an async producer that waits for its consumer (a folded
    /// Func's, lower/async_producers.rs): two iterations, 0 the producer
    /// and 1 its consumer, that run at the same time on different threads,
    /// since each may wait for the other.
    Fork,
}

impl ForType {
    pub fn name(self) -> &'static str {
        match self {
            ForType::Serial => "for",
            ForType::Parallel => "parallel",
            ForType::Vectorized => "vectorized",
            ForType::Unrolled => "unrolled",
            ForType::Fork => "fork",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemoryType {
    #[default]
    Auto,
    Heap,
    Stack,
    Register,
    /// Device memory types: on a CPU target they are ordinary heap memory
    /// (Halide accepts them there).
    GPUShared,
    GPUTexture,
    LockedCache,
    VTCM,
}

#[derive(Clone, Debug)]
pub enum StmtNode {
    LetStmt {
        name: String,
        value: Expr,
        body: Stmt,
    },
    /// If `condition` is false, evaluate `message` (an int32 error code
    /// producing call) and return it from the pipeline.
    AssertStmt {
        condition: Expr,
        message: Expr,
    },
    ProducerConsumer {
        name: String,
        is_producer: bool,
        body: Stmt,
    },
    For {
        name: String,
        min: Expr,
        extent: Expr,
        for_type: ForType,
        body: Stmt,
    },
    Store {
        name: String,
        value: Expr,
        index: Expr,
        predicate: Expr,
    },
    /// Multi-dimensional store to a Func (before storage flattening).
    Provide {
        name: String,
        values: Vec<Expr>,
        args: Vec<Expr>,
        predicate: Expr,
    },
    Allocate {
        name: String,
        ty: Type,
        memory_type: MemoryType,
        extents: Vec<Expr>,
        condition: Expr,
        body: Stmt,
    },
    Free {
        name: String,
    },
    /// Multi-dimensional allocation of a Func (before storage flattening).
    Realize {
        name: String,
        types: Vec<Type>,
        memory_type: MemoryType,
        bounds: Vec<Range>,
        condition: Expr,
        body: Stmt,
    },
    Block(Vec<Stmt>),
    IfThenElse {
        condition: Expr,
        then_case: Stmt,
        else_case: Option<Stmt>,
    },
    Evaluate(Expr),
    /// The stores to `producer_name` (a Func, or its Tuple elements
    /// `producer_name.i`) in `body` happen atomically: each one as a single
    /// read-modify-write, or, when `mutex_name` is not empty, all of them
    /// while holding the lock of the stored element in the mutex array
    /// `mutex_name` (Halide's `Atomic`).
    Atomic {
        producer_name: String,
        mutex_name: String,
        body: Stmt,
    },
}

#[derive(Clone)]
pub struct Stmt(Arc<StmtNode>);

impl Stmt {
    pub fn new(node: StmtNode) -> Stmt {
        Stmt(Arc::new(node))
    }
    #[inline]
    pub fn node(&self) -> &StmtNode {
        &self.0
    }
    pub fn same_as(&self, other: &Stmt) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// An identity for the node (its address), valid while it lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    pub fn let_stmt(name: impl Into<String>, value: Expr, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::LetStmt {
            name: name.into(),
            value,
            body,
        })
    }
    /// `body` inside `let`s of `bindings`, the first binding outermost.
    pub fn let_stmts(bindings: impl IntoIterator<Item = (String, Expr)>, body: Stmt) -> Stmt {
        let bindings: Vec<_> = bindings.into_iter().collect();
        bindings
            .into_iter()
            .rev()
            .fold(body, |body, (n, v)| Stmt::let_stmt(n, v, body))
    }
    pub fn assert(condition: Expr, message: Expr) -> Stmt {
        Stmt::new(StmtNode::AssertStmt { condition, message })
    }
    pub fn producer(name: impl Into<String>, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::ProducerConsumer {
            name: name.into(),
            is_producer: true,
            body,
        })
    }
    pub fn consumer(name: impl Into<String>, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::ProducerConsumer {
            name: name.into(),
            is_producer: false,
            body,
        })
    }
    pub fn for_loop(
        name: impl Into<String>,
        min: Expr,
        extent: Expr,
        for_type: ForType,
        body: Stmt,
    ) -> Stmt {
        Stmt::new(StmtNode::For {
            name: name.into(),
            min,
            extent,
            for_type,
            body,
        })
    }
    pub fn store(name: impl Into<String>, value: Expr, index: Expr, predicate: Expr) -> Stmt {
        Stmt::new(StmtNode::Store {
            name: name.into(),
            value,
            index,
            predicate,
        })
    }
    pub fn provide(
        name: impl Into<String>,
        values: Vec<Expr>,
        args: Vec<Expr>,
        predicate: Expr,
    ) -> Stmt {
        Stmt::new(StmtNode::Provide {
            name: name.into(),
            values,
            args,
            predicate,
        })
    }
    pub fn atomic(producer_name: impl Into<String>, mutex_name: impl Into<String>, body: Stmt) -> Stmt {
        Stmt::new(StmtNode::Atomic {
            producer_name: producer_name.into(),
            mutex_name: mutex_name.into(),
            body,
        })
    }
    pub fn evaluate(e: Expr) -> Stmt {
        Stmt::new(StmtNode::Evaluate(e))
    }
    pub fn no_op() -> Stmt {
        Stmt::evaluate(Expr::i32(0))
    }
    pub fn is_no_op(&self) -> bool {
        match self.node() {
            StmtNode::Evaluate(e) => e.is_const(),
            StmtNode::Block(v) => v.iter().all(|s| s.is_no_op()),
            _ => false,
        }
    }
    pub fn if_then_else(condition: Expr, then_case: Stmt, else_case: Option<Stmt>) -> Stmt {
        Stmt::new(StmtNode::IfThenElse {
            condition,
            then_case,
            else_case,
        })
    }
    /// A block of statements, flattening nested blocks and dropping no-ops.
    pub fn block(stmts: Vec<Stmt>) -> Stmt {
        let mut flat = Vec::with_capacity(stmts.len());
        for s in stmts {
            match s.node() {
                StmtNode::Block(inner) => flat.extend(inner.iter().cloned()),
                _ if s.is_no_op() => {}
                _ => flat.push(s),
            }
        }
        match flat.len() {
            0 => Stmt::no_op(),
            1 => flat.pop().unwrap(),
            _ => Stmt::new(StmtNode::Block(flat)),
        }
    }
}

impl fmt::Debug for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}
