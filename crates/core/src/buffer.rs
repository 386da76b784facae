//! `Buffer`: a typed, strided, N-dimensional view of host memory, with
//! Halide's `halide_buffer_t` layout available for compiled code. Storage is
//! either owned (64-byte aligned, zeroed) or borrowed from another owner
//! (e.g. a NumPy array) that is kept alive through `keepalive`.

use std::any::Any;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ferrohalide_runtime::{halide_buffer_t, halide_dimension_t, halide_type_t};

use crate::error::{Error, Result};
use crate::ir::{Type, TypeCode};

/// 64-byte aligned, zero-initialised heap storage.
pub struct AlignedStorage {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

unsafe impl Send for AlignedStorage {}
unsafe impl Sync for AlignedStorage {}

impl AlignedStorage {
    pub fn zeroed(bytes: usize) -> Result<AlignedStorage> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(1), 64)
            .map_err(|_| Error::value(format!("cannot allocate a buffer of {bytes} bytes")))?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::runtime(format!("out of memory allocating {bytes} bytes")));
        }
        Ok(AlignedStorage { ptr, layout })
    }
}

impl Drop for AlignedStorage {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

pub struct BufferContents {
    pub name: String,
    pub ty: Type,
    pub host: *mut u8,
    pub dims: Vec<halide_dimension_t>,
    /// Whatever owns the memory `host` points into.
    pub keepalive: Option<Arc<dyn Any + Send + Sync>>,
}

// SAFETY: the host pointer is owned by `keepalive`, which is Send + Sync;
// concurrent element access is the user's business, as in Halide.
unsafe impl Send for BufferContents {}
unsafe impl Sync for BufferContents {}

impl std::fmt::Debug for BufferContents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({}, {}, {:?})", self.name, self.ty, self.dims)
    }
}

#[derive(Clone, Debug)]
pub struct Buffer(Arc<RwLock<BufferContents>>);

static NEXT_BUFFER_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A fresh name for an anonymous buffer.
pub fn unique_buffer_name() -> String {
    let n = NEXT_BUFFER_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("b{n}")
}

impl Buffer {
    /// A dense, zero-filled buffer; dimension 0 is innermost (stride 1).
    pub fn new(ty: Type, extents: &[i32], name: Option<String>) -> Result<Buffer> {
        let mut dims = Vec::with_capacity(extents.len());
        let mut stride: i64 = 1;
        for (i, &e) in extents.iter().enumerate() {
            if e < 0 {
                return Err(Error::value(format!("Buffer extent {e} in dimension {i} is negative")));
            }
            if stride > i32::MAX as i64 {
                return Err(Error::value("Buffer is too large: strides must fit in 32 bits"));
            }
            dims.push(halide_dimension_t { min: 0, extent: e, stride: stride as i32, flags: 0 });
            stride *= e as i64;
        }
        let bytes = (stride as usize)
            .checked_mul(ty.bytes())
            .ok_or_else(|| Error::value("Buffer is too large"))?;
        let storage = AlignedStorage::zeroed(bytes)?;
        let host = storage.ptr;
        Ok(Buffer::from_parts(name.unwrap_or_else(unique_buffer_name), ty, host, dims, Some(Arc::new(storage))))
    }

    /// Wrap memory owned elsewhere. `keepalive` must own `host`'s memory.
    pub fn from_parts(
        name: String,
        ty: Type,
        host: *mut u8,
        dims: Vec<halide_dimension_t>,
        keepalive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Buffer {
        Buffer(Arc::new(RwLock::new(BufferContents { name, ty, host, dims, keepalive })))
    }

    pub fn read(&self) -> RwLockReadGuard<'_, BufferContents> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }
    pub fn write(&self) -> RwLockWriteGuard<'_, BufferContents> {
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }
    pub fn same_as(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub fn name(&self) -> String {
        self.read().name.clone()
    }
    pub fn ty(&self) -> Type {
        self.read().ty
    }
    pub fn dimensions(&self) -> usize {
        self.read().dims.len()
    }
    pub fn dims(&self) -> Vec<halide_dimension_t> {
        self.read().dims.clone()
    }
    pub fn dim(&self, i: usize) -> Result<halide_dimension_t> {
        let c = self.read();
        c.dims.get(i).copied().ok_or_else(|| {
            Error::value(format!("Buffer {} has {} dimensions; there is no dimension {i}", c.name, c.dims.len()))
        })
    }
    pub fn host_ptr(&self) -> *mut u8 {
        self.read().host
    }
    pub fn number_of_elements(&self) -> usize {
        self.read().dims.iter().map(|d| d.extent.max(0) as usize).product()
    }
    pub fn set_min(&self, mins: &[i32]) -> Result<()> {
        let mut c = self.write();
        if mins.len() > c.dims.len() {
            return Err(Error::value(format!(
                "set_min got {} values for a {}-dimensional buffer",
                mins.len(),
                c.dims.len()
            )));
        }
        for (d, &m) in c.dims.iter_mut().zip(mins) {
            d.min = m;
        }
        Ok(())
    }

    /// Byte offset of the element at `coords` (absolute coordinates).
    pub fn offset_of(&self, coords: &[i32]) -> Result<isize> {
        let c = self.read();
        if coords.len() != c.dims.len() {
            return Err(Error::value(format!(
                "Buffer {} has {} dimensions but was accessed with {} coordinates",
                c.name,
                c.dims.len(),
                coords.len()
            )));
        }
        let mut off: isize = 0;
        for (i, (d, &x)) in c.dims.iter().zip(coords).enumerate() {
            if x < d.min || x >= d.min + d.extent {
                return Err(Error::value(format!(
                    "Coordinate {x} in dimension {i} of buffer {} is outside [{}, {}]",
                    c.name,
                    d.min,
                    d.min + d.extent - 1
                )));
            }
            off += (x - d.min) as isize * d.stride as isize;
        }
        Ok(off * c.ty.bytes() as isize)
    }

    /// Read one element as f64 (exact for every type but 64-bit ints).
    pub fn get_f64(&self, coords: &[i32]) -> Result<f64> {
        let off = self.offset_of(coords)?;
        let c = self.read();
        // SAFETY: offset_of checked the coordinates against the buffer shape.
        Ok(unsafe { read_scalar_f64(c.ty, c.host.offset(off)) })
    }
    /// Read one integer element exactly.
    pub fn get_i128(&self, coords: &[i32]) -> Result<i128> {
        let off = self.offset_of(coords)?;
        let c = self.read();
        // SAFETY: as above.
        Ok(unsafe { read_scalar_i128(c.ty, c.host.offset(off)) })
    }
    pub fn set_f64(&self, coords: &[i32], v: f64) -> Result<()> {
        let off = self.offset_of(coords)?;
        let c = self.read();
        // SAFETY: as above.
        unsafe { write_scalar_f64(c.ty, c.host.offset(off), v) };
        Ok(())
    }
    pub fn set_i128(&self, coords: &[i32], v: i128) -> Result<()> {
        let off = self.offset_of(coords)?;
        let c = self.read();
        // SAFETY: as above.
        unsafe { write_scalar_i128(c.ty, c.host.offset(off), v) };
        Ok(())
    }

    /// A `halide_buffer_t` describing this buffer. The returned value points
    /// into `dims_out`, which the caller must keep alive while it is used.
    pub fn raw(&self, dims_out: &mut Vec<halide_dimension_t>) -> halide_buffer_t {
        let c = self.read();
        dims_out.clear();
        dims_out.extend_from_slice(&c.dims);
        halide_buffer_t {
            host: c.host,
            type_: halide_type_t { code: c.ty.code.as_halide_code(), bits: c.ty.bits, lanes: 1 },
            dimensions: c.dims.len() as i32,
            dim: dims_out.as_mut_ptr(),
            ..Default::default()
        }
    }
}

/// # Safety
/// `p` must point at a valid element of type `ty`.
pub unsafe fn read_scalar_f64(ty: Type, p: *const u8) -> f64 {
    match (ty.code, ty.bits) {
        (TypeCode::Float, 32) => (p as *const f32).read_unaligned() as f64,
        (TypeCode::Float, 64) => (p as *const f64).read_unaligned(),
        _ => read_scalar_i128(ty, p) as f64,
    }
}

/// # Safety
/// `p` must point at a valid element of type `ty`.
pub unsafe fn read_scalar_i128(ty: Type, p: *const u8) -> i128 {
    match (ty.code, ty.bits) {
        (TypeCode::UInt, 1) => (p.read() != 0) as i128,
        (TypeCode::Int, 8) => (p as *const i8).read() as i128,
        (TypeCode::Int, 16) => (p as *const i16).read_unaligned() as i128,
        (TypeCode::Int, 32) => (p as *const i32).read_unaligned() as i128,
        (TypeCode::Int, 64) => (p as *const i64).read_unaligned() as i128,
        (TypeCode::UInt, 8) => p.read() as i128,
        (TypeCode::UInt, 16) => (p as *const u16).read_unaligned() as i128,
        (TypeCode::UInt, 32) => (p as *const u32).read_unaligned() as i128,
        (TypeCode::UInt, 64) | (TypeCode::Handle, 64) => (p as *const u64).read_unaligned() as i128,
        (TypeCode::Float, 32) => (p as *const f32).read_unaligned() as i128,
        (TypeCode::Float, 64) => (p as *const f64).read_unaligned() as i128,
        _ => 0,
    }
}

/// # Safety
/// `p` must point at writable storage for an element of type `ty`.
pub unsafe fn write_scalar_f64(ty: Type, p: *mut u8, v: f64) {
    match (ty.code, ty.bits) {
        (TypeCode::Float, 32) => (p as *mut f32).write_unaligned(v as f32),
        (TypeCode::Float, 64) => (p as *mut f64).write_unaligned(v),
        _ => write_scalar_i128(ty, p, v as i128),
    }
}

/// Writes wrap to the type's width, like a C cast.
/// # Safety
/// `p` must point at writable storage for an element of type `ty`.
pub unsafe fn write_scalar_i128(ty: Type, p: *mut u8, v: i128) {
    match (ty.code, ty.bits) {
        (TypeCode::UInt, 1) => p.write((v != 0) as u8),
        (TypeCode::Int, 8) | (TypeCode::UInt, 8) => p.write(v as u8),
        (TypeCode::Int, 16) | (TypeCode::UInt, 16) => (p as *mut u16).write_unaligned(v as u16),
        (TypeCode::Int, 32) | (TypeCode::UInt, 32) => (p as *mut u32).write_unaligned(v as u32),
        (TypeCode::Int, 64) | (TypeCode::UInt, 64) | (TypeCode::Handle, 64) => {
            (p as *mut u64).write_unaligned(v as u64)
        }
        (TypeCode::Float, 32) => (p as *mut f32).write_unaligned(v as f32),
        (TypeCode::Float, 64) => (p as *mut f64).write_unaligned(v as f64),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_layout_and_access() {
        let b = Buffer::new(Type::uint(16), &[4, 3], None).unwrap();
        assert_eq!(b.dim(1).unwrap().stride, 4);
        b.set_i128(&[2, 1], 70000).unwrap();
        assert_eq!(b.get_i128(&[2, 1]).unwrap(), 70000 % 65536);
        assert!(b.get_i128(&[4, 0]).is_err());
        b.set_min(&[10, 20]).unwrap();
        assert_eq!(b.get_i128(&[12, 21]).unwrap(), 70000 % 65536);
    }
}
