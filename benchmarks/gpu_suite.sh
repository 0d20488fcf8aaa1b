#!/usr/bin/env bash
# Runs every GPU fixture through measure, plan and apply on a CUDA machine and prints a table.
# Usage (source tree, Warp importable): bash benchmarks/gpu_suite.sh [fixture ...]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import warp as wp; wp.init(); assert wp.is_cuda_available(), 'no CUDA device'"
exec python3 benchmarks/gpu_suite.py "$@"
