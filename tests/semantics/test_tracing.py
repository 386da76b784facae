"""Tracing (Func.trace_loads / trace_stores / trace_realizations / add_trace_tag,
ImageParam.trace_loads, the target's trace_* features): the default trace
function prints Halide's text format through the pipeline's print output,
which reaches sys.stdout (issue 14, item 1). Each test compares the captured
text with the reference's."""
import contextlib
import io
import re

import numpy as np

from .harness import differential


def _traced(action, sort=False):
    """The trace lines `action` prints. Func names lose the `$n` suffix a
    reused name gets (and pipeline names its `_n` spelling), so a test does
    not depend on what ran before it; `sort` for parallel loops, whose
    events interleave."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        action()
    text = re.sub(r"\$\d+", "", buf.getvalue())
    text = re.sub(r"(pipeline \w+?)_\d+\.0\(\)", r"\1.0()", text)
    lines = text.splitlines()
    return sorted(lines) if sort else lines


@differential()
def test_pure_func_stores(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("tr_pure")
    f[x, y] = x * y + 1
    f.trace_stores()
    return _traced(lambda: f.realize([4, 3]))


@differential()
def test_realizations_stores_loads_compute_root(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("tr_prod"), hl.Func("tr_cons")
    f[x, y] = x + 2 * y
    g[x, y] = f[x, y] + f[x + 1, y]
    f.compute_root()
    f.trace_stores().trace_loads().trace_realizations()
    g.trace_stores().trace_realizations()
    return _traced(lambda: g.realize([3, 2]))


@differential()
def test_compute_at_and_store_root(hl):
    out = []
    for k, store_root in enumerate((False, True)):
        x, y = hl.Var("x"), hl.Var("y")
        f, g = hl.Func("tr_at%d" % k), hl.Func("tr_atc%d" % k)
        f[x, y] = x - y
        g[x, y] = f[x, y] + f[x, y + 1]
        f.compute_at(g, y)
        if store_root:
            f.store_root()
        f.trace_stores().trace_realizations()
        g.trace_loads()
        out.append(_traced(lambda: g.realize([3, 3])))
    return out


@differential()
def test_vectorized_stores_and_loads_group_lanes(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("tr_vf"), hl.Func("tr_vg")
    f[x, y] = hl.f32(x + y)
    g[x, y] = f[x, y] + f[x + 1, y] * 2
    f.compute_root().vectorize(x, 4)
    g.vectorize(x, 8)
    f.trace_stores().trace_loads()
    g.trace_stores()
    # 10 is not a multiple of 8: the last vector is shifted inwards.
    return _traced(lambda: g.realize([10, 2]))


@differential()
def test_predicate_stores_tail_reports_only_the_points_stored(hl):
    # 6 is not a multiple of 4: the last tile's points 6 and 7 are not
    # stored, so they are not reported (as Halide's if_then_else around
    # the trace call).
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    f, g = hl.Func("tr_ps"), hl.Func("tr_psc")
    f[x] = x * 2
    g[x] = f[x] + 1
    f.compute_root().split(x, xo, xi, 4, hl.TailStrategy.PredicateStores)
    f.trace_stores()
    return _traced(lambda: g.realize([6]))


def test_vectorized_predicate_stores_tail_reports_only_the_points_stored():
    # Halide reports each vector once per lane stored, all lanes included
    # (here points 6 and 7, never written, twice); ferrohalide reports the
    # points stored one by one (the predicate is per lane when the loop is
    # vectorized, before loop partitioning separates the full vectors).
    import ferrohalide as hl

    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    f, g = hl.Func("tr_psv"), hl.Func("tr_psvc")
    f[x] = x * 2
    g[x] = f[x] + 1
    f.compute_root().split(x, xo, xi, 4, hl.TailStrategy.PredicateStores).vectorize(xi)
    f.trace_stores()
    lines = _traced(lambda: g.realize([6]))
    stores = [l for l in lines if l.startswith("Store")]
    assert stores == ["Store tr_psv.0(%d) = %d" % (i, 2 * i) for i in range(6)]


@differential()
def test_tuple_values_report_their_index(hl):
    x = hl.Var("x")
    f, g = hl.Func("tr_tup"), hl.Func("tr_tupc")
    f[x] = (x, hl.f32(x) / 4, hl.u8(x + 250))
    g[x] = f[x][0] + hl.i32(f[x][2])
    f.compute_root().trace_stores().trace_loads().trace_realizations()
    g.trace_stores()
    return _traced(lambda: g.realize([3]))


@differential()
def test_update_definitions(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 3)])
    f = hl.Func("tr_upd")
    f[x] = x
    f[r.x + 1] = f[r.x] * 3
    f[x] += 1
    f.trace_stores().trace_loads().trace_realizations()
    return _traced(lambda: f.realize([5]))


@differential()
def test_value_types(hl):
    x = hl.Var("x")
    f = hl.Func("tr_types")
    f[x] = (
        hl.i8(x) - 3,
        hl.i16(x) * -1000,
        hl.i32(x) * 70000,
        hl.i64(x) * (2**40),
        hl.u8(x) + 254,
        hl.u16(x) * 30000,
        hl.u32(x) * 3000000000,
        hl.cast(hl.UInt(64), 0) - hl.cast(hl.UInt(64), x + 1),
        hl.f32(x) / 3,
        hl.f64(x) / 7,
        x > 0,
    )
    f.trace_stores()
    return _traced(lambda: f.realize([3]))


@differential()
def test_half_floats(hl):
    x = hl.Var("x")
    f = hl.Func("tr_half")
    f[x] = hl.cast(hl.Float(16), x) / 3
    f.trace_stores()
    # Halide warns that half arithmetic is emulated; only the events count.
    return [l for l in _traced(lambda: f.realize([3])) if not l.startswith("Warning")]


@differential()
def test_parallel_loops(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("tr_par")
    f[x, y] = x * 10 + y
    f.parallel(y)
    f.trace_stores().trace_realizations()
    return _traced(lambda: f.realize([3, 4]), sort=True)


@differential()
def test_tags(hl):
    x = hl.Var("x")
    f, g, h = hl.Func("tr_tagf"), hl.Func("tr_tagg"), hl.Func("tr_tagh")
    f[x] = x
    g[x] = f[x] + 1
    h[x] = g[x] * 2
    f.compute_root().trace_realizations().add_trace_tag("first").add_trace_tag("second")
    # Tags are reported for Funcs whose loads or realizations are traced,
    # not for stores alone.
    g.compute_root().trace_stores().add_trace_tag("not reported")
    h.trace_loads().add_trace_tag("h tag")
    return _traced(lambda: h.realize([2]))


@differential()
def test_image_param_loads(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "tr_input")
    f = hl.Func("tr_from_input")
    f[x, y] = im[x, y] + im[x + 1, y]
    im.trace_loads()
    im.set(hl.Buffer(np.arange(12, dtype=np.uint8).reshape(3, 4)))
    return _traced(lambda: f.realize([2, 3]))


@differential()
def test_target_trace_features(hl):
    x = hl.Var("x")
    f, g = hl.Func("tr_tf"), hl.Func("tr_tg")
    f[x] = x * 2
    g[x] = f[x] + 1
    f.compute_root()
    t = hl.get_host_target().with_feature(hl.TargetFeature.TraceStores)
    return _traced(lambda: g.realize([3], t))


@differential()
def test_untraced_pipeline_prints_nothing(hl):
    x = hl.Var("x")
    f = hl.Func("tr_none")
    f[x] = x
    return _traced(lambda: f.realize([4]))


@differential()
def test_trace_methods_return_the_func(hl):
    x = hl.Var("x")
    f = hl.Func("tr_chain")
    f[x] = x
    same = [m() is f for m in (f.trace_stores, f.trace_loads, f.trace_realizations)]
    return same + [f.add_trace_tag("t") is f]
