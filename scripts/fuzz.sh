#!/usr/bin/env bash
# The libFuzzer targets of core/fuzz (docs/robustness.md, "Fuzzing").
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]   fuzz each target SECONDS (60) in turn,
#                                                under nice -n 19 (the machine is shared)
#   bash scripts/fuzz.sh --regress [TARGET...]   run each target once over its seed corpus
#                                                and its kept crash inputs, no fuzzing
#
# TARGET is a name like jsonl (core/fuzz/fuzz_jsonl.c); all of them by default.
# Builds build/fuzz with clang first. Seeds are core/fuzz/corpus/TARGET (never
# written); what the fuzzer learns goes to build/fuzz/corpus/TARGET; a crash
# is saved in build/fuzz/crashes/TARGET/ — copy it into
# core/fuzz/regressions/TARGET/ once fixed, so --regress (run by
# scripts/test.sh) keeps it fixed. Prints one line per target:
#   fuzz TARGET: ok, N runs in S s    or    fuzz TARGET: FAILED (...)
# and exits non-zero if any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."

mode=fuzz
secs=60
if [ "${1:-}" = "--regress" ]; then mode=regress; shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then secs=$1; shift; fi

CC=clang cmake -S . -B build/fuzz -DSHINGLE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
  cmake --build build/fuzz -j2 >/dev/null || { echo "fuzz: build failed"; exit 1; }

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in core/fuzz/fuzz_*.c; do t=$(basename "$f" .c); targets+=("${t#fuzz_}"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  bin=build/fuzz/fuzz_$t
  if [ ! -x "$bin" ]; then echo "fuzz $t: FAILED (no target $bin)"; status=1; continue; fi
  seeds=core/fuzz/corpus/$t
  kept=core/fuzz/regressions/$t
  log=$(mktemp)
  if [ "$mode" = regress ]; then
    inputs=()
    [ -d "$seeds" ] && inputs+=("$seeds"/*)
    [ -d "$kept" ] && inputs+=("$kept"/*)
    if [ ${#inputs[@]} -eq 0 ]; then echo "fuzz $t: FAILED (no seed corpus in $seeds)"; status=1; rm -f "$log"; continue; fi
    if "$bin" -runs=0 "${inputs[@]}" >"$log" 2>&1; then
      echo "fuzz $t: ok, ${#inputs[@]} kept inputs"
    else
      echo "fuzz $t: FAILED on a kept input"; grep -E "invariant failed|ERROR|runtime error|Running:" "$log" | tail -8; status=1
    fi
  else
    work=build/fuzz/corpus/$t
    crashes=build/fuzz/crashes/$t
    mkdir -p "$work" "$crashes"
    dict=()
    [ -f core/fuzz/$t.dict ] && dict=(-dict=core/fuzz/$t.dict)
    if nice -n 19 "$bin" "$work" ${seeds:+$( [ -d "$seeds" ] && echo "$seeds")} "${dict[@]}" -max_total_time="$secs" \
         -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1; then
      runs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$log" | grep -oE "[0-9]+$")
      echo "fuzz $t: ok, ${runs:-?} runs in $secs s, corpus $(ls "$work" | wc -l) inputs"
    else
      echo "fuzz $t: FAILED (input kept in $crashes)"; grep -E "invariant failed|ERROR|runtime error|SUMMARY" "$log" | tail -8; status=1
    fi
  fi
  rm -f "$log"
done
exit $status
