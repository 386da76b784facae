//! `Parameter`: a named pipeline input, scalar (`Param`) or buffer
//! (`ImageParam`), whose value is bound at realize time (or passed to a
//! Callable). Its identity is shared by every Expr that mentions it: a
//! scalar Param is a `Variable` carrying the Parameter, a buffer's shape
//! fields (`im.min.0`, ...) too, and a read of an ImageParam a `Call` of
//! kind `Image` carrying it.
//!
//! Changing a value (`set`) never changes compiled code: values are
//! arguments. Changing what lowering bakes in (ranges, dimension
//! constraints) bumps a process-wide counter the compile cache is keyed on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use std::collections::HashMap;

use crate::analysis::simplify::simplify;
use crate::analysis::substitute::substitute_map;
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Expr, Type, TypeCode};
use crate::lang::operators::cast;
use crate::lang::print::{expr_to_string, ir_type_name};

/// What a user may constrain about one dimension of a buffer parameter.
/// `None` leaves it free.
#[derive(Clone, Debug, Default)]
pub struct DimConstraint {
    pub min: Option<Expr>,
    pub extent: Option<Expr>,
    pub stride: Option<Expr>,
    pub min_estimate: Option<Expr>,
    pub extent_estimate: Option<Expr>,
}

impl DimConstraint {
    /// The same constraint with `f` applied to each Expr.
    fn map(&self, f: impl Fn(&Expr) -> Expr) -> DimConstraint {
        let g = |e: &Option<Expr>| e.as_ref().map(&f);
        DimConstraint {
            min: g(&self.min),
            extent: g(&self.extent),
            stride: g(&self.stride),
            min_estimate: g(&self.min_estimate),
            extent_estimate: g(&self.extent_estimate),
        }
    }
}

#[derive(Debug)]
pub struct ParameterContents {
    pub name: String,
    pub ty: Type,
    pub is_buffer: bool,
    pub dimensions: usize,
    /// Current scalar value, as an immediate of `ty`.
    pub scalar: Option<Expr>,
    pub buffer: Option<Buffer>,
    pub min_value: Option<Expr>,
    pub max_value: Option<Expr>,
    pub estimate: Option<Expr>,
    /// Per dimension of a buffer parameter; dimension 0's stride is
    /// constrained to 1 unless the user removes it (as in Halide).
    /// Stored with this parameter's own shape variables as plain
    /// Variables (`im.extent.0` in `im.dim(1).set_stride(im.dim(0).extent())`):
    /// a variable links its Parameter, so keeping the link would make the
    /// Parameter keep itself alive. `Parameter::constraints` restores them.
    pub constraints: Vec<DimConstraint>,
    /// An ImageParam's `trace_loads` and `add_trace_tag` (Halide keeps them
    /// on the ImageParam's Func).
    pub tracing: crate::lang::trace_settings::TraceSettings,
    /// A buffer parameter's promised host alignment in bytes (`None`: the
    /// element size, which needs no check).
    pub host_alignment: Option<i32>,
    /// Where a buffer parameter's memory lives (`store_in`); on a CPU target
    /// every kind is host memory, as in Halide.
    pub memory_type: crate::ir::MemoryType,
    /// A scalar parameter's default (`set_default_value`; generators use it).
    pub default_value: Option<Expr>,
    /// An ImageParam's wrappers (`im.in_()`, `im.in_(g)`): consumer name
    /// ("" for every consumer) and a weak link to the wrapper Func (the
    /// wrapper reads this Parameter, so a strong link would be a cycle; the
    /// ImageParam keeps its wrappers alive).
    pub image_wrappers: Vec<(String, crate::ir::FunctionPtr)>,
}

impl Drop for ParameterContents {
    fn drop(&mut self) {
        crate::live::PARAMETERS.dropped();
    }
}

#[derive(Clone, Debug)]
pub struct Parameter(Arc<Mutex<ParameterContents>>);

static CONSTRAINTS_VERSION: AtomicU64 = AtomicU64::new(1);
static NEXT_AUTO_NAME: AtomicU64 = AtomicU64::new(0);

/// Bumped whenever any Parameter's range or buffer constraints change: the
/// compile cache is keyed on it, so a change recompiles.
pub fn constraints_version() -> u64 {
    CONSTRAINTS_VERSION.load(Ordering::Relaxed)
}

fn constraints_changed() {
    CONSTRAINTS_VERSION.fetch_add(1, Ordering::Relaxed);
}

/// Unnamed Params and ImageParams share one counter: `p0`, `p1`, ...
pub fn unique_param_name() -> String {
    format!("p{}", NEXT_AUTO_NAME.fetch_add(1, Ordering::Relaxed))
}

/// A Python-level value given for a scalar parameter, before conversion to
/// the parameter's type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarInput {
    Int(i128),
    Float(f64),
    Bool(bool),
}

fn lossy(v: ScalarInput, ty: Type) -> Error {
    let shown = match v {
        ScalarInput::Int(i) if ty.is_bool() => char::from_u32(i as u32)
            .map(|c| c.to_string())
            .unwrap_or_else(|| i.to_string()),
        ScalarInput::Int(i) => i.to_string(),
        ScalarInput::Bool(b) => (b as u8).to_string(),
        ScalarInput::Float(f) => shortest_float(f),
    };
    let tname = if ty.is_bool() {
        "uint1".to_string()
    } else {
        ir_type_name(ty)
    };
    Error::user(format!(
        "The value {shown} cannot be losslessly converted to type {tname}\n"
    ))
}

/// `%g`-like printing of a double (what Halide's message shows).
fn shortest_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f != 0.0 && (f.abs() >= 1e16 || f.abs() < 1e-5) {
        let s = format!("{f:e}");
        // Rust writes 1e20; C's %g writes 1e+20.
        return match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e:0>2}"),
            Some((m, e)) => format!("{m}e-{:0>2}", &e[1..]),
            None => s,
        };
    }
    format!("{f}")
}

/// Convert a value to an immediate of `ty`, as Halide's Param constructor
/// and `set` do: an integer is accepted if it fits the width either signed
/// or unsigned (and then wraps), a float given for an integer type must be
/// integral and in range, floats for float types round.
pub fn scalar_immediate(ty: Type, v: ScalarInput) -> Result<Expr> {
    let ty = ty.element_of();
    match (ty.code, v) {
        (TypeCode::Float | TypeCode::BFloat, ScalarInput::Int(i)) => {
            Ok(Expr::float_imm(ty, i as f64))
        }
        (TypeCode::Float | TypeCode::BFloat, ScalarInput::Float(f)) => Ok(Expr::float_imm(ty, f)),
        (TypeCode::Float | TypeCode::BFloat, ScalarInput::Bool(b)) => {
            Ok(Expr::float_imm(ty, b as u8 as f64))
        }
        (_, ScalarInput::Bool(b)) => scalar_immediate(ty, ScalarInput::Int(b as i128)),
        (_, ScalarInput::Float(f)) => {
            if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.9e19 {
                scalar_immediate(ty, ScalarInput::Int(f as i128)).map_err(|_| lossy(v, ty))
            } else {
                Err(lossy(v, ty))
            }
        }
        (TypeCode::Handle, ScalarInput::Int(i)) => {
            if i < 0 || i > u64::MAX as i128 {
                return Err(lossy(v, ty));
            }
            Ok(Expr::uint_imm(Type::uint(64), i as u64))
        }
        (_, ScalarInput::Int(i)) => {
            let bits = ty.bits as u32;
            let lo = -(1i128 << (bits - 1).min(126));
            let hi = (1i128 << bits.min(126)) - 1;
            let ok = if ty.is_bool() {
                i == 0 || i == 1
            } else {
                i >= lo && i <= hi
            };
            if !ok {
                return Err(lossy(v, ty));
            }
            Ok(if ty.is_int() {
                Expr::int_imm(ty, i as i64)
            } else {
                Expr::uint_imm(ty, i as u64)
            })
        }
    }
}

/// The immediate `e` as a ScalarInput (to pass on to the backend).
pub fn immediate_value(e: &Expr) -> Option<ScalarInput> {
    use crate::ir::ExprNode;
    match e.node() {
        ExprNode::IntImm(v) => Some(ScalarInput::Int(*v as i128)),
        ExprNode::UIntImm(v) if e.ty().is_bool() => Some(ScalarInput::Bool(*v != 0)),
        ExprNode::UIntImm(v) => Some(ScalarInput::Int(*v as i128)),
        ExprNode::FloatImm(v) => Some(ScalarInput::Float(*v)),
        _ => None,
    }
}

impl Parameter {
    pub fn new(ty: Type, is_buffer: bool, dimensions: usize, name: impl Into<String>) -> Parameter {
        let mut constraints =
            vec![DimConstraint::default(); if is_buffer { dimensions } else { 0 }];
        if let Some(c) = constraints.first_mut() {
            c.stride = Some(Expr::i32(1));
        }
        crate::live::PARAMETERS.created();
        Parameter(Arc::new(Mutex::new(ParameterContents {
            name: name.into(),
            ty,
            is_buffer,
            dimensions,
            scalar: None,
            buffer: None,
            min_value: None,
            max_value: None,
            estimate: None,
            constraints,
            tracing: Default::default(),
            host_alignment: None,
            memory_type: Default::default(),
            default_value: None,
            image_wrappers: vec![],
        })))
    }
    pub fn lock(&self) -> std::sync::MutexGuard<'_, ParameterContents> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub fn name(&self) -> String {
        self.lock().name.clone()
    }
    pub fn ty(&self) -> Type {
        self.lock().ty
    }
    pub fn is_buffer(&self) -> bool {
        self.lock().is_buffer
    }
    pub fn dimensions(&self) -> usize {
        self.lock().dimensions
    }
    pub fn same_as(&self, other: &Parameter) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
    /// A stable identity for hashing.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as *const () as usize
    }

    // ---- scalar parameters ----

    /// The Expr standing for this scalar parameter in definitions.
    pub fn expr(&self) -> Expr {
        let (ty, name) = {
            let c = self.lock();
            (c.ty, c.name.clone())
        };
        Expr::param_var(ty, name, self.clone())
    }
    /// Set the value (converted losslessly, see `scalar_immediate`); a
    /// failed conversion leaves the old value.
    pub fn set_scalar(&self, v: ScalarInput) -> Result<()> {
        let imm = scalar_immediate(self.ty(), v)?;
        self.lock().scalar = Some(imm);
        Ok(())
    }
    pub fn scalar(&self) -> Option<Expr> {
        self.lock().scalar.clone()
    }
    /// The value a realization uses, or Halide's error if there is none.
    pub fn scalar_for_run(&self) -> Result<Expr> {
        let c = self.lock();
        c.scalar.clone().ok_or_else(|| {
            Error::user(format!(
                "Parameter {} does not have a valid scalar value.\n",
                c.name
            ))
        })
    }

    /// Halide's `set_default_value`: the value must have this parameter's
    /// type exactly (no conversion, as in Halide).
    pub fn set_default_value(&self, e: Option<Expr>) -> Result<()> {
        let mut c = self.lock();
        if c.is_buffer {
            return Err(Error::user(format!(
                "Parameter {} is a buffer parameter and has no default value\n",
                c.name
            )));
        }
        if let Some(v) = &e {
            if v.ty() != c.ty {
                return Err(Error::user(format!(
                    "Can't set parameter {} of type {} to have default value {} of type {}\n",
                    c.name,
                    ir_type_name(c.ty),
                    expr_to_string(v),
                    ir_type_name(v.ty())
                )));
            }
        }
        c.default_value = e;
        Ok(())
    }
    pub fn default_value(&self) -> Option<Expr> {
        self.lock().default_value.clone()
    }

    /// The live wrappers of this image (see `image_wrappers`).
    pub fn image_wrappers(&self) -> Vec<(String, crate::lang::function::Function)> {
        self.lock()
            .image_wrappers
            .iter()
            .filter_map(|(k, w)| Some((k.clone(), crate::lang::function::Function::from_ptr(w)?)))
            .collect()
    }
    /// Record `wrapper` for `consumer` ("" for every consumer).
    pub fn add_image_wrapper(&self, consumer: String, wrapper: &crate::lang::function::Function) {
        self.lock().image_wrappers.push((consumer, wrapper.ptr().weakened()));
        constraints_changed();
    }

    /// The host alignment a buffer parameter promises (Halide's default:
    /// the element size).
    pub fn host_alignment(&self) -> i32 {
        let c = self.lock();
        c.host_alignment.unwrap_or(c.ty.bytes() as i32)
    }
    /// Promise that the host pointer is a multiple of `bytes`; the pipeline
    /// checks it on entry (Halide's `halide_error_unaligned_host_ptr`).
    pub fn set_host_alignment(&self, bytes: i32) -> Result<()> {
        let mut c = self.lock();
        if !c.is_buffer {
            return Err(Error::user(format!(
                "Parameter {} is not a Buffer\n",
                c.name
            )));
        }
        if bytes <= 0 {
            return Err(Error::user(format!(
                "The host alignment of {} must be positive, not {bytes}\n",
                c.name
            )));
        }
        c.host_alignment = Some(bytes);
        drop(c);
        constraints_changed();
        Ok(())
    }
    pub fn memory_type(&self) -> crate::ir::MemoryType {
        self.lock().memory_type
    }
    pub fn store_in(&self, t: crate::ir::MemoryType) -> Result<()> {
        let mut c = self.lock();
        if !c.is_buffer {
            return Err(Error::user(format!(
                "Parameter {} is not a Buffer\n",
                c.name
            )));
        }
        c.memory_type = t;
        Ok(())
    }

    /// A range bound converted to this parameter's type; it must be a constant.
    fn range_bound(&self, e: Option<Expr>, which: &str) -> Result<Option<Expr>> {
        let Some(e) = e else { return Ok(None) };
        let (ty, name) = {
            let c = self.lock();
            (c.ty, c.name.clone())
        };
        let converted = simplify(&cast(ty, e.clone())?);
        if !converted.is_const() {
            return Err(Error::user(format!(
                "{which} value for parameter {name} must be constant: {}\n",
                expr_to_string(&e)
            )));
        }
        Ok(Some(converted))
    }
    pub fn set_min_value(&self, e: Option<Expr>) -> Result<()> {
        let v = self.range_bound(e, "Min")?;
        self.lock().min_value = v;
        constraints_changed();
        Ok(())
    }
    pub fn set_max_value(&self, e: Option<Expr>) -> Result<()> {
        let v = self.range_bound(e, "Max")?;
        self.lock().max_value = v;
        constraints_changed();
        Ok(())
    }
    /// `ImageParam.trace_loads()`.
    pub fn trace_loads(&self) {
        self.lock().tracing.loads = true;
        constraints_changed();
    }
    /// `ImageParam.add_trace_tag(tag)`.
    pub fn add_trace_tag(&self, tag: &str) -> Result<()> {
        self.lock().tracing.add_tag(tag)?;
        constraints_changed();
        Ok(())
    }
    pub fn tracing(&self) -> crate::lang::trace_settings::TraceSettings {
        self.lock().tracing.clone()
    }
    pub fn min_value(&self) -> Option<Expr> {
        self.lock().min_value.clone()
    }
    pub fn max_value(&self) -> Option<Expr> {
        self.lock().max_value.clone()
    }
    /// An estimate for autoschedulers: converted like a value, never used
    /// as one.
    pub fn set_estimate(&self, v: ScalarInput) -> Result<()> {
        let imm = scalar_immediate(self.ty(), v)?;
        self.lock().estimate = Some(imm);
        Ok(())
    }

    // ---- buffer parameters ----

    /// Bind a Buffer (`ImageParam.set`): the element type must match now,
    /// the dimensionality is checked when the pipeline runs (as in Halide).
    pub fn set_buffer(&self, b: Option<Buffer>) -> Result<()> {
        if let Some(b) = &b {
            let c = self.lock();
            if b.ty() != c.ty {
                return Err(Error::user(format!(
                    "Can't bind ImageParam {} of type {} to Buffer {} of type {}\n",
                    c.name,
                    ir_type_name(c.ty),
                    b.name(),
                    ir_type_name(b.ty())
                )));
            }
        }
        self.lock().buffer = b;
        Ok(())
    }
    pub fn buffer(&self) -> Option<Buffer> {
        self.lock().buffer.clone()
    }

    /// The Int(32) shape variable `name.field.d` (`field`: min, extent, stride).
    pub fn shape_var(&self, field: &str, d: usize) -> Expr {
        let name = format!("{}.{field}.{d}", self.name());
        Expr::param_var(Type::i32(), name, self.clone())
    }
    /// `set_estimates([(min, extent), ...])`: one estimate per dimension,
    /// for autoschedulers and the metadata of compiled code.
    pub fn set_estimates(&self, estimates: Vec<(Option<Expr>, Option<Expr>)>) -> Result<()> {
        let dims = self.dimensions();
        if estimates.len() != dims {
            return Err(Error::user(format!(
                "{} has {dims} dimensions, but {} estimates were given (one (min, extent) pair per dimension is needed)\n",
                self.name(),
                estimates.len()
            )));
        }
        for (d, (min, extent)) in estimates.into_iter().enumerate() {
            self.constrain(d, |c| {
                c.min_estimate = min;
                c.extent_estimate = extent;
            });
        }
        Ok(())
    }

    pub fn constraints(&self) -> Vec<DimConstraint> {
        let stored = self.lock().constraints.clone();
        let linked = self.shape_vars(|name| Expr::param_var(Type::i32(), name, self.clone()));
        stored
            .iter()
            .map(|c| c.map(|e| substitute_map(&linked, e)))
            .collect()
    }
    /// Change the constraints of dimension `d` (checked to exist by the caller).
    pub fn constrain(&self, d: usize, f: impl FnOnce(&mut DimConstraint)) {
        let plain = self.shape_vars(|name| Expr::var_i32(name));
        if let Some(c) = self.lock().constraints.get_mut(d) {
            f(c);
            *c = c.map(|e| substitute_map(&plain, e));
        }
        constraints_changed();
    }
    /// Each shape variable name of this buffer parameter, with `make(name)`.
    fn shape_vars(&self, make: impl Fn(String) -> Expr) -> HashMap<String, Expr> {
        let (name, dims) = {
            let c = self.lock();
            (c.name.clone(), c.dimensions)
        };
        let mut out = HashMap::new();
        for d in 0..dims {
            for field in ["min", "extent", "stride"] {
                let n = format!("{name}.{field}.{d}");
                out.insert(n.clone(), make(n));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(ty: Type, v: ScalarInput) -> Result<String> {
        scalar_immediate(ty, v).map(|e| expr_to_string(&e))
    }

    #[test]
    fn conversion_wraps_within_signed_or_unsigned_range() {
        use ScalarInput::*;
        assert_eq!(val(Type::int(8), Int(200)).unwrap(), "(int8)-56");
        assert_eq!(val(Type::uint(8), Int(-1)).unwrap(), "(uint8)255");
        assert!(val(Type::int(8), Int(256)).is_err());
        assert!(val(Type::int(8), Int(-129)).is_err());
        assert!(val(Type::int(32), Float(1.5)).is_err());
        assert!(val(Type::int(32), Float(2.0)).is_ok());
        assert!(val(Type::bool(), Int(2)).is_err());
        let e = scalar_immediate(Type::int(64), Int(1i128 << 63)).unwrap();
        assert_eq!(e.as_int_const(), Some(i64::MIN));
        let msg = val(Type::int(32), Float(1.5)).unwrap_err().message;
        assert!(msg.contains("The value 1.5 cannot be losslessly converted to type int32"));
    }

    #[test]
    fn ranges_must_be_constant_and_take_the_type() {
        let p = Parameter::new(Type::int(32), false, 0, "p");
        p.set_min_value(Some(Expr::f64(2.0))).unwrap();
        assert_eq!(p.min_value().unwrap().ty(), Type::int(32));
        let q = Parameter::new(Type::int(32), false, 0, "q");
        let err = p.set_max_value(Some(q.expr())).unwrap_err();
        assert!(err
            .message
            .contains("Max value for parameter p must be constant: q"));
    }

    #[test]
    fn buffer_type_checked_at_bind() {
        let p = Parameter::new(Type::uint(8), true, 2, "im");
        let b = Buffer::new(Type::int(32), &[3, 3], Some("b".into())).unwrap();
        let err = p.set_buffer(Some(b)).unwrap_err();
        assert!(err
            .message
            .contains("Can't bind ImageParam im of type uint8 to Buffer b of type int32"));
        assert!(p.constraints()[0].stride.as_ref().unwrap().is_one());
    }
}
