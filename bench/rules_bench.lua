-- What rule sets and feature extractors cost against the C text path (a
-- benchmark, not a test; docs/benchmarks.md, "Rule sets and extractors"):
--   lua5.4 bench/rules_bench.lua [MB [ROWS]]   (bench/run_rules.sh runs it)
-- ROWS: the table's rows to run, as 1,9 (all by default; the first one run
-- is the reference of the ratios). SHINGLE_LIB=DIR loads the C module from
-- DIR (another build, e.g. main's build/5.4/lib, for a before/after).
-- Every configuration sketches (MOD_25) through the pipeline's sketcher
-- (shingle.sketcher: the C pool, or Lua), one document at a time in batches,
-- on one worker thread, then on two; rates per CPU second of the process
-- (per core; with two threads the process's CPU time covers both) and each
-- one's ratio to the C text path (the default options on the same text)
-- measured in the same run, medians of 5. The documents:
--   text   MB of generated prose (shingle.gen), for the C path and the rule sets
--   code   the repository's own C and Lua sources, repeated to MB
--   fasta  generated DNA records (MB of bases), for the FASTA extractor
--   midi   generated melodies (Standard MIDI Files), for the MIDI extractor
-- Also: a Lua rule set's shingle iterator against the C shingler's, per shingle.
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. here .. "/bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median = stats.median
local machine = require "machine" -- bench/lib/machine.lua
package.cpath = (os.getenv("SHINGLE_LIB") or (here .. "/build/5.4/lib")) .. "/?.so;" .. package.cpath
local shingle = require "shingle"
local core = require "shingle.core"
local gen = require "gen"
local sketcher = require "shingle.sketcher"
local midi = require "shingle.extractors.midi"

local mb = tonumber(arg[1]) or 20
local only
if arg[2] then
  only = {}
  for r in arg[2]:gmatch("%d+") do only[tonumber(r)] = true end
end
local REPS = 5

local lcg = require("rng").lcg -- bench/lib/rng.lua

local function text_docs()
  local docs, bytes = {}, 0
  for d in gen.corpus{ docs = math.floor(mb * 1e6 / 5000), size = 5000, seed = 5 } do
    docs[#docs + 1] = { text = d.text }
    bytes = bytes + #d.text
  end
  return docs, bytes
end

local function code_docs()
  local files = {}
  local p = io.popen("cd '" .. here .. "' && ls core/*.c core/*.h core/lua/*.c lua/shingle/*.lua lua/shingle/cmd/*.lua")
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  local docs, bytes = {}, 0
  while bytes < mb * 1e6 do
    for _, f in ipairs(files) do
      local h = assert(io.open(here .. "/" .. f, "rb"))
      local s = h:read("a")
      h:close()
      docs[#docs + 1] = { text = s }
      bytes = bytes + #s
    end
  end
  return docs, bytes
end

local function fasta_docs()
  local r, docs, bytes = lcg(9), {}, 0
  local bases = { "A", "C", "G", "T" }
  while bytes < mb * 1e6 do
    local lines = { ">record " .. #docs }
    local seq = {}
    for i = 1, 50000 do seq[i] = bases[r(4)] end
    local s = table.concat(seq)
    for i = 1, #s, 70 do lines[#lines + 1] = s:sub(i, i + 69) end
    local doc = table.concat(lines, "\n") .. "\n"
    docs[#docs + 1] = { text = doc }
    bytes = bytes + #s
  end
  return docs, bytes
end

local function midi_docs()
  local r, docs, bytes = lcg(13), {}, 0
  while bytes < mb * 1e6 / 10 do
    local p = {}
    for i = 1, 2000 do p[i] = 40 + r(40) end
    local m = midi.encode(p)
    docs[#docs + 1] = { text = m }
    bytes = bytes + #m
  end
  return docs, bytes
end

-- MB per CPU second and per wall second of sketching docs through a sketcher
-- of cfg with the threads given (main: on the main thread, in Lua).
local function measure(cfg, docs, bytes, threads, main)
  local c = { sketch = "mod", m = 25 }
  for k, v in pairs(cfg) do c[k] = v end
  local text, html, ex = sketcher.shinglers(c)
  local sk = sketcher.new(text, html, { threads = threads, extractor = ex, config = c, main_thread = main })
  local where = "C"
  if sk.lua then where = "Lua, main thread"
  elseif ex and ex.c == "fasta" then where = "C (FASTA k-mers)"
  elseif ex and ex.c == "midi" then where = "C (MIDI intervals)"
  elseif c.canon == "tweet" then where = "C (tweet text step)"
  elseif ex and ex.tokenizer then where = "C (code tokenizer)"
  elseif c.canon == "code" then where = "C (code tokenizer)"
  elseif shingle.unwrap(text) ~= text or ex then where = "Lua, a state per worker" end
  local cpu, wall = {}, {}
  for r = 1, REPS do
    local c0, t0 = os.clock(), core.now()
    for i = 1, #docs, 64 do
      local batch = {}
      for j = i, math.min(#docs, i + 63) do batch[#batch + 1] = docs[j] end
      for _, res in ipairs(sk:batch(batch)) do
        if res.error then error(res.error) end
      end
    end
    cpu[r], wall[r] = os.clock() - c0, core.now() - t0
  end
  sk.pool:close()
  return bytes / 1e6 / median(cpu), bytes / 1e6 / median(wall), where
end

print(("# rule sets and extractors, %s, %s, %s; load %s"):format(os.date("!%Y-%m-%d %H:%M UTC"), machine.cpu(),
  core.simd(), machine.load()))
local text, tbytes = text_docs()
local code, cbytes = code_docs()
local fasta, fbytes = fasta_docs()
local mid, mbytes = midi_docs()
print(("# documents: text %.1f MB (%d), code %.1f MB (%d), fasta %.1f Mbp (%d), midi %.1f MB (%d); medians of %d"):format(
  tbytes / 1e6, #text, cbytes / 1e6, #code, fbytes / 1e6, #fasta, mbytes / 1e6, #mid, REPS))

-- the tweet rule set with its text step in Lua, from a file (so that the
-- workers' Lua states can load it)
local tweet_file = os.tmpname()
do
  local f = assert(io.open(tweet_file, "w"))
  f:write([[return { { name = "tweet", text = require("shingle.rules").tweet_text }, "lowercase", "drop_punctuation" }]])
  f:close()
end
local rules = require "shingle.rules"
local lua_code = { canon = { { name = "code", tokenize = rules.code_tokens } } }

-- name, configuration, documents, bytes, and the Lua path it replaces when
-- that is not the same configuration on the main thread
local rows = {
  { "C text path (default options)", {}, text, tbytes },
  { "named set text (built-in steps)", { canon = "text" }, text, tbytes },
  { "named set tweet", { canon = "tweet", invalid = "skip" }, text, tbytes, { canon = tweet_file, invalid = "skip" } },
  { "tweet's text step in Lua (a rules file)", { canon = tweet_file, invalid = "skip" }, text, tbytes },
  { "named set code, on the text", { canon = "code" }, text, tbytes, lua_code },
  { "C text path, on source code", {}, code, cbytes },
  { "named set code, on source code", { canon = "code" }, code, cbytes, lua_code },
  { "extractor code, on source code", { extractor = "code" }, code, cbytes },
  { "extractor fasta (k = 21), Mbp", { extractor = "fasta" }, fasta, fbytes },
  { "extractor midi", { extractor = "midi", w = 4 }, mid, mbytes },
}
local base
print("| configuration | runs in | 1 thread, MB/s per core | / C text path | 2 threads, MB/s wall | its Lua path, main thread, MB/s |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for i, row in ipairs(rows) do
  if not only or only[i] then
    local one, _, where = measure(row[2], row[3], row[4], 1)
    local _, two = measure(row[2], row[3], row[4], 2)
    base = base or one
    local lua = "—"
    if where ~= "C" then
      -- the Lua path these replace (the reference), on the first 2 MB
      local sub, sb = {}, 0
      for _, d in ipairs(row[3]) do
        if sb >= 2e6 then break end
        sub[#sub + 1] = d
        sb = sb + #d.text
      end
      lua = ("%.1f"):format((measure(row[5] or row[2], sub, sb, 1, true)))
    end
    print(("| %s | %s | %.1f | %.2f | %.1f | %s |"):format(row[1], where, one, one / base, two, lua))
  end
end

-- Per feature: the C text path makes a shingle every few bytes, the FASTA
-- extractor a k-mer for every base (its MB are Mbp), the code tokenizer a
-- token for every operator and bracket too.
local function shingles_per_mb(sh, docs)
  local n, b = 0, 0
  for i = 1, math.min(#docs, 200) do
    n = n + sh:sketch(docs[i].text):shingles()
    b = b + #docs[i].text
  end
  return n / b * 1e6
end
print(("\nshingles per MB: C text path %.0f on the text, %.0f on source code; named set code %.0f on source code;"
  .. " FASTA k-mers per Mbp 1000000"):format(shingles_per_mb(shingle.new{}, text), shingles_per_mb(shingle.new{}, code),
  shingles_per_mb(shingle.new{ canon = "code" }, code)))

-- A Lua rule set's shingle iterator against the C shingler's, per shingle.
local doc = text[1].text .. text[2].text .. text[3].text
local lua_sh = shingle.new{ canon = { "lowercase", { name = "same", tokens = function(t) return t end } } }
local c_sh = shingle.new{}
local function per_shingle(sh)
  local n, c0 = 0, os.clock()
  for _ = 1, 50 do for _ in sh:shingles(doc) do n = n + 1 end end
  return (os.clock() - c0) / n * 1e6
end
print(("\nshingle iterator, µs per shingle: C shingler %.3f, a rule set with a Lua step %.3f"):format(
  per_shingle(c_sh), per_shingle(lua_sh)))
os.remove(tweet_file)
print("# load at end: " .. machine.load())
