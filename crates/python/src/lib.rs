//! `ferrohalide._core`: the Python bindings. Thin by design: convert Python
//! values, call `ferrohalide_core`, map errors to Python exceptions.

use pyo3::prelude::*;

pub mod errors;
pub mod gil;
pub mod py_boundary;
pub mod py_buffer;
pub mod py_compile_to;
pub mod py_compute_with;
pub mod py_derivative;
pub mod py_device_schedule;
pub mod py_enum;
pub mod py_expr;
pub mod py_extern;
pub mod py_func;
pub mod py_live;
pub mod py_loop_level;
pub mod py_math;
pub mod py_output_buffer;
pub mod py_param;
pub mod py_parameter;
pub mod py_partition;
pub mod py_pipeline;
pub mod py_rdom;
pub mod py_schedule_methods;
pub mod py_serialize;
pub mod py_reduction;
pub mod py_stage;
pub mod py_target;
pub mod py_tuple;
pub mod py_type;
pub mod py_var;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ferrohalide_core::output::set_writer(gil::write_if_holding_gil);
    errors::register(m)?;
    py_type::register(m)?;
    py_var::register(m)?;
    m.add_class::<py_expr::PyExpr>()?;
    py_func::register(m)?;
    py_loop_level::register(m)?;
    py_math::register(m)?;
    py_buffer::register(m)?;
    py_stage::register(m)?;
    py_compute_with::register(m)?;
    py_partition::register(m)?;
    py_output_buffer::register(m)?;
    py_tuple::register(m)?;
    py_param::register(m)?;
    py_target::register(m)?;
    py_pipeline::register(m)?;
    py_compile_to::register(m)?;
    py_boundary::register(m)?;
    py_derivative::register(m)?;
    py_extern::register(m)?;
    py_rdom::register(m)?;
    py_reduction::register(m)?;
    py_live::register(m)?;
    py_serialize::register(m)?;
    py_enum::register(m)?;
    Ok(())
}
