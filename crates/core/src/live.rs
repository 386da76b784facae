//! Counts of live objects that users create or that are made for them
//! (Funcs, Buffers, RDoms, Parameters, compiled pipelines), so leak tests
//! can check that dropping a pipeline frees everything it held.

use std::sync::atomic::{AtomicUsize, Ordering};

pub struct LiveCount {
    name: &'static str,
    n: AtomicUsize,
}

impl LiveCount {
    const fn new(name: &'static str) -> LiveCount {
        LiveCount {
            name,
            n: AtomicUsize::new(0),
        }
    }
    pub fn created(&self) {
        self.n.fetch_add(1, Ordering::Relaxed);
    }
    pub fn dropped(&self) {
        self.n.fetch_sub(1, Ordering::Relaxed);
    }
    pub fn get(&self) -> usize {
        self.n.load(Ordering::Relaxed)
    }
}

pub static FUNCTIONS: LiveCount = LiveCount::new("functions");
pub static BUFFERS: LiveCount = LiveCount::new("buffers");
pub static REDUCTION_DOMAINS: LiveCount = LiveCount::new("reduction_domains");
pub static PARAMETERS: LiveCount = LiveCount::new("parameters");
/// Compiled (JIT) pipelines; counted by the backend.
pub static COMPILED_PIPELINES: LiveCount = LiveCount::new("compiled_pipelines");

/// Every count, by name.
pub fn counts() -> Vec<(&'static str, usize)> {
    [
        &FUNCTIONS,
        &BUFFERS,
        &REDUCTION_DOMAINS,
        &PARAMETERS,
        &COMPILED_PIPELINES,
    ]
    .iter()
    .map(|c| (c.name, c.get()))
    .collect()
}
