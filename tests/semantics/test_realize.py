"""Realize forms and Buffers from NumPy."""
import numpy as np

from .harness import buffer, differential


@differential()
def test_realize_forms(hl):
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.i16(x * 10 + y)
    out = {"list": f.realize([5, 3])}
    # into a Buffer the caller allocated
    b = hl.Buffer(hl.Int(16), [5, 3])
    f.realize(b)
    out["into_buffer"] = b
    out["into_buffer_shape"] = [b.dim(i).extent() for i in range(b.dimensions())]
    # into caller storage: a NumPy array wrapped zero-copy (axes reversed)
    arr = np.zeros((3, 5), dtype=np.int16)
    f.realize(hl.Buffer(arr))
    out["into_numpy"] = arr
    # non-zero min
    c = hl.Buffer(hl.Int(16), [4, 2])
    c.set_min([2, 1])
    f.realize(c)
    out["shifted_min"] = c
    out["buffer_type"] = b.type()
    return out


@differential()
def test_buffers_from_numpy_both_axis_orders(hl):
    x, y = hl.Var("x"), hl.Var("y")
    a = (np.arange(12, dtype=np.uint8) * 7).reshape(3, 4)
    rev = buffer(hl, a)  # default reverse_axes=True: dim 0 is the last NumPy axis
    fwd = buffer(hl, a, reverse_axes=False)
    out = {
        "rev_extents": [rev.dim(i).extent() for i in range(2)],
        "fwd_extents": [fwd.dim(i).extent() for i in range(2)],
        "rev_10": rev[1, 0], "fwd_10": fwd[1, 0],
        "rev_width_height": [rev.width(), rev.height()],
    }
    f = hl.Func("f")
    f[x, y] = hl.u16(rev[x, y]) * 2 + 1
    out["rev"] = f.realize([4, 3])
    g = hl.Func("g")
    g[x, y] = hl.u16(fwd[x, y]) * 3
    out["fwd"] = g.realize([3, 4])
    # a non-contiguous (transposed) NumPy view
    t = hl.Buffer(np.asarray(a).T)
    h = hl.Func("h")
    h[x, y] = t[x, y]
    out["transposed"] = h.realize([3, 4])
    return out


@differential()
def test_funcs_reading_input_buffers(hl):
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    img = (np.arange(2 * 5 * 3, dtype=np.float32).reshape(3, 5, 2) / 4.0)
    # NumPy (c, y, x) -> Halide [x, y, c]
    B = buffer(hl, img)
    f = hl.Func("f")
    f[x, y, c] = B[x, y, c] * 2.0 + hl.f32(c)
    out = {"3ch": f.realize([2, 5, 3])}
    one = buffer(hl, np.array([5, -3, 9], dtype=np.int32))
    g = hl.Func("g")
    g[x] = one[2 - x] + one[x]
    out["indexed"] = g.realize([3])
    # a Buffer used by two Funcs, with a clamp on the index
    h = hl.Func("h")
    h[x] = one[hl.clamp(x - 1, 0, 2)] * 10
    out["clamped"] = h.realize([5])
    return out



@differential()
def test_realize_sizes_in_a_loop_follows_what_the_region_depends_on(hl):
    # realize(sizes) grows an output to what the pipeline writes (here an
    # update over an RDom of extent p, and a split rounding up): the
    # region is recomputed whenever the requested size, a Param it names
    # or an input's shape changes, and reused when none does.
    x = hl.Var("x")
    p = hl.Param(hl.Int(32), "p")
    im = hl.ImageParam(hl.Int(32), 1, "im")
    r = hl.RDom([(0, p)])
    f = hl.Func("f")
    f[x] = x
    f[r.x] += im[r.x]
    g = hl.Func("g")
    g[x] = x * 3
    xo, xi = hl.Var("xo"), hl.Var("xi")
    g.split(x, xo, xi, 4)
    out = []
    for k, (pv, n, size) in enumerate([(2, 8, 4), (2, 8, 4), (6, 8, 4), (3, 8, 4), (3, 8, 6), (6, 6, 3), (6, 6, 3)]):
        p.set(pv)
        im.set(hl.Buffer(np.arange(n, dtype=np.int32) * 10 + k))
        full = f.realize([size])
        out.append([full.dim(0).min(), full.dim(0).extent(), [full[i] for i in range(size)]])
        gb = g.realize([size + k])
        out.append([gb.dim(0).extent(), [gb[i] for i in range(size + k)]])
    return out
