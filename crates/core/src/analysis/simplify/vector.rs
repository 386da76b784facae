//! Vector algebra: operations on broadcasts become broadcasts of the scalar
//! operation; ramps absorb broadcasts and other ramps under + - *; a ramp
//! divided (or reduced modulo) by a constant folds when its alignment shows
//! every lane lands in the same block.

use super::info::no_overflow;
use super::Simplifier;
use crate::ir::{BinOp, Expr, ExprNode};

impl Simplifier {
    pub(crate) fn vector_bin(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
        if a.ty().is_scalar() {
            return None;
        }
        use ExprNode::{Broadcast, Ramp};
        match (a.node(), b.node()) {
            (
                Broadcast {
                    value: va,
                    lanes: la,
                },
                Broadcast {
                    value: vb,
                    lanes: lb,
                },
            ) if la == lb && va.ty() == vb.ty() => {
                let inner = self.mk_bin(op, va.clone(), vb.clone());
                return Some(Expr::broadcast(inner, *la));
            }
            _ => {}
        }
        let ty = a.ty();
        if ty.is_float() {
            return None;
        }
        match (op, a.node(), b.node()) {
            (
                BinOp::Add,
                Ramp {
                    base,
                    stride,
                    lanes,
                },
                Broadcast { value, .. },
            ) if value.ty() == base.ty() => {
                let nb = self.mk_bin(BinOp::Add, base.clone(), value.clone());
                Some(self.ramp_node(nb, stride.clone(), *lanes, None))
            }
            (
                BinOp::Add,
                Broadcast { value, .. },
                Ramp {
                    base,
                    stride,
                    lanes,
                },
            ) if value.ty() == base.ty() => {
                let nb = self.mk_bin(BinOp::Add, value.clone(), base.clone());
                Some(self.ramp_node(nb, stride.clone(), *lanes, None))
            }
            (
                BinOp::Sub,
                Ramp {
                    base,
                    stride,
                    lanes,
                },
                Broadcast { value, .. },
            ) if value.ty() == base.ty() => {
                let nb = self.mk_bin(BinOp::Sub, base.clone(), value.clone());
                Some(self.ramp_node(nb, stride.clone(), *lanes, None))
            }
            (
                BinOp::Sub,
                Broadcast { value, .. },
                Ramp {
                    base,
                    stride,
                    lanes,
                },
            ) if value.ty() == base.ty() => {
                let nb = self.mk_bin(BinOp::Sub, value.clone(), base.clone());
                let zero = Expr::zero(stride.ty());
                let ns = self.mk_bin(BinOp::Sub, zero, stride.clone());
                Some(self.ramp_node(nb, ns, *lanes, None))
            }
            (
                BinOp::Add | BinOp::Sub,
                Ramp {
                    base: b1,
                    stride: s1,
                    lanes: l1,
                },
                Ramp {
                    base: b2,
                    stride: s2,
                    lanes: l2,
                },
            ) if l1 == l2 && b1.ty() == b2.ty() => {
                let nb = self.mk_bin(op, b1.clone(), b2.clone());
                let ns = self.mk_bin(op, s1.clone(), s2.clone());
                Some(self.ramp_node(nb, ns, *l1, None))
            }
            (
                BinOp::Mul,
                Ramp {
                    base,
                    stride,
                    lanes,
                },
                Broadcast { value, .. },
            ) if value.ty() == base.ty() => {
                let nb = self.mk_bin(BinOp::Mul, base.clone(), value.clone());
                let ns = self.mk_bin(BinOp::Mul, stride.clone(), value.clone());
                Some(self.ramp_node(nb, ns, *lanes, None))
            }
            (
                BinOp::Mul,
                Broadcast { value, .. },
                Ramp {
                    base,
                    stride,
                    lanes,
                },
            ) if value.ty() == base.ty() => {
                let nb = self.mk_bin(BinOp::Mul, base.clone(), value.clone());
                let ns = self.mk_bin(BinOp::Mul, stride.clone(), value.clone());
                Some(self.ramp_node(nb, ns, *lanes, None))
            }
            (
                BinOp::Div | BinOp::Mod,
                Ramp {
                    base,
                    stride,
                    lanes,
                },
                Broadcast { value, .. },
            ) if no_overflow(ty) && base.lanes() == 1 => {
                let d = value.as_int_const().filter(|d| *d > 0)?;
                let s = stride.as_int_const()?;
                let ib = self.info(base);
                if ib.modulus == 0 || (ib.modulus > 0 && ib.modulus % d == 0) {
                    let r = ib.remainder.rem_euclid(d);
                    let last = r as i128 + s as i128 * (*lanes as i128 - 1);
                    if last >= 0 && last < d as i128 {
                        // every lane stays in the block that holds the base
                        return Some(if op == BinOp::Div {
                            let q = self.mk_bin(BinOp::Div, base.clone(), value.clone());
                            Expr::broadcast(q, *lanes)
                        } else {
                            let rb = Expr::make_const_i64(base.ty(), r);
                            self.ramp_node(rb, stride.clone(), *lanes, None)
                        });
                    }
                }
                None
            }
            _ => None,
        }
    }

    pub(crate) fn ramp_node(
        &mut self,
        base: Expr,
        stride: Expr,
        lanes: u16,
        orig: Option<&Expr>,
    ) -> Expr {
        if stride.is_zero() {
            return Expr::broadcast(base, lanes);
        }
        match orig {
            Some(o) => o.clone(),
            None => Expr::ramp(base, stride, lanes),
        }
    }

    pub(crate) fn broadcast_node(&mut self, value: Expr, lanes: u16, orig: Option<&Expr>) -> Expr {
        match orig {
            Some(o) => o.clone(),
            None => Expr::broadcast(value, lanes),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::simplify::test_util::{i, s, x};
    use crate::ir::Expr;

    #[test]
    fn vector_rules() {
        let r = Expr::ramp(x(), i(1), 4);
        let b = |v: Expr| Expr::broadcast(v, 4);
        assert_eq!(s(Expr::add(r.clone(), b(i(3)))), "ramp((x + 3), 1, 4)");
        assert_eq!(s(Expr::add(b(i(3)), b(i(4)))), "x4(7)");
        assert_eq!(s(Expr::mul(r.clone(), b(i(2)))), "ramp((x * 2), 2, 4)");
        assert_eq!(s(Expr::sub(r.clone(), r.clone())), "x4(0)");
        assert_eq!(s(Expr::sub(b(x()), r.clone())), "ramp(0, -1, 4)");
        assert_eq!(s(Expr::ramp(x(), i(0), 4)), "x4(x)");
        // ramp(x*8, 1, 4) / 8 == broadcast(x)
        let r8 = Expr::ramp(Expr::mul(x(), i(8)), i(1), 4);
        assert_eq!(s(Expr::div(r8.clone(), b(i(8)))), "x4(x)");
        assert_eq!(s(Expr::modulo(r8, b(i(8)))), "ramp(0, 1, 4)");
        // (x + 3) folded inside a broadcast
        assert_eq!(
            s(Expr::add(b(Expr::add(x(), i(3))), b(i(4)))),
            "x4((x + 7))"
        );
    }
}
