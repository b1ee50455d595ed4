-- Benchmark of the persistent index (not a test):
--   * `similar` for a 5 KB document from the Lua API in a warm process:
--     median and 99th-percentile latency, with the time to sketch the query
--     alone (the floor every lookup pays) measured in the same run as reference;
--   * `similar` for a ~500 KB document (edited copies of large indexed
--     documents, and new ones), with the hits checked against a search that
--     looks up every value of the query (policy "either", filtered);
--   * queries per second from 2 processes;
--   * adding sweeps: documents per second (and CPU seconds of this process,
--     its pool threads included), for the base index and for a later sweep of
--     100,000 documents; the process's peak RSS after each.
-- Usage: lua5.4 bench/index_bench.lua [--docs 1000000] [--sweep 100000] [--dir /tmp/shingle-index-bench]
-- Corpora come from bench/gen.c (built here with cc -O2); nothing is kept in the repo.
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median, pct = stats.median, stats.pct
package.cpath = "build/5.4/lib/?.so;" .. package.cpath

local index = require "shingle.index"
local core = require "shingle.core"
local cjson = require "cjson"

local opt = { docs = 1000000, sweep = 100000, dir = "/tmp/shingle-index-bench", queries = 2000, runs = 5 }
for i = 1, #arg, 2 do
  local k = arg[i]:gsub("^%-%-", "")
  opt[k] = tonumber(arg[i + 1]) or arg[i + 1]
end

local function sh(cmd)
  local ok = os.execute(cmd)
  if not ok then error("failed: " .. cmd) end
end

local machine = require("machine").line -- bench/lib/machine.lua

sh("mkdir -p " .. opt.dir)
local gen = opt.dir .. "/gen"
sh(("cc -O2 -o %s bench/gen.c -lm"):format(gen))
local base, later = opt.dir .. "/base.jsonl", opt.dir .. "/sweep.jsonl"
if not io.open(base) then sh(("%s --docs %d --size 5000 --seed 1 --out %s"):format(gen, opt.docs, base)) end
if not io.open(later) then sh(("%s --docs %d --size 5000 --seed 2 --out %s"):format(gen, opt.sweep, later)) end

local function peak_rss()
  local f = io.open("/proc/self/status")
  local kb = f and tonumber(f:read("a"):match("VmHWM:%s*(%d+)")) or 0
  if f then f:close() end
  return kb / 1024
end

print("# index benchmark, " .. os.date("!%Y-%m-%d %H:%M UTC"))
print("machine: " .. machine())
print("load: " .. io.popen("uptime"):read("*l"))

local db = opt.dir .. "/db"
sh("rm -rf " .. db)
local ix = assert(index.open(db))
local t0, c0 = core.now(), os.clock()
local st = assert(ix:add({ base }, { sweep = "2026-01", threads = core.cpus() }))
local t_base, c_base = core.now() - t0, os.clock() - c0
print(("base: %d documents added in %.1f s: %.0f docs/s; %.1f CPU s, %.0f docs per CPU s (%d identical, %d pairs linked); peak RSS %.0f MB"):format(
  st.documents, t_base, st.documents / t_base, c_base, st.documents / c_base, st.identical, st.linked, peak_rss()))
t0, c0 = core.now(), os.clock()
local st2 = assert(ix:add({ later }, { sweep = "2026-02", threads = core.cpus() }))
local t_sweep, c_sweep = core.now() - t0, os.clock() - c0
print(("sweep: %d documents added to an index of %d in %.1f s: %.0f docs/s; %.1f CPU s, %.0f docs per CPU s; peak RSS %.0f MB"):format(
  st2.documents, st.documents, t_sweep, st2.documents / t_sweep, c_sweep, st2.documents / c_sweep, peak_rss()))

-- large documents: each the concatenation of 100 documents of the later
-- sweep's file (~500 KB), added as a third sweep; the queries are edited
-- copies of them (hits expected) and concatenations of new documents
local large, large_q = {}, {}
do
  local texts = {}
  for line in io.lines(later) do
    texts[#texts + 1] = cjson.decode(line).text
    if #texts >= 8000 then break end
  end
  for i = 1, 40 do
    local t = table.concat(texts, "\n", (i - 1) * 100 + 1, i * 100)
    large[#large + 1] = { url = ("http://large.example/%d"):format(i), text = t, html = false }
    large_q[#large_q + 1] = t:gsub("(%a+) (%a+) (%a+)", "%3 %2 %1", 200)
  end
  for i = 41, 80 do large_q[#large_q + 1] = table.concat(texts, "\n", (i - 1) * 100 + 1, i * 100) .. " fresh" end
  assert(ix:add_documents(large, { sweep = "2026-03" }))
end
ix:close()

-- queries: documents of the later sweep edited a little (near-duplicates of
-- indexed ones) and fresh documents, half each
local queries = {}
local f = io.open(later)
for line in f:lines() do
  local d = cjson.decode(line)
  local text = d.text
  if #queries % 2 == 0 then text = text:gsub("(%a+) (%a+) (%a+)", "%3 %2 %1", 3) end
  queries[#queries + 1] = text
  if #queries >= opt.queries then break end
end
f:close()
local fresh = io.popen(("%s --docs %d --size 5000 --seed 3 --out /dev/stdout"):format(gen, math.floor(opt.queries / 2)))
local k = 1
for line in fresh:lines() do queries[k] = cjson.decode(line).text; k = k + 2 end
fresh:close()

ix = assert(index.open(db, { readonly = true }))
local text_sh = ix:shinglers()
local lat, floor = {}, {}
for r = 1, opt.runs do
  for i, q in ipairs(queries) do
    local a = core.now()
    local hits = assert(ix:similar(q, { threshold = 0.5, top = 10, html = false }))
    local b = core.now()
    assert(text_sh:sketch(q))
    local c = core.now()
    if r > 1 then lat[#lat + 1] = (b - a) * 1000; floor[#floor + 1] = (c - b) * 1000 end
    local _ = hits
  end
end
print(("similar (5 KB document, %d queries x %d warm runs): median %.3f ms, p99 %.3f ms; sketching the query alone: median %.3f ms (ratio %.1f)")
  :format(#queries, opt.runs - 1, median(lat), pct(lat, 0.99), median(floor), median(lat) / median(floor)))

-- large queries: latency, and the hits against a search of every value
do
  local lat_l, floor_l, found, expected, qbytes = {}, {}, 0, 0, 0
  for r = 1, opt.runs do
    for i, q in ipairs(large_q) do
      qbytes = qbytes + #q
      local a = core.now()
      local hits = assert(ix:similar(q, { threshold = 0.5, top = 10, html = false }))
      local b = core.now()
      assert(text_sh:sketch(q))
      local c = core.now()
      if r > 1 then lat_l[#lat_l + 1] = (b - a) * 1000; floor_l[#floor_l + 1] = (c - b) * 1000 end
      if r == 1 then
        -- the reference: every value looked up (policy either), then filtered to resemblance >= 0.5
        local all = assert(ix:similar(q, { threshold = 0.5, top = 0, html = false, policy = "either" }))
        local want = {}
        for _, h in ipairs(all) do if h.resemblance >= 0.5 then want[h.id] = true; expected = expected + 1 end end
        for _, h in ipairs(hits) do if want[h.id] then found = found + 1 end end
        if i <= 40 then assert(#hits > 0, "an edited large document found nothing") end
      end
    end
  end
  print(("similar (large document, %.0f KB on average, %d queries x %d warm runs): median %.3f ms, p99 %.3f ms; sketching the query alone: median %.3f ms; hits %d of the %d of a search of every value"):format(
    qbytes / opt.runs / #large_q / 1000, #large_q, opt.runs - 1, median(lat_l), pct(lat_l, 0.99), median(floor_l), found, expected))
end

-- 2 processes, each querying for 10 s
local script = opt.dir .. "/qps.lua"
local w = io.open(script, "w")
w:write([[package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/5.4/lib/?.so;" .. package.cpath
local index, core, cjson = require "shingle.index", require "shingle.core", require "cjson"
local ix = assert(index.open(arg[1], { readonly = true }))
local qs = {}
for line in io.lines(arg[2]) do qs[#qs + 1] = cjson.decode(line).text if #qs >= 500 then break end end
local n, t0 = 0, core.now()
while core.now() - t0 < 10 do n = n + 1; assert(ix:similar(qs[n % #qs + 1], { html = false })) end
print(n / (core.now() - t0))
]])
w:close()
local p1 = io.popen(("lua5.4 %s %s %s"):format(script, db, later))
local p2 = io.popen(("lua5.4 %s %s %s"):format(script, db, later))
local q1, q2 = tonumber(p1:read("*l")), tonumber(p2:read("*l"))
p1:close(); p2:close()
print(("queries per second from 2 processes: %.0f (%.0f + %.0f)"):format(q1 + q2, q1, q2))
local du = io.popen("du -sh " .. db):read("*l")
print("index size: " .. du)
