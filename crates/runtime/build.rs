//! Compiles the C runtime (c/*.c) to one LLVM bitcode file per target
//! triple with clang-19, linked with llvm-link-19, and generates the table
//! `RUNTIME_BITCODE` (triple, bytes) that `src/bitcode.rs` includes.
//!
//! A target is a row of `TARGETS`: its triple and the operating-system
//! files it adds to the common ones (and, for a new OS, its files).
//!
//! The Hexagon offload host runtime (c/hexagon_host.c) is a second module
//! per triple of `HEXAGON_HOST_TARGETS` (table `HEXAGON_HOST_BITCODE`),
//! linked only into objects for `hvx` targets: it calls dlopen, which
//! other objects must not reference.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Files every target compiles.
const COMMON: &[&str] = &[
    "error.c",
    "print.c",
    "strings.c",
    "memory.c",
    "mutex.c",
    "thread_pool.c",
    "float16.c",
    "tracing.c",
    "error_messages.c",
    "buffer.c",
    "memoize.c",
    "cpu_features.c",
    "debug_to_file.c",
];

/// (triple, the target's own files, its extra clang flags). AArch64 Linux
/// and Android atomics are inline (`-mno-outline-atomics`), so objects need
/// no helper functions from libgcc or compiler-rt.
const TARGETS: &[(&str, &[&str], &[&str])] = &[
    ("x86_64-unknown-linux-gnu", POSIX, &["-fPIC"]),
    ("aarch64-unknown-linux-gnu", POSIX, &["-fPIC", "-mno-outline-atomics"]),
    ("aarch64-unknown-linux-android", POSIX, &["-fPIC", "-mno-outline-atomics"]),
    ("arm64-apple-macosx11.0.0", POSIX, &[]),
    ("x86_64-apple-macosx10.12.0", POSIX, &[]),
    ("arm64-apple-ios13.0.0", POSIX, &[]),
    ("x86_64-pc-windows-msvc", &["windows.c"], &[]),
    ("armv7-unknown-linux-gnueabihf", POSIX, &["-fPIC"]),
    ("armv7-unknown-linux-androideabi", POSIX, &["-fPIC"]),
    ("armv7-apple-ios10.0.0", POSIX, &[]),
    ("armv7s-apple-ios10.0.0", POSIX, &[]),
    // Bare-metal Hexagon: v60 code (it runs on every HVX version), no
    // small-data section (a harness's linker script need not define one).
    ("hexagon-unknown-none-elf", &["noos.c"], &["-DFERROHALIDE_NOOS", "-mv60", "-G0"]),
];

const POSIX: &[&str] = &["posix_threads.c", "posix_io.c", "posix_system.c"];

/// The triples of `TARGETS` where Halide links the Hexagon host runtime
/// (arm-64 and arm-32 Linux and Android), compiled with their flags there.
const HEXAGON_HOST_TARGETS: &[&str] = &[
    "aarch64-unknown-linux-gnu",
    "aarch64-unknown-linux-android",
    "armv7-unknown-linux-gnueabihf",
    "armv7-unknown-linux-androideabi",
];

/// clang flags: optimized, freestanding (only the compiler's own headers:
/// there are no system headers for other targets here). ELF targets add
/// `-fPIC` so the runtime links into shared libraries (Mach-O and COFF code
/// needs no flag for that).
const CFLAGS: &[&str] = &[
    "-O3",
    "-ffreestanding",
    "-fno-stack-protector",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-emit-llvm",
    "-c",
];

/// An LLVM 19 tool: from LLVM_SYS_191_PREFIX/bin (as installed by
/// llvm-19), else `<name>-19` on the PATH.
fn llvm_tool(name: &str) -> PathBuf {
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
    if let Ok(prefix) = std::env::var("LLVM_SYS_191_PREFIX") {
        let p = Path::new(&prefix).join("bin").join(name);
        if p.exists() {
            return p;
        }
    }
    PathBuf::from(format!("{name}-19"))
}

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| {
        panic!(
            "cannot run {:?} ({e}) to build the runtime: {what} is needed \
             (Debian: apt-get install clang-19 llvm-19; scripts/setup.sh does it)",
            cmd.get_program()
        )
    });
    if !status.success() {
        panic!("{what} failed: {cmd:?}");
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let src = manifest.join("c");
    let include = manifest.join("include");
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-changed={}", include.display());
    let clang = llvm_tool("clang");
    let link = llvm_tool("llvm-link");
    // Compile c/<file> for one target to <dir>/<file>.bc.
    let compile = |triple: &str, flags: &[&str], file: &str, dir: &Path| -> PathBuf {
        let bc = dir.join(file).with_extension("bc");
        run(
            Command::new(&clang)
                .args(["-target", triple])
                .args(CFLAGS)
                .args(flags)
                .arg("-I")
                .arg(&include)
                .arg(src.join(file))
                .arg("-o")
                .arg(&bc),
            "clang-19",
        );
        bc
    };
    let mut table = String::from("pub static RUNTIME_BITCODE: &[(&str, &[u8])] = &[\n");
    for (triple, own, flags) in TARGETS {
        let dir = out.join(triple);
        std::fs::create_dir_all(&dir).unwrap();
        let parts: Vec<PathBuf> = COMMON
            .iter()
            .chain(own.iter())
            .map(|file| compile(triple, flags, file, &dir))
            .collect();
        let linked = out.join(format!("{triple}.bc"));
        run(
            Command::new(&link).args(&parts).arg("-o").arg(&linked),
            "llvm-link-19",
        );
        table.push_str(&format!(
            "    ({triple:?}, include_bytes!({:?})),\n",
            linked.display().to_string()
        ));
    }
    table.push_str("];\n");
    table.push_str("pub static HEXAGON_HOST_BITCODE: &[(&str, &[u8])] = &[\n");
    for triple in HEXAGON_HOST_TARGETS {
        let (_, _, flags) = TARGETS
            .iter()
            .find(|(t, _, _)| t == triple)
            .expect("a Hexagon host triple is a row of TARGETS");
        let bc = compile(triple, flags, "hexagon_host.c", &out.join(triple));
        table.push_str(&format!(
            "    ({triple:?}, include_bytes!({:?})),\n",
            bc.display().to_string()
        ));
    }
    table.push_str("];\n");
    std::fs::write(out.join("runtime_bitcode.rs"), table).unwrap();
}
