"""Explicit-bound checks inside vectorized loops. Halide 21 drops such a
check when its values vary across the lanes and returns unspecified
values; ferrohalide runs it per lane and reports the bound that is too
small."""
import pytest

import ferrohalide as hl


def test_bound_too_small_inside_a_vectorized_loop_is_reported():
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 10
    g[x, y] = f[x, y] + f[x + 1, y]
    g.split(x, xo, xi, 4).vectorize(xi)
    f.compute_at(g, xi).bound_extent(x, 1)
    with pytest.raises(hl.HalideError, match=r"Bounds given for f\S* in x \(from 0 to 0\) do not cover required region \(from 0 to 1\)"):
        g.realize([8, 5])


def test_large_enough_bound_inside_a_vectorized_loop_passes():
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 10
    g[x, y] = f[x, y] + f[x + 1, y]
    g.split(x, xo, xi, 4).vectorize(xi)
    f.compute_at(g, xi).bound_extent(x, 2)
    out = g.realize([8, 5])
    assert out[3, 2] == (3 + 20) + (4 + 20)
