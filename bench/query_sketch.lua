-- What sketching a large `similar` query costs (issue 13, target 4; a
-- benchmark, not a test; docs/benchmarks.md, "Queries"):
--   lua5.4 bench/query_sketch.lua [KB] [ROUNDS]
-- The query: generated documents (shingle.gen) joined to about KB kilobytes
-- (470 by default: 100 documents of 5 KB), sketched by the shingler an index
-- of the default configuration makes (shingle.index.defaults through
-- shingle.sketcher.shinglers, as Index:similar does), 50 calls a round;
-- per call, the median over ROUNDS rounds (9) of CPU time (os.clock) and of
-- wall time. The reference in the same run: LC_ALL=C wc -w over the same
-- bytes, 50 copies in one file (its user + system seconds per copy).
-- SHINGLE_LIB=DIR loads the C module from DIR (another build, e.g. main's
-- build/5.4/lib) to compare builds in alternating runs.
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. here .. "/bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median = stats.median
package.cpath = (os.getenv("SHINGLE_LIB") or (here .. "/build/5.4/lib")) .. "/?.so;" .. package.cpath
local machine = require "machine" -- bench/lib/machine.lua
local core = require "shingle.core"
local gen = require "gen"
local index = require "shingle.index"
local sketcher = require "shingle.sketcher"

local kb = tonumber(arg[1]) or 470
local rounds = tonumber(arg[2]) or 9
local CALLS = 50

local cfg = {}
for k, v in pairs(index.defaults) do cfg[k] = v end
local text_sh = sketcher.shinglers(cfg)
local parts = {}
for d in gen.corpus{ docs = math.max(1, math.floor(kb * 1000 / 4700 + 0.5)), size = 5000, seed = 7 } do
  parts[#parts + 1] = d.text
end
local q = table.concat(parts, "\n")

-- the reference: wc -w over CALLS copies of the query
local file = os.tmpname()
do
  local f = assert(io.open(file, "wb"))
  for _ = 1, CALLS do f:write(q, "\n") end
  f:close()
end
local function wc()
  local p = io.popen("bash -c \"TIMEFORMAT='%3U %3S'; { time LC_ALL=C wc -w < '" .. file .. "' >/dev/null; } 2>&1\"")
  local out = p:read("a")
  p:close()
  local u, s = out:match("([%d.]+) ([%d.]+)")
  return (tonumber(u) + tonumber(s)) / CALLS
end

print(("# query sketch, %s, %s, %s; load %s"):format(os.date("!%Y-%m-%d %H:%M UTC"), machine.cpu(), core.simd(),
  machine.load()))
local sk = assert(text_sh:sketch(q))
wc() -- the page cache
local cpu, wall, ref = {}, {}, {}
for r = 1, rounds do
  local c0, t0 = os.clock(), core.now()
  for _ = 1, CALLS do sk = text_sh:sketch(q) end
  cpu[r], wall[r] = (os.clock() - c0) / CALLS, (core.now() - t0) / CALLS
  ref[r] = wc()
end
os.remove(file)
local c, w, x = median(cpu), median(wall), median(ref)
print(("query %d bytes, %d values in its sketch (MOD_%d): per call %.3f ms CPU (%.0f MB/s), %.3f ms wall;"
  .. " wc -w on the same bytes %.3f ms CPU (%.0f MB/s): %.2f x wc -w"):format(#q, #sk, cfg.m, c * 1e3, #q / c / 1e6,
  w * 1e3, x * 1e3, #q / x / 1e6, x / c))
print("# load at end: " .. machine.load())
