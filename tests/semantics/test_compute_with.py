"""compute_with: stages of different Funcs computed in shared loops. Every
schedule must give the reference's results bit-exactly whatever the
alignment, extents, splits and loop types; misuse must raise the
reference's errors; and the fused loops must really be one loop nest."""
import random

import numpy as np
import pytest

from .harness import REF_MODULE, SELFTEST, differential

ALIGNS = ["AlignStart", "AlignEnd", "NoAlign", "Auto"]


def _arr(b):
    return np.array(np.asarray(b), copy=True)


def _two(hl):
    """f and g read by h at different offsets: their regions differ."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y * 3
    g[x, y] = x * 2 - y
    h[x, y] = f[x - 1, y + 1] + g[x + 2, y - 2]
    return x, y, f, g, h


def _three(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g, k, h = hl.Func("f"), hl.Func("g"), hl.Func("k"), hl.Func("h")
    f[x, y] = x + y * 3
    g[x, y] = x * 2 - y
    k[x, y] = x * y + 7
    h[x, y] = f[x - 1, y + 1] + g[x + 2, y - 2] + k[x, y + 3]
    return x, y, f, g, k, h


# ---------------------------------------------------------------------------
# Two and three Funcs, at the root and inside a consumer, every alignment.
# ---------------------------------------------------------------------------
@differential()
@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("var", ["x", "y"])
def test_two_funcs_at_root(hl, align, var):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(f, {"x": x, "y": y}[var], getattr(hl.LoopAlignStrategy, align))
    return h.realize([23, 17])


@differential()
@pytest.mark.parametrize("ax", ALIGNS)
@pytest.mark.parametrize("ay", ["AlignStart", "AlignEnd"])
def test_alignment_per_dimension(hl, ax, ay):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    A = hl.LoopAlignStrategy
    g.compute_with(f, x, [(x, getattr(A, ax)), (y, getattr(A, ay))])
    return h.realize([19, 13])


@differential()
@pytest.mark.parametrize("align", ALIGNS)
def test_two_funcs_at_consumer_row(hl, align):
    x, y, f, g, h = _two(hl)
    f.compute_at(h, y)
    g.compute_at(h, y)
    g.compute_with(f, x, getattr(hl.LoopAlignStrategy, align))
    return h.realize([31, 9])


@differential()
@pytest.mark.parametrize("shape", ["chain", "star"])
@pytest.mark.parametrize("align", ["AlignStart", "AlignEnd", "NoAlign"])
def test_three_funcs(hl, shape, align):
    x, y, f, g, k, h = _three(hl)
    a = getattr(hl.LoopAlignStrategy, align)
    for fn in (f, g, k):
        fn.compute_root()
    g.compute_with(f, y, a)
    if shape == "chain":
        k.compute_with(g, y, a)
    else:
        k.compute_with(f, y, a)
    return h.realize([21, 15])


@differential()
def test_three_funcs_at_different_depths(hl):
    """k shares only g's rows; g shares f's rows and columns."""
    x, y, f, g, k, h = _three(hl)
    for fn in (f, g, k):
        fn.compute_root()
    g.compute_with(f, x, hl.LoopAlignStrategy.AlignEnd)
    k.compute_with(g, y, hl.LoopAlignStrategy.AlignStart)
    return h.realize([16, 12])


@differential()
def test_fused_with_outermost(hl):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(f, hl.Var.outermost())
    return h.realize([10, 10])


@differential()
def test_loop_level_form(hl):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(hl.LoopLevel(f, y, 0), hl.LoopAlignStrategy.AlignEnd)
    return h.realize([12, 12])


@differential()
def test_stage_form_and_keywords(hl):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    hl.Stage(g).compute_with(stage=f, var=x, align=hl.LoopAlignStrategy.AlignStart)
    return h.realize([12, 12])


@differential()
def test_replacing_a_compute_with(hl):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(f, x)
    g.compute_with(f, y, hl.LoopAlignStrategy.AlignEnd)
    return h.realize([12, 12])


# ---------------------------------------------------------------------------
# Splits, fuses, tiles, vectorized and parallel fused loops.
# ---------------------------------------------------------------------------
@differential()
@pytest.mark.parametrize("tail", ["RoundUp", "GuardWithIf", "ShiftInwards"])
def test_split_fused_at_outer(hl, tail):
    x, y, f, g, h = _two(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.compute_root()
    g.compute_root()
    t = getattr(hl.TailStrategy, tail)
    f.split(x, xo, xi, 7, t)
    g.split(x, xo, xi, 7, t)
    g.compute_with(f, xo, hl.LoopAlignStrategy.AlignEnd)
    return h.realize([40, 11])


@differential()
def test_fused_dims_parallel(hl):
    x, y = hl.Var("x"), hl.Var("y")
    z, t = hl.Var("z"), hl.Var("t")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y, z] = x + y + z
    g[x, y, z] = x - y + z
    h[x, y, z] = f[x + 1, y - 1, z] + g[x - 2, y + 2, z - 1]
    f.compute_root()
    g.compute_root()
    f.fuse(x, y, t).parallel(t)
    g.fuse(x, y, t).parallel(t)
    g.compute_with(f, t, hl.LoopAlignStrategy.AlignEnd)
    return h.realize([9, 8, 7])


@differential()
@pytest.mark.parametrize("align", ["AlignStart", "AlignEnd"])
def test_parallel_fused_rows_vectorized_columns(hl, align):
    x, y, f, g, h = _two(hl)
    f.compute_root().parallel(y).vectorize(x, 8)
    g.compute_root().parallel(y).vectorize(x, 4)
    g.compute_with(f, y, getattr(hl.LoopAlignStrategy, align))
    return h.realize([37, 13])


@differential()
def test_vectorized_fused_loop(hl):
    x, y, f, g, h = _two(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.compute_root()
    g.compute_root()
    f.split(x, xo, xi, 8).vectorize(xi)
    g.split(x, xo, xi, 8).vectorize(xi)
    g.compute_with(f, xi, hl.LoopAlignStrategy.AlignEnd)
    return h.realize([111, 31])


@differential()
def test_double_split_fused_guarded(hl):
    x, y = hl.Var("x"), hl.Var("y")
    xo, xi, xoo, xoi, t = (hl.Var(n) for n in ("xo", "xi", "xoo", "xoi", "t"))
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    g[x, y] = 2 + x - y
    h[x, y] = f[x, y] + g[x, y] + 10
    G = hl.TailStrategy.GuardWithIf
    for fn in (f, g):
        fn.split(x, xo, xi, 37, G).split(xo, xoo, xoi, 5, G).fuse(xoi, xi, t)
        fn.compute_at(h, y)
    g.compute_with(f, t, hl.LoopAlignStrategy.AlignEnd)
    return h.realize([200, 20])


@differential()
def test_fused_group_at_compute_at_levels(hl):
    """Halide's fuse_compute_at test: groups inside a consumer's loops."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h, p, q, r = (hl.Func(n) for n in "fghpqr")
    f[x, y] = x + y
    g[x, y] = x - y
    h[x, y] = f[x - 1, y + 1] + g[x + 2, y - 2]
    p[x, y] = h[x, y] + 2
    q[x, y] = x * y
    r[x, y] = p[x, y - 1] + q[x - 1, y]
    f.compute_at(h, y)
    g.compute_at(h, y)
    h.compute_at(p, y)
    p.compute_root()
    q.compute_root()
    q.compute_with(p, x, hl.LoopAlignStrategy.AlignEnd)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.split(x, xo, xi, 8)
    g.split(x, xo, xi, 8)
    g.compute_with(f, xo, hl.LoopAlignStrategy.AlignStart)
    return r.realize([67, 41])


def _yuv(hl, a):
    """Full- and half-resolution outputs of one input (Halide's mixed tile tests)."""
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    f, g, h, inp = hl.Func("f"), hl.Func("g"), hl.Func("h"), hl.Func("inp")
    A = hl.Buffer(a)
    inp[x, y, z] = 2 * A[x, y, z] + 3
    f[x, y] = inp[x, y, 0] + 2 * inp[x, y, 1]
    g[x, y] = inp[2 * x, 2 * y, 1] + 2 * inp[2 * x, 2 * y, 2]
    h[x, y] = inp[2 * x, 2 * y, 2] + 3 * inp[2 * x, 2 * y, 1]
    return x, y, f, g, h, inp


# Kept alive for the whole module: halide's Buffer does not own NumPy memory.
_YUV_INPUT = np.random.RandomState(7).randint(0, 256, size=(3, 64, 64)).astype(np.int32)


def _yuv_input():
    return _YUV_INPUT


def _realize_three(hl, f, g, h, size=64):
    bufs = [hl.Buffer(hl.Int(32), [size, size]),
            hl.Buffer(hl.Int(32), [size // 2, size // 2]),
            hl.Buffer(hl.Int(32), [size // 2, size // 2])]
    hl.Pipeline([f, g, h]).realize(bufs)
    return [_arr(b) for b in bufs]


@differential()
def test_mixed_tile_factors(hl):
    x, y, f, g, h, inp = _yuv(hl, _yuv_input())
    xi, yi = hl.Var("xi"), hl.Var("yi")
    T = hl.TailStrategy
    f.tile(x, y, xi, yi, 32, 16, T.ShiftInwards)
    g.tile(x, y, xi, yi, 7, 9, T.GuardWithIf)
    h.tile(x, y, xi, yi, 4, 16, T.RoundUp)
    g.compute_with(f, yi, hl.LoopAlignStrategy.AlignEnd)
    h.compute_with(g, yi, hl.LoopAlignStrategy.AlignStart)
    inp.store_root()
    inp.compute_at(f, y).vectorize(x, 8)
    return _realize_three(hl, f, g, h)


@differential()
def test_multi_tile_mixed_tile_factors(hl):
    x, y, f, g, h, inp = _yuv(hl, _yuv_input())
    xi, yi, xii, yii = hl.Var("xi"), hl.Var("yi"), hl.Var("xii"), hl.Var("yii")
    T = hl.TailStrategy
    f.tile(x, y, xi, yi, 32, 16, T.ShiftInwards)
    g.tile(x, y, xi, yi, 7, 9, T.GuardWithIf)
    h.tile(x, y, xi, yi, 4, 16, T.RoundUp)
    f.tile(xi, yi, xii, yii, 8, 8, T.ShiftInwards)
    g.tile(xi, yi, xii, yii, 16, 8, T.GuardWithIf)
    h.tile(xi, yi, xii, yii, 4, 16, T.GuardWithIf)
    g.compute_with(f, yii, hl.LoopAlignStrategy.AlignStart)
    h.compute_with(g, yii, hl.LoopAlignStrategy.AlignEnd)
    inp.store_root()
    inp.compute_at(f, y).vectorize(x, 8)
    return _realize_three(hl, f, g, h)


@differential(expect_error=True)
def test_only_some_are_tiled(hl):
    """Halide's only_some_are_tiled test, disabled there: the input is read
    out of bounds (halide issue 4751); both raise the bounds error."""
    x, y, f, g, h, inp = _yuv(hl, _yuv_input())
    xi, yi = hl.Var("xi"), hl.Var("yi")
    f.tile(x, y, xi, yi, 32, 16, hl.TailStrategy.ShiftInwards)
    g.compute_with(f, y, hl.LoopAlignStrategy.AlignEnd)
    h.compute_with(g, y)
    inp.store_root()
    inp.compute_at(f, y).vectorize(x, 8)
    return _realize_three(hl, f, g, h)


@pytest.mark.skipif(SELFTEST, reason="the reference is wrong here")
@differential()
@pytest.mark.parametrize("fuse_at", ["xo", "xi"])
def test_parent_guard_outside_the_inner_fused_loops(hl, fuse_at):
    """A's y split guard depends on its shared y loops only; B, fused with
    A at an x loop inside, must not be skipped where A's guard fails.
    halide 21 skips it (its output holds uninitialized values): compared
    with the unfused reference."""
    x, y = hl.Var("x"), hl.Var("y")
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    inp, A, B, h = hl.Func("inp"), hl.Func("A"), hl.Func("B"), hl.Func("h")
    inp[x, y] = x * 7 + y * 3 + (x * y) % 5
    A[x, y] = inp[x - 1, y - 1]
    B[x, y] = inp[2 * x - 2, y + 1] + (x - y)
    h[x, y] = A[x + 3, y + 1] + B[x - 2, y + 3]
    T = hl.TailStrategy
    A.compute_at(h, y).split(y, yo, yi, 2, T.GuardWithIf).split(x, xo, xi, 8, T.GuardWithIf)
    B.compute_at(h, y).split(y, yo, yi, 4, T.ShiftInwards).split(x, xo, xi, 8, T.GuardWithIf)
    if hl.__name__ != REF_MODULE:
        B.compute_with(A, {"xo": xo, "xi": xi}[fuse_at])
    return h.realize([9, 5])


@pytest.mark.skipif(SELFTEST, reason="the reference is wrong here")
@differential()
def test_fused_at_rows_of_a_stage_fused_at_columns(hl):
    """k shares g's rows, g shares f's rows and columns: k must run once
    per row, not once per column of f (halide 21 nests k inside g's
    column iteration and applies k's update once per column). Compared
    with the unfused reference."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, k, h = hl.Func("f"), hl.Func("g"), hl.Func("k"), hl.Func("h")
    f[x, y] = x + y
    f[x, y] = f[x, y] * 3 + 1
    g[x, y] = x * 2 - y
    k[x, y] = x * y
    r = hl.RDom([(0, 3)])
    k[x, y] = k[x, y] + r.x * x
    h[x, y] = f[x, y] + g[x, y + 1] + k[x + 1, y]
    for fn in (f, g, k):
        fn.compute_root()
    if hl.__name__ != REF_MODULE:
        g.compute_with(f.update(0), x)
        k.update(0).compute_with(g, y)
    return h.realize([6, 5])


# ---------------------------------------------------------------------------
# Producers computed inside fused loops, outputs, specializations.
# ---------------------------------------------------------------------------
@differential()
@pytest.mark.parametrize("align", ["AlignStart", "AlignEnd", "NoAlign"])
def test_producer_at_fused_loop_outputs_of_different_sizes(hl, align):
    x, y = hl.Var("x"), hl.Var("y")
    inp, f, g = hl.Func("inp"), hl.Func("f"), hl.Func("g")
    inp[x, y] = x + y
    f[x, y] = inp[x, y]
    g[x, y] = inp[2 * x, 2 * y]
    inp.compute_at(f, y)
    g.compute_with(f, y, getattr(hl.LoopAlignStrategy, align))
    fb, gb = hl.Buffer(hl.Int(32), [8, 8]), hl.Buffer(hl.Int(32), [4, 5])
    hl.Pipeline([f, g]).realize([fb, gb])
    return _arr(fb), _arr(gb)


@differential()
def test_producer_at_child_fused_loop(hl):
    """A producer of the child only, computed at the parent's fused row."""
    x, y = hl.Var("x"), hl.Var("y")
    a, f, g, h = hl.Func("a"), hl.Func("f"), hl.Func("g"), hl.Func("h")
    a[x, y] = x * 5 + y
    f[x, y] = x - y
    g[x, y] = a[x - 1, y] + a[x + 1, y + 1]
    h[x, y] = f[x, y + 2] + g[x, y - 3]
    f.compute_root()
    g.compute_root()
    g.compute_with(f, y, hl.LoopAlignStrategy.AlignStart)
    a.compute_at(f, y)
    return h.realize([20, 14])


@differential()
def test_store_root_producers_at_fused_row(hl):
    """Halide's store_at_different_levels test: a sliding-window candidate."""
    x, y = hl.Var("x"), hl.Var("y")
    p1, p2, c = hl.Func("p1"), hl.Func("p2"), hl.Func("c")
    p1[x, y] = x + y
    p2[x, y] = 3 * x + 2 * y
    c[x, y] = p1[x, y - 1] + p1[x, y + 1] + p2[x, y - 1] + p2[x, y + 1]
    c.compute_root()
    p1.compute_at(c, y)
    p2.store_root().compute_at(c, y).compute_with(p1, y)
    return c.realize([16, 16])


@differential()
def test_nested_compute_with(hl):
    x, y = hl.Var("x"), hl.Var("y")
    inp, f1, f2, g1, g2 = (hl.Func(n) for n in ("inp", "f1", "f2", "g1", "g2"))
    inp[x, y] = x + y
    f1[x, y] = inp[x, y] + 20
    f2[x, y] = inp[x, y] * inp[x, y]
    g1[x, y] = f1[x, y] + x + y
    g2[x, y] = f1[x, y] * f2[x, y]
    inp.compute_at(f1, y)
    f2.compute_with(f1, y, hl.LoopAlignStrategy.AlignEnd)
    f1.compute_at(g1, y)
    f2.compute_at(g1, y)
    g2.compute_with(g1, x, hl.LoopAlignStrategy.AlignStart)
    b1, b2 = hl.Buffer(hl.Int(32), [20, 25]), hl.Buffer(hl.Int(32), [10, 20])
    hl.Pipeline([g1, g2]).realize([b1, b2])
    return _arr(b1), _arr(b2)


@differential()
@pytest.mark.parametrize("tile", [True, False])
def test_parent_with_specialization(hl, tile):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    p = hl.Param(hl.Bool(), "tile")
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.specialize(p).split(x, xo, xi, 7)
    g.compute_with(f, y, hl.LoopAlignStrategy.AlignEnd)
    p.set(tile)
    return h.realize([30, 20])


@differential()
def test_outputs_fused_with_vectorized_consumers(hl):
    """Halide's two_compute_at test (issue 6367)."""
    k = hl.Var("k")
    inp = hl.ImageParam(hl.Int(16), 2, "input1")
    o1, o2, o3 = hl.Func("output1"), hl.Func("output2"), hl.Func("output3")
    im, o1v, o3v = hl.Func("intermediate"), hl.Func("output1_value"), hl.Func("output3_value")
    im[k] = inp[k, 0] * inp[k, 1]
    o1v[k] = im[k] * im[k]
    o1[k] = o1v[k]
    o2[k] = o1v[k] + o1v[k]
    o3v[k] = inp[k, 0] + 2
    o3[k] = o3v[k]
    im.vectorize(k, 8).compute_at(o1v, k)
    o1v.vectorize(k, 8).compute_at(o2, k)
    o1.vectorize(k, 8).compute_with(o2, k)
    o2.vectorize(k, 8)
    o3v.vectorize(k, 8).compute_at(o3, k)
    o3.vectorize(k, 8).compute_with(o2, k)
    a = np.add.outer(np.arange(2), np.arange(16)).astype(np.int16)
    inp.set(hl.Buffer(a))
    bufs = [hl.Buffer(hl.Int(16), [16]) for _ in range(3)]
    hl.Pipeline([o1, o2, o3]).realize(bufs)
    return [_arr(b) for b in bufs]


@differential()
def test_different_number_of_dims(hl):
    """Halide's different_arg_num_compute_at test: fused at the outer dim."""
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    big, out_a, red, out_b = (hl.Func(n) for n in ("big", "output_a", "reduce_big", "output_b"))
    big[x, y, c] = hl.count_leading_zeros(x + y + c)
    red[c] = c + 1
    out_a[x, y, c] = 7 * big[x, y, c] / red[c]
    out_b[c] = red[c] * 5
    out_b.compute_with(out_a, c)
    big.compute_at(out_a, c)
    red.compute_at(out_a, c)
    out_a.bound(x, 0, 16).bound(y, 0, 16).bound(c, 0, 3)
    out_b.bound(c, 0, 3)
    a, b = hl.Buffer(hl.Int(32), [16, 16, 3]), hl.Buffer(hl.Int(32), [3])
    hl.Pipeline([out_a, out_b]).realize([a, b])
    return _arr(a), _arr(b)


@differential()
def test_wrapper_fused_at_outermost(hl):
    """Halide's compute_with_in test."""
    x, y = hl.Var("x"), hl.Var("y")
    one, two, three, out = hl.Func("one"), hl.Func("two"), hl.Func("three"), hl.Func("output")
    one[x, y] = x + y
    two[x, y] = one[x, y] + 2
    three[x, y] = one[x, y] + 3
    out[x, y] = two[x, y] + three[x, y]
    two.compute_root()
    one.in_(three).compute_root().compute_with(two, hl.Var.outermost())
    one.compute_root()
    one.compute_at(two, hl.Var.outermost())
    return out.realize([16, 16])


@differential()
def test_fused_funcs_reading_inlined_funcs(hl):
    """Halide's compute_with_inlined test."""
    x, y = hl.Var("x"), hl.Var("y")
    one, three = hl.Func("one"), hl.Func("three")
    one[x, y] = x + y
    two = [hl.Func("two%d" % i) for i in range(4)]
    two[0][x, y] = one[x, y]
    for j in range(1, 4):
        two[j][x, y] = one[x, y] + j
    temp = 0
    for j in range(4):
        temp = temp + two[j][x, y] / 4
    three[x, y] = temp
    two[0].compute_root()
    for i in range(1, 4):
        two[i].compute_root().compute_with(two[0], hl.Var.outermost())
    one.compute_at(two[0], hl.Var.outermost())
    three.compute_root()
    return three.realize([64, 64])


@differential()
def test_tuples(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = (x + y, hl.f32(x) * 0.5)
    g[x, y] = (x - y, y * 3, hl.i16(x))
    h[x, y] = f[x - 1, y][0] + g[x, y + 2][1] + hl.i32(f[x, y][1]) + hl.i32(g[x + 1, y][2])
    f.compute_root()
    g.compute_root()
    g.compute_with(f, x, hl.LoopAlignStrategy.AlignStart)
    return h.realize([13, 11])


@differential()
def test_tuple_outputs(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = (x + y, x * y)
    g[x, y] = (x - y, x * 2)
    g.compute_with(f, y, hl.LoopAlignStrategy.AlignEnd)
    bufs = [hl.Buffer(hl.Int(32), [7, 6]), hl.Buffer(hl.Int(32), [7, 6]),
            hl.Buffer(hl.Int(32), [5, 9]), hl.Buffer(hl.Int(32), [5, 9])]
    hl.Pipeline([f, g]).realize(bufs)
    return [_arr(b) for b in bufs]


@differential()
@pytest.mark.parametrize("output", ["parent", "child"])
def test_output_fused_with_a_producer(hl, output):
    """One member of the group is an output, the other a root producer of
    another output."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    g[x, y] = x * y
    h[x, y] = g[x + 1, y] - g[x, y + 1]
    g.compute_root()
    if output == "parent":
        g.compute_with(f, y, hl.LoopAlignStrategy.AlignEnd)
    else:
        f.compute_with(g, x, hl.LoopAlignStrategy.AlignStart)
    fb, hb = hl.Buffer(hl.Int(32), [6, 5]), hl.Buffer(hl.Int(32), [7, 4])
    hl.Pipeline([f, h]).realize([fb, hb])
    return _arr(fb), _arr(hb)


# ---------------------------------------------------------------------------
# Update stages.
# ---------------------------------------------------------------------------
BASE = 31


def _updating(hl, n_updates, names="fg"):
    x, y = hl.Var("x"), hl.Var("y")
    funcs = []
    for i, n in enumerate(names):
        fn = hl.Func(n)
        fn[x, y] = 1 + 4 * i
        for u in range(n_updates):
            fn[x, y] = (2 + u + 4 * i) + BASE * fn[x, y] + x - y
        fn.compute_root()
        fn.bound(x, 0, 24).bound(y, 0, 20)
        funcs.append(fn)
    return x, y, funcs


def _realize_funcs(hl, funcs):
    bufs = [hl.Buffer(hl.Int(32), [24, 20]) for _ in funcs]
    hl.Pipeline(funcs).realize(bufs)
    return [_arr(b) for b in bufs]


@differential()
def test_update_fused_with_update(hl):
    x, y, (f, g) = _updating(hl, 2)
    f.update(1).compute_with(g.update(0), y)
    return _realize_funcs(hl, [f, g])


@differential()
def test_two_updates_fused_with_one_update(hl):
    x, y, (f, g) = _updating(hl, 2)
    f.update(0).compute_with(g.update(0), y)
    f.update(1).compute_with(g.update(0), y)
    return _realize_funcs(hl, [f, g])


@differential()
def test_every_stage_fused_with_a_pure_stage(hl):
    x, y, (f, g) = _updating(hl, 2)
    f.compute_with(g, y)
    f.update(0).compute_with(g, y)
    f.update(1).compute_with(g, y)
    return _realize_funcs(hl, [f, g])


@differential()
def test_updates_fused_pairwise(hl):
    x, y, (f, g) = _updating(hl, 2)
    f.compute_with(g, y)
    f.update(0).compute_with(g.update(0), y)
    f.update(1).compute_with(g.update(1), x)
    return _realize_funcs(hl, [f, g])


@differential(expect_error=True)
def test_updates_fused_zigzag(hl):
    """Disabled in Halide's suite: its check refuses fusing f into g and g
    into f, even through different stages."""
    x, y, (f, g) = _updating(hl, 3)
    f.compute_with(g, y)
    g.update(0).compute_with(f.update(0), y)
    f.update(1).compute_with(g.update(1), y)
    g.update(2).compute_with(f.update(2), y)
    return _realize_funcs(hl, [f, g])


@differential()
def test_updates_fused_diagonally(hl):
    x, y, (f, g, h) = _updating(hl, 2, "fgh")
    f.update(1).compute_with(g.update(0), y)
    g.update(0).compute_with(h, y)
    f.update(0).unscheduled()
    g.update(1).unscheduled()
    return _realize_funcs(hl, [f, g, h])


@differential()
def test_update_with_rvars_fused_with_pure_stage(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    r = hl.RDom([(0, 5)])
    f[x, y] = x + y
    f[x, y] += r.x * (x - y)
    g[x, y] = x * y
    h[x, y] = f[x, y] + g[x + 1, y - 1]
    f.compute_root()
    g.compute_root()
    f.update(0).compute_with(g, y, hl.LoopAlignStrategy.AlignStart)
    return h.realize([11, 9])


@differential()
def test_rfactored_updates_fused_over_rvar(hl):
    """Halide's update_stage_rfactor test."""
    x = hl.Var("x")
    f0, f1, cost = hl.Func("f0"), hl.Func("f1"), hl.Func("cost")
    f0[x] = x
    f1[x] = x * 3
    r = hl.RDom([(0, 100)])
    cost[()] = 0
    cost[()] += f0[r.x]
    cost[()] += f1[r.x]
    f0.compute_root()
    f1.compute_root()
    tmp1 = cost.update(0).rfactor([])
    tmp2 = cost.update(1).rfactor([])
    tmp1.compute_root()
    tmp2.compute_root()
    tmp1.update().compute_with(tmp2.update(), r.x)
    return cost.realize([])


@differential()
def test_rvar_tiles_fused_with_producers_inside(hl):
    """Halide's rvar_bounds test: producers of both stages per outer tile."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Int(16), 2, "input")
    ic, a1, m2 = hl.Func("input_c"), hl.Func("add_1"), hl.Func("mul_2")
    s1, s2, tot = hl.Func("sum_1"), hl.Func("sum_2"), hl.Func("total_sum")
    r = hl.RDom(inp)
    ic[x, y] = inp[x, y]
    a1[x, y] = ic[x, y] + 1
    m2[x, y] = ic[x, y] * 2
    s1[()] = hl.i16(0)
    s2[()] = hl.i16(0)
    s1[()] += a1[r.x, r.y]
    s2[()] += m2[r.x, r.y]
    tot[()] = s1[()] + s2[()]
    rxo, rxi, ryo, ryi = hl.RVar("rxOuter"), hl.RVar("rxInner"), hl.RVar("ryOuter"), hl.RVar("ryInner")
    s1.update(0).tile(r.x, r.y, rxo, ryo, rxi, ryi, 8, 8)
    s2.update(0).tile(r.x, r.y, rxo, ryo, rxi, ryi, 8, 8)
    a1.compute_at(s2, rxo)
    m2.compute_at(s2, rxo)
    ic.compute_at(s2, rxo)
    s1.update(0).compute_with(s2.update(0), rxo)
    s1.compute_root()
    s2.compute_root()
    tot.compute_root()
    a = (np.arange(64 * 32).reshape(64, 32) % 5).astype(np.int16)
    inp.set(hl.Buffer(a))
    return tot.realize([])


@differential()
def test_child_var_dependent_bounds(hl):
    """Halide's issue 8149: producers of the child at a fused loop use the
    child's own variable, and the two outputs have different mins."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, fi, gi = hl.Func("f"), hl.Func("g"), hl.Func("f_inter"), hl.Func("g_inter")
    r = hl.RDom([(0, 10)], "r")
    fi[x, y] = x
    fi[x, y] += 1
    f[x] = x
    f[x] += fi[x, r]
    gi[x, y] = x
    gi[x, y] += 1
    g[x] = x
    g[x] += gi[x, r]
    fi.compute_at(f, r)
    gi.compute_at(f, r)
    g.update().compute_with(f.update(), r)
    f.update().unscheduled()
    fb, gb = hl.Buffer(hl.Int(32), [10]), hl.Buffer(hl.Int(32), [10])
    fb.set_min([2])
    hl.Pipeline([f, g]).realize([fb, gb])
    return _arr(fb), _arr(gb)


@differential()
def test_overlapping_updates(hl):
    x = hl.Var("x")
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = 0
    f[x] += x
    g[x] = 0
    g[x] += x
    g.update().compute_with(f.update(), x)
    f.update().unscheduled()
    fb, gb = hl.Buffer(hl.Int(32), [10]), hl.Buffer(hl.Int(32), [10])
    fb.set_min([2])
    hl.Pipeline([f, g]).realize([fb, gb])
    return _arr(fb), _arr(gb)


@differential()
def test_multiple_fuse_groups(hl):
    x, y, t = hl.Var("x"), hl.Var("y"), hl.Var("t")
    f, g, h, p, q = (hl.Func(n) for n in "fghpq")
    f[x, y] = x + y
    f[x, y] += y
    g[x, y] = 10
    g[x, y] += x - y
    h[x, y] = 0
    r = hl.RDom([(0, 39), (50, 77)])
    h[r.x, r.y] -= r.x + r.y
    h[r.x, r.y] += r.x * r.x
    h[x, y] += f[x, y] + g[x, y]
    p[x, y] = x + 2
    q[x, y] = h[x, y] + 2 + p[x, y]
    for fn in (f, g, h, p):
        fn.compute_root()
    p.fuse(x, y, t).parallel(t)
    h.fuse(x, y, t).parallel(t)
    h.compute_with(p, t)
    for i in range(3):
        h.update(i).unscheduled()
    f.update(0).compute_with(g, y, hl.LoopAlignStrategy.AlignEnd)
    f.compute_with(g, x)
    return q.realize([140, 140])


# ---------------------------------------------------------------------------
# The fused loops are one loop nest.
# ---------------------------------------------------------------------------
def _loops(stmt):
    return [line.strip().split(",")[0][len("for ("):] for line in stmt.splitlines()
            if line.strip().startswith("for (")]


def test_lowered_stmt_has_one_loop_over_the_fused_rows(tmp_path):
    hl = pytest.importorskip("ferrohalide")
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(f, y, hl.LoopAlignStrategy.AlignStart)
    path = tmp_path / "h.stmt"
    h.compile_to_lowered_stmt(str(path), [])
    stmt = path.read_text()
    F, G = f.name(), g.name()
    loops = _loops(stmt)
    assert not any(l in (F + ".s0.y", G + ".s0.y") for l in loops), loops
    assert F + ".s0.fused.y" in loops, loops
    # g's row loop is gone: its columns run inside the fused row loop,
    # right after f's.
    body = stmt[stmt.index("for (%s.s0.fused.y" % F):stmt.index("consume " + F)]
    assert body.index("for (%s.s0.x" % F) < body.index("for (%s.s0.x" % G), body


def test_lowered_stmt_fused_at_columns_shares_both_loops(tmp_path):
    hl = pytest.importorskip("ferrohalide")
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(f, x)
    path = tmp_path / "h.stmt"
    h.compile_to_lowered_stmt(str(path), [])
    F, G = f.name(), g.name()
    loops = set(_loops(path.read_text()))
    assert not loops & {G + ".s0.x", G + ".s0.y", F + ".s0.x", F + ".s0.y"}, loops
    assert {F + ".s0.fused.y", F + ".s0.fused.x"} <= loops, loops


# ---------------------------------------------------------------------------
# Errors.
# ---------------------------------------------------------------------------
@differential(expect_error=True)
def test_error_fused_with_itself(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    f[x, y] += 2
    f.update(0).compute_with(f, x)


@differential(expect_error=True)
def test_error_pure_fused_with_own_update(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    f[x, y] += 2
    f.compute_with(f.update(0), x)


@differential(expect_error=True)
def test_error_root_level(hl):
    x, y, f, g, h = _two(hl)
    g.compute_with(hl.LoopLevel.root())


@differential(expect_error=True)
def test_error_undefined_loop_level(hl):
    x, y, f, g, h = _two(hl)
    g.compute_with(hl.LoopLevel())


@differential(expect_error=True)
def test_error_locked_loop_level_set(hl):
    x, y, f, g, h = _two(hl)
    ll = hl.LoopLevel(f, y, 0)
    g.compute_with(ll)
    ll.set(hl.LoopLevel(f, x, 0))


@differential(expect_error=True)
def test_error_level_without_stage(hl):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    g.compute_with(hl.LoopLevel(f, y))
    h.realize([10, 10])


@differential(expect_error=True)
@pytest.mark.parametrize("args", ["no_var", "int_align", "str_var", "bad_pair", "undefined"])
def test_error_bad_arguments(hl, args):
    x, y, f, g, h = _two(hl)
    if args == "no_var":
        g.compute_with(f)
    elif args == "int_align":
        g.compute_with(f, x, 3)
    elif args == "str_var":
        g.compute_with(f, "y")
    elif args == "bad_pair":
        g.compute_with(f, y, [(y, hl.LoopAlignStrategy.AlignEnd, 1)])
    else:
        g.compute_with(hl.Func("undefined"), y)


@differential(expect_error=True)
@pytest.mark.parametrize("when", ["before", "after"])
def test_error_child_with_specialization(hl, when):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    p = hl.Param(hl.Bool(), "p")
    if when == "before":
        g.specialize(p).vectorize(x, 4)
        g.compute_with(f, y)
    else:
        g.compute_with(f, y)
        g.specialize(p).vectorize(x, 4)
        h.realize([10, 10])


@differential(expect_error=True)
def test_error_compute_with_on_a_specialization(hl):
    x, y, f, g, h = _two(hl)
    p = hl.Param(hl.Bool(), "p")
    g.specialize(p).compute_with(f, y)


@differential(expect_error=True)
def test_error_parent_specialization_loses_the_var(hl):
    """Halide's compute_with_fuse_in_specialization test."""
    x, y, fv = hl.Var("x"), hl.Var("y"), hl.Var("fv")
    inp = hl.ImageParam(hl.Int(16), 2, "in")
    out0, out1 = hl.Func("out0"), hl.Func("out1")
    out0[x, y] = 1 * inp[x, y]
    out1[x, y] = 2 * inp[x, y]
    out0.vectorize(x, 8, hl.TailStrategy.RoundUp)
    out1.vectorize(x, 8, hl.TailStrategy.RoundUp).compute_with(out0, x)
    out0.specialize(inp.dim(1).stride() == 128).fuse(x, y, fv)
    hl.Pipeline([out0, out1]).compile_jit()


@differential(expect_error=True)
def test_error_parent_not_used(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    g[x, y] = x - y
    h[x, y] = g[x, y]
    f.compute_root()
    g.compute_root()
    g.compute_with(f, y)
    h.realize([10, 10])


@differential(expect_error=True)
def test_error_group_used_in_part(hl):
    """Halide's bad_compute_with_parent_func_not_used test."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h, p = hl.Func("f"), hl.Func("g"), hl.Func("h"), hl.Func("p")
    f[x, y] = x + y
    g[x, y] = x - y
    p[x, y] = x * y
    h[x, y] = g[x + 2, y - 2] + p[x, y]
    h[x, y] += f[x - 1, y + 1]
    f.compute_at(h, y)
    g.compute_at(h, y)
    p.compute_at(h, y)
    p.compute_with(f, x)
    g.compute_with(f, x)
    h.realize([20, 20])


@differential(expect_error=True)
@pytest.mark.parametrize("case", [1, 2])
def test_error_stages_out_of_order(hl, case):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y
    f[x, y] += 1
    g[x, y] = x - y
    if case == 1:
        f[x, y] += 1
        f.compute_root()
        g.compute_root()
        f.compute_with(g, y)
        f.update(1).compute_with(g, y)
    else:
        g[x, y] += 1
        f.compute_root()
        g.compute_root()
        f.compute_with(g.update(0), y)
        f.update(0).compute_with(g, y)
    hl.Pipeline([f, g]).realize([20, 20])


@differential(expect_error=True)
@pytest.mark.parametrize("how", ["direct", "indirect"])
def test_error_dependency_between_fused_funcs(hl, how):
    x, y = hl.Var("x"), hl.Var("y")
    f, g, k, h = hl.Func("f"), hl.Func("g"), hl.Func("k"), hl.Func("h")
    f[x, y] = x + y
    if how == "direct":
        g[x, y] = f[x, y] * 2
    else:
        k[x, y] = f[x, y] + 1
        g[x, y] = k[x, y] * 2
    h[x, y] = f[x, y] + g[x, y]
    f.compute_root()
    g.compute_root()
    g.compute_with(f, y)
    h.realize([10, 10])


@differential(expect_error=True)
@pytest.mark.parametrize("length", [2, 3])
def test_error_cycle(hl, length):
    x, y, f, g, k, h = _three(hl)
    for fn in (f, g, k):
        fn.compute_root()
    g.compute_with(f, y)
    if length == 2:
        f.compute_with(g, y)
    else:
        k.compute_with(g, y)
        f.compute_with(k, y)
    h.realize([10, 10])


@differential(expect_error=True)
@pytest.mark.parametrize("case", ["levels", "child_inline", "parent_inline"])
def test_error_compute_levels(hl, case):
    x, y, f, g, h = _two(hl)
    if case == "levels":
        f.compute_root()
        g.compute_at(h, y)
    elif case == "child_inline":
        f.compute_root()
    else:
        g.compute_root()
    g.compute_with(f, y)
    h.realize([10, 10])


@differential(expect_error=True)
@pytest.mark.parametrize("case", ["reordered", "more_dims", "missing_var", "renamed"])
def test_error_dims_do_not_match(hl, case):
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    if case == "more_dims":
        g[x, y, z] = x - y
        h[x, y] = f[x, y] + g[x, y, 0]
    elif case == "missing_var":
        g[x, z] = x - z
        h[x, y] = f[x, y] + g[x, y]
    else:
        g[x, y] = x - y
        h[x, y] = f[x, y] + g[x, y]
    f.compute_root()
    g.compute_root()
    if case == "reordered":
        g.reorder(y, x)
        g.compute_with(f, x)
    elif case == "renamed":
        g.rename(y, z)
        g.compute_with(f, x)
    else:
        g.compute_with(f, y)
    h.realize([10, 10])


@differential(expect_error=True)
@pytest.mark.parametrize("which", ["parallel_parent", "parallel_child", "vectorized", "unrolled"])
def test_error_loop_types_do_not_match(hl, which):
    x, y, f, g, h = _two(hl)
    f.compute_root()
    g.compute_root()
    if which == "parallel_parent":
        f.parallel(y)
    elif which == "parallel_child":
        g.parallel(y)
    elif which == "vectorized":
        f.vectorize(x)
    else:
        f.unroll(x)
    g.compute_with(f, x)
    h.realize([16, 10])


@differential(expect_error=True)
def test_error_whole_fused_dims_vectorized(hl):
    """The shared loop spans both Funcs' ranges: not a constant extent."""
    x, y, f, g, h = _two(hl)
    f.compute_root().vectorize(x)
    g.compute_root().vectorize(x)
    g.compute_with(f, x)
    h.realize([4, 10])


@differential(expect_error=True)
def test_error_rvar_kinds_do_not_match(hl):
    """A pure RVar fused with an impure one."""
    x = hl.Var("x")
    f, g = hl.Func("f"), hl.Func("g")
    r = hl.RDom([(0, 10)])
    f[x] = 0
    f[r.x] = f[r.x] + r.x
    g[x] = 0
    g[r.x % 3] += r.x
    g.update().compute_with(f.update(), r.x)
    hl.Pipeline([f, g]).realize([10])


@differential(expect_error=True)
def test_error_rfactor_changes_the_fused_loops(hl):
    x = hl.Var("x")
    f, g = hl.Func("f"), hl.Func("g")
    r = hl.RDom([(0, 8), (0, 4)])
    f[x] = 0
    f[x] += r.x + r.y + x
    g[x] = 0
    g[x] += r.x * r.y + x
    g.update().compute_with(f.update(), r.y)
    # f's update keeps only r.x: the fused loop over r.y is gone.
    f.update().rfactor(r.x, hl.Var("v"))
    hl.Pipeline([f, g]).realize([6])


# ---------------------------------------------------------------------------
# Random plans: 2-4 Funcs of one input, fused in a random tree with random
# splits, tails, alignments, loop types, update stages, specializations,
# compute levels and a producer computed inside the shared loops. A plan is
# plain data drawn from random.Random(seed), built identically with both
# modules; every plan is valid.
# ---------------------------------------------------------------------------
def make_plan(seed):
    rng = random.Random(seed)
    n = rng.choice([2, 3, 3, 4])
    split_y, split_x = rng.random() < 0.5, rng.random() < 0.5
    consumer = rng.random() < 0.65
    tails = ["RoundUp", "GuardWithIf", "ShiftInwards"] if consumer else ["GuardWithIf"]
    leaves = [dict(
        scale=rng.choice([(1, 1), (1, 1), (2, 2), (2, 1)]),
        offset=(rng.randint(-2, 2), rng.randint(-2, 2)),
        read=(rng.randint(-3, 3), rng.randint(-3, 3)),
        tuple=rng.random() < 0.2,
        update=rng.choice(["none", "none", "pure", "rdom"]),
        fy=rng.choice([2, 3, 4, 5]) if split_y else 0,
        fx=rng.choice([2, 3, 4, 8]) if split_x else 0,
        tail_y=rng.choice(tails), tail_x=rng.choice(tails),
        vec=consumer and split_x and rng.random() < 0.3,
        size=(rng.randint(4, 20), rng.randint(3, 15)),
    ) for _ in range(n)]
    dims = (["xi", "xo"] if split_x else ["x"]) + (["yi", "yo"] if split_y else ["y"])
    inside = rng.random() < 0.4
    fusions = []
    for c in range(1, n):
        p = rng.randrange(c)
        # Not at loops vectorized or unrolled (L0's specialization).
        choices = [d for d in dims[1:] if d != "xi" or not (leaves[c]["vec"] or leaves[p]["vec"])]
        if not inside:
            choices.append("outermost")
        if rng.random() < 0.5:
            align = rng.choice(ALIGNS)
        else:
            align = [(d, rng.choice(ALIGNS[:3])) for d in dims if rng.random() < 0.7]
        # (A producer computed inside L0's loops needs every pure stage there.)
        stages = (int(leaves[c]["update"] != "none" and not inside and rng.random() < 0.5),
                  int(leaves[p]["update"] != "none" and not inside and rng.random() < 0.3))
        fusions.append((c, p, rng.choice(choices), align, stages))
    parallel = rng.random() < 0.3
    return dict(leaves=leaves, consumer=consumer, fusions=fusions,
                level=rng.choice(["root", "row", "row_tile"]),
                parallel=parallel, spec=rng.choice([None, None, True, False]),
                inp=rng.choice(["inline", "root", "inside" if inside else "root"]),
                inp_store_root=rng.random() < 0.4 and not parallel, size=(rng.randint(5, 30), rng.randint(3, 20)))


def run_plan(hl, plan, fused=True):
    x, y = hl.Var("x"), hl.Var("y")
    V = {n: hl.Var(n) for n in ("xo", "xi", "yo", "yi")}
    V.update(x=x, y=y, outermost=hl.Var.outermost())
    inp = hl.Func("inp")
    inp[x, y] = x * 7 + y * 3 + (x * y) % 5
    leaves = []
    for i, L in enumerate(plan["leaves"]):
        f = hl.Func("L%d" % i)
        (sx, sy), (dx, dy) = L["scale"], L["offset"]
        v = inp[sx * x + dx, sy * y + dy] + i * (x - y)
        f[x, y] = (v, hl.i16(x + i)) if L["tuple"] else v
        old = f[x, y]
        first = old[0] if L["tuple"] else old
        if L["update"] == "pure":
            new = first * 3 + 1
        elif L["update"] == "rdom":
            new = first + hl.RDom([(0, 3)]).x * x
        if L["update"] != "none":
            f[x, y] = (new, old[1]) if L["tuple"] else new
        leaves.append(f)
    T = hl.TailStrategy
    for i, (f, L) in enumerate(zip(leaves, plan["leaves"])):
        stages = [f] + ([f.update(0)] if L["update"] != "none" else [])
        for k, s in enumerate(stages):
            if L["fy"]:
                s.split(y, V["yo"], V["yi"], L["fy"], getattr(T, L["tail_y"] if k == 0 else "GuardWithIf"))
            if L["fx"]:
                s.split(x, V["xo"], V["xi"], L["fx"], getattr(T, L["tail_x"] if k == 0 else "GuardWithIf"))
                if L["vec"] and k == 0:
                    s.vectorize(V["xi"])
            if plan["parallel"]:
                s.parallel(V["yo"] if L["fy"] else y)
    if plan["spec"] is not None:
        # Keeps L0's loops from the fused vars outwards.
        p = hl.Param(hl.Bool(), "p")
        p.set(plan["spec"])
        leaves[0].specialize(p).unroll(V["xi"] if plan["leaves"][0]["fx"] else x, 2)
    A = hl.LoopAlignStrategy
    for c, p, var, align, (sc, sp) in (plan["fusions"] if fused else []):
        al = [(V[d], getattr(A, a)) for d, a in align] if isinstance(align, list) else getattr(A, align)
        child = leaves[c].update(0) if sc else leaves[c]
        parent = leaves[p].update(0) if sp else leaves[p]
        child.compute_with(parent, V[var], al)
    if plan["inp"] == "root":
        inp.compute_root()
    elif plan["inp"] == "inside" and fused:
        inp.compute_at(leaves[0], V["yo" if plan["leaves"][0]["fy"] else "y"])
        if plan["inp_store_root"]:
            inp.store_root()
    if not plan["consumer"]:
        bufs = [hl.Buffer(t, list(L["size"])) for L in plan["leaves"]
                for t in ([hl.Int(32), hl.Int(16)] if L["tuple"] else [hl.Int(32)])]
        hl.Pipeline(leaves).realize(bufs)
        return [_arr(b) for b in bufs]
    h = hl.Func("h")
    e = 0
    for f, L in zip(leaves, plan["leaves"]):
        v = f[x + L["read"][0], y + L["read"][1]]
        e = e + (v[0] + hl.i32(v[1]) if L["tuple"] else v)
    h[x, y] = e
    for f in leaves:
        if plan["level"] == "root":
            f.compute_root()
        else:
            f.compute_at(h, V["yo"] if plan["level"] == "row_tile" else y)
    if plan["level"] == "row_tile":
        h.split(y, V["yo"], V["yi"], 3, T.GuardWithIf)
    return h.realize(list(plan["size"]))


# Plans for which halide 21 computes wrong values (see the tests above:
# a guard of the parent around a child, a child nested in an inner loop):
# compared with the same plan without compute_with.
REFERENCE_WRONG = [7, 12, 16, 22]
RANDOM_SEEDS = [s for s in range(40) if s not in REFERENCE_WRONG]


@differential()
@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_plan(hl, seed):
    return run_plan(hl, make_plan(seed))


@pytest.mark.skipif(SELFTEST, reason="the reference is wrong here")
@differential()
@pytest.mark.parametrize("seed", REFERENCE_WRONG)
def test_random_plan_where_the_reference_is_wrong(hl, seed):
    return run_plan(hl, make_plan(seed), fused=hl.__name__ != REF_MODULE)
