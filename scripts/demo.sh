#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the main job on the sample that ships in
# samples/: the clustering of "Syntactic Clustering of the Web" over the sample
# documents, results in out/samples (clusters.jsonl, pairs.jsonl, summary.json,
# and report.html: the run as one page with plots). Builds for Lua 5.4, and
# for LuaJIT too when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
SHINGLE_ONLY_54=1 SHINGLE_NO_BROWSER=1 bash scripts/setup.sh
bin/shingle cluster samples/docs --policy either --verify exact -o out/samples
echo
echo "clusters (out/samples/clusters.jsonl):"
lua5.4 -e '
  local cjson = require "cjson"
  for line in io.lines("out/samples/clusters.jsonl") do
    local c = cjson.decode(line)
    io.write(("cluster %d, %d documents\n"):format(c.cluster, c.size))
    for _, m in ipairs(c.members) do
      io.write(("  %-40s %s%s\n"):format(m.url, m.relation, m.copy_of and (" of " .. math.floor(m.copy_of)) or ""))
    end
  end'
echo
bin/shingle report out/samples   # the same as one HTML page with plots: open it in a browser
if [ -f build/jit/lib/shingle/core.so ] && command -v luajit >/dev/null; then
  echo
  echo "the same engine under LuaJIT (build/jit, as OpenResty's nginx loads it):"
  luajit bin/shingle compare samples/docs/rabin-original.txt samples/docs/rabin-mirror.html
fi
