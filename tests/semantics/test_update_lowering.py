"""Update definitions under schedules the other update tests do not cover:
specialized updates, producers placed by LoopLevel stage index, inline
reductions and Funcs with updates under vectorized or compute_at consumers,
atomic parallel scatters, print_loop_nest of every stage, and unbounded
data-dependent reads of input Buffers."""
import contextlib

import numpy as np

from .harness import buffer, differential


@differential()
def test_specialized_update_stage(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    r = hl.RDom([(0, 4)])
    f[x, y] += r.x * y
    f.update().specialize(f.output_buffer().width() > 5).vectorize(x, 4)
    return f.realize([8, 3]), f.realize([3, 2])


@differential()
def test_producer_at_update_loop_by_loop_level(hl):
    """LoopLevel(f, x) and LoopLevel(f, x, -1): x's loop of the stage that
    uses the producer.  (An explicit stage index is rejected by the
    reference at realize even where it should work: not tested.)"""
    x = hl.Var("x")
    out = []
    for stage in [None, -1]:
        g = hl.Func("g")
        g[x] = x * 3
        f = hl.Func("f")
        f[x] = x
        r = hl.RDom([(0, 3)])
        f[x] += g[x + r.x]
        g.compute_at(hl.LoopLevel(f, x) if stage is None else hl.LoopLevel(f, x, stage))
        out.append(f.realize([6]))
    return out


@differential()
def test_inline_reductions_in_a_vectorized_consumer(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 5)])
    g = hl.Func("g")
    g[x] = hl.sum(x * r.x + r.x)
    f = hl.Func("f")
    f[x] = g[x] + hl.maximum(r.x * x % 7)
    f.vectorize(x, 8)
    return f.realize([19])


@differential()
def test_scan_computed_at_consumer_rows(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * y
    r = hl.RDom([(1, 7)])
    f[r.x, y] = f[r.x - 1, y] + f[r.x, y]
    g = hl.Func("g")
    g[x, y] = f[x, y] * 2
    f.compute_at(g, y)
    return g.realize([8, 5])


@differential()
def test_update_of_producer_stored_at_root_computed_per_row(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    f[x, y] = f[x, y] * 2
    g = hl.Func("g")
    g[x, y] = f[x, y] + f[x + 1, y]
    f.store_root().compute_at(g, y)
    return g.realize([6, 4])


@differential()
def test_tuple_update_vectorized(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = (x, hl.f32(x))
    r = hl.RDom([(0, 4)])
    f[x] = (f[x][0] + r.x, f[x][1] * 0.5)
    f.update().vectorize(x, 4)
    return f.realize([10])


@differential()
def test_atomic_parallel_scatter(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = 0
    r = hl.RDom([(0, 10)])
    f[r.x % 3] += r.x
    f.update().atomic().parallel(r.x)
    return f.realize([3])


@differential()
def test_histogram_consumed_by_another_func(hl):
    x = hl.Var("x")
    a = ((np.arange(64).reshape(4, 16) * 7) % 11).astype(np.uint8)
    img = buffer(hl, a)
    r = hl.RDom(img)
    h = hl.Func("h")
    h[x] = 0
    h[hl.i32(img[r.x, r.y]) % 5] += 1
    g = hl.Func("g")
    g[x] = h[x] + h[x + 1]
    h.compute_root()
    return g.realize([4])


def _captured(fd, action):
    """What `action()` writes to file descriptor `fd` (1 or 2) or to the
    matching sys stream, with numbered names (v<N>, r<N>, uniquifying $<N> suffixes) normalized."""
    import os
    import re
    import sys
    import tempfile
    stream = sys.stdout if fd == 1 else sys.stderr
    redirect = contextlib.redirect_stdout if fd == 1 else contextlib.redirect_stderr
    stream.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+") as tmp:
        os.dup2(tmp.fileno(), fd)
        try:
            with redirect(tmp):
                action()
                tmp.flush()
        finally:
            os.dup2(saved, fd)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read()
    text = re.sub(r"\$\d+", "", text)
    return re.sub(r"\b([vr])\d+\b", r"\1N", text)


def _loop_nest(hl, f):
    return _captured(2, f.print_loop_nest)


@differential()
def test_print_loop_nest_shows_every_stage(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x + y
    r = hl.RDom([(2, 5), (0, 3)], "rr")
    f[x, y] += r.x * r.y
    f[r.y, y] = 3
    f.update(0).split(r.x, hl.RVar("a"), hl.RVar("b"), 2).unroll(hl.RVar("b")).parallel(y)
    f.update(1).vectorize(y, 2)
    return _loop_nest(hl, f)


@differential()
def test_unbounded_read_of_an_input_buffer(hl):
    """An int32 index read from a Buffer is unbounded: an error when the
    pipeline is compiled, even if the data happen to be in range."""
    x = hl.Var("x")
    idx = buffer(hl, np.array([3, 2, 1, 0], dtype=np.int32))
    img = buffer(hl, np.array([0, 10, 20, 30], dtype=np.int32))
    f = hl.Func("f")
    f[x] = img[idx[x]]
    try:
        f.realize([4])
    except hl.HalideError as exc:
        return "unbounded" in str(exc)
    return "no error"


@differential()
def test_func_with_updates_left_inline(hl):
    """A Func with an update cannot be inlined: left inline (or explicitly
    compute_inline) it is computed where it is used; store_root() on it is
    the inlined-Func error at realize."""
    x = hl.Var("x")
    out = []
    for sched in ["default", "inline", "pure_vectorized", "store_root"]:
        f = hl.Func("f")
        f[x] = x
        f[x] += 1
        if sched == "inline":
            f.compute_inline()
        elif sched == "pure_vectorized":
            f.vectorize(x, 4)
        elif sched == "store_root":
            f.store_root()
        g = hl.Func("g")
        g[x] = f[x] * 2
        try:
            out.append(_captured(1, lambda: g.realize([3])) or g.realize([3]))
        except hl.HalideError:
            out.append("HalideError")
    return out


@differential()
def test_update_warnings_on_stdout(hl):
    """The warnings Halide prints on stdout: a pure update that hides the
    definition before it, and an update left unscheduled while another
    definition of its Func is scheduled (unscheduled() silences it)."""
    x = hl.Var("x")

    def hides():
        f = hl.Func("hides")
        f[x] = x
        f[x] = x * 2

    def unscheduled(silence):
        f = hl.Func("uns")
        f[x] = x
        f[x] += 1
        f.vectorize(x, 4)
        if silence:
            f.update().unscheduled()
        f.realize([8])

    return [_captured(1, hides), _captured(1, lambda: unscheduled(False)),
            _captured(1, lambda: unscheduled(True))]


@differential()
def test_wrappers_and_clones_of_funcs_with_updates(hl):
    """in_() of a producer used by a consumer's update, clone_in() and the
    global wrapper of a Func with an update: each copy's update reads the
    copy itself."""
    x = hl.Var("x")
    r = hl.RDom([(0, 3)])
    f = hl.Func("f")
    f[x] = x * 2
    g = hl.Func("g")
    g[x] = f[x]
    g[x] += f[x + r.x]
    f.in_(g).compute_root()
    a = g.realize([4])

    p = hl.Func("p")
    p[x] = x * 2
    p[x] += r.x
    c1 = hl.Func("c1")
    c1[x] = p[x] + 1
    c2 = hl.Func("c2")
    c2[x] = p[x] * 3
    out = hl.Func("out")
    out[x] = c1[x] + c2[x]
    p.clone_in(c1).compute_root()
    b = out.realize([4])

    q = hl.Func("q")
    q[x] = x * 2
    q[x] += r.x
    h = hl.Func("h")
    h[x] = q[x] + 1
    q.in_().compute_root()
    return a, b, h.realize([4])
