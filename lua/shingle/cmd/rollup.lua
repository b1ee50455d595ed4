--- shingle rollup OUTDIR [RESULTS]: roll up a ranked list of result URLs by
-- collection and replica set (Cho et al. 2000, section 5.2).
local collections = require "shingle.collections"
local common = require "shingle.cmd.common"

local M = {}

function M.configure(parser)
  local c = parser:command("rollup", "Roll up ranked result URLs: one entry per collection and replica set.")
  c:argument("dir", "The output directory of shingle collections.")
  c:argument("results", "A file of URLs in rank order, one a line (default: standard input)."):args("?")
  c:flag("--expand", "Also show the hidden results and the replica collections.")
  common.output_options(c, "JSON Lines, one entry a line, hidden members included (the same as --output-format jsonl).")
end

function M.run(a)
  local f, err = io.stdin, nil
  if a.results and a.results ~= "-" then f, err = io.open(a.results, "rb") end
  if not f then return common.fail(1, err) end
  local urls = {}
  for line in f:lines() do
    local u = line:match("^%s*(%S+)")
    if u then urls[#urls + 1] = u end
  end
  if f ~= io.stdin then f:close() end
  local entries, rerr = collections.rollup(a.dir, urls)
  if not entries then return common.fail(1, rerr) end
  local fmt = common.output_format(a)
  if fmt then
    -- CSV and TSV: the hidden members and replica roots as JSON text in their cells
    local cols = { "rank", "url", "kind", "cluster", "collection", "site", "replicas", "cardinality", "hidden", "replica_roots" }
    common.write_records(fmt, entries, { order = collections.order.rollup, columns = cols })
    return 0
  end
  for i, e in ipairs(entries) do
    local extra = ""
    if e.kind == "collection" then
      extra = ("  [collection: %d more; replicas: %d more results, %d other copies]"):format(#e.hidden.collection,
        #e.hidden.replicas, #(e.replica_roots or {}))
    elseif e.kind == "replicas" then
      extra = ("  [%d replicas; %d more results]"):format(e.replicas, #e.hidden.replicas)
    end
    io.stdout:write(("%3d. %s%s\n"):format(i, e.url, extra))
    if a.expand then
      for _, h in ipairs(e.hidden.collection) do io.stdout:write(("       same collection: #%d %s\n"):format(h.rank, h.url)) end
      for _, h in ipairs(e.hidden.replicas) do io.stdout:write(("       replica: #%d %s\n"):format(h.rank, h.url)) end
      for _, r in ipairs(e.replica_roots or {}) do io.stdout:write(("       copy at: %s\n"):format(r)) end
    end
  end
  return 0
end

return M
