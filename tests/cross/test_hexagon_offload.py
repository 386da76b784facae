"""The Hexagon offload: on an ARM target with `hvx`, `hexagon()` loop nests
become a Hexagon shared object inside the ARM object, called through
Halide's offload runtime interface (`halide_hexagon_initialize_kernels`,
`halide_hexagon_run`).

Proven by running: arm-64-linux-hvx programs run under qemu-aarch64 with
the emulated offload of `offload_rig.py` (the kernels run under
qemu-hexagon) and must give the host JIT's results; the Hexagon SDK's
dilate3x3 for arm-64-android-hvx, in both of the SDK's forms, links with
Debian's aarch64 compiler where Halide 21's object links."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.aot.conftest import include_dir, run
from tests.cross.conftest import cross_tool
from tests.cross.harness import Buf, Scalar, compare, main_c
from tests.cross.offload_rig import build_rig, run_offloaded
from tests.cross.pipelines import CASES, ctype, host_result

import ferrohalide as hl

HERE = os.path.dirname(__file__)
ARM_HVX = "arm-64-linux-hvx_128"


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    return build_rig(tmp_path_factory.mktemp("rig"))


def build_and_run(rig, case, tmp_path, target=ARM_HVX):
    """`case` offloaded, compiled for `target`, linked into the cross test
    program and run with the rig; returns (its output, the host JIT's)."""
    func, params, values, shape, dtype = case(vec=128, w=300, offload=True)
    name = case.__name__
    func.compile_to_static_library(str(tmp_path / name), params, name, hl.Target(target))
    args = [Buf(v.dtype, v.shape) if isinstance(p, hl.ImageParam) else Scalar(ctype(p), v)
            for p, v in zip(params, values)]
    (tmp_path / "main.c").write_text(main_c(f"{name}.h", name, args, Buf(dtype, shape)))
    exe = tmp_path / "prog"
    run([*rig["cc"], "-I", include_dir(hl), "-I", str(tmp_path), str(tmp_path / "main.c"),
         str(tmp_path / f"{name}.a"), *rig["link_flags"], "-o", str(exe)])
    files = []
    for i, (p, v) in enumerate(zip(params, values)):
        if isinstance(p, hl.ImageParam):
            path = tmp_path / f"in{i}.bin"
            np.ascontiguousarray(v).tofile(path)
            files.append(path)
    out = tmp_path / "out.bin"
    r = run_offloaded(rig, [exe, *files, out])
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    got = np.fromfile(out, dtype=dtype).reshape(shape)
    return got, host_result(*case(vec=128, w=300))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_offloaded_pipeline_runs_under_emulation(rig, case, tmp_path):
    got, want = build_and_run(rig, case, tmp_path)
    compare(got, want)


def test_kernels_are_hvx_code_in_a_hexagon_shared_object(tmp_path):
    """The object embeds two Hexagon shared objects (the kernels and the
    device runtime) and the host runtime's entry points; the kernels'
    inner loops are HVX code."""
    func, params, *_ = CASES[0](vec=128, w=300, offload=True)
    func.compile_to({hl.OutputFileType.object: str(tmp_path / "k.o"),
                     hl.OutputFileType.llvm_assembly: str(tmp_path / "k.ll")},
                    params, "k", hl.Target(ARM_HVX))
    nm = subprocess.run([cross_tool("llvm-nm-19", "llvm-nm"), str(tmp_path / "k.o")],
                        capture_output=True, text=True, check=True).stdout
    for sym in ["halide_hexagon_initialize_kernels", "halide_hexagon_run", "k", "k_argv"]:
        assert any(line.split()[-1] == sym and line.split()[-2] in "TW" for line in nm.splitlines() if line.split()), sym
    ll = (tmp_path / "k.ll").read_text()
    blobs = {}
    for name in ["halide_hexagon_code", "halide_shared_runtime"]:
        start = ll.index(f"@{name}.data = ")
        text = ll[ll.index('c"', start) + 2:ll.index('"', ll.index('c"', start) + 2)]
        blobs[name] = _ll_bytes(text)
        head = blobs[name][:20]
        assert head[:4] == b"\x7fELF" and head[16] == 3 and int.from_bytes(head[18:20], "little") == 164, name
    so = tmp_path / "kernels.so"
    so.write_bytes(blobs["halide_hexagon_code"])
    dis = subprocess.run([cross_tool("llvm-objdump-19", "llvm-objdump"), "-d", "--mattr=+hvxv66,+hvx-length128b",
                          str(so)], capture_output=True, text=True, check=True).stdout
    assert "vmax(" in dis or "vmaxub" in dis.lower(), "no HVX max in the dilate kernel"
    dyn = subprocess.run([cross_tool("llvm-readelf-19", "llvm-readelf"), "--dyn-syms", "-d", str(so)],
                         capture_output=True, text=True, check=True).stdout
    assert "libhalide_hexagon_remote_skel.so" in dyn and "libhalide_hexagon_code.so" in dyn
    assert "_argv" in dyn


def _ll_bytes(text):
    out = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "\\":
            if text[i + 1] == "\\":
                out.append(92)
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
        else:
            out.append(ord(text[i]))
            i += 1
    return bytes(out)


def test_host_computed_producer_is_refused_by_name(tmp_path):
    x = hl.Var("x")
    inp = hl.ImageParam(hl.UInt(8), 1, "inp")
    hist = hl.Func("producer_on_host")
    hist[x] = hl.i32(inp[x]) * 2
    hist.compute_root()
    f = hl.Func("offloaded_consumer")
    f[x] = hist[x] + 1
    f.hexagon()
    with pytest.raises(hl.HalideError, match="producer_on_host, which is computed on the host"):
        f.compile_to_static_library(str(tmp_path / "bad"), [inp], "bad", hl.Target(ARM_HVX))


def test_jit_refuses_offloaded_loops_by_name():
    x = hl.Var("x")
    f = hl.Func("jit_offload")
    f[x] = x
    f.hexagon()
    with pytest.raises(hl.HalideError, match="(?i)hexagon"):
        f.realize([8])


# The SDK's dilate3x3, in its two forms, for arm-64-android-hvx.
SCRIPT = os.path.join(HERE, "scripts", "dilate3x3.py")
# What an Android object needs from Android that Debian's aarch64 glibc
# lacks (Halide's objects need the same): stubs, so the link shows that
# everything else resolves.
ANDROID_STUBS = """
#include <stdarg.h>
int __android_log_print(int prio, const char *tag, const char *fmt, ...) { (void)prio; (void)tag; (void)fmt; return 0; }
int __android_log_vprint(int prio, const char *tag, const char *fmt, va_list ap) { (void)prio; (void)tag; (void)fmt; (void)ap; return 0; }
"""


def link_dilate(obj, header, include):
    """Link the dilate object into the cross test program with Debian's
    aarch64 compiler, the Android stubs and the C library's dl/pthread/m."""
    cc = cross_tool("aarch64-linux-gnu-gcc")
    d = obj.parent
    (d / "main.c").write_text(main_c(header.name, "dilate3x3", [Buf(np.uint8, (40, 300))], Buf(np.uint8, (40, 300))))
    (d / "android_stubs.c").write_text(ANDROID_STUBS)
    return subprocess.run([cc, "-I", include, "-I", str(d), str(d / "main.c"), str(obj), str(d / "android_stubs.c"),
                           "-ldl", "-lpthread", "-lm", "-o", str(d / "prog")], capture_output=True, text=True)


HAND_BUILT = os.path.join(HERE, "scripts", "dilate3x3_hand_built.py")


def hand_built_dilate(module, d):
    """The SDK's first form, built by `module` (in a process of its own:
    two LLVMs do not share one)."""
    p = subprocess.run([sys.executable, HAND_BUILT, module, str(d)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("form", ["pygen", "compile_to_file"])
def test_sdk_dilate_for_android_hvx_links_where_halides_links(tmp_path, form):
    ours = tmp_path / "ours"
    ours.mkdir()
    if form == "pygen":
        p = subprocess.run([sys.executable, SCRIPT, "-g", "dilate3x3", "-o", "./dilate3x3.o", "-e", "o,h",
                            "-f", "dilate3x3", "target=arm-64-android-hvx"], capture_output=True, text=True, cwd=ours)
        assert p.returncode == 0, p.stderr
    else:
        hand_built_dilate("ferrohalide", ours)
    r = link_dilate(ours / "dilate3x3.o", ours / "dilate3x3.h", include_dir(hl))
    assert r.returncode == 0, r.stderr
    spec = importlib.util.find_spec("halide")
    if spec is None:
        pytest.skip("Halide 21 (the halide wheel) is not installed")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    hand_built_dilate("halide", theirs)
    halide_include = os.path.join(os.path.dirname(spec.origin), "include")
    r = link_dilate(theirs / "dilate3x3.o", theirs / "dilate3x3.h", halide_include)
    assert r.returncode == 0, "Halide's object does not link with these stubs either:\n" + r.stderr


def test_device_messages_reach_the_offload_library(rig, tmp_path):
    """The shared runtime imports halide_print / halide_error from the DSP
    side's offload library, as Halide's does (on a phone they reach the
    host through its log): a print inside the offloaded nest is printed."""
    x = hl.Var("x")
    inp = hl.ImageParam(hl.UInt(8), 1, "inp")
    f = hl.Func("printing")
    f[x] = hl.print_when(x == 5, inp[x] + 1, "device lane")
    f.hexagon()
    f.compile_to_static_library(str(tmp_path / "printing"), [inp], "printing", hl.Target(ARM_HVX))
    img = np.arange(16, dtype=np.uint8)
    (tmp_path / "main.c").write_text(main_c("printing.h", "printing", [Buf(np.uint8, img.shape)], Buf(np.uint8, img.shape)))
    exe = tmp_path / "prog"
    run([*rig["cc"], "-I", include_dir(hl), "-I", str(tmp_path), str(tmp_path / "main.c"),
         str(tmp_path / "printing.a"), *rig["link_flags"], "-o", str(exe)])
    img.tofile(tmp_path / "in.bin")
    r = run_offloaded(rig, [exe, tmp_path / "in.bin", tmp_path / "out.bin"])
    assert r.returncode == 0, r.stderr
    assert "device lane" in r.stdout + r.stderr
    np.testing.assert_array_equal(np.fromfile(tmp_path / "out.bin", dtype=np.uint8), img + 1)
