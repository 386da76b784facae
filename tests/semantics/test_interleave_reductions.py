"""Reductions inside a pure loop of an update (a matrix multiply's shape:
`for xo { for r { c[xo] += a[r] * b[xo, r] } }`): ferrohalide runs groups of
the pure loop's iterations side by side inside the RVar loop
(`interleave_reductions`). Values must be Halide's, bit for bit, for every
extent (whole groups, a remainder, fewer iterations than a group), Tuple
updates, predicated RDoms and vectorized tails; and the rewrite must really
happen (checked on the lowered statement)."""
import numpy as np
import pytest

from .harness import buffer, differential

CASES: dict = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def operands(hl, n, m, seed=5):
    """Two int32 inputs. Keep them referenced until the realize: Halide's
    Funcs do not keep a NumPy array alive."""
    rng = np.random.RandomState(seed)
    a = buffer(hl, rng.randint(-50, 50, size=(n, n)).astype(np.int32))
    b = buffer(hl, rng.randint(-50, 50, size=(n, m)).astype(np.int32))
    return a, b


def matmul(hl, n, m, vec=16, tail=None):
    """The matrix product c (m x n) and its operands (to keep alive)."""
    a, b = operands(hl, n, m)
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    r = hl.RDom([(0, n)])
    c = hl.Func("c")
    c[x, y] = 0
    c[x, y] += a[r.x, y] * b[x, r.x]
    args = (x, xo, xi, vec) if tail is None else (x, xo, xi, vec, tail)
    c.update().split(*args).reorder(xi, r.x, xo, y).vectorize(xi).parallel(y)
    return c, (a, b)


@case
def whole_groups(hl):
    c, keep = matmul(hl, 24, 16 * 8)
    return [c.realize([16 * 8, 24])]


@case
def with_a_remainder(hl):
    c, keep = matmul(hl, 9, 16 * 11)
    return [c.realize([16 * 11, 9])]


@case
def fewer_than_a_group(hl):
    c, keep = matmul(hl, 7, 16 * 3)
    return [c.realize([16 * 3, 7])]


@case
def guarded_vector_tail(hl):
    c, keep = matmul(hl, 13, 16 * 9 + 5, vec=8, tail=hl.TailStrategy.GuardWithIf)
    return [c.realize([16 * 9 + 5, 13])]


@case
def scalar_body(hl):
    # No vectorization: the body is a scalar store.
    a, b = operands(hl, 11, 37)
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, 11)])
    c = hl.Func("c")
    c[x, y] = 1
    c[x, y] = c[x, y] * 3 + a[r.x, y] * b[x, r.x]
    c.update().reorder(r.x, x, y)
    return [c.realize([37, 11])]


@case
def tuple_update(hl):
    a, b = operands(hl, 10, 64)
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    r = hl.RDom([(0, 10)])
    c = hl.Func("c")
    c[x, y] = (hl.i32(0), hl.i32(-1000))
    c[x, y] = (c[x, y][0] + a[r.x, y] * b[x, r.x], hl.max(c[x, y][1], b[x, r.x] - r.x))
    c.update().split(x, xo, xi, 4).reorder(xi, r.x, xo, y).vectorize(xi)
    return list(c.realize([64, 10]))


@case
def predicated_rdom(hl):
    a, b = operands(hl, 12, 80)
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    r = hl.RDom([(0, 12)])
    r.where((r.x + y) % 3 != 1)
    c = hl.Func("c")
    c[x, y] = x
    c[x, y] += a[r.x, y] * b[x, r.x]
    c.update().split(x, xo, xi, 8).reorder(xi, r.x, xo, y).vectorize(xi)
    return [c.realize([80, 12])]


@differential()
@pytest.mark.parametrize("name", list(CASES))
def test_interleaved_reductions(hl, name):
    return CASES[name](hl)


def test_the_reduction_loops_are_interleaved(tmp_path):
    import ferrohalide as hl
    c, keep = matmul(hl, 24, 16 * 8)
    path = tmp_path / "c.stmt"
    c.compile_to_lowered_stmt(str(path), [])
    text = path.read_text()
    assert f"{c.name()}.s1.x.xo.jammed" in text, text
