//! The C runtime (`c/*.c`, declared by `include/HalideRuntime.h`) as LLVM
//! bitcode, one module per target triple, compiled by clang-19 when this
//! crate is built (see build.rs for the table of targets). The JIT and
//! every AOT object use these same modules.

include!(concat!(env!("OUT_DIR"), "/runtime_bitcode.rs"));

/// The runtime bitcode for `triple`, if the runtime is built for it.
/// Triples match on architecture, operating system and environment; the
/// vendor is ignored (`x86_64-pc-linux-gnu` is `x86_64-unknown-linux-gnu`).
pub fn bitcode_for(triple: &str) -> Option<&'static [u8]> {
    lookup(RUNTIME_BITCODE, triple)
}

/// The Hexagon offload host runtime (`c/hexagon_host.c`) for `triple`, if
/// built for it: arm-64 and arm-32 Linux and Android, where Halide links it.
/// A separate module, linked (with the main runtime of the same triple,
/// whose functions it calls) only into objects for `hvx` targets, since it
/// references dlopen. Triples match as in `bitcode_for`.
pub fn hexagon_host_bitcode_for(triple: &str) -> Option<&'static [u8]> {
    lookup(HEXAGON_HOST_BITCODE, triple)
}

/// The module of `table` built for `triple` (matched by `triple_key`).
fn lookup(table: &'static [(&'static str, &'static [u8])], triple: &str) -> Option<&'static [u8]> {
    let key = triple_key(triple);
    table.iter().find(|(t, _)| triple_key(t) == key).map(|(_, b)| *b)
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

    #[test]
    fn hexagon_host_runtime_only_for_arm_linux_and_android() {
        for triple in [
            "aarch64-unknown-linux-gnu",
            "aarch64-pc-linux-gnu",
            "aarch64-unknown-linux-android",
            "armv7-none-linux-gnueabihf",
            "armv7-unknown-linux-androideabi",
        ] {
            let b = hexagon_host_bitcode_for(triple).expect(triple);
            assert_eq!(&b[..4], b"BC\xc0\xde");
            // It comes with a main runtime module to link with.
            assert!(bitcode_for(triple).is_some(), "{triple}");
        }
        for triple in [
            "x86_64-unknown-linux-gnu",
            "arm64-apple-ios13.0.0",
            "x86_64-pc-windows-msvc",
            "hexagon-unknown-none-elf",
        ] {
            assert!(hexagon_host_bitcode_for(triple).is_none(), "{triple}");
        }
    }
}
