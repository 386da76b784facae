"""Random pipelines against Halide 21: a fixed, CI-sized seed set of tests/fuzz.

Every seed's program (gen.py) runs scheduled and unscheduled with ferrohalide and
with halide (runner.py).  The test fails on any seed classified crash, hang,
not-implemented, raises, accepts, wrong or internal (verdict.py) unless
expected_failures.txt lists that seed with that class: the list names the bug each
listed seed hits, and shrinks as bugs get fixed (a listed seed that passes is
reported, so it can be removed).

Halide's outcomes are taken from ci_reference.jsonl when they certainly apply
(reference_cache.py), which keeps the run within the CI budget; otherwise halide
runs live.  Environment:
    FH_SKIP_FUZZ=1       skip this test
    FH_FUZZ_SEEDS=A:B    another seed range (runs halide live for seeds not recorded)
    FH_FUZZ_JOBS=N       programs in parallel (default: 2 on CI, else 1)
    FH_FUZZ_OUT=DIR      where repros of unexpected failures go (default: a temp dir)
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
import runner  # noqa: E402
import verdict  # noqa: E402

CI_SEEDS = "0:300"
REFERENCE = os.path.join(HERE, "ci_reference.jsonl")

pytestmark = pytest.mark.skipif(os.environ.get("FH_SKIP_FUZZ", "") not in ("", "0"),
                                reason="FH_SKIP_FUZZ is set")


def expected_failures():
    """{seed: class} of expected_failures.txt (lines 'SEED CLASS  # bug')."""
    version = runner.list_version(runner.EXPECTED_FAILURES)
    assert version == gen.GEN_VERSION, (
        f"expected_failures.txt is for generator v{version}, gen.py is v{gen.GEN_VERSION}: "
        "rerun the seed set and rewrite the list")
    return {seed: rest.split()[0] for seed, rest in runner.read_seed_list(runner.EXPECTED_FAILURES).items()}


def test_random_pipelines(tmp_path):
    pytest.importorskip("halide")
    pytest.importorskip("ferrohalide")
    seeds = runner.parse_seeds(os.environ.get("FH_FUZZ_SEEDS", CI_SEEDS))
    jobs = int(os.environ.get("FH_FUZZ_JOBS", "2" if os.environ.get("CI") else "1"))
    out_dir = os.environ.get("FH_FUZZ_OUT") or str(tmp_path)
    expected = expected_failures()
    # A generous timeout: a slow CI machine must not turn a long compile into a "hang".
    fuzzer = runner.Fuzzer(timeout=300, log_dir=str(tmp_path), reference=REFERENCE)
    results = fuzzer.run(seeds, jobs=jobs)

    unexpected, fixed = [], []
    for res in results:
        failing = res["class"] in verdict.FAILING
        if failing and expected.get(res["seed"]) != res["class"]:
            unexpected.append(res)
        elif not failing and res["seed"] in expected:
            fixed.append(res["seed"])
    runner.write_outputs(out_dir, unexpected, 1.0, "unexpected")
    if fixed:
        print(f"\nexpected failures that now pass (remove them from expected_failures.txt): {fixed}")
    lines = [f"  seed {r['seed']}: {r['class']}: {r['detail'][:300]}" for r in unexpected]
    assert not unexpected, (f"{len(unexpected)} unexpected failures (repros in {out_dir}; "
                            f"python tests/fuzz/gen.py SEED prints a program):\n" + "\n".join(lines))
