"""Atomic integer sums inside parallel loops, accumulated per iteration in a
private buffer and added back once per changed element
(`lower/privatize_atomic_reductions.rs`). The images are wide enough (1,100
adds per row) for the rows to qualify; each test runs against Halide, which
keeps every add atomic, and the stmt checks say which loops were rewritten."""
import numpy as np
import pytest

import ferrohalide

from .harness import buffer, differential

W, H = 1100, 24


def _img(hl, dtype=np.uint8, hi=256, seed=11, w=W, h=H):
    a = np.random.RandomState(seed).randint(0, hi, size=(h, w)).astype(dtype)
    return buffer(hl, a)


def _lowered(func, args, tmp_path):
    path = tmp_path / "f.stmt"
    func.compile_to_lowered_stmt(str(path), args)
    return path.read_text()


def _counts(hl, img, value_type=None):
    """`h[img[r]] += 1` over the whole of `img` (values of `value_type`,
    default Int(32)), unscheduled; and its RDom."""
    t = value_type or hl.Int(32)
    x = hl.Var("x")
    r = hl.RDom(img)
    h = hl.Func("hist")
    h[x] = hl.cast(t, 0)
    h[hl.i32(img[r.x, r.y])] += hl.cast(t, 1)
    return h, r


@pytest.mark.parametrize("how", ["parallel", "parallel_unrolled", "parallel_vectorized", "split_parallel"])
@differential()
def test_histogram(hl, how):
    img = _img(hl)  # (Halide's Buffer does not keep its array alive)
    h, r = _counts(hl, img)
    s = h.update().atomic()
    if how == "parallel":
        s.parallel(r.y)
    elif how == "parallel_unrolled":
        s.parallel(r.y).unroll(r.x, 2)
    elif how == "parallel_vectorized":
        s.parallel(r.y).vectorize(r.x, 8)
    else:
        ro, ri = hl.RVar("ro"), hl.RVar("ri")
        s.split(r.y, ro, ri, 4).parallel(ro)
    return h.realize([256])


@pytest.mark.parametrize("bins", ["uint8", "int16", "uint32", "int64"])
@differential()
def test_narrow_and_wide_counts_wrap_alike(hl, bins):
    """Counts past a bin's width wrap, as each atomic add would: 24 rows
    of 1,100 values in 16 bins put ~1,650 in each."""
    t = {"uint8": hl.UInt(8), "int16": hl.Int(16), "uint32": hl.UInt(32), "int64": hl.Int(64)}[bins]
    x = hl.Var("x")
    img = _img(hl, hi=16)
    r = hl.RDom(img)
    h = hl.Func("hist")
    h[x] = hl.cast(t, 0)
    h[hl.i32(img[r.x, r.y])] += hl.cast(t, 7)
    h.update().atomic().parallel(r.y)
    return h.realize([16])


@differential()
def test_weighted_sums_with_negative_weights_and_an_offset_index(hl):
    x = hl.Var("x")
    img = _img(hl, hi=64)
    wts = _img(hl, hi=200, seed=5)
    r = hl.RDom(img)
    h = hl.Func("hist")
    h[x] = x * 3
    h[hl.i32(img[r.x, r.y]) + 10] += hl.i32(wts[r.x, r.y]) - 100
    h.update().atomic().parallel(r.y)
    return h.realize([80])


@differential()
def test_two_dimensional_bins(hl):
    x, y = hl.Var("x"), hl.Var("y")
    img = _img(hl)
    r = hl.RDom(img)
    h = hl.Func("hist2d")
    h[x, y] = 0
    v = hl.i32(img[r.x, r.y])
    h[v % 16, v // 16] += 1
    h.update().atomic().parallel(r.y)
    return h.realize([16, 16])


@pytest.mark.parametrize("width", [W, 300])
@differential()
def test_input_sized_rdom_decides_per_row(hl, width):
    """An RDom over an ImageParam: whether a row has enough adds is only
    known when the pipeline runs (1,100 per row: private; 300: atomic)."""
    x = hl.Var("x")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    # Halide's Buffer does not keep its array alive: this local does.
    data = _img(hl, w=width)
    im.set(data)
    r = hl.RDom([(0, im.width()), (0, im.height())])
    h = hl.Func("hist")
    h[x] = 0
    h[hl.i32(im[r.x, r.y])] += 1
    h.update().atomic().parallel(r.y)
    return h.realize([256])


@differential()
def test_a_guarded_sum_stays_atomic_and_right(hl):
    x = hl.Var("x")
    img = _img(hl)
    r = hl.RDom(img)
    r.where(img[r.x, r.y] % 3 != 0)
    h = hl.Func("hist")
    h[x] = 0
    h[hl.i32(img[r.x, r.y])] += 1
    h.update().atomic().parallel(r.y)
    return h.realize([256])


def _histogram(hl, img, value_type, fuse=False):
    h, r = _counts(hl, img, value_type)
    s = h.update().atomic()
    if fuse:
        rf = hl.RVar("rf")
        s.fuse(r.x, r.y, rf).parallel(rf)
    else:
        s.parallel(r.y)
    return h


def test_which_parallel_loops_are_privatized(tmp_path):
    hl = ferrohalide
    img = _img(hl)
    # Integer sums over rows of 1,100: private.
    text = _lowered(_histogram(hl, img, hl.Int(32)), [], tmp_path)
    assert ".private." in text, text
    # Float sums: the order of the adds changes the result; left atomic.
    text = _lowered(_histogram(hl, img, hl.Float(32)), [], tmp_path)
    assert ".private." not in text and "atomic" in text, text
    # One add per parallel iteration: clearing and adding back 256 bins
    # would cost far more; left atomic.
    text = _lowered(_histogram(hl, img, hl.Int(32), fuse=True), [], tmp_path)
    assert ".private." not in text and "atomic" in text, text


def test_a_sum_of_another_funcs_values_is_privatized(tmp_path):
    hl = ferrohalide
    x = hl.Var("x")
    img = _img(hl)
    h, r = _counts(hl, img)
    g = hl.Func("g")
    g[x] = 0
    g[hl.i32(img[r.x, r.y])] += h[3]
    h.compute_root()
    g.update().atomic().parallel(r.y)
    text = _lowered(g, [], tmp_path)
    # (hist's update is serial: g's is the one loop that can be.)
    assert ".private." in text, text
    # The values: every bin of g gets h[3] for each pixel in it.
    out = np.asarray(g.realize([256]))
    counts = np.bincount(np.asarray(img).ravel(), minlength=256)
    assert (out == counts * counts[3]).all()


@differential()
def test_planes_in_parallel_each_summing_a_whole_plane(hl):
    """Parallel over r.z, two serial RVars inside: 64 x 24 adds per plane."""
    x = hl.Var("x")
    a = np.random.RandomState(3).randint(0, 64, size=(3, 24, 64)).astype(np.uint8)
    img = buffer(hl, a)
    r = hl.RDom(img)
    h = hl.Func("hist")
    h[x] = hl.u32(0)
    h[hl.i32(img[r.x, r.y, r.z])] += hl.u32(r.z + 1)
    h.update().atomic().parallel(r.z)
    return h.realize([64])


@differential()
def test_a_histogram_per_row_of_a_parallel_consumer(hl):
    """The histogram's own loop is parallel inside a parallel consumer's
    row: the inner parallel loop is the one privatized."""
    x, y = hl.Var("x"), hl.Var("y")
    img = _img(hl, hi=32)
    r = hl.RDom([(0, W), (0, 4)])
    h = hl.Func("hist")
    h[x, y] = 0
    h[hl.i32(img[r.x, hl.min(y + r.y, H - 1)]), y] += 1
    out = hl.Func("out")
    out[x, y] = h[x, y] * 2
    out.parallel(y)
    h.compute_at(out, y)
    h.update().atomic().parallel(r.y)
    return out.realize([32, 8])
