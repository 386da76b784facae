"""Scheduling update definitions: split / fuse / reorder / tile / vectorize /
unroll / parallel over pure vars and RVars, Halide's legality rules for RVars
(races, order changes, tail strategies), rfactor, atomic, and producers computed
inside update loops.  Legal schedules must not change results; illegal ones must
raise hl.HalideError at the same step (definition, schedule call or realize)."""
import numpy as np
import pytest

from .harness import Tol, buffer, differential
from .input_helpers import phase as _phase


def _run(hl, make, schedule):
    """make(hl) -> (func, rdom, sizes); schedule(hl, func, rdom).  Returns the
    phase result of define / schedule / realize."""
    st = {}

    def define():
        st["f"], st["r"], st["sizes"] = make(hl)

    return _phase(hl, [("define", define),
                       ("schedule", lambda: schedule(hl, st["f"], st["r"])),
                       ("realize", lambda: st["f"].realize(st["sizes"]))])


def _img(hl, w=8, h=6, seed=3, hi=11, dtype=np.int32):
    a = np.random.RandomState(seed).randint(0, hi, size=(h, w)).astype(dtype)
    return buffer(hl, a)


# ---------------------------------------------------------------------------------
# Pipelines
# ---------------------------------------------------------------------------------
def _hist(hl):
    """Histogram: associative and commutative, RVars on the right only."""
    x = hl.Var("x")
    img = _img(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    h = hl.Func("hist")
    h[x] = 0
    h[hl.clamp(img[r.x, r.y], 0, 10)] += 1
    return h, r, [11]


def _poly(hl):
    """f = f * 3 + v: not associative; the iteration order matters."""
    img = _img(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    f = hl.Func("poly")
    f[()] = 0
    f[()] = f[()] * 3 + img[r.x, r.y]
    return f, r, []


def _rowsum(hl):
    """Per-row sums: pure var y, RVar r.x."""
    y = hl.Var("y")
    img = _img(hl)
    r = hl.RDom([(0, 8)])
    f = hl.Func("rowsum")
    f[y] = 0
    f[y] += img[r.x, y]
    return f, r, [6]


def _scan(hl):
    """Row-wise prefix sums over a 2-D RDom: r.y indexes independent rows."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("scan")
    f[x, y] = x * 3 + y
    r = hl.RDom([(1, 7), (0, 4)])
    f[r.x, r.y] = f[r.x - 1, r.y] + f[r.x, r.y]
    return f, r, [8, 4]


def _colscan(hl):
    """Scan along r.x with pure var y (the classic f[r, y] = f[r - 1, y] + ...)."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("colscan")
    f[x, y] = x + 10 * y
    r = hl.RDom([(1, 7)])
    f[r.x, y] = f[r.x - 1, y] * 2 - f[r.x, y]
    return f, r, [8, 5]


def _scatter(hl):
    """f[r.x] (or f[2 * r.x]) = ...: each point writes its own location."""
    x = hl.Var("x")
    f = hl.Func("scatter")
    f[x] = x
    r = hl.RDom([(0, 12)])
    f[r.x] = f[r.x] * 3 + r.x
    return f, r, [12]


def _scatter_stride(hl):
    x = hl.Var("x")
    f = hl.Func("scatter2")
    f[x] = -x
    r = hl.RDom([(0, 6)])
    f[2 * r.x] = r.x * 5
    return f, r, [12]


def _scatter_half(hl):
    x = hl.Var("x")
    f = hl.Func("scatter_half")
    f[x] = 0
    r = hl.RDom([(0, 12)])
    f[r.x / 2] = r.x
    return f, r, [6]


PIPES = {"hist": _hist, "poly": _poly, "rowsum": _rowsum, "scan": _scan,
         "colscan": _colscan, "scatter": _scatter, "scatter_stride": _scatter_stride,
         "scatter_half": _scatter_half}


def _split(hl, f, v, factor, tail=None, inner_rvar=True):
    mk = hl.RVar if inner_rvar else hl.Var
    o, i = mk(v.name() + "_o"), mk(v.name() + "_i")
    if tail is None:
        f.update().split(v, o, i, factor)
    else:
        f.update().split(v, o, i, factor, getattr(hl.TailStrategy, tail))
    return o, i


# ---------------------------------------------------------------------------------
# Legal schedules (results unchanged) and illegal ones (errors), one table
# ---------------------------------------------------------------------------------
def _s_none(hl, f, r):
    pass


def _s_rfactor_parallel(hl, f, r):
    u = hl.Var("u")
    intm = f.update().rfactor(r.y, u)
    intm.compute_root().update().parallel(u)


def _s_rfactor_vector(hl, f, r):
    u = hl.Var("u")
    o, i = _split(hl, f, r.x, 4)
    intm = f.update().rfactor(i, u)
    intm.compute_root().vectorize(u)
    intm.update().vectorize(u)


def _s_rfactor_both(hl, f, r):
    u, v = hl.Var("u"), hl.Var("v")
    intm = f.update().rfactor([(r.y, u), (r.x, v)])
    intm.compute_root().update().parallel(u).vectorize(v, 4)


def _s_atomic_parallel(hl, f, r):
    f.update().atomic().parallel(r.y)


def _s_atomic_vectorize(hl, f, r):
    f.update().atomic().vectorize(r.x, 4)


def _s_atomic_override_serial(hl, f, r):
    f.update().atomic(True)


def _s_reorder(hl, f, r):
    f.update().reorder(r.y, r.x)


def _s_tile(hl, f, r):
    f.update().tile(r.x, r.y, hl.RVar("rxo"), hl.RVar("ryo"), hl.RVar("rxi"),
                    hl.RVar("ryi"), 3, 4)


def _s_fuse(hl, f, r):
    f.update().fuse(r.x, r.y, hl.RVar("rf"))


def _s_unroll(hl, f, r):
    f.update().unroll(r.x, 3)


def _s_split_guard(hl, f, r):
    _split(hl, f, r.x, 3, "GuardWithIf")


def _s_split_default(hl, f, r):
    _split(hl, f, r.x, 3)


def _s_split_predicate(hl, f, r):
    _split(hl, f, r.x, 5, "Predicate")


def _s_split_roundup(hl, f, r):
    _split(hl, f, r.x, 3, "RoundUp")


def _s_split_shift(hl, f, r):
    _split(hl, f, r.x, 3, "ShiftInwards")


def _s_split_into_var(hl, f, r):
    _split(hl, f, r.x, 4, inner_rvar=False)


def _s_parallel_rx(hl, f, r):
    f.update().parallel(r.x)


def _s_parallel_ry(hl, f, r):
    f.update().parallel(r.y)


def _s_vectorize_rx(hl, f, r):
    f.update().vectorize(r.x, 4)


def _s_vectorize_rx_guard(hl, f, r):
    f.update().vectorize(r.x, 5, hl.TailStrategy.GuardWithIf)


def _s_allow_race(hl, f, r):
    f.update().allow_race_conditions()  # no parallel loop: still serial, legal


def _s_rename_rvar(hl, f, r):
    f.update().rename(r.x, hl.RVar("renamed"))


def _s_rename_to_var(hl, f, r):
    f.update().rename(r.x, hl.Var("renamed"))


def _s_fuse_into_var(hl, f, r):
    f.update().fuse(r.x, r.y, hl.Var("fused"))


def _s_reorder_dup(hl, f, r):
    f.update().reorder(r.x, r.x)


def _s_rfactor(hl, f, r):
    f.update().rfactor(r.y, hl.Var("u"))


def _s_rfactor_rx(hl, f, r):
    f.update().rfactor(r.x, hl.Var("u"))


def _s_rfactor_unknown(hl, f, r):
    f.update().rfactor(hl.RVar("nope"), hl.Var("u"))


def _s_rfactor_consumed(hl, f, r):
    f.update().rfactor(r.y, hl.Var("u"))
    f.update().rfactor(r.x, hl.Var("v"))


def _s_rfactor_name_clash(hl, f, r):
    f.update().rfactor(r.y, f.args()[0])


def _s_atomic_parallel_rx(hl, f, r):
    f.update().atomic().parallel(r.x)


def _s_pure_and_rvar(hl, f, r):
    """rowsum: reorder the pure var inside the RVar, split and parallelize it."""
    y = f.args()[0]
    f.update().reorder(y, r.x).split(y, hl.Var("yo"), hl.Var("yi"), 2).parallel(hl.Var("yo"))


def _s_pure_vectorize_guard(hl, f, r):
    f.update().vectorize(f.args()[0], 4, hl.TailStrategy.GuardWithIf)


def _s_pure_vectorize_default(hl, f, r):
    """Default tail of a pure var in an update is RoundUp: the rounded-up rows
    read the input beyond its last row -> error at realize."""
    f.update().vectorize(f.args()[0], 4)


def _s_pure_split_shift(hl, f, r):
    y = f.args()[0]
    f.update().split(y, hl.Var("yo"), hl.Var("yi"), 4, hl.TailStrategy.ShiftInwards)


def _s_pure_split_into_rvar(hl, f, r):
    y = f.args()[0]
    f.update().split(y, hl.RVar("yo"), hl.RVar("yi"), 2)


def _s_fuse_rvar_and_pure(hl, f, r):
    f.update().fuse(r.x, f.args()[0], hl.RVar("t"))


def _s_fuse_rvar_and_pure_into_var(hl, f, r):
    f.update().fuse(r.x, f.args()[0], hl.Var("t"))


def _s_vectorize_unknown_var(hl, f, r):
    f.update().vectorize(hl.Var("nope"), 4)


def _s_pure_var_parallel(hl, f, r):
    """colscan: y is pure in the update; parallel and vectorized over it."""
    y = f.args()[1]
    f.update().split(y, hl.Var("yo"), hl.Var("yi"), 2, hl.TailStrategy.GuardWithIf)
    f.update().parallel(hl.Var("yo")).vectorize(hl.Var("yi"))


def _s_reorder_pure_inside(hl, f, r):
    f.update().reorder(f.args()[1], r.x)


def _s_unscheduled(hl, f, r):
    f.update().unscheduled()


def _s_unscheduled_after_schedule(hl, f, r):
    f.update().unroll(r.x, 2).unscheduled()


CASES = [
    # histogram: associative + commutative
    ("hist", "none"), ("hist", "rfactor_parallel"), ("hist", "rfactor_vector"),
    ("hist", "rfactor_both"), ("hist", "atomic_parallel"), ("hist", "atomic_vectorize"),
    ("hist", "reorder"), ("hist", "tile"), ("hist", "fuse"), ("hist", "unroll"),
    ("hist", "split_guard"), ("hist", "split_predicate"),
    ("hist", "parallel_ry"), ("hist", "vectorize_rx"), ("hist", "split_roundup"),
    ("hist", "rfactor_unknown"), ("hist", "rfactor_consumed"),
    ("hist", "rfactor_name_clash"),
    # non-associative: order-preserving schedules only
    ("poly", "none"), ("poly", "split_default"), ("poly", "split_guard"),
    ("poly", "fuse"), ("poly", "unroll"), ("poly", "allow_race"),
    ("poly", "atomic_override_serial"), ("poly", "rename_rvar"),
    ("poly", "reorder"), ("poly", "tile"), ("poly", "parallel_ry"),
    ("poly", "vectorize_rx"), ("poly", "atomic_parallel"), ("poly", "rfactor"),
    ("poly", "split_roundup"), ("poly", "split_shift"), ("poly", "split_into_var"),
    ("poly", "rename_to_var"), ("poly", "fuse_into_var"), ("poly", "reorder_dup"),
    ("poly", "unscheduled"), ("poly", "unscheduled_after_schedule"),
    # pure var + RVar
    ("rowsum", "pure_and_rvar"), ("rowsum", "pure_vectorize_guard"),
    ("rowsum", "pure_vectorize_default"), ("rowsum", "pure_split_shift"),
    ("rowsum", "pure_split_into_rvar"), ("rowsum", "fuse_rvar_and_pure"),
    ("rowsum", "fuse_rvar_and_pure_into_var"), ("rowsum", "vectorize_unknown_var"),
    ("rowsum", "parallel_rx"), ("rowsum", "atomic_parallel_rx"),
    ("rowsum", "rfactor_rx"),
    # scans
    ("scan", "reorder"), ("scan", "parallel_ry"), ("scan", "parallel_rx"),
    ("scan", "atomic_parallel_rx"), ("scan", "rfactor_rx"),
    ("colscan", "pure_var_parallel"), ("colscan", "reorder_pure_inside"),
    ("colscan", "parallel_rx"), ("colscan", "unroll"), ("colscan", "vectorize_rx"),
    # injective writes: no race
    ("scatter", "parallel_rx"), ("scatter", "vectorize_rx"),
    ("scatter", "vectorize_rx_guard"), ("scatter_stride", "parallel_rx"),
    ("scatter_half", "parallel_rx"), ("scatter_half", "atomic_parallel_rx"),
]


@differential()
@pytest.mark.parametrize("pipe,sched", CASES, ids=["%s-%s" % c for c in CASES])
def test_update_schedule(hl, pipe, sched):
    """("ok", result) for legal schedules, else (step that raised, kind)."""
    return _run(hl, PIPES[pipe], globals()["_s_" + sched])


@differential()
def test_race_error_names_the_rvar(hl):
    """The race-condition error names the RVar and suggests atomic()."""
    f, r, _ = _rowsum(hl)
    try:
        f.update().parallel(r.x)
    except hl.HalideError as exc:
        msg = str(exc)
        return (r.x.name() in msg, "atomic" in msg, "race" in msg)
    return "no error"


@differential()
def test_reorder_error_names_both_rvars(hl):
    f, r, _ = _poly(hl)
    try:
        f.update().reorder(r.y, r.x)
    except hl.HalideError as exc:
        msg = str(exc)
        return (r.x.name() in msg, r.y.name() in msg, "reorder" in msg)
    return "no error"


@differential()
@pytest.mark.parametrize("how", ["parallel", "reorder"])
def test_rvar_of_extent_one_is_pure(hl, how):
    """An RVar of extent 1 has no two iterations: Halide proves that within the
    RDom's bounds, so it may run in parallel or be reordered even in a
    non-commutative update (fuzz finding raises-rvar-extent1-impure; vectorizing
    it still fails in ferrohalide's VectorizeLoops, see tests/fuzz/TRIAGE.md)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    r = hl.RDom([(1, 1), (0, 3)])
    f[x] = f[x] * 2 + r.x + r.y
    if how == "parallel":
        f.update().parallel(r.x)
    else:
        f.update().reorder(r.y, r.x)
    return f.realize([4])


@differential(expect_error=True)
def test_pure_vectorize_default_tail_into_caller_buffer(hl):
    """A RoundUp update loop cannot write past the end of a caller Buffer."""
    y = hl.Var("y")
    f = hl.Func("f")
    r = hl.RDom([(0, 8)])
    f[y] = y
    f[y] += r.x
    f.update().vectorize(y, 4)
    f.realize(hl.Buffer(hl.Int(32), [6]))


# ---------------------------------------------------------------------------------
# rfactor: the intermediate Func
# ---------------------------------------------------------------------------------
@differential()
def test_rfactor_intermediate_func(hl):
    """rfactor(r.y, u) returns a Func named <f>_intm (the exact spelling varies
    when f's name has a $n suffix: not compared) over (f's pure vars..., u),
    with one update over the remaining RVars; f keeps r.y as its only RVar."""
    x, u = hl.Var("x"), hl.Var("u")
    img = _img(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    f = hl.Func("f")
    f[x] = 0
    f[x] += img[r.x, r.y] * (x + 1)
    intm = f.update().rfactor(r.y, u)
    return {
        "name": (intm.name().startswith(f.name().split("$")[0]),
                 intm.name().count("_intm")),
        "args": [a.name() for a in intm.args()],
        "dims": intm.dimensions(),
        "type": intm.type(),
        "updates": intm.num_update_definitions(),
        "intm_rvars": [v.name() == r.x.name() for v in intm.rvars(0)],
        "f_rvars": [v.name() == r.y.name() for v in f.rvars(0)],
        "f_updates": f.num_update_definitions(),
        "out": f.realize([3]),
    }


@differential()
def test_rfactor_two_rvars_and_chained(hl):
    """rfactor([(r.y, u), (r.x, v)]) puts the new vars after the pure ones, the
    innermost RVar's first; rfactor of an intermediate gives <f>_intm_intm
    (up to uniquifying suffixes)."""
    x, u, v, w = hl.Var("x"), hl.Var("u"), hl.Var("v"), hl.Var("w")
    img = _img(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    f = hl.Func("f")
    f[x] = 0
    f[x] += img[r.x, r.y] * (x + 1)
    both = f.update().rfactor([(r.y, u), (r.x, v)])
    g = hl.Func("g")
    g[x] = 0
    g[x] += img[r.x, r.y] - x
    gi = g.update().rfactor(r.y, u)
    gii = gi.update().rfactor(r.x, w)
    gii.compute_root()
    gi.compute_root()
    return {
        "both_args": [a.name() for a in both.args()],
        "both_rvars": len(both.rvars(0)),
        "f_rvars": len(f.rvars(0)),
        "chained_name": (gii.name().startswith(g.name().split("$")[0]),
                         gii.name().count("_intm")),
        "chained_args": [a.name() for a in gii.args()],
        "f": f.realize([3]),
        "g": g.realize([3]),
    }


@differential(rel=1e-6)
def test_rfactor_f32_sum_is_deterministic(hl):
    """A float sum through rfactor reassociates (partial sums per u, then u in
    order): the exact result of that order."""
    a = np.random.RandomState(7).uniform(-1, 1, size=1000).astype(np.float32)
    img = buffer(hl, a)
    r = hl.RDom([(0, 1000)])
    f = hl.Func("f")
    f[()] = hl.f32(0)
    f[()] += img[r.x]
    serial = f.realize([])
    g = hl.Func("g")
    g[()] = hl.f32(0)
    g[()] += img[r.x]
    ro, ri = hl.RVar("ro"), hl.RVar("ri")
    u = hl.Var("u")
    g.update().split(r.x, ro, ri, 64)
    intm = g.update().rfactor(ro, u)
    intm.compute_root().update().parallel(u)
    return serial, g.realize([])


# ---------------------------------------------------------------------------------
# Parallel associative reductions
# ---------------------------------------------------------------------------------
def _big(hl, n=2048, seed=11):
    a = np.random.RandomState(seed).randint(-1000, 1000, size=n).astype(np.int32)
    a[1500] = 5000   # unique maximum
    a[300] = -5000   # minimum, tied below
    a[1700] = -5000
    return buffer(hl, a)


def _par(hl, f, r, vec=True):
    """split r.x, rfactor the outer part into u, parallel over u (and
    vectorize the inner intermediate)."""
    ro, ri = hl.RVar("ro"), hl.RVar("ri")
    u = hl.Var("u")
    f.update().split(r.x, ro, ri, 128)
    intm = f.update().rfactor(ro, u)
    intm.compute_root().update().parallel(u)
    if vec:
        ri_o, ri_i = hl.RVar("rio"), hl.RVar("rii")
        v = hl.Var("v")
        intm.update().split(ri, ri_o, ri_i, 8)
        inner = intm.update().rfactor(ri_i, v)
        inner.compute_at(intm, u).vectorize(v).update().vectorize(v)
    return f


@differential()
@pytest.mark.parametrize("op", ["sum", "max", "min", "sum_sq_u16"])
def test_parallel_reduction_via_rfactor(hl, op):
    img = _big(hl)
    r = hl.RDom([(0, 2048)])
    out = []
    for sched in [False, True]:
        f = hl.Func("f")
        v = img[r.x]
        if op == "sum":
            f[()] = 0
            f[()] += v
        elif op == "max":
            f[()] = v.type().min()
            f[()] = hl.max(f[()], v)
        elif op == "min":
            f[()] = v.type().max()
            f[()] = hl.min(f[()], v)
        else:
            f[()] = hl.u16(0)
            f[()] += hl.u16(v * v)  # wraps
        if sched:
            _par(hl, f, r)
        out.append(f.realize([]))
    return out


@differential()
def test_argmin_via_rfactor_tuple(hl):
    """The (value, index) argmin pattern Halide recognizes as associative:
    (min(v0, v), select(v0 < v, i0, r)).  Ties keep the LAST index (the select
    takes r when equal), serially and through rfactor."""
    img = _big(hl)
    r = hl.RDom([(0, 2048)])
    out = []
    for sched in [False, True]:
        f = hl.Func("f")
        v = img[r.x]
        f[()] = (v.type().max(), 0)
        f[()] = (hl.min(f[()][0], v), hl.select(f[()][0] < v, f[()][1], r.x))
        if sched:
            _par(hl, f, r, vec=False)
        out.append(f.realize([]))
    return out


@differential()
def test_argmax_forms_not_recognized_by_rfactor(hl):
    """Other spellings of argmax (index first, or with >=) are not proven
    associative: rfactor raises, and so does parallel() after atomic()."""
    img = _big(hl)
    out = {}
    for form in ["index_first", "ge", "select_tuple"]:
        for directive in ["rfactor", "atomic"]:
            r = hl.RDom([(0, 2048)])
            f = hl.Func("f")
            v = img[r.x]
            if form == "index_first":
                f[()] = (0, v.type().min())
                f[()] = (hl.select(v > f[()][1], r.x, f[()][0]), hl.max(f[()][1], v))
            elif form == "ge":
                f[()] = (v.type().min(), 0)
                f[()] = (hl.max(f[()][0], v), hl.select(f[()][0] >= v, f[()][1], r.x))
            else:
                f[()] = (0, v.type().min())
                f[()] = hl.select(v > f[()][1], (r.x, v), (f[()][0], f[()][1]))
            if directive == "rfactor":
                sched = lambda: f.update().rfactor(r.x, hl.Var("u"))  # noqa: E731
            else:
                sched = lambda: f.update().atomic().parallel(r.x)  # noqa: E731
            out[form + "_" + directive] = _phase(hl, [("schedule", sched)])[0]
    return out


@differential()
def test_complex_product_via_rfactor(hl):
    """Complex multiplication as a Tuple reduction: recognized as associative."""
    rs = np.random.RandomState(5)
    a = rs.choice([-1, 1], size=(2, 40)) * rs.randint(0, 2, size=(2, 40))
    a[0, a[0] == 0] = 2  # no zero factors
    img = buffer(hl, a.astype(np.int32))
    r = hl.RDom([(0, 40)])
    out = []
    for sched in [None, "rfactor", "atomic"]:
        f = hl.Func("cprod")
        f[()] = (1, 0)
        re, im = f[()][0], f[()][1]
        c, d = img[r.x, 0], img[r.x, 1]
        f[()] = (re * c - im * d, re * d + im * c)
        if sched == "rfactor":
            ro, ri = hl.RVar("ro"), hl.RVar("ri")
            u = hl.Var("u")
            f.update().split(r.x, ro, ri, 8)
            f.update().rfactor(ro, u).compute_root().update().parallel(u)
        elif sched == "atomic":
            f.update().atomic().parallel(r.x)
        out.append(f.realize([]))
    return out


@differential()
def test_associativity_recognition_phase(hl):
    """Which update operators atomic() accepts for a parallel loop (it needs
    associativity and commutativity) and rfactor() accepts (associativity)."""
    img = _img(hl)
    out = {}
    ops = {
        "add": lambda o, v: o + v,
        "mul": lambda o, v: o * v,
        "max": lambda o, v: hl.max(o, v),
        "min": lambda o, v: hl.min(o, v),
        # ("sub", o - v: see test_subtraction_is_a_sum_of_negated_terms.)
        "sub_rev": lambda o, v: v - o,
        "xor": lambda o, v: o ^ v,
        "and": lambda o, v: o & v,
        "add_sq": lambda o, v: o + v * v,
        "mul_add": lambda o, v: o * 2 + v,
        "select_max": lambda o, v: hl.select(v > o, v, o),
    }
    for name, op in ops.items():
        for directive in ["atomic", "rfactor"]:
            r = hl.RDom([(0, 8), (0, 6)])
            f = hl.Func("f")
            f[()] = 0
            f[()] = op(f[()], img[r.x, r.y])
            if directive == "atomic":
                sched = lambda: f.update().atomic().parallel(r.y)  # noqa: E731
            else:
                sched = lambda: f.update().rfactor(r.y, hl.Var("u"))  # noqa: E731
            out[name + "_" + directive] = _phase(hl, [("schedule", sched)])[0]
    return out


def test_subtraction_is_a_sum_of_negated_terms():
    """A deliberate difference: `f = f - v` is `f + (-v)` exactly (integers
    wrap, float negation is exact), so atomic() and rfactor() accept it.
    Halide 21 accepts it only when its simplifier happens to rewrite the
    value as a sum (`f - (2 + v)`), and refuses plain `f - v`."""
    import ferrohalide as hl

    img = _img(hl)
    expected = -int(np.asarray(img).sum())
    for directive in ["atomic", "rfactor"]:
        r = hl.RDom([(0, 8), (0, 6)])
        f = hl.Func("f")
        f[()] = 0
        f[()] = f[()] - img[r.x, r.y]
        if directive == "atomic":
            f.update().atomic().parallel(r.y)
        else:
            f.update().rfactor(r.y, hl.Var("u")).compute_root()
        assert int(np.asarray(f.realize([]))) == expected, directive


@differential()
def test_atomic_check_happens_at_parallel(hl):
    """atomic() itself never fails: the associativity proof is required when a
    loop is then marked parallel / vectorized (error from that call).  atomic()
    with serial loops leaves the result unchanged.  parallel() BEFORE atomic()
    is the plain race error."""
    out = {}
    f, r, _ = _poly(hl)
    out["atomic_alone"] = _phase(hl, [("atomic", lambda: f.update().atomic() and None),
                                      ("parallel", lambda: f.update().parallel(r.y))])
    g, rg, _ = _poly(hl)
    g.update().atomic().unroll(rg.y, 2)
    out["atomic_serial"] = g.realize([])
    h, rh, sizes = _hist(hl)
    out["parallel_then_atomic"] = _phase(
        hl, [("parallel", lambda: h.update().parallel(rh.y) and None),
             ("atomic", lambda: h.update().atomic() and None)])
    return out


@differential()
def test_atomic_reductions(hl):
    """atomic() with parallel / vectorized RVars on CPU: int add, max, mul,
    u8 add (wraps), f32 add of exactly representable values, a Tuple add."""
    x = hl.Var("x")
    img = _img(hl)
    out = {}
    for name in ["add", "max", "mul", "u8", "f32", "tuple"]:
        r = hl.RDom([(0, 8), (0, 6)])
        f = hl.Func("f")
        v = img[r.x, r.y]
        if name == "add":
            f[x] = 0
            f[x] += v * (x + 1)
        elif name == "max":
            f[x] = 0
            f[x] = hl.max(f[x], v * (x + 1))
        elif name == "mul":
            f[x] = 1
            f[x] = f[x] * ((v + x) % 3 * 2 + 1)  # odd factors: no wrap to 0
        elif name == "u8":
            f[x] = hl.u8(0)
            f[x] += hl.u8(v * 7 + x)
        elif name == "f32":
            f[x] = hl.f32(0)
            f[x] += hl.f32(v) * 0.5 + hl.f32(x)
        else:
            f[x] = (0, 0)
            f[x] = (f[x][0] + v, f[x][1] + x + 1)
        stage = f.update().atomic().parallel(r.y)
        if name in ("add", "u8", "max"):
            stage.vectorize(r.x, 4)
        out[name] = f.realize([3])
    return out


# ---------------------------------------------------------------------------------
# Matrix multiply
# ---------------------------------------------------------------------------------
def _matmul(hl, dt, schedule):
    """C (64x32) = A (64x48) @ B (48x32); Halide coordinates C[j, i] =
    sum_k A[k, i] * B[j, k]."""
    x, y = hl.Var("x"), hl.Var("y")
    rs = np.random.RandomState(2)
    a = rs.randint(-9, 10, size=(64, 48))
    b = rs.randint(-9, 10, size=(48, 32))
    if dt == np.float32:
        a = a * 0.37 + 0.01
        b = b * 0.53 - 0.02
    A = buffer(hl, a.astype(dt))
    B = buffer(hl, b.astype(dt))
    k = hl.RDom([(0, 48)], "k")
    C = hl.Func("C")
    C[x, y] = hl.cast(A.type(), 0)
    C[x, y] += A[k.x, y] * B[x, k.x]
    if schedule == "tiled":
        xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
        C.vectorize(x, 8).parallel(y)
        C.update().tile(x, y, xo, yo, xi, yi, 8, 4).reorder(xi, yi, k.x, xo, yo) \
            .vectorize(xi).unroll(yi).parallel(yo)
    elif schedule == "split_k":
        ko, ki = hl.RVar("ko"), hl.RVar("ki")
        C.update().split(k.x, ko, ki, 4).reorder(x, ki, ko, y).vectorize(x, 8)
    elif schedule == "rfactor_k":
        ko, ki = hl.RVar("ko"), hl.RVar("ki")
        u = hl.Var("u")
        C.update().split(k.x, ko, ki, 16)
        intm = C.update().rfactor(ko, u)
        intm.compute_at(C, y).vectorize(x, 8).update().vectorize(x, 8)
        C.update().vectorize(x, 8)
    elif schedule == "staged_b":
        # a transposed copy of B computed inside the update's y loop
        Bt = hl.Func("Bt")
        Bt[x, y] = B[x, y]
        C2 = hl.Func("C2")
        C2[x, y] = hl.cast(A.type(), 0)
        C2[x, y] += A[k.x, y] * Bt[x, k.x]
        C2.update().vectorize(x, 8)
        Bt.compute_at(C2, y).vectorize(x, 8)
        return C2.realize([32, 64])
    return C.realize([32, 64])


@differential()
@pytest.mark.parametrize("schedule", ["plain", "tiled", "split_k", "rfactor_k",
                                      "staged_b"])
def test_matmul_int(hl, schedule):
    return _matmul(hl, np.int32, schedule)


@differential()
@pytest.mark.parametrize("schedule", ["plain", "tiled", "rfactor_k"])
def test_matmul_f32(hl, schedule):
    """Float results within a small relative bound of the reference (the same
    summation order is expected; the bound allows for contraction into FMAs)."""
    return Tol(_matmul(hl, np.float32, schedule), rel=1e-5, abs=1e-4)


# ---------------------------------------------------------------------------------
# Producers computed inside update loops
# ---------------------------------------------------------------------------------
def _producer_pipe(hl):
    x, y = hl.Var("x"), hl.Var("y")
    g = hl.Func("g")
    g[x, y] = x * 10 + y * y
    f = hl.Func("f")
    r = hl.RDom([(0, 3)])
    f[x, y] = x - y
    f[x, y] += g[x + r.x, y] * (r.x + 1)
    return f, g, r, x, y


@differential()
@pytest.mark.parametrize("where", ["root", "at_x", "at_y", "at_rx", "at_rx_reordered",
                                   "store_root_at_rx", "at_split_rvar_outer",
                                   "at_split_rvar_inner", "looplevel_rx",
                                   "looplevel_rx_last_stage"])
def test_producer_computed_inside_update_loops(hl, where):
    f, g, r, x, y = _producer_pipe(hl)
    if where == "root":
        g.compute_root()
    elif where == "at_x":
        g.compute_at(f, x)
    elif where == "at_y":
        g.compute_at(f, y)
    elif where == "at_rx":
        g.compute_at(f, r.x)
    elif where == "at_rx_reordered":
        f.update().reorder(x, r.x)
        g.compute_at(f, r.x)
    elif where == "store_root_at_rx":
        g.store_root().compute_at(f, r.x)
    elif where in ("at_split_rvar_outer", "at_split_rvar_inner"):
        ro, ri = hl.RVar("ro"), hl.RVar("ri")
        f.update().split(r.x, ro, ri, 2, hl.TailStrategy.GuardWithIf)
        g.compute_at(f, ro if where.endswith("outer") else ri)
    elif where == "looplevel_rx":
        g.compute_at(hl.LoopLevel(f, r.x))
    else:
        g.compute_at(hl.LoopLevel(f, r.x, -1))
    return f.realize([5, 4])


@differential()
def test_producer_used_by_pure_and_update_stages(hl):
    """A producer used by both stages may be computed at f's pure vars (covering
    both) but not at an RVar of the update: HalideError at realize."""
    x = hl.Var("x")
    out = {}
    for where in ["at_x", "at_rx", "root"]:
        g = hl.Func("g")
        g[x] = x * 10
        f = hl.Func("f")
        r = hl.RDom([(0, 3)])
        f[x] = g[x]
        f[x] += g[x + r.x]
        def sched(where=where, g=g, f=f, r=r):
            if where == "at_x":
                g.compute_at(f, x)
            elif where == "at_rx":
                g.compute_at(f, r.x)
            else:
                g.compute_root()

        out[where] = _phase(hl, [("schedule", sched),
                                 ("realize", lambda f=f: f.realize([5]))])
    return out


@differential()
def test_compute_at_unknown_loop_phase(hl):
    """compute_at a var or RVar that is not a loop of the consumer: accepted by
    compute_at, HalideError at realize."""
    f, g, r, x, y = _producer_pipe(hl)
    return _phase(hl, [("schedule", lambda: g.compute_at(f, hl.RVar("nope"))),
                       ("realize", lambda: f.realize([5, 4]))])


@differential()
def test_update_stage_schedule_chaining_and_introspection(hl):
    """Stage methods return the Stage (chainable); dump_argument_list shows the
    loop order innermost first, ending in __outermost."""
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, 4), (0, 2)], "rr")
    f = hl.Func("f")
    f[x, y] = x + y
    f[x, y] += r.x * r.y
    before = f.update(0).dump_argument_list()
    st = f.update(0)
    st2 = st.reorder(x, r.x)
    f.update(0).split(y, hl.Var("yo"), hl.Var("yi"), 2)
    after = f.update(0).dump_argument_list()
    return {"before": before, "after": after, "stage_type": type(st2).__name__,
            "out": f.realize([4, 4])}
