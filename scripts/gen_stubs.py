"""Write python/ferrohalide/_core.pyi, the type stub of the compiled module,
from the module itself: every public function, class, method, property and
constant, with the signatures PyO3 records (`__text_signature__`).

    python scripts/gen_stubs.py [--check]

`--check` compares instead of writing, and fails when the stub is stale (CI
runs it, then `mypy.stubtest`). Parameters are typed `Any`; returns are
`Any` except where the API always returns one class (the arithmetic and
comparison operators of expression-like classes return `Expr`, the type
constructors `Type`, a class's own constructor that class, and a method
whose docstring says it "Returns this <Class>" that class: the scheduling
methods of Func and Stage, so that chained schedules type-check).
"""
import enum
import inspect
import keyword
import os
import re
import sys

import ferrohalide._core as core

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "ferrohalide", "_core.pyi")

# Operators that build an Expr whatever their operands.
EXPR_OPERATORS = {
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__neg__", "__invert__",
    "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__and__", "__rand__", "__or__", "__ror__",
    "__xor__", "__rxor__", "__lt__", "__le__", "__gt__", "__ge__",
}
TYPE_CONSTRUCTORS = {"Int", "UInt", "Float", "BFloat", "Bool", "Handle"}
# Dunders the stub declares (others come from `object`).
DUNDERS = EXPR_OPERATORS | {
    "__eq__", "__ne__", "__getitem__", "__setitem__", "__delitem__", "__call__", "__len__", "__iter__",
    "__bool__", "__int__", "__float__", "__index__", "__hash__", "__iadd__", "__isub__", "__imul__",
    "__itruediv__", "__enter__", "__exit__", "__contains__", "__abs__", "__getbuffer__", "__releasebuffer__",
    "__array__", "__copy__", "__deepcopy__", "__getstate__", "__setstate__", "__reduce__",
}


def params(text_signature, drop_first):
    """A stub parameter list from a `__text_signature__` (or a catch-all)."""
    if not text_signature:
        return ["*args: Any", "**kwargs: Any"] if not drop_first else ["self", "*args: Any", "**kwargs: Any"]
    inner = text_signature.strip()[1:-1]
    parts = [p.strip() for p in split_top(inner) if p.strip()]
    if any(keyword.iskeyword(p.split("=", 1)[0].strip().lstrip("*")) for p in parts):
        # A parameter named like a Python keyword (`from`) can only be
        # passed through **kwargs: leave the signature open.
        return params(None, drop_first)
    out = []
    for i, p in enumerate(parts):
        if i == 0 and p.startswith("$"):
            out.append("self" if p in ("$self",) else "cls")
            continue
        if p in ("/", "*"):
            out.append(p)
            continue
        if p.startswith("**"):
            out.append(f"{p}: Any")
        elif p.startswith("*"):
            out.append(f"{p}: Any")
        elif "=" in p:
            name = p.split("=", 1)[0].strip()
            out.append(f"{name}: Any = ...")
        else:
            out.append(f"{p}: Any")
    if drop_first and (not out or out[0] not in ("self", "cls")):
        out.insert(0, "self")
    return out


def split_top(s):
    depth, cur, out = 0, "", []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def function_stub(name, fn, indent="", method=False, returns="Any"):
    sig = getattr(fn, "__text_signature__", None)
    ps = params(sig, drop_first=method)
    if method and ps and ps[0] == "cls":
        ps[0] = "self"
    return f"{indent}def {name}({', '.join(ps)}) -> {returns}: ..."


def enum_stub(name, cls):
    base = "enum.IntEnum" if issubclass(cls, int) else "enum.Enum"
    lines = [f"class {name}({base}):"]
    for member, value in cls.__members__.items():
        if not keyword.iskeyword(member):  # DeviceAPI.None: no stub can name it
            lines.append(f"    {member} = {value.value!r}")
    return lines


def class_stub(name, cls):
    # PyO3 classes have their own layout (a disjoint base), and those not
    # declared `subclass` cannot be derived from.
    lines = ["@disjoint_base" if cls.__flags__ & (1 << 10) else "@final"]  # Py_TPFLAGS_BASETYPE
    lines.append(f"class {name}:")
    body = []
    for attr, value in sorted(vars(cls).items()):
        if attr.startswith("__") and attr not in DUNDERS and attr not in ("__new__", "__members__"):
            continue
        if attr.startswith("_") and not attr.startswith("__") and attr not in ("_repr_png_", "_repr_html_"):
            continue
        kind = type(value).__name__
        if attr == "__members__":
            body.append(f"    __members__: ClassVar[dict[str, {name}]]")
        elif attr == "__new__":
            # The constructor's signature is recorded on the class.
            sig = getattr(cls, "__text_signature__", None) or getattr(value, "__text_signature__", None)
            if sig and not sig.startswith("($"):
                sig = "($cls, " + sig[1:] if sig != "()" else "($cls)"
            ps = params(sig, drop_first=False)
            ps = ["cls"] + ps[1:] if ps and ps[0] in ("cls", "self") else ["cls"] + ps
            body.append(f"    def __new__({', '.join(ps)}) -> {name}: ...")
        elif attr == "__hash__" and value is None:
            body.append("    __hash__: ClassVar[None]  # type: ignore[assignment]")
        elif isinstance(value, cls):
            if not keyword.iskeyword(attr):  # DeviceAPI.None: no stub can name it
                body.append(f"    {attr}: ClassVar[{name}]")
        elif kind == "staticmethod":
            body.append("    @staticmethod")
            body.append(function_stub(attr, value.__func__, "    ", method=False))
        elif kind == "classmethod" or kind == "classmethod_descriptor":
            body.append("    @classmethod")
            body.append(function_stub(attr, getattr(cls, attr), "    ", method=True))
        elif kind in ("getset_descriptor", "member_descriptor", "property"):
            body.append("    @property")
            body.append(f"    def {attr}(self) -> Any: ...")
            if getattr(value, "__set__", None) is not None and kind == "property" and value.fset is not None:
                body.append(f"    @{attr}.setter")
                body.append(f"    def {attr}(self, value: Any) -> None: ...")
        elif kind in ("method_descriptor", "wrapper_descriptor", "builtin_function_or_method", "function"):
            returns = "Expr" if attr in EXPR_OPERATORS and "Expr" in vars(core) else "Any"
            # Scheduling-style methods say they return their receiver.
            if re.search(rf"Returns this {name}\b", getattr(value, "__doc__", None) or ""):
                returns = name
            if attr in ("__eq__", "__ne__"):
                returns = "Any"
            if attr == "__setitem__" or attr == "__delitem__":
                returns = "None"
            if attr == "__bool__":
                returns = "bool"
            stub = function_stub(attr, value, "    ", method=True, returns=returns)
            if attr in ("__eq__", "__ne__"):
                stub = stub.replace("def", "def", 1) + "  # type: ignore[override]"
            body.append(stub)
        elif isinstance(value, (int, float, str, bool)):
            body.append(f"    {attr}: ClassVar[{type(value).__name__}]")
        else:
            body.append(f"    {attr}: ClassVar[Any]")
    return lines + (body or ["    ..."])


def generate():
    out = [
        '"""Type stub of ferrohalide._core (written by scripts/gen_stubs.py; do not edit)."""',
        "import enum",
        "import types",
        "from typing import Any, ClassVar",
        "",
        "from typing_extensions import disjoint_base, final",
        "",
    ]
    if hasattr(core, "__all__"):
        out += [f"__all__ = {sorted(core.__all__)!r}", ""]
    names = sorted(n for n in dir(core) if not n.startswith("__"))
    for name in names:
        obj = getattr(core, name)
        if inspect.ismodule(obj):
            out.append(f"{name}: types.ModuleType")
            continue
        if isinstance(obj, enum.EnumMeta):
            out.extend(enum_stub(name, obj))
            out.append("")
        elif inspect.isclass(obj):
            if issubclass(obj, BaseException):
                out.append(f"class {name}({obj.__mro__[1].__name__}): ...")
            else:
                out.extend(class_stub(name, obj))
            out.append("")
        elif callable(obj):
            returns = "Type" if name in TYPE_CONSTRUCTORS else "Any"
            out.append(function_stub(name, obj, returns=returns))
        else:
            cls = type(obj).__name__
            out.append(f"{name}: {cls if hasattr(core, cls) else 'Any'}")
    return "\n".join(out).rstrip() + "\n"


def main():
    text = generate()
    if "--check" in sys.argv:
        current = open(OUT).read() if os.path.exists(OUT) else ""
        if current != text:
            sys.exit("python/ferrohalide/_core.pyi is stale: run python scripts/gen_stubs.py")
        return
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
