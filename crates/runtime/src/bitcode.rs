//! The C runtime (`c/*.c`, declared by `include/HalideRuntime.h`) as LLVM
//! bitcode, one module per target triple, compiled by clang-19 when this
//! crate is built (see build.rs for the table of targets). The JIT and
//! every AOT object use these same modules.

include!(concat!(env!("OUT_DIR"), "/runtime_bitcode.rs"));

/// The runtime bitcode for `triple`, if the runtime is built for it.
/// Triples match on architecture, operating system and environment; the
/// vendor is ignored (`x86_64-pc-linux-gnu` is `x86_64-unknown-linux-gnu`).
pub fn bitcode_for(triple: &str) -> Option<&'static [u8]> {
    let key = triple_key(triple);
    RUNTIME_BITCODE
        .iter()
        .find(|(t, _)| triple_key(t) == key)
        .map(|(_, b)| *b)
}

/// The triples the runtime is built for.
pub fn triples() -> impl Iterator<Item = &'static str> {
    RUNTIME_BITCODE.iter().map(|(t, _)| *t)
}

/// (arch, os, environment) of a triple.
fn triple_key(triple: &str) -> (&str, &str, &str) {
    let mut parts = triple.split('-');
    let arch = parts.next().unwrap_or("");
    let _vendor = parts.next();
    let os = parts.next().unwrap_or("");
    let env = parts.next().unwrap_or("");
    (arch, os, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_runtime_is_bitcode_and_vendor_does_not_matter() {
        let b = bitcode_for("x86_64-pc-linux-gnu").expect("host runtime");
        assert_eq!(&b[..4], b"BC\xc0\xde");
        assert!(bitcode_for("x86_64-unknown-linux-gnu").is_some());
        assert!(bitcode_for("riscv64-unknown-linux-gnu").is_none());
    }
}
