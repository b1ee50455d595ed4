-- What the lookups of a `similar` query cost once it is sketched (issue 12;
-- a benchmark, not a test; docs/benchmarks.md, "Serving"):
--   lua5.4 bench/query_lookup.lua [--dir /tmp/shingle-serve-bench] [--rounds 5] [--queries 1000] [--only cache]
-- The queries are the bodies of bench/serve_bench.lua (run it first: it
-- builds the 1M-document index and the bodies in --dir): edited copies of
-- indexed documents, which find their original and whose every value is a
-- key of the postings, and new documents, which find nothing. Each is
-- sketched once; then the engine's query (the binding's ix:similar on the
-- sketch: threshold 0.5, top 10, as /similar's defaults) is timed, per query,
-- on three handles of the same index in the same process, one after another:
-- none of the server's aids, the postings filter (filter_start()), and the
-- filter with the postings cache (filter_start{ cache }). Medians over
-- ROUNDS rounds (after a warm one) of the mean per query; the hits must be
-- the same on every handle.
local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."
package.path = here .. "/lua/?.lua;" .. here .. "/lua/?/init.lua;" .. here .. "/bench/lib/?.lua;" .. package.path
package.cpath = (os.getenv("SHINGLE_LIB") or (here .. "/build/5.4/lib")) .. "/?.so;" .. package.cpath
local stats = require "stats" -- bench/lib/stats.lua
local machine = require "machine" -- bench/lib/machine.lua
local core = require "shingle.core"
local index = require "shingle.index"

local opt = { dir = "/tmp/shingle-serve-bench", rounds = 5, queries = 1000, only = "" }
for i = 1, #arg, 2 do
  local k = arg[i]:gsub("^%-%-", "")
  if opt[k] == nil then error("unknown option " .. arg[i]) end
  opt[k] = tonumber(arg[i + 1]) or arg[i + 1]
end

local function lines(path)
  local out = {}
  for l in io.lines(path) do out[#out + 1] = l end
  return out
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local db = opt.dir .. "/db"
local edited_files, fresh_files = lines(opt.dir .. "/edited.list"), lines(opt.dir .. "/fresh.list")
local n = math.min(opt.queries // 2, #edited_files, #fresh_files)

local function open()
  return assert(index.open(db, { readonly = true }))
end

-- the sketches, once
local ix = open()
local text_sh = ix:shinglers()
local kinds = { edited = {}, fresh = {} }
for i = 1, n do
  kinds.edited[i] = assert(text_sh:sketch(read(edited_files[i])))
  kinds.fresh[i] = assert(text_sh:sketch(read(fresh_files[i])))
end
local max_df = ix:query_max_df()
ix:close()

print("# query lookups, " .. os.date("!%Y-%m-%d %H:%M UTC") .. ", " .. machine.cpu() .. ", load " .. machine.load())

local function wait(h)
  while not h:filter().ready do
    assert(not h:filter().error, h:filter().error)
    os.execute("sleep 0.05")
  end
end

local reference
local function run(tag, start)
  local h = open()
  if start then
    assert(h:filter_start(start))
    wait(h)
  end
  local out = {}
  local answers = {}
  for kind, sks in pairs(kinds) do
    local means = {}
    for r = 0, opt.rounds do
      local a = core.now()
      for i, sk in ipairs(sks) do
        local hits = assert(h.ix:similar(sk, { threshold = 0.5, top = 10, max_df = max_df }))
        if r == 0 then
          local s = {}
          for _, x in ipairs(hits) do s[#s + 1] = x.id .. ":" .. x.resemblance end
          answers[kind .. i] = table.concat(s, " ")
        end
      end
      if r > 0 then means[#means + 1] = (core.now() - a) * 1e6 / #sks end
    end
    out[kind] = stats.median(means)
  end
  if reference then
    for k, v in pairs(reference) do assert(answers[k] == v, tag .. ": other hits than without aids for " .. k) end
  else
    reference = answers
  end
  local f = h:filter()
  h:close()
  print(("%-22s edited copies %7.1f us a query, new documents %6.1f us%s"):format(tag, out.edited, out.fresh,
    f.cache and f.cache.keys > 0 and ("  (cache: %d keys, %.0f MB)"):format(f.cache.keys, f.cache.bytes / 1048576) or ""))
  return out
end

print(("index: %s; %d edited copies and %d new documents of ~5 KB, sketched beforehand; medians of %d rounds")
  :format(db, n, n, opt.rounds))
if opt.only == "cache" then -- for a profiler: the cached handle alone
  run("filter and cache", { cache = 2 ^ 31 })
  os.exit(0)
end
local none = run("no filter, no cache")
local filter = run("filter", {})
local cache = run("filter and cache", { cache = 2 ^ 31 })
print(("filter and cache vs filter alone: edited copies x%.2f, new documents x%.2f")
  :format(filter.edited / cache.edited, filter.fresh / cache.fresh))
print(("filter and cache vs none: edited copies x%.2f, new documents x%.2f")
  :format(none.edited / cache.edited, none.fresh / cache.fresh))
print("load at end: " .. machine.load())
