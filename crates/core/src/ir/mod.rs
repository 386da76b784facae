//! The intermediate representation: types, expressions, statements, and the
//! generic machinery to walk, rebuild, compare and print them.

pub mod equality;
pub mod error_code;
pub mod expr;
pub mod fingerprint;
pub mod function_ptr;
pub mod printer;
pub mod printer_html;
pub mod stmt;
pub mod types;
pub mod visit;

pub use equality::{equal, ExprKey};
pub use error_code::ErrorCode;
pub use expr::{BinOp, CallKind, Expr, ExprNode, Intrinsic, MathFn, Range, VectorReduceOp};
pub use function_ptr::{FunctionPtr, FunctionTarget};
pub use stmt::{ForType, MemoryType, Stmt, StmtNode};
pub use types::{Type, TypeCode};
pub use visit::{Mutator, Visitor};
