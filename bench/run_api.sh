#!/usr/bin/env bash
# Sketching through the public Lua API against LC_ALL=C wc -w in the same run
# (docs/benchmarks.md, "Sketching through the Lua API"):
#   bash bench/run_api.sh [CORPUS] [REPS]
# CORPUS defaults to /tmp/shingle-corpus and is made by bench/corpus.sh when
# it has no text/ or html/ yet; REPS defaults to 5.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-/tmp/shingle-corpus}
REPS=${2:-5}
SHINGLE_ONLY_54=1 bash scripts/setup.sh >/dev/null
[ -d "$CORPUS/text" ] && [ -d "$CORPUS/html" ] || bash bench/corpus.sh "$CORPUS"
exec lua5.4 bench/api_bench.lua "$CORPUS" "$REPS"
