"""``python -m ferrohalide build``: an importable Python extension straight
from a file of Generators, with no build system::

    python -m ferrohalide build brighten.py                 # every generator in it
    python -m ferrohalide build filters.py -g blur -g sharpen -m filters -o build
    python -m ferrohalide build brighten.py target=host-avx2 gain=3.0

Each generator becomes a function of the module (named after it), compiled
ahead of time for the target (default: ``HL_TARGET`` or the host); the
runtime is compiled in once. The module is built with the system C++
compiler (``$CXX``, else c++, g++, clang++) against Python's headers and
ferrohalide's ``HalideRuntime.h``, and written to the output directory
(default: the current one) as ``<module><extension suffix>``, ready for
``import <module>``.
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from typing import Optional

from . import _generator

USAGE = """\
usage: python -m ferrohalide build GENERATOR_FILE.py [-g NAME ...] [-m MODULE]
           [-o OUTPUT_DIR] [target=TARGET] [GENERATOR_PARAM=VALUE ...]

  -g  a generator of the file to include (repeatable; default: all of them)
  -m  the module's name (default: the only generator's name, else the file's)
  -o  where the module goes (default: the current directory)
  target=      what to compile for (default: HL_TARGET or the host)
  NAME=VALUE   a GeneratorParam, given to every generator that takes it (a
               declared GeneratorParam, or IO.type / IO.dim of an input or
               output IO whose type or dimensions the source leaves open)
  GEN:NAME=VALUE  a GeneratorParam of generator GEN only
"""


class BuildError(Exception):
    pass


def _cxx() -> list:
    for candidate in [os.environ.get("CXX", ""), "c++", "g++", "clang++", "clang++-19"]:
        if candidate and shutil.which(candidate.split()[0]):
            return candidate.split()
    raise BuildError("No C++ compiler found (set CXX, or install g++ or clang++).")


def _load_generators(path: str) -> list:
    """Run the generator file as its own program would, without its
    command line; return the names of the generators it registered."""
    from . import _generator_main

    before = set(_generator._registered_names())
    saved_main = _generator_main.main
    import ferrohalide

    def no_command_line(argv=None):
        return None

    ferrohalide.main = no_command_line
    saved_argv = sys.argv
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved_argv
        sys.path.pop(0)
        ferrohalide.main = saved_main
    return [n for n in _generator._registered_names() if n not in before]


def _takes(generator, name: str) -> bool:
    """Does `generator` take the GeneratorParam `name` (see USAGE)?"""
    if name in generator._params or name == "autoscheduler" or name.startswith("autoscheduler."):
        return True
    io, _, part = name.rpartition(".")
    declared = getattr(type(generator), io, None)
    if part not in ("type", "dim") or not hasattr(declared, "_declaration"):
        return False
    types, dims = declared._declaration()
    return (part == "type" and not types) or (part == "dim" and dims == -1)


def build(
    path: str,
    generators: Optional[list] = None,
    module: str = "",
    output_dir: str = ".",
    target=None,
    params: Optional[dict] = None,
    log=print,
) -> str:
    """Build the extension module; returns its file's path."""
    from ._core import Target, get_target_from_environment, compile_standalone_runtime, OutputFileType
    import ferrohalide

    if not os.path.exists(path):
        raise BuildError(f"No such file: {path}")
    found = _load_generators(path)
    names = list(generators or found)
    if not names:
        raise BuildError(f"{path} registers no generators.")
    for n in names:
        if n not in _generator._registered_names():
            raise BuildError(f"{path} has no generator named {n} (it has: {', '.join(found) or 'none'}).")
    if not module:
        module = names[0] if len(names) == 1 else os.path.splitext(os.path.basename(path))[0]
    for k in params:
        owner, colon, _ = k.rpartition(":")
        if colon and owner not in names:
            raise BuildError(f"{k}: there is no generator {owner} in this build.")
    if not module.isidentifier():
        raise BuildError(f"'{module}' is not a valid module name (give one with -m).")
    for n in names:
        if not n.isidentifier():
            raise BuildError(f"The generator name '{n}' is not a valid Python function name.")
    if target is None:
        target = get_target_from_environment()
    elif isinstance(target, str):
        target = Target(target)
    code_target = target.with_feature(ferrohalide.TargetFeature.NoRuntime)
    params = dict(params or {})
    os.makedirs(output_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="ferrohalide-build-")
    try:
        sources, objects = [], []
        for n in names:
            g = _generator._create(n, _generator.GeneratorContext(code_target))
            assert g is not None, n  # names come from the registry
            for k, v in params.items():
                owner, colon, name = k.rpartition(":")
                if colon and owner != n:
                    continue
                if colon or len(names) == 1 or _takes(g, name):
                    g._set_generatorparam_value(name, v)
            pipeline = g._build_module_pipeline()
            arguments = [g._get_input_parameter(a.name) for a in g._arginfos_in]
            obj, src = os.path.join(work, n + ".o"), os.path.join(work, n + ".py.cpp")
            pipeline.compile_to(
                {OutputFileType.object: obj, OutputFileType.python_extension: src}, arguments, n, code_target
            )
            sources.append(src)
            objects.append(obj)
        runtime, definition = os.path.join(work, "runtime.o"), os.path.join(work, "module.py.cpp")
        compile_standalone_runtime(
            {OutputFileType.object: runtime, OutputFileType.python_extension: definition}, target
        )
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        out = os.path.join(output_dir, module + suffix)
        cmd = _cxx() + [
            "-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-fno-exceptions", "-fno-rtti",
            "-I" + sysconfig.get_paths()["include"],
            "-I" + os.path.join(ferrohalide.install_dir(), "include"),
            "-DHALIDE_PYTHON_EXTENSION_OMIT_MODULE_DEFINITION",
            "-DHALIDE_PYTHON_EXTENSION_MODULE_NAME=" + module,
            "-DHALIDE_PYTHON_EXTENSION_FUNCTIONS=" + "".join(f" X({n})" for n in names),
        ] + sources + [definition] + objects + [runtime, "-o", out, "-lpthread", "-ldl", "-lm"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise BuildError("The C++ compiler failed:\n$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
        log(f"Built {out} with the function(s) {', '.join(names)}")
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list) -> int:
    path, generators, module, output_dir, target, params = None, [], "", ".", None, {}
    i = 0
    try:
        while i < len(argv):
            a = argv[i]
            if a in ("-g", "-m", "-o"):
                if i + 1 >= len(argv):
                    raise BuildError(f"{a} needs a value.")
                v = argv[i + 1]
                i += 2
                if a == "-g":
                    generators.append(v)
                elif a == "-m":
                    module = v
                else:
                    output_dir = v
                continue
            if a in ("-h", "--help"):
                sys.stdout.write(USAGE)
                return 0
            if a.startswith("-"):
                raise BuildError(f"Unknown flag: {a}")
            if "=" in a:
                k, _, v = a.partition("=")
                if k == "target":
                    target = v
                else:
                    params[k] = v
            elif path is None:
                path = a
            else:
                raise BuildError(f"Only one generator file can be built at a time (saw {path} and {a}).")
            i += 1
        if path is None:
            raise BuildError("Which generator file? (python -m ferrohalide build FILE.py)")
        build(path, generators, module, output_dir, target, params)
        return 0
    except BuildError as e:
        sys.stderr.write(f"Error: {e}\n\n{USAGE}")
        return 1
    except Exception as e:  # a generator's own error
        text = str(e).strip()
        sys.stderr.write(text if text.startswith("Error") else f"Error: {text}\n")
        sys.stderr.write("\n")
        return 1
