-- Sketching through the public Lua API (a benchmark, not a test;
-- docs/benchmarks.md, "The Lua API"):
--   lua5.4 bench/api_bench.lua CORPUS [REPS]      (bench/run_api.sh runs it)
-- CORPUS holds text/ and html/ (bench/corpus.sh). Every file is read into a
-- Lua string first; then, with documents in memory, for each set:
--   shingle.new{ w = 10, sketch = "min" }:sketch(doc)       MIN_200
--   shingle.new{ w = 10 }:sketch(doc)                       MOD_25 (the default, floor 20)
-- (html = true for the HTML set), each over every document, REPS times,
-- interleaved with the reference: LC_ALL=C wc -w over the same bytes (the
-- documents of the set concatenated into one file, read from the page cache).
-- Rates are per CPU second of the process (os.clock), wc's own user + system
-- time for wc: per core, so other load on the machine hardly moves them.
-- Medians; the ratio to wc -w is of medians from the same run.
--
-- The digests fold every sketch as bench/sketch_bench.c does (its documents
-- are the same, in the same order): MIN_200 gives sketch_bench's digests
-- (the C kernel and the Lua API make the same sketches); MOD_25 differs from
-- sketch_bench's because the API's default floor is 20 (a short document
-- takes a smaller modulus) where sketch_bench uses none. Each digest is also
-- computed with shingle.new{ ..., simd = "portable" } (the reference loops,
-- no vector code) and the run stops if the two differ: the fast paths give
-- bit-identical sketches on the whole corpus.
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. here .. "/bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median = stats.median
local machine = require "machine" -- bench/lib/machine.lua
package.cpath = here .. "/build/5.4/lib/?.so;" .. package.cpath
local shingle = require "shingle"
local core = require "shingle.core"

local root, reps = arg[1], tonumber(arg[2] or "5")
if not root or not reps or reps < 1 then
  io.stderr:write("usage: lua5.4 bench/api_bench.lua CORPUS [REPS]\n")
  os.exit(2)
end

local function sh_out(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("a")
  p:close()
  return s
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- The documents of one set in name order (bytewise, as sketch_bench sorts
-- them), leaving out those the default shingler rejects (invalid UTF-8).
local function load(set, html)
  local dir = root .. "/" .. set
  local names = {}
  for name in sh_out("LC_ALL=C ls -1 " .. q(dir)):gmatch("[^\n]+") do names[#names + 1] = name end
  if #names == 0 then
    io.stderr:write(("api_bench: no files in %s; make the corpus with bash bench/corpus.sh %s\n"):format(dir, root))
    os.exit(1)
  end
  local sh = shingle.new{ w = 10, html = html }
  local docs, bytes, rejected = {}, 0, 0
  for _, name in ipairs(names) do
    local f = assert(io.open(dir .. "/" .. name, "rb"))
    local doc = f:read("a")
    f:close()
    if sh:sketch(doc) then
      docs[#docs + 1] = doc
      bytes = bytes + #doc
    else
      rejected = rejected + 1
    end
  end
  return { name = set, html = html, docs = docs, bytes = bytes, rejected = rejected }
end

local function digest(sh, docs)
  local d = 0
  for i = 1, #docs do
    local sk = sh:sketch(docs[i])
    d = core.mix(d ~ sk:shingles())
    for _, v in ipairs(sk:values()) do d = core.mix(d ~ v) end
  end
  return d
end

-- One timed pass: CPU and wall seconds.
local function pass(sh, docs)
  local c0, t0 = os.clock(), core.now()
  for i = 1, #docs do
    if not sh:sketch(docs[i]) then error("a document the first pass accepted was rejected") end
  end
  return os.clock() - c0, core.now() - t0
end

-- wc -w over a file: its CPU seconds (user + system) and wall seconds.
local function wc(file)
  local out = sh_out("bash -c " .. q("TIMEFORMAT='%3U %3S %3R'; { time LC_ALL=C wc -w < " .. q(file) ..
    " > /dev/null; } 2>&1"))
  local u, s, r = out:match("([%d.]+) ([%d.]+) ([%d.]+)")
  assert(u, "could not time wc -w: " .. out)
  return tonumber(u) + tonumber(s), tonumber(r)
end

print(("date:    %s"):format(os.date("!%Y-%m-%d %H:%M:%S UTC")))
print(("cpu:     %s, %s cores online; %s"):format(machine.cpu(), sh_out("nproc"):gsub("%s+$", ""), _VERSION))
print(("commit:  %s"):format(sh_out("git -C " .. q(here) .. " rev-parse --short HEAD 2>/dev/null"):gsub("%s+$", "")))
print(("simd:    %s"):format(core.simd and core.simd() or "n/a"))
print(("load average at start: %s"):format(machine.load()))

local tmp = sh_out("mktemp -d"):gsub("%s+$", "")
local results = {}
for _, set in ipairs{ { "text", false }, { "html", true } } do
  local c = load(set[1], set[2])
  local file = tmp .. "/" .. c.name
  local f = assert(io.open(file, "wb"))
  for _, d in ipairs(c.docs) do f:write(d) end
  f:close()
  print(("corpus:  %-4s %6d documents, %.1f MB in memory; %d left out (invalid UTF-8)"):format(
    c.name, #c.docs, c.bytes / 1e6, c.rejected))
  local configs = {
    { "MIN_200", shingle.new{ w = 10, html = c.html, sketch = "min" },
      shingle.new{ w = 10, html = c.html, sketch = "min", simd = "portable" } },
    { "MOD_25 (default)", shingle.new{ w = 10, html = c.html },
      shingle.new{ w = 10, html = c.html, simd = "portable" } },
  }
  local cpu, wall = {}, {}
  for i = 1, #configs + 1 do cpu[i], wall[i] = {}, {} end
  wc(file) -- warm-up: the page cache
  for _, cf in ipairs(configs) do pass(cf[2], c.docs) end -- warm-up: scratch buffers
  for r = 1, reps do
    for i, cf in ipairs(configs) do cpu[i][r], wall[i][r] = pass(cf[2], c.docs) end
    cpu[#configs + 1][r], wall[#configs + 1][r] = wc(file)
  end
  local mb = c.bytes / 1e6
  local ref = mb / median(cpu[#configs + 1])
  for i, cf in ipairs(configs) do
    local per_core = mb / median(cpu[i])
    local d, dp = digest(cf[2], c.docs), digest(cf[3], c.docs)
    if d ~= dp then
      error(("%s %s: the digest at the %s level %016x differs from the portable level's %016x"):format(
        c.name, cf[1], core.simd(), d, dp))
    end
    results[#results + 1] = ("| %-4s | %-18s | %8.1f | %8.1f | %5.2fx | %016x (= portable) |"):format(
      c.name, cf[1], per_core, mb / median(wall[i]), per_core / ref, d)
  end
  results[#results + 1] = ("| %-4s | %-18s | %8.1f | %8.1f | %5.2fx | |"):format(
    c.name, "LC_ALL=C wc -w", ref, mb / median(wall[#configs + 1]), 1)
  os.remove(file)
end
os.remove(tmp)
print(("\nmedians of %d runs; MB = 10^6 bytes of input; per core = per CPU second"):format(reps))
print("| set  | sketch             | per core | wall MB/s | / wc -w | digest |")
print("| ---- | ------------------ | -------: | --------: | ------: | ------ |")
for _, line in ipairs(results) do print(line) end
print(("load average at end: %s"):format(machine.load()))
