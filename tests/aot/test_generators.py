"""Generators ahead of time: the command line (`hl.main()`), the extension
module built by `python -m ferrohalide build`, imported in a fresh process
and compared with the same generators run by the reference's JIT; and the
errors of the command line."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from . import generators_src
from .conftest import run

PARAMS = {"brighten": {"gain": "3.0", "bias": "2"}, "stats": {"input.type": "uint8", "input.dim": "2"},
          "configured": {"channels": "3"}}

INPUTS = r'''
import numpy as np
rng = np.random.default_rng(3)
img = rng.integers(0, 256, size=(3, 9, 13), dtype=np.uint8)     # c, y, x
small = rng.integers(0, 256, size=(4, 5), dtype=np.uint8)      # y (4), x (5)
weights = np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32)
planes = rng.integers(0, 60000, size=(3, 7), dtype=np.uint16)   # c (3), x (7)
'''

# Runs every generator with numbers as inputs; prints the outputs as JSON.
CALLS = INPUTS + r'''
def call_all(brighten, stats, configured):
    out = np.zeros_like(img)
    brighten(img, 5, out)
    s0 = np.zeros(5, dtype=np.int32); s1 = np.zeros(5, dtype=np.float32); t = np.zeros((), dtype=np.int32)
    stats(small, weights, s0, s1, t)
    mixed = np.zeros(7, dtype=np.float32)
    configured(0.25, planes, mixed)
    try:
        configured(-1.0, planes, mixed)
        failed = "no error"
    except Exception as e:  # the reference raises its HalideError, not a RuntimeError
        failed = str(e)
    return {"brighten": out.tolist(), "sums": [s0.tolist(), s1.tolist()], "total": int(t),
            "mixed": mixed.tolist(), "failed": failed}
'''

REFERENCE = CALLS + r'''
import sys, halide as hl
sys.path.insert(0, sys.argv[1])
sys.argv = sys.argv[:1]
import gens_halide as gens
params = json.loads(sys.argv_params) if False else None
'''


def reference_outputs(tmp_path):
    """The reference's JIT run of the same generators (the failing call
    raises a HalideError there, not a code: only its presence is kept)."""
    src = generators_src.write(tmp_path / "gens_halide.py", "halide")
    script = CALLS + f'''
import json, sys, halide as hl
sys.path.insert(0, {str(tmp_path)!r})
import gens_halide
t = hl.get_jit_target_from_environment()
def make(cls, params):
    with hl.GeneratorContext(t):
        return cls(generator_params=params).compile_to_callable()
params = {json.dumps(PARAMS)}
r = call_all(make(gens_halide.Brighten, params["brighten"]), make(gens_halide.Stats, params["stats"]),
             make(gens_halide.Configured, params["configured"]))
print(json.dumps(r))
'''
    assert src.exists()
    return json.loads(run([sys.executable, "-c", script]).stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The three generators built into one module `gens`, by the one-command build."""
    d = tmp_path_factory.mktemp("gens")
    src = generators_src.write(d / "gens_src.py", "ferrohalide")
    params = []
    for g, ps in PARAMS.items():
        params += [f"{k}={v}" for k, v in ps.items()]
    # One command; the params go to the generators that declare them
    # (input.type / input.dim to stats: the only one with an unspecified input).
    cmd = [sys.executable, "-m", "ferrohalide", "build", str(src), "-m", "gens", "-o", str(d)]
    p = subprocess.run(cmd + params, capture_output=True, text=True)
    return d, p


def test_extension_module_matches_the_reference(built, tmp_path):
    d, p = built
    assert p.returncode == 0, p.stderr
    script = CALLS + f'''
import json, sys
sys.path.insert(0, {str(d)!r})
import gens
print(json.dumps(call_all(gens.brighten, gens.stats, gens.configured)))
'''
    mine = json.loads(run([sys.executable, "-c", script]).stdout.strip().splitlines()[-1])
    ref = reference_outputs(tmp_path)
    assert mine["failed"] == "Halide Runtime Error: -27"
    assert ref["failed"] != "no error"
    for k in ("brighten", "sums", "total", "mixed"):
        assert mine[k] == ref[k], k


def test_extension_errors_and_keywords(built):
    d, p = built
    assert p.returncode == 0, p.stderr
    script = INPUTS + f'''
import sys
sys.path.insert(0, {str(d)!r})
import gens
out = np.zeros_like(img)
gens.brighten(input=img, offset=1, output=out)
print("keywords", int(out[0, 0, 0]) == min(255, int(img[0, 0, 0]) * 3 + 1 + 2))
for bad in [lambda: gens.brighten(img, 2**40, out), lambda: gens.brighten(img, 1.5, out),
            lambda: gens.brighten(img[0], 1, out), lambda: gens.brighten(img, 1)]:
    try:
        bad()
        print("no error")
    except (TypeError, ValueError, OverflowError) as e:
        print(type(e).__name__)
try:
    gens.brighten(img.astype(np.int8), 1, out)
except gens.HalideError as e:
    print(e.code, e.message)
print("alive")
'''
    lines = run([sys.executable, "-c", script]).stdout.strip().splitlines()
    assert lines[0] == "keywords True"
    assert lines[1:5] == ["OverflowError", "TypeError", "ValueError", "TypeError"]
    assert lines[5] == "-3 Input buffer input has type uint8 but type of the buffer passed in is int8"
    assert lines[6] == "alive"


def test_command_line_writes_what_it_is_asked(tmp_path):
    src = generators_src.write(tmp_path / "g.py", "ferrohalide")
    out = tmp_path / "out"
    p = run([sys.executable, str(src), "-g", "brighten", "-o", str(out), "-v", "1", "-e",
             "object,c_header,static_library,python_extension,registration,stmt", "target=host-no_runtime",
             "gain=3.0", "invert=false"])
    names = sorted(os.listdir(out))
    assert names == ["brighten.a", "brighten.h", "brighten.o", "brighten.py.cpp", "brighten.registration.cpp",
                     "brighten.stmt"]
    assert p.stdout.count("Generated file:") == 6
    run([sys.executable, str(src), "-g", "stats", "-f", "stats_fn", "-n", "statsfile", "-o", str(out),
         "target=host", "input.type=uint16", "input.dim=2"])
    # The default kinds, named after -n, declaring -f.
    assert {"statsfile.h", "statsfile.a", "statsfile.registration.cpp"} <= set(os.listdir(out))
    assert "int stats_fn(struct halide_buffer_t *_input_buffer" in (out / "statsfile.h").read_text()
    run([sys.executable, str(src), "-r", "rt", "-o", str(out), "-e", "object,c_header", "target=host"])
    assert (out / "rt.o").exists() and not (out / "rt.h").exists()


@pytest.mark.parametrize("args, message", [
    ([], "Either -g <name> or -r <name> must be given"),
    (["-g", "nope", "-o", "o", "target=host"], "Generator not found: nope"),
    (["-g", "brighten", "-o", "o", "target=host", "-e", "bogus"], "Unrecognized emit option: bogus"),
    (["-g", "brighten", "-o", "o", "target=host", "wat=1"], "has no GeneratorParam(s) named: ['wat']"),
    (["-g", "brighten", "-o", "o", "target=host", "gain=fast"], "cannot be parsed as float"),
    (["-g", "brighten", "-o", "o", "target=host", "invert=maybe"], "cannot be parsed as a bool"),
    (["-g", "brighten", "-o", "o"], "A target (target=...) is required"),
    (["-g", "brighten", "target=host"], "An output directory (-o) is required"),
    (["-x", "1"], "Unknown flag: -x"),
    (["-g", "brighten", "-o", "o", "target=host", "autoscheduler=Adams2020"], "Unknown autoscheduler name 'Adams2020'"),
    (["-g", "brighten", "-o", "o", "target=x86-32-linux"], "x86-32-linux"),
])
def test_command_line_errors(tmp_path, args, message):
    src = generators_src.write(tmp_path / "g.py", "ferrohalide")
    p = subprocess.run([sys.executable, str(src)] + args, capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


def test_main_without_generators(tmp_path):
    """Halide 21 crashes here; ferrohalide explains."""
    src = tmp_path / "empty.py"
    src.write_text("import ferrohalide as hl\nhl.main()\n")
    p = subprocess.run([sys.executable, str(src), "-g", "x", "-o", ".", "target=host"], capture_output=True, text=True)
    assert p.returncode == 1 and "No generators have been registered" in p.stderr


def test_bool_generator_param_false_on_the_command_line(tmp_path):
    """invert=false means False (Halide 21 takes bool("false"), which is True)."""
    src = generators_src.write(tmp_path / "g.py", "ferrohalide")
    for value, expect in [("false", "False"), ("0", "False"), ("true", "True"), ("1", "True")]:
        script = f'''
import sys, runpy, ferrohalide as hl
ns = runpy.run_path({str(src)!r}, run_name="gens")
with hl.GeneratorContext(hl.get_jit_target_from_environment()):
    g = ns["Brighten"](generator_params={{"invert": {value!r}}})
    g._build_pipeline()
    print(g.invert)
'''
        assert run([sys.executable, "-c", script]).stdout.strip() == expect
