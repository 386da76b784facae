//! `OutputImageParam` (`f.output_buffer()`): the buffer an output Func is
//! realized into, seen as a pipeline parameter, so schedules and
//! specialization conditions can mention its shape (`width() > 100`). Its
//! Exprs are the variables lowering defines for every output buffer
//! (`f.min.d`, `f.extent.d`, `f.stride.d`), linked to a buffer Parameter
//! so they count as parameters, not free Vars. Constraining them
//! (`set_min`, ...) is not implemented.

use crate::error::{Error, Result};
use crate::ir::{Expr, Type};
use crate::lang::function::Function;
use crate::lang::parameter::Parameter;

#[derive(Clone, Debug)]
pub struct OutputImageParam {
    pub param: Parameter,
    pub dimensions: usize,
}

/// One dimension of an `OutputImageParam`.
#[derive(Clone, Debug)]
pub struct Dimension {
    pub param: Parameter,
    pub index: usize,
}

impl Dimension {
    fn field(&self, what: &str) -> Expr {
        let name = format!("{}.{what}.{}", self.param.name(), self.index);
        Expr::param_var(Type::i32(), name, self.param.clone())
    }
    pub fn min(&self) -> Expr {
        self.field("min")
    }
    pub fn extent(&self) -> Expr {
        self.field("extent")
    }
    pub fn stride(&self) -> Expr {
        self.field("stride")
    }
    /// `min + extent - 1`.
    pub fn max(&self) -> Expr {
        Expr::sub(Expr::add(self.min(), self.extent()), Expr::i32(1))
    }
}

/// The output buffers of `f`: one per value, named `f` (or `f.0`, `f.1`, ...
/// for a Tuple).
pub fn output_buffers(f: &Function) -> Result<Vec<OutputImageParam>> {
    let name = f.name();
    if !f.has_pure_definition() {
        return Err(Error::user(format!(
            "Can't access output buffer(s) of undefined Func \"{name}\".\n"
        )));
    }
    let dims = f.dimensions();
    Ok(f
        .output_params()
        .into_iter()
        .map(|param| OutputImageParam { param, dimensions: dims })
        .collect())
}

/// `f.output_buffer()`: the single output buffer of a non-Tuple Func.
pub fn output_buffer(f: &Function) -> Result<OutputImageParam> {
    let mut all = output_buffers(f)?;
    if all.len() > 1 {
        return Err(Error::user(format!(
            "Can't call Func::output_buffer on Func \"{}\" because it returns a Tuple.\n",
            f.name()
        )));
    }
    Ok(all.remove(0))
}

impl OutputImageParam {
    pub fn name(&self) -> String {
        self.param.name()
    }
    pub fn ty(&self) -> Type {
        self.param.ty()
    }
    pub fn dim(&self, i: i64) -> Result<Dimension> {
        if i < 0 || i as usize >= self.dimensions {
            return Err(Error::user(format!(
                "Can't access dimension {i} of a {}-dimensional Parameter\n",
                self.dimensions
            )));
        }
        Ok(Dimension {
            param: self.param.clone(),
            index: i as usize,
        })
    }
    /// Dimension `i`, or Halide's error naming `what` for images with fewer
    /// dimensions (`what`: the accessor, `few`: how the message describes them).
    fn named_dim(&self, i: usize, what: &str, few: &str) -> Result<Dimension> {
        if self.dimensions <= i {
            return Err(Error::user(format!("Can't ask for the {what} of {few}\n")));
        }
        self.dim(i as i64)
    }
    pub fn width(&self) -> Result<Expr> {
        Ok(self
            .named_dim(0, "width", "a zero-dimensional image")?
            .extent())
    }
    pub fn height(&self) -> Result<Expr> {
        Ok(self
            .named_dim(1, "height", "a zero or one-dimensional image")?
            .extent())
    }
    pub fn channels(&self) -> Result<Expr> {
        Ok(self
            .named_dim(2, "channels", "an image with fewer than three dimensions")?
            .extent())
    }
    pub fn left(&self) -> Result<Expr> {
        Ok(self.named_dim(0, "left", "a zero-dimensional image")?.min())
    }
    pub fn right(&self) -> Result<Expr> {
        Ok(self
            .named_dim(0, "right", "a zero-dimensional image")?
            .max())
    }
    pub fn top(&self) -> Result<Expr> {
        Ok(self
            .named_dim(1, "top", "a zero- or one-dimensional image")?
            .min())
    }
    pub fn bottom(&self) -> Result<Expr> {
        Ok(self
            .named_dim(1, "bottom", "a zero- or one-dimensional image")?
            .max())
    }
}
