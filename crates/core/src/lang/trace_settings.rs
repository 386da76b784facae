//! What a Func (or an ImageParam's loads) reports to the runtime's trace
//! function (Halide's `trace_loads`, `trace_stores`, `trace_realizations`,
//! `add_trace_tag`). Lowering's `lower/tracing.rs` turns them into events.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSettings {
    pub loads: bool,
    pub stores: bool,
    pub realizations: bool,
    /// Tags, in the order they were added; reported once at the start of
    /// a pipeline that traces the Func.
    pub tags: Vec<String>,
}

impl TraceSettings {
    /// A tag as Halide accepts it: text without NUL characters (the
    /// runtime receives it as a C string).
    pub fn add_tag(&mut self, tag: &str) -> crate::error::Result<()> {
        if tag.contains('\0') {
            return Err(crate::error::Error::user(
                "add_trace_tag() may not contain the null character.",
            ));
        }
        self.tags.push(tag.to_string());
        Ok(())
    }
}
