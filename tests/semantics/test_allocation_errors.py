"""Allocations the target cannot make are HalideErrors with Halide's
messages, never a crash: an intermediate larger than the maximum buffer size
(2^31 - 1 bytes without large_buffers) or whose byte count overflows 64 bits,
a constant-size one (caught when compiling), and a heap allocation that fails
(halide_malloc returns null)."""
import re

import pytest

from .harness import differential


def message_of(hl, fn):
    """The error's text, without the `$n` that Func names get when a test
    run used the name before."""
    with pytest.raises(hl.HalideError) as e:
        fn()
    return re.sub(r"\$\d+", "", str(e.value))


def two_roots(hl, reach):
    """f and g computed at root, h reading g at rows 0 and `reach`: f and g
    are allocated over reach + 1 rows of width 100000."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    g[x, y] = f[x, y] + 1
    h[x] = g[x, 0] + g[x, reach]
    f.compute_root()
    g.compute_root()
    return h


@differential()
def test_intermediate_beyond_the_maximum_size(hl):
    h = two_roots(hl, 100000)
    return message_of(hl, lambda: h.realize([100000]))


@differential()
def test_intermediate_whose_size_overflows(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    g[x, y] = f[x, y] + 1
    h[x] = g[x, 0] + g[x, 2**30] + g[2**30, x]
    f.compute_root()
    g.compute_root()
    return message_of(hl, lambda: h.realize([10]))


@differential()
def test_constant_intermediate_beyond_the_maximum_size(hl):
    x, y = hl.Var("x"), hl.Var("y")
    g, h = hl.Func("g"), hl.Func("h")
    g[x, y] = hl.u8(x * y)
    h[x] = g[x, 0] + g[2**20, 2**20]
    g.compute_root().bound(x, 0, 2**20 + 1).bound(y, 0, 2**20 + 1)
    return message_of(hl, lambda: h.realize([4]))


@differential()
def test_failed_heap_allocation_with_large_buffers(hl):
    # 2^48 bytes: allowed with large_buffers, but beyond any address space.
    x, y = hl.Var("x"), hl.Var("y")
    g, h = hl.Func("g"), hl.Func("h")
    n = hl.Param(hl.Int(32), "n", 2**24)
    g[x, y] = hl.u8(x * y)
    h[x] = g[x, 0] + g[n - 1, n - 1]
    g.compute_root()
    return message_of(hl, lambda: h.realize([4], hl.Target("host-large_buffers")))


@differential()
def test_a_failed_allocation_leaves_the_pipeline_usable(hl):
    x = hl.Var("x")
    n = hl.Param(hl.Int(32), "n")
    g, h = hl.Func("g"), hl.Func("h")
    g[x] = x * 2
    h[x] = g[x] + g[x + n]
    g.compute_root()
    n.set(2**30)
    first = message_of(hl, lambda: h.realize([16]))
    n.set(3)
    return first, h.realize([4])
