"""hl.lambda_func, hl.require, hl.likely / likely_if_innermost, hl.print /
print_when with several arguments, hl.evaluate (issue 5, item 5)."""
import re

import pytest

import numpy as np

from .harness import differential, buffer
from .input_helpers import arr, error_key, run_script


# ---------------------------------------------------------------------------------
# lambda_func
# ---------------------------------------------------------------------------------
@differential()
def test_lambda_func_basic(hl):
    """lambda_func(v1, ..., vn, e) is a Func over those Vars (in that order), named
    'lambda_<n>' with a global counter (plus '$<m>' if that Func name is taken);
    lambda_func(e) with no Vars is 0-d."""
    x, y = hl.Var("x"), hl.Var("y")
    g = hl.lambda_func(x, y, x + y * 10)
    h = hl.lambda_func(y, x, x + y * 10)  # argument order = the order given
    k = hl.lambda_func(hl.f32(2.5) * 3)
    c = hl.lambda_func(x, 7)
    names = [g.name(), h.name(), k.name(), c.name()]
    return {
        "g": arr(g.realize([3, 2])), "h": arr(h.realize([3, 2])),
        "k": arr(k.realize([])), "const": arr(c.realize([4])),
        "dims": [g.dimensions(), h.dimensions(), k.dimensions(), c.dimensions()],
        "args": [[str(v) for v in g.args()], [str(v) for v in h.args()]],
        "names": [bool(re.fullmatch(r"lambda_\d+(\$\d+)?", n)) for n in names],
        "unique": len(set(names)) == 4,
    }


@differential()
def test_lambda_func_uses_other_funcs_and_inputs(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * x
    im = hl.ImageParam(hl.Int(16), 1, "im")
    g = hl.lambda_func(x, f[x + 1] - hl.i32(im[x]))
    im.set(buffer(hl, np.array([5, 4, 3, 2], np.int16)))
    return arr(g.realize([4]))


@differential()
def test_lambda_func_errors(hl):
    x, y = hl.Var("x"), hl.Var("y")
    return {
        "no_args": error_key(hl, lambda: hl.lambda_func(), "Not enough arguments"),
        "free_var": error_key(hl, lambda: hl.lambda_func(x, x + y), "Undefined variable",
                              "y"),
        "free_var_0d": error_key(hl, lambda: hl.lambda_func(x * 3), "Undefined variable"),
    }


# ---------------------------------------------------------------------------------
# require
# ---------------------------------------------------------------------------------
@differential()
def test_require_passes_value_through(hl):
    """require(cond, value, *args) is value where cond holds, any type."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 3)
    f = hl.Func("f")
    f[x] = hl.require(p > 0, x * p, p)
    g = hl.Func("g")
    g[x] = hl.require(x >= 0, hl.f32(x) / 4) * 2
    h = hl.Func("h")
    h[x] = hl.require(x < 100, hl.u16(x) + 65530)
    types = [hl.require(x < 3, hl.u16(x)).type(), hl.require(x < 3, 5).type(),
             hl.require(x < 3, 2.5).type()]
    return arr(f.realize([4])), arr(g.realize([4])), arr(h.realize([8])), types


@differential()
def test_require_failure_then_success(hl):
    """A failed requirement raises HalideError 'Requirement Failed' whose message
    contains the printed value and extra arguments; the pipeline stays usable."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 3)
    f = hl.Func("f")
    f[x] = hl.require(p > 0, x * p, p, hl.f32(p) / 2)
    ok1 = arr(f.realize([4]))
    p.set(-2)
    bad = error_key(hl, lambda: f.realize([4]), "Requirement Failed", "-2",
                    "-1.000000")
    p.set(5)
    return ok1, bad, arr(f.realize([4]))


@differential()
def test_failed_assertions_messages_are_halides_word_for_word(hl):
    """Every kind of value an assertion's message formats: integers of each
    signedness and width, both float widths, bools, a vector's first lane,
    five values (more than one formatting call takes), and a buffer name
    holding a control byte (text the one-call formatter cannot carry)."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", -3)
    cases = {
        "none": lambda: hl.require(p > 0, x),
        "ints": lambda: hl.require(p > 0, x, p, hl.u8(200), hl.i64(p) * 1000000000000),
        "floats": lambda: hl.require(p > 0, x, hl.f32(p) / 3, hl.f64(p) / 3, hl.f32(p) * hl.f32(1e20)),
        "bools": lambda: hl.require(p > 0, x, p > -5, p < -5),
        "five": lambda: hl.require(p > 0, x, p, p + 1, p + 2, p + 3, p + 4),
        "vector": lambda: hl.require(p > 0, x, p + x),
    }
    messages = {}
    for name, make in cases.items():
        f = hl.Func("f_" + name)
        f[x] = make()
        if name == "vector":
            f.vectorize(x, 4)
        try:
            f.realize([8])
            messages[name] = "no error"
        except hl.HalideError as e:
            messages[name] = str(e)
    im = hl.ImageParam(hl.UInt(8), 1, "im\x01a")
    g = hl.Func("g")
    g[x] = im[x + 2]
    im.set(buffer(hl, np.zeros(8, dtype=np.uint8)))
    try:
        g.realize([8])
        messages["marker"] = "no error"
    except hl.HalideError as e:
        messages["marker"] = str(e)
    return messages


@differential()
def test_require_errors_at_definition(hl):
    x = hl.Var("x")
    return {
        "non_bool": error_key(hl, lambda: hl.require(x, x * 2), "boolean"),
        "string_value": error_key(hl, lambda: hl.require(x < 3, "a")),
    }


# ---------------------------------------------------------------------------------
# likely
# ---------------------------------------------------------------------------------
@differential()
def test_likely_is_identity_on_values(hl):
    x = hl.Var("x")
    b = buffer(hl, np.arange(5, dtype=np.int32) * 3)
    f = hl.Func("f")
    f[x] = (hl.select(hl.likely(x < 5), x, 0) + hl.likely(x) * 2
            + b[hl.clamp(hl.likely(x), 0, 4)])
    f.vectorize(x, 4)
    g = hl.Func("g")
    g[x] = hl.f64(hl.likely_if_innermost(x * 2)) + hl.likely(hl.f64(0.5))
    types = [hl.likely(x).type(), hl.likely(hl.u8(x)).type(),
             hl.likely_if_innermost(hl.f64(x)).type(), hl.likely(3).type()]
    bad = error_key(hl, lambda: hl.likely("a"))
    return arr(f.realize([8])), arr(g.realize([5])), types, bad


# ---------------------------------------------------------------------------------
# print / print_when
# ---------------------------------------------------------------------------------
PRINT_SCRIPT = r"""
import sys
hl = __import__(sys.argv[1])
x, y = hl.Var("x"), hl.Var("y")
f = hl.Func("f")
f[x] = hl.print(hl.u8(x) + 250, "<-u8", hl.i64(x) - 2**40, hl.f32(x) / 3,
                hl.f64(x) * 1e10, x > 1, hl.i8(x) - 100, hl.u16(x) * 30000, "end")
r = f.realize([3])
g = hl.Func("g")
g[x, y] = hl.print_when((x + y) % 3 == 0, x * 10 + y, "at", x, y, hl.f32(y) - 0.5)
r2 = g.realize([3, 2])
h = hl.Func("h")
h[x] = hl.print(hl.f64(x) / 8, hl.f32(-x) * 1e-3, hl.i16(-x))
r3 = h.realize([2])
sys.stdout.flush()
rows = [list(r2[i, j] for i in range(3)) for j in range(2)]
sys.stderr.write("values %r %r %r\n" % (list(r), rows, list(r3)))
"""


@differential()
def test_print_several_arguments(hl):
    """hl.print(e, ...) evaluates to its first argument and writes the arguments
    separated by spaces and a newline to stdout at run time (ints in decimal,
    float32 with 6 decimals, float64 in %e style, bools as true/false)."""
    rc, out, err = run_script(hl, PRINT_SCRIPT)
    values = [ln for ln in err.splitlines() if ln.startswith("values")]
    return rc, out, values


@differential()
def test_print_types(hl):
    x = hl.Var("x")
    return [hl.print(hl.f32(x), x).type(), hl.print(x, "s").type(),
            hl.print_when(x > 1, hl.u8(x), "s").type(), hl.print(3).type(),
            hl.print(2.5).type()]


# ---------------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------------
@differential()
def test_evaluate(hl):
    """hl.evaluate compiles and runs a 0-d expression and returns a Python value;
    a Python tuple / list of Exprs gives a tuple."""
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * 7
    p = hl.Param(hl.Int(32), "p", 6)
    vals = [hl.evaluate(hl.Expr(3) + 4), hl.evaluate(hl.f32(1.5) * 2),
            hl.evaluate(hl.u8(250) + 10), hl.evaluate(hl.Expr(True)),
            hl.evaluate(hl.i64(2 ** 40)), hl.evaluate(hl.u64(2 ** 64 - 1)),
            hl.evaluate(f[3]), hl.evaluate(hl.f64(1) / 3), hl.evaluate(p * 2),
            hl.evaluate(3), hl.evaluate(2.5)]
    return {
        "values": vals,
        "types": [type(v).__name__ for v in vals],
        "tuple": hl.evaluate((hl.Expr(1), hl.f64(2.5), hl.u8(3))),
        "list": hl.evaluate([hl.Expr(1), hl.Expr(2)]),
        "free_var": error_key(hl, lambda: hl.evaluate(x + 1), "Undefined variable"),
        "hl_tuple": error_key(hl, lambda: hl.evaluate(hl.Tuple([hl.Expr(1), hl.Expr(2)]))),
    }


@differential()
def test_small_enums_behave_like_halides(hl):
    """Members, name / value, int(), hash equal to the value's, repr / str, and
    construction from the value, for every small enum."""
    out = {}
    for name in ["TypeCode", "TailStrategy", "MemoryType", "StmtOutputFormat",
                 "LoopAlignStrategy", "Partition"]:
        E = getattr(hl, name)
        out[name] = [(k, v.name, v.value, int(v), hash(v) == hash(int(v)), repr(v), str(v),
                      E(int(v)) == v, v == E(int(v)))
                     for k, v in E.__members__.items()]
    return out


@pytest.mark.parametrize("module", ["halide", "ferrohalide"])
def test_second_update_on_an_unevaluated_func_ref_is_a_type_error(module):
    """`ref = f[x]; ref += 1; ref += 1` on an undefined f: Halide's own
    basics.py matches the TypeError's text, type name included."""
    hl = pytest.importorskip(module)
    x = hl.Var("x")
    f = hl.Func("f")
    ref = f[x]
    ref += 1
    with pytest.raises(TypeError) as e:
        ref += 1
    assert str(e.value) == (
        "unsupported operand type(s) for +=: 'halide.halide_._UnevaluatedFuncRefExpr' and 'int'"
    )


@differential(expect_error=True)
def test_unevaluated_func_ref_used_twice(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    ref = f[x]
    ref += 1
    f[x] = ref
    f[x] = ref          # f has a pure definition now


@differential(expect_error=True)
def test_unevaluated_func_ref_defines_another_func(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    ref = f[x]
    ref += 1
    g = hl.Func("g")
    g[x] = ref


@differential(expect_error=True)
def test_unevaluated_func_ref_at_other_args(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    ref = f[x]
    ref += 1
    f[y] = ref


@pytest.mark.parametrize("module", ["halide", "ferrohalide"])
def test_printed_forms_of_undefined_objects(module):
    """Halide's basics.py checks these texts."""
    hl = pytest.importorskip(module)
    x = hl.Var("x")
    f, g = hl.Func("pf"), hl.Func("pg")
    f[x] = x
    g[x] = x
    assert str(hl.ImageParam()) == "<halide.ImageParam ImageParam()>"
    out = hl.OutputImageParam()
    assert str(out) == "<halide.OutputImageParam OutputImageParam()>" and not out.defined()
    assert str(hl.ImageParam(hl.UInt(16), 2, "input")) == "<halide.ImageParam 'input', dims: 2, type: uint16>"
    assert str(hl.RDom()) == "<halide.RDom RDom()>"
    assert str(hl.Pipeline()) == "<halide.Pipeline Pipeline()>"
    assert re.fullmatch(r"<halide.Pipeline \['pf(\$\d+)?','pg(\$\d+)?'\]>", str(hl.Pipeline([f, g])))


@differential()
def test_var_or_rvar_objects(hl):
    x = hl.Var("x")
    r = hl.RDom([(0, 4)], "r")
    a, b, c = hl.VarOrRVar(x), hl.VarOrRVar(r.x), hl.VarOrRVar(r)
    d = hl.VarOrRVar("q", True)
    names = (a.name(), a.is_rvar, b.name(), b.is_rvar, c.name(), d.name(), d.is_rvar,
             a.var.name(), b.rvar.name())
    f = hl.Func("f")
    f[x] = 0
    f[x] += r.x + x
    f.update(0).reorder(hl.VarOrRVar(x), hl.VarOrRVar(r.x))
    f.split(hl.VarOrRVar(x), hl.VarOrRVar(hl.Var("xo")), hl.VarOrRVar(hl.Var("xi")), 2)
    return names, f.realize([4])


@differential(expect_error=True)
def test_rdom_domain_is_unusable_as_in_halide(hl):
    return hl.RDom([(0, 4)]).domain()
