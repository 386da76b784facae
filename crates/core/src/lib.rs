//! ferrohalide-core: the Halide language and compiler, without any code
//! generator. `lang` is the front end users build pipelines with,
//! `schedule` holds scheduling data, `lower` turns a pipeline into a
//! single loop-nest `Stmt` that a backend (crates/codegen-llvm) compiles.

pub mod analysis;
pub mod autoschedule;
pub mod buffer;
pub mod device_api;
pub mod emit;
pub mod error;
pub mod fast_hash;
pub mod freed_storage;
pub mod ir;
pub mod lang;
pub mod live;
pub mod lower;
pub mod module;
pub mod output;
pub mod schedule;
pub mod serialize;
pub mod stack;
pub mod target;

pub use error::{Error, ErrorKind, Result};
