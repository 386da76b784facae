"""Func definitions, calls and scheduling: results and errors as the reference."""
import re

import pytest

import ferrohalide as hl

from test_lang_helpers import assert_same, both, outcome, ref_module

DEF_SETUP = """
x, y, z = hl.Var('x'), hl.Var('y'), hl.Var('z')
f = hl.Func('f')
f[x, y] = x + y
g = hl.Func('g')
uf = hl.Func('uf')
tu = hl.Func('tu')
tu[x] = (x, x * 1.5)
k = hl.Func('k')
k[()] = 5
"""

DEFINITIONS = [
    "f.defined()", "f.dimensions()", "f.type()", "f.types()", "f.outputs()", "f.args()", "f.name()",
    "f.value()", "f.values()", "f[x]", "f[x, y, z]", "f[x, 1.5]", "f[x, y] + 1", "f[x, y] * 1.5",
    "hl.Expr(f[x, y])", "hl.Expr(f[hl.u8(x), y])", "hl.Expr(f[hl.i64(x), y])",
    "g.defined()", "g.dimensions()", "g.type()", "g.types()", "g.outputs()", "g.args()",
    "g.value()", "g.values()", "g.__setitem__((x, x), x)", "g.__setitem__((x, 1), x)",
    "g.__setitem__(x + 1, x)", "g.__setitem__(0, 1)", "g.__setitem__(x, y)",
    "g.__setitem__(x, hl.Var('w') + x)", "1 + uf[x]", "k.dimensions()", "k.args()",
    "hl.Expr(k[()])", "k[x]", "tu.types()", "tu.outputs()", "hl.Expr(tu[x][1])", "tu[x] + 1",
    "tu.type()", "tu.values()", "hl.Func('f')", "hl.Func(hl.Int(32), 2, 'hh').dimensions()",
    "hl.Func(hl.Int(32), 2, 'hh').type()", "hl.Func([hl.UInt(8), hl.Float(32)], 1, 'hh').types()",
    "hl.Func(hl.UInt(8), 2, 'hh').__setitem__((x, y), x)", "hl.Func(hl.Expr(3)).dimensions()",
    "hl.Func(x + 1)", "f.has_update_definition()", "f.num_update_definitions()",
    "hl.funcs('a b')", "x + f", "f + 1",
]


def _without_name_counters(o):
    # Func unique-name counters ("f$7") count every Func made so far in the
    # process, so they depend on which tests ran before: compare up to them.
    # Anonymous Funcs ("f12") are numbered the same way.
    def norm(x):
        return re.sub(r"\bf\d+\b", "fN", re.sub(r"\$\d+", "$N", x))

    return tuple(norm(x) if isinstance(x, str) else x for x in o)


@pytest.mark.parametrize("code", DEFINITIONS)
def test_definitions_same_as_reference(code):
    ours, ref = (_without_name_counters(o) for o in both(code, DEF_SETUP))
    if ref[0] == "raise" and ours[0] == "raise":
        assert ours[:2] == ref[:2], f"{code}: ours {ours!r}, reference {ref!r}"
        if ref[1] == "HalideError":
            assert ours[2] == ref[2], f"{code}: ours {ours!r}, reference {ref!r}"
        return
    assert ours == ref, f"{code}: ours {ours!r}, reference {ref!r}"


def test_func_names():
    ours = [hl.Func("samename").name() for _ in range(3)]
    assert ours == ["samename", "samename$1", "samename$2"]
    anon = hl.Func().name()
    assert anon.startswith("f")


def test_redefinition_is_an_update():
    x = hl.Var("x")
    f = hl.Func("redef")
    f[x] = x
    f[x] = f[x] + 1
    f[0] = 1
    assert f.num_update_definitions() == 2


@pytest.mark.parametrize("name", ["specialize"])
def test_unimplemented_directives_raise(name):
    x = hl.Var("x")
    f = hl.Func("unimpl")
    f[x] = x
    method = getattr(f, name)
    with pytest.raises(hl.HalideError, match=name):
        method(x)


SCHED_SETUP = """
x, y, z = hl.Var('x'), hl.Var('y'), hl.Var('z')
xo, xi, yo, yi, t = hl.Var('xo'), hl.Var('xi'), hl.Var('yo'), hl.Var('yi'), hl.Var('t')
f = hl.Func('sf')
f[x, y] = x + y
"""

SCHEDULE_ERRORS = [
    "f.split(z, xo, xi, 8)",
    "f.split(x, xo, xi, 8); f.split(x, xo, xi, 8)",
    "f.split(x, xo, xi, 8); f.split(xo, x, y, 8)",
    "f.split(x, xo, xi, 8); f.split(xo, xi, z, 8)",
    "f.reorder(x, x)",
    "f.reorder(x, z)",
    "f.vectorize(z)",
    "f.unroll(z, 4)",
    "f.parallel(z)",
    "f.serial(z)",
    "f.split(x, xo, xo, 4)",
    "f.split(x, y, xi, 4)",
    "f.split(x, xo, xi, 8); f.fuse(xi, z, t)",
    "f.split(x, xo, xi, 8); f.fuse(z, xi, t)",
    "f.tile(x, y, xi, yi, 8, 8); f.tile(x, y, xi, yi, 8, 8)",
    "f.split(x, xo, xi, 8, tail=hl.TailStrategy.GuardWithIf)",
    "f.split(x, xo, xi, 8, hl.TailStrategy.RoundUp).vectorize(xi)",
    "f.compute_root().store_root()",
    "f.compute_inline()",
    "f.parallel(x).vectorize(x)",
    "f.reorder()",
]


@pytest.mark.parametrize("code", SCHEDULE_ERRORS)
def test_schedule_same_as_reference(code):
    # Messages name the Func with its unique-name counter ("sf$3", or "sf"
    # the first time): compare without it, as above (the reference's
    # counters are shared by names of equal hash, so they also move with
    # unrelated tests).
    def norm(o):
        return tuple(re.sub(r"\$\d+", "", x) if isinstance(x, str) else x for x in o)

    ours, ref = (norm(o) for o in both(code, SCHED_SETUP, "exec"))
    if ref[0] == "raise" and ours[0] == "raise":
        assert ours[:2] == ref[:2], f"{code}: ours {ours!r}, reference {ref!r}"
        if ref[1] == "HalideError":
            assert ours[2] == ref[2], f"{code}: ours {ours!r}, reference {ref!r}"
        return
    assert ours == ref, f"{code}: ours {ours!r}, reference {ref!r}"


LOOP_NESTS = [
    "f.vectorize(x, 8)",
    "f.split(x, xo, xi, 8).vectorize(xi).unroll(y, 2).parallel(y)",
    "f.split(x, x, xi, 8)",
    "f.tile(x, y, xi, yi, 8, 8)",
    "f.tile(x, y, xo, yo, xi, yi, 8, 4)",
    "f.fuse(x, y, t)",
    "f.reorder(y, x)",
    "f.parallel(y, 4)",
    "f.unroll(x, 2); f.vectorize(x, 4)",
    "f.vectorize(x, 8).split(x, xo, xi, 2)",
    "f.fuse(x, y, t).vectorize(t, 8)",
    "f.split(x, xo, xi, 8); f.fuse(xi, y, t)",
    "f.split(x, xo, xi, 8); f.fuse(xo, y, t).parallel(t)",
    "f.split(y, yo, yi, 16).reorder(x, yi, yo).parallel(yo).vectorize(x, 4)",
]


def _loop_nest(hl_mod, code, capfd):
    """print_loop_nest output (the reference prints from C++, so capture fds)."""
    import ctypes
    import re
    import sys

    env = {"hl": hl_mod}
    exec(SCHED_SETUP, env)
    exec(code, env)
    capfd.readouterr()
    env["f"].print_loop_nest()
    sys.stderr.flush()
    ctypes.CDLL(None).fflush(None)  # the reference writes through C stdio
    text = capfd.readouterr().err  # Halide prints the loop nest to stderr
    # Anonymous vars and RDoms (v0, r1, ...) are numbered by a process-wide counter.
    return re.sub(r"\b([vr])\d+\b", r"\1#", text)


@pytest.mark.parametrize("code", LOOP_NESTS)
def test_loop_nest_same_as_reference(code, capfd):
    ref = _loop_nest(ref_module(), code, capfd)
    ours = _loop_nest(hl, code, capfd)
    assert ref.startswith("produce sf:")
    assert ours == ref


PRODUCERS = """
p = hl.Func('pp'); p[x, y] = x * y
q = hl.Func('qq'); q[x, y] = p[x, y] + p[x + 1, y]
c = f
f = hl.Func('cf'); f[x, y] = q[x, y] + c[x, y - 1]
"""

# Loop nests with producers computed at various levels (lesson 8's schedules).
MULTI_NESTS = [
    "p.compute_root()",
    "p.compute_root(); q.compute_root()",
    "q.compute_at(f, y)",
    "q.compute_at(f, x); p.compute_at(q, x)",
    "q.store_root().compute_at(f, y)",
    "q.store_at(f, y).compute_at(f, x).vectorize(x, 4)",
    "f.tile(x, y, xo, yo, xi, yi, 4, 4); q.compute_at(f, xo)",
    "c.compute_root().parallel(y); f.split(y, yo, yi, 8).parallel(yo); q.compute_at(f, yi)",
    "r = hl.RDom([(0, 3)]); h = hl.Func('hh'); h[x, y] = 0; h[x, y] += f[x + r.x, y]; "
    "f.compute_at(h, y); f = h",
]


@pytest.mark.parametrize("code", MULTI_NESTS)
def test_loop_nest_with_producers_same_as_reference(code, capfd):
    ref = _loop_nest(ref_module(), PRODUCERS + code, capfd)
    ours = _loop_nest(hl, PRODUCERS + code, capfd)
    assert ours == ref


def test_schedule_methods_return_self():
    ours = outcome(hl, "f.vectorize(x, 8) is f", setup=SCHED_SETUP)
    assert ours == ("ok", "True")


def test_pipeline_loop_nest_same_as_reference(capfd):
    """Pipeline.print_loop_nest of two outputs."""
    import ctypes
    import sys
    texts = []
    for mod in (ref_module(), hl):
        x, y = mod.Var("x"), mod.Var("y")
        p, f, g = mod.Func("pp"), mod.Func("ff"), mod.Func("gg")
        p[x, y] = x + y
        f[x, y] = p[x, y] * 2
        g[x, y] = p[x, y] + 1
        p.compute_root()
        capfd.readouterr()
        mod.Pipeline([f, g]).print_loop_nest()
        sys.stderr.flush()
        ctypes.CDLL(None).fflush(None)
        texts.append(capfd.readouterr().err)
    assert texts[0].startswith("produce pp:")
    assert texts[1] == texts[0]
