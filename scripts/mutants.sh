#!/usr/bin/env bash
# Applies one-line mutants (scripts/mutants.lua lists them, each described)
# one at a time to a scratch copy of this tree (uncommitted changes included),
# rebuilds, runs the tests that should catch each, and reports which ones the
# suite misses:
#   bash scripts/mutants.sh [ID-SUBSTRING]
# Ends with "mutants: K killed, S survived, T stale, of N"; exits non-zero if
# any mutant survived or is stale (its fragment no longer in the code). The
# tree itself is never changed. Takes some minutes (a rebuild per C mutant).
set -euo pipefail
cd "$(dirname "$0")/.."
SHINGLE_ONLY_54=1 bash scripts/setup.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar -C . --exclude=./build --exclude=./.git -cf - . | tar -C "$scratch" -xf -
nice -n 10 lua5.4 scripts/mutants.lua "$PWD" "$scratch" "${1:-}"
