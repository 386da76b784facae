"""hl.propagate_adjoints and hl.Derivative: reverse-mode gradients of a
pipeline, compared with Halide's own (the same adjoint Funcs, realized over
regions larger than the output's, so that what the adjoints hold outside
the differentiated region is compared too). Sums may be taken in another
order than Halide's, so floats are compared to a relative 1e-5."""
import numpy as np
import pytest

from .harness import Tol, differential


def near(a):
    return Tol(np.array(a), rel=1e-5, abs=1e-6)


def ramp_buffer(hl, n, name, scale=0.25, offset=1.0):
    return hl.Buffer(np.arange(n, dtype=np.float32) * scale + offset, name=name)


@differential()
def test_halide_autodiff_example(hl):
    # Halide's correctness/autodiff.py: an overwritten point, a Param, an RDom.
    x = hl.Var("x")
    b = hl.Buffer(hl.Float(32), [3], "b")
    for i, v in enumerate([1.0, 2.0, 3.0]):
        b[i] = v
    p = hl.Param(hl.Float(32), "p", 1)
    f, g, h = hl.Func("f"), hl.Func("g"), hl.Func("h")
    f[x] = b[x]
    f[0] = 4.0
    g[x] = f[x] * 5.0 * p
    r = hl.RDom([(0, 3)])
    h[()] = 0.0
    h[()] += g[r.x]
    d = hl.propagate_adjoints(h)
    return [d[f].realize([3]), d[f, 0].realize([3]), d[b].realize([3]), d[p].realize(),
            d[g].realize([3]), d[h].realize(), d[h, 0].realize()]


@differential()
def test_stencil_through_a_boundary_condition(hl):
    x, y = hl.Var("x"), hl.Var("y")
    b = hl.Buffer(np.arange(48, dtype=np.float32).reshape(6, 8) * 0.125, name="img")
    clamped = hl.BoundaryConditions.repeat_edge(b)
    blur_x = hl.Func("blur_x")
    blur_x[x, y] = (clamped[x - 1, y] + 2.0 * clamped[x, y] + clamped[x + 1, y]) / 4.0
    blur = hl.Func("blur")
    blur[x, y] = (blur_x[x, y - 1] + blur_x[x, y] + blur_x[x, y + 1]) / 3.0
    r = hl.RDom([(0, 8), (0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += blur[r.x, r.y] * blur[r.x, r.y]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([8, 6])), near(d[blur_x].realize([10, 8])),
            near(d[blur].realize([8, 6]))]


@differential()
def test_constant_exterior_and_math(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 10, "v", 0.1, 0.2)
    padded = hl.BoundaryConditions.constant_exterior(b, 0.5)
    f = hl.Func("f")
    f[x] = (hl.exp(padded[x]) + hl.log(padded[x + 1] + 1.0) * hl.sin(padded[x])
            + hl.sqrt(padded[x] + 2.0) - hl.cos(padded[x - 2]) * hl.tanh(padded[x])
            + hl.pow(padded[x] + 1.0, 1.5) + hl.atan2(padded[x], 2.0))
    r = hl.RDom([(0, 12)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += f[r.x - 1]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([10])), near(d[f].realize([14]))]


@differential()
def test_min_max_select_abs_and_clamp(hl):
    x = hl.Var("x")
    b = hl.Buffer(np.array([-3, -1.5, 0.25, 2, 5, -0.5, 4, 1], dtype=np.float32), name="q")
    f = hl.Func("f")
    f[x] = (hl.max(b[x], 0.0) + hl.min(b[x], 1.0) * 2.0 + hl.abs(b[x]) * 0.5
            + hl.select(b[x] > 1.0, b[x] * b[x], -b[x]) + hl.clamp(b[x], -1.0, 3.0))
    r = hl.RDom([(0, 8)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += f[r.x]
    d = hl.propagate_adjoints(loss)
    return near(d[b].realize([8]))


@differential()
def test_upsample_and_downsample(hl):
    # x / 2 is inverted exactly (two points per read); 2 * x is a scatter.
    x = hl.Var("x")
    b = ramp_buffer(hl, 16, "s")
    up = hl.Func("up")
    up[x] = b[x // 2] * 3.0
    down = hl.Func("down")
    down[x] = up[2 * x] + up[2 * x + 1] * 0.5
    r = hl.RDom([(0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += down[r.x] * down[r.x]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([16])), near(d[up].realize([14])), near(d[down].realize([8]))]


@differential()
def test_adjoint_given_as_a_func_over_a_region(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 8, "bin", 1.0, 1.0)
    f = hl.Func("f")
    f[x] = b[x] * b[x] + b[x]
    g = hl.Func("g")
    g[x] = f[x] * 2.0
    a = hl.Func("a")
    a[x] = hl.f32(x) + 1.0
    d = hl.propagate_adjoints(g, a, [(0, 3)])
    d2 = hl.propagate_adjoints(g, a, [hl.Range(1, 4)])
    return [d[b].realize([6]), d[f].realize([6]), d2[b].realize([8])]


@differential()
def test_output_with_dimensions_default_region(hl):
    x, y = hl.Var("x"), hl.Var("y")
    b = hl.Buffer(np.arange(12, dtype=np.float32).reshape(3, 4), name="m")
    f = hl.Func("f")
    f[x, y] = b[x, y] * b[x + 1, y] + b[x, y + 1]
    d = hl.propagate_adjoints(f)
    return [d[b].realize([4, 3]), d[f].realize([3, 2])]


@differential()
def test_matrix_product_reduction(hl):
    x, y = hl.Var("x"), hl.Var("y")
    A = hl.Buffer(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5, name="A")
    B = hl.Buffer(np.arange(8, dtype=np.float32).reshape(4, 2) - 2.0, name="B")
    k = hl.RDom([(0, 4)])
    C = hl.Func("C")
    C[x, y] = 0.0
    C[x, y] += A[k.x, y] * B[x, k.x]
    r = hl.RDom([(0, 2), (0, 3)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += C[r.x, r.y] * C[r.x, r.y]
    d = hl.propagate_adjoints(loss)
    return [near(d[A].realize([4, 3])), near(d[B].realize([2, 4])),
            near(d[C].realize([2, 3])), near(d[C, 0].realize([2, 3]))]


@differential()
def test_non_overwriting_scan(hl):
    # A prefix product kept per step: differentiable (a scan that saves
    # its intermediate results).
    x, t = hl.Var("x"), hl.Var("t")
    b = ramp_buffer(hl, 5, "w", 0.5, 0.75)
    f = hl.Func("f")
    f[x, t] = 0.0
    f[x, 0] = b[x]
    r = hl.RDom([(0, 3)])
    f[x, r.x + 1] = f[x, r.x] * b[x] + 1.0
    loss = hl.Func("loss")
    s = hl.RDom([(0, 5)])
    loss[()] = 0.0
    loss[()] += f[s.x, 3]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([5])), near(d[f, 1].realize([5, 4])), near(d[f].realize([5, 4]))]


@differential()
def test_tuple_valued_func(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 6, "tb")
    f = hl.Func("f")
    f[x] = (b[x] * 2.0, b[x] * b[x])
    g = hl.Func("g")
    g[x] = f[x][0] + f[x][1] * 3.0
    r = hl.RDom([(0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += g[r.x]
    d = hl.propagate_adjoints(loss)
    fd = d[f].realize([6])
    return [near(d[b].realize([6])), near(fd[0]), near(fd[1])]


@differential()
def test_params_and_casts(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 6, "pc")
    p = hl.Param(hl.Float(32), "scale", 1.5)
    q = hl.Param(hl.Float(64), "shift", 0.25)
    n = hl.Param(hl.Int(32), "n", 2)
    f = hl.Func("f")
    f[x] = hl.f32(hl.f64(b[x] * p) + q) * hl.f32(n) + hl.f32(hl.i32(b[x]))
    r = hl.RDom([(0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += f[r.x]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([6])), near(d[p].realize()), near(d[q].realize()), d[n].defined()]


@differential()
def test_what_the_output_does_not_depend_on(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 4, "used")
    unused = ramp_buffer(hl, 4, "unused")
    ints = hl.Buffer(np.arange(4, dtype=np.int32), name="ints")
    f = hl.Func("f")
    f[x] = b[x] + hl.f32(ints[x])
    other = hl.Func("other")
    other[x] = unused[x]
    d = hl.propagate_adjoints(f)
    return [d[unused].defined(), d[other].defined(), d[ints].defined(), d[f, 3].defined(),
            d[b].realize([4])]


@differential()
def test_shifted_and_reversed_reads(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 12, "sr")
    f = hl.Func("f")
    f[x] = b[x + 2] * 2.0 - b[9 - x] + b[x]
    g = hl.Func("g")
    g[x] = f[x - 1] * f[x + 1]
    r = hl.RDom([(1, 5)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += g[r.x]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([12])), near(d[f].realize([9])), near(d[g].realize([8]))]


@differential()
def test_histogram_style_scatter(hl):
    # A read at a data-dependent place is a scatter over the reader's region.
    x = hl.Var("x")
    idx = hl.Buffer(np.array([3, 0, 3, 1, 2, 0], dtype=np.int32), name="idx")
    v = ramp_buffer(hl, 4, "v4", 1.0, 0.5)
    f = hl.Func("f")
    f[x] = v[hl.clamp(idx[x], 0, 3)] * 2.0
    r = hl.RDom([(0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += f[r.x] * f[r.x]
    d = hl.propagate_adjoints(loss)
    return near(d[v].realize([4]))


@differential(expect_error=True)
def test_update_reading_an_overwritten_value(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 4, "ov")
    g = hl.Func("g")
    g[x] = b[x]
    f = hl.Func("f")
    f[x] = g[x]
    f[x] = f[x] * f[x]
    hl.propagate_adjoints(f)


@differential(expect_error=True)
def test_scan_whose_adjoint_is_overwritten(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 4, "sc")
    r = hl.RDom([(0, 4)])
    f = hl.Func("f")
    f[x] = 0.0
    f[x] = 2.0 * f[x] + b[r.x]
    hl.propagate_adjoints(f)


@differential(expect_error=True)
def test_unbounded_read(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 4, "ub")
    idx = hl.Buffer(np.zeros(4, dtype=np.float32), name="fidx")
    f = hl.Func("f")
    f[x] = b[hl.i32(idx[x] * 1e9)]
    hl.propagate_adjoints(f)


@differential(expect_error=True)
def test_region_must_match_the_dimensions(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 4, "rm")
    f = hl.Func("f")
    f[x] = b[x]
    a = hl.Func("a")
    a[x] = hl.f32(1.0)
    hl.propagate_adjoints(f, a, [(0, 3), (0, 2)])


@differential(expect_error=True)
def test_derivative_index_of_a_wrong_kind(hl):
    x = hl.Var("x")
    f = hl.Func("f")
    f[x] = hl.f32(x)
    d = hl.propagate_adjoints(f)
    d["f"]


def test_image_param_and_buffer_adjoints_agree():
    # Halide's Python binding cannot index a Derivative by ImageParam (its
    # overloads take Func, Buffer, Param); ferrohalide can, and gives what
    # the same pipeline over a Buffer gives.
    import ferrohalide as hl
    x = hl.Var("x")
    data = np.arange(6, dtype=np.float32) * 0.5 + 1.0

    def build(src):
        f = hl.Func()
        f[x] = src[x] * src[x + 1]
        r = hl.RDom([(0, 4)])
        loss = hl.Func()
        loss[()] = 0.0
        loss[()] += f[r.x]
        return hl.propagate_adjoints(loss)

    im = hl.ImageParam(hl.Float(32), 1, "im_in")
    from_param = build(im)[im]
    buf = hl.Buffer(data, name="buf_in")
    im.set(buf)
    from_buffer = build(buf)[buf]
    np.testing.assert_allclose(np.asarray(from_param.realize([6])), np.asarray(from_buffer.realize([6])))


def test_adjoint_given_as_a_buffer():
    # Halide's binding of this overload rejects every Buffer (a pybind
    # conversion it lacks); ferrohalide takes it, as Halide's C++ API does:
    # the adjoint is zero outside the buffer.
    import ferrohalide as hl
    x = hl.Var("x")
    b = hl.Buffer(np.arange(5, dtype=np.float32) + 1.0, name="ab")
    f = hl.Func()
    f[x] = b[x] * b[x]
    adj = hl.Buffer(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    d = hl.propagate_adjoints(f, adj)
    got = np.asarray(d[b].realize([5]))
    a = hl.Func()
    a[x] = hl.BoundaryConditions.constant_exterior(adj, 0.0)[x]
    expected = np.asarray(hl.propagate_adjoints(f, a, [(0, 2)])[b].realize([5]))
    np.testing.assert_allclose(got, expected)
    with pytest.raises(TypeError):
        hl.propagate_adjoints(f, hl.Buffer(np.zeros(3, dtype=np.int32)))


@differential()
def test_convolution_with_an_rdom_kernel(hl):
    x, y = hl.Var("x"), hl.Var("y")
    img = hl.Buffer(np.arange(42, dtype=np.float32).reshape(6, 7) * 0.1, name="cimg")
    k = hl.Buffer(np.array([[1, 2, 1], [0, -1, 0], [2, 0.5, 1]], dtype=np.float32), name="kern")
    padded = hl.BoundaryConditions.repeat_edge(img)
    r = hl.RDom([(-1, 3), (-1, 3)])
    conv = hl.Func("conv")
    conv[x, y] = 0.0
    conv[x, y] += padded[x + r.x, y + r.y] * k[r.x + 1, r.y + 1]
    s = hl.RDom([(0, 7), (0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += hl.tanh(conv[s.x, s.y] * 0.125)
    d = hl.propagate_adjoints(loss)
    return [near(d[img].realize([7, 6])), near(d[k].realize([3, 3]))]


@differential()
def test_updates_at_points_and_self_increments(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 8, "pts", 0.5, -1.0)
    f = hl.Func("f")
    f[x] = b[x] * 2.0
    f[x] += b[x + 1]
    f[1] = b[0] * b[3]
    f[2] = f[2] * 3.0
    g = hl.Func("g")
    g[x] = f[x] * f[x]
    r = hl.RDom([(0, 5)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += g[r.x]
    d = hl.propagate_adjoints(loss)
    return [near(d[b].realize([8])), near(d[f].realize([6])), near(d[f, 0].realize([6])),
            near(d[f, 1].realize([6])), near(d[f, 2].realize([6]))]


@differential()
def test_rdom_with_a_predicate_and_strided_reads(hl):
    x = hl.Var("x")
    b = ramp_buffer(hl, 20, "st", 0.3, 0.1)
    r = hl.RDom([(0, 6), (0, 3)])
    r.where(r.x + r.y < 6)
    f = hl.Func("f")
    f[x] = 0.0
    f[x] += b[2 * r.x + r.y] * hl.f32(x + 1)
    s = hl.RDom([(0, 3)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += f[s.x]
    d = hl.propagate_adjoints(loss)
    return near(d[b].realize([20]))


@differential()
def test_shared_subexpressions(hl):
    # Values used many times (a DAG, and lets once it is large).
    x = hl.Var("x")
    b = ramp_buffer(hl, 6, "dag", 0.1, 0.5)
    e = b[x] * 1.5 + 0.25
    for _ in range(12):
        e = e * e * 0.5 + e * 0.25
    f = hl.Func("f")
    f[x] = e
    r = hl.RDom([(0, 6)])
    loss = hl.Func("loss")
    loss[()] = 0.0
    loss[()] += f[r.x]
    d = hl.propagate_adjoints(loss)
    return near(d[b].realize([6]))


def test_gradient_through_a_mux_is_that_of_its_select_chain():
    """mux is an intrinsic until code generation; its adjoint goes to the
    value the index picks (the last one also out of range), as through the
    select chain it stands for. (Halide's autodiff drops gradients at a
    mux, with a warning; ferrohalide differentiates it.)"""
    import ferrohalide as hl

    x = hl.Var("x")
    b = hl.Buffer(np.arange(12, dtype=np.float32) * 0.5 + 1.0, name="b")
    grads = []
    for written in ("mux", "select"):
        f, loss = hl.Func("f"), hl.Func("loss")
        v0, v1, v2 = b[x] * 3.0, b[x] * b[x], b[x] + 2.0
        if written == "mux":
            f[x] = hl.mux(x % 4 - 1, [v0, v1, v2])
        else:
            i = x % 4 - 1
            f[x] = hl.select(i == 0, v0, i == 1, v1, v2)
        r = hl.RDom([(0, 12)])
        loss[()] = 0.0
        loss[()] += f[r.x] * (r.x + 1)
        d = hl.propagate_adjoints(loss)
        grads.append(np.asarray(d[b].realize([12])))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    # The picked value's derivative, times the weight r.x + 1.
    xs = np.arange(12)
    vals = np.arange(12, dtype=np.float32) * 0.5 + 1.0
    idx = xs % 4 - 1
    want = np.where(idx == 0, 3.0, np.where(idx == 1, 2 * vals, 1.0)) * (xs + 1)
    np.testing.assert_allclose(grads[0], want, rtol=1e-6)
