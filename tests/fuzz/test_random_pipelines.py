"""Random pipelines against Halide 21: a fixed, CI-sized seed set of tests/fuzz.

Every seed's program (gen.py) runs scheduled and unscheduled with ferrohalide and
with halide (runner.py).  The test fails on any seed classified crash, hang,
not-implemented, raises, accepts, wrong or internal (verdict.py) unless
expected_failures.txt lists that seed with that class: the list names the bug each
listed seed hits, and shrinks as bugs get fixed.  Like a strict xfail, a listed
seed that no longer fails that way fails the test too, so that its line is removed.
known_halide_bugs.txt lists the seeds where halide is wrong (with the evidence);
they are classified halide-bug, which passes.

Halide's outcomes are taken from ci_reference.jsonl (reference_cache.py) when they
certainly apply, so halide itself runs only for seeds whose ferrohalide result
differs from the recorded one; the file must match the generator version
(`runner.py --seeds 0:300 --record-reference tests/fuzz/ci_reference.jsonl` rewrites
it, `--verify-reference` checks it against halide).  Environment:
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
import reference_cache  # noqa: E402
import runner  # noqa: E402
import verdict  # noqa: E402

CI_SEEDS = "0:300"
REFERENCE = os.path.join(HERE, "ci_reference.jsonl")
RERECORD = "rerun the seed set and rewrite the list (tests/fuzz/README.md, 'Keeping the lists current')"

pytestmark = pytest.mark.skipif(os.environ.get("FH_SKIP_FUZZ", "") not in ("", "0"),
                                reason="FH_SKIP_FUZZ is set")


def listed(path):
    """{seed: class} of a seed list ('SEED CLASS  # bug' lines) made for this generator."""
    version = runner.list_version(path)
    assert version == gen.GEN_VERSION, (
        f"{os.path.basename(path)} is for generator v{version}, gen.py is v{gen.GEN_VERSION}: {RERECORD}")
    return {seed: rest.split()[0] for seed, rest in runner.read_seed_list(path).items()}


def test_seed_lists_are_current():
    """The lists and the recorded reference outcomes name programs of this generator."""
    listed(runner.EXPECTED_FAILURES)
    listed(runner.KNOWN_HALIDE_BUGS)
    version = reference_cache.file_version(REFERENCE)
    assert version == gen.GEN_VERSION, (
        f"ci_reference.jsonl was recorded with generator v{version}, gen.py is v{gen.GEN_VERSION}: "
        f"python tests/fuzz/runner.py --seeds {CI_SEEDS} --out /tmp/rec --record-reference {REFERENCE}")
    both = set(runner.read_seed_list(runner.EXPECTED_FAILURES)) & set(runner.read_seed_list(runner.KNOWN_HALIDE_BUGS))
    assert not both, f"seeds listed both as expected failures and as halide bugs: {sorted(both)}"


def test_random_pipelines(tmp_path):
    pytest.importorskip("halide")
    pytest.importorskip("ferrohalide")
    seeds = runner.parse_seeds(os.environ.get("FH_FUZZ_SEEDS", CI_SEEDS))
    jobs = int(os.environ.get("FH_FUZZ_JOBS", "2" if os.environ.get("CI") else "1"))
    out_dir = os.environ.get("FH_FUZZ_OUT") or str(tmp_path)
    expected = listed(runner.EXPECTED_FAILURES)
    # A generous timeout: a slow CI machine must not turn a long compile into a "hang".
    fuzzer = runner.Fuzzer(timeout=300, log_dir=str(tmp_path), reference=REFERENCE)
    results = fuzzer.run(seeds, jobs=jobs)

    unexpected, fixed = [], []
    for res in results:
        failing = res["class"] in verdict.FAILING
        if failing and expected.get(res["seed"]) != res["class"]:
            unexpected.append(res)
        elif not failing and res["seed"] in expected:
            fixed.append(res)
    runner.write_outputs(out_dir, unexpected + fixed, 1.0, "unexpected")
    lines = [f"  seed {r['seed']}: {r['class']}: {r['detail'][:300]}" for r in unexpected]
    lines += [f"  seed {r['seed']}: listed as {expected[r['seed']]}, now {r['class']}: remove its line "
              f"from expected_failures.txt" for r in fixed]
    assert not lines, (f"{len(unexpected)} unexpected failures, {len(fixed)} expected failures that pass "
                       f"(repros in {out_dir}; python tests/fuzz/gen.py SEED prints a program):\n"
                       + "\n".join(lines))


def test_verdict_separates_region_differences_from_wrong_values():
    """An output grown to another region than halide's, with every requested
    window equal, is a listed difference (D3); a value difference stays wrong."""
    import numpy as np

    vals = [np.arange(4), np.arange(3)]
    ok = lambda regions: ("ok", vals, [np.array(r) for r in regions])  # noqa: E731
    mine, theirs = ok([[[0, 4]], [[0, 3]]]), ok([[[0, 4]], [[-1, 5]]])
    assert verdict.classify(mine, mine, theirs, theirs)[0] == "region-difference"
    other = ("ok", [np.arange(4), np.arange(3) + 1], [np.array([[0, 4]]), np.array([[0, 3]])])
    assert verdict.classify(mine, mine, other, other)[0] == "wrong"
    assert verdict.classify(mine, mine, mine, mine)[0] == "ok"
    assert "region-difference" not in verdict.FAILING
    # The reference crashing in U while its S runs is its crash, not a
    # difference between its runs (seed 39666 was "1 outputs vs 287").
    assert verdict.classify(mine, mine, ("crash", 6), mine)[0] == "ref-crash"
