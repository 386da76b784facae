"""The C backend against the JIT on a fixed set of the fuzz generator's
pipelines (tests/fuzz/c_backend.py runs any range of seeds)."""
import os
import sys

import pytest

import ferrohalide as hl

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz"))
import c_backend  # noqa: E402

from .test_c_backend import cxx  # noqa: E402


def test_random_pipelines_through_the_c_backend(tmp_path):
    checker = c_backend.Checker(hl, str(tmp_path), cxx())
    for seed in range(0, 40):
        checker.run(seed)
    r = checker.results
    assert not r.get("mismatch") and not r.get("compiler-error") and not r.get("call-failed"), \
        {k: v for k, v in r.items() if k in ("mismatch", "compiler-error", "call-failed")}
    assert len(r.get("ok", [])) >= 15, r
