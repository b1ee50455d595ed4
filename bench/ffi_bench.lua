-- Benchmark (not a test) of the two ways LuaJIT reaches the engine, outside
-- nginx: shingle.ffi (the C API through LuaJIT's FFI, a reused sketch) against
-- the classic binding (shingle/core.so), on the same documents:
--   * sketching: classic sh:sketch(text) vs FFI sh:sketch(text, reused);
--   * /similar's work as the handlers do it (lua/shingle/http.lua): the
--     classic Index:similar(text, { docs }) vs the FFI fast path (sketch into
--     the worker's sketch + fx:similar with URLs), over one index.
-- Rounds alternate the two; per-call times are medians over the rounds.
-- bench/serve_bench.lua measures the same two paths inside nginx under wrk.
--
--   luajit bench/ffi_bench.lua [--docs 2000] [--rounds 7]
--
-- On a loaded machine, count instructions instead (repeatable):
--   bash bench/ffi_callgrind.sh [DOCS]
-- runs this script under callgrind with --case K (only case K, once over the
-- documents; 0: none, the set-up alone) and prints instructions per call.
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median = stats.median
package.cpath = "build/jit/lib/?.so;" .. package.cpath
assert(rawget(_G, "jit"), "run me with luajit: shingle.ffi is LuaJIT's")
local ffi = require "ffi"
local shingle = require "shingle"
local sf = require "shingle.ffi"
local index = require "shingle.index"
local http = require "shingle.http"
local gen = require "gen"

local opt = { docs = 2000, rounds = 7, case = -1 }
for i = 1, #arg, 2 do
  local k = arg[i]:gsub("^%-%-", "")
  assert(opt[k], "unknown option " .. arg[i])
  opt[k] = tonumber(arg[i + 1])
end

ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } ffib_timespec;
  int clock_gettime(int clk, ffib_timespec *ts);
]]
local ts = ffi.new("ffib_timespec")
local function now()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

-- documents: gen's corpus (Zipf words, planted near-duplicates); the first
-- half indexed, the other half and edited copies of the first queried
local docs = gen.list({ docs = opt.docs, seed = 12 })
local dir = io.popen("mktemp -d"):read("*l")
-- (a small map under callgrind, which cannot map LMDB's default size)
local ix = assert(index.open(dir, opt.case >= 0 and { map_size = 256 * 1024 * 1024 } or nil))
local add = {}
for i = 1, math.floor(#docs / 2) do add[i] = { url = docs[i].url, text = docs[i].text } end
assert(ix:add_documents(add, { sweep = "bench" }))
local texts, bytes = {}, {}
for i = 1, #docs do
  texts[i] = docs[i].text
  bytes[i] = #docs[i].text
end
-- the index's shingler, both ways (the FFI's as the handlers make it)
local fast = assert(http.fast_path(ix))
local c = ix.config
local classic = shingle.new({ w = c.w, k = c.k, sketch = c.sketch, s = c.s, m = c.m, option = c.option,
  tokens = c.tokens, fold = c.fold, punctuation = c.punctuation, numbers = c.numbers, invalid = c.invalid, seed = c.seed })
local fsh = fast.text
local reused = fast.sk

local function time_per_call(f)
  local t0 = now()
  for i = 1, #texts do f(texts[i]) end
  return (now() - t0) / #texts * 1e6
end

local cases = {
  { "sketch, classic binding", function(t) return classic:sketch(t) end },
  { "sketch, shingle.ffi (reused sketch)", function(t) return fsh:sketch(t, reused) end },
  { "/similar's work, classic (Index:similar)", function(t)
      return ix:read(ix.similar, ix, t, { threshold = 0.5, top = 10, html = false, docs = true }) end },
  { "/similar's work, FFI fast path", function(t)
      local sk = fsh:sketch(t, reused)
      if #sk == 0 then return nil end
      return ix:read(fast.ix.similar, fast.ix, sk, { threshold = 0.5, top = 10, docs = true }) end },
}
-- the two paths answer alike (the spec checks it thoroughly; this guards the figures)
for i = 1, 50 do
  local a = cases[3][2](texts[i]) or {}
  local b = cases[4][2](texts[i]) or {}
  assert(#a == #b, "the two paths disagree on document " .. i)
end

if opt.case >= 0 then -- one case, once (for callgrind)
  if opt.case > 0 then time_per_call(cases[opt.case][2]) end
  print(("case %d: %s, %d documents"):format(opt.case, opt.case > 0 and cases[opt.case][1] or "set-up only", #texts))
  ix:close()
  os.execute("rm -rf " .. dir)
  os.exit(0)
end

local times = {}
for k = 1, #cases do times[k] = {} end
for _ = 1, opt.rounds do
  for k, cs in ipairs(cases) do
    collectgarbage()
    times[k][#times[k] + 1] = time_per_call(cs[2])
  end
end
local p = io.popen("uptime")
local load = p:read("*l"):gsub("^%s+", "")
p:close()
print(("# shingle.ffi vs the classic binding (LuaJIT %s), %s"):format(jit.version, os.date("!%Y-%m-%d %H:%M UTC")))
print("load: " .. load)
print(("%d documents, median %d bytes; index of %d; %d rounds, medians"):format(#texts, median(bytes), ix:count(),
  opt.rounds))
local m = {}
for k, cs in ipairs(cases) do
  m[k] = median(times[k])
  print(("%-42s %8.2f us/call"):format(cs[1], m[k]))
end
print(("sketch: FFI / classic time %.3f (%.1f%% %s)"):format(m[2] / m[1], math.abs(1 - m[2] / m[1]) * 100,
  m[2] < m[1] and "faster" or "slower"))
print(("/similar's work: FFI / classic time %.3f (%.1f%% %s)"):format(m[4] / m[3], math.abs(1 - m[4] / m[3]) * 100,
  m[4] < m[3] and "faster" or "slower"))
ix:close()
os.execute("rm -rf " .. dir)
