//! The front end: what users build pipelines with. Mirrors Halide's
//! Func/Var/Expr API; the Python bindings are a thin layer over this.

pub mod func;
pub mod function;
pub mod loop_level;
pub mod bits;
pub mod fixed_point;
pub mod math;
pub mod operators;
pub mod output_buffer;
pub mod random;
pub mod parameter;
pub mod print;
pub mod rdom;
pub mod reduction;
pub mod requirement;
pub mod rfactor;
pub mod scatter_gather;
pub mod split_tail;
pub mod stage;
pub mod target_queries;
pub mod trace_settings;
pub mod tuple;
pub mod update;
pub mod var;
pub mod wrapper;
pub mod image_param;
pub mod boundary_conditions;
pub mod compute_with;
pub mod device_schedule;
pub mod lambda;
pub mod derivative;
pub mod extern_func;
