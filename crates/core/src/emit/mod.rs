//! Text a module is written as besides machine code: the C header with
//! Halide's C ABI, the C++ source of a Python extension, the registration
//! and function-info files and the schedule file. Each writer is a pure
//! function of a `Module` (one file per format); the driver decides where
//! the text goes.

pub mod c_header;
pub mod c_source;
pub mod function_info_header;
pub mod python_extension;
pub mod registration;
pub mod schedule;

use crate::ir::{Type, TypeCode};
use crate::lower::{ArgumentKind, LoweredArgument};

/// The C type of a scalar argument.
pub fn c_scalar_type(t: Type) -> &'static str {
    match (t.code, t.bits) {
        (TypeCode::UInt, 1) => "bool",
        (TypeCode::Int, 8) => "int8_t",
        (TypeCode::Int, 16) => "int16_t",
        (TypeCode::Int, 32) => "int32_t",
        (TypeCode::Int, 64) => "int64_t",
        (TypeCode::UInt, 8) => "uint8_t",
        (TypeCode::UInt, 16) => "uint16_t",
        (TypeCode::UInt, 32) => "uint32_t",
        (TypeCode::UInt, 64) => "uint64_t",
        // As its bits: the C ABI of a half float differs between compilers.
        (TypeCode::Float, 16) => "uint16_t",
        (TypeCode::Float, 32) => "float",
        (TypeCode::Float, 64) => "double",
        (TypeCode::BFloat, 16) => "uint16_t",
        _ => "void *",
    }
}

/// A constant scalar's bytes as a `halide_scalar_value_t` holds them (the
/// little-endian union: only the type's bytes are meaningful); None for a
/// non-constant and for half floats, which the caller converts.
pub fn scalar_value_bits(t: Type, e: &crate::ir::Expr) -> Option<u64> {
    use crate::ir::ExprNode;
    let bits = match (e.node(), t.code) {
        (ExprNode::IntImm(v), _) => *v as u64,
        (ExprNode::UIntImm(v), _) => *v,
        (ExprNode::FloatImm(v), TypeCode::Float) if t.bits == 32 => (*v as f32).to_bits() as u64,
        (ExprNode::FloatImm(v), TypeCode::Float) if t.bits == 64 => v.to_bits(),
        _ => return None,
    };
    Some(if t.bits >= 64 {
        bits
    } else if t.bits <= 1 {
        bits & 1
    } else {
        bits & ((1u64 << t.bits) - 1)
    })
}

/// A name made into a C identifier: `_` in front, every character other
/// than letters and digits turned into `_`.
pub fn c_name(name: &str) -> String {
    let mut s = String::from("_");
    s.extend(name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }));
    s
}

/// The parameter declaration of one argument in a C prototype.
pub fn c_parameter(a: &LoweredArgument) -> String {
    match a.kind {
        ArgumentKind::InputScalar if a.ty.is_handle() => format!("void *{}", c_name(&a.name)),
        ArgumentKind::InputScalar => format!("{} {}", c_scalar_type(a.ty), c_name(&a.name)),
        _ => format!("struct halide_buffer_t *{}_buffer", c_name(&a.name)),
    }
}

/// `halide_type_t{halide_type_int, 32, 1}`: a type as a C++ constant.
pub fn cpp_type_constant(t: Type) -> String {
    let code = match t.code {
        TypeCode::Int => "halide_type_int",
        TypeCode::UInt => "halide_type_uint",
        TypeCode::Float => "halide_type_float",
        TypeCode::Handle => "halide_type_handle",
        TypeCode::BFloat => "halide_type_bfloat",
    };
    format!("halide_type_t{{{code}, {}, {}}}", t.bits, t.lanes)
}

/// A name for include guards: letters and digits, the rest `_`.
pub fn guard_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}
