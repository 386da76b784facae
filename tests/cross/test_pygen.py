"""pygen scripts: the Hexagon SDK's dilate3x3 example run as a command-line
tool. Its object for arm-64-linux is linked into the cross-target test
program and run under QEMU against a NumPy 3x3 dilate; the command line's
mistakes are errors that name them."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.aot.conftest import include_dir, run
from tests.cross.conftest import cross_tool
from tests.cross.harness import Buf, main_c
from tests.cross.test_hexagon import hexagon_link_cmd

import ferrohalide as hl

SCRIPT = os.path.join(os.path.dirname(__file__), "scripts", "dilate3x3.py")


def pygen(tmp_path, *args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=tmp_path)


def dilate3x3(img):
    p = np.pad(img, 1, mode="edge")
    h, w = img.shape
    return np.max([p[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3)], axis=0)


def run_dilate(tmp_path, link, runner, img, libs=()):
    """Link the script's dilate3x3.o into the cross test program with
    `link` (a command list), run it under `runner` on `img`, and check the
    output against NumPy's 3x3 dilate."""
    (tmp_path / "main.c").write_text(main_c("dilate3x3.h", "dilate3x3", [Buf(img.dtype, img.shape)],
                                            Buf(np.uint8, img.shape)))
    run([*link, "-I", include_dir(hl), "-I", str(tmp_path), str(tmp_path / "main.c"),
         str(tmp_path / "dilate3x3.o"), *libs, "-o", str(tmp_path / "prog")])
    img.tofile(tmp_path / "in.bin")
    r = subprocess.run([runner, str(tmp_path / "prog"), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = np.fromfile(tmp_path / "out.bin", dtype=np.uint8).reshape(img.shape)
    np.testing.assert_array_equal(got, dilate3x3(img))


@pytest.mark.parametrize("parallel", ["true", "false"])
def test_sdk_example_runs_on_arm64_under_qemu(tmp_path, parallel):
    cc = cross_tool("aarch64-linux-gnu-gcc")
    qemu = cross_tool("qemu-aarch64-static", "qemu-aarch64")
    p = pygen(tmp_path, "-g", "dilate3x3", "-o", "./dilate3x3.o", "-e", "o,h", "-f", "dilate3x3",
              "target=arm-64-linux", f"use_parallel_sched={parallel}")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path)) == ["dilate3x3.h", "dilate3x3.o"]
    img = np.random.default_rng(5).integers(0, 256, (45, 67), dtype=np.uint8)
    run_dilate(tmp_path, [cc, "-O1", "-static"], qemu, img, libs=["-lpthread", "-lm"])


def test_sdk_example_runs_on_hexagon_hvx_under_qemu(tmp_path):
    """The same script for hexagon-32-noos-hvx_128: its `output.hexagon()`
    loop is the target's own code, vectorized 128 bytes wide for HVX."""
    qemu = cross_tool("qemu-hexagon-static", "qemu-hexagon")
    p = pygen(tmp_path, "-g", "dilate3x3", "-o", "./dilate3x3.o", "-e", "o,h", "target=hexagon-32-noos-hvx_128")
    assert p.returncode == 0, p.stderr
    img = np.random.default_rng(6).integers(0, 256, (40, 300), dtype=np.uint8)
    run_dilate(tmp_path, hexagon_link_cmd(), qemu, img)


def test_output_directory_and_emit_names(tmp_path):
    p = pygen(tmp_path, "-g", "dilate3x3", "-o", "out", "-e", "static_library,c_header,stmt", "target=host")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path / "out")) == ["dilate3x3.a", "dilate3x3.h", "dilate3x3.stmt"]
    p = pygen(tmp_path, "-o", "win", "-n", "d", "target=x86-64-windows")
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path / "win")) == ["d.h", "d.obj"]


@pytest.mark.parametrize("args,message", [
    (["target=host", "use_parallel_sched=maybe"], "use_parallel_sched must be true or false"),
    (["target=host", "tile=4"], "Unknown parameter(s): tile"),
    (["target=host", "-x", "1"], "Unknown flag: -x"),
    (["target=host", "-r", "rt"], "-r is not supported"),
    (["target=x86-32-linux"], "not supported"),
    (["-e", "o,nonsense", "target=host"], "Unrecognized emit option: nonsense"),
])
def test_command_line_errors(tmp_path, args, message):
    p = pygen(tmp_path, "-o", str(tmp_path), *args)
    assert p.returncode == 1
    assert message.lower() in p.stderr.lower(), p.stderr
    assert "Traceback" not in p.stderr


def test_hand_built_target_as_in_the_sdk(tmp_path):
    """The SDK's first form: an `hl.Target` built field by field and
    `Func.compile_to_file(name, args, fn_name, target)`. Without a
    `hexagon()` loop the arm-64-android-hvx object is ARM code; with one,
    the loop is offloaded (tests/cross/test_hexagon_offload.py links and
    runs such objects)."""
    target = hl.Target()
    target.os = hl.TargetOS.Android
    target.arch = hl.TargetArch.ARM
    target.bits = 64
    target.set_features([hl.TargetFeature.HVX, hl.TargetFeature.HVX_v66])
    assert str(target) == "arm-64-android-hvx-hvx_128-hvx_v66"  # as Halide prints it
    x, y = hl.Var("x"), hl.Var("y")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    f = hl.Func("plain")
    f[x, y] = inp[x, y] + 1
    f.vectorize(x, 16)
    f.compile_to_file(str(tmp_path / "plain"), [inp], "plain", target)
    head = (tmp_path / "plain.o").read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183
    assert "int plain(struct halide_buffer_t" in (tmp_path / "plain.h").read_text()
    assert b"halide_hexagon_code" not in (tmp_path / "plain.o").read_bytes()
    g = hl.Func("offloaded")
    g[x, y] = inp[x, y] + 1
    g.hexagon()
    g.compile_to_file(str(tmp_path / "offloaded"), [inp], "offloaded", target)
    obj = (tmp_path / "offloaded.o").read_bytes()
    assert obj[:4] == b"\x7fELF" and int.from_bytes(obj[18:20], "little") == 183
    assert b"libhalide_hexagon_code.so" in obj and b"offload_rpc.offloaded.s0.__outermost.0_argv" in obj
