"""Scalar types of generated programs and the value-range model of generated Exprs.

Every generated expression carries its Halide type and an interval that contains
every value it can take.  The generator uses the intervals to stay inside the
semantics both implementations must agree on:

* Int(32) and Int(64) arithmetic must not overflow (Halide's simplifier assumes it
  does not: overflow there is undefined behaviour); narrower signed types and all
  unsigned types wrap, which is defined.
* float -> int casts must be in range of the target type (undefined otherwise).
* floats stay finite (Halide compiles float math assuming no NaN / infinity).

Floats also carry `exact`: True when every correct implementation must produce the
same bits (the values are dyadic rationals small enough that + - * never round, and
no rounding operation other than IEEE-exact casts was applied).  Only exact floats
may flow into discontinuous operations (comparisons, floor/round, casts to int,
float % and //): a transcendental that is a few ULP off in one implementation must
never flip an integer result.
"""

from __future__ import annotations

import math

# Coordinates (pure Vars, RVars) never leave this range: output sizes are small and
# calls scale coordinates by at most 4 along any chain (see gen.py).
COORD = 4096
# Floats are clamped back when their bound passes this magnitude (far from overflow
# in f32, and products of two bounded values stay finite).
FLOAT_CAP = 2.0 ** 40


class Ty:
    """A scalar Halide type: kind is 'b' (bool), 'i', 'u' or 'f'."""

    __slots__ = ("name", "kind", "bits")

    def __init__(self, name: str, kind: str, bits: int):
        self.name, self.kind, self.bits = name, kind, bits

    def __repr__(self):
        return self.name

    @property
    def is_bool(self):
        return self.kind == "b"

    @property
    def is_int(self):
        return self.kind == "i"

    @property
    def is_uint(self):
        return self.kind == "u"

    @property
    def is_float(self):
        return self.kind == "f"

    @property
    def is_integer(self):
        """Int or UInt (not bool)."""
        return self.kind in "iu"

    @property
    def wraps(self):
        """Overflow is defined (wraps) for unsigned types and signed types < 32 bits."""
        return self.kind == "u" or (self.kind == "i" and self.bits < 32)

    @property
    def hl(self):
        """Python source of the hl.Type."""
        return {"b": "hl.Bool()", "i": f"hl.Int({self.bits})", "u": f"hl.UInt({self.bits})",
                "f": f"hl.Float({self.bits})"}[self.kind]

    @property
    def short(self):
        """The concise cast function's name (hl.u8 ...); bool has none."""
        return {"i": "i", "u": "u", "f": "f"}[self.kind] + str(self.bits)

    @property
    def np(self):
        return {"b": "bool_", "i": f"int{self.bits}", "u": f"uint{self.bits}", "f": f"float{self.bits}"}[self.kind]

    @property
    def lo(self):
        if self.kind == "i":
            return -(1 << (self.bits - 1))
        if self.kind == "f":
            return -FLOAT_CAP
        return 0

    @property
    def hi(self):
        if self.kind == "i":
            return (1 << (self.bits - 1)) - 1
        if self.kind == "u":
            return (1 << self.bits) - 1
        if self.kind == "b":
            return 1
        return FLOAT_CAP

    @property
    def mant(self):
        """Significand bits of a float type."""
        return 24 if self.bits == 32 else 53

    def wider(self):
        """The type twice as wide (widening ops)."""
        return TYPES[f"{self.kind}{self.bits * 2}"]

    def with_kind(self, kind):
        return TYPES[f"{kind}{self.bits}"]


TYPES = {t.name: t for t in [
    Ty("b1", "b", 1),
    Ty("i8", "i", 8), Ty("i16", "i", 16), Ty("i32", "i", 32), Ty("i64", "i", 64),
    Ty("u8", "u", 8), Ty("u16", "u", 16), Ty("u32", "u", 32), Ty("u64", "u", 64),
    Ty("f32", "f", 32), Ty("f64", "f", 64),
]}
BOOL, I32, F32 = TYPES["b1"], TYPES["i32"], TYPES["f32"]
INT_TYPES = [t for t in TYPES.values() if t.is_integer]
FLOAT_TYPES = [TYPES["f32"], TYPES["f64"]]
ALL_TYPES = list(TYPES.values())
# Types data-dependent coordinates are computed in before the cast to Int(32): with
# Int(32)/(64) arithmetic, Halide's bounds inference (full-range intervals plus
# constants) overflows in constant folding and rejects the program.
COORD_SOURCE_TYPES = [t for t in INT_TYPES if t.bits <= 16] + [TYPES["f32"]]


class Ex:
    """A generated expression: Python source, type, value interval [lo, hi].

    Floats also carry `exact` (see the module docstring) and `gran`: every value is a
    multiple of 2**gran (meaningful while exact).  `size` counts nodes, bounding the
    work each implementation's compiler gets.
    """

    __slots__ = ("code", "t", "lo", "hi", "exact", "gran", "size", "ct")

    def __init__(self, code, t, lo, hi, exact=True, gran=0, size=1, ct=None):
        self.code, self.t, self.lo, self.hi = code, t, lo, hi
        # The Halide type of `code` itself when an operator converts it to t implicitly.
        self.ct = ct or t
        self.size = size
        self.gran = gran
        self.exact = exact and (not t.is_float or _representable(t, lo, hi, gran))

    def __repr__(self):
        return f"Ex({self.code!r}, {self.t}, [{self.lo}, {self.hi}], exact={self.exact})"

    @property
    def mag(self):
        return max(abs(self.lo), abs(self.hi))


def _representable(t, lo, hi, gran):
    """Every multiple of 2**gran within [lo, hi] is a t value (no rounding)."""
    m = max(abs(lo), abs(hi))
    return m == 0 or m < 2.0 ** (t.mant + gran)


def fits(t, lo, hi):
    return t.lo <= lo and hi <= t.hi


def wrap_range(t, lo, hi):
    """The result interval of an integer op whose exact result lies in [lo, hi]: the
    same, or the whole type when it can wrap.  Callers make sure Int(32)/Int(64)
    never get here with an overflowing interval."""
    if fits(t, lo, hi):
        return lo, hi
    assert t.wraps, (t, lo, hi)
    return t.lo, t.hi


def cast_range(src: Ex, t: Ty):
    """Interval, exactness and granularity of `cast(t, src)` (src in range for
    float -> int casts, which the caller guarantees)."""
    if t.is_bool:
        return 0, 1, True, 0
    if t.is_float:
        if src.t.is_float:
            return src.lo, src.hi, src.exact, src.gran
        return float(src.lo), float(src.hi), True, 0
    if src.t.is_float:
        lo, hi = math.trunc(src.lo), math.trunc(src.hi)
    else:
        lo, hi = src.lo, src.hi
    if fits(t, lo, hi):
        return lo, hi, True, 0
    return t.lo, t.hi, True, 0


def match_types(ta: Ty, tb: Ty) -> Ty:
    """The type Halide's binary operators convert both operands to."""
    if ta is tb:
        return ta
    if ta.is_float or tb.is_float:
        if ta.is_float and tb.is_float:
            return ta if ta.bits >= tb.bits else tb
        return ta if ta.is_float else tb
    if ta.kind == tb.kind:
        return ta if ta.bits >= tb.bits else tb
    if ta.is_bool or tb.is_bool:
        return ta if tb.is_bool else tb
    return TYPES[f"i{max(ta.bits, tb.bits)}"]


def floor_pow2(v: float) -> int:
    """Largest e with 2**e <= v (v > 0)."""
    return math.frexp(v)[1] - 1
