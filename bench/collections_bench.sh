#!/usr/bin/env bash
# The collections benchmark (docs/benchmarks.md, "Mirrored collections"):
# generates a web graph of PAGES pages (default 1,000,000) in mirrored
# collections plus noise (bench/collections_bench.c), then runs the whole
# collection analysis with --memory 1G and reports the time per phase and the
# peak memory (GNU time's maximum resident set size).
#   bash bench/collections_bench.sh [PAGES] [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-1000000}
work=${2:-/tmp/shingle-collections-bench}
mkdir -p "$work"
cc -O2 -std=c99 -Wall -o "$work/gen" bench/collections_bench.c
[ -s "$work/pages-$pages.jsonl" ] || "$work/gen" "$pages" "$work/pages-$pages.jsonl" 42
ls -l "$work/pages-$pages.jsonl"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr); load: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work/out"
/usr/bin/time -v bin/shingle collections "$work/pages-$pages.jsonl" -o "$work/out" --memory 1G \
  --similarity lines4 --anchored -T 3 --extended -q 2> "$work/time.txt"
grep -E "Elapsed|Maximum resident" "$work/time.txt"
du -sh "$work/out"
