-- One configuration through the pipeline's sketcher on one worker thread
-- (the C pool), for a profiler (a benchmark, not a test; docs/benchmarks.md,
-- "Rule sets and extractors"):
--   lua5.4 bench/sketch_pool.lua fasta|text [MB] [REPS]
--   valgrind --tool=callgrind --toggle-collect=sh_pool_run lua5.4 bench/sketch_pool.lua fasta 2 1
-- fasta: bench/rules_bench.lua's DNA records (50 kbp, 70 bases a line) with
-- the FASTA extractor (k = 21); text: its generated prose with the default
-- options; MOD_25 either way, in batches of 64. Prints the median CPU time
-- of REPS runs (1 by default). SHINGLE_LIB=DIR loads another build's C module.
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. here .. "/bench/lib/?.lua;" .. package.path
package.cpath = (os.getenv("SHINGLE_LIB") or (here .. "/build/5.4/lib")) .. "/?.so;" .. package.cpath
local core = require "shingle.core"
local gen = require "gen"
local sketcher = require "shingle.sketcher"

local kind, mb, reps = arg[1] or "fasta", tonumber(arg[2]) or 2, tonumber(arg[3]) or 1
local lcg = require("rng").lcg -- bench/lib/rng.lua
local docs, bytes = {}, 0
if kind == "fasta" then
  local r, bases = lcg(9), { "A", "C", "G", "T" }
  while bytes < mb * 1e6 do
    local lines, seq = { ">record " .. #docs }, {}
    for i = 1, 50000 do seq[i] = bases[r(4)] end
    local s = table.concat(seq)
    for i = 1, #s, 70 do lines[#lines + 1] = s:sub(i, i + 69) end
    docs[#docs + 1] = { text = table.concat(lines, "\n") .. "\n" }
    bytes = bytes + #s
  end
else
  for d in gen.corpus{ docs = math.floor(mb * 1e6 / 5000), size = 5000, seed = 5 } do
    docs[#docs + 1] = { text = d.text }
    bytes = bytes + #d.text
  end
end
local c = { sketch = "mod", m = 25, extractor = kind == "fasta" and "fasta" or nil }
local text, html, ex = sketcher.shinglers(c)
local sk = sketcher.new(text, html, { threads = 1, extractor = ex, config = c })
local cpu = {}
for r = 1, reps do
  local c0 = os.clock()
  for i = 1, #docs, 64 do
    local batch = {}
    for j = i, math.min(#docs, i + 63) do batch[#batch + 1] = docs[j] end
    for _, res in ipairs(sk:batch(batch)) do if res.error then error(res.error) end end
  end
  cpu[r] = os.clock() - c0
end
sk.pool:close()
table.sort(cpu)
local t = cpu[(reps + 1) // 2]
print(("%s, %.2f M%s, level %s: %.4f s CPU, %.1f M%s/s per core"):format(kind, bytes / 1e6,
  kind == "fasta" and "bp" or "B", core.simd(), t, bytes / 1e6 / t, kind == "fasta" and "bp" or "B"))
