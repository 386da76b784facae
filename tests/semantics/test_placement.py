"""Placement: compute_at / store_at / hoist_storage at every loop of a
scheduled consumer, LoopLevel objects (including ones set after use), and
invalid placements, which must fail with Halide's message."""
import re

import numpy as np
import pytest

from .harness import buffer, differential


def halide_error(hl, fn):
    """Run fn. If it raises a HalideError, return its message without Halide's
    `$n` name suffixes and split-name counters (`x.v46`: both depend on how
    many Funcs and splits the process has made)
    and without the list of uses (which depends on realization order);
    otherwise return the result."""
    try:
        out = fn()
    except hl.HalideError as e:
        msg = re.sub(r"\.v\d+", ".vN", re.sub(r"\$\d+", "", str(e)))
        return "raised: " + msg.split(" is used in the following places")[0]
    return out


def _two_stage(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 3 + y * 7 - (x ^ y)
    g = hl.Func("g")
    g[x, y] = f[x - 1, y] + f[x + 1, y + 1] * 2
    return f, g, x, y


# Consumer schedules, and the loops (Vars) each one has.
CONSUMERS = {
    "split": (lambda hl, g, x, y, v: g.split(x, v["xo"], v["xi"], 4), ["xo", "xi", "y"]),
    "split_guard": (lambda hl, g, x, y, v: g.split(x, v["xo"], v["xi"], 4, hl.TailStrategy.GuardWithIf),
                    ["xo", "xi", "y"]),
    "split_roundup": (lambda hl, g, x, y, v: g.split(y, v["yo"], v["yi"], 2, hl.TailStrategy.RoundUp),
                      ["x", "yo", "yi"]),
    "tile": (lambda hl, g, x, y, v: g.tile(x, y, v["xo"], v["yo"], v["xi"], v["yi"], 4, 3),
             ["xo", "yo", "xi", "yi"]),
    "fuse": (lambda hl, g, x, y, v: g.fuse(x, y, v["t"]), ["t"]),
    "vectorize": (lambda hl, g, x, y, v: g.vectorize(x, 4), ["x", "y"]),
    "split_vectorize": (lambda hl, g, x, y, v: g.split(x, v["xo"], v["xi"], 4).vectorize(v["xi"]),
                        ["xo", "xi", "y"]),
    "parallel": (lambda hl, g, x, y, v: g.parallel(y), ["x", "y"]),
    "unroll": (lambda hl, g, x, y, v: g.split(x, v["xo"], v["xi"], 2).unroll(v["xi"]),
               ["xo", "xi", "y"]),
    "reorder": (lambda hl, g, x, y, v: g.reorder(y, x), ["x", "y"]),
}


@differential()
@pytest.mark.parametrize("consumer", list(CONSUMERS))
def test_compute_at_every_loop(hl, consumer):
    """compute_at each loop of the consumer (and Var.outermost()), with the
    storage at the same loop, at the root, and hoisted to the root. Storage
    outside a parallel or vectorized loop the Func is computed in is
    rejected, as in Halide."""
    schedule, loops = CONSUMERS[consumer]
    out = {}
    for loop in loops + ["__outermost"]:
        for storage in ["same", "store_root", "hoist_root"]:
            f, g, x, y = _two_stage(hl)
            v = {n: hl.Var(n) for n in ["xo", "xi", "yo", "yi", "t"]}
            schedule(hl, g, x, y, v)
            var = hl.Var.outermost() if loop == "__outermost" else v.get(loop) or {"x": x, "y": y}[loop]
            f.compute_at(g, var)
            if storage == "store_root":
                f.store_root()
            elif storage == "hoist_root":
                f.hoist_storage_root()
            out[loop + "/" + storage] = halide_error(hl, lambda: g.realize([11, 7]))
    return out


@differential()
def test_store_at_outer_compute_at_inner(hl):
    out = {}
    for store, compute in [("y", "x"), ("yo", "xi"), ("yo", "yi"), ("xo", "xi")]:
        f, g, x, y = _two_stage(hl)
        v = {"x": x, "y": y, **{n: hl.Var(n) for n in ["xo", "xi", "yo", "yi"]}}
        if store not in ("x", "y"):
            g.tile(x, y, v["xo"], v["yo"], v["xi"], v["yi"], 4, 2, hl.TailStrategy.GuardWithIf)
        f.compute_at(g, v[compute]).store_at(g, v[store])
        out[store + "/" + compute] = halide_error(hl, lambda: g.realize([10, 9]))
    return out


@differential()
def test_compute_at_a_consumer_of_a_consumer(hl):
    """A chain f -> g -> h: f inside g inside h, each at various loops."""
    x, y = hl.Var("x"), hl.Var("y")
    out = {}
    for g_loop, f_loop in [("x", "x"), ("y", "x"), ("y", "y"), ("y", "__outermost")]:
        f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
        f[x, y] = x + y * 10
        g[x, y] = f[x, y] - f[x + 2, y]
        h[x, y] = g[x, y - 1] * g[x, y + 1]
        vars_ = {"x": x, "y": y, "__outermost": hl.Var.outermost()}
        g.compute_at(h, vars_[g_loop])
        f.compute_at(g, vars_[f_loop])
        out[g_loop + "/" + f_loop] = h.realize([9, 6])
    return out


@differential()
def test_compute_at_where_the_consumer_reads_an_input(hl):
    """The producer is computed only where the consumer's loop runs, inside
    a GuardWithIf split's guard: reading the input never goes out of
    bounds."""
    # Exactly what g over [0, 18) needs: a producer computed for a
    # guarded-out iteration would read past its end.
    inp = buffer(hl, np.arange(19, dtype=np.int32) * 3, name="inp")
    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    out = {}
    for tail in ["GuardWithIf", "RoundUp", "ShiftInwards"]:
        for loop in ["xo", "xi"]:
            f, g = hl.Func("f"), hl.Func("g")
            f[x] = inp[x] * 2
            g[x] = f[x] + f[x + 1]
            g.split(x, xo, xi, 4, getattr(hl.TailStrategy, tail))
            f.compute_at(g, {"xo": xo, "xi": xi}[loop])
            out[tail + "/" + loop] = halide_error(hl, lambda: g.realize([18]))
    return out


@differential()
def test_compute_inline_and_root_override_earlier_placement(hl):
    out = {}
    f, g, x, y = _two_stage(hl)
    f.compute_at(g, x).compute_root()
    out["at_then_root"] = g.realize([6, 5])
    f, g, x, y = _two_stage(hl)
    f.compute_root().compute_inline()
    out["root_then_inline"] = g.realize([6, 5])
    f, g, x, y = _two_stage(hl)
    f.compute_at(g, y).store_root().compute_at(g, x)
    out["store_root_kept"] = g.realize([6, 5])
    # Output Funcs are computed at the root whatever their schedule says.
    f, g, x, y = _two_stage(hl)
    g.compute_at(f, x)
    f.compute_at(g, x)
    out["output_compute_at_ignored"] = g.realize([6, 5])
    return out


# ---------------------------------------------------------------------------
# LoopLevel objects
# ---------------------------------------------------------------------------


@differential()
def test_loop_level_objects(hl):
    f, g, x, y = _two_stage(hl)
    out = {"repr": repr(hl.LoopLevel(g, x)), "repr_root": repr(hl.LoopLevel.root()),
           "repr_undefined": repr(hl.LoopLevel())}
    a, b = hl.LoopLevel(g, x), hl.LoopLevel(g, x)
    out["equality_is_identity"] = (a == b, a == a, a != b)
    for name, l in [("at", hl.LoopLevel(g, x)), ("at_stage", hl.LoopLevel(g, x, 0)),
                    ("root", hl.LoopLevel.root()), ("inlined", hl.LoopLevel.inlined()),
                    ("undefined", hl.LoopLevel())]:
        # A LoopLevel the user holds is never locked: it can't be inspected.
        out["stage_index_" + name] = halide_error(hl, l.stage_index)
    return out


@differential()
def test_loop_level_placements(hl):
    out = {}
    for name in ["root", "inlined", "at_y", "at_x", "outermost"]:
        f, g, x, y = _two_stage(hl)
        level = {
            "root": lambda: hl.LoopLevel.root(),
            "inlined": lambda: hl.LoopLevel.inlined(),
            "at_y": lambda: hl.LoopLevel(g, y),
            "at_x": lambda: hl.LoopLevel(g, x),
            "outermost": lambda: hl.LoopLevel(g, hl.Var.outermost()),
        }[name]()
        f.compute_at(level)
        out["compute/" + name] = g.realize([7, 5])
        f, g, x, y = _two_stage(hl)
        f.compute_at(g, x).store_at(hl.LoopLevel(g, y))
        out["store_at_level"] = g.realize([7, 5])
        f, g, x, y = _two_stage(hl)
        f.compute_at(g, x).hoist_storage(hl.LoopLevel(g, y))
        out["hoist_at_level"] = g.realize([7, 5])
    return out


@differential()
def test_loop_level_set_later(hl):
    """A LoopLevel passed to compute_at / store_at / hoist_storage and set
    afterwards decides the placement when the pipeline is compiled."""
    out = {}
    f, g, x, y = _two_stage(hl)
    level = hl.LoopLevel()
    f.compute_at(level)
    level.set(hl.LoopLevel(g, y))
    out["compute"] = g.realize([7, 5])

    f, g, x, y = _two_stage(hl)
    level = hl.LoopLevel(g, x)
    f.compute_at(level)
    level.set(hl.LoopLevel(g, hl.Var("nowhere")))
    out["compute_set_to_invalid"] = halide_error(hl, lambda: g.realize([7, 5]))

    f, g, x, y = _two_stage(hl)
    level = hl.LoopLevel.root()
    f.compute_at(level).store_at(level)
    level.set(hl.LoopLevel(g, x))
    out["shared_by_compute_and_store"] = g.realize([7, 5])

    f, g, x, y = _two_stage(hl)
    level = hl.LoopLevel(g, x)
    f.compute_at(g, x).store_at(level)
    level.set(hl.LoopLevel.root())
    out["store"] = g.realize([7, 5])

    f, g, x, y = _two_stage(hl)
    level = hl.LoopLevel()
    f.compute_at(g, x).hoist_storage(level)
    level.set(hl.LoopLevel(g, y))
    out["hoist"] = g.realize([7, 5])

    # A later compute_root detaches the Func from the LoopLevel.
    f, g, x, y = _two_stage(hl)
    level = hl.LoopLevel(g, x)
    f.compute_at(level)
    f.compute_root()
    level.set(hl.LoopLevel(g, hl.Var("nowhere")))
    out["detached"] = g.realize([7, 5])

    # set copies the value: changing the source later has no effect.
    f, g, x, y = _two_stage(hl)
    source, level = hl.LoopLevel(g, y), hl.LoopLevel()
    f.compute_at(level)
    level.set(source)
    source.set(hl.LoopLevel(g, hl.Var("nowhere")))
    out["set_copies"] = g.realize([7, 5])
    return out


@differential()
def test_undefined_loop_levels(hl):
    out = {}
    for slot in ["compute", "store", "hoist"]:
        f, g, x, y = _two_stage(hl)
        if slot == "compute":
            f.compute_at(hl.LoopLevel())
        elif slot == "store":
            f.compute_at(g, x).store_at(hl.LoopLevel())
        else:
            f.compute_at(g, x).hoist_storage(hl.LoopLevel())
        out[slot] = halide_error(hl, lambda: g.realize([7, 5]))
    # An explicit stage index never matches the loops Halide lowers
    # (they carry no stage index): rejected.
    f, g, x, y = _two_stage(hl)
    f.compute_at(hl.LoopLevel(g, x, 0))
    out["explicit_stage"] = halide_error(hl, lambda: g.realize([7, 5]))
    return out


@differential(expect_error=True)
@pytest.mark.parametrize("args", ["str_var", "no_args", "three_args", "loop_level_and_var", "loop_level_str_var"])
def test_placement_argument_types(hl, args):
    f, g, x, y = _two_stage(hl)
    {
        "str_var": lambda: f.compute_at(g, "x"),
        "no_args": lambda: f.store_at(),
        "three_args": lambda: f.compute_at(g, x, x),
        "loop_level_and_var": lambda: f.hoist_storage(hl.LoopLevel.root(), x),
        "loop_level_str_var": lambda: hl.LoopLevel(g, "x"),
    }[args]()


# ---------------------------------------------------------------------------
# Invalid placements: rejected when the pipeline is compiled, with Halide's
# message (the Funcs, the schedule as written, and the legal locations).
# ---------------------------------------------------------------------------


def _three(hl):
    """f is used by g and by h; h also uses g."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x, y] = x + y
    g[x, y] = f[x, y] * 2
    h[x, y] = g[x, y] + f[x, y]
    return f, g, h, x, y


def _invalid(hl, case):
    f, g, h, x, y = _three(hl)
    if case == "consumer_does_not_use_it":
        k = hl.Func("k")
        k[x, y] = x
        f.compute_at(k, x)
    elif case == "unknown_var":
        f.compute_at(h, hl.Var("zz"))
    elif case == "split_away_var":
        h.split(x, hl.Var("xo"), hl.Var("xi"), 2)
        f.compute_at(h, x)
    elif case == "store_inside_compute":
        g.compute_root()
        f.compute_at(h, y).store_at(h, x)
    elif case == "not_all_uses":
        g.compute_root()
        f.compute_at(g, x)
    elif case == "inside_inlined_func":
        f.compute_at(g, x)
    elif case == "cycle":
        g.compute_at(f, x)
        f.compute_at(g, x)
    elif case == "store_root_inlined":
        f.store_root().compute_inline()
    elif case == "store_at_inlined":
        f.store_at(h, y)
    elif case == "hoist_root_inlined":
        f.hoist_storage_root()
    elif case == "hoist_at_inlined":
        f.hoist_storage(h, y)
    elif case == "hoist_inside_store":
        f.compute_at(h, x).store_root().hoist_storage(h, y)
    elif case == "hoist_inside_compute":
        f.compute_at(h, y).hoist_storage(h, x)
    elif case == "stored_outside_parallel":
        h.parallel(y)
        f.store_root().compute_at(h, x)
    elif case == "hoisted_outside_parallel":
        h.parallel(y)
        f.compute_at(h, x).hoist_storage_root()
    elif case == "stored_outside_vectorized":
        xo, xi = hl.Var("xo"), hl.Var("xi")
        h.split(x, xo, xi, 4).vectorize(xi)
        f.store_at(h, xo).compute_at(h, xi)
    elif case == "vectorize_inlined":
        f.vectorize(x, 4)
    elif case == "parallel_inlined":
        f.parallel(y)
    elif case == "unroll_inlined":
        f.unroll(x, 2)
    return halide_error(hl, lambda: h.realize([8, 4]))


INVALID = [
    "consumer_does_not_use_it", "unknown_var", "split_away_var", "store_inside_compute",
    "not_all_uses", "inside_inlined_func", "cycle", "store_root_inlined", "store_at_inlined",
    "hoist_root_inlined", "hoist_at_inlined", "hoist_inside_store", "hoist_inside_compute",
    "stored_outside_parallel", "hoisted_outside_parallel", "stored_outside_vectorized",
    "vectorize_inlined", "parallel_inlined", "unroll_inlined",
]


@differential()
@pytest.mark.parametrize("case", INVALID)
def test_invalid_placement(hl, case):
    out = _invalid(hl, case)
    assert isinstance(out, str) and out.startswith("raised: "), out
    return out


@differential()
def test_invalid_placement_is_only_rejected_at_realize(hl):
    """Scheduling never fails: the consumer's loops may still change."""
    f, g, x, y = _two_stage(hl)
    zz = hl.Var("zz")
    f.compute_at(g, zz)
    f.store_at(g, zz)
    f.hoist_storage(g, zz)
    g.split(x, zz, hl.Var("xi"), 2)
    return g.realize([6, 4])


@pytest.mark.parametrize("order", ["call_first", "call_last"])
def test_a_dead_use_in_an_inlined_calls_arguments_does_not_decide_placement(order):
    """Not differential: Halide 21 refuses `h.compute_at(f, x)` here in both
    operand orders (h is "used" by g, in the argument of c, which ignores
    it). ferrohalide inlines c before it places h, whatever the operand
    order, so the dead use never counts and both orders run. (It once
    refused in one order only.)"""
    hl = pytest.importorskip("ferrohalide")
    x = hl.Var("x")
    h, c, f, g = hl.Func("h"), hl.Func("c"), hl.Func("f"), hl.Func("g")
    h[x] = x + 1
    c[x] = 7
    f[x] = h[x] * 2
    g[x] = c[h[x]] + f[x] if order == "call_first" else f[x] + c[h[x]]
    f.compute_root()
    h.compute_at(f, x)
    assert np.array(g.realize([4])).tolist() == [9, 11, 13, 15]
