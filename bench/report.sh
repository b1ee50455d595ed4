#!/usr/bin/env bash
# shingle report on runs of a million documents (docs/benchmarks.md, "Reports"):
#   bash bench/report.sh [DOCS] [SCRATCH]
# Makes, once, and keeps in SCRATCH (default /tmp/shingle-report-bench):
#   * a cluster run over DOCS (default 1,000,000) generated 5 KB documents
#     (bench/gen.c, seed 1, the corpus of bench/pipeline.sh; shingle cluster
#     with its defaults and --memory 1G),
#   * a collections run over DOCS generated pages (bench/collections_bench.c,
#     seed 42, the options of bench/collections_bench.sh),
#   * with INDEX=1, an index of DOCS documents in one sweep plus a second
#     sweep of DOCS/10 (bench/gen.c seeds 1 and 2, as bench/index_bench.lua).
# Then times `shingle report` on each REPS times (default 3) under
# /usr/bin/time -v: the median wall time, the peak RSS, the page's size; and a
# reference measured in the same run: `wc -l` over the JSON Lines the report
# reads. Remove SCRATCH to make the runs again.
set -euo pipefail
cd "$(dirname "$0")/.."

DOCS=${1:-1000000}
SCRATCH=${2:-/tmp/shingle-report-bench}
REPS=${REPS:-3}
INDEX=${INDEX:-0}

[ -x /usr/bin/time ] || apt-get install -y time >/dev/null
[ -d build/5.4/lib ] || SHINGLE_ONLY_54=1 bash scripts/setup.sh
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh
mkdir -p "$SCRATCH" build/bench
cc -std=c99 -O2 bench/gen.c -lm -o build/bench/gen
cc -std=c99 -O2 bench/collections_bench.c -o build/bench/collections_gen

bench_machine
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet -- lua || echo ' (lua/ modified)')"

# a private copy of bin/, lua/ and the C module: others rebuilding build/5.4 cannot change a run
SNAP=$SCRATCH/snapshot
bench_snapshot "$SNAP"

CLUSTER=$SCRATCH/cluster-$DOCS
if [ ! -s "$CLUSTER/summary.json" ]; then
  CORPUS=$SCRATCH/corpus-$DOCS.jsonl
  [ -s "$CORPUS" ] || build/bench/gen --docs "$DOCS" --size 5000 --seed 1 --out "$CORPUS"
  rm -rf "$CLUSTER"
  /usr/bin/time -f "cluster run made in %e s" "$SHINGLE" cluster "$CORPUS" -o "$CLUSTER" --memory 1G -q >/dev/null
  rm -f "$CLUSTER/shingles.bin" "$CORPUS" # the report reads neither; 12 GB less on disk
fi
COLL=$SCRATCH/collections-$DOCS
if [ ! -s "$COLL/summary.json" ]; then
  PAGES=$SCRATCH/pages-$DOCS.jsonl
  [ -s "$PAGES" ] || build/bench/collections_gen "$DOCS" "$PAGES" 42
  rm -rf "$COLL"
  /usr/bin/time -f "collections run made in %e s" "$SHINGLE" collections "$PAGES" -o "$COLL" --memory 1G \
    --similarity lines4 --anchored -T 3 --extended -q >/dev/null
  rm -f "$PAGES"
fi
DB=$SCRATCH/index-$DOCS
if [ "$INDEX" = 1 ] && [ ! -e "$DB/data.mdb.done" ]; then
  rm -rf "$DB"
  build/bench/gen --docs "$DOCS" --size 5000 --seed 1 --out "$SCRATCH/sweep1.jsonl"
  build/bench/gen --docs $((DOCS / 10)) --size 5000 --seed 2 --out "$SCRATCH/sweep2.jsonl"
  /usr/bin/time -f "index made in %e s" sh -c "'$SHINGLE' index add '$DB' '$SCRATCH/sweep1.jsonl' --sweep 2026-01-01 -q &&
    '$SHINGLE' index add '$DB' '$SCRATCH/sweep2.jsonl' --sweep 2026-02-01 -q" >/dev/null
  rm -f "$SCRATCH/sweep1.jsonl" "$SCRATCH/sweep2.jsonl"
  touch "$DB/data.mdb.done"
fi

measure() { # label, reference files, report arguments...
  local label=$1 refs=$2; shift 2
  local times=() cpus=() rss=() anons=() ref page out=$SCRATCH/page.html
  ref=$( { /usr/bin/time -f %e wc -l $refs > /dev/null; } 2>&1 )
  for _ in $(seq 1 "$REPS"); do
    /usr/bin/time -v -o "$SCRATCH/time.log" "$SHINGLE" report "$@" -o "$out" -q &
    local tpid=$! child="" anon=0 a
    # peak anonymous memory, sampled: the maximum RSS also counts the pages of
    # mapped files (the index's LMDB map), which the kernel reclaims at will
    while kill -0 "$tpid" 2>/dev/null; do
      [ -n "$child" ] || child=$(pgrep -P "$tpid" | head -1 || true)
      if [ -n "$child" ]; then
        a=$(awk '/^RssAnon/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
        [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
      fi
      sleep 0.05
    done
    wait "$tpid"
    anons+=("$anon")
    times+=("$(sed -n -E 's/^\s*Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9]+):([0-9.]+)$/\1 \2/p' "$SCRATCH/time.log" |
      awk '{printf "%.2f", $1 * 60 + $2}')")
    cpus+=("$(awk -F': ' '/User time|System time/ {t += $2} END {printf "%.2f", t}' "$SCRATCH/time.log")")
    rss+=("$(sed -n -E 's/^\s*Maximum resident set size \(kbytes\): ([0-9]+)$/\1/p' "$SCRATCH/time.log")")
  done
  page=$(stat -c %s "$out")
  local med mcpu mrss
  med=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  mcpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  mrss=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
  local manon
  manon=$(printf '%s\n' "${anons[@]}" | sort -n | tail -1)
  echo
  echo "== $label: shingle report $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "wall: median $med s of ${times[*]}; CPU (user + sys): median $mcpu s of ${cpus[*]}; peak RSS $((mrss / 1024)) MiB (anonymous, sampled: $((manon / 1024)) MiB); page $((page / 1024)) KiB"
  echo "reference: wc -l over $(du -ch $refs | tail -1 | cut -f1) of JSON Lines: $ref s (report / reference: $(awk -v a="$med" -v b="$ref" 'BEGIN{printf "%.1f", a / b}'))"
}

measure "cluster run, $(lua5.4 -e "local c=require'cjson'; local f=io.open('$CLUSTER/summary.json'); local s=c.decode(f:read('a'));
  print(('%d documents, %d clusters, %d linked pairs'):format(s.documents, s.clusters, s.pairs_linked))")" \
  "$CLUSTER/clusters.jsonl $CLUSTER/pairs.jsonl" "$CLUSTER"
measure "collections run, $(lua5.4 -e "local c=require'cjson'; local f=io.open('$COLL/summary.json'); local s=c.decode(f:read('a'));
  print(('%d pages, %d similar clusters of %d collections'):format(s.graph.pages, s.grow.clusters, s.grow.collections))")" \
  "$COLL/collections.jsonl $COLL/avoid.jsonl" "$COLL"
if [ "$INDEX" = 1 ]; then
  measure "index of $DOCS + $((DOCS / 10)) documents in 2 sweeps" "$DB/data.mdb" --index "$DB"
fi
