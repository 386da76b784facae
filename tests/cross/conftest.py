"""Cross-target tests: objects for another machine, linked with that
machine's C toolchain and run under user-mode emulation (QEMU).

The tools come from Debian's packages (scripts/setup.sh installs them).
Outside CI a missing tool skips these tests; in CI it fails them, so the
cross targets are never silently unchecked.
"""
import os
import shutil

import pytest


def cross_tool(*names):
    """The first of `names` on the PATH; skips (fails in CI) if none is."""
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    msg = f"cross-target tool not found: {' or '.join(names)} (scripts/setup.sh installs it)"
    if os.environ.get("CI"):
        pytest.fail(msg)
    pytest.skip(msg)
