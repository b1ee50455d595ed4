-- What canonicalization rule sets cost (not a test): sketching throughput of
-- the default shingler against rule sets of built-in steps only (which run
-- entirely in C) and rule sets with Lua steps; medians of 5 runs over the
-- same documents, and each ratio to the default measured in the same run.
--   lua5.4 bench/rules_bench.lua [MB]
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
package.cpath = "build/5.4/lib/?.so;" .. package.cpath
local shingle = require "shingle"
local core = require "shingle.core"
local gen = require "gen"

local mb = tonumber(arg[1]) or 20
local docs, bytes = {}, 0
for d in gen.corpus{ docs = math.floor(mb * 1e6 / 5000), size = 5000, seed = 5 } do
  docs[#docs + 1] = d.text
  bytes = bytes + #d.text
end

local configs = {
  { "default options", {} },
  { "built-in steps: lowercase, drop_punctuation", { canon = { "lowercase", "drop_punctuation" } } },
  { "named set 'text'", { canon = "text" } },
  { "built-ins + a Lua token step (identity)", { canon = { "lowercase", "drop_punctuation",
    { name = "id", tokens = function(t) return t end } } } },
  { "built-ins + a Lua text step (gsub of digits)", { canon = { { name = "digits", text = function(s) return (s:gsub("%d", "0")) end },
    "lowercase", "drop_punctuation" } } },
}

local function run(opts)
  local o = { sketch = "mod", m = 25 }
  for k, v in pairs(opts) do o[k] = v end
  local sh = shingle.new(o)
  local t0 = core.now()
  for i = 1, #docs do assert(sh:sketch(docs[i])) end
  return bytes / 1e6 / (core.now() - t0)
end

print(("# rule sets, %.1f MB in %d documents, one thread, %s"):format(bytes / 1e6, #docs, os.date("!%Y-%m-%d")))
local results = {}
for r = 1, 5 do
  for i, c in ipairs(configs) do
    results[i] = results[i] or {}
    results[i][r] = run(c[2])
  end
end
local base
for i, c in ipairs(configs) do
  table.sort(results[i])
  local med = results[i][3]
  base = base or med
  print(("%-48s %7.1f MB/s  (%.2f of the default)"):format(c[1], med, med / base))
end
