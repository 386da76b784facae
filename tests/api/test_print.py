"""hl.print / hl.print_when write to stdout at run time exactly as Halide does."""
import subprocess
import sys

import pytest

SCRIPT = """
import sys
hl = __import__(sys.argv[1])
x = hl.Var("x")
f = hl.Func("f")
f[x] = hl.print(x * 2, "is twice", x, hl.f32(x) / 4, hl.f64(x) / 8)
g = hl.Func("g")
g[x] = hl.print_when(x == 2, x + 100, "hit at", x)
g.vectorize(x, 4)
f.realize([3])
g.realize([8])
"""


def run(module):
    p = subprocess.run([sys.executable, "-c", SCRIPT, module], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_print_matches_reference():
    pytest.importorskip("halide")
    ours = run("ferrohalide")
    assert ours == run("halide")
    assert "102 hit at 2" in ours
