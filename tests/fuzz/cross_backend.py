"""Cross targets against the JIT, on the fuzz generator's pipelines.

    python tests/fuzz/cross_backend.py FIRST LAST [--target arm-32-linux]

Each program whose output is one Func realized over a region is run by
ferrohalide's JIT; its output Func is also compiled ahead of time for the
cross target into a static library, linked into the cross tests' C program
(tests/cross/harness.py) with the target's C toolchain (for Hexagon, with
the bare-metal harness), run under QEMU, and
its output compared with the JIT's: integers bit for bit, floats within
1e-4 relative (the target's libm against the host's). A 32-bit target is
where the layout of `halide_buffer_t` and the width of `size_t` differ from
the host's, so it is the default.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import ctypes  # noqa: E402

from c_backend import Checker, scalar_arg  # noqa: E402
from tests.aot.conftest import include_dir  # noqa: E402
from tests.cross.harness import Buf, Scalar, main_c, read_queried  # noqa: E402

def _hexagon_link():
    from tests.cross.test_hexagon import hexagon_link_cmd
    return hexagon_link_cmd()


# target -> (link command and its libraries, emulator)
MACHINES = {
    "arm-32-linux": (lambda: ["arm-linux-gnueabihf-gcc", "-O1", "-static", "-w"], ["-lpthread", "-lm"], "qemu-arm-static"),
    "arm-64-linux": (lambda: ["aarch64-linux-gnu-gcc", "-O1", "-static", "-w"], ["-lpthread", "-lm"], "qemu-aarch64-static"),
    "hexagon-32-noos-hvx_128": (_hexagon_link, [], "qemu-hexagon-static"),
    "hexagon-32-noos": (_hexagon_link, [], "qemu-hexagon-static"),
}
# ctypes scalar type -> its C name
CTYPES = {ctypes.c_int8: "int8_t", ctypes.c_int16: "int16_t", ctypes.c_int32: "int32_t", ctypes.c_int64: "int64_t",
          ctypes.c_bool: "bool", ctypes.c_uint8: "uint8_t", ctypes.c_uint16: "uint16_t", ctypes.c_uint32: "uint32_t",
          ctypes.c_uint64: "uint64_t", ctypes.c_float: "float", ctypes.c_double: "double"}


class CrossChecker(Checker):
    def __init__(self, hl, workdir, target):
        self.hl, self.dir, self.target = hl, workdir, target
        cc, self.libs, self.qemu = MACHINES[target]
        self.cc = cc()
        self.results = {}

    def check(self, f, sizes, seed, inputs):
        hl = self.hl
        r = f.realize(sizes)
        expected = np.array(r)
        args = hl.Pipeline(f).infer_arguments()
        d = os.path.join(self.dir, f"s{seed}")
        os.makedirs(d, exist_ok=True)
        try:
            f.compile_to_static_library(os.path.join(d, "p"), args, "p", hl.Target(self.target))
        except hl.HalideError as e:
            self.note("compile-error", (seed, str(e).splitlines()[0]))
            return r
        c_args, files = [], []
        for i, a in enumerate(args):
            obj = inputs[a.name]
            if a.is_buffer():
                buf = obj.get()
                arr = np.ascontiguousarray(np.asarray(buf))
                path = os.path.join(d, f"in{i}.bin")
                arr.tofile(path)
                files.append(path)
                c_args.append(Buf(arr.dtype, arr.shape, [buf.dim(k).min() for k in range(buf.dimensions())]))
            else:
                v = scalar_arg(hl, a, obj)
                c_args.append(Scalar(CTYPES[type(v)], v.value))
        with open(os.path.join(d, "main.c"), "w") as fh:
            fh.write(main_c("p.h", "p", c_args, Buf(expected.dtype, expected.shape), query=True))
        exe = os.path.join(d, "prog")
        p = subprocess.run([*self.cc, "-I", include_dir(hl), "-I", d, os.path.join(d, "main.c"),
                            os.path.join(d, "p.a"), *self.libs, "-o", exe], capture_output=True, text=True)
        if p.returncode:
            self.note("link-error", (seed, p.stderr[:2000]))
            return r
        out = os.path.join(d, "out.bin")
        p = subprocess.run([self.qemu, exe, *files, out], capture_output=True, text=True, timeout=300)
        if p.returncode:
            self.note("run-failed", (seed, p.returncode, p.stderr[:500]))
            return r
        got = read_queried(out, expected.dtype, expected.shape)
        if expected.dtype.kind == "f":
            ok = np.allclose(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
        else:
            ok = np.array_equal(got, expected)
        self.note("ok" if ok else "mismatch", seed)
        return r


def main():
    import ferrohalide as hl
    ap = argparse.ArgumentParser()
    ap.add_argument("first", type=int)
    ap.add_argument("last", type=int)
    ap.add_argument("--target", default="arm-32-linux", choices=sorted(MACHINES))
    a = ap.parse_args()
    checker = CrossChecker(hl, tempfile.mkdtemp(prefix="fh_cross_"), a.target)
    for seed in range(a.first, a.last):
        checker.run(seed)
    for kind, items in sorted(checker.results.items()):
        shown = items if kind in ("mismatch", "compile-error", "run-failed") else items[:10]
        print(f"{kind}: {len(items)} {shown if kind != 'link-error' else [s for s, _ in items]}")
    for seed, err in checker.results.get("link-error", [])[:3]:
        print(f"--- link error, seed {seed}:\n{err}")
    bad = sum(len(checker.results.get(k, [])) for k in ("mismatch", "link-error", "run-failed", "compile-error"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
