"""arm-64-linux and arm-32-linux objects, proven by running them: each
pipeline is compiled ahead of time into a static library, linked with
Debian's cross compiler for the machine into a static executable, run
under QEMU's user-mode emulator, and its output compared with the host
JIT's (bit-exact for integers; floats within a few ULP, since the machines'
LLVM back ends may contract or order float operations differently).

arm-32 is where a 32-bit pointer changes the layout of `halide_buffer_t`
and the width of `size_t`: these runs check that code generation follows
the target's pointers rather than the host's."""
import re

import pytest

import ferrohalide as hl

from tests.aot.conftest import run
from tests.cross.conftest import cross_tool
from tests.cross.harness import compare, run_on_target
from tests.cross.pipelines import CASES, stencil_u8

# (target, C cross compiler, QEMU, objdump, a NEON instruction of the stencil)
MACHINES = {
    "arm-64-linux": ("aarch64-linux-gnu-gcc", "qemu-aarch64", "aarch64-linux-gnu-objdump", r"umax\s+v\d+\.16b"),
    "arm-32-linux": ("arm-linux-gnueabihf-gcc", "qemu-arm", "arm-linux-gnueabihf-objdump", r"vmax\.u8\s+q\d+"),
}


def tools(target):
    cc, qemu, _, _ = MACHINES[target]
    return cross_tool(cc), cross_tool(qemu + "-static", qemu)


@pytest.mark.parametrize("target", MACHINES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_runs_under_qemu(target, case, tmp_path):
    cc, qemu = tools(target)
    got, want = run_on_target(case, tmp_path, target, [cc, "-O1", "-static"], [qemu],
                              link_flags=["-lpthread", "-lm"])
    compare(got, want)


@pytest.mark.parametrize("target", MACHINES)
def test_stencil_uses_neon(target, tmp_path):
    """The vectorized max filter's inner loops are NEON code on 16-byte
    vectors, not scalar code."""
    _, _, objdump, pattern = MACHINES[target]
    objdump = cross_tool(objdump, "llvm-objdump-19")
    func, params, *_ = stencil_u8()
    func.compile_to_object(str(tmp_path / "s.o"), params, "s", hl.Target(target + "-no_runtime"))
    asm = run([objdump, "-d", str(tmp_path / "s.o")]).stdout
    assert re.search(pattern, asm), asm[:2000]


@pytest.mark.parametrize("target,machine", [("arm-64-linux", 183), ("arm-32-linux", 40)])
def test_object_is_an_arm_elf(target, machine, tmp_path):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 2
    f.compile_to_object(str(tmp_path / "f.o"), [], "f", hl.Target(target))
    head = (tmp_path / "f.o").read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and head[4] == (2 if "64" in target else 1)
    assert int.from_bytes(head[18:20], "little") == machine  # EM_AARCH64 / EM_ARM


@pytest.mark.parametrize("target", ["arm-64-linux-sve", "arm-32-linux-arm_dot_prod"])
def test_features_not_supported_are_refused(target):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    with pytest.raises(hl.HalideError, match="not supported"):
        f.compile_to_object("/nonexistent/f.o", [], "f", hl.Target(target))


def float_math(hl_=hl):
    """Rounding and the transcendental functions (which round to even
    inside), vectorized: on arm-32, whose NEON has no rounding instruction,
    LLVM cannot select a vector round-to-even (fuzz-found)."""
    import numpy as np
    x, y = hl_.Var("x"), hl_.Var("y")
    inp = hl_.ImageParam(hl_.Float(32), 2, "inp")
    f = hl_.Func("math")
    v = inp[x, y]
    f[x, y] = (hl_.round(v * 3.5) + hl_.sin(v) + hl_.exp(v * 0.25) + hl_.floor(v) * hl_.cos(v)
               + hl_.cast(hl_.Float(32), hl_.round(hl_.cast(hl_.Float(64), v) * 2.5)))
    f.vectorize(x, 4).parallel(y)
    img = (np.random.default_rng(9).random((17, 40), dtype=np.float32) * 40 - 20).astype(np.float32)
    img[0, :6] = [0.5, 1.5, 2.5, -0.5, -2.5, 8388609.0]
    return f, [inp], [img], img.shape, np.float32


@pytest.mark.parametrize("target", MACHINES)
def test_float_math_runs_under_qemu(target, tmp_path):
    cc, qemu = tools(target)
    got, want = run_on_target(float_math, tmp_path, target, [cc, "-O1", "-static"], [qemu],
                              link_flags=["-lpthread", "-lm"])
    compare(got, want)
