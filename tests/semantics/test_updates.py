"""Update definitions: pure updates, compound assignment, constant and
data-dependent coordinates, recursive scans, hl.undef, and the definition-time
checks on updates.  (RDom construction is in test_rdom.py, update schedules in
test_update_schedules.py.)"""
import numpy as np
import pytest

from .harness import buffer, differential, htype
from .input_helpers import phase as _phase


def _image(hl, w=8, h=6, mod=11, mul=7, dtype=np.int32):
    a = ((np.arange(w * h, dtype=np.int64).reshape(h, w) * mul + 3) % mod).astype(dtype)
    return buffer(hl, a)


# ---------------------------------------------------------------------------------
# Pure updates and compound assignment
# ---------------------------------------------------------------------------------
@differential()
@pytest.mark.parametrize("t", ["i32", "u8", "i16", "f32"])
def test_compound_assignment_chain(hl, t):
    """Pure definition followed by = f*2, +=, -=, *=, /= updates, in order.  u8
    wraps, integer /= is Euclidean division, f32 /= is IEEE division."""
    x = hl.Var("x")
    ty = htype(hl, t)
    f = hl.Func("f")
    f[x] = hl.cast(ty, x * 37 - 40)
    f[x] = f[x] * 2
    f[x] += hl.cast(ty, 3)
    f[x] -= hl.cast(ty, x)
    f[x] *= hl.cast(ty, 5)
    f[x] /= hl.cast(ty, 3)
    return {"n_updates": f.num_update_definitions(),
            "has_update": f.has_update_definition(),
            "type": f.type(),
            "out": f.realize([9])}


@differential()
def test_compound_assignment_on_undefined_func(hl):
    """`f[x] op= e` on a Func with no definition first defines f[x] with the
    identity of op (0 for + and -, 1 for * and /), of the type of e, then adds the
    update: one update definition."""
    x = hl.Var("x")
    out = {}
    for op in ["add", "sub", "mul", "div"]:
        for ty in ["i32", "u8", "f32"]:
            f = hl.Func("f_" + op + "_" + ty)
            e = hl.cast(htype(hl, ty), x + 2)
            if op == "add":
                f[x] += e
            elif op == "sub":
                f[x] -= e
            elif op == "mul":
                f[x] *= e
            else:
                f[x] /= e
            out[op + "_" + ty] = (f.type(), f.num_update_definitions(), f.realize([5]))
    return out


@differential()
def test_compound_assignment_int_literal_on_undefined_func(hl):
    """A bare Python int on the right makes an Int(32) Func."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] += 3
    g = hl.Func("g")
    g[x] /= 2
    return f.type(), f.realize([3]), g.type(), g.realize([3])


@differential()
def test_second_pure_definition_is_an_update(hl):
    """f[x] = a; f[x] = b: the second is update 0 and hides the first."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    f[x, y] = x * 100 - y
    return f.num_update_definitions(), f.realize([4, 3])


@differential()
def test_many_updates_applied_in_order(hl):
    """Eight updates mixing pure, constant-coordinate and RDom updates: each sees
    the result of the previous one."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    f[x, y] = f[x, y] * 3
    f[0, y] = f[0, y] + 1000
    f[x, 1] = f[x, 1] - f[x, 1] / 2
    r = hl.RDom([(0, 3)])
    f[x, y] = f[x, y] + r.x * x
    f[2, 2] = -7
    f[x, y] = hl.select(f[x, y] > 50, f[x, y] - 50, f[x, y])
    f[x, y] = f[x, y] ^ (x * 4 + y)
    f[1, y] = f[1, y] * f[1, y]
    return f.num_update_definitions(), f.realize([5, 4])


@differential()
def test_update_at_repeated_pure_var(hl):
    """f[x, x] = v updates the diagonal only."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    f[x, x] = f[x, x] * -1
    return f.realize([4, 5])


@differential()
def test_update_at_constant_coordinates(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.u16(x + y * 8)
    f[0, y] = hl.u16(500) + hl.u16(y)
    f[x, 2] = f[x, 2] * 3
    f[3, 1] = hl.u16(9999)
    g = hl.Func("g")
    g[()] = 5  # zero-dimensional Func with updates
    g[()] = g[()] * 7
    g[()] += 1
    return f.realize([5, 4]), g.realize([])


@differential()
def test_update_outside_the_requested_region(hl):
    """realize(sizes) allocates the whole region the updates write, computes the
    pure definition over it, and returns the requested part: f[7] (outside [0, 5))
    is computed, f[0] = f[8] + 1 reads the pure value at 8, and writes at -1 are
    visible to a later update."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 10
    f[7] = 1
    f[0] = f[8] + 1
    f[-1] = 100
    f[2] = f[-1] + f[7]
    return f.realize([5])


@differential()
def test_update_outside_the_requested_region_consumer(hl):
    """Same, with f a compute_root producer of g: f's storage covers the writes."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 10
    f[-3] = 7
    f[1] = f[-3] + f[9]
    f.compute_root()
    g = hl.Func("g")
    g[x] = f[x - 1] * 2
    return g.realize([4])


@differential(expect_error=True)
def test_update_outside_caller_output_buffer(hl):
    """Into a caller Buffer the output region cannot grow: an update writing at 0
    when the buffer covers [3, 8) fails at realize time (HalideError)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[0] = 100
    b = hl.Buffer(hl.Int(32), [5])
    b.set_min([3])
    f.realize(b)


# ---------------------------------------------------------------------------------
# Data-dependent coordinates (scatters, histograms)
# ---------------------------------------------------------------------------------
@differential()
def test_histogram_clamped(hl):
    x = hl.Var("x")
    img = _image(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    h = hl.Func("hist")
    h[x] = 0
    h[hl.clamp(img[r.x, r.y], 0, 10)] += 1
    return h.realize([11])


@differential()
@pytest.mark.parametrize("vectorize", [False, True])
def test_data_dependent_indices_with_offsets(hl, vectorize):
    """A scalar index mixing loaded values with other terms (a bin's
    `v - 3 + r.y % 2` into an output whose min is -5; a lookup's `lut[v -
    x % 3]` from a Func with a shifted min) is addressed in two steps, the
    loaded terms last: the values are the one-step address's."""
    x = hl.Var("x")
    img = _image(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    h = hl.Func("hist")
    h[x] = 0
    h[hl.clamp(img[r.x, r.y], 0, 10) - 3 + r.y % 2 - (r.x % 3 - 1)] += r.x + 1
    out = hl.Buffer(hl.Int(32), [16])
    out.set_min([-5])
    h.realize(out)
    lut = hl.Func("lut")
    lut[x] = x * x - 7
    lut.compute_root()
    g = hl.Func("g")
    g[x] = lut[hl.clamp(img[x % 8, 2], 0, 10) - x % 3 + 20]
    if vectorize:
        g.vectorize(x, 8)
    return [out, g.realize([21])]


@differential()
def test_histogram_of_uint8_image(hl):
    """A uint8 value as index: bounded by its type, no clamp needed; bins are
    uint16 counters."""
    x = hl.Var("x")
    a = ((np.arange(40 * 30, dtype=np.int64).reshape(30, 40) * 2654435761) >> 7) % 256
    img = buffer(hl, a.astype(np.uint8))
    r = hl.RDom(img)
    h = hl.Func("hist")
    h[x] = hl.u16(0)
    h[hl.i32(img[r.x, r.y])] += hl.u16(1)
    return h.realize([256])


@differential()
def test_histogram_requested_region_smaller_than_bins(hl):
    """Realizing only 5 bins still counts everything into the allocated bins and
    returns the first 5."""
    x = hl.Var("x")
    img = _image(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    h = hl.Func("hist")
    h[x] = 0
    h[hl.clamp(img[r.x, r.y], 0, 10)] += 1
    return h.realize([5])


@differential(expect_error=True)
def test_histogram_unbounded_index(hl):
    """An int32 value from an image as an index is unbounded: HalideError at
    realize (bounds inference), not at definition."""
    x = hl.Var("x")
    img = _image(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    h = hl.Func("hist")
    h[x] = 0
    h[img[r.x, r.y]] += 1
    h.realize([11])


@differential()
def test_histogram_unbounded_index_phase(hl):
    x = hl.Var("x")
    img = _image(hl)
    r = hl.RDom([(0, 8), (0, 6)])
    h = hl.Func("hist")

    def define():
        h[x] = 0
        h[img[r.x, r.y]] += 1

    return _phase(hl, [("define", define), ("realize", lambda: h.realize([11]))])


@differential()
def test_scatter_permutation_and_weighted_histogram(hl):
    """Scatter through a permutation table, and a 2-D histogram of (value % 4,
    row parity) weighted by the value."""
    x, y = hl.Var("x"), hl.Var("y")
    perm = buffer(hl, np.array([3, 0, 6, 1, 7, 2, 5, 4], dtype=np.int32))
    r = hl.RDom([(0, 8)])
    s = hl.Func("scatter")
    s[x] = -1
    s[hl.clamp(perm[r.x], 0, 7)] = r.x * r.x  # unclamped: unbounded, an error
    img = _image(hl)
    q = hl.RDom([(0, 8), (0, 6)])
    h2 = hl.Func("h2")
    h2[x, y] = hl.f32(0)
    v = img[q.x, q.y]
    h2[hl.clamp(v % 4, 0, 3), q.y % 2] += hl.f32(v) * 0.5
    return s.realize([8]), h2.realize([4, 2])


@differential()
def test_scatter_collisions_last_write_wins(hl):
    """Several RDom points write the same location: the serial order decides
    (last write in r.x-innermost order wins)."""
    x = hl.Var("x")
    r = hl.RDom([(0, 5), (0, 3)])
    f = hl.Func("f")
    f[x] = -1
    f[(r.x * 3 + r.y) % 4] = r.x * 10 + r.y
    return f.realize([4])


# ---------------------------------------------------------------------------------
# Recursive scans
# ---------------------------------------------------------------------------------
@differential()
def test_prefix_sum(hl):
    x = hl.Var("x")
    data = buffer(hl, np.array([5, -2, 7, 1, 0, 3, -8, 4, 9, 2], dtype=np.int32))
    f = hl.Func("f")
    f[x] = data[x]
    r = hl.RDom([(1, 9)])
    f[r.x] = f[r.x - 1] + f[r.x]
    return f.realize([10])


@differential()
def test_reverse_scan(hl):
    """Suffix sum: the RDom counts up, the index counts down."""
    x = hl.Var("x")
    data = buffer(hl, np.array([5, -2, 7, 1, 0, 3, -8, 4], dtype=np.int32))
    f = hl.Func("f")
    f[x] = data[x]
    r = hl.RDom([(1, 7)])
    f[7 - r.x] = f[7 - r.x] + f[8 - r.x]
    return f.realize([8])


@differential()
def test_summed_area_table(hl):
    """Cumulative sums along x then along y, each a scan with a pure var."""
    x, y = hl.Var("x"), hl.Var("y")
    img = _image(hl, 9, 7)
    s = hl.Func("sat")
    s[x, y] = img[x, y]
    rx = hl.RDom([(1, 8)])
    s[rx.x, y] = s[rx.x, y] + s[rx.x - 1, y]
    ry = hl.RDom([(1, 6)])
    s[x, ry.x] = s[x, ry.x] + s[x, ry.x - 1]
    return s.realize([9, 7])


@differential()
def test_scan_consumed_by_another_func(hl):
    """A scan used by a consumer that reads it at shifted positions: the scan's
    region is what the consumer needs (the RDom covers it)."""
    x = hl.Var("x")
    f = hl.Func("cum")
    f[x] = x * x % 7
    r = hl.RDom([(1, 15)])
    f[r.x] = f[r.x] + f[r.x - 1]
    f.compute_root()
    g = hl.Func("g")
    g[x] = f[x + 3] - f[x]
    return g.realize([12])


@differential(abs=1e-6, rel=1e-6)
def test_iir_filter_f32(hl):
    """First-order recursive filter in both directions along x, per row."""
    x, y = hl.Var("x"), hl.Var("y")
    a = (np.sin(np.arange(16 * 3, dtype=np.float64)).reshape(3, 16)).astype(np.float32)
    img = buffer(hl, a)
    f = hl.Func("iir")
    f[x, y] = img[x, y]
    r = hl.RDom([(1, 15)])
    f[r.x, y] = f[r.x, y] * 0.25 + f[r.x - 1, y] * 0.75
    f[15 - r.x, y] = f[15 - r.x, y] * 0.25 + f[16 - r.x, y] * 0.75
    return f.realize([16, 3])


@differential()
def test_fibonacci_and_second_order_scan(hl):
    x = hl.Var("x")
    f = hl.Func("fib")
    f[x] = hl.i64(1)
    r = hl.RDom([(2, 58)])
    f[r.x] = f[r.x - 1] + f[r.x - 2]
    return f.realize([60])


@differential()
def test_scan_with_multiple_rdom_dims(hl):
    """An RDom over (x, y) where each point reads its left neighbour and the
    upper-right one: the result depends on the iteration order, r.x innermost
    (raster order; column order would read the upper-right value before its
    update)."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + 3 * y
    r = hl.RDom([(1, 4), (0, 3)])
    f[r.x, r.y] = f[r.x - 1, r.y] * 2 + f[hl.min(r.x + 1, 4), hl.max(r.y - 1, 0)]
    return f.realize([5, 3])


# ---------------------------------------------------------------------------------
# hl.undef
# ---------------------------------------------------------------------------------
@differential()
def test_undef_leaves_values_unchanged(hl):
    """An update whose value is hl.undef does nothing; in a Tuple update, only the
    undef element is left alone."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 3
    f[x] = hl.undef(hl.Int(32))
    g = hl.Func("g")
    g[x] = (x, hl.f32(x) * 0.5)
    g[x] = (hl.undef(hl.Int(32)), g[x][1] + 10.0)
    g[x] = (g[x][0] * 7, hl.undef(hl.Float(32)))
    return f.realize([4]), g.realize([4])


@differential()
def test_undef_in_select_is_a_conditional_update(hl):
    """hl.select(c, hl.undef(t), v): points where c holds keep their value; an
    undef anywhere inside an arithmetic expression makes the whole update a
    no-op."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 10 + y
    f[x, y] = hl.select((x + y) % 3 == 0, hl.undef(hl.Int(32)), -f[x, y])
    g = hl.Func("g")
    g[x] = x + 1
    g[x] = hl.undef(hl.Int(32)) + 5
    g[x] = g[x] + hl.undef(hl.Int(32))
    r = hl.RDom([(0, 6)])
    h = hl.Func("h")
    h[x] = 0
    h[r.x % 3] = hl.select(r.x > 2, h[r.x % 3] + r.x, hl.undef(hl.Int(32)))
    return f.realize([5, 3]), g.realize([3]), h.realize([3])


@differential()
def test_undef_of_wrong_type_phase(hl):
    """hl.undef must have the Func's type: HalideError at the update."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x

    def define():
        f[x] = hl.undef(hl.Float(32))

    return _phase(hl, [("define", define)])


@differential()
def test_undef_pure_definition_then_full_update(hl):
    """A pure definition of hl.undef followed by updates that write every point
    it is realized at."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.undef(hl.Int(16))
    f[x] = hl.i16(x) * 4
    r = hl.RDom([(1, 5)])
    f[r.x] = f[r.x] + f[r.x - 1]
    return f.type(), f.realize([6])


@differential()
def test_undef_in_scan_keeps_selected_values(hl):
    """An undef element in a tuple-valued scan: the running max and, untouched,
    the original values."""
    x = hl.Var("x")
    data = buffer(hl, np.array([3, 9, 2, 11, 4, 4, 15, 0], dtype=np.int32))
    f = hl.Func("f")
    f[x] = (data[x], data[x])
    r = hl.RDom([(1, 7)])
    f[r.x] = (hl.max(f[r.x][0], f[r.x - 1][0]), hl.undef(hl.Int(32)))
    return f.realize([8])


# ---------------------------------------------------------------------------------
# Introspection of update definitions
# ---------------------------------------------------------------------------------
@differential()
def test_update_introspection(hl):
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, 3), (0, 2)], "ri")
    f = hl.Func("f")
    f[x, y] = 0
    f[x, y] += r.x + r.y
    f[r.y, y] = f[r.y, y] * 2
    f[x, y] += 1
    return {
        "num": f.num_update_definitions(),
        "has": f.has_update_definition(),
        "rvars0": [v.name() for v in f.rvars(0)],
        "rvars1": [v.name() for v in f.rvars(1)],
        "rvars2": [v.name() for v in f.rvars(2)],
        "n_args1": len(f.update_args(1)),
        "n_values2": len(f.update_values(2)),
        "stage_names": [f.update(i).name().replace(f.name(), "F") for i in range(3)],
        "dims": f.dimensions(),
        "out": f.realize([3, 2]),
    }


@differential()
def test_pure_func_has_no_updates(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    return (f.num_update_definitions(), f.has_update_definition(),
            _phase(hl, [("rvars", lambda: f.rvars(0))]),
            _phase(hl, [("update_args", lambda: f.update_args(0))]))


# ---------------------------------------------------------------------------------
# Errors in update definitions (raised at definition time, HalideError)
# ---------------------------------------------------------------------------------
def _define_only(hl, make):
    """Phase in which the error shows: "define" or "realize"."""
    fs = {}

    def define():
        fs["f"] = make()

    return _phase(hl, [("define", define), ("realize", lambda: fs["f"].realize([4]))])


def _bad_update_type(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] = f[x] + hl.f32(0.5)
    return f


def _bad_update_type_narrow(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] = hl.u8(3)
    return f


def _bad_update_self_ref_shifted(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] = f[x + 1] * 2
    return f


def _bad_update_self_ref_const(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] = f[x] + f[0]
    return f


def _bad_update_free_var(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x] = x
    f[x] = f[x] + y
    return f


def _bad_update_lhs_other_var(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x] = x
    f[y] = f[y] + 1
    return f


def _bad_update_lhs_expr_of_var(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x + 1] = 7
    return f


def _bad_update_arg_count(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x] = x
    f[x, y] = 1
    return f


def _bad_update_after_use(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    g = hl.Func("g")
    g[x] = f[x] + 1
    f[x] = f[x] * 2
    return g


def _bad_pure_def_rdom(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 4)])
    f = hl.Func("f")
    f[x] = x + r.x
    return f


def _bad_pure_def_expr_lhs(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x + 1] = x
    return f


def _bad_update_constant_does_not_fit(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.u8(x)
    f[x] += 300
    return f


BAD_UPDATES = {
    "type": _bad_update_type,
    "type_narrow": _bad_update_type_narrow,
    "self_ref_shifted": _bad_update_self_ref_shifted,
    "self_ref_const": _bad_update_self_ref_const,
    "free_var": _bad_update_free_var,
    "lhs_other_var": _bad_update_lhs_other_var,
    "lhs_expr_of_var": _bad_update_lhs_expr_of_var,
    "arg_count": _bad_update_arg_count,
    "after_use": _bad_update_after_use,
    "pure_def_rdom": _bad_pure_def_rdom,
    "pure_def_expr_lhs": _bad_pure_def_expr_lhs,
    "constant_does_not_fit": _bad_update_constant_does_not_fit,
}


@differential()
@pytest.mark.parametrize("case", list(BAD_UPDATES))
def test_bad_update_raises_at_definition(hl, case):
    """Every one of these raises hl.HalideError while the definition is made."""
    return _define_only(hl, lambda: BAD_UPDATES[case](hl))


@differential()
def test_update_type_error_message_names_the_types(hl):
    """The type-mismatch message names both types and the update's position."""
    try:
        _bad_update_type(hl)
    except hl.HalideError as exc:
        msg = str(exc)
        return ("float32" in msg, "int32" in msg, "update definition 0" in msg)
    return "no error"


@differential(expect_error=True)
def test_update_of_nonexistent_stage(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] += 1
    f.update(1)


@differential()
def test_update_stage_index_errors_phase(hl):
    """f.update(i) past the last update, on a pure-only Func, and on an undefined
    Func: HalideError when update() is called."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] += 1
    g = hl.Func("g")
    g[x] = x
    u = hl.Func("u")
    return [_phase(hl, [("update", lambda: f.update(1))]),
            _phase(hl, [("update", lambda: g.update(0))]),
            _phase(hl, [("update", lambda: u.update(0))]),
            _phase(hl, [("rvars", lambda: f.rvars(3))])]
