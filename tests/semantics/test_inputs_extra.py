"""More inputs and misuse beyond the issue-5 acceptance suites: undefined
Buffers given as outputs or bound to ImageParams, 0-d ImageParams, Params
used only in a schedule, constraints naming Params."""
import numpy as np

from .harness import differential, buffer
from .input_helpers import arr, error_key


@differential()
def test_undefined_buffers(hl):
    f = hl.Func("f")
    f[()] = hl.Expr(3)
    im = hl.ImageParam(hl.Int(32), 0, "im")
    g = hl.Func("g")
    g[()] = im[()] + 1
    out = [error_key(hl, lambda: f.realize(hl.Buffer()), "Undefined buffer")]
    im.set(hl.Buffer())
    out.append(error_key(hl, lambda: g.realize([]), "im", "nullptr"))
    b = hl.Buffer(hl.Int(32), [])
    b[()] = 41
    im.set(b)
    out.append(arr(g.realize([])))
    return out


@differential()
def test_param_in_split_factor_and_constraint(hl):
    """A Param used only by the schedule (a split factor) and one used only
    by a constraint are pipeline arguments too."""
    x = hl.Var("x")
    k = hl.Param(hl.Int(32), "k", 4)
    w = hl.Param(hl.Int(32), "w", 6)
    im = hl.ImageParam(hl.Int(32), 1, "im")
    im.dim(0).set_extent(w)
    f = hl.Func("f")
    f[x] = im[x] * 2
    xo, xi = hl.Var("xo"), hl.Var("xi")
    f.split(x, xo, xi, k, hl.TailStrategy.GuardWithIf)
    im.set(buffer(hl, np.arange(6, dtype=np.int32)))
    res = [arr(f.realize([6]))]
    w.set(7)
    res.append(error_key(hl, lambda: f.realize([6]), "Constraint violated", "im.extent.0", "w"))
    names = sorted(a.name for a in hl.Pipeline(f).infer_arguments())
    return res, names


@differential()
def test_callable_zero_dimensional_input(hl):
    im = hl.ImageParam(hl.Float(64), 0, "im")
    f = hl.Func("f")
    f[()] = im[()] * 2
    c = f.compile_to_callable([im])
    out = np.zeros((), np.float64)
    c(np.array(1.25), out)
    return out
