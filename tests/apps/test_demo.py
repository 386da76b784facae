"""Whole programs under both modules: the Halide README demo and a separable blur."""
import numpy as np
import pytest

from fh_harness import Tol, differential


@differential()
def test_readme_demo(hl):
    """The README program: sin/cos 512x512x3, vectorize(x, 8).parallel(y).
    Outputs within 1 per pixel (float -> u8 rounding of transcendentals)."""
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("f")
    e = hl.sin(hl.cast(hl.Float(32), x) / 32.0 + hl.cast(hl.Float(32), c)) * \
        hl.cos(hl.cast(hl.Float(32), y) / 16.0)
    f[x, y, c] = hl.cast(hl.UInt(8), hl.clamp(e * 127.5 + 127.5, 0.0, 255.0))
    f.vectorize(x, 8).parallel(y)
    out = np.asarray(f.realize([512, 512, 3])).astype(np.int16)
    # compared within 1: integers, so compare the widened image as floats
    return Tol(out.astype(np.float32), abs=1.0)


def _blur(hl, img, schedule):
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.Buffer(img)
    h, w = img.shape
    clamped = hl.Func("clamped")
    clamped[x, y] = inp[hl.clamp(x, 0, w - 1), hl.clamp(y, 0, h - 1)]
    wide = hl.Func("wide")
    wide[x, y] = hl.u32(clamped[x, y])
    bx = hl.Func("blur_x")
    bx[x, y] = wide[x - 1, y] + wide[x, y] * 2 + wide[x + 1, y]
    by = hl.Func("blur_y")
    by[x, y] = hl.u16((bx[x, y - 1] + bx[x, y] * 2 + bx[x, y + 1] + 8) / 16)
    xi, yi = hl.Var("xi"), hl.Var("yi")
    if schedule == "inline":
        pass
    elif schedule == "inline_vec_par":
        by.vectorize(x, 16).parallel(y)
    elif schedule == "root":
        bx.compute_root()
    elif schedule == "root_vec_par":
        bx.compute_root().vectorize(x, 16).parallel(y)
        by.vectorize(x, 16).parallel(y)
    elif schedule == "tiled":
        by.tile(x, y, xi, yi, 32, 8).vectorize(xi, 8).parallel(y)
        bx.compute_at(by, x).vectorize(x, 8)
    return by.realize([w, h])


@differential()
@pytest.mark.parametrize("schedule", ["inline", "inline_vec_par", "root", "root_vec_par",
                                      "tiled"])
def test_separable_blur_u16(hl, schedule):
    rng = np.random.default_rng(42)
    img = rng.integers(0, 65535, size=(97, 131), dtype=np.uint16)
    return _blur(hl, img, schedule)
