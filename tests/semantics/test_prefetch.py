"""prefetch(): values never change whatever is prefetched (Funcs, images,
Tuples, updates, every bound strategy, offsets past the end), the errors
Halide gives for impossible placements, and real prefetch instructions in
the generated code."""
import os

import numpy as np
import pytest

from .harness import differential
from .input_helpers import arr, error_key


def stencil(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 2 + y * 7
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x + 1, y] + f[x, y + 1]
    f.compute_root()
    return x, y, f, g


STRATEGIES = ["GuardWithIf", "Clamp", "NonFaulting"]


def realized_or_error(hl, f, sizes):
    """`f` realized over `sizes`, or the error's text up to the `$` of a
    Func's unique name (Halide's names differ there)."""
    try:
        return f.realize(sizes)
    except hl.HalideError as e:
        return "error: " + str(e).split("$")[0]


@differential()
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("offset", [1, 3, 40])
def test_prefetching_a_func_keeps_the_values(hl, strategy, offset):
    x, y, f, g = stencil(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    st = getattr(hl.PrefetchBoundStrategy, strategy)
    g.split(x, xo, xi, 8).prefetch(f, y, y, offset, st).prefetch(f, xo, xo, offset, st)
    return arr(g.realize([37, 11]))


@differential()
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_prefetching_an_image_keeps_the_values(hl, strategy):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(16), 2, "im")
    g = hl.Func("g")
    g[x, y] = hl.u32(im[x, y]) * 3 + im[x, y + 1]
    g.prefetch(im, y, y, 2, getattr(hl.PrefetchBoundStrategy, strategy))
    im.set(hl.Buffer(np.arange(30 * 13, dtype=np.uint16).reshape(13, 30)))
    return arr(g.realize([30, 12]))


@differential()
def test_prefetch_of_tuples_bools_updates_and_params(hl):
    x, y = hl.Var("x"), hl.Var("y")
    t = hl.Func("t")
    t[x, y] = (x + y, x > y)
    t.compute_root()
    g = hl.Func("g")
    g[x, y] = hl.select(t[x, y][1], t[x, y + 1][0], -t[x, y][0])
    r = hl.RDom([(0, 3)])
    g[x, y] += t[x + r, y][0]
    p = hl.Param(hl.Int(32), "p", 2)
    g.prefetch(t, y, y, p)
    g.update(0).prefetch(t, y, y, 1, hl.PrefetchBoundStrategy.NonFaulting)
    return arr(g.realize([9, 6])), sorted(a.name for a in g.infer_arguments())


@differential()
def test_prefetch_errors(hl):
    out = []
    x, y, f, g = stencil(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    g.split(x, xo, xi, 8).prefetch(f, y, xo)
    out.append(error_key(hl, lambda: g.realize([16, 4]), "Prefetch 'from' variable 'xo' could not be found"))
    x, y, f, g = stencil(hl)
    g.split(x, xo, xi, 8)
    f.compute_at(g, xo)
    g.prefetch(f, y, y)
    out.append(error_key(hl, lambda: g.realize([16, 4]), "which has not been allocated"))
    return out


def test_an_unknown_at_loop_is_an_error():
    # Halide drops such a prefetch without a word.
    import ferrohalide as hl
    x, y, f, g = stencil(hl)
    g.prefetch(f, hl.Var("zz"), y)
    with pytest.raises(hl.HalideError, match="could not find prefetch 'at' dimension zz"):
        g.realize([4, 4])


def test_prefetch_of_nothing_read_warns_and_runs(capfd):
    import ferrohalide as hl
    x, y, f, g = stencil(hl)
    h = hl.Func("h")
    h[x, y] = x
    h.compute_root()
    g.prefetch(h, y, y)
    assert arr(g.realize([4, 3])).sum() > 0
    assert "since the prefetched area will always be empty" in capfd.readouterr().out


def test_prefetches_are_prefetch_instructions(tmp_path):
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Float(32), 2, "im")
    g = hl.Func("g")
    g[x, y] = im[x, y] * 2
    target = hl.Target("x86-64-linux-sse41")
    path = str(tmp_path / "plain.s")
    g.compile_to_assembly(path, [im], "g", target)
    assert "prefetch" not in open(path).read()
    g.prefetch(im, y, y, 1)
    path = str(tmp_path / "prefetch.s")
    g.compile_to_assembly(path, [im], "g", target)
    assert "prefetcht0" in open(path).read()


def test_prefetch_survives_serialization():
    import ferrohalide as hl
    x, y, f, g = stencil(hl)
    g.prefetch(f, y, y, 2, hl.PrefetchBoundStrategy.Clamp)
    q = hl.deserialize_pipeline(hl.serialize_pipeline(hl.Pipeline(g)))
    assert np.array_equal(arr(q.realize([5, 5])), arr(g.realize([5, 5])))
    stmt = os.path.join(os.environ.get("TMPDIR", "/tmp"), "fh_prefetch_roundtrip.stmt")
    q.compile_to_lowered_stmt(stmt, [])
    assert "prefetch(" in open(stmt).read()


@differential()
@pytest.mark.parametrize("once", ["at", "from"])
@pytest.mark.parametrize("f1_at", ["root", "x"])
def test_a_prefetch_at_or_from_a_loop_of_one_iteration_is_placed_where_the_loop_was(hl, once, f1_at):
    """A loop that runs once becomes a let before prefetches are placed.
    Fuzz seed 50334: the prefetch `at` such a loop vanished without a word;
    seed 53588: one whose `from` loop (y, enclosing `at` x) runs once was
    refused as "'from' variable 'y' could not be found in an active loop";
    then both were removed with a warning. Halide places them where the
    loop was (so a prefetch of a Func allocated inside that loop raises
    "not allocated", seeds 63823, 65781, 67167), and so does ferrohalide
    now: its placeholder stays where the loop's body began."""
    x, y = hl.Var("x"), hl.Var("y")
    f1 = hl.Func("f1")
    f1[x, y] = x + y
    f2 = hl.Func("f2")
    f2[x, y] = f1[x, y] + f1[x, y + 1]
    if f1_at == "root":
        f1.compute_root()
    else:
        f1.compute_at(f2, x)
    f2.bound(y, 0, 1)
    f2.prefetch(f1, y if once == "at" else x, y, 1)
    return realized_or_error(hl, f2, [8, 1])


def test_a_prefetch_at_a_loop_of_one_iteration_is_a_prefetch(tmp_path):
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + y
    f2[x, y] = f1[x, y] + f1[x, y + 1]
    f1.compute_root()
    f2.bound(y, 0, 1)
    f2.prefetch(f1, y, y, 1)
    path = tmp_path / "f2.stmt"
    f2.compile_to_lowered_stmt(str(path), [])
    assert "prefetch(" in path.read_text()


@differential()
def test_a_prefetch_from_an_inner_loop_is_an_error_even_at_a_loop_of_one_iteration(hl):
    """Fuzz seed 50809: `from` must be the `at` loop or enclose it. The `at`
    loop here runs once, and ferrohalide removed its prefetch (with a
    warning) before checking that."""
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    f0 = hl.Func("f0")
    f0[x] = x * 2
    f1 = hl.Func("f1")
    f1[x] = f0[x] + 1
    g = hl.Func("g")
    g[x] = f1[x] * 3
    f0.compute_root()
    f1.compute_at(g, x)
    f1.split(x, xo, xi, 8).prefetch(f0, xo, xi, 1)
    try:
        return g.realize([4])
    except hl.HalideError as e:
        return "error: " + str(e).split("variable")[0]


@differential()
@pytest.mark.parametrize("from_outer", [False, True])
@pytest.mark.parametrize("strategy", ["Clamp", "GuardWithIf", "NonFaulting"])
def test_a_prefetch_at_a_vectorized_loop_covers_its_lanes(hl, from_outer, strategy):
    """Fuzz seed 64809: a prefetch at a vectorized loop (Halide runs it; its
    vectorizer issues the prefetch lane by lane). It goes before the loop,
    covering every lane's region `offset` iterations ahead, and the values
    do not change. It was refused as not supported."""
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 3 + y * 100
    g[x, y] = f[x, y] + f[x + 1, y] * 2
    f.compute_root()
    g.split(x, xo, xi, 8).vectorize(xi)
    g.prefetch(f, xi, y if from_outer else xi, 4, getattr(hl.PrefetchBoundStrategy, strategy))
    return g.realize([19, 5])


def test_a_prefetch_at_a_vectorized_loop_is_a_prefetch_instruction(tmp_path):
    import ferrohalide as hl
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    im = hl.ImageParam(hl.Float(32), 2, "im")
    g = hl.Func("g")
    g[x, y] = im[x, y] * 2
    g.split(x, xo, xi, 8).vectorize(xi)
    g.prefetch(im, xi, y, 1)
    path = str(tmp_path / "prefetch.s")
    g.compile_to_assembly(path, [im], "g", hl.Target("x86-64-linux-sse41-avx-avx2"))
    assert "prefetcht0" in open(path).read()


def specialized_prefetch(hl, before):
    """f2 specialized on p > 1 and made to fail otherwise; its prefetch of
    f1 (computed at f2.x, so not allocated at the y loop) is given before or
    after `specialize()`."""
    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Param(hl.Int(32), "p", 3)
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + 10 * y
    f2[x, y] = f1[x, y] * 2
    f1.compute_at(f2, x)
    if before:
        f2.prefetch(f1, y, y, 1)
    f2.specialize(p > 1)
    f2.specialize_fail("never")
    if not before:
        f2.prefetch(f1, y, y, 1)
    return f2


@differential()
@pytest.mark.parametrize("before", [False, True])
def test_a_prefetch_belongs_to_the_specializations_made_after_it(hl, before):
    """Fuzz seed 66590: a specialization copies the schedule when it is
    made, so a prefetch given after `specialize()` is the default
    definition's only, which `specialize_fail` makes dead: Halide runs it.
    ferrohalide gathered a stage's prefetches from every branch and raised
    "Prefetch to buffer f1 which has not been allocated" in the live one.
    Given before, both branches have it and both raise."""
    return realized_or_error(hl, specialized_prefetch(hl, before), [4, 3])


def test_a_prefetch_of_one_specialization_is_placed_in_its_branch_only(tmp_path):
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Param(hl.Int(32), "p", 3)
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + 10 * y
    f2[x, y] = f1[x, y] * 2
    f1.compute_root()
    f2.specialize(p > 1).prefetch(f1, y, y, 1)
    f2.specialize(p > 0).vectorize(x, 4)
    for value in [3, 1, 0]:
        p.set(value)
        assert arr(f2.realize([4, 3])).tolist() == [[2 * (i + 10 * j) for i in range(4)] for j in range(3)]
    path = tmp_path / "f2.stmt"
    f2.compile_to_lowered_stmt(str(path), [p])
    text = path.read_text()
    assert text.count("prefetch(") == 1, text
    assert "placeholder" not in text, text
