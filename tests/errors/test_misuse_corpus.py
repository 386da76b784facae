"""The misuse corpus (misuse_cases.py) against the reference and ferrohalide.

For each case: the snippet must raise in both, the same kind of exception, with
every key phrase in both messages; then a correct pipeline run in the same
process must still give the right values (an error leaves nothing broken)."""
import numpy as np
import pytest

from ..semantics.harness import differential, modules, _exc_kind
from ..semantics.input_helpers import error_key, is_reference
from . import misuse_cases as mc


def good_pipeline(hl):
    """A small correct pipeline, realized after each misuse."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("after_misuse")
    f[x, y] = x * 3 + y
    f.vectorize(x, 4)
    return np.array(np.asarray(f.realize([8, 3])), copy=True)


def misuse_key(hl, case):
    key = error_key(hl, lambda: mc.run(hl, case.code), *case.phrases)
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
    kind, missing = error_key(hl, lambda: mc.run(hl, case.code), *case.phrases)
    assert (kind, missing) == (case.kind, []), (kind, missing)
    assert (good_pipeline(hl) == np.arange(8)[None, :] * 3 + np.arange(3)[:, None]).all()


@differential()
@pytest.mark.parametrize("name", sorted(mc.ACCEPTED))
def test_accepted(hl, name):
    ns = mc.namespace(hl)
    exec(compile(mc.ACCEPTED[name].code, "<accepted case>", "exec"), ns)  # noqa: S102
    return np.array(np.asarray(ns["result"]), copy=True)


def test_exception_kinds_are_python_exceptions():
    """Every case of the corpus raises an Exception subclass in ferrohalide (never
    a pyo3 PanicException, which is a BaseException)."""
    _, hl = modules()
    for case in list(mc.CASES.values()) + list(mc.IMPL_ONLY.values()):
        try:
            mc.run(hl, case.code)
        except Exception as exc:  # noqa: BLE001
            assert "Internal error" not in str(exc), (case.name, str(exc))
            assert _exc_kind(hl, exc) != "PanicException", case.name
        except BaseException as exc:  # noqa: BLE001
            pytest.fail("%s raised %s: %s" % (case.name, type(exc).__name__, exc))
