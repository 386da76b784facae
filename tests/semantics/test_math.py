"""Math functions on f32 / f64 over sensible domains and special values, and with
integer arguments (promotion to Float(32)).  Tolerances: see harness.ULP."""
import numpy as np
import pytest

from .harness import FAST_TOL, ULP, Tol, buffer, differential, htype, npdtype, select_tree

N = 64
RNG_SEED = 1234

# name -> (lo, hi, extra special values)
UNARY = {
    "sin": (-10.0, 10.0, [0.0, -0.0, np.pi, -np.pi / 2, 100.0]),
    "cos": (-10.0, 10.0, [0.0, np.pi, np.pi / 2, 100.0]),
    "tan": (-1.5, 1.5, [0.0, 0.785, -1.0]),
    "asin": (-1.0, 1.0, [0.0, 1.0, -1.0, 0.5]),
    "acos": (-1.0, 1.0, [0.0, 1.0, -1.0, 0.5]),
    "atan": (-50.0, 50.0, [0.0, 1.0, -1.0, 1e10]),
    "sinh": (-10.0, 10.0, [0.0, 1.0, -1.0]),
    "cosh": (-10.0, 10.0, [0.0, 1.0, -1.0]),
    "tanh": (-10.0, 10.0, [0.0, 1.0, -1.0, 20.0, -20.0]),
    "asinh": (-50.0, 50.0, [0.0, 1.0, -1.0]),
    "acosh": (1.0, 50.0, [1.0, 2.0, 1000.0]),
    "atanh": (-0.99, 0.99, [0.0, 0.5, -0.5]),
    "exp": (-80.0, 80.0, [0.0, 1.0, -1.0, -100.0]),
    "log": (1e-6, 1e6, [1.0, 2.0, 0.5, 1e-30, 1e30]),
}
EXACT = {
    "sqrt": (0.0, 1e6, [0.0, 1.0, 2.0, 4.0, 1e-30, np.inf, -1.0, np.nan]),
    "floor": (-100.0, 100.0, [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.0, -0.0, 1e10, np.inf,
                              -np.inf, np.nan]),
    "ceil": (-100.0, 100.0, [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.0, 1e10, np.inf,
                             -np.inf, np.nan]),
    "round": (-100.0, 100.0, [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.49999997, 1e10,
                              np.inf, -np.inf, np.nan]),
    "trunc": (-100.0, 100.0, [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e10, np.inf, -np.inf,
                              np.nan]),
    "fract": (-100.0, 100.0, [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1e3, 0.0]),
    "abs": (-100.0, 100.0, [0.0, -0.0, -1.0, np.inf, -np.inf, np.nan]),
}


def _table(dt, spec, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for name, (lo, hi, extra) in spec.items():
        extra = np.array(extra, dtype=np.float64)
        rnd = rng.uniform(lo, hi, N - len(extra))
        rows.append(np.concatenate([extra, rnd]).astype(dt))
    return np.stack(rows)  # shape (k, N): Halide D[x, k]


def _unary_tol(t, name):
    if t == "f64":
        return ULP["f64"]
    return {"exp": ULP["f32_exp"]}.get(name, ULP["f32"])


def _run_unary(hl, t, spec, fnames, tol):
    x, k = hl.Var("x"), hl.Var("k")
    D = buffer(hl, _table(npdtype(t), spec, RNG_SEED))
    f = hl.Func("math")
    f[x, k] = select_tree(hl, k, [getattr(hl, n)(D[x, i]) for i, n in enumerate(fnames)])
    r = np.asarray(f.realize([N, len(fnames)]))
    return {n: Tol(np.array(r[i]), ulp=tol(n)) for i, n in enumerate(fnames)}


@differential()
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_transcendental(hl, t):
    out = _run_unary(hl, t, UNARY, list(UNARY), lambda n: _unary_tol(t, n))
    x, y = hl.Var("x"), hl.Var("y")
    dt = npdtype(t)
    a = np.array([0.0, 1.0, -1.0, 2.5, -7.0, 1e-3, 100.0, 0.5], dtype=dt)
    b = np.array([0.0, 1.0, -1.0, 3.0, -2.0, 0.5, 10.0], dtype=dt)
    A, B = buffer(hl, a), buffer(hl, b)
    g = hl.Func("f_atan2")
    g[x, y] = hl.atan2(A[x], B[y])
    out["atan2"] = Tol(g.realize([len(a), len(b)]), ulp=_unary_tol(t, "atan2"))
    pa = np.abs(a) + dt.type(0.25)
    PA = buffer(hl, pa)
    p = hl.Func("f_pow")
    p[x, y] = hl.pow(PA[x], B[y])
    out["pow"] = Tol(p.realize([len(a), len(b)]),
                     ulp=ULP["f32_pow"] if t == "f32" else ULP["f64"])
    q = hl.Func("pow_neg_base")  # negative base, integer exponent
    q[x, y] = hl.pow(A[x], hl.cast(htype(hl, t), y - 2))
    out["pow_neg_base"] = Tol(q.realize([len(a), 5]),
                              ulp=ULP["f32_pow"] if t == "f32" else ULP["f64"])
    return out


@differential()
def test_erf(hl):
    x = hl.Var("x")
    v = np.concatenate([[0.0, 1.0, -1.0, 3.0, -5.0, 10.0],
                        np.linspace(-4, 4, 58)]).astype(np.float32)
    A = buffer(hl, v)
    f = hl.Func("f_erf")
    f[x] = hl.erf(A[x])
    return Tol(f.realize([len(v)]), ulp=ULP["f32_erf"])


@differential()
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_exact_float_functions(hl, t):
    """sqrt, floor, ceil, round (half to even), trunc, fract, abs: 0 ULP."""
    return _run_unary(hl, t, EXACT, list(EXACT), lambda n: 0)


@differential()
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_float_predicates(hl, t):
    x, k = hl.Var("x"), hl.Var("k")
    v = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e30,
                  np.finfo(npdtype(t)).max, np.finfo(npdtype(t)).tiny], dtype=npdtype(t))
    A = buffer(hl, v)
    f = hl.Func("pred")
    f[x, k] = select_tree(hl, k, [hl.is_nan(A[x]), hl.is_inf(A[x]), hl.is_finite(A[x])])
    return {"values": f.realize([len(v), 3]), "type": hl.is_nan(A[0]).type()}


@differential()
def test_fast_math(hl):
    x, y = hl.Var("x"), hl.Var("y")
    rng = np.random.default_rng(7)
    out = {}
    dom = {
        "fast_sin": np.concatenate([[0.0, 1.0, -1.0, np.pi], rng.uniform(-10, 10, 60)]),
        "fast_cos": np.concatenate([[0.0, 1.0, -1.0, np.pi], rng.uniform(-10, 10, 60)]),
        "fast_exp": np.concatenate([[0.0, 1.0, -1.0], rng.uniform(-80, 80, 61)]),
        "fast_log": np.concatenate([[1.0, 2.0, 0.5], rng.uniform(1e-6, 1e6, 61)]),
        "fast_inverse": np.concatenate([[1.0, 2.0, -3.0], rng.uniform(-1e3, 1e3, 61)]),
        "fast_inverse_sqrt": np.concatenate([[1.0, 4.0, 0.25], rng.uniform(1e-3, 1e6, 61)]),
    }
    for name, v in dom.items():
        A = buffer(hl, v.astype(np.float32))
        f = hl.Func("f_" + name)
        f[x] = getattr(hl, name)(A[x])
        out[name] = Tol(f.realize([len(v)]), **FAST_TOL[name])
    a = np.array([0.5, 1.0, 2.0, 3.7, 10.0], np.float32)
    b = np.array([0.0, 1.0, -1.0, 2.5, -3.0, 8.0], np.float32)
    A, B = buffer(hl, a), buffer(hl, b)
    g = hl.Func("f_fast_pow")
    g[x, y] = hl.fast_pow(A[x], B[y])
    out["fast_pow"] = Tol(g.realize([len(a), len(b)]), **FAST_TOL["fast_pow"])
    return out


@differential()
def test_math_on_int_arguments(hl):
    """Integer arguments are promoted to Float(32)."""
    x = hl.Var("x")
    exprs = {
        "sqrt": hl.sqrt(x), "sin": hl.sin(x), "exp": hl.exp(x - 5), "log": hl.log(x + 1),
        "floor": hl.floor(x), "round": hl.round(x), "pow": hl.pow(x, 2),
        "atan2": hl.atan2(x, 3), "abs": hl.abs(x - 4), "sqrt_u8": hl.sqrt(hl.u8(x)),
        "floor_f64": hl.floor(hl.f64(x) / 3), "sqrt_i64": hl.sqrt(hl.i64(x)),
    }
    out = {"types": {n: e.type() for n, e in exprs.items()}}
    for n, e in exprs.items():
        f = hl.Func("f_" + n)
        f[x] = e
        tol = 0 if n in ("sqrt", "floor", "round", "abs", "sqrt_u8", "floor_f64",
                         "sqrt_i64") else (ULP["f32_pow"] if n == "pow" else
                                           ULP["f32_exp"])
        out[n] = Tol(f.realize([10]), ulp=tol)
    return out


@differential()
@pytest.mark.parametrize("width", [8, 13, 21])
def test_vectorized_math_with_a_shifted_tail(hl, width):
    """A vectorized loop of sin and cos is not partitioned for its
    ShiftInwards clamp (its epilogue would be a second copy of the
    polynomials): the last vector, shifted back over computed points, and
    the others give the values a partitioned loop gives."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.sin(hl.f32(x) * 0.375 + hl.f32(y)) * hl.cos(hl.f32(y) * 0.125 - hl.f32(x))
    f.vectorize(x, 8)
    return Tol(f.realize([width, 3]), ulp=ULP["f32"])
