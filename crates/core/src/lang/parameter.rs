//! `Parameter`: a named pipeline input, scalar (`Param`) or buffer
//! (`ImageParam`), whose value is bound at realize time.

use std::sync::{Arc, Mutex};

use crate::buffer::Buffer;
use crate::ir::{Expr, Type};

#[derive(Debug)]
pub struct ParameterContents {
    pub name: String,
    pub ty: Type,
    pub is_buffer: bool,
    pub dimensions: usize,
    /// Current scalar value, as an immediate of `ty`.
    pub scalar: Option<Expr>,
    pub buffer: Option<Buffer>,
    pub min_value: Option<Expr>,
    pub max_value: Option<Expr>,
    pub estimate: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct Parameter(Arc<Mutex<ParameterContents>>);

impl Parameter {
    pub fn new(ty: Type, is_buffer: bool, dimensions: usize, name: impl Into<String>) -> Parameter {
        Parameter(Arc::new(Mutex::new(ParameterContents {
            name: name.into(),
            ty,
            is_buffer,
            dimensions,
            scalar: None,
            buffer: None,
            min_value: None,
            max_value: None,
            estimate: None,
        })))
    }
    pub fn lock(&self) -> std::sync::MutexGuard<'_, ParameterContents> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
    pub fn name(&self) -> String {
        self.lock().name.clone()
    }
    pub fn ty(&self) -> Type {
        self.lock().ty
    }
    pub fn same_as(&self, other: &Parameter) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
