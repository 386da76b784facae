//! The checked-in header is what cbindgen makes of the current source:
//! a stale header fails this test. `FH_BLESS_HEADER=1 cargo test -p
//! ferrohalide-capi --test header` rewrites it.

use std::path::PathBuf;

#[test]
fn header_matches_the_source() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen runs on the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8");
    let path = dir.join("include").join("ferrohalide_c.h");
    if std::env::var_os("FH_BLESS_HEADER").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is stale: regenerate it with FH_BLESS_HEADER=1 cargo test -p ferrohalide-capi --test header",
        path.display()
    );
}
