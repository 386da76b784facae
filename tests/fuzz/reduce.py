"""Shrink a failing generated program to a small one that fails the same way.

    python tests/fuzz/reduce.py REPRO.py [--out SMALL.py] [--timeout 60]

REPRO.py is a program of gen.py (or a repro written by runner.py).  Its failure is
first classified (verdict.py) and summarized as a signature: the class, which runs
it involves (U/S) and, for errors, the start of the message.  Then, greedily and
until nothing changes, the reducer tries
  * deleting statements of pipeline() (definitions, updates, schedule directives;
    halves, quarters, ... of a block first, then one at a time),
  * replacing an expression by one of its operands, or by 0 / 1 / 0.5,
  * shrinking the output size and the input shapes,
and keeps each change after which the program still has the same signature.
Only the runs the signature needs are made, in long-lived workers (runner.Worker).
The result is printed (or written to --out) with what each side computed.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import runner  # noqa: E402
import verdict  # noqa: E402


class Runs:
    """Outcomes of a program text per (module, sched), computed on demand.  With
    fresh, every run gets a new process: outcomes can depend on what ran before in
    a process (both implementations number their internal names globally)."""

    def __init__(self, workers, timeout, fresh=False):
        self.workers, self.timeout, self.fresh = workers, timeout, fresh
        self.calls = 0

    def __call__(self, text, module, sched):
        self.calls += 1
        if self.fresh:
            self.workers[module].stop()
        return self.workers[module].run(text, sched, self.timeout)


def signature(runs, text):
    """(class, mode, message key) of a program's failure, from its four runs."""
    o = {(m, s): runs(text, m, s) for m in runner.MODULES for s in (False, True)}
    cls, detail = verdict.classify(o[("ferrohalide", False)], o[("ferrohalide", True)],
                                   o[("halide", False)], o[("halide", True)])
    side, mode = detail.split()[:2]
    sched = mode.rstrip(":") == "S"
    erring = o[(("halide" if cls == "accepts" else "ferrohalide"), sched)]
    return cls, sched, message_key(erring)


def message_key(outcome):
    """The start of an error message without names and numbers (buffer
    names like `b17185` count as numbers: they change with every run)."""
    if outcome[0] != "error":
        return None
    msg = re.sub(r"[\w.]*\$\d+[\w.$]*|\d+", "#", outcome[2])
    return " ".join(msg.split())[:70]


def still_fails(runs, text, target):
    """Does the program fail as the target signature says?  The cheapest runs first."""
    cls, sched, key = target
    if cls == "wrong":
        if sched:  # fh S differs from fh U
            a, b = runs(text, "ferrohalide", False), runs(text, "ferrohalide", True)
        else:      # fh U differs from halide U
            a, b = runs(text, "ferrohalide", False), None
            b = runs(text, "halide", False) if a[0] == "ok" else None
        return a[0] == "ok" and b is not None and b[0] == "ok" and verdict.compare(a[1], b[1]) is not None
    if cls in ("crash", "hang"):
        o = runs(text, "ferrohalide", sched)
        return o[0] == cls or (cls == "crash" and verdict.is_panic(o))
    if cls == "accepts":
        ref = runs(text, "halide", sched)
        return message_key(ref) == key and runs(text, "ferrohalide", sched)[0] == "ok"
    fh = runs(text, "ferrohalide", sched)  # raises, not-implemented, internal
    if message_key(fh) != key:
        return False
    ref = runs(text, "halide", sched)
    return ref[0] == ("error" if cls == "internal" else "ok")


# ---------------------------------------------------------------------- candidates
def pipeline_def(tree):
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pipeline")


def statement_lists(fn):
    """The statement lists one can delete from: pipeline's body and the `if SCHED:` block."""
    lists = [fn.body]
    for st in fn.body:
        if isinstance(st, ast.If):
            lists.append(st.body)
    return lists


def deletions(text):
    """Programs with statements of pipeline() removed: runs of halves, quarters, ...
    of a statement list first (most schedules are irrelevant to a failure, and
    one run per chunk beats one per statement), then single statements, last first."""
    tree = ast.parse(text)
    lists = statement_lists(pipeline_def(tree))
    for li, stmts in enumerate(lists):
        size = len(stmts) // 2
        while size >= 2:
            for start in range(0, len(stmts), size):
                cand = deleted(text, li, range(start, min(start + size, len(stmts))))
                if cand:
                    yield cand
            size //= 2
    for li, stmts in enumerate(lists):
        for i in reversed(range(len(stmts))):
            cand = deleted(text, li, [i])
            if cand:
                yield cand


def deleted(text, li, indices):
    """The program without statements `indices` of statement list li, or None when
    one of them must stay: the first (the Vars), the realize (an output Buffer left
    unwritten would "differ" by garbage) and the return."""
    tree = ast.parse(text)
    lst = statement_lists(pipeline_def(tree))[li]
    for i in indices:
        st = lst[i]
        if isinstance(st, ast.Return) or (li == 0 and i == 0) or ".realize(" in ast.unparse(st):
            return None
    for i in sorted(indices, reverse=True):
        del lst[i]
    if not lst:
        lst.append(ast.Pass())
    return ast.unparse(tree)


def expression_sites(tree):
    """Every expression node in pipeline()'s statements, outermost first."""
    fn = pipeline_def(tree)
    out = []
    for st in ast.walk(fn):
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr)) and ".realize(" not in ast.unparse(st):
            value = st.value
            for node in ast.walk(value):
                if isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript, ast.Tuple)):
                    out.append(node)
    return out


# Calls whose operand must not replace them: the generator clamps values into the
# range where a later cast or operation is defined; dropping the clamp could make a
# candidate "fail" through undefined behaviour instead of the bug.
GUARDS = {"clamp", "saturating_cast", "u8_sat", "u16_sat", "u32_sat", "u64_sat", "i8_sat", "i16_sat", "i32_sat",
          "i64_sat", "abs"}


def children(node):
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in GUARDS:
            return []
        return [a for a in node.args if not isinstance(a, (ast.Starred,))]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left] + node.comparators
    return []


# Casts whose operand keeps its type under reduction: a float operand in place of an
# integer one (say) makes hl.cast(hl.Bool(), ...) or hl.u16(...) undefined.
CASTS = {"cast", "reinterpret"} | {f"{k}{b}" for k in "iuf" for b in (8, 16, 32, 64)}


def is_cast_operand(tree, node):
    for parent in ast.walk(tree):
        if isinstance(parent, ast.Call) and any(a is node for a in parent.args):
            return isinstance(parent.func, ast.Attribute) and parent.func.attr in CASTS
    return False


def replacements(text):
    """Programs with one expression replaced by an operand or a small constant."""
    tree = ast.parse(text)
    n_sites = len(expression_sites(tree))
    for k in range(n_sites):
        tree = ast.parse(text)
        node = expression_sites(tree)[k]
        options = [] if is_cast_operand(tree, node) else [ast.unparse(c) for c in children(node)]
        if not isinstance(node, (ast.Subscript, ast.Tuple)):
            options += ["0", "1", "0.5"]
        for opt in options:
            tree2 = ast.parse(text)
            target = expression_sites(tree2)[k]
            new = ast.parse(opt, mode="eval").body
            if not replace_node(tree2, target, new):
                continue
            yield ast.unparse(tree2)


def replace_node(tree, old, new):
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return True
            if isinstance(value, list) and any(v is old for v in value):
                setattr(parent, field, [new if v is old else v for v in value])
                return True
    return False


def size_shrinks(text):
    """Smaller output extents and input shapes."""
    for m in re.finditer(r"(\.realize\(\[|hl\.Buffer\(hl\.\w+\(\d*\), \[|_data\(\()([\d, ]+)(\]|\),|,\))", text):
        dims = [int(d) for d in m.group(2).replace(" ", "").split(",") if d]
        for i, d in enumerate(dims):
            for smaller in sorted({1, d // 2, d - 1}):
                if 1 <= smaller < d:
                    new = dims[:i] + [smaller] + dims[i + 1:]
                    body = ", ".join(map(str, new)) + ("," if len(new) == 1 and m.group(1) == "_data((" else "")
                    yield text[:m.start(2)] + body + text[m.end(2):]


def reduce_program(text, runs, target, log=print, on_keep=None):
    changed = True
    while changed:
        changed = False
        for gen in (deletions, size_shrinks, replacements):
            for cand in gen(text):
                if len(cand) >= len(text) and gen is not size_shrinks:
                    continue
                if still_fails(runs, cand, target):
                    text, changed = cand, True
                    log(f"  kept ({len(text)} chars, {runs.calls} runs)")
                    if on_keep:
                        on_keep(text)
                    break
            if changed:
                break
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program")
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--fresh", action="store_true", help="a new process for every run (slower, history-free)")
    args = ap.parse_args(argv)
    text = open(args.program).read().split("\n# class:")[0]
    text = ast.unparse(ast.parse(text))
    log_dir = tempfile.mkdtemp(prefix="fuzz-reduce-")
    workers = {m: runner.Worker(m, log_dir, restart_every=400) for m in runner.MODULES}
    runs = Runs(workers, args.timeout, args.fresh)
    try:
        target = signature(runs, text)
        print(f"signature: {target}", file=sys.stderr)
        if target[0] in ("ok", "both-error", "halide-bug", "ref-crash"):
            sys.exit("nothing to reduce: the program does not fail")
        # The best program so far goes to --out as it shrinks (a long reduction can be stopped).
        small = reduce_program(text, runs, target, log=lambda s: print(s, file=sys.stderr),
                               on_keep=lambda t: args.out and open(args.out, "w").write(t))
        notes = []
        for m in runner.MODULES:
            for s in (False, True):
                notes.append(f"# {m} {'scheduled' if s else 'unscheduled'}: "
                             f"{verdict.describe(runs(small, m, s), 1000)}")
    finally:
        for w in workers.values():
            w.stop()
    mode = "scheduled" if target[1] else "unscheduled"
    out = small.rstrip() + "\n\n" + f"# reduced; {target[0]} ({mode}){': ' + target[2] if target[2] else ''}\n" \
        + "\n".join(notes) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(out)
    else:
        sys.stdout.write(out)


if __name__ == "__main__":
    main()
