"""The JIT's two forms of a vector gather (crates/codegen-llvm/src/hardware_gathers.rs):
the CPU's gather instruction, where it is measured faster, or one scalar load per
lane (Halide's form). FERROHALIDE_GATHERS forces either; both give the reference's
values, and the chosen form is what the optimized IR holds."""
import os
import subprocess
import sys

import numpy as np
import pytest

# Gathers of every element size, 32- and 64-bit ones in the lane counts x86
# has instructions for and others, a predicated (GuardWithIf) one, and the
# data-dependent lookup of bilateral_grid's kind (a float table read at an
# index computed from the input).
PIPELINES = """
def pipelines(hl, np):
    out = []
    x, y = hl.Var("x"), hl.Var("y")
    for dtype, hlt in [(np.float32, hl.Float(32)), (np.int32, hl.Int(32)), (np.float64, hl.Float(64)),
                       (np.int64, hl.Int(64)), (np.uint16, hl.UInt(16)), (np.uint8, hl.UInt(8))]:
        for lanes in [2, 4, 8, 16]:
            table = hl.Buffer((np.arange(97) * 37 % 101).astype(dtype), "table")
            index = hl.Buffer((np.arange(300) * 53 % 97).astype(np.int32), "index")
            f = hl.Func("f")
            f[x] = table[hl.clamp(index[x], 0, 96)] + hl.cast(hlt, 1)
            f.vectorize(x, lanes, hl.TailStrategy.GuardWithIf if lanes == 8 else hl.TailStrategy.ShiftInwards)
            out.append(np.asarray(f.realize([299])).tolist())
    grid = hl.Buffer(np.sin(np.arange(16 * 9 * 5, dtype=np.float32)).reshape(5, 9, 16), "grid")
    image = hl.Buffer((np.arange(64 * 40, dtype=np.float32) % 13 / 13).reshape(40, 64), "image")
    z = hl.clamp(hl.cast(hl.Int(32), image[x, y] * 4), 0, 4)
    g = hl.Func("g")
    g[x, y] = grid[x // 4, y // 5, z] - grid[x // 4, y // 5, hl.min(z + 1, 4)]
    g.vectorize(x, 8).parallel(y)
    out.append(np.asarray(g.realize([64, 40])).tolist())
    return out
"""

SCRIPT = PIPELINES + """
import json
import numpy as np
import ferrohalide as hl
print(json.dumps(pipelines(hl, np)))
"""


def run(form, debug=0):
    pytest.importorskip("ferrohalide")
    # The cache off: the forms' entries differ, and level 3 prints what LLVM makes.
    env = dict(os.environ, FERROHALIDE_GATHERS=form, FERROHALIDE_CACHE_DIR="off",
               HL_DEBUG_CODEGEN=str(debug))
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def has_avx2():
    import ferrohalide as hl
    return hl.get_host_target().has_feature(hl.TargetFeature.AVX2)


@pytest.mark.parametrize("form", ["hardware", "lanes"])
def test_both_forms_give_the_reference_values(form):
    halide = pytest.importorskip("halide")
    import json
    scope = {}
    exec(PIPELINES, scope)
    expected = scope["pipelines"](halide, np)
    got = json.loads(run(form).stdout)
    assert got == [np.asarray(e).tolist() for e in expected]


def all_lanes_gathers(ir):
    """The calls of llvm.masked.gather with every lane on in `ir`."""
    return [line for line in ir.splitlines()
            if "call" in line and "@llvm.masked.gather" in line and "i1 false" not in line
            and ("<i1 true" in line or "splat (i1 true)" in line)]


def test_the_chosen_form_is_what_llvm_gets():
    if not has_avx2():
        pytest.skip("gather instructions need AVX2")
    kept = all_lanes_gathers(run("hardware", debug=3).stderr)
    # 32- and 64-bit elements in 4 or more lanes stay gathers ...
    assert any("<8 x float>" in line for line in kept), kept[:5]
    assert any("<4 x i64>" in line or "<4 x double>" in line for line in kept), kept[:5]
    # ... narrower ones have no instruction and are loaded lane by lane.
    assert not [line for line in kept if "x i16>" in line or "x i8>" in line], kept[:5]
    assert not all_lanes_gathers(run("lanes", debug=3).stderr)


def test_the_choice_is_reported():
    p = run("", debug=1)
    if has_avx2():
        assert "gathers: " in p.stderr
