#!/usr/bin/env bash
# Records what the current build computes, so that a change meant to keep
# results (a refactoring, a faster loop) can be checked for byte-identical
# outputs:
#
#   bench/same_results.sh OUT [CORPUS]      then   diff -r OUT_BEFORE OUT_AFTER
#
# CORPUS (default OUT/../corpus, made when absent) holds a corpus assembled
# once and reused: 3000 generated documents with planted near-duplicates
# (bench/gen.lua) as a directory, JSON Lines and WARC, samples/docs, a few MB of
# Debian's documentation (text and HTML), and five mirrors of the libxml2
# HTML manual. Into OUT go, normalized (timing fields and temporary paths
# removed, JSON keys sorted):
#   sketches.txt    the sketch digests of bench/sketch_bench.c (MOD_25, MIN_200)
#   cluster-*/      `shingle cluster` with each method and option set, stdout and
#                   every file it writes (record files by checksum)
#   recluster.*     `shingle recluster`
#   collections/    `shingle collections` over the mirrors, and `avoid`, `rollup`
#   index.*         `shingle index add` of two sweeps, `similar`, `cluster-of`,
#                   `lost`, `changes`, `index info`
#   explain.txt     `shingle explain`
# Uses build/5.4 (scripts/setup.sh builds it). Not a test: it asserts nothing
# by itself; the diff is the check.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh
ROOT=$(pwd)
[ $# -ge 1 ] || { echo "usage: bench/same_results.sh OUT [CORPUS]" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
CORPUS=${2:-$(dirname "$OUT")/corpus}
# shellcheck source=/dev/null
source scripts/env.sh 5.4
export LC_ALL=C
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# ---- the corpus (once) --------------------------------------------------------
if [ ! -f "$CORPUS/.done" ]; then
  rm -rf "$CORPUS"
  mkdir -p "$CORPUS/text" "$CORPUS/html"
  lua5.4 bench/gen.lua --docs 3000 --size 3000 --seed 7 --format dir --out "$CORPUS/gen" --quiet
  lua5.4 bench/gen.lua --docs 600 --size 2000 --seed 8 --format jsonl --out "$CORPUS/gen.jsonl" --quiet
  lua5.4 bench/gen.lua --docs 400 --size 2000 --seed 9 --format warc.gz --out "$CORPUS/gen.warc.gz" --quiet
  find "$CORPUS/gen" -name '*.txt' | sort | while read -r f; do cp "$f" "$CORPUS/text/gen_$(basename "$f")"; done
  find "$CORPUS/gen" -name '*.html' | sort | while read -r f; do cp "$f" "$CORPUS/html/gen_$(basename "$f")"; done
  cp samples/docs/*.txt samples/docs/*.TXT "$CORPUS/text/"
  cp samples/docs/*.html "$CORPUS/html/"
  # real documents: the first 6 MB of Debian's documentation of each kind, by sorted path
  take() { # take PATTERN DEST BYTES
    local total=0 f
    find /usr/share/doc -type f -name "$1" ! -name '*.gz' -size -400k 2>/dev/null | sort | while read -r f; do
      [ "$total" -lt "$3" ] || break
      cp "$f" "$2/deb_$(printf '%s' "${f#/usr/share/doc/}" | tr '/' '_')"
      total=$((total + $(stat -c %s "$f")))
    done || true
  }
  take '*.html' "$CORPUS/html" 6000000
  take '*.txt' "$CORPUS/text" 3000000
  take 'README*' "$CORPUS/text" 3000000
  mkdir -p "$CORPUS/docs"
  cp -r "$CORPUS/text" "$CORPUS/html" "$CORPUS/docs/"
  # five copies of the libxml2 manual: the primary, two mirrors with a banner on
  # every page, one with a fifth of the pages changed, one with html/ left out
  src=/usr/share/doc/libxml2/html
  if [ -d "$src" ]; then
    (cd "$src" && find . -name '*.html' | sort) | while read -r rel; do
      rel=${rel#./}
      for host in www.xmlsoft.org mirror-a.example mirror-b.example old-d.example partial-c.example; do
        case $host/$rel in partial-c.example/html/*) continue ;; esac
        mkdir -p "$CORPUS/web/$host/$(dirname "$rel")"
        case $host in
          mirror-*) sed "s|<body\\([^>]*\\)>|<body\\1><div>Mirrored by $host</div>|" "$src/$rel" ;;
          old-d.example) if [ $(( $(printf '%s' "$rel" | cksum | cut -d' ' -f1) % 5 )) -eq 0 ]; then
                           sed '0,/<p>/s//<p>This paragraph was different in the older release. /' "$src/$rel"
                         else cat "$src/$rel"; fi ;;
          *) cat "$src/$rel" ;;
        esac > "$CORPUS/web/$host/$rel"
      done
    done
  fi
  touch "$CORPUS/.done"
fi

# ---- normalizing ----------------------------------------------------------------
# Line by line: a line that is JSON gets its keys sorted and its timing fields
# dropped; other lines get the seconds and rates blanked. Temporary paths
# become OUT, CORPUS and W.
normalize() {
  python3 -c '
import json, re, sys
# timing fields, the signature of the inputs in phase1.json (it covers their mtimes),
# and the CRC-32 of docs.jsonl (cjson writes keys in a per-process order; the lines
# themselves are compared with sorted keys)
timing = re.compile(r"^(t_.*|times|phases|seconds|outdir|elapsed|.*_seconds|time|wall|cpu|signature|crc32)$")
paths = [(p, n) for p, n in zip(sys.argv[1::2], sys.argv[2::2])]
def strip(v):
    if isinstance(v, dict): return {k: strip(x) for k, x in v.items() if not timing.match(k)}
    if isinstance(v, list): return [strip(x) for x in v]
    return v
for line in sys.stdin:
    line = line.rstrip("\n")
    try:
        line = json.dumps(strip(json.loads(line)), sort_keys=True, separators=(",", ":"))
    except ValueError:
        line = re.sub(r"^( *[a-z][a-z ]* {2,})[0-9]+\.[0-9]+$", r"\1T", line)  # a phase table row
        line = re.sub(r" in [0-9.]+ s\b", " in T s", line)
        line = re.sub(r"[0-9.]+ (docs|documents|MB|pages)/s", "R", line)
    for p, n in paths: line = line.replace(p, n)
    print(line)
' "$OUT" OUT "$CORPUS" CORPUS "$W" W
}
norm_json() { normalize; }
norm_text() { normalize; }
# Every file of a run directory: JSON normalized, record files and the rest by checksum.
snapshot() { # snapshot DIR DEST
  local dir=$1 dest=$2 f
  mkdir -p "$dest"
  (cd "$dir" && find . -type f | sort) | while read -r f; do
    case $f in
      *.json|*.jsonl) norm_json < "$dir/$f" > "$dest/$(basename "$f")" ;;
      *.tmp) echo "leftover $f" >> "$dest/LEFTOVERS" ;;
      *) (cd "$dir" && md5sum "$f") >> "$dest/CHECKSUMS" ;;
    esac
  done
}
run() { # run NAME CMD...: stdout and stderr normalized into OUT/NAME.out
  local name=$1; shift
  { "$@" 2>&1; echo "exit $?"; } | norm_text > "$OUT/$name.out" || true
}

# ---- sketch digests -------------------------------------------------------------
mkdir -p build/bench
cc -std=c99 -O2 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Icore bench/sketch_bench.c $SHINGLE_CORE_LINK \
   -o build/bench/sketch_bench
build/bench/sketch_bench -r 1 -t 2 -W "$CORPUS" | grep -E '^(digests|text|html) ' | grep -E 'digests|files|rejected' \
  > "$OUT/sketches.txt" || true

# ---- shingle cluster ------------------------------------------------------------
c() { # c NAME ARGS...: a cluster run and its files
  local name=$1; shift
  run "cluster-$name" shingle cluster -o "$W/$name" --threads 2 --memory 64M "$@"
  snapshot "$W/$name" "$OUT/cluster-$name"
}
c default "$CORPUS/docs" samples/docs
c min "$CORPUS/docs" --sketch min -s 100
c class "$CORPUS/docs" --sketch class
c minmod "$CORPUS/docs" --sketch minmod -m 4 -s 50
c noverify "$CORPUS/docs" --verify none
c either "$CORPUS/docs" --policy either -t 0.7
c supershingle "$CORPUS/docs" --method supershingle
c supershingle-meta "$CORPUS/docs" --method supershingle --meta --sketch min
c supershingle-nocheck "$CORPUS/docs" --method supershingle --no-check
c lsh "$CORPUS/docs" --method lsh
c greedy "$CORPUS/docs" --method greedy
c greedy-noverify "$CORPUS/docs" --method greedy --verify none
c html "$CORPUS/html" --html
c jsonl "$CORPUS/gen.jsonl"
c warc "$CORPUS/gen.warc.gz"
c rules-tweet "$CORPUS/text" --rules tweet          # the Lua sketching path
c smallmem "$CORPUS/docs" --memory 1M --max-df 50
run recluster shingle recluster "$W/default" --threshold 0.8 --policy containment
snapshot "$W/default" "$OUT/recluster"

# ---- collections ----------------------------------------------------------------
if [ -d "$CORPUS/web" ]; then
  run collections shingle collections -o "$W/coll" --threads 2 --paper --extended "$CORPUS/web"
  snapshot "$W/coll" "$OUT/collections"
  run collections-shingles shingle collections -o "$W/coll2" --threads 2 --similarity shingles -T 0.8 "$CORPUS/web"
  snapshot "$W/coll2" "$OUT/collections-shingles"
  run avoid shingle avoid "$W/coll"
  printf '%s\n' http://mirror-a.example/index.html http://www.xmlsoft.org/FAQ.html \
      http://old-d.example/index.html http://nowhere.example/x.html > "$W/results.txt"
  run rollup shingle rollup "$W/coll" "$W/results.txt"
  run rollup-json shingle rollup --expand --json "$W/coll" "$W/results.txt"
fi

# ---- the index --------------------------------------------------------------------
# Two sweeps of one site (the same paths, so the same URLs): in the second some
# pages are gone, some changed a little, one moved.
mkdir -p "$W/site"
cp -r "$CORPUS/gen/." "$W/site/"
cp samples/docs/* "$W/site/"
run index-add1 shingle index add "$W/idx" "$W/site" --sweep 2026-01-01 --threads 2
gone=$(find "$W/site" -name '1*.txt' | sort | awk 'NR <= 40')
rm -f $gone
find "$W/site" -name '2*.html' | sort | awk 'NR <= 40' | while read -r f; do
  printf '<p>a paragraph added in the second sweep, a few words only</p>\n' >> "$f"; done
moved=$(find "$W/site" -name '3*.txt' | sort | awk 'NR == 1')
mv "$moved" "$(dirname "$moved")/moved.txt"
changed=$(find "$W/site" -name '2*.html' | sort | awk 'NR == 1')
run index-add2 shingle index add "$W/idx" "$W/site" --sweep 2026-02-01 --threads 2
run index-info shingle index info "$W/idx"
run similar shingle similar "$W/idx" samples/docs/rabin-edited.txt --json
run similar-containment shingle similar "$W/idx" samples/docs/rabin-excerpt.txt --containment -t 0.3
run similar-doc shingle similar "$W/idx" "$changed" --html --top 5 --json
run cluster-of shingle cluster-of "$W/idx" "$changed" --json
run cluster-of-txt shingle cluster-of "$W/idx" "$W/site/rabin-original.txt"
run lost shingle lost "$W/idx" "$moved" --json
run lost-gone shingle lost "$W/idx" "$(printf '%s\n' $gone | awk 'NR == 1')"
run changes shingle changes "$W/idx" --from 2026-01-01 --to 2026-02-01 --json
run changes-text shingle changes "$W/idx" --from 2026-01-01 --to 2026-02-01
run index-rules shingle index add "$W/idx-tweet" "$CORPUS/text" --sweep s1 --rules tweet

# ---- explain, compare ---------------------------------------------------------------
run explain shingle explain --no-color samples/docs/rabin-original.txt samples/docs/rabin-edited.txt
run explain-json shingle explain --json samples/docs/rabin-original.txt samples/docs/unionfind.txt
run explain-html shingle explain samples/docs/rabin-original.txt samples/docs/rabin-mirror.html
run compare shingle compare --exact samples/docs/*
echo "same_results: $(find "$OUT" -type f | wc -l) files in $OUT"
