-- The whole `similar` query for a ~500 KB document on a large index (issue
-- 13, target 4; a benchmark, not a test; docs/benchmarks.md, "Queries"):
--   lua5.4 bench/large_query.lua [--db /tmp/shingle-serve-bench/db] [--rounds 7]
-- DB: an index of bench/gen.c documents (bench/serve_bench.lua builds the
-- 1M-document one). The first run adds to it, as a sweep "large", 10 large
-- documents (each 100 new gen.c documents of seed 21 joined, ~480 KB); the
-- queries are edited copies of them (each finds its original) and 10 new
-- large documents (seed 22, nothing to find). Through the Lua API
-- (Index:similar: the binding's shingler, which sketches a large plain text
-- on two threads, then the lookups), wall time per query, medians over
-- ROUNDS rounds after a warm one; with the index's postings filter
-- (Index:filter_start, as a server keeps it), with the filter and the
-- postings cache (filter_start{ cache }, as `shingle serve` keeps them) and
-- without either, in the same process; the sketch alone, on two threads and
-- on one, as the reference.
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. here .. "/bench/lib/?.lua;" .. package.path
package.cpath = (os.getenv("SHINGLE_LIB") or (here .. "/build/5.4/lib")) .. "/?.so;" .. package.cpath
local stats = require "stats" -- bench/lib/stats.lua
local machine = require "machine" -- bench/lib/machine.lua
local core = require "shingle.core"
local gen = require "gen"
local index = require "shingle.index"

local opt = { db = "/tmp/shingle-serve-bench/db", rounds = 7 }
for i = 1, #arg, 2 do
  local k = arg[i]:gsub("^%-%-", "")
  if opt[k] == nil then error("unknown option " .. arg[i]) end
  opt[k] = tonumber(arg[i + 1]) or arg[i + 1]
end

local function large(seed, i)
  local parts = {}
  for d in gen.corpus{ docs = 100, size = 5000, seed = seed * 1000 + i } do parts[#parts + 1] = d.text end
  return table.concat(parts, "\n")
end

local originals, queries = {}, {}
for i = 1, 10 do
  originals[i] = { url = ("http://large.example/bench/%d"):format(i), text = large(21, i), html = false }
  queries[i] = originals[i].text:gsub("(%a+) (%a+) (%a+)", "%3 %2 %1", 200)
end
for i = 1, 10 do queries[10 + i] = large(22, i) end

do
  local ix = assert(index.open(opt.db))
  if not ix:has_url(originals[1].url) then assert(ix:add_documents(originals, { sweep = "large" })) end
  ix:close()
end

print("# large similar queries, " .. os.date("!%Y-%m-%d %H:%M UTC") .. ", " .. machine.cpu() .. ", load " .. machine.load())
local ix = assert(index.open(opt.db, { readonly = true }))
local text_sh = ix:shinglers()
local bytes = 0
for _, q in ipairs(queries) do bytes = bytes + #q end
print(("index: %d documents (%s); queries: 10 edited copies of indexed large documents, 10 new ones, %.0f KB on average")
  :format(ix:count(), opt.db, bytes / #queries / 1000))

local function run(tag)
  local edited, new, found = {}, {}, 0
  for r = 0, opt.rounds do
    for i, q in ipairs(queries) do
      local a = core.now()
      local hits = assert(ix:similar(q, { threshold = 0.5, top = 10, html = false }))
      local ms = (core.now() - a) * 1000
      if r > 0 then
        if i <= 10 then edited[#edited + 1] = ms else new[#new + 1] = ms end
      elseif i <= 10 and hits[1] and hits[1].url == originals[i].url then
        found = found + 1
      end
    end
  end
  print(("%-28s edited copies: median %.3f ms, p90 %.3f ms (found its original: %d of 10); new: median %.3f ms, p90 %.3f ms")
    :format(tag, stats.median(edited), stats.pct(edited, 0.9), found, stats.median(new), stats.pct(new, 0.9)))
end

-- the sketch alone: the index's text shingler (two threads for a large
-- plain text) against the same shingler on one thread (core.new's threads =
-- 1), which must give the same sketches
do
  local o = require("shingle.options").resolve(require("shingle.sketcher").options(ix.config))
  o.threads = 1
  local one_sh = core.new(o)
  local two, one = {}, {}
  for r = 0, opt.rounds do
    for _, q in ipairs(queries) do
      local a = core.now()
      local s2 = assert(text_sh:sketch(q))
      local b = core.now()
      local s1 = assert(one_sh:sketch(q))
      local c = core.now()
      assert(s1 == s2 and s1:shingles() == s2:shingles(), "the two-thread sketch differs")
      if r > 0 then two[#two + 1] = (b - a) * 1000; one[#one + 1] = (c - b) * 1000 end
    end
  end
  print(("%-28s two threads (the API): median %.3f ms; one thread: median %.3f ms")
    :format("sketch alone", stats.median(two), stats.median(one)))
end

run("query, no postings filter")
assert(ix:filter_start())
while not ix:filter().ready do
  assert(not ix:filter().error, ix:filter().error)
  os.execute("sleep 0.05")
end
run("query, postings filter")
-- and with the postings cache too (a fresh handle: a handle builds them once)
ix:close()
ix = assert(index.open(opt.db, { readonly = true }))
assert(ix:filter_start{ cache = 2 ^ 31 })
while not ix:filter().ready do
  assert(not ix:filter().error, ix:filter().error)
  os.execute("sleep 0.05")
end
assert(ix:filter().cache and ix:filter().cache.keys > 0, ix:filter().cache and ix:filter().cache.note)
run("query, filter and cache")
ix:close()
print("load at end: " .. machine.load())
