//! `ImageParam`: an input buffer of a pipeline, bound at realize time
//! (`set`) or passed to a Callable. Reads are `Image` calls carrying the
//! Parameter; its shape is the Int(32) variables `im.min.d`, `im.extent.d`,
//! `im.stride.d` that lowering defines for every buffer argument, so one
//! compiled pipeline serves inputs of any shape. Dimension constraints
//! (`dim(d).set_min(...)`) are recorded on the Parameter and become
//! run-time checks (lower/buffer_checks.rs).

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{CallKind, Expr, Type};
use crate::lang::func::{check_call_args, expand_placeholder, Func};
use crate::lang::output_buffer::{Dimension, OutputImageParam};
use crate::lang::parameter::{unique_param_name, Parameter};

#[derive(Clone, Debug)]
pub struct ImageParam {
    /// The shape accessors are those of an output buffer (Halide's
    /// ImageParam derives from OutputImageParam).
    pub base: OutputImageParam,
    /// The wrappers made by `in_`, kept alive with the ImageParam (the
    /// Parameter links them weakly).
    wrappers: std::sync::Arc<std::sync::Mutex<Vec<Func>>>,
}

impl ImageParam {
    /// `ImageParam(type, dims[, name])`; unnamed ones are `p<n>`.
    pub fn new(ty: Type, dims: usize, name: Option<&str>) -> ImageParam {
        let name = name.map(str::to_string).unwrap_or_else(unique_param_name);
        ImageParam {
            base: OutputImageParam {
                param: Parameter::new(ty, true, dims, name),
                dimensions: dims,
            },
            wrappers: Default::default(),
        }
    }
    pub fn param(&self) -> &Parameter {
        &self.base.param
    }
    pub fn name(&self) -> String {
        self.base.name()
    }
    pub fn ty(&self) -> Type {
        self.base.ty()
    }
    pub fn dimensions(&self) -> usize {
        self.base.dimensions
    }

    /// `im[args]`: a read of the input. Halide reports errors here in
    /// terms of the Func it wraps the parameter in, `<name>_im`.
    pub fn call(&self, args: Vec<Expr>) -> Result<Expr> {
        let name = self.name();
        let func_name = format!("{name}_im");
        let dims = self.dimensions();
        let args = expand_placeholder(&func_name, args, dims)?;
        if args.len() != dims {
            return Err(Error::user(format!(
                "Func \"{func_name}\" was called with {} arguments, but was defined with {dims}\n",
                args.len()
            )));
        }
        let args = check_call_args(&func_name, args)?;
        Ok(Expr::call(
            self.ty(),
            name,
            args,
            CallKind::Image {
                buffer: None,
                param: Some(self.param().clone()),
            },
        ))
    }

    /// `in_()`: a Func `w(args) = im(args)` that every Func of a pipeline
    /// reads instead of the image (redirected when lowering,
    /// `lower/wrap_calls.rs`), so the read can be scheduled (Halide names it
    /// `im_im_global_wrapper$n`).
    pub fn in_(&self) -> Result<Func> {
        self.wrapper(&[], &format!("{}_im_global_wrapper", self.name()))
    }
    /// `in_(g)`: a wrapper read by `g` only.
    pub fn in_func(&self, g: &Func) -> Result<Func> {
        self.wrapper(std::slice::from_ref(g), &format!("{}_im_in_{}", self.name(), g.name()))
    }
    /// `in_([g, h, ...])`: one wrapper shared by the listed consumers.
    pub fn in_funcs(&self, gs: &[Func]) -> Result<Func> {
        if gs.is_empty() {
            return Err(Error::user("Could not create a in wrapper for an empty list of Funcs\n"));
        }
        self.wrapper(gs, &format!("{}_im_wrapper", self.name()))
    }

    /// The wrapper for `consumers` (every consumer when empty), made on
    /// first use; asking again returns the same one.
    fn wrapper(&self, consumers: &[Func], base: &str) -> Result<Func> {
        let entries = self.param().image_wrappers();
        let key = consumers.first().map(|c| c.name()).unwrap_or_default();
        if let Some((_, existing)) = entries.iter().find(|(k, _)| *k == key) {
            return Ok(Func::from_function(existing.clone()));
        }
        let w = Func::new(Some(&format!("{base}${}", entries.len())));
        let args: Vec<Expr> = (0..self.dimensions()).map(|d| Expr::var_i32(format!("_{d}"))).collect();
        let value = self.call(args.clone())?;
        w.define(args, vec![value])?;
        // Used by its consumers from the start, as Halide's wrappers are.
        w.function.freeze();
        if consumers.is_empty() {
            self.param().add_image_wrapper(String::new(), &w.function);
        }
        for c in consumers {
            self.param().add_image_wrapper(c.name(), &w.function);
        }
        self.wrappers.lock().unwrap_or_else(|p| p.into_inner()).push(w.clone());
        Ok(w)
    }

    pub fn dim(&self, i: i64) -> Result<Dimension> {
        self.base.dim(i)
    }
    pub fn set(&self, b: Buffer) -> Result<()> {
        self.param().set_buffer(Some(b))
    }
    pub fn reset(&self) {
        // Unbinding cannot fail.
        let _ = self.param().set_buffer(None);
    }
    pub fn get(&self) -> Option<Buffer> {
        self.param().buffer()
    }
}

/// Constraints on one dimension of an input buffer. `None` removes the
/// constraint (Halide's undefined Expr). The values must be Int(32)-like
/// scalars; they are checked when the pipeline runs.
impl Dimension {
    fn constraint_expr(e: Option<Expr>) -> Result<Option<Expr>> {
        match e {
            None => Ok(None),
            Some(e) if e.ty() == Type::i32() => Ok(Some(e)),
            Some(e) if e.ty().is_int_or_uint() && e.ty().is_scalar() => {
                Ok(Some(crate::lang::operators::cast(Type::i32(), e)?))
            }
            Some(e) => Err(Error::user(format!(
                "Dimension constraints must be integers, not {}\n",
                crate::lang::print::ir_type_name(e.ty())
            ))),
        }
    }
    pub fn set_min(&self, e: Option<Expr>) -> Result<()> {
        let e = Self::constraint_expr(e)?;
        self.param.constrain(self.index, |c| c.min = e);
        Ok(())
    }
    pub fn set_extent(&self, e: Option<Expr>) -> Result<()> {
        let e = Self::constraint_expr(e)?;
        self.param.constrain(self.index, |c| c.extent = e);
        Ok(())
    }
    pub fn set_stride(&self, e: Option<Expr>) -> Result<()> {
        let e = Self::constraint_expr(e)?;
        self.param.constrain(self.index, |c| c.stride = e);
        Ok(())
    }
    pub fn set_bounds(&self, min: Option<Expr>, extent: Option<Expr>) -> Result<()> {
        self.set_min(min)?;
        self.set_extent(extent)
    }
    /// Estimates are recorded for autoschedulers only.
    pub fn set_estimate(&self, min: Option<Expr>, extent: Option<Expr>) -> Result<()> {
        let (min, extent) = (Self::constraint_expr(min)?, Self::constraint_expr(extent)?);
        self.param.constrain(self.index, |c| {
            c.min_estimate = min;
            c.extent_estimate = extent;
        });
        Ok(())
    }
    /// `dim(i)` of the same parameter (so constraints chain).
    pub fn dim(&self, i: i64) -> Result<Dimension> {
        let dims = self.param.dimensions();
        if i < 0 || i as usize >= dims {
            return Err(Error::user(format!(
                "Can't access dimension {i} of a {dims}-dimensional Parameter\n"
            )));
        }
        Ok(Dimension {
            param: self.param.clone(),
            index: i as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::print::expr_to_string;

    #[test]
    fn calls_and_accessors() {
        let im = ImageParam::new(Type::uint(8), 2, Some("im"));
        let x = Expr::var_i32("x");
        let e = im.call(vec![x.clone(), Expr::i32(1)]).unwrap();
        assert_eq!(e.ty(), Type::uint(8));
        let err = im.call(vec![x]).unwrap_err();
        assert!(err
            .message
            .contains("Func \"im_im\" was called with 1 arguments, but was defined with 2"));
        assert_eq!(expr_to_string(&im.base.width().unwrap()), "im.extent.0");
        assert!(im.dim(2).is_err());
        let auto = ImageParam::new(Type::float(32), 1, None);
        assert!(auto.name().starts_with('p'));
    }

    #[test]
    fn constraints_chain_and_default_stride() {
        let im = ImageParam::new(Type::int(32), 2, Some("im"));
        let d0 = im.dim(0).unwrap();
        d0.set_min(Some(Expr::i32(0))).unwrap();
        d0.dim(1).unwrap().set_stride(Some(Expr::i32(4))).unwrap();
        let c = im.param().constraints();
        assert!(c[0].min.as_ref().unwrap().is_zero());
        assert!(c[0].stride.as_ref().unwrap().is_one());
        assert_eq!(c[1].stride.as_ref().unwrap().as_int_const(), Some(4));
        d0.set_stride(None).unwrap();
        assert!(im.param().constraints()[0].stride.is_none());
    }
}
