"""Tuples: Funcs with several values, element access, tuple-valued updates,
hl.select over tuples, realize returning / filling several Buffers, required
types and dimensions, and the type / size checks between definitions."""
import numpy as np

from .harness import Tol, buffer, differential
from .input_helpers import phase as _phase


# ---------------------------------------------------------------------------------
# Definition forms and realize
# ---------------------------------------------------------------------------------
@differential()
def test_tuple_definition_forms(hl):
    """A Python tuple, hl.Tuple(tuple) and hl.Tuple(list) define a multi-valued
    Func; Python scalars in a tuple become int32 / float32 / bool."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x, hl.f32(x) / 2)
    g = hl.Func("g")
    g[x] = hl.Tuple((hl.u8(x * 3), x - 1))
    h = hl.Func("h")
    h[x] = hl.Tuple([x * 2, hl.i16(x), hl.f64(x) * 0.25])
    k = hl.Func("k")
    k[()] = (1, 2.5, True)
    return {
        "f": f.realize([4]), "g": g.realize([4]), "h": h.realize([4]),
        "k": k.realize([]),
        "types": [f.types(), g.types(), h.types(), k.types()],
        "outputs": [f.outputs(), g.outputs(), h.outputs(), k.outputs()],
        "dims": [f.dimensions(), k.dimensions()],
    }


@differential()
def test_realize_returns_tuple_of_buffers(hl):
    """realize of a Tuple Func returns a Python tuple of Buffers; a one-element
    Tuple gives a single Buffer, as a plain Func does."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (x + y, hl.f32(x) * 0.5 - hl.f32(y), hl.u8(x * y))
    res = f.realize([4, 3])
    one = hl.Func("one")
    one[x] = (x * 7,)
    one_t = hl.Func("one_t")
    one_t[x] = hl.Tuple([x * 7])
    r1 = one.realize([3])
    r2 = one_t.realize([3])
    return {
        "kind": [type(res).__name__, len(res), type(r1).__name__, type(r2).__name__],
        "values": res,
        "one": r1,
        "one_outputs": one.outputs(),
    }


@differential()
def test_realize_into_list_or_tuple_of_buffers(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (hl.u8(x * 40), hl.f64(x) / 3)
    a = hl.Buffer(hl.UInt(8), [5])
    b = hl.Buffer(hl.Float(64), [5])
    f.realize([a, b])
    c = hl.Buffer(hl.UInt(8), [3])
    d = hl.Buffer(hl.Float(64), [3])
    c.set_min([4])
    d.set_min([4])
    f.realize((c, d))
    return a, b, c, d


@differential()
def test_realize_into_bad_buffers_phase(hl):
    """Wrong element type, wrong count, wrong dimensionality, different extents:
    HalideError at realize."""
    x = hl.Var("x")
    out = {}
    cases = {
        "wrong_type": lambda: [hl.Buffer(hl.UInt(8), [3]), hl.Buffer(hl.Float(32), [3])],
        "one_buffer": lambda: [hl.Buffer(hl.UInt(8), [3])],
        "three_buffers": lambda: [hl.Buffer(hl.UInt(8), [3]), hl.Buffer(hl.Float(64), [3]),
                                  hl.Buffer(hl.Float(64), [3])],
        "wrong_dims": lambda: [hl.Buffer(hl.UInt(8), [3, 2]), hl.Buffer(hl.Float(64), [3, 2])],
        "different_extents": lambda: [hl.Buffer(hl.UInt(8), [3]), hl.Buffer(hl.Float(64), [4])],
    }
    for name, make in cases.items():
        f = hl.Func("f")
        f[x] = (hl.u8(x), hl.f64(x))
        out[name] = _phase(hl, [("realize", lambda f=f, make=make: f.realize(make()))])
    f = hl.Func("single")
    f[x] = (hl.u8(x), hl.f64(x))
    out["single_buffer"] = _phase(hl, [("realize", lambda: f.realize(hl.Buffer(hl.UInt(8), [3])))])
    return out


@differential()
def test_tuple_introspection_errors_phase(hl):
    """type(), value(), output_buffer() need a single-valued Func (HalideError);
    types(), values(), outputs(), output_buffers() work."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (hl.u8(x), hl.f64(x))
    return {
        "type": _phase(hl, [("call", lambda: f.type())]),
        "value": _phase(hl, [("call", lambda: f.value() and None)]),
        "output_buffer": _phase(hl, [("call", lambda: f.output_buffer() and None)]),
        "types": f.types(),
        "values": [v.type() for v in f.values()],
        "n_output_buffers": [len(f.output_buffers()),
                             [b.type() for b in f.output_buffers()]],
    }


# ---------------------------------------------------------------------------------
# Element access
# ---------------------------------------------------------------------------------
@differential()
def test_element_access(hl):
    """f[x][i] is an Expr-like reference to value i; the whole f[x] copies the
    Tuple into another Func."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (x * 10 + y, hl.f32(x) - hl.f32(y) * 0.5)
    g = hl.Func("g")
    g[x, y] = hl.f32(f[x, y][0]) * f[x + 1, y][1]
    h = hl.Func("h")
    h[x, y] = f[x, y]
    e = hl.Expr(f[x, y][1])
    return {"g": g.realize([3, 2]), "h": h.realize([3, 2]), "h_outputs": h.outputs(),
            "elem_type": e.type(), "ref_size": f[x, y].size()}


@differential()
def test_element_access_errors_phase(hl):
    """Index past the end (or negative) and arithmetic on a whole Tuple
    reference: HalideError as soon as the expression is built.  hl.Tuple of a
    call to a single-valued (defined) Func is fine: a one-element Tuple."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x, x * 2)
    s = hl.Func("s")
    s[x] = x
    return {
        "index_2": _phase(hl, [("access", lambda: f[x][2] and None)]),
        "index_neg": _phase(hl, [("access", lambda: f[x][-1] and None)]),
        "tuple_plus_1": _phase(hl, [("expr", lambda: (f[x] + 1) and None)]),
        "tuple_of_scalar_func": _phase(hl, [("tuple", lambda: hl.Tuple(s[x]) and None)]),
    }


@differential()
def test_tuple_element_error_message(hl):
    """Arithmetic on a Tuple-valued call: the message says the Func returns a
    Tuple."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x, x * 2)
    try:
        f[x] * 2
    except hl.HalideError as exc:
        return "tuple" in str(exc).lower()
    return "no error"


@differential()
def test_tuple_definition_type_errors_phase(hl):
    """Python-level misuse: a list or an empty tuple on the right, item
    assignment into an element, += with a tuple: TypeError.  += on a Tuple Func
    (which needs f[x] as an Expr): HalideError."""
    x = hl.Var("x")
    out = {}

    def list_rhs():
        f = hl.Func("f")
        f[x] = [x, x * 2]

    def empty_rhs():
        f = hl.Func("f")
        f[x] = ()

    def elem_assign():
        f = hl.Func("f")
        f[x] = (x, x)
        f[x][0] = 5

    def plus_eq_tuple():
        f = hl.Func("f")
        f[x] = (x, x)
        f[x] += (1, 2)

    def plus_eq_scalar():
        f = hl.Func("f")
        f[x] = (x, x)
        f[x] += 1

    def tuple_of_var():
        hl.Tuple(x)

    for name, fn in [("list_rhs", list_rhs), ("empty_rhs", empty_rhs),
                     ("elem_assign", elem_assign), ("plus_eq_tuple", plus_eq_tuple),
                     ("plus_eq_scalar", plus_eq_scalar), ("tuple_of_var", tuple_of_var)]:
        out[name] = _phase(hl, [("define", fn)])
    return out


# ---------------------------------------------------------------------------------
# Tuple-valued updates
# ---------------------------------------------------------------------------------
@differential()
def test_tuple_update_reads_old_values(hl):
    """All elements of a Tuple update are computed from the values before the
    update (a swap works; (b, a + b) steps a Fibonacci pair)."""
    x = hl.Var("x")
    f = hl.Func("swap")
    f[x] = (x, x * 10)
    f[x] = (f[x][1], f[x][0])
    g = hl.Func("fibpair")
    g[x] = (x, x + 1)
    for _ in range(5):
        g[x] = (g[x][1], g[x][0] + g[x][1])
    return f.realize([4]), g.realize([4]), g.num_update_definitions()


@differential()
def test_tuple_update_with_rdom_and_mixed_types(hl):
    """Running (count, sum as f32, max as u8) of a uint8 image per row."""
    y = hl.Var("y")
    a = np.random.RandomState(4).randint(0, 256, size=(5, 9)).astype(np.uint8)
    img = buffer(hl, a)
    r = hl.RDom([(0, 9)])
    f = hl.Func("stats")
    f[y] = (0, hl.f32(0), hl.u8(0))
    v = img[r.x, y]
    f[y] = (f[y][0] + hl.select(v > 100, 1, 0), f[y][1] + hl.f32(v) * 0.5,
            hl.max(f[y][2], v))
    return f.realize([5])


@differential()
def test_tuple_update_errors_phase(hl):
    """Different Tuple sizes between definitions (either way) and a different
    element type: HalideError at the update definition."""
    x = hl.Var("x")
    out = {}

    def fewer():
        f = hl.Func("f")
        f[x] = (x, x * 2)
        f[x] = (f[x][1],)

    def scalar_update():
        f = hl.Func("f")
        f[x] = (x, x * 2)
        f[x] = x

    def tuple_update():
        f = hl.Func("f")
        f[x] = x
        f[x] = (x, x)

    def elem_type():
        f = hl.Func("f")
        f[x] = (x, x * 2)
        f[x] = (f[x][0], hl.f32(1))

    for name, fn in [("fewer", fewer), ("scalar_update", scalar_update),
                     ("tuple_update", tuple_update), ("elem_type", elem_type)]:
        out[name] = _phase(hl, [("define", fn)])
    return out


@differential()
def test_tuple_update_error_messages(hl):
    """The size-mismatch message mentions tuple elements and the update; the
    type-mismatch one names both types and the element index."""
    x = hl.Var("x")
    res = {}
    f = hl.Func("f")
    f[x] = (x, x * 2)
    try:
        f[x] = (f[x][1],)
        res["size"] = "no error"
    except hl.HalideError as exc:
        msg = str(exc).lower()
        res["size"] = ("tuple" in msg, "update" in msg)
    g = hl.Func("g")
    g[x] = (x, x * 2)
    try:
        g[x] = (g[x][0], hl.f32(1))
        res["type"] = "no error"
    except hl.HalideError as exc:
        msg = str(exc)
        res["type"] = ("float32" in msg, "int32" in msg, "element 1" in msg.lower())
    return res


# ---------------------------------------------------------------------------------
# Required types and dimensions
# ---------------------------------------------------------------------------------
@differential()
def test_func_with_required_types_and_dims(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func([hl.Int(32), hl.Float(32)], 1, "f")
    before = (f.defined(), f.types(), f.outputs(), f.dimensions())
    f[x] = (x, hl.f32(x) * 1.5)
    g = hl.Func(hl.Int(16), 2, "g")
    g[x, y] = hl.i16(x - y)
    return before, f.realize([3]), g.realize([3, 2]), g.type()


@differential()
def test_func_required_types_violations_phase(hl):
    x, y = hl.Var("x"), hl.Var("y")
    out = {}

    def wrong_elem_type():
        f = hl.Func([hl.Int(32), hl.Float(32)], 1, "f")
        f[x] = (x, x)

    def wrong_count():
        f = hl.Func([hl.Int(32), hl.Float(32)], 1, "f")
        f[x] = x

    def wrong_dims():
        f = hl.Func([hl.Int(32), hl.Float(32)], 1, "f")
        f[x, y] = (x, hl.f32(x))

    def scalar_wrong_type():
        f = hl.Func(hl.Int(16), 2, "f")
        f[x, y] = x

    def scalar_wrong_dims():
        f = hl.Func(hl.Int(16), 2, "f")
        f[x] = hl.i16(x)

    for name, fn in [("wrong_elem_type", wrong_elem_type), ("wrong_count", wrong_count),
                     ("wrong_dims", wrong_dims), ("scalar_wrong_type", scalar_wrong_type),
                     ("scalar_wrong_dims", scalar_wrong_dims)]:
        out[name] = _phase(hl, [("define", fn)])
    return out


@differential()
def test_func_required_types_message(hl):
    """The message names the required and the actual types."""
    x = hl.Var("x")
    f = hl.Func([hl.Int(32), hl.Float(32)], 1, "f")
    try:
        f[x] = (x, x)
    except hl.HalideError as exc:
        msg = str(exc)
        return ("float32" in msg, "int32" in msg)
    return "no error"


# ---------------------------------------------------------------------------------
# select over Tuples
# ---------------------------------------------------------------------------------
@differential()
def test_select_over_tuples(hl):
    """Two-way and multi-way select of Tuples, a Tuple of conditions (one per
    element), elements of different types, and a Func's Tuple as a branch."""
    x = hl.Var("x")
    f = hl.Func("two")
    f[x] = hl.select(x > 2, (x, hl.f32(x) * 2), (-x, hl.f32(-x)))
    g = hl.Func("multi")
    g[x] = hl.select(x < 2, (x + 10, hl.u8(1)), x < 4, (x + 20, hl.u8(2)),
                     (x + 30, hl.u8(3)))
    h = hl.Func("per_elem")
    h[x] = hl.select((x > 1, x > 3), (x, x * 2), (-x, -x * 2))
    src = hl.Func("src")
    src[x] = (x * 100, hl.f32(x) / 4)
    k = hl.Func("from_func")
    k[x] = hl.select(x % 2 == 0, src[x], (x, hl.f32(0)))
    lit = hl.Func("literals")
    lit[x] = hl.select(x > 1, (x, 2), (3, x))
    return {"two": f.realize([6]), "multi": g.realize([6]), "per_elem": h.realize([6]),
            "from_func": k.realize([6]), "literals": lit.realize([6])}


@differential()
def test_select_over_tuples_errors_phase(hl):
    """Branches of different Tuple sizes, a Tuple and a scalar, or the same
    element with different types in two branches: the select raises RuntimeError
    (the Python binding cannot convert the arguments)."""
    x = hl.Var("x")
    return {
        "sizes": _phase(hl, [("select", lambda: hl.select(x > 1, (x, x * 2), (x,)))]),
        "tuple_scalar": _phase(hl, [("select", lambda: hl.select(x > 1, (x, x), x))]),
        "types": _phase(hl, [("select", lambda: hl.select(x > 1, (x, x),
                                                          (x, hl.f32(x))))]),
    }


# ---------------------------------------------------------------------------------
# Pipelines
# ---------------------------------------------------------------------------------
@differential(rel=1e-6, abs=1e-6)
def test_complex_multiplication_pipeline(hl):
    """Complex numbers as (re, im) Tuples: a pointwise product, and eight steps of
    z = z^2 + c (a small Mandelbrot) with an escape count, unrolled updates."""
    x, y = hl.Var("x"), hl.Var("y")
    a = hl.Func("a")
    a[x, y] = (hl.f32(x) * 0.25 - 1.0, hl.f32(y) * 0.5)
    b = hl.Func("b")
    b[x, y] = (hl.f32(y) - 0.5, hl.f32(x + y) * 0.125)
    prod = hl.Func("prod")
    prod[x, y] = (a[x, y][0] * b[x, y][0] - a[x, y][1] * b[x, y][1],
                  a[x, y][0] * b[x, y][1] + a[x, y][1] * b[x, y][0])
    c_re = hl.f32(x) / 4.0 - 2.0
    c_im = hl.f32(y) / 4.0 - 1.0
    z = hl.Func("z")
    z[x, y] = (hl.f32(0), hl.f32(0), 0)
    t = hl.RDom([(0, 8)])
    re, im, n = z[x, y][0], z[x, y][1], z[x, y][2]
    alive = re * re + im * im < 4.0
    z[x, y] = (hl.select(alive, re * re - im * im + c_re, re),
               hl.select(alive, 2.0 * re * im + c_im, im),
               n + hl.select(alive, 1, 0) + 0 * t.x)
    z.update().unroll(t.x, 2)
    return prod.realize([6, 4]), z.realize([12, 9])


@differential()
def test_argmax_as_explicit_tuple_update(hl):
    """argmax written by hand as a (x, y, value) Tuple update with a strict >:
    ties keep the first point in iteration order; per row with a pure var."""
    y = hl.Var("y")
    a = np.array([[3, 9, 1, 9], [4, 4, 4, 4], [0, 7, 7, 2], [9, 1, 9, 9]], dtype=np.int16)
    img = buffer(hl, a)
    r = hl.RDom([(0, 4), (0, 4)])
    best = hl.Func("best")
    best[()] = (0, 0, img.type().min())
    v = img[r.x, r.y]
    old = best[()]
    best[()] = hl.select(v > old[2], (r.x, r.y, v), (old[0], old[1], old[2]))
    q = hl.RDom([(0, 4)])
    row = hl.Func("row")
    row[y] = (-1, hl.i16(-1))
    rv = img[q.x, y]
    row[y] = hl.select(rv > row[y][1], (q.x, rv), (row[y][0], row[y][1]))
    return best.realize([]), row.realize([4])


@differential()
def test_tuple_funcs_scheduled(hl):
    """Tuple producers and consumers under schedules: compute_root / compute_at,
    vectorized and parallel pure and update stages."""
    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Func("p")
    p[x, y] = (x + y, hl.f32(x) * 0.5)
    c = hl.Func("c")
    c[x, y] = (p[x, y][0] * 2 + p[x + 1, y][0], p[x, y][1] + p[x, y + 1][1])
    r = hl.RDom([(0, 3)])
    c[x, y] = (c[x, y][0] + r.x, c[x, y][1] * 2.0)
    out = {}
    p.compute_root().vectorize(x, 4).parallel(y)
    c.vectorize(x, 4).parallel(y)
    c.update().vectorize(x, 4).parallel(y)
    out["root"] = c.realize([9, 5])
    p2 = hl.Func("p2")
    p2[x, y] = (x + y, hl.f32(x) * 0.5)
    d = hl.Func("d")
    d[x, y] = (p2[x, y][0] * 2 + p2[x + 1, y][0], p2[x, y][1] + p2[x, y + 1][1])
    p2.compute_at(d, y)
    out["at_y"] = d.realize([9, 5])
    return out


@differential()
def test_inline_argmax_tuple_stored_in_func(hl):
    """hl.argmin's Tuple stored in a Func and consumed elementwise."""
    x = hl.Var("x")
    a = np.array([[5, 2, 8, 2], [1, 1, 0, 3], [6, 6, 6, 6]], dtype=np.int32)
    img = buffer(hl, a)
    r = hl.RDom([(0, 4)])
    am = hl.Func("am")
    am[x] = hl.argmin(img[r.x, x])
    use = hl.Func("use")
    use[x] = am[x][0] * 10 + am[x][1]
    return am.realize([3]), use.realize([3]), am.outputs()


@differential()
def test_min_max_pair_with_float_tolerance(hl):
    """A (min, max, mean) Tuple reduction of floats."""
    y = hl.Var("y")
    a = np.random.RandomState(9).uniform(-3, 3, size=(4, 17)).astype(np.float32)
    img = buffer(hl, a)
    r = hl.RDom([(0, 17)])
    f = hl.Func("mm")
    f[y] = (hl.f32(np.inf), hl.f32(-np.inf), hl.f32(0))
    v = img[r.x, y]
    f[y] = (hl.min(f[y][0], v), hl.max(f[y][1], v), f[y][2] + v / 17.0)
    mn, mx, mean = f.realize([4])
    return mn, mx, Tol(mean, rel=1e-6, abs=1e-6)


class _Pair:
    """A user class with the sequence protocol (as lesson 13's Complex)."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __getitem__(self, i):
        return (self.a, self.b)[i]

    def __len__(self):
        return 2


@differential()
def test_a_python_sequence_defines_a_tuple(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = _Pair(hl.f32(x) * 0.5, hl.f32(y) + 1.0)
    r = hl.RDom([(1, 3)])
    f[x, r] = _Pair(f[x, r - 1][0] + f[x, r][1], f[x, r - 1][1] * 2.0)
    return list(f.realize([4, 4]))
