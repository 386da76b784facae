"""Benchmarks: the same pipelines and schedules under ferrohalide and the
reference Halide, each in its own subprocess, reported side by side.

Usage: python benches/bench.py [--runs N] [--rounds R] [--only TEXT]

For each case it prints the JIT compile time (first realize minus the median
run time: both implementations compile lazily on first use) and the median
run time over N runs (then the median over R alternating rounds, each
in a fresh process), for both implementations, and the ratios
ferrohalide / reference. Timing lives here, never in tests.
"""

import argparse
import json
import os
import subprocess
import sys
import time

CASES = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


@case("demo sin/cos 512x512x3 (vectorize 8, parallel y)")
def demo(hl, np):
    edge = 512
    k = 20.0 / float(edge)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("f")
    e = hl.sin(x * ((c + 1) / 3.0) * k) * hl.cos(y * ((c + 1) / 3.0) * k)
    f[x, y, c] = hl.cast(hl.UInt(8), e * 255.0)
    f.vectorize(x, 8).parallel(y)
    return lambda: f.realize([edge, edge, 3])


def blur_pipeline(hl, np, schedule):
    w, h = 2560, 1536
    rng = np.random.default_rng(1)
    data = rng.integers(0, 4096, size=(h, w), dtype=np.uint16)
    inp = hl.Buffer(data)
    x, y = hl.Var("x"), hl.Var("y")
    bx, by = hl.Func("blur_x"), hl.Func("blur_y")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3
    if schedule == "root":
        bx.compute_root().vectorize(x, 16).parallel(y)
    if schedule == "sliding":
        # The classic schedule: strips of 32 rows in parallel, blur_x
        # computed per row of blur_y inside each strip.
        yo, yi = hl.Var("yo"), hl.Var("yi")
        by.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
        bx.store_at(by, yo).compute_at(by, yi).vectorize(x, 16)
    elif schedule == "sliding_x":
        # blur_x computed per vector of blur_y: it slides along both yi
        # and x, and its storage folds to 4 rows.
        yi = hl.Var("yi")
        by.split(y, y, yi, 32).parallel(y).vectorize(x, 8)
        bx.store_at(by, y).compute_at(by, x).vectorize(x, 8)
    else:
        by.vectorize(x, 16).parallel(y)
    # Halide's Buffer does not keep the NumPy array alive: the closure does.
    return lambda: (data, by.realize([w - 2, h - 2]))[1]


@case("blur 3x3 u16 2560x1536, blur_x inline")
def blur_inline(hl, np):
    return blur_pipeline(hl, np, "inline")


@case("blur 3x3 u16 2560x1536, blur_x compute_root")
def blur_root(hl, np):
    return blur_pipeline(hl, np, "root")


@case("blur 3x3 u16 2560x1536, blur_x store_at yo, compute_at yi")
def blur_sliding(hl, np):
    return blur_pipeline(hl, np, "sliding")


@case("blur 3x3 u16 2560x1536: out split y by 32, parallel y, vectorize x 8; "
      "blur_x store_at out y, compute_at out x, vectorize x 8")
def blur_sliding_x(hl, np):
    return blur_pipeline(hl, np, "sliding_x")


def worker(module, runs, only):
    import numpy as np

    hl = __import__(module)
    results = {}
    for name, build in CASES.items():
        if only and only not in name:
            continue
        try:
            run = build(hl, np)
            t0 = time.perf_counter()
            run()
            first = time.perf_counter() - t0
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                run()
                times.append(time.perf_counter() - t0)
            times.sort()
            median = times[len(times) // 2]
            results[name] = {"compile": max(first - median, 0.0), "run": median}
        except Exception as e:  # report, keep going
            results[name] = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(results))


def median_results(results, names):
    """Per case and metric, the median over rounds (an error if any round failed)."""
    merged = {}
    for name in names:
        runs = [r.get(name, {"error": "no result"}) for r in results]
        errors = [r["error"] for r in runs if "error" in r]
        if errors or not runs:
            merged[name] = {"error": errors[0] if errors else "no result"}
            continue
        merged[name] = {k: sorted(r[k] for r in runs)[len(runs) // 2] for k in ("compile", "run")}
    return merged


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the cases whose name contains TEXT")
    ap.add_argument("--worker", default=None)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.runs, args.only)
        return
    # The machines are noisy: alternate the implementations over several
    # rounds, each in a fresh process, and report the median per case.
    rounds = {"ferrohalide": [], "halide": []}
    for _ in range(args.rounds):
        for module in rounds:
            p = subprocess.run(
                [sys.executable, __file__, "--worker", module, "--runs", str(args.runs),
                 "--only", args.only],
                capture_output=True,
                text=True,
                env=dict(os.environ),
            )
            if p.returncode != 0:
                print(f"{module} worker failed:\n{p.stderr}", file=sys.stderr)
                continue
            rounds[module].append(json.loads(p.stdout.strip().splitlines()[-1]))
    names = [n for n in CASES if args.only in n]
    out = {module: median_results(results, names) for module, results in rounds.items()}
    print(f"{'case':52} {'':4} {'ferrohalide':>12} {'reference':>12} {'ratio':>7}")
    for name in names:
        a = out["ferrohalide"].get(name, {"error": "no result"})
        b = out["halide"].get(name, {"error": "no result"})
        for key, label in [("compile", "jit"), ("run", "run")]:
            if "error" in a or "error" in b:
                err = a.get("error") or b.get("error")
                print(f"{name:52} {label:4} error: {err}")
                break
            ratio = a[key] / b[key] if b[key] > 0 else float("inf")
            print(f"{name:52} {label:4} {a[key]*1e3:10.2f}ms {b[key]*1e3:10.2f}ms {ratio:7.2f}")


if __name__ == "__main__":
    main()
