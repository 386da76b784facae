"""Casts, reinterpret, saturating casts, concise casts, select/mux, min/max/clamp,
abs/absd, lerp, popcount / clz / ctz."""
import numpy as np
import pytest

from .harness import (INT_TYPES, NUM_TYPES, buffer, differential, edge_values, htype,
                      is_float, npdtype, select_tree)


@differential()
@pytest.mark.parametrize("src", NUM_TYPES)
def test_casts_from(hl, src):
    """hl.cast(src -> every type).  int -> narrower int wraps.  Float -> int casts
    out of range are undefined in Halide and left out.  Results are widened
    bit-exactly (to i64 / f64) so each source needs two pipelines."""
    x, k = hl.Var("x"), hl.Var("k")
    int_dsts = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"]
    out = {}
    if is_float(src):
        groups = {
            "all": (np.array([0, 0.5, 1, 2.75, 3, 7.25, 100, 127, 127.9], npdtype(src)),
                    int_dsts),
            "signed": (np.array([-0.5, -1, -2.75, -7.9, -128], npdtype(src)),
                       ["i8", "i16", "i32", "i64", "bool"]),
        }
    else:
        groups = {"all": (edge_values(src), int_dsts)}
    for gname, (v, dsts) in groups.items():
        A = buffer(hl, v)
        f = hl.Func("to_int")
        f[x, k] = select_tree(hl, k, [hl.cast(hl.Int(64), hl.cast(htype(hl, d), A[x]))
                                      for d in dsts])
        out["int_" + gname] = f.realize([len(v), len(dsts)])
    v = edge_values(src)
    A = buffer(hl, v)
    g = hl.Func("to_float")
    g[x, k] = select_tree(hl, k, [hl.cast(hl.Float(64), hl.cast(htype(hl, d), A[x]))
                                  for d in ["f32", "f64"]])
    out["float"] = g.realize([len(v), 2])
    return out


@differential()
@pytest.mark.parametrize("src", NUM_TYPES)
def test_concise_and_saturating_casts(hl, src):
    """hl.i8_sat .. hl.u64_sat, hl.saturating_cast, hl.i8 .. hl.u64 (results widened
    bit-exactly to i64 so one pipeline holds them all)."""
    x, k = hl.Var("x"), hl.Var("k")
    v = edge_values(src)
    if is_float(src):
        v = v[~np.isnan(v)]  # saturating cast of NaN: unspecified
    A = buffer(hl, v)
    sat = ["i8_sat", "u8_sat", "i16_sat", "u16_sat", "i32_sat", "u32_sat", "i64_sat",
           "u64_sat"]
    exprs = [getattr(hl, n)(A[x]) for n in sat]
    exprs += [hl.saturating_cast(hl.Int(16), A[x]), hl.saturating_cast(hl.UInt(8), A[x])]
    types = [e.type() for e in exprs]
    f = hl.Func("sat")
    f[x, k] = select_tree(hl, k, [hl.cast(hl.Int(64), e) for e in exprs])
    out = {"sat": f.realize([len(v), len(exprs)]), "sat_types": types}
    if not is_float(src):
        conc = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"]
        ces = [getattr(hl, c)(A[x]) for c in conc]
        out["concise_types"] = [e.type() for e in ces]
        h = hl.Func("concise")
        h[x, k] = select_tree(hl, k, [hl.cast(hl.Float(64), e) if is_float(c) else
                                      hl.cast(hl.Int(64), e) for c, e in zip(conc, ces)
                                      if not is_float(c)])
        out["concise"] = h.realize([len(v), 8])
    return out


@differential()
def test_reinterpret(hl):
    x = hl.Var("x")
    out = {}
    pairs = [("f32", "u32"), ("f32", "i32"), ("u32", "f32"), ("f64", "u64"),
             ("i64", "f64"), ("i8", "u8"), ("u16", "i16"), ("i64", "u64")]
    for src, dst in pairs:
        v = edge_values(src)
        A = buffer(hl, v)
        f = hl.Func("re_%s_%s" % (src, dst))
        f[x] = hl.reinterpret(htype(hl, dst), A[x])
        out["%s->%s" % (src, dst)] = f.realize([len(v)])
    return out


@differential()
@pytest.mark.parametrize("t", NUM_TYPES)
def test_select_min_max_clamp_abs(hl, t):
    x, y, k = hl.Var("x"), hl.Var("y"), hl.Var("k")
    v = edge_values(t)
    if is_float(t):
        v = v[~np.isnan(v)]  # min/max/select with NaN: unspecified under fast-math
    A, B = buffer(hl, v), buffer(hl, v)
    a, b = A[x], B[y]
    lo = hl.min(a, b)
    hi = hl.max(a, b)
    mid = getattr(hl, t)(3)
    same = [
        hl.select(a < b, a, b),
        hl.select(a < b, a, a == b, mid, b),  # multi-way select
        hl.select(a < mid, a, a > b, b, a == b, mid, getattr(hl, t)(1)),
        hl.min(a, b), hl.max(a, b),
        hl.clamp(mid, lo, hi),
        hl.clamp(a, getattr(hl, t)(1), getattr(hl, t)(100)),
        hl.mux(hl.clamp(y, 0, 3), [a, b, mid, lo]),
        hl.mux(y, [a, b]),  # out of range index: the last value
    ]
    f = hl.Func("same")
    f[x, y, k] = select_tree(hl, k, same)
    out = {"same": f.realize([len(v), len(v), len(same)])}
    # abs / absd: unsigned result for ints
    g = hl.Func("f_abs")
    g[x, y, k] = hl.select(k == 0, hl.abs(a), hl.absd(a, b))
    out["abs_absd"] = g.realize([len(v), len(v), 2])
    out["abs_type"] = hl.abs(a).type()
    out["absd_type"] = hl.absd(a, b).type()
    return out


@differential()
def test_lerp(hl):
    x, y = hl.Var("x"), hl.Var("y")
    out = {}
    for t in ["u8", "u16", "i8", "i16", "u32"]:
        v = edge_values(t)
        A, B = buffer(hl, v), buffer(hl, v)
        wt = "u8" if t in ("u8", "i8") else ("u16" if t in ("u16", "i16") else "u32")
        w = buffer(hl, edge_values(wt))
        f = hl.Func("lerp_" + t)
        f[x, y] = hl.lerp(A[x], B[x], w[y])
        out["int_" + t] = f.realize([len(v), len(edge_values(wt))])
    for t in ["f32", "f64"]:
        v = np.array([0.0, 1.0, -2.5, 100.0, 1e6], dtype=npdtype(t))
        w = np.array([0.0, 0.25, 0.5, 1.0, 0.1], dtype=np.float32)
        A, W = buffer(hl, v), buffer(hl, w)
        f = hl.Func("lerp_" + t)
        f[x, y] = hl.lerp(A[x], A[(x + 1) % len(v)], hl.cast(htype(hl, t), W[y]))
        out["float_" + t] = f.realize([len(v), len(w)])
    # float weight with integer values
    v = edge_values("u8")
    A = buffer(hl, v)
    g = hl.Func("lerp_u8_f")
    g[x, y] = hl.lerp(A[x], A[(x + 3) % len(v)], hl.cast(hl.Float(32), y) / 4.0)
    out["u8_float_weight"] = g.realize([len(v), 5])
    return out


@differential()
@pytest.mark.parametrize("t", INT_TYPES)
def test_bit_counting(hl, t):
    x, k = hl.Var("x"), hl.Var("k")
    v = edge_values(t)
    v = np.concatenate([v, np.array([0x10, 0x40, 0x55], dtype=v.dtype)])
    A = buffer(hl, v)
    a = A[x]
    exprs = [hl.popcount(a), hl.count_leading_zeros(a), hl.count_trailing_zeros(a)]
    types = [e.type() for e in exprs]
    f = hl.Func("bits")
    f[x, k] = select_tree(hl, k, exprs)
    return {"types": types, "values": f.realize([len(v), 3])}
