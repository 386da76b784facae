"""The misuse corpus (misuse_cases.py) against the reference and ferrohalide.

For each case: the snippet must raise in both, the same kind of exception, with
every key phrase in both messages; then a correct pipeline run in the same
process must still give the right values (an error leaves nothing broken)."""
import numpy as np
import pytest

from semantics.harness import differential, modules
from semantics.input_helpers import error_key, is_reference
from . import misuse_cases as mc


_GOOD: dict = {}


def good_pipeline(hl):
    """A small correct pipeline, realized after each misuse (compiled once per
    module: realizing it again still runs it through the JIT runtime)."""
    if hl.__name__ not in _GOOD:
        x, y = hl.Var("x"), hl.Var("y")
        f = hl.Func("after_misuse")
        f[x, y] = x * 3 + y
        f.vectorize(x, 4)
        _GOOD[hl.__name__] = f
    return np.array(np.asarray(_GOOD[hl.__name__].realize([8, 3])), copy=True)


def misuse_key(hl, case):
    """(kind, missing phrases) of the case's exception.  A message that says
    "Internal error" is a bug even when the kind matches."""
    def run():
        try:
            mc.run(hl, case.code)
        except Exception as exc:  # noqa: BLE001
            assert "Internal error" not in str(exc), str(exc)
            raise
    key = error_key(hl, run, *case.phrases)
    if is_reference(hl) and key[0] == "no error":
        raise AssertionError("the reference accepts case %s" % case.name)
    return key


def test_corpus_size():
    assert len(mc.CASES) + len(mc.IMPL_ONLY) >= 200


@differential()
@pytest.mark.parametrize("name", sorted(mc.CASES))
def test_misuse(hl, name):
    return misuse_key(hl, mc.CASES[name]), good_pipeline(hl)


@pytest.mark.parametrize("name", sorted(mc.IMPL_ONLY))
def test_misuse_where_halide_misbehaves(name):
    """Halide 21 aborts, hangs or computes garbage here: ferrohalide must raise
    (HalideError unless the case says otherwise) with the key phrases."""
    _, hl = modules()
    case = mc.IMPL_ONLY[name]
    kind, missing = misuse_key(hl, case)
    assert (kind, missing) == (case.kind, []), (kind, missing)
    assert (good_pipeline(hl) == np.arange(8)[None, :] * 3 + np.arange(3)[:, None]).all()


@differential()
@pytest.mark.parametrize("name", sorted(mc.ACCEPTED))
def test_accepted(hl, name):
    ns = mc.namespace(hl)
    exec(compile(mc.ACCEPTED[name].code, "<accepted case>", "exec"), ns)  # noqa: S102
    return np.array(np.asarray(ns["result"]), copy=True)
