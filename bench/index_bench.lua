-- Benchmark of the persistent index (not a test):
--   * `similar` for a 5 KB document from the Lua API in a warm process:
--     median and 99th-percentile latency, with the time to sketch the query
--     alone (the floor every lookup pays) measured in the same run as reference;
--   * queries per second from 2 processes;
--   * adding sweeps: documents per second, for the base index and for a later
--     sweep of 100,000 documents.
-- Usage: lua5.4 bench/index_bench.lua [--docs 1000000] [--sweep 100000] [--dir /tmp/shingle-index-bench]
-- Corpora come from bench/gen.c (built here with cc -O2); nothing is kept in the repo.
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
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

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local function pct(t, p)
  table.sort(t)
  return t[math.max(1, math.ceil(#t * p))]
end

sh("mkdir -p " .. opt.dir)
local gen = opt.dir .. "/gen"
sh(("cc -O2 -o %s bench/gen.c -lm"):format(gen))
local base, later = opt.dir .. "/base.jsonl", opt.dir .. "/sweep.jsonl"
if not io.open(base) then sh(("%s --docs %d --size 5000 --seed 1 --out %s"):format(gen, opt.docs, base)) end
if not io.open(later) then sh(("%s --docs %d --size 5000 --seed 2 --out %s"):format(gen, opt.sweep, later)) end

print("# index benchmark, " .. os.date("!%Y-%m-%d %H:%M UTC"))
print("machine: " .. machine())

local db = opt.dir .. "/db"
sh("rm -rf " .. db)
local ix = assert(index.open(db))
local t0 = core.now()
local st = assert(ix:add({ base }, { sweep = "2026-01", threads = core.cpus() }))
local t_base = core.now() - t0
print(("base: %d documents added in %.1f s: %.0f docs/s (%d identical, %d pairs linked)"):format(
  st.documents, t_base, st.documents / t_base, st.identical, st.linked))
t0 = core.now()
local st2 = assert(ix:add({ later }, { sweep = "2026-02", threads = core.cpus() }))
local t_sweep = core.now() - t0
print(("sweep: %d documents added to an index of %d in %.1f s: %.0f docs/s"):format(
  st2.documents, st.documents, t_sweep, st2.documents / t_sweep))
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
