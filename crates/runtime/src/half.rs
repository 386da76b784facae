//! IEEE half-precision (Float(16)) conversions, shared by argument passing,
//! Buffer element access and constant folding.

/// Half bits of `x`, rounding to nearest even; overflow gives infinity.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let r = if rem > mid || (rem == mid && half & 1 == 1) {
            half + 1
        } else {
            half
        };
        return sign | r as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let r = if rem > 0x1000 || (rem == 0x1000 && half & 1 == 1) {
        half + 1
    } else {
        half
    };
    sign | r as u16
}

/// The value of half bits `h`.
pub fn f16_bits_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    sign * match exp {
        0 => man * 2f64.powi(-24),
        31 if man == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + man / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// Round a double to the nearest half value, through f32 as Halide's
/// `float16_t(double)` does.
pub fn round_to_f16(v: f64) -> f64 {
    f16_bits_to_f64(f32_to_f16_bits(v as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for v in [
            0.0,
            1.0,
            -2.5,
            65504.0,
            6.103515625e-05,
            5.960464477539063e-08,
        ] {
            assert_eq!(f16_bits_to_f64(f32_to_f16_bits(v as f32)), v);
        }
        assert_eq!(round_to_f16(70000.0), f64::INFINITY);
        assert_eq!(round_to_f16(1.0 + 1.0 / 4096.0), 1.0);
    }
}
