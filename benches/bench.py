"""Benchmarks: the same pipelines and schedules under ferrohalide and the
reference Halide, each in its own subprocess, reported side by side.

Usage: python benches/bench.py [--runs N] [--rounds R] [--only TEXT]
                                [--halide-apps DIR]
(defaults: 15 runs, 5 rounds, every case)

The "app" cases build Halide's own Python apps (bilateral_grid, blur,
interpolate, local_laplacian) from their generator files, with the
generators' own schedules, in both implementations: DIR (or the
environment variable HALIDE_APPS_DIR) is the `python_bindings/apps`
directory of a Halide source tree (nothing of it is kept here); without it
those cases are skipped. Their outputs are compared between the two
implementations (largest difference printed), and with the reference built
with strict_float (IEEE float semantics, ferrohalide's own; by default the
reference lets LLVM reassociate and contract float arithmetic).

For each case it prints the JIT compile time (`compile_jit()` or
`compile_to_callable` timed alone, before the first run, which also pays
for first touches of its output; for the apps, the time of building the
generator and compile_to_callable; ferrohalide's
from an empty persistent JIT cache, and as "warm" from a second process
that finds the first one's code in the cache) and the median
run time over at least N runs and 0.25 s, timed after 50 ms of untimed
warm-up runs (then the median over R rounds; in each round every case runs
in a fresh process per implementation, the implementations alternating),
for both implementations, and the ratios ferrohalide / reference;
then the repeat_edge blur's run time over a plain copy's, per
implementation (the median over rounds of each round's ratio), and the
copy's run time over the machine's floor for the same bytes (C memcpy on
every core, benches/copy_floor.c, built with the system C compiler and
run once per round). Timing lives here, never in tests.
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


def jit_compiled(run, func):
    """`run`, its pipeline compiled first by `func.compile_jit()`, timed
    alone as the case's compile time: the first run also pays for first
    touches of its output and for starting the thread pool, in both
    implementations, which is not compiling (a realize after compile_jit
    compiles nothing more in either)."""
    t0 = time.perf_counter()
    func.compile_jit()
    run.compile_seconds = time.perf_counter() - t0
    return run


@case("demo sin/cos 512x512x3 (vectorize 8, parallel y)")
def demo(hl, np):
    edge = 512
    k = 20.0 / float(edge)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    f = hl.Func("f")
    e = hl.sin(x * ((c + 1) / 3.0) * k) * hl.cos(y * ((c + 1) / 3.0) * k)
    f[x, y, c] = hl.cast(hl.UInt(8), e * 255.0)
    f.vectorize(x, 8).parallel(y)
    return jit_compiled(lambda: f.realize([edge, edge, 3]), f)


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
    return jit_compiled(lambda: (data, by.realize([w - 2, h - 2]))[1], by)


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


@case("realize f32 1000x1000 in a loop, keeping the last output (vectorize 16, parallel y)")
def realize_kept(hl, np):
    # The usual `out = f.realize(...)` loop: each output is freed while the
    # next is alive, so a new output's storage is fresh memory (a page
    # fault per 4 KB on first touch) unless freed storage is reused.
    x, y = hl.Var("x"), hl.Var("y")
    f = hl.Func("f")
    f[x, y] = hl.f32(x + y) * 0.5
    f.vectorize(x, 16).parallel(y)
    kept = [None]

    def run():
        kept[0] = f.realize([1000, 1000])
        return kept[0]

    return jit_compiled(run, f)


def gaussian_input(np):
    """tests/data/rgb.png, planar (c, y, x), tiled 4x4 (1024x1024x3) so the
    run time is well above timer noise."""
    import imageio.v2 as imageio

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rgb.png")
    rgb = np.asarray(imageio.imread(path))[:, :, :3]
    return np.ascontiguousarray(np.tile(rgb, (4, 4, 1)).transpose(2, 0, 1))


@case("gaussian 5x5 u8 RGB 1024x1024 (rgb.png tiled), repeat_edge, compile_to_callable")
def gaussian_callable(hl, np):
    planar = gaussian_input(np)
    x, y, c, yo, yi = (hl.Var(n) for n in ["x", "y", "c", "yo", "yi"])
    im = hl.ImageParam(hl.UInt(8), 3, "im")
    clamped = hl.BoundaryConditions.repeat_edge(im)
    taps = [(-2, 1), (-1, 4), (0, 6), (1, 4), (2, 1)]
    gx, out = hl.Func("gx"), hl.Func("gauss")
    gx[x, y, c] = sum(hl.u16(clamped[x + d, y, c]) * w for d, w in taps)
    out[x, y, c] = hl.u8((sum(gx[x, y + d, c] * w for d, w in taps) + 128) // 256)
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
    gx.store_at(out, yo).compute_at(out, yi).vectorize(x, 16)
    result = np.zeros_like(planar)
    t0 = time.perf_counter()
    compiled = out.compile_to_callable([im])
    seconds = time.perf_counter() - t0

    def run():
        compiled(planar, result)

    run.compile_seconds = seconds
    return run


def edge_blur_pipeline(hl, np, what):
    """The separable 3x3 blur of a 2560x1536 u16 image with repeat_edge on its
    input (out: split y by 32, parallel, vectorize x; blur_x: store_at out
    y, compute_at out x, vectorize x), or a plain copy of the image with
    the same parallel/vector schedule: with a clamp-free steady state the
    blur costs a small multiple of the copy. Vectors are the target's
    natural width for u16 (as `vectorize(x, natural_vector_size)` in a
    Halide schedule), the same for both implementations."""
    w, h = 2560, 1536
    rng = np.random.default_rng(1)
    data = rng.integers(0, 4096, size=(h, w), dtype=np.uint16)
    inp = hl.Buffer(data)
    x, y, yi = hl.Var("x"), hl.Var("y"), hl.Var("yi")
    v = hl.get_host_target().natural_vector_size(hl.UInt(16))
    if what == "blur":
        clamped = hl.BoundaryConditions.repeat_edge(inp)
        bx, out = hl.Func("blur_x"), hl.Func("blur_y")
        bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3
        out[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
        bx.store_at(out, y).compute_at(out, x).vectorize(x, v)
    else:
        out = hl.Func("copy")
        out[x, y] = inp[x, y]
    out.split(y, y, yi, 32).parallel(y).vectorize(x, v)
    result = hl.Buffer(hl.UInt(16), [w, h])
    return jit_compiled(lambda: (data, out.realize(result)), out)


EDGE_BLUR = "blur 3x3 u16 2560x1536, repeat_edge, split y 32 parallel, vectorize x natural; blur_x store_at y, compute_at x"
EDGE_COPY = "copy u16 2560x1536, split y 32 parallel, vectorize x natural"


@case(EDGE_BLUR)
def edge_blur(hl, np):
    return edge_blur_pipeline(hl, np, "blur")


@case(EDGE_COPY)
def edge_copy(hl, np):
    return edge_blur_pipeline(hl, np, "copy")


def histogram_pipeline(hl, np, parallel):
    """256-bin histogram of a 2560x1536 u8 image: a scatter update over an
    RDom, serial, split into row strips by rfactor and run in parallel, or
    parallel over rows with atomic updates."""
    w, h = 2560, 1536
    data = np.random.default_rng(2).integers(0, 256, size=(h, w), dtype=np.uint8)
    im = hl.Buffer(data)
    x, u = hl.Var("x"), hl.Var("u")
    r = hl.RDom([(0, w), (0, h)])
    hist = hl.Func("hist")
    hist[x] = 0
    hist[hl.i32(im[r.x, r.y])] += 1
    if parallel == "atomic":
        hist.update().atomic().parallel(r.y)
    elif parallel:
        ryo, ryi = hl.RVar("ryo"), hl.RVar("ryi")
        hist.update().split(r.y, ryo, ryi, 64)
        intm = hist.update().rfactor(ryo, u)
        intm.compute_root().update().parallel(u)
    return jit_compiled(lambda: (data, hist.realize([256])), hist)


@case("histogram 256 bins of u8 2560x1536, serial update")
def histogram_serial(hl, np):
    return histogram_pipeline(hl, np, False)


@case("histogram 256 bins of u8 2560x1536, rfactor over row strips, parallel")
def histogram_rfactor(hl, np):
    return histogram_pipeline(hl, np, True)


@case("histogram 256 bins of u8 2560x1536, atomic() update parallel over rows")
def histogram_atomic(hl, np):
    return histogram_pipeline(hl, np, "atomic")


@case("matmul f32 512x512, update split x 16, r outside xi, vectorize xi, parallel y")
def matmul(hl, np):
    n = 512
    rng = np.random.default_rng(3)
    a_data = rng.random((n, n), dtype=np.float32)
    b_data = rng.random((n, n), dtype=np.float32)
    a, b = hl.Buffer(a_data), hl.Buffer(b_data)
    x, y, xo, xi = hl.Var("x"), hl.Var("y"), hl.Var("xo"), hl.Var("xi")
    r = hl.RDom([(0, n)])
    c = hl.Func("c")
    c[x, y] = hl.f32(0)
    c[x, y] += a[r.x, y] * b[x, r.x]
    c.vectorize(x, 16).parallel(y)
    c.update().split(x, xo, xi, 16).reorder(xi, r.x, xo, y).vectorize(xi).parallel(y)
    return jit_compiled(lambda: (a_data, b_data, c.realize([n, n])), c)


@case("convolution 9 taps f32 4096x512, update over an RDom, vectorize x 8, parallel y")
def convolution(hl, np):
    w, h, k = 4096, 512, 9
    in_data = np.random.default_rng(1).random((h, w + k), dtype=np.float32)
    k_data = np.random.default_rng(2).random((k,), dtype=np.float32)
    inp, taps = hl.Buffer(in_data), hl.Buffer(k_data)
    x, y = hl.Var("x"), hl.Var("y")
    r = hl.RDom([(0, k)])
    f = hl.Func("f")
    f[x, y] = hl.f32(0)
    f[x, y] += taps[r.x] * inp[x + r.x, y]
    f.vectorize(x, 8).parallel(y)
    f.update().vectorize(x, 8).parallel(y)
    return jit_compiled(lambda: (in_data, k_data, f.realize([w, h])), f)


# Seconds of untimed runs between the first (compiling) run and the timed ones.
WARMUP = 0.05
# Timed runs go on for at least this many seconds (and at least --runs
# ---------------------------------------------------------------------------
# Halide's Python apps, from their generator files
# ---------------------------------------------------------------------------

APP_W, APP_H = 1536, 2560


def app_generator(hl, name):
    """The app generator class `name` (from $HALIDE_APPS_DIR/<name>_generator.py,
    run with `import halide` meaning `hl`). Untimed: executing the file is
    the user's import, not compiling (`runpy` recompiles its source to
    bytecode every time, which an import would have cached)."""
    import runpy

    apps = os.environ.get("HALIDE_APPS_DIR", "")
    path = os.path.join(apps, f"{name}_generator.py")
    if not apps or not os.path.exists(path):
        raise RuntimeError("skipped: set HALIDE_APPS_DIR (or --halide-apps) to Halide's python_bindings/apps")
    saved = sys.modules.get("halide")
    sys.modules["halide"] = hl
    try:
        return runpy.run_path(path, run_name=f"bench_app_{name}")[name]
    finally:
        if saved is None:
            del sys.modules["halide"]
        else:
            sys.modules["halide"] = saved


def app_callable(hl, generator, params=None):
    """The app's pipeline (its generator run) compiled for the JIT."""
    target = hl.get_jit_target_from_environment()
    if os.environ.get("BENCH_STRICT_FLOAT"):
        # IEEE float semantics in the reference (no reassociation, no FMA
        # contraction, exact transcendentals), which ferrohalide always has.
        target = target.with_feature(hl.TargetFeature.StrictFloat)
    with hl.GeneratorContext(target):
        return generator(generator_params=params or {}).compile_to_callable()


def app_case(hl, np, name, inputs, out_shape, out_dtype):
    """A run closure calling the app's callable; the output is kept for
    the comparison between implementations. Its compile time is the
    generator's run and `compile_to_callable`."""
    generator = app_generator(hl, name)
    compiled = []
    out = np.zeros(out_shape, dtype=out_dtype)

    def run():
        if not compiled:
            t0 = time.perf_counter()
            compiled.append(app_callable(hl, generator))
            run.compile_seconds = time.perf_counter() - t0
        compiled[0](*inputs, out)
        return out

    return run


def app_image(np, channels=None, dtype="float32", scale=1.0):
    rng = np.random.default_rng(7)
    shape = (APP_H, APP_W) if channels is None else (channels, APP_H, APP_W)
    img = rng.random(shape, dtype=np.float32) * scale
    return np.ascontiguousarray(img.astype(dtype))


@case("app bilateral_grid 1536x2560 f32 (its own schedule)")
def app_bilateral_grid(hl, np):
    img = app_image(np)
    return app_case(hl, np, "bilateral_grid", [img, 0.1], img.shape, np.float32)


@case("app blur 1536x2560 u16 (its own schedule)")
def app_blur(hl, np):
    img = app_image(np, dtype="uint16", scale=255.0)
    return app_case(hl, np, "blur", [img], (APP_H - 2, APP_W - 2), np.uint16)


@case("app interpolate 1536x2560 rgba f32 (its own schedule)")
def app_interpolate(hl, np):
    img = app_image(np, channels=4)
    img[3] = 1.0
    return app_case(hl, np, "interpolate", [img], (3, APP_H, APP_W), np.float32)


@case("app local_laplacian 1536x2560 rgb u16 (its own schedule)")
def app_local_laplacian(hl, np):
    img = app_image(np, channels=3, dtype="uint16", scale=65535.0)
    return app_case(hl, np, "local_laplacian", [img, 8, 1.0, 1.0], img.shape, np.uint16)


# runs): a fast case's median then spans many runs, so a burst of noise
# from the machine's other work moves it little.
MIN_TIMED = 0.25


def worker(module, runs, only, outputs_dir=None, exact=None):
    import numpy as np

    hl = __import__(module)
    results = {}
    tag = module + ("-strict" if os.environ.get("BENCH_STRICT_FLOAT") else "")
    # Both implementations set up their JIT runtime on the first compile in
    # a process (the reference compiles it; ferrohalide loads it from its
    # cache after the first process of a round), and the first compile in a
    # process also pays for first touches of the compiler's code and heap
    # (ferrohalide: ~1,000 page faults, ~4 ms here): a trivial pipeline is
    # compiled first, so a case's "jit" row is its own pipeline's compile.
    # Its constant is new in every process, so ferrohalide compiles it
    # rather than finding it in the cache.
    x0, f0 = hl.Var("bench_x"), hl.Func("bench_warmup")
    f0[x0] = x0 + (os.getpid() % 100000)
    f0.realize([4])
    for name, build in CASES.items():
        if (only and only not in name) or (exact is not None and name != exact):
            continue
        try:
            run = build(hl, np)
            t0 = time.perf_counter()
            value = run()
            first = time.perf_counter() - t0
            if outputs_dir and name.startswith("app ") and value is not None:
                np.save(os.path.join(outputs_dir, f"{tag}-{name.split()[1]}.npy"), np.asarray(value))
            # Warm up before timing: after the compile the other cores have
            # idled, and the first few short runs pay for waking them (and
            # their clocks) up. Untimed runs for at least WARMUP seconds.
            warm_start = time.perf_counter()
            while time.perf_counter() - warm_start < WARMUP:
                run()
            times = []
            timed_start = time.perf_counter()
            while len(times) < runs or time.perf_counter() - timed_start < MIN_TIMED:
                t0 = time.perf_counter()
                run()
                times.append(time.perf_counter() - t0)
            times.sort()
            median = times[len(times) // 2]
            # The apps time their compile itself (the generator and
            # compile_to_callable): their first run also pays for first
            # touches of large intermediate buffers, which is not compiling.
            compile_seconds = getattr(run, "compile_seconds", None)
            if compile_seconds is None:
                compile_seconds = max(first - median, 0.0)
            results[name] = {"compile": compile_seconds, "run": median}
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


def build_copy_floor(directory):
    """benches/copy_floor.c built with the system C compiler, or None."""
    exe = os.path.join(directory, "copy_floor")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "copy_floor.c")
    p = subprocess.run([os.environ.get("CC", "cc"), "-O2", "-pthread", src, "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"copy floor not measured: {p.stderr.strip()}", file=sys.stderr)
        return None
    return exe


def run_copy_floor(exe, runs):
    p = subprocess.run([exe, str(runs)], capture_output=True, text=True)
    return float(p.stdout) if p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="run only the cases whose name contains TEXT")
    ap.add_argument("--halide-apps", default=None, help="Halide's python_bindings/apps directory")
    ap.add_argument("--worker", default=None)
    ap.add_argument("--outputs", default=None)
    ap.add_argument("--case", default=None, help="(worker) run only the case with exactly this name")
    args = ap.parse_args()
    if args.halide_apps:
        os.environ["HALIDE_APPS_DIR"] = os.path.abspath(args.halide_apps)
    if args.worker:
        worker(args.worker, args.runs, args.only, args.outputs, args.case)
        return
    import tempfile

    outputs_dir = tempfile.mkdtemp(prefix="ferrohalide-bench-")
    # The machines are noisy: alternate the implementations over several
    # rounds, each in a fresh process, and report the median per case.
    rounds = {"ferrohalide": [], "halide": []}
    # ferrohalide's persistent JIT cache: each round starts from an empty
    # one (the "jit" row is a cold compile, like the reference's), then a
    # second fresh process finds everything cached ("jit warm").
    warm = []

    def worker_run(module, cache, runs, case, strict=False):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", FERROHALIDE_CACHE_DIR=cache)
        if strict:
            env["BENCH_STRICT_FLOAT"] = "1"
        p = subprocess.run(
            [sys.executable, __file__, "--worker", module, "--runs", str(runs),
             "--case", case, "--outputs", outputs_dir],
            capture_output=True,
            text=True,
            # NumPy's BLAS threads would otherwise spin beside the
            # pipelines' own thread pools on the two cores.
            env=env,
        )
        if p.returncode != 0:
            print(f"{module} worker failed:\n{p.stderr}", file=sys.stderr)
            return None
        return json.loads(p.stdout.strip().splitlines()[-1])

    floor_exe = build_copy_floor(outputs_dir)
    floors = []
    names = [n for n in CASES if args.only in n]
    # Each case runs in a process of its own: what a case compiles then
    # does not depend on what ran before it in the process (automatic
    # names of unnamed Buffers and RDoms count up per process, and they
    # are part of the JIT cache's key), so the warm process, a fresh one
    # running the same case, finds exactly what the cold one stored.
    for _ in range(args.rounds):
        if floor_exe:
            floors.append(run_copy_floor(floor_exe, args.runs))
        cache = tempfile.mkdtemp(prefix="ferrohalide-bench-cache-")
        merged = {module: {} for module in rounds}
        warm_merged = {}
        for name in names:
            # The implementations alternate case by case.
            for module in rounds:
                r = worker_run(module, cache, args.runs, name)
                merged[module].update(r or {name: {"error": "worker failed"}})
                if module == "ferrohalide":
                    r = worker_run(module, cache, 1, name)
                    warm_merged.update(r or {name: {"error": "worker failed"}})
        for module in rounds:
            rounds[module].append(merged[module])
        warm.append(warm_merged)
    # The reference once more with strict_float, for the apps: the
    # reference's default float semantics allow reassociation and FMA
    # contraction, which ferrohalide never does, so this output is the one
    # ferrohalide's must match (within a rounding of the final cast).
    for name in names:
        if name.startswith("app "):
            worker_run("halide", tempfile.mkdtemp(prefix="ferrohalide-bench-cache-"), 1, name, strict=True)
    out = {module: median_results(results, names) for module, results in rounds.items()}
    out_warm = median_results(warm, names)
    print(f"{'case':52} {'':4} {'ferrohalide':>12} {'reference':>12} {'ratio':>7}")
    for name in names:
        a = out["ferrohalide"].get(name, {"error": "no result"})
        b = out["halide"].get(name, {"error": "no result"})
        for key, label in [("compile", "jit"), ("run", "run")]:
            if "error" in a or "error" in b:
                err = a.get("error") or b.get("error")
                print(f"{name:52} {label:4} error: {err}")
                break
            # A compile time below timer noise (first run no slower than the
            # median) has no meaningful ratio.
            ratio = f"{a[key] / b[key]:7.2f}" if b[key] > 0 else "    n/a"
            print(f"{name:52} {label:4} {a[key]*1e3:10.2f}ms {b[key]*1e3:10.2f}ms {ratio}")
            if key == "compile" and "compile" in out_warm.get(name, {}):
                w = out_warm[name]["compile"]
                ratio = f"{w / b[key]:7.2f}" if b[key] > 0 else "    n/a"
                print(f"{'':52} {'warm':4} {w*1e3:10.2f}ms {b[key]*1e3:10.2f}ms {ratio}")
    # The apps' outputs, ferrohalide against the reference.
    import numpy as np

    for name in names:
        if not name.startswith("app "):
            continue
        app = name.split()[1]
        files = [os.path.join(outputs_dir, f"{m}-{app}.npy") for m in ("ferrohalide", "halide")]
        if all(os.path.exists(f) for f in files):
            a, b = (np.load(f).astype(np.float64) for f in files)
            diff = np.abs(a - b).max() if a.shape == b.shape else float("inf")
            strict = os.path.join(outputs_dir, f"halide-strict-{app}.npy")
            note = ""
            if os.path.exists(strict):
                s = np.load(strict).astype(np.float64)
                sdiff = np.abs(a - s).max() if a.shape == s.shape else float("inf")
                note = f"; from the reference with strict_float {sdiff:.3g}"
            print(f"app {app}: largest difference from the reference {diff:.3g}{note}"
                  f"{'' if a.shape == b.shape else ' (shapes differ)'}")
    # The cost of the boundary condition: the blur against a plain copy of
    # the same image, per implementation. Both run in the same round, close
    # together, so each round's ratio sees about the same machine; the
    # median over rounds discounts a round disturbed by other work.
    for module, results in rounds.items():
        ratios = sorted(
            r[EDGE_BLUR]["run"] / r[EDGE_COPY]["run"]
            for r in results
            if "run" in r.get(EDGE_BLUR, {}) and r.get(EDGE_COPY, {}).get("run", 0) > 0
        )
        if ratios:
            per_round = ", ".join(f"{x:.2f}" for x in ratios)
            print(
                f"{module}: repeat_edge blur / copy run time = {ratios[len(ratios) // 2]:.2f}"
                f" (median of rounds: {per_round})"
            )
    # The copy against the machine's floor for the same bytes: memcpy on
    # every core (benches/copy_floor.c), measured in the same rounds.
    floors = sorted(f for f in floors if f)
    if floors and args.only in EDGE_COPY:
        floor = floors[len(floors) // 2]
        print(f"copy floor (C memcpy on all cores, same image): {floor*1e3:.3f}ms")
        for module in rounds:
            run = out[module].get(EDGE_COPY, {}).get("run")
            if run:
                print(f"{module}: copy / floor = {run / floor:.2f}")


if __name__ == "__main__":
    main()
