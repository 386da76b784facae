//! The device directives (`gpu_blocks`, `gpu_threads`, `gpu_lanes`, `gpu`,
//! `gpu_tile`, `gpu_single_thread`, `hexagon`), written once for `Func`
//! and `Stage`: their Python overloads sorted out here, the work in
//! `ferrohalide_core::lang::device_schedule`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ferrohalide_core::device_api::DeviceApi;
use ferrohalide_core::ir::Expr;
use ferrohalide_core::lang::stage::{Stage, VarOrRVar};
use ferrohalide_core::schedule::OUTERMOST;

use crate::errors::IntoPy;
use crate::py_expr::py_to_expr;
use crate::py_func::{tail_of, PyTailStrategy};
use crate::py_rdom::var_or_rvar;
use crate::py_target::device_api_of;

fn overload_error(method: &str, n: usize) -> PyErr {
    PyTypeError::new_err(format!("{method}(): incompatible function arguments ({n} positional arguments)"))
}

/// Run device directive `method` on `stage` with Python's arguments.
pub(crate) fn device_directive(
    stage: &Stage,
    method: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let mut items: Vec<Bound<'_, PyAny>> = args.iter().collect();
    let mut api = DeviceApi::DefaultGpu;
    let mut tail: Option<PyTailStrategy> = None;
    let mut x_kw = None;
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            match k.extract::<String>()?.as_str() {
                "device_api" => api = device_api_of(&v)?,
                "tail" if method == "gpu_tile" => tail = Some(v.extract()?),
                "x" if method == "hexagon" => x_kw = Some(v),
                other => {
                    return Err(PyTypeError::new_err(format!(
                        "{method}() got an unexpected keyword argument '{other}'"
                    )))
                }
            }
        }
    }
    // Trailing positional DeviceAPI, then TailStrategy (gpu_tile).
    if let Some(last) = items.last() {
        if let Ok(d) = device_api_of(last) {
            api = d;
            items.pop();
        }
    }
    if method == "gpu_tile" {
        if let Some(t) = items.last().and_then(|l| l.extract::<PyTailStrategy>().ok()) {
            tail = Some(t);
            items.pop();
        }
    }
    let n = items.len();
    let vars = |xs: &[Bound<'_, PyAny>]| xs.iter().map(var_or_rvar).collect::<PyResult<Vec<VarOrRVar>>>();
    let exprs = |xs: &[Bound<'_, PyAny>]| xs.iter().map(py_to_expr).collect::<PyResult<Vec<Expr>>>();
    match method {
        "gpu_blocks" | "gpu_threads" if (1..=3).contains(&n) => {
            let v = vars(&items)?;
            if method == "gpu_blocks" {
                stage.gpu_blocks(&v, api).py()
            } else {
                stage.gpu_threads(&v, api).py()
            }
        }
        "gpu_lanes" if n == 1 => stage.gpu_lanes(&vars(&items)?[0], api).py(),
        "gpu" if n == 2 || n == 4 || n == 6 => {
            let v = vars(&items)?;
            stage.gpu(&v[..n / 2], &v[n / 2..], api).py()
        }
        "gpu_single_thread" if n == 0 => stage.gpu_single_thread(api).py(),
        "hexagon" if n <= 1 => {
            let x = match (items.first().cloned(), x_kw) {
                (Some(v), None) | (None, Some(v)) => var_or_rvar(&v)?,
                (None, None) => VarOrRVar::var(OUTERMOST),
                (Some(_), Some(_)) => return Err(overload_error(method, n)),
            };
            stage.hexagon(&x).py()
        }
        "gpu_tile" => {
            // (vars, [blocks,] threads, sizes) for one to three dimensions.
            let (d, in_place) = match n {
                3 => (1, true),
                4 => (1, false),
                6 => (2, true),
                8 => (2, false),
                9 => (3, true),
                12 => (3, false),
                _ => return Err(overload_error(method, n)),
            };
            let v = vars(&items[..n - d])?;
            let sizes = exprs(&items[n - d..])?;
            let (xs, blocks, threads) = if in_place {
                (&v[..d], &v[..d], &v[d..2 * d])
            } else {
                (&v[..d], &v[d..2 * d], &v[2 * d..3 * d])
            };
            stage.gpu_tile(xs, blocks, threads, &sizes, tail_of(tail), api).py()
        }
        _ => Err(overload_error(method, n)),
    }
}
