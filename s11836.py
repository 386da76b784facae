# Random pipeline: tests/fuzz/gen.py v3, seed 11836
# Run: python FILE.py [ferrohalide|halide] [nosched]   (nosched: the unscheduled oracle)
import sys, importlib
import numpy as np

SCHED = True  # False: every Func keeps its default schedule (the oracle)


def _data(shape, salt, lo, hi, dtype, div=1):
    """Deterministic pseudo-random values in [lo, hi] (divided by div), of numpy dtype."""
    h = (np.arange(int(np.prod(shape)), dtype=np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    span = hi - lo + 1
    if span > 2 ** 63:  # the whole 64-bit range
        v = h.view(np.int64).astype(dtype)
    else:
        v = (h % np.uint64(span)).astype(np.int64) + lo
        v = (v / div).astype(dtype) if div != 1 else v.astype(dtype)
    return v.reshape(shape)


def pipeline(hl, SCHED):
    x, y = hl.Var('x'), hl.Var('y')
    inp0 = hl.Buffer(_data((6, 10), 705338, -100, 20, np.int64, 1))
    p0 = hl.Param(hl.Int(16), 'p0', 5)
    f0 = hl.Func('f0')
    bc0 = hl.BoundaryConditions.repeat_image(inp0)
    f0[x, y] = hl.clamp(hl.clamp(hl.cast(hl.Int(8), bc0[x + 2, y - 3]), hl.cast(hl.Int(8), bc0[x, y + 2]), hl.cast(hl.Int(8), x)), -85, -18)
    f1 = hl.Func('f1')
    f1[x, y] = hl.select((f0[x // 2, 3] < 2), (p0 > 1), hl.cast(hl.Bool(), (p0 & 1)), (f0[x // 2, y // 2] == 2), (y < 3))
    f1[x, y] = hl.cast(hl.Bool(), ((x % hl.i32_sat(f0[x / 2, y - 3])) & 1))
    f2 = hl.Func('f2')
    f2[x, y] = hl.select(hl.is_nan((hl.f32(f1[x - 1, y + 3]) + hl.cast(hl.Float(32), y))), (hl.u64(f0[x - 3, y]) ** 2), hl.count_leading_zeros((hl.u64_sat(f0[x - 3, y / 2]) | 0)))
    f3 = hl.Func('f3')
    f3[x, y] = (hl.cast(hl.Int(32), f2[x, y]), ((hl.i16_sat(f0[x, y * 2]) - hl.i16(f1[x - 2, y + 1])) >> 7))
    if SCHED:
        f2.vectorize(x, 8)
        f2.compute_root()
        f1.compute_root()
        f0.compute_inline()
        f3.bound(x, -3, 15)
    r = f3.realize([14, 10])
    return [np.array(b) for b in r]


if __name__ == '__main__':
    hl = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else 'ferrohalide')
    np.set_printoptions(threshold=64, linewidth=150)
    res = pipeline(hl, SCHED and 'nosched' not in sys.argv[2:])
    for a in (res['values'] + res['regions'] if isinstance(res, dict) else res):
        print(repr(a))
