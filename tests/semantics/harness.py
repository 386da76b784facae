"""Differential-testing harness: run one test body against Halide and ferrohalide.

A test body is an ordinary function whose first parameter is the Halide-like module
(``hl``).  It builds pipelines with that module only, realizes them, and returns
plain data: NumPy arrays, ``hl.Buffer`` objects, ``hl.Type`` objects, Python
scalars, strings, and lists / tuples / dicts of those.  The harness runs the body
once with the reference (``import halide``) and once with the implementation under
test (``import ferrohalide``) and compares the results.

    from .harness import differential

    @differential()                      # floats exact (0 ULP)
    def test_add(hl):
        x = hl.Var("x")
        f = hl.Func("f")
        f[x] = x + 1
        return f.realize([10])          # a Buffer: converted with np.array(buf)

    @differential(ulp=4)                 # floats within 4 ULP of the reference
    @pytest.mark.parametrize("t", ["f32", "f64"])
    def test_sin(hl, t): ...

    @differential(expect_error=True)     # both must raise, same exception kind
    def test_undefined(hl): ...

    run_both(body, **kwargs)             # the same, called by hand

Comparison rules (``assert_same``):

* integer and bool arrays / scalars: bit-exact, and equal dtype and shape;
* float arrays / scalars: equal dtype and shape, NaN at exactly the same positions,
  infinities equal, every other element within the ULP bound in force.  The default
  bound is 0 ULP (``+0.0`` and ``-0.0`` count as equal, 0 ULP apart).  Per-output
  bounds: wrap a value in ``Tol(value, ulp=.., rel=.., abs=..)`` inside the body; an
  element passes if it is within ``ulp`` ULP, or within ``abs + rel*|ref|``.
* ``hl.Type`` values are compared by (code, bits, lanes) and ``str``;
* exceptions (``expect_error=True`` or ``outcome(fn)``): the reference's exception
  decides the kind: if it is an ``hl.HalideError`` the implementation must raise its
  own ``hl.HalideError``; otherwise (TypeError, ValueError, ...) the implementation's
  exception must be an instance of that same builtin class.

ULP bounds used by the suite (see ``ULP``): measured on halide 21.0.0 / x86-64
against correctly rounded results, Halide's own errors are: f32 sin cos tan asin acos
atan atan2 sinh cosh asinh acosh atanh log <= 1 ULP, tanh <= 2, erf <= 4, exp <= 5
(its own polynomial), pow ~ 41 ULP (its own exp2/log2 polynomial, worse near
overflow); f64 (libm) <= 2 ULP.  The bounds against the reference leave room for the
implementation's own error on top of the reference's.  fast_* functions are compared
with Halide's documented accuracy (fast_sin/fast_cos absolute 1e-5, fast_exp /
fast_log / fast_pow "last 5 bits", fast_inverse / fast_inverse_sqrt = rcpps /
rsqrtps, relative 1.5*2^-12), doubled.

Modes (environment variables):

* ``FH_SELFTEST=1``: the implementation side is also ``halide`` — used to check that
  every test body is valid against the reference.
* ``FH_IMPL_MODULE=name``: import this instead of ``ferrohalide``.

If either module cannot be imported the test is skipped (``pytest.importorskip``).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import math
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

REF_MODULE = "halide"
IMPL_MODULE = os.environ.get("FH_IMPL_MODULE", "ferrohalide")
SELFTEST = os.environ.get("FH_SELFTEST", "") not in ("", "0")

# ---------------------------------------------------------------------------------
# Float tolerances (ULP bounds against the reference), see the module docstring.
# ---------------------------------------------------------------------------------
EXACT = 0
ULP = {
    # correctly rounded in IEEE: + - * / sqrt, floor ceil round trunc fract, casts
    "exact": 0,
    # f32 transcendentals (Halide itself <= 2 ULP from the true value)
    "f32": 4,
    # f32 exp and erf: Halide's own polynomials are 4-5 ULP from the true value
    "f32_exp": 8,
    "f32_erf": 8,
    # f32 pow: Halide's pow_f32 is ~41 ULP off at |y| <= 10
    "f32_pow": 128,
    # f64 transcendentals: Halide calls libm (<= 2 ULP)
    "f64": 4,
}
# Approximate functions: (kind, bound).  Halide documents these accuracies.
FAST_TOL = {
    "fast_sin": dict(abs=2e-5),
    "fast_cos": dict(abs=2e-5),
    "fast_exp": dict(rel=2.0 ** -17),  # "last 5 bits of the mantissa" twice
    "fast_log": dict(abs=2.0 ** -16, rel=2.0 ** -17),
    "fast_pow": dict(rel=2.0 ** -16),
    "fast_inverse": dict(rel=3.0 * 2.0 ** -12),  # rcpps: 1.5 * 2^-12, twice
    "fast_inverse_sqrt": dict(rel=3.0 * 2.0 ** -12),  # rsqrtps
}

# name -> (constructor, bits, numpy dtype)
TYPES = {
    "i8": ("Int", 8, np.int8),
    "i16": ("Int", 16, np.int16),
    "i32": ("Int", 32, np.int32),
    "i64": ("Int", 64, np.int64),
    "u8": ("UInt", 8, np.uint8),
    "u16": ("UInt", 16, np.uint16),
    "u32": ("UInt", 32, np.uint32),
    "u64": ("UInt", 64, np.uint64),
    "f32": ("Float", 32, np.float32),
    "f64": ("Float", 64, np.float64),
    "bool": ("Bool", 1, np.bool_),
}
INT_TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
SIGNED_TYPES = ["i8", "i16", "i32", "i64"]
UNSIGNED_TYPES = ["u8", "u16", "u32", "u64"]
FLOAT_TYPES = ["f32", "f64"]
NUM_TYPES = INT_TYPES + FLOAT_TYPES


def htype(hl, name: str):
    """hl.Type for a short type name ("i8", "u64", "f32", "bool")."""
    ctor, bits, _ = TYPES[name]
    if ctor == "Bool":
        return hl.Bool()
    return getattr(hl, ctor)(bits)


def npdtype(name: str):
    return np.dtype(TYPES[name][2])


def is_float(name: str) -> bool:
    return TYPES[name][0] == "Float"


def is_signed(name: str) -> bool:
    return TYPES[name][0] == "Int"


def edge_values(name: str) -> np.ndarray:
    """A small table of interesting values of the type (no duplicates)."""
    dt = npdtype(name)
    if name == "bool":
        return np.array([False, True])
    if is_float(name):
        fi = np.finfo(dt)
        vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -7.75, 100.0, 1e6, -1e-3,
                float(fi.max), float(fi.min), float(fi.tiny), float(fi.smallest_subnormal),
                math.inf, -math.inf, math.nan]
        return np.array(vals, dtype=dt)
    ii = np.iinfo(dt)
    vals = [0, 1, 2, 3, 7, 100, ii.max, ii.max - 1, ii.max // 2 + 1]
    if ii.min < 0:
        vals += [-1, -2, -3, -7, -100, ii.min, ii.min + 1]
    out = []
    for v in vals:
        if v not in out and ii.min <= v <= ii.max:
            out.append(v)
    return np.array(out, dtype=dt)


def buffer(hl, array, **kw):
    """hl.Buffer over a C-contiguous copy of ``array`` (kept alive by the Buffer's
    reference to it).  uint64 arrays are passed with the 'Q' format character:
    halide 21 rejects NumPy's default 'L' uint64 ("Unsupported Buffer<> type")."""
    a = np.ascontiguousarray(np.array(array))
    if a.dtype == np.uint64:
        a = a.view(np.ulonglong)
    return hl.Buffer(a, **kw)


def realize(f, sizes):
    """f.realize(sizes) as an owned NumPy array (axes reversed, as np.asarray does)."""
    return np.array(np.asarray(f.realize(list(sizes))), copy=True)


def select_tree(hl, idx, exprs, lo: int = 0):
    """Balanced select tree: value exprs[i] where idx == lo + i (last one otherwise)."""
    n = len(exprs)
    if n == 1:
        return exprs[0]
    m = n // 2
    return hl.select(idx < lo + m, select_tree(hl, idx, exprs[:m], lo),
                     select_tree(hl, idx, exprs[m:], lo + m))


# ---------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------
@dataclass
class Tol:
    """Per-output tolerance for float values (see module docstring)."""
    value: Any
    ulp: int | None = None
    rel: float | None = None
    abs: float | None = None


@dataclass(frozen=True)
class TypeDesc:
    code: str
    bits: int
    lanes: int
    text: str


@dataclass(frozen=True)
class Raised:
    """An exception, reduced to what is compared across modules."""
    kind: str  # "HalideError" or a builtin exception class name
    message: str

    def __eq__(self, other):  # message is informative only
        return isinstance(other, Raised) and self.kind == other.kind

    def __hash__(self):
        return hash(self.kind)


def _type_desc(hl, t) -> TypeDesc:
    if t.is_bool():
        code = "bool"
    elif t.is_float():
        code = "float"
    elif t.is_uint():
        code = "uint"
    elif t.is_int():
        code = "int"
    else:
        code = "other"
    return TypeDesc(code, int(t.bits()), int(t.lanes()), str(t))


def _exc_kind(hl, exc: BaseException) -> str:
    herr = getattr(hl, "HalideError", None)
    if herr is not None and isinstance(exc, herr):
        return "HalideError"
    for cls in type(exc).__mro__:
        if getattr(builtins, cls.__name__, None) is cls:
            return cls.__name__
    return type(exc).__name__


def outcome(hl, fn: Callable[[], Any]):
    """Run fn(); return its (normalized) value, or Raised(kind) if it raised."""
    try:
        return normalize(hl, fn())
    except Exception as exc:  # noqa: BLE001 - everything is compared
        return Raised(_exc_kind(hl, exc), str(exc))


def normalize(hl, obj):
    """Turn a body's result into module-independent data."""
    if isinstance(obj, Tol):
        return Tol(normalize(hl, obj.value), obj.ulp, obj.rel, obj.abs)
    if isinstance(obj, (Raised, TypeDesc)):
        return obj
    if isinstance(obj, hl.Buffer):
        return np.array(np.asarray(obj), copy=True)
    if isinstance(obj, hl.Type):
        return _type_desc(hl, obj)
    if isinstance(obj, (hl.Expr, hl.Func)):
        raise TypeError("test bodies must return realized values, not %r" % (obj,))
    if isinstance(obj, np.ndarray):
        return np.array(obj, copy=True)
    if isinstance(obj, np.generic):
        return obj
    if isinstance(obj, dict):
        return {k: normalize(hl, v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(normalize(hl, v) for v in obj)
    if obj is None or isinstance(obj, (bool, int, float, str, complex)):
        return obj
    # hl.Buffer-like objects of the implementation
    if hasattr(obj, "__buffer__") or hasattr(obj, "__array_interface__"):
        return np.array(np.asarray(obj), copy=True)
    raise TypeError("cannot compare result of type %s" % type(obj).__name__)


# ---------------------------------------------------------------------------------
# Float comparison
# ---------------------------------------------------------------------------------
def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise distance in units in the last place (as float64); +0 and -0 are
    0 apart.  NaNs are not meaningful here (compared separately)."""
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.dtype == b.dtype and a.dtype.kind == "f"
    ity = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    mask = np.int64((1 << (8 * a.dtype.itemsize - 1)) - 1)
    ia = a.view(ity).astype(np.int64)
    ib = b.view(ity).astype(np.int64)
    oa = np.where(ia < 0, -(ia & mask), ia)
    ob = np.where(ib < 0, -(ib & mask), ib)
    same_sign = (oa >= 0) == (ob >= 0)
    with np.errstate(over="ignore"):
        d_same = np.abs(np.where(same_sign, oa - ob, 0)).astype(np.float64)
    d_diff = np.abs(oa.astype(np.float64) - ob.astype(np.float64))
    return np.where(same_sign, d_same, d_diff)


def _float_mismatch(ref: np.ndarray, got: np.ndarray, ulp, rel, abs_):
    """Boolean mask of elements that are not close enough."""
    rn, gn = np.isnan(ref), np.isnan(got)
    bad = rn != gn
    both = ~(rn | gn)
    rinf, ginf = np.isinf(ref), np.isinf(got)
    inf_any = both & (rinf | ginf)
    bad |= inf_any & (ref != got)
    fin = both & ~inf_any
    ok = np.zeros(ref.shape, dtype=bool)
    if ulp is not None:
        ok |= ulp_distance(ref, got) <= ulp
    if rel is not None or abs_ is not None:
        with np.errstate(all="ignore"):
            diff = np.abs(ref.astype(np.float64) - got.astype(np.float64))
            lim = (abs_ or 0.0) + (rel or 0.0) * np.abs(ref.astype(np.float64))
        ok |= diff <= lim
    if ulp is None and rel is None and abs_ is None:
        ok |= ulp_distance(ref, got) == 0
    bad |= fin & ~ok
    return bad


class Mismatch(AssertionError):
    pass


def _fmt_mismatch(path, ref, got, bad, extra=""):
    idx = np.argwhere(bad)
    lines = ["%s: %d of %d elements differ%s" % (path or "result", len(idx), bad.size, extra)]
    for ix in idx[:8]:
        ix = tuple(int(i) for i in ix)
        r, g = ref[ix], got[ix]
        line = "  at %s: reference %r, got %r" % (ix, r, g)
        if ref.dtype.kind == "f":
            line += " (%g ULP)" % ulp_distance(np.array([r]), np.array([g]))[0]
        lines.append(line)
    return "\n".join(lines)


def assert_same(ref, got, ulp=EXACT, rel=None, abs_=None, path=""):
    """Compare normalized results (see module docstring); raise Mismatch if not."""
    if isinstance(ref, Tol):
        got_v = got.value if isinstance(got, Tol) else got
        return assert_same(ref.value, got_v, ref.ulp, ref.rel, ref.abs, path)
    if isinstance(got, Tol):
        got = got.value
    if isinstance(ref, Raised):
        if not isinstance(got, Raised):
            raise Mismatch("%s: reference raised %s (%s), implementation returned %r"
                           % (path or "result", ref.kind, ref.message[:300], got))
        if ref.kind != got.kind:
            raise Mismatch("%s: reference raised %s (%s); implementation raised %s (%s)"
                           % (path or "result", ref.kind, ref.message[:300], got.kind,
                              got.message[:300]))
        return
    if isinstance(got, Raised):
        raise Mismatch("%s: implementation raised %s: %s; reference returned %r"
                       % (path or "result", got.kind, got.message[:500], ref))
    if isinstance(ref, dict):
        if not isinstance(got, dict) or set(ref) != set(got):
            raise Mismatch("%s: keys differ: reference %r, got %r"
                           % (path, sorted(map(str, ref)),
                              sorted(map(str, got)) if isinstance(got, dict) else got))
        errs = []
        for k in ref:
            try:
                assert_same(ref[k], got[k], ulp, rel, abs_, "%s[%r]" % (path, k))
            except Mismatch as e:
                errs.append(str(e))
        if errs:
            raise Mismatch("\n".join(errs))
        return
    if isinstance(ref, (list, tuple)):
        if type(got) is not type(ref) or len(got) != len(ref):
            raise Mismatch("%s: reference %s of %d, got %r" % (path, type(ref).__name__,
                                                             len(ref), got))
        errs = []
        for i, (r, g) in enumerate(zip(ref, got)):
            try:
                assert_same(r, g, ulp, rel, abs_, "%s[%d]" % (path, i))
            except Mismatch as e:
                errs.append(str(e))
        if errs:
            raise Mismatch("\n".join(errs))
        return
    if isinstance(ref, np.ndarray) or isinstance(ref, np.generic):
        if not isinstance(got, (np.ndarray, np.generic)):
            raise Mismatch("%s: reference is a NumPy %s %r, got %r"
                           % (path, ref.dtype, ref, got))
        if isinstance(ref, np.ndarray) != isinstance(got, np.ndarray):
            raise Mismatch("%s: reference %r (%s), got %r (%s)" % (
                path, ref, type(ref).__name__, got, type(got).__name__))
        if ref.dtype != got.dtype:
            raise Mismatch("%s: dtype differs: reference %s, got %s" % (path, ref.dtype,
                                                                        got.dtype))
        if ref.shape != got.shape:
            raise Mismatch("%s: shape differs: reference %s, got %s" % (path, ref.shape,
                                                                        got.shape))
        r = np.asarray(ref)
        g = np.asarray(got)
        if r.dtype.kind == "f":
            bad = _float_mismatch(r, g, ulp, rel, abs_)
            extra = " (bound: ulp=%s rel=%s abs=%s)" % (ulp, rel, abs_)
        else:
            bad = r != g
            extra = " (exact)"
        if bad.any():
            raise Mismatch(_fmt_mismatch(path, np.atleast_1d(r), np.atleast_1d(g),
                                         np.atleast_1d(bad), extra))
        return
    if isinstance(ref, float):
        if type(got) is not float:
            raise Mismatch("%s: reference float %r, got %r" % (path, ref, got))
        return assert_same(np.float64(ref), np.float64(got), ulp, rel, abs_, path)
    if type(ref) is not type(got) or ref != got:
        raise Mismatch("%s: reference %r (%s), got %r (%s)" % (
            path or "result", ref, type(ref).__name__, got, type(got).__name__))


# ---------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------
def modules():
    """(reference module, implementation module); skips the test if either is absent."""
    ref = pytest.importorskip(REF_MODULE)
    if SELFTEST:
        return ref, ref
    impl = pytest.importorskip(IMPL_MODULE)
    return ref, impl


def _run_one(hl, body, args, kwargs, expect_error):
    if expect_error:
        try:
            value = body(hl, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            return Raised(_exc_kind(hl, exc), str(exc))
        return ("returned", normalize(hl, value))
    return outcome(hl, lambda: body(hl, *args, **kwargs))


def run_both(body, *args, ulp=EXACT, rel=None, abs=None, expect_error=False, **kwargs):
    """Run body(hl, *args, **kwargs) with both modules and compare (see docstring).
    Returns the reference's normalized result."""
    ref_mod, impl_mod = modules()
    ref = _run_one(ref_mod, body, args, kwargs, expect_error)
    if expect_error and not isinstance(ref, Raised):
        pytest.fail("test is wrong: the reference did not raise (returned %r)" % (ref[1],))
    if not expect_error and isinstance(ref, Raised):
        pytest.fail("test is wrong: the reference raised %s: %s" % (ref.kind, ref.message))
    got = _run_one(impl_mod, body, args, kwargs, expect_error)
    if expect_error and not isinstance(got, Raised):
        raise Mismatch("reference raised %s (%s); the implementation did not raise"
                       % (ref.kind, ref.message[:300]))
    assert_same(ref, got, ulp=ulp, rel=rel, abs_=abs)
    return ref


def differential(ulp=EXACT, rel=None, abs=None, expect_error=False):
    """Decorator: turn ``body(hl, **params)`` into a pytest test ``test(**params)``
    that runs the body with both modules and compares.  Works with
    pytest.mark.parametrize on either side of it."""

    def deco(body):
        sig = inspect.signature(body)
        params = list(sig.parameters.values())[1:]

        @functools.wraps(body)
        def test(*args, **kwargs):
            run_both(body, *args, ulp=ulp, rel=rel, abs=abs, expect_error=expect_error,
                     **kwargs)

        test.__signature__ = sig.replace(parameters=params)
        test.__fh_body__ = body
        return test

    return deco
