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

# The loop-heavy semantic tests again, with every serial loop outlined and
# every module compiled in parts on several threads (what otherwise only
# large pipelines reach; ARCHITECTURE.md, "Compiling a pipeline on several
# threads"), and the JIT cache with entries of several objects; gathers as
# gather instructions wherever the CPU has them (the run above takes the
# form this machine measures faster: "Gathers").
if [ "$#" -eq 0 ]; then
    echo "[test] pytest, code generation stress mode"
    FERROHALIDE_STRESS_CODEGEN=1 FERROHALIDE_GATHERS=hardware "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider \
        tests/semantics/test_schedules.py tests/semantics/test_multistage.py \
        tests/semantics/test_sliding_window.py tests/semantics/test_partition.py \
        tests/semantics/test_update_schedules.py tests/semantics/test_async.py \
        tests/semantics/test_atomic.py tests/semantics/test_fuzz_findings.py \
        tests/semantics/test_specialize.py tests/semantics/test_tail_strategies.py \
        tests/api/test_jit_cache.py || status=1
fi

# Types: the compiled module's stub is current, every stub matches the
# runtime (mypy.stubtest), and the tests and examples type-check.
if [ "$#" -eq 0 ]; then
    echo "[test] type stubs and mypy"
    (cd "$ROOT" && "$ROOT/.venv/bin/python" scripts/gen_stubs.py --check \
        && "$ROOT/.venv/bin/python" -m mypy.stubtest ferrohalide --mypy-config-file pyproject.toml \
            --allowlist scripts/stubtest_allowlist.txt \
        && "$ROOT/.venv/bin/python" -m mypy --config-file pyproject.toml tests examples/*.py \
        && "$ROOT/.venv/bin/python" -m mypy --config-file pyproject.toml --disallow-untyped-defs \
            examples/typed_example.py) || status=1
fi

# The wheel a user installs: built, checked for the stable ABI (abi3audit),
# installed into a fresh venv and exercised from outside the source tree.
if [ "$#" -eq 0 ]; then
    echo "[test] wheel"
    WHEEL_DIR="$(mktemp -d)"
    if WHEEL="$("$ROOT/scripts/build_wheel.sh" "$WHEEL_DIR")"; then
        python3 -m venv "$WHEEL_DIR/audit" \
            && "$WHEEL_DIR/audit/bin/python" -m pip install -q --disable-pip-version-check abi3audit </dev/null \
            && "$WHEEL_DIR/audit/bin/abi3audit" --assume-minimum-abi3 3.11 --strict "$WHEEL" \
            && "$ROOT/scripts/wheel_smoke.sh" "$WHEEL" || status=1
        # A fresh minimal Debian 12 (no compiler, Rust or LLVM) needs root.
        if [ "$(id -u)" -eq 0 ]; then
            "$ROOT/scripts/wheel_fresh_debian.sh" "$WHEEL" || status=1
        else
            echo "[wheel] not root: the fresh Debian 12 check is not run"
        fi
        # The same abi3 wheel under the newer CPythons this machine has.
        for v in 3.12 3.13; do
            # A working interpreter of that version (a pyenv shim on PATH
            # may exist for a version it does not select).
            PY=""
            for cand in "$HOME"/.pyenv/versions/"$v".*/bin/python3 "$(command -v "python$v" || true)"; do
                if [ -z "$PY" ] && [ -x "$cand" ] \
                    && "$cand" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$v'.split('.'))))" 2>/dev/null; then
                    PY="$cand"
                fi
            done
            if [ -n "$PY" ]; then
                "$ROOT/scripts/wheel_smoke.sh" "$WHEEL" "$PY" || status=1
            else
                echo "[wheel] no python$v here: not tried"
            fi
        done
    else
        status=1
    fi
    rm -rf "$WHEEL_DIR"
fi

if [ "$status" -ne 0 ]; then
    echo "[test] FAILED (see above)" >&2
fi
exit "$status"
