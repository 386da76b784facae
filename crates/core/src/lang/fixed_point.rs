//! Halide's fixed-point intrinsics that build on widening and shifts:
//! `widen_right_add/mul/sub`, `widening_shift_left/right` and
//! `rounding_shift_left/right`, with IROperator.cpp's argument rules and
//! messages. What they compute is `analysis/lower_intrinsic.rs`.

use crate::error::{Error, Result};
use crate::ir::{Expr, Intrinsic, Type, TypeCode};
use crate::lang::operators::{check_representable, make_const, match_bits, match_lanes};
use crate::lang::print::expr_to_string as s;

/// Halide's `Type::widen`: twice the bits, same kind.
pub(crate) fn widen(t: Type) -> Type {
    t.with_bits(t.bits.wrapping_mul(2))
}

/// `widen_right_add(a, b)` and friends: `a` must be exactly `b`'s type
/// widened, `b` at most 32 bits.
pub fn widen_right(which: Intrinsic, a: Expr, b: Expr) -> Result<Expr> {
    let name = which.name();
    let (ta, tb) = (a.ty(), b.ty());
    if !(ta.is_int() || ta.is_uint()) || !(tb.is_int() || tb.is_uint()) {
        return Err(Error::user(format!(
            "{name} only defined for integer types, received:\n {}\n {}\n",
            s(&a),
            s(&b)
        )));
    }
    if tb.bits > 32 {
        return Err(Error::user(format!("{name} of large Expr\n{}, {}\n", s(&a), s(&b))));
    }
    let (a, b) = match_lanes(a, b)?;
    let wide = widen(b.ty());
    if wide != a.ty() {
        // Halide's message for the subtraction is laid out differently.
        let operands = if which == Intrinsic::WidenRightSub {
            format!("\n{}, {}\n", s(&a), s(&b))
        } else {
            format!("\n {}\n {}\n", s(&a), s(&b))
        };
        return Err(Error::user(format!("{name} type mismatch{operands}")));
    }
    Ok(Expr::intrinsic(wide, which, vec![a, b]))
}

/// `widening_shift_left/right(a, b)` and `rounding_shift_left/right(a, b)`
/// with an Expr amount: lanes and bits matched (each keeps its signedness).
pub fn shift(which: Intrinsic, a: Expr, b: Expr) -> Result<Expr> {
    let (a, b) = match_lanes(a, b)?;
    let (a, b) = match_bits(a, b)?;
    let t = match which {
        Intrinsic::WideningShiftLeft | Intrinsic::WideningShiftRight => widen(a.ty()),
        _ => a.ty(),
    };
    Ok(Expr::intrinsic(t, which, vec![a, b]))
}

/// The same with an integer amount: an unsigned constant of `a`'s width
/// (range-checked); a negative amount shifts the other way.
pub fn shift_by_int(which: Intrinsic, a: Expr, b: i64) -> Result<Expr> {
    use Intrinsic::*;
    let bt = a.ty().with_code(TypeCode::UInt);
    let (which, b) = if b >= 0 {
        (which, b)
    } else {
        let other = match which {
            WideningShiftLeft => WideningShiftRight,
            WideningShiftRight => WideningShiftLeft,
            RoundingShiftLeft => RoundingShiftRight,
            _ => RoundingShiftLeft,
        };
        (other, -b)
    };
    check_representable(bt, b)?;
    shift(which, a, make_const(bt, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::operators::cast;
    use crate::lang::print::expr_to_string;

    fn u8x() -> Expr {
        cast(Type::uint(8), Expr::var_i32("x")).unwrap()
    }

    #[test]
    fn types_and_printing() {
        let e = shift_by_int(Intrinsic::WideningShiftLeft, u8x(), -3).unwrap();
        assert_eq!(expr_to_string(&e), "(uint16)widening_shift_right(uint8(x), (uint8)3)");
        let e = shift(Intrinsic::WideningShiftLeft, u8x(), Expr::var_i32("x")).unwrap();
        assert_eq!(e.ty(), Type::uint(64));
        let e = shift_by_int(Intrinsic::RoundingShiftLeft, u8x(), -2).unwrap();
        assert_eq!(expr_to_string(&e), "(uint8)rounding_shift_right(uint8(x), (uint8)2)");
        assert!(shift_by_int(Intrinsic::WideningShiftLeft, u8x(), 300).is_err());
    }

    #[test]
    fn widen_right_checks() {
        let u16x = cast(Type::uint(16), Expr::var_i32("x")).unwrap();
        let e = widen_right(Intrinsic::WidenRightAdd, u16x.clone(), u8x()).unwrap();
        assert_eq!(e.ty(), Type::uint(16));
        assert!(widen_right(Intrinsic::WidenRightAdd, u8x(), u8x()).is_err());
        let i16x = cast(Type::int(16), Expr::var_i32("x")).unwrap();
        assert!(widen_right(Intrinsic::WidenRightMul, i16x, u8x()).is_err());
        let f = cast(Type::float(32), Expr::var_i32("x")).unwrap();
        assert!(widen_right(Intrinsic::WidenRightSub, f, u8x()).is_err());
    }
}
