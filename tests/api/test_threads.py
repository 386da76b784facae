"""Compiling and realizing from several Python threads at once: results match
single-threaded runs, nothing deadlocks (every wait has a timeout), and the
long entry points (compile and realize) release the GIL so other Python
threads keep running."""
import queue
import sys
import threading

import numpy as np
import pytest

import ferrohalide as hl

TIMEOUT = 120  # seconds; only reached if something hangs


def blur(seed):
    x, y = hl.Var("x"), hl.Var("y")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1000, (40, 48), dtype=np.int32)
    src = hl.BoundaryConditions.repeat_edge(hl.Buffer(a))
    bx, by = hl.Func("bx"), hl.Func("by")
    bx[x, y] = src[x - 1, y] + src[x, y] + src[x + 1, y]
    by[x, y] = bx[x, y - 1] + bx[x, y] + bx[x, y + 1] + seed
    xo, xi, yo, yi = hl.Var("xo"), hl.Var("xi"), hl.Var("yo"), hl.Var("yi")
    by.tile(x, y, xo, yo, xi, yi, 16, 8).parallel(yo).vectorize(xi, 8)
    bx.compute_at(by, xo).vectorize(x, 8)
    return np.asarray(by.realize([48, 40])).copy()


def histogram(seed):
    x = hl.Var("x")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 64, (30, 30), dtype=np.uint8)
    b = hl.Buffer(a)
    r = hl.RDom([(0, 30), (0, 30)])
    h = hl.Func("h")
    h[x] = 0
    h[hl.cast(hl.Int(32), b[r.x, r.y])] += 1
    return np.asarray(h.realize([64])).copy()


def nested_parallel(seed):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y, c] = x * 3 + y * 5 + c * 7 + seed
    g[x, y, c] = f[x, y, c] * 2 + f[x, y, (c + 1) % 4]
    f.compute_root().parallel(c).parallel(y)
    g.parallel(c).parallel(y).vectorize(x, 4)
    return np.asarray(g.realize([20, 16, 4])).copy()


def rfactor_sum(seed):
    x = hl.Var("x")
    rng = np.random.default_rng(seed)
    a = rng.integers(-100, 100, 4000, dtype=np.int32)
    b = hl.Buffer(a)
    r = hl.RDom([(0, 4000)])
    f = hl.Func("f")
    f[()] = 0
    f[()] += b[r.x]
    rxo, rxi, u = hl.RVar("rxo"), hl.RVar("rxi"), hl.Var("u")
    f.update(0).split(r.x, rxo, rxi, 100)
    f.update(0).rfactor(rxo, u).compute_root().update(0).parallel(u)
    return np.asarray(f.realize([])).copy()


def callable_tuple(seed):
    x = hl.Var("x")
    im = hl.ImageParam(hl.Float(32), 1, "im")
    p = hl.Param(hl.Float(32), "p")
    f = hl.Func("f")
    f[x] = (im[x] * p, im[x] + p)
    f[x] = (f[x][0] + f[x][1], f[x][1])
    c = f.compile_to_callable([im, p])
    a = np.arange(64, dtype=np.float32) + seed
    o0, o1 = hl.Buffer(hl.Float(32), [64]), hl.Buffer(hl.Float(32), [64])
    c(hl.Buffer(a), 1.5, o0, o1)
    return np.stack([np.asarray(o0), np.asarray(o1)])


RECIPES = [blur, histogram, nested_parallel, rfactor_sum, callable_tuple]


def run_all(tasks, workers=8):
    """Run `tasks` (callables) on `workers` daemon threads; return their
    results in order. A task still running after TIMEOUT fails the test
    instead of hanging it (a pool would join its stuck threads at exit)."""
    todo = queue.Queue()
    for i, t in enumerate(tasks):
        todo.put((i, t))
    done = queue.Queue()

    def worker():
        while True:
            try:
                i, t = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((i, True, t()))
            except BaseException as e:  # reported by the main thread
                done.put((i, False, e))

    for _ in range(workers):
        threading.Thread(target=worker, daemon=True).start()
    results = [None] * len(tasks)
    for _ in tasks:
        try:
            i, ok, value = done.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"a task did not finish within {TIMEOUT} s (deadlock?)")
        if not ok:
            raise value
        results[i] = value
    return results


def test_threads_compile_and_realize_different_and_identical_pipelines():
    jobs = [(RECIPES[i % len(RECIPES)], i % 3) for i in range(16)]
    expected = {(r.__name__, s): r(s) for r, s in set(jobs)}
    results = run_all([lambda r=r, s=s: r(s) for r, s in jobs])
    for (r, s), got in zip(jobs, results):
        np.testing.assert_array_equal(got, expected[(r.__name__, s)], err_msg=r.__name__)


def test_threads_realize_one_shared_func():
    x, y = hl.Var("x"), hl.Var("y")
    f, g = hl.Func("f"), hl.Func("g")
    f[x, y] = x + y * 100
    g[x, y] = f[x, y] * 2 + f[x + 1, y]
    f.compute_at(g, y)
    g.parallel(y).vectorize(x, 8)
    expected = np.asarray(g.realize([64, 64])).copy()
    # The first realize compiled; these all share that code, and the ones
    # into a fresh shape run concurrently with each other.
    results = run_all([lambda: np.asarray(g.realize([64, 64])).copy() for _ in range(32)])
    for got in results:
        np.testing.assert_array_equal(got, expected)


def test_threads_compile_one_shared_func_concurrently():
    # All threads ask for the same uncompiled pipeline at once: one compiles,
    # the others wait for it and reuse the result.
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * x
    f[x] = f[x] + 1
    results = run_all([lambda: np.asarray(f.realize([100])).copy() for _ in range(8)])
    for got in results:
        np.testing.assert_array_equal(got, np.arange(100) ** 2 + 1)


def test_realizing_while_another_thread_lowers_the_same_func_never_deadlocks():
    # Regression: a realization marked its Funcs used under their write
    # lock while another thread's lowering held nested read locks on them.
    # It hung about one round in ten on two cores.
    for i in range(60):
        x = hl.Var("x")
        f = hl.Func("f")
        f[x] = x * x
        f[x] = f[x] + i
        results = run_all([lambda: np.asarray(f.realize([50])).copy() for _ in range(4)])
        for got in results:
            np.testing.assert_array_equal(got, np.arange(50) ** 2 + i)


def test_errors_stay_with_their_thread():
    # Each thread's failure message names its own buffer.
    def failing(i):
        x = hl.Var("x")
        b = hl.Buffer(np.zeros(10, np.int32), f"in{i}")
        f = hl.Func(f"out{i}")
        f[x] = b[x + i + 5]
        try:
            f.realize([10])
        except hl.HalideError as e:
            return str(e)
        return "no error"

    msgs = run_all([lambda i=i: failing(i) for i in range(8)])
    for i, m in enumerate(msgs):
        assert f"in{i} is accessed at" in m, m


# ---------------------------------------------------------------------------
# The GIL is released by the long entry points.
#
# With a switch interval much longer than the work, a thread that holds the
# GIL keeps it until it blocks or releases it. A background thread calls an
# entry point a fixed number of times; meanwhile two other threads ping-pong
# through queues. If the entry point releases the GIL, exchanges happen the
# whole time it works (thousands); if it held the GIL, none could happen
# until the background thread is done.
# ---------------------------------------------------------------------------


def exchanges_while(busy, times):
    """How many ping-pong round trips two threads complete while another
    thread runs `busy()` `times` times."""
    errors = []
    ready, started = threading.Event(), threading.Event()

    def work():
        ready.wait(TIMEOUT)
        started.set()
        try:
            for _ in range(times):
                busy()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    ping, pong = queue.Queue(), queue.Queue()

    def echo():
        while True:
            v = ping.get(timeout=TIMEOUT)
            pong.put(v)
            if v is None:
                return

    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        t = threading.Thread(target=work, daemon=True)
        e = threading.Thread(target=echo, daemon=True)
        t.start()
        e.start()
        n = 0
        ready.set()
        # Count only from when the work starts: on a loaded machine the
        # worker thread may be scheduled late.
        started.wait(TIMEOUT)
        while t.is_alive():
            ping.put(n)
            assert pong.get(timeout=TIMEOUT) == n
            n += 1
        ping.put(None)
        e.join(TIMEOUT)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    return n


def heavy_func():
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("heavy")
    e = hl.f32(0)
    for k in range(8):
        e = hl.sin(e + hl.f32(x * (k + 1) + y))
    f[x, y] = e
    return f


# A few exchanges can happen while the busy thread is between calls; with
# the GIL released during the calls there are thousands.
PROGRESS = 50


def test_realize_releases_the_gil():
    f = heavy_func()
    f.realize([512, 512])
    assert exchanges_while(lambda: f.realize([512, 512]), 10) >= PROGRESS


def test_pipeline_realize_and_callable_release_the_gil():
    f = heavy_func()
    p = hl.Pipeline(f)
    c = f.compile_to_callable([])
    out = hl.Buffer(hl.Float(32), [512, 512])
    assert exchanges_while(lambda: (p.realize([512, 512]), c(out)), 5) >= PROGRESS


def test_compiling_releases_the_gil(tmp_path):
    def compile_all():
        heavy_func().compile_jit()
        heavy_func().compile_to_callable([])
        heavy_func().compile_to_lowered_stmt(str(tmp_path / "h.stmt"), [])

    assert exchanges_while(compile_all, 1) >= PROGRESS


def test_a_python_loop_holding_the_gil_blocks_the_exchanges():
    # The measure itself: a busy thread that never releases the GIL lets
    # (almost) no exchange through. One long call, so the few exchanges
    # that slip through between calls on a loaded machine do not count.
    assert exchanges_while(lambda: sum(range(4_000_000)), 1) < PROGRESS
