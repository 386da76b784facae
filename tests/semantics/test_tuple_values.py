"""Tuple-valued Funcs (pure definitions): element access, schedules of Tuple
producers and outputs, select and mux over Tuples, realize forms and errors,
compared with the reference bit-exactly (floats: see each test)."""
import numpy as np
import pytest

from .harness import Tol, buffer, differential, outcome

W, H = 13, 7


def _img(seed, lo, hi, dtype, shape=(H, W)):
    return np.random.RandomState(seed).randint(lo, hi, size=shape).astype(dtype)


# ---------------------------------------------------------------------------------
# Whole pipelines
# ---------------------------------------------------------------------------------
@differential()
def test_complex_multiplication_integers(hl):
    """(a.re + i a.im) * (b.re + i b.im) as a pipeline of Tuple Funcs on int32."""
    x, y = hl.Var("x"), hl.Var("y")
    ra, ia = buffer(hl, _img(1, -50, 50, np.int32)), buffer(hl, _img(2, -50, 50, np.int32))
    a = hl.Func("a")
    a[x, y] = (ra[x, y], ia[x, y])
    b = hl.Func("b")
    b[x, y] = (x - y, x * y - 3)
    prod = hl.Func("prod")
    prod[x, y] = (a[x, y][0] * b[x, y][0] - a[x, y][1] * b[x, y][1],
                  a[x, y][0] * b[x, y][1] + a[x, y][1] * b[x, y][0])
    mag = hl.Func("mag")
    mag[x, y] = prod[x, y][0] * prod[x, y][0] + prod[x, y][1] * prod[x, y][1]
    prod.compute_root()
    return {"prod": prod.realize([W, H]), "mag": mag.realize([W, H])}


@differential()
def test_complex_multiplication_float(hl):
    """The same in float32; each element is one product difference, which
    both implementations compute with the same IEEE operations (bound: 1 ULP,
    in case one of them contracts a multiply-add)."""
    x, y = hl.Var("x"), hl.Var("y")
    re = buffer(hl, _img(3, -1000, 1000, np.int32).astype(np.float32) / 64)
    im = buffer(hl, _img(4, -1000, 1000, np.int32).astype(np.float32) / 32)
    z = hl.Func("z")
    z[x, y] = (re[x, y], im[x, y])
    w = hl.Func("w")
    w[x, y] = (hl.f32(x) * 0.25 - 1, hl.f32(y) * 0.5 + 0.125)
    p = hl.Func("p")
    p[x, y] = (z[x, y][0] * w[x, y][0] - z[x, y][1] * w[x, y][1],
               z[x, y][0] * w[x, y][1] + z[x, y][1] * w[x, y][0])
    p.vectorize(x, 4)
    return Tol(p.realize([W, H]), ulp=1)


@differential()
def test_argmax_as_tuple_over_a_fixed_domain(hl):
    """argmax over k in [0, 6) of a hashed value, as a chain of Tuple Funcs
    (index, value) folded with select; ties keep the first index."""
    x, y = hl.Var("x"), hl.Var("y")

    def value(k):
        return ((x * 7 + y * 13 + k * 29) ^ (k * 5 + x)) % 17

    best = hl.Func("best0")
    best[x, y] = (0, value(0))
    for k in range(1, 6):
        nxt = hl.Func("best%d" % k)
        v = value(k)
        nxt[x, y] = hl.select(v > best[x, y][1], (k, v), best[x, y])
        best = nxt
    return best.realize([W, H])


@pytest.mark.parametrize("where", ["inline", "root", "at_y"])
@differential()
def test_argmax_chain_schedules(hl, where):
    x, y = hl.Var("x"), hl.Var("y")
    img = buffer(hl, _img(5, 0, 256, np.uint8, shape=(H, W + 4)))
    steps = []
    f = hl.Func("m0")
    f[x, y] = (0, img[x, y])
    steps.append(f)
    for k in range(1, 5):
        g = hl.Func("m%d" % k)
        g[x, y] = hl.select(img[x + k, y] > f[x, y][1], (k, img[x + k, y]), f[x, y])
        steps.append(g)
        f = g
    out = hl.Func("out")
    out[x, y] = f[x, y][0] * 1000 + hl.i32(f[x, y][1])
    for s in steps:
        if where == "root":
            s.compute_root()
        elif where == "at_y":
            s.compute_at(out, y)
    return out.realize([W, H])


@differential()
def test_mixed_element_types(hl):
    """uint8 (wrapping), int32 and float32 elements in one Tuple."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (hl.u8(x * 37 + y * 101), x * y - 5, hl.f32(x) / 4 - hl.f32(y))
    g = hl.Func("g")
    g[x, y] = (f[x, y][0] + hl.u8(200), f[x, y][1] * f[x + 1, y][1],
               f[x, y][2] * 2 + hl.f32(f[x, y][0]))
    return {"f": f.realize([W, H]), "g": g.realize([W, H]), "types": g.types()}


# ---------------------------------------------------------------------------------
# Schedules of a Tuple producer and of Tuple outputs
# ---------------------------------------------------------------------------------
def _producer_consumer(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (x * 3 + y, hl.i16(x - y * 2), hl.u8(x ^ y))
    g = hl.Func("g")
    # The elements are read at different offsets: f's region is their union.
    g[x, y] = (f[x - 1, y][0] + hl.i32(f[x + 2, y][1])) * hl.i32(f[x, y + 1][2])
    return x, y, f, g


@pytest.mark.parametrize("schedule", [
    "inline", "root", "at_y", "at_x", "store_root_at_x", "root_vectorized",
    "root_parallel", "at_y_vectorized_consumer", "root_split_tail",
])
@differential()
def test_tuple_producer_schedules(hl, schedule):
    x, y, f, g = _producer_consumer(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    if schedule == "root":
        f.compute_root()
    elif schedule == "at_y":
        f.compute_at(g, y)
    elif schedule == "at_x":
        f.compute_at(g, x)
    elif schedule == "store_root_at_x":
        f.store_root().compute_at(g, x)
    elif schedule == "root_vectorized":
        f.compute_root().vectorize(x, 8)
    elif schedule == "root_parallel":
        f.compute_root().parallel(y)
    elif schedule == "at_y_vectorized_consumer":
        f.compute_at(g, y).vectorize(x, 4)
        g.vectorize(x, 8).parallel(y)
    elif schedule == "root_split_tail":
        f.compute_root().split(x, xo, xi, 5).unroll(xi)
    return g.realize([W, H])


@pytest.mark.parametrize("schedule", [
    "default", "vectorize", "vectorize_parallel", "tile", "guard_with_if", "fuse",
])
@differential()
def test_tuple_output_schedules(hl, schedule):
    x, y = hl.Var("x"), hl.Var("y")
    xo, yo, xi, yi, t = (hl.Var(n) for n in ("xo", "yo", "xi", "yi", "t"))
    f = hl.Func("f")
    f[x, y] = (x * 5 - y, hl.f32(x) * 0.5 + hl.f32(y), hl.u8(x * y))
    if schedule == "vectorize":
        f.vectorize(x, 8)
    elif schedule == "vectorize_parallel":
        f.vectorize(x, 4).parallel(y)
    elif schedule == "tile":
        f.tile(x, y, xo, yo, xi, yi, 4, 3).vectorize(xi).parallel(yo)
    elif schedule == "guard_with_if":
        f.split(x, xo, xi, 4, hl.TailStrategy.GuardWithIf).vectorize(xi)
    elif schedule == "fuse":
        f.fuse(x, y, t).parallel(t)
    return f.realize([W, H])


@differential()
def test_whole_tuple_copied_into_another_func(hl):
    """g[x] = f[x] copies every element; h[x] = hl.Tuple(f[x]) too."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x * x, hl.f64(x) / 8)
    g = hl.Func("g")
    g[x] = f[x]
    h = hl.Func("h")
    h[x] = hl.Tuple(f[x + 1])
    f.compute_root()
    return {"g": g.realize([6]), "h": h.realize([6]), "outputs": [g.outputs(), h.outputs()]}


@differential()
def test_wrapper_of_a_tuple_func(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (x + y * 10, hl.u8(x * 3))
    g = hl.Func("g")
    g[x, y] = f[x, y][0] * hl.i32(f[x, y + 1][1])
    f.compute_root()
    f.in_(g).compute_at(g, y).vectorize(x, 4)
    return g.realize([W, H])


# ---------------------------------------------------------------------------------
# select and mux over Tuples
# ---------------------------------------------------------------------------------
@differential()
def test_select_over_tuples(hl):
    x = hl.Var("x")
    src = hl.Func("src")
    src[x] = (x * 3, hl.f32(x) * 0.5)
    two = hl.Func("two")
    two[x] = hl.select(x > 3, (x, hl.f32(x)), src[x])
    chain = hl.Func("chain")
    chain[x] = hl.select(x < 2, hl.Tuple([x, hl.u8(1)]), x < 5, (x * 2, hl.u8(2)),
                         [x + 0, hl.u8(3)])
    per_element = hl.Func("per_element")
    per_element[x] = hl.select((x > 2, x > 6), (x, -x), (x * 10, x * 100))
    literals = hl.Func("literals")
    literals[x] = hl.select(x % 2 == 0, (x, hl.f32(1)), (7, 2))
    single = hl.select(x > 1, src[x][0], 5)
    return {
        "two": two.realize([10]), "chain": chain.realize([10]),
        "per_element": per_element.realize([10]), "literals": literals.realize([10]),
        "returns": type(hl.select(x > 1, (x, x), (x, x))).__name__,
        "single_is_expr": isinstance(single, hl.Expr),
        "one_element": len(hl.select(x > 1, hl.Tuple([x]), hl.Tuple([x + 1]))),
    }


@differential()
def test_mux_over_tuples(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.mux(x % 3, [(x, hl.f32(1)), (x * 10, hl.f32(2)), (x * 100, hl.f32(3))])
    g = hl.Func("g")
    g[x] = hl.mux(x % 2, hl.Tuple([x + 1, x + 2]))
    return {"f": f.realize([7]), "g": g.realize([7]),
            "repr": repr(hl.mux(x, [(x, x), (x, x)]))}


# ---------------------------------------------------------------------------------
# Realize forms
# ---------------------------------------------------------------------------------
@differential()
def test_realize_forms(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = (hl.u16(x * 300 + y), hl.f32(y) - hl.f32(x) / 2)
    res = f.realize([5, 3])
    a, b = hl.Buffer(hl.UInt(16), [4, 2]), hl.Buffer(hl.Float(32), [4, 2])
    a.set_min([3, 1])
    b.set_min([3, 1])
    f.realize([a, b])
    c, d = hl.Buffer(hl.UInt(16), [2, 2]), hl.Buffer(hl.Float(32), [2, 2])
    f.realize((c, d))
    one = hl.Func("one")
    one[x] = (x * 2,)
    scalar = hl.Func("scalar")
    scalar[()] = (hl.i8(-3), 2.5, True)
    return {
        "sizes": res, "kind": [type(res).__name__, len(res)],
        "into_list": (a, b), "into_tuple": (c, d),
        "one_element": one.realize([4]), "one_kind": type(one.realize([4])).__name__,
        "scalar": [r[()] for r in scalar.realize([])],
        "evaluate": hl.evaluate((hl.Expr(3) * 2, hl.f32(1.5))),
    }


@differential()
def test_introspection(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x, hl.u8(x), hl.f32(x))
    r = f[x]
    e = r[2]
    req = hl.Func([hl.Int(32), hl.Float(32)], 1, "req")
    return {
        "outputs": f.outputs(), "types": f.types(), "values": [v.type() for v in f.values()],
        "size": r.size(), "index": e.index(), "elem_type": hl.Expr(e).type(),
        "elem_arith": (e * 2).type(), "bool_index": hl.Expr(r[True]).type(),
        "undefined_size": hl.Func("u")[x].size(),
        "required": [req.outputs(), req.types()],
        # (Func names carry a `$n` that depends on what ran before.)
        "output_buffers": [b.name().replace(f.name(), "f") for b in f.output_buffers()],
        "repr": [repr(hl.Tuple([x, 1])), str(hl.Tuple((x, 1.5)))],
    }


# ---------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------
def _tuple_func(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x, hl.f32(x))
    return x, f


@differential()
def test_element_access_errors(hl):
    x, f = _tuple_func(hl)
    g = hl.Func("g")
    g[x] = x
    u = hl.Func("u")
    return {
        "as_expr": outcome(hl, lambda: (f[x] + 1) and None),
        "expr_ctor": outcome(hl, lambda: hl.Expr(f[x]) and None),
        "index_2": outcome(hl, lambda: f[x][2] and None),
        "index_neg": outcome(hl, lambda: f[x][-1] and None),
        "index_expr": outcome(hl, lambda: f[x][hl.Expr(0)] and None),
        "index_float": outcome(hl, lambda: f[x][0.0] and None),
        "not_a_tuple": outcome(hl, lambda: g[x][0] and None),
        "undefined": outcome(hl, lambda: u[x][0] and None),
        "wrong_arg_count": outcome(hl, lambda: f[x, x][0] and None),
        "type": outcome(hl, lambda: f.type()),
        "value": outcome(hl, lambda: f.value() and None),
        "output_buffer": outcome(hl, lambda: f.output_buffer() and None),
    }


@differential()
def test_definition_errors(hl):
    x = hl.Var("x")
    _, f = _tuple_func(hl)

    def define(value, required=None):
        def go():
            g = hl.Func(required, 1, "g") if required else hl.Func("g")
            g[x] = value
            return g.types()
        return go

    return {
        "empty_tuple": outcome(hl, define(())),
        "empty_list": outcome(hl, define([])),
        "list_of_vars": outcome(hl, define([x, x])),
        "list_of_exprs": outcome(hl, define([x + 0, x * 2])),
        "tuple_with_tuple_call": outcome(hl, define((f[x], 1))),
        "tuple_with_string": outcome(hl, define((x, "a"))),
        "empty_hl_tuple": outcome(hl, lambda: hl.Tuple([]) and None),
        "hl_tuple_of_var": outcome(hl, lambda: hl.Tuple(x) and None),
        "hl_tuple_of_undefined": outcome(hl, lambda: hl.Tuple(hl.Func("u")[x]) and None),
        "required_wrong_type": outcome(hl, define((x, x), [hl.Int(32), hl.Float(32)])),
        "required_wrong_count": outcome(hl, define(x, [hl.Int(32), hl.Float(32)])),
        "required_scalar_got_tuple": outcome(hl, define((x, x), [hl.Int(32)])),
        "required_ok": outcome(hl, define((x, hl.f32(x)), [hl.Int(32), hl.Float(32)])),
    }


@differential()
def test_select_and_mux_errors(hl):
    x, f = _tuple_func(hl)
    return {
        "sizes": outcome(hl, lambda: hl.select(x > 1, (x, x), (x,)) and None),
        "per_element_sizes": outcome(hl, lambda: hl.select((x > 1,), (x, x), (x, x)) and None),
        "mixed_conditions": outcome(
            hl, lambda: hl.select((x > 1, x > 2), (x, x), x > 3, (x, x), (x, x)) and None),
        "tuple_and_expr": outcome(hl, lambda: hl.select(x > 1, (x, x), x) and None),
        "element_types": outcome(hl, lambda: hl.select(x > 1, (x, x), (x, hl.f32(x))) and None),
        "tuple_call_and_expr": outcome(hl, lambda: hl.select(x > 1, f[x], x) and None),
        "mux_types": outcome(hl, lambda: hl.mux(x, [f[x], (x, 1)]) and None),
        "mux_short": outcome(hl, lambda: hl.mux(x, [(x, x), (x,)]) and None),
        "mux_tuple_and_expr": outcome(hl, lambda: hl.mux(x, [f[x], x]) and None),
    }


@differential()
def test_realize_errors(hl):
    x, f = _tuple_func(hl)

    def into(*bufs):
        def go():
            f.realize(list(bufs) if len(bufs) != 1 else bufs[0])
        return go

    def shifted(t, n, m):
        b = hl.Buffer(t, [n])
        b.set_min([m])
        return b

    i32, f32 = hl.Int(32), hl.Float(32)
    return {
        "one_buffer": outcome(hl, into(hl.Buffer(i32, [4]))),
        "three_buffers": outcome(hl, into(hl.Buffer(i32, [4]), hl.Buffer(f32, [4]),
                                          hl.Buffer(f32, [4]))),
        "swapped_types": outcome(hl, into(hl.Buffer(f32, [4]), hl.Buffer(i32, [4]))),
        "wrong_dims": outcome(hl, into(hl.Buffer(i32, [4]), hl.Buffer(f32, [4, 2]))),
        "second_smaller": outcome(hl, into(hl.Buffer(i32, [4]), hl.Buffer(f32, [3]))),
        "second_larger": outcome(hl, into(hl.Buffer(i32, [4]), hl.Buffer(f32, [5]))),
        "second_shifted": outcome(hl, into(hl.Buffer(i32, [4]), shifted(f32, 4, 1))),
        "wrong_rank_sizes": outcome(hl, lambda: f.realize([4, 4]) and None),
    }
