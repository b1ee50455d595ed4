#!/usr/bin/env bash
# Phases 2-4 of the clustering at the paper's scale on synthetic sketches
# (docs/benchmarks.md, "Clustering at paper scale"):
#   bench/paper_scale.sh [DOCS] [OUTDIR] [paper_scale options: -m MEMORY -d MAX_DF -s SEED -k]
# DOCS defaults to 1000000 (the paper: 30000000); OUTDIR defaults to
# /tmp/shingle-paper-scale (30M documents need about 25 GB free there) and is
# removed afterwards unless -k is given. Built with -O2 against
# build/5.4/libshingle_core.a, as the shipped build is.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh

DOCS=${1:-1000000}
OUT=${2:-/tmp/shingle-paper-scale}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift

[ -f build/5.4/libshingle_core.a ] || SHINGLE_ONLY_54=1 bash scripts/setup.sh
mkdir -p build/bench
cc -std=c99 -O2 -Wall -Wextra -Icore bench/paper_scale.c $SHINGLE_CORE_LINK \
   -o build/bench/paper_scale
df -h "$(dirname "$OUT")" | tail -1
exec build/bench/paper_scale -n "$DOCS" "$@" "$OUT"
