"""Inline reductions: hl.sum, hl.product, hl.maximum, hl.minimum, hl.argmax,
hl.argmin: result types (no widening), identities on empty domains, ties, RDom
inferred or given, use inside updates, and the errors."""
import numpy as np
import pytest

from .harness import buffer, differential, htype
from .input_helpers import phase as _phase


# Values chosen so that sums / products overflow the narrow types.
ROWS = np.array([[3, 200, 7, 200, 90, 1],
                 [1, 1, 9, 0, 250, 250],
                 [250, 250, 2, 250, 13, 77]], dtype=np.int64)

REDUCERS = ["sum", "product", "maximum", "minimum"]


@differential()
@pytest.mark.parametrize("t", ["u8", "i8", "i16", "u32", "f64"])
def test_reduction_types_and_wrapping(hl, t):
    """The result has the type of the reduced expression: sum of uint8 is uint8
    and wraps (no widening); the same for product."""
    y = hl.Var("y")
    img = buffer(hl, ROWS.astype(np.int32))
    ty = htype(hl, t)
    out = {}
    for name in REDUCERS:
        r = hl.RDom([(0, 6)])
        e = getattr(hl, name)(hl.cast(ty, img[r.x, y]))
        f = hl.Func("f_" + name)
        f[y] = e
        out[name] = (e.type(), f.realize([3]))
    return out


@differential()
def test_reduction_of_bool(hl):
    """Reductions of a bool expression stay bool (sum is a 1-bit add)."""
    r = hl.RDom([(0, 7)])
    f = hl.Func("f")
    f[()] = (hl.sum(r.x > 4), hl.sum(r.x > 3), hl.maximum(r.x > 5), hl.minimum(r.x > 0),
             hl.product(r.x > 0))
    return [hl.sum(hl.RDom([(0, 2)]).x > 0).type(), f.realize([])]


@differential()
@pytest.mark.parametrize("t", ["u8", "i32", "u64", "f32"])
def test_reductions_over_empty_domain(hl, t):
    """An empty RDom leaves the initial values: 0 for sum, 1 for product, the
    type's lowest value for maximum (-inf for floats), its highest for minimum;
    argmax / argmin give index 0 and that extreme value."""
    ty = htype(hl, t)
    r = hl.RDom([(0, 0)])
    e = hl.cast(ty, r.x)
    f = hl.Func("f")
    f[()] = (hl.sum(e), hl.product(e), hl.maximum(e), hl.minimum(e))
    g = hl.Func("g")
    g[()] = hl.argmax(e) + hl.argmin(e)
    return f.realize([]), g.realize([])


@differential()
def test_sum_over_2d_domain_with_pure_vars(hl):
    x, y = hl.Var("x"), hl.Var("y")
    a = (np.arange(7 * 6).reshape(6, 7) * 13 % 23).astype(np.int16)
    img = buffer(hl, a)
    r = hl.RDom([(0, 3), (0, 2)])
    f = hl.Func("f")
    f[x, y] = hl.sum(hl.i32(img[x + r.x, y + r.y]) * (r.x + 1) - x * r.y)
    g = hl.Func("g")
    g[x] = hl.maximum(img[x, r.x + r.y * 3]) - hl.minimum(img[r.y, r.x])
    return f.realize([5, 4]), g.realize([7])


@differential(rel=1e-6)
def test_float_sum_and_product(hl):
    """Float reductions accumulate serially in RDom order (r.x fastest)."""
    x = hl.Var("x")
    r = hl.RDom([(0, 40), (0, 3)])
    f = hl.Func("f")
    f[x] = hl.sum(hl.f32(r.x) * hl.f32(0.1) + hl.f32(r.y * x) * hl.f32(0.37))
    q = hl.RDom([(1, 12)])
    g = hl.Func("g")
    g[x] = hl.product(hl.f64(q.x) * 0.75 + hl.f64(x))
    return f.realize([3]), g.realize([3])


@differential()
def test_reduction_name_argument_and_given_rdom(hl):
    """The optional name, and the RDom passed explicitly."""
    y = hl.Var("y")
    img = buffer(hl, ROWS.astype(np.int32))
    r = hl.RDom([(0, 6)])
    f = hl.Func("f")
    f[y] = (hl.sum(r, img[r.x, y], "my_sum"), hl.maximum(r, img[r.x, y] * 2, "my_max"),
            hl.minimum(img[r.x, y], "my_min"), hl.product(r, img[r.x, y] % 5 + 1))
    return f.realize([3])


@differential()
def test_given_rdom_not_used_by_expression(hl):
    """hl.sum(r, e) where e does not mention r: the update has no reduction loop,
    so e is added once (not extent times); argmax gives index 0."""
    x = hl.Var("x")
    r = hl.RDom([(0, 4)])
    f = hl.Func("f")
    f[x] = (hl.sum(r, x + 1), hl.product(r, x + 2), hl.maximum(r, x - 1))
    g = hl.Func("g")
    g[x] = hl.argmax(r, x + 2)
    h = hl.Func("h")
    h[x] = hl.sum(r, x + 1 + 0 * r.x)  # mentions r: four terms
    return f.realize([3]), g.realize([3]), h.realize([3])


@differential()
def test_inline_reduction_inside_update(hl):
    """An inline reduction in an update may use the update's pure vars; one
    mentioning the update's own RVar is an independent loop (computed once, here
    the full sum, added at each point of the update's RDom)."""
    x = hl.Var("x")
    img = buffer(hl, np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], dtype=np.int32))
    f = hl.Func("f")
    f[x] = x * 100
    r = hl.RDom([(0, 5)])
    f[x] = f[x] + hl.maximum(img[r.x, x])
    g = hl.Func("g")
    g[x] = x * 100
    q = hl.RDom([(0, 5)])
    g[q.x % 2] = g[q.x % 2] + hl.sum(img[q.x, 1])
    return f.realize([2]), g.realize([2])


@differential()
def test_nested_reductions_over_different_domains(hl):
    """Maximum over rows of per-row sums: the inner sum is a Func of y."""
    y = hl.Var("y")
    img = buffer(hl, ROWS.astype(np.int32))
    r = hl.RDom([(0, 6)])
    rowsum = hl.Func("rowsum")
    rowsum[y] = hl.sum(img[r.x, y])
    q = hl.RDom([(0, 3)])
    best = hl.Func("best")
    best[()] = (hl.maximum(rowsum[q.x]), hl.argmax(rowsum[q.x])[0])
    return best.realize([])


# ---------------------------------------------------------------------------------
# argmax / argmin
# ---------------------------------------------------------------------------------
@differential()
def test_argmax_argmin_ties_pick_first(hl):
    """Ties go to the first point in iteration order (r.x fastest): 200 at x = 1
    and 3, 250 at (4, 1), (5, 1), (0, 2)...; argmin of row 1 (two 1s then a 0)."""
    y = hl.Var("y")
    img = buffer(hl, ROWS.astype(np.uint8))
    r = hl.RDom([(0, 6)])
    f = hl.Func("f")
    f[y] = hl.argmax(img[r.x, y]) + hl.argmin(img[r.x, y])
    q = hl.RDom([(0, 6), (0, 3)])
    g = hl.Func("g")
    g[()] = hl.argmax(img[q.x, q.y]) + hl.argmin(img[q.x, q.y])
    return f.realize([3]), g.realize([])


@differential()
def test_argmax_all_equal_and_nonzero_min(hl):
    r = hl.RDom([(3, 5)])
    f = hl.Func("f")
    f[()] = hl.argmax(hl.u8(r.x) * 0 + 7) + hl.argmin(hl.i16(r.x) * 0 - 2)
    q = hl.RDom([(-2, 4), (5, 3)])
    g = hl.Func("g")
    g[()] = hl.argmin(hl.abs(q.x - 1) + hl.abs(q.y - 6))
    return f.realize([]), g.realize([])


@differential()
def test_argmax_result_shape_and_types(hl):
    """argmax returns a Python tuple of Exprs: one Int(32) index per RDom
    dimension, then the value (of the expression's type)."""
    img = buffer(hl, ROWS.astype(np.float32))
    r1 = hl.RDom([(0, 6)])
    r2 = hl.RDom([(0, 6), (0, 3)])
    a1 = hl.argmax(img[r1.x, 0])
    a2 = hl.argmin(r2, img[r2.x, r2.y], "am")
    return {"types1": [type(a1).__name__, len(a1)] + [e.type() for e in a1],
            "types2": [len(a2)] + [e.type() for e in a2]}


@differential()
def test_argmax_elements_used_separately(hl):
    """Using the index and the value of one argmax in different expressions."""
    x = hl.Var("x")
    a = np.array([[5, 3, 8, 8, 1], [2, 9, 9, 4, 0], [7, 7, 7, 6, 7]], dtype=np.int32)
    img = buffer(hl, a)
    r = hl.RDom([(0, 5)])
    am = hl.argmax(img[r.x, x])
    f = hl.Func("f")
    f[x] = am[0] * 100 + am[1]
    return f.realize([3])


@differential(rel=1e-6)
def test_argmin_f32_distance(hl):
    """Nearest of a set of points to each pixel (argmin over a float distance)."""
    x, y = hl.Var("x"), hl.Var("y")
    pts = buffer(hl, np.array([[1.5, 2.0], [6.25, 1.0], [3.0, 5.5], [7.0, 6.0]],
                              dtype=np.float32))
    r = hl.RDom([(0, 4)])
    dx = hl.f32(x) - pts[0, r.x]
    dy = hl.f32(y) - pts[1, r.x]
    am = hl.argmin(dx * dx + dy * dy)
    f = hl.Func("nearest")
    f[x, y] = (am[0], am[1])
    return f.realize([8, 7])


# ---------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------
@differential()
def test_inline_reduction_errors_phase(hl):
    """No RDom in the expression, or RVars of two RDoms: HalideError from the
    reduction call itself.  A nested reduction whose inner one already consumed the
    RDom has none left: the same error.  A given RDom that does not cover an RVar
    of the expression leaves that RVar in a pure definition: HalideError when the
    Func is defined."""
    x = hl.Var("x")
    r = hl.RDom([(0, 4)])
    s = hl.RDom([(0, 3)])
    out = {
        "no_rdom": _phase(hl, [("reduce", lambda: hl.sum(x + 1))]),
        "python_int": _phase(hl, [("reduce", lambda: hl.maximum(5))]),
        "two_rdoms": _phase(hl, [("reduce", lambda: hl.sum(r.x + s.x))]),
        "two_rdoms_max": _phase(hl, [("reduce", lambda: hl.argmax(r.x * s.x))]),
        "nested": _phase(hl, [("reduce", lambda: hl.sum(hl.sum(r.x)))]),
    }
    f = hl.Func("f")

    def define():
        f[x] = hl.sum(s, r.x + x)

    out["given_other_rdom"] = _phase(hl, [("define", define),
                                          ("realize", lambda: f.realize([2]))])
    g = hl.Func("g")

    def define_g():
        g[x] = x
        q = hl.RDom([(0, 2)])
        g[q.x] = g[q.x] + hl.sum(r.x + q.x)

    out["update_rvar_in_inline"] = _phase(hl, [("define", define_g)])
    return out


@differential(expect_error=True)
def test_reduction_of_tuple_is_a_type_error(hl):
    r = hl.RDom([(0, 4)])
    hl.sum((r.x, r.x))


@differential()
def test_inline_reduction_error_message(hl):
    """The missing-RDom message names the reduction and mentions the reduction
    domain."""
    x = hl.Var("x")
    res = []
    for name in ["sum", "product", "maximum", "minimum", "argmax", "argmin"]:
        try:
            getattr(hl, name)(x * 2)
            res.append("no error")
        except hl.HalideError as exc:
            msg = str(exc).lower()
            res.append((name in msg, "reduction domain" in msg))
    return res
