#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the main job on the sample that ships
# in samples/: every pair of sample documents compared, estimated and exact.
set -euo pipefail
cd "$(dirname "$0")/.."
SHINGLE_ONLY_54=1 bash scripts/setup.sh
bin/shingle compare --exact samples/docs/*
