"""arm-64-linux objects, proven by running them: each pipeline is compiled
ahead of time for arm-64-linux into a static library, linked with Debian's
aarch64 cross compiler into a static executable, run under
qemu-aarch64-static, and its output compared with the host JIT's
(bit-exact for integers; floats within a few ULP, since the two machines'
LLVM back ends may contract or order float operations differently)."""
import re

import pytest

import ferrohalide as hl

from tests.aot.conftest import run
from tests.cross.conftest import cross_tool
from tests.cross.harness import compare, run_on_target
from tests.cross.pipelines import CASES, stencil_u8

TARGET = "arm-64-linux"


@pytest.fixture(scope="module")
def aarch64_cc():
    return cross_tool("aarch64-linux-gnu-gcc")


@pytest.fixture(scope="module")
def qemu_aarch64():
    return cross_tool("qemu-aarch64-static", "qemu-aarch64")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_arm64_linux_runs_under_qemu(case, tmp_path, aarch64_cc, qemu_aarch64):
    got, want = run_on_target(case, tmp_path, TARGET, [aarch64_cc, "-O1", "-static"], [qemu_aarch64],
                              link_flags=["-lpthread", "-lm"])
    compare(got, want)


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
