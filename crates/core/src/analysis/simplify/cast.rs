//! Casts: constant folding, casts of broadcasts and (non-overflowing) ramps,
//! and collapsing cast chains whose middle step is lossless.

use super::fold;
use super::info::no_overflow;
use super::Simplifier;
use crate::ir::{Expr, ExprNode, Type};

impl Simplifier {
    pub(crate) fn simplify_cast(&mut self, orig: &Expr, ty: Type, a: Expr) -> Expr {
        if a.ty() == ty {
            return a;
        }
        if let Some(c) = fold::fold_cast(ty, &a) {
            return c;
        }
        match a.node() {
            ExprNode::Broadcast { value, lanes } if value.lanes() == 1 => {
                let inner = self.simplify_cast(orig, ty.element_of(), value.clone());
                return Expr::broadcast(inner, *lanes);
            }
            ExprNode::Ramp {
                base,
                stride,
                lanes,
            } if base.lanes() == 1 => {
                let st = a.ty();
                if st.is_int()
                    && no_overflow(st)
                    && (ty.is_int() || ty.is_uint())
                    && ty.bits >= st.bits
                {
                    let et = ty.element_of();
                    let b = self.simplify_cast(orig, et, base.clone());
                    let s = self.simplify_cast(orig, et, stride.clone());
                    return self.ramp_node(b, s, *lanes, None);
                }
            }
            ExprNode::Cast(inner) => {
                let (x, mid) = (inner.ty(), a.ty());
                let ints = |t: Type| (t.is_int() || t.is_uint()) && !t.is_bool();
                // The middle type holds every value of x exactly.
                let lossless = mid.can_represent_type(x);
                // Integer truncations compose.
                let truncs =
                    ints(x) && ints(mid) && ints(ty) && ty.bits <= mid.bits && mid.bits <= x.bits;
                if lossless || truncs {
                    return self.simplify_cast(orig, ty, inner.clone());
                }
            }
            _ => {}
        }
        if let ExprNode::Cast(o) = orig.node() {
            if o.same_as(&a) && orig.ty() == ty {
                return self.finish(orig.clone());
            }
        }
        self.finish(Expr::cast(ty, a))
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::simplify;
    use crate::analysis::simplify::test_util::s;
    use crate::ir::{Expr, Type};

    #[test]
    fn cast_rules() {
        assert!(simplify(&Expr::cast(Type::uint(8), Expr::i32(300))).is_const_value(44));
        assert!(simplify(&Expr::cast(Type::int(8), Expr::i32(200))).is_const_value(-56));
        assert!(simplify(&Expr::cast(Type::i32(), Expr::f32(3.9))).is_const_value(3));
        assert!(simplify(&Expr::cast(Type::bool(), Expr::i32(7))).is_true());
        assert!(simplify(&Expr::cast(Type::bool(), Expr::i32(6))).is_false());
        assert_eq!(
            simplify(&Expr::cast(Type::float(32), Expr::i32(16777217))).as_float_const(),
            Some(16777216.0)
        );
        let x8 = Expr::var(Type::uint(8), "x8");
        // u8 -> i32 -> i16 is u8 -> i16
        let e = Expr::cast(Type::int(16), Expr::cast(Type::i32(), x8.clone()));
        assert_eq!(s(e), "int16(x8)");
        // i32 -> u8 -> i32 is not collapsible
        let x = Expr::var_i32("x");
        let e = Expr::cast(Type::i32(), Expr::cast(Type::uint(8), x));
        assert_eq!(s(e), "int32(uint8(x))");
        // bounds: a u8 widened is in [0, 255]
        let e = Expr::lt(Expr::cast(Type::i32(), x8), Expr::i32(256));
        assert!(simplify(&e).is_true());
        let e = Expr::cast(
            Type::int(64).with_lanes(4),
            Expr::ramp(Expr::var_i32("v"), Expr::i32(1), 4),
        );
        assert_eq!(s(e), "ramp(int64(v), (int64)1, 4)");
    }
}
