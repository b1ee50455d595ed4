#!/usr/bin/env bash
# Builds and runs the micro-benchmarks of single engine parts (the timed
# figures that used to be printed inside the C tests):
#   bash bench/run_micro.sh
# bench/canon_bench.c (tokenizer throughput), bench/extsort_bench.c
# (external sort and radix sort throughput) and bench/fasta_bench.c (the
# FASTA extractor's stages, ns a base), compiled with plain -O2 as the
# shipped build is, against build/5.4/libshingle_core.a. Prints the machine and
# its load first: quote these figures with them (docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib/common.sh
source bench/lib/common.sh
SHINGLE_ONLY_54=1 bash scripts/setup.sh
mkdir -p build/bench
for b in canon_bench extsort_bench fasta_bench; do
  cc -std=c99 -O2 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Icore "bench/$b.c" $SHINGLE_CORE_LINK \
     -o "build/bench/$b"
done
echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load: $(uptime | sed 's/.*load average: //')"
build/bench/canon_bench
build/bench/extsort_bench
build/bench/fasta_bench
