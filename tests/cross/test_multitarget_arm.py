"""Multi-target output for arm-64: one static library holding an
`arm_dot_prod` variant and a baseline one, whose wrapper asks the runtime
(`halide_can_use_target_features`, answered on arm64 Linux from the
kernel's HWCAP words) which to run. Run under QEMU with a CPU that has the
dot product instructions and with one that has not, and with the choice
forced by a replacement of the runtime's answer."""
import re
import subprocess

import pytest

import ferrohalide as hl

from tests.aot.conftest import include_dir, run
from tests.cross.conftest import cross_tool

C_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "HalideRuntime.h"
#include "which.h"
static int refuse_dot_prod(int count, const uint64_t *features) {
    (void)count;
    return !((features[halide_target_feature_arm_dot_prod >> 6] >> (halide_target_feature_arm_dot_prod & 63)) & 1);
}
int main(int argc, char **argv) {
    if (argc > 1 && atoi(argv[1])) halide_set_custom_can_use_target_features(refuse_dot_prod);
    int out[3];
    halide_dimension_t d = {0, 3, 1, 0};
    halide_buffer_t b = {0};
    b.host = (uint8_t *)out; b.type.code = halide_type_int; b.type.bits = 32; b.type.lanes = 1;
    b.dimensions = 1; b.dim = &d;
    int r = NAME(&b);
    printf("%d %d %d %d\n", r, out[0], out[1], out[2]);
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    cc = cross_tool("aarch64-linux-gnu-gcc")
    d = tmp_path_factory.mktemp("multitarget_arm")
    x = hl.Var("x")
    f = hl.Func("which")
    # 1 in the variant compiled with the dot product instructions.
    f[x] = hl.select(hl.target_has_feature(hl.TargetFeature.ARMDotProd), 1, 0) + x * 10
    targets = [hl.Target("arm-64-linux-arm_dot_prod"), hl.Target("arm-64-linux")]
    f.compile_to_multitarget_static_library(str(d / "which"), [], targets)
    # The function is the Func's unique name (another test's Func may be "which" too).
    name = re.search(r"int (\w+)\(struct halide_buffer_t", (d / "which.h").read_text()).group(1)
    (d / "main.c").write_text(C_DRIVER.replace("NAME", name))
    run([cc, "-O1", "-static", "-I", include_dir(hl), "-I", str(d), str(d / "main.c"), str(d / "which.a"),
         "-lpthread", "-lm", "-o", str(d / "prog")])
    return d / "prog"


@pytest.mark.parametrize("cpu,force,want", [
    ("max", "0", "0 1 11 21"),         # the CPU has dot product: that variant runs
    ("cortex-a53", "0", "0 0 10 20"),  # ARMv8.0: the baseline runs
    ("max", "1", "0 0 10 20"),         # the program refuses dot product
])
def test_wrapper_picks_the_variant_the_cpu_supports(program, cpu, force, want):
    qemu = cross_tool("qemu-aarch64-static", "qemu-aarch64")
    r = subprocess.run([qemu, "-cpu", cpu, str(program), force], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want
