//! Scalar and vector element types, as in Halide's `Type`: a code, a bit
//! width and a lane count. `Bool` is `UInt(1)`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCode {
    Int,
    UInt,
    Float,
    Handle,
    BFloat,
}

impl TypeCode {
    /// Halide's numeric codes (halide_type_code_t).
    pub fn as_halide_code(self) -> u8 {
        match self {
            TypeCode::Int => 0,
            TypeCode::UInt => 1,
            TypeCode::Float => 2,
            TypeCode::Handle => 3,
            TypeCode::BFloat => 4,
        }
    }

    pub fn from_halide_code(code: u8) -> Option<TypeCode> {
        Some(match code {
            0 => TypeCode::Int,
            1 => TypeCode::UInt,
            2 => TypeCode::Float,
            3 => TypeCode::Handle,
            4 => TypeCode::BFloat,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Type {
    pub code: TypeCode,
    pub bits: u8,
    pub lanes: u16,
}

impl Type {
    pub const fn new(code: TypeCode, bits: u8, lanes: u16) -> Type {
        Type { code, bits, lanes }
    }
    pub const fn int(bits: u8) -> Type {
        Type::new(TypeCode::Int, bits, 1)
    }
    pub const fn uint(bits: u8) -> Type {
        Type::new(TypeCode::UInt, bits, 1)
    }
    pub const fn float(bits: u8) -> Type {
        Type::new(TypeCode::Float, bits, 1)
    }
    pub const fn bool() -> Type {
        Type::new(TypeCode::UInt, 1, 1)
    }
    pub const fn handle() -> Type {
        Type::new(TypeCode::Handle, 64, 1)
    }
    pub const fn i32() -> Type {
        Type::int(32)
    }
    pub const fn i64() -> Type {
        Type::int(64)
    }

    pub fn with_lanes(self, lanes: u16) -> Type {
        Type { lanes, ..self }
    }
    pub fn with_bits(self, bits: u8) -> Type {
        Type { bits, ..self }
    }
    pub fn with_code(self, code: TypeCode) -> Type {
        Type { code, ..self }
    }
    pub fn element_of(self) -> Type {
        self.with_lanes(1)
    }

    pub fn is_int(self) -> bool {
        self.code == TypeCode::Int
    }
    pub fn is_uint(self) -> bool {
        self.code == TypeCode::UInt
    }
    pub fn is_float(self) -> bool {
        self.code == TypeCode::Float || self.code == TypeCode::BFloat
    }
    pub fn is_bool(self) -> bool {
        self.code == TypeCode::UInt && self.bits == 1
    }
    pub fn is_handle(self) -> bool {
        self.code == TypeCode::Handle
    }
    pub fn is_scalar(self) -> bool {
        self.lanes == 1
    }
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }
    /// Integer of either signedness (not bool).
    pub fn is_int_or_uint(self) -> bool {
        (self.is_int() || self.is_uint()) && !self.is_bool()
    }

    /// Bytes needed to store one lane.
    pub fn bytes(self) -> usize {
        (self.bits as usize).div_ceil(8)
    }

    /// Largest representable value, if it fits in an i64 / u64 / f64.
    pub fn max_int(self) -> i128 {
        match self.code {
            TypeCode::Int => (1i128 << (self.bits - 1)) - 1,
            TypeCode::UInt => (1i128 << self.bits) - 1,
            _ => panic!("max_int of non-integer type {self}"),
        }
    }
    pub fn min_int(self) -> i128 {
        match self.code {
            TypeCode::Int => -(1i128 << (self.bits - 1)),
            TypeCode::UInt => 0,
            _ => panic!("min_int of non-integer type {self}"),
        }
    }

    /// Can every value of `self` be represented exactly in `other`?
    pub fn can_represent_type(self, other: Type) -> bool {
        if self.lanes != other.lanes {
            return false;
        }
        match (other.code, self.code) {
            (TypeCode::Int, TypeCode::Int) | (TypeCode::UInt, TypeCode::UInt) => {
                other.bits <= self.bits
            }
            (TypeCode::UInt, TypeCode::Int) => other.bits < self.bits,
            (TypeCode::Int, TypeCode::UInt) => false,
            (TypeCode::Float, TypeCode::Float) => other.bits <= self.bits,
            (TypeCode::Int | TypeCode::UInt, TypeCode::Float) => {
                let mantissa = match self.bits {
                    16 => 11,
                    32 => 24,
                    _ => 53,
                };
                other.bits <= mantissa
            }
            _ => false,
        }
    }

    pub fn can_represent_i64(self, v: i64) -> bool {
        match self.code {
            TypeCode::Int | TypeCode::UInt => {
                (v as i128) >= self.min_int() && (v as i128) <= self.max_int()
            }
            TypeCode::Float | TypeCode::BFloat => true,
            TypeCode::Handle => false,
        }
    }

    pub fn can_represent_u64(self, v: u64) -> bool {
        match self.code {
            TypeCode::Int | TypeCode::UInt => (v as i128) <= self.max_int(),
            TypeCode::Float | TypeCode::BFloat => true,
            TypeCode::Handle => false,
        }
    }

    pub fn can_represent_f64(self, v: f64) -> bool {
        match self.code {
            TypeCode::Int | TypeCode::UInt => {
                v.fract() == 0.0 && v >= self.min_int() as f64 && v <= self.max_int() as f64
            }
            TypeCode::Float => match self.bits {
                32 => (v as f32) as f64 == v || v.is_nan(),
                _ => true,
            },
            TypeCode::BFloat => true,
            TypeCode::Handle => false,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = match self.code {
            TypeCode::Int => "int",
            TypeCode::UInt if self.bits == 1 => "bool",
            TypeCode::UInt => "uint",
            TypeCode::Float => "float",
            TypeCode::Handle => "handle",
            TypeCode::BFloat => "bfloat",
        };
        if self.is_bool() {
            write!(f, "bool")?;
        } else {
            write!(f, "{}{}", code, self.bits)?;
        }
        if self.lanes > 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(Type::int(8).max_int(), 127);
        assert_eq!(Type::int(8).min_int(), -128);
        assert_eq!(Type::uint(16).max_int(), 65535);
        assert_eq!(Type::int(64).min_int(), i64::MIN as i128);
        assert_eq!(Type::uint(64).max_int(), u64::MAX as i128);
    }

    #[test]
    fn representability() {
        assert!(Type::int(32).can_represent_type(Type::uint(16)));
        assert!(!Type::int(32).can_represent_type(Type::uint(32)));
        assert!(Type::float(32).can_represent_type(Type::int(16)));
        assert!(!Type::float(32).can_represent_type(Type::int(32)));
        assert!(Type::uint(8).can_represent_i64(255));
        assert!(!Type::uint(8).can_represent_i64(-1));
    }

    #[test]
    fn display() {
        assert_eq!(Type::bool().to_string(), "bool");
        assert_eq!(Type::float(32).with_lanes(8).to_string(), "float32x8");
    }
}
