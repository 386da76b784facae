//! Compilation targets (Halide target strings). Filled in by the target issue;
//! for now only the host is known.
