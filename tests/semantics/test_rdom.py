"""RDom: constructors (list of (min, extent) tuples, hl.Range, Buffer,
ImageParam), RVar access and queries, where() predicates (triangular, circular,
data-dependent), iteration order, and reductions with RDoms (convolutions)."""
import numpy as np
import pytest

from .harness import buffer, differential
from .input_helpers import phase as _phase


def _bounds(hl, r):
    """[(min, extent)] of every dimension, as Python ints."""
    return [(hl.evaluate(r[i].min()), hl.evaluate(r[i].extent()))
            for i in range(r.dimensions())]


def _image(hl, w, h, dtype=np.int32, mod=13, seed=0):
    a = np.random.RandomState(seed).randint(0, mod, size=(h, w))
    if np.dtype(dtype).kind == "f":
        a = a * 0.37 - 1.5
    return buffer(hl, a.astype(dtype))


# ---------------------------------------------------------------------------------
# Construction and queries
# ---------------------------------------------------------------------------------
@differential()
def test_rdom_from_tuples_ranges_and_exprs(hl):
    p = hl.Param(hl.Int(32), "p", 4)
    out = {
        "tuples": _bounds(hl, hl.RDom([(0, 4), (1, 3)])),
        "ranges": _bounds(hl, hl.RDom([hl.Range(2, 5), hl.Range(-1, 2)])),
        "mixed": _bounds(hl, hl.RDom([hl.Range(1, 3), (2, 2)])),
        "exprs": _bounds(hl, hl.RDom([(hl.Expr(3) * 2, hl.Expr(7) - 2)])),
        "narrow_types": _bounds(hl, hl.RDom([(hl.u8(250), hl.i16(10))])),
        "keywords": _bounds(hl, hl.RDom(region=[(5, 6)], name="kw")),
    }
    r = hl.RDom([(0, 4), (1, 3)])
    out["dims"] = [r.dimensions(), len(r), hl.RDom([(0, 1)] * 5).dimensions()]
    out["minmax_types"] = [hl.RDom([(hl.u8(1), hl.u8(2))]).x.min().type(),
                           hl.RDom([(hl.u8(1), hl.u8(2))]).x.extent().type()]
    rp = hl.RDom([(1, p)])
    f = hl.Func("f")
    f[()] = (rp.x.min(), rp.x.extent())
    out["param_extent"] = f.realize([])
    return out


@differential()
def test_rvar_names_of_named_rdom(hl):
    """An explicit name gives RVars name$x, name$y, name$z, name$w, then name$4,
    name$5...; the same name may be used twice."""
    r = hl.RDom([(0, 1)] * 6, "dom")
    again = hl.RDom([(0, 2)], "dom")
    return [r[i].name() for i in range(6)] + [again.x.name()]


@differential()
def test_rvar_names_of_unnamed_rdom(hl):
    """Unnamed RDoms get a fresh unique prefix shared by their RVars ("<prefix>$x",
    "<prefix>$y"); two RDoms never share it.  (The prefix itself is a counter and
    is not compared.)"""
    r = hl.RDom([(0, 2), (0, 3)])
    s = hl.RDom([(0, 2), (0, 3)])
    rx, ry, sx = r.x.name(), r.y.name(), s.x.name()
    return (rx.endswith("$x"), ry.endswith("$y"),
            rx.split("$")[0] == ry.split("$")[0], rx != sx)


@differential()
def test_rvar_access_forms(hl):
    """r.x / r.y / r.z / r.w are r[0..3]; hl.RVar(r) of a 1-D RDom is r.x."""
    r = hl.RDom([(0, 2), (1, 3), (2, 4), (3, 5)], "four")
    one = hl.RDom([(4, 6)], "one")
    v = hl.RVar(one)
    return {
        "attrs": [r.x.name(), r.y.name(), r.z.name(), r.w.name()],
        "index": [r[i].name() for i in range(4)],
        "rvar_of_rdom": [v.name(), hl.evaluate(v.min()), hl.evaluate(v.extent())],
        "bounds": _bounds(hl, r),
    }


@differential(expect_error=True)
def test_rdom_index_out_of_range(hl):
    """r[i] past the last dimension raises (KeyError in the reference)."""
    r = hl.RDom([(0, 2), (0, 3)])
    r[2]


@differential(expect_error=True)
def test_rvar_of_multidimensional_rdom(hl):
    hl.RVar(hl.RDom([(0, 2), (0, 3)]))


@differential(expect_error=True)
def test_multidimensional_rdom_as_expr(hl):
    """A 1-D RDom converts to an Expr (its RVar); a 2-D one cannot."""
    x = hl.Var("x")
    r = hl.RDom([(0, 2), (0, 3)])
    f = hl.Func("f")
    f[x] = 0
    f[x] += r


@differential()
def test_one_dimensional_rdom_as_expr(hl):
    x = hl.Var("x")
    r = hl.RDom([(1, 3)])
    f = hl.Func("f")
    f[x] = x
    f[x] += r * 10
    b = buffer(hl, np.array([4, 8, 15, 16], dtype=np.int32))
    g = hl.Func("g")
    g[()] = 0
    g[()] += b[r] + f[r]
    return f.realize([3]), g.realize([])


@differential()
def test_rdom_bad_bounds_phase(hl):
    """Bounds that depend on a pure Var or on another RDom's RVar: HalideError when
    the RDom is made.  Float bounds, and a list of lists instead of tuples:
    TypeError from the constructor."""
    x = hl.Var("x")
    r = hl.RDom([(0, 5)])
    return {
        "var": _phase(hl, [("rdom", lambda: hl.RDom([(x, 5)]))]),
        "var_extent": _phase(hl, [("rdom", lambda: hl.RDom([(0, x + 1)]))]),
        "rvar": _phase(hl, [("rdom", lambda: hl.RDom([(0, r.x)]))]),
        "float": _phase(hl, [("rdom", lambda: hl.RDom([(0.5, 5)]))]),
        "float_expr": _phase(hl, [("rdom", lambda: hl.RDom([(hl.f32(0.5), 5)]))]),
        "lists": _phase(hl, [("rdom", lambda: hl.RDom([[0, 5]]))]),
        "triple": _phase(hl, [("rdom", lambda: hl.RDom([(0, 1, 2)]))]),
    }


@differential()
def test_rdom_from_other_rvars_bounds(hl):
    """The min / extent of an RVar are plain Exprs usable to build another RDom."""
    r = hl.RDom([(2, 5), (1, 3)])
    s = hl.RDom([(r.x.min(), r.y.extent()), (r.y.min() * 2, r.x.extent() - 1)])
    return _bounds(hl, s)


@differential()
def test_rdom_over_buffer(hl):
    """RDom(buffer) spans the buffer's dims, including non-zero mins."""
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = buffer(hl, a)
    b.set_min([2, -1])
    r = hl.RDom(b)
    f = hl.Func("f")
    f[()] = 0
    f[()] += b[r.x, r.y] * (r.x + 2 * r.y)
    return {"bounds": _bounds(hl, r), "dims": r.dimensions(), "sum": f.realize([])}


@differential()
def test_rdom_over_three_dimensional_buffer(hl):
    x = hl.Var("x")
    b = buffer(hl, (np.arange(24, dtype=np.int32) % 5).reshape(2, 3, 4))
    r = hl.RDom(b)
    f = hl.Func("f")
    f[x] = 0
    f[r.z] += b[r.x, r.y, r.z] * (r.x + 1)
    return _bounds(hl, r), f.realize([2])


@differential()
def test_rdom_over_image_param(hl):
    """RDom(ImageParam): RVars named after the param, bounds taken from the
    buffer bound at realize time."""
    ip = hl.ImageParam(hl.Int(32), 2, "inp")
    r = hl.RDom(ip)
    f = hl.Func("f")
    f[()] = 0
    f[()] += ip[r.x, r.y] * (r.x + 1) - r.y
    b = buffer(hl, np.arange(12, dtype=np.int32).reshape(3, 4))
    b.set_min([2, 1])
    ip.set(b)
    first = f.realize([])
    b2 = buffer(hl, np.arange(6, dtype=np.int32).reshape(2, 3) * 3)
    ip.set(b2)
    second = f.realize([])
    return [r[i].name() for i in range(2)], first, second


@differential()
def test_empty_and_negative_extent_rdoms_do_nothing(hl):
    p = hl.Param(hl.Int(32), "p", -3)
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x + 5
    f[x] += hl.RDom([(0, 0)]).x
    f[x] += hl.RDom([(4, -2)]).x * 100
    f[x] += hl.RDom([(1, p)]).x * 1000
    return f.realize([3])


# ---------------------------------------------------------------------------------
# Iteration order
# ---------------------------------------------------------------------------------
@differential()
def test_iteration_order_innermost_first(hl):
    """A non-commutative update records the order: r.x is the innermost loop, then
    r.y, then r.z."""
    r = hl.RDom([(0, 3), (0, 2), (0, 2)])
    f = hl.Func("f")
    f[()] = hl.i64(0)
    f[()] = f[()] * 10 + hl.i64(r.x + 3 * r.y + 6 * r.z) % 10
    return f.realize([])


@differential()
def test_rdom_with_pure_vars_loop_order(hl):
    """Update over (x, r): every x sees its own reduction (pure vars outside the
    RVars, but no cross-x dependence is possible)."""
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, 4)])
    f = hl.Func("f")
    f[x, y] = x - y
    f[x, y] = f[x, y] * 3 + (r.x * (x + 1) + y) % 5
    return f.realize([4, 3])


@differential()
def test_same_rdom_in_two_funcs_and_two_updates(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 5)])
    f = hl.Func("f")
    f[x] = 0
    f[x] += r.x * x
    f[x] += r.x
    g = hl.Func("g")
    g[x] = 1
    g[x] *= r.x + x
    return f.realize([4]), g.realize([4])


# ---------------------------------------------------------------------------------
# where() predicates
# ---------------------------------------------------------------------------------
@differential()
def test_where_triangular(hl):
    """Upper and strict lower triangles of a 6x6 domain, each from a where() on
    the RDom (predicates referring to two RVars)."""
    x, y = hl.Var("x"), hl.Var("y")
    up = hl.RDom([(0, 6), (0, 6)])
    up.where(up.x <= up.y)
    f = hl.Func("upper")
    f[x, y] = 0
    f[up.x, up.y] = 1 + up.x
    lo = hl.RDom([(0, 6), (0, 6)])
    lo.where(lo.y < lo.x)
    g = hl.Func("lower_count")
    g[x] = 0
    g[lo.x] += lo.y + 1
    return f.realize([6, 6]), g.realize([6])


@differential()
def test_where_circular(hl):
    """A disc of radius 4 inside a 11x11 square, painted and counted."""
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(-5, 11), (-5, 11)])
    r.where(r.x * r.x + r.y * r.y <= 16)
    disc = hl.Func("disc")
    disc[x, y] = hl.u8(0)
    disc[r.x + 5, r.y + 5] = hl.u8(255)
    c = hl.RDom([(-5, 11), (-5, 11)])
    c.where(c.x * c.x + c.y * c.y <= 16)
    n = hl.Func("n")
    n[()] = hl.sum(hl.i32(1) + 0 * c.x)
    return disc.realize([11, 11]), n.realize([])


@differential()
def test_where_several_predicates_are_anded(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 30)])
    r.where(r.x % 2 == 0)
    r.where(r.x > 5)
    r.where(r.x % 3 != 0)
    f = hl.Func("f")
    f[x] = 0
    f[r.x] = 1
    return f.realize([30])


@differential()
def test_where_returns_none(hl):
    """where() changes the RDom in place and returns None (no chaining)."""
    r = hl.RDom([(0, 4)])
    return r.where(r.x > 0) is None


@differential()
def test_where_annulus_of_two_rvars_and_param(hl):
    """Predicate mixing both RVars and a Param: an annulus with a Param radius."""
    rad = hl.Param(hl.Int(32), "rad", 3)
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(-4, 9), (-4, 9)])
    r.where(r.x * r.x + r.y * r.y <= (rad + 1) * (rad + 1))
    r.where(r.x * r.x + r.y * r.y > rad * rad - 4)
    f = hl.Func("ring")
    f[x, y] = 0
    f[r.x + 4, r.y + 4] = f[r.x + 4, r.y + 4] + 1 + hl.abs(r.x)
    out = {"rad3": f.realize([9, 9])}
    rad.set(2)
    out["rad2"] = f.realize([9, 9])
    return out


@differential()
def test_where_data_dependent(hl):
    """Predicate reading an input Buffer."""
    img = _image(hl, 7, 5)
    r = hl.RDom([(0, 7), (0, 5)])
    r.where(img[r.x, r.y] % 3 == 0)
    f = hl.Func("f")
    f[()] = (0, 0)
    f[()] = (f[()][0] + img[r.x, r.y], f[()][1] + 1)
    return f.realize([])


@differential()
def test_where_with_pure_var(hl):
    """A predicate may mention a pure Var of the update it is used in."""
    x = hl.Var("x")
    r = hl.RDom([(0, 10)])
    r.where(r.x < x * 2)
    f = hl.Func("f")
    f[x] = 0
    f[x] += r.x
    return f.realize([7])


@differential()
def test_where_with_inline_reductions(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 12)])
    r.where((r.x * 5) % 7 < 3)
    f = hl.Func("f")
    f[x] = hl.sum(r.x * x + 1) + hl.maximum(r.x) * 1000
    return f.realize([3])


@differential()
def test_where_never_true_and_float_condition(hl):
    x = hl.Var("x")
    never = hl.RDom([(0, 10)])
    never.where(never.x < 0)
    fl = hl.RDom([(0, 10)])
    fl.where(hl.f32(fl.x) * 0.5 < 2.25)
    f = hl.Func("f")
    f[x] = x + 7
    f[x] += never.x * 1000
    f[x] += fl.x
    return f.realize([2])


@differential()
def test_where_errors_phase(hl):
    """A non-bool predicate, another RDom's RVar, or a predicate added after the
    RDom was used in an update: HalideError from where() itself."""
    x = hl.Var("x")
    out = {}
    r1 = hl.RDom([(0, 10)])
    out["non_bool"] = _phase(hl, [("where", lambda: r1.where(r1.x + 1))])
    r2 = hl.RDom([(0, 10)])
    other = hl.RDom([(0, 3)])
    out["other_rdom"] = _phase(hl, [("where", lambda: r2.where(other.x < 1))])
    r3 = hl.RDom([(0, 10)])
    f = hl.Func("f")
    f[x] = 0
    f[x] += r3.x
    out["after_update"] = _phase(hl, [("where", lambda: r3.where(r3.x < 3))])
    r4 = hl.RDom([(0, 10)])
    g = hl.Func("g")
    g[x] = hl.sum(r4.x + x)
    out["after_inline_sum"] = _phase(hl, [("where", lambda: r4.where(r4.x < 3))])
    return out


@differential()
def test_where_error_message_for_other_rdom(hl):
    """The message says the predicate may only use the RDom's own RVars."""
    r = hl.RDom([(0, 10)])
    other = hl.RDom([(0, 3)])
    try:
        r.where(other.x < 1)
    except hl.HalideError as exc:
        msg = str(exc).lower()
        return "predicate" in msg and "rdom" in msg
    return "no error"


# ---------------------------------------------------------------------------------
# Convolutions with RDoms
# ---------------------------------------------------------------------------------
def _kernel5(hl, dtype):
    k = np.array([1, 4, 6, 4, 1])
    if np.dtype(dtype).kind == "f":
        k = k / 16.0 + np.array([0.01, -0.02, 0.0, 0.03, -0.01])
    return buffer(hl, k.astype(dtype))


@differential(rel=1e-6, abs=1e-6)
@pytest.mark.parametrize("t", ["i32", "f32"])
def test_separable_convolution(hl, t):
    """Separable 5-tap blur with RDoms of min -2, explicit updates in x and an
    inline sum in y; clamped edges."""
    dt = np.int32 if t == "i32" else np.float32
    x, y = hl.Var("x"), hl.Var("y")
    src = _image(hl, 13, 9, dtype=dt)
    k = _kernel5(hl, dt)
    clamped = hl.Func("clamped")
    clamped[x, y] = src[hl.clamp(x, 0, 12), hl.clamp(y, 0, 8)]
    r = hl.RDom([(-2, 5)])
    bx = hl.Func("bx")
    bx[x, y] = hl.cast(src.type(), 0)
    bx[x, y] += clamped[x + r.x, y] * k[r.x + 2]
    by = hl.Func("by")
    ry = hl.RDom([(-2, 5)])
    by[x, y] = hl.sum(bx[x, y + ry.x] * k[ry.x + 2])
    return by.realize([13, 9])


@differential(rel=1e-6, abs=1e-6)
@pytest.mark.parametrize("t", ["i32", "f32"])
def test_2d_convolution(hl, t):
    """3x3 (non-symmetric) kernel from a Buffer, RDom(kernel) with min -1,
    explicit update; and the same with an inline sum over a 2-D RDom."""
    dt = np.int32 if t == "i32" else np.float32
    x, y = hl.Var("x"), hl.Var("y")
    src = _image(hl, 12, 8, dtype=dt)
    k = np.array([[1, 2, 0], [-1, 5, 3], [2, -2, 1]])
    if t == "f32":
        k = k * 0.3 + 0.05
    kern = buffer(hl, k.astype(dt))
    kern.set_min([-1, -1])
    r = hl.RDom(kern)
    conv = hl.Func("conv")
    conv[x, y] = hl.cast(src.type(), 0)
    conv[x, y] += src[x + r.x + 1, y + r.y + 1] * kern[r.x, r.y]
    q = hl.RDom([(-1, 3), (-1, 3)])
    conv2 = hl.Func("conv2")
    conv2[x, y] = hl.sum(src[x + q.x + 1, y + q.y + 1] * kern[q.x, q.y])
    return conv.realize([10, 6]), conv2.realize([10, 6])


@differential()
def test_box_filter_on_uint8_widened(hl):
    """A 5x5 box sum of a uint8 image accumulated in uint16, then normalized."""
    x, y = hl.Var("x"), hl.Var("y")
    a = ((np.arange(16 * 12).reshape(12, 16) * 53) % 256).astype(np.uint8)
    src = buffer(hl, a)
    r = hl.RDom([(0, 5), (0, 5)])
    s = hl.Func("s")
    s[x, y] = hl.u16(0)
    s[x, y] += hl.u16(src[x + r.x, y + r.y])
    out = hl.Func("out")
    out[x, y] = hl.u8(s[x, y] / 25)
    return s.realize([12, 8]), out.realize([12, 8])


def _conditional_sum(hl, on_old=False):
    x = hl.Var("x")
    f = hl.Func("f")
    r = hl.RDom([(0, 50), (0, 3)])
    f[x] = x
    cond = (f[x] < 1000) if on_old else ((r.x % 3) > 0)
    f[x] = hl.select(cond, f[x] + r.x * r.y + x, f[x])
    return x, f, r


def _schedule_update(hl, f, r, schedule):
    """The schedules an associative update of f over r allows."""
    if schedule == "reorder":
        f.update(0).reorder(r.y, r.x)
    elif schedule == "rfactor":
        u = hl.Var("u")
        f.update(0).rfactor([(r.y, u)]).compute_root()
    elif schedule == "atomic":
        f.update(0).atomic().parallel(r.x)


@differential()
@pytest.mark.parametrize("schedule", ["none", "reorder", "rfactor", "atomic"])
def test_conditional_sum_is_associative(hl, schedule):
    """`select(c, f + y, f)` with `c` not reading f is a sum over the
    iterations where `c` holds: Halide's associativity search accepts it
    for RVar reorders, rfactor and atomic, and ferrohalide refused the
    reorder ("can't reorder RVars", found while triaging fuzz seeds)."""
    x, f, r = _conditional_sum(hl)
    _schedule_update(hl, f, r, schedule)
    return f.realize([5])


@differential()
@pytest.mark.parametrize("schedule", ["none", "reorder", "rfactor", "atomic"])
def test_conditional_float_sum_keeps_the_sign_of_zero(hl, schedule):
    """Where the condition never holds a float sum must leave -0.0 as it is:
    the sum over the iterations that hold adds -0.0 where the condition
    fails (adding +0.0 would give +0.0). An rfactor's intermediate starts at
    +0.0 in both implementations."""
    x = hl.Var("x")
    f = hl.Func("f")
    r = hl.RDom([(0, 10), (0, 2)])
    f[x] = hl.f32(-0.0)
    f[0] = hl.select(r.x > 100, f[0] + hl.f32(r.x * r.y), f[0])
    _schedule_update(hl, f, r, schedule)
    return np.signbit(np.asarray(f.realize([3]))).astype(np.uint8)


@differential(expect_error=True)
def test_conditional_sum_on_the_old_value_is_not_reordered(hl):
    """A condition reading the old value makes the order matter."""
    x, f, r = _conditional_sum(hl, on_old=True)
    f.update(0).reorder(r.y, r.x)
    return f.realize([5])


def _self_steered_sum(hl, in_predicate):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 0
    r = hl.RDom([(0, 3), (0, 3)])
    if in_predicate:
        r.where(f[0] < 5)
        f[0] = f[0] + r.x + 3 * r.y
    else:
        i = hl.select(f[0] >= 5, 1, 0)
        f[i] = f[i] + r.x + 3 * r.y
    return f, r


def _schedule_self_steered(hl, f, r, schedule):
    if schedule == "reorder":
        f.update(0).reorder(r.y, r.x)
    elif schedule == "atomic":
        f.update(0).atomic().parallel(r.y)
    else:
        f.update(0).rfactor([(r.y, hl.Var("u"))]).compute_root()


@differential(expect_error=True)
@pytest.mark.parametrize("schedule", ["reorder", "atomic", "rfactor"])
def test_a_sum_whose_index_reads_the_func_is_not_reordered(hl, schedule):
    """`f[select(f[0] >= 5, 1, 0)] += r.x + 3 r.y`: where each iteration
    adds depends on what earlier ones added, so the RVars' order matters
    ([6, 30] in order, [9, 27] with r.x outside). ferrohalide took the
    update for a sum and reordered it, silently giving [9, 27] (found while
    triaging fuzz seeds); like Halide it now refuses."""
    f, r = _self_steered_sum(hl, in_predicate=False)
    _schedule_self_steered(hl, f, r, schedule)
    return f.realize([2])


@pytest.mark.parametrize("schedule", ["reorder", "atomic", "rfactor"])
def test_a_sum_whose_rdom_predicate_reads_the_func_is_not_reordered(schedule):
    """The same with the Func read in the RDom's predicate
    (`r.where(f[0] < 5)`): the iterations that run depend on earlier ones.
    Halide 21 reorders it unchecked and returns [9, 0] where the pipeline
    in order gives [6, 0]; ferrohalide refuses it."""
    import ferrohalide as hl

    f, r = _self_steered_sum(hl, in_predicate=True)
    assert np.array(f.realize([2])).tolist() == [6, 0]
    f, r = _self_steered_sum(hl, in_predicate=True)
    with pytest.raises(hl.HalideError, match="can't reorder RVars|can't prove associativity"):
        _schedule_self_steered(hl, f, r, schedule)


def _clamped_row_update(hl, schedule, hi):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    r = hl.RDom([(-1, 3), (0, 3)])
    i = hl.clamp(12 + r.x, 6, hi)
    f[x, i] = f[x, i] * 2 + r.y
    if schedule == "reorder":
        f.update(0).reorder(r.y, r.x)
    else:
        f.update(0).parallel(r.x)
    return f.realize([4, 16])


@differential()
@pytest.mark.parametrize("schedule", ["reorder", "parallel"])
def test_a_clamp_the_rdom_never_reaches_keeps_an_rvar_pure(hl, schedule):
    """`clamp(12 + r.x, 6, 14)` over r.x in [-1, 1] is `12 + r.x`: each
    iteration of r.x owns its row, so reordering or parallelizing it is
    safe (Halide simplifies its hazard within the RDom's bounds; ferrohalide
    refused it, found triaging fuzz seed 40002)."""
    return _clamped_row_update(hl, schedule, 14)


@differential(expect_error=True)
@pytest.mark.parametrize("schedule", ["reorder", "parallel"])
def test_a_clamp_the_rdom_reaches_makes_rows_shared(hl, schedule):
    """With the clamp binding (r.x = 1 and r.x = 0 both write row 12) the
    order matters: both refuse."""
    return _clamped_row_update(hl, schedule, 12)
