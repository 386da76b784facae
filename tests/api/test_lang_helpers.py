"""Helpers for the differential language tests (tests/api/test_lang_*.py).

`both(code)` evaluates one Python expression (after optional setup code) with
ferrohalide and with the reference (halide==21.0.0) bound to `hl`, and returns
the two outcomes: ("ok", repr-of-result) or ("raise", class-name, message).
"""
import re
import warnings

import pytest

import ferrohalide

SETUP = """
x, y, z = hl.Var('x'), hl.Var('y'), hl.Var('z')
u8 = hl.cast(hl.UInt(8), x)
i8 = hl.cast(hl.Int(8), x)
i16 = hl.cast(hl.Int(16), x)
u32 = hl.cast(hl.UInt(32), x)
f = hl.cast(hl.Float(32), x)
d = hl.cast(hl.Float(64), x)
b = x > 3
"""


def ref_module():
    return pytest.importorskip("halide")


def _normalize(s):
    s = re.sub(r" at 0x[0-9a-f]+", "", s)
    return s.replace("halide.halide_.", "").replace("ferrohalide.", "")


def outcome(hl, code, setup=SETUP, mode="eval"):
    env = {"hl": hl}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(setup, env)
        try:
            if mode == "eval":
                return ("ok", _normalize(repr(eval(code, env))))
            exec(code, env)
            return ("ok", None)
        except Exception as e:  # noqa: BLE001 - we compare the exception
            return ("raise", type(e).__name__, str(e))


def both(code, setup=SETUP, mode="eval"):
    return outcome(ferrohalide, code, setup, mode), outcome(ref_module(), code, setup, mode)


def assert_same(code, setup=SETUP, mode="eval", message=True):
    """Same result repr, or same exception class (and HalideError message)."""
    ours, ref = both(code, setup, mode)
    if ref[0] == "raise" and ours[0] == "raise":
        assert ours[1] == ref[1], f"{code}: ours {ours!r}, reference {ref!r}"
        if message and ref[1] == "HalideError":
            assert ours[2] == ref[2], f"{code}: ours {ours!r}, reference {ref!r}"
        return
    assert ours == ref, f"{code}: ours {ours!r}, reference {ref!r}"
