"""Recorded outcomes of the reference (halide==21.0.0) for a fixed seed set.

Compiling a program with Halide takes most of a fuzzing run's time, and the
reference never changes: for the CI seed set, runner.py can take halide's outcome
from a file instead of recompiling, when it is certainly the same:
  * the file was made with the current GEN_VERSION and the seed's program text has
    the recorded hash (the generator did not change), and
  * the recorded outcome is an error (type and message are recorded), a crash or a
    hang, or it is a result whose digest equals that of ferrohalide's result in the
    same mode -- then the two are bit-identical and ferrohalide's arrays stand in.
Anything else (a result that differs, even by float rounding) runs halide live, so
the verdicts are the same as without the file.

Format: a first line {"generator_version": N, "reference": "halide==X"}, then JSON
lines {"seed": N, "sha": program sha1, "U": outcome, "S": outcome}, an outcome being
["ok", digest] | ["error", type, message] | ["crash", text] | ["hang", s].

    python tests/fuzz/runner.py --seeds 0:300 --record-reference tests/fuzz/ci_reference.jsonl
    python tests/fuzz/runner.py --seeds 0:300 --verify-reference tests/fuzz/ci_reference.jsonl

write the file (halide only, live) and check it (reruns halide and compares each
outcome's kind, digest or error type and message, names and numbers aside).
"""

from __future__ import annotations

import hashlib
import json
import os
import re

MESSAGE_LIMIT = 2000


def program_sha(text):
    return hashlib.sha1(text.encode()).hexdigest()


def digest(arrays):
    h = hashlib.sha1()
    for a in arrays:
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes(order="C"))
    return h.hexdigest()


def result_arrays(outcome):
    """An ok outcome's arrays: the values, then the outputs' regions if any."""
    return list(outcome[1]) + list(outcome[2] if len(outcome) > 2 else [])


def encode(outcome):
    if outcome[0] == "ok":
        return ["ok", digest(result_arrays(outcome))]
    if outcome[0] == "error":
        return ["error", outcome[1], outcome[2][:MESSAGE_LIMIT]]
    return list(outcome)


def load(path, version=None):
    """{seed: (sha, {False: encoded U outcome, True: encoded S outcome})}; empty when
    the file is missing or was made for another generator version than `version`."""
    out = {}
    if not (path and os.path.exists(path)):
        return out
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    if version is not None and file_version(path) != version:
        return out
    for line in lines[1:]:
        e = json.loads(line)
        out[e["seed"]] = (e["sha"], {False: e["U"], True: e["S"]})
    return out


def file_version(path):
    """The generator version the file was recorded with (None: no such file)."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.loads(f.readline()).get("generator_version")


def save(path, version, reference, records):
    """records: iterable of (seed, program text, U outcome, S outcome)."""
    with open(path, "w") as f:
        f.write(json.dumps({"generator_version": version, "reference": reference}) + "\n")
        for seed, text, u, s in records:
            f.write(json.dumps({"seed": seed, "sha": program_sha(text), "U": encode(u), "S": encode(s)}) + "\n")


def reuse(recorded, fh_outcome):
    """The reference's outcome from a record, or None when it must run live."""
    kind = recorded[0]
    if kind == "ok":
        if fh_outcome[0] == "ok" and digest(result_arrays(fh_outcome)) == recorded[1]:
            return fh_outcome
        return None
    if kind == "error":
        return ("error", recorded[1], recorded[2])
    return tuple(recorded)


def same(recorded, outcome):
    """Does a live outcome match a record?  Error messages are compared without the
    numbers in internal names (f0$12), which depend on what ran before in a process;
    a crash needs the same signal, a hang only to be a hang again."""
    new = encode(outcome)
    if new[0] != recorded[0]:
        return False
    if new[0] == "error":
        return new[1] == recorded[1] and without_numbers(new[2]) == without_numbers(recorded[2])
    if new[0] == "crash":
        return new[1].split(":")[0] == recorded[1].split(":")[0]
    return new[0] == "hang" or new == recorded


def without_numbers(msg):
    return re.sub(r"\$\d+|\b\d+\b", "#", msg)
