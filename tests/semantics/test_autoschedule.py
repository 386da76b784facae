"""Autoscheduling: `Pipeline.apply_autoscheduler` with Halide's autoscheduler
names and parameters. Halide runs its own plugins (loaded from its wheel);
ferrohalide runs its built-in rules under the same names. Schedules differ;
the results may not (floats within a bound: Li2018 may rfactor a sum)."""
import glob
import os

import numpy as np
import pytest

from .harness import Tol, differential
from .input_helpers import is_reference

NAMES = ["Mullapudi2016", "Adams2019", "Li2018"]

# Halide's ImageParam.set(hl.Buffer(array)) keeps a pointer to the array's
# data but not the array: the arrays live here for the test session.
_KEEP: list = []


def bind(hl, param, array):
    _KEEP.append(array)
    param.set(hl.Buffer(array))


def use(hl, name, extra=None):
    """The AutoschedulerParams for `name`, its plugin loaded in Halide
    (ferrohalide's are built in: loading the same library name is a no-op)."""
    lib = "libautoschedule_%s.so" % name.lower()
    found = glob.glob(os.path.join(os.path.dirname(hl.__file__), "lib*", lib))
    hl.load_plugin(found[0] if found else lib)
    return hl.AutoschedulerParams(name, dict(extra or {}))


def host(hl):
    return hl.get_jit_target_from_environment()


def blur_pipeline(hl, w, h):
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(16), 2, "inp")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    bx, by, out = hl.Func("bx"), hl.Func("by"), hl.Func("out")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) // 3
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) // 3
    out[x, y] = by[x, y] * 2 + 1
    inp.set_estimates([(0, w), (0, h)])
    out.set_estimates([(0, w), (0, h)])
    a = (np.arange(w * h, dtype=np.uint32).reshape(h, w) * 2654435761 % 4099).astype(np.uint16)
    bind(hl, inp, a)
    return out


@differential()
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("size", [(67, 45), (5, 3)])
def test_stencil_chain(hl, name, size):
    out = blur_pipeline(hl, *size)
    p = hl.Pipeline(out)
    p.apply_autoscheduler(host(hl), use(hl, name, {"parallelism": "8"}))
    return p.realize(list(size))


@differential()
@pytest.mark.parametrize("name", NAMES)
def test_histogram_and_its_consumer(hl, name):
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    r = hl.RDom([(0, inp.width()), (0, inp.height())])
    hist, cdf, out = hl.Func("hist"), hl.Func("cdf"), hl.Func("out")
    hist[x] = 0
    hist[hl.i32(inp[r.x, r.y]) // 4] += 1
    k = hl.RDom([(1, 63)])
    cdf[x] = hist[x]
    cdf[k.x] = cdf[k.x - 1] + hist[k.x]
    out[x, y] = cdf[hl.i32(inp[x, y]) // 4] * 3
    inp.set_estimates([(0, 40), (0, 30)])
    out.set_estimates([(0, 40), (0, 30)])
    a = (np.arange(1200, dtype=np.uint32).reshape(30, 40) * 40503 % 256).astype(np.uint8)
    bind(hl, inp, a)
    p = hl.Pipeline(out)
    p.apply_autoscheduler(host(hl), use(hl, name))
    return p.realize([40, 30])


def color_planes_pipeline(hl):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    inp = hl.ImageParam(hl.Float(32), 3, "inp")
    clamped = hl.BoundaryConditions.mirror_image(inp)
    stats = hl.Func("stats")
    stats[x, y] = (clamped[x, y, 0] + clamped[x, y, 1], clamped[x, y, 2] - clamped[x + 1, y, 0])
    down = hl.Func("down")
    down[x, y, c] = (clamped[2 * x, y, c] + clamped[2 * x + 1, y, c]) * 0.5
    out = hl.Func("out")
    out[x, y, c] = down[x // 2, y, c] + stats[x, y][0] * hl.f32(c) - stats[x, y - 1][1]
    inp.set_estimates([(0, 64), (0, 48), (0, 3)])
    out.set_estimates([(0, 64), (0, 48), (0, 3)])
    a = (np.arange(64 * 48 * 3, dtype=np.float32).reshape(3, 48, 64) % 97) * 0.25
    bind(hl, inp, a)
    return hl.Pipeline(out)


@differential()
@pytest.mark.parametrize("name", NAMES)
def test_color_planes_and_a_tuple(hl, name):
    p = color_planes_pipeline(hl)
    p.apply_autoscheduler(host(hl), use(hl, name, {"parallelism": "4"}))
    try:
        return Tol(p.realize([64, 48, 3]), ulp=2)
    except Exception as e:
        # On some machines (seen on an AMD Zen 3 host, whatever the target
        # asked for) Halide 21's Adams2019 schedule for this pipeline reads
        # the mirrored input before its min ("Input buffer inp is accessed
        # at -7"), which mirror_image never does: the reference's values
        # are then its unscheduled pipeline's, which no schedule changes.
        if not (is_reference(hl) and name == "Adams2019" and "is accessed at" in str(e)):
            raise
        return Tol(color_planes_pipeline(hl).realize([64, 48, 3]), ulp=2)


@differential()
@pytest.mark.parametrize("name", NAMES)
def test_float_sum_reduction(hl, name):
    x = hl.Var("x")
    inp = hl.ImageParam(hl.Float(32), 1, "inp")
    r = hl.RDom([(0, 500)])
    total, out = hl.Func("total"), hl.Func("out")
    total[x] = 0.0
    total[x] += inp[r.x] * hl.f32(x + 1)
    out[x] = total[x] + 1.0
    inp.set_estimates([(0, 500)])
    out.set_estimates([(0, 8)])
    bind(hl, inp, (np.arange(500, dtype=np.float32) % 13) * 0.125)
    p = hl.Pipeline(out)
    p.apply_autoscheduler(host(hl), use(hl, name))
    return Tol(p.realize([8]), rel=1e-5)


@differential(expect_error=True)
def test_unknown_autoscheduler_name(hl):
    out = blur_pipeline(hl, 8, 8)
    hl.Pipeline(out).apply_autoscheduler(host(hl), hl.AutoschedulerParams("NoSuchScheduler", {}))


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter(name):
    """Halide 21 aborts the process here (its parameter parser raises from
    a destructor); ferrohalide raises Halide's message."""
    import ferrohalide as hl

    out = blur_pipeline(hl, 8, 8)
    with pytest.raises(hl.HalideError, match="Autoscheduler Params contain unknown keys:\n  no_such_key"):
        hl.Pipeline(out).apply_autoscheduler(host(hl), use(hl, name, {"no_such_key": "1"}))


@differential(expect_error=True)
@pytest.mark.parametrize("name", ["Mullapudi2016", "Li2018"])
def test_output_without_estimates(hl, name):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 2
    hl.Pipeline(f).apply_autoscheduler(host(hl), use(hl, name))


# ---------------------------------------------------------------------------
# ferrohalide's own behaviour
# ---------------------------------------------------------------------------


def test_rules_vectorize_parallelize_and_leave_the_users_schedule(tmp_path):
    import ferrohalide as hl

    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    a, b, out = hl.Func("a"), hl.Func("b"), hl.Func("out")
    a[x, y] = inp[x, y] * 2.0 + inp[x, y + 1]      # two calls: not trivial
    b[x, y] = a[x - 1, y] + a[x + 1, y]            # read at offsets: computed at root
    out[x, y] = b[x, y - 1] + b[x, y + 1]
    b.compute_root()                                # the user's choice stays
    inp.set_estimates([(0, 512), (0, 256)])
    out.set_estimates([(0, 512), (0, 256)])
    p = hl.Pipeline(out)
    res = p.apply_autoscheduler(hl.get_host_target(), hl.AutoschedulerParams("Li2018", {"parallelism": "16"}))
    src = res.schedule_source
    import re

    assert re.search(r"\ba(_\d+)?\.compute_root\(\)\.vectorize\(x, \d+\)\.parallel\(y", src), src
    assert not re.search(r"Func b(_\d+)? ", src), src
    assert res.autoscheduler_params.name == "Li2018"
    stmt = tmp_path / "p.stmt"
    p.compile_to_lowered_stmt(str(stmt), [inp])
    text = stmt.read_text()
    assert "ramp(" in text, text  # vectorized loads and stores
    assert re.search(r"parallel \(out(\$\d+)?\.s0\.y", text), text


def test_autoscheduler_warns_that_its_rules_stand_in(capsys):
    import ferrohalide as hl

    out = blur_pipeline(hl, 16, 16)
    hl.Pipeline(out).apply_autoscheduler(
        hl.get_host_target(), hl.AutoschedulerParams("Adams2019", {"parallelism": "4", "beam_size": "16"})
    )
    said = capsys.readouterr().out
    assert "no 'Adams2019' autoscheduler" in said and "do not use: beam_size" in said, said


@pytest.mark.parametrize("lib", ["libautoschedule_adams2019.so", "autoschedule_li2018", "libautoschedule_mullapudi2016"])
def test_load_plugin_of_a_builtin_name(lib):
    import ferrohalide as hl

    hl.load_plugin(lib)


@pytest.mark.parametrize("lib", ["libfoo.so", "/no/such/dir/libautoschedule_adams2019.so"])
def test_load_plugin_of_anything_else_is_an_error(lib):
    import ferrohalide as hl

    with pytest.raises(hl.HalideError, match="Failed to load"):
        hl.load_plugin(lib)


def test_an_output_read_by_another_output():
    """f1 is an output and f2 reads it: its buffer is sized for what f2 needs
    over f2's requested region, so nothing may be rounded up (fuzz seed 453
    with the rules applied: Halide fails the same schedule the same way)."""
    import ferrohalide as hl

    def build(auto):
        x, y = hl.Var("x"), hl.Var("y")
        f1, f2 = hl.Func("f1"), hl.Func("f2")
        f1[x, y] = x * 7 + y
        r = hl.RDom([(0, 3)])
        f1[x, y] += r.x
        f2[x, y] = f1[x + 3, y + 1]
        f2[x, y] += f1[x // 2, y] + r.x
        for f in (f2, f1):
            f.set_estimates([(0, 13), (0, 9)])
        p = hl.Pipeline([f2, f1])
        if auto:
            p.apply_autoscheduler(hl.Target("host"), hl.AutoschedulerParams("Li2018", {"parallelism": "4"}))
        return [np.array(b) for b in p.realize([13, 9])]

    want, got = build(False), build(True)
    assert all((a == b).all() for a, b in zip(want, got))
