#!/usr/bin/env bash
# Build ferrohalide (scripts/setup.sh), then run every test:
#   cargo test for the Rust crates (the PyO3 crate is tested through pytest),
#   pytest for the Python API, including differential tests against halide==21.0.0.
# Both suites always run; the exit status is non-zero if either failed.
# Extra arguments go to pytest (e.g. scripts/test.sh -k buffer).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export LLVM_SYS_191_PREFIX="$(llvm-config-19 --prefix)"

status=0
echo "[test] cargo test --release (workspace, except the Python extension crate)"
cargo test --release --no-fail-fast --workspace --exclude ferrohalide-python || status=1

echo "[test] pytest"
"$ROOT/.venv/bin/python" -m pytest -q tests "$@" || status=1

if [ "$status" -ne 0 ]; then
    echo "[test] FAILED (see above)" >&2
fi
exit "$status"
