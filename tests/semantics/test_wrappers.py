"""Wrappers: Func.in_() / in_(g) / in_([g, h]) / clone_in(...), scheduled like
any Func, must give the reference's results bit-exactly, and misuse must raise
the reference's errors."""
import pytest

from .harness import differential

W, H = 19, 11


def _named(name, *funcs):
    """A wrapper's name with the names of `funcs` replaced by their base names
    (Func names get `$n` suffixes that depend on what ran before)."""
    for fn in sorted(funcs, key=lambda fn: -len(fn.name())):
        name = name.replace(fn.name(), fn.name().split("$")[0])
    return name


def _base(hl):
    """f is used by two consumers g and h; out combines them."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 5 + y * 3 + (x ^ y) % 7
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x + 1, y] * 2
    h = hl.Func("h")
    h[x, y] = f[x, y + 1] - f[x, y]
    out = hl.Func("out")
    out[x, y] = g[x, y] * 3 + h[x, y]
    return x, y, f, g, h, out


@differential()
def test_global_wrapper_inlined_by_default(hl):
    x, y, f, g, h, out = _base(hl)
    w = f.in_()
    return {"names": [_named(w.name(), f), w.dimensions()], "out": out.realize([W, H])}


@differential()
def test_global_wrapper_compute_root(hl):
    x, y, f, g, h, out = _base(hl)
    f.compute_root()
    f.in_().compute_root().vectorize(x, 4)
    return out.realize([W, H])


@differential()
def test_global_wrapper_at_consumer_loop(hl):
    x, y, f, g, h, out = _base(hl)
    # g and h are inlined into out, so out is the wrapper's only consumer.
    f.compute_root()
    f.in_().compute_at(out, y).vectorize(x, 4)
    return out.realize([W, H])


@differential()
def test_global_wrapper_is_cached(hl):
    x, y, f, g, h, out = _base(hl)
    w1 = f.in_()
    w2 = f.in_()
    w1.compute_root()
    return {"same_name": w1.name() == w2.name(), "out": out.realize([W, H])}


@differential()
def test_wrapper_per_consumer_with_different_schedules(hl):
    x, y, f, g, h, out = _base(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.compute_root()
    g.compute_root()
    h.compute_root()
    fg = f.in_(g)
    fh = f.in_(h)
    fg.compute_root().split(x, xo, xi, 4).vectorize(xi)
    fh.compute_at(h, y).unroll(x, 2)
    return {"names": [_named(fg.name(), f, g), _named(fh.name(), f, h)],
            "out": out.realize([W, H])}


@differential()
def test_wrapper_per_consumer_cached_and_global_skipped(hl):
    """A custom wrapper takes precedence over the global one in its consumer."""
    x, y, f, g, h, out = _base(hl)
    fg = f.in_(g).compute_root()
    glob = f.in_().compute_root()
    again = f.in_(g)
    return {"names": [_named(n.name(), f, g) for n in (fg, glob, again)],
            "out": out.realize([W, H])}


@differential()
def test_shared_wrapper(hl):
    x, y, f, g, h, out = _base(hl)
    w = f.in_([g, h])
    w.compute_root().parallel(y)
    g.compute_at(out, y)
    same = f.in_([h, g]).name() == w.name()
    return {"name": _named(w.name(), f), "same": same, "out": out.realize([W, H])}


@differential()
def test_clone_in_copies_definition_and_schedule(hl):
    x, y, f, g, h, out = _base(hl)
    f.compute_root().vectorize(x, 4)
    c = f.clone_in(g)
    # Later schedule changes of f do not reach the clone, and vice versa.
    f.compute_at(out, y)
    c.unroll(y, 2)
    g.compute_root()
    return {"name": _named(c.name(), f, g, h), "out": out.realize([W, H])}


@differential()
def test_clone_and_original_with_different_schedules(hl):
    x, y, f, g, h, out = _base(hl)
    cg = f.clone_in(g)
    cg.compute_root().vectorize(x, 8)
    f.compute_at(out, y).split(x, hl.Var("xo"), hl.Var("xi"), 3)
    return {"name": _named(cg.name(), f, g), "out": out.realize([W, H])}


def test_two_clones_with_different_schedules():
    """Not differential: halide 21.0.0 fails an internal check when a Func
    is cloned a second time (f.clone_in(g) then f.clone_in(h)). Each clone
    keeps its own schedule; results equal the unscheduled pipeline."""
    hl = pytest.importorskip("ferrohalide")
    import numpy as np
    x, y, f, g, h, out = _base(hl)
    expected = np.asarray(out.realize([W, H])).copy()
    cg = f.clone_in(g)
    ch = f.clone_in(h)
    assert (cg.name(), ch.name()) == (f.name() + "_clone_in_" + g.name() + "$0",
                                      f.name() + "_clone_in_" + h.name() + "$1")
    cg.compute_root().vectorize(x, 8)
    ch.compute_at(out, y).split(x, hl.Var("xo"), hl.Var("xi"), 3)
    f.compute_root()  # used by no one now
    assert np.array_equal(np.asarray(out.realize([W, H])), expected)


@differential()
def test_clone_in_list(hl):
    x, y, f, g, h, out = _base(hl)
    c = f.clone_in([g, h])
    c.compute_root()
    return {"name": _named(c.name(), f, g, h), "out": out.realize([W, H])}


@differential()
def test_wrapper_of_wrapper_in_same_consumer(hl):
    x, y, f, g, h, out = _base(hl)
    w1 = f.in_(g)
    w2 = w1.in_(g)
    w1.compute_root()
    w2.compute_at(g, y)
    g.compute_root()
    return {"names": [_named(w.name(), f, g) for w in (w1, w2)],
            "out": out.realize([W, H])}


@differential()
def test_global_wrapper_of_global_wrapper(hl):
    x, y, f, g, h, out = _base(hl)
    w1 = f.in_()
    w2 = w1.in_()
    f.compute_root()
    w1.compute_root()
    w2.compute_root()
    return {"names": [_named(w.name(), f, g) for w in (w1, w2)],
            "out": out.realize([W, H])}


@differential()
def test_wrapper_of_func_of_buffer(hl):
    import numpy as np
    x, y = hl.Var("x"), hl.Var("y")
    data = (np.arange(W * H, dtype=np.int32).reshape(H, W) * 7) % 31
    img = hl.Buffer(data)
    inp = hl.Func(img)
    g = hl.Func("g")
    g[x, y] = inp[x, y] + inp[hl.min(x + 1, W - 1), y]
    inp.in_(g).compute_root()
    return g.realize([W, H])


@differential()
def test_rescheduling_after_realize(hl):
    """Wrapping is applied at lowering: the user's Funcs stay usable."""
    x, y, f, g, h, out = _base(hl)
    first = out.realize([W, H])
    w = f.in_(h).compute_root()
    second = out.realize([W, H])
    w.compute_inline()
    f.compute_root()
    third = out.realize([W, H])
    return [first, second, third, f.realize([4, 3]), g.realize([4, 3])]


@differential()
def test_unused_custom_wrapper_outside_pipeline(hl):
    """A wrapper for a consumer that is not in the realized pipeline is ignored."""
    x, y, f, g, h, out = _base(hl)
    f.in_(h).compute_root()
    return g.realize([W, H])


@differential()
def test_wrapper_of_output_is_unused(hl):
    x, y, f, g, h, out = _base(hl)
    out.in_().compute_root()
    return out.realize([W, H])


# ---- misuse -------------------------------------------------------------------------

@differential(expect_error=True)
def test_wrap_in_itself(hl):
    x, y, f, g, h, out = _base(hl)
    f.in_(f)


@differential(expect_error=True)
def test_wrap_in_list_containing_itself(hl):
    x, y, f, g, h, out = _base(hl)
    f.in_([g, f])


@differential(expect_error=True)
def test_wrap_in_consumer_that_does_not_call(hl):
    x, y, f, g, h, out = _base(hl)
    k = hl.Func("k")
    k[x, y] = x + y
    out2 = hl.Func("out2")
    out2[x, y] = g[x, y] + k[x, y]
    f.in_(k)
    out2.realize([4, 4])


@differential(expect_error=True)
def test_in_empty_list(hl):
    x, y, f, g, h, out = _base(hl)
    f.in_([])


@differential(expect_error=True)
def test_clone_in_empty_list(hl):
    x, y, f, g, h, out = _base(hl)
    f.clone_in([])


@differential(expect_error=True)
def test_in_of_undefined_func(hl):
    x, y, f, g, h, out = _base(hl)
    u = hl.Func("u")
    u.in_(g)


@differential(expect_error=True)
def test_redefinition_of_shared_wrapper(hl):
    x, y, f, g, h, out = _base(hl)
    f.in_([g, h])
    f.in_(g)


@differential(expect_error=True)
def test_shared_wrapper_when_second_already_wrapped(hl):
    x, y, f, g, h, out = _base(hl)
    f.in_(h)
    f.in_([g, h])


@differential(expect_error=True)
def test_in_with_bad_argument(hl):
    x, y, f, g, h, out = _base(hl)
    f.in_(5)


@differential(expect_error=True)
def test_compute_with_is_rejected(hl):
    x, y, f, g, h, out = _base(hl)
    f.compute_root()
    g.compute_root()
    # Invalid: g reads f, and fused Funcs may not depend on each other.
    f.compute_with(g, y)
    out.realize([W, H])


@differential()
def test_clone_of_undefined_func(hl):
    x, y, f, g, h, out = _base(hl)
    u = hl.Func("u")
    c = u.clone_in(g)
    return {"defined": c.defined(), "name": _named(c.name(), u, g)}


# ---------------------------------------------------------------------------
# ImageParam.in_()
# ---------------------------------------------------------------------------
def _image_pipeline(hl):
    import numpy as np
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Int(32), 2, "im")
    g = hl.Func("g")
    g[x, y] = im[x, y] * 2 + im[x + 1, y]
    h = hl.Func("h")
    h[x, y] = im[x, y + 1] - 3
    out = hl.Func("out")
    out[x, y] = g[x, y] + h[x, y]
    # (Halide's Buffer does not keep the array alive: keep it here.)
    _image_pipeline.data = np.arange(24 * 14, dtype=np.int32).reshape(14, 24)
    im.set(hl.Buffer(_image_pipeline.data))
    return x, y, im, g, h, out


@differential()
@pytest.mark.parametrize("schedule", ["inline", "root", "at_g", "per_consumer", "shared", "staged_tile"])
def test_imageparam_wrappers(hl, schedule):
    from .input_helpers import arr
    x, y, im, g, h, out = _image_pipeline(hl)
    names = []
    if schedule == "inline":
        w = im.in_()
    elif schedule == "root":
        w = im.in_().compute_root()
        assert im.in_().name() == w.name()  # asked again: the same wrapper
    elif schedule == "at_g":
        g.compute_root()
        w = im.in_(g).compute_at(g, y)
    elif schedule == "per_consumer":
        g.compute_root()
        im.in_(g).compute_root()
        im.in_(h).compute_at(out, y)
        w = im.in_()
    elif schedule == "shared":
        w = im.in_([g, h]).compute_root()
    else:
        xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
        out.tile(x, y, xo, yo, xi, yi, 8, 4)
        w = im.in_()
        w.compute_at(out, xo)
    # Halide's wrapper is named after the image's internal Func (im_im$n).
    import re
    names.append(re.sub(r"\$\d+", "", w.name()).replace("im_im", "im"))
    return arr(out.realize([20, 12])), names


@differential()
def test_imageparam_wrapper_in_a_consumer_that_does_not_read_it(hl):
    from .input_helpers import error_key
    x, y, im, g, h, out = _image_pipeline(hl)
    im.in_(out)
    return error_key(hl, lambda: out.realize([4, 4]), "does not call")
