//! Ahead-of-time output end to end: a pipeline compiled to an object and a
//! C header, linked into a C program with the system C compiler, run; its
//! bounds query, its argument checks (Halide's error codes, the message
//! kept by the runtime) and a no_runtime object linked with a standalone
//! runtime.

use std::path::{Path, PathBuf};
use std::process::Command;

use ferrohalide_core::ir::{Expr, Type};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::image_param::ImageParam;
use ferrohalide_core::lang::parameter::Parameter;
use ferrohalide_core::target::Target;
use ferrohalide_driver::aot::{compile_standalone_runtime, compile_to_files, OutputFileType};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ferrohalide_aot_{name}_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/include")
}

/// `brighten(input: u8 2-D, offset: i32) -> u8 2-D`: input + offset, clamped.
fn brighten(dir: &Path, name: &str, target: &str) {
    let input = ImageParam::new(Type::uint(8), 2, Some("input"));
    let offset = Parameter::new(Type::i32(), false, 0, "offset");
    let f = Func::new(Some("brightened"));
    let (x, y) = (Expr::var_i32("x"), Expr::var_i32("y"));
    let v = Expr::add(
        Expr::cast(Type::i32(), input.call(vec![x.clone(), y.clone()]).unwrap()),
        offset.expr(),
    );
    let v = Expr::cast(Type::uint(8), Expr::min(Expr::max(v, Expr::i32(0)), Expr::i32(255)));
    f.define(vec![x, y], vec![v]).unwrap();
    let base = dir.join(name).to_string_lossy().into_owned();
    let files = ferrohalide_driver::aot::output_files(
        &base,
        &[OutputFileType::Object, OutputFileType::CHeader, OutputFileType::StaticLibrary],
        &Target::host(),
    );
    compile_to_files(
        &[f.function.clone()],
        &[],
        &[input.param().clone(), offset],
        name,
        &Target::parse(target).unwrap(),
        &files,
    )
    .unwrap();
}

const PROGRAM: &str = r#"
#include <stdio.h>
#include <string.h>
#include "HalideRuntime.h"
#include "NAME.h"

static int check(int got, int want, const char *what) {
    if (got != want) { printf("FAIL %s: %d != %d\n", what, got, want); return 1; }
    return 0;
}

int main(void) {
    int bad = 0;
    uint8_t in[3][4], out[3][4];
    for (int y = 0; y < 3; y++) for (int x = 0; x < 4; x++) in[y][x] = (uint8_t)(x * 60 + y);
    halide_dimension_t din[2] = {{0, 4, 1, 0}, {0, 3, 4, 0}};
    halide_dimension_t dout[2] = {{0, 4, 1, 0}, {0, 3, 4, 0}};
    halide_buffer_t bin = {0}, bout = {0};
    bin.host = &in[0][0]; bin.type.code = halide_type_uint; bin.type.bits = 8; bin.type.lanes = 1;
    bin.dimensions = 2; bin.dim = din;
    bout = bin; bout.host = &out[0][0]; bout.dim = dout;
    bad |= check(NAME(&bin, 20, &bout), 0, "call");
    for (int y = 0; y < 3; y++) for (int x = 0; x < 4; x++) {
        int want = in[y][x] + 20 > 255 ? 255 : in[y][x] + 20;
        bad |= check(out[y][x], want, "value");
    }
    /* argv form */
    int offset = -10;
    void *args[3] = {&bin, &offset, &bout};
    bad |= check(NAME_argv(args), 0, "argv");
    bad |= check(out[1][1], in[1][1] - 10 < 0 ? 0 : in[1][1] - 10, "argv value");
    /* bounds query: the input's required region */
    halide_dimension_t dq[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    halide_buffer_t q = bin; q.host = NULL; q.dim = dq;
    bad |= check(NAME(&q, 0, &bout), 0, "query");
    bad |= check(dq[0].extent, 4, "query extent 0");
    bad |= check(dq[1].extent, 3, "query extent 1");
    bad |= check(dq[1].stride, 4, "query stride 1");
    /* errors: a wrong type, a buffer too small, a null buffer */
    halide_buffer_t wrong = bin; wrong.type.bits = 16;
    int r = NAME(&wrong, 0, &bout);
    bad |= check(r, halide_error_code_bad_type, "bad type");
    char msg[512];
    ferrohalide_last_error_message(msg, sizeof msg);
    if (!strstr(msg, "Input buffer input has type uint8 but type of the buffer passed in is uint16")) {
        printf("FAIL message: %s\n", msg); bad = 1;
    }
    halide_dimension_t dsmall[2] = {{0, 2, 1, 0}, {0, 3, 4, 0}};
    halide_buffer_t small = bin; small.dim = dsmall;
    bad |= check(NAME(&small, 0, &bout), halide_error_code_access_out_of_bounds, "too small");
    bad |= check(NAME(NULL, 0, &bout), halide_error_code_buffer_argument_is_null, "null");
    const struct halide_filter_metadata_t *md = NAME_metadata();
    bad |= check(md->num_arguments, 3, "metadata arguments");
    bad |= check(strcmp(md->arguments[1].name, "offset"), 0, "metadata name");
    bad |= check(md->arguments[2].kind, halide_argument_kind_output_buffer, "metadata kind");
    printf(bad ? "FAILED\n" : "OK\n");
    return bad;
}
"#;

fn build_and_run(dir: &Path, name: &str, objects: &[PathBuf]) -> String {
    let src = dir.join("main.c");
    std::fs::write(&src, PROGRAM.replace("NAME", name)).unwrap();
    let exe = dir.join("main");
    let out = Command::new("cc")
        .arg("-std=c11")
        .arg("-I")
        .arg(include_dir())
        .arg("-I")
        .arg(dir)
        .arg(&src)
        .args(objects)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("a C compiler (cc)");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).output().unwrap();
    String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr)
}

#[test]
fn object_with_runtime_links_into_a_c_program() {
    let dir = scratch("with_runtime");
    brighten(&dir, "brighten", "host");
    let text = build_and_run(&dir, "brighten", &[dir.join("brighten.o")]);
    assert!(text.contains("OK"), "{text}");
}

#[test]
fn static_library_links_into_a_c_program() {
    let dir = scratch("static_library");
    brighten(&dir, "brighten_lib", "host");
    let text = build_and_run(&dir, "brighten_lib", &[dir.join("brighten_lib.a")]);
    assert!(text.contains("OK"), "{text}");
}

#[test]
fn no_runtime_object_links_with_a_standalone_runtime() {
    let dir = scratch("no_runtime");
    brighten(&dir, "brighten_nrt", "host-no_runtime");
    let rt = dir.join("runtime.o");
    compile_standalone_runtime(&[(OutputFileType::Object, rt.clone())], &Target::parse("host").unwrap())
        .unwrap();
    let text = build_and_run(&dir, "brighten_nrt", &[dir.join("brighten_nrt.o"), rt]);
    assert!(text.contains("OK"), "{text}");
}
