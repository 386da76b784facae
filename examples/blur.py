"""A 3x3 separable box blur of a real image (Halide's classic first app).

Usage: python examples/blur.py [input.png] [output.png]
Defaults: tests/data/rgb.png -> blurred.png

The input is read as uint8, widened to uint16 for the sums, and the result
is written back as uint8. The boundary is handled with a clamp.
"""
import os
import sys
import time

import numpy as np

import ferrohalide as hl
from ferrohalide import imageio

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "tests", "data", "rgb.png")
dst = sys.argv[2] if len(sys.argv) > 2 else "blurred.png"

# imread returns planar (c, y, x) data; hl.Buffer sees it as (x, y, c).
pixels = imageio.imread(src)
inp = hl.Buffer(pixels)
w, h, channels = inp.width(), inp.height(), inp.channels()

x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")

# Clamp coordinates so the blur can read one pixel past each edge.
clamped = hl.Func("clamped")
clamped[x, y, c] = hl.cast(
    hl.UInt(16), inp[hl.clamp(x, 0, w - 1), hl.clamp(y, 0, h - 1), c]
)

blur_x = hl.Func("blur_x")
blur_x[x, y, c] = (clamped[x - 1, y, c] + clamped[x, y, c] + clamped[x + 1, y, c]) / 3

blur_y = hl.Func("blur_y")
blur_y[x, y, c] = hl.cast(
    hl.UInt(8), (blur_x[x, y - 1, c] + blur_x[x, y, c] + blur_x[x, y + 1, c]) / 3
)

# Schedule: blur_x into its own buffer first, then blur_y; rows of each
# stage in parallel, 8-wide vectors across x.
blur_x.compute_root().parallel(y).vectorize(x, 8)
blur_y.parallel(y).vectorize(x, 8)

start = time.perf_counter()
out = blur_y.realize([w, h, channels])
elapsed = time.perf_counter() - start

# Check against a NumPy version of the same blur (same integer rounding).
p = np.pad(np.asarray(inp).astype(np.uint16), ((0, 0), (1, 1), (1, 1)), mode="edge")
bx = (p[:, :, :-2] + p[:, :, 1:-1] + p[:, :, 2:]) // 3
expected = ((bx[:, :-2, :] + bx[:, 1:-1, :] + bx[:, 2:, :]) // 3).astype(np.uint8)
mismatches = int(np.count_nonzero(np.asarray(out) != expected))

imageio.imwrite(dst, out)
print(f"blurred {w}x{h}x{channels} {src} -> {dst} in {elapsed * 1e3:.1f} ms "
      f"(JIT compile included); {mismatches} pixels differ from NumPy")
sys.exit(1 if mismatches else 0)
