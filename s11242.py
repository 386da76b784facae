# Random pipeline: tests/fuzz/gen.py v3, seed 11242
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
    inp0_buf = hl.Buffer(_data((6, 8), 884262, 0, 20, np.uint32, 1))
    inp0 = hl.ImageParam(hl.UInt(32), 2, 'inp0')
    inp0.set(inp0_buf)
    p0 = hl.Param(hl.Int(32), 'p0', 12)
    p1 = hl.Param(hl.Float(32), 'p1', 1.75)
    f0 = hl.Func('f0')
    f0[x, y] = hl.clamp((hl.cast(hl.Int(8), 10) >> hl.clamp(hl.u8(15), 0, 7)), -128, 70)
    bc0 = hl.BoundaryConditions.mirror_image(inp0, [(4, 2), (1, 3)])
    f0[x, y] = (hl.i8(x) // (hl.i8(bc0[hl.clamp(hl.saturating_cast(hl.Int(32), hl.cast(hl.Int(8), x)), -1, 4), y + 3]) / hl.i8(inp0[hl.clamp(x, 0, 7), hl.clamp(y + 1, 0, 5)])))
    f1 = hl.Func('f1')
    f1[x, y] = hl.select(hl.cast(hl.Bool(), 1), hl.cast(hl.UInt(8), x), hl.cast(hl.UInt(8), inp0[hl.clamp(x // 2, 0, 7), hl.clamp(y, 0, 5)]))
    f2 = hl.Func('f2')
    f2[x, y] = hl.select(hl.cast(hl.Bool(), (f1[x, y - 1] & 1)), hl.saturating_cast(hl.UInt(8), inp0[hl.clamp(x - 1, 0, 7), hl.clamp(hl.clamp(hl.cast(hl.Int(32), hl.i8_sat(x)), 4, 8), 0, 5)]), hl.u8(f0[y - 2, y - 2]))
    f2[x, y] = (f2[x, y] + hl.lerp((hl.mux(hl.u8_sat(x), [hl.u8(bc0[x - 2, 0]), hl.cast(hl.UInt(8), bc0[x, y // 2]), hl.u8(f0[x, hl.clamp(hl.cast(hl.Int(32), hl.rounding_mul_shift_right(hl.u8(12), hl.u8(bc0[y * 2, 2 * y + 2]), 8)), -4, 5)]), hl.u8(y)]) - hl.cast(hl.UInt(8), hl.u64(2147483647))), ((f1[x, y] % 255) | hl.max(hl.u8(inp0[hl.clamp(3, 0, 7), hl.clamp(y, 0, 5)]), hl.u8_sat(x))), hl.lerp(hl.u8_sat(hl.cast(hl.UInt(32), 13)), (hl.cast(hl.UInt(8), y) // hl.u8(12)), hl.mux(hl.saturating_cast(hl.Int(16), x), [hl.u8(16), hl.cast(hl.UInt(8), f0[x, hl.clamp(hl.i32(hl.min(f0[x - 3, y], hl.saturating_cast(hl.Int(8), y))), 0, 10)]), hl.u8(bc0[x - 2, y / 2])]))))
    r0 = hl.RDom([(0, 1)])
    r1 = hl.RDom([(-1, 2), (1, 1)])
    f2[r0.x, y] *= hl.absd(hl.min(hl.mux(hl.u32(f1[r0.x / 2, y]), [hl.cast(hl.Int(8), f1[r0.x + 2, y / 2]), hl.i8(2)]), hl.halving_sub(hl.saturating_cast(hl.Int(8), inp0[hl.clamp(r0.x - 2, 0, 7), hl.clamp(y, 0, 5)]), hl.saturating_cast(hl.Int(8), y))), hl.sum((hl.cast(hl.Int(8), hl.f64(r1.x)) + hl.i8(r1.y))))
    if SCHED:
        f2.update(1).vectorize(r0.x, 2)
        rv0 = hl.RVar('rv0')
        sv1 = hl.Var('sv1')
        rv2 = hl.RVar('rv2')
        sv3 = hl.Var('sv3')
        f2.update(1).tile(r0.x, y, rv2, sv3, rv0, sv1, 4, 4, hl.TailStrategy.Auto)
        f2.update(1).vectorize(rv0)
        f2.update(1).reorder(sv1, rv2, sv3)
        sv4 = hl.Var('sv4')
        sv5 = hl.Var('sv5')
        f1.split(x, sv4, sv5, 5)
        sv6 = hl.Var('sv6')
        f1.rename(sv4, sv6)
        f1.vectorize(y, 4)
        f1.vectorize(sv5)
        f0.unroll(x, 3)
        f0.parallel(y)
        sv7 = hl.Var('sv7')
        sv8 = hl.Var('sv8')
        f0.update(0).tile(y, x, sv7, sv8, 3, 16)
        sv9 = hl.Var('sv9')
        sv10 = hl.Var('sv10')
        f0.update(0).split(sv8, sv9, sv10, 3)
        f0.update(0).parallel(y, 4)
        sv11 = hl.Var('sv11')
        sv12 = hl.Var('sv12')
        f0.update(0).split(sv7, sv11, sv12, 4, hl.TailStrategy.Predicate)
        f1.compute_root()
        bc0.compute_root()
        f0.store_in(hl.MemoryType.Heap)
    r = f2.realize([1, 24])
    return [np.array(r)]


if __name__ == '__main__':
    hl = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else 'ferrohalide')
    np.set_printoptions(threshold=64, linewidth=150)
    res = pipeline(hl, SCHED and 'nosched' not in sys.argv[2:])
    for a in (res['values'] + res['regions'] if isinstance(res, dict) else res):
        print(repr(a))
