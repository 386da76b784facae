"""Random schedules for a generated pipeline (see gen.py).

Every directive of the Python API that changes how (not what) a pipeline computes
is drawn here: split (every TailStrategy), tile, fuse, reorder, vectorize, unroll,
parallel, serial, rename; compute_root / compute_at (Func + Var, LoopLevel with a
stage index, Var.outermost(), LoopLevel.root()) / compute_inline, store_root /
store_at, hoist_storage(_root); bound, bound_extent, align_bounds, align_extent,
reorder_storage, fold_storage, store_in; update stages with RVar splits, reorders
of RVars and pure Vars, atomic(), rfactor() (and the intermediate's schedule);
in_() / clone_in() wrappers; specialize (on Params and ImageParam sizes),
specialize_fail; compute_with; from seed EXTRAS_FROM_SEED on, async, ring_buffer,
memoize, partition policies, align_storage, bound_storage and prefetch.

The generator plans placements first (consumers before producers), so that loop
directives go to Funcs that have loops, and compute_at / store_at name loops of
the stage that really consumes the Func, outside vectorized loops and not across
parallel ones; RVars are parallelized only where iterations are independent or
after atomic(), rfactor is asked of associative updates.  A minority of choices
ignore all that on purpose: invalid schedules must be rejected by both
implementations alike.
"""

from __future__ import annotations

import random

# (weight, TailStrategy): the predicated and blending strategies are rarer, so the
# ones ferrohalide lacks do not mask other bugs in too many programs.
PURE_TAILS = [(3, "Auto"), (3, "GuardWithIf"), (2, "RoundUp"), (2, "ShiftInwards"), (0.4, "Predicate"),
              (0.3, "PredicateLoads"), (0.3, "PredicateStores"), (0.2, "RoundUpAndBlend"),
              (0.2, "ShiftInwardsAndBlend")]
# Pure Vars of update definitions: ShiftInwards would recompute (and so re-apply) updates.
UPDATE_TAILS = [(3, "Auto"), (3, "GuardWithIf"), (1.5, "RoundUp"), (0.4, "Predicate"), (0.3, "PredicateLoads"),
                (0.3, "PredicateStores"), (0.2, "ShiftInwards")]
RVAR_TAILS = [(3, "Auto"), (3, "GuardWithIf"), (1, "Predicate"), (0.3, "RoundUp"), (0.2, "ShiftInwards")]
FACTORS = [1, 2, 2, 3, 4, 4, 5, 8, 8, 16]
MEMORY_TYPES = ["Auto", "Heap", "Stack", "Register"]
INVALID = 0.015  # how often a choice ignores validity on purpose (a program makes dozens)
# Seeds from here on also draw the directives of `extras` (async, ring_buffer,
# memoize, partition, align_storage, bound_storage, prefetch), from an RNG of their
# own, so the programs of every earlier seed (which the seed lists name) are unchanged.
EXTRAS_FROM_SEED = 50000


class Stage:
    """Loop dims of one stage, innermost first: [(source name, is_rvar)]."""

    def __init__(self, prefix, dims, update=None):
        self.prefix = prefix  # Python source of the stage: "f0" or "f0.update(1)"
        self.dims = list(dims)
        self.update = update  # UpdateInfo for update stages
        self.vectorized, self.parallel, self.constant = set(), set(), set()

    def names(self, rvars=True):
        return [n for n, rv in self.dims if rvars or not rv]

    def is_rvar(self, name):
        return any(n == name and rv for n, rv in self.dims)

    def replace(self, v, new):
        for i, (n, _) in enumerate(self.dims):
            if n == v:
                self.dims[i:i + 1] = new
                return


class ScheduleGen:
    def __init__(self, p):
        self.p = p
        self.r = p.r
        self.lines = []
        self.n_vars = 0
        self.stages = {}    # Func name -> [Stage] (pure, then updates)
        self.placement = {}  # Func name -> ("inline" | "root" | "at" | "default" | "output", (cons, si))
        self.funcs = {f.name: f for f in p.funcs}
        self.uses = {}      # Func name -> {(consumer, stage index)}
        for f in p.funcs:
            for si, calls in enumerate(f.stage_calls):
                for callee in calls:
                    self.uses.setdefault(callee, set()).add((f.name, si))

    def chance(self, q):
        return self.r.random() < q

    def pick(self, weighted):
        total = sum(w for w, _ in weighted)
        x = self.r.random() * total
        for w, v in weighted:
            x -= w
            if x < 0:
                return v
        return weighted[-1][1]

    def emit(self, line):
        self.lines.append(line)

    def new_var(self, rvar=False):
        # Not v<N>: Var() names its anonymous vars so (unroll's, vectorize's), and a
        # schedule var of that name would collide with one depending on history.
        name = f"{'rv' if rvar else 'sv'}{self.n_vars}"
        self.n_vars += 1
        self.emit(f"{name} = hl.{'RVar' if rvar else 'Var'}('{name}')")
        return name

    # ------------------------------------------------------------------ driver
    def generate(self):
        if self.chance(0.08):
            return []  # the scheduled run equals the default one: a determinism check
        for f in self.p.funcs:
            pure = Stage(f.name, [(v, False) for v in self.p.vars])
            ups = [Stage(f"{f.name}.update({i})", [(rv, True) for rv in u.rvars] + [(v, False) for v in u.pure_vars],
                         u) for i, u in enumerate(f.updates)]
            self.stages[f.name] = [pure] + ups
        self.plan_placements()
        order = list(self.p.funcs)
        self.r.shuffle(order)
        for f in order:
            if self.has_loops(f.name) or self.chance(INVALID):
                if self.chance(0.6):
                    self.loops(self.stages[f.name][0])
                for st in self.stages[f.name][1:]:
                    if self.chance(0.5):
                        self.update_schedule(f, st)
        for name in list(self.placement):
            self.emit_placement(name)
        for f in order:
            if self.chance(0.12) and (self.has_loops(f.name) or self.chance(INVALID)):
                self.storage(f)
        if self.chance(0.12):
            self.wrapper()
        if self.chance(0.08):
            self.specialize()
        if self.chance(0.03):
            self.compute_with()
        if self.p.seed >= EXTRAS_FROM_SEED:
            self.extras()
        return self.lines

    # ------------------------------------------------------------------ placement planning
    def plan_placements(self):
        """Decide where each Func (and BoundaryCondition Func) is computed, consumers first."""
        for f in reversed(self.p.funcs):
            if f.is_output:
                self.placement[f.name] = ("output", None)
            else:
                self.placement[f.name] = self.choose_placement(f.name, bool(f.updates))
        for name, *_ in self.p.bcs:
            if name in self.uses and self.chance(0.35):
                self.placement[name] = self.choose_placement(name, False)

    def choose_placement(self, name, has_updates):
        roll = self.r.random()
        if roll < 0.25:
            return ("default", None)
        if roll < 0.3:
            return ("inline", None)
        if roll < 0.6:
            return ("root", None)
        uses = self.effective_uses(name)
        if len(uses) == 1 or self.chance(INVALID):
            return ("at", self.r.choice(sorted(uses)) if uses else (self.p.funcs[-1].name, 0))
        return ("root", None)

    def inlined(self, name):
        kind, _ = self.placement.get(name, ("default", None))
        f = self.funcs.get(name)
        return kind == "inline" or (kind == "default" and (f is None or not f.updates))

    def effective_uses(self, name, seen=None):
        """The (consumer, stage) pairs whose loops enclose the uses of `name`, looking
        through consumers that are inlined into their own consumers."""
        seen = seen or set()
        out = set()
        for cons, si in self.uses.get(name, ()):
            if cons in seen:
                continue
            if self.inlined(cons) and cons in self.uses:
                out |= self.effective_uses(cons, seen | {cons})
            else:
                out.add((cons, si))
        return out

    def has_loops(self, name):
        return not self.inlined(name)

    # ------------------------------------------------------------------ placement emission
    def emit_placement(self, name):
        kind, where = self.placement[name]
        if kind in ("default", "output"):
            return
        if kind == "inline":
            self.emit(f"{name}.compute_inline()")
        elif kind == "root":
            if self.chance(0.1):
                self.emit(f"{name}.compute_at(hl.LoopLevel.root())")
            else:
                self.emit(f"{name}.compute_root()")
            if self.chance(0.15):
                self.emit(f"{name}.store_root()")
        else:
            self.compute_at(name, *where)

    def compute_at(self, name, cons, si):
        st = self.stages[cons][si] if cons in self.stages else None
        names = st.names() if st else []
        usable = [i for i, n in enumerate(names) if n not in st.vectorized] if st else []
        if not usable or self.chance(0.15):
            self.emit(f"{name}.compute_at({cons}, hl.Var.outermost())")
            return
        i = self.r.choice(usable) if not self.chance(INVALID) else self.r.randrange(len(names))
        self.emit(f"{name}.compute_at({self.level(cons, si, names[i], st)})")
        if self.chance(0.35):
            self.store_level(name, cons, si, st, i)

    def level(self, cons, si, v, st):
        """Source of a LoopLevel in stage si of cons.  `cons, v` (stage -1) lets Halide
        find the stage that uses the Func; an explicit stage index is rejected by the
        reference in most cases, so it is rare."""
        if self.chance(INVALID):
            return f"hl.LoopLevel({cons}, {v}, {si})"
        return f"{cons}, {v}" if self.chance(0.8) else f"hl.LoopLevel({cons}, {v})"

    def store_level(self, name, cons, si, st, i):
        """store_at / hoist_storage at or outside compute level i, inside any parallel
        loop that encloses the compute level (storage outside it would be shared)."""
        names = st.names()
        j = i
        while j + 1 < len(names) and names[j] not in st.parallel and self.chance(0.6):
            j += 1
        if self.chance(INVALID):
            j = self.r.randrange(len(names))
        roll = self.r.random()
        if roll < 0.55:
            self.emit(f"{name}.store_at({self.level(cons, si, names[j], st)})")
        elif roll < 0.65:
            self.emit(f"{name}.store_root()")
        elif roll < 0.9:
            self.emit(f"{name}.hoist_storage({self.level(cons, si, names[j], st)})")
        else:
            self.emit(f"{name}.hoist_storage_root()")

    # ------------------------------------------------------------------ loop transformations
    def loops(self, st, n=None):
        for _ in range(n if n is not None else self.r.randint(1, 4)):
            self.loop_directive(st)

    def pick_dim(self, st, rvars=True, inner_bias=False):
        names = st.names(rvars)
        if not names or self.chance(INVALID):
            return self.r.choice(self.p.vars)  # maybe not a loop of this stage
        if inner_bias and self.chance(0.6):
            return names[0]
        return self.r.choice(names)

    def tail(self, st, v):
        if not self.chance(0.4):
            return ""
        table = RVAR_TAILS if st.is_rvar(v) else UPDATE_TAILS if st.update is not None else PURE_TAILS
        return f", hl.TailStrategy.{self.pick(table)}"

    def loop_directive(self, st):
        kind = self.pick([(2, "split"), (1, "tile"), (0.7, "fuse"), (1, "reorder"), (2, "vectorize"),
                          (1, "unroll"), (1.5, "parallel"), (0.4, "serial"), (0.4, "rename")])
        getattr(self, "d_" + kind)(st)

    def rvar_ok(self, st, v):
        """May RVar v's loop be parallel / vectorized (no race between iterations)?"""
        return not st.is_rvar(v) or (st.update is not None and st.update.parallel_ok) or self.chance(INVALID)

    def d_split(self, st):
        v = self.pick_dim(st)
        rv = st.is_rvar(v)
        outer = v if self.chance(0.3) else self.new_var(rv)
        inner = self.new_var(rv)
        self.emit(f"{st.prefix}.split({v}, {outer}, {inner}, {self.r.choice(FACTORS)}{self.tail(st, v)})")
        st.replace(v, [(inner, rv), (outer, rv)])
        st.constant.add(inner)

    def d_tile(self, st):
        names = st.names()
        if len(names) < 2:
            return self.d_split(st)
        a, b = self.r.sample(names, 2)
        ra, rb = st.is_rvar(a), st.is_rvar(b)
        fa, fb = self.r.choice(FACTORS), self.r.choice(FACTORS)
        ai, bi = self.new_var(ra), self.new_var(rb)
        tail = self.tail(st, a)
        if self.chance(0.3):  # tile(x, y, xi, yi, ...): x and y become the outer loops
            self.emit(f"{st.prefix}.tile({a}, {b}, {ai}, {bi}, {fa}, {fb}{tail})")
            ao, bo = a, b
        else:
            ao, bo = self.new_var(ra), self.new_var(rb)
            self.emit(f"{st.prefix}.tile({a}, {b}, {ao}, {bo}, {ai}, {bi}, {fa}, {fb}{tail})")
        st.dims = [d for d in st.dims if d[0] not in (a, b)]
        st.dims = [(ai, ra), (bi, rb)] + st.dims + [(ao, ra), (bo, rb)]
        st.constant |= {ai, bi}

    def d_fuse(self, st):
        names = st.names()
        if len(names) < 2:
            return
        i = self.r.randrange(len(names) - 1)
        inner, outer = names[i], names[i + 1]
        if self.chance(INVALID):
            inner, outer = self.r.sample(names, 2)
        rv = st.is_rvar(inner) or st.is_rvar(outer)
        fused = self.new_var(rv)
        self.emit(f"{st.prefix}.fuse({inner}, {outer}, {fused})")
        st.dims = [d for d in st.dims if d[0] not in (inner, outer)]
        st.dims.insert(min(i, len(st.dims)), (fused, rv))
        if inner in st.constant and outer in st.constant:
            st.constant.add(fused)

    def d_reorder(self, st):
        names = st.names()
        if len(names) < 2:
            return
        chosen = self.r.sample(names, self.r.randint(2, len(names)))
        self.emit(f"{st.prefix}.reorder({', '.join(chosen)})")
        # The chosen loops take the positions they held, in the given order (innermost first).
        slots = [i for i, d in enumerate(st.dims) if d[0] in chosen]
        kinds = dict(st.dims)
        for slot, name in zip(slots, chosen):
            st.dims[slot] = (name, kinds[name])

    def d_vectorize(self, st):
        v = self.pick_dim(st, inner_bias=True)
        if not self.rvar_ok(st, v):
            return
        if v in st.constant and self.chance(0.6) or self.chance(INVALID):
            self.emit(f"{st.prefix}.vectorize({v})")
            st.vectorized.add(v)
        else:
            # Splits v: the vectorized inner loop has no name, the outer one keeps v's.
            self.emit(f"{st.prefix}.vectorize({v}, {self.r.choice([2, 3, 4, 4, 8, 8, 16])}{self.tail(st, v)})")

    def d_unroll(self, st):
        v = self.pick_dim(st, inner_bias=True)
        if v in st.constant and self.chance(0.6) or self.chance(INVALID):
            self.emit(f"{st.prefix}.unroll({v})")
        else:
            self.emit(f"{st.prefix}.unroll({v}, {self.r.choice([2, 3, 4])}{self.tail(st, v)})")

    def d_parallel(self, st):
        v = self.pick_dim(st)
        if not self.rvar_ok(st, v):
            return
        st.parallel.add(v)
        if self.chance(0.3):
            self.emit(f"{st.prefix}.parallel({v}, {self.r.choice([2, 3, 4, 8])}{self.tail(st, v)})")
        else:
            self.emit(f"{st.prefix}.parallel({v})")

    def d_serial(self, st):
        self.emit(f"{st.prefix}.serial({self.pick_dim(st)})")

    def d_rename(self, st):
        v = self.pick_dim(st)
        new = self.new_var(st.is_rvar(v))
        self.emit(f"{st.prefix}.rename({v}, {new})")
        st.dims = [(new if n == v else n, r) for n, r in st.dims]
        for s in (st.vectorized, st.parallel, st.constant):
            if v in s:
                s.discard(v)
                s.add(new)

    # ------------------------------------------------------------------ update stages
    def update_schedule(self, f, st):
        u = st.update
        roll = self.r.random()
        if u.rvars and roll < 0.15 and (u.assoc or self.chance(INVALID)):
            return self.rfactor(f, st)
        if u.rvars and roll < 0.3 and (u.assoc or self.chance(INVALID)):
            v = self.r.choice(u.rvars)
            how = self.r.choice(["parallel", "vectorize"])
            arg = f", {self.r.choice([2, 4, 8])}" if how == "vectorize" or self.chance(0.3) else ""
            self.emit(f"{st.prefix}.atomic().{how}({v}{arg})")
            return
        self.loops(st)

    def rfactor(self, f, st):
        u = st.update
        pairs = [(rv, self.new_var()) for rv in self.r.sample(u.rvars, self.r.randint(1, len(u.rvars)))]
        intm = f"{f.name}_intm{self.n_vars}"
        if len(pairs) == 1 and self.chance(0.5):
            self.emit(f"{intm} = {st.prefix}.rfactor({pairs[0][0]}, {pairs[0][1]})")
        else:
            self.emit(f"{intm} = {st.prefix}.rfactor([{', '.join(f'({a}, {b})' for a, b in pairs)}])")
        roll = self.r.random()
        if roll < 0.4:
            self.emit(f"{intm}.compute_root()")
        elif roll < 0.7:
            names = [n for n in st.names() if n not in u.rvars]
            self.emit(f"{intm}.compute_at({f.name}, {self.r.choice(names or ['hl.Var.outermost()'])})")
        u_var = pairs[0][1]
        if self.chance(0.5):
            self.emit(f"{intm}.vectorize({u_var}{', ' + str(self.r.choice([2, 4, 8])) if self.chance(0.6) else ''})")
        if self.chance(0.3):
            self.emit(f"{intm}.update(0).{self.r.choice(['vectorize', 'parallel', 'unroll'])}({u_var})")

    # ------------------------------------------------------------------ storage
    def storage(self, f):
        p = self.p
        v = self.r.choice(p.vars)
        d = p.vars.index(v)
        roll = self.r.random()
        if roll < 0.25:
            lo = p.out_min[d] if f.is_output else self.r.randint(-4, 2)
            ext = p.out_extent[d] + (self.r.randint(0, 3) if f.is_output or self.chance(0.7) else -1)
            self.emit(f"{f.name}.bound({v}, {lo}, {max(ext, 1)})")
        elif roll < 0.35:
            self.emit(f"{f.name}.bound_extent({v}, {max(1, p.out_extent[d] + self.r.randint(-1, 4))})")
        elif roll < 0.55:
            m = self.r.choice([2, 3, 4, 8])
            rem = f", {self.r.randint(0, m - 1)}" if self.chance(0.4) else ""
            self.emit(f"{f.name}.align_bounds({v}, {m}{rem})")
        elif roll < 0.65:
            self.emit(f"{f.name}.align_extent({v}, {self.r.choice([2, 3, 4, 8])})")
        elif roll < 0.8 and len(p.vars) > 1:
            perm = list(p.vars)
            self.r.shuffle(perm)
            self.emit(f"{f.name}.reorder_storage({', '.join(perm)})")
        elif roll < 0.9:
            fwd = f", {self.r.choice(['True', 'False'])}" if self.chance(0.3) else ""
            self.emit(f"{f.name}.fold_storage({v}, {self.r.choice([2, 3, 4, 8, 16])}{fwd})")
        else:
            self.emit(f"{f.name}.store_in(hl.MemoryType.{self.r.choice(MEMORY_TYPES)})")

    # ------------------------------------------------------------------ extras (seeds >= EXTRAS_FROM_SEED)
    def extras(self):
        """Directives drawn after the rest of the schedule, on the final loop dims
        of each stage, from a second RNG (see EXTRAS_FROM_SEED)."""
        r = random.Random(f"extras-{self.p.seed}")
        chance = lambda q: r.random() < q
        computed = [n for n, (kind, _) in self.placement.items()
                    if kind in ("root", "at") and n in self.funcs]
        for name in sorted(computed):
            kind, _ = self.placement[name]
            if chance(0.2):
                self.emit(f"{name}.async_()")
                if kind == "at" and chance(0.2):
                    # ring_buffer needs storage hoisted out of the store level.
                    self.emit(f"{name}.hoist_storage_root()")
                    self.emit(f"{name}.ring_buffer({r.choice([1, 2, 3])})")
            if kind == "root" and chance(0.1):
                self.emit(f"{name}.memoize()")
        for f in self.p.funcs:
            if not self.has_loops(f.name):
                continue
            for st in self.stages[f.name]:
                names = st.names()
                if not names:
                    continue
                roll = r.random()
                if roll < 0.15:
                    v = r.choice(names)
                    # Not Always: it errs where nothing is partitioned, and
                    # what is partitioned is each implementation's own choice.
                    mode = r.choice(["Never", "Auto"])
                    self.emit(f"{st.prefix}.partition({v}, hl.Partition.{mode})")
                elif roll < 0.2:
                    self.emit(f"{st.prefix}.never_partition_all()")
                elif roll < 0.25:
                    vs = r.sample(names, r.randint(1, min(2, len(names))))
                    self.emit(f"{st.prefix}.never_partition([{', '.join(vs)}])")
            if chance(0.06):
                v = r.choice(self.p.vars)
                self.emit(f"{f.name}.align_storage({v}, {r.choice([2, 4, 8, 16])})")
            if chance(0.04):
                v = r.choice(self.p.vars)
                d = self.p.vars.index(v)
                ext = self.p.out_extent[d] + r.choice([-1, 2, 8, 40])
                self.emit(f"{f.name}.bound_storage({v}, {max(ext, 1)})")
            callees = sorted(c for c in self.funcs if (f.name, 0) in self.uses.get(c, ()))
            if callees and chance(0.06):
                st = self.stages[f.name][0]
                at = r.choice(st.names() or self.p.vars)
                frm = at if chance(0.8) else r.choice(st.names() or self.p.vars)
                self.emit(f"{f.name}.prefetch({r.choice(callees)}, {at}, {frm}, {r.choice([1, 2, 4])})")

    # ------------------------------------------------------------------ wrappers, specialize, compute_with
    def wrapper(self):
        p = self.p
        candidates = [n for n in self.uses if n != p.funcs[-1].name]
        if not candidates:
            return
        name = self.r.choice(sorted(candidates))
        cons = sorted({c for c, _ in self.uses[name]})
        c = self.r.choice(cons)
        w = f"{name}_w{self.n_vars}"
        self.n_vars += 1
        roll = self.r.random()
        if roll < 0.4:
            self.emit(f"{w} = {name}.in_({c})")
        elif roll < 0.6:
            self.emit(f"{w} = {name}.in_()")
        else:
            self.emit(f"{w} = {name}.clone_in({c})")
        if self.has_loops(c) and self.chance(0.6):
            st = self.stages[c][0]
            names = [n for n in st.names() if n not in st.vectorized]
            self.emit(f"{w}.compute_at({c}, {self.r.choice(names) if names else 'hl.Var.outermost()'})")
        else:
            self.emit(f"{w}.compute_root()")
        if self.chance(0.5) and name in self.funcs:  # a BoundaryCondition's Vars are unnamed (_0, _1)
            self.loop_directive(Stage(w, [(v, False) for v in p.vars]))

    def specialize(self):
        p = self.p
        f = self.r.choice([g for g in p.funcs if self.has_loops(g.name)] or p.funcs[-1:])
        conds = [f"{q.code} > {self.r.randint(0, 6)}" for q in p.params if not q.t.is_float]
        conds += [f"{i.name}.width() >= {self.r.randint(1, 12)}" for i in p.inputs if i.image_param]
        if not conds:
            name = f"ps{self.n_vars}"
            self.n_vars += 1
            self.emit(f"{name} = hl.Param(hl.Int(32), '{name}', {self.r.randint(0, 5)})")
            conds = [f"{name} > {self.r.randint(0, 5)}", f"{name} == {self.r.randint(0, 5)}"]
        for k in range(self.r.randint(1, 2)):
            s = f"{f.name}_s{self.n_vars}"
            self.n_vars += 1
            self.emit(f"{s} = {f.name}.specialize({self.r.choice(conds)})")
            self.loop_directive(Stage(s, list(self.stages[f.name][0].dims)))
        if self.chance(0.15):
            self.emit(f"{f.name}.specialize_fail('no specialization applies')")

    def compute_with(self):
        fs = [f for f in self.p.funcs if not f.is_output]
        if not fs:
            return
        a = self.r.choice(fs)
        b = self.r.choice([f for f in self.p.funcs if f is not a])
        st = self.stages[b.name][0]
        self.emit(f"{a.name}.compute_root()")
        if not b.is_output:
            self.emit(f"{b.name}.compute_root()")
        self.emit(f"{a.name}.compute_with({b.name}, {self.r.choice(st.names() or self.p.vars)})")
