"""infer_input_bounds and constraints on output buffers (against Halide):
the regions the unbound ImageParams get, through constraints that depend
on other buffers' shapes (the bounds query repeats until nothing changes),
and realizations checked against output constraints."""
import numpy as np
import pytest

from .harness import differential


def _shape(b):
    return [(b.dim(d).min(), b.dim(d).extent()) for d in range(b.dimensions())]


@differential()
def test_stencil_input_region(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(16), 2, "im")
    f = hl.Func("f")
    f[x, y] = im[x - 1, y] + im[x + 2, 2 * y]
    f.vectorize(x, 8, hl.TailStrategy.GuardWithIf)
    f.infer_input_bounds([10, 4])
    return _shape(im.get())


@differential()
def test_into_a_shifted_output_buffer(hl):
    x = hl.Var("x")
    im = hl.ImageParam(hl.Float(32), 1, "im")
    f = hl.Func("f")
    f[x] = im[x // 2] * 2.0
    out = hl.Buffer(hl.Float(32), [9])
    out.set_min([5])
    f.infer_input_bounds(out)
    return _shape(im.get())


@differential()
def test_multipass_constraints(hl):
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    f = hl.Func("f")
    x, y = hl.Var("x"), hl.Var("y")
    f[x, y] = inp[x + 1, y + 1] + inp[x - 1, y - 1]
    f[x, y] += 3.0
    f.update().vectorize(x, 4)
    o = f.output_buffer()
    inp.dim(0).set_bounds(min=inp.dim(1).min() - 5, extent=inp.dim(1).extent() + o.dim(0).extent())
    o.dim(0).set_bounds(min=0, extent=hl.select(o.dim(0).extent() < 22, o.dim(0).extent() + 1, o.dim(0).extent()))
    q = hl.Buffer.make_bounds_query(type=hl.Float(32), sizes=[7, 8])
    q.set_min([2, 2])
    f.infer_input_bounds(q)
    return _shape(inp.get()), _shape(q)


@differential()
def test_bound_inputs_are_left_alone(hl):
    x = hl.Var("x")
    a = hl.ImageParam(hl.Int(32), 1, "a")
    b = hl.ImageParam(hl.Int(32), 1, "b")
    given = hl.Buffer(np.arange(20, dtype=np.int32))
    a.set(given)
    f = hl.Func("f")
    f[x] = a[x] + b[x + 3]
    f.infer_input_bounds([5])
    # (Halide leaves the buffers it makes uninitialized: only shapes compare.)
    return _shape(a.get()), _shape(b.get())


def test_constraints_that_cannot_hold():
    """The constraint makes the region smaller: Halide's error. (Halide's
    binding masks it: its `infer_input_bounds` catches every error of a
    list argument and raises "ValueError: Invalid arguments".)"""
    import ferrohalide as hl
    x = hl.Var("x")
    im = hl.ImageParam(hl.Int(32), 1, "im")
    f = hl.Func("f")
    f[x] = im[x]
    im.dim(0).set_extent(3)
    with pytest.raises(hl.HalideError, match="Applying the constraints on Input buffer im to the required region "
                                             "made it smaller in dimension 0. Required size: 0 to 9. Constrained size: 0 to 2."):
        f.infer_input_bounds([10])


@differential()
def test_output_constraint_checked_when_realizing(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 3
    f.output_buffer().dim(0).set_min(0)
    f.output_buffer().dim(0).set_extent(8)
    ok = np.asarray(f.realize([8]))
    out = hl.Buffer(hl.Int(32), [6])
    try:
        f.realize(out)
        err = None
    except hl.HalideError:
        # (Halide reports the access past the buffer, ferrohalide the constraint.)
        err = True
    return ok, err


def test_a_query_that_depends_on_the_queried_inputs_values_is_refused():
    """The region an input needs depends on that input's values, and the
    input is the bounds query: there is nothing to load (Halide 21 crashes
    here). ferrohalide reports it."""
    import ferrohalide as fh

    x = fh.Var("x")
    inp = fh.ImageParam(fh.Int(32), 1, "inp")
    f = fh.Func("f")
    f[x] = inp[x + inp[0]]
    with pytest.raises(fh.HalideError, match="Input buffer inp is a bounds query, but the region"):
        f.infer_input_bounds([6])
