"""Random typed Halide expressions (Python source) with value ranges.

`ExprGen.gen(t, depth)` returns an `Ex` of type `t`.  Operators are picked from a
weighted table per result kind; each builder computes the result's interval and
either keeps it inside the defined semantics (see fuzz_types) or, where it cannot,
clamps its operands first ("taming"), as a careful Halide user would.  The leaves
(Vars, RVars, reads of inputs / Funcs / the Func being updated, Params) come from a
`Scope` provided by the program generator (gen.py).
"""

from __future__ import annotations

import math
import re

from fuzz_types import (ALL_TYPES, BOOL, F32, FLOAT_CAP, FLOAT_TYPES, I32, INT_TYPES, TYPES, Ex,
                        cast_range, fits, floor_pow2, match_types, wrap_range)

# Intrinsics that exist in Halide 21's Python API but that ferrohalide does not
# implement yet: generated rarely, so that a seed which hits one (classified
# not-implemented) does not hide other bugs of the same program too often.
RARE_OPS_WEIGHT = 0.15


class Scope:
    """What an expression may read.  gen.py fills these in per definition.

    vars:    i32 Ex leaves (pure Vars, RVars in scope);
    reads:   callables (gen, depth) -> Ex | None reading an input, a Func or the Func
             being updated;
    params:  Ex leaves for scalar Params;
    new_rdom: callable (extents) -> (name, [rvar Ex]) declaring an RDom for an inline
             reduction (or None where inline reductions are not allowed).
    """

    def __init__(self, vars, reads=(), params=(), new_rdom=None):
        self.vars = list(vars)
        self.reads = list(reads)
        self.params = list(params)
        self.new_rdom = new_rdom


def lit_code(v):
    """Python source of a literal (floats are dyadic, so repr is exact)."""
    return repr(v) if isinstance(v, float) else str(v)


class ExprGen:
    def __init__(self, rng, scope: Scope):
        self.r = rng
        self.scope = scope
        self.in_reduction = False
        self.in_coordinate = False  # generating a data-dependent coordinate

    # ------------------------------------------------------------------ helpers
    def chance(self, p):
        return self.r.random() < p

    def pick(self, weighted):
        """weighted: list of (weight, value)."""
        total = sum(w for w, _ in weighted)
        x = self.r.random() * total
        for w, v in weighted:
            x -= w
            if x < 0:
                return v
        return weighted[-1][1]

    def small_int(self, t, lo=-20, hi=20):
        """A literal value of integer type t, usually small."""
        lo, hi = max(lo, t.lo), min(hi, t.hi)
        if self.chance(0.1):
            # Python ints beyond int64 do not convert to an Expr.
            return self.r.choice([max(t.lo, -(1 << 63)), min(t.hi, (1 << 63) - 1), t.hi // 2 + 1, 1, 0])
        return self.r.randint(lo, hi)

    def float_lit(self, lo=-8.0, hi=8.0):
        """A dyadic float literal (a multiple of 1/8), exactly representable."""
        return self.r.randint(int(lo * 8), int(hi * 8)) / 8.0

    def lit(self, t):
        """Ex of a raw Python literal that will take type t from its context (only
        literals that fit in Int(32) do: larger ones become Int(64) Exprs)."""
        if t.is_float:
            v = self.float_lit()
            return Ex(lit_code(v), t, v, v, gran=-3)
        v = min(max(self.small_int(t), -(1 << 31)), (1 << 31) - 1)
        return Ex(lit_code(v), t, v, v)

    def typed_lit(self, t):
        """An Expr literal of type t: hl.u8(3), hl.cast(hl.Int(16), -2), hl.f32(2.5)..."""
        if t.is_bool:
            v = self.r.choice([0, 1])
            return Ex(f"hl.cast(hl.Bool(), {v})", t, v, v)
        e = self.lit(t)
        if t is I32 and self.chance(0.3):
            return Ex(f"hl.Expr({e.code})", t, e.lo, e.hi, gran=e.gran)
        code = f"hl.{t.short}({e.code})" if self.chance(0.6) else f"hl.cast({t.hl}, {e.code})"
        return Ex(code, t, e.lo, e.hi, gran=e.gran)

    def tame(self, e: Ex, lo, hi):
        """clamp(e, lo, hi) when e's range exceeds [lo, hi] (literal bounds of e's type)."""
        if e.lo >= lo and e.hi <= hi:
            return e
        if e.t.is_float:
            lo, hi = float(lo), float(hi)
        code = e.code if e.ct is e.t else f"hl.cast({e.t.hl}, {e.code})"
        return Ex(f"hl.clamp({code}, {lit_code(lo)}, {lit_code(hi)})", e.t, min(max(e.lo, lo), hi),
                  max(min(e.hi, hi), lo), e.exact, e.gran, e.size + 1)

    def tame_mag(self, e: Ex, k):
        """Bound |e| by k (integer k for integer types, a power of two for floats)."""
        if e.t.is_float:
            k = 2.0 ** floor_pow2(k)
        if e.t.is_uint:
            return self.tame(e, 0, k)
        return self.tame(e, -k, k)

    def coerce(self, e: Ex, t):
        """e implicitly converted to t by an operator (match_types)."""
        if e.t is t:
            return e
        lo, hi, exact, gran = cast_range(e, t)
        return Ex(e.code, t, lo, hi, exact and e.exact, gran, e.size, ct=e.ct)

    # ------------------------------------------------------------------ entry
    def gen(self, t, depth, exact=False):
        """An Ex of type t; for floats with exact=True an exact one."""
        for _ in range(6):
            e = self._try_gen(t, depth, exact)
            if e is not None and (not exact or e.exact):
                return self.checked(e)
            depth = max(0, depth - 1)
        return self.checked(self.simple_leaf(t))

    # Set by gen.generate(check=True): every generated subexpression is wrapped in
    # _chk(expr, type, lo, hi), which asserts the type and, at run time (hl.require),
    # the interval: a self-test of this module's model of Halide's semantics.
    check = False
    check_sites = 0

    def checked(self, e: Ex):
        if not self.check:
            return e
        lo, hi = (e.lo, e.hi) if not e.t.is_bool and (e.lo, e.hi) != (e.t.lo, e.t.hi) else (None, None)
        ExprGen.check_sites += 1
        return Ex(f"_chk({e.code}, '{e.t.name}', {lo!r}, {hi!r}, {ExprGen.check_sites})", e.t, e.lo, e.hi,
                  e.exact, e.gran, e.size, e.ct)

    def _try_gen(self, t, depth, exact):
        if depth <= 0 or self.chance(0.15):
            return self.leaf(t, exact)
        table = self.FLOAT_OPS if t.is_float else self.BOOL_OPS if t.is_bool else self.INT_OPS
        op = self.pick(table)
        return op(self, t, depth - 1, exact)

    # ------------------------------------------------------------------ leaves
    def simple_leaf(self, t):
        """A leaf that always exists: a Var, converted; never fails."""
        v = self.r.choice(self.scope.vars)
        if t is I32:
            return v
        if t.is_bool:
            return Ex(f"({v.code} > {self.r.randint(-2, 4)})", t, 0, 1, size=2)
        return self.cast(self.tame(v, -100, 100), t, explicit=True)

    def leaf(self, t, exact=False):
        kinds = [(3, "var"), (2, "lit"), (6, "read")]
        if self.scope.params:
            kinds.append((1, "param"))
        kind = self.pick(kinds)
        if kind == "lit":
            return self.typed_lit(t)
        if kind == "var":
            e = self.r.choice(self.scope.vars)
        elif kind == "param":
            e = self.r.choice(self.scope.params)
        else:
            reads = self.scope.reads
            e = self.r.choice(reads)(self, 1) if reads else None
            if e is None:
                e = self.r.choice(self.scope.vars)
        return self.convert(e, t, exact)

    # ------------------------------------------------------------------ casts
    def convert(self, e: Ex, t, exact=False):
        """e as type t: e itself, or a cast (plain, concise or saturating)."""
        if e.t is t:
            return e
        if e.t.is_float and (t.is_integer or t.is_bool) and not e.exact:
            return None
        if t.is_bool:
            if e.t.is_float or self.chance(0.5):
                c = self.r.choice(["<", "<=", "==", "!=", ">"])
                k = self.float_lit(-2, 2) if e.t.is_float else self.r.randint(0, 3)
                return Ex(f"({e.code} {c} {lit_code(k)})", t, 0, 1, size=e.size + 1)
            # Only 0 and 1 cast to Bool alike in halide: other values are truncated to
            # their low bit by its code generation but folded differently by its
            # simplifier (halide-inconsistent-cast-to-bool in the findings).
            code = e.code if 0 <= e.lo and e.hi <= 1 else f"({e.code} & 1)"
            return Ex(f"hl.cast(hl.Bool(), {code})", t, 0, 1, size=e.size + 2)
        if t.is_integer and not e.t.is_bool and self.chance(0.3):
            return self.saturating(e, t)
        return self.cast(e, t)

    def cast(self, e: Ex, t, explicit=False):
        """A plain cast; float sources are clamped into t's range first (out-of-range
        float -> int casts are undefined behaviour)."""
        if e.t.is_float and t.is_integer:
            e = self.tame(e, *float_to_int_bounds(t))
        lo, hi, ex, gran = cast_range(e, t)
        style = self.r.random()
        if style < 0.5 and not t.is_bool:
            code = f"hl.{t.short}({e.code})"
        else:
            code = f"hl.cast({t.hl}, {e.code})"
        return Ex(code, t, lo, hi, ex and e.exact, gran, e.size + 1)

    def saturating(self, e: Ex, t):
        """hl.u8_sat(e) / hl.saturating_cast(hl.UInt(8), e)."""
        if e.t.is_float and t.bits >= 32:
            # Halide clamps to t.max() converted to the float type, which rounds up
            # past the range for 32/64-bit targets; stay inside where that cannot matter.
            e = self.tame(e, *float_to_int_bounds(t))
        lo, hi = max(e.lo, t.lo), min(e.hi, t.hi)
        if e.t.is_float:
            lo, hi = math.trunc(lo), math.trunc(hi)
        lo, hi = max(lo, t.lo), min(hi, t.hi)
        if lo > hi:
            lo, hi = t.lo, t.hi
        code = f"hl.{t.short}_sat({e.code})" if self.chance(0.5) else f"hl.saturating_cast({t.hl}, {e.code})"
        return Ex(code, t, lo, hi, size=e.size + 1)

    def op_cast(self, t, d, exact):
        src = self.r.choice([s for s in ALL_TYPES if s is not t])
        need_exact = exact or not t.is_float
        e = self.gen(src, d, exact=need_exact)
        return self.convert(e, t, exact)

    # ------------------------------------------------------------------ arithmetic
    def operand_pair(self, t, d, exact):
        """Two operands whose match_types is t: same type, a literal, or a mixed type."""
        a = self.gen(t, d, exact)
        roll = self.r.random()
        if roll < 0.25:
            b = self.lit(t)
        elif roll < 0.4:
            others = [s for s in ALL_TYPES if not s.is_bool and s is not t and match_types(t, s) is t]
            b = self.gen(self.r.choice(others), d, exact or not t.is_float) if others else self.gen(t, d, exact)
            b = self.coerce(b, t)
        else:
            b = self.gen(t, d, exact)
        if self.chance(0.5):
            a, b = b, a
        return a, b

    def op_arith(self, t, d, exact):
        sym = self.r.choice("+-*")
        a, b = self.operand_pair(t, d, exact)
        return self.arith(sym, a, b, t)

    def arith(self, sym, a, b, t):
        lo, hi = interval(sym, a, b)
        if t.is_integer and not fits(t, lo, hi) and not t.wraps:
            k = (1 << (t.bits - 3)) if sym != "*" else (1 << ((t.bits - 4) // 2))
            a, b = self.tame_mag(a, k), self.tame_mag(b, k)
            lo, hi = interval(sym, a, b)
        if t.is_float and max(abs(lo), abs(hi)) > FLOAT_CAP:
            k = 2.0 ** 19 if sym == "*" else FLOAT_CAP / 4
            a, b = self.tame_mag(a, k), self.tame_mag(b, k)
            lo, hi = interval(sym, a, b)
        size = a.size + b.size + 1
        code = f"({a.code} {sym} {b.code})"
        if t.is_float:
            gran = a.gran + b.gran if sym == "*" else min(a.gran, b.gran)
            return Ex(code, t, lo, hi, a.exact and b.exact, gran, size)
        lo, hi = wrap_range(t, lo, hi)
        return Ex(code, t, lo, hi, size=size)

    def op_neg(self, t, d, exact):
        a = self.gen(t, d, exact)
        if t.is_integer and not t.wraps:
            a = self.tame(a, t.lo + 1, t.hi)
        lo, hi = -a.hi, -a.lo
        if t.is_integer:
            lo, hi = wrap_range(t, lo, hi)
        return Ex(f"(-{a.code})", t, lo, hi, a.exact, a.gran, a.size + 1)

    def op_pow(self, t, d, exact):
        """`a ** k`: repeated multiplication for small integer k, else pow()."""
        if t.is_float and (not exact) and self.chance(0.5):
            base = self.tame(self.gen(t, d), 0.125, 16.0)
            k = self.float_lit(-3, 3)
            return Ex(f"({base.code} ** {lit_code(k)})", t, 0.0, 16.0 ** 3 * 8, exact=False, size=base.size + 1)
        k = self.r.choice([2, 3])
        a = self.gen(t, d, exact)
        if not t.wraps:
            a = self.tame_mag(a, 1000 if t.is_integer else 1000.0)
        lo, hi = pow_interval(a.lo, a.hi, k)
        if t.is_integer:
            lo, hi = wrap_range(t, lo, hi)
        return Ex(f"({a.code} ** {k})", t, lo, hi, a.exact, a.gran * k, a.size + 1)

    def op_div(self, t, d, exact):
        if t.is_float:
            return self.float_div(t, d, exact)
        a = self.gen(t, d)
        b = self.lit(t) if self.chance(0.4) else self.gen(t, d)
        if t.is_int and not t.wraps and a.lo == t.lo and b.lo <= -1 <= b.hi:
            a = self.tame(a, t.lo + 1, t.hi)  # INT_MIN / -1 overflows
        sym = self.r.choice(["/", "//"])
        lo, hi = wrap_range(t, *div_interval(a, b))
        return Ex(f"({a.code} {sym} {b.code})", t, lo, hi, size=a.size + b.size + 1)

    def float_div(self, t, d, exact):
        """Float `/` and `//`.  Exact only for power-of-two literal divisors (`//` also
        for non-constant exact divisors: floor of a correctly rounded quotient); a
        constant divisor may be turned into a reciprocal multiply."""
        a = self.gen(t, d, exact)
        sym = self.r.choice(["/", "//"])
        if exact or self.chance(0.4):
            k = self.r.choice([0.5, 2.0, 4.0, 0.25, -2.0, 8.0])
            lo, hi = sorted([a.lo / k, a.hi / k])
            gran = a.gran - floor_pow2(abs(k))
            if sym == "//":
                lo, hi, gran = math.floor(lo), math.floor(hi), 0
            return Ex(f"({a.code} {sym} {lit_code(k)})", t, lo, hi, a.exact, gran, a.size + 1)
        if sym == "//" and not a.exact:
            return None
        den = self.gen(t, d, exact=(sym == "//"))
        den = Ex(f"(hl.abs({den.code}) + 0.5)", t, 0.5, den.mag + 0.5, den.exact, min(den.gran, -1), den.size + 2)
        lo, hi = min(a.lo / 0.5, a.lo / den.hi), max(a.hi / 0.5, a.hi / den.hi)
        if sym == "//":
            return Ex(f"({a.code} // {den.code})", t, math.floor(lo), math.floor(hi), a.exact and den.exact, 0,
                      a.size + den.size + 1)
        return Ex(f"({a.code} / {den.code})", t, lo, hi, False, size=a.size + den.size + 1)

    def op_mod(self, t, d, exact):
        if t.is_float:
            a = self.gen(t, d, exact=True)
            k = self.r.choice([0.5, 1.0, 2.0, 4.0, 16.0])
            return Ex(f"({a.code} % {lit_code(k)})", t, 0.0, k, a.exact, min(a.gran, -1), a.size + 1)
        a = self.gen(t, d)
        b = self.lit(t) if self.chance(0.5) else self.gen(t, d)
        if t.is_int and not t.wraps and a.lo == t.lo and b.lo <= -1 <= b.hi:
            a = self.tame(a, t.lo + 1, t.hi)
        m = max(abs(b.lo), abs(b.hi))
        lo, hi = 0, max(m - 1, 0)
        if b.lo <= 0 <= b.hi:  # x % 0: 0 in Halide 21 (x in older versions): allow both
            lo, hi = min(lo, a.lo), max(hi, a.hi)
        return Ex(f"({a.code} % {b.code})", t, lo, hi, size=a.size + b.size + 1)

    # ------------------------------------------------------------------ bitwise
    def op_bitnot(self, t, d, exact):
        a = self.gen(t, d)
        lo, hi = (-a.hi - 1, -a.lo - 1) if t.is_int else (t.hi - a.hi, t.hi - a.lo)
        return Ex(f"(~{a.code})", t, lo, hi, size=a.size + 1)

    def op_bitwise(self, t, d, exact):
        sym = self.r.choice("&|^")
        a = self.gen(t, d)
        if self.chance(0.3):
            b = self.lit(t)
        else:
            same_kind = [s for s in INT_TYPES if s.kind == t.kind and s.bits <= t.bits]
            b = self.coerce(self.gen(self.r.choice(same_kind), d), t)
        if self.chance(0.5):
            a, b = b, a
        lo, hi = bitwise_interval(sym, a, b, t)
        return Ex(f"({a.code} {sym} {b.code})", t, lo, hi, size=a.size + b.size + 1)

    def op_shift(self, t, d, exact):
        sym = self.r.choice(["<<", ">>"])
        a = self.gen(t, d)
        if self.chance(0.5):
            s = self.r.randint(0, t.bits - (1 if t.wraps else 3))
            amt = Ex(str(s), t, s, s)
        else:
            # The result has the wider of the two types' widths: keep the amount's no wider.
            st = self.r.choice([s for s in INT_TYPES if s.bits <= min(t.bits, 32)])
            lo_s = 0 if (st.is_uint or self.chance(0.5)) else -(min(t.bits, st.bits) - 1)
            hi_s = min(t.bits, st.bits + (0 if st.is_uint else -1)) - 1
            if not t.wraps:
                lo_s, hi_s = max(lo_s, 3 - t.bits), min(hi_s, t.bits - 3)
            amt = self.tame(self.gen(st, d), lo_s, max(hi_s, 0))
        smin, smax = (amt.lo, amt.hi) if sym == "<<" else (-amt.hi, -amt.lo)
        if not t.wraps and smax > 0:
            k = 1 << max(t.bits - 2 - smax, 0)
            a = self.tame_mag(a, k)
        lo, hi = shift_interval(a, smin, smax)
        lo, hi = wrap_range(t, lo, hi)
        return Ex(f"({a.code} {sym} {amt.code})", t, lo, hi, size=a.size + amt.size + 1)

    # ------------------------------------------------------------------ min / max / select
    def op_minmax(self, t, d, exact):
        fn = self.r.choice(["min", "max"])
        a = self.gen(t, d, exact)
        if t in (I32, TYPES["i64"], F32, TYPES["f64"]) and self.chance(0.3):
            # A Python literal becomes an Int(32) / Float(32) Expr here (then matched).
            b = self.lit(I32 if t.is_integer else F32)
            b = Ex(b.code, t, b.lo, b.hi, gran=b.gran)
        else:
            b = self.gen(t, d, exact)
        f = min if fn == "min" else max
        return Ex(f"hl.{fn}({a.code}, {b.code})", t, f(a.lo, b.lo), f(a.hi, b.hi), a.exact and b.exact,
                  min(a.gran, b.gran), a.size + b.size + 1)

    def op_clamp(self, t, d, exact):
        a = self.gen(t, d, exact)
        if t.is_float:
            lo, hi = sorted([self.float_lit(-16, 16), self.float_lit(-16, 16)])
            gran = min(a.gran, -3)
        else:
            lo, hi = sorted([self.small_int(t, -200, 200), self.small_int(t, -200, 200)])
            gran = 0
        if self.chance(0.2):
            lo_e, hi_e = self.gen(t, d, exact), self.gen(t, d, exact)
            # Halide's clamp is max(min(a, hi), lo): lo wins when lo > hi.
            rlo, rhi = max(min(a.lo, hi_e.lo), lo_e.lo), max(min(a.hi, hi_e.hi), lo_e.hi)
            return Ex(f"hl.clamp({a.code}, {lo_e.code}, {hi_e.code})", t, min(rlo, rhi), max(rlo, rhi),
                      a.exact and lo_e.exact and hi_e.exact, min(a.gran, lo_e.gran, hi_e.gran),
                      a.size + lo_e.size + hi_e.size + 1)
        rlo, rhi = min(max(a.lo, lo), hi), min(max(a.hi, lo), hi)
        return Ex(f"hl.clamp({a.code}, {lit_code(lo)}, {lit_code(hi)})", t, rlo, rhi, a.exact, gran, a.size + 1)

    def op_select(self, t, d, exact):
        n = 1 if self.chance(0.8) else 2
        conds = [self.gen(BOOL, d) for _ in range(n)]
        vals = [self.gen(t, d, exact) for _ in range(n + 1)]
        # A float literal is a Float(32) Expr here.  An int literal takes the true
        # value's type, unless that is a signed constant too: then it is Int(32).
        if self.chance(0.2) and t.name != "f64" and (t is I32 or vals[-2].lo != vals[-2].hi):
            vals[-1] = self.lit(t)
        parts = []
        for c, v in zip(conds, vals):
            parts += [c.code, as_expr(v.code)]
        parts.append(as_expr(vals[-1].code))
        return Ex(f"hl.select({', '.join(parts)})", t, min(v.lo for v in vals), max(v.hi for v in vals),
                  all(v.exact for v in vals), min(v.gran for v in vals), sum(e.size for e in conds + vals) + 1)

    def op_mux(self, t, d, exact):
        idx = self.gen(self.r.choice(INT_TYPES), d)
        vals = [self.gen(t, max(d - 1, 0), exact) for _ in range(self.r.randint(2, 4))]
        return Ex(f"hl.mux({idx.code}, [{', '.join(as_expr(v.code) for v in vals)}])", t, min(v.lo for v in vals),
                  max(v.hi for v in vals), all(v.exact for v in vals), min(v.gran for v in vals),
                  idx.size + sum(v.size for v in vals) + 1)

    # ------------------------------------------------------------------ abs / absd / lerp
    def op_abs(self, t, d, exact):
        if t.is_float:
            a = self.gen(t, d, exact)
        elif t.is_uint:
            a = self.gen(t.with_kind("i"), d)
        else:
            return None
        lo = 0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
        return Ex(f"hl.abs({a.code})", t, lo, a.mag, a.exact, a.gran, a.size + 1)

    def op_absd(self, t, d, exact):
        if t.is_int:
            return None
        src = t if t.is_float else self.r.choice([t, t.with_kind("i")])
        a, b = self.gen(src, d, exact), self.gen(src, d, exact)
        hi = max(a.hi, b.hi) - min(a.lo, b.lo)
        return Ex(f"hl.absd({a.code}, {b.code})", t, 0 if not t.is_float else 0.0, hi, a.exact and b.exact,
                  min(a.gran, b.gran), a.size + b.size + 1)

    def op_lerp(self, t, d, exact):
        if exact or t.bits == 64 and t.is_integer:
            return None
        a, b = self.gen(t, d), self.gen(t, d)
        if self.chance(0.5) or t.is_float:
            w = self.gen(t if t.is_float else self.r.choice(FLOAT_TYPES), d, exact=not t.is_float)
            w = self.tame(w, 0.0, 1.0)
        else:
            w = self.gen(TYPES[f"u{t.bits}"], d)
        return Ex(f"hl.lerp({a.code}, {b.code}, {w.code})", t, min(a.lo, b.lo), max(a.hi, b.hi),
                  False, size=a.size + b.size + w.size + 1)

    # ------------------------------------------------------------------ Halide's fixed-point intrinsics
    def op_widening(self, t, d, exact):
        if t.bits < 16 or t.is_float:
            return None
        half = TYPES[f"{t.kind}{t.bits // 2}"]
        fn = self.r.choice(["widening_add", "widening_mul", "widening_sub"])
        if fn == "widening_sub":
            if t.is_uint:
                return None
            half = self.r.choice([half, half.with_kind("u")])
        a, b = self.gen(half, d), self.gen(half, d)
        lo, hi = interval({"widening_add": "+", "widening_mul": "*", "widening_sub": "-"}[fn], a, b)
        return Ex(f"hl.{fn}({a.code}, {b.code})", t, lo, hi, size=a.size + b.size + 1)

    def op_averaging(self, t, d, exact):
        if not t.is_integer:
            return None
        fn = self.r.choice(["halving_add", "halving_sub", "rounding_halving_add", "saturating_add", "saturating_sub"])
        a, b = self.gen(t, d), self.gen(t, d)
        if fn == "halving_add":
            lo, hi = (a.lo + b.lo) >> 1, (a.hi + b.hi) >> 1
        elif fn == "rounding_halving_add":
            lo, hi = (a.lo + b.lo + 1) >> 1, (a.hi + b.hi + 1) >> 1
        elif fn == "halving_sub":
            lo, hi = (a.lo - b.hi) >> 1, (a.hi - b.lo) >> 1
        else:
            lo, hi = interval("+" if fn == "saturating_add" else "-", a, b)
            lo, hi = max(lo, t.lo), min(hi, t.hi)
        lo, hi = wrap_range(t, lo, hi) if t.wraps else (max(lo, t.lo), min(hi, t.hi))
        return Ex(f"hl.{fn}({a.code}, {b.code})", t, lo, hi, size=a.size + b.size + 1)

    def op_mul_shift(self, t, d, exact):
        if not t.is_integer or t.bits == 64:
            return None
        fn = self.r.choice(["mul_shift_right", "rounding_mul_shift_right"])
        a, b = self.gen(t, d), self.gen(t, d)
        q = self.r.randint(0, 2 * t.bits - 1)
        qc = str(q) if self.chance(0.6) else f"hl.u{t.bits}({q})"
        return Ex(f"hl.{fn}({a.code}, {b.code}, {qc})", t, t.lo, t.hi, size=a.size + b.size + 1)

    def op_bitcount(self, t, d, exact):
        if not t.is_integer:
            return None
        fn = self.r.choice(["count_leading_zeros", "count_trailing_zeros", "popcount"])
        a = self.gen(t, d)
        return Ex(f"hl.{fn}({a.code})", t, 0, t.bits, size=a.size + 1)

    def op_round_to_zero(self, t, d, exact):
        """div_round_to_zero / mod_round_to_zero: undefined for a zero divisor (Halide
        traps), so the divisor is forced odd."""
        if not t.is_integer:
            return None
        fn = self.r.choice(["div_round_to_zero", "mod_round_to_zero"])
        a = self.gen(t, d)
        if t.is_int:  # MIN / -1 traps like / 0 (a native division)
            a = self.tame(a, t.lo + 1, t.hi)
        b = self.gen(t, d)
        b = Ex(f"({b.code} | 1)", t, *bitwise_interval("|", b, Ex("1", t, 1, 1), t), size=b.size + 1)
        m = max(abs(b.lo), abs(b.hi))
        if fn == "div_round_to_zero":
            lo, hi = wrap_range(t, -a.mag, a.mag)
        else:
            lo, hi = max(-(m - 1), min(a.lo, 0)), min(m - 1, max(a.hi, 0))
            if t.is_uint:
                lo = 0
        return Ex(f"hl.{fn}({a.code}, {b.code})", t, lo, hi, size=a.size + b.size + 1)

    def op_reinterpret(self, t, d, exact):
        if not t.is_integer:
            return None
        a = self.gen(t.with_kind("u" if t.is_int else "i"), d)
        lo, hi = (a.lo, a.hi) if fits(t, a.lo, a.hi) else (t.lo, t.hi)
        return Ex(f"hl.reinterpret({t.hl}, {a.code})", t, lo, hi, size=a.size + 1)

    def op_rare_int(self, t, d, exact):
        """Intrinsics of Halide 21's API that ferrohalide does not implement yet."""
        if not t.is_integer or t.bits == 64:
            return None
        fn = self.r.choice(["rounding_shift_right", "rounding_shift_left", "widening_shift_left",
                            "widen_right_add", "extract_bits", "concat_bits"])
        if fn in ("rounding_shift_right", "rounding_shift_left"):
            a = self.gen(t, d)
            s = self.r.randint(0, t.bits - 1)
            return Ex(f"hl.{fn}({a.code}, {s})", t, t.lo, t.hi, size=a.size + 1)
        if t.bits == 8:
            return None
        half = TYPES[f"{t.kind}{t.bits // 2}"]
        if fn == "widening_shift_left":
            a = self.gen(half, d)
            s = self.r.randint(0, half.bits - 1)
            return Ex(f"hl.{fn}({a.code}, {s})", t, t.lo, t.hi, size=a.size + 1)
        if fn == "widen_right_add":
            a, b = self.gen(t, d), self.gen(half, d)
            lo, hi = wrap_range(t, a.lo + b.lo, a.hi + b.hi) if t.wraps else (t.lo, t.hi)
            if not t.wraps:
                return None
            return Ex(f"hl.{fn}({a.code}, {b.code})", t, lo, hi, size=a.size + b.size + 1)
        if fn == "extract_bits":
            a = self.gen(TYPES[f"u{t.bits * 2 if t.bits < 64 else 64}"], d)
            return Ex(f"hl.extract_bits({t.hl}, {a.code}, {self.r.randint(0, 7)})", t, t.lo, t.hi, size=a.size + 1)
        if not t.is_uint:
            return None
        uh = TYPES[f"u{t.bits // 2}"]
        a, b = self.gen(uh, d), self.gen(uh, d)
        return Ex(f"hl.concat_bits([{a.code}, {b.code}])", t, t.lo, t.hi, size=a.size + b.size + 1)

    # ------------------------------------------------------------------ floats
    def op_math(self, t, d, exact):
        """Transcendentals, with arguments kept where results are well conditioned."""
        if exact:
            return None
        fn = self.r.choice(["sin", "cos", "tan", "exp", "log", "sqrt", "pow", "atan", "atan2", "hypot", "tanh",
                            "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh", "erf"])
        a = self.gen(t, d)
        if fn == "erf" and t.bits == 64:
            fn = "tanh"  # Halide's erf is Float(32) only
        arg, lo, hi = self.math_arg(fn, t, a, d)
        return Ex(f"hl.{fn}({arg})", t, lo, hi, exact=False, size=a.size + 3)

    def math_arg(self, fn, t, a, d):
        """(argument source, result interval) for hl.<fn>."""
        one = "1.0"
        if fn in ("sin", "cos"):
            return self.tame_mag(a, 64.0).code, -1.0, 1.0
        if fn == "tan":
            return self.tame_mag(a, 1.25).code, -3.1, 3.1
        if fn in ("exp", "sinh", "cosh"):
            return self.tame_mag(a, 8.0).code, -3000.0, 3000.0
        if fn == "log":
            return f"hl.abs({a.code}) + 0.5", -0.7, math.log(a.mag + 0.5) + 1
        if fn == "sqrt":
            return f"hl.abs({a.code})", 0.0, math.sqrt(a.mag) + 1
        if fn == "pow":
            b = self.tame_mag(self.gen(t, d), 3.0)
            return f"{self.tame(a, 0.125, 8.0).code}, {b.code}", 0.0, 8.0 ** 3 * 8 ** 3
        if fn == "atan2":
            b = self.gen(t, d)
            return f"{a.code}, hl.abs({b.code}) + {one}", -1.6, 1.6
        if fn == "hypot":
            b = self.tame_mag(self.gen(t, d), 1.0e5)
            a = self.tame_mag(a, 1.0e5)
            return f"{a.code}, {b.code}", 0.0, 2.0e5
        if fn in ("asin", "acos", "atanh"):
            return self.tame_mag(a, 0.875).code, -3.2, 3.2
        if fn == "acosh":
            return f"hl.abs({a.code}) + 1.25", 0.0, math.acosh(a.mag + 1.25) + 1
        if fn == "asinh":
            return a.code, -math.asinh(a.mag) - 1, math.asinh(a.mag) + 1
        return a.code, -math.pi / 2 - 1, math.pi / 2 + 1  # atan, tanh, erf

    def op_rounding(self, t, d, exact):
        """floor / ceil / round / trunc / fract of an exact float (they are
        discontinuous: a noisy argument could flip the result)."""
        fn = self.r.choice(["floor", "ceil", "round", "trunc", "fract"])
        a = self.gen(t, d, exact=True)
        if not a.exact:
            return None
        if fn == "fract":
            return Ex(f"hl.fract({a.code})", t, 0.0, 1.0, True, min(a.gran, 0), a.size + 1)
        lo, hi = math.floor(a.lo), math.ceil(a.hi)
        return Ex(f"hl.{fn}({a.code})", t, float(lo), float(hi), True, max(a.gran, 0), a.size + 1)

    # ------------------------------------------------------------------ bools
    def op_compare(self, t, d, exact):
        st = self.r.choice([s for s in ALL_TYPES if not s.is_bool])
        a = self.gen(st, d, exact=True)
        b = self.lit(st) if self.chance(0.35) else self.gen(st, d, exact=True)
        if st.is_float and not (a.exact and b.exact):
            return None
        c = self.r.choice(["<", "<=", "==", "!=", ">", ">="])
        if self.chance(0.5):
            a, b = b, a
        return Ex(f"({a.code} {c} {b.code})", BOOL, 0, 1, size=a.size + b.size + 1)

    def op_logical(self, t, d, exact):
        roll = self.r.random()
        a = self.gen(BOOL, d)
        if roll < 0.2:
            return Ex(f"(~{a.code})", BOOL, 0, 1, size=a.size + 1)
        if roll < 0.3:
            return Ex(f"hl.logical_not({a.code})", BOOL, 0, 1, size=a.size + 1)
        b = self.gen(BOOL, d)
        return Ex(f"({a.code} {self.r.choice('&|')} {b.code})", BOOL, 0, 1, size=a.size + b.size + 1)

    def op_float_class(self, t, d, exact):
        fn = self.r.choice(["is_nan", "is_inf", "is_finite"])
        a = self.gen(self.r.choice(FLOAT_TYPES), d)
        return Ex(f"hl.{fn}({a.code})", BOOL, 0, 1, size=a.size + 1)

    # ------------------------------------------------------------------ inline reductions
    def op_reduce(self, t, d, exact):
        if self.in_reduction or self.scope.new_rdom is None or t.is_bool:
            return None
        fn = self.r.choice(["sum", "sum", "maximum", "minimum", "product", "argmax", "argmin"])
        extents = [self.r.randint(1, 4) for _ in range(1 if self.chance(0.7) else 2)]
        name, rvars = self.scope.new_rdom(extents)
        n = math.prod(extents)
        body = self.reduction_body(fn, t, d, rvars, exact)
        if body is None:
            return None
        return self.reduction(fn, name, body, n, rvars, t)

    def reduction_body(self, fn, t, d, rvars, exact):
        saved_vars, saved_coords, self.in_reduction = self.scope.vars, self.scope.coord_vars, True
        # An inline reduction may not refer to the RVars of another RDom.
        self.scope.vars = [v for v in saved_vars if not is_rvar(v)] + rvars
        self.scope.coord_vars = [[c for c in cs if "." not in c] or [rv.code for rv in rvars] for cs in saved_coords]
        try:
            body_t = self.r.choice(ALL_TYPES[1:]) if fn in ("argmax", "argmin") else t
            body = self.gen(body_t, d, exact=exact or fn in ("argmax", "argmin"))
            rv = self.r.choice(rvars)
            if rv.code not in body.code:  # make the body depend on the domain
                body = self.arith("+", body, self.convert(self.tame(rv, -8, 8), body_t, exact=True), body_t)
            if fn == "product":
                body = self.tame_mag(body, 3 if body_t.is_integer else 4.0)
            elif fn == "sum" and not body_t.wraps:
                n = len(rvars) and math.prod(int(v.hi - v.lo + 1) for v in rvars)
                body = self.tame_mag(body, (1 << (body_t.bits - 3)) // n if body_t.is_integer else 2.0 ** 30)
            return body
        finally:
            self.scope.vars, self.scope.coord_vars, self.in_reduction = saved_vars, saved_coords, False

    def reduction(self, fn, rdom, body, n, rvars, t):
        explicit = f"{rdom}, " if self.chance(0.3) else ""
        size = body.size + 1
        if fn in ("argmax", "argmin"):
            # The Tuple (rvar coordinates..., value): pick one element.
            i = self.r.randrange(len(rvars) + 1)
            code = f"hl.{fn}({explicit}{body.code})[{i}]"
            if i == len(rvars):
                e = Ex(code, body.t, body.lo, body.hi, body.exact, body.gran, size)
            else:
                e = Ex(code, I32, rvars[i].lo, rvars[i].hi, size=size)
            return self.convert(e, t, exact=True)
        code = f"hl.{fn}({explicit}{body.code})"
        if fn in ("maximum", "minimum"):
            return Ex(code, t, body.lo, body.hi, body.exact, body.gran, size)
        if fn == "sum":
            lo, hi = min(body.lo * n, body.lo), max(body.hi * n, body.hi)
        else:
            lo, hi = pow_interval_range(body.lo, body.hi, n)
        if t.is_integer and not fits(t, lo, hi):
            if not t.wraps:
                return None
            lo, hi = t.lo, t.hi
        if t.is_float and max(abs(lo), abs(hi)) > FLOAT_CAP:
            return None
        gran = body.gran * (n if fn == "product" else 1)
        return Ex(code, t, lo, hi, body.exact, gran, size)

    INT_OPS = [(6, op_arith), (2, op_div), (2, op_mod), (1, op_neg), (1, op_bitnot), (2, op_bitwise), (2, op_shift),
               (2, op_minmax), (2, op_clamp), (3, op_select), (0.5, op_mux), (1, op_abs), (1, op_absd), (1.5, op_lerp),
               (1, op_widening), (1, op_averaging), (0.7, op_mul_shift), (0.5, op_bitcount),
               (0.5, op_round_to_zero), (0.4, op_reinterpret), (4, op_cast), (1.2, op_reduce), (0.4, op_pow),
               (RARE_OPS_WEIGHT, op_rare_int)]
    FLOAT_OPS = [(6, op_arith), (2, op_div), (1, op_mod), (1, op_neg), (2, op_minmax), (2, op_clamp),
                 (2, op_select), (0.4, op_mux), (1, op_abs), (0.5, op_absd), (1, op_lerp), (4, op_math),
                 (2, op_rounding), (3, op_cast), (1, op_reduce), (0.5, op_pow)]
    BOOL_OPS = [(6, op_compare), (3, op_logical), (0.5, op_float_class), (1, op_select), (1, op_cast)]


FUNC_NAME = re.compile(r"^(f|bc)\d+\[")


def is_func_ref(code):
    """code is one call of a Func (f3[...] or f3[...][i]), nothing around it."""
    if not FUNC_NAME.match(code):
        return False
    depth = 0
    for i, ch in enumerate(code):
        depth += ch == "["
        depth -= ch == "]"
        if depth == 0 and ch == "]":
            rest = code[i + 1:]
            return rest == "" or re.fullmatch(r"\[\d+\]", rest) is not None
    return False


def as_expr(code):
    """A bare Func reference made an Expr: in select() and mux() the bindings would
    otherwise take FuncRefs for Tuples and return a Python tuple."""
    return f"hl.Expr({code})" if is_func_ref(code) else code


def is_rvar(e: Ex):
    """An RVar leaf (r3.x) rather than a pure Var."""
    return "." in e.code


# ---------------------------------------------------------------------- intervals
def interval(sym, a, b):
    if sym == "+":
        return a.lo + b.lo, a.hi + b.hi
    if sym == "-":
        return a.lo - b.hi, a.hi - b.lo
    ps = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return min(ps), max(ps)


def euclid_div(a, b):
    """Halide's integer division: Euclidean, x / 0 == 0."""
    if b == 0:
        return 0
    q = a // abs(b)
    return q if b > 0 else -q


def div_interval(a, b):
    bs = [v for v in (b.lo, b.hi, -1, 1) if b.lo <= v <= b.hi and v != 0]
    qs = [euclid_div(x, y) for x in (a.lo, a.hi) for y in bs]
    if b.lo <= 0 <= b.hi or not qs:
        qs.append(0)
    return min(qs), max(qs)


def shift_interval(a, smin, smax):
    def sh(v, s):
        return v << s if s >= 0 else v >> -s
    ss = {smin, smax} | ({0} if smin <= 0 <= smax else set())
    vs = [sh(v, s) for v in (a.lo, a.hi) for s in ss]
    return min(vs), max(vs)


def bitwise_interval(sym, a, b, t):
    if a.lo >= 0 and b.lo >= 0:
        top = (1 << max(a.hi, b.hi).bit_length()) - 1
        if sym == "&":
            return 0, min(a.hi, b.hi)
        return 0, min(top, t.hi)
    if t.is_int:
        m = max(a.mag, b.mag)
        top = (1 << m.bit_length()) - 1
        return max(-top - 1, t.lo), min(top, t.hi)
    return t.lo, t.hi


def pow_interval(lo, hi, k):
    vs = [lo ** k, hi ** k]
    if lo <= 0 <= hi:
        vs.append(0)
    return min(vs), max(vs)


def pow_interval_range(lo, hi, n):
    """Interval of a product of n factors, each in [lo, hi]."""
    if lo >= 0:
        return lo ** n, hi ** n
    m = max(abs(lo), abs(hi)) ** n
    return -m, m


def float_to_int_bounds(t):
    """A float range every value of which converts to t without overflow."""
    if t.bits >= 32:
        return (0.0 if t.is_uint else -float(1 << 30)), float(1 << 30)
    return float(t.lo), float(t.hi)
