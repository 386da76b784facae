//! Facts about an integer-valued expression: constant bounds and a
//! modulus/remainder alignment (`value == modulus * k + remainder` for some
//! integer k; modulus 0 means the value is exactly `remainder`, modulus 1
//! means nothing is known).
//!
//! Signed 32/64-bit integers are treated as non-overflowing (Halide's rule);
//! every other integer type wraps, so results that could leave the type's
//! range fall back to the full range, and alignments are reduced to what
//! survives wrapping modulo 2^bits.

use crate::ir::Type;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub modulus: i64,
    pub remainder: i64,
}

/// Does Halide assume this type never overflows (signed ints of >= 32 bits)?
pub fn no_overflow(ty: Type) -> bool {
    ty.is_float() || (ty.is_int() && ty.bits >= 32)
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

fn to_i64(v: i128) -> Option<i64> {
    i64::try_from(v).ok()
}

pub use crate::analysis::evaluate::{div_euclid, mod_euclid};

type Bound = Option<i128>;

impl Info {
    pub fn unknown() -> Info {
        Info {
            min: None,
            max: None,
            modulus: 1,
            remainder: 0,
        }
    }
    pub fn exact(v: i64) -> Info {
        Info {
            min: Some(v),
            max: Some(v),
            modulus: 0,
            remainder: v,
        }
    }
    pub fn bounds(min: Option<i64>, max: Option<i64>) -> Info {
        Info {
            min,
            max,
            modulus: 1,
            remainder: 0,
        }
    }
    /// The full range of an integer type (bools are [0, 1]).
    pub fn type_range(ty: Type) -> Info {
        if !ty.is_int() && !ty.is_uint() {
            return Info::unknown();
        }
        Info::bounds(to_i64(ty.min_int()), to_i64(ty.max_int()))
    }
    pub fn as_exact(&self) -> Option<i64> {
        if self.modulus == 0 {
            return Some(self.remainder);
        }
        match (self.min, self.max) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        }
    }
    pub fn is_nonneg(&self) -> bool {
        self.min.is_some_and(|m| m >= 0)
    }
    pub fn is_pos(&self) -> bool {
        self.min.is_some_and(|m| m > 0)
    }
    pub fn is_neg(&self) -> bool {
        self.max.is_some_and(|m| m < 0)
    }

    fn lo(&self) -> Bound {
        self.min.map(|v| v as i128)
    }
    fn hi(&self) -> Bound {
        self.max.map(|v| v as i128)
    }

    /// Build from i128 bounds and alignment, fitted to type `ty`.
    fn make(ty: Type, lo: Bound, hi: Bound, modulus: i128, remainder: i128) -> Info {
        if !ty.is_int() && !ty.is_uint() {
            return Info::unknown();
        }
        let tmin = ty.min_int();
        let tmax = ty.max_int();
        let (mut lo, mut hi) = (lo, hi);
        if no_overflow(ty) {
            // Bounds are NOT clamped to the type's range. Halide's
            // no-overflow rule only covers expressions the program actually
            // evaluates; the simplifier also reasons about expressions it
            // builds itself (e.g. `a - b` to order `a` and `b`), whose exact
            // integer value may leave the type's range. Clamping such a
            // value (and then tightening by alignment) can turn a true
            // "unknown" into a false proof, so bounds here are exact integer
            // bounds, or unknown when they do not fit in an i64.
        } else {
            let fits = matches!((lo, hi), (Some(a), Some(b)) if a >= tmin && b <= tmax);
            if !fits {
                lo = Some(tmin);
                hi = Some(tmax);
            }
        }
        let (mut m, mut r) = (modulus.abs(), remainder);
        if !no_overflow(ty) {
            // Only alignment to a divisor of 2^bits survives wrap-around.
            if m == 0 {
                // exact: wrap into the type
                let span = 1i128 << ty.bits;
                r = r.rem_euclid(span);
                if ty.is_int() && r > tmax {
                    r -= span;
                }
            } else {
                m = gcd(m, 1i128 << ty.bits);
            }
        }
        if m != 0 {
            r = r.rem_euclid(m);
        }
        let (mut modulus, mut remainder) = match (to_i64(m), to_i64(r)) {
            (Some(m), Some(r)) => (m, r),
            _ => (1, 0),
        };
        if modulus == 1 {
            remainder = 0;
        }
        let mut min = lo.and_then(to_i64);
        let mut max = hi.and_then(to_i64);
        // Tighten the bounds using the alignment.
        if modulus == 0 {
            if min.is_some_and(|v| v > remainder) || max.is_some_and(|v| v < remainder) {
                // contradictory facts (unreachable code); keep the bounds only
                modulus = 1;
                remainder = 0;
            } else {
                min = Some(remainder);
                max = Some(remainder);
            }
        } else if modulus > 1 {
            let m = modulus as i128;
            let rr = remainder as i128;
            if let Some(a) = min {
                let a = a as i128;
                let adj = a + (rr - a).rem_euclid(m);
                min = to_i64(adj).or(min);
            }
            if let Some(b) = max {
                let b = b as i128;
                let adj = b - (b - rr).rem_euclid(m);
                max = to_i64(adj).or(max);
            }
        }
        Info {
            min,
            max,
            modulus,
            remainder,
        }
    }

    pub fn fit(self, ty: Type) -> Info {
        Info::make(
            ty,
            self.lo(),
            self.hi(),
            self.modulus as i128,
            self.remainder as i128,
        )
    }

    pub fn add(ty: Type, a: &Info, b: &Info) -> Info {
        let lo = a.lo().zip(b.lo()).map(|(x, y)| x + y);
        let hi = a.hi().zip(b.hi()).map(|(x, y)| x + y);
        let m = gcd(a.modulus as i128, b.modulus as i128);
        Info::make(ty, lo, hi, m, a.remainder as i128 + b.remainder as i128)
    }

    pub fn sub(ty: Type, a: &Info, b: &Info) -> Info {
        let lo = a.lo().zip(b.hi()).map(|(x, y)| x - y);
        let hi = a.hi().zip(b.lo()).map(|(x, y)| x - y);
        let m = gcd(a.modulus as i128, b.modulus as i128);
        Info::make(ty, lo, hi, m, a.remainder as i128 - b.remainder as i128)
    }

    pub fn mul(ty: Type, a: &Info, b: &Info) -> Info {
        let (lo, hi) = match (a.lo(), a.hi(), b.lo(), b.hi()) {
            (Some(a0), Some(a1), Some(b0), Some(b1)) => {
                let c = [a0 * b0, a0 * b1, a1 * b0, a1 * b1];
                (c.iter().min().copied(), c.iter().max().copied())
            }
            _ => {
                if let Some(k) = b.as_exact() {
                    let k = k as i128;
                    if k >= 0 {
                        (a.lo().map(|v| v * k), a.hi().map(|v| v * k))
                    } else {
                        (a.hi().map(|v| v * k), a.lo().map(|v| v * k))
                    }
                } else if let Some(k) = a.as_exact() {
                    let k = k as i128;
                    if k >= 0 {
                        (b.lo().map(|v| v * k), b.hi().map(|v| v * k))
                    } else {
                        (b.hi().map(|v| v * k), b.lo().map(|v| v * k))
                    }
                } else if a.is_nonneg() && b.is_nonneg() {
                    (Some(0), None)
                } else {
                    (None, None)
                }
            }
        };
        let (m1, r1, m2, r2) = (
            a.modulus as i128,
            a.remainder as i128,
            b.modulus as i128,
            b.remainder as i128,
        );
        let m = gcd(gcd(m1 * m2, m1 * r2), m2 * r1);
        Info::make(ty, lo, hi, m, r1 * r2)
    }

    pub fn div(ty: Type, a: &Info, b: &Info) -> Info {
        let mut lo: Bound = None;
        let mut hi: Bound = None;
        let (mut m, mut r) = (1i128, 0i128);
        if let Some(c) = b.as_exact() {
            let c = c as i128;
            if c == 0 {
                return Info::exact(0);
            }
            if c > 0 {
                lo = a.lo().map(|v| div_euclid(v, c));
                hi = a.hi().map(|v| div_euclid(v, c));
            } else {
                lo = a.hi().map(|v| div_euclid(v, c));
                hi = a.lo().map(|v| div_euclid(v, c));
            }
            let am = a.modulus as i128;
            if am == 0 {
                m = 0;
                r = div_euclid(a.remainder as i128, c);
            } else if c > 0 && am % c == 0 {
                m = am / c;
                r = div_euclid(a.remainder as i128, c);
            }
        } else if b.is_pos() {
            if let (Some(a0), Some(a1), Some(b0), Some(b1)) = (a.lo(), a.hi(), b.lo(), b.hi()) {
                let c = [
                    div_euclid(a0, b0),
                    div_euclid(a0, b1),
                    div_euclid(a1, b0),
                    div_euclid(a1, b1),
                ];
                lo = c.iter().min().copied();
                hi = c.iter().max().copied();
            } else if a.is_nonneg() {
                lo = Some(0);
                hi = a.hi();
            }
        } else if let (Some(a0), Some(a1)) = (a.lo(), a.hi()) {
            let mag = a0.abs().max(a1.abs());
            lo = Some(-mag);
            hi = Some(mag);
        }
        Info::make(ty, lo, hi, m, r)
    }

    pub fn modulo(ty: Type, a: &Info, b: &Info) -> Info {
        let mut lo: Bound = Some(0);
        let mut hi: Bound = None;
        let (mut m, mut r) = (1i128, 0i128);
        if let Some(c) = b.as_exact() {
            let c = (c as i128).abs();
            if c == 0 {
                return Info::exact(0);
            }
            hi = Some(c - 1);
            if a.is_nonneg() && a.hi().is_some_and(|v| v < c) {
                lo = a.lo();
                hi = a.hi();
            }
            let am = a.modulus as i128;
            if am == 0 {
                m = 0;
                r = mod_euclid(a.remainder as i128, c);
            } else {
                m = gcd(am, c);
                r = a.remainder as i128;
            }
        } else {
            if let (Some(b0), Some(b1)) = (b.lo(), b.hi()) {
                hi = Some((b0.abs().max(b1.abs()) - 1).max(0));
            }
            if a.is_nonneg() {
                if let Some(a1) = a.hi() {
                    hi = Some(hi.map_or(a1, |h| h.min(a1)));
                }
            }
        }
        Info::make(ty, lo, hi, m, r)
    }

    pub fn min(ty: Type, a: &Info, b: &Info) -> Info {
        let lo = a.lo().zip(b.lo()).map(|(x, y)| x.min(y));
        let hi = match (a.hi(), b.hi()) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let (m, r) = Info::union_align(a, b);
        Info::make(ty, lo, hi, m, r)
    }

    pub fn max(ty: Type, a: &Info, b: &Info) -> Info {
        let hi = a.hi().zip(b.hi()).map(|(x, y)| x.max(y));
        let lo = match (a.lo(), b.lo()) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        let (m, r) = Info::union_align(a, b);
        Info::make(ty, lo, hi, m, r)
    }

    /// Either a or b (select, or loop over a range).
    pub fn union(ty: Type, a: &Info, b: &Info) -> Info {
        let lo = a.lo().zip(b.lo()).map(|(x, y)| x.min(y));
        let hi = a.hi().zip(b.hi()).map(|(x, y)| x.max(y));
        let (m, r) = Info::union_align(a, b);
        Info::make(ty, lo, hi, m, r)
    }

    fn union_align(a: &Info, b: &Info) -> (i128, i128) {
        let m = gcd(
            gcd(a.modulus as i128, b.modulus as i128),
            a.remainder as i128 - b.remainder as i128,
        );
        (m, a.remainder as i128)
    }

    /// Both facts hold.
    pub fn intersect(ty: Type, a: &Info, b: &Info) -> Info {
        let lo = match (a.lo(), b.lo()) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        let hi = match (a.hi(), b.hi()) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        // keep the stronger alignment (a simple choice)
        let (m, r) = if a.modulus == 0 || (b.modulus != 0 && a.modulus >= b.modulus) {
            (a.modulus, a.remainder)
        } else {
            (b.modulus, b.remainder)
        };
        Info::make(ty, lo, hi, m as i128, r as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_arith() {
        let t = Type::i32();
        let x = Info::type_range(t);
        let x4 = Info::mul(t, &x, &Info::exact(4));
        assert_eq!((x4.modulus, x4.remainder), (4, 0));
        let y = Info::add(t, &x4, &Info::exact(2));
        assert_eq!((y.modulus, y.remainder), (4, 2));
        let z = Info::modulo(t, &y, &Info::exact(4));
        assert_eq!(z.as_exact(), Some(2));
        let d = Info::div(t, &Info::bounds(Some(0), Some(7)), &Info::exact(8));
        assert_eq!(d.as_exact(), Some(0));
    }

    #[test]
    fn wrapping_types_lose_range() {
        let t = Type::uint(8);
        let x = Info::type_range(t);
        let y = Info::add(t, &x, &Info::exact(1));
        assert_eq!((y.min, y.max), (Some(0), Some(255)));
        let m = Info::mul(t, &x, &Info::exact(6));
        assert_eq!(m.modulus, 2);
    }

    #[test]
    fn euclid() {
        assert_eq!(div_euclid(7, -2), -3);
        assert_eq!(div_euclid(-7, 2), -4);
        assert_eq!(div_euclid(-7, -2), 4);
        assert_eq!(mod_euclid(-7, -2), 1);
        assert_eq!(mod_euclid(-7, 2), 1);
        assert_eq!(div_euclid(5, 0), 0);
    }
}
