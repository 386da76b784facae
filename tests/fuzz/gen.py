"""Random Halide pipeline programs: seed -> a self-contained Python program.

    python tests/fuzz/gen.py SEED            # print the program of SEED
    python tests/fuzz/gen.py SEED > p.py && python p.py halide [nosched]

The program defines `pipeline(hl, SCHED)`, which builds the pipeline with the
module `hl` it is given (ferrohalide or halide), applies the random schedule when
SCHED is true, realizes the output and returns the results as NumPy arrays (with two
outputs: {"values": arrays over the requested region, "regions": each output's [min,
extent] per dimension}, see realize_lines).  Run as
a script it imports the module named on its command line.  With SCHED false every
Func keeps Halide's default schedule: the semantic oracle for the scheduled run.

What a program contains (see gen_expr.py for expressions, gen_sched.py for
schedules): 1-3 dimensional Funcs over Vars x, y, c; 1-2 inputs (Buffers or
ImageParams of any type) read through BoundaryConditions or clamped coordinates;
scalar Params; 1-5 Funcs calling earlier ones at offset, scaled, transposed and
data-dependent coordinates; Tuple-valued Funcs (incl. argmax/argmin); update
definitions (pure, RDom reductions, RDom coordinates, clamped scatters, where()
predicates, RDoms over Buffers); output at odd sizes, sometimes into a Buffer with
a shifted min, sometimes two outputs through a Pipeline.

The generator's output depends only on the seed and GEN_VERSION: any change to
what it generates must bump GEN_VERSION, since seed lists (expected failures,
known reference bugs) name programs by (version, seed).
"""

from __future__ import annotations

import random
import sys

from fuzz_types import ALL_TYPES, BOOL, COORD, COORD_SOURCE_TYPES, I32, TYPES, Ex
from gen_expr import ExprGen, Scope, bitwise_interval, lit_code
from gen_update import UpdateInfo, gen_update
import gen_sched

GEN_VERSION = 3

VAR_NAMES = ["x", "y", "c"]
# Bound on the inlined expression size of one definition (the unscheduled oracle
# inlines everything: a blow-up would only measure compile time).
INLINE_BUDGET = 250
# Characters of algorithm source after which Funcs get no more updates and depth 1.
ALGORITHM_BUDGET = 2500
BC_KINDS = ["constant_exterior", "repeat_edge", "repeat_image", "mirror_image", "mirror_interior"]


class Input:
    """A Buffer or ImageParam the pipeline reads."""

    def __init__(self, name, t, shape, lo, hi, gran, image_param):
        self.name, self.t, self.shape = name, t, shape  # shape in Halide order (dim 0 first)
        self.lo, self.hi, self.gran = lo, hi, gran
        self.image_param = image_param


class FuncInfo:
    """A generated Func: value types and ranges (one per Tuple element), updates."""

    def __init__(self, name, types):
        self.name = name
        self.types = types
        self.ranges = [None] * len(types)  # Ex-like: lo, hi, exact, gran
        self.updates = []  # gen_sched.UpdateInfo
        self.inline_size = 1
        self.used = False
        self.stage_calls = []  # per definition (pure, then updates): names of Funcs it reads
        self.is_output = False

    @property
    def calls(self):
        return set().union(*self.stage_calls)

    @property
    def is_tuple(self):
        return len(self.types) > 1

    def join_range(self, i, e: Ex):
        old = self.ranges[i]
        if old is None:
            self.ranges[i] = Ex("", e.t, e.lo, e.hi, e.exact, e.gran)
        else:
            self.ranges[i] = Ex("", e.t, min(old.lo, e.lo), max(old.hi, e.hi), old.exact and e.exact,
                                min(old.gran, e.gran))


class ProgramGen:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.lines = []  # body of pipeline() before the schedule
        self.n_rdoms = 0
        self.n_bcs = 0
        self.scale_ups = 0
        self.inputs = []
        self.params = []
        self.bcs = []  # (name, input, kind, range Ex)
        self.funcs = []

    def chance(self, p):
        return self.r.random() < p

    def emit(self, line):
        self.lines.append(line)

    # ------------------------------------------------------------------ program
    def generate(self):
        r = self.r
        self.dims = self.r.choice([1, 2, 2, 2, 3])
        self.vars = VAR_NAMES[:self.dims]
        self.out_extent = [self.out_size() for _ in range(self.dims)]
        if self.dims == 3:
            self.out_extent[2] = r.randint(1, 4)
        self.out_min = [0] * self.dims
        if self.chance(0.1):
            self.out_min = [r.randint(-3, 3) for _ in range(self.dims)]
        self.emit(", ".join(self.vars) + " = " + ", ".join(f"hl.Var('{v}')" for v in self.vars))
        for i in range(r.choice([1, 1, 2])):
            self.make_input(i)
        for i in range(r.choice([0, 0, 1, 2])):
            self.make_param(i)
        n_funcs = r.choice([1, 2, 2, 3, 3, 4, 4])
        # Sometimes an earlier Func is a second output (realized through a Pipeline).
        self.second_output = r.randrange(n_funcs - 1) if n_funcs > 1 and self.chance(0.1) else None
        for i in range(n_funcs):
            self.make_func(i, last=(i == n_funcs - 1))
        sched = gen_sched.ScheduleGen(self).generate()
        return self.program_text(sched)

    def over_budget(self):
        """Has the algorithm grown big?  Then further Funcs stay small: compile time
        (both implementations) grows faster than the bugs a bigger program finds."""
        return sum(len(line) for line in self.lines) > ALGORITHM_BUDGET

    def out_size(self):
        return self.r.choice([1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 24]) if self.chance(0.7) else self.r.randint(1, 24)

    # ------------------------------------------------------------------ inputs and params
    def make_input(self, i):
        r = self.r
        # No UInt(64): halide's Buffer cannot wrap a uint64 array.
        t = r.choice([t for t in ALL_TYPES if t.kind in "if" or (t.is_uint and t.bits < 64)]
                     + [BOOL] * (1 if self.chance(0.2) else 0))
        shape = [r.randint(1, 16) for _ in range(self.dims)]
        if self.dims == 3:
            shape[2] = r.randint(1, 4)
        gran = 0
        if t.is_float:
            scale = r.choice([512, 4096])
            lo, hi, div, gran = -scale, scale, 16, -4
        elif t.is_bool:
            lo, hi, div = 0, 1, 1
        elif self.chance(0.4):
            lo, hi, div = t.lo, t.hi, 1
        else:
            lo, hi, div = max(t.lo, -r.choice([3, 20, 100])), min(t.hi, r.choice([3, 20, 255, 1000])), 1
        name = f"inp{i}"
        np_shape = tuple(reversed(shape))
        data = f"_data({np_shape}, {r.randint(0, 10 ** 6)}, {lo}, {hi}, np.{t.np}, {div})"
        image_param = self.chance(0.2)
        if image_param:
            # The Buffer must outlive the pipeline: halide's ImageParam.set() does not keep
            # the Python object (and with it the array's memory) alive.
            self.emit(f"{name}_buf = hl.Buffer({data})")
            self.emit(f"{name} = hl.ImageParam({t.hl}, {self.dims}, '{name}')")
            self.emit(f"{name}.set({name}_buf)")
        else:
            self.emit(f"{name} = hl.Buffer({data})")
        flo, fhi = (lo / div, hi / div) if t.is_float else (lo, hi)
        self.inputs.append(Input(name, t, shape, flo, fhi, gran, image_param))

    def make_param(self, i):
        t = self.r.choice([I32, I32, TYPES["u8"], TYPES["f32"], TYPES["i16"]])
        v = self.r.randint(-4, 12) / 4.0 if t.is_float else self.r.randint(max(t.lo, -5), 12)
        name = f"p{i}"
        self.emit(f"{name} = hl.Param({t.hl}, '{name}', {lit_code(v)})")
        self.params.append(Ex(name, t, v, v, gran=-2))

    # ------------------------------------------------------------------ reads
    def bc_for(self, inp):
        """An existing BoundaryCondition Func on inp, or a new one."""
        existing = [b for b in self.bcs if b[1] is inp]
        if existing and self.chance(0.8):
            return self.r.choice(existing)
        kind = self.r.choice(BC_KINDS)
        name = f"bc{self.n_bcs}"
        self.n_bcs += 1
        args = [inp.name]
        lo, hi = inp.lo, inp.hi
        if self.chance(0.2):  # explicit bounds instead of the buffer's own
            bounds = []
            for ext in inp.shape:
                m = self.r.randint(0, max(0, ext - 1))
                bounds.append(f"({m}, {self.r.randint(1, ext - m)})")
            args.append("[" + ", ".join(bounds) + "]")
        if kind == "constant_exterior":
            v = self.const_value(inp)
            # A float literal is a Float(32) Expr: not the type of a Float(64) input.
            args.insert(1, lit_code(v) if inp.t.name != "f64" else f"hl.f64({lit_code(v)})")
            lo, hi = min(lo, v), max(hi, v)
        self.emit(f"{name} = hl.BoundaryConditions.{kind}({', '.join(args)})")
        bc = (name, inp, kind, Ex(name, inp.t, lo, hi, gran=inp.gran))
        self.bcs.append(bc)
        return bc

    def const_value(self, inp):
        if inp.t.is_float:
            return self.r.randint(-64, 64) / 4.0
        if inp.t.is_bool:
            return self.r.choice([0, 1])
        return self.r.choice([0, 1, 7, -3 if inp.t.is_int else 3, min(inp.t.hi, 100)])

    def coord(self, scope, d, g: ExprGen, depth, data_ok=True):
        """Source of a coordinate for dimension d of a call."""
        r = self.r
        cands = scope.coord_vars[d]
        v = r.choice(cands) if cands and not self.chance(0.1) else r.choice(scope.vars).code
        roll = r.random()
        k = r.randint(-3, 3)
        if roll < 0.45:
            return v if k == 0 else f"{v} + {k}" if k > 0 else f"{v} - {-k}"
        if roll < 0.55 and self.scale_ups < 2:
            self.scale_ups += 1
            return f"2 * {v} + {k}" if self.chance(0.7) else f"{v} * 2"
        if roll < 0.65:
            return f"{v} / 2" if self.chance(0.5) else f"{v} // 2"
        if roll < 0.7:
            return str(r.randint(0, 3))
        if roll < 0.76 and data_ok and not g.in_coordinate:
            # Data-dependent, but not nested: compile time grows fast with nesting.
            g.in_coordinate = True
            try:
                src = g.gen(r.choice(COORD_SOURCE_TYPES), 1, exact=True)
            finally:
                g.in_coordinate = False
            lo = r.randint(-4, 4)
            return f"hl.clamp({g.convert(src, I32, exact=True).code}, {lo}, {lo + r.randint(0, 12)})"
        return v

    def read_input(self, scope, g, depth):
        inp = self.r.choice(self.inputs)
        if self.chance(0.65):
            name, _, _, rng = self.bc_for(inp)
            scope.calls.add(name)
            coords = [self.coord(scope, d, g, depth) for d in range(self.dims)]
            return Ex(f"{name}[{', '.join(coords)}]", rng.t, rng.lo, rng.hi, gran=rng.gran, size=2)
        coords = [f"hl.clamp({self.coord(scope, d, g, depth)}, 0, {inp.shape[d] - 1})" for d in range(self.dims)]
        return Ex(f"{inp.name}[{', '.join(coords)}]", inp.t, inp.lo, inp.hi, gran=inp.gran, size=2)

    def read_func(self, f: FuncInfo, scope, g, depth):
        coords = [self.coord(scope, d, g, depth) for d in range(self.dims)]
        i = self.r.randrange(len(f.types))
        code = f"{f.name}[{', '.join(coords)}]" + (f"[{i}]" if f.is_tuple else "")
        rng = f.ranges[i]
        scope.inline_used += f.inline_size if not f.updates else 1
        f.used = True
        scope.calls.add(f.name)
        return Ex(code, rng.t, rng.lo, rng.hi, rng.exact, rng.gran, size=2)

    def make_scope(self, func, vars, coord_vars, self_read=None, allow_rdom=True):
        """The Scope of one definition of `func` (reads of inputs and earlier Funcs)."""
        scope = Scope(vars, params=self.params)
        scope.coord_vars = coord_vars
        scope.inline_used = 0
        scope.calls = set()
        earlier = [f for f in self.funcs if f is not func]

        def read(g, depth):
            callable_funcs = [f for f in earlier if scope.inline_used + f.inline_size <= INLINE_BUDGET]
            roll = self.r.random()
            # Not inside an inline reduction: its hidden Func would call the Func being defined.
            if self_read is not None and roll < 0.3 and not g.in_reduction:
                return self_read(g)
            if callable_funcs and roll < 0.75:
                unused = [f for f in callable_funcs if not f.used]
                return self.read_func(self.r.choice(unused or callable_funcs), scope, g, depth)
            return self.read_input(scope, g, depth)

        scope.reads = [read]
        if allow_rdom:
            scope.new_rdom = self.new_inline_rdom
        return scope

    def new_inline_rdom(self, extents):
        name, rvars = self.declare_rdom([(self.r.randint(-2, 1), e) for e in extents])
        return name, rvars

    def declare_rdom(self, bounds):
        name = f"r{self.n_rdoms}"
        self.n_rdoms += 1
        self.emit(f"{name} = hl.RDom([{', '.join(f'({m}, {e})' for m, e in bounds)}])")
        return name, [Ex(f"{name}.{'xyzw'[i]}", I32, m, m + e - 1) for i, (m, e) in enumerate(bounds)]

    # ------------------------------------------------------------------ Funcs
    def make_func(self, i, last):
        r = self.r
        n_vals = 1 if self.chance(0.85) else 2
        f = FuncInfo(f"f{i}", [])
        f.is_output = last or i == self.second_output
        self.emit(f"{f.name} = hl.Func('{f.name}')")
        var_ex = [Ex(v, I32, -COORD, COORD) for v in self.vars]
        scope = self.make_scope(f, var_ex, [[v] for v in self.vars])
        depth = r.choice([1, 2, 2, 3, 3]) if not self.over_budget() else 1
        if n_vals == 2 and self.chance(0.3):
            self.argmax_definition(f, scope, depth)
        else:
            g = ExprGen(r, scope)
            vals = [g.gen(r.choice(ALL_TYPES), depth) for _ in range(n_vals)]
            self.define(f, self.vars, vals)
            scope.inline_used += sum(v.size for v in vals)
        f.inline_size = max(1, scope.inline_used)
        f.stage_calls.append(scope.calls)
        self.funcs.append(f)
        for _ in range(r.choice([0, 0, 0, 1, 1, 2]) if not self.over_budget() else 0):
            gen_update(self, f)
        if last:
            self.use_leftovers(f)

    def argmax_definition(self, f, scope, depth):
        fn = self.r.choice(["argmax", "argmin"])
        extents = [self.r.randint(1, 4) for _ in range(self.r.choice([1, 1, 2]))]
        rdom, rvars = self.declare_rdom([(self.r.randint(-2, 1), e) for e in extents])
        g = ExprGen(self.r, scope)
        scope.vars = scope.vars + rvars
        body = g.gen(self.r.choice([t for t in ALL_TYPES if not t.is_bool]), depth, exact=True)
        if not any(rv.code in body.code for rv in rvars):
            body = g.arith("+", body, g.convert(rvars[0], body.t, exact=True), body.t)
        scope.vars = scope.vars[:-len(rvars)]
        f.types = [I32] * len(rvars) + [body.t]
        f.ranges = [Ex("", I32, rv.lo, rv.hi) for rv in rvars] + [Ex("", body.t, body.lo, body.hi, body.exact,
                                                                      body.gran)]
        explicit = f"{rdom}, " if self.chance(0.5) else ""
        self.emit(f"{f.name}[{', '.join(self.vars)}] = hl.{fn}({explicit}{body.code})")

    def define(self, f, lhs, vals):
        """Emit the pure definition f[lhs] = vals."""
        f.types = [v.t for v in vals]
        f.ranges = [None] * len(vals)
        for j, v in enumerate(vals):
            f.join_range(j, v)
        rhs = vals[0].code if len(vals) == 1 else "(" + ", ".join(v.code for v in vals) + ")"
        self.emit(f"{f.name}[{', '.join(lhs)}] = {rhs}")

    def use_leftovers(self, out: FuncInfo):
        """Funcs nobody calls become part of the output through one more update."""
        unused = [g for g in self.funcs[:-1] if not g.used]
        if not unused:
            return
        t = out.types[0]
        var_ex = [Ex(v, I32, -COORD, COORD) for v in self.vars]
        scope = self.make_scope(out, var_ex, [[v] for v in self.vars], allow_rdom=False)
        g = ExprGen(self.r, scope)
        acc = None
        for u in unused:
            e = g.convert(self.read_func(u, scope, g, 0), t, exact=True)
            if e is None:  # a noisy float into a discrete type: compare with a threshold
                e = g.simple_leaf(t)
            acc = e if acc is None else combine(g, acc, e)
        self_ref = f"{out.name}[{', '.join(self.vars)}]" + ("[0]" if out.is_tuple else "")
        rng = out.ranges[0]
        cur = Ex(self_ref, t, rng.lo, rng.hi, rng.exact, rng.gran, 2)
        assert acc is not None  # `unused` is never empty here
        if t.is_integer and not t.wraps:
            cur = g.tame_mag(cur, 1 << 20)
            acc = g.tame_mag(acc, 1 << 20)
        new = combine(g, cur, acc)
        out.join_range(0, new)
        rest = [f"{self_ref[:-3]}[{j}]" for j in range(1, len(out.types))]
        rhs = new.code if not out.is_tuple else "(" + ", ".join([new.code] + rest) + ")"
        self.emit(f"{out.name}[{', '.join(self.vars)}] = {rhs}")
        out.updates.append(UpdateInfo(list(self.vars), [], None))
        out.stage_calls.append(scope.calls)

    # ------------------------------------------------------------------ text
    def program_text(self, sched_lines):
        out = self.funcs[-1]
        body = list(self.lines)
        body.append("if SCHED:")
        body += ["    " + s for s in sched_lines] or ["    pass"]
        body += self.realize_lines(out)
        head = [
            f"# Random pipeline: tests/fuzz/gen.py v{GEN_VERSION}, seed {self.seed}",
            "# Run: python FILE.py [ferrohalide|halide] [nosched]   (nosched: the unscheduled oracle)",
            "import sys, importlib",
            "import numpy as np",
            "",
            "SCHED = True  # False: every Func keeps its default schedule (the oracle)",
            "",
            "",
            "def _data(shape, salt, lo, hi, dtype, div=1):",
            "    \"\"\"Deterministic pseudo-random values in [lo, hi] (divided by div), of numpy dtype.\"\"\"",
            "    h = (np.arange(int(np.prod(shape)), dtype=np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)",
            "    h ^= h >> np.uint64(29)",
            "    span = hi - lo + 1",
            "    if span > 2 ** 63:  # the whole 64-bit range",
            "        v = h.view(np.int64).astype(dtype)",
            "    else:",
            "        v = (h % np.uint64(span)).astype(np.int64) + lo",
            "        v = (v / div).astype(dtype) if div != 1 else v.astype(dtype)",
            "    return v.reshape(shape)",
            "",
            "",
            "def pipeline(hl, SCHED):",
        ]
        tail = [
            "",
            "",
            "if __name__ == '__main__':",
            "    hl = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else 'ferrohalide')",
            "    np.set_printoptions(threshold=64, linewidth=150)",
            "    res = pipeline(hl, SCHED and 'nosched' not in sys.argv[2:])",
            "    for a in (res['values'] + res['regions'] if isinstance(res, dict) else res):",
            "        print(repr(a))",
        ]
        return "\n".join(head + ["    " + s for s in body] + tail) + "\n"

    def realize_lines(self, out: FuncInfo):
        ext = "[" + ", ".join(map(str, self.out_extent)) + "]"
        if self.second_output is not None:
            outs = [out.name, self.funcs[self.second_output].name]
            # Halide grows an output another one reads to what that one's schedule
            # needs: the values compare over the requested region, the regions
            # themselves only between runs of one mode (verdict.py).
            return [f"r = hl.Pipeline([{', '.join(outs)}]).realize({ext})",
                    f"return {{'values': [np.array(b)[tuple(slice(-b.dim(i).min(), n - b.dim(i).min()) "
                    f"for i, n in reversed(list(enumerate({ext}))))] for b in r],",
                    "        'regions': [np.array([[b.dim(i).min(), b.dim(i).extent()] "
                    "for i in range(b.dimensions())]) for b in r]}"]
        if any(self.out_min) and not out.is_tuple:
            return [f"ob = hl.Buffer({out.types[0].hl}, {ext})",
                    f"ob.set_min([{', '.join(map(str, self.out_min))}])",
                    f"{out.name}.realize(ob)",
                    "return [np.array(ob)]"]
        if out.is_tuple:
            return [f"r = {out.name}.realize({ext})", "return [np.array(b) for b in r]"]
        return [f"r = {out.name}.realize({ext})", "return [np.array(r)]"]


def combine(g: ExprGen, a: Ex, b: Ex):
    """a (op) b of a's type, for folding extra terms into a value."""
    t = a.t
    b = g.convert(b, t, exact=True) or g.simple_leaf(t)
    if t.is_bool:
        return Ex(f"({a.code} ^ {b.code})", t, 0, 1, size=a.size + b.size + 1)
    if t.is_float:
        return g.arith("+", a, b, t)
    if g.chance(0.7):
        return g.arith(g.r.choice("+-") if not t.wraps else g.r.choice(["+", "-", "*"]), a, b, t)
    lo, hi = bitwise_interval("^", a, b, t)
    return Ex(f"({a.code} ^ {b.code})", t, lo, hi, size=a.size + b.size + 1)


CHECK_HELPER = """\
def _chk(e, t, lo, hi, site):
    # Self-test of the generator (gen.py --check): e has type t and, at run time, lies in
    # [lo, hi]; a failure names the site number, e.g. "_chk(..., 17)" in the program.
    want = {'b': hl.Bool, 'i': hl.Int, 'u': hl.UInt, 'f': hl.Float}[t[0]](*([] if t == 'b1' else [int(t[1:])]))
    e = e if isinstance(e, hl.Expr) else hl.Expr(e)
    assert e.type() == want, f'generator type model at site {site}: {e.type()}, not {t}'
    if lo is None or not -2 ** 63 <= lo <= hi < 2 ** 63:
        return e
    return hl.require((e >= hl.cast(e.type(), lo)) & (e <= hl.cast(e.type(), hi)), e, site, e)
"""


def generate(seed: int, check: bool = False) -> str:
    """The program text of `seed`; with check, instrumented to test the generator's model."""
    ExprGen.check, ExprGen.check_sites = check, 0
    try:
        text = ProgramGen(seed).generate()
    finally:
        ExprGen.check = False
    if check:
        text = text.replace("\ndef pipeline(hl, SCHED):\n", "\ndef pipeline(hl, SCHED):\n" + "\n".join(
            "    " + line for line in CHECK_HELPER.splitlines()) + "\n")
    return text


if __name__ == "__main__":
    sys.stdout.write(generate(int(sys.argv[1]), check="--check" in sys.argv[2:]))
