"""Shared pytest configuration for the whole suite. Keep it small: suite-specific
helpers live next to their tests (e.g. tests/semantics/harness.py)."""
import os

import pytest

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


@pytest.fixture(scope="session")
def data_dir():
    """Path of tests/data (small images made for the tests)."""
    return DATA_DIR


@pytest.fixture(scope="session")
def ref_hl():
    """The reference implementation (halide==21.0.0); skips the test if absent."""
    return pytest.importorskip("halide")
