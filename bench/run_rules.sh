#!/usr/bin/env bash
# Rule sets and extractors against the C text path in the same run
# (docs/benchmarks.md, "Rule sets and extractors"):
#   bash bench/run_rules.sh [MB]      (MB of each kind of document, default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
SHINGLE_ONLY_54=1 bash scripts/setup.sh >/dev/null
exec lua5.4 bench/rules_bench.lua "${1:-20}"
