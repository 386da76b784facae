"""Func.async_(): the producer runs on another thread, concurrently with
the consumer's work that does not need it; the values are those Halide
computes. Failures in the producer end the realization with the
producer's error instead of leaving the consumer waiting."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from .harness import differential


def async_(hl, f):
    """`f.async_()` for ferrohalide. The reference computes the same values
    synchronously: once, in a full test run, Halide 21's own async runtime
    hung in one of these pipelines (every thread parked in its runtime), so
    the tests do not depend on it."""
    if hl.__name__ != "halide":
        f.async_()
    return f


def pipeline(hl, schedule):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y * 3
    h = hl.Func("h")
    h[x, y] = x * y - 1
    g = hl.Func("g")
    g[x, y] = f[x, y] * 2 + f[x + 1, y] + h[x, y]
    schedule(hl, f, g, h, x, y)
    return g.realize([64, 48])


SCHEDULES = {
    "root": lambda hl, f, g, h, x, y: async_(hl, f.compute_root()),
    "per_row": lambda hl, f, g, h, x, y: async_(hl, f.compute_at(g, y)),
    "beside_another_producer": lambda hl, f, g, h, x, y: (async_(hl, f.compute_root()), h.compute_root()),
    "two_async_in_parallel_rows": lambda hl, f, g, h, x, y: (
        async_(hl, f.compute_root()), async_(hl, h.compute_root()), g.parallel(y)),
    "running_ahead_of_its_consumer": lambda hl, f, g, h, x, y: async_(hl, f.store_root().compute_at(g, y)),
    "async_inside_parallel_rows": lambda hl, f, g, h, x, y: (async_(hl, f.compute_at(g, y)), g.parallel(y)),
    "inline_is_a_no_op": lambda hl, f, g, h, x, y: async_(hl, f),
    "output_is_a_no_op": lambda hl, f, g, h, x, y: async_(hl, g),
}


@differential()
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_async_schedules(hl, name):
    return pipeline(hl, SCHEDULES[name])


@differential()
def test_async_chain_and_update(hl):
    x, y = hl.Var("x"), hl.Var("y")
    a = hl.Func("a")
    a[x, y] = hl.f32(x) * 0.5 + hl.f32(y)
    b = hl.Func("b")
    b[x, y] = a[x, y] + a[x + 1, y]
    r = hl.RDom([(0, 3)])
    b[x, y] += a[x + r.x, y]
    c = hl.Func("c")
    c[x, y] = b[x, y] * 2.0
    async_(hl, a.compute_root())
    async_(hl, b.compute_at(c, y))
    return c.realize([32, 16])


@differential(expect_error=True)
def test_failure_in_the_producer(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.require(y < 20, x + y, y)
    h = hl.Func("h")
    h[x, y] = x * y
    g = hl.Func("g")
    g[x, y] = f[x, y] + h[x, y]
    async_(hl, f.compute_root())
    h.compute_root()
    g.realize([8, 40])


def test_the_consumer_waits_only_where_it_reads(tmp_path):
    # The wait comes after h's production, which therefore runs while f
    # is produced on the other branch of the fork.
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    h = hl.Func("h")
    h[x, y] = x * y
    g = hl.Func("g")
    g[x, y] = f[x, y] + h[x, y]
    f.compute_root().async_()
    h.compute_root()
    text = lowered(g, tmp_path)
    assert f"parallel ({f.name()}.fork, 0, 2)" in text
    assert text.index(f"produce {h.name()}") < text.index("ferrohalide_semaphore_acquire")


def test_no_hang_when_the_producer_fails_repeatedly():
    # Run in a fresh process under a timeout: a consumer left waiting would
    # hang it.
    code = textwrap.dedent("""
        import ferrohalide as hl
        x, y = hl.Var("x"), hl.Var("y")
        for i in range(30):
            f = hl.Func("f"); f[x, y] = hl.require(y < 20, x + y, y)
            h = hl.Func("h"); h[x, y] = x * y
            g = hl.Func("g"); g[x, y] = f[x, y] + h[x, y]
            f.compute_root().async_(); h.compute_root(); g.parallel(y)
            try:
                g.realize([64, 40])
                raise SystemExit("no error")
            except hl.HalideError:
                pass
        print("ok")
    """)
    env = dict(os.environ, HL_NUM_THREADS="4")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0 and "ok" in p.stdout, p.stderr[-2000:]


RING_SCHEDULES = {
    "hoisted_to_root": lambda hl, f, g, x, y: f.compute_at(g, y).hoist_storage_root().ring_buffer(2),
    "async": lambda hl, f, g, x, y: async_(hl, f.compute_at(g, y).hoist_storage_root().ring_buffer(3)),
    "innermost": lambda hl, f, g, x, y: f.compute_at(g, x).hoist_storage_root().ring_buffer(4),
    "hoisted_outside_a_parallel_loop": lambda hl, f, g, x, y: (
        f.compute_at(g, y).store_at(g, y).hoist_storage(g, hl.Var.outermost()).ring_buffer(2), g.parallel(y)),
    "not_hoisted": lambda hl, f, g, x, y: f.compute_at(g, y).ring_buffer(2),
}


@differential()
@pytest.mark.parametrize("name", sorted(RING_SCHEDULES))
def test_ring_buffer(hl, name):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 3 + y * y
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x + 1, y] + f[x, y + 1]
    RING_SCHEDULES[name](hl, f, g, x, y)
    try:
        return g.realize([16, 12])
    except hl.HalideError as e:
        return "error: " + str(e).split("\n")[0].split("Func")[0]


def lowered(g, tmp_path):
    """g's lowered statement, as text."""
    path = tmp_path / "g.stmt"
    g.compile_to_lowered_stmt(str(path), [])
    return path.read_text()


@pytest.mark.parametrize("use_async", [False, True])
def test_ring_buffer_slots_are_in_the_storage(tmp_path, use_async):
    # Async, it forks at its hoisted storage, so that its producer runs up
    # to ring_buffer() iterations ahead of the consumer (as in Halide),
    # paced by a semaphore of that many slots.
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x, y + 1]
    f.compute_at(g, y).hoist_storage_root().ring_buffer(3)
    if use_async:
        f.async_()
    text = lowered(g, tmp_path)
    assert "* 3]" in text and "% 3)" in text, text
    if use_async:
        assert f"ferrohalide_semaphore_init({f.name()}.ring_buffer_semaphore, 3)" in text, text
        assert text.index(f"fork ({f.name()}.fork, 0, 2)") < text.index(f"for ({g.name()}.s0.y"), text


def stencil_in_rows(hl, schedule, rows=(-1, 0, 1), reverse=False, update=False, size=(1024, 64)):
    """g sums f over `rows` around y (or around H - 1 - y with `reverse`,
    so the rows f computes move backwards); f slides over g's rows."""
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    f = hl.Func("f")
    f[x, y] = (x * 7 + y * 13) % 101 * 2 + x - y
    if update:
        f[x, y] = f[x, y] * 3 - 5
    g = hl.Func("g")
    at = (size[1] - 1 - y) if reverse else y
    g[x, y] = sum(f[x, at + k] * (k + 2) for k in rows)
    schedule(hl, f, g, x, y, yo, yi)
    # Several runs: a consumer that reads before its producer wrote
    # gives different values from run to run.
    runs = [np.asarray(g.realize(list(size))).copy() for _ in range(16)]
    for r in runs[1:]:
        assert np.array_equal(r, runs[0])
    return runs[0]


ASYNC_SLIDING_SCHEDULES = {
    # The consumer's first iterations (the sliding window's warm-up) read
    # nothing: the simplifier used to drop their waits with them, so the
    # consumer ran ahead of its producer.
    "warm_up_in_parallel_strips": lambda hl, f, g, x, y, yo, yi: (
        g.split(y, yo, yi, 16).parallel(yo), async_(hl, f.store_at(g, yo).compute_at(g, yi))),
    "warm_up_vectorized": lambda hl, f, g, x, y, yo, yi: (
        g.split(y, yo, yi, 16).parallel(yo), async_(hl, f.store_at(g, yo).compute_at(g, yi).vectorize(x, 8))),
    "folded": lambda hl, f, g, x, y, yo, yi: async_(hl, f.store_root().compute_at(g, y).fold_storage(y, 4)),
    "folded_exactly": lambda hl, f, g, x, y, yo, yi: async_(hl, f.store_root().compute_at(g, y).fold_storage(y, 3)),
    "folded_in_parallel_strips": lambda hl, f, g, x, y, yo, yi: (
        g.split(y, yo, yi, 16).parallel(yo),
        async_(hl, f.store_at(g, yo).compute_at(g, yi).fold_storage(y, 4).vectorize(x, 8))),
}


@differential()
@pytest.mark.parametrize("name", sorted(ASYNC_SLIDING_SCHEDULES))
def test_async_producer_sliding_over_its_consumers_rows(hl, name):
    return stencil_in_rows(hl, ASYNC_SLIDING_SCHEDULES[name])


@differential()
def test_async_fold_with_an_update_and_a_wide_stencil(hl):
    def schedule(hl, f, g, x, y, yo, yi):
        async_(hl, f.store_root().compute_at(g, y).fold_storage(y, 8))
        f.update().vectorize(x, 4)
    return stencil_in_rows(hl, schedule, rows=range(-3, 4), update=True)


@differential()
def test_async_fold_backwards(hl):
    def schedule(hl, f, g, x, y, yo, yi):
        async_(hl, f.store_root().compute_at(g, y).fold_storage(y, 4, False))
    return stencil_in_rows(hl, schedule, reverse=True)


def run_fresh(code, **env):
    """Run `code` in a fresh process under a timeout (a hang fails the
    test rather than the run); its stdout."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, **env))
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


FOLDED_ASYNC = """
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f"); f[x, y] = x * 3 + y * y
    g = hl.Func("g"); g[x, y] = f[x, y - 1] + f[x, y] * 2 + f[x, y + 1]
    f.store_root().compute_at(g, y).fold_storage(y, FACTOR).async_()
    try:
        r = g.realize([8, 300])
        print(sum(r[3, j] for j in range(300)))
    except hl.HalideError as e:
        print(str(e).splitlines()[0])
"""


def test_an_async_fold_runs_with_one_thread():
    # The producer waits for its consumer, so the two need threads of
    # their own whatever the thread pool's size.
    expect = sum(3 * 3 * 4 + (j - 1) ** 2 + 2 * j * j + (j + 1) ** 2 for j in range(300))
    for threads in ("1", "2"):
        assert run_fresh(FOLDED_ASYNC.replace("FACTOR", "3"), HL_NUM_THREADS=threads).strip() == str(expect)


def test_an_async_fold_forks_onto_two_threads(tmp_path):
    # Its producer waits for its consumer: a fork loop, which the runtime
    # runs on two threads. Without the fold, the producer is paced one
    # iteration at a time (its storage is hoisted out of the loop: see
    # test_an_async_producer_does_not_run_ahead_over_overlapping_regions),
    # which is a wait for the consumer too. Computed per realization, a
    # parallel loop of two.
    import ferrohalide as hl
    for storage in ("fold", "root", "own"):
        x, y = hl.Var("x"), hl.Var("y")
        f = hl.Func("f")
        f[x, y] = x + y
        g = hl.Func("g")
        g[x, y] = f[x, y - 1] + f[x, y + 1]
        f.compute_at(g, y).async_()
        if storage != "own":
            f.store_root()
        if storage == "fold":
            f.fold_storage(y, 4)
        text = lowered(g, tmp_path)
        kind = "parallel" if storage == "own" else "fork"
        assert f"{kind} ({f.name()}.fork, 0, 2)" in text, text
        assert ("folding_semaphore" in text) == (storage == "fold")
        assert ("run_ahead_semaphore" in text) == (storage == "root")


def test_an_async_fold_too_small_is_an_error_not_a_hang():
    # Halide 21 hangs here: its producer waits for rows its consumer never
    # releases.
    out = run_fresh(FOLDED_ASYNC.replace("FACTOR", "2"))
    assert "The fold factor (2) of dimension y of f" in out and "too small" in out, out


def test_an_async_fold_not_proven_monotonic_is_not_implemented():
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    g = hl.Func("g")
    g[x, y] = f[x, (y * 7) % 5]
    f.store_root().compute_at(g, y).fold_storage(y, 8).async_()
    with pytest.raises(hl.HalideError, match="not implemented"):
        g.realize([4, 10])


def test_a_failing_consumer_stops_a_producer_waiting_for_its_rows():
    # The producer of a folded async Func waits for rows the consumer
    # releases; a consumer that fails never releases them.
    code = """
        import ferrohalide as hl
        x, y = hl.Var("x"), hl.Var("y")
        for i in range(20):
            f = hl.Func("f"); f[x, y] = x * 3 + y * y
            g = hl.Func("g"); g[x, y] = hl.require(y < 100, f[x, y - 1] + f[x, y] * 2 + f[x, y + 1], y)
            f.store_root().compute_at(g, y).fold_storage(y, 4).async_()
            try:
                g.realize([64, 300])
                raise SystemExit("no error")
            except hl.HalideError:
                pass
        print("ok")
    """
    for threads in ("1", "4"):
        assert run_fresh(code, HL_NUM_THREADS=threads).strip() == "ok"


ASYNC_RING_SCHEDULES = {
    "one_slot": lambda hl, f, g, x, y, yo, yi: async_(hl, f.compute_at(g, y).hoist_storage_root().ring_buffer(1)),
    "three_slots": lambda hl, f, g, x, y, yo, yi: async_(hl, f.compute_at(g, y).hoist_storage_root().ring_buffer(3)),
    "in_strips": lambda hl, f, g, x, y, yo, yi: (
        g.split(y, yo, yi, 16),
        async_(hl, f.compute_at(g, yi).hoist_storage(g, yo).ring_buffer(2).vectorize(x, 8))),
}


@differential()
@pytest.mark.parametrize("name", sorted(ASYNC_RING_SCHEDULES))
def test_async_ring_buffer(hl, name):
    return stencil_in_rows(hl, ASYNC_RING_SCHEDULES[name])


@differential()
def test_async_ring_buffer_whose_region_shrinks(hl):
    # f's region per x of g runs from x - 2 to max(x, 61): it shrinks as x
    # grows. The slots used to be laid out by each iteration's own region,
    # so the producer, an iteration ahead, wrote its slot over the end of
    # the one its consumer was reading (fuzz seed 51875: wrong values in
    # about half the runs).
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = (x * 7 + y * 13) % 101 * 2 + x - y
    g[x, y] = f[hl.max(x, 61), y] + f[x - 2, y] * 3
    async_(hl, f.compute_at(g, x).hoist_storage_root().ring_buffer(2))
    runs = [np.asarray(g.realize([64, 8])).copy() for _ in range(24)]
    for r in runs[1:]:
        assert np.array_equal(r, runs[0])
    return runs[0]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_ring_buffer_of_a_func_with_an_update(use_async):
    # Not differential: Halide 21 computes the update of a ring-buffered
    # Func in the wrong slot (rows 1 and 3 below come out [0, 4, 8] and
    # [80, 84, 88]).
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + 10 * y
    f[x, y] = f[x, y] * 2
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x, y + 1]
    f.compute_at(g, y).hoist_storage_root().ring_buffer(2)
    if use_async:
        f.async_()
    for _ in range(8):
        got = np.asarray(g.realize([3, 4]))
        assert got.tolist() == [[2 * (2 * xx + 20 * yy + 10) for xx in range(3)] for yy in range(4)]


@differential()
def test_an_async_ring_buffer_whose_only_read_folds_away(hl):
    """Seed 57040: f0's only read is in a select branch never taken, so its
    production is dropped; the ring buffer's pacing around it stayed and
    named a semaphore nobody declared ("symbol not found")."""
    x, y = hl.Var("x"), hl.Var("y")
    f0, f2 = hl.Func("f0"), hl.Func("f2")
    f0[x, y] = x + 10 * y
    f2[x, y] = hl.select(y >= y, x, f0[x, y])
    f0.compute_at(f2, y).hoist_storage_root().async_().ring_buffer(1)
    out = f2.realize([4, 3])
    assert np.array(out).tolist() == [[0, 1, 2, 3]] * 3
    return out


@differential()
@pytest.mark.parametrize("use_async", [False, True])
def test_a_ring_buffer_of_a_func_never_realized(hl, use_async):
    """Seed 84492: f2's read of f1 is `e / 0`, which is 0, so neither f1
    nor f0 (ring-buffered inside f1) is realized. There is nothing to
    ring: ferrohalide refused the schedule as if its storage levels
    matched; Halide runs it."""
    x, y = hl.Var("x"), hl.Var("y")
    f0, f1, f2 = hl.Func("f0"), hl.Func("f1"), hl.Func("f2")
    f0[x, y] = x + 10 * y
    f1[x, y] = f0[x, y] + 1
    f2[x, y] = f1[x, y] / 0
    f1.compute_root()
    f0.compute_at(f1, y).hoist_storage_root().ring_buffer(2)
    if use_async:
        async_(hl, f0)
    out = f2.realize([3, 2])
    assert np.array(out).tolist() == [[0, 0, 0], [0, 0, 0]]
    return out


@differential()
def test_nested_async_ring_buffers(hl):
    """Seed 57820: f0 is computed per x of f1, f1 per x of f2, both async
    ring buffers with storage hoisted to the root. f0's producer side kept
    f1's wait for a free ring slot around f0's production, on a copy of
    f1's semaphore nobody releases: the realization hung. (Halide 21 gets
    this pipeline's values wrong when both are async; the reference here
    runs it synchronously.)"""
    x, y = hl.Var("x"), hl.Var("y")
    f0, f1, f2 = hl.Func("f0"), hl.Func("f1"), hl.Func("f2")
    f0[x, y] = x + y
    f1[x, y] = f0[x - 1, y] + f0[x - 3, y]
    f2[x, y] = f1[x // 2, y + 1]
    sv0, sv1 = hl.Var("sv0"), hl.Var("sv1")
    f2.split(x, sv0, sv1, 3)
    f1.compute_at(f2, sv1)
    f0.compute_at(f1, x)
    for f in (f0, f1):
        if hl.__name__ != "halide":
            f.async_().hoist_storage_root().ring_buffer(1)
    out = f2.realize([7, 6])
    expected = [[2 * (i // 2) + 2 * j - 2 for i in range(7)] for j in range(6)]
    assert np.array(out).tolist() == expected
    return out


@differential()
def test_an_async_producer_nested_in_another_async_funcs_consumer(hl):
    """Seed 73232: f1 is stored at f3's y and computed at its x, inside the
    consume of f2, an async Func computed at y. f1's producer side kept the
    consumer's wait for f2 around f1's production, but on that side f2's
    producer was dropped, so nothing released it: the realization hung.
    f1 does not read f2, so its producer needs no wait. (Halide refuses
    this nesting; the reference runs it synchronously.)"""
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2, f3 = hl.Func("f1"), hl.Func("f2"), hl.Func("f3")
    f1[x, y] = x + y
    f2[x, y] = x * y
    f3[x, y] = x
    f3[x, y] = f3[x, y] + f1[x - 3, y - 1] * 100 + f2[x - 1, y + 1]
    f2.compute_at(f3, y)
    f1.compute_at(f3, x).store_at(f3, y)
    if hl.__name__ != "halide":
        f2.async_()
        f1.async_()
    out = f3.realize([6, 2])
    expected = [[i + (i + j - 4) * 100 + (i - 1) * (j + 1) for i in range(6)] for j in range(2)]
    assert np.array(out).tolist() == expected
    return out


@differential()
def test_an_async_producer_reading_the_other_async_func(hl):
    """The same schedule with f1 reading f2: f2's realization then holds
    f1's, and f1's producer waits for f2's production on its own side."""
    x, y = hl.Var("x"), hl.Var("y")
    f1, f2, f3 = hl.Func("f1"), hl.Func("f2"), hl.Func("f3")
    f2[x, y] = x * y
    f1[x, y] = x + f2[x, y]
    f3[x, y] = x
    f3[x, y] = f3[x, y] + f1[x - 3, y - 1] * 100 + f2[x - 1, y + 1]
    f2.compute_at(f3, y).async_()
    f1.compute_at(f3, x).store_at(f3, y).async_()
    return f3.realize([6, 2])


def overlapping_regions(hl):
    """f, with an update setting rows 1-4 to 92, read by g at (2x, 2y - 1),
    and x, y; g's values, whatever f's schedule, are `OVERLAPPING_REGIONS`."""
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = 0
    r = hl.RDom([(1, 4)])
    f[x, r.x] = 92
    g[x, y] = f[2 * x, 2 * y - 1]
    f.update(0).unscheduled()
    return f, g, x, y


OVERLAPPING_REGIONS = [[0] * 5, [92] * 5, [92] * 5, [0] * 5]


def test_an_async_producer_does_not_run_ahead_over_overlapping_regions():
    """Seed 58561: f's storage is hoisted out of g's x loop and not folded,
    so its producer ran every iteration ahead of the consumer; iteration
    x + 1's shifted-in pure stage rewrote columns where iteration x's
    update left 92 before g read them. Each production now waits for the
    previous one's consumption. (Halide 21 computes the wrong values, so
    the expected ones are written out.)"""
    import ferrohalide as hl

    f, g, x, y = overlapping_regions(hl)
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    f.compute_at(g, x).store_root().tile(x, y, xo, yo, xi, yi, 1, 8).vectorize(xi, 4)
    f.async_()
    assert np.array(g.realize([5, 4])).tolist() == OVERLAPPING_REGIONS


@pytest.mark.parametrize("vector", [4, 8])
def test_an_async_ring_buffer_does_not_run_ahead_over_overlapping_regions(vector):
    """Fuzz seed 86606: as above, with f a ring buffer whose slot is a row
    of g. The ring's semaphore paced the rows only, so within a row the
    producer ran ahead and iteration x + 1's vector pure stage rewrote the
    column iteration x's update had set (wrong in nearly every run). A
    ring buffer's productions inside its slot are now paced too. (Halide
    21 computes wrong values, so the expected ones are written out.)"""
    import ferrohalide as hl

    for _ in range(10):
        f, g, x, y = overlapping_regions(hl)
        f.compute_at(g, x).store_at(g, y).hoist_storage_root().ring_buffer(2).vectorize(x, vector)
        f.async_()
        assert np.array(g.realize([5, 4])).tolist() == OVERLAPPING_REGIONS


@pytest.mark.parametrize("tail", ["ShiftInwards", "RoundUp", "GuardWithIf"])
@pytest.mark.parametrize("split, fold", [(2, 2), (2, 3), (2, 4), (3, 3), (3, 8), (4, 4)])
def test_a_folded_async_producer_with_an_update_does_not_overwrite_what_is_unread(split, fold, tail):
    """Fuzz seed 82591, probed: f0's pure stage, split ShiftInwards, writes
    [x, x + 1] for f1's x, and its update doubles x + 1. Paced by its
    folding semaphore only, the producer of x + 1 ran before the consumer
    of x read f0[x + 1] and reset it to x + 1 (wrong in most runs, e.g.
    [1, 4, 3, 8, 5, 12] for [2, 4, 6, 8, 10, 12]); a folded async Func
    with updates is now paced by its consumer's iterations too. (Halide 21
    computes wrong values when the fold has more slots than the split, so
    the expected ones are written out.)"""
    import ferrohalide as hl

    x, xo, xi = hl.Var("x"), hl.Var("xo"), hl.Var("xi")
    f0, f1 = hl.Func("f0"), hl.Func("f1")
    f0[x] = x
    f0[x] = f0[x] * 2
    f1[x] = f0[x + 1]
    f0.split(x, xo, xi, split, getattr(hl.TailStrategy, tail))
    f0.update(0).unscheduled()
    f0.compute_at(f1, x).store_root().async_().fold_storage(x, fold)
    for _ in range(20):
        assert np.array(f1.realize([8])).tolist() == [2 * (i + 1) for i in range(8)]


RING_WITH_A_DEAD_READ = """
import sys
import numpy as np
import ferrohalide as hl
where, slots, outermost = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "outermost"
x, y = hl.Var("x"), hl.Var("y")
f0, f1 = hl.Func("f0"), hl.Func("f1")
f0[x, y] = hl.u8(x + 10 * y)
r = hl.RDom([(1, 2)])
if where == "pure":
    f1[x, y] = hl.select(f0[x, 4] < 0, 0, x)  # a u8 is never < 0: the read folds away
    f1[r.x, y] = f1[r.x, y] + hl.i32(f0[r.x, y]) * 100
else:
    f1[x, y] = hl.i32(f0[x, 4])
    f1[r.x, y] = hl.select(f0[r.x, y] < 0, 0, f1[r.x, y])
f0.compute_at(f1, hl.Var.outermost() if outermost else y).async_().hoist_storage_root()
f0.ring_buffer(slots)
for _ in range(20):
    print(np.asarray(f1.realize([4, 3])).tolist())
"""


@pytest.mark.parametrize("where", ["pure", "update"])
@pytest.mark.parametrize("slots", [1, 2, 3])
@pytest.mark.parametrize("level", ["y", "outermost"])
def test_an_async_ring_buffer_one_stage_no_longer_reads(where, slots, level):
    """A neighbour of fuzz seed 76544: one stage of f1 reads f0 only in a
    branch that folds away, so that stage's production is skipped; its
    `consume f0` marker stayed and waited for the other stage's
    productions (a deadlock), and its slot release freed slots never
    taken. (Halide 21 refuses these schedules, "Duplicate produce node",
    so the values are written out; a subprocess, so a deadlock fails the
    test instead of hanging the run.)"""
    pytest.importorskip("ferrohalide")
    p = subprocess.run([sys.executable, "-c", RING_WITH_A_DEAD_READ, where, str(slots), level],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    if where == "pure":
        want = [[0, 100 * (1 + 10 * yy) + 1, 100 * (2 + 10 * yy) + 2, 3] for yy in range(3)]
    else:
        want = [[xx + 40 for xx in range(4)]] * 3
    assert p.stdout.splitlines() == [str(want)] * 20
