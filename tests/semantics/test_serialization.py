"""Serialized pipelines (hl.serialize_pipeline / deserialize_pipeline /
deserialize_parameters): a pipeline read back computes what the original
computes, in both implementations, and the external parameters behave as
Halide's (only name, type and shape are stored; the caller supplies them).
The file formats differ (ferrohalide's own vs Halide's .hlpipe), so only
behaviour is compared; damaged files are ferrohalide-only tests."""
import os

import numpy as np
import pytest

import ferrohalide as fh

from .harness import differential


def round_trip(hl, outputs, user_params=None, via_file=None):
    p = hl.Pipeline(outputs)
    if via_file:
        hl.serialize_pipeline(p, via_file)
        return hl.deserialize_pipeline(via_file, user_params or {})
    return hl.deserialize_pipeline(hl.serialize_pipeline(p), user_params or {})


def realize_both(hl, outputs, sizes, **kw):
    """The original's and the round-tripped pipeline's results."""
    before = hl.Pipeline(outputs).realize(sizes)
    after = round_trip(hl, outputs, **kw).realize(sizes)
    return before, after


@differential()
def test_multi_stage_schedule_and_bound_buffer(hl):
    x, y, xo, yo, xi, yi = (hl.Var(n) for n in "x y xo yo xi yi".split())
    data = (np.arange(40 * 30, dtype=np.uint16).reshape(30, 40) * 37) % 1000
    src = hl.BoundaryConditions.repeat_edge(hl.Buffer(data, "src"))
    bx, by = hl.Func("bx"), hl.Func("by")
    bx[x, y] = src[x - 1, y] + src[x, y] + src[x + 1, y]
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) // 9
    by.tile(x, y, xo, yo, xi, yi, 16, 8).parallel(yo).vectorize(xi, 8)
    bx.compute_at(by, xo).vectorize(x, 8)
    return realize_both(hl, by, [40, 30])


@differential()
def test_updates_rdom_where_and_self_reference(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 50)], "r")
    r.where(r.x % 3 != 1)
    h = hl.Func("h")
    h[x] = x
    h[r.x % 10] += r.x * 2
    h[x] = h[x] * 3 + x
    return realize_both(hl, h, [10])


@differential()
def test_tuples_and_argmax(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x * 3 % 7, hl.f32(x) / 2)
    r = hl.RDom([(0, 20)])
    g = hl.Func("g")
    g[()] = hl.argmax(r, f[r.x][0])
    out = hl.Func("out")
    out[x] = f[x][1] + hl.f32(g[()][0])
    return realize_both(hl, out, [8])


@differential()
def test_rfactor_and_specialize(hl):
    x, u = hl.Var("x"), hl.Var("u")
    p = hl.Param(hl.Int(32), "p", 3)
    a = hl.Buffer(np.arange(4000, dtype=np.int32) % 97, "a")
    r = hl.RDom([(0, 4000)])
    s = hl.Func("s")
    s[()] = 0
    s[()] += a[r.x] * p
    rxo, rxi = hl.RVar("rxo"), hl.RVar("rxi")
    s.update(0).split(r.x, rxo, rxi, 100)
    s.update(0).rfactor(rxo, u).compute_root().update(0).parallel(u)
    f = hl.Func("f")
    f[x] = s[()] + x
    f.specialize(p > 2).vectorize(x, 4)
    p2 = hl.Param(hl.Int(32), "p", 5)
    return realize_both(hl, f, [8], user_params={"p": p2.parameter()})[1]


@differential()
def test_wrappers(hl):
    x = hl.Var("x")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x] = x * x
    g[x] = f[x] + f[x + 1]
    h[x] = f[x] * 2 + g[x]
    f.in_(g).compute_root()
    f.compute_root()
    return realize_both(hl, h, [10])


@differential()
def test_external_image_param_from_deserialized_parameters(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    k = hl.Param(hl.Float(32), "k", 0.5)
    f = hl.Func("f")
    f[x, y] = hl.u8_sat(hl.f32(im[x, y]) * k + hl.f32(im[x, 0]))
    data = hl.serialize_pipeline(hl.Pipeline(f))
    params = hl.deserialize_parameters(data)
    params["im"].set_buffer(hl.Buffer(np.arange(24, dtype=np.uint8).reshape(4, 6) * 9))
    params["k"].set_scalar(1.5)
    q = hl.deserialize_pipeline(data, params)
    kinds = sorted((n, str(p.type()), p.is_buffer(), p.dimensions()) for n, p in params.items())
    return q.realize([6, 4]), kinds


@differential(expect_error=True)
def test_external_param_without_a_value(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "mul", 5)
    f = hl.Func("f")
    f[x] = x * p
    # Only the name and type are stored: the new Parameter has no value.
    return hl.deserialize_pipeline(hl.serialize_pipeline(hl.Pipeline(f))).realize([3])


@differential()
def test_get_params_returns_the_originals(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(16), "off", 7)
    f = hl.Func("f")
    f[x] = hl.i16(x) + p
    data, params = hl.serialize_pipeline(hl.Pipeline(f), get_params=True)
    return sorted(params), params["off"].same_as(p.parameter()), hl.deserialize_pipeline(data, params).realize([4])


@differential()
def test_file_round_trip_multiple_outputs(hl, tmp_path):
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2 = hl.Func("f1"), hl.Func("f2")
    f1[x, y] = x + y * 10
    f2[x, y] = f1[x, y] - hl.select(x > y, 1, 0)
    path = tmp_path / "p.bin"
    out = round_trip(hl, [f1, f2], via_file=path).realize([5, 4])
    return [np.asarray(b) for b in out], os.path.getsize(path) > 0


# ---- ferrohalide only: what the file keeps, and damaged input ----

def test_schedule_survives_exactly(capsys):
    hl = fh
    x, y, xi, yi = hl.Var("x"), hl.Var("y"), hl.Var("xi"), hl.Var("yi")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * y
    g[x, y] = f[x, y] + f[x + 1, y]
    g.tile(x, y, hl.Var("xo"), hl.Var("yo"), xi, yi, 8, 4).vectorize(xi)
    f.compute_at(g, hl.Var("xo")).store_root().fold_storage(y, 4)
    g.bound(x, 0, 32).bound(y, 0, 16)
    q = hl.deserialize_pipeline(hl.serialize_pipeline(hl.Pipeline(g)))
    capsys.readouterr()
    g.print_loop_nest()
    q.outputs()[0].print_loop_nest()
    nests = capsys.readouterr().err
    half = len(nests) // 2
    assert "vectorized" in nests and nests[:half] == nests[half:]
    np.testing.assert_array_equal(np.asarray(q.realize([32, 16])), np.asarray(g.realize([32, 16])))


def test_shared_subexpressions_are_stored_once():
    hl = fh
    x = hl.Var("x")
    e = hl.Expr(x)
    for _ in range(60):  # a DAG of 60 levels, a tree of 2**60 nodes
        e = e * 3 + e
    f = hl.Func("f")
    f[x] = e
    data = hl.serialize_pipeline(hl.Pipeline(f))
    assert len(data) < 10_000
    q = hl.deserialize_pipeline(data)
    np.testing.assert_array_equal(np.asarray(q.realize([4])), np.asarray(f.realize([4])))


def test_requirements_and_memoize_survive():
    hl = fh
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 1)
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = x + p
    f.compute_root().memoize()
    g[x] = f[x] * 2
    pipe = hl.Pipeline(g)
    pipe.add_requirement(p > 0, "p must be positive, got", p)
    q = hl.deserialize_pipeline(hl.serialize_pipeline(pipe), {"p": p.parameter()})
    assert list(q.realize([3])) == [2, 4, 6]
    p.set(0)
    with pytest.raises(hl.HalideError, match="p must be positive"):
        q.realize([3])


def test_output_buffer_constraints_survive():
    hl = fh
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.output_buffer().dim(0).set_min(0).set_extent(8)
    q = hl.deserialize_pipeline(hl.serialize_pipeline(hl.Pipeline(f)))
    assert list(q.realize([8])) == list(range(8))
    with pytest.raises(hl.HalideError):
        q.realize([5])


def test_output_host_alignment_survives():
    import numpy as np
    hl = fh
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.u8(x)
    f.output_buffer().set_host_alignment(16)
    q = hl.deserialize_pipeline(hl.serialize_pipeline(hl.Pipeline(f)))
    assert q.outputs()[0].output_buffer().host_alignment() == 16
    raw = np.zeros(64, dtype=np.uint8)
    start = (-raw.ctypes.data) % 16 + 1
    with pytest.raises(hl.HalideError, match="not aligned to a 16 bytes boundary"):
        q.realize(hl.Buffer(raw[start:start + 8]))


def test_damaged_data_is_an_error_never_a_crash():
    hl = fh
    x = hl.Var("x")
    r = hl.RDom([(0, 5)])
    f = hl.Func("f")
    f[x] = hl.f32(x) * 2
    f[r.x] += 1.0
    data = hl.serialize_pipeline(hl.Pipeline(f))
    with pytest.raises(hl.HalideError, match="not a ferrohalide pipeline"):
        hl.deserialize_pipeline(b"\x14\x00\x00\x00HLDE")
    for cut in range(0, len(data), max(1, len(data) // 40)):
        with pytest.raises(hl.HalideError):
            hl.deserialize_pipeline(data[:cut])
    rng = np.random.default_rng(0)
    for _ in range(200):
        bad = bytearray(data)
        bad[rng.integers(len(data))] ^= 1 << int(rng.integers(8))
        with pytest.raises(hl.HalideError):
            hl.deserialize_pipeline(bytes(bad))
    with pytest.raises(hl.HalideError, match="can't read"):
        hl.deserialize_pipeline("/nonexistent/pipeline.bin")
    with pytest.raises(TypeError):
        hl.deserialize_pipeline(12)


def test_user_param_of_another_type_is_refused():
    hl = fh
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 1)
    f = hl.Func("f")
    f[x] = x + p
    data = hl.serialize_pipeline(hl.Pipeline(f))
    other = hl.Param(hl.Float(32), "p", 1.0)
    with pytest.raises(hl.HalideError, match="does not match"):
        hl.deserialize_pipeline(data, {"p": other.parameter()})
