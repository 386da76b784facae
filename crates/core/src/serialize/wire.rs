//! The byte level of the pipeline format: variable-length integers,
//! strings, and the `Encode` / `Decode` traits every stored value
//! implements. Nothing here knows what a pipeline is.
//!
//! Integers are LEB128 (signed ones zigzag-encoded first), so small
//! numbers take one byte; a string is its length and its UTF-8 bytes.
//! Decoding never trusts the input: a truncated or corrupt file is an
//! error, never a panic or a huge allocation.

use crate::error::{Error, Result};

/// The message for a file that is not a valid pipeline.
pub fn corrupt(what: &str) -> Error {
    Error::user(format!(
        "deserialize_pipeline: the data is not a valid ferrohalide pipeline ({what}).\n"
    ))
}

/// Appends values to a byte vector.
#[derive(Default)]
pub struct Bytes {
    pub out: Vec<u8>,
}

impl Bytes {
    pub fn u64(&mut self, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.out.push(byte);
                return;
            }
            self.out.push(byte | 0x80);
        }
    }
    pub fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }
    pub fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }
    pub fn bool(&mut self, v: bool) {
        self.out.push(v as u8);
    }
    pub fn str(&mut self, s: &str) {
        self.raw(s.as_bytes());
    }
    /// A length-prefixed byte string.
    pub fn raw(&mut self, b: &[u8]) {
        self.usize(b.len());
        self.out.extend_from_slice(b);
    }
}

/// Reads values back, checking every step.
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, pos: 0 }
    }
    pub fn at_end(&self) -> bool {
        self.pos == self.data.len()
    }
    /// The bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| corrupt("it ends early"))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u64(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("an integer is too long"))
    }
    pub fn i64(&mut self) -> Result<i64> {
        let u = self.u64()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }
    pub fn usize(&mut self) -> Result<usize> {
        usize::try_from(self.u64()?).map_err(|_| corrupt("a size is too large"))
    }
    /// A count of items that each take at least one byte: never more than
    /// the bytes left, so a corrupt count cannot allocate without bound.
    pub fn count(&mut self) -> Result<usize> {
        let n = self.usize()?;
        if n > self.data.len() - self.pos {
            return Err(corrupt("a count is larger than the data"));
        }
        Ok(n)
    }
    pub fn bool(&mut self) -> Result<bool> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(corrupt("a flag is neither 0 nor 1")),
        }
    }
    pub fn raw(&mut self) -> Result<&'a [u8]> {
        let n = self.usize()?;
        self.take(n)
    }
    pub fn str(&mut self) -> Result<String> {
        String::from_utf8(self.raw()?.to_vec()).map_err(|_| corrupt("a name is not UTF-8"))
    }
    /// An integer that must fit `T`.
    pub fn int<T: TryFrom<u64>>(&mut self) -> Result<T> {
        T::try_from(self.u64()?).map_err(|_| corrupt("an integer is out of range"))
    }
}

/// A value stored in a pipeline file; `E` is the encoder (which, for the
/// graph's values, also interns the Exprs, Funcs and Parameters they link).
pub trait Encode<E> {
    fn encode(&self, e: &mut E);
}

/// A value read back from a pipeline file by decoder `D`.
pub trait Decode<D>: Sized {
    fn decode(d: &mut D) -> Result<Self>;
}

/// Gives access to the byte level of an encoder or decoder.
pub trait HasBytes {
    fn bytes(&mut self) -> &mut Bytes;
}
pub trait HasCursor<'a> {
    fn cursor(&mut self) -> &mut Cursor<'a>;
}

macro_rules! int_codec {
    ($($t:ty),*) => {$(
        impl<E: HasBytes> Encode<E> for $t {
            fn encode(&self, e: &mut E) {
                e.bytes().u64(*self as u64)
            }
        }
        impl<'a, D: HasCursor<'a>> Decode<D> for $t {
            fn decode(d: &mut D) -> Result<Self> {
                d.cursor().int()
            }
        }
    )*};
}
int_codec!(u8, u16, u32, u64, usize);

impl<E: HasBytes> Encode<E> for i32 {
    fn encode(&self, e: &mut E) {
        e.bytes().i64(i64::from(*self))
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for i32 {
    fn decode(d: &mut D) -> Result<Self> {
        i32::try_from(d.cursor().i64()?).map_err(|_| corrupt("an integer is out of range"))
    }
}
impl<E: HasBytes> Encode<E> for bool {
    fn encode(&self, e: &mut E) {
        e.bytes().bool(*self)
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for bool {
    fn decode(d: &mut D) -> Result<Self> {
        d.cursor().bool()
    }
}
impl<E: HasBytes> Encode<E> for String {
    fn encode(&self, e: &mut E) {
        e.bytes().str(self)
    }
}
impl<'a, D: HasCursor<'a>> Decode<D> for String {
    fn decode(d: &mut D) -> Result<Self> {
        d.cursor().str()
    }
}
impl<E: HasBytes, T: Encode<E>> Encode<E> for Vec<T> {
    fn encode(&self, e: &mut E) {
        e.bytes().usize(self.len());
        for v in self {
            v.encode(e);
        }
    }
}
impl<'a, D: HasCursor<'a>, T: Decode<D>> Decode<D> for Vec<T> {
    fn decode(d: &mut D) -> Result<Self> {
        let n = d.cursor().count()?;
        (0..n).map(|_| T::decode(d)).collect()
    }
}
impl<E: HasBytes, T: Encode<E>> Encode<E> for Option<T> {
    fn encode(&self, e: &mut E) {
        e.bytes().bool(self.is_some());
        if let Some(v) = self {
            v.encode(e);
        }
    }
}
impl<'a, D: HasCursor<'a>, T: Decode<D>> Decode<D> for Option<T> {
    fn decode(d: &mut D) -> Result<Self> {
        Ok(if d.cursor().bool()? {
            Some(T::decode(d)?)
        } else {
            None
        })
    }
}
impl<E, A: Encode<E>, B: Encode<E>> Encode<E> for (A, B) {
    fn encode(&self, e: &mut E) {
        self.0.encode(e);
        self.1.encode(e);
    }
}
impl<D, A: Decode<D>, B: Decode<D>> Decode<D> for (A, B) {
    fn decode(d: &mut D) -> Result<Self> {
        Ok((A::decode(d)?, B::decode(d)?))
    }
}

/// `Encode` / `Decode` for a fieldless enum as a small integer tag. The
/// encoder's match is exhaustive, so a new variant fails to compile until
/// it is given a tag here.
#[macro_export]
macro_rules! tagged_enum_codec {
    ($t:ty { $($v:ident = $n:literal),* $(,)? }) => {
        impl<E: $crate::serialize::wire::HasBytes> $crate::serialize::wire::Encode<E> for $t {
            fn encode(&self, e: &mut E) {
                let tag: u64 = match self { $(<$t>::$v => $n,)* };
                e.bytes().u64(tag)
            }
        }
        impl<'a, D: $crate::serialize::wire::HasCursor<'a>> $crate::serialize::wire::Decode<D> for $t {
            fn decode(d: &mut D) -> $crate::error::Result<Self> {
                match d.cursor().u64()? {
                    $($n => Ok(<$t>::$v),)*
                    _ => Err($crate::serialize::wire::corrupt(concat!("unknown ", stringify!($t)))),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    struct W(Bytes);
    impl HasBytes for W {
        fn bytes(&mut self) -> &mut Bytes {
            &mut self.0
        }
    }
    struct R<'a>(Cursor<'a>);
    impl<'a> HasCursor<'a> for R<'a> {
        fn cursor(&mut self) -> &mut Cursor<'a> {
            &mut self.0
        }
    }

    #[test]
    fn values_round_trip() {
        let mut w = W(Bytes::default());
        let v: (Vec<i32>, Option<String>) = (vec![0, -1, i32::MIN, i32::MAX], Some("héllo".into()));
        v.encode(&mut w);
        u64::MAX.encode(&mut w);
        let mut r = R(Cursor::new(&w.0.out));
        assert_eq!(<(Vec<i32>, Option<String>)>::decode(&mut r).unwrap(), v);
        assert_eq!(u64::decode(&mut r).unwrap(), u64::MAX);
        assert!(r.0.at_end());
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let mut r = R(Cursor::new(&[0xff, 0xff]));
        assert!(u64::decode(&mut r).is_err());
        // A count far beyond the data does not allocate.
        let mut w = W(Bytes::default());
        w.0.u64(1 << 40);
        let mut r = R(Cursor::new(&w.0.out));
        assert!(Vec::<u8>::decode(&mut r).is_err());
        let mut r = R(Cursor::new(&[2]));
        assert!(bool::decode(&mut r).is_err());
    }
}
