//! Math functions (placeholder, replaced below).

use ferrohalide_core::ir::{Expr, MathFn, Type};
use ferrohalide_core::{Error, Result};

use super::{CodeGen, Val};

impl CodeGen {
    pub(crate) fn codegen_math(&mut self, m: MathFn, t: Type, args: &[Expr]) -> Result<Val> {
        let _ = (t, args);
        Err(Error::unimplemented(m.name()))
    }
}
