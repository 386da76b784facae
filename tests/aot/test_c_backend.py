"""compile_to_c: the C++ source of a pipeline, compiled by the system C++
compiler and linked with ferrohalide's standalone runtime, computes what
the JIT computes (bit for bit for integers; floats within the difference
between the C library's math functions and the compiled code's)."""
import ctypes
import os
import shutil

import numpy as np
import pytest

import ferrohalide as hl

from .conftest import run
from .test_ctypes import describe, halide_buffer_t

CODES = {"i": 0, "u": 1, "f": 2, "b": 1}


def cxx():
    for n in (os.environ.get("CXX", ""), "c++", "g++", "clang++", "clang++-19"):
        if n and shutil.which(n):
            return shutil.which(n)
    pytest.skip("no C++ compiler")


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    d = tmp_path_factory.mktemp("c_runtime")
    path = d / "runtime.o"
    hl.compile_standalone_runtime(str(path), hl.get_host_target())
    return path


def build(tmp_path, runtime, out, inputs, name):
    """Compile `out` to C++, build a shared library of it and return the
    library (its `name_argv`)."""
    src = tmp_path / f"{name}.cpp"
    out.compile_to_c(str(src), inputs, name)
    lib = tmp_path / f"lib{name}.so"
    run([cxx(), "-std=c++17", "-O1", "-fPIC", "-shared", "-Wno-unused", str(src), str(runtime),
         "-o", str(lib), "-lpthread", "-ldl", "-lm"])
    return ctypes.CDLL(str(lib))


def call(lib, name, args):
    """Call `name_argv` with NumPy arrays (buffers) and ctypes scalars."""
    keep, ptrs = [], []
    for a in args:
        if isinstance(a, np.ndarray):
            b, dims = describe(a, CODES[a.dtype.kind])
            keep += [b, dims]
            ptrs.append(ctypes.cast(ctypes.pointer(b), ctypes.c_void_p))
        else:
            keep.append(a)
            ptrs.append(ctypes.cast(ctypes.pointer(a), ctypes.c_void_p))
    argv = (ctypes.c_void_p * len(ptrs))(*ptrs)
    f = getattr(lib, f"{name}_argv")
    f.restype = ctypes.c_int
    return f(argv)


def blur(vectorize, parallel):
    inp = hl.ImageParam(hl.UInt(16), 2, "inp")
    x, y, xi, yi = hl.Var("x"), hl.Var("y"), hl.Var("xi"), hl.Var("yi")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    bx = hl.Func("bx")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) // 3
    out = hl.Func("out")
    out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) // 3
    if vectorize:
        out.tile(x, y, xi, yi, 16, 8).vectorize(xi, 8)
        bx.compute_at(out, x).vectorize(x, 8)
    if parallel:
        out.parallel(y)
    return out, [inp]


@pytest.mark.parametrize("vectorize,parallel", [(False, False), (True, False), (True, True)])
def test_blur_schedules(tmp_path, runtime, vectorize, parallel):
    out, args = blur(vectorize, parallel)
    lib = build(tmp_path, runtime, out, args, "blur")
    rng = np.random.default_rng(1)
    data = rng.integers(0, 60000, size=(37, 45), dtype=np.uint16)
    args[0].set(hl.Buffer(data))
    expected = np.asarray(out.realize([45, 37]))
    got = np.zeros((37, 45), dtype=np.uint16)
    assert call(lib, "blur", [data, got]) == 0
    assert np.array_equal(got, expected)


def test_reductions_params_and_float_math(tmp_path, runtime):
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Float(32), 2, "src")
    k = hl.Param(hl.Float(32), "k")
    n = hl.Param(hl.Int(32), "n")
    r = hl.RDom([(0, 5)])
    s = hl.Func("s")
    s[x, y] = 0.0
    s[x, y] += inp[hl.clamp(x + r.x - 2, 0, 19), y] * k
    h = hl.Func("h")
    h[x] = 0
    r2 = hl.RDom([(0, 20)])
    h[hl.clamp(hl.i32(inp[r2.x, 0] * 4.0), 0, 9)] += 1
    out = hl.Func("res")
    out[x, y] = (hl.sqrt(hl.abs(s[x, y])) + hl.sin(s[x, y]) * hl.f32(n) + hl.f32(h[x % 10])
                 + hl.select(x % 3 == 0, hl.floor(s[x, y]), hl.exp(-hl.abs(s[x, y]))))
    s.compute_root()
    h.compute_root()
    out.vectorize(x, 4)
    lib = build(tmp_path, runtime, out, [inp, k, n], "res")
    rng = np.random.default_rng(2)
    data = rng.random((6, 20), dtype=np.float32) * 3
    inp.set(hl.Buffer(data))
    k.set(0.75)
    n.set(3)
    expected = np.asarray(out.realize([20, 6]))
    got = np.zeros((6, 20), dtype=np.float32)
    assert call(lib, "res", [data, ctypes.c_float(0.75), ctypes.c_int32(3), got]) == 0
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_integer_semantics(tmp_path, runtime):
    # Euclidean division and modulo by signed, zero and negative divisors,
    # wrapping arithmetic, shifts by any amount, saturating casts.
    x, y = hl.Var("x"), hl.Var("y")
    a = hl.ImageParam(hl.Int(32), 1, "a")
    b = hl.ImageParam(hl.Int(32), 1, "b")
    out = hl.Func("ints")
    av, bv = a[x], b[x]
    out[x, y] = hl.select(
        y == 0, av // bv,
        y == 1, av % bv,
        y == 2, av * 65537 + bv,
        y == 3, av << (bv % 32 - 16),
        y == 4, av >> (bv % 32 - 16),
        y == 5, hl.i32(hl.saturating_cast(hl.Int(8), av)),
        y == 6, hl.i32(hl.absd(av, bv)),
        hl.i32(hl.u8(av) + hl.u8(bv)))
    lib = build(tmp_path, runtime, out, [a, b], "ints")
    vals = np.array([0, 1, -1, 7, -7, 100, -100, 2**31 - 1, -2**31, 12345, -999, 3], dtype=np.int32)
    divs = np.array([3, -3, 0, 2, -2, 7, 1, -1, -1, 0, 13, -5], dtype=np.int32)
    a.set(hl.Buffer(vals))
    b.set(hl.Buffer(divs))
    expected = np.asarray(out.realize([12, 8]))
    got = np.zeros((8, 12), dtype=np.int32)
    assert call(lib, "ints", [vals, divs, got]) == 0
    assert np.array_equal(got, expected)


def test_errors_are_returned(tmp_path, runtime):
    inp = hl.ImageParam(hl.UInt(8), 1, "bytes")
    x = hl.Var("x")
    f = hl.Func("shifted")
    f[x] = inp[x + 5]
    lib = build(tmp_path, runtime, f, [inp], "shifted")
    small = np.zeros(4, dtype=np.uint8)
    out = np.zeros(8, dtype=np.uint8)
    assert call(lib, "shifted", [small, out]) == -4  # access out of bounds


def test_what_it_cannot_do_yet_is_an_error(tmp_path):
    x = hl.Var("x")
    f = hl.Func("traced")
    f[x] = x
    f.trace_stores()
    with pytest.raises(hl.HalideError, match="C backend"):
        f.compile_to_c(str(tmp_path / "t.cpp"), [], "traced")


def test_atomic_updates_and_metadata(tmp_path, runtime):
    # A parallel histogram made atomic, and the metadata a C caller reads.
    x = hl.Var("x")
    inp = hl.ImageParam(hl.UInt(8), 1, "pix")
    r = hl.RDom([(0, 1000)])
    hist = hl.Func("hist")
    hist[x] = 0
    hist[hl.i32(inp[r.x]) % 16] += 1
    hist.update(0).atomic().parallel(r.x)
    flt = hl.Func("fsum")
    flt[x] = 0.0
    flt[hl.i32(inp[r.x]) % 4] += hl.f32(inp[r.x]) * 0.5
    flt.update(0).atomic().parallel(r.x)
    out = hl.Func("both")
    out[x] = hl.f32(hist[x]) + flt[x % 4]
    hist.compute_root()
    flt.compute_root()
    lib = build(tmp_path, runtime, out, [inp], "both")
    data = np.random.default_rng(3).integers(0, 256, size=1000, dtype=np.uint8)
    inp.set(hl.Buffer(data))
    expected = np.asarray(out.realize([16]))
    got = np.zeros(16, dtype=np.float32)
    assert call(lib, "both", [data, got]) == 0
    np.testing.assert_allclose(got, expected, rtol=1e-5)

    class Arg(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int32), ("dimensions", ctypes.c_int32),
                    ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                    ("def_", ctypes.c_void_p), ("min", ctypes.c_void_p), ("max", ctypes.c_void_p),
                    ("estimate", ctypes.c_void_p), ("buffer_estimates", ctypes.c_void_p)]

    class Metadata(ctypes.Structure):
        _fields_ = [("version", ctypes.c_int32), ("num_arguments", ctypes.c_int32),
                    ("arguments", ctypes.POINTER(Arg)), ("target", ctypes.c_char_p), ("name", ctypes.c_char_p)]

    lib.both_metadata.restype = ctypes.POINTER(Metadata)
    md = lib.both_metadata().contents
    assert (md.version, md.num_arguments, md.name) == (1, 2, b"both")
    assert [(md.arguments[i].name, md.arguments[i].kind, md.arguments[i].dimensions) for i in range(2)] == [
        (b"pix", 1, 1), (b"both", 2, 1)]


def test_intrinsics_and_bits(tmp_path, runtime):
    x, y = hl.Var("x"), hl.Var("y")
    a = hl.ImageParam(hl.UInt(8), 1, "ua")
    b = hl.ImageParam(hl.Int(16), 1, "sb")
    av, bv = a[x], b[x]
    out = hl.Func("bits")
    out[x, y] = hl.select(
        y == 0, hl.i32(hl.widening_mul(av, av)),
        y == 1, hl.i32(hl.rounding_mul_shift_right(bv, bv, hl.u16(7))),
        y == 2, hl.i32(hl.saturating_add(bv, hl.i16(30000))),
        y == 3, hl.i32(hl.popcount(bv)) * 100 + hl.i32(hl.count_leading_zeros(av)) * 10
        + hl.i32(hl.count_trailing_zeros(bv)),
        y == 4, hl.i32(hl.concat_bits([av, av, hl.u8(bv), hl.u8(7)])),
        y == 5, hl.i32(hl.extract_bits(hl.UInt(8), bv, hl.u32(3))),
        y == 6, hl.i32(hl.rounding_shift_right(bv, hl.i16(2))) + hl.i32(hl.halving_add(av, hl.u8(255))),
        y == 7, hl.i32(~(bv > 0)) + hl.i32(hl.absd(bv, hl.i16(-9))),
        y == 8, hl.i32(hl.mux(x % 3, [av, hl.u8(bv), hl.u8(5)])),
        y == 9, hl.i32(hl.lerp(av, hl.u8(200), hl.u8(bv))),
        hl.i32(hl.saturating_cast(hl.UInt(8), bv)) - hl.i32(hl.widening_sub(av, hl.u8(100))))
    out.vectorize(x, 8)
    lib = build(tmp_path, runtime, out, [a, b], "bits")
    rng = np.random.default_rng(5)
    ua = rng.integers(0, 256, size=24, dtype=np.uint8)
    sb = rng.integers(-32768, 32767, size=24, dtype=np.int16)
    a.set(hl.Buffer(ua))
    b.set(hl.Buffer(sb))
    expected = np.asarray(out.realize([24, 11]))
    got = np.zeros((11, 24), dtype=np.int32)
    assert call(lib, "bits", [ua, sb, got]) == 0
    assert np.array_equal(got, expected)


def matches_the_jit(tmp_path, runtime, g, inp, data, size):
    """g built from C source and called on `data` (for ImageParam `inp`)
    equals the JIT's realization over `size`."""
    lib = build(tmp_path, runtime, g, [inp], g.name())
    inp.set(hl.Buffer(data))
    expected = np.asarray(g.realize(size))
    got = np.zeros(size[::-1], dtype=np.int32)
    assert call(lib, g.name(), [data, got]) == 0
    assert np.array_equal(got, expected)


def test_async_producer(tmp_path, runtime):
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Int(32), 2, "src")
    f = hl.Func("f")
    f[x, y] = inp[x, y] * 3
    h = hl.Func("h")
    h[x, y] = x - y
    g = hl.Func("ga")
    g[x, y] = f[x, y] + f[x + 1, y] + h[x, y]
    f.compute_root().async_()
    h.compute_root()
    matches_the_jit(tmp_path, runtime, g, inp, np.arange(17 * 9, dtype=np.int32).reshape(9, 17), [16, 9])


def test_folded_async_producer(tmp_path, runtime):
    # Its fork runs the producer on a helper thread (ferrohalide_do_fork):
    # it waits for the rows its consumer releases.
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Int(32), 2, "src")
    f = hl.Func("f")
    f[x, y] = inp[x, y] * 3
    g = hl.Func("gf")
    g[x, y] = f[x, y] + f[x, y + 1] * 2 + f[x, y + 2]
    f.store_root().compute_at(g, y).fold_storage(y, 3).async_()
    matches_the_jit(tmp_path, runtime, g, inp, np.arange(16 * 42, dtype=np.int32).reshape(42, 16), [16, 40])
