#!/usr/bin/env bash
# Builds and runs the sketching throughput benchmark (docs/benchmarks.md,
# "Sketching throughput"):
#   bench/run_sketch.sh [CORPUS] [sketch_bench options: -r REPS -t THREADS]
# CORPUS defaults to /tmp/shingle-corpus and is made by bench/corpus.sh when
# it has no text/ or html/ yet. The benchmark is compiled with plain -O2, as
# the shipped build is, and linked against build/5.4/libshingle_core.a.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh

CORPUS=${1:-/tmp/shingle-corpus}
[ $# -gt 0 ] && shift

bench_kernel sketch_bench "$CORPUS"
build/bench/sketch_bench "$@" "$CORPUS"
