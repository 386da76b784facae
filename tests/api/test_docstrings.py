"""Every public name of the module, and every public method and property of
its classes, has a docstring that says what it does (`help()` is useful for
all of them), and the functions and methods help() can describe have a
signature it shows."""
import enum
import inspect

import ferrohalide as hl


def public_items():
    for name in sorted(dir(hl)):
        if name.startswith("_"):
            continue
        obj = getattr(hl, name)
        if inspect.ismodule(obj):
            continue
        yield name, obj
        if inspect.isclass(obj) and not isinstance(obj, enum.EnumMeta):
            for attr in sorted(vars(obj)):
                if attr.startswith("_"):
                    continue
                member = vars(obj)[attr]
                if isinstance(member, obj):  # enum-like constants (pyo3 class attributes)
                    continue
                yield f"{name}.{attr}", member


def doc_of(obj):
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return (getattr(obj, "__doc__", None) or "").strip()


def documentable(obj):
    """Classes, functions, methods and properties (module-level constants
    are instances, documented by their class)."""
    return (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.isdatadescriptor(obj)
            or isinstance(obj, (staticmethod, classmethod)))


def test_every_public_name_has_a_docstring():
    missing = [name for name, obj in public_items() if documentable(obj) and not doc_of(obj)]
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def test_help_works_for_every_name():
    import pydoc

    for name, obj in public_items():
        text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        assert text.strip(), name
