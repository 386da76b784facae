"""hl.Pipeline (single and multi-output), compile_jit, compile_to_callable and
calling the Callable (issue 5, item 3).  Misuse of a Callable (missing / extra /
wrongly typed arguments) is in test_bad_input.py."""
import array

import numpy as np
import pytest

from .harness import differential, buffer
from .input_helpers import arr, error_key


def _two_outputs(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = x * 10 + y
    g = hl.Func("g")
    g[x, y] = hl.f32(f[x, y]) * 0.5 + hl.f32(f[x + 1, y])
    return f, g


# ---------------------------------------------------------------------------------
# Pipeline
# ---------------------------------------------------------------------------------
@differential()
def test_pipeline_single_output(hl):
    """Pipeline(f).realize(sizes) returns a Buffer, like f.realize."""
    f, g = _two_outputs(hl)
    p = hl.Pipeline(g)
    r = p.realize([4, 3])
    return {"is_buffer": isinstance(r, hl.Buffer), "value": arr(r),
            "outputs": [o.name().split("$")[0] for o in p.outputs()], "defined": p.defined()}


@differential()
def test_pipeline_multi_output_returns_tuple(hl):
    """Pipeline([f, g]).realize(sizes) returns a Python tuple of Buffers, one per
    output, in order; an output that another output consumes is computed once and
    stored (its values are the same either way)."""
    f, g = _two_outputs(hl)
    p = hl.Pipeline([f, g])
    r = p.realize([4, 3])
    return {"kind": type(r).__name__, "n": len(r), "values": [arr(b) for b in r],
            "outputs": [o.name().split("$")[0] for o in p.outputs()]}


@differential()
def test_pipeline_multi_output_into_buffers(hl):
    """realize([buf_f, buf_g]) writes into the given Buffers (returns None), also
    with non-zero mins.  Output buffers may differ in size, but an output that
    another output reads must cover what is read from it (g reads f at x + 1: f's
    buffer is one column wider; with one column less it raises, see
    test_bad_input.py)."""
    f, g = _two_outputs(hl)
    p = hl.Pipeline([f, g])
    bf = hl.Buffer(hl.Int(32), [4, 2])
    bg = hl.Buffer(hl.Float(32), [3, 2])
    bf.set_min([-1, 2])
    bg.set_min([-1, 2])
    ret = p.realize([bf, bg])
    return ret, arr(bf), arr(bg)


@differential()
def test_pipeline_tuple_output_flattened(hl):
    """A Tuple-valued output contributes one Buffer per element, in place."""
    x = hl.Var("x")
    t = hl.Func("t")
    t[x] = hl.Tuple([x, hl.f64(x) / 2])
    g = hl.Func("g")
    g[x] = x * 3
    r1 = hl.Pipeline([t, g]).realize([3])
    r2 = hl.Pipeline([g, t]).realize([3])
    return [arr(b) for b in r1], [arr(b) for b in r2]


@differential()
def test_pipeline_zero_dimensional(hl):
    s = hl.Func("s")
    s[()] = hl.u8(200) + 100
    return arr(hl.Pipeline(s).realize([])), arr(hl.Pipeline(s).realize())


@differential()
def test_pipeline_errors(hl):
    f, g = _two_outputs(hl)
    x = hl.Var("x")
    h = hl.Func("h")
    h[x] = x
    p = hl.Pipeline([f, g])
    bf = hl.Buffer(hl.Int(32), [4, 2])
    bg = hl.Buffer(hl.Float(32), [3, 2])
    return {
        "undefined": error_key(hl, lambda: hl.Pipeline().realize([3]), "undefined"),
        "undefined_defined": hl.Pipeline().defined(),
        "dims_mismatch": error_key(hl, lambda: hl.Pipeline([f, h]).realize([3, 2]),
                                   "h", "1 dimensions", "2 dimensions"),
        "wrong_sizes": error_key(hl, lambda: p.realize([3]), "2 dimensions",
                                 "1 dimensions"),
        "too_few_buffers": error_key(hl, lambda: p.realize([bf]), "1 output(s)",
                                     "2 result(s)"),
        "swapped_buffers": error_key(hl, lambda: p.realize([bg, bf]), "f", "int32",
                                     "float32"),
        "then_ok": [p.realize([bf, bg]), arr(bf), arr(bg)],
    }


@differential()
def test_pipeline_compile_jit_and_params(hl):
    """compile_jit() ahead of realize; Param values are read at each realize."""
    x = hl.Var("x")
    k = hl.Param(hl.Int(32), "k", 2)
    im = hl.ImageParam(hl.Int(16), 1, "im")
    f = hl.Func("f")
    f[x] = hl.i32(im[x]) * k
    p = hl.Pipeline(f)
    p.compile_jit()
    p.compile_jit()  # again: harmless
    out = []
    for kv, data in [(2, [1, 2, 3]), (-5, [7, 8, 9, 10])]:
        k.set(kv)
        im.set(buffer(hl, np.array(data, np.int16)))
        out.append(arr(p.realize([len(data)])))
    p.compile_jit(hl.get_jit_target_from_environment())
    out.append(arr(p.realize([4])))
    return out


@differential()
def test_infer_arguments(hl):
    """Pipeline.infer_arguments(): buffers first, then scalars, each group sorted by
    name; Argument has name, kind, dimensions and type."""
    x = hl.Var("x")
    z = hl.Param(hl.Int(32), "zeta", 1)
    a = hl.Param(hl.Float(32), "alpha", 1)
    im = hl.ImageParam(hl.UInt(8), 1, "mid")
    bb = hl.ImageParam(hl.UInt(16), 2, "beta")
    f = hl.Func("f")
    f[x] = hl.f32(im[x]) * a + hl.f32(z) + hl.f32(bb[x, 0])
    args = hl.Pipeline(f).infer_arguments()
    kinds = {hl.ArgumentKind.InputScalar: "scalar", hl.ArgumentKind.InputBuffer: "buffer"}
    return [(q.name, kinds.get(q.kind, "other"), q.dimensions, q.type) for q in args]


@differential()
@pytest.mark.parametrize("owner", ["pipeline", "func"])
def test_infer_arguments_feed_compile_to_callable_and_lowered_stmt(hl, owner, tmp_path):
    """The Arguments infer_arguments() gives are an argument list for
    compile_to_callable and compile_to_lowered_stmt, as Params and
    ImageParams are (Halide's signatures take Arguments)."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p")
    im = hl.ImageParam(hl.Int(32), 1, "im")
    f = hl.Func("f")
    f[x] = im[x] * 3 + p
    target = hl.Pipeline(f) if owner == "pipeline" else f
    args = target.infer_arguments()
    stmt = tmp_path / "f.stmt"
    target.compile_to_lowered_stmt(str(stmt), args, hl.StmtOutputFormat.Text)
    call = target.compile_to_callable(args)
    inp = hl.Buffer(np.arange(5, dtype=np.int32))
    out = hl.Buffer(hl.Int(32), [5])
    call(inp, 7, out)
    return arr(out), "produce f" in stmt.read_text()


# ---------------------------------------------------------------------------------
# Callable
# ---------------------------------------------------------------------------------
def _callable_pipeline(hl):
    x, y = hl.Var("x"), hl.Var("y")
    im = hl.ImageParam(hl.UInt(8), 2, "im")
    k = hl.Param(hl.Int(32), "k", 3)
    s = hl.Param(hl.Float(32), "s")
    f = hl.Func("f")
    f[x, y] = hl.f32(im[x, y]) * s + hl.f32(k)
    return f, im, k, s


INP = np.arange(12, dtype=np.uint8).reshape(3, 4)


@differential()
@pytest.mark.parametrize("style", ["positional", "keyword", "mixed", "keyword_reordered"])
def test_callable_argument_styles(hl, style):
    """Inputs in the order given to compile_to_callable, then the outputs; any of
    them by keyword (the Param / ImageParam / output Func name)."""
    f, im, k, s = _callable_pipeline(hl)
    c = f.compile_to_callable([im, k, s])
    out = np.zeros((3, 4), np.float32)
    if style == "positional":
        ret = c(INP, 2, 0.5, out)
    elif style == "keyword":
        ret = c(im=INP, k=2, s=0.5, f=out)
    elif style == "mixed":
        ret = c(INP, 2, s=0.5, f=out)
    else:
        ret = c(f=out, s=0.5, im=INP, k=2)
    return ret, out


@differential()
def test_callable_argument_order_is_the_given_order(hl):
    """The positional order is the list passed to compile_to_callable; arguments
    the pipeline does not use may be listed too."""
    f, im, k, s = _callable_pipeline(hl)
    unused = hl.Param(hl.Int(32), "unused", 0)
    c = f.compile_to_callable([s, unused, k, im])
    out = np.zeros((3, 4), np.float32)
    c(0.25, 99, 1, INP, out)
    return out


@differential()
def test_callable_ignores_param_stored_values(hl):
    """A Callable takes every scalar explicitly: values set on the Params are neither
    used nor changed by the call (and realize still uses them)."""
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p", 5)
    h = hl.Func("h")
    h[x] = x + p
    c = h.compile_to_callable([p])
    o = np.zeros(3, np.int32)
    c(100, o)
    first = o.copy()
    p.set(-1)
    c(7, o)
    return first, o, arr(h.realize([3]))


@differential()
@pytest.mark.parametrize("kind", ["numpy", "hl_buffer", "memoryview", "readonly_input",
                                  "reversed_rows"])
def test_callable_buffer_kinds(hl, kind):
    """Any buffer-protocol object is accepted for inputs and outputs (NumPy's axis
    order is reversed, as for hl.Buffer(ndarray)).  Rows in reverse order (negative
    stride in dimension 1) are fine; dimension 0 must be dense."""
    f, im, k, s = _callable_pipeline(hl)
    c = f.compile_to_callable([im, k, s])
    if kind == "numpy":
        out = np.zeros((3, 4), np.float32)
        c(INP, 1, 1.5, out)
        return out
    if kind == "hl_buffer":
        out = hl.Buffer(hl.Float(32), [4, 3])
        c(buffer(hl, INP), 1, 1.5, out)
        return out
    if kind == "memoryview":
        src = array.array("B", INP.ravel().tolist())
        dst = array.array("f", [0.0] * 12)
        c(memoryview(src).cast("B", [3, 4]), 1, 1.5, memoryview(dst).cast("B").cast("f", [3, 4]))
        return list(dst)
    if kind == "readonly_input":
        ro = INP.copy()
        ro.setflags(write=False)
        out = np.zeros((3, 4), np.float32)
        c(ro, 1, 1.5, out)
        return out
    out = np.zeros((3, 4), np.float32)
    c(INP[::-1], 1, 1.5, out[::-1])
    return out


@differential()
def test_callable_scalar_kinds(hl):
    """Scalars: Python int/float/bool, NumPy scalars and 0-d arrays; ints are accepted
    for float Params."""
    f, im, k, s = _callable_pipeline(hl)
    c = f.compile_to_callable([im, k, s])
    res = []
    for kv, sv in [(2, 3), (True, 0.5), (np.int32(4), np.float32(0.25)),
                   (np.int64(-3), np.float64(2.0)), (np.uint8(9), False),
                   (np.array(6), np.array(1.5))]:
        out = np.zeros((3, 4), np.float32)
        c(INP, kv, sv, out)
        res.append(out)
    return res


@differential()
def test_callable_nonzero_min_and_reuse(hl):
    """hl.Buffer inputs / outputs with non-zero mins; one Callable called with several
    shapes."""
    x = hl.Var("x")
    im = hl.ImageParam(hl.Int(16), 1, "im")
    k = hl.Param(hl.Int(32), "k", 1)
    a = hl.Func("a")
    a[x] = hl.i16(im[x] + k)
    c = a.compile_to_callable([im, k])
    hb = buffer(hl, np.array([10, 20, 30, 40], np.int16))
    hb.set_min([-1])
    res = []
    for omin, n in [(0, 3), (-1, 4), (1, 2)]:
        o = hl.Buffer(hl.Int(16), [n])
        o.set_min([omin])
        c(hb, 5, o)
        res.append(arr(o))
    for n in [1, 5, 2]:
        i = np.arange(n, dtype=np.int16) * 3
        o = np.zeros(n, np.int16)
        c(i, n, o)
        res.append(o)
    return res


@differential()
def test_callable_multi_output(hl):
    """A Pipeline's Callable takes one output per output Func (Tuple elements
    separately), positionally or (for non-Tuple outputs) by name."""
    x = hl.Var("x")
    k = hl.Param(hl.Int(32), "k", 1)
    a = hl.Func("a")
    a[x] = x + k
    b = hl.Func("b")
    b[x] = hl.f64(a[x]) / 2
    c = hl.Pipeline([a, b]).compile_to_callable([k])
    oa, ob = np.zeros(3, np.int32), np.zeros(3, np.float64)
    c(5, oa, ob)
    res = [oa.copy(), ob.copy()]
    c(b=ob, a=oa, k=7)
    res += [oa.copy(), ob.copy()]
    t = hl.Func("t")
    t[x] = hl.Tuple([x * 2, hl.f32(x) + 0.5])
    ct = hl.Pipeline([a, t]).compile_to_callable([k])
    o1, o2, o3 = np.zeros(3, np.int32), np.zeros(3, np.int32), np.zeros(3, np.float32)
    ct(-1, o1, o2, o3)
    return res + [o1, o2, o3]


@differential()
def test_callable_zero_dimensional_output(hl):
    k = hl.Param(hl.Int(32), "k", 1)
    s = hl.Func("s")
    s[()] = hl.u8(k * 3)
    c = s.compile_to_callable([k])
    o0 = np.zeros((), np.uint8)
    c(4, o0)
    ob = hl.Buffer(hl.UInt(8), [])
    c(5, ob)
    return o0, arr(ob)


@differential()
def test_callable_without_arguments(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = x * x
    c = f.compile_to_callable([])
    o = np.zeros(5, np.int32)
    c(o)
    o2 = np.zeros(3, np.int32)
    c(f=o2)
    return o, o2


@differential()
def test_compile_to_callable_missing_argument(hl):
    """Every Param / ImageParam the pipeline uses must be listed: compile_to_callable
    raises HalideError naming the missing one."""
    f, im, k, s = _callable_pipeline(hl)
    key = error_key(hl, lambda: f.compile_to_callable([im, k]), "parameter s",
                    "not found in the argument list")
    c = f.compile_to_callable([im, k, s])
    out = np.zeros((3, 4), np.float32)
    c(INP, 1, 2.0, out)
    return key, out


@differential()
def test_callable_with_explicit_target(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.f32(x) * 1.5
    host = hl.get_host_target()
    base = "-".join(str(host).split("-")[:3])  # arch-bits-os of this machine
    if host.arch == hl.TargetArch.X86:
        base += "-sse41"
    c = f.compile_to_callable([], hl.Target(base))
    o = np.zeros(6, np.float32)
    c(o)
    return o


@differential()
def test_pipeline_get_func(hl):
    x = hl.Var("x")
    f, g, h = hl.Func("gf_f"), hl.Func("gf_g"), hl.Func("gf_h")
    f[x] = x
    g[x] = f[x] + 1
    h[x] = g[x] * f[x]
    f.compute_root()
    g.compute_root()
    p = hl.Pipeline(h)
    # Names get a "$n" suffix when the process made a Func of that name before.
    names = [p.get_func(i).name().split("$")[0] for i in range(3)]
    err = None
    try:
        p.get_func(3)
    except hl.HalideError as e:
        err = str(e)
    return names, err, p.get_func(2).realize([4])


@differential()
def test_pipeline_invalidate_cache(hl):
    x = hl.Var("x")
    f = hl.Func("ic_f")
    f[x] = x * 3
    p = hl.Pipeline(f)
    a = p.realize([4])
    p.invalidate_cache()
    return a, p.realize([4])
