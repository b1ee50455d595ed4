-- The common-value cutoff of index queries (max_df) on real documents (not a
-- test): its effect on what `similar` finds and on what a query costs.
--   source scripts/env.sh
--   lua5.4 bench/index_cutoff.lua CORPUS OUT [--cutoffs 0,100,1000,10000] [--queries 3000]
-- CORPUS holds html/ and text/ (bench/corpus.sh CORPUS assembles them from
-- Debian documentation packages, as for bench/accuracy.lua). OUT receives
-- the index (never commit it). Every document is added (one sweep, the index
-- defaults, max_df 0 at add time so the index holds every link); then a
-- sample of the documents, each as a new text, is looked up with each
-- cutoff. Recall of a cutoff = the hits (resemblance >= 0.5, all of them,
-- not the top 10) it finds among those found without a cutoff; its cost the
-- median and 99th-percentile query time in the same run. The large
-- documents (>= 200 KB) are reported apart.
package.path = "lua/?.lua;lua/?/init.lua;bench/lib/?.lua;" .. package.path
local stats = require "stats" -- bench/lib/stats.lua
local median, pct = stats.median, stats.pct
package.cpath = "build/5.4/lib/?.so;" .. package.cpath
local index = require "shingle.index"
local core = require "shingle.core"

local opt = { cutoffs = "0,100,1000,10000", queries = 3000 }
local pos = {}
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a:sub(1, 2) == "--" then opt[a:sub(3)] = arg[i + 1]; i = i + 2 else pos[#pos + 1] = a; i = i + 1 end
  end
end
if #pos ~= 2 then
  io.stderr:write("usage: lua5.4 bench/index_cutoff.lua CORPUS OUT [--cutoffs 0,100,1000] [--queries N]\n")
  os.exit(2)
end
local CORPUS, OUT = pos[1], pos[2]
local cutoffs = {}
for c in opt.cutoffs:gmatch("%d+") do cutoffs[#cutoffs + 1] = tonumber(c) end
local nq = tonumber(opt.queries)

local function lines(cmd)
  local t, p = {}, assert(io.popen(cmd))
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

print("# index cutoff benchmark, " .. os.date("!%Y-%m-%d %H:%M UTC"))
print("load: " .. lines("uptime")[1])
os.execute("rm -rf '" .. OUT .. "' && mkdir -p '" .. OUT .. "'")
local db = OUT .. "/db"
local ix = assert(index.open(db))
local t0 = core.now()
local st = assert(ix:add({ CORPUS .. "/html", CORPUS .. "/text" }, { sweep = "docs", max_df = 0 }))
print(("index: %d documents added in %.1f s (%d identical, %d pairs linked)"):format(st.documents, core.now() - t0,
  st.identical, st.linked))
ix:close()

-- the queries: every k-th file, so all sizes and both kinds are in the sample
local files = lines("find '" .. CORPUS .. "/html' '" .. CORPUS .. "/text' -type f | sort")
local step = math.max(1, #files // nq)
local queries = {}
for i = 1, #files, step do
  local f = assert(io.open(files[i], "rb"))
  queries[#queries + 1] = { text = f:read("a"), html = files[i]:match("%.html?$") ~= nil }
  f:close()
end

ix = assert(index.open(db, { readonly = true }))
local ref = {}
local rows = {}
for _, c in ipairs(cutoffs) do
  local lat, lat_big, found, want, nbig = {}, {}, 0, 0, 0
  for qi, q in ipairs(queries) do
    local a = core.now()
    local hits = ix:similar(q.text, { html = q.html, top = 0, max_df = c })
    local ms = (core.now() - a) * 1000
    if hits then
      local set = {}
      for _, h in ipairs(hits) do set[h.id] = true end
      if c == 0 then ref[qi] = set end
      for id in pairs(ref[qi] or {}) do want = want + 1; if set[id] then found = found + 1 end end
      if #q.text >= 200000 then lat_big[#lat_big + 1] = ms; nbig = nbig + 1 else lat[#lat + 1] = ms end
    end
  end
  rows[#rows + 1] = ("max_df %6d: recall %.4f (%d of %d hits), query median %.3f ms, p99 %.3f ms; %d large (>= 200 KB): median %.3f ms, p99 %.3f ms")
    :format(c, want > 0 and found / want or 1, found, want, median(lat), pct(lat, 0.99), nbig, median(lat_big), pct(lat_big, 0.99))
  print(rows[#rows])
end
ix:close()
