"""The GPU directives and hexagon() on a machine without those devices:
accepted where Halide accepts them, shown in the loop nest as Halide shows
them, and refused when compiled with Halide's message."""
import re

import pytest

from .harness import differential


def loop_nest_text(hl, capfd, schedule):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    g = hl.Func("g")
    g[x, y] = f[x, y] * 2
    g[x, y] += 1
    schedule(hl, f, g, x, y)
    capfd.readouterr()
    g.print_loop_nest()
    out = capfd.readouterr()
    # Fresh Vars are numbered per process.
    text = re.sub(r"\$\d+", "", out.out + out.err)
    return re.sub(r"\bv\d+", "v#", text)


SCHEDULES = {
    "gpu_tile_2d": lambda hl, f, g, x, y: g.gpu_tile(x, y, hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi"), 8, 4),
    "gpu_tile_in_place": lambda hl, f, g, x, y: g.gpu_tile(x, hl.Var("tx"), 16, hl.TailStrategy.GuardWithIf),
    "blocks_threads": lambda hl, f, g, x, y: (g.gpu_blocks(y).gpu_threads(x), f.compute_at(g, y).gpu_threads(x)),
    "update_stage": lambda hl, f, g, x, y: (f.compute_root().gpu_blocks(y, hl.DeviceAPI.CUDA),
                                            g.update(0).gpu_tile(x, y, hl.Var("tx"), hl.Var("ty"), 2, 2)),
    "gpu_and_lanes": lambda hl, f, g, x, y: (g.gpu(y, x), f.compute_root().gpu_lanes(x)),
    "single_thread": lambda hl, f, g, x, y: g.gpu_single_thread(),
    "hexagon": lambda hl, f, g, x, y: (g.hexagon(y), f.compute_root().hexagon(y)),
    "hexagon_outermost": lambda hl, f, g, x, y: g.hexagon(),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_loop_nest_shows_device_loops(name, capfd):
    ref = loop_nest_text(pytest.importorskip("halide"), capfd, SCHEDULES[name])
    got = loop_nest_text(pytest.importorskip("ferrohalide"), capfd, SCHEDULES[name])
    assert "<" in got
    assert got == ref


@differential(expect_error=True)
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_realizing_device_loops_without_the_device_fails(hl, name):
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y
    g[x, y] = f[x, y] * 2
    g[x, y] += 1
    SCHEDULES[name](hl, f, g, x, y)
    g.realize([16, 16])


@differential(expect_error=True)
def test_device_loop_over_an_unknown_dimension(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.gpu_threads(hl.Var("nope"))


@differential(expect_error=True)
def test_gpu_threads_over_an_rvar_that_may_race(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    r = hl.RDom([(0, 10)])
    f[x] = 0
    f[r.x % 3] += r.x
    f.update(0).gpu_threads(r.x)


def test_device_loop_errors_name_the_device():
    import ferrohalide as hl

    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.gpu_blocks(x, hl.DeviceAPI.OpenCL)
    with pytest.raises(hl.HalideError, match="requires <OpenCL> but no compatible target feature"):
        f.realize([4])
    g = hl.Func("g")
    g[x] = x
    g.gpu_tile(x, hl.Var("t"), 8)
    with pytest.raises(hl.HalideError, match="no code generator for devices"):
        g.compile_to_module([], "g", hl.Target("x86-64-linux-cuda"))


# ---------------------------------------------------------------------------
# copy_to_host / copy_to_device
# ---------------------------------------------------------------------------
def _copy_pipeline(hl, value, schedule_source=True):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 3 + y
    h = hl.Func("h")
    h[x, y] = value(f, x, y)
    g = hl.Func("g")
    g[x, y] = h[x, y] + 1
    if schedule_source:
        f.compute_root()
    return f, h, g


@differential()
@pytest.mark.parametrize("how", ["root", "left_inline", "at_consumer"])
def test_copy_to_host_computes_the_copy(hl, how):
    from .input_helpers import arr
    f, h, g = _copy_pipeline(hl, lambda f, x, y: f[x, y])
    before = (h.is_extern(), h.extern_function_name())
    assert h.copy_to_host() is not None
    if how == "at_consumer":
        h.compute_at(g, g.args()[1])
    elif how == "root":
        h.compute_root()
    return before, (h.is_extern(), h.extern_function_name()), arr(g.realize([5, 4]))


@differential()
def test_copy_to_host_of_an_image(hl):
    import numpy as np
    from .input_helpers import arr
    im = hl.ImageParam(hl.Int(32), 2, "im")
    x, y = hl.Var("x"), hl.Var("y")
    h = hl.Func("h")
    h[x, y] = im[x, y]
    g = hl.Func("g")
    g[x, y] = h[x, y] * 2
    h.copy_to_host()
    im.set(hl.Buffer(np.arange(20, dtype=np.int32).reshape(4, 5)))
    return arr(g.realize([5, 4]))


@differential()
@pytest.mark.parametrize("value", ["not_a_call", "shifted", "swapped", "arithmetic"])
def test_copy_to_host_needs_a_plain_copy(hl, value):
    from .input_helpers import error_key
    values = {
        "not_a_call": lambda f, x, y: x + y,
        "shifted": lambda f, x, y: f[x + 1, y],
        "swapped": lambda f, x, y: f[y, x],
        "arithmetic": lambda f, x, y: f[x, y] + 1,
    }
    f, h, g = _copy_pipeline(hl, values[value])
    return error_key(hl, h.copy_to_host, "is scheduled as copy_to_host/device, but has value",
                     "Expected a single call to another Func")


@differential()
def test_copy_to_host_errors(hl):
    from .input_helpers import error_key
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    t = hl.Func("t")
    t[x] = hl.Tuple([f[x], f[x]])
    u = hl.Func("u")
    u[x] = f[x]
    u[x] += 1
    undefined = hl.Func("undefined")
    out = [error_key(hl, t.copy_to_host, "Tuple-valued"),
           error_key(hl, u.copy_to_host, "with update definition"),
           error_key(hl, undefined.copy_to_host, "with no definition")]
    # What it copies must be computed somewhere: an extern stage reads a buffer.
    f2, h, g = _copy_pipeline(hl, lambda f, x, y: f[x, y], schedule_source=False)
    h.copy_to_host()
    out.append(error_key(hl, lambda: g.realize([3, 3]), "cannot be scheduled to be computed inline",
                         "externally-computed function"))
    return out


@differential()
def test_copy_to_device_without_a_gpu_is_refused_when_compiled(hl):
    from .input_helpers import error_key
    f, h, g = _copy_pipeline(hl, lambda f, x, y: f[x, y])
    h.copy_to_device()
    return error_key(hl, lambda: g.realize([3, 3]), "may leave the output with a dirty <Default_GPU> device allocation",
                     "no compatible target feature")
