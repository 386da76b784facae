"""Sliding window and storage folding: Funcs stored outside the loop they are
computed in reuse what earlier iterations computed, and fold their storage.
Results must be bit-exact with the reference whatever the schedule; the
lowered statements are checked in crates/core/tests/sliding_window.rs."""
import numpy as np
import pytest

from .harness import differential


def _input(hl, w, h, seed=1):
    rng = np.random.default_rng(seed)
    return hl.Buffer(rng.integers(0, 4096, size=(h, w), dtype=np.uint16))


def _blur(hl, inp):
    x, y = hl.Var("x"), hl.Var("y")
    bx, out = hl.Func("blur_x"), hl.Func("out")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    out[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3
    return bx, out, x, y


@differential()
def test_lesson_8_store_root_compute_at_y(hl):
    """Tutorial lesson 8: the producer is stored at the root and computed
    per scanline of the consumer, which then only computes one new row."""
    x, y = hl.Var("x"), hl.Var("y")
    producer, consumer = hl.Func("producer"), hl.Func("consumer")
    producer[x, y] = (x * 7 + y * 13) % 101
    consumer[x, y] = (producer[x, y] + producer[x, y + 1]
                      + producer[x + 1, y] + producer[x + 1, y + 1])
    producer.store_root().compute_at(consumer, y)
    return consumer.realize([41, 29])


@differential()
@pytest.mark.parametrize("size", [(8, 4), (21, 13), (64, 9)])
def test_store_at_y_compute_at_x_vectorized(hl, size):
    inp = _input(hl, size[0] + 2, size[1] + 2)
    bx, out, x, y = _blur(hl, inp)
    out.vectorize(x, 4)
    bx.store_at(out, y).compute_at(out, x).vectorize(x, 4)
    return out.realize(list(size))


@differential()
@pytest.mark.parametrize("size", [(8, 32), (13, 33), (64, 64), (100, 77), (259, 97)])
def test_benchmark_schedule(hl, size):
    """The classic blur: strips of 32 rows in parallel, blur_x computed per
    vector of the output: it slides along both yi and x and folds in y."""
    w, h = size
    inp = _input(hl, w + 2, h + 2)
    bx, out, x, y = _blur(hl, inp)
    yi = hl.Var("yi")
    out.split(y, y, yi, 32).parallel(y).vectorize(x, 8)
    bx.store_at(out, y).compute_at(out, x).vectorize(x, 8)
    return out.realize([w, h])


@differential()
@pytest.mark.parametrize("mins", [(0, 0), (3, 5), (17, 1)])
def test_benchmark_schedule_nonzero_output_min(hl, mins):
    inp = _input(hl, 120, 110)
    bx, out, x, y = _blur(hl, inp)
    yi = hl.Var("yi")
    out.split(y, y, yi, 32).parallel(y).vectorize(x, 8)
    bx.store_at(out, y).compute_at(out, x).vectorize(x, 8)
    buf = hl.Buffer(hl.UInt(16), [93, 71])
    buf.set_min(list(mins))
    out.realize(buf)
    return buf


@differential()
def test_stencil_reading_upward(hl):
    """The consumer reads rows y-2..y: the window still grows with y."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 3 + y * y
    g[x, y] = f[x, y - 1] * 2 + f[x, y - 2] - f[x, y]
    f.store_root().compute_at(g, y)
    return g.realize([17, 23])


@differential()
def test_window_moving_down(hl):
    """The consumer reads rows 40-y..42-y: the window shrinks as y grows,
    so the producer slides the other way (its max is cut)."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 5 - y * 3
    g[x, y] = f[x, 40 - y] + f[x, 41 - y] * 3 + f[x, 42 - y]
    f.store_root().compute_at(g, y)
    return g.realize([11, 19])


@differential()
def test_window_moving_down_folded_explicitly(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 5 - y * 3
    g[x, y] = f[x, 40 - y] + f[x, 41 - y] * 3 + f[x, 42 - y]
    f.store_root().compute_at(g, y).fold_storage(y, 3, False)
    return g.realize([11, 19])


@differential()
@pytest.mark.parametrize("levels", ["root", "at_y"])
def test_chain_of_three_stages(hl, levels):
    """Sliding into sliding: each stage's region follows the (already cut)
    region of its consumer."""
    inp = _input(hl, 60, 60, seed=2)
    x, y = hl.Var("x"), hl.Var("y")
    a, b, c = hl.Func("a"), hl.Func("b"), hl.Func("c")
    a[x, y] = inp[x, y] ^ (inp[x + 1, y] >> 1)
    b[x, y] = a[x, y] + a[x, y + 1] * 2 + a[x, y + 2]
    c[x, y] = b[x, y + 2] - b[x, y] + b[x + 1, y + 1]
    if levels == "root":
        a.store_root().compute_at(c, y)
        b.store_root().compute_at(c, y)
    else:
        yo, yi = hl.Var("yo"), hl.Var("yi")
        c.split(y, yo, yi, 8)
        a.store_at(c, yo).compute_at(c, yi)
        b.store_at(c, yo).compute_at(c, yi)
    return c.realize([50, 50])


@differential()
@pytest.mark.parametrize("tail", ["RoundUp", "GuardWithIf", "ShiftInwards", "Auto"])
@pytest.mark.parametrize("dim", ["x", "y"])
def test_producer_split_tail_strategies(hl, tail, dim):
    """A split producer whose cut region is smaller than the split factor:
    ShiftInwards tiles reach back over computed values (the input is read
    from an offset so the shifted first tile stays inside it)."""
    inp = _input(hl, 80, 80, seed=3)
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = inp[x + 4, y + 4] * 3 + inp[x + 5, y + 5]
    g[x, y] = f[x, y] + f[x, y + 1] + f[x, y + 2] + f[x + 3, y]
    o, i = hl.Var("o"), hl.Var("i")
    f.store_root().compute_at(g, y).split(x if dim == "x" else y, o, i, 4,
                                           getattr(hl.TailStrategy, tail))
    return g.realize([37, 29])


@differential()
def test_slides_over_both_loops(hl):
    """Stored at the root and computed per pixel: the producer slides along
    x inside each row and along y across rows."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 11 + y * 7
    g[x, y] = f[x, y] + f[x + 1, y + 1] + f[x + 2, y + 2]
    f.store_root().compute_at(g, x)
    return g.realize([23, 17])


@differential()
def test_unrolled_compute_loop(hl):
    inp = _input(hl, 40, 40, seed=4)
    bx, out, x, y = _blur(hl, inp)
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out.split(y, yo, yi, 4).unroll(yi)
    bx.store_at(out, yo).compute_at(out, yi)
    return out.realize([30, 32])


@differential()
def test_clamped_access(hl):
    """A boundary condition (clamp) keeps the window monotonic."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 100
    g[x, y] = f[x, hl.clamp(y - 1, 0, 20)] + f[x, hl.clamp(y + 1, 0, 20)]
    f.store_root().compute_at(g, y)
    return g.realize([9, 21])


@differential()
def test_non_monotonic_access_is_recomputed(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 2 + y * 9
    g[x, y] = f[x, (y * 7) % 5] + f[x, (y * 3) % 4]
    f.store_root().compute_at(g, y)
    return g.realize([9, 12])


def _fold_pipeline(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 10
    g[x, y] = f[x, y] + f[x, y + 1] * 2 + f[x, y + 2]
    return f, g, x, y


@differential()
@pytest.mark.parametrize("factor", [3, 4, 5, 8])
def test_fold_storage(hl, factor):
    f, g, x, y = _fold_pipeline(hl)
    f.store_root().compute_at(g, y).fold_storage(y, factor)
    return g.realize([5, 10])


@differential(expect_error=True)
@pytest.mark.parametrize("factor", [0, 2])
def test_fold_storage_too_small(hl, factor):
    f, g, x, y = _fold_pipeline(hl)
    f.store_root().compute_at(g, y).fold_storage(y, factor)
    g.realize([5, 10])


@differential(expect_error=True)
def test_fold_storage_unknown_var(hl):
    f, g, x, y = _fold_pipeline(hl)
    f.store_root().compute_at(g, y).fold_storage(hl.Var("z"), 4)
    g.realize([5, 10])


@differential()
@pytest.mark.parametrize("where", ["root", "inline", "other_dim", "inner_loop"])
def test_fold_storage_where_it_does_not_apply(hl, where):
    """Halide ignores a fold that no loop walks along."""
    f, g, x, y = _fold_pipeline(hl)
    if where == "root":
        f.compute_root().fold_storage(y, 4)
    elif where == "inline":
        f.fold_storage(y, 4)
    elif where == "other_dim":
        f.store_root().compute_at(g, y).fold_storage(x, 4)
    else:
        f.store_root().compute_at(g, x).fold_storage(y, 3)
    return g.realize([5, 10])


@differential()
def test_fold_storage_with_vectorized_consumer(hl):
    """A dimension a vectorized loop walks is not folded automatically, but
    can be on request."""
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    out = {}
    for fold in [False, True]:
        f, g = hl.Func("f"), hl.Func("g")
        f[x, y] = x + y * 10
        g[x, y] = f[x, y] + f[x, y + 1]
        g.split(y, yo, yi, 4).vectorize(yi)
        f.store_root().compute_at(g, yo)
        if fold:
            f.fold_storage(y, 8)
        out[str(fold)] = g.realize([5, 16])
    return out


def _producer_with_updates(hl, kind):
    """A producer with update definitions, read over a 3-row window."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (x * 7 + y * 13) % 101
    r = hl.RDom([(0, 5)])
    if kind == "pure":
        f[x, y] += 1
        f[x, y] = f[x, y] * 3
    elif kind == "rdom_along_x":
        f[r.x, y] = f[r.x, y] + f[r.x + 1, y] * 2
    elif kind == "scan_along_y":
        # Rows depend on each other: not slid; results must still match.
        f[x, r.x] = f[x, r.x] + f[x, r.x - 1]
    elif kind == "rdom_along_y":
        f[x, r.x] = f[x, r.x] * 5
    return f, x, y


@differential()
@pytest.mark.parametrize("kind", ["pure", "rdom_along_x", "scan_along_y", "rdom_along_y"])
@pytest.mark.parametrize("level", ["store_root", "store_at_yo"])
def test_producer_with_updates(hl, kind, level):
    """A producer with update stages computed per row of its consumer and
    stored outside: when every update runs over the pure row variable and
    reads its own row only, each iteration computes the new rows through
    all stages."""
    f, x, y = _producer_with_updates(hl, kind)
    g = hl.Func("g")
    g[x, y] = f[x, y - 1] + f[x, y] * 2 + f[x, y + 1]
    if level == "store_root":
        f.store_root().compute_at(g, y)
    else:
        yo, yi = hl.Var("yo"), hl.Var("yi")
        g.split(y, yo, yi, 8)
        f.store_at(g, yo).compute_at(g, yi)
    out = hl.Buffer(hl.Int(32), [11, 19])
    out.set_min([-2, -3])
    g.realize(out)
    return out


@differential()
@pytest.mark.parametrize("h", [8, 9, 10, 15, 31, 32, 33, 70])
def test_rewound_window_any_height(hl, h):
    """Rows slid with the loop started early to warm the window up: every
    output height, in strips of 8."""
    inp = _input(hl, 40, h + 2)
    bx, out, x, y = _blur(hl, inp)
    yi = hl.Var("yi")
    out.split(y, y, yi, 8)
    bx.store_at(out, y).compute_at(out, yi)
    return out.realize([38, h])


@differential()
@pytest.mark.parametrize("size", [(37, 70), (16, 33), (100, 64), (21, 35)])
def test_rewound_rows_in_parallel_vectorized_strips(hl, size):
    """blur_x stored per strip and computed per row, both vectorized: the
    warm-up rows stay in the row loop (one branch per row skips the
    consumer) rather than a peeled copy of blur_x's loops."""
    w, h = size
    inp = _input(hl, w + 2, h + 2)
    bx, out, x, y = _blur(hl, inp)
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
    bx.store_at(out, yo).compute_at(out, yi).vectorize(x, 16)
    return out.realize([w, h])


@differential()
@pytest.mark.parametrize("step", [2, 3])
def test_rewound_window_steps_of_several_rows(hl, step):
    """Each row of g reads rows step*y .. step*y + 3 of f: the window moves
    `step` rows per iteration (rewound when step divides the overlap)."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 3 + y * y
    g[x, y] = sum(f[x, step * y + k] * (k + 1) for k in range(4))
    f.store_root().compute_at(g, y)
    return g.realize([9, 21])


@differential()
def test_rewound_window_with_a_second_window_inside_the_consumer(hl):
    """g reads two windows computed per row: the second is computed inside
    the first's consume, so it is skipped on the first's warm-up rows."""
    x, y = hl.Var("x"), hl.Var("y")
    f, h, g = hl.Func("f"), hl.Func("h"), hl.Func("g")
    f[x, y] = x + y * 5
    h[x, y] = x * y - 3
    g[x, y] = f[x, y] + f[x, y + 1] * 2 + f[x, y + 2] + h[x, y] * h[x, y + 1]
    for p in (f, h):
        p.store_root().compute_at(g, y)
    return g.realize([12, 17])


@differential()
def test_window_with_a_producer_beside_it(hl):
    """f reads h's window and both are computed per row of g."""
    x, y = hl.Var("x"), hl.Var("y")
    f, h, g = hl.Func("f"), hl.Func("h"), hl.Func("g")
    h[x, y] = x * 2 + y * 7
    f[x, y] = h[x, y] + h[x, y + 1]
    g[x, y] = f[x, y] + f[x, y + 1] + f[x, y + 2]
    for p in (f, h):
        p.store_root().compute_at(g, y)
    return g.realize([10, 19])


@differential()
def test_rewound_window_with_repeat_edge_strips(hl):
    """The repeat_edge blur in parallel strips, vectorized: the warm-up
    rows of the first strip read through the clamp above the image."""
    data = ((np.arange(45 * 70).reshape(45, 70) * 29 + 3) % 3001).astype(np.uint16)
    inp = hl.Buffer(data)
    x, y, yi = hl.Var("x"), hl.Var("y"), hl.Var("yi")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    bx, out = hl.Func("blur_x"), hl.Func("blur_y")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) // 3
    out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) // 3
    bx.store_at(out, y).compute_at(out, x).vectorize(x, 16)
    out.split(y, y, yi, 8).parallel(y).vectorize(x, 16)
    return out.realize([70, 45])


@differential()
@pytest.mark.parametrize("h", [1, 2, 3, 5, 8, 9, 31, 33, 70])
def test_window_computed_inside_a_guard_with_if_split(hl, h):
    """A GuardWithIf split of the consumer's rows with the producer computed
    per inner row: the guard opens the inner loop, so the producer runs only
    for rows the output has (and reads no rows beyond the input), and still
    slides."""
    inp = _input(hl, 40, h + 2)
    bx, out, x, y = _blur(hl, inp)
    yi = hl.Var("yi")
    out.split(y, y, yi, 8, hl.TailStrategy.GuardWithIf)
    bx.store_at(out, y).compute_at(out, yi)
    return out.realize([38, h])



@differential()
@pytest.mark.parametrize("size", [(31, 3), (31, 13), (17, 40), (8, 8)])
def test_guard_with_if_tiles_with_a_producer_per_tile(hl, size):
    """GuardWithIf on x and y tiles with a producer computed per tile: the
    last tiles' producer regions are cut at the output's edge (the input
    has no columns or rows beyond what the output needs)."""
    w, h = size
    inp = _input(hl, w + 2, h + 2)
    bx, out, x, y = _blur(hl, inp)
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    out.tile(x, y, xo, yo, xi, yi, 8, 8, hl.TailStrategy.GuardWithIf)
    bx.compute_at(out, xo)
    return out.realize([w, h])
