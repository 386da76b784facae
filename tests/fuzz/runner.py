"""Random differential testing of ferrohalide against Halide 21.

    python tests/fuzz/runner.py --seeds 0:500 --out DIR [--jobs 1] [--timeout 60]

Each seed's program (gen.py) runs four ways: ferrohalide and halide, each with its
schedule and without (the oracle).  Programs run in long-lived worker processes
(worker.py), one per module, restarted after a crash, a timeout or every
--restart-every programs; a crash is attributed to the seed and run it happened in.
Every seed gets a class (verdict.py).  For each seed that is not ok, DIR gets a
standalone repro `<class>-<seed>.py` (the program, with what each side printed),
and DIR/summary.json gets the counts, the speed and every non-ok seed's detail (DIR/results.jsonl
gets a line per seed as it finishes).

Seeds listed in known_halide_bugs.txt (where the reference itself is wrong) are
classified halide-bug rather than wrong; seeds in expected_failures.txt are
reported as expected (the CI test, test_random_pipelines.py, fails only on others).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
import reference_cache  # noqa: E402
import verdict  # noqa: E402

MODULES = ("ferrohalide", "halide")
KNOWN_HALIDE_BUGS = os.path.join(HERE, "known_halide_bugs.txt")
EXPECTED_FAILURES = os.path.join(HERE, "expected_failures.txt")


class Worker:
    """A worker.py process for one module, restarted as needed."""

    def __init__(self, module, log_dir, restart_every=150):
        self.module = module
        self.log_path = os.path.join(log_dir, f"worker-{module}-{id(self)}.log")
        self.restart_every = restart_every
        self.proc = None
        self.jobs = 0
        self.next_id = 0

    def start(self, attempts=3):
        """Start the worker; a start that takes too long (a loaded machine)
        is tried again before it counts as a failure."""
        for attempt in range(attempts):
            self.log = open(self.log_path, "ab")
            env = dict(os.environ, PYTHONFAULTHANDLER="1")
            self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "worker.py"), self.module],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env)
            self.jobs = 0
            try:
                ready = self.read(300)
            except TimeoutError:
                self.kill()
                if attempt + 1 < attempts:
                    continue
                raise RuntimeError(f"worker for {self.module} did not start in time; see {self.log_path}")
            if not (isinstance(ready, tuple) and ready[0] == "ready"):
                raise RuntimeError(f"worker for {self.module} did not start: {ready!r}; see {self.log_path}")
            return

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
            self.log.close()

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        self.stop()

    def run(self, text, sched, timeout):
        """The outcome of one program run (see verdict.py)."""
        if self.proc is None or self.jobs >= self.restart_every:
            self.stop()
            self.start()
        self.jobs += 1
        self.next_id += 1
        log_offset = os.path.getsize(self.log_path)
        data = pickle.dumps((self.next_id, text, sched), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.proc.stdin.write(struct.pack(">I", len(data)) + data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self.died(log_offset)
        try:
            answer = self.read(timeout)
        except TimeoutError:
            self.kill()
            return ("hang", timeout)
        if answer is None:
            return self.died(log_offset)
        job_id, outcome = answer
        assert job_id == self.next_id, (job_id, self.next_id)
        return outcome

    def read(self, timeout):
        """One message from the worker; None at EOF; TimeoutError when none comes in time."""
        deadline = time.monotonic() + timeout
        head = self.read_exact(4, deadline)
        if head is None:
            return None
        (n,) = struct.unpack(">I", head)
        body = self.read_exact(n, deadline)
        return None if body is None else pickle.loads(body)

    def read_exact(self, n, deadline):
        fd = self.proc.stdout.fileno()
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise TimeoutError
            chunk = os.read(fd, n - got)
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def died(self, log_offset):
        code = self.proc.wait()
        self.stop()
        with open(self.log_path, "rb") as f:
            f.seek(log_offset)
            tail = f.read().decode("utf-8", "replace")
        lines = [l for l in tail.splitlines() if l.strip() and not l.startswith("=== job")]
        sig = f"signal {-code}" if code < 0 else f"exit status {code}"
        try:
            import signal
            sig = signal.Signals(-code).name if code < 0 else sig
        except ValueError:
            pass
        return ("crash", sig + (": " + " | ".join(lines[-4:])[-400:] if lines else ""))


def read_seed_list(path):
    """{seed: text after the seed} from a list file ('SEED [rest]' lines, # comments)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if line:
                seed, _, rest = line.partition(" ")
                out[int(seed)] = rest.strip()
    return out


def list_version(path):
    """The generator version a list file was made with ('# generator vN' line)."""
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("# generator v"):
                    return int(line.split("v", 1)[1].split()[0])
    return None


class Fuzzer:
    """Runs seeds; one lane = one ferrohalide worker + one halide worker."""

    def __init__(self, timeout=60.0, restart_every=150, log_dir=None, modules=MODULES, reference=None):
        self.timeout = timeout
        # Recorded halide outcomes (none when recorded for another generator version).
        self.reference = reference_cache.load(reference, gen.GEN_VERSION)
        self.log_dir = log_dir or tempfile.mkdtemp(prefix="fuzz-logs-")
        self.restart_every = restart_every
        self.modules = modules
        self.known_ref_bugs = read_seed_list(KNOWN_HALIDE_BUGS)
        if self.known_ref_bugs and list_version(KNOWN_HALIDE_BUGS) != gen.GEN_VERSION:
            print(f"warning: {KNOWN_HALIDE_BUGS} was made for another generator version", file=sys.stderr)
            self.known_ref_bugs = {}

    def new_lane(self):
        return {m: Worker(m, self.log_dir, self.restart_every) for m in self.modules}

    def run_seed(self, lane, seed):
        """{'seed', 'class', 'detail', 'outcomes', 'text', 'seconds'} of one seed."""
        text = gen.generate(seed)
        recorded = self.reference.get(seed)
        if recorded and recorded[0] != reference_cache.program_sha(text):
            recorded = None
        outcomes, seconds = {}, {}
        for m in self.modules:  # ferrohalide first: its results may stand in for halide's
            for sched in (False, True):
                if m == "halide" and recorded:
                    o = reference_cache.reuse(recorded[1][sched], outcomes[("ferrohalide", sched)])
                    if o is not None:
                        outcomes[(m, sched)] = o
                        continue
                t0 = time.monotonic()
                outcomes[(m, sched)] = lane[m].run(text, sched, self.timeout)
                seconds[f"{m[:2]}{'S' if sched else 'U'}"] = round(time.monotonic() - t0, 3)
        cls, detail = verdict.classify(outcomes[("ferrohalide", False)], outcomes[("ferrohalide", True)],
                                       outcomes[("halide", False)], outcomes[("halide", True)],
                                       known_ref_bug=seed in self.known_ref_bugs)
        return {"seed": seed, "class": cls, "detail": detail, "outcomes": outcomes, "text": text,
                "seconds": seconds}

    def run(self, seeds, jobs=1, on_result=None):
        """Run seeds on `jobs` lanes; returns the results in seed order.  Lane k runs
        seeds k, k + jobs, ...: a worker sees the same programs before a given seed
        in every run (outcomes can depend on a process's history, see reduce.py)."""
        seeds = list(seeds)
        jobs = max(1, jobs)
        results, lock = {}, threading.Lock()

        def lane_main(mine):
            lane = self.new_lane()
            try:
                for seed in mine:
                    res = self.run_seed(lane, seed)
                    with lock:
                        results[seed] = res
                        if on_result:
                            on_result(res)
            finally:
                for w in lane.values():
                    w.stop()

        threads = [threading.Thread(target=lane_main, args=(seeds[k::jobs],)) for k in range(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return [results[s] for s in seeds if s in results]


# ---------------------------------------------------------------------- output
def repro_text(res):
    """A standalone repro: the program plus what each side printed."""
    o = res["outcomes"]
    notes = [f"# class: {res['class']}: {res['detail']}"]
    for m in MODULES:
        for sched in (False, True):
            notes.append(f"# {m} {'scheduled' if sched else 'unscheduled'}: {verdict.describe(o[(m, sched)], 2000)}")
    return res["text"] + "\n" + "\n".join(notes) + "\n"


def write_outputs(out_dir, results, elapsed, seeds_arg):
    os.makedirs(out_dir, exist_ok=True)
    expected = read_seed_list(EXPECTED_FAILURES)
    counts = {}
    failing = []
    for res in results:
        counts[res["class"]] = counts.get(res["class"], 0) + 1
        if res["class"] != "ok":
            with open(os.path.join(out_dir, f"{res['class']}-{res['seed']}.py"), "w") as f:
                f.write(repro_text(res))
            failing.append({"seed": res["seed"], "class": res["class"], "detail": res["detail"],
                            "expected": expected.get(res["seed"]), "seconds": res["seconds"]})
    summary = {
        "generator_version": gen.GEN_VERSION,
        "seeds": seeds_arg,
        "n": len(results),
        "elapsed_s": round(elapsed, 1),
        "seeds_per_minute": round(60 * len(results) / elapsed, 1) if elapsed else None,
        "counts": dict(sorted(counts.items())),
        "slowest": sorted(([r["seed"], round(sum(r["seconds"].values()), 1)] for r in results),
                          key=lambda p: -p[1])[:10],
        "not_ok": failing,
    }
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def check_generator(seeds, timeout, log_dir):
    """Run the instrumented programs (gen.py --check) unscheduled under halide: any
    error is a bug of the generator (a wrong type or range model, an invalid program)."""
    worker = Worker("halide", log_dir)
    bad = []
    try:
        for seed in seeds:
            outcome = worker.run(gen.generate(seed, check=True), False, timeout)
            if outcome[0] != "ok":
                bad.append(seed)
                print(f"seed {seed}: {verdict.describe(outcome, 600)}", flush=True)
    finally:
        worker.stop()
    print(f"{len(bad)} of {len(seeds)} programs failed the generator self-check: {bad}")
    return bad


def halide_outcomes(seeds, timeout, log_dir):
    """Yields (seed, text, U outcome, S outcome) of halide alone, in one worker (as a
    runner lane's halide worker sees them: each seed unscheduled, then scheduled)."""
    worker = Worker("halide", log_dir)
    try:
        for seed in seeds:
            text = gen.generate(seed)
            yield seed, text, worker.run(text, False, timeout), worker.run(text, True, timeout)
    finally:
        worker.stop()


def record_reference(path, results):
    """Write halide's outcomes of a run's seeds (all run live) to path."""
    from importlib.metadata import version
    reference_cache.save(path, gen.GEN_VERSION, f"halide=={version('halide')}", [
        (r["seed"], r["text"], r["outcomes"][("halide", False)], r["outcomes"][("halide", True)])
        for r in results])
    print(f"recorded halide's outcomes of {len(results)} seeds (generator v{gen.GEN_VERSION}) in {path}")


def verify_reference(path, seeds, timeout, log_dir):
    """Rerun halide on the recorded seeds and compare: the list of seeds that differ."""
    version = reference_cache.file_version(path)
    if version != gen.GEN_VERSION:
        print(f"{path} was recorded with generator v{version}, gen.py is v{gen.GEN_VERSION}: rerecord it")
        return ["version"]
    recorded = reference_cache.load(path, version)
    seeds = [s for s in seeds if s in recorded]
    bad = []
    for seed, text, u, s in halide_outcomes(seeds, timeout, log_dir):
        sha, rec = recorded[seed]
        problems = [] if sha == reference_cache.program_sha(text) else ["program text changed"]
        for mode, o in (("U", u), ("S", s)):
            if not reference_cache.same(rec[mode == "S"], o):
                problems.append(f"{mode}: recorded {str(rec[mode == 'S'])[:150]}, now {str(reference_cache.encode(o))[:150]}")
        if problems:
            bad.append(seed)
            print(f"seed {seed}: " + "; ".join(problems), flush=True)
    print(f"{len(seeds) - len(bad)} of {len(seeds)} recorded seeds reproduce; differing: {bad}")
    return bad


def parse_seeds(spec):
    """'0:500' (half-open range), '7', or '3,9,12'."""
    if ":" in spec:
        a, b = spec.split(":")
        return range(int(a), int(b))
    return [int(s) for s in spec.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", required=True, help="A:B (half-open), N, or N,M,...")
    ap.add_argument("--out", required=True, help="directory for repros and summary.json")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="programs run in parallel (each uses 2 processes)")
    # Generous: a loaded machine took a minute to compile a program with 512-lane vectors.
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--restart-every", type=int, default=150, help="restart workers after this many runs")
    ap.add_argument("--reference", help="recorded halide outcomes to reuse (reference_cache.py)")
    ap.add_argument("--record-reference", metavar="FILE",
                    help="also write halide's outcomes of these seeds to FILE (reference_cache.py)")
    ap.add_argument("--verify-reference", metavar="FILE",
                    help="only rerun halide on the seeds FILE records and compare with the records")
    ap.add_argument("--check-generator", action="store_true",
                    help="only self-test the generator (instrumented programs, halide, unscheduled)")
    args = ap.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    os.makedirs(args.out, exist_ok=True)
    if args.check_generator:
        sys.exit(1 if check_generator(seeds, args.timeout, args.out) else 0)
    if args.record_reference and args.reference:
        sys.exit("--record-reference needs every halide outcome live: drop --reference")
    if args.verify_reference:
        sys.exit(1 if verify_reference(args.verify_reference, seeds, args.timeout, args.out) else 0)
    fuzzer = Fuzzer(timeout=args.timeout, restart_every=args.restart_every,
                    log_dir=os.path.join(args.out, "logs"), reference=args.reference)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    start = time.monotonic()
    done = [0]
    # One line per finished seed, so that a run stopped early still says what it found.
    partial = open(os.path.join(args.out, "results.jsonl"), "a")

    def progress(res):
        done[0] += 1
        partial.write(json.dumps({"seed": res["seed"], "class": res["class"], "detail": res["detail"][:500],
                                  "seconds": res["seconds"]}) + "\n")
        partial.flush()
        if res["class"] != "ok":
            print(f"[{done[0]}/{len(seeds)}] seed {res['seed']}: {res['class']}: {res['detail'][:200]}", flush=True)
        elif done[0] % 50 == 0:
            print(f"[{done[0]}/{len(seeds)}] {60 * done[0] / (time.monotonic() - start):.1f} seeds/min", flush=True)

    results = fuzzer.run(seeds, jobs=args.jobs, on_result=progress)
    partial.close()
    summary = write_outputs(args.out, results, time.monotonic() - start, args.seeds)
    if args.record_reference:
        record_reference(args.record_reference, results)
    print(json.dumps({k: summary[k] for k in ("n", "elapsed_s", "seeds_per_minute", "counts")}, indent=1))


if __name__ == "__main__":
    main()
