#!/usr/bin/env bash
# The whole clustering pipeline on a generated corpus (docs/benchmarks.md,
# "Whole pipeline"):
#   bench/pipeline.sh [DOCS] [SCRATCH] [shingle cluster options ...]
# DOCS defaults to 1000000 documents of about 5 KB (about 5 GB of JSON Lines);
# SCRATCH (default /tmp/shingle-pipeline) gets the corpus, made once by
# bench/gen.c (the C port of bench/lib/gen.lua) and reused by later runs (remove it yourself), and the
# output directories, removed after each run. Environment:
#   MEMORY=1G   the --memory budget
#   REPS=1      runs of each configuration (each one's figures are printed)
#   VERIFY=1    also run with --verify exact (0: only the unverified run)
# For every run: the phase table of `shingle cluster`, the sketching
# throughput, wall time, peak RSS (/usr/bin/time -v), peak and final disk
# use of the output directory, and the clusters against the planted families
# (bench/pipeline_check.lua).
set -euo pipefail
cd "$(dirname "$0")/.."

DOCS=${1:-1000000}
SCRATCH=${2:-/tmp/shingle-pipeline}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
MEMORY=${MEMORY:-1G}
REPS=${REPS:-1}
VERIFY=${VERIFY:-1}

[ -x /usr/bin/time ] || apt-get install -y time >/dev/null
[ -d build/5.4/lib ] || SHINGLE_ONLY_54=1 bash scripts/setup.sh
# shellcheck source=/dev/null
source scripts/env.sh
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh
mkdir -p build/bench "$SCRATCH"
cc -std=c99 -O2 bench/gen.c -lm -o build/bench/gen

bench_machine
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet -- core lua || echo ' (core/ or lua/ modified)'), build/5.4 of $(date -u -r build/5.4/lib/shingle/core.so '+%H:%M:%S UTC')"

# Run a private copy of bin/, lua/ and the built C module: others rebuilding
# build/5.4 or editing lua/ while a run is going cannot change or crash it.
SNAP=$SCRATCH/snapshot
bench_snapshot "$SNAP"

CORPUS=$SCRATCH/corpus-$DOCS.jsonl
TRUTH=$SCRATCH/truth-$DOCS.jsonl
if [ ! -s "$CORPUS" ] || [ ! -s "$TRUTH" ]; then
  /usr/bin/time -f "generated in %e s wall, %U s user" \
    build/bench/gen --docs "$DOCS" --size 5000 --seed 1 --out "$CORPUS" --truth "$TRUTH"
fi
BYTES=$(stat -L -c %s "$CORPUS")
echo "corpus: $CORPUS, $DOCS documents, $BYTES bytes of JSON Lines"
cat "$CORPUS" > /dev/null   # into the page cache: sketching, not the disk, is measured
# a reference measured in the same run on this shared machine: wc -w over the corpus
REF=$( { LC_ALL=C /usr/bin/time -f %e wc -w "$CORPUS" > /dev/null; } 2>&1 )
echo "reference: LC_ALL=C wc -w over the corpus: $REF s ($(awk -v b="$BYTES" -v t="$REF" 'BEGIN{printf "%.0f", b/t/1e6}') MB/s)"

run() {  # label, options...
  local label=$1; shift
  local out=$SCRATCH/out
  rm -rf "$out"
  mkdir -p "$out"
  local peak=0 s
  # the run writes beside OUT (.out.new) and swaps it in at the end: both count
  ( set +e +o pipefail; while :; do du -sbc "$out" "$SCRATCH/.out.new" 2>/dev/null | tail -1 | cut -f1; sleep 1; done ) \
    > "$SCRATCH/du.log" &
  local sampler=$!
  /usr/bin/time -v -o "$SCRATCH/time.log" "$SNAP/bin/shingle" cluster "$CORPUS" -o "$out" --memory "$MEMORY" "$@" \
    > "$SCRATCH/run.log" 2>&1 || { cat "$SCRATCH/run.log"; kill "$sampler"; exit 1; }
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  for s in $(cat "$SCRATCH/du.log"); do [ "$s" -gt "$peak" ] && peak=$s; done
  echo
  echo "== $label: bin/shingle cluster $CORPUS -o $out --memory $MEMORY $*"
  tr '\r' '\n' < "$SCRATCH/run.log" | grep -v -E '^(sketching|\s*$).*(docs|%)' | grep -v '^\s*$' || true
  lua5.4 - "$out/summary.json" "$BYTES" <<'LUA'
    local cjson = require "cjson"
    local f = assert(io.open(arg[1])); local s = cjson.decode(f:read("a")); f:close()
    print(("sketching throughput: %.1f MB/s of JSON Lines (%d bytes in %.2f s)"):format(
      arg[2] / s.phases.sketching / 1e6, arg[2], s.phases.sketching))
    -- CPU seconds of each step (all threads): on a shared machine the figure to trust
    local names = { "sketching", "duplicate_elimination", "pairs", "verification_sets", "cluster_formation", "report" }
    local parts, total = {}, 0
    for _, k in ipairs(names) do
      local v = s.phases["cpu_" .. k]
      if v then parts[#parts + 1] = ("%s %.2f"):format(k, v); total = total + v end
    end
    print(("CPU seconds per step: %s (total %.2f)"):format(table.concat(parts, ", "), total))
    if s.phases.verification_sets then
      print(("verification sets (inside cluster formation): %.2f s wall"):format(s.phases.verification_sets))
    end
LUA
  sed -n -E 's/^\s*(Elapsed \(wall clock\) time.*|Maximum resident set size.*|User time.*|System time.*|Percent of CPU.*)$/\1/p' "$SCRATCH/time.log"
  awk -v t="$(sed -n -E 's/^\s*Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9]+):([0-9.]+)$/\1 \2/p' "$SCRATCH/time.log")" \
      -v r="$REF" 'BEGIN{split(t, a, " "); printf "wall / wc -w reference: %.1f\n", (a[1]*60+a[2])/r}'
  echo "output directory: peak $(( peak / 1048576 )) MiB (du, sampled every second), final $(( $(du -sb "$out" | cut -f1) / 1048576 )) MiB"
  lua5.4 bench/pipeline_check.lua "$TRUTH" "$out/clusters.jsonl"
  rm -rf "$out"
}

for i in $(seq 1 "$REPS"); do
  run "unverified (--verify none), run $i" --verify none "$@"
  [ "$VERIFY" = 1 ] && run "defaults (exact verification), run $i" "$@"
done
