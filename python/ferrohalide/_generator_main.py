"""``hl.main()``: the command line of a file of Python Generators, as Halide's
generator driver takes it::

    python brighten.py -g brighten -o out -e object,c_header target=host gain=3.0
    python brighten.py -r runtime -o out -e object target=host

The flags and their defaults are Halide's; errors (a bad flag, an unknown
generator, GeneratorParam or emit kind) print a message and the usage text
to stderr and exit with status 1 instead of raising. Orchestration only:
the generator builds a Pipeline and ``Pipeline.compile_to`` writes the
files.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Optional

from ._core import (
    HalideError,
    OutputFileType,
    Target,
    TargetOS,
    _compile_multitarget,
    _runtime_target,
    compile_standalone_runtime,
)
from . import _generator

USAGE = """\
usage: python GENERATOR_FILE.py
         [-g GENERATOR_NAME] [-f FUNCTION_NAME] [-n FILE_BASE_NAME]
         [-o OUTPUT_DIR] [-e EMIT_KINDS] [-r RUNTIME_NAME]
         [-d 0|1] [-p PLUGINS] [-t SECONDS] [-v 0|1]
         target=TARGET[,TARGET...] [GENERATOR_PARAM=VALUE ...]

  -g  the registered generator to build (see the list printed without -g)
  -f  the name of the compiled function (default: the generator's name)
  -n  the base name of the files written (default: the function name)
  -o  the directory the files go to (required)
  -e  comma-separated kinds of file to write, from: assembly, bitcode,
      c_header, function_info_header, llvm_assembly, object,
      python_extension, registration, schedule, static_library, stmt,
      stmt_html, conceptual_stmt, conceptual_stmt_html, featurization,
      device_code (default: c_header,registration,static_library;
      the environment variable HL_EXTRA_OUTPUTS adds more)
  -r  also write a standalone runtime with this name (only the object,
      static_library and python_extension kinds apply to it; the last is
      the definition of a Python extension module without functions)
  -d  1 builds a gradient module (not supported by ferrohalide)
  -p  autoscheduler plugins to load (Halide's names; ferrohalide's are built in)
  -t  stop with an error after this many seconds (0: no limit)
  -v  1 prints the path of every file written
  target=  the target(s) to compile for, e.g. host or x86-64-linux-avx2
  NAME=VALUE  sets the generator's GeneratorParam NAME (also NAME.type and
              NAME.dim of inputs and outputs left unspecified, and
              autoscheduler.* settings)
"""

_FLAGS = {"-d": "0", "-e": "", "-f": "", "-g": "", "-n": "", "-o": "", "-p": "", "-r": "", "-t": "0", "-v": "0"}

_DEFAULT_EMIT = "c_header,registration,static_library"

# Halide's legacy names for some kinds.
_ALIASES = {"o": "object", "h": "c_header", "html": "stmt_html", "cpp": "c_source", "py.c": "python_extension"}

# (kind, file suffix).
_SUFFIXES = {
    "assembly": ".s",
    "bitcode": ".bc",
    "c_header": ".h",
    "c_source": ".halide_generated.cpp",
    "compiler_log": ".halide_compiler_log",
    "cpp_stub": ".stub.h",
    "featurization": ".featurization",
    "function_info_header": ".function_info.h",
    "hlpipe": ".hlpipe",
    "llvm_assembly": ".ll",
    "object": ".o",
    "python_extension": ".py.cpp",
    "pytorch_wrapper": ".pytorch.h",
    "registration": ".registration.cpp",
    "schedule": ".schedule.h",
    "static_library": ".a",
    "stmt": ".stmt",
    "conceptual_stmt": ".conceptual.stmt",
    "stmt_html": ".stmt.html",
    "conceptual_stmt_html": ".conceptual.stmt.html",
    "device_code": ".device_code",
}


class _UsageError(Exception):
    """A command-line mistake: the message, then the usage text."""


class _Failure(Exception):
    """Building failed: the message alone."""


def _parse(argv: list) -> tuple:
    flags = dict(_FLAGS)
    params = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            name, eq, value = arg.partition("=")
            if not eq or not name or not value or "=" in value:
                raise _UsageError(f"Expected NAME=VALUE, but saw '{arg}'.")
            if name in params:
                raise _UsageError(f"'{name}' is given twice.")
            params[name] = value
        elif arg in flags:
            if i + 1 >= len(argv):
                raise _UsageError(f"The flag {arg} needs a value.")
            flags[arg] = argv[i + 1]
            i += 1
        elif arg == "-s":
            raise _UsageError("-s is no longer supported for setting the autoscheduler; use autoscheduler.name=NAME.")
        else:
            raise _UsageError(f"Unknown flag: {arg}")
        i += 1
    return flags, params


def _emit_kinds(text: str, default: str = _DEFAULT_EMIT) -> list:
    extra = os.environ.get("HL_EXTRA_OUTPUTS", "")
    if not text:
        text = default
    if extra:
        text += "," + extra
    kinds = []
    for word in text.split(","):
        word = word.strip()
        name = _ALIASES.get(word, word)
        if name not in _SUFFIXES:
            raise _UsageError(
                f"Unrecognized emit option: {word} is not one of [{' '.join(sorted(_SUFFIXES))}]."
            )
        if name not in kinds:
            kinds.append(name)
    return kinds


def _outputs(base: str, kinds: list, target) -> dict:
    """The file of each kind; Windows objects and libraries are `.obj` and
    `.lib`, as Halide names them."""
    windows = target.os == TargetOS.Windows
    suffixes = dict(_SUFFIXES, object=".obj", static_library=".lib") if windows else _SUFFIXES
    return {getattr(OutputFileType, k): base + suffixes[k] for k in kinds}


def _check_leaf(what: str, name: str):
    if "/" in name or "\\" in name:
        raise _UsageError(f"The {what} '{name}' must be a file name, not a path.")


def _run(argv: list, log) -> None:
    flags, params = _parse(argv)
    kinds = _emit_kinds(flags["-e"])
    names = _generator._registered_names()
    generator_name, runtime_name = flags["-g"], flags["-r"]
    if not names and not runtime_name:
        raise _UsageError("No generators have been registered and no standalone runtime (-r) was asked for.")
    if not generator_name and not runtime_name:
        listed = "\n".join(f"    {n}" for n in names) or "    <none>"
        raise _UsageError(f"Either -g <name> or -r <name> must be given; the generators are:\n{listed}")
    if flags["-d"] not in ("0", ""):
        raise _Failure("Building gradient modules (-d 1) is not implemented in ferrohalide yet.")
    for plugin in [p for p in flags["-p"].split(",") if p]:
        try:
            _generator.load_plugin(plugin)
        except HalideError as e:
            raise _Failure(str(e).strip()) from None
    output_dir = flags["-o"]
    if not output_dir:
        raise _UsageError("An output directory (-o) is required.")
    target_text = params.pop("target", "")
    if not target_text:
        raise _UsageError("A target (target=...) is required, e.g. target=host.")
    target_strings = target_text.split(",")
    try:
        targets = [Target(t) for t in target_strings]
    except HalideError as e:
        raise _Failure(str(e).strip()) from None
    try:
        timeout = float(flags["-t"])
    except ValueError:
        raise _UsageError(f"-t takes a number of seconds, not '{flags['-t']}'.") from None
    if timeout > 0 and hasattr(signal, "SIGALRM"):

        def expired(signum, frame):
            raise _Failure(f"Timed out after {flags['-t']} seconds.")

        signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    verbose = flags["-v"] not in ("0", "")
    os.makedirs(output_dir, exist_ok=True)

    if runtime_name:
        _check_leaf("runtime name", runtime_name)
        # Several targets share one runtime with the features they all have.
        written = compile_standalone_runtime(
            _outputs(os.path.join(output_dir, runtime_name), kinds, targets[-1]), _runtime_target(targets)
        )
        if verbose:
            for path in written.values():
                log(f"Generated file: {path}")

    if generator_name:
        function_name = flags["-f"] or generator_name
        base_name = flags["-n"] or function_name.split("::")[-1]
        _check_leaf("function name", function_name)
        _check_leaf("file base name", base_name)
        if generator_name not in names:
            listed = "\n".join(f"    {n}" for n in names)
            raise _Failure(f"Generator not found: {generator_name}\nDid you mean:\n{listed}")

        def module_for(name, target):
            # A fresh generator per target, as Halide builds one per target.
            generator = _generator._create(generator_name, _generator.GeneratorContext(target))
            for param, value in params.items():
                generator._set_generatorparam_value(param, value)
            pipeline = generator._build_module_pipeline()
            arguments = [generator._get_input_parameter(a.name) for a in generator._arginfos_in]
            return pipeline.compile_to_module(arguments, name, target)

        outputs = _outputs(os.path.join(output_dir, base_name), kinds, targets[-1])
        if len(targets) == 1:
            module_for(function_name, targets[0]).compile(outputs)
        else:
            _compile_multitarget(function_name, outputs, targets, [], module_for)
        if verbose:
            for path in outputs.values():
                log(f"Generated file: {path}")

    if timeout > 0 and hasattr(signal, "SIGALRM"):
        signal.setitimer(signal.ITIMER_REAL, 0)


def main(argv: Optional[list] = None) -> None:
    """Run the generator command line on ``argv`` (default ``sys.argv``)."""
    argv = list(sys.argv if argv is None else argv)
    try:
        _run(argv, print)
    except _UsageError as e:
        sys.stderr.write(f"Error: {e}\n\n{USAGE}")
        raise SystemExit(1) from None
    except (_Failure, HalideError, ValueError) as e:
        text = str(e).strip()
        if not text.startswith("Error"):
            text = "Error: " + text
        sys.stderr.write(text + "\n")
        raise SystemExit(1) from None
