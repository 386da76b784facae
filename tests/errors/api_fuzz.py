"""API fuzzer: call every public function, constructor and method of the module
with wrong, degenerate and extreme arguments.  Run as a script, in a subprocess
(test_api_fuzz.py), so that a crash kills only this process:

    python api_fuzz.py MODULE SEED LOG [START]

Each entry of the plan is one call, or a chain of 2-4 method calls on one
receiver (so that schedules and buffers reach states no single call makes).  The
plan (which callables, on which receiver, with which arguments) is pure data
computed from the seed before anything runs, so a run that died at call k can be
resumed at k + 1 and every call is reproducible from its index.  Each call is
written to LOG (line-buffered) before it runs: the last line of a dead run names
the call that crashed or hung.

A call may return or raise an ordinary Python exception.  These are bugs, written
to LOG as ``BAD`` lines: a BaseException that is not an Exception (pyo3's
PanicException), SystemError, and messages that say "Internal error" (a user
mistake must be reported as such, not surface from deep inside the compiler).
After a call returns, its result and its receiver are used (printed, read, a
Func realized) so that a call that left garbage behind is caught where the garbage
is touched, attributed to the call that made it.  At the end the process
realizes a small pipeline and checks its values.
"""
from __future__ import annotations

import importlib
import inspect
import math
import random
import sys

import numpy as np

# ---------------------------------------------------------------------------------
# Objects the fuzzer passes around.  Every entry builds a fresh object, so calls
# cannot influence each other through shared state.
# ---------------------------------------------------------------------------------


def _funcs(hl):
    x, y = hl.Var("x"), hl.Var("y")

    def func2():
        f = hl.Func("ff")
        f[x, y] = x + y * 2
        return f

    def func1():
        f = hl.Func("f1")
        f[x] = hl.f32(x) * 0.5
        return f

    def func_update():
        f = hl.Func("fu")
        r = hl.RDom([hl.Range(0, 3)], "r")
        f[x] = x
        f[r.x] = f[r.x] + 1
        return f

    def func_tuple():
        f = hl.Func("ft")
        f[x] = (x, hl.f32(x))
        return f

    def func_input():
        im = hl.ImageParam(hl.UInt(8), 1, "fin")
        im.set(hl.Buffer(np.arange(16, dtype=np.uint8)))
        f = hl.Func("fi")
        f[x] = im[x]
        return f

    return func2, func1, func_update, func_tuple, func_input


def _module(hl):
    """A compiled Module of a small pipeline (`compile_to_module`)."""
    x = hl.Var("x")
    f = hl.Func("fm")
    f[x] = x * 3
    return f.compile_to_module([], "fuzz_module")


def objects(hl):
    """name -> zero-argument factory."""
    func2, func1, func_update, func_tuple, func_input = _funcs(hl)
    x = hl.Var("x")

    def rdom():
        return hl.RDom([hl.Range(0, 4), hl.Range(1, 3)], "rr")

    def derivative():
        loss = hl.Func("loss")
        r = hl.RDom([(0, 4)])
        loss[()] = hl.f32(0)
        loss[()] += hl.f32(func1()[r.x]) * 0.5
        return hl.propagate_adjoints(loss)

    def image_param():
        return hl.ImageParam(hl.UInt(8), 2, "ip")

    def param():
        return hl.Param(hl.Int(32), "pp", 3)

    def callable_():
        f = hl.Func("fc")
        f[x] = x * 2
        return f.compile_to_callable([])

    def autoscheduled():
        f = func2()
        f.set_estimates([(0, 64), (0, 32)])
        return hl.Pipeline(f).apply_autoscheduler(hl.Target("host"), hl.AutoschedulerParams("Li2018", {}))

    return {
        # plain Python values
        "None": lambda: None,
        "True": lambda: True,
        "0": lambda: 0,
        "1": lambda: 1,
        "-1": lambda: -1,
        "4": lambda: 4,
        "2**31": lambda: 2 ** 31,
        "2**63": lambda: 2 ** 63,
        "-2**70": lambda: -2 ** 70,
        "nan": lambda: math.nan,
        "inf": lambda: math.inf,
        "-inf": lambda: -math.inf,
        "0.5": lambda: 0.5,
        "-2.5": lambda: -2.5,
        "1j": lambda: 1j,
        "''": lambda: "",
        "'x'": lambda: "x",
        "'x.png'": lambda: "x.png",
        "'host'": lambda: "host",
        "'bad'": lambda: "no-such\x00thing",
        "b'x'": lambda: b"x",
        "[]": lambda: [],
        "[1]": lambda: [1],
        "[2,3]": lambda: [2, 3],
        "[-1,2**40]": lambda: [-1, 2 ** 40],
        "[None]": lambda: [None],
        "[[1],[2]]": lambda: [[1], [2]],
        "[x,1.5]": lambda: [hl.Var("x"), 1.5],
        "[x,y]": lambda: [hl.Var("x"), hl.Var("y")],
        "[4,4]": lambda: [4, 4],
        "[Func]": lambda: [_funcs(hl)[0]()],
        "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]": lambda: [0] * 17,
        "[(0,4)]": lambda: [(0, 4)],
        "[(0,4),(0,3)]": lambda: [(0, 4), (0, 3)],
        "[(None,None),(1,-3)]": lambda: [(None, None), (1, -3)],
        "[(0,2**40),(x,4)]": lambda: [(0, 2 ** 40), (hl.Var("x"), 4)],
        "[Range,Range]": lambda: [hl.Range(0, 4), hl.Range(0, 3)],
        "()": lambda: (),
        "(1,2)": lambda: (1, 2),
        "{}": lambda: {},
        "{'a':1}": lambda: {"a": 1},
        "object()": object,
        "lambda": lambda: (lambda *a, **k: None),
        "np.zeros(3)": lambda: np.zeros(3),
        "np.empty_i32": lambda: np.zeros((0,), np.int32),
        "np.u8_3x4": lambda: np.arange(12, dtype=np.uint8).reshape(3, 4),
        "np.strided": lambda: np.arange(24, dtype=np.int32).reshape(4, 6)[::2, ::3],
        "np.f32_nan": lambda: np.float32("nan"),
        "np.i64_big": lambda: np.int64(2 ** 62),
        "np.bool_": lambda: np.bool_(True),
        "np.complex": lambda: np.zeros(2, np.complex64),
        "np.object": lambda: np.array([None, 1], dtype=object),
        # module objects
        "Var": lambda: hl.Var("x"),
        "Var_y": lambda: hl.Var("y"),
        "Var_implicit": lambda: hl._0,
        "Expr_i32": lambda: hl.Var("x") + 1,
        "Expr_const": lambda: hl.Expr(7),
        "Expr_f32": lambda: hl.f32(hl.Var("x")) * 0.5,
        "Expr_u8": lambda: hl.u8(hl.Var("x")),
        "Expr_bool": lambda: hl.Var("x") > 2,
        "Expr_i64": lambda: hl.i64(hl.Var("x")),
        "Expr_undef": lambda: hl.Expr(),
        "Func": func2,
        "Func_1d": func1,
        "Func_undef": lambda: hl.Func("fx"),
        "Func_typed": lambda: hl.Func(hl.Int(32), 2, "ftyped"),
        "Func_update": func_update,
        "Func_tuple": func_tuple,
        "Func_input": func_input,
        "FuncRef": lambda: func2()[hl.Var("x"), hl.Var("y")],
        "FuncTupleElementRef": lambda: func_tuple()[hl.Var("x")][0],
        "Stage": lambda: func_update().update(0),
        "Stage_pure": lambda: hl.Stage(func2()),
        "Buffer": lambda: hl.Buffer(hl.Int(32), [4, 3]),
        "Buffer_u8": lambda: hl.Buffer(np.arange(12, dtype=np.uint8).reshape(3, 4)),
        "Buffer_0d": lambda: hl.Buffer(hl.Float(32), []),
        "Buffer_empty": lambda: hl.Buffer(),
        "Buffer_zero_extent": lambda: hl.Buffer(hl.Int(16), [0, 3]),
        "BufferDimension": lambda: hl.Buffer(hl.Int(32), [4, 3]).dim(1),
        "ImageParam": image_param,
        "ImageParam_set": lambda: _set(image_param(), hl.Buffer(hl.UInt(8), [5, 5])),
        "OutputImageParam": lambda: func2().output_buffer(),
        "OutputImageParam_undef": lambda: hl.OutputImageParam(),
        "AutoschedulerParams": lambda: hl.AutoschedulerParams("Li2018", {"parallelism": "4"}),
        "AutoSchedulerResults": lambda: autoscheduled(),
        "Dimension": lambda: image_param().dim(0),
        "Param": param,
        "Param_f32": lambda: hl.Param(hl.Float(32), "pf", 0.5),
        "Param_bool": lambda: hl.Param(hl.Bool(), "pb", True),
        "Parameter": lambda: param().parameter(),
        "Parameter_buffer": lambda: image_param().parameter(),
        "Parameter_undef": lambda: hl.Parameter(),
        "ArgumentEstimates": lambda: hl.ArgumentEstimates(),
        "EvictionKey": lambda: hl.EvictionKey(hl.u64(3)),
        "Derivative": derivative,
        "ExternFuncArgument": lambda: hl.ExternFuncArgument(hl.Expr(2)),
        "ExternFuncArgument_undef": lambda: hl.ExternFuncArgument(),
        "VarOrRVar": lambda: hl.VarOrRVar(hl.Var("vx")),
        "VarOrRVar_r": lambda: hl.VarOrRVar(hl.RDom([(0, 3)]).x),
        "RDom": rdom,
        "RDom_buffer": lambda: hl.RDom(hl.Buffer(hl.Int(32), [2, 2])),
        "RVar": lambda: rdom().x,
        "Range": lambda: hl.Range(0, 4),
        "LoweredStmt": lambda: hl.LoweredStmt("func f () {\n}\n", "<html><body>f</body></html>"),
        "Tuple": lambda: hl.Tuple([hl.Var("x"), hl.Expr(1.5)]),
        "Type": lambda: hl.Int(32),
        "Type_f64": lambda: hl.Float(64),
        "Type_u8x4": lambda: hl.UInt(8).with_lanes(4),
        "Type_handle": lambda: hl.Handle(),
        "Target": lambda: hl.Target("host"),
        "LoopLevel": lambda: hl.LoopLevel.root(),
        "LoopLevel_inlined": lambda: hl.LoopLevel.inlined(),
        "LoopLevel_at": lambda: hl.LoopLevel(func2(), hl.Var("x")),
        "LoopLevel_undef": lambda: hl.LoopLevel(),
        "Pipeline": lambda: hl.Pipeline(func2()),
        "Pipeline_multi": lambda: hl.Pipeline([func2(), func1()]),
        "Callable": callable_,
        "TailStrategy": lambda: hl.TailStrategy.RoundUp,
        "MemoryType": lambda: hl.MemoryType.Stack,
        "TargetFeature": lambda: hl.TargetFeature.AVX2,
        "StmtOutputFormat": lambda: hl.StmtOutputFormat.HTML,
        "Argument": lambda: func_input().infer_arguments()[0],
        "TypeCode": lambda: hl.TypeCode.Float,
        "LoopAlignStrategy": lambda: hl.LoopAlignStrategy.AlignStart,
        "LinkageType": lambda: hl.LinkageType.External,
        "NameMangling": lambda: hl.NameMangling.C,
        "PrefetchBoundStrategy": lambda: hl.PrefetchBoundStrategy.Clamp,
        "DeviceAPI": lambda: hl.DeviceAPI.Host,
        "Partition": lambda: hl.Partition.Never,
        "OutputFileType": lambda: hl.OutputFileType.object,
        "Module": lambda: _module(hl),
        "TargetOS": lambda: hl.TargetOS.Linux,
        "TargetArch": lambda: hl.TargetArch.X86,
        "TargetProcessorTune": lambda: hl.TargetProcessorTune.TuneZnVer4,
        "ArgumentKind": lambda: hl.ArgumentKind.InputBuffer,
        **_generator_objects(hl),
    }


_GENERATORS: dict = {}


def _generator_class(hl):
    """A small Generator class, registered once per module."""
    if hl.__name__ not in _GENERATORS:
        class FuzzGenerator:
            inp = hl.InputBuffer(hl.UInt(8), 1)
            k = hl.InputScalar(hl.Int(32))
            out = hl.OutputBuffer(hl.Int(32), 1)

            def generate(self):
                x = hl.Var("x")
                self.out[x] = hl.i32(self.inp[x]) + self.k
        _GENERATORS[hl.__name__] = hl.generator(name="api_fuzz_generator")(FuzzGenerator)
    return _GENERATORS[hl.__name__]


def _generator(hl):
    with hl.GeneratorContext(hl.Target("host")):
        return _generator_class(hl)()


def _generator_objects(hl):
    """The Generator API's objects (modules that have it)."""
    if not hasattr(hl, "InputBuffer"):
        return {}
    return {
        "ArgInfo": lambda: hl.ArgInfo(),
        "AutoschedulerParams": lambda: hl.AutoschedulerParams(),
        "GeneratorContext": lambda: hl.GeneratorContext(hl.Target("host")),
        "InputBuffer": lambda: hl.InputBuffer(hl.UInt(8), 1),
        "InputScalar": lambda: hl.InputScalar(hl.Int(32)),
        "OutputBuffer": lambda: hl.OutputBuffer(hl.Int(32), 1),
        "OutputScalar": lambda: hl.OutputScalar(hl.Int(32)),
        "Generator": lambda: _generator(hl),
    }


def _set(im, buf):
    im.set(buf)
    return im


# Receivers for the methods of each class: the objects above of that class.  A
# public class with methods and no receiver here fails the test (so new classes
# get fuzzed).
RECEIVERS = {
    "Var": ["Var", "Var_implicit"],
    "Expr": ["Expr_i32", "Expr_f32", "Expr_bool", "Expr_undef"],
    "Func": ["Func", "Func_undef", "Func_update", "Func_tuple", "Func_input", "Func_typed"],
    "FuncRef": ["FuncRef"],
    "FuncTupleElementRef": ["FuncTupleElementRef"],
    "Stage": ["Stage", "Stage_pure"],
    "Buffer": ["Buffer", "Buffer_u8", "Buffer_0d", "Buffer_empty", "Buffer_zero_extent"],
    "BufferDimension": ["BufferDimension"],
    "ImageParam": ["ImageParam", "ImageParam_set"],
    "OutputImageParam": ["OutputImageParam", "OutputImageParam_undef"],
    "AutoSchedulerResults": ["AutoSchedulerResults"],
    "Dimension": ["Dimension"],
    "Param": ["Param", "Param_f32", "Param_bool"],
    "Parameter": ["Parameter", "Parameter_buffer", "Parameter_undef"],
    "VarOrRVar": ["VarOrRVar", "VarOrRVar_r"],
    "ArgumentEstimates": ["ArgumentEstimates"],
    "EvictionKey": ["EvictionKey"],
    "Derivative": ["Derivative"],
    "ExternFuncArgument": ["ExternFuncArgument", "ExternFuncArgument_undef"],
    "RDom": ["RDom", "RDom_buffer"],
    "RVar": ["RVar"],
    "Range": ["Range"],
    "LoweredStmt": ["LoweredStmt"],
    "Tuple": ["Tuple"],
    "Type": ["Type", "Type_u8x4", "Type_handle"],
    "Target": ["Target"],
    "LoopLevel": ["LoopLevel", "LoopLevel_inlined", "LoopLevel_at", "LoopLevel_undef"],
    "Pipeline": ["Pipeline", "Pipeline_multi"],
    "Callable": ["Callable"],
    "TailStrategy": ["TailStrategy"],
    "MemoryType": ["MemoryType"],
    "TargetFeature": ["TargetFeature"],
    "StmtOutputFormat": ["StmtOutputFormat"],
    "Argument": ["Argument"],
    "TypeCode": ["TypeCode"],
    "LoopAlignStrategy": ["LoopAlignStrategy"],
    "LinkageType": ["LinkageType"],
    "NameMangling": ["NameMangling"],
    "PrefetchBoundStrategy": ["PrefetchBoundStrategy"],
    "DeviceAPI": ["DeviceAPI"],
    "Partition": ["Partition"],
    "OutputFileType": ["OutputFileType"],
    "Module": ["Module"],
    **{c: [c] for c in ["TargetOS", "TargetArch", "TargetProcessorTune", "ArgumentKind"]},
    **{c: [c] for c in ["ArgInfo", "AutoschedulerParams", "GeneratorContext", "InputBuffer",
                        "InputScalar", "OutputBuffer", "OutputScalar", "Generator"]},
    # The Generator made by `_generator`: its methods are Generator's, fuzzed there.
    "FuzzGenerator": [],
}

# Dunder methods worth calling (operators, indexing, conversions); the rest of
# object's protocol is Python's own.
DUNDERS = {
    "__getitem__", "__setitem__", "__call__", "__len__", "__iter__", "__bool__",
    "__int__", "__float__", "__index__", "__hash__", "__repr__", "__str__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
    "__rmod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__invert__",
    "__abs__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
    "__lshift__", "__rlshift__", "__rshift__", "__rrshift__", "__array__",
    "__getattr__", "__contains__", "__copy__", "__deepcopy__", "__iadd__",
    "__isub__", "__imul__", "__itruediv__",
}

# Names that are not API entry points of the module.
SKIP_MODULE_NAMES = {"HalideError", "imageio"}
# Submodules whose functions are API entry points too.
SUBMODULES = ["BoundaryConditions", "imageio"]

CALLS_PER_TARGET = 10
# Module functions with several arguments of several kinds get more calls.
CALLS_PER_SUBMODULE_FUNCTION = 40
MAX_ARITY = 5
# Chains of 2-4 calls on one receiver, per class: (receivers, how many).
CHAINS = {
    "Func": (["Func", "Func_update", "Func_tuple", "Func_input", "Func_1d"], 600),
    "Stage": (["Stage", "Stage_pure"], 300),
    "Buffer": (["Buffer", "Buffer_u8", "Buffer_zero_extent", "Buffer_0d"], 400),
    "ImageParam": (["ImageParam", "ImageParam_set"], 100),
    "Param": (["Param", "Param_f32"], 100),
    "Parameter": (["Parameter", "Parameter_buffer"], 100),
    "RDom": (["RDom"], 50),
    "Pipeline": (["Pipeline", "Pipeline_multi"], 100),
    "Target": (["Target"], 100),
}

# Arguments named like these get, half of the time, a value of roughly the right
# kind (a Var where a Var is expected, an int where a factor is...), so that calls
# get past argument conversion and exercise validation deeper down.
_INTS = ["0", "-1", "1", "4", "2**31", "2**63", "-2**70", "nan", "inf", "0.5",
         "Expr_i32", "Param", "Expr_const", "np.i64_big", "None", "'x'"]
_VARS = ["Var", "Var_y", "Var_implicit", "RVar", "'x'", "Expr_i32", "0", "None", "Func"]
_EXPRS = ["Expr_i32", "Expr_f32", "Expr_u8", "Expr_bool", "Expr_i64", "Expr_undef",
          "Expr_const", "Var", "Param", "Param_f32", "FuncRef", "FuncTupleElementRef",
          "RVar", "0", "-2.5", "nan", "2**63", "-2**70", "True", "Tuple", "Func",
          "Buffer", "None", "'x'"]
_LISTS = ["[]", "[1]", "[x,y]", "[4,4]", "[Func]", "[2,3]", "[-1,2**40]", "[None]", "[[1],[2]]", "[x,1.5]",
          "[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]", "()", "(1,2)", "np.zeros(3)",
          "np.empty_i32", "Buffer", "None", "'x'", "Tuple"]
_TYPES = ["Type", "Type_f64", "Type_u8x4", "Type_handle", "None", "'x'", "0"]
_FUNCS = ["Func", "Func_1d", "Func_undef", "Func_update", "Func_tuple", "Func_typed",
          "None", "Var", "Stage"]
_STRS = ["''", "'x'", "'bad'", "None", "0", "b'x'"]
_BOOLS = ["True", "0", "None", "nan", "'x'"]
HINTS = {
    **dict.fromkeys(["var", "x", "y", "old", "outer", "inner", "fused", "new", "order"], _VARS),
    **dict.fromkeys(["factor", "extent", "min", "max", "bits", "lanes", "i", "n", "delta",
                     "d1", "d2", "dx", "pos", "stride", "mod", "modulus", "remainder",
                     "width", "height", "channels", "start", "task_size", "stage_index",
                     "lo", "hi", "dimension"], _INTS),
    **dict.fromkeys(["e", "a", "b", "condition", "predicate", "value", "other", "w", "q",
                     "id", "s", "arg", "arg0", "arg1", "key"], _EXPRS),
    **dict.fromkeys(["sizes", "mins", "args", "_args", "coords", "rect", "features",
                     "names", "values", "arguments", "outputs", "region"], _LISTS),
    **dict.fromkeys(["type", "t", "ty", "code"], _TYPES),
    **dict.fromkeys(["f", "src", "buffer"], _FUNCS + ["Buffer", "Buffer_u8"]),
    **dict.fromkeys(["name", "filename", "fmt", "message", "qualname", "module"], _STRS),
    **dict.fromkeys(["dirty", "fold_forward", "reverse_axes",
                     "override_associativity_test"], _BOOLS),
    **dict.fromkeys(["source"], _FUNCS + ["ImageParam", "ImageParam_set", "Buffer", "Buffer_u8"]),
    **dict.fromkeys(["bounds"], ["[(0,4)]", "[(0,4),(0,3)]", "[(None,None),(1,-3)]",
                                 "[(0,2**40),(x,4)]", "[Range,Range]", "[]", "[4,4]", "None"]),
    **dict.fromkeys(["exterior"], _EXPRS),
    **dict.fromkeys(["uri", "format"], _STRS + ["'x.png'"]),
    **dict.fromkeys(["im"], ["Buffer", "Buffer_u8", "Buffer_0d", "Buffer_zero_extent",
                             "np.u8_3x4", "np.strided", "np.zeros(3)", "None"]),
    "target": ["Target", "'host'", "'bad'", "None", "0"],
    "tail": ["TailStrategy", "0", "None", "'x'"],
    "memory_type": ["MemoryType", "0", "None"],
    "policy": ["Partition", "0", "None"],
    "device": ["DeviceAPI", "0", "None"],
}


def public_classes(hl):
    """The module's classes, and those of the objects its functions return (a
    Callable is made by Func.compile_to_callable, not by hl.Callable)."""
    out = {}
    for n in dir(hl):
        if n.startswith("_") or n in SKIP_MODULE_NAMES:
            continue
        o = getattr(hl, n)
        if inspect.isclass(o) and not issubclass(o, BaseException) and \
                o.__name__ not in out:
            out[o.__name__] = o
    for make in objects(hl).values():
        t = type(make())
        if t.__module__.split(".")[0] == hl.__name__ and methods_of(t):
            out[t.__name__] = t
    return out


def methods_of(cls):
    out = []
    for m in sorted(dir(cls)):
        if m.startswith("__") and m not in DUNDERS:
            continue
        if m.startswith("_") and not m.startswith("__"):
            continue
        owner = next((c for c in cls.__mro__ if m in c.__dict__), None)
        if owner is None or owner.__module__ in ("builtins", "enum"):
            continue  # Python's own (object, int and Enum methods)
        attr = owner.__dict__[m]
        if isinstance(attr, property) or inspect.isdatadescriptor(attr):
            continue
        if not callable(attr) and not isinstance(attr, (staticmethod, classmethod)):
            continue
        out.append(m)
    return out


def _signature(fn):
    """(minimum, maximum positional arguments, positional names, keyword names) of
    fn; any number of unnamed arguments if it has no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 0, MAX_ARITY, [], []
    lo = hi = 0
    pos, kw = [], []
    var = None
    for p in sig.parameters.values():
        if p.name in ("self", "$self"):
            continue
        if p.kind == p.VAR_POSITIONAL:
            var = p.name
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            hi += 1
            pos.append(p.name)
            if p.default is p.empty:
                lo += 1
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            kw.append(p.name)
    if var:
        pos += [var] * (MAX_ARITY - hi)
        hi = MAX_ARITY
    return lo, hi, pos, kw


def _pick(rng, names, param):
    """An object name for an argument called `param` (None: unnamed)."""
    hint = HINTS.get(param)
    if hint and rng.random() < 0.5:
        return rng.choice(hint)
    return rng.choice(names)


def submodule(hl, name):
    """The package's submodule `name` (imported if need be), or None."""
    m = getattr(hl, name, None)
    if m is None:
        try:
            m = importlib.import_module("%s.%s" % (hl.__name__, name))
        except ImportError:
            return None
    return m if inspect.ismodule(m) else None


def submodule_functions(hl):
    """[(dotted name, function)] of the submodules' own public functions (not
    those they import from other libraries)."""
    out = []
    for sub in SUBMODULES:
        m = submodule(hl, sub)
        if m is None:
            continue
        for n in sorted(dir(m)):
            o = getattr(m, n)
            if n.startswith("_") or inspect.isclass(o) or inspect.ismodule(o) or not callable(o):
                continue
            owner = getattr(o, "__module__", None) or ""
            ours = (hl.__name__.split(".")[0], sub)
            if owner and not owner.startswith(ours) and not owner.endswith("." + sub):
                continue
            out.append(("%s.%s" % (sub, n), o))
    return out


def resolve(hl, dotted):
    """The module-level callable `hl.<dotted>`."""
    head, _, rest = dotted.partition(".")
    return getattr(submodule(hl, head), rest) if rest else getattr(hl, head)


def targets(hl):
    """[(target name, receiver kind or None, the callable to inspect)]."""
    out = [("hl." + n, None, o) for n, o in submodule_functions(hl)]
    for n in sorted(dir(hl)):
        if n.startswith("_") or n in SKIP_MODULE_NAMES:
            continue
        o = getattr(hl, n)
        if inspect.ismodule(o) or not callable(o):
            continue
        if inspect.isclass(o) and issubclass(o, BaseException):
            continue
        out.append(("hl." + n, None, o))
    for cname, cls in sorted(public_classes(hl).items()):
        for m in methods_of(cls):
            for recv in RECEIVERS.get(cname, []):
                out.append(("%s.%s" % (recv, m), recv, getattr(cls, m)))
    return out


def uncovered_submodules(hl):
    """Public submodules the fuzzer does not call into (the test requires none)."""
    return sorted(n for n in dir(hl) if not n.startswith("_") and
                  inspect.ismodule(getattr(hl, n)) and n not in SUBMODULES)


def uncovered_classes(hl):
    """Public classes with methods but no receivers (the test requires none)."""
    return sorted(c for c, cls in public_classes(hl).items()
                  if methods_of(cls) and c not in RECEIVERS)


def _call(rng, names, name, fn):
    """One call of `fn` (called `name`) as data: (name, [arg names], {kw: name})."""
    lo, hi, pos, kw = _signature(fn)
    n = rng.choice(sorted({0, lo, hi, min(hi + 1, MAX_ARITY + 1), max(lo - 1, 0)})) \
        if rng.random() < 0.4 else rng.randint(lo, max(lo, hi))
    args = [_pick(rng, names, pos[j] if j < len(pos) else None) for j in range(n)]
    kwargs = {}
    if kw and rng.random() < 0.3:
        key = rng.choice(kw)
        kwargs[key] = _pick(rng, names, key)
    elif rng.random() < 0.05:
        kwargs["no_such_keyword"] = rng.choice(names)
    return name, args, kwargs


def plan(hl, seed):
    """The calls, as data: [(receiver or None, [(callable name, [arg names],
    {kw: arg name}), ...])].  Most entries are one call; CHAINS entries call
    several methods on one receiver, so that schedules and buffers reach
    states no single call makes."""
    names = sorted(objects(hl))
    out = []
    in_submodule = {"hl." + n for n, _ in submodule_functions(hl)}
    for tname, recv, fn in targets(hl):
        rng = random.Random("%s:%s" % (seed, tname))
        calls = CALLS_PER_SUBMODULE_FUNCTION if tname in in_submodule else CALLS_PER_TARGET
        for _ in range(calls):
            out.append((recv, [_call(rng, names, tname, fn)]))
    classes = public_classes(hl)
    for cname, (recvs, count) in sorted(CHAINS.items()):
        cls = classes[cname]
        methods = [m for m in methods_of(cls) if not m.startswith("__")]
        rng = random.Random("%s:chains:%s" % (seed, cname))
        for _ in range(count):
            recv = rng.choice(recvs)
            steps = [_call(rng, names, "%s.%s" % (recv, m), getattr(cls, m))
                     for m in (rng.choice(methods) for _ in range(rng.randint(2, 4)))]
            out.append((recv, steps))
    return out


# ---------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------
def bad_exception(exc):
    """Why exc is a bug (a string), or None if it is an acceptable user error."""
    if not isinstance(exc, Exception):
        return "%s (not an Exception)" % type(exc).__name__
    if isinstance(exc, SystemError):
        return "SystemError"
    if "Internal error" in str(exc) or "internal error" in str(exc):
        return "internal error"
    return None


def use(hl, value):
    """Touch a value a call returned (or its receiver afterwards)."""
    repr(value)
    str(value)
    if isinstance(value, hl.Buffer):
        if value.defined():
            np.asarray(value).sum()
            [value.dim(d).extent() for d in range(value.dimensions())]
    elif isinstance(value, hl.Func):
        if value.defined():
            value.realize([3] * value.dimensions())
    elif isinstance(value, hl.Expr) and value.defined():
        f = hl.Func("use_expr")
        f[()] = value
        f.realize([])


def realize_check(hl):
    """A small pipeline after the fuzzing must still give the right values."""
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("after")
    f[x, y] = x + 10 * y
    got = np.asarray(f.realize([5, 4]))
    want = np.arange(5)[None, :] + 10 * np.arange(4)[:, None]
    assert (got == want).all(), got


def _describe(recv, steps):
    return " ; ".join("%s(%s%s)" % (name, ", ".join(args),
                                    "".join(", %s=%s" % kv for kv in kwargs.items()))
                      for name, args, kwargs in steps)


def _problem_of(exc):
    p = bad_exception(exc)
    return p and "%s: %s: %s" % (p, type(exc).__name__, str(exc)[:300])


def run_entry(hl, factories, recv, steps):
    """Run one plan entry; the reason it found a bug, or None."""
    try:
        receiver = factories[recv]() if recv else None
    except BaseException as exc:  # noqa: BLE001 - building the receiver
        return _problem_of(exc)
    result = None
    for name, args, kwargs in steps:
        try:
            fn = getattr(receiver, name.split(".", 1)[1]) if recv else resolve(hl, name[3:])
            a = [factories[n]() for n in args]
            k = {key: factories[n]() for key, n in kwargs.items()}
            result = fn(*a, **k)
        except SystemExit:
            # The generator command line exits with status 1 and a message
            # on a bad command line, as command lines do.
            if name != "hl.main":
                return "SystemExit (not an Exception)"
        except BaseException as exc:  # noqa: BLE001 - the point of the test
            return _problem_of(exc)
    for v in (result, receiver):
        try:
            use(hl, v)
        except BaseException as exc:  # noqa: BLE001
            p = _problem_of(exc)
            if p:
                return "after the calls, using %s: %s" % (type(v).__name__, p)
    return None


def run(modname, seed, log_path, start=0):
    hl = importlib.import_module(modname)
    entries = plan(hl, seed)
    factories = objects(hl)
    with open(log_path, "a", buffering=1) as log:
        log.write("PLAN %d\n" % len(entries))
        for i in range(start, len(entries)):
            recv, steps = entries[i]
            desc = _describe(recv, steps)
            log.write("CALL %d %s\n" % (i, desc))
            problem = run_entry(hl, factories, recv, steps)
            if problem:
                log.write("BAD %d %s -- %s\n" % (i, desc, problem.replace("\n", " | ")))
        realize_check(hl)
        log.write("DONE\n")


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 0)
