"""Scalar Params and ImageParams: constructors, values, ranges, estimates, names,
ImageParam calls, shape accessors and dimension constraints (issue 5, item 1).

Run-time failures of these (out-of-range values, violated constraints, ...) are in
test_bad_input.py; this file checks definitions and successful runs, plus the
errors raised at definition time."""
import re

import numpy as np
import pytest

from .harness import differential, htype, npdtype, buffer
from .input_helpers import arr, error_key

# ---------------------------------------------------------------------------------
# Param
# ---------------------------------------------------------------------------------
DEFAULTS = {"i8": -7, "i16": 1234, "i32": -123456, "i64": -(2 ** 40), "u8": 200,
            "u16": 65535, "u32": 4000000000, "u64": 2 ** 63 + 5, "f32": 0.1,
            "f64": -2.75e100, "bool": True}


@differential()
def test_param_constructor_forms_and_values(hl):
    """Param(type, name, value) and Param(type, value) for every type; the value is
    read back through a 0-d Func (one Tuple-valued pipeline)."""
    ps = []
    out = {}
    for i, t in enumerate(list(DEFAULTS)):
        ty = htype(hl, t)
        v = DEFAULTS[t]
        p = hl.Param(ty, "p_" + t, v) if i % 2 == 0 else hl.Param(ty, v)
        out["type_" + t] = p.type()
        ps.append(p)
    f = hl.Func("param_values")
    f[()] = hl.Tuple([hl.Expr(p) for p in ps])
    bufs = f.realize([])
    for t, b in zip(DEFAULTS, bufs):
        out["value_" + t] = arr(b)
    return out


@differential()
def test_param_names(hl):
    """An explicit name is kept verbatim; unnamed Params (and ImageParams) get unique
    names made of 'p' and a counter (the counter is global: only the pattern and
    uniqueness are compared)."""
    a = hl.Param(hl.Int(32), "alpha", 3)
    b = hl.Param(hl.Float(32), "beta")
    u1, u2 = hl.Param(hl.Int(32)), hl.Param(hl.UInt(8), 4)
    im = hl.ImageParam(hl.UInt(8), 2)
    auto = [u1.name(), u2.name(), im.name()]
    return {
        "explicit": [a.name(), b.name()],
        "auto_pattern": [bool(re.fullmatch(r"p\d+", n)) for n in auto],
        "auto_unique": len(set(auto)) == 3,
        "types": [a.type(), b.type(), u1.type(), u2.type()],
    }


@differential()
def test_param_set_changes_result_without_redefinition(hl):
    """p.set(v) between realizations of the same (compiled) pipeline."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "offset", 1)
    s = hl.Param(hl.Float(32), "scale", 0.5)
    f = hl.Func("f")
    f[x] = hl.f32(x + p) * s
    out = [arr(f.realize([5]))]
    for pv, sv in [(10, 2.0), (-3, -0.25), (0, 1e30)]:
        p.set(pv)
        s.set(sv)
        out.append(arr(f.realize([5])))
    return out


# value -> what both the constructor and set() do with it, per type.  Integers in
# the signed-or-unsigned range of the bit width are accepted and wrapped; others
# and non-integral floats raise HalideError ("cannot be losslessly converted").
CONVERSIONS = [
    ("i8", 200), ("i8", -128), ("i8", 256), ("i8", -129), ("u8", -1), ("u8", 255),
    ("u8", -200), ("u8", 256), ("i16", 40000), ("i32", 2 ** 31), ("i32", 2 ** 32 - 1),
    ("i32", 2 ** 40), ("u32", -1), ("u64", -1), ("u64", 2 ** 64 - 1),
    ("i64", 2 ** 63), ("i64", -(2 ** 63)), ("i32", 1.5), ("i32", 2.0), ("i8", True),
    ("f32", 1), ("f32", 0.1), ("f32", 2 ** 40), ("f32", 1e300), ("f64", 3),
    ("bool", 1), ("bool", 0), ("bool", 2), ("f32", True),
]


@differential()
@pytest.mark.parametrize("how", ["constructor", "set"])
def test_param_value_conversion(hl, how):
    out = {}
    accepted = []
    for i, (t, v) in enumerate(CONVERSIONS):
        key = "%s<-%r" % (t, v)
        name = "conv%d" % i  # Params of one pipeline need distinct names

        def make():
            if how == "constructor":
                return hl.Param(htype(hl, t), name, v)
            p = hl.Param(htype(hl, t), name)
            p.set(v)
            return p

        try:
            accepted.append((key, make()))
        except Exception:  # noqa: BLE001
            out[key] = error_key(hl, make, "cannot be losslessly converted")
    f = hl.Func("conv_f")  # the accepted values, read back in one pipeline
    f[()] = hl.Tuple([hl.Expr(p) for _, p in accepted])
    for (key, _), b in zip(accepted, f.realize([])):
        out[key] = arr(b)
    return out


@differential(expect_error=True)
def test_param_set_string_is_type_error(hl):
    p = hl.Param(hl.Int(32), "p", 1)
    p.set("3")


@differential()
def test_param_range_accessors(hl):
    """min_value()/max_value() are undefined Exprs until set; set_range,
    set_min_value, set_max_value store constants converted to the Param's type;
    an undefined bound leaves that side open."""
    p = hl.Param(hl.Int(32), "p", 5)
    out = {"unset": [p.min_value().defined(), p.max_value().defined()]}
    p.set_range(0, 10)
    out["range"] = [p.min_value().type(), p.max_value().type(),
                    hl.evaluate(p.min_value()), hl.evaluate(p.max_value())]
    q = hl.Param(hl.Float(64), "q", 0.5)
    q.set_min_value(-1.5)
    out["min_only"] = [q.min_value().defined(), q.max_value().defined(),
                       q.min_value().type(), hl.evaluate(q.min_value())]
    r = hl.Param(hl.Int(16), "r", 0)
    r.set_range(hl.Expr(), 7)
    out["open_below"] = [r.min_value().defined(), r.max_value().type(),
                         hl.evaluate(r.max_value())]
    return out


@differential()
def test_param_in_range_runs_and_bounds_are_inclusive(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 5)
    p.set_range(0, 10)
    q = hl.Param(hl.Float(32), "q", 0.5)
    q.set_min_value(0.0)
    r = hl.Param(hl.UInt(8), "r", 3)
    r.set_max_value(9)
    f = hl.Func("f")
    f[x] = hl.f32(x * p) + q + hl.f32(r)
    out = []
    for pv, qv, rv in [(5, 0.5, 3), (0, 0.0, 9), (10, 1e9, 0)]:
        p.set(pv)
        q.set(qv)
        r.set(rv)
        out.append(arr(f.realize([4])))
    return out


@differential()
def test_param_range_must_be_constant(hl):
    """A bound that is not a constant raises HalideError when it is set."""
    p = hl.Param(hl.Int(32), "p", 3)
    lo = hl.Param(hl.Int(32), "lo", 0)
    x = hl.Var("x")
    return [
        error_key(hl, lambda: p.set_min_value(lo), "must be constant"),
        error_key(hl, lambda: p.set_max_value(lo * 2 + 1), "must be constant"),
        error_key(hl, lambda: p.set_range(0, x), "must be constant"),
    ]


@differential()
def test_param_estimate_does_not_change_value(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 3)
    p.set_estimate(100)
    q = hl.Param(hl.Float(32), "q", 0.25)
    q.set_estimate(8.0)
    f = hl.Func("f")
    f[x] = hl.f32(x + p) * q
    bad = error_key(hl, lambda: hl.Param(hl.UInt(8), "e", 1).set_estimate(700),
                    "cannot be losslessly converted")
    return arr(f.realize([4])), bad


@differential()
def test_param_arithmetic_types(hl):
    """Params take part in expressions like Exprs of their type (Python ints adopt
    the Param's type, Python floats make float32)."""
    p = hl.Param(hl.Int(16), "p", 5)
    q = hl.Param(hl.Float(32), "q", 1.5)
    exprs = [p + 1, 1 + p, p * 2.5, -p, ~p, p < 3, p + q, p / 2, p // 2, p % 3,
             p & 3, 7 - p, hl.Expr(p), hl.i32(p), p == p]
    f = hl.Func("arith")
    f[()] = hl.Tuple(exprs)
    vals = [arr(b) for b in f.realize([])]
    return [e.type() for e in exprs], vals


@differential()
def test_param_undefined_value_errors_only_when_run(hl):
    """Param(type, name) has no value: defining with it is fine, realizing raises."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "novalue")
    f = hl.Func("f")
    f[x] = x + p
    first = error_key(hl, lambda: f.realize([3]), "novalue", "does not have a valid scalar value")
    p.set(4)
    return first, arr(f.realize([3]))


# ---------------------------------------------------------------------------------
# ImageParam
# ---------------------------------------------------------------------------------
@differential()
def test_imageparam_basics(hl):
    im = hl.ImageParam(hl.UInt(16), 3, "img")
    auto = hl.ImageParam(hl.Float(32), 1)
    empty = hl.ImageParam()
    return {
        "name": im.name(), "type": im.type(), "dims": im.dimensions(),
        "defined": [im.defined(), auto.defined(), empty.defined()],
        "auto_dims": auto.dimensions(), "auto_type": auto.type(),
        "empty_name": error_key(hl, empty.name, "undefined"),
        "get_before_set": im.get().defined(),
    }


@differential()
def test_imageparam_set_get_reset(hl):
    im = hl.ImageParam(hl.Int(16), 1, "im")
    b = buffer(hl, np.array([5, -6, 7], np.int16))
    im.set(b)
    got = im.get()
    out = {"defined": got.defined(), "data": arr(got), "type": got.type()}
    im.reset()
    out["after_reset"] = im.get().defined()
    return out


@differential()
@pytest.mark.parametrize("t", ["u8", "i16", "f32", "f64"])
def test_imageparam_call_and_realize(hl, t):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(htype(hl, t), 2, "im")
    f = hl.Func("f")
    f[x, y] = hl.f64(im[x, y]) * 2 + hl.f64(im[x + 1, y]) - hl.f64(im[0, y])
    data = (np.arange(20).reshape(4, 5) * 3 - 7).astype(npdtype(t)) \
        if t != "u8" else (np.arange(20).reshape(4, 5) * 11).astype(np.uint8)
    im.set(buffer(hl, data))
    return arr(f.realize([4, 4]))


@differential()
def test_imageparam_call_forms(hl):
    """Calls with Vars, Exprs, constants, a list of Exprs; 1-D and 3-D params."""
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    one = hl.ImageParam(hl.Int(32), 1, "one")
    three = hl.ImageParam(hl.UInt(8), 3, "three")
    f = hl.Func("f")
    f[x, y] = (one[x] + one[2 * y] + hl.i32(three[x, y, 1]) + hl.i32(three[[x, y, 0]])
               + hl.i32(three[1, 2, 2]) + one[hl.Expr(3)])
    one.set(buffer(hl, np.arange(10, dtype=np.int32) * 7))
    three.set(buffer(hl, (np.arange(60) % 251).astype(np.uint8).reshape(3, 4, 5)))
    return arr(f.realize([5, 4]))


@differential()
def test_imageparam_call_errors_at_definition(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    return [
        error_key(hl, lambda: im[x], "1 arguments", "defined with 2"),
        error_key(hl, lambda: im[x, y, x], "3 arguments", "defined with 2"),
        error_key(hl, lambda: im[hl.f32(x), y], "Implicit cast from float32"),
        error_key(hl, lambda: im.channels(), "fewer than three dimensions"),
        error_key(hl, lambda: im.dim(2), "dimension 2", "2-dimensional"),
        error_key(hl, lambda: im.dim(-1), "dimension -1"),
    ]


@differential()
def test_imageparam_shape_accessors(hl):
    """width/height/channels/left/right/top/bottom and dim(i).min/extent/stride/max
    evaluate to the bound buffer's shape (mins and strides included)."""
    im = hl.ImageParam(hl.UInt(8), 3, "im")
    exprs = [im.width(), im.height(), im.channels(), im.left(), im.right(), im.top(),
             im.bottom(), im.dim(2).min(), im.dim(2).stride(), im.dim(1).stride(),
             im.dim(0).stride(), im.dim(1).max(), im.dim(2).extent()]
    f = hl.Func("shape")
    f[()] = hl.Tuple(exprs)
    out = {"types": [e.type() for e in exprs]}
    for i, (shape, mins) in enumerate([((3, 5, 4), [-1, 2, 0]), ((2, 3, 7), [4, 0, -3])]):
        b = buffer(hl, np.zeros(shape, np.uint8))
        b.set_min(mins)
        im.set(b)
        out[i] = [arr(r) for r in f.realize([])]
    return out


@differential()
def test_imageparam_input_with_nonzero_min(hl):
    """The Func reads the input at its own coordinates: a buffer whose min is (2, -1)
    covers x in [2, 6), y in [-1, 2)."""
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Int(32), 2, "im")
    f = hl.Func("f")
    f[x, y] = im[x, y] * 10 + im[im.left(), im.top()]
    b = buffer(hl, np.arange(12, dtype=np.int32).reshape(3, 4))
    b.set_min([2, -1])
    im.set(b)
    out = hl.Buffer(hl.Int(32), [3, 2])
    out.set_min([3, 0])
    f.realize(out)
    return arr(out)


@differential()
def test_imageparam_same_pipeline_many_shapes(hl):
    """One definition realized with inputs of different shapes: shapes are checked at
    run time, not baked in."""
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Float(32), 2, "im")
    f = hl.Func("f")
    f[x, y] = im[x, y] + im[im.width() - 1 - x, im.height() - 1 - y]
    out = []
    for h, w in [(2, 3), (5, 4), (1, 1), (3, 7)]:
        im.set(buffer(hl, np.arange(h * w, dtype=np.float32).reshape(h, w) / 4))
        out.append(arr(f.realize([w, h])))
    return out


@differential()
def test_imageparam_set_wrong_type_raises_at_set(hl):
    """set() checks the element type immediately (HalideError naming both types);
    the dimensionality is only checked when the pipeline runs."""
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    f = hl.Func("f")
    f[x, y] = im[x, y]
    k1 = error_key(hl, lambda: im.set(hl.Buffer(hl.Int(32), [3, 3])), "im", "uint8", "int32")
    im.set(hl.Buffer(hl.UInt(8), [3]))  # accepted here
    k2 = error_key(hl, lambda: f.realize([3, 3]), "im", "exactly 2 dimensions", "has 1 dimensions")
    k3 = error_key(hl, lambda: im.set(np.zeros((3, 3), np.uint8)))
    im.set(buffer(hl, np.full((3, 3), 9, np.uint8)))
    return k1, k2, k3, arr(f.realize([3, 3]))


# ---------------------------------------------------------------------------------
# Dimension constraints
# ---------------------------------------------------------------------------------
def _constrained(hl, how):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.Int(32), 2, "im")
    f = hl.Func("f")
    f[x, y] = im[x + im.dim(0).min(), y + im.dim(1).min()] + 1
    d0, d1 = im.dim(0), im.dim(1)
    if how == "extent":
        d0.set_extent(4)
    elif how == "min":
        d0.set_min(0).dim(1).set_min(0)  # set_* return the Dimension: chains
    elif how == "bounds":
        d0.set_bounds(0, 4)
        d1.set_bounds(0, 3)
    elif how == "stride1":
        d1.set_stride(4)
    elif how == "stride_expr":
        d1.set_stride(im.width())
    elif how == "relative":
        d1.set_min(d0.min())
    elif how == "param":
        d0.set_extent(hl.Param(hl.Int(32), "w", 4))
    elif how == "estimate":
        d0.set_estimate(0, 100)
        d1.set_estimate(0, 100)
    return im, f


@differential()
@pytest.mark.parametrize("how", ["extent", "min", "bounds", "stride1", "stride_expr",
                                 "relative", "param", "estimate"])
def test_dimension_constraints_satisfied(hl, how):
    """A buffer that satisfies the constraint runs normally (the violations are in
    test_bad_input.py)."""
    im, f = _constrained(hl, how)
    b = buffer(hl, np.arange(12, dtype=np.int32).reshape(3, 4))
    if how == "relative":
        b.set_min([2, 2])
    im.set(b)
    return arr(f.realize([4, 3]))


@differential()
def test_default_stride_constraint_and_removing_it(hl):
    """dim(0).stride() is constrained to 1 by default: a transposed buffer is
    rejected; set_stride(hl.Expr()) removes the constraint and the same buffer then
    works (read through its strides)."""
    x, y = hl.Var("x"), hl.Var("y")
    t = np.arange(12, dtype=np.int32).reshape(4, 3)
    src = buffer(hl, t)                          # 3 x 4, dim 0 dense
    tb = src.transposed([1, 0])                  # 4 x 3, dim 0 stride 3
    out = {"strides": [tb.dim(0).stride(), tb.dim(1).stride()]}
    im = hl.ImageParam(hl.Int(32), 2, "im")
    f = hl.Func("f")
    f[x, y] = im[x, y] * 2
    im.set(tb)
    out["default"] = error_key(hl, lambda: f.realize([4, 3]), "Constraint violated",
                               "im.stride.0", "(3)", "== 1")
    im2 = hl.ImageParam(hl.Int(32), 2, "im2")
    im2.dim(0).set_stride(hl.Expr())
    g = hl.Func("g")
    g[x, y] = im2[x, y] * 2
    im2.set(tb)
    out["free"] = arr(g.realize([4, 3]))
    return out


@differential()
def test_dimension_accessor_exprs(hl):
    """The shape accessors are Exprs of type int32 (usable in definitions)."""
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    d = im.dim(1)
    return [e.type() for e in [d.min(), d.extent(), d.stride(), d.max(), im.width(),
                               im.left(), im.bottom()]]


@differential()
def test_param_constructor_keywords(hl):
    ps = [hl.Param(hl.UInt(8), name="offset"), hl.Param(hl.Int(32), value=7),
          hl.Param(type=hl.Float(32), name="r", value=1.5), hl.Param(hl.Int(16), "s", 3)]
    f = hl.Func("f")
    f[()] = hl.f32(ps[1]) + ps[2] + hl.f32(ps[3])
    return [ps[0].name(), ps[2].name(), f.realize([])]


@differential(expect_error=True)
def test_param_value_keyword_of_wrong_type(hl):
    hl.Param(hl.Int(32), value="x")


@differential(ulp=1)  # Halide's simplifier folds (x * c0) * c1 into x * (c0 * c1)
def test_f64_of_a_python_float_keeps_double_precision(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * hl.f64(0.123456789012345678) * (hl.f64(0.1) + hl.f64(0.2))
    return f.realize([10])


@differential()
def test_argument_estimates(hl):
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 3)
    p.set_range(0, 10)
    p.set_estimate(5)
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    im.set_estimates([(0, 100), (0, 50)])
    f = hl.Func("f")
    f[x] = im[x, 0] + p
    out = []
    for a in f.infer_arguments():
        e = a.argument_estimates
        out.append((a.name, repr(e.scalar_def), repr(e.scalar_min), repr(e.scalar_max),
                    repr(e.scalar_estimate),
                    [(repr(r.min), repr(r.extent)) for r in e.buffer_estimates]))
    empty = hl.ArgumentEstimates()
    return out, repr(empty.scalar_def), len(empty.buffer_estimates)


# ---------------------------------------------------------------------------------
# Parameter: default values, host alignment, memory type, arguments
# ---------------------------------------------------------------------------------
@differential()
def test_parameter_default_value(hl):
    p = hl.Parameter(hl.Int(32), False, 0, "p")
    out = [repr(p.default_value().defined())]
    p.set_default_value(hl.Expr(3))
    out.append(str(p.default_value()))
    # A default is not a value: reading the scalar still fails.
    out.append(error_key(hl, p.scalar_expr, "does not have a valid scalar value"))
    q = hl.Parameter(hl.Float(32), False, 0, "q")
    out.append(error_key(hl, lambda: q.set_default_value(hl.Expr(3)),
                         "Can't set parameter q of type float32 to have default value 3"))
    # The estimates of a scalar carry the default, not the current value.
    r = hl.Param(hl.Int(32), "r", 7)
    est = r.parameter().get_argument_estimates()
    out.append((est.scalar_def.defined(), len(est.buffer_estimates)))
    r.parameter().set_default_value(hl.Expr(9))
    out.append(str(r.parameter().get_argument_estimates().scalar_def))
    out.append(error_key(hl, hl.Parameter(hl.Int(32), True, 2, "b").scalar_expr, "is a Buffer"))
    return out


@differential()
def test_parameter_to_argument_and_estimates(hl):
    im = hl.ImageParam(hl.UInt(16), 2, "im")
    im.dim(0).set_estimate(0, 10)
    a = im.parameter()._to_argument()
    e = im.parameter().get_argument_estimates()
    p = hl.Param(hl.Float(32), "p", 1.5)
    p.set_range(0.0, 2.0)
    b = p.parameter()._to_argument()
    return ((a.name, a.kind.name, a.dimensions, str(a.type)),
            [(str(r.min), str(r.extent)) for r in e.buffer_estimates],
            (b.name, b.kind.name, b.dimensions, str(b.type),
             str(b.argument_estimates.scalar_min), str(b.argument_estimates.scalar_max)))


@differential()
def test_parameter_buffer_constraints_is_halides_type_error(hl):
    p = hl.ImageParam(hl.UInt(8), 1, "im").parameter()
    with pytest.raises(TypeError):
        p.buffer_constraints()
    return True


@differential()
def test_memory_type_of_buffer_parameters(hl):
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    out = [im.parameter().memory_type().name]
    assert im.store_in(hl.MemoryType.Stack) is not None
    out.append(im.parameter().memory_type().name)
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x
    f.output_buffer().store_in(hl.MemoryType.Heap)
    out.append(f.output_buffer().parameter().memory_type().name)
    # A memory type changes nothing on a CPU: the pipeline runs.
    g = hl.Func("g")
    g[x] = hl.i32(im[x, 0]) * 2
    im.set(hl.Buffer(np.arange(12, dtype=np.uint8).reshape(3, 4)))
    return out, arr(g.realize([4]))


def _offset_view(n, alignment, misaligned):
    """A uint8 array of n elements whose data pointer is a multiple of
    `alignment` (or one byte past one)."""
    raw = np.zeros(n + 2 * alignment, dtype=np.uint8)
    start = (-raw.ctypes.data) % alignment + (1 if misaligned else 0)
    view = raw[start:start + n]
    view[:] = np.arange(n, dtype=np.uint8)
    return view


@differential()
@pytest.mark.parametrize("misaligned", [False, True])
def test_input_host_alignment_is_checked(hl, misaligned):
    im = hl.ImageParam(hl.UInt(8), 1, "im")
    out = [im.host_alignment()]
    im.set_host_alignment(64)
    out.append((im.host_alignment(), im.parameter().host_alignment()))
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = im[x] + 1
    im.set(hl.Buffer(_offset_view(40, 64, misaligned)))
    out.append(error_key(hl, lambda: arr(f.realize([40])).tolist(),
                         "The host pointer of im is not aligned to a 64 bytes boundary"))
    if not misaligned:
        out.append(arr(f.realize([40])))
    return out


@differential()
@pytest.mark.parametrize("misaligned", [False, True])
def test_output_host_alignment_is_checked(hl, misaligned):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.u8(x * 3)
    assert f.output_buffer().host_alignment() == 1
    f.output_buffer().set_host_alignment(32)
    view = _offset_view(20, 32, misaligned)
    out = hl.Buffer(view)
    res = error_key(hl, lambda: f.realize(out), "is not aligned to a 32 bytes boundary")
    return res, view.copy() if not misaligned else None
