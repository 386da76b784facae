#!/usr/bin/env bash
# Build ferrohalide (scripts/setup.sh), then run every test:
#   cargo test for the Rust crates (the PyO3 crate is tested through pytest),
#   pytest for the Python API, including differential tests against halide==21.0.0.
# Extra arguments go to pytest (e.g. scripts/test.sh -k buffer).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export LLVM_SYS_191_PREFIX="$(llvm-config-19 --prefix)"

echo "[test] cargo test --release (workspace, except the Python extension crate)"
cargo test --release --workspace --exclude ferrohalide-python

echo "[test] pytest"
"$ROOT/.venv/bin/python" -m pytest -q tests "$@"
