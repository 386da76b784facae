"""Random update definitions for a generated Func (see gen.py).

Kinds of update:
  pure      f[x, y] = g(f[x, y], ...)                      no RDom
  reduce    f[x, y] = f[x, y] + h[x + r.x, y + r.y] ...     RDom on the right only
  rdom_lhs  f[r.x, y] = f[r.x - 1, y] * 2 + ...             RDom coordinates (maybe recursive)
  scatter   f[clamp(data(r), lo, hi), y] += 1 ...           data-dependent coordinates

Values are either accumulations (`+=`, `f = f - e`, `hl.max(f, e)`, ...) whose
range is computed from the old range and the number of updates an element can
receive, or general expressions of reads of the Func itself, which are clamped
first for Int(32)/Int(64) and floats: their old values are not known in general
(recursive updates feed on themselves).

Free Vars in an update may only be the pure Vars left on its left-hand side, so
the Scope of an update holds those and the RVars.  The output Func never reads or
writes outside the output buffer (Halide rejects that), so its RDom coordinates
and scatter clamps stay inside the realized region.
"""

from __future__ import annotations

import math

from fuzz_types import BOOL, COORD, COORD_SOURCE_TYPES, FLOAT_CAP, I32, Ex, fits
from gen_expr import ExprGen, Scope, bitwise_interval

# Self-reads of no-overflow types are clamped to this magnitude.
SELF_BOUND = 1 << 20


class UpdateInfo:
    """What the schedule generator needs to know about one update stage."""

    def __init__(self, pure_vars, rvars, rdom, kind="pure", assoc=False, parallel_ok=False):
        self.pure_vars = pure_vars  # pure Var names left on the LHS (their loops exist)
        self.rvars = rvars          # RVar sources, e.g. "r0.x"
        self.rdom = rdom
        self.kind = kind
        self.assoc = assoc              # f = f op e with an associative op: rfactor / atomic apply
        self.parallel_ok = parallel_ok  # iterations of the RVars write distinct elements


def gen_update(p, f):
    """Append one random update definition of FuncInfo f to ProgramGen p."""
    r = p.r
    kind = r.choice(["pure", "reduce", "reduce", "rdom_lhs", "scatter", "scatter"])
    d = r.randrange(p.dims)
    rdom, rvars = None, []
    if kind != "pure":
        rdom, rvars = declare_update_rdom(p, f, kind, d)
        if rdom is None:
            kind = "pure"
    lhs = list(p.vars)
    read_lhs = list(p.vars)
    calls = set()  # what this update stage reads, for the schedule generator
    if kind in ("rdom_lhs", "scatter"):
        lhs[d], read_lhs[d] = lhs_coord(p, f, kind, d, rvars, calls)
    pure_vars = [v for v, l in zip(p.vars, lhs) if l == v]
    var_ex = [Ex(v, I32, -COORD, COORD) for v in pure_vars] + rvars
    coord_vars = [[v] if v in pure_vars else [rv.code for rv in rvars] for v in p.vars]
    if rdom is not None and r.random() < 0.25:
        add_predicate(p, rdom, var_ex, coord_vars, calls)
    n = math.prod(int(rv.hi - rv.lo + 1) for rv in rvars) if rvars else 1
    assoc = update_values(p, f, lhs, read_lhs, var_ex, coord_vars, n, calls, rvars if kind == "reduce" else [])
    f.stage_calls.append(calls)
    f.updates.append(UpdateInfo(pure_vars, [rv.code for rv in rvars], rdom, kind, assoc,
                                parallel_ok=(kind == "rdom_lhs" and read_lhs == lhs)))


def input_scope(p, vars, coord_vars, calls):
    """A Scope reading inputs only (update coordinates and predicates)."""
    scope = Scope(vars, params=p.params)
    scope.coord_vars = coord_vars
    scope.inline_used = 0
    scope.calls = calls
    scope.reads = [lambda g, depth: p.read_input(scope, g, depth)]
    return scope


def declare_update_rdom(p, f, kind, d):
    r = p.r
    if kind in ("reduce", "scatter") and r.random() < 0.2:
        small = [i for i in p.inputs if not i.image_param and math.prod(i.shape) <= 64]
        if small:
            inp = r.choice(small)
            name = f"r{p.n_rdoms}"
            p.n_rdoms += 1
            p.emit(f"{name} = hl.RDom({inp.name})")
            return name, [Ex(f"{name}.{'xyzw'[i]}", I32, 0, e - 1) for i, e in enumerate(inp.shape)]
    if kind == "rdom_lhs":
        if f.is_output:
            lo = p.out_min[d]
            hi = lo + p.out_extent[d]  # exclusive
            m = r.randint(lo, hi - 1)
            return p.declare_rdom([(m, r.randint(1, hi - m))])
        return p.declare_rdom([(r.randint(-2, 4), r.randint(1, 8))])
    dims = 1 if r.random() < 0.7 else 2
    return p.declare_rdom([(r.randint(-2, 1), r.randint(1, 4)) for _ in range(dims)])


def lhs_coord(p, f, kind, d, rvars, calls):
    """(LHS coordinate, coordinate of self-reads) for the non-pure dimension d."""
    r = p.r
    lo = p.out_min[d] if f.is_output else -4
    hi = lo + p.out_extent[d] - 1 if f.is_output else 12
    if kind == "rdom_lhs":
        rv = rvars[0]
        if rv.lo - 1 >= lo and r.random() < 0.5:
            return rv.code, f"{rv.code} - 1"  # recursive: reads the previous element
        return rv.code, rv.code
    g = ExprGen(r, input_scope(p, rvars, [[rv.code for rv in rvars]] * p.dims, calls))
    src = g.convert(g.gen(r.choice(COORD_SOURCE_TYPES), 2, exact=True), I32, exact=True) or g.simple_leaf(I32)
    if not any(rv.code in src.code for rv in rvars):  # a scatter that ignores its domain is not one
        src = g.arith("+", src, r.choice(rvars), I32)
    a = r.randint(lo, hi)
    b = r.randint(a, hi)
    code = f"hl.clamp({src.code}, {a}, {b})"
    return code, code


def add_predicate(p, rdom, var_ex, coord_vars, calls):
    cond = ExprGen(p.r, input_scope(p, var_ex, coord_vars, calls)).gen(BOOL, 2)
    p.emit(f"{rdom}.where({cond.code})")


ASSOCIATIVE = ("+", "*", "min", "max", "^", "|", "&")


def update_values(p, f, lhs, read_lhs, var_ex, coord_vars, n, calls, must_use=()):
    """Emit f[lhs] = new values; update f's ranges; True when the update is an
    associative accumulation.  must_use: RVars one of which the values must mention
    (a reduction that ignores its domain is a different test)."""
    r = p.r
    lhs_code = f"{f.name}[{', '.join(lhs)}]"
    read_code = f"{f.name}[{', '.join(read_lhs)}]"
    with_self = p.make_scope(f, var_ex, coord_vars, self_read=lambda g: self_read(g, f, read_code))
    without_self = p.make_scope(f, var_ex, coord_vars)
    g_self, g_plain = ExprGen(r, with_self), ExprGen(r, without_self)
    changed = [True] if len(f.types) == 1 else [r.random() < 0.7 for _ in f.types]
    if not any(changed):
        changed[0] = True
    vals = []
    augmented = None  # (op, operand) when the update can be written f[...] op= e
    op = None         # the accumulation's operator (single-valued Funcs)
    for j, t in enumerate(f.types):
        cur = elem(read_code, f, j)
        if not changed[j]:
            vals.append(cur)
            continue
        style = r.random()
        # The RVar a reduction must mention goes into an accumulation's operand: added
        # after it, it would be re-applied on every iteration (not what its range says).
        extra = None
        if must_use and not t.is_bool:
            extra = g_plain.convert(g_plain.tame(r.choice(must_use), -8, 8), t, exact=True)
        acc = accumulate(g_plain, f, j, cur, n, r.randint(1, 3), extra) if style < 0.45 else None
        if acc is None:
            v = (g_self if style < 0.8 else g_plain).gen(t, r.randint(1, 3))
            code, rng = v.code, v
        else:
            code, rng, aug, op = acc
            if len(f.types) == 1 and aug is not None and read_lhs == lhs and r.random() < 0.5:
                augmented = aug
        if extra is not None and not any(rv.code in code for rv in must_use):
            total = g_plain.arith("+", Ex(code, t, rng.lo, rng.hi, rng.exact, rng.gran), extra, t)
            code, rng, augmented = total.code, total, None
            op = op if op == "+" else None
        f.join_range(j, rng)
        vals.append(code)
    calls |= with_self.calls | without_self.calls
    if augmented is not None:
        sym, e = augmented
        p.emit(f"{lhs_code} {sym}= {e.code}")
    elif len(vals) == 1:
        p.emit(f"{lhs_code} = {vals[0]}")
    else:
        p.emit(f"{lhs_code} = ({', '.join(vals)})")
    return len(f.types) == 1 and op in ASSOCIATIVE and read_lhs == lhs


def elem(read_code, f, j):
    return read_code + (f"[{j}]" if f.is_tuple else "")


def self_read(g: ExprGen, f, read_code):
    """A read of the Func being updated (any Tuple element), made safe to compute with."""
    j = g.r.randrange(len(f.types))
    t = f.types[j]
    code = elem(read_code, f, j)
    if t.is_bool:
        return Ex(code, t, 0, 1, size=2)
    if t.is_integer and t.wraps:
        return Ex(code, t, t.lo, t.hi, size=2)
    k = SELF_BOUND if t.is_integer else float(SELF_BOUND)
    lo = 0 if t.is_uint else -k
    return Ex(f"hl.clamp({code}, {lit_code(lo)}, {lit_code(k)})", t, lo, k, exact=False, size=3)


def lit_code(v):
    return repr(v) if isinstance(v, float) else str(v)


def accumulate(g: ExprGen, f, j, cur_code, n, depth, extra=None):
    """(code, range Ex, (augmented op, operand) or None, op) of f[j] = f[j] op e (e
    including `extra`), or None when the old range leaves no room (the caller then
    writes a general expression)."""
    t = f.types[j]
    old = f.ranges[j]
    if t.is_bool:
        return None
    ops = ["+", "-", "min", "max"] + (["*", "^", "|", "&"] if t.is_integer and t.wraps else [])
    op = g.r.choice(ops)
    e = g.gen(t, depth)
    if extra is not None:
        e = g.arith("+", e, extra, t)
    if op in ("+", "-"):
        if t.is_integer and not t.wraps:
            room = (1 << (t.bits - 3)) - max(abs(old.lo), abs(old.hi))
            if room <= n:
                return None
            e = g.tame_mag(e, room // n)
        elif t.is_float:
            room = FLOAT_CAP / 4 - max(abs(old.lo), abs(old.hi))
            if room <= n:
                return None
            e = g.tame_mag(e, room / n)
        lo = old.lo + n * e.lo if op == "+" else old.lo - n * e.hi
        hi = old.hi + n * e.hi if op == "+" else old.hi - n * e.lo
        lo, hi = min(lo, old.lo), max(hi, old.hi)
        if t.is_integer and not fits(t, lo, hi):
            lo, hi = t.lo, t.hi
        gran = min(old.gran, e.gran)
        rng = Ex("", t, lo, hi, old.exact and e.exact, gran)
        return f"({cur_code} {op} {e.code})", rng, (op, e), op
    if op in ("min", "max"):
        rng = Ex("", t, min(old.lo, e.lo), max(old.hi, e.hi), old.exact and e.exact, min(old.gran, e.gran))
        return f"hl.{op}({cur_code}, {e.code})", rng, None, op
    if op == "*":
        return f"({cur_code} * {e.code})", Ex("", t, t.lo, t.hi), (op, e), op
    lo, hi = bitwise_interval(op, old, e, t)
    if n > 1:
        lo, hi = t.lo, t.hi
    return f"({cur_code} {op} {e.code})", Ex("", t, min(lo, old.lo), max(hi, old.hi)), (op, e), op
