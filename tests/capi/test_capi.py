"""The C API through ctypes, in a fresh process that never imports the
ferrohalide Python module (tests/capi/client.py; it loads the pure-Python
helper ferrohalide/capi.py by path)."""
import os
import subprocess
import sys

CLIENT = os.path.join(os.path.dirname(__file__), "client.py")


def test_ctypes_client(tmp_path):
    p = subprocess.run([sys.executable, CLIENT, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and p.stdout.strip().endswith("ok"), p.stdout[-2000:] + p.stderr[-4000:]


C_PROGRAM = r"""
#include <stdio.h>
#include "ferrohalide_c.h"

int main(void) {
    FhType i32 = {0, 32, 1};
    FhVar *x = fh_var_new("x");
    FhExpr *ex = fh_expr_var(x);
    FhExpr *two = fh_expr_int(i32, 2);
    FhExpr *value = fh_expr_binary(FhOp_Mul, ex, two);
    FhFunc *f = fh_func_new("twice");
    const FhExpr *args[] = {ex};
    const FhExpr *values[] = {value};
    if (fh_func_define(f, args, 1, values, 1) != 0) { printf("%s\n", fh_last_error()); return 1; }
    int32_t out[5];
    halide_dimension_t d = {0, 5, 1, 0};
    halide_buffer_t b = {0};
    b.host = (uint8_t *)out; b.type.code = halide_type_int; b.type.bits = 32; b.type.lanes = 1;
    b.dimensions = 1; b.dim = &d;
    halide_buffer_t *outs[] = {&b};
    if (fh_func_realize(f, outs, 1) != 0) { printf("%s\n", fh_last_error()); return 1; }
    for (int i = 0; i < 5; i++) printf("%d ", out[i]);
    if (fh_func_realize(NULL, outs, 1) == 0) return 2;
    printf("| %s\n", fh_last_error());
    fh_expr_free(value); fh_expr_free(two); fh_expr_free(ex); fh_var_free(x); fh_func_free(f);
    return 0;
}
"""


def test_c_program_uses_the_header(tmp_path):
    import shutil
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    lib_dir = os.path.join(root, "target", "release")
    cc = shutil.which("cc") or shutil.which("gcc")
    src = tmp_path / "prog.c"
    src.write_text(C_PROGRAM)
    exe = tmp_path / "prog"
    subprocess.run([cc, "-Wall", "-Werror", str(src), "-I", os.path.join(root, "crates", "capi", "include"),
                    "-I", os.path.join(root, "python", "ferrohalide", "include"), "-L", lib_dir,
                    "-lferrohalide_c", "-o", str(exe)], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=lib_dir)
    p = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("0 2 4 6 8 | Error:"), p.stdout
