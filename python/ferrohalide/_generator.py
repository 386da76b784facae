"""Python Generators: Halide's Generator API for pipelines written in Python.

A generator is a class decorated with ``@hl.generator``. Its class body
declares GeneratorParams, Inputs and Outputs as attributes, in the order of
the calling convention; ``configure()`` may add more; ``generate()`` defines
the outputs. An instance moves through fixed phases, each reached on demand:

1. params declared   the class's GeneratorParams are collected; values given
                     by name (``generator_params``, the command line, an
                     ``@hl.alias``) replace their defaults;
2. params bound      each GeneratorParam attribute becomes its plain value;
3. io declared       the Inputs and Outputs are collected, in declaration
                     order; ``<name>.type`` / ``<name>.dim`` params fill in
                     what the declarations left unspecified;
4. configured        ``configure()`` has run (it may ``add_input`` /
                     ``add_output``);
5. io bound          each Input attribute becomes an ImageParam or Param
                     (or what ``call()`` bound to it), each Output a Func;
6. built             ``generate()`` has run and the outputs form a Pipeline.

Generators are Python-level orchestration of the core's Funcs, Params and
Pipelines (as in Halide, whose Python generator support is Python too); all
semantics of the pipeline itself live in the Rust core.
"""

from __future__ import annotations

import enum
import os
import re
import sys
import warnings
from contextvars import ContextVar
from inspect import isclass
from typing import Any, Optional

from ._core import (
    Buffer,
    Expr,
    Float,
    Func,
    HalideError,
    ImageParam,
    Int,
    Param,
    Pipeline,
    Target,
    Type,
    UInt,
    _,
)


def _error(message: str):
    raise HalideError(message)


def _require(condition, message: str):
    if not condition:
        _error(message)


# ---------------------------------------------------------------------------
# Names and types
# ---------------------------------------------------------------------------

# C identifiers, minus a leading underscore and minus double underscores
# (generated C names use them as separators).
_VALID_NAME = re.compile(r"^(?!.*__)[A-Za-z0-9][A-Za-z0-9_]*$")


def _check_name(name: str) -> str:
    # `generator_params` is a keyword of call().
    _require(
        bool(name) and name != "generator_params" and _VALID_NAME.match(name) is not None,
        f"The name '{name}' is not valid for a GeneratorParam, Input, or Output.",
    )
    return name


_unique_counter = [0]


def _unique_name() -> str:
    """A placeholder name for a declaration not yet bound to its attribute."""
    _unique_counter[0] += 1
    return f"p{_unique_counter[0]}"


class _Unspecified:
    """A declaration's type or dimensionality left to a GeneratorParam."""

    def __repr__(self):
        return "<unspecified>"


def _as_type(t: object) -> Type:
    # Python's own types stand for Halide's usual ones.
    if t is bool:
        return UInt(1)
    if t is int:
        return Int(32)
    if t is float:
        return Float(32)
    _require(isinstance(t, Type), f"Expected a Halide Type, but saw: {t}")
    return t


def _type_list(types: object) -> list:
    """The declared types as a list; empty when unspecified."""
    if types is None or types is type(None):
        return []
    if not isinstance(types, list):
        types = [types]
    return [_as_type(t) for t in types]


_TYPE_NAMES = {
    "bool": UInt(1),
    "int8": Int(8),
    "int16": Int(16),
    "int32": Int(32),
    "uint8": UInt(8),
    "uint16": UInt(16),
    "uint32": UInt(32),
    "float16": Float(16),
    "float32": Float(32),
    "float64": Float(64),
}


def _parse_types(text: str) -> list:
    types = []
    for word in text.split(","):
        _require(word in _TYPE_NAMES, f"The value {word} cannot be parsed as a Type.")
        types.append(_TYPE_NAMES[word])
    return types


_TRUE_WORDS = {"true", "1", "yes", "on"}
_FALSE_WORDS = {"false", "0", "no", "off"}


def _parse_bool(name: str, value: Any) -> bool:
    # Halide 21 takes bool(value), so the text "false" is True; a word is
    # read for what it says here.
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
        _error(f"The value {value} cannot be parsed as a bool for GeneratorParam {name}.")
    return bool(value)


def _parse_number(name: str, kind: type, value: Any):
    # A ValueError, as Halide's (which calls int() / float()).
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"The value {value!r} cannot be parsed as {kind.__name__} for GeneratorParam {name}.") from None


# ---------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------


class _Requirement:
    """What a declared Input or Output must be: its types (one, or one per
    Tuple element of an Output) and its dimensionality (0 for scalars)."""

    def __init__(self, name: str, types: list, dimensions: int):
        self.name = _check_name(name)
        self.types = types
        self.dimensions = dimensions
        _require(
            len(types) > 0,
            f"No type has been specified for {name}. Try specifying one in code, "
            f"or by setting '{name}.type' as a GeneratorParam.",
        )
        _require(
            dimensions >= 0,
            f"No dimensionality has been specified for {name}. Try specifying one in code, "
            f"or by setting '{name}.dim' as a GeneratorParam.",
        )

    def check(self, types: object, dimensions: int):
        types = _type_list(types)
        _require(
            len(types) == len(self.types),
            f"Type mismatch for {self.name}: expected {len(self.types)} types but saw {len(types)}",
        )
        for i, (want, got) in enumerate(zip(self.types, types)):
            _require(want == got, f"Type mismatch for {self.name}:{i}: expected {want} saw {got}")
        _require(
            dimensions == self.dimensions,
            f"Dimensions mismatch for {self.name}: expected {self.dimensions} saw {dimensions}",
        )


class GeneratorParam:
    """A compile-time parameter of a Generator: a bool, int, float, str or
    hl.Type (or list of Types). The default's Python type decides how a
    value given by name (often text from the command line) is parsed."""

    def __init__(self, value: Any):
        self._value = value

    @staticmethod
    def _parse(name: str, default: Any, value: Any):
        if isinstance(default, bool):
            return _parse_bool(name, value)
        if isinstance(default, (int, float)):
            return _parse_number(name, type(default), value)
        if isinstance(default, str):
            return str(value)
        if isinstance(default, (Type, list)):
            if isinstance(value, (Type, list)):
                types = _type_list(value)
            else:
                types = _parse_types(str(value))
            # A single Type stays a single Type.
            return types[0] if isinstance(default, Type) and len(types) == 1 else types
        _error(f"GeneratorParam {name} has unsupported type {type(default)}")

    def _declaration(self):
        return [Int(32)], 0

    def _bound(self, name: str, requirement: _Requirement, value: Any):
        GeneratorParam._parse(name, self._value, self._value)
        if value is None:
            return self._value
        return GeneratorParam._parse(name, self._value, value)


class _Direction(enum.Enum):
    Input = 0
    Output = 1


class _Kind(enum.Enum):
    Constant = 0
    Scalar = 1
    Buffer = 2
    Function = 3


class ArgInfoDirection(enum.IntEnum):
    """Whether a Generator argument (an ``ArgInfo``) is an ``Input`` or an
    ``Output``."""

    Input = 0
    Output = 1


class ArgInfoKind(enum.IntEnum):
    """What a Generator argument (an ``ArgInfo``) is: a ``Scalar`` (an
    InputScalar), a ``Buffer`` (an InputBuffer or OutputBuffer) or a
    ``Function``."""

    Scalar = 0
    Function = 1
    Buffer = 2


def _attribute(slot: str, doc: str) -> property:
    """A read-write attribute stored in ``slot``, with a docstring."""
    return property(lambda self: getattr(self, slot), lambda self, value: setattr(self, slot, value), doc=doc)


class ArgInfo:
    """One Input or Output of a Generator, as its calling convention sees it."""

    __slots__ = ("_name", "_dir", "_kind", "_types", "_dimensions")

    name = _attribute("_name", "The name of the Input or Output.")
    dir = _attribute("_dir", "An ArgInfoDirection: Input or Output.")
    kind = _attribute("_kind", "An ArgInfoKind: Scalar, Buffer or Function.")
    types = _attribute("_types", "The list of its Types (one per Tuple element of an Output).")
    dimensions = _attribute("_dimensions", "Its number of dimensions (0 for a scalar).")

    def __init__(self, name="", dir=ArgInfoDirection.Input, kind=ArgInfoKind.Scalar, types=(), dimensions=0):
        self.name = name
        self.dir = dir
        self.kind = kind
        self.types = list(types)
        self.dimensions = dimensions

    def __repr__(self):
        return f"<ferrohalide.ArgInfo {self.name} {self.dir.name} {self.kind.name} {self.types} {self.dimensions}>"


class InputBuffer(ImageParam):
    """An input buffer of a Generator. Type and dimensions may be left as
    None, to be given by the ``<name>.type`` / ``<name>.dim`` params."""

    def __new__(cls, type: Optional[Type], dimensions: Optional[int]):
        if type is None or dimensions is None:
            return ImageParam.__new__(cls)
        return ImageParam.__new__(cls, _as_type(type), dimensions, _unique_name())

    def __init__(self, type: Optional[Type], dimensions: Optional[int]):
        self._types = _type_list(type)
        self._dimensions = -1 if dimensions is None else dimensions

    def _declaration(self):
        return self._types, self._dimensions

    def _arg_kind(self):
        return ArgInfoDirection.Input, ArgInfoKind.Buffer

    def _bound(self, name: str, r: _Requirement, value: Any):
        if value is None:
            return ImageParam(r.types[0], r.dimensions, name)
        _require(
            isinstance(value, (Buffer, ImageParam)),
            f"Input {name} requires an ImageParam or Buffer argument when using call(), but saw {value}",
        )
        _require(value.defined(), f"Cannot set the value for {name} to an undefined value.")
        if isinstance(value, Buffer):
            p = ImageParam(value.type(), value.dimensions(), name)
            p.set(value)
            value = p
        r.check([value.type()], value.dimensions())
        return value


class InputScalar(Param):
    """A scalar input of a Generator."""

    def __new__(cls, type: Optional[Type]):
        if type is None:
            return Param.__new__(cls, Int(32), _unique_name())
        return Param.__new__(cls, _as_type(type), _unique_name())

    def __init__(self, type: Optional[Type]):
        self._types = _type_list(type)

    def _declaration(self):
        return self._types, 0

    def _arg_kind(self):
        return ArgInfoDirection.Input, ArgInfoKind.Scalar

    def _bound(self, name: str, r: _Requirement, value: Any):
        if value is None:
            return Param(r.types[0], name)
        if isinstance(value, (bool, int, float)):
            p = Param(r.types[0], name)
            p.set(value)
            return p
        _require(
            isinstance(value, Param),
            f"Input {name} requires a Param (or scalar literal) argument when using call(), but saw {value}.",
        )
        r.check([value.type()], 0)
        return value


class OutputBuffer(Func):
    """An output of a Generator: a Func of the declared types (several for a
    Tuple) and dimensions."""

    def __new__(cls, types: Optional[Type], dimensions: Optional[int] = None):
        return Func.__new__(cls, _unique_name())

    def __init__(self, types: Optional[Type], dimensions: Optional[int] = None):
        self._types = _type_list(types)
        self._dimensions = -1 if dimensions is None else dimensions

    def _declaration(self):
        return self._types, self._dimensions

    def _arg_kind(self):
        return ArgInfoDirection.Output, ArgInfoKind.Buffer

    def _bound(self, name: str, r: _Requirement, value: Any):
        if value is None:
            return Func(r.types if len(r.types) > 1 else r.types[0], r.dimensions, name)
        _require(
            isinstance(value, (Buffer, Func)),
            f"Output {name} requires a Func or Buffer argument when using call(), but saw {value}",
        )
        _require(value.defined(), f"Cannot set the value for {name} to an undefined value.")
        if isinstance(value, Buffer):
            r.check([value.type()], value.dimensions())
            f = Func(r.types[0], r.dimensions, name)
            f[_] = value[_]
            return f
        r.check(value.types(), value.dimensions())
        return value


class OutputScalar(OutputBuffer):
    """A zero-dimensional output of a Generator."""

    def __new__(cls, types: Optional[Type]):
        return Func.__new__(cls, _unique_name())

    def __init__(self, types: Optional[Type]):
        super().__init__(types, 0)

    def _bound(self, name: str, r: _Requirement, value: Any):
        if value is None:
            return Func(r.types if len(r.types) > 1 else r.types[0], 0, name)
        _require(
            isinstance(value, Expr),
            f"Output {name} requires an Expr argument when using call(), but saw {value}",
        )
        r.check(value.type(), 0)
        f = Func(value.type(), 0, name)
        f[_] = value
        return f


_IO = (InputBuffer, InputScalar, OutputBuffer, OutputScalar)


# ---------------------------------------------------------------------------
# Contexts
# ---------------------------------------------------------------------------


class AutoschedulerParams:
    """``AutoschedulerParams(name="", extra=None)``: which autoscheduler to run
    (``"Mullapudi2016"``, ``"Adams2019"``, ``"Li2018"``; an empty name: none)
    and its settings, a dict of strings (e.g. ``{"parallelism": "16"}``), as
    given to ``Pipeline.apply_autoscheduler``."""

    __slots__ = ("_name", "_extra")

    name = _attribute("_name", "The name of the autoscheduler (an empty string: none).")
    extra = _attribute("_extra", "Its settings, a dict from str to str.")

    def __init__(self, name: str = "", extra: Optional[dict] = None):
        self.name = name
        self.extra = {str(k): str(v) for k, v in (extra or {}).items()}

    def __repr__(self):
        return "<ferrohalide.AutoschedulerParams>"


# Halide's autoscheduler plugins, by the name in their library file.
_PLUGINS = {"adams2019": "Adams2019", "li2018": "Li2018", "mullapudi2016": "Mullapudi2016"}


def load_plugin(lib_name: str) -> None:
    """Halide loads an autoscheduler plugin (a C++ shared library) here.
    ferrohalide cannot load Halide's libraries; its autoscheduling is built
    in and answers to the names of Halide's plugins, so naming one of those
    (``libautoschedule_adams2019.so``, ``autoschedule_li2018``, ...) is
    already satisfied. Any other library is an error."""
    _require(isinstance(lib_name, str), f"load_plugin() takes a library name, not {type(lib_name).__name__}")
    stem = os.path.basename(lib_name).split(".")[0].lower()
    if stem.startswith("lib"):
        stem = stem[3:]
    known = stem.startswith("autoschedule_") and stem[len("autoschedule_"):] in _PLUGINS
    if known:
        _require(
            os.path.dirname(lib_name) == "" or os.path.exists(lib_name),
            f"Error: Failed to load: {lib_name}\n",
        )
        return
    raise HalideError(
        f"Error: Failed to load: {lib_name}\nferrohalide cannot load C++ plugins; its autoscheduling is built in "
        f"and answers to the names {', '.join(sorted(_PLUGINS.values()))} "
        "(their plugin libraries need no loading).\n"
    )


_active_context: ContextVar = ContextVar("ferrohalide_generator_context", default=None)


class GeneratorContext:
    """The target (and autoscheduler) Generators are built for. Entered with
    ``with``, it is the context new Generator instances use."""

    def __init__(self, target: Target, autoscheduler_params: Optional[AutoschedulerParams] = None):
        _require(isinstance(target, Target), f"GeneratorContext needs a Target, but saw {target}")
        self._target = target
        self._autoscheduler = autoscheduler_params or AutoschedulerParams()
        self._tokens = []

    def target(self) -> Target:
        """The Target generators built in this context are compiled for."""
        return self._target

    def autoscheduler_params(self) -> AutoschedulerParams:
        """The AutoschedulerParams generators built in this context use."""
        return self._autoscheduler

    def __enter__(self):
        self._tokens.append(_active_context.set(self))
        return self

    def __exit__(self, *exc):
        _active_context.reset(self._tokens.pop())
        return False

    def __repr__(self):
        return f"<ferrohalide.GeneratorContext {self._target}>"


def active_generator_context() -> GeneratorContext:
    """The GeneratorContext entered most recently with ``with`` (inside
    ``generate()``, the generator's own); a HalideError if there is none."""
    context = _active_context.get()
    _require(isinstance(context, GeneratorContext), "There is no active GeneratorContext")
    return context


# ---------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------


class _Phase(enum.IntEnum):
    created = 0
    params_declared = 1
    params_bound = 2
    io_declared = 3
    configured = 4
    io_bound = 5
    built = 6


def _class_attributes(cls):
    """(name, value) of cls and its bases, bases first, each in declaration
    order (dir() would sort them, and order is the calling convention)."""
    for base in cls.__bases__:
        yield from _class_attributes(base)
    yield from cls.__dict__.items()


class Generator:
    """Base class of Python Generators (``@hl.generator`` adds it). A
    generator is created in an active GeneratorContext (or with
    ``call()`` / ``create_callable_from_generator``); subclasses define
    ``generate()`` and may define ``configure()``."""

    # ---- what generate() and configure() use

    def context(self) -> GeneratorContext:
        """A GeneratorContext with this generator's target and autoscheduler
        settings, e.g. to build other generators the same way."""
        return GeneratorContext(self._target, self._autoscheduler)

    def target(self) -> Target:
        """The Target the generator is built for."""
        return self._target

    def autoscheduler(self) -> AutoschedulerParams:
        """The AutoschedulerParams the generator is built with (set by the
        ``autoscheduler`` and ``autoscheduler.*`` GeneratorParams; an empty
        name means none)."""
        return self._autoscheduler

    def using_autoscheduler(self) -> bool:
        """Whether an autoscheduler is named, in which case the pipeline is
        autoscheduled when compiled ahead of time, and ``generate()`` may
        skip its own schedule."""
        return bool(self._autoscheduler.name)

    def natural_vector_size(self, type: Type) -> int:
        """The natural vector size of ``type`` on the generator's target (see
        ``Target.natural_vector_size``)."""
        return self._target.natural_vector_size(type)

    def add_requirement(self, condition: Expr, *args) -> None:
        """Make the pipeline check the bool Expr ``condition`` before
        computing anything and fail with ``args`` as its error message if it
        is false (see ``Pipeline.add_requirement``). Call it before the
        pipeline is built, e.g. in ``generate()``."""
        _require(self._phase < _Phase.built, "add_requirement() must be called before the pipeline is built.")
        self._pipeline_requirements.append((condition, list(args)))

    def allow_out_of_order_inputs_and_outputs(self) -> bool:
        """Override to return True to declare Inputs after Outputs without a
        warning (the calling convention always puts all Inputs first). The
        default returns False."""
        return False

    def configure(self):
        """Override to adjust the generator once its GeneratorParams are
        known and before its Inputs and Outputs are bound, e.g. to call
        ``add_input`` / ``add_output``. The default does nothing."""
        pass

    def generate(self):
        """Override to define the Outputs (and schedule them) from the
        Inputs and GeneratorParams. The default raises a HalideError."""
        _error(f"Generator {self._get_name()} does not define generate().")

    def add_input(self, name: str, io) -> None:
        """Declare another Input (an InputBuffer or InputScalar) named
        ``name``, after those of the class; it becomes an attribute of the
        generator. Only allowed in ``configure()``."""
        self._add_in_configure("add_input", name, io, (InputBuffer, InputScalar), self._inputs)

    def add_output(self, name: str, io) -> None:
        """Declare another Output (an OutputBuffer or OutputScalar) named
        ``name``, after those of the class; it becomes an attribute of the
        generator. Only allowed in ``configure()``."""
        self._add_in_configure("add_output", name, io, (OutputBuffer, OutputScalar), self._outputs)

    # ---- entry points

    def __init__(self, generator_params: Optional[dict] = None):
        context = active_generator_context()
        object.__setattr__(self, "_requirements", {})
        self._target = context.target()
        self._autoscheduler = AutoschedulerParams(
            context.autoscheduler_params().name, dict(context.autoscheduler_params().extra)
        )
        self._phase = _Phase.created
        self._params = {}  # name -> GeneratorParam
        self._inputs = {}  # name -> declaration
        self._outputs = {}
        self._arginfos_in = []
        self._arginfos_out = []
        self._unknown_params = {}  # values for params not declared (yet)
        self._bindings = {}  # input name -> value given to call()
        self._configuring = 0
        self._pipeline = None
        self._pipeline_requirements = []
        self._advance(_Phase.params_declared)
        if generator_params:
            _require(isinstance(generator_params, dict), "generator_params must be a dict")
            for k, v in generator_params.items():
                self._set_generatorparam_value(k, v)

    @classmethod
    def call(cls, *args, **kwargs):
        """Build the generator with these inputs (Buffers, ImageParams,
        Params, Python numbers, by position or name) and return its output
        Func (a tuple of them for several)."""
        generator = cls()
        params = kwargs.pop("generator_params", {})
        _require(isinstance(params, dict), "generator_params must be a dict")
        for k, v in params.items():
            generator._set_generatorparam_value(k, v)
        generator._advance(_Phase.configured)
        inputs = generator._arginfos_in
        name = generator._get_name()
        _require(
            len(args) <= len(inputs),
            f"Generator '{name}' allows at most {len(inputs)} positional args, but {len(args)} were specified.",
        )
        given = []
        for info, value in zip(inputs, args):
            given.append(info.name)
            generator._bind_input(info.name, [value])
        known = [a.name for a in inputs]
        for k, v in kwargs.items():
            _require(k in known, f"Unknown input '{k}' specified via keyword argument.")
            _require(k not in given, f"Input {k} specified multiple times.")
            given.append(k)
            generator._bind_input(k, [v])
        _require(
            len(given) == len(inputs),
            f"Generator '{name}' requires {len(inputs)} args, but {len(given)} were specified.",
        )
        generator._build_pipeline()
        outputs = [generator._get_output_func(a.name) for a in generator._arginfos_out]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def compile_to_callable(self):
        """A Callable taking the inputs in order, then the output buffers."""
        pipeline = self._build_pipeline()
        arguments = [self._get_input_parameter(a.name) for a in self._arginfos_in]
        return pipeline.compile_to_callable(arguments, self._target)

    def __setattr__(self, name, value):
        # Declared names are replaced by the generator itself; the user may
        # only assign them while configuring.
        requirements = self.__dict__.get("_requirements")
        phase = self.__dict__.get("_phase")
        if requirements and name in requirements and phase not in (
            _Phase.params_declared,
            _Phase.configured,
        ):
            raise AttributeError(f"Invalid write to field '{name}'")
        object.__setattr__(self, name, value)

    # ---- the phases

    def _advance(self, phase: _Phase):
        steps = [
            (_Phase.params_declared, self._declare_params),
            (_Phase.params_bound, self._bind_params),
            (_Phase.io_declared, self._declare_io),
            (_Phase.configured, self._configure),
            (_Phase.io_bound, self._bind_io),
        ]
        for step, run in steps:
            if step <= phase and self._phase < step:
                run()
                self._phase = step

    def _declare_params(self):
        for name, gp in _class_attributes(type(self)):
            if isinstance(gp, GeneratorParam):
                self._declare(name, gp, self._params, None)
        self._phase = _Phase.params_declared
        for k, v in getattr(self, "_halide_alias_generator_params", {}).items():
            self._set_generatorparam_value(k, v)

    def _bind_params(self):
        self._replace_all(self._params)

    def _declare_io(self):
        outputs_seen = False
        for name, io in _class_attributes(type(self)):
            if not isinstance(io, _IO):
                continue
            is_input = isinstance(io, (InputBuffer, InputScalar))
            if is_input and outputs_seen and not self.allow_out_of_order_inputs_and_outputs():
                warnings.warn(
                    "Generators always order all Inputs before all Outputs in the calling convention; "
                    f"Generator {self._get_name()} declares them in a different order, so calls may not "
                    "see the argument order they expect. (Override "
                    "allow_out_of_order_inputs_and_outputs() to accept this.)"
                )
            outputs_seen |= not is_input
            self._declare(name, io, self._inputs if is_input else self._outputs,
                          self._arginfos_in if is_input else self._arginfos_out)
        _require(
            not self._unknown_params,
            f"Generator {self._get_name()} has no GeneratorParam(s) named: {list(self._unknown_params)}",
        )

    def _configure(self):
        self._configuring += 1
        try:
            self.configure()
        finally:
            self._configuring -= 1
        _require(len(self._outputs) > 0, f"Generator '{self._get_name()}' must declare at least one output.")

    def _bind_io(self):
        self._replace_all(self._inputs)
        self._replace_all(self._outputs)

    def _replace_all(self, declarations: dict):
        for name, declaration in declarations.items():
            value = self._bindings.pop(name, None)
            object.__setattr__(self, name, declaration._bound(name, self._requirements[name], value))

    def _declare(self, name: str, io, table: dict, arginfos: Optional[list]):
        _check_name(name)
        _require(
            name not in self._requirements,
            f"The name '{name}' is used more than once in Generator {self._get_name()}.",
        )
        types, dimensions = self._types_from_params(name, *io._declaration())
        requirement = _Requirement(name, types, dimensions)
        self._requirements[name] = requirement
        table[name] = io
        if arginfos is not None:
            arginfos.append(ArgInfo(name, *io._arg_kind(), types, dimensions))

    def _types_from_params(self, name: str, types: list, dimensions: int):
        type_param = f"{name}.type"
        if type_param in self._unknown_params:
            _require(
                len(types) == 0,
                f"Cannot set the GeneratorParam {type_param} for {self._get_name()} "
                "because the value is explicitly specified in the Python source.",
            )
            types = GeneratorParam._parse(type_param, [], self._unknown_params.pop(type_param))
        dim_param = f"{name}.dim"
        if dim_param in self._unknown_params:
            _require(
                dimensions == -1,
                f"Cannot set the GeneratorParam {dim_param} for {self._get_name()} "
                "because the value is explicitly specified in the Python source.",
            )
            dimensions = GeneratorParam._parse(dim_param, 0, self._unknown_params.pop(dim_param))
        return types, dimensions

    def _add_in_configure(self, method: str, name: str, io, kinds, table: dict):
        _require(self._configuring > 0, f"Can only call {method}() from the configure() method.")
        _require(
            not hasattr(self, name),
            f"Cannot call {method}('{name}') because the class already has a member of that name.",
        )
        _require(isinstance(io, kinds), f"Cannot call {method}() with an object of type '{type(io)}'.")
        arginfos = self._arginfos_in if table is self._inputs else self._arginfos_out
        self._declare(name, io, table, arginfos)

    # ---- what the command line and create_callable_from_generator use

    def _get_name(self) -> str:
        return self._halide_registered_name

    def _get_arginfos(self) -> list:
        self._advance(_Phase.configured)
        return self._arginfos_in + self._arginfos_out

    def _set_generatorparam_value(self, name: str, value: Any):
        _require(name != "target", f"The GeneratorParam named {name} cannot be set by set_generatorparam_value.")
        _require(
            self._phase == _Phase.params_declared,
            f"GeneratorParam {name} cannot be set after the Generator has started building.",
        )
        if name in self._params:
            old = self._params[name]._value
            # A fresh GeneratorParam: the class's one is shared by instances.
            self._params[name] = GeneratorParam(GeneratorParam._parse(name, old, value))
        elif name == "autoscheduler":
            _require(not self._autoscheduler.name, f"The GeneratorParam {name} cannot be set more than once")
            self._autoscheduler.name = str(value)
        elif name.startswith("autoscheduler."):
            key = name[len("autoscheduler."):]
            _require(key not in self._autoscheduler.extra, f"The GeneratorParam {name} cannot be set more than once")
            self._autoscheduler.extra[key] = str(value)
        else:
            self._unknown_params[name] = value

    def _build_pipeline(self) -> Pipeline:
        self._advance(_Phase.io_bound)
        _require(self._pipeline is None, f"Generator {self._get_name()} has already been built.")
        with self.context():
            self.generate()
        funcs = []
        for name in self._outputs:
            f = getattr(self, name)
            _require(isinstance(f, Func) and f.defined(), f"Output '{name}' was not defined.")
            self._requirements[name].check(f.types(), f.dimensions())
            funcs.append(f)
        pipeline = Pipeline(funcs)
        for condition, message in self._pipeline_requirements:
            pipeline.add_requirement(condition, *message)
        self._pipeline = pipeline
        self._phase = _Phase.built
        return pipeline

    def _build_module_pipeline(self) -> Pipeline:
        """The Pipeline an ahead-of-time build compiles: built, then
        autoscheduled if the generator asks for it (as Halide's
        build_module does; compile_to_callable does not autoschedule)."""
        pipeline = self._build_pipeline()
        if self.using_autoscheduler():
            pipeline.apply_autoscheduler(self._target, self._autoscheduler)
        return pipeline

    def _get_input_parameter(self, name: str):
        _require(self._phase == _Phase.built and name in self._inputs, f"Unknown input: {name}")
        return getattr(self, name)

    def _get_output_func(self, name: str) -> Func:
        _require(self._phase == _Phase.built and name in self._outputs, f"Unknown output: {name}")
        return getattr(self, name)

    def _bind_input(self, name: str, values: list):
        _require(self._phase < _Phase.io_bound, f"Input {name} cannot be bound after the inputs are.")
        self._advance(_Phase.configured)
        _require(len(values) == 1, f"Too many values specified for input: {name}")
        _require(name in self._inputs, f"There is no input with the name: {name}")
        declaration = self._inputs[name]
        self._bindings[name] = declaration._bound(name, self._requirements[name], values[0])


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

_registry: dict = {}


def _registered_names() -> list:
    return list(_registry)


def _create(name: str, context: GeneratorContext) -> Optional[Generator]:
    cls = _registry.get(name)
    if not isclass(cls):
        return None
    with context:
        return cls()


def _check_name_free(name: str):
    # Interactive sessions (and notebooks) redefine generators freely.
    if hasattr(sys, "ps1"):
        return
    _require(name not in _registry, f"The Generator name {name} is already in use.")


def _qualified_name(cls) -> str:
    module = cls.__module__
    if module == "__main__":
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def generator(name: str = ""):
    """Class decorator registering a Generator under `name` (default: the
    class's qualified name)."""

    def register(cls):
        _require(isclass(cls), "@generator can only be used on classes.")
        registered = name or _qualified_name(cls)
        _check_name_free(registered)
        bases = (cls,) if issubclass(cls, Generator) else (cls, Generator)
        new_cls = type(cls.__name__, bases, {"_halide_registered_name": registered})
        _registry[registered] = new_cls
        return new_cls

    return register


def alias(**aliases):
    """Class decorator (above @generator) registering the generator again
    under other names, each with its own GeneratorParam values."""

    def register(cls):
        for alias_name, params in aliases.items():
            _check_name(alias_name)
            _require(hasattr(cls, "_halide_registered_name"), "@alias can only be used in conjunction with @generator.")
            _check_name_free(alias_name)
            _require(
                isinstance(params, dict),
                f"The Generator alias {alias_name} specifies something other than a dict.",
            )
            _registry[alias_name] = type(
                alias_name,
                (cls,),
                {"_halide_registered_name": alias_name, "_halide_alias_generator_params": params},
            )
        return cls

    return register


def create_callable_from_generator(context, name: str, generator_params: Optional[dict] = None):
    """Build the registered generator `name` for `context` (a
    GeneratorContext or a Target) and compile it to a Callable."""
    if isinstance(context, Target):
        context = GeneratorContext(context)
    _require(isinstance(context, GeneratorContext), f"Expected a GeneratorContext or Target, but saw {context}")
    g = _create(name, context)
    _require(g is not None, f"Generator {name} not found.")
    for k, v in (generator_params or {}).items():
        g._set_generatorparam_value(k, v)
    return g.compile_to_callable()
