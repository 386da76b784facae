"""The C backend against the JIT on a fixed set of the fuzz generator's
pipelines (tests/fuzz/c_backend.py runs any range of seeds), in a process
of its own: the programs name many Funcs, and names are process-wide."""
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "fuzz", "c_backend.py")


def test_random_pipelines_through_the_c_backend():
    p = subprocess.run([sys.executable, SCRIPT, "0", "40"], capture_output=True, text=True, timeout=900)
    summary = "\n".join(line for line in p.stdout.splitlines() if ":" in line and not line.startswith("Warning"))
    assert p.returncode == 0, summary + "\n" + p.stderr[-3000:]
    ok = next((line for line in p.stdout.splitlines() if line.startswith("ok:")), "ok: 0")
    assert int(ok.split()[1]) >= 15, summary
