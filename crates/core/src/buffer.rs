//! `Buffer`: a typed, strided, N-dimensional view of host memory, with
//! Halide's `halide_buffer_t` layout available for compiled code. Storage is
//! either owned (128-byte aligned, zeroed) or borrowed from another owner
//! (e.g. a NumPy array) that is kept alive through `keepalive`.

use std::any::Any;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ferrohalide_runtime::{halide_buffer_t, halide_dimension_t, halide_type_t};

use crate::error::{Error, Result};
use crate::ir::{Type, TypeCode};

/// The alignment of owned storage: Halide's (two cache lines, so the
/// adjacent-line prefetcher's pairs start with the buffer).
const STORAGE_ALIGNMENT: usize = 128;

/// 128-byte aligned (as Halide's `Runtime::Buffer` allocates), zero-initialised
/// heap storage.
pub struct AlignedStorage {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

unsafe impl Send for AlignedStorage {}
unsafe impl Sync for AlignedStorage {}

impl AlignedStorage {
    pub fn zeroed(bytes: usize) -> Result<AlignedStorage> {
        Self::allocate(bytes, true)
    }

    /// Storage whose contents are unspecified (for buffers a pipeline is
    /// about to overwrite; zeroing large ones costs as much as a small pipeline).
    pub fn uninitialized(bytes: usize) -> Result<AlignedStorage> {
        Self::allocate(bytes, false)
    }

    fn allocate(bytes: usize, zero: bool) -> Result<AlignedStorage> {
        if let Some((ptr, layout)) = crate::freed_storage::take(bytes, STORAGE_ALIGNMENT) {
            if zero {
                // SAFETY: the block holds at least `bytes` bytes.
                unsafe { std::ptr::write_bytes(ptr, 0, bytes) };
            }
            return Ok(AlignedStorage { ptr, layout });
        }
        let layout = std::alloc::Layout::from_size_align(bytes.max(1), STORAGE_ALIGNMENT)
            .map_err(|_| Error::runtime(format!("out of memory allocating {bytes} bytes")))?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe {
            if zero {
                std::alloc::alloc_zeroed(layout)
            } else {
                std::alloc::alloc(layout)
            }
        };
        if ptr.is_null() {
            return Err(Error::runtime(format!(
                "out of memory allocating {bytes} bytes"
            )));
        }
        Ok(AlignedStorage { ptr, layout })
    }
}

impl Drop for AlignedStorage {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout (in `allocate`, or by the
        // global allocator before the cache held it), and no longer used.
        unsafe { crate::freed_storage::keep(self.ptr, self.layout) }
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

impl Drop for BufferContents {
    fn drop(&mut self) {
        crate::live::BUFFERS.dropped();
    }
}

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
        Self::new_with_storage(ty, extents, name, AlignedStorage::zeroed)
    }

    /// A one-dimensional UInt(8) buffer holding `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Buffer> {
        let n = i32::try_from(bytes.len())
            .map_err(|_| Error::user(format!("{} bytes do not fit in a Buffer\n", bytes.len())))?;
        let b = Buffer::new_uninitialized(Type::uint(8), &[n], None)?;
        // SAFETY: the new buffer is dense and holds exactly `n` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.host_ptr(), bytes.len()) };
        Ok(b)
    }

    /// Like `new`, but the contents are unspecified, as in Halide's
    /// `realize`: for outputs a pipeline is about to write.
    pub fn new_uninitialized(ty: Type, extents: &[i32], name: Option<String>) -> Result<Buffer> {
        Self::new_with_storage(ty, extents, name, AlignedStorage::uninitialized)
    }

    fn new_with_storage(
        ty: Type,
        extents: &[i32],
        name: Option<String>,
        storage: fn(usize) -> Result<AlignedStorage>,
    ) -> Result<Buffer> {
        let mut dims = Vec::with_capacity(extents.len());
        let mut stride: i64 = 1;
        for (i, &e) in extents.iter().enumerate() {
            if e < 0 {
                return Err(Error::value(format!(
                    "Buffer extent {e} in dimension {i} is negative"
                )));
            }
            if stride > i32::MAX as i64 {
                return Err(Error::user(format!(
                    "Buffer is too large: the stride of dimension {i} would be {stride}, which does not fit in 32 bits"
                )));
            }
            dims.push(halide_dimension_t {
                min: 0,
                extent: e,
                stride: stride as i32,
                flags: 0,
            });
            stride *= e as i64;
        }
        // (Halide's text for this case, from its Buffer's overflow check.)
        let bytes = (stride as usize)
            .checked_mul(ty.bytes())
            .ok_or_else(|| Error::user("Overflow computing total size of buffer."))?;
        let storage = storage(bytes)?;
        let host = storage.ptr;
        Ok(Buffer::from_parts(
            name.unwrap_or_else(unique_buffer_name),
            ty,
            host,
            dims,
            Some(Arc::new(storage)),
        ))
    }

    /// Wrap memory owned elsewhere. `keepalive` must own `host`'s memory.
    pub fn from_parts(
        name: String,
        ty: Type,
        host: *mut u8,
        dims: Vec<halide_dimension_t>,
        keepalive: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Buffer {
        crate::live::BUFFERS.created();
        Buffer(Arc::new(RwLock::new(BufferContents {
            name,
            ty,
            host,
            dims,
            keepalive,
        })))
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
    /// An identity for the buffer object (its address), valid while it lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
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
            Error::value(format!(
                "Buffer {} has {} dimensions; there is no dimension {i}",
                c.name,
                c.dims.len()
            ))
        })
    }
    pub fn host_ptr(&self) -> *mut u8 {
        self.read().host
    }
    pub fn number_of_elements(&self) -> usize {
        self.read()
            .dims
            .iter()
            .map(|d| d.extent.max(0) as usize)
            .product()
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
        dims_out.clear();
        let mut raw = self.raw_appending_dims(dims_out);
        raw.dim = dims_out.as_mut_ptr();
        raw
    }

    /// `raw`, appending the dimensions to `dims_out` and leaving `dim`
    /// null for the caller to point at them (several buffers' dimensions
    /// can share one array).
    pub fn raw_appending_dims(&self, dims_out: &mut Vec<halide_dimension_t>) -> halide_buffer_t {
        let c = self.read();
        dims_out.extend_from_slice(&c.dims);
        halide_buffer_t {
            host: c.host,
            type_: halide_type_t {
                code: c.ty.code.as_halide_code(),
                bits: c.ty.bits,
                lanes: 1,
            },
            dimensions: c.dims.len() as i32,
            dim: std::ptr::null_mut(),
            ..Default::default()
        }
    }

    // ---- Shape operations, copies and fills (used by the Python `hl.Buffer`). ----
    // Views share storage (and `keepalive`) with `self`; the `host` pointer
    // always addresses the element at the dims' mins, as in Halide.

    /// Rename this buffer.
    pub fn set_name(&self, name: impl Into<String>) {
        self.write().name = name.into();
    }

    /// A new Buffer handle (fresh name) over the same storage, with `dims`
    /// and `host` as given. `host` must point into `self`'s storage.
    fn view_with(&self, host: *mut u8, dims: Vec<halide_dimension_t>) -> Buffer {
        let c = self.read();
        Buffer::from_parts(unique_buffer_name(), c.ty, host, dims, c.keepalive.clone())
    }

    /// A new handle over the same storage and shape, with a fresh name.
    pub fn alias(&self) -> Buffer {
        let (host, dims) = {
            let c = self.read();
            (c.host, c.dims.clone())
        };
        self.view_with(host, dims)
    }

    fn check_dim(&self, d: i64, what: &str) -> Result<usize> {
        let n = self.dimensions();
        if d < 0 || d as usize >= n {
            return Err(Error::value(format!(
                "{what}: dimension {d} is out of range for a {n}-dimensional buffer"
            )));
        }
        Ok(d as usize)
    }

    /// Whether `coords` (absolute; may name fewer dims than the buffer has)
    /// lie inside the buffer.
    pub fn contains(&self, coords: &[i32]) -> bool {
        let c = self.read();
        coords
            .iter()
            .zip(&c.dims)
            .all(|(&x, d)| x >= d.min && (x as i64) < d.min as i64 + d.extent as i64)
    }

    /// Restrict dimension `d` to `[min, min + extent)`, in place.
    pub fn crop(&self, d: i64, min: i32, extent: i32) -> Result<()> {
        let d = self.check_dim(d, "crop")?;
        let mut c = self.write();
        let dim = c.dims[d];
        if extent < 0
            || min < dim.min
            || min as i64 + extent as i64 > dim.min as i64 + dim.extent as i64
        {
            return Err(Error::value(format!(
                "Cannot crop dimension {d} of buffer {} to [{min}, {}]: it only covers [{}, {}]",
                c.name,
                min as i64 + extent as i64 - 1,
                dim.min,
                dim.min as i64 + dim.extent as i64 - 1
            )));
        }
        let shift = (min - dim.min) as isize * dim.stride as isize * c.ty.bytes() as isize;
        c.host = c.host.wrapping_offset(shift);
        c.dims[d].min = min;
        c.dims[d].extent = extent;
        Ok(())
    }

    /// Crop the first `rect.len()` dimensions to the given (min, extent) pairs, in place.
    pub fn crop_rect(&self, rect: &[(i32, i32)]) -> Result<()> {
        if rect.len() > self.dimensions() {
            return Err(Error::value(format!(
                "crop got {} ranges for a {}-dimensional buffer",
                rect.len(),
                self.dimensions()
            )));
        }
        // Check every range before changing anything.
        let v = self.alias();
        for (i, &(m, e)) in rect.iter().enumerate() {
            v.crop(i as i64, m, e)?;
        }
        let (host, dims) = {
            let c = v.read();
            (c.host, c.dims.clone())
        };
        let mut c = self.write();
        c.host = host;
        c.dims = dims;
        Ok(())
    }

    /// Shift dimension `d` by `dx` (the same memory, new coordinates), in place.
    pub fn translate(&self, d: i64, dx: i32) -> Result<()> {
        let d = self.check_dim(d, "translate")?;
        let mut c = self.write();
        c.dims[d].min = c.dims[d].min.wrapping_add(dx);
        Ok(())
    }

    /// Shift the first `delta.len()` dimensions, in place.
    pub fn translate_all(&self, delta: &[i32]) -> Result<()> {
        let mut c = self.write();
        if delta.len() > c.dims.len() {
            return Err(Error::value(format!(
                "translate got {} offsets for a {}-dimensional buffer",
                delta.len(),
                c.dims.len()
            )));
        }
        for (d, &dx) in c.dims.iter_mut().zip(delta) {
            d.min = d.min.wrapping_add(dx);
        }
        Ok(())
    }

    /// Swap dimensions `d1` and `d2`, in place.
    pub fn transpose(&self, d1: i64, d2: i64) -> Result<()> {
        let d1 = self.check_dim(d1, "transpose")?;
        let d2 = self.check_dim(d2, "transpose")?;
        self.write().dims.swap(d1, d2);
        Ok(())
    }

    /// Reorder the dimensions, in place, as Halide does: old dimension `i`
    /// becomes dimension `order[i]` (so `[2, 3, 0, 1]` turns `[c, z, w, h]`
    /// into `[w, h, c, z]`).
    pub fn transpose_order(&self, order: &[i64]) -> Result<()> {
        let mut c = self.write();
        let n = c.dims.len();
        let mut seen = vec![false; n];
        if order.len() != n {
            return Err(Error::value(format!(
                "transpose order {order:?} must list each of the {n} dimensions once"
            )));
        }
        for &o in order {
            if o < 0 || o as usize >= n || seen[o as usize] {
                return Err(Error::value(format!(
                    "transpose order {order:?} must list each of the {n} dimensions once"
                )));
            }
            seen[o as usize] = true;
        }
        let old = c.dims.clone();
        for (i, &o) in order.iter().enumerate() {
            c.dims[o as usize] = old[i];
        }
        Ok(())
    }

    /// Remove dimension `d`, keeping the slice at coordinate `pos` (default: its min), in place.
    pub fn slice(&self, d: i64, pos: Option<i32>) -> Result<()> {
        let d = self.check_dim(d, "slice")?;
        let mut c = self.write();
        let dim = c.dims[d];
        let pos = pos.unwrap_or(dim.min);
        if pos < dim.min || pos as i64 >= dim.min as i64 + dim.extent as i64 {
            return Err(Error::value(format!(
                "Cannot slice dimension {d} of buffer {} at {pos}: it only covers [{}, {}]",
                c.name,
                dim.min,
                dim.min as i64 + dim.extent as i64 - 1
            )));
        }
        let shift = (pos - dim.min) as isize * dim.stride as isize * c.ty.bytes() as isize;
        c.host = c.host.wrapping_offset(shift);
        c.dims.remove(d);
        Ok(())
    }

    /// Append an extent-1 dimension whose stride is the span of the others.
    pub fn add_dimension(&self) {
        let mut c = self.write();
        let stride = c
            .dims
            .last()
            .map(|d| d.extent as i64 * d.stride as i64)
            .unwrap_or(1);
        c.dims.push(halide_dimension_t {
            min: 0,
            extent: 1,
            stride: stride as i32,
            flags: 0,
        });
    }

    /// Insert an extent-1 dimension at index `d` with min `pos` (default 0), in place.
    pub fn embed(&self, d: i64, pos: Option<i32>) -> Result<()> {
        let n = self.dimensions();
        if d < 0 || d as usize > n {
            return Err(Error::value(format!(
                "embed: dimension {d} is out of range for a {n}-dimensional buffer"
            )));
        }
        self.add_dimension();
        let mut c = self.write();
        let mut new = c.dims.pop().expect("add_dimension added one");
        new.min = pos.unwrap_or(0);
        c.dims.insert(d as usize, new);
        Ok(())
    }

    /// A new zero-filled buffer with the same type, mins and extents, whose
    /// storage is dense with the same stride order as `self` (so an
    /// interleaved buffer stays interleaved).
    pub fn make_with_shape_of(&self, name: Option<String>) -> Result<Buffer> {
        let (ty, dims) = {
            let c = self.read();
            (c.ty, c.dims.clone())
        };
        let extents: Vec<i32> = dims.iter().map(|d| d.extent).collect();
        let mut order: Vec<usize> = (0..dims.len()).collect();
        order.sort_by_key(|&i| (dims[i].stride as i64).abs());
        let out = Buffer::new_with_storage_order(ty, &extents, &order, name)?;
        {
            let mut c = out.write();
            for (d, src) in c.dims.iter_mut().zip(&dims) {
                d.min = src.min;
            }
        }
        Ok(out)
    }

    /// A dense, zero-filled buffer whose dimension `storage_order[0]` is
    /// innermost, then `storage_order[1]`, and so on.
    pub fn new_with_storage_order(
        ty: Type,
        extents: &[i32],
        storage_order: &[usize],
        name: Option<String>,
    ) -> Result<Buffer> {
        let n = extents.len();
        let mut seen = vec![false; n];
        if storage_order.len() != n
            || storage_order
                .iter()
                .any(|&o| o >= n || std::mem::replace(&mut seen[o], true))
        {
            return Err(Error::value(format!(
                "storage_order {storage_order:?} must list each of the {n} dimensions once"
            )));
        }
        let permuted: Vec<i32> = storage_order.iter().map(|&o| extents[o]).collect();
        let dense = Buffer::new(ty, &permuted, name)?;
        let (host, pdims, keep, nm) = {
            let c = dense.read();
            (c.host, c.dims.clone(), c.keepalive.clone(), c.name.clone())
        };
        let mut dims = vec![halide_dimension_t::default(); n];
        for (k, &o) in storage_order.iter().enumerate() {
            dims[o] = pdims[k];
        }
        Ok(Buffer::from_parts(nm, ty, host, dims, keep))
    }

    /// Call `f` with a pointer to every element, dimension 0 varying fastest.
    pub fn for_each_element_ptr(&self, mut f: impl FnMut(&[i32], *mut u8)) {
        let (host, dims, bytes) = {
            let c = self.read();
            (c.host, c.dims.clone(), c.ty.bytes() as isize)
        };
        if dims.iter().any(|d| d.extent <= 0) {
            return;
        }
        let n = dims.len();
        let mut pos: Vec<i32> = dims.iter().map(|d| d.min).collect();
        loop {
            let off: isize = dims
                .iter()
                .zip(&pos)
                .map(|(d, &p)| (p - d.min) as isize * d.stride as isize)
                .sum();
            f(&pos, host.wrapping_offset(off * bytes));
            let mut i = 0;
            loop {
                if i == n {
                    return;
                }
                pos[i] += 1;
                if pos[i] < dims[i].min + dims[i].extent {
                    break;
                }
                pos[i] = dims[i].min;
                i += 1;
            }
        }
    }

    /// Call `f` with the coordinates of every element, dimension 0 varying fastest.
    pub fn for_each_element(&self, mut f: impl FnMut(&[i32])) {
        self.for_each_element_ptr(|p, _| f(p));
    }

    /// Set every element to the bytes of one element, `value` (length = type bytes).
    pub fn fill_bytes(&self, value: &[u8]) -> Result<()> {
        let bytes = self.ty().bytes();
        if value.len() != bytes {
            return Err(Error::internal(format!(
                "fill_bytes got {} bytes for a {bytes}-byte type",
                value.len()
            )));
        }
        // SAFETY: each pointer addresses one element inside the buffer.
        self.for_each_element_ptr(|_, p| unsafe {
            std::ptr::copy_nonoverlapping(value.as_ptr(), p, bytes)
        });
        Ok(())
    }

    /// Set every element to `v`, converted like `set_f64` (floats) or `set_i128` (integers).
    pub fn fill_f64(&self, v: f64) -> Result<()> {
        let ty = self.ty();
        let mut tmp = [0u8; 16];
        // SAFETY: tmp has room for any scalar type.
        unsafe { write_scalar_f64(ty, tmp.as_mut_ptr(), v) };
        self.fill_bytes(&tmp[..ty.bytes()])
    }
    pub fn fill_i128(&self, v: i128) -> Result<()> {
        let ty = self.ty();
        let mut tmp = [0u8; 16];
        // SAFETY: as above.
        unsafe { write_scalar_i128(ty, tmp.as_mut_ptr(), v) };
        self.fill_bytes(&tmp[..ty.bytes()])
    }

    /// Whether every element equals `v` (integer comparison).
    pub fn all_equal_i128(&self, v: i128) -> bool {
        let ty = self.ty();
        let mut eq = true;
        // SAFETY: each pointer addresses one element.
        self.for_each_element_ptr(|_, p| eq &= unsafe { read_scalar_i128(ty, p) } == v);
        eq
    }
    /// Whether every element equals `v` (floating-point comparison).
    pub fn all_equal_f64(&self, v: f64) -> bool {
        let ty = self.ty();
        let mut eq = true;
        // SAFETY: each pointer addresses one element.
        self.for_each_element_ptr(|_, p| eq &= unsafe { read_scalar_f64(ty, p) } == v);
        eq
    }

    /// Copy the elements of `src` that lie inside `self` (the intersection of
    /// the two boxes) into `self`. Types must match.
    pub fn copy_from(&self, src: &Buffer) -> Result<()> {
        if self.same_as(src) {
            return Ok(());
        }
        let (sty, sdims) = (src.ty(), src.dims());
        let (dty, ddims) = (self.ty(), self.dims());
        if sty != dty {
            return Err(Error::type_error(format!(
                "copy_from: cannot copy a {sty} buffer into a {dty} buffer"
            )));
        }
        if sdims.len() != ddims.len() {
            return Err(Error::value(format!(
                "copy_from: source has {} dimensions but destination has {}",
                sdims.len(),
                ddims.len()
            )));
        }
        let dst = self.alias();
        for (i, (s, d)) in sdims.iter().zip(&ddims).enumerate() {
            let lo = s.min.max(d.min);
            let hi = (s.min as i64 + s.extent as i64).min(d.min as i64 + d.extent as i64);
            if hi <= lo as i64 {
                return Ok(());
            }
            dst.crop(i as i64, lo, (hi - lo as i64) as i32)?;
        }
        let bytes = dty.bytes();
        let (shost, sdims) = {
            let c = src.read();
            (c.host, c.dims.clone())
        };
        dst.for_each_element_ptr(|pos, p| {
            let off: isize = sdims
                .iter()
                .zip(pos)
                .map(|(d, &x)| (x - d.min) as isize * d.stride as isize)
                .sum();
            // SAFETY: `pos` lies inside `src` (dst was cropped to the intersection).
            unsafe { std::ptr::copy(shost.wrapping_offset(off * bytes as isize), p, bytes) };
        });
        Ok(())
    }

    /// Drop the host memory, keeping the shape (a bounds-query buffer).
    pub fn deallocate(&self) {
        let mut c = self.write();
        c.host = std::ptr::null_mut();
        c.keepalive = None;
    }

    /// Give a buffer without host memory dense, zeroed storage laid out
    /// with its current strides. A buffer that has memory is left alone.
    pub fn allocate(&self) -> Result<()> {
        let (has_host, ty, dims) = {
            let c = self.read();
            (!c.host.is_null(), c.ty, c.dims.clone())
        };
        if has_host {
            return Ok(());
        }
        let (mut lo, mut hi) = (0i64, 0i64);
        for d in &dims {
            if d.extent <= 0 {
                continue;
            }
            let span = (d.extent as i64 - 1) * d.stride as i64;
            if span < 0 {
                lo += span
            } else {
                hi += span
            }
        }
        let elems = (hi - lo + 1) as usize;
        let bytes = elems
            .checked_mul(ty.bytes())
            .ok_or_else(|| Error::value("Buffer is too large"))?;
        let storage = AlignedStorage::zeroed(bytes)?;
        let host = storage
            .ptr
            .wrapping_offset(-lo as isize * ty.bytes() as isize);
        let mut c = self.write();
        c.host = host;
        c.keepalive = Some(Arc::new(storage));
        Ok(())
    }

    /// A dense copy with the same mins and stride order, and a fresh name.
    pub fn copy(&self) -> Result<Buffer> {
        let out = self.make_with_shape_of(None)?;
        out.copy_from(self)?;
        Ok(out)
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
