"""Comparing the four runs of a program and classifying the seed.

A program runs four ways: ferrohalide and halide, each scheduled (S) and
unscheduled (U).  A run's outcome is one of
    ("ok", [arrays]) | ("ok", [arrays], [regions]) | ("error", type, message) | ("crash", description)
    | ("hang", seconds)
(regions: each output's [min, extent] per dimension, for two-output programs, where
Halide's grown output regions depend on the schedule: compared only within a mode)

Results are compared element-wise: integers and bools bit-exact; floats with NaN
(and infinity) positions equal and every other element within FLOAT_TOL relative
(absolute below magnitude 1).  The generator keeps values whose exact bits depend
on the implementation (transcendentals are a few ULP apart between libms and
Halide's own polynomials, e.g. its pow is ~40 ULP off) away from anything that
would amplify the difference into an integer (see fuzz_types), so that
tolerance only has to absorb rounding, not discontinuities.

Classes (the first that applies):
    crash            a ferrohalide run killed its process, or raised a Rust panic
    hang             a ferrohalide run did not finish within the timeout
    not-implemented  ferrohalide raised "... is not implemented" where halide ran
    raises           ferrohalide raised, halide ran
    accepts          halide rejected the program (or schedule), ferrohalide ran it
    outputs-grown    halide S refused an output too small for where its loops run
                     ("Output buffer ... is accessed at"); ferrohalide grows the
                     outputs until the run fits (D4 in TRIAGE.md), and fh S == fh U:
                     not a failure
    wrong            fh S differs from fh U, or fh U differs from halide U, or two
                     runs of fh S (with async_()) differ (worker.py ASYNC_RUNS)
    internal         both raised, ferrohalide with an internal error
    halide-bug       fh U == fh S, but halide's result differs; or the seed is
                     listed in known_halide_bugs.txt (the reference is wrong there)
                     and would be wrong (U), raises or accepts
    ref-crash        halide crashed or hung, ferrohalide agrees with itself
    both-error       both raised (detail says whether the messages look alike)
    region-difference  every output's requested window agrees, but the region an
                     output grew to (another output reads it) differs from halide's
                     in the same mode: each side's bounds analysis decides how far
                     (a listed difference, D3 in TRIAGE.md), not a failure
    ok               all four agree
"""

from __future__ import annotations

import re

import numpy as np

FLOAT_TOL = 1e-4
FAILING = ("crash", "hang", "not-implemented", "raises", "accepts", "wrong", "internal")
NOT_IMPLEMENTED = "is not implemented in ferrohalide"


def compare(a, b):
    """None when the two result lists agree, else a short description of the first difference."""
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for k, (x, y) in enumerate(zip(a, b)):
        why = compare_array(x, y)
        if why:
            return f"output {k}: {why}"
    return None


def compare_array(x, y):
    if x.shape != y.shape:
        return f"shape {x.shape} vs {y.shape}"
    if x.dtype != y.dtype:
        return f"dtype {x.dtype} vs {y.dtype}"
    if x.dtype.kind != "f":
        bad = np.argwhere(x != y)
        if len(bad):
            i = tuple(bad[0])
            return f"{len(bad)} of {x.size} elements differ, first at {i}: {x[i]} vs {y[i]}"
        return None
    nx, ny = np.isnan(x), np.isnan(y)
    if (nx != ny).any():
        return f"NaN positions differ ({int(nx.sum())} vs {int(ny.sum())} NaNs)"
    with np.errstate(invalid="ignore", over="ignore"):
        xf, yf = x.astype(np.float64), y.astype(np.float64)
        scale = np.maximum(1.0, np.maximum(np.abs(xf), np.abs(yf)))
        close = (xf == yf) | (np.abs(xf - yf) <= FLOAT_TOL * scale) | nx
    if not close.all():
        bad = np.argwhere(~close)
        i = tuple(bad[0])
        return f"{len(bad)} of {x.size} elements differ, first at {i}: {x[i]!r} vs {y[i]!r}"
    return None


def compare_regions(a, b):
    """The outputs' regions (min, extent per dimension) of two ok outcomes, which
    a schedule may change (gen.py realize_lines): compared only within one mode."""
    ra, rb = (o[2] if len(o) > 2 else [] for o in (a, b))
    why = compare(ra, rb)
    return f"regions: {why}" if why else None


def is_error(o):
    return o[0] == "error"


def is_panic(o):
    return o[0] == "error" and o[1] == "PanicException"


def is_internal(o):
    return o[0] == "error" and "Internal error" in o[2]


def message_words(msg):
    """Words of an error message with names and numbers removed, for loose matching."""
    msg = re.sub(r"[\w.$]*\$\d+|\b\d+\b|0x[0-9a-f]+", " ", msg.lower())
    return {w for w in re.findall(r"[a-z_]{3,}", msg)} - {"error", "the", "and", "for", "func", "with"}


def messages_alike(m1, m2):
    a, b = message_words(m1), message_words(m2)
    if not a or not b:
        return False
    return len(a & b) / min(len(a), len(b)) >= 0.3


def classify(fh_u, fh_s, hl_u, hl_s, known_ref_bug=False):
    """(class, detail) of one seed from its four outcomes."""
    for mode, o in (("U", fh_u), ("S", fh_s)):
        if o[0] == "crash" or is_panic(o):
            return "crash", f"fh {mode}: {describe(o)}"
    if fh_s[0] == "nondeterministic":
        return "wrong", f"fh S: {describe(fh_s)}"
    for mode, o in (("U", fh_u), ("S", fh_s)):
        if o[0] == "hang":
            return "hang", f"fh {mode}: {describe(o)}"
    # ferrohalide disagreeing with itself is its bug, whatever the reference
    # does (a reference error in S must not hide it: seed 1623).
    if fh_u[0] == "ok" and fh_s[0] == "ok":
        diff = compare(fh_s[1], fh_u[1])
        if diff:
            same_as_ref = hl_s[0] == "ok" and compare(fh_s[1], hl_s[1]) is None
            return "wrong", f"fh S vs fh U: {diff}" + ("  (halide S agrees with fh S)" if same_as_ref else "")
    region_note = None
    # Unscheduled: the algorithm itself.
    verdict = excused(pair_verdict("U", fh_u, hl_u), known_ref_bug)
    if verdict:
        return verdict
    if fh_u[0] == "ok" and hl_u[0] == "ok":
        diff = compare(fh_u[1], hl_u[1])
        if diff:
            if known_ref_bug:
                return "halide-bug", f"known reference bug; U: {diff}"
            return "wrong", f"fh U vs halide U: {diff}"
        region_diff = compare_regions(fh_u, hl_u)
        if region_diff:
            region_note = ("region-difference", f"fh U vs halide U: {region_diff}")
    elif fh_u[0] == "error":
        return both_error(fh_u, hl_u, "U")
    # Scheduled.
    verdict = excused(pair_verdict("S", fh_s, hl_s), known_ref_bug)
    if verdict:
        return verdict
    if fh_s[0] == "error":
        return both_error(fh_s, hl_s, "S")
    diff = compare_regions(fh_s, hl_s) if hl_s[0] == "ok" else None
    if diff and not region_note:
        region_note = ("region-difference", f"fh S vs halide S: {diff}")
    if hl_s[0] == "ok" and hl_u[0] == "ok":
        diff = compare(hl_s[1], hl_u[1])
        if diff:
            return "halide-bug", f"halide S vs halide U: {diff}"
    if hl_s[0] in ("crash", "hang"):
        return "ref-crash", f"halide S: {describe(hl_s)}"
    if hl_u[0] in ("crash", "hang"):
        return "ref-crash", f"halide U: {describe(hl_u)}"
    return region_note or ("ok", "")


OUTPUT_TOO_SMALL = re.compile(r"Output buffer \S+ is accessed at -?\d+, which is (before the min|beyond the max)")


def pair_verdict(mode, fh, ref):
    """The verdict when exactly one side of a mode raised, else None."""
    if mode == "S" and fh[0] == "ok" and ref[0] == "error" and OUTPUT_TOO_SMALL.search(ref[2]):
        # Halide sizes outputs by one bounds query; a scheduled run that then
        # reaches further fails there. fh S == fh U was checked already.
        return "outputs-grown", f"halide {mode}: {describe(ref)}"
    if fh[0] == "error" and ref[0] == "ok":
        if NOT_IMPLEMENTED in fh[2]:
            return "not-implemented", f"fh {mode}: {describe(fh)}"
        return "raises", f"fh {mode}: {describe(fh)}"
    if fh[0] == "ok" and ref[0] == "error":
        return "accepts", f"halide {mode}: {describe(ref)}"
    if fh[0] == "error" and ref[0] in ("crash", "hang"):
        if NOT_IMPLEMENTED in fh[2]:
            return "not-implemented", f"fh {mode}: {describe(fh)}"
        return "ref-crash", f"halide {mode}: {describe(ref)}; fh: {describe(fh)}"
    return None


def excused(verdict, known_ref_bug):
    """A seed listed in known_halide_bugs.txt: ferrohalide raising where halide
    computes garbage (or running what halide wrongly rejects) is the reference's bug."""
    if verdict and known_ref_bug and verdict[0] in ("raises", "accepts"):
        return "halide-bug", f"known reference bug; {verdict[0]}: {verdict[1]}"
    return verdict


def both_error(fh, ref, mode):
    if is_internal(fh):
        return "internal", f"fh {mode}: {describe(fh)}; halide: {describe(ref)}"
    if NOT_IMPLEMENTED in fh[2]:
        return "not-implemented", f"fh {mode}: {describe(fh)} (halide raised too: {describe(ref)})"
    alike = "alike" if messages_alike(fh[2], ref[2]) else "messages differ"
    return "both-error", f"{mode} {alike}: fh: {describe(fh)} | halide: {describe(ref)}"


def describe(o, limit=300):
    """One line describing an outcome."""
    if o[0] == "ok":
        regions = f" (regions {[r.tolist() for r in o[2]]})" if len(o) > 2 else ""
        return "; ".join(f"{a.dtype}{list(a.shape)} {summarize(a)}" for a in o[1]) + regions
    if o[0] == "error":
        msg = " ".join(o[2].split())
        return f"{o[1]}: {msg[:limit]}"
    if o[0] == "crash":
        return f"DIED {o[1]}"
    if o[0] == "nondeterministic":
        return f"NONDETERMINISTIC: {o[1]}"
    return f"TIMEOUT after {o[1]} s"


def summarize(a):
    with np.printoptions(threshold=20, edgeitems=3, linewidth=10 ** 6):
        return " ".join(repr(a).split())
