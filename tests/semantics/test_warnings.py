"""Compile-time warnings go to Python's sys.stdout, as Halide's bindings send them,
so contextlib.redirect_stdout captures them (issue 14, item 1)."""
import contextlib
import io
import re

from .harness import differential


def _captured(action):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        action()
    return re.sub(r"\$\d+", "", buf.getvalue())


@differential()
def test_inline_bound_warning(hl):
    i = hl.Var("i")
    f = hl.Func("f_inl")
    f[i] = 0.0
    f.bound(i, 0, 127)
    g = hl.Func("g")
    g[i] = f[i * i]
    return _captured(lambda: g.realize([16]))


@differential()
def test_inline_split_fuse_rename_warnings(hl):
    x, y, xo, xi, xy, z = (hl.Var(n) for n in ("x", "y", "xo", "xi", "xy", "z"))
    f = hl.Func("f_inl2")
    f[x, y] = x + y
    f.split(x, xo, xi, 4).fuse(xi, y, xy).rename(xo, z)
    g = hl.Func("g")
    g[x, y] = f[x, y] * 2
    return _captured(lambda: g.realize([8, 4]))


@differential()
def test_unscheduled_update_warning(hl):
    x = hl.Var("x")
    out = []
    for suppress in (False, True):
        f = hl.Func("f_u%d" % suppress)
        f[x] = 0
        f[x] += 5
        f.vectorize(x, 8)
        if suppress:
            f.update(0).unscheduled()
        out.append(_captured(lambda: f.realize([64])))
    return out


@differential()
def test_warning_not_repeated_for_cached_pipeline(hl):
    i = hl.Var("i")
    f = hl.Func("f_c")
    f[i] = i
    f.bound(i, 0, 8)
    g = hl.Func("g_c")
    g[i] = f[i] + 1
    return [_captured(lambda: g.realize([8])), _captured(lambda: g.realize([8]))]


@differential()
def test_print_goes_to_sys_stdout(hl):
    """hl.print / print_when lines, also from parallel loops, reach sys.stdout."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f_p")
    f[x] = hl.print(x * 2, "is twice", x)
    g = hl.Func("g_p")
    g[x, y] = hl.print_when(x == 1, x + y, "at y", y)
    g.parallel(y)
    out = [_captured(lambda: f.realize([3]))]
    lines = _captured(lambda: g.realize([2, 4])).splitlines()
    out.append(sorted(lines))
    return out


@differential()
def test_print_before_a_failure_is_kept(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 0)
    f = hl.Func("f_pf")
    f[x] = hl.require(x < p, hl.print(x, "seen"), x)
    p.set(2)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            f.realize([4])
            ok = True
        except hl.HalideError:
            ok = False
    return ok, buf.getvalue()
