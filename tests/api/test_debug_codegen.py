"""HL_DEBUG_CODEGEN=2 dumps the statement after every lowering pass (stderr)."""
import os
import subprocess
import sys

import pytest

SCRIPT = """
import ferrohalide as hl
x, y = hl.Var("x"), hl.Var("y")
f = hl.Func("stage_one")
f[x, y] = x + y
g = hl.Func("stage_two")
g[x, y] = f[x, y] * 2 + f[x + 1, y]
f.compute_at(g, y).vectorize(x, 4)
g.unroll(x, 2)
print(int(g.realize([8, 3])[7, 2]))
"""

# Passes every pipeline goes through, in order (others may run in between).
PASSES = ["schedule functions", "bounds inference", "storage flattening",
          "unroll loops", "vectorize loops", "partition loops"]


def run(level):
    pytest.importorskip("ferrohalide")
    # The cache off: these read what lowering and LLVM print, which a hit skips.
    env = dict(os.environ, HL_DEBUG_CODEGEN=str(level), FERROHALIDE_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=120, env=env)


def test_level_2_prints_the_ir_after_each_pass():
    p = run(2)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str((7 + 2) * 2 + 8 + 2)
    headers = [line for line in p.stderr.splitlines() if line.startswith("--- ")]
    names = [h[4:].split(" (")[0] for h in headers]
    it = iter(names)
    assert all(any(n == want for n in it) for want in PASSES), names
    # Each header is followed by that pass's statement.
    after_schedule = p.stderr.split("--- schedule functions", 1)[1]
    assert "produce stage_two {" in after_schedule.split("--- ", 1)[0]
    after_vectorize = p.stderr.split("--- vectorize loops", 1)[1].split("--- ", 1)[0]
    assert "ramp(" in after_vectorize


def test_level_0_is_silent():
    p = run(0)
    assert p.returncode == 0, p.stderr
    assert "--- " not in p.stderr


def optimized_ir_on_avx512(script):
    """Run `script` (which prints True when its result is right) with
    HL_DEBUG_CODEGEN=3 on an AVX-512 (Skylake feature set) host; return the
    optimized LLVM IR it printed. Skips elsewhere."""
    pytest.importorskip("ferrohalide")
    import ferrohalide as hl
    if not hl.get_host_target().has_feature(hl.TargetFeature.AVX512_Skylake):
        pytest.skip("needs AVX-512 (BW for the masked 16-bit loads)")
    env = dict(os.environ, HL_DEBUG_CODEGEN="3", FERROHALIDE_CACHE_DIR="off")  # a hit prints no IR
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "True"
    return p.stderr.split("--- optimized LLVM IR ---", 1)[1]


EDGE_SCRIPT = """
import numpy as np
import ferrohalide as hl
data = (np.arange(40 * 24, dtype=np.uint16).reshape(24, 40) * 7) % 1000
inp = hl.Buffer(data)
x, y = hl.Var("x"), hl.Var("y")
clamped = hl.BoundaryConditions.repeat_edge(inp)
f = hl.Func("edge_blur")
f[x, y] = clamped[x - 1, y] + clamped[x + 1, y]
f.vectorize(x, 32)
out = np.asarray(f.realize([40, 24]))
pad = np.pad(data, ((0, 0), (1, 1)), mode="edge")
print(bool(np.array_equal(out, pad[:, :-2] + pad[:, 2:])))
"""


def test_clamped_vector_loads_are_not_gathers():
    """Boundary conditions leave clamped ramps in the edge iterations; on
    targets with cheap masked loads they become a masked dense load plus
    two scalar loads, not a per-lane gather (and compute the same)."""
    ir = optimized_ir_on_avx512(EDGE_SCRIPT)
    assert "llvm.masked.load" in ir
    assert "llvm.masked.gather" not in ir


TAPS_SCRIPT = """
import numpy as np
import ferrohalide as hl
data = np.arange(200, dtype=np.float32)
inp = hl.Buffer(data)
x = hl.Var("x")
f = hl.Func("taps")
f[x] = inp[x] + inp[x + 1] * 2 + inp[x + 2]
f.vectorize(x, 16)
out = np.asarray(f.realize([160]))
print(bool(np.array_equal(out, data[:160] + data[1:161] * 2 + data[2:162])))
"""


def test_overlapping_taps_share_loads():
    """A 3-tap stencil along the vector loads its two outer taps and builds
    the middle one with a lane permute (on AVX-512, where that permute is
    one instruction): two vector loads of the input, not three."""
    ir = optimized_ir_on_avx512(TAPS_SCRIPT)
    # Each copy of the loop body (the steady loop, the shifted last
    # vector) has two loads and one permute.
    loads, permutes = ir.count("load <16 x float>"), ir.count("shufflevector <16 x float>")
    assert permutes >= 1 and loads == 2 * permutes, ir


def test_level_4_times_each_unit_of_a_split_module_alone():
    """The data the split's weights are fitted to (module_split::weight)."""
    pytest.importorskip("ferrohalide")
    script = """
import ferrohalide as hl
x, y = hl.Var("x"), hl.Var("y")
f, g = hl.Func("first"), hl.Func("second")
f[x, y] = x * y
g[x, y] = f[x, y] + f[x + 1, y]
f.compute_root().parallel(y)
g.parallel(y)
print(int(g.realize([8, 8])[3, 5]))
"""
    # Small modules split only in the stress mode; two threads make two partitions.
    env = dict(os.environ, HL_DEBUG_CODEGEN="4", FERROHALIDE_CACHE_DIR="off",
               FERROHALIDE_STRESS_CODEGEN="1", FERROHALIDE_COMPILE_THREADS="2")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(3 * 5 + 4 * 5)
    units = [line for line in p.stderr.splitlines() if line.startswith("module split: unit ")]
    names = {line.split()[3] for line in units}
    assert any(".par_for.first." in n for n in names), units
    assert any(".par_for.second." in n for n in names), units
    assert all(" compiles alone in " in line and line.endswith(" ms") for line in units), units
