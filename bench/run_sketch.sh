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

SHINGLE_ONLY_54=1 bash scripts/setup.sh
[ -d "$CORPUS/text" ] && [ -d "$CORPUS/html" ] || bash bench/corpus.sh "$CORPUS"

mkdir -p build/bench
cc -std=c99 -O2 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Icore \
   bench/sketch_bench.c $SHINGLE_CORE_LINK \
   -o build/bench/sketch_bench
build/bench/sketch_bench "$@" "$CORPUS"
