//! A fast, non-cryptographic hasher for the compiler's own tables (the
//! multiply-rotate scheme of rustc's FxHasher). The standard SipHash
//! resists crafted keys, which tables keyed by node addresses and
//! variable names do not need; its cost showed as ~7% of lowering.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A HashMap with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A HashSet with [`FastHasher`].
pub type FastSet<T> = std::collections::HashSet<T, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fast_map_is_a_map() {
        let mut m: FastMap<(usize, u64), i32> = FastMap::default();
        for i in 0..1000usize {
            m.insert((i * 8, 3), i as i32);
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m[&(800, 3)], 100);
        let mut s: FastMap<String, i32> = FastMap::default();
        s.insert("x.min.0".into(), 1);
        s.insert("x.min.1".into(), 2);
        assert_eq!(s["x.min.1"], 2);
    }
}
