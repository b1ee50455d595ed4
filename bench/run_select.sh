#!/usr/bin/env bash
# Builds and runs the benchmark of the sketch selection alone
# (docs/benchmarks.md, "The selection alone"):
#   bench/run_select.sh [CORPUS] [select_bench options: -r REPS -k min|mod|both -s text|html -e KB]
# CORPUS defaults to /tmp/shingle-corpus (bench/corpus.sh makes it). Compiled
# with plain -O2 against build/5.4/libshingle_core.a, as run_sketch.sh does;
# to measure another build in the same run, compile bench/select_bench.c
# against its libshingle_core.a the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh

CORPUS=${1:-/tmp/shingle-corpus}
[ $# -gt 0 ] && shift

bench_kernel select_bench "$CORPUS"
build/bench/select_bench "$@" "$CORPUS"
