#!/usr/bin/env bash
# `shingle cluster` end to end on a directory of real documentation with the
# default options (issue 13, target 2: the 65,000-file, 700 MB directory in
# under 10 s wall on 2 cores):
#   bench/cluster_dir.sh [CORPUS] [REPS]
# CORPUS (default /tmp/shingle-corpus) must hold large/ (bash bench/corpus.sh
# --large CORPUS). Each of REPS (3) rounds times, in the same round, the
# reference -- reading every file once (find | xargs cat > /dev/null: the
# floor any tool pays, the page cache warm after the first round) -- and the
# cluster run; it prints wall and CPU seconds, peak RSS, the phase table and
# the ratio to the reference, then the medians. Never commit CORPUS or OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-/tmp/shingle-corpus}
REPS=${2:-3}
DIR=$CORPUS/large
[ -d "$DIR" ] || { echo "cluster_dir: $DIR is missing: run bash bench/corpus.sh --large $CORPUS" >&2; exit 2; }
[ -x /usr/bin/time ] || apt-get install -y time >/dev/null
[ -d build/5.4/lib ] || SHINGLE_ONLY_54=1 bash scripts/setup.sh
# shellcheck source=/dev/null
source scripts/env.sh 5.4
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

files=$(find "$DIR" -type f | wc -l)
bytes=$(find "$DIR" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
echo "# cluster_dir, $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/^Mem:/{print $2}') GiB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$files" -v b="$bytes" -v d="$DIR" 'BEGIN { printf "corpus: %s: %d files, %.1f MB\n", d, n, b / 1e6 }'

walls=() refs=()
for r in $(seq 1 "$REPS"); do
  t0=$(date +%s.%N)
  find "$DIR" -type f -print0 | xargs -0 cat > /dev/null
  t1=$(date +%s.%N)
  ref=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  rm -rf "$OUT/run"
  /usr/bin/time -v -o "$OUT/time" bin/shingle cluster "$DIR" -o "$OUT/run" -q > "$OUT/stdout"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$OUT/time")
  cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f user + %.2f sys", u, s }' "$OUT/time")
  rss=$(awk -F': ' '/Maximum resident/ { printf "%.0f", $2 / 1024 }' "$OUT/time")
  printf 'round %d: reading the files %.2f s; shingle cluster %.2f s wall (%s CPU s), peak RSS %s MB, ratio %.1f; load %s\n' \
    "$r" "$ref" "$wall" "$cpu" "$rss" "$(awk -v a="$wall" -v b="$ref" 'BEGIN { print a / b }')" "$(cut -d' ' -f1 /proc/loadavg)"
  lua5.4 - "$OUT/run/summary.json" <<'EOF'
local cjson = require "cjson"
local f = assert(io.open(arg[1])); local s = cjson.decode(f:read("a")); f:close()
local t = {}
for k, v in pairs(s.phases or {}) do t[#t + 1] = ("%s %.2f"):format(k, v) end
table.sort(t)
print("  phases: " .. table.concat(t, ", ") .. ("; documents %d, clusters %d"):format(s.documents or 0, s.clusters or 0))
EOF
  walls+=("$wall") refs+=("$ref")
done
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
printf 'median of %d: shingle cluster %.2f s wall, reading the files %.2f s (ratio %.1f); target: under 10 s\n' \
  "$REPS" "$(med "${walls[@]}")" "$(med "${refs[@]}")" "$(awk -v a="$(med "${walls[@]}")" -v b="$(med "${refs[@]}")" 'BEGIN { print a / b }')"
echo "step by step (lua5.4 bench/pipeline_phases.lua $DIR OUT 1G exact: the defaults; load $(cut -d' ' -f1 /proc/loadavg)):"
rm -rf "$OUT/run"
lua5.4 bench/pipeline_phases.lua "$DIR" "$OUT/run" 1G exact
