"""Make tests/semantics/harness.py importable as `fh_harness` for the app tests."""
import importlib.util
import pathlib
import sys

_path = pathlib.Path(__file__).resolve().parents[1] / "semantics" / "harness.py"
if "fh_harness" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("fh_harness", _path)
    assert _spec is not None and _spec.loader is not None
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["fh_harness"] = _mod
    _spec.loader.exec_module(_mod)
