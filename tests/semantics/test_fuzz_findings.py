"""Bugs found by random differential pipelines (the fuzzer in tests/fuzz and the
programs in the shared repro corpus), each reduced to its cause.

Update splits: Halide allows RoundUp only on the outermost split of a dimension.
A dimension that stems from the inner var of an earlier split is guarded instead
(Auto), or rejected (explicit RoundUp): rounding up inside every outer iteration
would run the update twice on some points."""
import numpy as np
import pytest

from .harness import differential


def _counting_update(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f[x] = f[x] * 2 + 1  # not idempotent: a point updated twice shows
    return x, f


@differential()
@pytest.mark.parametrize("size", [1, 5, 23, 24, 34])
def test_nested_split_of_update_var_runs_each_point_once(hl, size):
    x, f = _counting_update(hl)
    a, b, c, d = hl.Var("a"), hl.Var("b"), hl.Var("c"), hl.Var("d")
    f.update(0).split(x, a, b, 4).split(b, c, d, 3)
    return f.realize([size])


@differential()
def test_tiled_inner_split_of_update_var(hl):
    """Tile of two inner products, then a split of the outer one (a fuzzer
    finding: the output was then accessed past the region the bounds query
    had grown)."""
    x, f = _counting_update(hl)
    v = [hl.Var("v%d" % i) for i in range(8)]
    (f.update(0).split(x, v[0], v[1], 4).split(v[1], v[2], v[3], 3)
     .tile(v[2], v[3], v[4], v[5], 2, 3).split(v[0], v[6], v[7], 4))
    return f.realize([23])


@differential(expect_error=True)
def test_explicit_round_up_of_inner_update_var_is_an_error(hl):
    x, f = _counting_update(hl)
    a, b, c, d = hl.Var("a"), hl.Var("b"), hl.Var("c"), hl.Var("d")
    f.update(0).split(x, a, b, 4).split(b, c, d, 3, hl.TailStrategy.RoundUp)


# ---------------------------------------------------------------------------------
# Sliding window with ShiftInwards tiles
# ---------------------------------------------------------------------------------
@differential()
def test_slid_producer_vectorized_along_the_slid_dimension(hl):
    """A producer stored outside two loops and computed inside both slides
    along both; vectorized along one of them with ShiftInwards, its tile
    reaches up to a vector's width before the cut region. A rewound warm-up
    wrote those rows before its storage (heap corruption); such slides are
    peeled now."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.Buffer(np.arange(260, dtype=np.int32).reshape((13, 20)))
    f = hl.Func("f")
    f[x, y] = inp[hl.clamp(x, 0, 19), hl.clamp(y, 0, 12)]
    g = hl.Func("g")
    g[x, y] = f[x - 2, y + 1] + f[x + 2, y - 2]
    f.vectorize(y, 4, hl.TailStrategy.Auto)
    f.compute_at(g, x).store_at(g, hl.Var.outermost())
    return g.realize([17, 1]), g.realize([9, 6])


@differential()
def test_slid_producer_with_update_and_shifted_tiles(hl):
    """A producer with an update, slid along x, whose pure stage is unrolled
    with ShiftInwards: the shifted tile recomputed pure values of points the
    update had already changed in an earlier iteration. Not slid now."""
    x = hl.Var("x")
    inp = hl.Buffer(np.array([5, -3, 8, 1, 7], dtype=np.float32))
    bc = hl.BoundaryConditions.repeat_edge(inp)
    f = hl.Func("f")
    f[x] = hl.cast(hl.Int(16), bc[x] * 3)
    r = hl.RDom([(-2, 1)])
    f[x] += hl.cast(hl.Int(16), bc[x + r.x]) + hl.cast(hl.Int(16), r.x * 100)
    g = hl.Func("g")
    g[x] = f[x - 2] + f[x + 1] * 2 + f[x + 2] * 3
    xo, xi = hl.Var("xo"), hl.Var("xi")
    g.split(x, xo, xi, 3).vectorize(xi)
    f.compute_at(g, xo).store_at(g, hl.Var.outermost())
    f.unroll(x, 4)
    return g.realize([8]), g.realize([13])


# ---------------------------------------------------------------------------------
# Explicit bounds and output regions
# ---------------------------------------------------------------------------------
@differential(expect_error=True)
def test_bound_narrower_than_the_output_buffer_is_an_error(hl):
    """Halide's own basics.py: a bound that does not cover the buffer
    realized into is a run-time error, not uncomputed elements."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.u8(x)
    f.bound(x, 0, 1)
    f.realize(hl.Buffer(hl.UInt(8), [10]))


def test_bound_narrower_than_the_requested_size_is_an_error():
    """realize(sizes) with such a bound: Halide returns elements it never
    computed (its bounds query shrinks the buffer to the bound, then crops
    back out past the allocation); ferrohalide raises the bound error."""
    import ferrohalide as hl
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.u8(x)
    f.bound(x, 0, 1)
    with pytest.raises(hl.HalideError, match=r"Bounds given for f(\$\d+)? in x \(from 0 to 0\) do not cover"):
        f.realize([10])


@differential()
@pytest.mark.parametrize("factor", [3, 4, 16])
def test_output_region_that_depends_on_a_param(hl, factor):
    """A RoundUp split by a Param: the region the output writes depends on the
    Param's value, which realize(sizes) must use (it assumed the requested
    size and then failed its own bounds check)."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", factor)
    f = hl.Func("f")
    f[x] = x * 3
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.split(x, xo, xi, p, hl.TailStrategy.RoundUp)
    return f.realize([10])


# ---------------------------------------------------------------------------------
# Bounds of casts the simplifier can prove exact
# ---------------------------------------------------------------------------------
@differential()
def test_scatter_through_a_cast_of_a_masked_unsigned_value(hl):
    """clamp(i32(u32 & 3), 0, 2): the simplifier proves the cast non-negative
    and drops the clamp's lower side; bounds inference then had to bound the
    cast itself, and called the update's location unbounded."""
    x = hl.Var("x")
    inp = hl.Buffer(np.array([7, 2, 9, 4, 4, 1], dtype=np.int32))
    f = hl.Func("f")
    f[x] = x * 10
    r = hl.RDom([(0, 6)])
    f[hl.clamp(hl.i32(hl.u32(inp[r.x]) & 3), 0, 2)] += 1
    return f.realize([5])


# ---------------------------------------------------------------------------------
# What a stage requires: its definition over its region, not its loop nest
# ---------------------------------------------------------------------------------
def test_rounded_up_update_of_an_output_grows_it_until_its_run_fits():
    """The pure stage computes the output's region only; the update, split
    with RoundUp, runs past it. Halide's realize(sizes) grows the buffer by
    one bounds query, and its grown run reaches further still: Halide 21
    raises 'Output buffer f is accessed at 10, which is beyond the max (7)'.
    ferrohalide grows the outputs until nothing changes, so the run fits,
    and returns the requested region."""
    import ferrohalide as hl

    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    f[x, y] += 1
    f.parallel(y, 8)
    f.update(0).vectorize(y, 4)
    out = np.array(f.realize([9, 7]))
    assert out.shape == (7, 9)
    np.testing.assert_array_equal(out, np.add.outer(np.arange(7), np.arange(9)) + 1)


def test_an_output_region_that_never_settles_is_refused_by_name():
    """Fuzz seed 52589: a ShiftInwards split of the output by 16 inside a
    split by 3 reaches 13 rows below whatever region the output is given,
    so growing it never settles. Halide 21 raises an access error after one
    bounds query (and segfaults in the fuzzer's full program); ferrohalide
    says which output and dimension never settle, and why."""
    import ferrohalide as hl

    x, y = hl.Var("x"), hl.Var("y")
    yi, yio, yii = hl.Var("yi"), hl.Var("yio"), hl.Var("yii")
    f = hl.Func("f")
    f[x, y] = x + y
    f.split(y, y, yi, 3).split(yi, yio, yii, 16)
    with pytest.raises(hl.HalideError, match=r"region of output f(\$\d+)? needed in dimension 1 never settles"):
        f.realize([17, 11])


@differential()
@pytest.mark.parametrize("schedule", ["vectorize", "round_up"])
def test_producer_of_an_overrunning_consumer_computes_the_required_region(hl, schedule):
    """g (compute_root) reads an input of exactly the needed size; its
    consumer f runs past its own region (a vector shifted inwards over 3
    points, or a RoundUp split). Halide computes g over what f requires, not
    over where f's loops run (reading g there reads storage only): the input
    is large enough."""
    x = hl.Var("x")
    inp = hl.Buffer(np.arange(3, dtype=np.int32) * 7)
    g = hl.Func("g")
    g[x] = inp[x] * 2
    f = hl.Func("f")
    f[x] = g[x] + 1
    h = hl.Func("h")
    h[x] = f[x]
    g.compute_root()
    f.compute_root()
    if schedule == "vectorize":
        f.vectorize(x, 8)
    else:
        xo, xi = hl.Var("xo"), hl.Var("xi")
        f.split(x, xo, xi, 8, hl.TailStrategy.RoundUp)
    return h.realize([3])


# ---------------------------------------------------------------------------------
# Where the reference is wrong (checked against NumPy instead)
# ---------------------------------------------------------------------------------
def test_clamp_of_a_wrapping_unsigned_to_signed_cast():
    """u32(100 + clamp(i32(v), 0, 32768)) for u32 values v >= 2^31: the cast
    wraps to a negative number, which the clamp raises to 0. Halide 21 keeps
    the negative value for this program (the shared repro wrong-1827: its
    unscheduled and scheduled results agree with each other, not with
    arithmetic), so the expected values come from NumPy."""
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    a = ((np.arange(640808, 640918, dtype=np.uint64) * 2654435761 % 4294967296 % 200001)
         .astype(np.int64) - 100000).astype(np.int32).reshape((11, 10))
    bc = hl.BoundaryConditions.constant_exterior(hl.Buffer(a), -3)
    f = hl.Func("f")
    v = (hl.cast(hl.UInt(32), bc[y + 2, x + 2]) * hl.u32(bc[x - 1, y + 1])) \
        % (100 | hl.cast(hl.UInt(32), bc[x, y + 2]))
    f[x, y] = hl.cast(hl.UInt(32), 100 + hl.clamp(hl.cast(hl.Int(32), v), 0, 32768))
    got = np.array(f.realize([7, 3]))

    def at(i, j):  # constant_exterior: a[row j, column i], -3 outside
        return np.uint32(np.int64(a[j, i]) if 0 <= i < 10 and 0 <= j < 11 else -3 & 0xffffffff)

    expected = np.zeros((3, 7), dtype=np.uint32)
    for j in range(3):
        for i in range(7):
            u = (int(at(j + 2, i + 2)) * int(at(i - 1, j + 1))) % (2 ** 32)
            u %= 100 | int(at(i, j + 2))
            signed = u - 2 ** 32 if u >= 2 ** 31 else u
            expected[j, i] = 100 + min(max(signed, 0), 32768)
    assert (expected == 100).any() and (got == expected).all(), (got, expected)


@pytest.mark.parametrize("outer", ["u32", "u16", "u8", "i16"])
def test_integer_cast_of_a_float_to_int_cast_keeps_both_steps(outer):
    """u32(i32(f)) is i32(f) (truncated toward zero) wrapped to 32 unsigned
    bits: -15.0 gives 2^32 - 15. Halide 21's simplifier drops the inner cast
    whenever the outer one is no wider than it (Simplify_Cast.cpp tests the
    inner cast's own width where it means its argument's) and computes
    u32(-15.0f), which is out of range (it returns 0xffffffff). Integer lerp
    casts its operands to unsigned this way, so lerp(a, i32(float), w) goes
    wrong in Halide for negative values: the shared repros wrong-1599,
    wrong-1748, wrong-1757, wrong-1814 and wrong-213 all reduce to this (with
    the faulty rule emulated, ferrohalide reproduces Halide's output of each).
    The expected values come from NumPy."""
    import ferrohalide as hl
    x = hl.Var("x")
    vals = np.array([-15.0, -24.5, 12.0, -1.0, 3.75, -100000.0], dtype=np.float32)
    fb = hl.Buffer(vals)
    t = {"u32": hl.UInt(32), "u16": hl.UInt(16), "u8": hl.UInt(8), "i16": hl.Int(16)}[outer]
    f = hl.Func("f")
    f[x] = hl.cast(t, hl.i32(fb[x]))
    got = np.array(f.realize([len(vals)]))
    expected = np.trunc(vals).astype(np.int32).astype(got.dtype)
    assert (got == expected).all(), (got, expected)


@pytest.mark.parametrize("case", ["param_max", "param_min", "i64_param", "argmin", "argmin_i64"])
def test_comparison_with_a_value_at_the_end_of_its_type(case):
    """x - 3 < p with p = INT_MAX is true for small x. Halide 21's simplifier
    rewrites x + c0 < y to x < y - c0 without proving y - c0 fits, and the
    new sum wraps (Simplify_LT.cpp); argmin's INT_MAX initial value meets the
    same rule. The program itself never overflows. Expected from arithmetic."""
    import ferrohalide as hl
    x = hl.Var("x")
    f = hl.Func("f")
    r = hl.RDom([(1, 3)])
    if case == "param_max":
        f[x] = hl.select((x - 3) < hl.Param(hl.Int(32), "p", 2 ** 31 - 1), 1, 0)
        expected = [1, 1, 1]
    elif case == "param_min":
        f[x] = hl.select((x + 3) < hl.Param(hl.Int(32), "p", -2 ** 31 + 1), 1, 0)
        expected = [0, 0, 0]
    elif case == "i64_param":
        f[x] = hl.select((hl.i64(x) - 3) < hl.Param(hl.Int(64), "q", 2 ** 63 - 1), 1, 0)
        expected = [1, 1, 1]
    elif case == "argmin":
        f[x] = hl.argmin(r, r.x + x - 3)[0]
        expected = [1, 1, 1]
    else:
        f[x] = hl.argmin(r, hl.i64(r.x) - 3)[1]
        expected = [-2, -2, -2]
    assert np.array(f.realize([3])).tolist() == expected


def test_integer_lerp_of_a_float_to_int_cast():
    """lerp(0, i32(f), w) with negative f (the lerp of the repros above):
    0 + (i32(f) - 0) * w / 255, rounded to nearest."""
    import ferrohalide as hl
    x = hl.Var("x")
    vals = np.array([-15.0, -15.0, 12.0, -24.0], dtype=np.float32)
    fb = hl.Buffer(vals)
    f = hl.Func("f")
    f[x] = hl.lerp(0, hl.i32(fb[x]), hl.u8(16))
    got = np.array(f.realize([4]))
    expected = np.floor(np.trunc(vals) * 16 / 255 + 0.5).astype(np.int32)
    assert (got == expected).all(), (got, expected)


@differential()
@pytest.mark.parametrize("bits", [8, 16, 32])  # halide 21 cannot widen 64-bit ones
@pytest.mark.parametrize("vector", [False, True])
def test_mul_shift_right_at_every_width(hl, bits, vector):
    """(rounding_)mul_shift_right of 32-bit operands computes in a 66-bit
    intermediate; its saturation bounds were zero-extended constants (the
    -2^31 bound became +2^64 - 2^31), so every result was INT_MAX."""
    x = hl.Var("x")
    t = hl.Int(bits)
    big = 2 ** (bits - 1) - 1
    a = hl.cast(t, (x - 8) * 37)
    b = hl.select(x % 3 == 0, hl.cast(t, big), hl.select(x % 3 == 1, hl.cast(t, -big - 1), hl.cast(t, x * 5 - 40)))
    f = hl.Func("f")
    f[x] = (hl.mul_shift_right(a, b, 2), hl.rounding_mul_shift_right(a, b, bits - 1),
            hl.mul_shift_right(hl.cast(t, x), hl.cast(t, 9), 0))
    if vector:
        f.vectorize(x, 8)
    return f.realize([16])


@differential()
@pytest.mark.parametrize("order", ["fg", "gf"])
def test_pipeline_output_read_by_another_output(hl, order):
    """realize(sizes) grows an output to what the other outputs read of it;
    Halide crops the results back to the request only when the first output
    grew, so g comes back whole (min -1, extent 7) when listed second."""
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x * 10
    f = hl.Func("f")
    f[x] = g[x - 1] + g[x + 2]
    outs = [f, g] if order == "fg" else [g, f]
    r = hl.Pipeline(outs).realize([4])
    return [[b.dim(0).min(), b.dim(0).extent()] + [b[i] for i in range(b.dim(0).min(), b.dim(0).min() + b.dim(0).extent())]
            for b in r]


@differential()
@pytest.mark.parametrize("size", [[1, 16, 2], [4, 16, 2], [5, 3, 2]])
def test_fuse_of_split_dimensions(hl, size):
    """The fused loop is decomposed by dividing by a product of loop extents;
    the bounds of that quotient lost the divisor's sign (the product of two
    single values was not a single value) and the output check reported
    nonsense indices (fuzz seed 300)."""
    x, y, c, s0, s1 = [hl.Var(n) for n in "x y c s0 s1".split()]
    f = hl.Func("f")
    f[x, y, c] = x + 10 * y + 100 * c
    f.vectorize(c, 2).unroll(x, 4)
    f.fuse(x, y, s0).fuse(s0, c, s1)
    return f.realize(size)


# ---------------------------------------------------------------------------------
# Updates that need no associativity proof
# ---------------------------------------------------------------------------------
@differential()
def test_reorder_rvars_of_a_constant_scatter(hl):
    """An update whose value uses no RVar and does not read the Func writes
    the same value at a point whatever the order: Halide lets its RVars be
    reordered without a proof (fuzz seed 3)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 0
    r = hl.RDom([(0, 3), (0, 2)])
    f[r.x + r.y] = 7
    f.update(0).reorder(r.y, r.x)
    return f.realize([5])


@differential(expect_error=True)
def test_parallel_constant_scatter_still_needs_atomic(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 0
    r = hl.RDom([(0, 3), (0, 2)])
    f[r.x + r.y] = 7
    f.update(0).parallel(r.y)


@differential()
def test_atomic_constant_scatter_needs_no_proof(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 0
    r = hl.RDom([(0, 3), (0, 2)])
    f[r.x + r.y] = 7
    f.update(0).atomic().parallel(r.y)
    return f.realize([5])


@differential()
def test_atomic_vectorize_of_a_pure_rvar(hl):
    """r.x is pure (the update writes f[x, r.x]): Halide asks no
    associativity proof of an atomic update to vectorize it (fuzz seed 213)."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.u32(x + y)
    r = hl.RDom([(4, 4)])
    f[x, r.x] = f[x, r.x] * 2 + (hl.u32(r.x) * 7) % 9
    f.update(0).atomic().vectorize(r.x, 2)
    return f.realize([3, 9])


@differential(expect_error=True)
def test_atomic_vectorize_of_an_impure_rvar_needs_a_proof(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.u32(x)
    r = hl.RDom([(0, 8)])
    f[r.x % 3] = f[r.x % 3] * 2 + hl.u32(r.x)
    f.update(0).atomic().vectorize(r.x, 2)


@differential()
def test_vectorize_of_an_rvar_of_extent_one(hl):
    """r.x has one iteration, so it is pure and may be vectorized; inside the
    guard of its split only lane 0 runs, and the simplifier (as Halide's)
    pins r.x there, so the store is no reduction across lanes (fuzz seeds
    27, 298)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    r = hl.RDom([(1, 1), (0, 3)])
    f[x] = f[x] * 2 + r.x + r.y  # not commutative
    f.update(0).vectorize(r.x, 2)
    return f.realize([4])


# ---------------------------------------------------------------------------------
# Bounds as precise as Halide's
# ---------------------------------------------------------------------------------
@differential()
@pytest.mark.parametrize("value", ["clamp", "shift", "max"])
def test_dead_input_read_needs_no_input(hl, value):
    """The value is a constant whatever the input (the clamp folds with the
    u8 range); Halide simplifies the read away before checking the input's
    size, so a 3-element input serves a 5-element output (fuzz seed 148)."""
    x = hl.Var("x")
    inp = hl.Buffer(np.arange(3, dtype=np.uint8))
    f = hl.Func("f")
    f[x] = {"clamp": lambda: hl.clamp(hl.i32(inp[x]), 300, 400),
            "shift": lambda: hl.clamp(hl.i32(inp[x] >> 6), 10, 12),
            "max": lambda: hl.max(hl.i32(inp[x]), 256)}[value]()
    return f.realize([5])


@differential(expect_error=True)
def test_live_input_read_out_of_bounds_is_still_an_error(hl):
    x = hl.Var("x")
    inp = hl.Buffer(np.arange(3, dtype=np.uint8))
    f = hl.Func("f")
    f[x] = hl.clamp(hl.i32(inp[x]), 1, 400)
    f.realize([5])


def _regions(hl, outs, size):
    r = hl.Pipeline(outs).realize(size)
    return [[[b.dim(i).min(), b.dim(i).extent()] for i in range(b.dimensions())] for b in r]


@differential()
def test_select_branch_that_cannot_be_taken_requires_nothing(hl):
    """Bounds inference takes a select as an if: the branch its condition
    rules out requires nothing of g, so the output g grows less (fuzz seed
    181)."""
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 10
    f[x] = hl.select(hl.u32(4) == hl.u32(7), g[x - 3], g[x + 1])
    return _regions(hl, [f, g], [2])


@differential()
def test_select_on_a_loop_variable_requires_each_branch_where_taken(hl):
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 10
    f[x] = hl.select(x < 3, g[x + 100], g[x - 100])
    g.compute_root()
    return f.realize([6]), _regions(hl, [f, g], [6])


@differential()
@pytest.mark.parametrize("written", ["plain", "select"])
def test_an_rdom_predicate_trims_the_region_read_however_it_is_written(hl, written):
    """Fuzz seed 71863: `where(select(x != 2, y, y) == 1)` is `y == 1`, so
    the update reads one row of the second output f1 and f1 stays at the
    requested 17 rows. The box walk trimmed by the predicate as written and
    grew f1 to 20 rows (values were right; Halide simplifies first)."""
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + y
    f2[x, y] = x
    r = hl.RDom([(-2, 4), (-2, 2)])
    r.where((hl.select(x != 2, y, y) if written == "select" else y) == 1)
    f2[x, y] = f2[x, y] + f1[x + 1, y + 3] + r.x
    return _regions(hl, [f2, f1], [8, 17])


@differential()
@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("width", [5, 8, 13, 29])
def test_a_blend_split_that_divides_its_variable_has_no_tail(hl, k, width):
    """Fuzz seed 73392: a ShiftInwardsAndBlend split by k of the vectorized
    inner variable of a split by 8 leaves no tail when k divides 8, so both
    of its loops may be vectorized (Halide is right there); it was refused
    as the racing shape of seed 7300, which needs a tail (k = 3, 5)."""
    x, y = hl.Var("x"), hl.Var("y")
    sv = [hl.Var("sv%d" % i) for i in range(9)]
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    f.tile(x, y, sv[2], sv[3], sv[0], sv[1], 8, 4).vectorize(sv[0])
    f.tile(sv[2], sv[0], sv[7], sv[8], sv[5], sv[6], 8, k, hl.TailStrategy.ShiftInwardsAndBlend)
    return f.realize([width, 5])


@differential()
def test_call_bounded_by_the_funcs_values(hl):
    """g is -13 everywhere, so clamp(g, 1, 2) is 1 and f reads one row of
    g; Halide bounds a Func call by the Func's value bounds (fuzz seed
    34)."""
    x, y = hl.Var("x"), hl.Var("y")
    g, f = hl.Func("g"), hl.Func("f")
    g[x, y] = hl.i16(-13)
    f[x, y] = g[x, hl.clamp(hl.i32(g[x, y // 2]), 1, 2)]
    return _regions(hl, [f, g], [1, 1])


@differential()
def test_call_to_a_func_with_updates_is_bounded_by_its_type(hl):
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = hl.u8(x)
    g[x] = g[x] + 1
    h = hl.Func("h")
    h[x] = x
    f[x] = h[hl.i32(g[x]) + 1000]
    g.compute_root()
    h.compute_root()
    return f.realize([3])


def test_shifted_tile_reading_a_second_output_past_its_grown_region():
    """The bounds query grows f0 by what f1 needs over its requested
    region; f1's shifted tile then reads f0 further out (fuzz seed 133, where
    saturating_cast(0) must fold for the reads to vanish as in Halide).
    Halide 21's one query leaves f0 too small and its output check fails;
    ferrohalide grows the outputs until nothing changes and computes what
    the unscheduled pipeline does."""
    import ferrohalide as hl

    def run(tiled):
        x, y = hl.Var("x"), hl.Var("y")
        xo, yo, xi, yi = [hl.Var(n) for n in ["xo", "yo", "xi", "yi"]]
        f0, f1 = hl.Func("f0"), hl.Func("f1")
        f0[x, y] = 0
        f1[x, y] = hl.min(hl.saturating_cast(hl.UInt(8), 0),
                          hl.clamp(f0[x, y], hl.cast(hl.UInt(8), f0[y - 3, y]), x))
        if tiled:
            f1.tile(x, y, xo, yo, xi, yi, 16, 5)
        return [np.array(b) for b in hl.Pipeline([f1, f0]).realize([1, 1])]

    tiled, plain = run(True), run(False)
    np.testing.assert_array_equal(tiled[0], plain[0])
    np.testing.assert_array_equal(tiled[0], [[0]])


@differential()
@pytest.mark.parametrize("t", ["u8", "i16", "u16"])
def test_saturating_cast_of_constants(hl, t):
    x = hl.Var("x")
    f = hl.Func("f")
    ty = {"u8": hl.UInt(8), "i16": hl.Int(16), "u16": hl.UInt(16)}[t]
    f[x] = (hl.cast(hl.Int(32), hl.saturating_cast(ty, -70000)) +
            hl.cast(hl.Int(32), hl.saturating_cast(ty, 70000)) +
            hl.cast(hl.Int(32), hl.saturating_cast(ty, hl.f32(-3.75))) +
            hl.cast(hl.Int(32), hl.saturating_cast(ty, 200)) + x)
    return f.realize([2])


@differential()
def test_bound_extent_applies_to_every_stage(hl):
    """bound_extent bounds each stage's region from that stage's own min:
    the update writes f[-3], so the pure stage starts at -3 and runs 17
    points (fuzz seed 70)."""
    x = hl.Var("x")
    inp = hl.Buffer(np.arange(7, dtype=np.int32))
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = hl.i8(x)
    r = hl.RDom(inp)
    f[-3] &= hl.i8(r.x)
    g[x] = f[x]
    f.compute_root()
    f.bound_extent(x, 17)
    return g.realize([13])


@differential()
def test_producer_computed_inside_a_loop_whose_predicate_reads_it(hl):
    """bc is computed at f's r.x loop and read by the RDom predicate: the
    if of the predicate is not peeled past (as in Halide), so bc is
    computed before the condition (fuzz seed 480: an internal error)."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.Buffer(np.arange(6, dtype=np.uint8).reshape(2, 3))
    bc = hl.BoundaryConditions.mirror_interior(inp)
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = 0
    r = hl.RDom([(0, 3)])
    r.where(hl.f32(bc[r.x, y]) > 1)
    f[r.x, y] = f[r.x, y] + 1
    g[x, y] = f[x, y]
    f.compute_at(g, x)
    bc.compute_at(f, r.x)
    return g.realize([3, 2])


@differential()
def test_mirrored_index_of_even_coordinates_stays_inside(hl):
    """mirror_interior at 2x + 2 simplifies to (2x + 2) % 4, which is 0 or
    2: the bound of a mod uses the dividend's alignment, so a 3-element
    input is enough (long-run fuzz seed 404)."""
    x = hl.Var("x")
    inp = hl.Buffer(np.array([1.5, -2.0, 3.0], dtype=np.float32))
    bc = hl.BoundaryConditions.mirror_interior(inp)
    f = hl.Func("f")
    f[x] = -14 - hl.cast(hl.Int(8), bc[2 * x + 2])
    r = hl.RDom([(0, 3)])
    f[x] = hl.i8(17) + hl.i8(r.x)
    return f.realize([1])


@differential()
@pytest.mark.parametrize("op", ["sat_cast", "widening_add", "saturating_add", "halving_add",
                                "rounding_halving_add", "widening_sub", "halving_sub"])
def test_intrinsics_are_bounded_through_what_they_compute(hl, op):
    """Halide bounds saturating casts and the widening / averaging
    intrinsics by lowering them; an index built from one then needs fewer
    rows of the second output (long-run fuzz seeds 535, 778, 799)."""
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 3
    a, b = hl.u8(x % 7) + 5, hl.u8(x % 3)
    v = {"sat_cast": lambda: hl.i32_sat(hl.u16(x % 7) + 5),
         "widening_add": lambda: hl.i32(hl.widening_add(a, b)),
         "saturating_add": lambda: hl.i32(hl.saturating_add(a, b)),
         "halving_add": lambda: hl.i32(hl.halving_add(a, b)),
         "rounding_halving_add": lambda: hl.i32(hl.rounding_halving_add(a, b)),
         "widening_sub": lambda: hl.i32(hl.widening_sub(a, b)),
         "halving_sub": lambda: hl.i32(hl.halving_sub(a, b))}[op]()
    f[x] = g[hl.clamp(v, -40, 40)]
    return _regions(hl, [f, g], [9])


@differential()
@pytest.mark.parametrize("size", [[1, 1], [5, 2]])
def test_pure_stage_computes_only_what_later_stages_read(hl, size):
    """f2's update writes f2 at 2..4 without reading it: as in Halide, the
    pure stage computes only what the consumer needs (one point per
    iteration of f3's loop, where f2 is computed), so its vectorized loop
    has a constant extent (long-run fuzz seed 491)."""
    x, y = hl.Var("x"), hl.Var("y")
    f2, f3 = hl.Func("f2"), hl.Func("f3")
    f2[x, y] = hl.cast(hl.UInt(32), y) + 3
    r = hl.RDom([(2, 3)])
    f2[r.x, y] = hl.cast(hl.UInt(32), 8)
    f3[x, y] = f2[x, y]
    f2.vectorize(x)
    f2.update(0).unscheduled()
    return f3.realize(size)


# ---------------------------------------------------------------------------------
# Long run (seeds 300-3000): legality checks that were stricter than Halide's
# ---------------------------------------------------------------------------------
@differential()
def test_reorder_rvars_of_an_update_keeping_a_tuple_element(hl):
    """An element written back unchanged (`f[x][1]`) is Halide's identity
    operator: with a max beside it the update is commutative, so its RVars
    may be reordered (seed 1307)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (0, 7)
    r = hl.RDom([(2, 2), (1, 3)])
    f[x] = (hl.max(f[x][0], r.x), f[x][1])
    f.update(0).reorder(r.y, r.x)
    return f.realize([1])


@differential()
def test_reorder_rvars_of_an_identity_scatter(hl):
    """`f[k(r)] = f[k(r)]` changes nothing, in any order (seed 780)."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    r = hl.RDom([(0, 2), (0, 2)])
    k = hl.clamp(r.x + r.y, 0, 4)
    f[k] = f[k]
    f.update(0).reorder(r.y, r.x)
    return f.realize([4])


@differential()
@pytest.mark.parametrize("where", ["never", "never_with_x", "none"])
def test_rvars_of_an_update_that_never_runs_are_pure(hl, where):
    """A predicate false over the whole RDom: no iteration runs, so any
    order is legal (seed 1161); without it the update is order-dependent
    and the reorder is refused by both."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 5
    r = hl.RDom([(0, 3), (0, 4), (0, 2)])
    if where == "never":
        r.where(r.z > 6)
    elif where == "never_with_x":
        r.where((r.z > 6) & (x < 1))
    f[x] = r.y * 7 - f[x]
    try:
        f.update(0).reorder(r.z, r.y)
    except hl.HalideError:
        return "refused"
    return f.realize([1])


@differential()
def test_clone_in_of_a_func_only_an_rdom_predicate_calls(hl):
    """Calls in an update's where() are calls of the consumer: clone_in
    finds them, and the clone is what the predicate reads (seed 1514)."""
    x = hl.Var("x")
    inp = hl.Buffer(np.array([32.0, 1.75, 3.0]))
    f0 = hl.Func("f0")
    f0[x] = hl.cast(hl.Int(64), inp[x])
    r = hl.RDom([(0, 3)])
    bc = hl.BoundaryConditions.mirror_image(inp)
    r.where(bc[r.x] != 1.75)
    f0[r.x] = hl.i64(r.x) * 10
    bc.clone_in(f0).compute_root()
    f2 = hl.Func("f2")
    f2[x] = f0[x]
    return f2.realize([3])


@differential(expect_error=True)
def test_wrapper_used_in_an_rdom_predicate_is_placed_where_it_is_used(hl):
    """A global wrapper is what the predicate reads, so its compute_at is
    checked against the update's loops (seed 1105: both refuse)."""
    x = hl.Var("x")
    inp = hl.Buffer(np.array([40], dtype=np.int64))
    bc = hl.BoundaryConditions.constant_exterior(inp, 7)
    f0 = hl.Func("f0")
    f0[x] = hl.i64(5)
    r = hl.RDom([(8, 3)])
    r.where(bc[r.x] != 13)
    f0[r.x] = f0[r.x] + 1
    bc.in_().compute_at(f0, x)
    f0.realize([12])


@differential()
@pytest.mark.parametrize("outer_tail", ["PredicateStores", "PredicateLoads", "GuardWithIf"])
def test_predicated_outer_split_around_a_guarded_inner_split(hl, outer_tail):
    """The stores of a PredicateStores split see its guarded variable, but
    another split's guard (c < 4 around j's 16 iterations) still bounds
    what they write (seed 1203: a spurious 'accessed beyond the max')."""
    x = hl.Var("x")
    a, c, e, g, i, j = [hl.Var(n) for n in "acegij"]
    f = hl.Func("f")
    f[x] = x
    f.split(x, a, c, 4)
    f.split(c, i, j, 16, hl.TailStrategy.GuardWithIf)
    f.split(a, e, g, 3, getattr(hl.TailStrategy, outer_tail))
    return f.realize([5])


@differential()
def test_tile_with_predicated_stores_of_a_one_point_output(hl):
    """Seed 1203 itself: a 1 x 1 output tiled, vectorized with GuardWithIf
    and split again with PredicateStores."""
    x, y = hl.Var("x"), hl.Var("y")
    f2 = hl.Func("f2")
    f2[x, y] = x + 10 * y
    sv4, sv5, sv6, sv7, sv8, sv9 = [hl.Var("sv%d" % k) for k in range(4, 10)]
    f2.tile(y, x, sv6, sv7, sv4, sv5, 4, 2, hl.TailStrategy.Auto)
    f2.vectorize(sv4, 16, hl.TailStrategy.GuardWithIf)
    f2.split(sv6, sv8, sv9, 3, hl.TailStrategy.PredicateStores)
    return f2.realize([1, 1])


@differential(expect_error=True)
@pytest.mark.parametrize("specialized", [False, True])
def test_store_level_inside_the_compute_level_in_a_specialization(hl, specialized):
    """f0.compute_at(f2, x).store_at(f2, y) with f2's loops tiled so that y
    is inside x: an invalid location, also when only a specialization
    reorders the loops (seed 1271: an internal error; Halide fails with its
    own internal error there)."""
    x, y = hl.Var("x"), hl.Var("y")
    p0 = hl.Param(hl.Int(32), "p0", 2)
    f0 = hl.Func("f0")
    f0[x, y] = 1
    f2 = hl.Func("f2")
    f2[x, y] = hl.clamp(f0[x, y], 0, 1000)
    f0.compute_at(f2, x)
    f0.store_at(f2, y)
    s = f2.specialize(p0 > 2) if specialized else f2
    sv1, sv2 = hl.Var("sv1"), hl.Var("sv2")
    s.tile(y, x, sv1, sv2, 16, 8, hl.TailStrategy.Auto)
    f2.realize([1, 1])


@pytest.mark.parametrize("tail", ["PredicateLoads", "PredicateStores", "Predicate", "RoundUp"])
def test_predicated_split_of_a_shifted_tile_index(tail):
    """The tile index of a ShiftInwards tile split again with rounding:
    the extra iterations land back on the last tile. With PredicateLoads
    their loads read nothing, so they must not store either (seed 3495:
    Halide 21 stores them and overwrites good values with x - 0; with
    RoundUp they recompute the last tile correctly). Expected from NumPy."""
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f0 = hl.Func("f0")
    f0[x, y] = 2 * x - y - 9
    f1 = hl.Func("f1")
    f1[x, y] = hl.u16(hl.clamp(hl.f32(x) - hl.f32(f0[x, y - 1]), 0.0, 65535.0))
    sv0, sv1, sv2, sv3 = [hl.Var("sv%d" % i) for i in range(4)]
    f1.tile(y, x, sv2, sv3, sv0, sv1, 5, 5, hl.TailStrategy.ShiftInwards)
    f1.unroll(sv3, 3, getattr(hl.TailStrategy, tail))
    got = np.array(hl.Pipeline([f1, f0]).realize([16, 7])[0])
    xs, ys = np.meshgrid(np.arange(16), np.arange(7))
    expected = np.clip(xs - (2 * xs - (ys - 1) - 9), 0, 65535).astype(np.uint16)
    assert (got == expected).all(), (got, expected)


def _second_output_region(hl, value):
    """The region of g that f = g[value] needs, as Pipeline([f, g]) grows it."""
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = x * 10
    f = hl.Func("f")
    f[x] = g[value(hl, x)]
    r = hl.Pipeline([f, g]).realize([3])
    return np.array(r[0]), r[1].dim(0).min(), r[1].dim(0).extent()


@differential()
@pytest.mark.parametrize("cast", ["u16", "i16", "u8_sat", "u32"])
def test_narrowing_cast_of_one_value_is_bounded_by_that_value(hl, cast):
    """A cast of a single point (a Param) is that point cast: the region
    g needs is one element, not the narrow type's range (seed 909)."""
    p0 = hl.Param(hl.Int(32), "p0", 2)
    conv = {"u16": lambda e: hl.u16(e), "i16": lambda e: hl.i16(e),
            "u8_sat": lambda e: hl.u8_sat(e), "u32": lambda e: hl.u32(e)}[cast]
    return _second_output_region(hl, lambda hl, x: hl.clamp(hl.i32(conv(p0)), -5, 100))


@differential()
def test_float_mod_by_a_positive_constant_is_bounded_below_by_zero(hl):
    """Halide bounds a float % b with b > 0 by [0, b] (seed 1498)."""
    return _second_output_region(
        hl, lambda hl, x: hl.clamp(hl.i32(hl.f32(x) % 16.0), -4, 5))


@differential()
@pytest.mark.parametrize("fn", ["mul_shift_right", "rounding_mul_shift_right"])
def test_intrinsic_of_constants_is_bounded_by_its_value(hl, fn):
    """A constant (rounding_)mul_shift_right needs one element (seed 3940)."""
    op = getattr(hl, fn)
    return _second_output_region(
        hl, lambda hl, x: hl.clamp(hl.i32(op(hl.i16(0), hl.i16(0), 3)), 0, 5))


@differential()
@pytest.mark.parametrize("value", ["f32_of_bool", "f32_of_u8", "f32_select", "times_zero", "f32_of_cmp_of_input"])
def test_call_bounded_by_a_float_funcs_values(hl, value):
    """g's float values bound i16(g[x + 1]) as an index, as in Halide: an
    integer cast of a float constant is exact (seed 1526), and anything
    times zero is zero."""
    x = hl.Var("x")
    b = hl.Buffer(np.array([0, 5, -3, 7], dtype=np.int64))
    g = hl.Func("g")
    g[x] = {
        "f32_of_bool": lambda: hl.f32(x > 3),
        "f32_of_u8": lambda: hl.f32(hl.u8(x)),
        "f32_select": lambda: hl.select(x > 3, hl.f32(1), hl.f32(0)),
        "times_zero": lambda: hl.f32(0.5) + hl.f32(x * 0),
        "f32_of_cmp_of_input": lambda: hl.f32(0 >= hl.saturating_cast(hl.UInt(16), b[hl.clamp(x, 0, 3)])),
    }[value]()
    f = hl.Func("f")
    f[x] = g[hl.clamp(hl.i32(hl.i16(g[x + 1])), -3, 1)]
    r = hl.Pipeline([f, g]).realize([3])
    return np.array(r[0]), r[1].dim(0).min(), r[1].dim(0).extent()


@differential()
@pytest.mark.parametrize("rounding", [False, True])
def test_second_output_read_at_a_constant_mul_shift_right_index(hl, rounding):
    """Fuzz seed 3940 after the single-point bounds change: the index is
    the point mul_shift_right(0, -1, 3), which realize could not evaluate
    to size the second output, so it fell back to the requested size and
    the pipeline's check failed. The evaluator now folds every integer
    fixed-point and bit-count intrinsic."""
    x, c = hl.Var("x"), hl.Var("c")
    f0, f1 = hl.Func("f0"), hl.Func("f1")
    f0[x, c] = x + 10 * c
    msr = hl.rounding_mul_shift_right if rounding else hl.mul_shift_right
    idx = hl.clamp(hl.i32(msr(hl.cast(hl.Int(16), 0), hl.cast(hl.Int(16), -1), hl.u16(3))), 0, 5)
    f1[x, c] = f0[x, idx]
    r = hl.RDom([(1, 2)])
    f1[x, c] = f1[x, c] + f0[x, c - 3] + r.x
    out = hl.Pipeline([f1, f0]).realize([2, 3])
    return [out[0], out[1], [(out[1].dim(i).min(), out[1].dim(i).extent()) for i in range(2)]]


@differential()
def test_unsigned_mod_by_a_select_is_below_the_divisors_max(hl):
    """Fuzz seed 7804: bounds of u16(8) % select(x > 0, 2, 15) took -2 in
    u16 (which wraps) as the divisor's negative bound, so the index seemed
    to reach 65530 and realize raised a spurious input bounds error."""
    x = hl.Var("x")
    inp = hl.Buffer(np.arange(14, dtype=np.int32))
    d = hl.select(x > 0, hl.u16(2), hl.u16(15))
    f = hl.Func("f")
    f[x] = inp[hl.clamp(hl.clamp(hl.i32(hl.u16(8) % d), 2, 10) - 3, 0, 13)]
    return f.realize([3])


@differential()
@pytest.mark.parametrize("directive", ["split", "unroll"])
def test_producer_at_a_split_update_read_through_a_narrowing_cast(hl, directive):
    """Fuzz seed 1623 (wrong values): the region of g, computed at the
    outer loop of f's split update, is read at i32(i16(x)). The narrowing
    cast's bounds fell back on the simplifier's facts for 2*xo + xi + min,
    which lie beyond Int(32) and wrapped into the constant region [0, -4]:
    g was never computed."""
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 10
    f[x] = 0
    f[x] = 40 + g[hl.i32(hl.i16(x))]
    xo, xi = hl.Var("xo"), hl.Var("xi")
    if directive == "split":
        f.update(0).split(x, xo, xi, 2)
        g.compute_at(f, xo)
    else:
        f.update(0).unroll(x, 2)
        g.compute_at(f, x)
    return f.realize([5])


@differential()
@pytest.mark.parametrize("op", ["saturating_add", "saturating_sub"])
def test_computed_func_read_at_a_saturating_add_index(hl, op):
    """Fuzz seed 6025 (internal error): the bounds of saturating_add are
    the widened sum clamped to the narrow type's range; the clamp's ends
    were narrow-typed constants, so min(i64, i32) reached LLVM."""
    x, y = hl.Var("x"), hl.Var("y")
    f0 = hl.Func("f0")
    f0[x, y] = hl.u16(x + 3)
    r = hl.RDom([(1, 2)])
    f1 = hl.Func("f1")
    f1[x, y] = hl.sum(f0[x, y] + r.x)
    f2 = hl.Func("f2")
    f2[x, y] = f1[0, hl.clamp(getattr(hl, op)(x, y), 0, 1)]
    return f2.realize([2, 2])


@differential()
@pytest.mark.parametrize("n", [3, 5, 7])
def test_unrolled_narrow_integer_chain(hl, n):
    """Fuzz seed 9159 (wrong values): LLVM 19's SLP vectorizer joined two
    unrolled copies of ~u16_sat(-min(i8(x) << 7, i8(x))) and dropped the
    extension of the 8-bit value before the float conversion (255 for
    65535). LLVM's own vectorizers are off now, as in Halide."""
    x = hl.Var("x")
    g = hl.Func("g")
    g[x] = hl.cast(hl.Float(32), ~(hl.saturating_cast(hl.UInt(16), -hl.min(hl.cast(hl.Int(8), x) << 7, hl.i8(x))) >> hl.u8(5)))
    g.unroll(x, 3)
    return g.realize([n])



def _blend_split_of_an_outer_var(hl, tail):
    """Seed 6904's shape: a `tail` split of the outer var of a ShiftInwards
    vectorize, whose inner part is split again and vectorized."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.abs(hl.i64_sat(x))
    s0, s1, s2 = hl.Var("s0"), hl.Var("s1"), hl.Var("s2")
    f.vectorize(x, 4, hl.TailStrategy.ShiftInwards)
    f.split(x, x, s0, 8, tail)
    f.split(s0, s1, s2, 5)
    f.vectorize(s2, 4)
    return f


def test_a_round_up_and_blend_split_that_is_not_innermost_is_an_error():
    """Fuzz seed 6904: a RoundUpAndBlend split of an outer var whose inner
    var is split again and vectorized: Halide computes garbage there (its
    rounded-up lanes, clamped by the inner ShiftInwards onto the last valid
    lane, store back stale values), ferrohalide computed wrong values before
    this check."""
    import ferrohalide as hl

    f = _blend_split_of_an_outer_var(hl, hl.TailStrategy.RoundUpAndBlend)
    with pytest.raises(hl.HalideError, match="not an innermost split"):
        f.realize([8])


@differential()
@pytest.mark.parametrize("earlier", ["RoundUp", "GuardWithIf"])
@pytest.mark.parametrize("stage", ["pure", "update"])
def test_a_round_up_and_blend_split_of_an_outer_var_whose_tail_does_not_shift(hl, earlier, stage):
    """Fuzz seed 42405: `vectorize(x, 2, RoundUp).vectorize(x, 8,
    RoundUpAndBlend)` was refused as seed 6904's shape, but its earlier tail
    does not shift inwards, so the outer loop's iterations stay disjoint and
    the blend stores no stale lane: Halide is right there, and so is this."""
    x, y, xi = hl.Var("x"), hl.Var("y"), hl.Var("xi")
    outs = []
    for fa, fb, widths in [(2, 8, [1, 5, 9, 16, 19]), (3, 4, [2, 7, 13]), (4, 3, [6, 11])]:
        for n in widths:
            f = hl.Func("f")
            f[x, y] = x + 10 * y
            f[x, y] = f[x, y] + 1000
            s = f if stage == "pure" else f.update(0)
            s.split(x, x, xi, fa, getattr(hl.TailStrategy, earlier))
            s.vectorize(xi)
            s.vectorize(x, fb, hl.TailStrategy.RoundUpAndBlend)
            g = hl.Func("g")
            g[x, y] = f[x, y]
            f.compute_root()
            out = g.realize([n, 3])
            expected = np.add.outer(10 * np.arange(3), np.arange(n)) + 1000
            assert np.array_equal(np.asarray(out), expected), (fa, fb, n)
            outs.append(out)
    return outs


@differential()
@pytest.mark.parametrize("n", [4, 5, 8, 13, 33])
def test_a_shift_inwards_and_blend_split_that_is_not_innermost(hl, n):
    """The seed 6904 shape with ShiftInwardsAndBlend, and fuzz seed 42249's
    `unroll(x, 2).vectorize(x, 3, ShiftInwardsAndBlend)`: Halide accepts both
    and computes the right values (the blend masks the low lanes, which the
    previous iteration wrote already); ferrohalide refused them."""
    f = _blend_split_of_an_outer_var(hl, hl.TailStrategy.ShiftInwardsAndBlend)
    x, y = hl.Var("x"), hl.Var("y")
    out = f.realize([n])
    assert np.array(out).tolist() == list(range(n))
    g = hl.Func("g")
    g[x, y] = x * 10 + y
    g.unroll(x, 2)
    g.vectorize(x, 3, hl.TailStrategy.ShiftInwardsAndBlend)
    out2 = g.realize([n, 2])
    assert np.array(out2).tolist() == [[i * 10 + j for i in range(n)] for j in range(2)]
    return [out, out2]


@differential()
def test_an_update_whose_predicate_is_false_never_runs(hl):
    """Fuzz seed 8737: an RDom predicate that is constant false makes the
    update a no-op; its loops (split past the 1-wide output) asked for a
    region beyond the output and realize raised where Halide runs."""
    x = hl.Var("x")
    f = hl.Func("f")
    r = hl.RDom([(0, 1)])
    r.where(hl.cast(hl.Bool(), 0))
    f[x] = x
    f[x] = hl.clamp(r.x, 8, 8)
    a, b = hl.Var("a"), hl.Var("b")
    f.split(x, x, a, 2)
    f.update(0).split(x, x, b, 5)
    return f.realize([1])


def test_a_shifted_blend_split_whose_outer_loop_is_vectorized_is_an_error():
    """Fuzz seed 7300 (wrong values in both implementations): a blend tail
    reads what earlier iterations of its outer loop wrote; with its inner
    loop vectorized too, the tail's lanes blend and store in the same vector
    operations as the lanes that write the overlapped elements, so this is
    refused (a parallel outer loop is refused in any case)."""
    import ferrohalide as hl

    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    f.vectorize(x, 4, hl.TailStrategy.ShiftInwardsAndBlend)
    f.vectorize(x, 8)
    with pytest.raises(hl.HalideError, match="are both vectorized"):
        f.realize([13, 3])


@differential()
@pytest.mark.parametrize("width", [13, 16, 17, 29])
def test_a_rounded_blend_split_may_vectorize_its_outer_loop(hl, width):
    """Fuzz seed 11045: RoundUpAndBlend's tail reads only points past the
    region, which no other iteration writes, so its outer loop may be
    vectorized (Halide runs it, with the right values)."""
    x, y = hl.Var("x"), hl.Var("y")
    g, f = hl.Func("g"), hl.Func("f")
    g[x, y] = x * 3 - y
    f[x, y] = g[x, y] + 10 * y
    f[x, y] = f[x, y] * 2 + g[x + 1, y]
    g.compute_root()
    f.vectorize(x, 4, hl.TailStrategy.RoundUpAndBlend)
    f.vectorize(x, 8)
    f.update(0).vectorize(x, 4, hl.TailStrategy.RoundUpAndBlend)
    f.update(0).vectorize(x, 8)
    out = hl.Func("out")
    out[x, y] = f[x, y]
    f.compute_root()
    return out.realize([width, 3])


# ---------------------------------------------------------------------------------
# Stages nothing reads once the definitions are simplified (fuzz seed 7187)
# ---------------------------------------------------------------------------------
def _read_through_dead_mux(hl, f1_update, schedule):
    """f1 is bounded too tightly for f2, but f2 is read only in a mux branch
    that is never taken: the stages are skipped, and so are f1's checks."""
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2, f3 = hl.Func("f1"), hl.Func("f2"), hl.Func("f3")
    f1[x, y] = x + y
    if f1_update:
        f1[x, y] = f1[x, y] * 2  # unscheduled: computed where it is used, in f2
    f2[x, y] = f1[x, y] + f1[x + 1, y + 2]
    f3[x, y] = hl.mux(0, [x * 3 + y, f2[x, y]])
    schedule(f1, f2)
    f1.bound_extent(y, 1)
    return f3.realize([6, 4])


@differential()
def test_dead_stage_with_updates_skips_its_bound_check(hl):
    return _read_through_dead_mux(hl, True, lambda f1, f2: f2.compute_root())


@differential(expect_error=True)
def test_dead_stage_chain_computed_at_root_keeps_root_checks(hl):
    """A check made where a Func is stored stays, though its stage is skipped."""
    return _read_through_dead_mux(
        hl, False, lambda f1, f2: (f1.compute_root(), f2.compute_root()))


@differential(expect_error=True)
def test_live_stage_keeps_its_bound_check(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + y
    f2[x, y] = hl.mux(1, [x, f1[x, y + 2]])
    f1.compute_root().bound(y, 0, 1)
    f2.realize([6, 4])


@differential()
@pytest.mark.parametrize("width", [3, 8, 11])
def test_select_branch_trims_producer_region_at_inner_level(hl, width):
    """g is read only where x >= 2 (the select's false branch), computed per
    point of f's x loop: its region there is empty for x < 2, so its own
    producer h needs rows 2.. only and a bound(y, 1, ...) is enough (fuzz
    seed 9193)."""
    x, y = hl.Var("x"), hl.Var("y")
    h, g, f = hl.Func("h"), hl.Func("g"), hl.Func("f")
    h[x, y] = x * 10 + y
    g[x, y] = h[0, x] + h[x // 2, 3]
    g[x, y] = g[x, y] + 1  # unscheduled with an update: computed at f's x loop
    f[x, y] = hl.select(x < 2, -1, g[x, 2])
    h.compute_root().bound(y, 1, 20)
    return f.realize([width, 3])


@differential()
@pytest.mark.parametrize("extent", [1, 3])
def test_vectorized_rvar_update_with_an_inline_reduction(hl, extent):
    """Fuzz seed 11242: an update over r0 vectorized by 2, reading itself and
    an inline sum computed inside the vector loop. With r0 of extent 1 the
    guard leaves one lane, the simplifier made the store index lane-invariant,
    and vectorization refused it as a reduction across lanes; such stores
    run lane by lane now."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y + 1
    r0 = hl.RDom([(0, extent)])
    r1 = hl.RDom([(1, 2), (1, 1)])
    f[r0.x, y] *= hl.sum(r1.x + r1.y) + r0.x
    f.update(0).vectorize(r0.x, 2)
    return f.realize([4, 3])


def _rfactor_of_a_dead_branch_read(hl):
    """f's update reads g only in a select branch that is never taken."""
    x = hl.Var("x")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 2
    f[x] = x
    r = hl.RDom([(0, 3)])
    f[x] += hl.select(True, r.x, g[x + r.x])
    u = hl.Var("u")
    f.update(0).rfactor([(r.x, u)]).compute_root()
    return g, f, r


@differential(expect_error=True)
def test_rfactor_keeps_reads_in_branches_the_simplifier_removes(hl):
    """Fuzz seed 820: the intermediate of rfactor is f's own update with its
    self-reads redirected (as Halide), not the prover's simplified form, so a
    Func read only in a dead select branch is still used there, and its
    compute_at f's RVar loop (which rfactor moved away) is refused."""
    g, f, r = _rfactor_of_a_dead_branch_read(hl)
    g.compute_at(f, r.x)
    f.realize([4])


@differential()
def test_rfactor_of_an_update_with_a_dead_branch_computes_the_sum(hl):
    _, f, _ = _rfactor_of_a_dead_branch_read(hl)
    return f.realize([4])


@differential()
def test_producer_of_a_fused_rvar_keeps_a_constant_extent(hl):
    """Fuzz seed 1583: f0 is read at r.x = rv % 4 + 1, rv an RVar fused with a
    pure var. A constant divisor keeps the remainder's bound constant (as
    Halide), so f0's x loop has extent 4 and can be vectorized whole."""
    x, y, rv = hl.Var("x"), hl.Var("y"), hl.RVar("rv")
    f0, f3 = hl.Func("f0"), hl.Func("f3")
    f0[x, y] = x + y
    f3[x, y] = 0
    r = hl.RDom([(1, 4)])
    f3[1, y] = f0[r.x, y]
    f3.update(0).fuse(r.x, y, rv)
    f0.compute_root().vectorize(x)
    return f3.realize([2, 3])


@differential()
@pytest.mark.parametrize("p", [0, 1, 3, 255])
def test_narrow_min_with_a_param_is_bounded_by_its_operands(hl, p):
    """Fuzz seed 2979: min(u8(x % 2), p) is at most 1; its bounds fell back to
    the whole u8 range (as if min could wrap), and a 16-element input was
    refused as "accessed at 255"."""
    x = hl.Var("x")
    q = hl.Param(hl.UInt(8), "q", p)
    inp = hl.Buffer(np.arange(16, dtype=np.int32))
    g = hl.Func("g")
    g[x] = inp[hl.i32(hl.min(hl.u8(x % 2), q))] + inp[hl.i32(hl.max(hl.u8(x % 3), hl.u8(2)))]
    return g.realize([8])


@differential()
@pytest.mark.parametrize("src", ["f32", "f64"])
@pytest.mark.parametrize("dst", ["i32", "i64", "u64"])
def test_saturating_cast_of_a_float_index_is_bounded_by_its_type(hl, src, dst):
    """Fuzz seed 7269 (a silent wrong answer): i64's max rounds up to 2^63 as
    a float, and the bounds of saturating_cast(Int(64), f) wrapped to i64's
    min; a producer indexed through it was computed over one row and the
    other rows read outside its allocation."""
    x, y = hl.Var("x"), hl.Var("y")
    ftype = {"f32": hl.Float(32), "f64": hl.Float(64)}[src]
    itype = {"i32": hl.Int(32), "i64": hl.Int(64), "u64": hl.UInt(64)}[dst]
    data = (np.arange(16 * 16).reshape(16, 16) % 7) - 1.5
    inp = hl.Buffer(data.astype(np.float32 if src == "f32" else np.float64))
    f0, f1 = hl.Func("f0"), hl.Func("f1")
    f0[x, y] = x + 10 * y
    idx = hl.i32_sat(hl.saturating_cast(itype, hl.cast(ftype, inp[x, y])))
    f1[x, y] = f0[x, hl.clamp(idx, -2, 3)]
    f0.compute_root()
    return f1.realize([4, 4])


@differential()
@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("height", [1, 5])
def test_register_storage_takes_the_constant_bound_of_a_clamped_region(hl, parallel, height):
    """Found while triaging fuzz seed 9152: f1 is read at rows clamp(y, 0, 2),
    so its region's extent is symbolic but at most 3; Halide stores it in 3
    registers, ferrohalide refused it as "a dynamic size"."""
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + y * 7
    f2[x, y] = f1[0, hl.clamp(y, 0, 2)] + x
    f1.compute_root().store_in(hl.MemoryType.Register)
    if parallel:
        f1.parallel(x, 3)
    return f2.realize([4, height])


def _mux_over_a_bounded_producer(hl, written, extent):
    x, y = hl.Var("x"), hl.Var("y")
    f1, f3 = hl.Func("f1"), hl.Func("f3")
    f1[x, y] = x + 10 * y
    if written == "mux":
        f3[x, y] = hl.mux(y - 1, [f1[x, y], 5])
    elif written == "mux3":
        f3[x, y] = hl.mux(y, [f1[x, y], 7, f1[x + 1, y]])
    else:
        f3[x, y] = hl.select(y == 1, f1[x, y], 5)
    f1.compute_root().bound_extent(y, extent)
    return f3.realize([2, 4])


@differential()
@pytest.mark.parametrize("written", ["mux", "mux3"])
@pytest.mark.parametrize("extent", [4, 5])
def test_a_mux_reads_every_value_over_the_whole_region(hl, written, extent):
    """Fuzz seed 81066: `mux(y - 1, [f1[x, y], 5])` with
    `f1.bound_extent(y, 4)`. Halide's mux is an intrinsic whose values are
    all read (their union), so f1 is required over rows 0..3 and the
    bound holds. ferrohalide wrote mux as a select chain, which narrowed
    the read to `y == 1` and made a region that grows with the bound
    itself: it refused "(from 0 to 3) do not cover required region (from 0
    to 4)"."""
    return _mux_over_a_bounded_producer(hl, written, extent)


@differential(expect_error=True)
@pytest.mark.parametrize("extent", [4, 5])
def test_the_select_a_mux_stands_for_narrows_its_read_in_both(hl, extent):
    """The select that mux means, written out, keeps the narrowing (and
    the refusal) in Halide and in ferrohalide alike."""
    return _mux_over_a_bounded_producer(hl, "select", extent)


@differential()
@pytest.mark.parametrize("size", [16, 32, 37])
@pytest.mark.parametrize("shift", [0, 3])
def test_register_storage_of_a_half_rate_read_in_a_split_update(hl, size, shift):
    """Found while triaging fuzz seed 80174: f is computed per 16 iterations
    of g's split update, which reads it at (x + shift) // 2, so f's extent
    is `(16 xo + m + 15 + s) / 2 - (16 xo + m + s) / 2 + 1`, at most 9.
    Halide stores f in registers; ferrohalide refused "a dynamic size"
    until the simplifier took the multiple of 2 out of a three-term
    numerator."""
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = x * 3
    g[x] = x
    g[x] += f[(x + shift) // 2]
    g.update(0).split(x, xo, xi, 16)
    f.compute_at(g, xo).store_in(hl.MemoryType.Register)
    return g.realize([size])


@differential()
@pytest.mark.parametrize("p", [0.75, 3.0, 200.0])
def test_a_narrow_remainder_by_a_parameter_index_is_non_negative(hl, p):
    """Fuzz seed 33725: an input read at `clamp(i32(n % d), 0, 2)` with n and
    d Int(8) and d from a parameter. The simplifier drops the clamp's lower
    end (a Euclidean remainder is never negative), and the bounds of the i8
    remainder by a symbolic divisor fell back to all of i8: the input's check
    refused a read "at -128" that never happens."""
    x, y = hl.Var("x"), hl.Var("y")
    data = (np.arange(20, dtype=np.uint64) * np.uint64(40503) % np.uint64(65536)).astype(np.uint16)
    inp = hl.ImageParam(hl.UInt(16), 2, "inp")
    inp.set(hl.Buffer(data.reshape(4, 5)))
    q = hl.Param(hl.Float(32), "q", p)
    bc = hl.BoundaryConditions.repeat_image(inp)
    f0, f1 = hl.Func("f0"), hl.Func("f1")
    d = hl.saturating_cast(hl.Int(8), y)
    f0[x, y] = inp[0, hl.clamp(hl.cast(hl.Int(32), hl.i8_sat(bc[x, y - 2]) % d), 0, 2)]
    f1[x, y] = f0[x, hl.saturating_cast(hl.UInt(8), q)]
    return f1.realize([6, 3])


@differential()
def test_hoisted_storage_of_a_func_whose_consumers_are_dead(hl):
    """Fuzz seed 34850 (an internal error): f0's storage is hoisted to the
    root, and f0 is computed inside f1, which f2 reads only as f1[..][0] != 3
    with f1[..][0] the constant 0. The select folds, f1 and f0 are computed
    nowhere, and storage flattening refused the hoisted storage left without
    a Realize ("has no Realize inside it"); Halide drops it."""
    x, y = hl.Var("x"), hl.Var("y")
    inp0 = hl.ImageParam(hl.UInt(32), 2, "inp0")
    inp0.set(hl.Buffer(np.array([[4000000000]], dtype=np.uint32)))
    f0, f1, f2, f3 = hl.Func("f0"), hl.Func("f1"), hl.Func("f2"), hl.Func("f3")
    f0[x, y] = y
    bc0 = hl.BoundaryConditions.mirror_interior(inp0)
    f1[x, y] = (0, hl.saturating_cast(hl.Int(64), hl.u32_sat(f0[x, y * 2]) | hl.u64(f0[x + 1, y / 2]) % 20))
    picked = hl.select(f1[x + 3, y][0] != 3, hl.i16_sat(11), hl.i16(-19))
    row = hl.clamp(hl.saturating_cast(hl.Int(32), picked), -2, 8)
    read = hl.cast(hl.Int(32), inp0[hl.clamp(x + 2, 0, 2), hl.clamp(y + 2, 0, 3)])
    f2[x, y] = 1073741824 > hl.min(read, hl.i32(18) * hl.clamp(hl.cast(hl.Int(32), bc0[x - 2, row]), -16384, 16384))
    f3[x, y] = hl.cos(hl.cast(hl.Float(64), 0.125))
    r1 = hl.RDom([(0, 4)])
    f3[x, y] = hl.min(f3[x, y], hl.f64(hl.argmin(r1, hl.cast(hl.Float(64), bc0[x / 2, y]) / 0.25 // -2.0 + hl.f64(r1.x))[0]))
    r2 = hl.RDom([(1, 1), (-2, 1)])
    f3[x, y] = 5.5 - hl.f64(f2[y + 2, y + 3]) // 4.0 + hl.cast(hl.Float(64), r2.y)
    sv0, sv1 = hl.Var("sv0"), hl.Var("sv1")
    f3.update(1).split(x, sv0, sv1, 3)
    f1.compute_at(f3, sv0)
    f0.compute_at(f1, y)
    f0.hoist_storage_root()
    out = hl.Buffer(hl.Float(64), [3, 1])
    f3.realize(out)
    return out


@differential()
@pytest.mark.parametrize("kind", ["buffer", "image_param"])
def test_an_output_read_where_an_input_says_is_realized_that_far(hl, kind):
    """Fuzz seed 35350: a second output, f0, is read at a place loaded from
    an input, so the region realize() must give it depends on the input's
    values. Halide sizes outputs with a bounds-query call, which loads the
    input; ferrohalide evaluated the region symbolically, gave up on the
    load and kept the requested size, and the pipeline's check refused the
    read ("Output buffer f0 is accessed at 31"). An Int(32) element at one
    place was also "unbounded" to its bounds, where Halide's is one value."""
    x = hl.Var("x")
    data = np.array([3, -4, 7, 1, 0], dtype=np.int32)
    if kind == "buffer":
        inp = hl.Buffer(data)
    else:
        inp = hl.ImageParam(hl.Int(32), 1, "inp")
        inp.set(hl.Buffer(data))
    f0, f2 = hl.Func("f0"), hl.Func("f2")
    f0[x] = x * 10
    k = inp[hl.Expr(2)]
    f2[x] = f0[x + k] * 1000 + f0[x - k]
    p = hl.Pipeline([f2, f0])
    first = p.realize([6])
    regions = [[(b.dim(0).min(), b.dim(0).extent()) for b in first]]
    values = [np.array(b) for b in first]
    # The same compiled pipeline, other input values: other regions.
    data2 = data.copy()
    data2[2] = 100
    if kind == "buffer":
        inp[2] = 100
    else:
        inp.set(hl.Buffer(data2))
    second = p.realize([6])
    regions.append([(b.dim(0).min(), b.dim(0).extent()) for b in second])
    values += [np.array(b) for b in second]
    return regions, values


@differential()
def test_an_output_read_where_a_narrow_input_value_selects(hl):
    """Fuzz seed 35350 as found: the region of output f0 goes through
    `select(0 < i32_sat(in[4]), 0, 127)`."""
    x = hl.Var("x")
    inp = hl.Buffer(np.array([-3, 9, 2, 8, 5], dtype=np.int64))
    f0, f1, f2 = hl.Func("f0"), hl.Func("f1"), hl.Func("f2")
    f0[x] = hl.u16(x)
    far = hl.min(hl.i32(hl.select(hl.i32_sat(inp[hl.Expr(4)]) > 0, hl.i8(0), hl.i8(127))), 10)
    f1[x] = f0[2 * x - 7] + f0[far * 2]
    f2[x] = hl.u32(f1[x]) * hl.u32(x)
    r = hl.Pipeline([f2, f0]).realize([20])
    return [(np.array(b), b.dim(0).min(), b.dim(0).extent()) for b in r]


@differential()
@pytest.mark.parametrize("type_name,p", [
    ("Int(32)", 0), ("Int(32)", 3), ("Int(32)", -3), ("UInt(8)", 0), ("UInt(8)", 5),
    ("Int(8)", 0), ("Int(8)", -128), ("UInt(16)", 0), ("Int(16)", 0),
])
def test_a_remainder_by_a_parameter_that_is_zero_reads_element_zero(hl, type_name, p):
    """`g[x % p]` with p = 0 reads g[0] (a % 0 is 0). The bounds of a
    remainder by a symbolic divisor were |p| - 1, which is -1 there: g was
    computed over [0, -1] and its element 0 read uninitialized memory
    (found while making the bounds of narrow remainders wrap-free)."""
    x = hl.Var("x")
    t = getattr(hl, type_name.split("(")[0])(int(type_name.split("(")[1][:-1]))
    q = hl.Param(t, "q", p)
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 7 + 3
    f[x] = g[hl.cast(hl.Int(32), hl.cast(t, x) % q)]
    g.compute_root()
    return f.realize([6])


@differential()
def test_a_second_output_read_by_a_shifted_output_grows_with_it(hl):
    """Fuzz seed 36077: output f3's outer loop (13 wide, vectorized by 8:
    extent 2) is split by 8 ShiftInwards, so f3 is computed from -48 on and
    realize() grows it. Its update reads the second output f2 at x / 2,
    from -24 once f3 has grown. ferrohalide sized f2 from f3's requested
    region alone and its check refused the read ("Output buffer f2 is
    accessed at -24"); the outputs' regions are now grown until nothing
    changes. (Halide sizes f2 in one query and gets -24 from f3's pure
    stage, which reads f2 at x // 2 and which ferrohalide simplifies away.)"""
    x, sv1 = hl.Var("x"), hl.Var("sv1")
    f2, f3 = hl.Func("f2"), hl.Func("f3")
    f2[x] = x * 3
    f3[x] = hl.i32(hl.popcount(hl.i8(f2[x // 2])) // 10) + x
    f3[x] += f2[x / 2]
    f3.vectorize(x, 8)
    f3.split(x, x, sv1, 8, hl.TailStrategy.ShiftInwards)
    r = hl.Pipeline([f3, f2]).realize([13])
    return [(np.array(b), b.dim(0).min(), b.dim(0).extent()) for b in r]


@differential(expect_error=True)
@pytest.mark.parametrize("marked", ["parallel", "parallel_split", "vectorize"])
def test_fusing_a_parallel_var_with_an_rvar_needs_the_race_proof(hl, marked):
    """Fuzz seeds 36139 and 36908: x is made parallel, then fused with an
    RVar of an update that writes f[x, y] once per r.x. The fused loop keeps
    x's type, so it runs the r.x iterations of one point in parallel: a
    race (the last write decides, and ferrohalide's answer varied from run to
    run). Halide refuses it as it refuses `parallel` on the fused var;
    ferrohalide checked the race only in `parallel` and `vectorize`."""
    x, y, xi = hl.Var("x"), hl.Var("y"), hl.Var("xi")
    t = hl.RVar("t")
    r = hl.RDom([(0, 50)])
    f = hl.Func("f")
    f[x, y] = 0
    f[x, y] = x * 100 + r.x
    s = f.update(0).reorder(x, r.x)
    if marked == "parallel":
        s.parallel(x)
    elif marked == "parallel_split":
        s.parallel(x, 2)
    else:
        s.vectorize(x)
    s.fuse(x, r.x, t)
    return f.realize([64, 4])


def test_fusing_the_pieces_of_a_split_rvar_out_of_order_is_refused():
    """Fuzz seed 37223: `fuse(inner, outer)` of two loops that are not
    adjacent first moves `outer` to just outside `inner` (Halide's fuse does
    so with a reorder). Fusing the inner piece of a split RVar as the outer
    loop reverses the reduction's order, and an update that overwrites its
    point per iteration then keeps another iteration's value: Halide 21
    returns [3, 13, 23] where the unscheduled pipeline gives [4, 14, 24].
    ferrohalide fused without the reorder, so without its check, and gave
    Halide's answer; now the reorder's check refuses it. The adjacent fuse
    is unaffected."""
    import ferrohalide as hl

    def run(inner_first):
        x = hl.Var("x")
        ro, ri, t = hl.RVar("ro"), hl.RVar("ri"), hl.RVar("t")
        r = hl.RDom([(0, 5)])
        f = hl.Func("f")
        f[x] = 0
        f[x] = x * 10 + r.x
        f.update(0).split(r.x, ro, ri, 2)
        if inner_first:
            f.update(0).fuse(ri, ro, t)
        else:
            f.update(0).fuse(ro, ri, t)
        return np.array(f.realize([3])).tolist()

    assert run(True) == [4, 14, 24]
    with pytest.raises(hl.HalideError, match="can't reorder RVars ro and ri"):
        run(False)


def test_a_fuse_that_fails_leaves_the_schedule_as_it_was():
    """`fuse` of loops that are not adjacent first reorders them; when the
    fuse itself then fails (here a Var fused from an RVar), that reorder is
    undone too, so a caller that catches the error keeps the schedule it
    had (Halide 21 leaves the reorder applied)."""
    import ferrohalide as hl

    x, y, t = hl.Var("x"), hl.Var("y"), hl.Var("t")
    r = hl.RDom([(0, 3)])
    f = hl.Func("f")
    f[x, y] = 0
    f[x, y] = f[x, y] + r.x
    before = f.update(0).dump_argument_list()
    with pytest.raises(hl.HalideError, match="Can't fuse Var t from RVar"):
        f.update(0).fuse(r.x, y, t)
    assert f.update(0).dump_argument_list() == before


@differential()
@pytest.mark.parametrize("directive", ["unroll", "vectorize"])
@pytest.mark.parametrize("size", [1, 3, 5])
def test_unroll_or_vectorize_of_an_extent_bounded_by_a_clamp(hl, size, directive):
    """Seed 41447: f's loop extent is symbolic but at most 2 (it is read at
    clamp(x, 0, 1)); Halide unrolls or vectorizes by that constant upper
    bound with the body guarded (its BoundConstantExtentLoops), which
    ferrohalide refused ("Can only unroll for loops over a constant extent",
    "Can only vectorize loops over a constant extent > 1")."""
    x = hl.Var("x")
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = x * 10
    g[x] = f[hl.clamp(x, 0, 1)] + x
    getattr(f.compute_root(), directive)(x)
    out = g.realize([size])
    assert np.array(out).tolist() == [10 * min(max(i, 0), 1) + i for i in range(size)]
    return out


@differential()
def test_vectorize_of_an_extent_bounded_by_a_clamp_computed_per_row(hl):
    """A partial bound: f is computed per row of g over x in [2, 7] at most
    (6 lanes), and g reads it at two clamped offsets."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 3 + y
    g[x, y] = f[hl.clamp(x, 2, 7), y] + f[hl.clamp(x + 1, 2, 7), y]
    f.compute_at(g, y).vectorize(x)
    g.vectorize(x, 4)
    out = g.realize([9, 2])
    want = [[(3 * min(max(i, 2), 7) + j) + (3 * min(max(i + 1, 2), 7) + j) for i in range(9)] for j in range(2)]
    assert np.array(out).tolist() == want
    return out


@differential()
def test_a_bound_on_a_func_whose_reads_fold_away(hl):
    """Seed 56682: g reads f only in a select branch that is never taken, so
    nothing of f is required; f's bound covers that empty region (ferrohalide
    refused it: "do not cover required region (from 0 to -1)")."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y
    g[x, y] = hl.select(hl.cast(hl.Bool(), 1), 7, f[x, y + 3])
    f.compute_root().bound(y, 2, 19)
    out = g.realize([4, 3])
    assert np.array(out).tolist() == [[7] * 4] * 3
    return out


@differential()
@pytest.mark.parametrize("rows", [0, 2])
def test_a_bound_on_a_producer_of_an_empty_loop(hl, rows):
    """A consumer loop that runs no iteration requires an empty region of
    its producer, which any bound covers."""
    x, y = hl.Var("x"), hl.Var("y")
    n = hl.Param(hl.Int(32), "n", rows)
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y
    r = hl.RDom([(0, n)])
    g[x, y] = 0
    g[x, y] = g[x, y] + f[x + 50, r.x + 40]
    f.compute_root().bound(y, 40, 2).bound(x, 50, 4)
    return g.realize([4, 3])


@differential()
def test_a_boundary_read_indexed_by_the_max_of_a_bool_cast(hl):
    """Fuzz seed 60428: `i8(constant_exterior(bool image)[..])` is never
    negative, so the simplifier drops the clamp's lower end around it; the
    input's required region once fell back to Int(8)'s whole range and the
    run was refused ("accessed at -128")."""
    x, y = hl.Var("x"), hl.Var("y")
    a = np.zeros((4, 6), dtype=np.bool_)
    a[1, 2] = a[3, 0] = True
    b = (np.arange(24).reshape(4, 6) * 7 % 23 - 11).astype(np.int16)
    inp, other = hl.Buffer(a), hl.Buffer(b)
    bc = hl.BoundaryConditions.constant_exterior(inp, 0)
    picked = hl.max(hl.cast(hl.Int(8), bc[2 * x - 3, y]),
                    hl.saturating_cast(hl.Int(8), other[hl.clamp(x, 0, 5), y]))
    f = hl.Func("f")
    f[x, y] = hl.i32(bc[x, hl.clamp(hl.cast(hl.Int(32), picked), 0, 8)]) * 10 + hl.i32(picked)
    return f.realize([7, 4])


@differential()
def test_a_vectorized_rvar_whose_where_is_a_masked_constant_false(hl):
    """Fuzz seed 59134: `(v & 2) & 1` is never set, so the update never
    runs and vectorizing its RVar races on nothing; the race check once
    could not see it (no rule folded the two masks) and refused."""
    x = hl.Var("x")
    inp = hl.Buffer(np.arange(16, dtype=np.uint8))
    f = hl.Func("f")
    f[x] = hl.i32(x)
    r = hl.RDom([(0, 8)])
    r.where(((hl.i8(inp[x]) & 2) & 1) != 0)
    f[x] = f[x] + r.x
    f.update(0).vectorize(r.x, 8)
    return f.realize([4])


@differential()
@pytest.mark.parametrize("n", [1, 5, 12, 13, 30])
def test_a_vectorized_producer_over_a_region_clamped_at_both_ends(hl, n):
    """Fuzz seed 63101: f is computed per outer tile of a twice-split g, so
    its region is clamped at both ends and its extent is
    `min(6 xoo + 3, e) - min(6 xoo, e) + 3`: between 3 and 6, but only once
    the two mins are seen to share an operand. Vectorizing f was refused
    ("Can only vectorize for loops over a constant extent"); Halide runs it
    6 lanes wide."""
    x, xo, xi, xoo, xoi = (hl.Var(n_) for n_ in ["x", "xo", "xi", "xoo", "xoi"])
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = x * 10
    g[x] = f[x] + 1
    g.split(x, xo, xi, 3).split(xo, xoo, xoi, 2)
    f.compute_at(g, xoo).vectorize(x)
    return g.realize([n])


@differential()
@pytest.mark.parametrize("where", ["rvar", "i16"])
def test_an_update_false_over_its_rdom_does_not_grow_the_output(hl, where):
    """Fuzz seed 62270: `where(6 < r.x)` with r.x in [-1, 0] never holds, so
    the update never runs, and the RoundUp split of its x must not grow the
    output past an exact 9x8 buffer. Only a predicate that simplified to
    false by itself once dropped the update; this one was refused ("Output
    buffer f is accessed at 15")."""
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    r = hl.RDom([(-1, 2)])
    r.where(6 < (r.x if where == "rvar" else hl.i16(r.x)))
    f[x, r.x + 5] = f[x, r.x + 5] + 1000
    f.update(0).split(x, xo, xi, 16)
    out = hl.Buffer(hl.Int(32), [9, 8])
    f.realize(out)
    return np.asarray(out)


@differential()
@pytest.mark.parametrize("shape", ["unroll", "split", "reorder", "update"])
@pytest.mark.parametrize("n", [1, 3, 5, 13, 17, 30])
def test_a_shifted_blend_split_may_vectorize_its_outer_loop_over_a_serial_inner_one(hl, shape, n):
    """Fuzz seed 62040: with the ShiftInwardsAndBlend split's inner loop
    unrolled or serial, the vectorized outer loop's lanes run its iterations
    in lockstep, and the shifted tail's lane reaches each overlapped element
    before the lane that writes it, so the right value lands last (Halide
    runs these, right at every width). This was refused along with the
    vectorized inner loop of seed 7300."""
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    siab = hl.TailStrategy.ShiftInwardsAndBlend
    f = hl.Func("f")
    f[x] = x * 10 + 7
    stage = f
    if shape == "update":
        f[x] = f[x] * 3 + 1
        stage = f.update()
    if shape in ("unroll", "update"):
        stage.unroll(x, 4, siab).vectorize(x, 4)
    elif shape == "split":
        stage.split(x, xo, xi, 4, siab).vectorize(xo, 4)
    else:
        stage.split(x, xo, xi, 4, siab).reorder(xo, xi).vectorize(xo, 4)
    return f.realize([n])


@differential()
@pytest.mark.parametrize("n", [1, 6, 15])
def test_a_shifted_vector_producer_per_consumer_vector_needs_a_tight_region(hl, n):
    """Fuzz seed 63702: g, computed per 4-wide vector of h and vectorized by
    8 with its tail shifted inwards, reads f from `min(g.max, g.min + 7) -
    7 + 3` on; g.max - g.min is `(t + 3) / 2 - t / 2`, 1 or 2, but was
    bounded with its ends from different iterations of h (24 values of f
    required over 15 points instead of 14), so `bound_storage(x, 14)` was
    refused where Halide runs."""
    x = hl.Var("x")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x] = x
    g[x] = f[x + 3]
    h[x] = g[x // 2]
    h.vectorize(x, 4)
    g.compute_at(h, x).vectorize(x, 8)
    f.compute_root().bound_storage(x, 14)
    return h.realize([n])


@differential()
def test_a_shifted_split_producer_per_row_needs_a_tight_region(hl):
    """Fuzz seed 51844: f1 is split with its tail shifted inwards and computed
    per row of f3, so its rows run from `min(2 yo, (max - min) - 1) + yi +
    min` on; min was bounded twice, apart (once in the extent, once as the
    base), and f0 was taken to need rows up to 13 where 11 are read, so
    `f0.bound(y, -1, 13)` was refused where Halide runs."""
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    f0, f1, f3 = hl.Func("f0"), hl.Func("f1"), hl.Func("f3")
    f0[x, y] = 10 * y
    f1[x, y] = f0[x, 2 * y - 1]
    r = hl.RDom([(1, 5)])
    f1[x, r.x] += 1
    f1.update(0).unscheduled()
    f3[x, y] = f1[x, y // 2]
    f1.split(y, yo, yi, 2).compute_at(f3, y)
    f0.compute_root().bound(y, -1, 13)
    return f3.realize([2, 13])


def _seed_75774(hl):
    """Fuzz seed 75774's pipeline: a Bool Func with an update, its rows
    vectorized by 8 and then by 3 (24-lane masked gathers of int64)."""
    x, y = hl.Var("x"), hl.Var("y")
    a = ((np.arange(21, dtype=np.uint64) * np.uint64(2654435761)) % np.uint64(356)).astype(np.int64) - 100
    b = (((np.arange(30, dtype=np.uint64) * np.uint64(40503)) % np.uint64(8193)).astype(np.int64) - 4096) / 16
    inp0 = hl.Buffer(a.reshape(3, 7))
    inp1 = hl.Buffer(b.reshape(15, 2))
    bc0 = hl.BoundaryConditions.mirror_image(inp0)
    bc1 = hl.BoundaryConditions.mirror_image(inp1)
    f0 = hl.Func("f0")
    f0[x, y] = hl.cast(hl.Float(32), hl.select(
        hl.cast(hl.Bool(), bc0[x, y] & 1), hl.u64_sat(x),
        hl.u64(hl.clamp(bc1[x - 3, x / 2], 0.0, 1073741824.0)))) == (-2.5 - hl.f32(bc0[x, y]))
    r0 = hl.RDom([(12, 4)])
    f0[x, r0.x] = (hl.f32(bc0[x + 2, r0.x + 3]) // -2.0) >= 0.875
    sv0, sv1, sv2 = hl.Var("sv0"), hl.Var("sv1"), hl.Var("sv2")
    f0.split(x, sv0, sv1, 1, hl.TailStrategy.Auto)
    f0.vectorize(y, 8, hl.TailStrategy.GuardWithIf)
    f0.rename(y, sv2)
    f0.vectorize(sv2, 3, hl.TailStrategy.RoundUp)
    rv3, rv4 = hl.RVar("rv3"), hl.RVar("rv4")
    f0.update(0).split(r0.x, rv3, rv4, 4, hl.TailStrategy.GuardWithIf)
    f0.update(0).partition(rv3, hl.Partition.Never)
    return f0


@differential()
def test_a_24_lane_masked_gather_runs(hl):
    """Seed 75774 died of SIGILL on AVX-512: LLVM split its 24-lane masked
    gathers into 8-lane ones, one of them all padding, whose undefined index
    register it gave the destination's register (an invalid instruction).
    Gathers and scatters are now emitted in power-of-two pieces."""
    return np.array(_seed_75774(hl).realize([8, 16]))


def test_masked_gathers_have_power_of_two_lanes(tmp_path):
    import re

    import ferrohalide as hl

    f0 = _seed_75774(hl)
    path = tmp_path / "f0.ll"
    f0.compile_to_llvm_assembly(str(path), [], "f0")
    counts = [int(n) for n in re.findall(r"llvm\.masked\.(?:gather|scatter)\.v(\d+)", path.read_text())]
    assert counts, "the pipeline has masked gathers"
    assert all(n & (n - 1) == 0 for n in counts), sorted(set(counts))


def test_a_65_lane_masked_gather_runs():
    """A GuardWithIf tail of 65 lanes gathers in pieces of 64 and 1; the
    1-lane piece is padded to 2 (a 1-lane masked gather was invalid IR).
    Halide 21 aborts in LLVM's IRBuilder here, so the check is NumPy."""
    import ferrohalide as hl

    x = hl.Var("x")
    data = np.arange(200, dtype=np.int32) * 7 % 113
    idx = (np.arange(200, dtype=np.int32) * 37) % 200
    f = hl.Func("f")
    f[x] = hl.Buffer(data)[hl.clamp(hl.Buffer(idx)[x], 0, 199)] + x
    f.vectorize(x, 65, hl.TailStrategy.GuardWithIf)
    expected = data[np.clip(idx[:70], 0, 199)] + np.arange(70)
    assert np.array(f.realize([70])).tolist() == expected.tolist()


@differential()
def test_an_update_never_run_through_a_folded_transcendental_may_reorder_its_rvars(hl):
    """Seed 85036: the update's where() is `asinh(1.625) > 2`, false once
    asinh of the constant folds (Halide folds it), so the update never
    runs and its RVars may be reordered; ferrohalide, which did not fold
    asinh, refused the reorder as order-dependent."""
    x = hl.Var("x")
    f = hl.Func("f")
    r = hl.RDom([(0, 4)])
    r.where(hl.asinh(hl.f32(1.625)) > 2.0)
    f[x] = x
    f[x] = x + r.x * 7  # last-wins: order-dependent if it ran
    ro, ri = hl.RVar("ro"), hl.RVar("ri")
    f.update(0).split(r.x, ro, ri, 2).reorder(ro, ri)
    out = f.realize([3])
    assert np.array(out).tolist() == [0, 1, 2]
    return out


@differential()
def test_folded_float_transcendentals_match_the_reference_bit_for_bit(hl):
    """Constants through every transcendental Halide's simplifier folds
    (32-bit floats, computed in double and rounded): the folded values
    are the reference's to the bit."""
    x = hl.Var("x")
    f = hl.Func("f")
    c = [hl.f32(v) for v in (0.3, 0.77, 1.625, 2.5, -0.41)]
    terms = [
        hl.sin(c[3]), hl.cos(c[3]), hl.tan(c[1]), hl.asin(c[0]), hl.acos(c[4]),
        hl.atan(c[2]), hl.sinh(c[1]), hl.cosh(c[2]), hl.tanh(c[4]), hl.asinh(c[2]),
        hl.acosh(c[3]), hl.atanh(c[0]), hl.exp(c[2]), hl.log(c[3]),
        hl.atan2(c[1], c[4]), hl.pow(c[3], c[2]),
    ]
    f[x] = hl.f32(0)
    for i, t in enumerate(terms):
        f[x] = hl.select(x == i, t, f[x])
    return f.realize([len(terms)])


@differential()
@pytest.mark.parametrize("schedule", ["at_x", "at_split", "root"])
def test_a_func_read_at_an_unsigned_saturating_sub_is_computed_where_it_is_read(hl, schedule):
    """Found triaging fuzz seed 85609: the region read at
    `saturating_sub(u8 11, u8 x)` was bounded with the subtraction done in
    u16, where 11 - 14 wraps and saturates to 255 instead of 0; g, computed
    per x of f, was computed at 255 and read at 0 (garbage)."""
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    g, f = hl.Func("g"), hl.Func("f")
    g[x] = x * 10 + 1
    f[x] = g[hl.i32(hl.saturating_sub(hl.u8(11), hl.u8(x)))]
    if schedule == "at_x":
        g.compute_at(f, x)
    elif schedule == "at_split":
        f.split(x, xo, xi, 4)
        g.compute_at(f, xo)
    else:
        g.compute_root()
    out = f.realize([16])
    assert np.array(out).tolist() == [10 * max(11 - v, 0) + 1 for v in range(16)]
    return out
