#!/usr/bin/env bash
# Install a built wheel into a fresh venv and run tests/wheel/smoke.py there,
# from outside the source tree: the JIT, C API and header checks with no
# compiler on PATH, then the ahead-of-time and extension builds with the
# system C compiler.
#
#   scripts/wheel_smoke.sh WHEEL [PYTHON]     (default: python3)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WHEEL="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
PYTHON="${2:-python3}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$PYTHON" -m venv "$TMP/venv"
"$TMP/venv/bin/python" -m pip install -q --disable-pip-version-check "$WHEEL" </dev/null
cp "$ROOT/tests/wheel/smoke.py" "$TMP/smoke.py"
cd "$TMP"
# -I: no PYTHONPATH, no user site, not the script's directory first.
env -i HOME="$TMP" PATH="$TMP/nothing" "$TMP/venv/bin/python" -I smoke.py --no-compiler
env -i HOME="$TMP" PATH="/usr/bin:/bin" "$TMP/venv/bin/python" -I smoke.py
echo "[wheel] $(basename "$WHEEL"): $(du -m "$WHEEL" | cut -f1) MB, smoke test passed with $("$TMP/venv/bin/python" -V)"
