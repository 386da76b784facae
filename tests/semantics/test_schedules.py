"""Pure-stage schedules must not change results: every directive on three
pipelines, with extents that are not multiples of the split factors."""
import pytest

from .harness import differential

SIZES = [(37, 23), (5, 3)]


def _gradient(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 3 + y * y + hl.select(x > y, (x ^ y) % 7, hl.min(x, y * 2)) - (x >> 1)
    return f, [x, y], []


def _two_stage(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.cast(hl.Int(32), hl.sin(hl.f32(x) * 0.125) * 100.0) + y * 7
    g = hl.Func("g")
    g[x, y] = f[x - 1, y] + f[x + 1, y] * 2 - f[x, y - 1]
    return g, [x, y], [f]


def _rgb(hl):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("rgb")
    e = hl.sin(hl.f32(x) / 7.0 + hl.f32(c)) * hl.cos(hl.f32(y) / 5.0)
    f[x, y, c] = hl.u8(hl.clamp(e * 127.0 + 128.0, 0.0, 255.0))
    return f, [x, y, c], []


PIPELINES = {"gradient": _gradient, "two_stage": _two_stage, "rgb": _rgb}

SCHEDULES = [
    "default",
    "split_roundup", "split_guard", "split_shift", "split_auto",
    "fuse", "reorder", "tile4", "tile6", "vectorize", "vectorize_n", "unroll",
    "parallel", "serial", "split_vec_par", "fuse_parallel", "producer_root",
    "producer_root_vec", "unroll_vec",
]


def _apply(hl, name, f, vs, producers):
    x, y = vs[0], vs[1]
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    TS = hl.TailStrategy
    if name == "default":
        pass
    elif name == "split_roundup":
        f.split(x, xo, xi, 4, TS.RoundUp)
    elif name == "split_guard":
        f.split(x, xo, xi, 4, TS.GuardWithIf)
    elif name == "split_shift":
        f.split(x, xo, xi, 4, TS.ShiftInwards)
    elif name == "split_auto":
        f.split(y, yo, yi, 3, TS.Auto)
    elif name == "fuse":
        fused = hl.Var("fused")
        f.fuse(x, y, fused)
    elif name == "reorder":
        f.reorder(y, x)
    elif name == "tile4":
        f.tile(x, y, xi, yi, 4, 2)
    elif name == "tile6":
        f.tile(x, y, xo, yo, xi, yi, 4, 3, TS.GuardWithIf)
    elif name == "vectorize":
        f.vectorize(x)  # no factor: the whole (constant-extent) dimension
    elif name == "vectorize_n":
        f.vectorize(x, 8, TS.GuardWithIf)
    elif name == "unroll":
        f.unroll(y, 2, TS.GuardWithIf)
    elif name == "parallel":
        f.parallel(y)
    elif name == "serial":
        f.serial(y)
    elif name == "split_vec_par":
        f.split(x, xo, xi, 8, TS.GuardWithIf).vectorize(xi).parallel(y)
    elif name == "fuse_parallel":
        fused = hl.Var("fused")
        f.fuse(x, y, fused).parallel(fused)
    elif name == "producer_root":
        for p in producers:
            p.compute_root()
    elif name == "producer_root_vec":
        for p in producers:
            p.compute_root().vectorize(p.args()[0], 4, TS.GuardWithIf).parallel(p.args()[1])
        f.vectorize(x, 4, TS.GuardWithIf)
    elif name == "unroll_vec":
        f.split(x, xo, xi, 4, TS.GuardWithIf).unroll(xo, 2, TS.GuardWithIf).vectorize(xi)
    return f


@differential()
@pytest.mark.parametrize("pipeline", list(PIPELINES))
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_schedule_does_not_change_result(hl, pipeline, schedule):
    out = {}
    sizes_list = [(8, 3)] if schedule == "vectorize" else SIZES
    for w, h in sizes_list:
        # (vectorize(x) without a factor needs a constant extent: bound below)
        f, vs, producers = PIPELINES[pipeline](hl)
        _apply(hl, schedule, f, vs, producers)
        sizes = [w, h] + ([3] if len(vs) == 3 else [])
        if schedule == "vectorize":
            f.bound(vs[0], 0, w)
        out["%dx%d" % (w, h)] = f.realize(sizes)
    return out


@differential()
def test_dimensionality(hl):
    """Funcs with 0..4 dimensions, hl.vars, and the buffer shape of each."""
    out = {}
    z = hl.Func("zero_d")
    z[()] = 3
    out["0d"] = z.realize([])
    f0 = hl.Func("zero_d_f")
    f0[()] = hl.f32(2.5) * 2
    out["0d_f"] = f0.realize([])
    x, y, c, w = hl.vars("x y c w")
    f1 = hl.Func("one")
    f1[x] = x * x - 3
    out["1d"] = f1.realize([7])
    f2 = hl.Func("two")
    f2[x, y] = x - y * 10
    out["2d"] = f2.realize([4, 3])
    f3 = hl.Func("three")
    f3[x, y, c] = hl.u16(x + y * 10 + c * 100)
    out["3d"] = f3.realize([4, 3, 2])
    f4 = hl.Func("four")
    f4[x, y, c, w] = hl.i8(x + y * 2 - c * 3 + w * 5)
    out["4d"] = f4.realize([2, 3, 4, 5])
    return out


@differential()
@pytest.mark.parametrize("form", ["outers", "in_place", "tail", "update"])
def test_tile_with_lists_of_vars(hl, form):
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    xo, yo, zo, xi, yi, zi = (hl.Var(n) for n in ["xo", "yo", "zo", "xi", "yi", "zi"])
    f = hl.Func("f")
    f[x, y, z] = x + 10 * y + 100 * z
    f[x, y, z] = f[x, y, z] * 2 + 1
    if form == "outers":
        f.tile([x, y, z], [xo, yo, zo], [xi, yi, zi], [4, 3, 2])
    elif form == "in_place":
        f.tile([x, y], [xi, yi], [4, 4])
    elif form == "tail":
        f.tile([x, y], [xo, yo], [x, y], [8, 8], hl.TailStrategy.RoundUp)
    else:
        f.update(0).tile([x, y], [xo, yo], [xi, yi], [3, 5], hl.TailStrategy.GuardWithIf)
    return f.realize([16, 16, 3] if form == "tail" else [11, 7, 3])


@differential(expect_error=True)
def test_tile_with_lists_of_different_lengths(hl):
    x, y, xi, yi = hl.Var("x"), hl.Var("y"), hl.Var("xi"), hl.Var("yi")
    f = hl.Func("f")
    f[x, y] = x + y
    f.tile([x, y], [xi, yi], [4])
