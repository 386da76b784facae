"""Coordinates that overflow 32 bits are caught by the access checks.
Halide computes coordinates in Int32 and treats overflow as the user's
fault: a Param offset near 2^31 wraps the checked range back inside the
buffer, the check passes and the load reads far outside it (halide 21
segfaults on these programs). ferrohalide checks the exact 64-bit range.
Each program runs in a child process, so a regression is a failed test,
not a crashed test run."""
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Param(hl.Int(32), "p")
    b = hl.Buffer(np.arange(40, dtype=np.int32).reshape(4, 10), "b")
    f = hl.Func("f")
    {definition}
    {schedule}
    p.set({value})
    try:
        f.realize([10, 4])
        print("ran")
    except hl.HalideError as e:
        print(str(e).strip())
    p.set(0)
    print(int(np.asarray(f.realize([10, 4])).sum()))
    """
)

CASES = [
    # (definition, schedule, p, expected message)
    ("f[x, y] = b[x + p, y]", "", 2**31 - 5, "Input buffer b is accessed at 2147483652, which is beyond the max (9)"),
    ("f[x, y] = b[x + p, y]", "f.vectorize(x, 8)", 2**31 - 1, "is accessed at 2147483656, which is beyond the max"),
    ("f[x, y] = b[x + 2 * p, y]", "", -(2**30) - 5, "is accessed at -2147483658, which is before the min (0)"),
    ("f[x, y] = b[x, y * p]", "f.parallel(y)", 2**30, "is accessed at 3221225472, which is beyond the max (3)"),
    ("g = hl.Func('g'); g[x, y] = b[x, y] + 1; f[x, y] = g[x + p, y]; g.compute_root()", "", 2**31 - 3,
     "Input buffer b is accessed at 2147483654, which is beyond the max (9)"),
]


@pytest.mark.parametrize("definition,schedule,value,message", CASES)
def test_overflowing_coordinates_are_reported(definition, schedule, value, message):
    program = PROGRAM.format(definition=definition, schedule=schedule, value=value)
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"crashed ({r.returncode}): {r.stderr[-2000:]}"
    lines = r.stdout.strip().splitlines()
    assert message in lines[0], lines
    assert lines[-1].lstrip("-").isdigit(), lines
