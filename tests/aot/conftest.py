"""Shared pieces of the ahead-of-time tests: a C compiler, a scratch
directory, and a tiny pipeline compiled by either implementation."""
import os
import shutil
import subprocess
import sys

import pytest


def _tool(*names):
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def cc():
    """The system C compiler (CI installs it: scripts/setup.sh)."""
    path = _tool(os.environ.get("CC", ""), "cc", "gcc", "clang", "clang-19")
    assert path, "a C compiler is needed for the ahead-of-time tests"
    return path


def run(cmd, **kw):
    """Run a command; fail the test with its output if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"$ {' '.join(map(str, cmd))}\n{p.stdout}\n{p.stderr}"
    return p


def include_dir(hl):
    """The directory holding an implementation's HalideRuntime.h."""
    for d in [os.path.join(hl.install_dir(), "include"), os.path.join(os.path.dirname(hl.__file__), "include")]:
        if os.path.exists(os.path.join(d, "HalideRuntime.h")):
            return d
    raise AssertionError(f"no HalideRuntime.h in {hl.install_dir()}")


def python_with(env_path=None):
    """An interpreter command for a fresh process."""
    return [sys.executable]
