#!/usr/bin/env bash
# Build the self-contained wheel: the Python extension and the C API
# library with LLVM linked in statically, the runtime and C API headers,
# and the few system libraries LLVM needs (libffi, libzstd) bundled by
# maturin's auditwheel step. One wheel serves CPython 3.11 and later (the
# stable ABI, abi3).
#
#   scripts/build_wheel.sh [OUT_DIR]      (default: dist/)
#
# Prints the wheel's path. Needs what scripts/setup.sh installs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/dist}"
"$ROOT/scripts/setup.sh" >&2
cd "$ROOT"
export PATH="$ROOT/.venv/bin:$HOME/.cargo/bin:$PATH"
export LLVM_SYS_191_PREFIX="$(llvm-config-19 --prefix)"
export VIRTUAL_ENV="$ROOT/.venv"
unset CONDA_PREFIX
mkdir -p "$OUT"
rm -f "$OUT"/ferrohalide-*.whl
maturin build --release --quiet -o "$OUT" </dev/null >&2
# maturin's auditwheel step rewrote the extension's library entries in
# cargo's own output (hashed names of the bundled copies, which exist only
# in the wheel): remove it, so that the next `maturin develop` links a
# clean one instead of copying this one into the source tree.
rm -f target/release/lib_core.so target/release/deps/lib_core.so target/maturin/lib_core.so
WHEEL="$(ls "$OUT"/ferrohalide-*.whl)"
cargo build --release --quiet -p ferrohalide-capi </dev/null >&2
python scripts/wheel_finish.py "$WHEEL" target/release/libferrohalide_c.so crates/capi/include/ferrohalide_c.h
echo "$WHEEL"
