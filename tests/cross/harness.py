"""A C test program for one ahead-of-time pipeline, for cross targets.

The program is the same on every target: it reads each input buffer's
bytes from a file named on its command line, calls the pipeline through
Halide's C ABI (`halide_buffer_t`), and writes the output buffer's bytes
to the last file named. The Python side makes the inputs with NumPy and
compares the output with the host JIT's. Scalars are compiled in as
literals. Buffers are dense, innermost dimension first, min 0 (NumPy's
C order reversed).
"""
import subprocess

import numpy as np

import ferrohalide as hl

from tests.aot.conftest import include_dir, run
from tests.cross.pipelines import ctype, host_result

# NumPy dtype -> (halide_type_code_t, bits, C scalar type)
_TYPES = {
    np.dtype(np.uint8): (1, 8, "uint8_t"),
    np.dtype(np.uint16): (1, 16, "uint16_t"),
    np.dtype(np.uint32): (1, 32, "uint32_t"),
    np.dtype(np.int8): (0, 8, "int8_t"),
    np.dtype(np.int16): (0, 16, "int16_t"),
    np.dtype(np.int32): (0, 32, "int32_t"),
    np.dtype(np.float32): (2, 32, "float"),
    np.dtype(np.float64): (2, 64, "double"),
    np.dtype(np.int64): (0, 64, "int64_t"),
    np.dtype(np.uint64): (1, 64, "uint64_t"),
    np.dtype(np.bool_): (1, 1, "bool"),
}


class Buf:
    """A buffer argument: an input array, or an output's dtype and shape
    (NumPy order), and the min of each dimension (innermost first; 0s)."""

    def __init__(self, dtype, shape, mins=None):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.mins = list(mins) if mins else [0] * len(self.shape)


class Scalar:
    """A scalar argument, passed by value."""

    def __init__(self, ctype, value):
        self.ctype = ctype
        self.value = value


def _buffer_decl(name, b, host):
    code, bits, _ = _TYPES[b.dtype]
    dims = list(reversed(b.shape))
    strides, s = [], 1
    for e in dims:
        strides.append(s)
        s *= e
    dim_init = ", ".join(f"{{{m}, {e}, {st}, 0}}" for m, e, st in zip(b.mins, dims, strides)) or "{0, 1, 1, 0}"
    return (
        f"    halide_dimension_t {name}_dim[{max(len(dims), 1)}] = {{{dim_init}}};\n"
        f"    halide_buffer_t {name};\n"
        f"    memset(&{name}, 0, sizeof({name}));\n"
        f"    {name}.host = (uint8_t *){host};\n"
        f"    {name}.type.code = {code}; {name}.type.bits = {bits}; {name}.type.lanes = 1;\n"
        f"    {name}.dimensions = {len(dims)};\n"
        f"    {name}.dim = {name}_dim;\n"
    )


def _c_literal(v):
    """A C literal for a Python scalar, exactly (floats in hexadecimal)."""
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if v != v:
            return '__builtin_nan("")'
        if v in (float("inf"), float("-inf")):
            return "__builtin_inf()" if v > 0 else "-__builtin_inf()"
        return v.hex()
    return f"{int(v)}ULL" if int(v) > 2**63 - 1 else f"{int(v)}LL"


def main_c(header, fn, args, out, repeat=0, query=False):
    """The C source of the test program for `fn(args..., out)`. With
    `repeat`, it also runs the pipeline that many more times and prints the
    fastest run's milliseconds (benchmarks; not on Windows). With `query`,
    it first asks the pipeline for the output region it needs (a bounds
    query, as a C caller does), runs it on a buffer of that region, and
    writes each dimension's (min, extent) as int32s before the data (see
    `read_queried`)."""
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        "#include <time.h>",
        '#include "HalideRuntime.h"',
        f'#include "{header}"',
        "",
        "static void *read_all(const char *path, size_t n) {",
        "    void *p = malloc(n ? n : 1);",
        '    FILE *f = fopen(path, "rb");',
        "    if (!f || fread(p, 1, n, f) != n) { fprintf(stderr, \"cannot read %s\\n\", path); exit(2); }",
        "    fclose(f);",
        "    return p;",
        "}",
        "",
        "int main(int argc, char **argv) {",
    ]
    n_files = sum(isinstance(a, Buf) for a in args) + 1
    lines.append(f"    if (argc != {n_files + 1}) {{ fprintf(stderr, \"usage: inputs... output\\n\"); return 2; }}")
    call, file_i = [], 1
    for i, a in enumerate(args):
        if isinstance(a, Buf):
            size = int(np.prod(a.shape)) * a.dtype.itemsize
            lines.append(f"    void *in{i}_host = read_all(argv[{file_i}], {size});")
            lines.append(_buffer_decl(f"in{i}", a, f"in{i}_host"))
            call.append(f"&in{i}")
            file_i += 1
        else:
            lines.append(f"    {a.ctype} arg{i} = ({a.ctype})({_c_literal(a.value)});")
            call.append(f"arg{i}")
    size = int(np.prod(out.shape)) * out.dtype.itemsize
    lines.append(f"    void *out_host = calloc(1, {size});")
    lines.append(_buffer_decl("out", out, "out_host"))
    call.append("&out")
    if query:
        nd = len(out.shape)
        lines += [
            "    out.host = 0;",
            # Asked again until the answer stops growing (as realize() grows
            # its outputs): a schedule may reach further on a grown output.
            f"    for (int round = 0; round < 16; round++) {{",
            f"        int before[{max(1, 2 * nd)}];",
            f"        for (int d = 0; d < {nd}; d++) {{ before[2 * d] = out.dim[d].min; before[2 * d + 1] = out.dim[d].extent; }}",
            f"        int q = {fn}({', '.join(call)});",
            '        if (q != 0) { fprintf(stderr, "bounds query returned %d\\n", q); return 1; }',
            "        int same = 1;",
            f"        for (int d = 0; d < {nd}; d++) same &= before[2 * d] == out.dim[d].min && before[2 * d + 1] == out.dim[d].extent;",
            "        if (same) break;",
            "    }",
            "    size_t count = 1;",
            f"    for (int d = 0; d < {nd}; d++) {{ out.dim[d].stride = (int)count; count *= (size_t)out.dim[d].extent; }}",
            f"    out_host = calloc(count ? count : 1, {out.dtype.itemsize});",
            "    out.host = (uint8_t *)out_host;",
        ]
        size = f"count * {out.dtype.itemsize}"
    lines += [
        f"    int r = {fn}({', '.join(call)});",
        '    if (r != 0) { fprintf(stderr, "pipeline returned %d\\n", r); return 1; }',
    ]
    if repeat:
        lines += [
            "    double best = 1e30;",
            f"    for (int i = 0; i < {repeat}; i++) {{",
            "        struct timespec a, b;",
            "        clock_gettime(CLOCK_MONOTONIC, &a);",
            f"        {fn}({', '.join(call)});",
            "        clock_gettime(CLOCK_MONOTONIC, &b);",
            "        double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6;",
            "        if (ms < best) best = ms;",
            "    }",
            '    printf("%.3f ms\\n", best);',
        ]
    lines += [
        f'    FILE *f = fopen(argv[{file_i}], "wb");',
        "    if (!f) return 3;",
    ]
    if query:
        lines += [
            f"    for (int d = 0; d < {len(out.shape)}; d++) {{",
            "        fwrite(&out.dim[d].min, 4, 1, f); fwrite(&out.dim[d].extent, 4, 1, f);",
            "    }",
        ]
    lines += [
        f"    if (fwrite(out_host, 1, {size}, f) != {size}) return 3;",
        "    fclose(f);",
        "    return 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


def read_queried(path, dtype, shape):
    """The output a `query` program wrote, cropped to the region
    [0, shape) the caller asked for (NumPy order)."""
    raw = np.fromfile(path, dtype=np.uint8)
    nd = len(shape)
    header = raw[: 8 * nd].view(np.int32).reshape(nd, 2)  # (min, extent), innermost first
    data = raw[8 * nd:].view(dtype).reshape([int(e) for _, e in header[::-1]] or [1])
    index = tuple(slice(-int(m), -int(m) + n) for (m, _), n in zip(header[::-1], shape))
    return data[index].reshape(shape)


def run_on_target(case, tmp_path, target, cc, runner, link_flags=(), impl=None):
    """Compile `case` for `target` into a static library, link it into the
    test program with the command `cc` (a list), run that under `runner`
    (a list; empty runs it directly), and return (its output, the host
    JIT's output). With `impl` (the reference module), the pipeline is
    built and compiled by it instead, and only its output is returned."""
    mod = impl or hl
    func, params, values, shape, dtype = case(mod) if impl else case()
    name = case.__name__
    func.compile_to_static_library(str(tmp_path / name), params, name, mod.Target(target))
    lib = next(p for p in tmp_path.iterdir() if p.name in (f"{name}.a", f"{name}.lib"))
    assert (tmp_path / f"{name}.h").exists()

    args = [
        Buf(v.dtype, v.shape) if isinstance(p, mod.ImageParam) else Scalar(ctype(p), v)
        for p, v in zip(params, values)
    ]
    (tmp_path / "main.c").write_text(main_c(f"{name}.h", name, args, Buf(dtype, shape)))
    exe = tmp_path / "prog.exe"
    run([*cc, "-I", include_dir(mod), "-I", str(tmp_path), str(tmp_path / "main.c"), str(lib),
         *link_flags, "-o", str(exe)])

    files = []
    for i, (p, v) in enumerate(zip(params, values)):
        if isinstance(p, mod.ImageParam):
            path = tmp_path / f"in{i}.bin"
            np.ascontiguousarray(v).tofile(path)
            files.append(str(path))
    out_path = tmp_path / "out.bin"
    p = subprocess.run([*runner, str(exe), *files, str(out_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    got = np.fromfile(out_path, dtype=dtype).reshape(shape)
    if impl:
        return got, None
    return got, host_result(func, params, values, shape, dtype)


def compare(got, want):
    """Bit-exact for integers; floats within 4 ULP (the two machines' LLVM
    back ends may contract or order float operations differently)."""
    if want.dtype.kind == "f":
        np.testing.assert_array_max_ulp(got, want, maxulp=4)
    else:
        np.testing.assert_array_equal(got, want)
