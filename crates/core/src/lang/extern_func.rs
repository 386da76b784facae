//! `Func.define_extern`: a Func computed by a C function (Halide's extern
//! stages). The function follows Halide's calling convention: it gets its
//! arguments in order (a `halide_buffer_t *` per input Func value, image
//! or Buffer, the value of each Expr) and then one `halide_buffer_t *` per
//! output value, and returns 0 on success. It is called twice: first as a
//! bounds query (every buffer's host null: it writes into the input
//! buffers' shapes the region it needs to compute the output's region),
//! then to compute. Lowering: `lower/extern_stages.rs`.

use crate::buffer::Buffer;
use crate::device_api::DeviceApi;
use crate::error::{Error, Result};
use crate::ir::{CallKind, Expr, Type};
use crate::lang::func::Func;
use crate::lang::function::Function;
use crate::lang::parameter::Parameter;

/// One argument of an extern stage (Halide's `ExternFuncArgument`).
#[derive(Clone, Debug)]
pub enum ExternFuncArgument {
    /// The Func's realization, one buffer per value.
    Func(Function),
    Buffer(Buffer),
    Expr(Expr),
    /// An ImageParam's buffer.
    ImageParam(Parameter),
}

#[derive(Clone, Debug)]
pub struct ExternDefinition {
    pub function_name: String,
    pub args: Vec<ExternFuncArgument>,
}

impl ExternDefinition {
    /// Expressions standing for the arguments, for the passes that find
    /// what a Func reads (callees, pipeline inputs): a call of each input
    /// Func and image, and each Expr.
    pub fn argument_exprs(&self) -> Vec<Expr> {
        self.args
            .iter()
            .flat_map(|a| match a {
                ExternFuncArgument::Expr(e) => vec![e.clone()],
                ExternFuncArgument::Func(f) => {
                    let zeros = vec![Expr::i32(0); f.dimensions()];
                    f.output_types()
                        .into_iter()
                        .enumerate()
                        .map(|(i, t)| {
                            Expr::call(
                                t,
                                f.name(),
                                zeros.clone(),
                                CallKind::Halide {
                                    func: f.ptr(),
                                    value_index: i,
                                },
                            )
                        })
                        .collect()
                }
                ExternFuncArgument::Buffer(b) => vec![Expr::call(
                    b.ty(),
                    b.name(),
                    vec![Expr::i32(0); b.dimensions()],
                    CallKind::Image {
                        buffer: Some(b.clone()),
                        param: None,
                    },
                )],
                ExternFuncArgument::ImageParam(p) => vec![Expr::call(
                    p.ty(),
                    p.name(),
                    vec![Expr::i32(0); p.dimensions()],
                    CallKind::Image {
                        buffer: None,
                        param: Some(p.clone()),
                    },
                )],
            })
            .collect()
    }
}

impl Func {
    /// `define_extern(name, args, types, vars)`: `self` is computed by the
    /// C function `function_name` over the dimensions `vars`.
    pub fn define_extern(
        &self,
        function_name: &str,
        args: Vec<ExternFuncArgument>,
        types: Vec<Type>,
        vars: Vec<String>,
        cplusplus_mangling: bool,
        device_api: DeviceApi,
    ) -> Result<()> {
        let name = self.name();
        let c_identifier = function_name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && function_name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !c_identifier {
            return Err(Error::user(format!(
                "In extern definition for Func \"{name}\":\nThe extern function name \"{function_name}\" is not a valid C identifier.\n"
            )));
        }
        if cplusplus_mangling {
            return Err(Error::unimplemented("define_extern with C++ name mangling"));
        }
        if !matches!(device_api, DeviceApi::Host | DeviceApi::None) {
            return Err(Error::unimplemented(&format!(
                "define_extern on the device {device_api:?}"
            )));
        }
        if types.is_empty() {
            return Err(Error::user(format!(
                "In extern definition for Func \"{name}\":\nAn extern definition must have at least one output type.\n"
            )));
        }
        for a in &args {
            if let ExternFuncArgument::Func(f) = a {
                if !f.has_pure_definition() {
                    return Err(Error::user(format!(
                        "In extern definition for Func \"{name}\":\nThe Func {} passed to it is undefined.\n",
                        f.name()
                    )));
                }
            }
        }
        let mut c = self.function.write();
        if c.extern_def.is_some() {
            return Err(Error::user(format!(
                "In extern definition for Func \"{name}\":\nFunc already has an extern definition.\n"
            )));
        }
        if !c.values.is_empty() || !c.updates.is_empty() {
            return Err(Error::user(format!(
                "In extern definition for Func \"{name}\":\nFunc with a pure definition cannot have an extern definition.\n"
            )));
        }
        c.args = vars.clone();
        c.values = types.iter().map(|t| crate::lang::math::undef(*t)).collect();
        c.output_types = types;
        c.stage = crate::schedule::StageSchedule::for_pure_args(&vars);
        c.schedule.storage_dims = vars;
        // Never inlined: computed at the root unless scheduled elsewhere.
        if c.schedule.compute_level == crate::schedule::LoopLevel::Inlined {
            c.schedule.compute_level = crate::schedule::LoopLevel::Root;
        }
        c.extern_def = Some(ExternDefinition {
            function_name: function_name.to_string(),
            args,
        });
        c.version = crate::lang::function::next_version();
        Ok(())
    }

    /// Is the Func an extern stage?
    pub fn is_extern(&self) -> bool {
        self.function.read().extern_def.is_some()
    }

    /// The C function an extern stage calls (empty otherwise).
    pub fn extern_function_name(&self) -> String {
        self.function
            .read()
            .extern_def
            .as_ref()
            .map(|e| e.function_name.clone())
            .unwrap_or_default()
    }
}
