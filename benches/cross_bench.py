"""Emulated run times of cross-compiled objects, ferrohalide's next to
Halide 21's: the cross tests' four pipelines at a benchmark size, compiled
by each implementation for arm-64-linux, arm-32-linux and
hexagon-32-noos-hvx_128 with the same schedule, linked into the same C
program (for Hexagon, with the bare-metal harness of tests/cross/hexagon),
and run under QEMU's user-mode emulator. The program times the pipeline in-process (fastest of
its runs, after one untimed run); each program runs `--rounds` times,
alternating implementations, and the median is reported with the ratio
ferrohalide / Halide. Outputs are compared too (bit-exact for integers).

    python benches/cross_bench.py [--rounds 3] [--repeat 10] [--machines arm-64-linux,...]

QEMU translates the code to this machine's, so the times say more about the
instructions each compiler chose than about a real core's speed. Where the
reference refuses a pipeline (Halide 21 cannot compile float32 HVX code
before v68), its error is printed instead; differing outputs are counted.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.aot.conftest import include_dir  # noqa: E402
from tests.cross.harness import Buf, Scalar, main_c  # noqa: E402
from tests.cross.pipelines import ctype, float_with_param, reduction, stencil_u8, widening_blur  # noqa: E402

SIZES = {stencil_u8: (1024, 1024), widening_blur: (1024, 1024), float_with_param: (512, 1024), reduction: (1024, 1024)}

HEXAGON_DIR = Path(__file__).resolve().parent.parent / "tests" / "cross" / "hexagon"
LLVM_BIN = Path(os.environ.get("LLVM_SYS_191_PREFIX", "/usr/lib/llvm-19")) / "bin"

# machine -> (target, link command, emulator, vector bytes)
MACHINES = {
    "arm-64-linux": ("arm-64-linux", ["aarch64-linux-gnu-gcc", "-O2", "-static"], ["qemu-aarch64-static"], 16),
    "arm-32-linux": ("arm-32-linux", ["arm-linux-gnueabihf-gcc", "-O2", "-static"], ["qemu-arm-static"], 16),
    "hexagon-hvx": ("hexagon-32-noos-hvx_128-hvx_v66",
                    [str(LLVM_BIN / "clang"), "--target=hexagon-unknown-linux-musl", "-mv67", "-mhvx",
                     "-mhvx-length=128b", "-O2", "-nostdlib", "-static", "-fuse-ld=lld", "-ffreestanding",
                     "-fno-builtin", "-I", str(HEXAGON_DIR / "include"), str(HEXAGON_DIR / "harness.c")],
                    ["qemu-hexagon-static"], 128),
}


def build(impl, case, h, w, workdir, repeat, machine):
    target, cc, _, vec = MACHINES[machine]
    hl = __import__(impl)
    func, params, values, shape, dtype = case(hl, h, w, vec)
    name = case.__name__
    func.compile_to_static_library(str(workdir / name), params, name, hl.Target(target))
    args = [Buf(v.dtype, v.shape) if isinstance(p, hl.ImageParam) else Scalar(ctype(p), v)
            for p, v in zip(params, values)]
    (workdir / "main.c").write_text(main_c(f"{name}.h", name, args, Buf(dtype, shape), repeat=repeat))
    libs = [] if "hexagon" in machine else ["-lpthread", "-lm", "-ldl"]
    subprocess.run([*cc, "-I", include_dir(hl), "-I", str(workdir), str(workdir / "main.c"),
                    str(workdir / f"{name}.a"), *libs, "-o", str(workdir / "prog")], check=True, capture_output=True)
    files = []
    for i, (p, v) in enumerate(zip(params, values)):
        if isinstance(p, hl.ImageParam):
            files.append(str(workdir / f"in{i}.bin"))
            np.ascontiguousarray(v).tofile(files[-1])
    return [str(workdir / "prog"), *files, str(workdir / "out.bin")], shape, dtype


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--machines", default=",".join(MACHINES))
    a = ap.parse_args()
    print(f"{'machine':<14} {'pipeline':<18} {'ferrohalide ms':>15} {'Halide 21 ms':>13} {'ratio':>6}  output")
    with tempfile.TemporaryDirectory() as tmp:
        for machine in a.machines.split(","):
            runner = MACHINES[machine][2]
            for case, (h, w) in SIZES.items():
                cmds, outs, notes = {}, {}, {}
                for impl in ("ferrohalide", "halide"):
                    d = Path(tmp) / f"{machine}_{case.__name__}_{impl}"
                    d.mkdir()
                    try:
                        cmds[impl], shape, dtype = build(impl, case, h, w, d, a.repeat, machine)
                    except Exception as e:  # the reference refuses some (its errors are the result)
                        notes[impl] = str(e).strip().splitlines()[0][:60]
                times = {impl: [] for impl in cmds}
                for _ in range(a.rounds):
                    for impl, cmd in cmds.items():
                        r = subprocess.run([*runner, *cmd], capture_output=True, text=True, check=True)
                        times[impl].append(float(r.stdout.split()[0]))
                        outs[impl] = np.fromfile(cmd[-1], dtype=dtype).reshape(shape)
                med = {impl: statistics.median(t) for impl, t in times.items()}
                fh = f"{med['ferrohalide']:.3f}" if "ferrohalide" in med else notes.get("ferrohalide", "-")
                ref = f"{med['halide']:.3f}" if "halide" in med else "refused"
                ratio = f"{med['ferrohalide'] / med['halide']:.2f}" if len(med) == 2 else "-"
                if len(outs) < 2:
                    same = notes.get("halide", "")
                elif np.dtype(dtype).kind == "f":
                    diff = np.abs(outs["ferrohalide"].view(np.int32).astype(np.int64) - outs["halide"].view(np.int32))
                    same = f"max ulp {int(diff.max())}"
                else:
                    n = int((outs["ferrohalide"] != outs["halide"]).sum())
                    same = "equal" if n == 0 else f"{n} of {outs['halide'].size} differ"
                print(f"{machine:<14} {case.__name__:<18} {fh:>15} {ref:>13} {ratio:>6}  {same}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("HL_NUM_THREADS", "2")
    main()
