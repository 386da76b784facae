# Random pipeline: tests/fuzz/gen.py v3, seed 12201
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
    inp0 = hl.Buffer(_data((10, 11), 314567, 0, 4294967295, np.uint32, 1))
    inp1 = hl.Buffer(_data((1, 4), 347978, -20, 20, np.int16, 1))
    f0 = hl.Func('f0')
    f0[x, y] = ((hl.absd(hl.saturating_cast(hl.Int(64), inp1[hl.clamp(y / 2, 0, 3), hl.clamp(2 * y + 1, 0, 0)]), hl.i64(-9)) % hl.cast(hl.UInt(64), inp1[hl.clamp(x + 2, 0, 3), hl.clamp(hl.clamp(hl.cast(hl.Int(32), (~hl.i16(inp0[hl.clamp(x + 2, 0, 10), hl.clamp(2 * y + -3, 0, 9)]))), -1, 4), 0, 0)])) / hl.cast(hl.UInt(64), hl.i8(inp0[hl.clamp(x, 0, 10), hl.clamp(y - 1, 0, 9)])))
    r0 = hl.RDom([(1, 4)])
    bc0 = hl.BoundaryConditions.repeat_edge(inp0, [(10, 1), (7, 2)])
    f0[x, y] *= (hl.saturating_cast(hl.UInt(64), hl.select((hl.f32(y) >= hl.f32(y)), (hl.u16(x) >> 1), hl.u16(y))) + hl.u64(r0.x))
    r1 = hl.RDom([(0, 3)])
    bc1 = hl.BoundaryConditions.repeat_image(inp1, [(0, 3), (0, 1)])
    f0[hl.clamp(hl.cast(hl.Int(32), (hl.clamp(hl.u16(bc1[r1.x, r1.x]), 99, 185) + 3)), 10, 11), y] = hl.u64(r1.x)
    f1 = hl.Func('f1')
    f1[x, y] = hl.u64(x)
    f1[x, y] = (f1[x, y] * f0[x + 3, 2])
    if SCHED:
        f0.parallel(y)
        f0.parallel(y)
        f0.vectorize(x, 8)
        f0.vectorize(x, 16)
        rv0 = hl.RVar('rv0')
        f0.update(1).rename(r1.x, rv0)
        f0.compute_at(f1, y)
        f0.bound(x, -1, 12)
    ob = hl.Buffer(hl.UInt(64), [13, 12])
    ob.set_min([1, -3])
    f1.realize(ob)
    return [np.array(ob)]


if __name__ == '__main__':
    hl = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else 'ferrohalide')
    np.set_printoptions(threshold=64, linewidth=150)
    res = pipeline(hl, SCHED and 'nosched' not in sys.argv[2:])
    for a in (res['values'] + res['regions'] if isinstance(res, dict) else res):
        print(repr(a))
