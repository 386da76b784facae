#!/usr/bin/env python3
"""Soak test: define, compile and realize pipelines many times over and check
that resident memory stays flat and that nothing stays alive.

Each cycle builds fresh Funcs over a fresh 16 MB NumPy image (2048 x 2048
float32): a self-referencing update (f[x, y] = f[x, y] + ...), a histogram
(an RDom update that reads itself, through a `where` predicate), a wrapper,
a Func compiled to a Callable, realizes them, checks a few values and drops
everything. Resident memory (VmRSS) is sampled after a warm-up. A leak grows
every cycle, while glibc's arenas step up once and then hold their size, so the
check is on the second half of the samples: the growth from the middle sample
to the last must stay under --max-growth-mb. The live-object counts (Funcs, Buffers, RDoms, Parameters, compiled pipelines)
must be back to where they started.

    .venv/bin/python scripts/soak.py                # 10,000 cycles (about 1 h on 2 cores)
    .venv/bin/python scripts/soak.py --cycles 200   # a short run
"""
import argparse
import gc
import os
import sys
import time
import weakref

import numpy as np

import ferrohalide as hl
from ferrohalide import _core

SIDE = 2048  # 2048 * 2048 * 4 bytes = 16 MB


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")


def live():
    gc.collect()
    return dict(_core._live_objects())


def one_cycle(i):
    """Build, compile and realize one set of pipelines; return weak references
    to the NumPy arrays they read (which must die with them)."""
    x, y = hl.Var("x"), hl.Var("y")
    a = np.full((SIDE, SIDE), float(i % 7), dtype=np.float32)
    b = hl.Buffer(a)

    # A self-referencing update over the whole 16 MB image.
    f = hl.Func("f")
    f[x, y] = b[x, y]
    f[x, y] = f[x, y] * 2.0 + 1.0
    f.vectorize(x, 8).parallel(y)
    f.update(0).vectorize(x, 8).parallel(y)
    out = f.realize([SIDE, SIDE])
    assert out[5, 7] == (i % 7) * 2.0 + 1.0

    # A histogram of a small image: an update that reads itself, with a
    # predicate that reads the input.
    small = np.arange(64 * 64, dtype=np.uint8).reshape(64, 64)
    sb = hl.Buffer(small)
    r = hl.RDom([(0, 64), (0, 64)])
    r.where(sb[r.x, r.y] % 2 == 0)
    h = hl.Func("h")
    h[x] = 0
    h[hl.cast(hl.Int(32), sb[r.x, r.y])] += 1
    hist = np.asarray(h.realize([256]))
    assert hist[0] == 16 and hist[1] == 0

    # A wrapper, and a Callable over an ImageParam with a self-referring
    # constraint.
    im = hl.ImageParam(hl.Float(32), 2, "im")
    im.dim(1).set_stride(im.dim(0).extent())
    g = hl.Func("g")
    g[x, y] = im[x, y] + 1.0
    k = hl.Func("k")
    k[x, y] = g[x, y] * 2.0
    g.in_(k).compute_root()
    c = k.compile_to_callable([im])
    dst = hl.Buffer(hl.Float(32), [64, 64])
    c(hl.Buffer(a[:64, :64].copy()), dst)
    assert dst[3, 3] == ((i % 7) + 1.0) * 2.0

    return [weakref.ref(a), weakref.ref(small)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=10_000)
    ap.add_argument("--warmup", type=int, default=None, help="cycles before the first sample (default: 10%%, at least 20)")
    ap.add_argument("--max-growth-mb", type=float, default=24.0)
    args = ap.parse_args()
    warmup = args.warmup if args.warmup is not None else max(20, args.cycles // 10)
    warmup = min(warmup, max(args.cycles - 1, 0))

    start_counts = live()
    samples = []
    dead_arrays = 0
    t0 = time.time()
    for i in range(args.cycles):
        refs = one_cycle(i)
        gc.collect()
        dead_arrays += sum(r() is None for r in refs)
        if i + 1 >= warmup and ((i + 1 - warmup) % max(1, (args.cycles - warmup) // 20) == 0 or i + 1 == args.cycles):
            samples.append((i + 1, rss_mb()))
            print(f"cycle {i + 1:6d}  rss {samples[-1][1]:8.1f} MB  ({time.time() - t0:7.1f} s)", flush=True)
    end_counts = live()
    growth = samples[-1][1] - samples[0][1]
    middle = samples[len(samples) // 2]
    late_growth = samples[-1][1] - middle[1]
    print(f"{args.cycles} cycles: rss {samples[0][1]:.1f} MB after {samples[0][0]} cycles, "
          f"{middle[1]:.1f} MB after {middle[0]}, {samples[-1][1]:.1f} MB at the end "
          f"(growth {growth:+.1f} MB, {late_growth:+.1f} MB since cycle {middle[0]}); "
          f"{dead_arrays} of {2 * args.cycles} input arrays freed; live objects {end_counts}")
    ok = True
    if late_growth > args.max_growth_mb:
        print(f"FAIL: resident memory grew by {late_growth:.1f} MB from cycle {middle[0]} to the end "
              f"(> {args.max_growth_mb} MB)")
        ok = False
    if dead_arrays != 2 * args.cycles:
        print("FAIL: some input arrays were not freed")
        ok = False
    if end_counts != start_counts:
        print(f"FAIL: live objects changed from {start_counts} to {end_counts}")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
