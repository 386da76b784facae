"""arm-64-linux objects, proven by running them: each pipeline is compiled
ahead of time for arm-64-linux into a static library, linked with Debian's
aarch64 cross compiler into a static executable, run under
qemu-aarch64-static, and its output compared with the host JIT's
(bit-exact for integers; floats within a few ULP, since the two machines'
LLVM back ends may contract or order float operations differently)."""
import re
import subprocess

import numpy as np
import pytest

import ferrohalide as hl

from tests.aot.conftest import include_dir, run
from tests.cross.conftest import cross_tool
from tests.cross.harness import Buf, Scalar, main_c

TARGET = "arm-64-linux"


@pytest.fixture(scope="module")
def aarch64_cc():
    return cross_tool("aarch64-linux-gnu-gcc")


@pytest.fixture(scope="module")
def qemu_aarch64():
    return cross_tool("qemu-aarch64-static", "qemu-aarch64")


def _rng():
    return np.random.default_rng(1234)


# Each case: (name, build) where build() returns
#   (func, [ImageParam/Param...], [input arrays / scalar values...], output shape)
# Output shapes are NumPy order (outermost first).


def stencil_u8():
    """A 3x3 max filter over a uint8 image with a repeat_edge boundary."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    mx = hl.Func("max_y")
    mx[x, y] = hl.max(clamped[x, y - 1], clamped[x, y], clamped[x, y + 1])
    out = hl.Func("dilate")
    out[x, y] = hl.max(mx[x - 1, y], mx[x, y], mx[x + 1, y])
    mx.compute_at(out, y).vectorize(x, 16)
    out.vectorize(x, 16).parallel(y)
    img = _rng().integers(0, 256, (37, 70), dtype=np.uint8)
    return out, [inp], [img], img.shape, np.uint8


def widening_blur():
    """uint8 -> uint16 sums along x, then along y, rounded back to uint8."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    bx = hl.Func("blur_x")
    bx[x, y] = hl.u16(inp[x, y]) + 2 * hl.u16(inp[x + 1, y]) + hl.u16(inp[x + 2, y])
    by = hl.Func("blur_y")
    by[x, y] = hl.u8((bx[x, y] + 2 * bx[x, y + 1] + bx[x, y + 2] + 8) >> 4)
    bx.compute_at(by, y).vectorize(x, 16)
    by.vectorize(x, 16).parallel(y)
    img = _rng().integers(0, 256, (50, 66), dtype=np.uint8)
    return by, [inp], [img], (48, 64), np.uint8


def float_with_param():
    """A float pipeline with a scalar Param and a transcendental."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    gain = hl.Param(hl.Float(32), "gain")
    f = hl.Func("tone")
    f[x, y] = gain * inp[x, y] / (1.0 + hl.abs(inp[x, y])) + hl.sqrt(inp[x, y] * inp[x, y] + 1.0)
    f.vectorize(x, 4).parallel(y)
    img = (_rng().random((21, 40), dtype=np.float32) * 8 - 4).astype(np.float32)
    gain.set(1.75)
    return f, [inp, gain], [img, 1.75], img.shape, np.float32


def reduction():
    """A histogram (an update over a reduction domain) and a sum per row."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    r = hl.RDom([(0, inp.width()), (0, inp.height())])
    hist = hl.Func("hist")
    hist[x] = 0
    hist[hl.i32(inp[r.x, r.y]) >> 4] += 1
    out = hl.Func("hist_out")
    out[x] = hist[x] * 3 + 1
    out.vectorize(x, 4)
    img = _rng().integers(0, 256, (33, 45), dtype=np.uint8)
    return out, [inp], [img], (16,), np.int32


CASES = [stencil_u8, widening_blur, float_with_param, reduction]


def _ctype(p):
    t = p.type()
    if t.is_float():
        return "float" if t.bits() == 32 else "double"
    base = "int" if t.is_int() else "uint"
    return f"{base}{t.bits()}_t"


def _host_result(func, params, values, shape, dtype):
    for p, v in zip(params, values):
        if isinstance(p, hl.ImageParam):
            p.set(hl.Buffer(v))
        else:
            p.set(v)
    out = np.zeros(shape, dtype)
    func.realize(hl.Buffer(out))
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_arm64_linux_runs_under_qemu(case, tmp_path, aarch64_cc, qemu_aarch64):
    func, params, values, shape, dtype = case()
    name = case.__name__
    lib = tmp_path / name
    func.compile_to_static_library(str(lib), params, name, hl.Target(TARGET))
    assert (tmp_path / f"{name}.a").exists() and (tmp_path / f"{name}.h").exists()

    args = [
        Buf(v.dtype, v.shape) if isinstance(p, hl.ImageParam) else Scalar(_ctype(p), v)
        for p, v in zip(params, values)
    ]
    (tmp_path / "main.c").write_text(main_c(f"{name}.h", name, args, Buf(dtype, shape)))
    exe = tmp_path / "prog"
    run([aarch64_cc, "-O1", "-static", "-I", include_dir(hl), "-I", str(tmp_path),
         str(tmp_path / "main.c"), str(tmp_path / f"{name}.a"), "-lpthread", "-lm", "-o", str(exe)])

    files = []
    for i, (p, v) in enumerate(zip(params, values)):
        if isinstance(p, hl.ImageParam):
            path = tmp_path / f"in{i}.bin"
            np.ascontiguousarray(v).tofile(path)
            files.append(str(path))
    out_path = tmp_path / "out.bin"
    p = subprocess.run([qemu_aarch64, str(exe), *files, str(out_path)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{p.stdout}\n{p.stderr}"
    got = np.fromfile(out_path, dtype=dtype).reshape(shape)

    want = _host_result(func, params, values, shape, dtype)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_max_ulp(got, want, maxulp=4)
    else:
        np.testing.assert_array_equal(got, want)


def test_arm64_stencil_uses_neon(tmp_path):
    """The vectorized max filter's inner loops are NEON code on 16-byte
    vectors, not scalar code."""
    objdump = cross_tool("aarch64-linux-gnu-objdump", "llvm-objdump-19")
    func, params, *_ = stencil_u8()
    func.compile_to_object(str(tmp_path / "s.o"), params, "s", hl.Target(TARGET + "-no_runtime"))
    asm = run([objdump, "-d", str(tmp_path / "s.o")]).stdout
    assert re.search(r"umax\s+v\d+\.16b", asm), asm[:2000]


def test_arm64_object_is_aarch64_elf(tmp_path):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 2
    f.compile_to_object(str(tmp_path / "f.o"), [], "f", hl.Target(TARGET))
    head = (tmp_path / "f.o").read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and head[4] == 2  # 64-bit
    assert int.from_bytes(head[18:20], "little") == 183  # EM_AARCH64


def test_arm64_sve_is_refused():
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    with pytest.raises(hl.HalideError, match="sve"):
        f.compile_to_object("/nonexistent/f.o", [], "f", hl.Target("arm-64-linux-sve"))
