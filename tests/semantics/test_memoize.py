"""Func.memoize(): realizations are kept across runs and keyed on the
region and the parameters, not on the contents of input buffers (as in
Halide: changing a Buffer a memoized Func reads, without changing a
parameter it depends on, returns the cached values)."""
import numpy as np
import pytest

from .harness import differential


@differential()
def test_memoized_update_definition(hl):
    # Halide's memoize.py.
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 0.0
    f[x] += 1
    f.compute_root().memoize()
    out = hl.Func("out")
    out[x] = f[x]
    return out.realize([3])


@differential()
def test_cached_across_runs_until_a_parameter_changes(hl):
    x, y = hl.Var("x"), hl.Var("y")
    data = np.arange(24, dtype=np.int32).reshape(4, 6)
    buf = hl.Buffer(data)
    p = hl.Param(hl.Int(32), "p", 1)
    f = hl.Func("f")
    f[x, y] = buf[x, y] * p
    f.compute_root().memoize()
    g = hl.Func("g")
    g[x, y] = f[x, y] + 1
    first = np.array(g.realize([6, 4]))
    data[:] = 100                       # the key does not see buffer contents
    cached = np.array(g.realize([6, 4]))
    p.set(2)                            # a new key: computed again, from the new data
    fresh = np.array(g.realize([6, 4]))
    return [first, cached, fresh]


@differential()
def test_a_tuple_valued_func_is_cached_whole(hl):
    """Every element of a memoized Tuple is kept and found again (fuzz
    seed 50085: this was not implemented)."""
    x, y = hl.Var("x"), hl.Var("y")
    data = np.arange(24, dtype=np.int32).reshape(4, 6)
    buf = hl.Buffer(data)
    p = hl.Param(hl.Int(32), "p", 1)
    f = hl.Func("f")
    f[x, y] = (buf[x, y] * p, hl.f32(buf[x, y]) * 0.5, hl.u8(buf[x, y] + p))
    f.compute_root().memoize()
    g = hl.Func("g")
    g[x, y] = hl.f32(f[x, y][0]) + f[x, y + 1][1] + hl.f32(f[x, y][2])
    first = np.array(g.realize([6, 3]))
    data[:] = 100                       # cached: every element as computed first
    cached = np.array(g.realize([6, 3]))
    p.set(2)                            # a new key: every element computed again
    fresh = np.array(g.realize([6, 3]))
    assert np.array_equal(first, cached) and not np.array_equal(first, fresh)
    return [first, cached, fresh]


@differential()
def test_each_region_is_its_own_entry(hl):
    x = hl.Var("x")
    data = np.arange(16, dtype=np.float32)
    buf = hl.Buffer(data)
    f = hl.Func("f")
    f[x] = buf[x] * 0.5
    f.compute_root().memoize()
    g = hl.Func("g")
    g[x] = f[x] + f[x + 1]
    a = np.array(g.realize([4]))
    data[:] = 7
    b = np.array(g.realize([4]))        # same region: cached
    c = np.array(g.realize([6]))        # a larger region: computed now
    return [a, b, c]


@differential(expect_error=True)
def test_an_output_cannot_be_memoized(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.compute_root().memoize()
    f.realize([4])


@differential(expect_error=True)
def test_store_and_compute_at_different_levels(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y
    g[x, y] = f[x, y] * 2
    f.store_root().compute_at(g, y).memoize()
    g.realize([4, 4])


def test_memoize_in_a_loop_level_and_vectorized():
    import ferrohalide as hl

    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Param(hl.Float(32), "p", 1.5)
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = hl.f32(x) * p + hl.f32(y)
    g[x, y] = f[x, y] + f[x + 1, y]
    f.compute_at(g, y).memoize().vectorize(x, 8)
    g.parallel(y)
    want = np.array([[(2 * xx + 1) * 1.5 + 2 * yy for xx in range(20)] for yy in range(5)], dtype=np.float32)
    for _ in range(3):
        assert (np.array(g.realize([20, 5])) == want).all()


@differential()
def test_a_memoized_func_reading_an_image_param_is_an_error(hl):
    """The cache key cannot hold an image's contents, so a memoized Func
    reading an ImageParam would return the old results for a new image:
    Halide refuses it (ferrohalide returned stale values; fuzz seed 50298)."""
    from .input_helpers import error_key

    x = hl.Var("x")
    ip = hl.ImageParam(hl.Int(32), 1, "ip")
    data = np.arange(4, dtype=np.int32)
    ip.set(hl.Buffer(data))
    f = hl.Func("f")
    f[x] = ip[x] * 2
    g = hl.Func("g")
    g[x] = f[x] + 1
    f.compute_root().memoize()
    return error_key(hl, lambda: g.realize([4]), "Buffer parameter ip encountered in computed_cached",
                     "Use memoize_tag to provide cache key information for buffer.")


@differential()
def test_memoize_tag_keys_an_image_param_read(hl):
    """`memoize_tag(e, version)`: the user's tag stands for the image, so
    the read is allowed and the cache is keyed on the tag."""
    x = hl.Var("x")
    ip = hl.ImageParam(hl.Int(32), 1, "ip")
    version = hl.Param(hl.Int(32), "version", 0)
    f = hl.Func("f")
    f[x] = hl.memoize_tag(ip[x] * 2, version)
    g = hl.Func("g")
    g[x] = f[x] + 1
    f.compute_root().memoize()
    old, new = np.arange(4, dtype=np.int32), np.full(4, 50, dtype=np.int32)  # (alive while used)
    ip.set(hl.Buffer(old))
    first = np.array(g.realize([4]))
    ip.set(hl.Buffer(new))
    stale = np.array(g.realize([4]))    # the same tag: the cached values
    version.set(1)
    fresh = np.array(g.realize([4]))
    assert np.array_equal(first, stale) and fresh.tolist() == [101] * 4
    return [first, stale, fresh]


@differential()
def test_a_memoized_output_is_an_error_whatever_its_schedule(hl):
    """Halide checks every output before lowering; an output left at its
    default schedule (or with updates) was memoized silently before, then
    failed inside code generation."""
    from .input_helpers import error_key

    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 2
    f.memoize()
    g = hl.Func("g")
    g[x] = x
    g[x] += 1
    g.memoize()
    phrases = ("Can't compile Pipeline with memoized output Func: ",
               "Memoization is valid only on intermediate Funcs")
    return [error_key(hl, lambda: f.realize([4]), *phrases), error_key(hl, lambda: g.realize([4]), *phrases)]
