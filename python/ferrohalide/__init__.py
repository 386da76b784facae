"""ferrohalide: the Halide image-processing language, reimplemented in Rust.

Use it exactly like Halide's Python bindings::

    import ferrohalide as hl
"""

from ._core import *  # noqa: F401,F403
from ._core import HalideError  # noqa: F401

# Implicit variables are underscore-named, so `import *` skips them.
from ._core import _, _0, _1, _2, _3, _4, _5, _6, _7, _8, _9  # noqa: F401

from ._core import Func as _Func, Var as _Var, Expr as _Expr


def install_dir():
    """The directory the ferrohalide package is installed in."""
    import os

    return os.path.dirname(__file__)


def funcs(names: str):
    """Given a space-delimited string, create a Func for each substring and return as a tuple."""
    return tuple(_Func(n) for n in names.split(" "))


def vars(names: str):  # noqa: A001 - Halide's name
    """Given a space-delimited string, create a Var for each substring and return as a tuple."""
    return tuple(_Var(n) for n in names.split(" "))


def evaluate(e):
    """Evaluate a scalar Expr, or a Python tuple of them (they may not depend
    on Vars), and return its value (a tuple of values for a tuple)."""
    if isinstance(e, Tuple):
        raise ValueError("Expected an Expr or tuple-of-Expr.")
    f = _Func()
    f[()] = e
    result = f.realize([])
    if isinstance(result, tuple):
        return tuple(b[()] for b in result)
    return result[()]


def evaluate_may_gpu(e):
    """Halide evaluates on a GPU when the JIT target has one; ferrohalide
    compiles for the CPU only, so this is `evaluate`."""
    return evaluate(e)


from ._generator import (  # noqa: E402,F401
    ArgInfo,
    ArgInfoDirection,
    ArgInfoKind,
    AutoschedulerParams,
    Generator,
    GeneratorContext,
    GeneratorParam,
    InputBuffer,
    InputScalar,
    OutputBuffer,
    OutputScalar,
    active_generator_context,
    alias,
    create_callable_from_generator,
    generator,
    load_plugin,
)
from ._generator import _create as _create_python_generator  # noqa: E402,F401
from ._generator_main import main  # noqa: E402,F401
from ._generator import _registered_names as _get_python_generator_names  # noqa: E402,F401
from ._notebook import LoweredStmt  # noqa: E402,F401


# ---------------------------------------------------------------------------
# Parts of Halide's Python API that ferrohalide does not implement yet. They
# exist so that code referring to them fails with a clear HalideError naming
# the feature, at the point of use.
# ---------------------------------------------------------------------------


def _unimplemented(what):
    return HalideError(f"Error: {what} is not implemented in ferrohalide yet\n")


def _make_unimplemented_class(name):
    def __init__(self, *args, **kwargs):
        raise _unimplemented(f"hl.{name}")

    doc = f"hl.{name} is not implemented in ferrohalide yet: creating one raises a HalideError."
    return type(name, (), {"__init__": __init__, "__module__": "ferrohalide", "__doc__": doc})


def _make_unimplemented_function(name):
    def fn(*args, **kwargs):
        raise _unimplemented(f"hl.{name}()")

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"hl.{name}() is not implemented in ferrohalide yet: calling it raises a HalideError."
    return fn


for _name in [
    "Argument",
    "ArgumentEstimates",
    "AutoSchedulerResults",
    "Callable",
    "Dimension",
    "EvictionKey",
    "ImageParam",
    "OutputImageParam",
    "Param",
    "Parameter",
    "Pipeline",
    "RDom",
    "RVar",
    "Range",
    "Stage",
    "Target",
    "VarOrRVar",
]:
    if _name not in globals():
        globals()[_name] = _make_unimplemented_class(_name)

for _name in [
    "deserialize_parameters",
    "deserialize_pipeline",
    "get_host_target",
    "get_jit_target_from_environment",
    "get_target_from_environment",
    "host_supports_target_device",
    "lambda_func",
    "load_plugin",
    "serialize_pipeline",
    "target_feature_for_device_api",
]:
    if _name not in globals():
        globals()[_name] = _make_unimplemented_function(_name)


del _name
