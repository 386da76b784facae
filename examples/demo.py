"""The example from Halide's Python README, with the import changed.

Writes example.png (512x512 RGB) to the current directory.
"""
import ferrohalide as hl

edge = 512
k = 20.0 / float(edge)
x, y, c = hl.Var('x'), hl.Var('y'), hl.Var('c')
f = hl.Func('f')
e = hl.sin(x * ((c + 1) / 3.0) * k) * hl.cos(y * ((c + 1) / 3.0) * k)
f[x, y, c] = hl.cast(hl.UInt(8), e * 255.0)
f.vectorize(x, 8).parallel(y)
buf = f.realize([edge, edge, 3])
from ferrohalide import imageio
imageio.imwrite("example.png", buf)
print("wrote example.png:", buf)
