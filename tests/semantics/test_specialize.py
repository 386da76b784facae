"""Specializations: Func.specialize(cond) returns a Stage whose schedule is used
when cond holds; results must equal the reference's bit-exactly whichever
branch runs, specialize_fail must raise its message when reached, and misuse
must raise the reference's errors."""
import pytest

from .harness import differential

# Output sizes on both sides of the conditions used below (width > 16).
SIZES = [(37, 9), (16, 5), (5, 3), (1, 1)]


def _pipeline(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 3 + y * y + hl.select(x > y, (x ^ y) % 7, hl.min(x, y * 2)) - (x >> 1)
    g = hl.Func("g")
    g[x, y] = f[x - 1, y] + f[x + 1, y] * 2 - f[x, y + 1]
    return x, y, f, g


def _realize_all(g, sizes=SIZES):
    return {"%dx%d" % s: g.realize(list(s)) for s in sizes}


@differential()
def test_specialize_output_vectorized_per_branch(hl):
    x, y, f, g = _pipeline(hl)
    wide = g.output_buffer().width() > 16
    g.specialize(wide).vectorize(x, 8)
    g.split(y, hl.Var("yo"), hl.Var("yi"), 2)
    return _realize_all(g)


@differential()
def test_specialize_with_different_splits(hl):
    x, y, f, g = _pipeline(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    ob = g.output_buffer()
    g.specialize(ob.width() >= 32).split(x, xo, xi, 8, hl.TailStrategy.GuardWithIf).vectorize(xi)
    g.specialize(ob.width() >= 8).split(x, xo, xi, 4).unroll(xi)
    g.specialize(ob.height() > 4).parallel(y)
    return _realize_all(g)


@differential()
def test_specialize_producer_computed_at_consumer(hl):
    """The producer's region is required by the consumer's loops in every
    branch; bounds must hold for each."""
    x, y, f, g = _pipeline(hl)
    f.compute_at(g, y)
    wide = g.output_buffer().width() > 16
    g.specialize(wide).vectorize(x, 4)
    f.vectorize(x, 4)
    return _realize_all(g)


@differential()
def test_specialize_producer_root_with_roundup(hl):
    """A specialized producer whose branches write different regions: the
    allocation covers the union."""
    x, y, f, g = _pipeline(hl)
    f.compute_root()
    f.specialize(g.output_buffer().width() > 16).split(
        x, hl.Var("xo"), hl.Var("xi"), 8, hl.TailStrategy.RoundUp)
    return _realize_all(g)


@differential()
def test_nested_specializations(hl):
    x, y, f, g = _pipeline(hl)
    ob = g.output_buffer()
    s = g.specialize(ob.width() > 16)
    s.vectorize(x, 4)
    s.specialize(ob.height() > 4).parallel(y)
    s.specialize(ob.height() > 2).unroll(y, 2)
    g.specialize(ob.width() > 4).split(x, hl.Var("xo"), hl.Var("xi"), 2)
    return _realize_all(g)


@differential()
def test_specialize_same_condition_returns_same_stage(hl):
    x, y, f, g = _pipeline(hl)
    ob = g.output_buffer()
    g.specialize(ob.width() > 16).vectorize(x, 4)
    g.specialize(ob.width() > 16).parallel(y)
    return _realize_all(g)


@differential()
def test_specialize_fail_raises_its_message(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize(g.output_buffer().width() > 16).vectorize(x, 8)
    g.specialize_fail("output too narrow for this schedule")
    ok = g.realize([37, 9])
    try:
        g.realize([8, 9])
        message = None
    except hl.HalideError as e:
        message = str(e)
    return {"ok": ok, "message": message}


@differential()
def test_specialize_fail_on_nested_stage(hl):
    x, y, f, g = _pipeline(hl)
    ob = g.output_buffer()
    s = g.specialize(ob.width() > 16)
    s.specialize(ob.height() > 4).vectorize(x, 4)
    s.specialize_fail("wide but short")
    out = {"ok_wide": g.realize([20, 6]), "ok_narrow": g.realize([5, 2])}
    try:
        g.realize([20, 3])
        out["message"] = None
    except hl.HalideError as e:
        out["message"] = str(e)
    return out


@differential()
def test_specialize_trivially_true(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize(hl.Expr(True)).vectorize(x, 4)
    # Never reached: an always-true specialization comes first.
    g.specialize_fail("unreachable")
    return _realize_all(g)


@differential()
def test_specialize_trivially_false_and_constant_folded(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize(hl.Expr(1) > 2).vectorize(x, 4)
    g.specialize(hl.Expr(3) > 2).split(x, hl.Var("xo"), hl.Var("xi"), 3)
    return _realize_all(g)


@differential()
def test_specialize_condition_on_producer_uses_consumer_size(hl):
    x, y, f, g = _pipeline(hl)
    f.compute_root()
    f.specialize(g.output_buffer().width() > 16).vectorize(x, 8).parallel(y)
    return _realize_all(g)


@differential()
def test_respecialize_after_realize(hl):
    x, y, f, g = _pipeline(hl)
    first = g.realize([20, 4])
    g.specialize(g.output_buffer().width() > 16).vectorize(x, 4)
    return [first, g.realize([20, 4]), g.realize([3, 4])]


@differential()
def test_output_buffer_exprs(hl):
    x, y, f, g = _pipeline(hl)
    ob = g.output_buffer()
    h = hl.Func("h")
    h[()] = 0
    return {
        "name": ob.name().split("$")[0],
        "dims": ob.dimensions(),
        "type": ob.type(),
        "repr_width": str(ob.width()).replace(g.name(), "g"),
        "repr_right": str(ob.right()).replace(g.name(), "g"),
        "n": len(g.output_buffers()),
    }


# ---- misuse -------------------------------------------------------------------------

@differential(expect_error=True)
def test_specialize_on_var(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize(x > 1)


@differential(expect_error=True)
def test_specialize_on_non_bool(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize(hl.Expr(1))


@differential(expect_error=True)
def test_specialize_fail_empty_message(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize_fail("")


@differential(expect_error=True)
def test_two_specialize_fails(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize_fail("a")
    g.specialize_fail("b")


@differential(expect_error=True)
def test_specialize_after_specialize_fail(hl):
    x, y, f, g = _pipeline(hl)
    g.specialize_fail("a")
    g.specialize(g.output_buffer().width() > 3)


@differential(expect_error=True)
def test_output_buffer_of_undefined_func(hl):
    hl.Func("undefined").output_buffer()


@differential(expect_error=True)
def test_output_buffer_dim_out_of_range(hl):
    x, y, f, g = _pipeline(hl)
    g.output_buffer().dim(2)


@differential(expect_error=True)
def test_output_buffer_channels_of_2d(hl):
    x, y, f, g = _pipeline(hl)
    g.output_buffer().channels()


@differential(expect_error=True)
def test_output_buffer_of_tuple_func(hl):
    x = hl.Var("x")
    t = hl.Func("t")
    t[x] = (x, x + 1)
    t.output_buffer()


def test_specialize_returns_a_stage():
    hl = pytest.importorskip("ferrohalide")
    x, y, f, g = _pipeline(hl)
    s = g.specialize(g.output_buffer().width() > 16)
    assert isinstance(s, hl.Stage)
    assert s.name() == g.name()
    assert isinstance(s.vectorize(x, 4), hl.Stage)
    assert isinstance(hl.Stage(g), hl.Stage)
    assert isinstance(s.prefetch(f, y, y, 2), hl.Stage)


@differential()
def test_specialized_output_into_exact_buffers(hl):
    """Each branch writes only its own region: a vectorized branch's shifted
    tail must not make a narrow buffer look too small when the other branch
    runs (and the same for the specialized producer's allocation)."""
    x, y, f, g = _pipeline(hl)
    ob = g.output_buffer()
    g.specialize(ob.width() > 8).vectorize(x, 8)
    g.specialize(ob.width() > 2).vectorize(x, 2)
    f.compute_at(g, y)
    f.specialize(ob.width() > 8).split(x, hl.Var("xo"), hl.Var("xi"), 4, hl.TailStrategy.RoundUp)
    out = {}
    for w, h in SIZES:
        buf = hl.Buffer(hl.Int(32), [w, h])
        g.realize(buf)
        out["%dx%d" % (w, h)] = buf
    return out


@differential(expect_error=True)
def test_specialize_inlined_func(hl):
    x, y, f, g = _pipeline(hl)
    f.specialize(g.output_buffer().width() > 8).vectorize(x, 4)
    g.realize([10, 3])


@differential()
def test_specialize_inlined_func_on_constant_true(hl):
    """An always-true specialization is folded into the default schedule
    before Halide checks inlined Funcs."""
    x, y, f, g = _pipeline(hl)
    f.specialize(hl.Expr(True))
    return g.realize([10, 3])
