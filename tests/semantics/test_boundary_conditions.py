"""hl.BoundaryConditions on Funcs, Buffers and ImageParams (issue 5, item 2).

Every condition on 1-D, 2-D and 3-D inputs with every combination of bounded and
unbounded dimensions; outputs are sampled over a region larger than the bounds in
bounded dimensions (several periods / reflections away) so the borders are
exercised.  Unbounded dimensions pass the coordinate through unchanged, so for
Buffer and ImageParam sources they are sampled exactly over the input's range."""
import itertools

import numpy as np
import pytest

from .harness import differential, htype, npdtype, buffer
from .input_helpers import arr, error_key

BCS = ["constant_exterior", "repeat_edge", "repeat_image", "mirror_image",
       "mirror_interior"]

# per dimensionality: element type, input extents (x, y, c), input mins
INPUTS = {
    1: ("u8", [6], [-1]),
    2: ("f32", [5, 4], [-1, 2]),
    3: ("i16", [4, 3, 3], [1, -2, 0]),
}
MARGIN = 7  # samples on each side of the bounds (more than one period)

EXTERIOR = {"u8": 77, "f32": -0.5, "i16": -999}


def _data(dims):
    t, ext, _ = INPUTS[dims]
    n = int(np.prod(ext))
    a = (np.arange(n) * 7 + 3) % 113
    return a.reshape(ext[::-1]).astype(npdtype(t)) * (1 if t != "f32" else 1.25)


def _input_buffer(hl, dims):
    _, _, mins = INPUTS[dims]
    b = buffer(hl, _data(dims).astype(npdtype(INPUTS[dims][0])))
    b.set_min(mins)
    return b


def _formula_func(hl, dims, vs):
    """A source Func defined everywhere (values vary along every dimension)."""
    t = INPUTS[dims][0]
    f = hl.Func("src")
    e = vs[0] * 3 + 1
    for i, v in enumerate(vs[1:]):
        e = e + v * (11 + 20 * i)
    f[vs] = hl.cast(htype(hl, t), e)
    return f


def _placeholder(hl, i):
    """The three spellings of an unbounded dimension, rotated by dimension."""
    return [hl.Range(), hl.Range(hl.Expr(), hl.Expr()), (hl.Expr(), hl.Expr())][i % 3]


def _bounds(hl, dims, mask):
    """Explicit bounds: bounded dims get a sub-range of the input (min+1, extent-1)."""
    _, ext, mins = INPUTS[dims]
    out = []
    for i in range(dims):
        if mask[i]:
            out.append(hl.Range(mins[i] + 1, ext[i] - 1) if i % 2 == 0
                       else (mins[i] + 1, ext[i] - 1))
        else:
            out.append(_placeholder(hl, i))
    return out


def _apply(hl, bc, src, dims, bounds=None):
    BC = hl.BoundaryConditions
    fn = getattr(BC, bc)
    args = [src]
    if bc == "constant_exterior":
        args.append(EXTERIOR[INPUTS[dims][0]])
    if bounds is not None:
        args.append(bounds)
    return fn(*args)


def _out_buffers(hl, dims, mask, n):
    """n output buffers over the sampled region: bounded dims extend MARGIN past the
    bounds on each side, unbounded dims cover exactly the input."""
    t, ext, mins = INPUTS[dims]
    sizes, omins = [], []
    for i in range(dims):
        if mask[i]:
            lo, e = mins[i] + 1, ext[i] - 1
            omins.append(lo - MARGIN)
            sizes.append(e + 2 * MARGIN)
        else:
            omins.append(mins[i])
            sizes.append(ext[i])
    outs = []
    for _ in range(n):
        o = hl.Buffer(htype(hl, t), sizes)
        o.set_min(omins)
        outs.append(o)
    return outs


COMBOS = [(d, m) for d in (1, 2, 3) for m in itertools.product([True, False], repeat=d)]


def _combo_id(c):
    d, m = c
    return "%dd-%s" % (d, "".join("b" if b else "u" for b in m))


SOURCES = ["func", "buffer", "imageparam"]


@differential()
@pytest.mark.parametrize("combo", COMBOS, ids=[_combo_id(c) for c in COMBOS])
def test_boundary_condition_explicit_bounds(hl, combo):
    """All five conditions with explicit bounds (bounded dims: a sub-range of the
    input; unbounded dims: the placeholders).  The source of each condition is a
    Func, a Buffer or an ImageParam, rotating with the condition and the
    combination (in 2-D and 3-D every condition meets every kind, in 1-D two of
    them); the five results are sampled together by one Tuple-valued Func."""
    dims, mask = combo
    idx = COMBOS.index(combo)
    vs = [hl.Var(n) for n in "xyc"[:dims]]
    b = _input_buffer(hl, dims)
    im = hl.ImageParam(htype(hl, INPUTS[dims][0]), dims, "im")
    im.set(b)
    srcs = {"func": _formula_func(hl, dims, vs), "buffer": b, "imageparam": im}
    kinds = [SOURCES[(idx + j) % 3] for j in range(len(BCS))]
    gs = [_apply(hl, bc, srcs[k], dims, _bounds(hl, dims, mask))
          for bc, k in zip(BCS, kinds)]
    out = hl.Func("sampled")
    out[vs] = hl.Tuple([g[vs] for g in gs])
    outs = _out_buffers(hl, dims, mask, len(gs))
    out.realize(outs)
    res = {"dims": [g.dimensions() for g in gs]}
    for bc, k, o in zip(BCS, kinds, outs):
        res["%s_%s" % (k, bc)] = arr(o)
    return res


@differential()
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_boundary_condition_whole_input(hl, dims):
    """Without bounds, Buffer and ImageParam sources are bounded by their own shape
    (the ImageParam's symbolically: the same pipeline serves a second input shape)."""
    t, ext, mins = INPUTS[dims]
    b = _input_buffer(hl, dims)
    im = hl.ImageParam(htype(hl, t), dims, "im")
    gs = [_apply(hl, bc, b, dims) for bc in BCS] + [_apply(hl, bc, im, dims) for bc in BCS]
    vs = [hl.Var(n) for n in "xyc"[:dims]]
    sampled = hl.Func("sampled")
    sampled[vs] = hl.Tuple([g[vs] for g in gs])
    names = ["buffer_" + bc for bc in BCS] + ["imageparam_" + bc for bc in BCS]
    out = {}

    def run(sizes, omins, tag):
        outs = []
        for _ in gs:
            o = hl.Buffer(htype(hl, t), sizes)
            o.set_min(omins)
            outs.append(o)
        sampled.realize(outs)
        for n, o in zip(names, outs):
            out[tag + n] = arr(o)

    im.set(b)
    run([e + 2 * MARGIN for e in ext], [m - MARGIN for m in mins], "")
    # a second, differently shaped input through the same ImageParam
    small = buffer(hl, (np.arange(2 ** dims) + 5).astype(npdtype(t)).reshape([2] * dims))
    small.set_min([3] * dims)
    im.set(small)
    run([8] * dims, [0] * dims, "small_")
    return out


@differential()
def test_boundary_condition_short_bounds_list(hl):
    """Fewer ranges than dimensions: the remaining dimensions are unbounded."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("src")
    f[x, y] = x + 10 * y
    gs = [hl.BoundaryConditions.repeat_edge(f, [(0, 4)]),
          hl.BoundaryConditions.mirror_interior(f, [(0, 4)]),
          hl.BoundaryConditions.constant_exterior(f, -1, [(1, 2)])]
    outs = []
    for _ in gs:
        o = hl.Buffer(hl.Int(32), [9, 3])
        o.set_min([-3, -1])
        outs.append(o)
    hl.Pipeline(gs).realize(outs)
    return [arr(o) for o in outs]


@differential()
def test_boundary_condition_symbolic_bounds(hl):
    """Bounds may be Exprs: Params and ImageParam shape accessors."""
    x = hl.Var("x")
    f = hl.Func("src")
    f[x] = x * x
    lo = hl.Param(hl.Int(32), "lo", 2)
    n = hl.Param(hl.Int(32), "n", 3)
    g = hl.BoundaryConditions.mirror_image(f, [(lo, n)])
    out = [arr(g.realize([12]))]
    lo.set(-1)
    n.set(5)
    out.append(arr(g.realize([12])))
    im = hl.ImageParam(hl.Int(32), 1, "im")
    h = hl.BoundaryConditions.repeat_image(im, [(im.dim(0).min() + 1, im.width() - 2)])
    im.set(buffer(hl, np.array([9, 1, 2, 3, 4, 9], np.int32)))
    out.append(arr(h.realize([12])))
    return out


@differential()
def test_boundary_condition_small_extents(hl):
    """Extent-1 and extent-2 bounds (mirror_interior of extent 1 stays in place)."""
    x = hl.Var("x")
    f = hl.Func("src")
    f[x] = x * 5 + 1
    keys, gs = [], []
    for bc in ["repeat_edge", "repeat_image", "mirror_image", "mirror_interior"]:
        for ext in [1, 2]:
            gs.append(getattr(hl.BoundaryConditions, bc)(f, [(3, ext)]))
            keys.append("%s_%d" % (bc, ext))
    outs = []
    for _ in gs:
        o = hl.Buffer(hl.Int(32), [11])
        o.set_min([-2])
        outs.append(o)
    hl.Pipeline(gs).realize(outs)
    return {k: arr(o) for k, o in zip(keys, outs)}


@differential()
@pytest.mark.parametrize("t", ["u8", "i16", "f32", "f64"])
def test_constant_exterior_value_types(hl, t):
    """A Python int exterior is converted to the image type (wrapping like a cast:
    300 -> 44 in uint8); a Python float on an integer or float64 image is a float32
    Expr and raises HalideError (select of mismatched types) at definition."""
    b = buffer(hl, np.arange(1, 5).astype(npdtype(t)))
    out, keys, gs = {}, [], []
    for v in [0, 7, 300, -1, 0.5, hl.cast(htype(hl, t), 3)]:
        key = repr(v) if not isinstance(v, hl.Expr) else "expr"

        def make():
            return hl.BoundaryConditions.constant_exterior(b, v)

        try:
            gs.append(make())
            keys.append(key)
        except Exception:  # noqa: BLE001
            out[key] = error_key(hl, make, "do not have a matching type")
    outs = []
    for _ in gs:
        o = hl.Buffer(htype(hl, t), [7])
        o.set_min([-1])
        outs.append(o)
    hl.Pipeline(gs).realize(outs)
    out.update({k: arr(o) for k, o in zip(keys, outs)})
    return out


@differential()
def test_boundary_condition_names_and_scheduling(hl):
    """The result is an ordinary Func named after the condition (a '$n' suffix is
    added when the name is taken); it can be scheduled and consumed, here in a
    3x1 blur of an ImageParam."""
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    out = {}
    names = []
    for bc in BCS:
        g = getattr(hl.BoundaryConditions, bc)(*([im, 0] if bc == "constant_exterior" else [im]))
        names.append(g.name().split("$")[0])
    out["names"] = names
    clamped = hl.BoundaryConditions.repeat_edge(im)
    clamped.compute_root()
    blur = hl.Func("blur")
    blur[x, y] = (hl.u16(clamped[x - 1, y]) + clamped[x, y] + clamped[x + 1, y]) // 3
    blur.vectorize(x, 4)
    im.set(buffer(hl, (np.arange(30) * 17 % 256).astype(np.uint8).reshape(5, 6)))
    out["blur"] = arr(blur.realize([6, 5]))
    return out


@differential()
def test_boundary_condition_tuple_func(hl):
    """Tuple-valued Funcs: repeat_edge works per element; constant_exterior with a
    single Expr exterior raises ValueError."""
    x = hl.Var("x")
    f = hl.Func("pair")
    f[x] = hl.Tuple([x, hl.f32(x) / 2])
    g = hl.BoundaryConditions.repeat_edge(f, [(0, 3)])
    r = g.realize([6])
    bad = error_key(hl, lambda: hl.BoundaryConditions.constant_exterior(f, 0, [(0, 3)]),
                    "Invalid arguments")
    return [arr(b) for b in r], bad


@differential()
def test_boundary_condition_misuse(hl):
    """Errors when building the condition (all at definition time)."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("src")
    f[x, y] = x + y
    BC = hl.BoundaryConditions
    b = hl.Buffer(hl.Int(32), [3, 3])
    return {
        "too_many_bounds": error_key(hl, lambda: BC.repeat_edge(f, [(0, 3)] * 3),
                                     "Invalid arguments"),
        "half_range": error_key(hl, lambda: BC.repeat_image(f, [hl.Range(0, hl.Expr()), (0, 3)]),
                                "Invalid arguments"),
        "none_entry": error_key(hl, lambda: BC.mirror_image(f, [(0, 3), None])),
        "func_without_bounds": error_key(hl, lambda: BC.repeat_edge(f)),
        "undefined_func": error_key(hl, lambda: BC.repeat_edge(hl.Func("undef"), [(0, 3)]),
                                    "Invalid arguments"),
        "not_a_func": error_key(hl, lambda: BC.repeat_edge(3, [(0, 3)]), "Invalid arguments"),
        "buffer_too_many_bounds": error_key(hl, lambda: BC.mirror_interior(b, [(0, 3)] * 3),
                                            "Invalid arguments"),
    }


@differential()
@pytest.mark.parametrize("t", ["u8", "i16", "u16", "i32", "f32", "f64"])
def test_vectorized_clamped_loads(hl, t):
    """Vectorized reads through clamped indices (the edge iterations of a
    boundary condition, which the backend may turn into masked loads):
    windows wider and narrower than the vector, a window of one element,
    an empty window (lo > hi, so every lane reads one bound) in both clamp
    orders, and shifted, offset and reversed reads."""
    data = ((np.arange(23) * 37 + 5) % 101).astype(npdtype(t))
    inp = buffer(hl, data)
    x = hl.Var("x")
    lo, hi = hl.Param(hl.Int(32), "lo", 0), hl.Param(hl.Int(32), "hi", 22)
    fs = {
        "edge": hl.BoundaryConditions.repeat_edge(inp),
        "max_min": hl.Func("max_min"),
        "min_max": hl.Func("min_max"),
        "offset": hl.Func("offset"),
    }
    fs["max_min"][x] = inp[hl.max(hl.min(x - 3, hi), lo)]
    fs["min_max"][x] = inp[hl.min(hl.max(x + 2, lo), hi)]
    fs["offset"][x] = inp[hl.clamp(x * 1 - 7, lo, hi) + 1] + inp[hl.clamp(x, lo, hi)]
    out = {}
    for name, f in fs.items():
        g = hl.Func("g_" + name)
        g[x] = f[x]
        g.vectorize(x, 32 if t in ("u8", "i16", "u16") else 16)
        for (l, h) in [(0, 22), (4, 9), (6, 6), (9, 4), (0, 21)]:
            if name != "edge":
                lo.set(l)
                hi.set(h if name != "offset" else min(h, 21))
            o = hl.Buffer(htype(hl, t), [70])
            o.set_min([-20])
            g.realize(o)
            out["%s_%d_%d" % (name, l, h)] = arr(o)
    return out


@differential()
@pytest.mark.parametrize("seed", range(6))
def test_vectorized_loads_through_clamp_chains(hl, seed):
    """Random chains of adds, subtracts, mins and maxes with constants and
    Params around the vectorized variable (the forms the backend folds into
    one clamp of a ramp), kept in bounds by an outer clamp, including
    chains whose inner bounds cross (every lane then reads one element)."""
    rng = np.random.default_rng(seed)
    inp = buffer(hl, ((np.arange(50) * 29 + 3) % 251).astype(np.uint8))
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", int(rng.integers(-20, 60)))
    steps = [lambda e, c: e + c, lambda e, c: e - c, lambda e, c: hl.min(e, c), lambda e, c: hl.max(e, c),
             lambda e, c: hl.min(e, p + c), lambda e, c: hl.max(e, p - c)]
    out = {}
    for k in range(6):
        e = x
        for _ in range(int(rng.integers(2, 7))):
            e = steps[int(rng.integers(0, len(steps)))](e, int(rng.integers(-40, 80)))
        f = hl.Func(f"chain{k}")
        f[x] = inp[hl.clamp(e, 0, 49)]
        f.vectorize(x, [16, 64, 128][k % 3])
        out[k] = arr(f.realize([256]))
    return out


@differential()
def test_boundary_keywords(hl):
    """The source is the keyword `f`, as in Halide's bindings."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = buffer(hl, np.arange(12, dtype=np.int32).reshape(3, 4))
    out = []
    for bc, extra in [(hl.BoundaryConditions.repeat_edge, {}),
                      (hl.BoundaryConditions.mirror_image, {}),
                      (hl.BoundaryConditions.constant_exterior, {"exterior": 7})]:
        f = hl.Func("f")
        f[x, y] = bc(f=inp, bounds=[(0, 4), (0, 3)], **extra)[x, y]
        out.append(f.realize([6, 5]))
        g = bc(f=inp, **extra)
        out.append(hl.lambda_func(x, y, g[x, y]).realize([6, 5]))
    return out
