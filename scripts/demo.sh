#!/usr/bin/env bash
# Build ferrohalide (scripts/setup.sh), then run the demos:
#   examples/demo.py -> example.png   (Halide's README example)
#   examples/blur.py -> blurred.png   (3x3 separable blur of tests/data/rgb.png)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
PY="$ROOT/.venv/bin/python"
"$PY" examples/demo.py
"$PY" examples/blur.py tests/data/rgb.png blurred.png
echo "[demo] wrote $ROOT/example.png and $ROOT/blurred.png"
