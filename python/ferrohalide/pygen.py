"""Plain pipeline scripts as generator-style command-line tools, in the
style of the Hexagon SDK's `pygen` helper.

A script builds its pipeline at the top level and ends with
`pygen.compile(output, inputs)`; run with a generator's flags, it writes
the requested files::

    python dilate3x3.py -g dilate3x3 -o ./dilate3x3.o -e o,h -f dilate3x3 \\
        target=arm-64-linux use_parallel_sched=false

- `get_params()`: the command line's parameters, as a dict: "target" (an
  `hl.Target`, `host` by default) and each parameter declared with
  `add_param`, parsed to its type (or its default when not given).
- `add_param(name, type, default)`: declares a user parameter (`bool`,
  `int`, `float` or `str`), set on the command line as `name=value`.
- `compile(output, inputs)`: compiles `output` (a Func, a list of Funcs or
  a Pipeline) with the arguments `inputs` (ImageParams and Params, in
  order) into the files `-e` asks for (Halide's kind names or the short
  ones: `o`, `h`, ...; default `o,h`). `-o` is the output directory, or a
  file path whose name, less its suffix, is the files' base name; `-n` sets
  the base name, `-f` the function's name (default: `-g`, else the
  script's name).

A mistake on the command line (an unknown flag or parameter, a value that
is not of its parameter's type) prints an error and exits with status 1,
as a generator's command line does.

`import pygen` works too (ferrohalide installs a `pygen` module that is
this one), so the SDK's scripts run with only their `import halide` line
changed.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Optional

from ._core import HalideError, Pipeline, Target
from ._generator_main import _FLAGS, _emit_kinds, _outputs, _parse, _UsageError

__all__ = ["add_param", "compile", "get_params"]

_USAGE = """\
usage: python SCRIPT.py [-g NAME] [-f FUNCTION_NAME] [-n FILE_BASE_NAME]
         [-o OUTPUT_DIR_OR_FILE] [-e EMIT_KINDS] [-v 0|1]
         [target=TARGET] [PARAM=VALUE ...]
"""

# The flags a script takes (the generator command line's -d, -p, -r and -t
# have no meaning here).
_PYGEN_FLAGS = ("-e", "-f", "-g", "-n", "-o", "-v")

_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


class _State:
    def __init__(self) -> None:
        self.parsed: Optional[tuple] = None
        self.declared: dict = {}  # name -> (type, default)
        self.params: dict = {}


_state = _State()


def _fail(message: str, usage: bool = False) -> None:
    sys.stderr.write(f"Error: {message}\n" + (f"\n{_USAGE}" if usage else ""))
    raise SystemExit(1)


def _command_line() -> tuple:
    """(flags, name=value params) of sys.argv, parsed once."""
    if _state.parsed is None:
        try:
            flags, raw = _parse(list(sys.argv))
        except _UsageError as e:
            _fail(str(e), usage=True)
        for flag in _FLAGS:
            if flag not in _PYGEN_FLAGS and flags[flag] != _FLAGS[flag]:
                _fail(f"The flag {flag} is not supported by pygen scripts.", usage=True)
        _state.parsed = (flags, raw)
    return _state.parsed


def _convert(name: str, kind: type, text: str) -> Any:
    if kind is bool:
        value = _BOOL_WORDS.get(text.strip().lower())
        if value is None:
            _fail(f"Parameter {name} must be true or false, not '{text}'.")
        return value
    try:
        return kind(text)
    except (TypeError, ValueError):
        _fail(f"Parameter {name} must be of type {kind.__name__}, not '{text}'.")


def add_param(name: str, kind: type, default: Any) -> None:
    """Declare the user parameter `name` of type `kind` (bool, int, float
    or str) with `default`; the command line sets it as `name=value`."""
    if kind not in (bool, int, float, str):
        raise TypeError(f"pygen.add_param: the type of {name} must be bool, int, float or str, not {kind!r}")
    if name == "target" or name in _state.declared:
        raise ValueError(f"pygen.add_param: parameter {name} is already declared")
    _state.declared[name] = (kind, default)
    _, raw = _command_line()
    _state.params[name] = _convert(name, kind, raw[name]) if name in raw else default


def get_params() -> dict:
    """The command line's parameters: "target" and every declared one."""
    _, raw = _command_line()
    if "target" not in _state.params:
        text = raw.get("target", "host")
        try:
            _state.params["target"] = Target(text)
        except (HalideError, ValueError) as e:
            _fail(f"Invalid target '{text}': {e}")
    return _state.params


def compile(output, inputs) -> None:
    """Compile `output` with the arguments `inputs` into the files the
    command line asks for."""
    flags, raw = _command_line()
    target = get_params()["target"]
    unknown = sorted(set(raw) - set(_state.declared) - {"target"})
    if unknown:
        known = ", ".join(sorted(_state.declared)) or "none"
        _fail(f"Unknown parameter(s): {', '.join(unknown)} (declared with pygen.add_param: {known}).")
    try:
        kinds = _emit_kinds(flags["-e"], default="object,c_header")
    except _UsageError as e:
        _fail(str(e))
    script = os.path.splitext(os.path.basename(sys.argv[0] or "pipeline"))[0]
    function_name = flags["-f"] or flags["-g"] or script
    out = flags["-o"] or "."
    directory, base = out, ""
    if not os.path.isdir(out) and not out.endswith(os.sep):
        stem, suffix = os.path.splitext(out)
        if suffix:
            directory, base = os.path.dirname(stem) or ".", os.path.basename(stem)
    base = flags["-n"] or base or function_name.split("::")[-1]
    os.makedirs(directory, exist_ok=True)
    outputs = _outputs(os.path.join(directory, base), kinds, target)
    pipeline = output if isinstance(output, Pipeline) else Pipeline(output if isinstance(output, list) else [output])
    try:
        pipeline.compile_to(outputs, list(inputs), function_name, target)
    except HalideError as e:
        text = str(e).strip()
        _fail(text[len("Error:"):].strip() if text.startswith("Error:") else text)
    if flags["-v"] not in ("", "0"):
        for path in outputs.values():
            print(f"Generated file: {path}")
