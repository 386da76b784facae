//! `extract_bits` and `concat_bits`: reading a field of bits out of a
//! value, and gluing values into a wider one (IROperator.cpp's rules and
//! messages). What they compute is `analysis/lower_intrinsic.rs`.

use crate::error::{Error, Result};
use crate::ir::{Expr, Intrinsic, Type};

/// `extract_bits(t, e, lsb)`: the `t.bits` bits of `e` from bit `lsb` up
/// (bits past the top of `e` read as zero), as a `t`.
pub fn extract_bits(t: Type, e: Expr, lsb: Expr) -> Expr {
    let t = if t.is_scalar() { t.with_lanes(e.lanes()) } else { t };
    Expr::intrinsic(t, Intrinsic::ExtractBits, vec![e, lsb])
}

/// `concat_bits([e0, e1, ...])`: a power-of-two count of values of one
/// type, `e0` in the lowest bits.
pub fn concat_bits(args: Vec<Expr>) -> Result<Expr> {
    let Some(first) = args.first() else {
        return Err(Error::user("concat_bits requires at least one argument\n"));
    };
    let n = args.len();
    if !n.is_power_of_two() {
        return Err(Error::user(format!(
            "concat_bits received {n} arguments, which is not a power of two.\n"
        )));
    }
    let t = first.ty();
    if args.iter().any(|e| e.ty() != t) {
        return Err(Error::user("All arguments to concat_bits must have the same type\n"));
    }
    let bits = u8::try_from(t.bits as usize * n)
        .map_err(|_| Error::user(format!("concat_bits of {n} values of {} bits is too wide\n", t.bits)))?;
    Ok(Expr::intrinsic(t.with_bits(bits), Intrinsic::ConcatBits, args))
}
