//! `compile_to_callable`: a compiled pipeline called with explicit values
//! for its inputs (in the order the user listed them) and its output
//! buffers (one per output value), by position or by name, with Halide's
//! messages for missing, repeated or unknown arguments. The values stored
//! in Params and ImageParams are not used.

use std::sync::Arc;

use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::Type;
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lang::parameter::{
    immediate_value, scalar_immediate, Parameter, ScalarInput,
};
use ferrohalide_core::lang::tuple::element_buffer_names;
use ferrohalide_core::lower::arguments::InputBuffer;
use ferrohalide_core::lower::ArgumentKind;
use ferrohalide_core::target::Target;
use ferrohalide_core::{Error, Result};

use crate::pipeline::{compile_for, run, Compiled, InputValue};

/// What one argument of a Callable takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    Scalar(Type),
    InputBuffer(Type, usize),
    OutputBuffer(Type, usize),
}

#[derive(Clone, Debug)]
pub struct CallableParam {
    /// The name in messages.
    pub name: String,
    /// The keyword that passes it (an output's Func name without `$n`).
    pub keyword: String,
    pub kind: ParamKind,
}

pub struct Callable {
    compiled: Arc<Compiled>,
    params: Vec<CallableParam>,
}

/// Compile `outputs` to be called with `inputs` (Params and ImageParams,
/// in call order) followed by the output buffers.
pub fn compile_to_callable(
    outputs: &[Function],
    requirements: &[ferrohalide_core::lang::requirement::Requirement],
    inputs: &[Parameter],
    target: Option<&Target>,
) -> Result<Callable> {
    let compiled = compile_for(outputs, requirements, target)?;
    for p in &compiled.inputs.scalars {
        if !inputs.iter().any(|q| q.same_as(p)) {
            return Err(ferrohalide_core::module::missing_argument("parameter", &p.name(), inputs));
        }
    }
    for b in &compiled.inputs.buffers {
        if let InputBuffer::Param(p) = b {
            if !inputs.iter().any(|q| q.same_as(p)) {
                return Err(ferrohalide_core::module::missing_argument("image parameter", &p.name(), inputs));
            }
        }
    }
    let mut params: Vec<CallableParam> = inputs
        .iter()
        .map(|p| CallableParam {
            name: p.name(),
            keyword: p.name(),
            kind: if p.is_buffer() {
                ParamKind::InputBuffer(p.ty(), p.dimensions())
            } else {
                ParamKind::Scalar(p.ty())
            },
        })
        .collect();
    for f in outputs {
        let fname = f.name();
        let base = fname.split('$').next().unwrap_or(&fname).to_string();
        let names = element_buffer_names(f);
        let single = names.len() == 1;
        for (name, ty) in names.into_iter().zip(f.types()) {
            params.push(CallableParam {
                keyword: if single { base.clone() } else { name.clone() },
                name,
                kind: ParamKind::OutputBuffer(ty, f.dimensions()),
            });
        }
    }
    Ok(Callable { compiled, params })
}


/// A scalar given to a Callable, converted to the argument's type the way
/// Halide's bindings do: it must be exactly representable (no wrapping,
/// no float for an integer). `py_type` names the caller's value in the error.
pub fn callable_scalar(ty: Type, v: ScalarInput, py_type: &str) -> Result<ScalarInput> {
    let fail = || {
        Error::user(format!(
            "Unable to cast Python instance of type {py_type} to C++ type '?'"
        ))
    };
    let ok = match (v, ty) {
        (ScalarInput::Float(_), t) if !t.is_float() => false,
        (ScalarInput::Int(i), t) if t.is_bool() => i == 0 || i == 1,
        (ScalarInput::Int(i), t) if t.is_int() => i >= t.min_int() && i <= t.max_int(),
        (ScalarInput::Int(i), t) if t.is_uint() => i >= 0 && i <= t.max_int(),
        _ => true,
    };
    if !ok {
        return Err(fail());
    }
    let imm = scalar_immediate(ty, v).map_err(|_| fail())?;
    immediate_value(&imm).ok_or_else(fail)
}

impl Callable {
    /// The arguments, in positional order: inputs, then outputs.
    pub fn params(&self) -> &[CallableParam] {
        &self.params
    }

    /// Match positional and keyword values to the arguments (positional
    /// order); errors are Halide's.
    pub fn bind<T>(&self, positional: Vec<T>, keywords: Vec<(String, T)>) -> Result<Vec<T>> {
        let n = self.params.len();
        if positional.len() > n {
            return Err(Error::user(format!(
                "Expected at most {n} positional arguments, but saw {}.\n",
                positional.len()
            )));
        }
        if keywords.is_empty() && positional.len() != n {
            return Err(Error::user(format!(
                "Expected exactly {n} positional arguments, but saw {}.\n",
                positional.len()
            )));
        }
        let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
        for (i, v) in positional.into_iter().enumerate() {
            slots[i] = Some(v);
        }
        for (k, v) in keywords {
            let Some(i) = self.params.iter().position(|p| p.keyword == k) else {
                return Err(Error::user(format!(
                    "Unknown argument '{k}' specified via keyword.\n"
                )));
            };
            if slots[i].is_some() {
                return Err(Error::user(format!(
                    "Argument {} specified multiple times.\n",
                    self.params[i].name
                )));
            }
            slots[i] = Some(v);
        }
        slots
            .into_iter()
            .zip(&self.params)
            .map(|(s, p)| {
                s.ok_or_else(|| {
                    Error::user(format!(
                        "Argument {} was not specified by either positional or keyword argument.\n",
                        p.name
                    ))
                })
            })
            .collect()
    }

    /// Run with one value per argument, in positional order.
    pub fn call(&self, values: Vec<InputValue>) -> Result<()> {
        if values.len() != self.params.len() {
            return Err(Error::internal(
                "Callable called with the wrong number of values",
            ));
        }
        let mut inputs: Vec<(&str, InputValue)> = Vec::with_capacity(values.len());
        let mut outputs: Vec<Buffer> = vec![];
        for (p, v) in self.params.iter().zip(values) {
            match (&p.kind, v) {
                (ParamKind::OutputBuffer(..), InputValue::Buffer(b)) => outputs.push(b),
                (ParamKind::OutputBuffer(..), _) => {
                    return Err(Error::type_error(format!(
                        "output {} must be a buffer",
                        p.name
                    )))
                }
                (_, v) => inputs.push((&p.name, v)),
            }
        }
        run(
            &self.compiled,
            &mut |a| {
                let kind_ok = |v: &InputValue| match (a.kind, v) {
                    (ArgumentKind::InputScalar, InputValue::Scalar(_)) => true,
                    (ArgumentKind::InputBuffer, InputValue::Buffer(_)) => true,
                    _ => false,
                };
                match inputs.iter().find(|(n, v)| *n == a.name && kind_ok(v)) {
                    Some((_, v)) => Ok(v.clone()),
                    // Bound Buffers are part of the pipeline, not arguments.
                    None => match self
                        .compiled
                        .inputs
                        .buffers
                        .iter()
                        .find(|b| b.name() == a.name)
                    {
                        Some(InputBuffer::Bound(b)) => Ok(InputValue::Buffer(b.clone())),
                        _ => Err(Error::internal(format!("no value for argument {}", a.name))),
                    },
                }
            },
            &outputs,
        )
    }
}
