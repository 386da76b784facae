"""Every Expr operator over every numeric type, at run time (values from input
Buffers, scalar and vectorized) and constant-folded (values from constants)."""
import operator
import re

import numpy as np
import pytest

from .harness import (NUM_TYPES, buffer, differential, edge_values, htype, is_float,
                      is_signed, npdtype, select_tree)

# Same-typed binary operators: name -> f(a, b)
ARITH = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,  # Halide: `/` on ints is Euclidean integer division
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "min": None,  # filled with hl.min / hl.max below
    "max": None,
}
BITWISE = {
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
}
COMPARE = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def _same_type_op_thunks(hl, t, a, b, s):
    """All ops of (a: t, b: t) -> t, as thunks (building some Exprs on constants
    already constant-folds and can raise).  s is a shift amount of type t."""
    ops = {}
    for name, fn in ARITH.items():
        if name == "min":
            ops[name] = lambda: hl.min(a, b)
        elif name == "max":
            ops[name] = lambda: hl.max(a, b)
        else:
            ops[name] = (lambda fn: lambda: fn(a, b))(fn)
    ops["neg"] = lambda: -a
    if not is_float(t):
        for name, fn in BITWISE.items():
            ops[name] = (lambda fn: lambda: fn(a, b))(fn)
        ops["invert"] = lambda: ~a
        ops["shl"] = lambda: a << s
        ops["shr"] = lambda: a >> s
    return ops


def _same_type_ops(hl, t, a, b, s):
    return {n: th() for n, th in _same_type_op_thunks(hl, t, a, b, s).items()}


def _bool_ops(hl, a, b):
    ops = {name: fn(a, b) for name, fn in COMPARE.items()}
    lt, eq = a < b, a == b
    ops["and"] = lt & (a != b)
    ops["or"] = lt | eq
    ops["xor"] = lt ^ (a <= b)
    ops["invert"] = ~lt
    ops["logical_not"] = hl.logical_not(lt)
    ops["bool_eq"] = lt == eq
    ops["bool_ne"] = lt != eq
    return ops


def _shift_amounts(t, n):
    bits = npdtype(t).itemsize * 8
    lo = -(bits - 1) if is_signed(t) else 0
    amounts = [0, 1, 2, 3, bits - 1, bits // 2, 5 % bits]
    if is_signed(t):
        amounts += [-1, -2, lo]
    return np.array([amounts[i % len(amounts)] for i in range(n)], dtype=npdtype(t))


def _rt_values(t, for_compare=False):
    v = edge_values(t)
    if is_float(t) and for_compare:
        # Halide compiles float comparisons without NaN semantics (fast-math):
        # comparisons against NaN are unspecified, so NaN is left out.
        v = v[~np.isnan(v)]
    return v


def _realize_ops(hl, ops, nx, ny, vectorize):
    x, y, k = hl.Var("x"), hl.Var("y"), hl.Var("k")
    f = hl.Func("ops")
    names = list(ops)
    f[x, y, k] = select_tree(hl, k, [ops[n] for n in names])
    if vectorize:
        f.vectorize(x, 8, hl.TailStrategy.GuardWithIf)
    r = np.asarray(f.realize([nx, ny, len(names)]))
    return {n: np.array(r[i]) for i, n in enumerate(names)}


@differential()
@pytest.mark.parametrize("vectorize", [False, True], ids=["scalar", "vec"])
@pytest.mark.parametrize("t", NUM_TYPES)
def test_runtime_same_type_ops(hl, t, vectorize):
    """a op b for every (a, b) in edge_values(t)^2; result type t."""
    x, y = hl.Var("x"), hl.Var("y")
    v = _rt_values(t)
    A, B, S = buffer(hl, v), buffer(hl, v), buffer(hl, _shift_amounts(t, len(v)))
    a, b, s = A[x], B[y], S[y]
    ops = _same_type_ops(hl, t, a, b, s)
    types = {n: e.type() for n, e in ops.items()}
    with np.errstate(all="ignore"):
        vals = _realize_ops(hl, ops, len(v), len(v), vectorize)
    if is_float(t):
        # Float min/max with a NaN operand is unspecified in Halide (it
        # compiles without NaN semantics, and the reference's answer changes
        # with what else the process compiled), so those cells are not compared.
        nan = np.isnan(v)[None, :] | np.isnan(v)[:, None]
        for n in ("min", "max"):
            if n in vals:
                vals[n] = np.where(nan, 0, vals[n]).astype(vals[n].dtype)
    return {"types": types, "values": vals}


@differential()
@pytest.mark.parametrize("vectorize", [False, True], ids=["scalar", "vec"])
@pytest.mark.parametrize("t", NUM_TYPES)
def test_runtime_comparison_and_logical_ops(hl, t, vectorize):
    x, y = hl.Var("x"), hl.Var("y")
    v = _rt_values(t, for_compare=True)
    A, B = buffer(hl, v), buffer(hl, v)
    ops = _bool_ops(hl, A[x], B[y])
    types = {n: e.type() for n, e in ops.items()}
    return {"types": types, "values": _realize_ops(hl, ops, len(v), len(v), vectorize)}


def _const(hl, t, v):
    """A constant Expr of type t holding v exactly (concise casts are exact)."""
    v = v.item()
    return getattr(hl, t)(v)


def _fold_values(t):
    """A few values per type for the constant-folding test (the simplifier's cost
    grows quickly with the number of folded expressions)."""
    v = edge_values(t)
    if is_float(t):
        want = [0.0, 1.0, -2.5, 7.25, 1e6, np.inf]
    elif is_signed(t):
        ii = np.iinfo(npdtype(t))
        want = [0, 3, -7, -1, int(ii.max), int(ii.min)]
    else:
        want = [0, 1, 7, int(np.iinfo(npdtype(t)).max)]
    out = np.array(want, dtype=v.dtype)
    return out


def _fold_pairs(t):
    v = _fold_values(t)
    return [(a, b) for a in v for b in v]


def _fold_ok(t, name, a, b):
    """Cases where constant folding is well defined in Halide."""
    if is_float(t):
        # Halide's simplifier folds x/0.0 inconsistently with IEEE; skip.
        if name in ("truediv", "floordiv", "mod") and b == 0:
            return False
        if name in ("truediv", "floordiv", "mod") and (np.isinf(a) or np.isinf(b)):
            return False
        return True
    if t in ("i32", "i64"):
        # Signed 32/64-bit overflow during constant folding is an error in Halide
        # (checked separately in test_errors.py).
        ai, bi = int(a), int(b)
        bits = 32 if t == "i32" else 64
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        res = {"add": lambda: ai + bi, "sub": lambda: ai - bi, "mul": lambda: ai * bi,
               "neg": lambda: -ai,
               "shl": lambda: ai * 2 ** bi if 0 <= bi < bits else 0,
               "shr": lambda: ai * 2 ** -bi if -bits < bi < 0 else 0,
               "truediv": lambda: -ai if bi == -1 else 0,
               "floordiv": lambda: -ai if bi == -1 else 0}.get(name, lambda: None)()
        if res is not None and not lo <= res <= hi:
            return False
    return True


@differential()
@pytest.mark.parametrize("t", NUM_TYPES)
def test_constant_folded_ops(hl, t):
    """The same ops on constants: exercises the simplifier's constant folding."""
    k = hl.Var("k")
    exprs, names = [], []
    for a, b in _fold_pairs(t):
        ea, eb = _const(hl, t, a), _const(hl, t, b)
        ops = _same_type_op_thunks(hl, t, ea, eb, None if is_float(t) else eb)
        for name, thunk in ops.items():
            if name in ("shl", "shr"):
                bits = npdtype(t).itemsize * 8
                amt = int(b)
                if not (-(bits - 1) <= amt <= bits - 1):
                    continue
            if not _fold_ok(t, name, a, b):
                continue
            names.append("%s(%r,%r)" % (name, a.item(), b.item()))
            exprs.append(thunk())
        if not _fold_ok(t, "sub", a, b) or not _fold_ok(t, "sub", b, a):
            # Halide's simplifier folds `a == b` through `a - b`, so comparing
            # i32/i64 constants whose difference overflows raises an error.
            continue
        for name, e in _bool_ops(hl, ea, eb).items():
            names.append("%s(%r,%r)" % (name, a.item(), b.item()))
            exprs.append(hl.select(e, getattr(hl, t)(1), getattr(hl, t)(0)))
    out = {}
    chunk = 160
    for i in range(0, len(exprs), chunk):
        f = hl.Func("folded")
        f[k] = select_tree(hl, k, exprs[i:i + chunk])
        r = np.asarray(f.realize([len(exprs[i:i + chunk])]))
        out.update(zip(names[i:i + chunk], r.tolist()))
    return out


# ---------------------------------------------------------------------------------
# Type coercion: Expr op Python scalar, reflected ops, mixed Expr types.
# ---------------------------------------------------------------------------------
PY_SCALARS = [0, 1, 3, -1, 2.5, -0.5, True, False]


def _py_ok(t, c):
    if is_float(t):
        return True
    if isinstance(c, float):
        return True
    ii = np.iinfo(npdtype(t))
    return ii.min <= int(c) <= ii.max


@differential()
@pytest.mark.parametrize("t", NUM_TYPES)
def test_python_scalar_coercion(hl, t):
    """Expr(t) op python scalar and python scalar op Expr(t): types and values."""
    x = hl.Var("x")
    v = np.array([0, 1, 2, 5, 100], dtype=npdtype(t))
    A = buffer(hl, v)
    a = A[x]
    exprs = {}
    binops = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "truediv": operator.truediv, "floordiv": operator.floordiv,
              "mod": operator.mod, "lt": operator.lt, "eq": operator.eq,
              "ge": operator.ge, "min": None}
    for c in PY_SCALARS:
        if not _py_ok(t, c):
            continue
        for name, fn in binops.items():
            if name == "min":
                exprs["min(a,%r)" % c] = hl.min(a, c)
                exprs["max(%r,a)" % c] = hl.max(c, a)
                continue
            if name in ("truediv", "floordiv", "mod") and c == 0:
                continue
            exprs["a %s %r" % (name, c)] = fn(a, c)
            exprs["%r %s a" % (c, name)] = fn(c, a)
        if not is_float(t) and not isinstance(c, float):
            for name, fn in (("and", operator.and_), ("or", operator.or_),
                             ("xor", operator.xor)):
                exprs["a %s %r" % (name, c)] = fn(a, c)
                exprs["%r %s a" % (c, name)] = fn(c, a)
    types = {n: e.type() for n, e in exprs.items()}
    out = {}
    for ty in sorted(set(str(tt) for tt in types.values())):
        group = [n for n in exprs if str(types[n]) == ty]
        k = hl.Var("k")
        f = hl.Func("coerce")
        f[x, k] = select_tree(hl, k, [exprs[n] for n in group])
        with np.errstate(all="ignore"):
            r = np.asarray(f.realize([len(v), len(group)]))
        out.update({n: np.array(r[i]) for i, n in enumerate(group)})
    return {"types": types, "values": out}


MIXED = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32", "f64"]


@differential()
def test_mixed_expr_type_promotion(hl):
    """Result type of Expr(t1) op Expr(t2) for all pairs, and a few values."""
    x = hl.Var("x")
    types = {}
    for t1 in MIXED:
        for t2 in MIXED:
            a = hl.cast(htype(hl, t1), x)
            b = hl.cast(htype(hl, t2), x)
            for name, fn in (("add", operator.add), ("mul", operator.mul),
                             ("div", operator.truediv), ("lt", operator.lt),
                             ("min", None)):
                e = hl.min(a, b) if fn is None else fn(a, b)
                types["%s %s %s" % (t1, name, t2)] = e.type()
    # values of a few mixed ops (sign/zero extension during promotion)
    v8 = np.array([0, 1, 127, 128, 200, 255], dtype=np.uint8)
    s8 = np.array([0, -1, 127, -128, -56, 5], dtype=np.int8)
    U, S = buffer(hl, v8), buffer(hl, s8)
    exprs = {
        "u8+i8": U[x] + S[x],
        "u8+i16": U[x] + hl.cast(hl.Int(16), S[x]),
        "i8*u16": S[x] * hl.cast(hl.UInt(16), U[x]),
        "u8<i8": hl.select(U[x] < S[x], 1, 0),
        "u32+i8": hl.cast(hl.Int(64), hl.cast(hl.UInt(32), U[x]) + S[x]),
        "f32+i8": hl.cast(hl.Int(64), hl.f32(2.5) * S[x]),
    }
    vals = {}
    for n, e in exprs.items():
        f = hl.Func("m")
        f[x] = e
        vals[n] = f.realize([len(v8)])
    return {"types": types, "values": vals}


@differential()
def test_bool_arithmetic_and_quirks(hl):
    """Operators on bool Exprs and constant conversions."""
    x = hl.Var("x")
    b = x > 1
    c = x < 3
    exprs = {"b&c": b & c, "b|c": b | c, "b^c": b ^ c, "~b": ~b, "not b": hl.logical_not(b),
             "b==c": b == c, "b!=c": b != c, "b&True": b & True, "False|b": False | b}
    types = {n: e.type() for n, e in exprs.items()}
    k = hl.Var("k")
    f = hl.Func("bools")
    names = list(exprs)
    f[x, k] = select_tree(hl, k, [exprs[n] for n in names])
    r = np.asarray(f.realize([5, len(names)]))
    consts = {
        "Expr(True)": hl.Expr(True).type(),
        "Expr(1)": hl.Expr(1).type(),
        "Expr(1.5)": hl.Expr(1.5).type(),
        "Expr(2**40)": hl.Expr(2 ** 40).type(),
        "Expr(-2**63)": hl.Expr(-2 ** 63).type(),
        "x+2**31": (x + 2 ** 31).type(),
        "x+2.5": (x + 2.5).type(),
        "u8+True": (hl.u8(x) + True).type(),
        "u8*1.5": (hl.u8(x) * 1.5).type(),
        "u8**2": (hl.u8(x) ** 2).type(),
        "x**2": (x ** 2).type(),
        "x**x": (x ** x).type(),
        "2**x": (2 ** x).type(),
        "x**0.5": (x ** 0.5).type(),
        "f64**2": (hl.f64(x) ** 2).type(),
        "u8/i8": (hl.u8(x) / hl.i8(x)).type(),
        "u64+i8": (hl.u64(x) + hl.i8(x)).type(),
        "f32+f64": (hl.f32(x) + hl.f64(x)).type(),
        "i8<<u8": (hl.i8(x) << hl.u8(x)).type(),
        "u8<<i8": (hl.u8(x) << hl.i8(x)).type(),
        "3<<u8": (3 << hl.u8(x)).type(),
        "abs(i8)": hl.abs(hl.i8(x)).type(),
        "abs(f32)": hl.abs(hl.f32(x)).type(),
        "absd(i8,i8)": hl.absd(hl.i8(x), hl.i8(x)).type(),
    }
    return {"types": types, "values": {n: np.array(r[i]) for i, n in enumerate(names)},
            "const_types": consts}


@differential()
def test_pow_operator(hl):
    """`**` on ints with a Python int exponent stays int; Expr ** Expr goes through
    Float(32) pow (inexact: compared within the f32 pow bound)."""
    from .harness import Tol, ULP
    x, y = hl.Var("x"), hl.Var("y")
    a = np.array([0, 1, 2, 3, -2, 10, -7], dtype=np.int32)
    b = np.array([0, 1, 2, 3, 5], dtype=np.int32)
    A, B = buffer(hl, a), buffer(hl, b)
    out = {}
    for p in (0, 1, 2, 3, 5):
        f = hl.Func("ipow")
        f[x] = A[x] ** p
        out["i32**%d" % p] = f.realize([len(a)])
    f = hl.Func("u8pow")
    f[x] = hl.u8(A[x]) ** 2
    out["u8**2"] = f.realize([len(a)])
    g = hl.Func("fpow")
    g[x, y] = A[x] ** B[y]
    out["i32**i32"] = Tol(g.realize([len(a), len(b)]), ulp=ULP["f32_pow"])
    h = hl.Func("halfpow")
    h[x] = hl.f32(hl.abs(A[x])) ** 0.5
    out["**0.5"] = Tol(h.realize([len(a)]), ulp=ULP["f32_pow"])
    return out


@differential()
def test_python_division_on_ints_is_halide_division(hl):
    """Python `/` on int Exprs is integer (Euclidean) division in Halide, `//` too;
    `%` is Euclidean (result never negative); x/0 == 0 and x%0 == 0."""
    x, y = hl.Var("x"), hl.Var("y")
    a = np.array([-7, -6, -1, 0, 1, 6, 7, -2 ** 31, 2 ** 31 - 1], dtype=np.int32)
    b = np.array([-3, -2, -1, 0, 1, 2, 3], dtype=np.int32)
    A, B = buffer(hl, a), buffer(hl, b)
    out = {}
    for name, fn in (("div", operator.truediv), ("fdiv", operator.floordiv),
                     ("mod", operator.mod)):
        f = hl.Func(name)
        f[x, y] = fn(A[x], B[y])
        out[name] = f.realize([len(a), len(b)])
        g = hl.Func(name + "_lit")
        g[x] = fn(A[x], -3)  # constant divisor: strength-reduced path
        out[name + "_lit"] = g.realize([len(a)])
        h = hl.Func(name + "_lit7")
        h[x] = fn(A[x], 7)
        out[name + "_lit7"] = h.realize([len(a)])
    return out


@differential()
@pytest.mark.parametrize("t", ["i8", "i16", "i32", "i64", "u8", "u32"])
@pytest.mark.parametrize("lanes", [1, 8])
def test_division_and_remainder_by_powers_of_two(hl, t, lanes):
    """Division and remainder by constant powers of two (a shift and a mask
    in the generated code) at the type's edges and around zero: Euclidean,
    so -7 / 4 == -2 and -7 % 4 == 1."""
    ty = htype(hl, t)
    bits = ty.bits()
    vals = np.unique(np.concatenate([edge_values(t), np.arange(-9, 10).astype(npdtype(t))]))
    inp = buffer(hl, vals)
    x = hl.Var("x")
    f = hl.Func("f")
    powers = [1, 2, 4, 16, 2 ** (bits - 2)]
    parts = []
    for p in powers:
        parts += [inp[x] / hl.cast(ty, p), inp[x] % hl.cast(ty, p)]
    f[x] = tuple(parts)
    if lanes > 1:
        f.vectorize(x, lanes, hl.TailStrategy.GuardWithIf)
    return f.realize([len(vals)])


def test_division_by_a_power_of_two_is_a_shift(tmp_path, monkeypatch):
    """The generated code shifts and masks (read before LLVM's optimizations,
    which would reach the same from a floor division's five instructions)."""
    import ferrohalide as hl
    monkeypatch.setenv("FERROHALIDE_LLVM_PIPELINE", "verify")
    x = hl.Var("x")
    inp = hl.ImageParam(hl.Int(32), 1, "inp")
    f = hl.Func("f")
    f[x] = inp[x] / 8 + inp[x] % 16
    path = str(tmp_path / "f.ll")
    f.compile_to_llvm_assembly(path, [inp], "f", hl.Target("x86-64-linux-sse41"))
    body = re.search(r"define [^\n]*@f\.body\(.*?\n}\n", open(path).read(), re.S).group(0)
    assert "ashr" in body and "sdiv" not in body and "srem" not in body
