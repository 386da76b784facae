"""An emulated Hexagon offload for tests: an ARM program whose loops are
offloaded to Hexagon (targets such as arm-64-linux-hvx) runs under
qemu-aarch64, and each offloaded call runs under qemu-hexagon.

Halide's offload runtime dlopens `libhalide_hexagon_host.so` (on a phone,
the FastRPC bridge to the DSP). Here that library is
`hexagon/offload/hexagon_host_stub.c`: on each `halide_hexagon_remote_run`
it writes the shared runtime, the kernels and the arguments into a fresh
directory and runs `qemu-hexagon dsp_runner DIR`; the DSP runner
(`hexagon/offload/dsp_runner.c`, a bare-metal Hexagon program with the
harness of `hexagon/harness.c` and the shared-object loader
`hexagon/offload/so_loader.c`) loads both objects, calls the kernel as
QuRT's `halide_hexagon_remote_run_v2` would, and writes the output buffers
back. QEMU's user mode hands the aarch64 program's execve of the x86-64
qemu-hexagon to the host kernel, so no wrapper is needed.

    rig = build_rig(tmp_path)
    run_on_target(case, tmp_path, "arm-64-linux-hvx", rig["cc"], rig["prefix"],
                  link_flags=rig["link_flags"])
    # or: subprocess.run([*rig["prefix"], exe, ...]) / run_offloaded(rig, [exe, ...])

The ARM program is linked dynamically (it must dlopen), so it runs with
the aarch64 sysroot (`-L`); `prefix` also sets, in the program's
environment (`-E`), LD_LIBRARY_PATH to the stub's directory and the
variables the stub reads: FERROHALIDE_TEST_QEMU_HEXAGON,
FERROHALIDE_TEST_DSP_RUNNER and FERROHALIDE_TEST_OFFLOAD_DIR (where each
call's directory is made: `offload_calls` in the rig's directory). A
failed call leaves its directory there (the stub prints its path);
FERROHALIDE_TEST_KEEP_OFFLOAD=1 (in the environment) keeps them all.
"""
import os
import subprocess
from pathlib import Path

import pytest

from tests.aot.conftest import run
from tests.cross.conftest import cross_tool

OFFLOAD = os.path.join(os.path.dirname(__file__), "hexagon", "offload")
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"


def build_rig(tmp_path):
    """Builds the DSP runner (static Hexagon) and libhalide_hexagon_host.so
    (aarch64) into `tmp_path`. Returns a dict:

      prefix      the command prefix that runs an aarch64 program with the rig
                  (qemu-aarch64 -L sysroot -E LD_LIBRARY_PATH=... -E FERROHALIDE_TEST_...)
      env         the rig's environment variables (already in `prefix`; for
                  other ways of running the program)
      calls_dir   where each offloaded call's request directory is made
      lib_dir     the directory holding libhalide_hexagon_host.so
      host_lib    libhalide_hexagon_host.so
      dsp_runner  the Hexagon DSP runner
      qemu_hexagon, qemu_aarch64, sysroot
      cc          the aarch64 C compiler command (a list) for the ARM program
      link_flags  the libraries the ARM program links with
    """
    from tests.cross.test_hexagon import hexagon_link_cmd

    qemu_hexagon = os.path.abspath(cross_tool("qemu-hexagon-static", "qemu-hexagon"))
    qemu_aarch64 = cross_tool("qemu-aarch64-static", "qemu-aarch64")
    arm_cc = cross_tool("aarch64-linux-gnu-gcc")
    if not os.path.exists(os.path.join(AARCH64_SYSROOT, "lib", "ld-linux-aarch64.so.1")):
        msg = f"no aarch64 sysroot in {AARCH64_SYSROOT} (scripts/setup.sh installs it)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)

    out = Path(tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    dsp_runner = out / "dsp_runner"
    run([*hexagon_link_cmd(), "-I", OFFLOAD, os.path.join(OFFLOAD, "so_loader.c"),
         os.path.join(OFFLOAD, "dsp_runner.c"), "-o", str(dsp_runner)])
    lib_dir = out / "hexagon_host"
    lib_dir.mkdir(exist_ok=True)
    host_lib = lib_dir / "libhalide_hexagon_host.so"
    run([arm_cc, "-shared", "-fPIC", "-O2", os.path.join(OFFLOAD, "hexagon_host_stub.c"), "-o", str(host_lib)])

    calls = out / "offload_calls"
    calls.mkdir(exist_ok=True)
    env = {
        "FERROHALIDE_TEST_QEMU_HEXAGON": qemu_hexagon,
        "FERROHALIDE_TEST_DSP_RUNNER": str(dsp_runner),
        "FERROHALIDE_TEST_OFFLOAD_DIR": str(calls),
    }
    # QEMU's -E takes a comma-separated list of assignments.
    assert not any("," in v for v in [str(lib_dir), *env.values()]), "a path with a comma"
    prefix = [qemu_aarch64, "-L", AARCH64_SYSROOT, "-E", f"LD_LIBRARY_PATH={lib_dir}"]
    for k, v in env.items():
        prefix += ["-E", f"{k}={v}"]
    return {
        "prefix": prefix,
        "env": env,
        "calls_dir": str(calls),
        "lib_dir": str(lib_dir),
        "host_lib": str(host_lib),
        "dsp_runner": str(dsp_runner),
        "qemu_hexagon": qemu_hexagon,
        "qemu_aarch64": qemu_aarch64,
        "sysroot": AARCH64_SYSROOT,
        "cc": [arm_cc],
        "link_flags": ["-lpthread", "-lm", "-ldl"],
    }


def run_offloaded(rig, cmd, timeout=300, **kw):
    """Runs the aarch64 program `cmd` (a list) with the rig; returns the
    CompletedProcess (text output captured)."""
    return subprocess.run([*rig["prefix"], *map(str, cmd)], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **rig["env"]}, **kw)
