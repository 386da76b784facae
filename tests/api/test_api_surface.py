"""Every public name of Halide 21's Python module, and every attribute of
each of its classes, exists in ferrohalide. Differences are listed below
with their reason; a name listed that exists now fails the test too, so the
lists only shrink."""
import enum
import inspect

import pytest

hl_ref = pytest.importorskip("halide")
import ferrohalide as hl  # noqa: E402

# Not part of the API a user calls: pybind11's internals, Halide's private
# helpers and its compiled submodule.
def internal(name):
    return name.startswith("_") or name == "halide_"


# Parts of Halide 21's API that ferrohalide does not implement yet. Each
# exists and raises a HalideError that names it.
NOT_YET: dict = {}


def public_names(obj):
    return {n for n in dir(obj) if not internal(n)}


def attributes(cls):
    """The attributes of a class a user reaches: an enum's `name` and
    `value` live on its members (a Python Enum has them there; pybind11's
    also shows them on the class)."""
    names = public_names(cls)
    if isinstance(cls, enum.EnumMeta):
        names |= set(cls.__members__)  # aliases too
        member = next(iter(cls))
        names |= {n for n in ("name", "value") if hasattr(member, n)}
    return names


def missing_pairs():
    out = set()
    for name in public_names(hl_ref):
        if not hasattr(hl, name):
            out.add((None, name))
            continue
        ref = getattr(hl_ref, name)
        if inspect.isclass(ref):
            mine = getattr(hl, name)
            for attr in attributes(ref) - attributes(mine):
                out.add((name, attr))
        elif inspect.ismodule(ref):
            for attr in public_names(ref) - public_names(getattr(hl, name)):
                out.add((name, attr))
    return out


def test_every_public_name_exists():
    missing = missing_pairs()
    unexpected = sorted(m for m in missing if m not in NOT_YET)
    assert not unexpected, f"missing from ferrohalide: {unexpected}"


def test_the_not_yet_list_is_current():
    missing = missing_pairs()
    done = sorted(k for k in NOT_YET if k not in missing)
    assert not done, f"implemented now, remove from NOT_YET: {done}"


def test_new_names_only_where_documented():
    # Public names Halide lacks are the documented additions.
    extra = sorted(public_names(hl) - public_names(hl_ref))
    # build/install_dir: the wheel's tools; imageio: Halide's submodule,
    # which ferrohalide imports with the package; LoweredStmt: what
    # Func/Pipeline.lowered_stmt() return (Jupyter's HTML view).
    allowed = {"build", "capi", "install_dir", "imageio", "LoweredStmt"}
    unexpected = [n for n in extra if n not in allowed]
    assert not unexpected, unexpected
