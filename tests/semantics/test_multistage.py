"""Multi-stage pipelines under the scheduling strategies of Halide's tutorial
(lessons 5 and 8), tail strategies in producers and consumers, output domains
whose min is not 0, and seeded random pipelines of 3 to 6 stages with random
schedules. Integer results are compared bit-exactly; the float pipelines with
the bound stated at their test."""
import copy
import random

import numpy as np
import pytest

from .harness import REF_MODULE, SELFTEST, buffer, differential, outcome

TAILS = ["RoundUp", "GuardWithIf", "ShiftInwards", "Auto"]


def _tail(hl, name):
    return getattr(hl.TailStrategy, name)


# ---------------------------------------------------------------------------------
# Lesson 8: a producer and a consumer that reads a 2x2 neighbourhood of it.
# ---------------------------------------------------------------------------------
def _lesson8(hl, dtype="i32"):
    x, y = hl.Var("x"), hl.Var("y")
    producer, consumer = hl.Func("producer"), hl.Func("consumer")
    if dtype == "f32":
        producer[x, y] = hl.sqrt(hl.f32(x * y) + 1.0) * hl.f32(x - y)
        consumer[x, y] = (producer[x, y] + producer[x, y + 1] +
                          producer[x + 1, y] + producer[x + 1, y + 1]) * 0.25
    else:
        producer[x, y] = ((x * 37 + y * 101) ^ (x * y)) & 0xFFFF
        consumer[x, y] = (producer[x, y] + producer[x, y + 1] +
                          producer[x + 1, y] + producer[x + 1, y + 1]) / 4
    return producer, consumer, x, y


LESSON8 = [
    "inline", "root", "at_y", "at_x", "store_root_at_y", "store_root_at_x",
    "tiles", "parallel_tiles_vectorized", "store_at_yo_compute_at_yi",
    "root_vectorized_parallel", "at_x_reordered",
]


def _schedule_lesson8(hl, name, producer, consumer, x, y):
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    if name == "inline":
        pass
    elif name == "root":
        producer.compute_root()
    elif name == "at_y":
        producer.compute_at(consumer, y)
    elif name == "at_x":
        producer.compute_at(consumer, x)
    elif name == "store_root_at_y":
        producer.store_root().compute_at(consumer, y)
    elif name == "store_root_at_x":
        producer.store_root().compute_at(consumer, x)
    elif name == "tiles":
        consumer.tile(x, y, xo, yo, xi, yi, 4, 4)
        producer.compute_at(consumer, xo)
    elif name == "parallel_tiles_vectorized":
        consumer.tile(x, y, xo, yo, xi, yi, 8, 8)
        consumer.fuse(xo, yo, hl.Var("tile_index")).parallel(hl.Var("tile_index"))
        consumer.vectorize(xi, 4)
        producer.compute_at(consumer, hl.Var("tile_index"))
        producer.vectorize(x, 4)
    elif name == "store_at_yo_compute_at_yi":
        consumer.split(y, yo, yi, 4).parallel(yo)
        producer.store_at(consumer, yo).compute_at(consumer, yi).vectorize(x, 4)
        consumer.vectorize(x, 4)
    elif name == "root_vectorized_parallel":
        producer.compute_root().vectorize(x, 8).parallel(y)
        consumer.vectorize(x, 8).parallel(y)
    elif name == "at_x_reordered":
        consumer.reorder(y, x)
        producer.compute_at(consumer, y)


@differential()
@pytest.mark.parametrize("schedule", LESSON8)
def test_lesson8_schedules(hl, schedule):
    producer, consumer, x, y = _lesson8(hl)
    _schedule_lesson8(hl, schedule, producer, consumer, x, y)
    return {"%dx%d" % (w, h): consumer.realize([w, h]) for w, h in [(16, 16), (13, 7)]}


# Float: Halide's simplifier reorders float sums (it treats them as
# associative unless strict_float is on); ferrohalide keeps the source order.
# Four rounded terms summed in another order differ by at most a few ULP:
# the bound is 4 ULP.
@differential(ulp=4)
@pytest.mark.parametrize("schedule", ["inline", "root", "at_x", "tiles",
                                      "parallel_tiles_vectorized"])
def test_lesson8_float(hl, schedule):
    producer, consumer, x, y = _lesson8(hl, "f32")
    _schedule_lesson8(hl, schedule, producer, consumer, x, y)
    return consumer.realize([21, 11])


# ---------------------------------------------------------------------------------
# Lesson 5 style splits, each tail strategy, in the producer and the consumer,
# with extents that are not multiples of the factors.
# ---------------------------------------------------------------------------------
@differential()
@pytest.mark.parametrize("where", ["consumer", "producer_root", "producer_at_y",
                                   "producer_at_xo"])
@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("how", ["split", "vectorize", "tile"])
def test_tail_strategies(hl, where, tail, how):
    producer, consumer, x, y = _lesson8(hl)
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    t = _tail(hl, tail)
    target = consumer if where == "consumer" else producer
    if how == "split":
        target.split(x, xo, xi, 4, t)
    elif how == "vectorize":
        target.vectorize(x, 8, t)
    else:
        target.tile(x, y, xo, yo, xi, yi, 4, 3, t)
    if where == "producer_root":
        producer.compute_root()
    elif where == "producer_at_y":
        producer.compute_at(consumer, y)
    elif where == "producer_at_xo":
        consumer.split(x, xo, xi, 5, _tail(hl, "GuardWithIf"))
        producer.compute_at(consumer, xo)
    return {"%dx%d" % (w, h): consumer.realize([w, h]) for w, h in [(19, 11), (5, 3)]}


# ---------------------------------------------------------------------------------
# Output domains whose min is not 0.
# ---------------------------------------------------------------------------------
def _shifted_target(hl, mode, t, w, h, mins):
    """(buffer to realize into, buffer to return)."""
    if mode == "set_min":
        b = hl.Buffer(t, [w, h])
        b.set_min(list(mins))
        return b, b
    if mode == "translated":
        b = hl.Buffer(t, [w, h]).translated(list(mins))
        return b, b
    if mode == "translate":
        b = hl.Buffer(t, [w, h])
        b.translate(list(mins))
        return b, b
    # A crop of a larger buffer filled with a sentinel: only the crop may be written.
    big = hl.Buffer(t, [w + 9, h + 6])
    big.set_min([mins[0] - 4, mins[1] - 2])
    big.fill(77)
    if mode == "cropped":
        return big.cropped([(mins[0], w), (mins[1], h)]), big
    c = big.cropped(0, mins[0], w)  # crop one dimension, keep the other whole
    return c, big


SHIFT_MODES = ["set_min", "translated", "translate", "cropped", "cropped_dim0"]


@differential()
@pytest.mark.parametrize("mode", SHIFT_MODES)
@pytest.mark.parametrize("schedule", ["inline", "root", "at_y", "at_x", "tiles",
                                      "store_root_at_x", "parallel_tiles_vectorized"])
def test_shifted_output_multistage(hl, mode, schedule):
    producer, consumer, x, y = _lesson8(hl)
    _schedule_lesson8(hl, schedule, producer, consumer, x, y)
    out = {}
    for mins in [(3, -2), (-7, 5)]:
        into, ret = _shifted_target(hl, mode, hl.Int(32), 13, 9, mins)
        consumer.realize(into)
        out[str(mins)] = ret
        out[str(mins) + "_mins"] = [ret.dim(0).min(), ret.dim(1).min()]
    return out


@differential()
@pytest.mark.parametrize("mode", ["set_min", "cropped"])
@pytest.mark.parametrize("tail", TAILS)
@pytest.mark.parametrize("where", ["consumer", "producer_root", "producer_at_y"])
def test_shifted_output_tails(hl, mode, tail, where):
    """RoundUp on the output needs the buffer to be a multiple of the factor,
    and ShiftInwards needs it to be at least the factor: otherwise both raise
    (compared as outcomes)."""
    producer, consumer, x, y = _lesson8(hl)
    xo, xi = hl.Var("xo"), hl.Var("xi")
    target = consumer if where == "consumer" else producer
    target.split(x, xo, xi, 4, _tail(hl, tail))
    if where == "producer_root":
        producer.compute_root()
    elif where == "producer_at_y":
        producer.compute_at(consumer, y)
    out = {}
    for width in [12, 13, 3]:
        into, ret = _shifted_target(hl, mode, hl.Int(32), width, 5, (-5, 2))
        out[width] = outcome(hl, lambda: (consumer.realize(into), ret)[1])
    return out


def _more_schedules(hl, name, f, g, x, y):
    xo, xi, yo, yi, fz = [hl.Var(n) for n in ["xo", "xi", "yo", "yi", "fz"]]
    TS = hl.TailStrategy
    if name == "fuse_parallel":
        g.fuse(x, y, fz).parallel(fz)
    elif name == "fuse_producer_root":
        f.compute_root().fuse(x, y, fz).parallel(fz)
        g.fuse(x, y, fz)
    elif name == "producer_at_fused":
        g.fuse(x, y, fz)
        f.compute_at(g, fz)
    elif name == "vectorize_guard_wider_than_crop":
        g.vectorize(x, 8, TS.GuardWithIf)
        f.compute_at(g, y).vectorize(x, 8, TS.GuardWithIf)
    elif name == "unroll_guard":
        g.unroll(x, 3, TS.GuardWithIf)
    elif name == "producer_unroll_shift":
        f.compute_at(g, y).unroll(x, 3, TS.ShiftInwards)
    elif name == "bound_output":
        g.bound(x, -3, 7)
    elif name == "bound_producer":
        f.compute_root().bound(x, -10, 30)
    elif name == "split_y_reordered":
        g.split(y, yo, yi, 2, TS.ShiftInwards).reorder(yi, x, yo)
        f.compute_at(g, yo)
    elif name == "store_at_y_compute_at_x":
        f.store_at(g, y).compute_at(g, x)
    elif name == "producer_vectorize_roundup_at_x":
        f.compute_at(g, x).vectorize(x, 4, TS.RoundUp)
    elif name == "producer_split_y_shift_at_y":
        f.compute_at(g, y).split(y, yo, yi, 3, TS.ShiftInwards)


MORE_SCHEDULES = ["fuse_parallel", "fuse_producer_root", "producer_at_fused",
                  "vectorize_guard_wider_than_crop", "unroll_guard", "producer_unroll_shift",
                  "bound_output", "bound_producer", "split_y_reordered",
                  "store_at_y_compute_at_x", "producer_vectorize_roundup_at_x",
                  "producer_split_y_shift_at_y"]


@differential()
@pytest.mark.parametrize("schedule", MORE_SCHEDULES)
def test_shifted_output_more_schedules(hl, schedule):
    """A crop (width 7, or 3 for the wide vectors) of a sentinel-filled buffer
    whose mins are negative: the schedule writes exactly the crop."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x * 3 + y * 7
    g[x, y] = f[x - 1, y] + f[x + 1, y + 1] * 2
    _more_schedules(hl, schedule, f, g, x, y)
    w = 3 if schedule == "vectorize_guard_wider_than_crop" else 7
    into, big = _shifted_target(hl, "cropped", hl.Int(32), w, 5, (-3, 4))
    g.realize(into)
    return big


@differential()
@pytest.mark.parametrize("schedule", ["root", "at_y", "tiles"])
def test_shifted_input_and_output(hl, schedule):
    """An input Buffer whose mins are not 0, read with a clamp to its domain."""
    x, y = hl.Var("x"), hl.Var("y")
    data = ((np.arange(11 * 17).reshape(11, 17) * 7919) % 65521).astype(np.uint16)
    inp = buffer(hl, data)
    inp.set_min([-4, 6])
    clamped = hl.Func("clamped")
    clamped[x, y] = inp[hl.clamp(x, -4, 12), hl.clamp(y, 6, 16)]
    producer, consumer = hl.Func("producer"), hl.Func("consumer")
    producer[x, y] = hl.i32(clamped[x - 1, y]) + hl.i32(clamped[x + 1, y]) * 2
    consumer[x, y] = producer[x, y - 1] - producer[x, y + 1]
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    if schedule == "root":
        producer.compute_root()
        clamped.compute_root()
    elif schedule == "at_y":
        producer.compute_at(consumer, y).vectorize(x, 4)
    else:
        consumer.tile(x, y, xo, yo, xi, yi, 5, 4, _tail(hl, "GuardWithIf"))
        producer.compute_at(consumer, xo)
        clamped.compute_at(consumer, xo)
    out = hl.Buffer(hl.Int(32), [20, 14])
    out.set_min([-8, 3])
    consumer.realize(out)
    return out


@differential(expect_error=True)
@pytest.mark.parametrize("side", ["before", "after"])
def test_input_too_small_for_shifted_output(hl, side):
    """Reading an input Buffer outside its domain is an error, also when the
    output's domain is shifted."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = buffer(hl, np.zeros((6, 8), dtype=np.int32))
    f = hl.Func("f")
    f[x, y] = inp[x, y] + 1
    out = hl.Buffer(hl.Int(32), [4, 4])
    out.set_min([-1, 0] if side == "before" else [5, 0])
    f.realize(out)


# ---------------------------------------------------------------------------------
# Random pipelines: 3 to 6 stages mixing stencils and point-wise stages, with
# random schedules. A plan (plain data) is drawn once from a seeded generator
# and built identically with both modules.
# ---------------------------------------------------------------------------------
STAGE_KINDS = ["point", "stencil3x3", "tap5x", "tap5y", "transpose", "down2", "down_x",
               "up2", "point_select", "clamped_read", "mod_read", "select_read"]
STAGE_TYPES = ["i32", "u16", "i16", "u8"]


def _loops_after(sched):
    """Loop variable names of a stage after its own schedule, outermost first."""
    kind = sched["kind"]
    if kind in ("split_x", "vectorize", "unroll"):
        return ["y", "xo", "xi"] if kind == "split_x" else ["y", "x"]
    if kind == "tile":
        return ["yo", "xo", "yi", "xi"]
    if kind == "reorder":
        return ["x", "y"]
    if kind == "split_y_parallel":
        return ["yo", "yi", "x"]
    return ["y", "x"]


def _own_schedule(rng, is_output):
    kinds = ["none", "split_x", "split_y_parallel", "tile", "vectorize", "unroll",
             "reorder", "parallel", "tile_par_vec"]
    kind = rng.choice(kinds)
    tail = rng.choice(TAILS)
    s = {"kind": kind, "tail": tail, "fx": rng.choice([2, 3, 4, 8]),
         "fy": rng.choice([2, 3, 5])}
    if kind == "tile_par_vec":
        s["loops"] = ["yo", "xo", "yi"]  # (not inside the vectorized xi)
    else:
        s["loops"] = _loops_after(s)
    # Indices of parallel loops: storage may not be outside one that the
    # computation is inside (Halide rejects the race).
    s["parallel"] = [0] if kind in ("split_y_parallel", "tile_par_vec", "parallel") else []
    return s


def make_plan(seed):
    rng = random.Random(seed)
    n = rng.randint(3, 6)
    stages = []
    for i in range(n):
        st = {"type": rng.choice(STAGE_TYPES), "k": rng.randint(1, 7), "c": rng.randint(0, 50)}
        if i == 0:
            st["kind"] = rng.choice(["analytic", "analytic", "input"])
            st["inputs"] = []
            st["in_min"] = [rng.randint(-6, 6), rng.randint(-6, 6)]
        else:
            st["kind"] = rng.choice(STAGE_KINDS)
            st["inputs"] = [i - 1]
            if i >= 2 and rng.random() < 0.35:
                st["inputs"].append(rng.randint(0, i - 2))
        stages.append(st)
    consumers = {i: [j for j in range(n) if i in stages[j]["inputs"]] for i in range(n)}

    out = n - 1
    scheds = [None] * n
    scheds[out] = _own_schedule(rng, True)
    scheds[out]["level"] = ("output",)
    # Depth of a stage's computation in the output's loop nest: -1 at root,
    # k inside the output's k-th loop (outermost 0), len(loops) for the output
    # itself. A producer must be computed at a depth <= that of every place
    # it is used.
    n_out_loops = len(scheds[out]["loops"])
    depth = {out: n_out_loops}
    for i in range(n - 2, -1, -1):
        use_depth = min(depth[c] for c in consumers[i])
        s = _own_schedule(rng, False)
        options = ["inline", "root"]
        if use_depth >= 0:
            options += ["at_out", "at_out", "store_root_at_out"]
        only = consumers[i][0] if len(consumers[i]) == 1 else None
        if only is not None and only != out and scheds[only]["level"][0] != "inline":
            options += ["at_consumer", "at_consumer"]
        choice = rng.choice(options)
        if choice == "inline":
            s["level"] = ("inline",)
            depth[i] = use_depth
        elif choice == "root":
            s["level"] = ("root",)
            depth[i] = -1
        elif choice in ("at_out", "store_root_at_out"):
            k = rng.randint(0, min(use_depth, n_out_loops - 1))
            store = -1 if choice == "store_root_at_out" else rng.randint(-1, k)
            if any(store < p <= k for p in scheds[out]["parallel"]):
                store = k
            s["level"] = ("at_out", k, store)
            depth[i] = k
        else:
            cl = scheds[only]["loops"]
            k = rng.randint(0, len(cl) - 1)
            s["level"] = ("at_consumer", only, k)
            # Its own producers must be available where its consumer runs.
            depth[i] = depth[only]
        scheds[i] = s

    uses_roundup = any(s["level"][0] != "inline" and s["tail"] == "RoundUp"
                       for s in scheds[-1:])
    modes = ["sizes", "set_min", "cropped"]
    return {
        "seed": seed,
        "stages": stages,
        "scheds": scheds,
        "size": [rng.randint(9, 40), rng.randint(9, 30)],
        "out_min": [rng.randint(-9, 9), rng.randint(-9, 9)],
        "mode": "sizes" if uses_roundup else rng.choice(modes),
        "input_seed": rng.randint(0, 1 << 30),
    }


def _build_stage(hl, i, st, funcs, x, y, input_buf):
    A = lambda f, a, b: hl.i32(f[a, b])  # noqa: E731
    k, c = st["k"], st["c"]
    kind = st["kind"]
    if kind == "analytic":
        e = ((x * (k * 13 + 1) + y * 101 + c) ^ (x * y)) & 0xFFFF
    elif kind == "input":
        m0, m1 = st["in_min"]
        e = hl.i32(input_buf[hl.clamp(x, m0, m0 + 23), hl.clamp(y, m1, m1 + 17)])
    else:
        a = funcs[st["inputs"][0]]
        if kind == "point":
            e = A(a, x, y) * k + (x - y) + c
        elif kind == "point_select":
            v = A(a, x, y)
            e = hl.select(v > 1000 + c, v - 1000, hl.max(v, c) * 2) + hl.min(x, y)
        elif kind == "stencil3x3":
            e = 0
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    e = e + A(a, x + dx, y + dy) * (1 + (dx + 1) * (dy + 2) % 3)
        elif kind == "tap5x":
            e = A(a, x - 2, y) + A(a, x - 1, y) * 4 + A(a, x, y) * 6 + A(a, x + 1, y) * 4 + \
                A(a, x + 2, y)
        elif kind == "tap5y":
            e = A(a, x, y - 2) + A(a, x, y - 1) * 4 + A(a, x, y) * 6 + A(a, x, y + 1) * 4 + \
                A(a, x, y + 2)
        elif kind == "transpose":
            e = A(a, y, x) + x * k
        elif kind == "down2":
            e = A(a, 2 * x, 2 * y) + A(a, 2 * x + 1, 2 * y + 1)
        elif kind == "down_x":
            e = A(a, 2 * x + 1, y) - A(a, 2 * x - 1, y)
        elif kind == "up2":
            e = A(a, x // 2, y // 2) * 2 + A(a, (x + 1) // 2, y // 2)
        elif kind == "clamped_read":  # a region that does not follow the consumer's
            e = A(a, hl.clamp(x * 2 - 3, -2, 30), y) + A(a, x, hl.clamp(y, 4, 9))
        elif kind == "mod_read":
            e = A(a, x % 5, y) + A(a, x, (y + k) % 7)
        elif kind == "select_read":
            e = hl.select(x > y, A(a, x - 3, y), A(a, y, x + 2))
        else:
            raise AssertionError(kind)
        if len(st["inputs"]) > 1:
            e = e + A(funcs[st["inputs"][1]], x - 1, y + 1)
    t = st["type"]
    if t == "i32":
        return e & 0xFFFF
    return hl.cast({"u16": hl.UInt(16), "i16": hl.Int(16), "u8": hl.UInt(8)}[t], e)


def _apply_own(hl, f, s, v):
    t = _tail(hl, s["tail"])
    kind = s["kind"]
    if kind == "split_x":
        f.split(v["x"], v["xo"], v["xi"], s["fx"], t)
    elif kind == "split_y_parallel":
        f.split(v["y"], v["yo"], v["yi"], s["fy"], t).parallel(v["yo"])
    elif kind == "tile":
        f.tile(v["x"], v["y"], v["xo"], v["yo"], v["xi"], v["yi"], s["fx"], s["fy"], t)
    elif kind == "tile_par_vec":
        f.tile(v["x"], v["y"], v["xo"], v["yo"], v["xi"], v["yi"], 8, s["fy"], t)
        f.parallel(v["yo"]).vectorize(v["xi"])
    elif kind == "vectorize":
        f.vectorize(v["x"], 4 if s["fx"] < 4 else 8, t)
    elif kind == "unroll":
        f.unroll(v["x"], s["fx"], t)
    elif kind == "reorder":
        f.reorder(v["y"], v["x"])
    elif kind == "parallel":
        f.parallel(v["y"])


def build_plan(hl, plan):
    x, y = hl.Var("x"), hl.Var("y")
    v = {n: hl.Var(n) for n in ["x", "y", "xo", "yo", "xi", "yi"]}
    v["x"], v["y"] = x, y
    rs = np.random.RandomState(plan["input_seed"])
    data = rs.randint(0, 65536, size=(18, 24)).astype(np.uint16)
    input_buf = buffer(hl, data)
    input_buf.set_min(plan["stages"][0]["in_min"])
    funcs = []
    for i, st in enumerate(plan["stages"]):
        f = hl.Func("s%d" % i)
        f[x, y] = _build_stage(hl, i, st, funcs, x, y, input_buf)
        funcs.append(f)
    out = funcs[-1]
    for i, s in enumerate(plan["scheds"]):
        f = funcs[i]
        level = s["level"]
        if level[0] == "inline":
            continue
        _apply_own(hl, f, s, v)
        if level[0] == "root":
            f.compute_root()
        elif level[0] == "at_out":
            loops = plan["scheds"][-1]["loops"]
            f.compute_at(out, v[loops[level[1]]])
            if level[2] == -1:
                f.store_root()
            else:
                f.store_at(out, v[loops[level[2]]])
        elif level[0] == "at_consumer":
            c = level[1]
            f.compute_at(funcs[c], v[plan["scheds"][c]["loops"][level[2]]])
    return out


def run_plan(hl, plan):
    out = build_plan(hl, plan)
    t = out.type()
    w, h = plan["size"]
    if plan["mode"] == "sizes":
        return out.realize([w, h])
    into, ret = _shifted_target(hl, plan["mode"], t, w, h, plan["out_min"])
    out.realize(into)
    return ret


def unscheduled(plan):
    """The same algorithm with every stage compute_root and no loop directives."""
    p = copy.deepcopy(plan)
    for s in p["scheds"]:
        s["kind"] = "none"
        if s["level"][0] != "output":
            s["level"] = ("root",)
    return p


# Plans for which halide 21 itself computes wrong values: its result differs
# from the same algorithm with every stage compute_root, while ferrohalide's
# matches the latter. All of them store a producer outside its compute loop
# (Halide slides the window) together with split loops or clamped reads
# (about 1 plan in 20). They are compared with the unscheduled reference.
REFERENCE_WRONG = [8, 22]
RANDOM_SEEDS = [s for s in range(32) if s not in REFERENCE_WRONG]


@differential()
@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_pipeline(hl, seed):
    return run_plan(hl, make_plan(seed))


@pytest.mark.skipif(SELFTEST, reason="the reference disagrees with itself here")
@differential()
@pytest.mark.parametrize("seed", REFERENCE_WRONG)
def test_random_pipeline_where_the_reference_is_wrong(hl, seed):
    plan = make_plan(seed)
    reference = hl.__name__ == REF_MODULE
    return run_plan(hl, unscheduled(plan) if reference else plan)


def test_random_plans_are_deterministic_and_varied():
    plans = [make_plan(s) for s in RANDOM_SEEDS]
    assert plans == [make_plan(s) for s in RANDOM_SEEDS]
    levels = {s["level"][0] for p in plans for s in p["scheds"]}
    assert levels == {"output", "inline", "root", "at_out", "at_consumer"}
    kinds = {st["kind"] for p in plans for st in p["stages"]}
    assert set(STAGE_KINDS) <= kinds
    assert {len(p["stages"]) for p in plans} == {3, 4, 5, 6}
    assert {p["mode"] for p in plans} == {"sizes", "set_min", "cropped"}
    assert any(s["level"][0] == "at_out" and s["level"][2] < s["level"][1]
               for p in plans for s in p["scheds"])  # store outside compute
    tails = {s["tail"] for p in plans for s in p["scheds"] if s["kind"] != "none"}
    assert tails == set(TAILS)


@differential()
@pytest.mark.parametrize("mode", ["sizes", "set_min"])
def test_producer_inside_guarded_tail(hl, mode):
    """A producer computed inside the tail iterations of a GuardWithIf split,
    where its consumer does nothing: its region is empty there (found by the
    random pipelines: seed 258 allocated a negative size)."""
    x, y = hl.Var("x"), hl.Var("y")
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 100
    g[x, y] = f[y, x] * 3 + f[y, x + 1]
    g.split(y, yo, yi, 5, hl.TailStrategy.GuardWithIf).parallel(yo)
    f.compute_at(g, yi).split(x, xo, xi, 3, hl.TailStrategy.RoundUp)
    if mode == "sizes":
        return g.realize([7, 26])
    out = hl.Buffer(hl.Int(32), [7, 26])
    out.set_min([-2, 5])
    g.realize(out)
    return out


RACES = {
    # (store level, compute level, consumer's parallel loop): legal?
    "store_root_compute_at_parallel_y": False,
    "store_root_compute_at_x_inside_parallel_y": False,
    "store_root_compute_at_yi_inside_parallel_yo": False,
    "store_at_parallel_yo_compute_at_yi": True,
    "store_root_compute_at_vectorized_xo": True,
}


@differential()
@pytest.mark.parametrize("case", list(RACES))
def test_storage_outside_a_parallel_loop(hl, case):
    """Storage outside a parallel loop that the computation is inside is a
    race; Halide rejects the schedule with this message."""
    import re
    producer, consumer, x, y = _lesson8(hl)
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    if case == "store_root_compute_at_parallel_y":
        consumer.parallel(y)
        producer.store_root().compute_at(consumer, y)
    elif case == "store_root_compute_at_x_inside_parallel_y":
        consumer.parallel(y)
        producer.store_root().compute_at(consumer, x)
    elif case == "store_root_compute_at_yi_inside_parallel_yo":
        consumer.split(y, yo, yi, 4).parallel(yo)
        producer.store_root().compute_at(consumer, yi)
    elif case == "store_at_parallel_yo_compute_at_yi":
        consumer.split(y, yo, yi, 4).parallel(yo)
        producer.store_at(consumer, yo).compute_at(consumer, yi)
    else:
        consumer.split(x, xo, xi, 4).vectorize(xi)
        producer.store_root().compute_at(consumer, xo)
    r = outcome(hl, lambda: consumer.realize([12, 9]))
    if hasattr(r, "kind"):  # raised: the first sentence, without "$n" name suffixes
        return [r.kind, re.sub(r"\$\d+", "", r.message.split(". ")[0])]
    return r
