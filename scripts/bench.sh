#!/usr/bin/env bash
# Benchmarks: ferrohalide vs the reference Halide, same pipelines and
# schedules, side by side with ratios. Not a test: nothing here asserts time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python benches/bench.py "$@"
