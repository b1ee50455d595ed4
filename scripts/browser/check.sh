#!/usr/bin/env bash
# The reports in a real browser: renders a report of each kind (a cluster
# run, a collections run, an index with sweeps: spec/report_fixtures.lua,
# hostile documents included), then opens each in Debian's headless Chromium
# (scripts/browser/check.js) at desktop and phone width and with JavaScript
# off, failing on any console error. Run by scripts/test.sh; ends with
# "N passed, N failed".
#   bash scripts/browser/check.sh            # screenshots in build/browser/
#   bash scripts/browser/check.sh --docs     # also refresh docs/img/report-*.png
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=/dev/null
source scripts/env.sh 5.4
shots=build/browser
docs=()
[ "${1:-}" = --docs ] && docs=(--docs "$shots/docs")
if [ ! -d scripts/browser/node_modules/playwright-core ]; then
  echo "not ok - playwright-core is not installed (scripts/setup.sh runs npm ci in scripts/browser)"
  echo "0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! lua5.4 - "$work" "$PWD" >"$work/render.log" 2>&1 <<'LUA'
package.path = arg[2] .. "/spec/?.lua;" .. arg[2] .. "/lua/?.lua;" .. arg[2] .. "/bench/lib/?.lua;" .. package.path
-- relative paths, as a user running the commands in a directory would see them
assert(require("lfs").chdir(arg[1]))
local fixtures = require "report_fixtures"
local report = require "shingle.report"
local runs = fixtures.all("demo")
for _, kind in ipairs({ "cluster", "collections", "index" }) do
  local page = assert(report.render(runs[kind], { index = kind == "index" or nil, pairs = 2 }))
  assert(report.write(kind .. ".html", page))
end
LUA
then
  cat "$work/render.log"
  echo "not ok - the reports could not be rendered"
  echo "0 passed, 1 failed"
  exit 1
fi
mkdir -p "$shots"
node scripts/browser/check.js --shots "$shots" "${docs[@]}" "$work/cluster.html" "$work/collections.html" "$work/index.html"
status=$?
if [ ${#docs[@]} -gt 0 ] && [ $status -eq 0 ]; then
  for k in cluster collections index; do cp "$shots/docs/$k.png" "docs/img/report-$k.png"; done
  echo "docs/img/report-{cluster,collections,index}.png updated"
fi
exit $status
