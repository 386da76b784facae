"""Recorded outcomes of the reference (halide==21.0.0) for a fixed seed set.

Compiling a program with Halide takes most of a fuzzing run's time, and the
reference never changes: for the CI seed set, runner.py can take halide's outcome
from a file instead of recompiling, when it is certainly the same:
  * the seed's program text has the recorded hash (the generator did not change), and
  * the recorded outcome is an error (type and message are recorded), a crash or a
    hang, or it is a result whose digest equals that of ferrohalide's result in the
    same mode -- then the two are bit-identical and ferrohalide's arrays stand in.
Anything else (a result that differs, even by float rounding) runs halide live, so
the verdicts are the same as without the file.

Format: JSON lines {"seed": N, "sha": program sha1, "U": outcome, "S": outcome},
an outcome being ["ok", digest] | ["error", type, message] | ["crash", text] | ["hang", s].
`python runner.py --seeds A:B --record-reference FILE` writes one.
"""

from __future__ import annotations

import hashlib
import json
import os

MESSAGE_LIMIT = 2000


def program_sha(text):
    return hashlib.sha1(text.encode()).hexdigest()


def digest(arrays):
    h = hashlib.sha1()
    for a in arrays:
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes(order="C"))
    return h.hexdigest()


def encode(outcome):
    if outcome[0] == "ok":
        return ["ok", digest(outcome[1])]
    if outcome[0] == "error":
        return ["error", outcome[1], outcome[2][:MESSAGE_LIMIT]]
    return list(outcome)


def load(path):
    """{seed: (sha, {False: encoded U outcome, True: encoded S outcome})}."""
    out = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    e = json.loads(line)
                    out[e["seed"]] = (e["sha"], {False: e["U"], True: e["S"]})
    return out


def save(path, records):
    """records: iterable of (seed, program text, U outcome, S outcome)."""
    with open(path, "w") as f:
        for seed, text, u, s in records:
            f.write(json.dumps({"seed": seed, "sha": program_sha(text), "U": encode(u), "S": encode(s)}) + "\n")


def reuse(recorded, fh_outcome):
    """The reference's outcome from a record, or None when it must run live."""
    kind = recorded[0]
    if kind == "ok":
        if fh_outcome[0] == "ok" and digest(fh_outcome[1]) == recorded[1]:
            return fh_outcome
        return None
    if kind == "error":
        return ("error", recorded[1], recorded[2])
    return tuple(recorded)
