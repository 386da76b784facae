//! Halide types to LLVM types. Registers hold `bool` as `i1`; memory holds
//! it as one byte.

use ferrohalide_core::ir::{Type, TypeCode};

use super::{CodeGen, Ty};

impl CodeGen {
    /// The LLVM element type of a scalar type, as held in registers.
    pub(crate) fn scalar_ty(&self, t: Type) -> Ty {
        match t.code {
            TypeCode::Int | TypeCode::UInt => self.t_int(t.bits as u32),
            TypeCode::Float => match t.bits {
                16 => self.t_f16(),
                32 => self.t_f32(),
                _ => self.t_f64(),
            },
            TypeCode::BFloat => unsafe { inkwell::llvm_sys::core::LLVMBFloatTypeInContext(self.c) },
            TypeCode::Handle => self.t_ptr(),
        }
    }
    /// Register type (scalar or vector).
    pub(crate) fn llvm_ty(&self, t: Type) -> Ty {
        self.t_vec(self.scalar_ty(t), t.lanes as u32)
    }
    /// In-memory element type of a scalar type (bool is a byte).
    pub(crate) fn mem_scalar_ty(&self, t: Type) -> Ty {
        if t.is_bool() {
            self.t_i8()
        } else {
            self.scalar_ty(t)
        }
    }
    pub(crate) fn mem_ty(&self, t: Type) -> Ty {
        self.t_vec(self.mem_scalar_ty(t), t.lanes as u32)
    }
    /// Alignment (bytes) of one element in memory.
    pub(crate) fn elem_align(&self, t: Type) -> u32 {
        if t.is_handle() {
            self.ptr_bytes
        } else {
            t.bytes().max(1) as u32
        }
    }
    /// Convert a register value to its in-memory form.
    pub(crate) fn to_mem(&self, v: super::Val, t: Type) -> super::Val {
        if t.is_bool() {
            self.cast(super::ops::Op::LLVMZExt, v, self.mem_ty(t))
        } else {
            v
        }
    }
    /// Convert an in-memory value to its register form.
    pub(crate) fn from_mem(&self, v: super::Val, t: Type) -> super::Val {
        if t.is_bool() {
            let z = self.zero_of(self.type_of(v));
            self.icmp(super::ops::IP::LLVMIntNE, v, z)
        } else {
            v
        }
    }
}
