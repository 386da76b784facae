"""Misuse of pipelines, inputs and Callables must raise a Python exception with a
specific message, never crash or hang, and leave the pipeline usable
(issue 5, item 6).

Every case runs the same pipeline three times: correctly, with the misuse, and
correctly again.  The misuse is reduced by error_key() to the exception kind and
the list of key phrases missing from its message (the phrases are those of the
reference's message; the reference must contain them all).  Func names in
messages get a '$n' suffix when the name was used before in the process, so the
phrases stop at the name ("Output buffer fo" matches "Output buffer fo$3")."""
import numpy as np
import pytest

from .harness import buffer, differential
from .input_helpers import arr, error_key

CASES: dict = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def check(hl, good, bad, *phrases):
    """(result of good(), error_key of bad(), result of good() again)."""
    before = good()
    key = error_key(hl, bad, *phrases)
    after = good()
    return before, key, after


# ---------------------------------------------------------------------------------
# A pipeline over an ImageParam and Params, realized with Func.realize
# ---------------------------------------------------------------------------------
def _img_pipeline(hl, fname="fo"):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    f = hl.Func(fname)
    f[x, y] = hl.i32(im[x, y]) + hl.i32(im[x + 1, y]) * 2
    return im, f


def _u8(h, w, start=0):
    return (np.arange(h * w).reshape(h, w) * 3 + start).astype(np.uint8)


def _good_img(hl, im, f, w=4, h=3):
    def good():
        im.set(buffer(hl, _u8(h, w + 1)))
        return arr(f.realize([w, h]))
    return good


@case
def input_too_small_in_dim0(hl):
    im, f = _img_pipeline(hl)

    def bad():
        im.set(buffer(hl, _u8(3, 4)))  # needs 5 columns
        f.realize([4, 3])
    return check(hl, _good_img(hl, im, f), bad, "Input buffer im", "accessed at 4",
                 "max (3)", "dimension 0")


@case
def input_too_small_in_dim1(hl):
    im, f = _img_pipeline(hl)

    def bad():
        im.set(buffer(hl, _u8(2, 5)))
        f.realize([4, 3])
    return check(hl, _good_img(hl, im, f), bad, "Input buffer im", "accessed at 2",
                 "max (1)", "dimension 1")


@case
def input_min_too_large(hl):
    im, f = _img_pipeline(hl)

    def bad():
        b = buffer(hl, _u8(3, 5))
        b.set_min([1, 0])
        im.set(b)
        f.realize([4, 3])
    return check(hl, _good_img(hl, im, f), bad, "Input buffer im", "accessed at 0",
                 "before the min (1)", "dimension 0")


@case
def input_wrong_element_type(hl):
    """Checked by ImageParam.set itself."""
    im, f = _img_pipeline(hl)
    return check(hl, _good_img(hl, im, f),
                 lambda: im.set(buffer(hl, np.zeros((3, 5), np.int32))),
                 "ImageParam im", "uint8", "int32")


@case
def input_wrong_dimensionality(hl):
    """Accepted by set, rejected when the pipeline runs."""
    im, f = _img_pipeline(hl)

    def bad():
        im.set(buffer(hl, np.zeros(5, np.uint8)))
        f.realize([4, 3])
    return check(hl, _good_img(hl, im, f), bad, "Input buffer im",
                 "exactly 2 dimensions", "has 1 dimensions")


@case
def input_never_set(hl):
    im, f = _img_pipeline(hl)
    return check(hl, lambda: "fresh", lambda: f.realize([4, 3]), "im", "nullptr") + (
        _good_img(hl, im, f)(),)


@case
def input_set_to_non_buffer(hl):
    im, f = _img_pipeline(hl)
    return check(hl, _good_img(hl, im, f), lambda: im.set(_u8(3, 5)))


@case
def input_after_reset(hl):
    im, f = _img_pipeline(hl)

    def bad():
        im.reset()
        f.realize([4, 3])
    return check(hl, _good_img(hl, im, f), bad, "im", "nullptr")


@case
def embedded_buffer_too_small(hl):
    x = hl.Var("x")
    b = buffer(hl, np.arange(4, dtype=np.int32), name="inp")
    f = hl.Func("fo")
    f[x] = b[x + 2] * 3
    return check(hl, lambda: arr(f.realize([2])), lambda: f.realize([3]),
                 "Input buffer inp", "accessed at 4", "max (3)", "dimension 0")


@case
def embedded_buffer_negative_index(hl):
    x = hl.Var("x")
    b = buffer(hl, np.arange(4, dtype=np.int16), name="inp")
    f = hl.Func("fo")
    f[x] = b[x - 1]
    out = hl.Buffer(hl.Int(16), [3])

    def good():
        out.set_min([1])
        f.realize(out)
        return arr(out)

    def bad():
        o = hl.Buffer(hl.Int(16), [3])
        f.realize(o)
    return check(hl, good, bad, "Input buffer inp", "accessed at -1", "before the min (0)")


# ---------------------------------------------------------------------------------
# Params
# ---------------------------------------------------------------------------------
def _param_pipeline(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 5)
    p.set_range(0, 10)
    f = hl.Func("fo")
    f[x] = x * p
    return p, f


@case
def param_above_max(hl):
    p, f = _param_pipeline(hl)

    def good():
        p.set(10)
        return arr(f.realize([3]))

    def bad():
        p.set(20)
        f.realize([3])
    return check(hl, good, bad, "Parameter p", "20", "at most 10")


@case
def param_below_min(hl):
    p, f = _param_pipeline(hl)

    def good():
        p.set(0)
        return arr(f.realize([3]))

    def bad():
        p.set(-1)
        f.realize([3])
    return check(hl, good, bad, "Parameter p", "-1", "at least 0")


@case
def float_param_out_of_range(hl):
    x = hl.Var("x")
    q = hl.Param(hl.Float(32), "fp", 0.5)
    q.set_range(0.0, 1.0)
    f = hl.Func("fo")
    f[x] = hl.f32(x) * q

    def good():
        q.set(0.25)
        return arr(f.realize([3]))

    def bad():
        q.set(1.5)
        f.realize([3])
    return check(hl, good, bad, "Parameter fp", "at most")


@case
def param_without_value(hl):
    x = hl.Var("x")
    q = hl.Param(hl.Int(32), "q")
    f = hl.Func("fo")
    f[x] = x + q
    first = error_key(hl, lambda: f.realize([3]), "Parameter q",
                      "does not have a valid scalar value")
    q.set(2)
    return first, arr(f.realize([3]))


@case
def param_set_lossy_value(hl):
    """The failed set leaves the previous value in place."""
    p, f = _param_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3])), lambda: p.set(1.5),
                 "1.5", "cannot be losslessly converted", "int32")


@case
def param_set_out_of_type_range(hl):
    p, f = _param_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3])), lambda: p.set(2 ** 40),
                 "1099511627776", "cannot be losslessly converted")


@case
def param_set_wrong_python_type(hl):
    p, f = _param_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3])), lambda: p.set("7"))


@case
def duplicate_param_names(hl):
    """Two different Params with the same name in one pipeline."""
    x = hl.Var("x")
    a = hl.Param(hl.Int(32), "k", 1)
    b = hl.Param(hl.Int(32), "k", 2)
    f = hl.Func("fo")
    f[x] = x + a
    g = hl.Func("go")
    g[x] = f[x] + b
    return check(hl, lambda: arr(f.realize([3])), lambda: g.realize([3]),
                 "unique names", "'k'")


@case
def require_violated(hl):
    x = hl.Var("x")
    lim = hl.Param(hl.Int(32), "lim", 10)
    f = hl.Func("fo")
    f[x] = hl.require(x < lim, x * 2, lim)

    def good():
        lim.set(10)
        return arr(f.realize([4]))

    def bad():
        lim.set(2)
        f.realize([4])
    return check(hl, good, bad, "Requirement Failed", "4 2")


# ---------------------------------------------------------------------------------
# ImageParam dimension constraints
# ---------------------------------------------------------------------------------
def _constrained(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Int(32), 2, "im")
    f = hl.Func("fo")
    f[x, y] = im[x + im.dim(0).min(), y + im.dim(1).min()] + 1
    return im, f


def _i32(h, w):
    return np.arange(h * w, dtype=np.int32).reshape(h, w)


@case
def constraint_extent_violated(hl):
    im, f = _constrained(hl)
    im.dim(0).set_extent(4)

    def good():
        im.set(buffer(hl, _i32(3, 4)))
        return arr(f.realize([4, 3]))

    def bad():
        im.set(buffer(hl, _i32(3, 5)))
        f.realize([4, 3])
    return check(hl, good, bad, "Constraint violated", "im.extent.0", "(5)", "4")


@case
def constraint_stride_violated(hl):
    im, f = _constrained(hl)
    im.dim(1).set_stride(4)

    def good():
        im.set(buffer(hl, _i32(3, 4)))
        return arr(f.realize([4, 3]))

    def bad():
        im.set(buffer(hl, _i32(3, 5)))
        f.realize([4, 3])
    return check(hl, good, bad, "Constraint violated", "im.stride.1", "(5)", "4")


@case
def default_stride_constraint_violated(hl):
    """dim(0).stride() must be 1 unless set_stride changes it."""
    im, f = _constrained(hl)

    def good():
        im.set(buffer(hl, _i32(3, 4)))
        return arr(f.realize([4, 3]))

    def bad():
        im.set(buffer(hl, _i32(4, 3)).transposed([1, 0]))
        f.realize([4, 3])
    return check(hl, good, bad, "Constraint violated", "im.stride.0", "(3)", "1")


@case
def constraint_relative_min_violated(hl):
    im, f = _constrained(hl)
    im.dim(1).set_min(im.dim(0).min())

    def run(mins):
        b = buffer(hl, _i32(3, 4))
        b.set_min(mins)
        im.set(b)
        return arr(f.realize([4, 3]))
    return check(hl, lambda: run([2, 2]), lambda: run([2, 3]), "Constraint violated",
                 "im.min.1", "(3)", "im.min.0", "(2)")


@case
def constraint_param_extent_violated(hl):
    im, f = _constrained(hl)
    w = hl.Param(hl.Int(32), "w", 4)
    im.dim(0).set_extent(w)

    def good():
        w.set(4)
        im.set(buffer(hl, _i32(3, 4)))
        return arr(f.realize([4, 3]))

    def bad():
        w.set(5)
        f.realize([4, 3])
    return check(hl, good, bad, "Constraint violated", "im.extent.0", "w", "(5)")


@case
def constraint_min_violated(hl):
    im, f = _constrained(hl)
    im.dim(0).set_min(0)

    def run(mins):
        b = buffer(hl, _i32(3, 4))
        b.set_min(mins)
        im.set(b)
        return arr(f.realize([4, 3]))
    return check(hl, lambda: run([0, 0]), lambda: run([1, 0]), "Constraint violated",
                 "im.min.0", "(1)", "0")


@case
def constrained_min_violated_by_access(hl):
    """Here the reads do not follow the buffer's min (f reads im[x, y] over
    x in [0, 4)), so the out-of-bounds check fires: the access checks come before
    the constraint checks."""
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Int(32), 2, "im")
    f = hl.Func("fo")
    f[x, y] = im[x, y] + 1
    im.dim(0).set_min(0)

    def run(mins):
        b = buffer(hl, _i32(3, 4))
        b.set_min(mins)
        im.set(b)
        return arr(f.realize([4, 3]))
    return check(hl, lambda: run([0, 0]), lambda: run([1, 0]), "Input buffer im",
                 "accessed at 0", "before the min (1)", "dimension 0")


# ---------------------------------------------------------------------------------
# Outputs and realize
# ---------------------------------------------------------------------------------
def _out_pipeline(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("fo")
    f[x, y] = x + y * 10
    return f


@case
def output_wrong_type(hl):
    f = _out_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3, 2])),
                 lambda: f.realize(hl.Buffer(hl.Float(32), [3, 2])),
                 "Output buffer fo", "int32", "float32")


@case
def output_wrong_dimensionality(hl):
    f = _out_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3, 2])),
                 lambda: f.realize(hl.Buffer(hl.Int(32), [3])),
                 "Output buffer fo", "exactly 2 dimensions", "has 1 dimensions")


@case
def realize_wrong_number_of_sizes(hl):
    f = _out_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3, 2])), lambda: f.realize([3]),
                 "fo", "2 dimensions", "1 dimensions")


@case
def realize_negative_size(hl):
    f = _out_pipeline(hl)
    return check(hl, lambda: arr(f.realize([3, 2])), lambda: f.realize([-1, 2]),
                 "Output buffer fo", "dimension 0", "negative", "-1")


@case
def multi_output_too_few_buffers(hl):
    f = _out_pipeline(hl)
    x, y = hl.Var("x"), hl.Var("y")
    g = hl.Func("go")
    g[x, y] = hl.f32(f[x, y]) / 2
    p = hl.Pipeline([f, g])
    return check(hl, lambda: [arr(b) for b in p.realize([3, 2])],
                 lambda: p.realize([hl.Buffer(hl.Int(32), [3, 2])]),
                 "1 output(s)", "2 result(s)")


@case
def multi_output_consumed_output_too_small(hl):
    """g reads f at x + 1: f's buffer must be one column wider than g's."""
    x = hl.Var("x")
    f = hl.Func("fo")
    f[x] = x * 3
    g = hl.Func("go")
    g[x] = f[x] + f[x + 1]
    p = hl.Pipeline([f, g])

    def run(nf):
        bf, bg = hl.Buffer(hl.Int(32), [nf]), hl.Buffer(hl.Int(32), [3])
        p.realize([bf, bg])
        return arr(bf), arr(bg)
    return check(hl, lambda: run(4), lambda: run(3), "Output buffer fo", "accessed at 3",
                 "max (2)", "dimension 0")


# ---------------------------------------------------------------------------------
# Callables
# ---------------------------------------------------------------------------------
def _callable(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    k = hl.Param(hl.Int(32), "k", 3)
    k.set_range(0, 10)
    s = hl.Param(hl.Float(32), "s")
    f = hl.Func("fo")
    f[x, y] = hl.f32(im[x, y]) * s + hl.f32(k)
    c = f.compile_to_callable([im, k, s])
    inp = _u8(3, 4)

    def good():
        out = np.zeros((3, 4), np.float32)
        c(inp, 2, 0.5, out)
        return out
    return c, inp, good


def _out():
    return np.zeros((3, 4), np.float32)


@case
def callable_missing_positional(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5), "Expected exactly 4 positional",
                 "saw 3")


@case
def callable_too_many_positional(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, _out(), _out()),
                 "at most 4 positional", "saw 5")


@case
def callable_no_arguments(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(), "Expected exactly 4 positional", "saw 0")


@case
def callable_missing_keyword(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, fo=_out()), "Argument s",
                 "not specified")


@case
def callable_argument_twice(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, _out(), k=3), "Argument k",
                 "multiple times")


@case
def callable_unknown_keyword(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, _out(), extra=1), "Unknown argument",
                 "extra")


@case
def callable_string_for_scalar(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, "2", 0.5, _out()), "Unable to cast", "str")


@case
def callable_float_for_int_scalar(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2.5, 0.5, _out()), "Unable to cast", "float")


@case
def callable_scalar_out_of_type_range(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2 ** 40, 0.5, _out()), "Unable to cast", "int")


@case
def callable_buffer_for_scalar(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, inp, 0.5, _out()), "Unable to cast", "ndarray")


@case
def callable_none_for_scalar(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, None, 0.5, _out()), "Unable to cast", "NoneType")


@case
def callable_int_for_buffer(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(5, 2, 0.5, _out()), "'int'", "buffer")


@case
def callable_none_for_buffer(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(None, 2, 0.5, _out()), "'NoneType'", "buffer")


@case
def callable_list_for_output(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, _out().tolist()), "'list'", "buffer")


@case
def callable_undefined_buffer(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(hl.Buffer(), 2, 0.5, _out()), "Undefined buffer")


@case
def callable_input_wrong_type(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp.astype(np.int32), 2, 0.5, _out()),
                 "Input buffer im", "uint8", "int32")


@case
def callable_input_wrong_dimensionality(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp[0], 2, 0.5, _out()), "Input buffer im",
                 "exactly 2 dimensions", "has 1 dimensions")


@case
def callable_input_too_small(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, np.zeros((4, 4), np.float32)),
                 "Input buffer im", "accessed at 3", "max (2)", "dimension 1")


@case
def callable_input_not_dense(hl):
    """A Fortran-ordered array has stride 3 in dimension 0."""
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(np.asfortranarray(inp), 2, 0.5, _out()),
                 "Constraint violated", "im.stride.0", "(3)", "1")


@case
def callable_output_wrong_type(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, np.zeros((3, 4), np.float64)),
                 "Output buffer fo", "float32", "float64")


@case
def callable_output_wrong_dimensionality(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 2, 0.5, np.zeros((3, 4, 1), np.float32)),
                 "Output buffer fo", "exactly 2 dimensions", "has 3 dimensions")


@case
def callable_output_read_only(hl):
    c, inp, good = _callable(hl)
    ro = _out()
    ro.setflags(write=False)
    return check(hl, good, lambda: c(inp, 2, 0.5, ro), "read-only")


@case
def callable_param_out_of_range(hl):
    c, inp, good = _callable(hl)
    return check(hl, good, lambda: c(inp, 11, 0.5, _out()), "Parameter k", "11",
                 "at most 10")


@case
def compile_to_callable_missing_argument(hl):
    x = hl.Var("x")
    k = hl.Param(hl.Int(32), "k", 3)
    s = hl.Param(hl.Int(32), "s", 1)
    f = hl.Func("fo")
    f[x] = x * k + s

    def good():
        o = np.zeros(3, np.int32)
        f.compile_to_callable([k, s])(2, 1, o)
        return o
    return check(hl, good, lambda: f.compile_to_callable([k]), "parameter s",
                 "not found in the argument list")


NAMES = sorted(CASES)


def test_enough_cases():
    assert len(CASES) >= 30


@differential()
@pytest.mark.parametrize("name", NAMES)
def test_bad_input(hl, name):
    return CASES[name](hl)


@differential()
def test_check_order(hl):
    """One pipeline violating four run-time checks at once reports them in this
    order, one per realize as each is fixed: input access, shape constraint, Param
    range, require."""
    x = hl.Var("x")
    im = hl.ImageParam(hl.Int(32), 1, "im")
    p = hl.Param(hl.Int(32), "p", 5)
    p.set_range(0, 3)
    im.dim(0).set_extent(4)
    f = hl.Func("fo")
    f[x] = hl.require(x < 2, im[x] + p)
    keys = []
    im.set(buffer(hl, np.zeros(2, np.int32)))
    keys.append(error_key(hl, lambda: f.realize([3]), "Input buffer im", "accessed at 2"))
    im.set(buffer(hl, np.zeros(5, np.int32)))
    keys.append(error_key(hl, lambda: f.realize([3]), "Constraint violated", "im.extent.0"))
    im.set(buffer(hl, np.arange(4, dtype=np.int32)))
    keys.append(error_key(hl, lambda: f.realize([3]), "Parameter p", "at most 3"))
    p.set(1)
    keys.append(error_key(hl, lambda: f.realize([3]), "Requirement Failed"))
    return keys, arr(f.realize([2]))
