# Random pipeline: tests/fuzz/gen.py v3, seed 11474
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
    inp0 = hl.Buffer(_data((13, 1), 795809, -20, 255, np.int16, 1))
    inp1 = hl.Buffer(_data((6, 11), 238256, -3, 3, np.int64, 1))
    f0 = hl.Func('f0')
    f0[x, y] = (x // hl.Expr(14))
    r0 = hl.RDom(inp0)
    bc0 = hl.BoundaryConditions.mirror_interior(inp1)
    f0[hl.clamp(hl.i32_sat(hl.clamp(hl.u8(bc0[r0.x, r0.x - 3]), 25, 182)), 0, 10), y] -= (-hl.cast(hl.Int(32), 2))
    r1 = hl.RDom([(1, 4)])
    r1.where((hl.max(bc0[x - 2, x - 2], hl.saturating_cast(hl.Int(64), r1.x)) < hl.i64(hl.i32(14))))
    f0[x, hl.clamp(hl.i32(hl.select(hl.cast(hl.Bool(), 1), hl.abs(hl.f32(r1.x)), (hl.cast(hl.Float(32), bc0[2 * r1.x + 1, r1.x]) + -5.125))), -1, 11)] = (hl.i16(1) | hl.cast(hl.Int(32), bc0[x + 2, x + 3]))
    f1 = hl.Func('f1')
    f1[x, y] = hl.cast(hl.Int(32), hl.u32(f0[y - 1, y]))
    f2 = hl.Func('f2')
    f2[x, y] = hl.reinterpret(hl.UInt(8), hl.min(hl.cast(hl.Int(8), 0), hl.saturating_cast(hl.Int(8), f1[x, y / 2])))
    r2 = hl.RDom([(1, 5)])
    f2[r2.x, y] = (f2[r2.x - 1, y] * hl.select(hl.cast(hl.Bool(), (bc0[r2.x, y + 1] & 1)), (hl.lerp(hl.cast(hl.UInt(8), 1), hl.u8(y), hl.cast(hl.UInt(8), 6)) >> hl.clamp(hl.abs(hl.i8(f0[r2.x - 2, y])), 0, 7)), (hl.lerp(hl.cast(hl.UInt(8), inp0[hl.clamp(2 * r2.x + 3, 0, 0), hl.clamp(y / 2, 0, 12)]), hl.u8(f0[r2.x, y - 1]), hl.clamp(hl.cast(hl.Float(32), f0[r2.x, y]), 0.0, 1.0)) // 4)))
    f3 = hl.Func('f3')
    f3[x, y] = (hl.i8(f2[x - 1, y + 3]) / -9)
    r3 = hl.RDom([(1, 1)])
    r4 = hl.RDom([(-2, 3), (-1, 3)])
    f3[x, hl.clamp(hl.cast(hl.Int(32), (hl.lerp(hl.cast(hl.Int(16), r3.x), hl.cast(hl.Int(16), -15), hl.u16(0)) >> 13)), 1, 4)] = hl.sum((hl.i8(x) + hl.saturating_cast(hl.Int(8), r4.y)))
    if SCHED:
        f1.vectorize(x, 4)
        f1.reorder(y, x)
        sv0 = hl.Var('sv0')
        sv1 = hl.Var('sv1')
        sv2 = hl.Var('sv2')
        sv3 = hl.Var('sv3')
        f1.tile(y, x, sv2, sv3, sv0, sv1, 4, 2)
        f1.parallel(sv0, 2, hl.TailStrategy.Auto)
        f2.parallel(y)
        f2.unroll(x, 4)
        f2.parallel(x)
        sv4 = hl.Var('sv4')
        f2.fuse(x, y, sv4)
        f0.reorder(y, x)
        f0.parallel(x)
        sv5 = hl.Var('sv5')
        f0.rename(x, sv5)
        f0.update(0).parallel(y, 3)
        rv6 = hl.RVar('rv6')
        sv7 = hl.Var('sv7')
        rv8 = hl.RVar('rv8')
        sv9 = hl.Var('sv9')
        f0.update(0).tile(r0.x, y, rv8, sv9, rv6, sv7, 4, 1)
        rv10 = hl.RVar('rv10')
        sv11 = hl.Var('sv11')
        rv12 = hl.RVar('rv12')
        sv13 = hl.Var('sv13')
        f0.update(1).tile(r1.x, x, rv12, sv13, rv10, sv11, 2, 4, hl.TailStrategy.GuardWithIf)
        sv14 = hl.Var('sv14')
        f0.update(1).split(sv13, sv13, sv14, 16)
        f2.compute_at(f3, x)
        f1.compute_at(f2, sv4)
        f0.compute_root()
        f3.bound_extent(x, 8)
    r = f3.realize([9, 24])
    return [np.array(r)]


if __name__ == '__main__':
    hl = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else 'ferrohalide')
    np.set_printoptions(threshold=64, linewidth=150)
    res = pipeline(hl, SCHED and 'nosched' not in sys.argv[2:])
    for a in (res['values'] + res['regions'] if isinstance(res, dict) else res):
        print(repr(a))
