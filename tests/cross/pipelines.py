"""The pipelines every cross target is proven on, each with its inputs:
a uint8 stencil with a boundary condition, a widening blur, a float
pipeline with a Param, and a reduction. `build()` returns (func,
[ImageParam/Param...], [input arrays / scalar values...], output shape in
NumPy order, output dtype); `host_result` realizes it with the host JIT.
Each takes the module to build with (`hl`: ferrohalide, or Halide for the
side-by-side benchmark), its input size, its vector width in bytes of
the narrowest type (16: NEON and SSE; 128 for Hexagon's HVX), and
`offload`: schedule the output `hexagon()`, with every producer inside
its loop nest (the Hexagon offload from ARM)."""
import numpy as np

import ferrohalide


def _rng():
    return np.random.default_rng(1234)


def stencil_u8(hl=ferrohalide, h=37, w=70, vec=16, offload=False):
    """A 3x3 max filter over a uint8 image with a repeat_edge boundary."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    mx = hl.Func("max_y")
    mx[x, y] = hl.max(clamped[x, y - 1], clamped[x, y], clamped[x, y + 1])
    out = hl.Func("dilate")
    out[x, y] = hl.max(mx[x - 1, y], mx[x, y], mx[x + 1, y])
    mx.compute_at(out, y).vectorize(x, vec)
    out.vectorize(x, vec).parallel(y)
    if offload:
        out.hexagon()
    img = _rng().integers(0, 256, (h, w), dtype=np.uint8)
    return out, [inp], [img], img.shape, np.uint8


def widening_blur(hl=ferrohalide, h=48, w=64, vec=16, offload=False):
    """uint8 -> uint16 sums along x, then along y, rounded back to uint8."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    bx = hl.Func("blur_x")
    bx[x, y] = hl.u16(inp[x, y]) + 2 * hl.u16(inp[x + 1, y]) + hl.u16(inp[x + 2, y])
    by = hl.Func("blur_y")
    by[x, y] = hl.u8((bx[x, y] + 2 * bx[x, y + 1] + bx[x, y + 2] + 8) >> 4)
    bx.compute_at(by, y).vectorize(x, vec)
    by.vectorize(x, vec).parallel(y)
    if offload:
        by.hexagon()
    img = _rng().integers(0, 256, (h + 2, w + 2), dtype=np.uint8)
    return by, [inp], [img], (h, w), np.uint8


def float_with_param(hl=ferrohalide, h=21, w=40, vec=16, offload=False):
    """A float pipeline with a scalar Param and a transcendental."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    gain = hl.Param(hl.Float(32), "gain")
    f = hl.Func("tone")
    f[x, y] = gain * inp[x, y] / (1.0 + hl.abs(inp[x, y])) + hl.sqrt(inp[x, y] * inp[x, y] + 1.0)
    f.vectorize(x, vec // 4).parallel(y)
    if offload:
        f.hexagon()
    img = (_rng().random((h, w), dtype=np.float32) * 8 - 4).astype(np.float32)
    gain.set(1.75)
    return f, [inp, gain], [img, 1.75], img.shape, np.float32


def reduction(hl=ferrohalide, h=33, w=45, vec=16, offload=False):
    """A histogram (an update over a reduction domain) and a sum per row."""
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    r = hl.RDom([(0, inp.width()), (0, inp.height())])
    hist = hl.Func("hist")
    hist[x] = 0
    hist[hl.i32(inp[r.x, r.y]) >> 4] += 1
    out = hl.Func("hist_out")
    out[x] = hist[x] * 3 + 1
    out.vectorize(x, min(vec // 4, 16))
    if offload:
        out.hexagon()
        hist.compute_at(out, hl.Var.outermost())
    img = _rng().integers(0, 256, (h, w), dtype=np.uint8)
    return out, [inp], [img], (16,), np.int32


CASES = [stencil_u8, widening_blur, float_with_param, reduction]


def ctype(p):
    t = p.type()
    if t.is_float():
        return "float" if t.bits() == 32 else "double"
    base = "int" if t.is_int() else "uint"
    return f"{base}{t.bits()}_t"


def host_result(func, params, values, shape, dtype, hl=ferrohalide):
    for p, v in zip(params, values):
        if isinstance(p, hl.ImageParam):
            p.set(hl.Buffer(v))
        else:
            p.set(v)
    out = np.zeros(shape, dtype)
    func.realize(hl.Buffer(out))
    return out
