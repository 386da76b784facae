"""Helpers shared by the issue-5 suites (params, boundary conditions, callables,
targets, misc language, bad input).

``error_key(hl, fn, *phrases)`` runs ``fn()``, which must raise, and reduces the
exception to data the harness can compare across modules:

    ("HalideError", [])                 # kind, phrases missing from the message

The kind follows the harness rule (``hl.HalideError`` or the builtin class).  The
list of missing phrases must be empty for the reference: if one of the phrases is
not in the reference's message the body raises AssertionError, and the harness
reports "test is wrong: the reference raised ...".  An implementation whose message
lacks a phrase returns a non-empty list and the comparison fails, naming it.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from .harness import REF_MODULE, _exc_kind


def is_reference(hl) -> bool:
    return hl.__name__.split(".")[0] == REF_MODULE


def error_key(hl, fn, *phrases):
    """(kind, missing phrases) of the exception fn() raises; ("no error", value)
    if it returns."""
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - everything is compared
        msg = str(exc)
        missing = [p for p in phrases if p not in msg]
        if is_reference(hl) and missing:
            raise AssertionError("reference message %r lacks %r" % (msg, missing))
        return (_exc_kind(hl, exc), missing)
    return ("no error", repr(type(value)))


def arr(buf):
    """Owned NumPy copy of a Buffer / array-like."""
    return np.array(np.asarray(buf), copy=True)


def run_script(hl, script: str, env: dict | None = None, timeout: int = 120):
    """Run ``script`` in a fresh interpreter with ``hl`` importable as sys.argv[1];
    returns (returncode, stdout, stderr)."""
    full_env = dict(os.environ)
    for k in ("HL_JIT_TARGET", "HL_TARGET"):
        full_env.pop(k, None)
    full_env.update(env or {})
    mod = hl.__name__.split(".")[0]
    p = subprocess.run([sys.executable, "-c", script, mod], capture_output=True,
                       text=True, timeout=timeout, env=full_env)
    return p.returncode, p.stdout, p.stderr


def exception_kind(hl, exc):
    """"HalideError" for the module's own error type, else the class name."""
    if isinstance(exc, hl.HalideError):
        return "HalideError"
    return type(exc).__name__


def phase(hl, steps):
    """Run the (name, thunk) steps in order.  Returns ("ok", value of the last
    step) or (name of the step that raised, exception kind)."""
    value = None
    for name, step in steps:
        try:
            value = step()
        except Exception as exc:  # noqa: BLE001 - the phase is the result
            return (name, exception_kind(hl, exc))
    return ("ok", value)
