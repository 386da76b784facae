"""x86-64-linux objects at every ISA level Halide names: each compiles,
and each level this CPU has runs (linked with the host's C compiler) and
matches the JIT; levels the CPU lacks are checked for their object only.
The widening blur's vector code is what changes between levels."""
import pytest

import ferrohalide as hl

from tests.aot.conftest import cc  # noqa: F401  (the host C compiler fixture)
from tests.cross.harness import compare, run_on_target
from tests.cross.pipelines import float_with_param, widening_blur

LEVELS = [
    "x86-64-linux",
    "x86-64-linux-sse41",
    "x86-64-linux-sse41-avx",
    "x86-64-linux-sse41-avx-f16c-fma",
    "x86-64-linux-sse41-avx-avx2-f16c-fma",
    "x86-64-linux-sse41-avx-avx2-f16c-fma-avxvnni",
    "x86-64-linux-avx512",
    "x86-64-linux-avx512_knl",
    "x86-64-linux-avx512_skylake",
    "x86-64-linux-avx512_cannonlake",
    "x86-64-linux-avx512_zen4",
    "x86-64-linux-avx512_zen5",
    "x86-64-linux-avx512_sapphirerapids",
]


def host_runs(target):
    t, host = hl.Target(target), hl.get_host_target()
    return all(host.has_feature(f) for f in hl.TargetFeature.__members__.values()
               if f != hl.TargetFeature.FeatureEnd and t.has_feature(f))


@pytest.mark.parametrize("target", LEVELS)
@pytest.mark.parametrize("case", [widening_blur, float_with_param], ids=lambda c: c.__name__)
def test_level(target, case, tmp_path, cc):
    if not host_runs(target):
        func, params, *_ = case()
        func.compile_to_object(str(tmp_path / "o.o"), params, "o", hl.Target(target))
        assert (tmp_path / "o.o").read_bytes()[:4] == b"\x7fELF"
        return
    got, want = run_on_target(case, tmp_path, target, [cc, "-O1"], [], link_flags=["-lpthread", "-lm", "-ldl"])
    compare(got, want)
