#!/usr/bin/env bash
# Instructions per call of bench/ffi_bench.lua's four cases (shingle.ffi
# against the classic binding), counted by callgrind: repeatable on a loaded
# machine. Each case runs in its own process over the same DOCS documents;
# the set-up alone (case 0) is subtracted.
#   bash bench/ffi_callgrind.sh [DOCS]   (default 400)
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-400}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/env.sh
count() { # count CASE -> total instructions
  valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file="$tmp/cg.$1" luajit bench/ffi_bench.lua --docs "$docs" --case "$1" \
    >"$tmp/out.$1" 2>"$tmp/err.$1" || { cat "$tmp/err.$1" >&2; exit 1; }
  grep -E '^(summary|totals):' "$tmp/cg.$1" | head -1 | awk '{ print $2 }'
}
echo "# shingle.ffi vs the classic binding, callgrind instructions per call ($docs documents; $(uptime | sed 's/^ *//'))"
base=$(count 0)
declare -a ir
for k in 1 2 3 4; do
  ir[$k]=$(count "$k")
  printf '%-44s %10.0f instructions/call\n' "$(sed -n 's/^case [0-9]*: \(.*\), [0-9]* documents$/\1/p' "$tmp/out.$k")" \
    "$(echo "(${ir[$k]} - $base) / $docs" | bc -l)"
done
printf 'sketch: FFI / classic %.3f; /similar'"'"'s work: FFI / classic %.3f\n' \
  "$(echo "(${ir[2]} - $base) / (${ir[1]} - $base)" | bc -l)" "$(echo "(${ir[4]} - $base) / (${ir[3]} - $base)" | bc -l)"
