// The build identity the persistent JIT cache keys entries by: a hash of
// every source file that decides what machine code a lowered pipeline
// becomes (this crate, the core crate's IR and target code, the runtime
// whose symbols the code binds). Any edit gives a new identity, so a
// rebuilt ferrohalide never loads code an older build compiled.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let roots = [
        here.join("src"),
        here.join("Cargo.toml"),
        here.join("../core/src"),
        here.join("../runtime/src"),
        here.join("../runtime/c"),
        here.join("../../Cargo.lock"),
    ];
    let mut files = Vec::new();
    for r in &roots {
        println!("cargo:rerun-if-changed={}", r.display());
        if r.is_dir() {
            files_under(r, &mut files);
        } else {
            files.push(r.clone());
        }
    }
    files.sort();
    // Two independent 64-bit hashes: an accidental collision between two
    // builds sharing one cache directory is out of reach.
    let mut a = DefaultHasher::new();
    let mut b = DefaultHasher::new();
    b.write(b"second");
    for f in &files {
        let rel = f.strip_prefix(&here).unwrap_or(f).to_string_lossy().into_owned();
        let bytes = std::fs::read(f).unwrap_or_default();
        for h in [&mut a, &mut b] {
            h.write(rel.as_bytes());
            h.write_u64(bytes.len() as u64);
            h.write(&bytes);
        }
    }
    println!(
        "cargo:rustc-env=FERROHALIDE_BUILD_ID={}-{:016x}{:016x}",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default(),
        a.finish(),
        b.finish()
    );
}
