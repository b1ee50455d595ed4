#!/usr/bin/env bash
# Peak memory of one large document (issue 11, docs/robustness.md "Limits"):
# `shingle cluster DIR --memory 64M` on a directory holding one large file and
# a short one, under /usr/bin/time -v; prints peak RSS, its ratio to the
# document's size, wall and CPU seconds, and what became of the document.
#
#   bash bench/doc_memory.sh [WORK_DIR] [extra cluster options...]
#
# Inputs (made once in WORK_DIR, default /tmp/shingle-doc-memory, by a
# seeded generator, so every run reads the same bytes):
#   words63   63 MB of words drawn from 10^6 random ones (1-10 letters; ~9.7 M tokens,
#             nearly all shingles distinct): accepted at the default limits
#   one63     63 MB of "a a a ...": 31.5 M tokens, refused past the default
#             --max-shingles (16 Mi)
#   words300  300 MB of random words (~46 M tokens), with --max-bytes 400M:
#             refused past the default --max-shingles; accepted with
#             --max-shingles 0 (none)
# The defaults sketch MOD_25 and keep the full set (--verify exact); with
# --verify none only the MOD_m sample is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/shingle-doc-memory}
shift || true
lua=${LUA:-lua5.4}
mkdir -p "$work"

gen_words() { # gen_words FILE BYTES SEED
  [ -s "$1" ] && return
  python3 - "$1" "$2" "$3" <<'EOF'
import random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
letters = "abcdefghijklmnopqrstuvwxyz"
vocab = ["".join(r.choice(letters) for _ in range(r.randint(1, 10))) for _ in range(1000000)]
with open(path, "w") as f:
    n = 0
    while n < size:
        chunk = " ".join(r.choices(vocab, k=100000)) + "\n"
        f.write(chunk)
        n += len(chunk)
EOF
}
for c in words63 one63 words300; do mkdir -p "$work/$c"; printf 'a short document beside it, of a few words\n' > "$work/$c/b.txt"; done
gen_words "$work/words63/a.txt" 63000000 1
gen_words "$work/words300/a.txt" 300000000 2
[ -s "$work/one63/a.txt" ] || head -c 31500000 /dev/zero | sed 's/\x0/a /g' > "$work/one63/a.txt"

printf '%-9s %-36s %9s %7s %7s %7s  %s\n' case options "peak MiB" "x size" "wall s" "CPU s" result
run() { # run CASE OPTIONS...
  local c=$1; shift
  local size out log rss wall user sys res
  size=$(stat -c %s "$work/$c/a.txt")
  log=$(mktemp)
  rm -rf "$work/out"
  /usr/bin/time -v "$lua" bin/shingle cluster "$work/$c" --memory 64M -o "$work/out" "$@" >"$log" 2>&1 || true
  rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$log")
  user=$(awk -F': ' '/User time/ { print $2 }' "$log")
  sys=$(awk -F': ' '/System time/ { print $2 }' "$log")
  if grep -q "has more than" "$log"; then res="refused: $(grep -o 'has more than [0-9]* shingles' "$log" | head -1)"; else res="accepted: $(grep -o 'documents [0-9]* (skipped [0-9]*)' "$log" | head -1)"; fi
  printf '%-9s %-36s %9.0f %7.1f %7s %7.1f  %s\n' "$c" "${*:-(defaults)}" "$(echo "$rss / 1024" | bc -l)" \
    "$(echo "$rss * 1024 / $size" | bc -l)" "$wall" "$(echo "$user + $sys" | bc -l)" "$res"
  rm -f "$log"
}
run words63 "$@"
run words63 --verify none "$@"
run one63 "$@"
run one63 --max-shingles 0 "$@"
run one63 --max-shingles 0 --verify none "$@"
run words300 --max-bytes 400M "$@"
run words300 --max-bytes 400M --max-shingles 0 "$@"
run words300 --max-bytes 400M --max-shingles 0 --verify none "$@"
rm -rf "$work/out"
