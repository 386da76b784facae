"""The product must never import the reference implementation."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PATTERN = re.compile(r"^\s*(import\s+halide\b|from\s+halide\b)", re.M)


def test_product_never_imports_halide():
    if (ROOT / "tests" / "api" / "test_no_halide_import.py").exists():
        pytest.skip("covered by tests/api/test_no_halide_import.py")
    offenders = []
    for sub in ("python/ferrohalide", "crates"):
        base = ROOT / sub
        if not base.exists():
            continue
        for p in base.rglob("*"):
            if p.suffix not in (".py", ".pyi", ".rs") or not p.is_file():
                continue
            text = p.read_text(errors="replace")
            if PATTERN.search(text) or re.search(r'import\s*\(\s*"halide"|import_module\(\s*["\']halide["\']|PyModule::import\([^)]*"halide"', text):
                offenders.append(str(p.relative_to(ROOT)))
    assert not offenders, "the product imports the reference `halide`: %s" % offenders
