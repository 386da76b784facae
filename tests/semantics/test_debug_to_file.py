"""Func.debug_to_file: the files written (NumPy .npy, TIFF, MATLAB .mat and
Halide's .tmp format) are byte-identical to the reference's, for internal
Funcs and outputs of several types and dimensionalities (except the TIFF
header bytes Halide leaves uninitialized), and the errors match."""
import os

import pytest

from .harness import differential
from .input_helpers import arr, error_key


def _files(d):
    import numpy as np
    out = {}
    for n in sorted(os.listdir(d)):
        data = np.fromfile(os.path.join(d, n), dtype=np.uint8)
        if n.endswith((".tif", ".tiff")):
            # Halide writes a short tag's value as 2 bytes of a 4-byte field
            # and leaves the other 2 uninitialized.
            for i in range(15):
                entry = 10 + 12 * i
                if data[entry + 2] == 3:
                    data[entry + 10:entry + 12] = 0
        out[n] = data
    return out


@differential()
@pytest.mark.parametrize("ext", ["npy", "tmp", "mat", "tiff", "tif"])
def test_dumped_files(hl, tmp_path, ext):
    d = str(tmp_path / hl.__name__)
    os.makedirs(d)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("f")
    f[x, y] = hl.u16(x * 3 + y * 100)
    g = hl.Func("g")
    g[x, y] = hl.f32(f[x, y]) * 0.5 + f[x + 1, y]
    b = hl.Func("b")
    b[x] = x > 3
    v = hl.Func("v")
    v[x, y, c] = hl.i8(x - y * c)
    d64 = hl.Func("d64")
    d64[x] = hl.f64(x) / 3
    out = hl.Func("out")
    out[x, y] = g[x, y] + hl.select(b[x], 1, 0) + v[x, y, 1] + hl.f32(d64[x])
    for fn in (f, g, b, v, d64):
        fn.compute_root().debug_to_file(os.path.join(d, f"{fn.name().split('$')[0]}.{ext}"))
    v.reorder_storage(y, x, c)
    out.debug_to_file(os.path.join(d, f"out.{ext}"))
    result = arr(out.realize([7, 3]))
    return result, _files(d)


@differential()
def test_dump_of_a_func_computed_per_row(hl, tmp_path):
    d = str(tmp_path / hl.__name__)
    os.makedirs(d)
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y * 10
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x, y + 1]
    f.compute_at(g, y).debug_to_file(os.path.join(d, "f.tmp"))
    # Each row's realization overwrites the file: the last one stays.
    return arr(g.realize([5, 4])), _files(d)


@differential()
def test_debug_to_file_errors(hl, tmp_path):
    x = hl.Var("x")
    t = hl.Func("t")
    t[x] = hl.Tuple([x, x])
    g = hl.Func("g")
    g[x] = t[x][0]
    t.compute_root().debug_to_file(str(tmp_path / "t.tmp"))
    out = [error_key(hl, lambda: g.realize([3]), "doesn't handle functions with multiple values")]
    f = hl.Func("f")
    f[x] = x
    h = hl.Func("h")
    h[x] = f[x] * 2
    f.compute_root().debug_to_file(str(tmp_path / "missing_dir" / "f.tmp"))
    out.append(error_key(hl, lambda: h.realize([3]), "Failed to dump function", "with error -13"))
    return out

