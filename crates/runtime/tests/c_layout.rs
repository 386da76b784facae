//! The Rust mirrors of Halide's ABI structs have the layout the C header
//! (`include/HalideRuntime.h`) gives them: a C program compiled with the
//! system C compiler prints sizeof/offsetof of each field, compared here
//! with Rust's.

use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use ferrohalide_runtime::metadata::{halide_filter_argument_t, halide_filter_metadata_t};
use ferrohalide_runtime::{halide_buffer_t, halide_dimension_t, halide_type_t};

/// (C expression, Rust value) for every size and offset checked.
fn rust_layout() -> Vec<(&'static str, usize)> {
    vec![
        ("sizeof(struct halide_type_t)", size_of::<halide_type_t>()),
        ("offsetof(struct halide_type_t, code)", offset_of!(halide_type_t, code)),
        ("offsetof(struct halide_type_t, bits)", offset_of!(halide_type_t, bits)),
        ("offsetof(struct halide_type_t, lanes)", offset_of!(halide_type_t, lanes)),
        ("sizeof(halide_dimension_t)", size_of::<halide_dimension_t>()),
        ("offsetof(halide_dimension_t, min)", offset_of!(halide_dimension_t, min)),
        ("offsetof(halide_dimension_t, extent)", offset_of!(halide_dimension_t, extent)),
        ("offsetof(halide_dimension_t, stride)", offset_of!(halide_dimension_t, stride)),
        ("offsetof(halide_dimension_t, flags)", offset_of!(halide_dimension_t, flags)),
        ("sizeof(halide_buffer_t)", size_of::<halide_buffer_t>()),
        ("offsetof(halide_buffer_t, device)", offset_of!(halide_buffer_t, device)),
        ("offsetof(halide_buffer_t, device_interface)", offset_of!(halide_buffer_t, device_interface)),
        ("offsetof(halide_buffer_t, host)", offset_of!(halide_buffer_t, host)),
        ("offsetof(halide_buffer_t, flags)", offset_of!(halide_buffer_t, flags)),
        ("offsetof(halide_buffer_t, type)", offset_of!(halide_buffer_t, type_)),
        ("offsetof(halide_buffer_t, dimensions)", offset_of!(halide_buffer_t, dimensions)),
        ("offsetof(halide_buffer_t, dim)", offset_of!(halide_buffer_t, dim)),
        ("offsetof(halide_buffer_t, padding)", offset_of!(halide_buffer_t, padding)),
        ("sizeof(struct halide_filter_argument_t)", size_of::<halide_filter_argument_t>()),
        ("offsetof(struct halide_filter_argument_t, name)", offset_of!(halide_filter_argument_t, name)),
        ("offsetof(struct halide_filter_argument_t, kind)", offset_of!(halide_filter_argument_t, kind)),
        ("offsetof(struct halide_filter_argument_t, dimensions)", offset_of!(halide_filter_argument_t, dimensions)),
        ("offsetof(struct halide_filter_argument_t, type)", offset_of!(halide_filter_argument_t, type_)),
        ("offsetof(struct halide_filter_argument_t, scalar_def)", offset_of!(halide_filter_argument_t, scalar_def)),
        ("offsetof(struct halide_filter_argument_t, scalar_min)", offset_of!(halide_filter_argument_t, scalar_min)),
        ("offsetof(struct halide_filter_argument_t, scalar_max)", offset_of!(halide_filter_argument_t, scalar_max)),
        ("offsetof(struct halide_filter_argument_t, scalar_estimate)", offset_of!(halide_filter_argument_t, scalar_estimate)),
        ("offsetof(struct halide_filter_argument_t, buffer_estimates)", offset_of!(halide_filter_argument_t, buffer_estimates)),
        ("sizeof(struct halide_filter_metadata_t)", size_of::<halide_filter_metadata_t>()),
        ("offsetof(struct halide_filter_metadata_t, version)", offset_of!(halide_filter_metadata_t, version)),
        ("offsetof(struct halide_filter_metadata_t, num_arguments)", offset_of!(halide_filter_metadata_t, num_arguments)),
        ("offsetof(struct halide_filter_metadata_t, arguments)", offset_of!(halide_filter_metadata_t, arguments)),
        ("offsetof(struct halide_filter_metadata_t, target)", offset_of!(halide_filter_metadata_t, target)),
        ("offsetof(struct halide_filter_metadata_t, name)", offset_of!(halide_filter_metadata_t, name)),
        ("sizeof(struct halide_scalar_value_t)", size_of::<ferrohalide_runtime::metadata::halide_scalar_value_t>()),
    ]
}

/// The system C compiler (`$CC`, else `cc`).
fn c_compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

#[test]
fn c_header_and_rust_agree_on_struct_layouts() {
    let layout = rust_layout();
    let mut prog = String::from("#include <stddef.h>\n#include <stdio.h>\n#include \"HalideRuntime.h\"\nint main(void) {\n");
    for (expr, _) in &layout {
        prog.push_str(&format!("    printf(\"%s=%zu\\n\", {expr:?}, (size_t)({expr}));\n"));
    }
    prog.push_str("    return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!("ferrohalide_c_layout_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, prog).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let status = Command::new(c_compiler())
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (cc)");
    assert!(status.success(), "compiling {} failed", src.display());
    let out = Command::new(&exe).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let c: HashMap<&str, usize> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k, v.parse().unwrap()))
        .collect();
    for (expr, rust) in &layout {
        assert_eq!(c.get(expr), Some(rust), "{expr}: C says {:?}, Rust {rust}", c.get(expr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
