"""Shared pytest configuration for the whole suite. Keep it small: suite-specific
helpers live next to their tests (e.g. tests/semantics/harness.py)."""
import os
import tempfile

import pytest

# The persistent JIT cache: the tests use one of their own, so that they
# neither read nor fill the developer's (tests/api/test_jit_cache.py
# checks the cache itself in fresh processes).
os.environ.setdefault("FERROHALIDE_CACHE_DIR", tempfile.mkdtemp(prefix="ferrohalide-test-cache-"))

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@pytest.fixture(scope="session")
def data_dir():
    """Path of tests/data (small images made for the tests)."""
    return DATA_DIR


@pytest.fixture(scope="session")
def ref_hl():
    """The reference implementation (halide==21.0.0); skips the test if absent."""
    return pytest.importorskip("halide")


# Known mismatches with the reference, tracked on the foundation issue.
# Listed tests run as non-strict xfail: they still run and are reported,
# and a fixed one shows up as XPASS (then remove it from the list).
_KNOWN = {
    line.strip()
    for line in (__import__("pathlib").Path(__file__).parent / "known_failures.txt").read_text().splitlines()
    if line.strip() and not line.startswith("#")
}


def pytest_collection_modifyitems(config, items):
    import pytest as _pytest

    for item in items:
        if item.nodeid in _KNOWN:
            item.add_marker(_pytest.mark.xfail(reason="known mismatch with the reference (see known_failures.txt)", strict=False))
