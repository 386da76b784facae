//! Where an allocation of the final loop nest lives, for every back end
//! (the LLVM code generator and the C backend decide alike): Halide's
//! rules, as a pure function of the Allocate node.

use crate::error::{Error, Result};
use crate::ir::{Expr, MemoryType, Type};

/// Constant-size allocations up to this many bytes live on the stack.
pub const MAX_STACK_ALLOCATION: u64 = 16 * 1024;
/// Extra bytes at the end of every allocation, so that vector code that
/// reads a little past the end of a buffer stays inside it.
pub const ALLOCATION_PADDING: u64 = 64;

/// Where an allocation goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// On the stack: this many bytes, padding included.
    Stack(u64),
    /// On the heap (`halide_malloc`), sized at run time.
    Heap,
}

/// The placement of `name`, elements of `ty`, of `extents` asked in
/// `memory_type`. A constant size beyond `max_buffer_size` is Halide's
/// compile-time error. As in Halide: registers always on the stack; any
/// other constant size not asked to be on the heap if it fits (a large
/// Stack request goes to the heap, as Halide's pseudostack does).
pub fn placement(
    name: &str,
    ty: Type,
    memory_type: MemoryType,
    extents: &[Expr],
    max_buffer_size: u64,
    max_text: &str,
) -> Result<Placement> {
    let elem_bytes = ty.bytes() as u64 * ty.lanes as u64;
    let mut const_elems: Option<u64> = Some(1);
    for e in extents {
        const_elems = match (const_elems, e.as_int_const()) {
            (Some(a), Some(b)) if b >= 0 => a.checked_mul(b as u64),
            _ => None,
        };
    }
    let const_bytes = const_elems.and_then(|n| n.checked_mul(elem_bytes));
    if const_elems.is_some() && const_bytes.is_none_or(|b| b > max_buffer_size) {
        return Err(Error::user(format!(
            "Total size for allocation {name} is constant but exceeds {max_text}."
        )));
    }
    let on_stack = match (memory_type, const_bytes) {
        (MemoryType::Heap, _) => false,
        (MemoryType::Register, Some(_)) => true,
        (_, Some(b)) => b <= MAX_STACK_ALLOCATION,
        _ => false,
    };
    Ok(if on_stack {
        Placement::Stack(const_bytes.unwrap_or(0) + ALLOCATION_PADDING)
    } else {
        Placement::Heap
    })
}
