//! `hl.ExternFuncArgument` and `Func.define_extern`: argument conversion
//! for `ferrohalide_core::lang::extern_func`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ferrohalide_core::device_api::DeviceApi;
use ferrohalide_core::lang::extern_func::ExternFuncArgument;

use crate::errors::IntoPy;
use crate::py_buffer::PyBuffer;
use crate::py_func::PyFunc;
use crate::py_param::PyImageParam;

/// `ExternFuncArgument()`, `ExternFuncArgument(value)`: one argument of an
/// extern stage (`Func.define_extern`): a Func, a Buffer, an ImageParam or an
/// Expr (a Param, a number). `define_extern` also takes these values directly;
/// `ExternFuncArgument()` is undefined.
#[pyclass(name = "ExternFuncArgument", module = "ferrohalide", frozen)]
pub struct PyExternFuncArgument {
    inner: Option<ExternFuncArgument>,
}

/// An extern stage argument from what Halide's binding converts to one.
pub fn extern_argument(obj: &Bound<'_, PyAny>) -> PyResult<ExternFuncArgument> {
    if let Ok(a) = obj.extract::<PyRef<PyExternFuncArgument>>() {
        return a
            .inner
            .clone()
            .ok_or_else(|| PyTypeError::new_err("define_extern(): an undefined ExternFuncArgument"));
    }
    if let Ok(f) = obj.extract::<PyRef<PyFunc>>() {
        return Ok(ExternFuncArgument::Func(f.inner.function.clone()));
    }
    if let Ok(b) = obj.extract::<PyRef<PyBuffer>>() {
        return Ok(ExternFuncArgument::Buffer(b.inner.clone()));
    }
    if let Ok(im) = obj.extract::<PyRef<PyImageParam>>() {
        return Ok(ExternFuncArgument::ImageParam(im.get_inner()?.param().clone()));
    }
    crate::py_expr::py_to_expr(obj).map(ExternFuncArgument::Expr).map_err(|_| {
        PyTypeError::new_err(format!(
            "define_extern(): an argument must be a Func, Buffer, ImageParam or Expr, not {}",
            crate::py_param::type_name(obj)
        ))
    })
}

#[pymethods]
impl PyExternFuncArgument {
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        match args.len() {
            0 => Ok(PyExternFuncArgument { inner: None }),
            1 => Ok(PyExternFuncArgument {
                inner: Some(extern_argument(&args.get_item(0)?)?),
            }),
            _ => Err(PyTypeError::new_err("ExternFuncArgument(): takes at most one argument")),
        }
    }
    /// `is_func()`: whether the argument is a Func.
    fn is_func(&self) -> bool {
        matches!(self.inner, Some(ExternFuncArgument::Func(_)))
    }
    /// `is_expr()`: whether the argument is an Expr (including a Param or a number).
    fn is_expr(&self) -> bool {
        matches!(self.inner, Some(ExternFuncArgument::Expr(_)))
    }
    /// `is_buffer()`: whether the argument is a Buffer.
    fn is_buffer(&self) -> bool {
        matches!(self.inner, Some(ExternFuncArgument::Buffer(_)))
    }
    /// `is_image_param()`: whether the argument is an ImageParam.
    fn is_image_param(&self) -> bool {
        matches!(self.inner, Some(ExternFuncArgument::ImageParam(_)))
    }
    /// `defined()`: False for the undefined `ExternFuncArgument()`, True otherwise.
    fn defined(&self) -> bool {
        self.inner.is_some()
    }
}

#[pymethods]
impl PyFunc {
    /// `define_extern(function_name, params, types, arguments, mangling=NameMangling.Default, device_api=DeviceAPI.Host)`:
    /// define the Func as computed by the C function `function_name`, called
    /// with the list `params` (Funcs, Buffers, ImageParams, Exprs, or
    /// `ExternFuncArgument`s) and the output buffer(s). `types` is the output
    /// Type or a list of Types (one per Tuple element); `arguments` is the
    /// list of Vars of the Func, or its number of dimensions.
    /// `NameMangling.CPlusPlus` calls the function by its C++ mangled name.
    #[pyo3(signature = (function_name, params, types, arguments, mangling=None, device_api=None))]
    fn define_extern(
        &self,
        function_name: &str,
        params: &Bound<'_, PyAny>,
        types: &Bound<'_, PyAny>,
        arguments: &Bound<'_, PyAny>,
        mangling: Option<&Bound<'_, PyAny>>,
        device_api: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let items = crate::py_expr::sequence_items(params)
            .ok_or_else(|| PyTypeError::new_err("define_extern(): params must be a list"))?;
        let args = items.iter().map(extern_argument).collect::<PyResult<Vec<_>>>()?;
        let types = match crate::py_expr::sequence_items(types) {
            Some(ts) => ts.iter().map(crate::py_type::type_from_py).collect::<PyResult<Vec<_>>>()?,
            None => vec![crate::py_type::type_from_py(types)?],
        };
        let vars: Vec<String> = if let Ok(n) = arguments.extract::<usize>() {
            (0..n).map(|i| ferrohalide_core::lang::var::Var::implicit(i).name().to_string()).collect()
        } else {
            let vs = crate::py_expr::sequence_items(arguments).ok_or_else(|| {
                PyTypeError::new_err("define_extern(): arguments must be a list of Vars or a dimensionality")
            })?;
            vs.iter().map(crate::py_var::var_name).collect::<PyResult<_>>()?
        };
        let cplusplus = match mangling {
            Some(m) if !m.is_none() => m.getattr("name")?.extract::<String>()? == "CPlusPlus",
            _ => false,
        };
        let api = match device_api {
            Some(d) if !d.is_none() => crate::py_target::device_api_of(d)?,
            _ => DeviceApi::Host,
        };
        self.inner
            .define_extern(function_name, args, types, vars, cplusplus, api)
            .py()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyExternFuncArgument>()?;
    Ok(())
}
