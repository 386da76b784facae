//! `hl.Expr`, the conversion of Python values to Exprs, and the operator
//! overloads shared by every Expr-like class (Expr, Var, FuncRef,
//! FuncTupleElementRef).

use std::ffi::CString;

use pyo3::exceptions::{PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::operators::{self as ops, float_literal_is_lossy, Op, Operand, PyOp};
use ferrohalide_core::lang::print::expr_to_string;

use crate::errors::{to_pyerr, IntoPy};
use crate::py_func::{PyFuncRef, PyFuncTupleElementRef};
use crate::py_type::{type_name, PyType};
use crate::py_var::PyVar;

/// `Expr(value=None)`: a Halide expression, the values Funcs are defined with.
/// `Expr()` is the undefined Expr; `Expr(v)` converts a Python bool (a bool
/// constant), int (int32, or int64 if it does not fit in 32 bits), float
/// (float32) or any Expr-like value (Var, RVar, Param, `f[x]`, ...); `Expr("text")`
/// is a string constant (for `print`). Python's arithmetic, bitwise and
/// comparison operators on Exprs build new Exprs; an Expr cannot be used as a
/// Python bool, so use `&`, `|` and `select` rather than `and`, `or` and `if`.
#[pyclass(name = "Expr", module = "ferrohalide", frozen)]
#[derive(Clone)]
pub struct PyExpr {
    pub inner: Expr,
    /// Halide's undefined Expr (`hl.Expr()`): `inner` is a placeholder
    /// that is never used (see `py_to_opt_expr`).
    pub undefined: bool,
}

impl PyExpr {
    pub fn new(inner: Expr) -> PyExpr {
        PyExpr {
            inner,
            undefined: false,
        }
    }
    /// `hl.Expr()`.
    pub fn undefined() -> PyExpr {
        PyExpr {
            inner: Expr::i32(0),
            undefined: true,
        }
    }
    /// An optional Expr as Python sees it (None: undefined).
    pub fn from_opt(e: Option<Expr>) -> PyExpr {
        e.map_or_else(PyExpr::undefined, PyExpr::new)
    }
}

/// A Python value for an API that accepts Halide's undefined Expr:
/// `hl.Expr()` is `None`, anything else converts as `py_to_expr`.
pub fn py_to_opt_expr(obj: &Bound<'_, PyAny>) -> PyResult<Option<Expr>> {
    if let Ok(e) = obj.extract::<PyRef<PyExpr>>() {
        if e.undefined {
            return Ok(None);
        }
    }
    py_to_expr(obj).map(Some)
}

/// Wrap an Expr as a Python `hl.Expr`.
pub fn expr_to_py(py: Python<'_>, e: Expr) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, PyExpr::new(e))?.into_any())
}

/// Warn (RuntimeWarning) when a Python float literal loses precision as float32.
pub fn warn_lossy_float(py: Python<'_>, v: f64) -> PyResult<()> {
    if float_literal_is_lossy(v) {
        let msg = format!(
            "The floating-point value {v:.17} will be interpreted as a float32 by Halide and lose precision; add an explicit `f32()` or `f64()`` cast to avoid this warning."
        );
        let msg = CString::new(msg).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &msg, 1)?;
    }
    Ok(())
}

/// A Python number or Expr-like object as an operator operand; `None` if the
/// object is not something Halide's operators accept.
pub fn py_operand(obj: &Bound<'_, PyAny>) -> PyResult<Option<Operand>> {
    let o = py_operand_unchecked(obj)?;
    if let Some(Operand::Expr(e)) = &o {
        ops::check_depth(e).map_err(to_pyerr)?;
    }
    Ok(o)
}

fn py_operand_unchecked(obj: &Bound<'_, PyAny>) -> PyResult<Option<Operand>> {
    let py = obj.py();
    if let Ok(e) = obj.extract::<PyRef<PyExpr>>() {
        if e.undefined {
            return Err(crate::errors::HalideError::new_err(
                "Error: Undefined Expr used in an expression\n",
            ));
        }
        return Ok(Some(Operand::Expr(e.inner.clone())));
    }
    if let Some(e) = crate::py_param::param_operand(obj) {
        return Ok(Some(Operand::Expr(e)));
    }
    if let Ok(v) = obj.extract::<PyRef<PyVar>>() {
        return Ok(Some(Operand::Expr(v.inner.expr())));
    }
    if let Ok(r) = obj.extract::<PyRef<PyFuncRef>>() {
        return Ok(Some(Operand::Expr(r.inner.to_expr().py()?)));
    }
    if let Ok(r) = obj.extract::<PyRef<PyFuncTupleElementRef>>() {
        return Ok(Some(Operand::Expr(r.inner.element(r.index).py()?)));
    }
    if let Some(e) = crate::py_rdom::rdom_operand(obj)? {
        return Ok(Some(Operand::Expr(e)));
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Operand::Int(obj.extract::<bool>()? as i128)));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Some(match obj.extract::<i128>() {
            Ok(v) if v >= i64::MIN as i128 && v <= i64::MAX as i128 => Operand::Int(v),
            _ => {
                let f: f64 = obj.extract()?;
                warn_lossy_float(py, f)?;
                Operand::Float(f)
            }
        }));
    }
    if obj.is_instance_of::<PyFloat>() {
        let f: f64 = obj.extract()?;
        warn_lossy_float(py, f)?;
        return Ok(Some(Operand::Float(f)));
    }
    if let Ok(p) = obj.extract::<PyRef<crate::py_func::PyFunc>>() {
        // A Func used as a value: Halide calls it with no arguments only when
        // it is zero-dimensional; otherwise it is an error.
        let _ = p;
        return Ok(None);
    }
    Ok(None)
}

/// The items of a Python list or tuple (None for anything else): how the
/// API's "list of ..." arguments are read.
pub fn sequence_items<'py>(obj: &Bound<'py, PyAny>) -> Option<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = obj.cast::<pyo3::types::PyList>() {
        Some(l.iter().collect())
    } else if let Ok(t) = obj.cast::<pyo3::types::PyTuple>() {
        Some(t.iter().collect())
    } else {
        None
    }
}

/// Convert a Python value to an Expr like Halide's implicit conversions:
/// bool → bool constant, int → Int(32) (Int(64) if it does not fit, Float(32)
/// beyond 64 bits), float → Float(32), Expr-likes. Strings are a TypeError.
pub fn py_to_expr(obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Expr::bool_const(obj.extract::<bool>()?));
    }
    match py_operand(obj)? {
        Some(o) => Ok(ops::scalar_to_expr(&o)),
        None => Err(PyTypeError::new_err(format!(
            "Can't convert an object of type '{}' to a halide.Expr",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))),
    }
}

/// Python operator dispatch for `this <op> other` (or `other <op> this`).
pub fn binop(
    this: &Bound<'_, PyAny>,
    other: &Bound<'_, PyAny>,
    op: PyOp,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let py = this.py();
    if !reflected {
        if let Ok(r) = this.extract::<PyRef<PyFuncRef>>() {
            if let (false, PyOp::Bin(bop @ (Op::Add | Op::Sub | Op::Mul | Op::Div))) =
                (r.inner.func.defined(), op)
            {
                // `f[x] += e` on an undefined Func: Python evaluates
                // `f[x] + e`, then assigns it to `f[x]`, which defines f.
                if let Some(rhs) = py_operand(other)? {
                    return Ok(Py::new(
                        py,
                        crate::py_func::PyUnevaluatedFuncRefExpr {
                            target: r.inner.clone(),
                            op: bop,
                            rhs,
                        },
                    )?
                    .into_any());
                }
            }
        }
    }
    let Some(other) = py_operand(other)? else {
        return Ok(py.NotImplemented());
    };
    let Some(me) = py_operand(this)? else {
        return Ok(py.NotImplemented());
    };
    let (lhs, rhs) = if reflected { (other, me) } else { (me, other) };
    let e = ops::py_binary(op, lhs, rhs).map_err(to_pyerr)?;
    expr_to_py(py, e)
}

pub fn self_expr(this: &Bound<'_, PyAny>) -> PyResult<Expr> {
    match py_operand(this)? {
        Some(Operand::Expr(e)) => Ok(e),
        _ => Err(PyTypeError::new_err("not an Expr")),
    }
}

/// Adds Halide's Python operator overloads (+ - * / // % ** << >> & | ^,
/// comparisons, unary - and ~, logical_not) to an Expr-like class, plus any
/// extra methods given.
#[macro_export]
macro_rules! expr_like_methods {
    ($cls:ty { $($extra:tt)* }) => {
        #[pyo3::pymethods]
        impl $cls {
            fn __add__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Add), false)
            }
            fn __radd__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Add), true)
            }
            fn __sub__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Sub), false)
            }
            fn __rsub__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Sub), true)
            }
            fn __mul__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Mul), false)
            }
            fn __rmul__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Mul), true)
            }
            fn __truediv__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Div), false)
            }
            fn __rtruediv__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Div), true)
            }
            fn __floordiv__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::FloorDiv, false)
            }
            fn __rfloordiv__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::FloorDiv, true)
            }
            fn __mod__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Mod), false)
            }
            fn __rmod__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Mod), true)
            }
            fn __pow__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>, _modulo: Option<&pyo3::Bound<'_, pyo3::PyAny>>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Pow, false)
            }
            fn __rpow__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>, _modulo: Option<&pyo3::Bound<'_, pyo3::PyAny>>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Pow, true)
            }
            fn __lshift__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Shl), false)
            }
            fn __rlshift__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Shl), true)
            }
            fn __rshift__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Shr), false)
            }
            fn __rrshift__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Shr), true)
            }
            fn __and__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::BitAnd), false)
            }
            fn __rand__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::BitAnd), true)
            }
            fn __or__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::BitOr), false)
            }
            fn __ror__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::BitOr), true)
            }
            fn __xor__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::BitXor), false)
            }
            fn __rxor__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::BitXor), true)
            }
            fn __lt__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Lt), false)
            }
            fn __le__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Le), false)
            }
            fn __gt__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Gt), false)
            }
            fn __ge__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Ge), false)
            }
            fn __eq__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Eq), false)
            }
            fn __ne__(slf: &pyo3::Bound<'_, Self>, o: &pyo3::Bound<'_, pyo3::PyAny>) -> pyo3::PyResult<pyo3::Py<pyo3::PyAny>> {
                $crate::py_expr::binop(slf.as_any(), o, ferrohalide_core::lang::operators::PyOp::Bin(ferrohalide_core::lang::operators::Op::Ne), false)
            }
            fn __neg__(slf: &pyo3::Bound<'_, Self>) -> pyo3::PyResult<$crate::py_expr::PyExpr> {
                let e = $crate::py_expr::self_expr(slf.as_any())?;
                Ok($crate::py_expr::PyExpr::new(ferrohalide_core::lang::operators::neg(e).map_err($crate::errors::to_pyerr)?))
            }
            fn __invert__(slf: &pyo3::Bound<'_, Self>) -> pyo3::PyResult<$crate::py_expr::PyExpr> {
                let e = $crate::py_expr::self_expr(slf.as_any())?;
                Ok($crate::py_expr::PyExpr::new(ferrohalide_core::lang::operators::bitwise_not(e).map_err($crate::errors::to_pyerr)?))
            }
            /// `logical_not()`: the boolean negation of this value, as an `Expr`
            /// (the value must be a bool; `~` is the bitwise not of an integer).
            fn logical_not(slf: &pyo3::Bound<'_, Self>) -> pyo3::PyResult<$crate::py_expr::PyExpr> {
                let e = $crate::py_expr::self_expr(slf.as_any())?;
                Ok($crate::py_expr::PyExpr::new(ferrohalide_core::lang::operators::logical_not(e).map_err($crate::errors::to_pyerr)?))
            }
            $($extra)*
        }
    };
}

crate::expr_like_methods!(PyExpr {
    #[new]
    #[pyo3(signature = (value=None))]
    fn py_new(value: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        match value {
            None => Ok(PyExpr::undefined()),
            Some(v) if v.is_instance_of::<PyString>() => Ok(PyExpr::new(Expr::string(v.extract::<String>()?))),
            Some(v) => Ok(PyExpr::new(py_to_expr(v)?)),
        }
    }
    /// `type()`: the `Type` of the expression's value (e.g. `Int(32)`).
    fn r#type(&self) -> PyType {
        PyType { inner: self.inner.ty() }
    }
    /// `defined()`: False for the undefined `Expr()`, True otherwise.
    fn defined(&self) -> bool {
        !self.undefined
    }
    fn __bool__(&self) -> PyResult<bool> {
        Err(PyValueError::new_err(format!(
            "The halide.Expr ({}) cannot be converted to a bool. If this error occurs using the 'and'/'or' keywords, consider using the '&'/'|' operators instead.",
            expr_to_string(&self.inner)
        )))
    }
    fn __repr__(&self) -> String {
        if self.undefined {
            return "<undefined halide.Expr>".to_string();
        }
        let tname = match self.inner.node() {
            // Halide types string constants as `const char *`.
            ferrohalide_core::ir::ExprNode::StringImm(_) => "char64".to_string(),
            _ => type_name(self.inner.ty()),
        };
        format!("<halide.Expr of type {}: {}>", tname, expr_to_string(&self.inner))
    }
    // Halide 21's bindings print the same text for str() as for repr().
    fn __str__(&self) -> String {
        self.__repr__()
    }
});
