#!/usr/bin/env bash
# Run pytest under valgrind memcheck (PYTHONMALLOC=malloc, so Python's own
# allocator does not hide blocks) and summarize the errors: one line per
# error context, marked OURS? when a frame is in ferrohalide's extension
# (Rust, LLVM) or in JIT-compiled code (unknown frames), else python.
# The python contexts are CPython and ld.so noise (uninitialised digits in
# PyLong internals, strncmp over-reads in the dynamic loader); they show up
# for `python -c "import numpy, pytest"` alone.
#
#   scripts/memcheck.sh tests/api/test_leaks.py -k "not soak"
#
# About 30-40x slower than a normal run. Tests that measure thread
# interleaving (test_threads.py's GIL tests) are meaningless under valgrind,
# which runs one thread at a time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOGS="$(mktemp -d /tmp/memcheck.XXXXXX)"
status=0
PYTHONMALLOC=malloc valgrind --tool=memcheck --error-limit=no --num-callers=30 \
    --log-file="$LOGS/vg.%p.log" "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider "$@" || status=$?
"$ROOT/.venv/bin/python" "$ROOT/scripts/valgrind_summary.py" "$LOGS"/vg.*.log | tee "$LOGS/summary.txt" | grep -A8 '^OURS' || true
echo "[memcheck] $(grep -c '^OURS' "$LOGS/summary.txt" || true) contexts in ferrohalide, $(grep -c '^python' "$LOGS/summary.txt" || true) in CPython/ld.so; logs in $LOGS"
exit "$status"
