"""What a user does first with the installed wheel, run by
scripts/wheel_smoke.sh in a fresh venv holding only the wheel and its
dependencies, from a directory outside the source tree:

1. the README's example (JIT, then a PNG written);
2. ahead of time: a generator file -> object, header and static library
   -> a C program linked with the system C compiler, run and checked;
3. the one-command Python extension build, imported and run;
4. the C API library and its header, loaded with ctypes;
5. the runtime headers under hl.install_dir().

Steps 1, 4 and 5 run with no compiler on PATH; 2 and 3 use the system C
compiler, as Halide's wheel does. Exits non-zero on the first failure.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import ferrohalide as hl

HERE = os.path.dirname(os.path.abspath(__file__))


def check(cond, what):
    if not cond:
        raise SystemExit(f"wheel smoke test failed: {what}")
    print(f"ok: {what}")


def readme_example(tmp):
    edge = 512
    k = 20.0 / float(edge)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("f")
    e = hl.sin(x * ((c + 1) / 3.0) * k) * hl.cos(y * ((c + 1) / 3.0) * k)
    f[x, y, c] = hl.cast(hl.UInt(8), e * 255.0)
    f.vectorize(x, 8).parallel(y)
    buf = f.realize([edge, edge, 3])
    from ferrohalide import imageio

    path = os.path.join(tmp, "example.png")
    imageio.imwrite(path, buf)
    a = np.asarray(buf)
    yy, xx = 100, 200
    want = int(np.float32(np.sin(np.float32(xx * (2 / 3.0) * k)) * np.cos(np.float32(yy * (2 / 3.0) * k))) * 255.0)
    check(os.path.getsize(path) > 0 and abs(int(a[1, yy, xx]) - want) <= 1, "README example (JIT) and its PNG")


GENERATOR = '''
import ferrohalide as hl

@hl.generator(name="brighten")
class Brighten:
    gain = hl.GeneratorParam(2.0)
    input = hl.InputBuffer(hl.UInt(8), 2)
    output = hl.OutputBuffer(hl.UInt(8), 2)

    def generate(g):
        x, y = hl.Var("x"), hl.Var("y")
        g.output[x, y] = hl.u8(hl.min(g.input[x, y] * g.gain, 255))
        g.output.vectorize(x, 16)

if __name__ == "__main__":
    hl.main()
'''

C_PROGRAM = r'''
#include <stdio.h>
#include "HalideRuntime.h"
#include "brighten.h"
int main(void) {
    uint8_t in[4][32], out[4][32];
    for (int y = 0; y < 4; y++) for (int x = 0; x < 32; x++) in[y][x] = (uint8_t)(x * 7 + y);
    struct halide_dimension_t dims[2] = {{0, 32, 1, 0}, {0, 4, 32, 0}};
    struct halide_buffer_t bin = {0}, bout = {0};
    bin.host = (uint8_t *)in; bin.type.code = halide_type_uint; bin.type.bits = 8; bin.type.lanes = 1;
    bin.dimensions = 2; bin.dim = dims;
    bout = bin; bout.host = (uint8_t *)out;
    struct halide_dimension_t odims[2] = {{0, 32, 1, 0}, {0, 4, 32, 0}};
    bout.dim = odims;
    if (brighten(&bin, &bout) != 0) return 1;
    for (int y = 0; y < 4; y++) for (int x = 0; x < 32; x++) {
        int want = in[y][x] * 3 > 255 ? 255 : in[y][x] * 3;
        if (out[y][x] != want) { printf("mismatch at %d %d\n", x, y); return 2; }
    }
    printf("brighten ok\n");
    return 0;
}
'''


def ahead_of_time(tmp):
    gen = os.path.join(tmp, "brighten_gen.py")
    with open(gen, "w") as f:
        f.write(GENERATOR)
    out = os.path.join(tmp, "aot")
    os.makedirs(out)
    subprocess.run([sys.executable, gen, "-g", "brighten", "-o", out, "-e", "object,c_header,static_library",
                    "target=host", "gain=3.0"], check=True)
    prog = os.path.join(tmp, "main.c")
    with open(prog, "w") as f:
        f.write(C_PROGRAM)
    exe = os.path.join(tmp, "brighten_main")
    include = os.path.join(hl.install_dir(), "include")
    subprocess.run(["cc", "-I", include, "-I", out, prog, os.path.join(out, "brighten.a"), "-o", exe,
                    "-lpthread", "-ldl", "-lm"], check=True)
    r = subprocess.run([exe], capture_output=True, text=True)
    check(r.returncode == 0 and "brighten ok" in r.stdout, "generator -> object -> C program")
    return gen


def extension(tmp, gen):
    out = os.path.join(tmp, "ext")
    subprocess.run([sys.executable, "-m", "ferrohalide", "build", gen, "-o", out, "gain=3.0"], check=True)
    sys.path.insert(0, out)
    import brighten

    a = (np.arange(64 * 8, dtype=np.uint8) % 200).reshape(8, 64)
    b = np.zeros_like(a)
    brighten.brighten(a, b)
    check(np.array_equal(b, np.minimum(a.astype(np.int32) * 3, 255).astype(np.uint8)),
          "one-command Python extension build")


def c_api():
    from ferrohalide import capi

    lib = capi.load()
    x = lib.fh_var_new(b"x")
    ok = bool(x) and lib.fh_var_free(x) == 0
    check(ok and os.path.exists(capi.header_path()) and capi.library_path().startswith(hl.install_dir()),
          "C API library and header in the wheel")


def runtime_headers():
    include = os.path.join(hl.install_dir(), "include")
    check(os.path.exists(os.path.join(include, "HalideRuntime.h")), "runtime headers under install_dir()")


def main():
    check(not os.path.abspath(hl.__file__).startswith(os.path.dirname(os.path.dirname(HERE)) + os.sep + "python"),
          f"ferrohalide imported from the installed wheel ({hl.__file__})")
    with tempfile.TemporaryDirectory() as tmp:
        readme_example(tmp)
        c_api()
        runtime_headers()
        if "--no-compiler" in sys.argv:
            return
        gen = ahead_of_time(tmp)
        extension(tmp, gen)


if __name__ == "__main__":
    main()
