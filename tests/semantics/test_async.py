"""Func.async_(): the producer runs on another thread, concurrently with
the consumer's work that does not need it; the values are those Halide
computes. Failures in the producer end the realization with the
producer's error instead of leaving the consumer waiting."""
import os
import subprocess
import sys
import textwrap

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
    path = tmp_path / "g.stmt"
    g.compile_to_lowered_stmt(str(path), [])
    text = path.read_text()
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


def test_ring_buffer_slots_are_in_the_storage(tmp_path):
    import ferrohalide as hl
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x, y + 1]
    f.compute_at(g, y).hoist_storage_root().ring_buffer(3)
    path = tmp_path / "g.stmt"
    g.compile_to_lowered_stmt(str(path), [])
    text = path.read_text()
    assert "* 3]" in text and "% 3)" in text, text
