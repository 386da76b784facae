"""Stencils whose taps read one input at several small offsets along the
vectorized dimension (a blur's row). The backend may load only the outer
taps and build the inner ones from them by lane permutes; these compare
every shape of tap set against the reference: inner taps covered by the
outer two, a span of exactly one vector, a span wider than a vector (left
as loads), repeated taps, taps under a select, and vectors wider than one
register."""

import numpy as np
import pytest

from .harness import differential, htype, npdtype, buffer
from .input_helpers import arr

TAP_SETS = {
    "three": (-1, 0, 1),
    "five": (-2, -1, 0, 1, 2),
    "uneven": (0, 3, 5, 6),
    "one_vector_span": (0, 7, 16),
    "wider_than_vector": (0, 1, 40),
    "repeated": (1, 0, 1, -1, 0),
}


def _stencil(hl, t, taps, lanes, n=100):
    data = ((np.arange(n + 64) * 37 + 11) % 97).astype(npdtype(t))
    inp = buffer(hl, data)
    x = hl.Var("x")
    f = hl.Func("f")
    acc = None
    for k, c in enumerate(taps):
        term = inp[x + c + 20] * (k + 1)
        acc = term if acc is None else acc + term
    f[x] = acc
    f.vectorize(x, lanes)
    return arr(f.realize([n]))


@differential()
@pytest.mark.parametrize("t", ["u8", "i16", "u16", "i32", "f32", "f64"])
@pytest.mark.parametrize("taps", sorted(TAP_SETS))
def test_stencil_taps(hl, t, taps):
    return {str(lanes): _stencil(hl, t, TAP_SETS[taps], lanes) for lanes in (8, 16, 32)}


@differential()
@pytest.mark.parametrize("t", ["u16", "f32"])
def test_stencil_taps_wide_vectors(hl, t):
    """64 lanes: more than one 512-bit register per vector."""
    return _stencil(hl, t, (-1, 0, 1), 64, n=200)


@differential()
@pytest.mark.parametrize("t", ["u16", "i32"])
def test_stencil_taps_under_select(hl, t):
    """Taps in a select's arms and the condition, next to plain taps."""
    data = ((np.arange(200) * 13 + 5) % 89).astype(npdtype(t))
    inp = buffer(hl, data)
    x = hl.Var("x")
    f = hl.Func("f")
    a, b, c = inp[x + 9], inp[x + 10], inp[x + 11]
    f[x] = a + hl.select(b > 40, c, inp[x + 12]) + hl.select(x % 3 == 0, b, a)
    f.vectorize(x, 16)
    return arr(f.realize([150]))


@differential()
def test_stencil_taps_separable_blur(hl):
    """The separable u16 blur with a sliding window, both stages with
    shifted taps along x, over a shifted output window."""
    data = ((np.arange(70 * 90).reshape(70, 90) * 31 + 7) % 4001).astype(np.uint16)
    inp = buffer(hl, data)
    x, y, yi = hl.Var("x"), hl.Var("y"), hl.Var("yi")
    bx, by = hl.Func("bx"), hl.Func("by")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) // 3
    by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) // 3
    bx.store_at(by, y).compute_at(by, x).vectorize(x, 32)
    by.split(y, y, yi, 8).parallel(y).vectorize(x, 32)
    o = hl.Buffer(htype(hl, "u16"), [80, 60])
    o.set_min([3, 2])
    by.realize(o)
    return arr(o)


@differential()
@pytest.mark.parametrize("t", ["u8", "u16", "i32", "f32"])
@pytest.mark.parametrize("bc", ["repeat_edge", "mirror_image", "constant_exterior"])
@pytest.mark.parametrize("taps", ["three", "five", "uneven", "repeated"])
def test_stencil_taps_through_boundary_conditions(hl, t, bc, taps):
    """Taps read through a boundary condition: at the image's edges each
    tap's index is clamped (or mirrored, or selected) lane by lane; an
    output wider than the input on both sides, so every edge case runs."""
    data = ((np.arange(50) * 41 + 7) % 89).astype(npdtype(t))
    inp = buffer(hl, data)
    x = hl.Var("x")
    if bc == "constant_exterior":
        src = hl.BoundaryConditions.constant_exterior(inp, 3)
    else:
        src = getattr(hl.BoundaryConditions, bc)(inp)
    out = {}
    for lanes in (8, 16, 32):
        f = hl.Func("f")
        acc = None
        for k, c in enumerate(TAP_SETS[taps]):
            term = src[x + c] * (k + 1)
            acc = term if acc is None else acc + term
        f[x] = acc
        f.vectorize(x, lanes)
        o = hl.Buffer(htype(hl, t), [110])
        o.set_min([-30])
        f.realize(o)
        out[str(lanes)] = arr(o)
    return out
