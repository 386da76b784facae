"""Bugs found by random differential pipelines (the fuzzer in tests/fuzz and the
programs in the shared repro corpus), each reduced to its cause.

Update splits: Halide allows RoundUp only on the outermost split of a dimension.
A dimension that stems from the inner var of an earlier split is guarded instead
(Auto), or rejected (explicit RoundUp): rounding up inside every outer iteration
would run the update twice on some points."""
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
