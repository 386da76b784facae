"""Deeply nested expressions and long chains of Funcs (issue 12): built by a
Python loop, printed, defined, realized and dropped, they either work or raise a
HalideError, on Python's main thread and on a thread with a small stack.  Each
scenario runs in a subprocess, so that a stack overflow fails the test instead of
killing pytest."""
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("ferrohalide")

# The script's body runs as `body()`, on the main thread or on a
# threading.Thread whose stack is 256 KiB (well below the usual 8 MiB).
RUNNER = """
import sys, threading
import ferrohalide as hl

def body():
{body}

if sys.argv[1] == "thread":
    threading.stack_size(256 * 1024)
    failed = []
    def run():
        try:
            body()
        except BaseException as e:
            failed.append(e)
            raise
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert not failed, failed
else:
    body()
print("DONE")
"""

DEEP_SUM = """
x = hl.Var("x")
e = hl.Expr(x)
# One level per iteration: the front end refuses to go beyond its limit.
try:
    for i in range(1_000_000):
        e = e + 1
    raise AssertionError("a 1,000,000-deep expression was built")
except hl.HalideError as err:
    assert "nested" in str(err) and "levels deep" in str(err), str(err)
deepest = i
# What was built prints, and defining a Func with it is the same error.
assert "((((" in str(e) and "+ 1)" in str(e)
f = hl.Func("f")
try:
    f[x] = e
    raise AssertionError("defined")
except hl.HalideError as err:
    assert "levels deep" in str(err)
# Slightly shallower works all the way through.
e = hl.Expr(x)
for i in range(deepest - 20):
    e = e + 1
g = hl.Func("g")
g[x] = e * 2
assert g.realize([3])[2] == (2 + deepest - 20) * 2
assert hl.sum(e + hl.RDom([hl.Range(0, 2)]).x).type() == hl.Int(32)
assert "select(" in str(hl.select(e > 0, e, 0))
del e, f, g
"""

DEEP_MUX = """
x = hl.Var("x")
e = hl.Expr(x)
try:
    for i in range(1_000_000):
        e = hl.mux(x, [e, 1])
except hl.HalideError as err:
    assert "levels deep" in str(err), str(err)
else:
    raise AssertionError("built")
"""

# Each Func calls the previous one: lowering inlines them all.
FUNC_CHAIN = """
x = hl.Var("x")
f = hl.Func("f0")
f[x] = x
for i in range(2000):
    g = hl.Func("f%d" % (i + 1))
    g[x] = f[x] + 1
    f = g
assert f.realize([4])[3] == 2003
del f, g
"""


@pytest.mark.parametrize("thread", ["main", "thread"])
@pytest.mark.parametrize("name,body", [("sum", DEEP_SUM), ("mux", DEEP_MUX),
                                       ("func_chain", FUNC_CHAIN)])
def test_deep(tmp_path, name, body, thread):
    script = tmp_path / "deep.py"
    script.write_text(RUNNER.format(body=textwrap.indent(body, "    ")))
    p = subprocess.run([sys.executable, str(script), thread], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and p.stdout.strip().endswith("DONE"), (
        "exit status %s\n%s" % (p.returncode, p.stderr[-3000:]))
