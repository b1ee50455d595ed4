-- The clustering pipeline step by step with the peak RSS of each step, for
-- docs/benchmarks.md ("Peak memory of the external sort"):
--   lua5.4 bench/pipeline_phases.lua CORPUS OUTDIR MEMORY [exact]
-- MEMORY is the --memory budget (512M, 64M, 1G ...). Runs what
-- `shingle cluster CORPUS -o OUTDIR --memory MEMORY` runs (pipeline:run), one
-- step at a time; before each step the peak RSS (VmHWM) is reset through
-- /proc/self/clear_refs, so each line gives the step's own peak. RSS counts
-- the pages of mapped input files (docs.bin, sketches.bin) as well as the
-- sorters' buffers. CPU seconds are the process's (os.clock: every thread,
-- user and system), the figure to trust on a shared machine. Run from the
-- checkout after `source scripts/env.sh`.
local pipeline = require "shingle.pipeline"
local core = require "shingle.core"

local corpus, outdir, memory, verify = arg[1], arg[2], arg[3], arg[4] == "exact"
if not (corpus and outdir and memory) then
  io.stderr:write("usage: lua5.4 bench/pipeline_phases.lua CORPUS OUTDIR MEMORY [exact]\n")
  os.exit(2)
end
local units = { K = 1024, M = 1024 ^ 2, G = 1024 ^ 3 }
local num, unit = memory:upper():match("^([%d.]+)([KMG]?)$")
assert(num, "MEMORY: a number with K, M or G")
local bytes = math.floor(tonumber(num) * (units[unit] or 1))

local function status(field)
  local f = assert(io.open("/proc/self/status"))
  local s = f:read("a")
  f:close()
  return tonumber(s:match(field .. ":%s*(%d+)")) * 1024
end
local function reset()
  local f = io.open("/proc/self/clear_refs", "w")
  if f then f:write("5"); f:close() end
end
local MiB = 1024 * 1024

local p = pipeline.new { outdir = outdir, memory = bytes, verify = verify, quiet = true }
local steps = {
  { "sketching", function() return p:sketch({ corpus }) end },
  { "dedupe", function() return p:dedupe() end },
  { "pairs (phases 2-3)", function() return p:pairs() end },
  { "decide (phase 4)", function() return p:decide() end },
  { "save", function() return p:save_config() end },
  { "report", function() return p:report() end },
}
print(("budget %d MiB; %s"):format(bytes // MiB, verify and "--verify exact" or "unverified"))
print(("%-20s %9s %9s %14s"):format("step", "seconds", "CPU s", "peak RSS MiB"))
for _, s in ipairs(steps) do
  collectgarbage()
  reset()
  local t0, c0 = core.now(), os.clock()
  local ok, err = s[2]()
  if not ok then io.stderr:write(s[1], ": ", tostring(err), "\n"); os.exit(1) end
  print(("%-20s %9.2f %9.2f %14.0f"):format(s[1], core.now() - t0, os.clock() - c0, status("VmHWM") / MiB))
end
local st = p.stats.pairs or {}
print(("<shingle, doc> records %s (%.0f MiB), <doc, doc, 1> triplets %s (%.0f MiB), sorter bytes written (max of the two) %.0f MiB")
  :format(tostring(st.records), (st.records or 0) * 12 / MiB, tostring(st.pair_records), (st.pair_records or 0) * 12 / MiB,
    (st.disk_peak or 0) / MiB))
