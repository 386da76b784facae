"""Storage and bounds directives: bound / bound_extent (and Halide's run-time
check that a bound covers what consumers need), align_bounds, align_extent,
reorder_storage, store_in, hoist_storage, fold_storage. Results must not change; where a
directive changes what is computed, an input buffer that is too small makes
the difference visible as the same out-of-bounds error."""
import re

import numpy as np
import pytest

from .harness import buffer, differential, outcome


def halide_error(hl, fn):
    """fn()'s result, or the HalideError's message without `$n` name suffixes."""
    try:
        return fn()
    except hl.HalideError as e:
        return "raised: " + re.sub(r"\$\d+", "", str(e))


def _two_stage(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 3 + y * 10
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x + 1, y] - f[x, y + 2]
    return f, g, x, y


def _reads_input(hl, n=12):
    """f reads a 1-D input of n elements; g reads f at x and x + 1."""
    inp = buffer(hl, np.arange(n, dtype=np.int32) * 5 - 7, name="inp")
    x = hl.Var("x")
    f, g = hl.Func("f"), hl.Func("g")
    f[x] = inp[x] * 2
    g[x] = f[x] + f[x + 1]
    return f, g, x


# ---------------------------------------------------------------------------
# bound / bound_extent
# ---------------------------------------------------------------------------


@differential()
def test_bound_results(hl):
    out = {}
    for name in ["root_exact", "root_larger", "root_extent", "at_y_y", "at_y_x_extent", "output"]:
        f, g, x, y = _two_stage(hl)
        if name == "root_exact":
            f.compute_root().bound(x, 0, 9).bound(y, 0, 8)
        elif name == "root_larger":
            f.compute_root().bound(x, -3, 20)
        elif name == "root_extent":
            f.compute_root().bound_extent(x, 12)
        elif name == "at_y_y":
            f.compute_at(g, y).bound_extent(y, 3)
        elif name == "at_y_x_extent":
            f.compute_at(g, y).bound_extent(x, 10)
        elif name == "output":
            g.bound(x, 0, 8).bound(y, 0, 6)
        out[name] = g.realize([8, 6])
    return out


@differential()
def test_bound_too_small_is_a_runtime_error(hl):
    """Halide asserts, when the pipeline runs, that each bound covers what the
    consumers need at the Func's store level."""
    out = {}
    cases = {
        "root_x": lambda f, g, x, y: f.compute_root().bound(x, 0, 3),
        "root_min_too_big": lambda f, g, x, y: f.compute_root().bound(x, 1, 30),
        "root_extent": lambda f, g, x, y: f.compute_root().bound_extent(x, 4),
        "at_y": lambda f, g, x, y: f.compute_at(g, y).bound(y, 0, 2),
        "at_y_extent_x": lambda f, g, x, y: f.compute_at(g, y).bound_extent(x, 3),
        "store_root_compute_y": lambda f, g, x, y: f.store_root().compute_at(g, y).bound(y, 0, 4),
        "stored_at_y_computed_at_x": lambda f, g, x, y: f.store_at(g, y).compute_at(g, x).bound(x, 0, 2),
    }
    for name, schedule in cases.items():
        f, g, x, y = _two_stage(hl)
        schedule(f, g, x, y)
        out[name] = halide_error(hl, lambda: g.realize([5, 3]))
    return out


@differential()
def test_bound_on_an_inlined_func_is_ignored(hl):
    f, g, x, y = _two_stage(hl)
    f.bound(x, 0, 2)
    return g.realize([5, 3])


@differential()
def test_bound_widens_what_is_computed(hl):
    """A bound beyond the input makes the producer read outside it."""
    out = {}
    for extent in [13, 12]:
        f, g, x = _reads_input(hl)
        f.compute_root().bound(x, 0, extent)
        out[extent] = halide_error(hl, lambda: g.realize([9]))
    return out


@differential(expect_error=True)
@pytest.mark.parametrize("case", ["float_min", "float_extent", "int64_min", "uint32_extent",
                                  "not_pure_var", "extent_not_pure_var"])
def test_bound_argument_errors(hl, case):
    f, g, x, y = _two_stage(hl)
    {
        "float_min": lambda: f.bound(x, 0.5, 3),
        "float_extent": lambda: f.bound(x, 0, 3.5),
        "int64_min": lambda: f.bound(x, hl.i64(0), 3),
        "uint32_extent": lambda: f.bound(x, 0, hl.u32(3)),
        "not_pure_var": lambda: f.bound(hl.Var("z"), 0, 3),
        "extent_not_pure_var": lambda: f.bound_extent(hl.Var("z"), 3),
    }[case]()


@differential()
def test_bound_argument_messages(hl):
    f, g, x, y = _two_stage(hl)
    return {
        "float": halide_error(hl, lambda: f.bound(x, 0.5, 3)),
        "i64_extent": halide_error(hl, lambda: f.bound(x, 0, hl.i64(3))),
        "u16_ok": halide_error(hl, lambda: f.bound(x, hl.u16(0), hl.u8(3)) and "ok"),
        "not_pure": halide_error(hl, lambda: f.bound(hl.Var("z"), 0, 3)),
        "align_bounds_not_pure": halide_error(hl, lambda: f.align_bounds(hl.Var("z"), 4)),
        "align_extent_not_pure": halide_error(hl, lambda: f.align_extent(hl.Var("z"), 4)),
        "align_float": halide_error(hl, lambda: f.align_bounds(x, 4.0)),
        "align_remainder_float": halide_error(hl, lambda: f.align_bounds(x, 4, 1.5)),
        "align_extent_i64": halide_error(hl, lambda: f.align_extent(x, hl.i64(4))),
    }


# ---------------------------------------------------------------------------
# align_bounds / align_extent
# ---------------------------------------------------------------------------


@differential()
def test_align_results(hl):
    out = {}
    for name in ["bounds4", "bounds4_r1", "bounds3_r2", "bounds4_r6", "extent4", "extent5",
                 "at_y_bounds", "output_bounds", "output_extent"]:
        f, g, x, y = _two_stage(hl)
        {
            "bounds4": lambda: f.compute_root().align_bounds(x, 4),
            "bounds4_r1": lambda: f.compute_root().align_bounds(x, 4, 1),
            "bounds3_r2": lambda: f.compute_root().align_bounds(y, 3, 2),
            "bounds4_r6": lambda: f.compute_root().align_bounds(x, 4, 6),
            "extent4": lambda: f.compute_root().align_extent(x, 4),
            "extent5": lambda: f.compute_root().align_extent(y, 5),
            "at_y_bounds": lambda: f.compute_at(g, y).align_bounds(x, 8).align_bounds(y, 2),
            "output_bounds": lambda: g.align_bounds(x, 4),
            "output_extent": lambda: g.align_extent(x, 8),
        }[name]()
        out[name] = g.realize([9, 5])
    return out


@differential()
def test_align_widens_what_is_computed(hl):
    """The aligned region is what the producer computes: reading the input
    there shows it (as the same out-of-bounds error, or none)."""
    out = {}
    cases = {
        "bounds4": lambda f, x: f.align_bounds(x, 4),
        "bounds8": lambda f, x: f.align_bounds(x, 8),
        "bounds4_r1": lambda f, x: f.align_bounds(x, 4, 1),
        "bounds4_r3": lambda f, x: f.align_bounds(x, 4, 3),
        "bounds4_r5": lambda f, x: f.align_bounds(x, 4, 5),
        "extent4": lambda f, x: f.align_extent(x, 4),
        "extent8": lambda f, x: f.align_extent(x, 8),
        "bound_then_align": lambda f, x: f.bound_extent(x, 10).align_bounds(x, 4),
        "align_then_bound": lambda f, x: f.align_bounds(x, 8).bound(x, 0, 11),
    }
    for name, schedule in cases.items():
        f, g, x = _reads_input(hl)
        schedule(f.compute_root(), x)
        out[name] = halide_error(hl, lambda: g.realize([9]))
    f, g, x = _reads_input(hl)
    g.align_bounds(x, 4)
    out["output"] = halide_error(hl, lambda: g.realize([9]))
    return out


@differential()
def test_align_into_a_buffer_too_small(hl):
    """An aligned output writes beyond a buffer that only holds the request."""
    xv = hl.Var("x")
    g = hl.Func("g")
    g[xv] = xv * 3
    g.align_bounds(xv, 4)
    return {
        "realize": g.realize([9]),
        "into_buffer": halide_error(hl, lambda: g.realize(hl.Buffer(hl.Int(32), [9]))),
    }


# ---------------------------------------------------------------------------
# reorder_storage
# ---------------------------------------------------------------------------


def _three_d(hl):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("f")
    f[x, y, c] = hl.u16(x * 3 + y * 7 + c * 100)
    g = hl.Func("g")
    g[x, y, c] = f[x, y, c] + f[x + 1, y, 2 - c] * 2
    return f, g, x, y, c


@differential()
def test_reorder_storage_results(hl):
    out = {}
    orders = {"cxy": "c x y", "ycx": "y c x", "yx": "y x", "list": None}
    for placement in ["root", "at_y", "at_c"]:
        for name, order in orders.items():
            f, g, x, y, c = _three_d(hl)
            v = {"x": x, "y": y, "c": c}
            if order is None:
                f.reorder_storage([c, y, x])
            else:
                f.reorder_storage(*[v[n] for n in order.split()])
            if placement == "root":
                f.compute_root()
            else:
                f.compute_at(g, v[placement[-1]])
            out[placement + "/" + name] = g.realize([4, 3, 3])
    # On the output: results are unchanged and the realized buffer is dense.
    f, g, x, y, c = _three_d(hl)
    g.reorder_storage(c, x, y)
    b = g.realize([4, 3, 3])
    out["output"] = b
    out["output_strides"] = [b.dim(i).stride() for i in range(3)]
    # On an inlined Func: no effect.
    f, g, x, y, c = _three_d(hl)
    f.reorder_storage(c, x, y)
    out["inlined"] = g.realize([4, 3, 3])
    return out


@differential()
def test_reorder_storage_errors(hl):
    f, g, x, y, c = _three_d(hl)
    z = hl.Var("z")
    return {
        "one": halide_error(hl, lambda: f.reorder_storage(x) and "ok"),
        "one_list": halide_error(hl, lambda: f.reorder_storage([x]) and "ok"),
        "none": halide_error(hl, lambda: f.reorder_storage() and "ok"),
        "twice": halide_error(hl, lambda: f.reorder_storage(x, x) and "ok"),
        "missing_first": halide_error(hl, lambda: f.reorder_storage(z, x) and "ok"),
        # Halide stops at the first var it finds: a later unknown one is not noticed.
        "missing_second": halide_error(hl, lambda: f.reorder_storage(x, z) and "ok"),
        "undefined_func": halide_error(hl, lambda: hl.Func("u").reorder_storage(x, y) and "ok"),
    }


@differential(expect_error=True)
@pytest.mark.parametrize("args", ["strs", "list_of_strs", "var_and_int"])
def test_reorder_storage_takes_vars(hl, args):
    f, g, x, y, c = _three_d(hl)
    {
        "strs": lambda: f.reorder_storage("y", "x"),
        "list_of_strs": lambda: f.reorder_storage(["y", "x"]),
        "var_and_int": lambda: f.reorder_storage(y, 3),
    }[args]()


# ---------------------------------------------------------------------------
# store_in
# ---------------------------------------------------------------------------


@differential()
def test_memory_type_enum(hl):
    return {name: (int(m), str(m), repr(m)) for name, m in hl.MemoryType.__members__.items()}


@differential()
@pytest.mark.parametrize("memory_type", ["Auto", "Heap", "Stack", "Register", "GPUShared",
                                         "GPUTexture", "LockedCache", "VTCM"])
def test_store_in(hl, memory_type):
    """Every memory type at every placement: the same results, or (Register
    storage of a size only known at run time) the same error."""
    out = {}
    for placement in ["root", "at_y", "at_x", "tile_inner"]:
        f, g, x, y = _two_stage(hl)
        if placement == "root":
            f.compute_root()
        elif placement == "at_y":
            f.compute_at(g, y)
        elif placement == "at_x":
            f.compute_at(g, x)
        else:
            xo, yo, xi, yi = hl.vars("xo yo xi yi")
            g.tile(x, y, xo, yo, xi, yi, 4, 2)
            f.compute_at(g, xo)
        f.store_in(getattr(hl.MemoryType, memory_type))
        out[placement] = halide_error(hl, lambda: g.realize([9, 5]))
    return out


@differential(expect_error=True)
def test_store_in_takes_a_memory_type(hl):
    f, g, x, y = _two_stage(hl)
    f.store_in(2)


# ---------------------------------------------------------------------------
# hoist_storage
# ---------------------------------------------------------------------------


@differential()
def test_hoist_storage_results(hl):
    out = {}
    x0, y0 = hl.Var("x"), hl.Var("y")
    cases = {
        "at_x_hoist_y": lambda f, g, x, y, v: f.compute_at(g, x).hoist_storage(g, y),
        "at_x_hoist_root": lambda f, g, x, y, v: f.compute_at(g, x).hoist_storage_root(),
        "at_x_store_y_hoist_root": lambda f, g, x, y, v: f.compute_at(g, x).store_at(g, y).hoist_storage_root(),
        "at_y_hoist_outermost": lambda f, g, x, y, v: f.compute_at(g, y).hoist_storage(g, hl.Var.outermost()),
        "root_hoist_root": lambda f, g, x, y, v: f.compute_root().hoist_storage_root(),
        "hoist_same_as_store": lambda f, g, x, y, v: f.compute_at(g, x).store_at(g, y).hoist_storage(g, y),
        "tiled": lambda f, g, x, y, v: (g.tile(x, y, v[0], v[1], v[2], v[3], 4, 3, hl.TailStrategy.GuardWithIf),
                                         f.compute_at(g, v[0]).hoist_storage(g, v[1])),
        "output_ignored": lambda f, g, x, y, v: g.hoist_storage_root(),
    }
    for name, schedule in cases.items():
        f, g, x, y = _two_stage(hl)
        schedule(f, g, x, y, hl.vars("xo yo xi yi"))
        out[name] = g.realize([10, 7])
    # A region whose size depends on the loop it is hoisted out of: the
    # allocation is made for the largest one.
    f, g = hl.Func("f"), hl.Func("g")
    f[x0, y0] = x0 * 3 + y0
    g[x0, y0] = f[x0, y0] + f[x0 + y0, y0]
    f.compute_at(g, y0).hoist_storage_root()
    out["size_varies"] = g.realize([11, 7])
    return out


@differential()
def test_hoist_storage_of_a_tuple(hl):
    # One allocation per Tuple element at the hoist level.
    out = {}
    x, y = hl.Var("x"), hl.Var("y")
    for name in ["hoist_y", "hoist_root", "store_y_hoist_root"]:
        f, g = hl.Func("f"), hl.Func("g")
        f[x, y] = (x + y, hl.f32(x * y) * 0.5, hl.u8(x))
        g[x, y] = f[x, y][0] + f[x + 1, y + 1][1] + hl.f32(f[x, y][2])
        if name == "hoist_y":
            f.compute_at(g, x).hoist_storage(g, y)
        elif name == "hoist_root":
            f.compute_at(g, x).hoist_storage_root()
        else:
            f.compute_at(g, x).store_at(g, y).hoist_storage_root()
        out[name] = g.realize([6, 5])
    return out


# ---------------------------------------------------------------------------
# fold_storage of a Func with update definitions
# ---------------------------------------------------------------------------


@differential()
@pytest.mark.parametrize("update", ["scale", "rdom_x", "rdom_row", "tuple"])
@pytest.mark.parametrize("factor", [2, 3, 4])
def test_fold_storage_with_updates(hl, update, factor):
    # The fold covers every stage's accesses; a factor too small for the
    # rows one iteration touches is a run-time error (halide 21 reports it
    # as rows accessed out of order: it tracks this footprint at run time).
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, 3)])
    f, g = hl.Func("f"), hl.Func("g")
    if update == "tuple":
        f[x, y] = (x + y, x * y)
        f[x, y] = (f[x, y][0] * 2, f[x, y][1] + f[x, y][0])
        g[x, y] = f[x, y][0] + f[x, y + 1][1] + f[x, y + 2][0]
    else:
        f[x, y] = x + y * 3
        if update == "scale":
            f[x, y] = f[x, y] * 2
        elif update == "rdom_x":
            f[x, y] = f[x, y] + r.x * x
        else:
            f[r.x, y] = f[r.x, y] * 5 + y
        g[x, y] = f[x, y] + f[x, y + 1] * 2 + f[x, y + 2]
    f.compute_at(g, y).store_root().fold_storage(y, factor)
    return {"realize": outcome(hl, lambda: g.realize([6, 9]))}


# ---------------------------------------------------------------------------
# fold_storage checked at run time (the footprint's direction is unknown
# when lowering: Halide tracks the rows stored and checks each access)
# ---------------------------------------------------------------------------


def _param_walk(hl, how, p_value, updates=False):
    """g reads rows r and r + 1 of f, with r = y * p or y / p: the direction
    f's rows move in as y grows is only known when the pipeline runs."""
    x, y = hl.Var("x"), hl.Var("y")
    p = hl.Param(hl.Int(32), "p")
    p.set(p_value)
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 10
    if updates:
        f[x, y] += 3
        r = hl.RDom([(0, 3)])
        f[r.x, y] = f[r.x, y] * 2
    r = y * p if how == "mul" else y / p
    g[x, y] = f[x, r] + f[x, r + 1] * 3 + f[x + 1, r]
    return f, g, x, y


@differential()
@pytest.mark.parametrize("how", ["mul", "div"])
@pytest.mark.parametrize("p_value", [1, 2, -1, 0])
@pytest.mark.parametrize("factor", [1, 2, 4])
@pytest.mark.parametrize("forward", [True, False])
def test_fold_storage_checked_at_run_time(hl, how, p_value, factor, forward):
    # Rows moving the way the fold goes are fine; the other way (or a
    # factor below the two rows read) is an error when the pipeline runs.
    f, g, x, y = _param_walk(hl, how, p_value)
    f.store_root().compute_at(g, y).fold_storage(y, factor, forward)
    return {"realize": outcome(hl, lambda: g.realize([7, 9]))}


@differential()
@pytest.mark.parametrize("schedule", ["vectorized_consumer", "at_x", "vectorized_at_x", "tile",
                                      "parallel_outer", "unrolled", "fold_x_too", "updates"])
@pytest.mark.parametrize("p_value", [1, 2, -1])
@pytest.mark.parametrize("forward", [True, False])
def test_fold_storage_checked_at_run_time_schedules(hl, schedule, p_value, forward):
    # The checks sit at every produce and consume of f inside the folded
    # loop, wherever the schedule puts them.
    f, g, x, y = _param_walk(hl, "mul", p_value, updates=schedule == "updates")
    xo, xi, yo, yi = hl.vars("xo xi yo yi")
    at = f.store_root()
    if schedule == "vectorized_consumer":
        g.vectorize(x, 4)
        at.compute_at(g, y)
    elif schedule == "at_x":
        at.compute_at(g, x)
    elif schedule == "vectorized_at_x":
        g.vectorize(x, 4)
        at.compute_at(g, x)
    elif schedule == "tile":
        g.tile(x, y, xo, yo, xi, yi, 4, 2)
        at.compute_at(g, yi)
    elif schedule == "parallel_outer":
        g.split(y, yo, yi, 4).parallel(yo)
        f.store_at(g, yo).compute_at(g, yi)
    elif schedule == "unrolled":
        g.split(y, yo, yi, 2).unroll(yi)
        at.compute_at(g, yi)
    elif schedule == "fold_x_too":
        at.compute_at(g, x).fold_storage(x, 2)
    else:
        at.compute_at(g, y)
    f.fold_storage(y, 4, forward)
    return {"realize": outcome(hl, lambda: g.realize([8, 9]))}


@differential()
@pytest.mark.parametrize("case", ["wrong_direction", "factor_too_small"])
def test_fold_storage_checked_at_run_time_messages(hl, case):
    f, g, x, y = _param_walk(hl, "mul", 2)
    if case == "wrong_direction":
        f.store_root().compute_at(g, y).fold_storage(y, 4, False)
    else:
        f.store_root().compute_at(g, y).fold_storage(y, 1)
    return halide_error(hl, lambda: g.realize([7, 9]))


# ---------------------------------------------------------------------------
# A pipeline that uses all of them
# ---------------------------------------------------------------------------


@differential()
def test_directives_together(hl):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    a, b, out = hl.Func("a"), hl.Func("b"), hl.Func("out")
    a[x, y, c] = hl.i32(x * 2 + y * 5 + c)
    b[x, y, c] = a[x - 1, y, c] + a[x + 1, y, c] + a[x, y + 1, c]
    out[x, y, c] = b[x, y, c] * 3 - b[x, y - 1, c]
    xo, xi, yo, yi = hl.vars("xo xi yo yi")
    out.tile(x, y, xo, yo, xi, yi, 8, 4, hl.TailStrategy.GuardWithIf).reorder(xi, yi, c, xo, yo)
    b.compute_at(out, c).store_at(out, xo).hoist_storage(out, yo).align_bounds(x, 4).reorder_storage(c, x, y)
    a.compute_at(out, c).align_extent(x, 4).store_in(hl.MemoryType.Stack).bound_extent(c, 1)
    return out.realize([21, 13, 3])


@differential()
def test_store_in_stack_with_a_large_constant_size(hl):
    """Too big for the stack: Halide (and ferrohalide) use the heap instead."""
    f, g, x, y = _two_stage(hl)
    f.compute_root().bound(x, 0, 4096).bound(y, 0, 600).store_in(hl.MemoryType.Stack)
    return g.realize([64, 32])


@differential()
def test_align_and_bound_storage(hl):
    """align_storage pads a dimension's storage, bound_storage fixes its
    extent (checked when the pipeline runs); values never change."""
    out = {}
    f, g, x, y = _two_stage(hl)
    f.compute_root().align_storage(x, 16).bound_storage(y, 12)
    out["values"] = g.realize([10, 10])
    f, g, x, y = _two_stage(hl)
    f.compute_at(g, y).bound_storage(y, 3).align_storage(y, 8)
    out["at_y"] = g.realize([7, 5])
    f, g, x, y = _two_stage(hl)
    f.compute_root().bound_storage(y, 4)
    out["too_small"] = halide_error(hl, lambda: g.realize([5, 8]))
    f, g, x, y = _two_stage(hl)
    out["unknown_var"] = halide_error(hl, lambda: f.align_storage(hl.Var("z"), 4))
    out["unknown_var_bound"] = halide_error(hl, lambda: f.bound_storage(hl.Var("z"), 4))
    return out


def test_align_storage_pads_the_strides():
    import ferrohalide as hl

    f, g, x, y = _two_stage(hl)
    f.compute_root().align_storage(x, 16)
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.stmt")
        g.compile_to_lowered_stmt(path, [])
        text = open(path).read()
    # The row stride of f is its x extent rounded up to a multiple of 16.
    assert re.search(r"let f\S*\.stride\.1 = \(\(\(\S+ \+ 15\) / 16\) \* 16\)", text), text
