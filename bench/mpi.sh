#!/usr/bin/env bash
# shingle cluster --mpi on the generated corpus of bench/pipeline.sh
# (docs/benchmarks.md, "Across MPI ranks"; docs/scale-out.md, "What the model
# predicts"). One command reproduces every figure:
#
#   bash bench/mpi.sh [DOCS] [SCRATCH]
#
# DOCS defaults to 1000000 documents of about 5 KB (5 GB of JSON Lines, made
# once by bench/gen.c exactly as bench/pipeline.sh makes it, and shared with
# it in SCRATCH, default /tmp/shingle-pipeline). Environment:
#   MEMORY=1G       --memory (per rank for the MPI runs)
#   TCP_RANKS=8     ranks of the oversubscribed run over TCP (--mca btl tcp,self)
#   TCP_DOCS=DOCS   its documents (the first TCP_DOCS lines of the corpus)
#   BANDWIDTH=1.25e9  bytes/s per node link in the model (10 Gb/s Ethernet)
#   DISK=5e8        bytes/s of a rank's local scratch disk in the model
# Runs, each with the load (uptime) before it: the single process (the
# reference), mpirun -np 1 and -np 2 (strong scaling on this 2-core
# machine: the single process and -np 1 sketch with 2 threads, -np 2 with 1
# thread per rank), then TCP_RANKS ranks over TCP. Each prints its wall time,
# peak RSS (per rank for MPI runs), phase table with the bytes exchanged, and
# that its clusters, links and summary equal the single process's. Then
# bench/mpi_model.lua turns the measured costs per document into the model
# for 100 M and 1 B documents on 16, 64 and 256 ranks, and checks the bytes
# it predicts for the TCP run against what that run exchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

DOCS=${1:-1000000}
SCRATCH=${2:-/tmp/shingle-pipeline}
MEMORY=${MEMORY:-1G}
TCP_RANKS=${TCP_RANKS:-8}
TCP_DOCS=${TCP_DOCS:-$DOCS}
export BANDWIDTH=${BANDWIDTH:-1.25e9} DISK=${DISK:-5e8}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

[ -x /usr/bin/time ] || apt-get install -y time >/dev/null
[ -f build/5.4/lib/shingle/mpi.so ] || SHINGLE_ONLY_54=1 bash scripts/setup.sh
command -v mpirun >/dev/null || { echo "bench/mpi.sh: mpirun not found (scripts/setup.sh installs Open MPI)" >&2; exit 1; }
# shellcheck source=/dev/null
source scripts/env.sh
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh
mkdir -p build/bench "$SCRATCH"
cc -std=c99 -O2 bench/gen.c -lm -o build/bench/gen

bench_machine
echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet -- core lua || echo ' (core/ or lua/ modified)'); $(mpirun --version | head -1)"

# a private copy of bin/, lua/ and the built modules: others rebuilding cannot change a run
SNAP=$SCRATCH/snapshot-mpi
bench_snapshot "$SNAP"

CORPUS=$SCRATCH/corpus-$DOCS.jsonl
TRUTH=$SCRATCH/truth-$DOCS.jsonl
if [ ! -s "$CORPUS" ] || [ ! -s "$TRUTH" ]; then
  /usr/bin/time -f "generated in %e s wall" \
    build/bench/gen --docs "$DOCS" --size 5000 --seed 1 --out "$CORPUS" --truth "$TRUTH"
fi
echo "corpus: $CORPUS, $DOCS documents, $(stat -c %s "$CORPUS") bytes of JSON Lines"
cat "$CORPUS" > /dev/null   # into the page cache

RESULTS=$SCRATCH/mpi-results
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

same() {  # same REF OUT: clusters, links and summary equal (keys sorted, timing and MPI fields dropped)
  lua5.4 - "$1" "$2" <<'LUA'
    local cjson = require "cjson"
    local function canon(x)
      if type(x) ~= "table" then return cjson.encode(x) end
      if #x > 0 or next(x) == nil then local t = {} for i, e in ipairs(x) do t[i] = canon(e) end return "[" .. table.concat(t, ",") .. "]" end
      local ks = {} for k in pairs(x) do ks[#ks + 1] = k end table.sort(ks)
      local t = {} for _, k in ipairs(ks) do t[#t + 1] = cjson.encode(k) .. ":" .. canon(x[k]) end return "{" .. table.concat(t, ",") .. "}"
    end
    local function norm(path)
      local out, f = {}, assert(io.open(path))
      for line in f:lines() do local x = cjson.decode(line); if type(x) == "table" then x.phases, x.mpi = nil, nil end; out[#out + 1] = canon(x) end
      f:close()
      return table.concat(out, "\n")
    end
    local bad = {}
    for _, f in ipairs({ "clusters.jsonl", "pairs.jsonl", "summary.json" }) do
      if norm(arg[1] .. "/" .. f) ~= norm(arg[2] .. "/" .. f) then bad[#bad + 1] = f end
    end
    print(#bad == 0 and "clusters, links and summary: equal to the single process's" or ("DIFFERENT from the single process: " .. table.concat(bad, ", ")))
LUA
}

run() {  # run LABEL NAME CORPUS [mpirun args --] [shingle cluster options]
  local label=$1 name=$2 corpus=$3; shift 3
  local out=$SCRATCH/out-$name
  local pre=()
  if [ "${1:-}" = "mpirun" ]; then
    while [ "$1" != "--" ]; do pre+=("$1"); shift; done
    shift
  fi
  rm -rf "$out"
  echo
  echo "== $label"
  echo "load before: $(uptime | sed 's/.*load average/load average/')"
  echo "command: ${pre[*]} shingle cluster $corpus -o $out --memory $MEMORY $*"
  /usr/bin/time -v -o "$RESULTS/$name.time" "${pre[@]}" "$SHINGLE" cluster "$corpus" -o "$out" --memory "$MEMORY" "$@" \
    > "$RESULTS/$name.log" 2> "$RESULTS/$name.err" || { cat "$RESULTS/$name.err"; exit 1; }
  sed -n '/^phase/,$p' "$RESULTS/$name.log"
  sed -n -E 's/^\s*(Elapsed \(wall clock\) time.*|Maximum resident set size.*)$/\1 (of the process tree'"'"'s largest)/p' "$RESULTS/$name.time"
  cp "$out/summary.json" "$RESULTS/$name.summary.json"
  sed -n -E 's/^\s*Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (.*)$/\1/p' "$RESULTS/$name.time" > "$RESULTS/$name.wall"
  [ "$name" = single ] || [ "$corpus" != "$CORPUS" ] || same "$SCRATCH/out-single" "$out"
  [ "$name" = single ] || rm -rf "$out"
}

run "single process (reference)" single "$CORPUS"
run "mpirun -np 1" np1 "$CORPUS" mpirun -np 1 -- --mpi
run "mpirun -np 2 (one sketching thread per rank)" np2 "$CORPUS" mpirun -np 2 -- --mpi

# more ranks than cores, the exchange over TCP: the volumes the model predicts
TCP_CORPUS=$CORPUS
if [ "$TCP_DOCS" != "$DOCS" ]; then
  TCP_CORPUS=$SCRATCH/corpus-$DOCS-first-$TCP_DOCS.jsonl
  [ -s "$TCP_CORPUS" ] || head -n "$TCP_DOCS" "$CORPUS" > "$TCP_CORPUS"
fi
run "mpirun -np $TCP_RANKS --oversubscribe --mca btl tcp,self ($TCP_DOCS documents)" tcp "$TCP_CORPUS" \
  mpirun -np "$TCP_RANKS" --oversubscribe --mca btl tcp,self -- --mpi

echo
lua5.4 bench/mpi_model.lua "$RESULTS" "$SCRATCH/out-single"
rm -rf "$SCRATCH/out-single"
