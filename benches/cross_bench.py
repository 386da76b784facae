"""Emulated run times of arm-64-linux objects, ferrohalide's next to
Halide 21's: the cross tests' four pipelines at a benchmark size, compiled
by each implementation for arm-64-linux with the same schedule, linked with
Debian's aarch64 cross compiler into the same C program, and run under
qemu-aarch64-static. The program times the pipeline in-process (fastest of
its runs, after one untimed run); each program runs `--rounds` times,
alternating implementations, and the median is reported with the ratio
ferrohalide / Halide. Outputs are compared too (bit-exact for integers).

    python benches/cross_bench.py [--rounds 3] [--repeat 10]

QEMU translates AArch64 code to this machine's, so the times say more about
the instructions each compiler chose than about a real arm64 core's speed.
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


def build(impl, case, h, w, workdir, repeat):
    hl = __import__(impl)
    func, params, values, shape, dtype = case(hl, h, w)
    name = case.__name__
    func.compile_to_static_library(str(workdir / name), params, name, hl.Target("arm-64-linux"))
    args = [Buf(v.dtype, v.shape) if isinstance(p, hl.ImageParam) else Scalar(ctype(p), v)
            for p, v in zip(params, values)]
    (workdir / "main.c").write_text(main_c(f"{name}.h", name, args, Buf(dtype, shape), repeat=repeat))
    subprocess.run(["aarch64-linux-gnu-gcc", "-O2", "-static", "-I", include_dir(hl), "-I", str(workdir),
                    str(workdir / "main.c"), str(workdir / f"{name}.a"), "-lpthread", "-lm", "-ldl",
                    "-o", str(workdir / "prog")], check=True, capture_output=True)
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
    a = ap.parse_args()
    qemu = "qemu-aarch64-static"
    print(f"{'pipeline':<20} {'ferrohalide ms':>15} {'Halide 21 ms':>13} {'ratio':>6}  output")
    with tempfile.TemporaryDirectory() as tmp:
        for case, (h, w) in SIZES.items():
            cmds, outs = {}, {}
            for impl in ("ferrohalide", "halide"):
                d = Path(tmp) / f"{case.__name__}_{impl}"
                d.mkdir()
                cmds[impl], shape, dtype = build(impl, case, h, w, d, a.repeat)
            times = {impl: [] for impl in cmds}
            for _ in range(a.rounds):
                for impl, cmd in cmds.items():
                    r = subprocess.run([qemu, *cmd], capture_output=True, text=True, check=True)
                    times[impl].append(float(r.stdout.split()[0]))
                    outs[impl] = np.fromfile(cmd[-1], dtype=dtype).reshape(shape)
            fh, ref = statistics.median(times["ferrohalide"]), statistics.median(times["halide"])
            if np.dtype(dtype).kind == "f":
                same = "max ulp " + str(int(np.max(np.abs(outs["ferrohalide"].view(np.int32).astype(np.int64)
                                                          - outs["halide"].view(np.int32)))))
            else:
                same = "equal" if np.array_equal(outs["ferrohalide"], outs["halide"]) else "DIFFERENT"
            print(f"{case.__name__:<20} {fh:>15.3f} {ref:>13.3f} {fh / ref:>6.2f}  {same}")


if __name__ == "__main__":
    os.environ.setdefault("HL_NUM_THREADS", "2")
    main()
