"""Several targets in one library or set of objects: the wrapper runs the
first target the CPU supports (asking `halide_can_use_target_features`), the
runtime is built once, and the files are named as Halide names them. Each
C program runs against both implementations' output and prints the same."""
import os
import subprocess
import sys

import pytest

import ferrohalide as hl

from .conftest import include_dir, run

TARGETS = ["x86-64-linux-avx2-sse41", "x86-64-linux-sse41", "x86-64-linux"]

# argv[1]: 0 = the runtime's own answer, 1 = refuse code that needs AVX2,
# 2 = refuse every target but the baseline (which is never asked about).
C_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "HalideRuntime.h"
#include "HEADER.h"
static int mode, words = -1;
static int custom(int count, const uint64_t *features) {
    words = count;
    if (mode == 2) return 0;
    return !((features[halide_target_feature_avx2 >> 6] >> (halide_target_feature_avx2 & 63)) & 1);
}
int main(int argc, char **argv) {
    mode = atoi(argv[1]);
    if (mode) halide_set_custom_can_use_target_features(custom);
    int out[3];
    halide_dimension_t d = {0, 3, 1, 0};
    halide_buffer_t b = {0};
    b.host = (uint8_t *)out; b.type.code = halide_type_int; b.type.bits = 32; b.type.lanes = 1;
    b.dimensions = 1; b.dim = &d;
    int r = NAME(&b);
    printf("result %d values %d %d %d asked %d\n", r, out[0], out[1], out[2], words > 0);
#ifdef ERRORS
    /* (Halide's default error handler aborts the program.) */
    halide_buffer_t wrong = b; wrong.type.bits = 16;
    printf("wrong type %d\n", NAME(&wrong));
#endif
    return 0;
}
"""


def which(hl_, name):
    """2 if compiled with AVX2, + 1 with SSE4.1: tells which target ran."""
    x = hl_.Var("x")
    f = hl_.Func(name)
    f[x] = (hl_.select(hl_.target_has_feature(hl_.TargetFeature.AVX2), 2, 0)
            + hl_.select(hl_.target_has_feature(hl_.TargetFeature.SSE41), 1, 0) + x * 10)
    return f


def function_name(header):
    """The function a header declares (a Func's unique name made a C name)."""
    import re
    return re.search(r"int (\w+)\(struct halide_buffer_t", header.read_text()).group(1)


def run_modes(cc, impl, d, name, header, objects):
    name = name or function_name(d / f"{header}.h")
    src = d / "main.c"
    src.write_text(C_DRIVER.replace("HEADER", header).replace("NAME", name))
    exe = d / "main"
    errors = ["-DERRORS"] if impl is hl else []
    run([cc, "-I", include_dir(impl), "-I", str(d), str(src)] + errors + [str(o) for o in objects]
        + ["-lpthread", "-ldl", "-lm", "-o", str(exe)])
    return [run([str(exe), str(m)]).stdout for m in range(3)]


def test_static_library_runs_the_first_usable_target_like_the_reference(cc, tmp_path, ref_hl):
    results = {}
    for impl in (hl, ref_hl):
        d = tmp_path / impl.__name__
        d.mkdir()
        which(impl, "which").compile_to_multitarget_static_library(
            str(d / "which"), [], [impl.Target(t) for t in TARGETS])
        assert sorted(os.listdir(d)) == ["which.a", "which.h"]
        results[impl.__name__] = run_modes(cc, impl, d, None, "which", [d / "which.a"])
    ours = [r.replace("wrong type -3\n", "") for r in results["ferrohalide"]]
    assert ours == results["halide"], results
    default, no_avx2, baseline = results["ferrohalide"]
    assert "values 1 11 21 asked 1" in no_avx2
    assert "values 0 10 20 asked 1" in baseline
    # Without an override the answer is this CPU's: the same as Halide's.
    expected = 3 if hl.get_host_target().has_feature(hl.TargetFeature.AVX2) else 1
    assert f"result 0 values {expected} " in default
    assert "wrong type -3" in default


def test_object_files_with_suffixes_are_named_as_halide_names_them(cc, tmp_path, ref_hl):
    listings, results = {}, {}
    for impl in (hl, ref_hl):
        d = tmp_path / impl.__name__
        d.mkdir()
        which(impl, "w2").compile_to_multitarget_object_files(
            str(d / "w2"), [], [impl.Target(t) for t in TARGETS], ["a", "b", "c"])
        listings[impl.__name__] = sorted(os.listdir(d))
        results[impl.__name__] = run_modes(cc, impl, d, None, "w2", sorted(d.glob("*.o")))
    assert listings["ferrohalide"] == listings["halide"] == [
        "w2-a.o", "w2-b.o", "w2-c.o", "w2.h", "w2_runtime.o", "w2_wrapper.o"]
    ours = [r.replace("wrong type -3\n", "") for r in results["ferrohalide"]]
    assert ours == results["halide"], results


def test_one_target_is_an_ordinary_compilation(tmp_path):
    which(hl, "single").compile_to_multitarget_static_library(
        str(tmp_path / "single"), [], [hl.Target("x86-64-linux-sse41")])
    assert sorted(os.listdir(tmp_path)) == ["single.a", "single.h"]


@pytest.mark.parametrize("targets, message", [
    (["x86-64-linux-avx2", "arm-64-linux"], "All Targets must have matching arch-bits-os"),
    (["x86-64-linux-avx2-user_context", "x86-64-linux"], "must have feature 'user_context' set identically"),
    (["x86-64-linux-avx2-jit", "x86-64-linux-jit"], "JIT not allowed"),
])
def test_targets_that_cannot_share_a_wrapper_are_refused(tmp_path, targets, message):
    with pytest.raises(hl.HalideError, match=message):
        which(hl, "bad").compile_to_multitarget_static_library(
            str(tmp_path / "bad"), [], [hl.Target(t) for t in targets])


GENERATOR = r'''
import ferrohalide as hl

@hl.generator(name="which")
class Which:
    output = hl.OutputBuffer(hl.Int(32), 1)

    def generate(self):
        x = hl.Var("x")
        self.output[x] = (hl.select(hl.target_has_feature(hl.TargetFeature.AVX2), 2, 0)
                          + hl.select(hl.target_has_feature(hl.TargetFeature.SSE41), 1, 0) + x * 10)

if __name__ == "__main__":
    hl.main()
'''


def test_generator_command_line_takes_several_targets(cc, tmp_path):
    gen = tmp_path / "which_gen.py"
    gen.write_text(GENERATOR)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run([sys.executable, str(gen), "-g", "which", "-o", str(out), "-e", "static_library,c_header",
         "target=" + ",".join(t + "-no_runtime" for t in TARGETS)], env=env)
    run([sys.executable, str(gen), "-r", "rt", "-o", str(out), "-e", "object",
         "target=" + ",".join(TARGETS)], env=env)
    assert sorted(os.listdir(out)) == ["rt.o", "which.a", "which.h"]
    text = run_modes(cc, hl, out, "which", "which", [out / "which.a", out / "rt.o"])
    assert "values 1 11 21 asked 1" in text[1] and "values 0 10 20 asked 1" in text[2]
    # Several targets need exactly one of object and static_library.
    p = subprocess.run([sys.executable, str(gen), "-g", "which", "-o", str(out), "-e", "c_header",
                        "target=" + ",".join(TARGETS)], env=env, capture_output=True, text=True)
    assert p.returncode == 1 and "expects exactly one of 'object' and 'static_library'" in p.stderr
