--- Pair precision and recall of every clustering method against exact Jaccard.
--
--   source scripts/env.sh
--   lua5.4 bench/accuracy.lua CORPUS OUT [--only NAME,...] [--reuse] [--check N] [--memory 4G]
--
-- CORPUS holds html/ and text/ (bench/corpus.sh CORPUS assembles them from
-- Debian documentation packages). OUT receives one cluster run per method
-- (several GB in all; never commit it). docs/accuracy.md records the figures.
--
-- Ground truth ("truth" run): the pipeline itself with the full shingle set as
-- the sketch (MOD_1), no common-shingle cutoff, every pair sharing a shingle a
-- candidate and decided from the full sets. A pair with resemblance >= 0.5
-- shares at least one shingle, so the truth run links every such pair of
-- representatives; identical documents (exact, lexical or equal full shingle
-- set) have resemblance 1. Same shinglers as every other run (w = 10, HTML
-- stripped by name, lowercase, numbers kept, invalid UTF-8 as Latin-1), so
-- the truth is the exact Jaccard of the very shingle sets the methods sketch.
-- --check N recomputes N truth decisions with shingle.exact from the files.
--
-- Three measures per run, all over pairs of documents (not of representatives):
--   cluster:  predicted = every pair of members of a clusters.jsonl cluster
--             (what a user of the clusters gets, transitive closure included)
--   direct:   predicted = pairs joined by one link of pairs.jsonl (cross
--             product of the two representatives' groups of identical
--             documents) or by identity (same representative); no closure
--   links:    precision of the pairs.jsonl links themselves (representatives)
-- Recall is against all pairs with exact resemblance >= threshold.
local shingle = require "shingle"
local core = require "shingle.core"
local cjson = require "cjson"

local here = arg[0]:match("^(.*)/bench/[^/]*$") or "."

-- the runs: name, arguments after the common ones
local RUNS = {
  -- the defaults: MOD_25 with a floor of 20, exact verification of candidates at threshold - 0.2
  { "defaults", {} },
  -- every method as it comes, without and with exact verification
  { "shingles mod25", { "--method", "shingles", "--verify", "none" } },
  { "shingles mod25 +verify", { "--method", "shingles", "--verify", "exact", "--candidate", "0.5" } },
  { "shingles mod25 floor0 +verify c0.3", { "--method", "shingles", "--verify", "exact", "--candidate", "0.3",
    "--floor", "0" } },
  { "shingles min200", { "--method", "shingles", "--sketch", "min", "-s", "200", "--verify", "none" } },
  { "shingles min200 +verify", { "--method", "shingles", "--sketch", "min", "-s", "200", "--verify", "exact",
    "--candidate", "0.5" } },
  { "shingles class", { "--method", "shingles", "--sketch", "class", "--verify", "none" } },
  { "shingles class +verify", { "--method", "shingles", "--sketch", "class", "--verify", "exact", "--candidate", "0.5" } },
  { "supershingle", { "--method", "supershingle", "--verify", "none" } },
  { "supershingle +verify", { "--method", "supershingle", "--verify", "exact" } },
  { "lsh", { "--method", "lsh", "--verify", "none" } },
  { "lsh +verify", { "--method", "lsh", "--verify", "exact" } },
  { "greedy", { "--method", "greedy", "--verify", "none" } },
  { "greedy +verify", { "--method", "greedy", "--verify", "exact" } },
  -- verification with a candidate threshold below the decision threshold
  { "mod25 +verify c0.3 nodf", { "--verify", "exact", "--candidate", "0.3", "--max-df", "1000000000" } },
  { "min128", { "--sketch", "min", "-s", "128", "--verify", "none" } },
  { "min128 +verify c0.4", { "--sketch", "min", "-s", "128", "--verify", "exact", "--candidate", "0.4" } },
  { "min200 +verify c0.4", { "--sketch", "min", "-s", "200", "--verify", "exact", "--candidate", "0.4" } },
  { "class +verify c0.3", { "--sketch", "class", "--verify", "exact", "--candidate", "0.3" } },
  { "lsh +verify c0.3", { "--method", "lsh", "--verify", "exact", "--candidate", "0.3" } },
}
local TRUTH = { "truth", { "--sketch", "mod", "-m", "1", "--max-df", "1000000000", "--verify", "exact",
  "--candidate", "0" } }

local function usage(msg)
  io.stderr:write("accuracy: ", msg, "\nusage: lua5.4 bench/accuracy.lua CORPUS OUT [--only NAME,...] [--reuse] ",
    "[--check N] [--memory 4G] [--threshold 0.5] [--extra 'NAME=ARGS' ...]\n")
  os.exit(2)
end

local opt = { check = 100, memory = "4G", threshold = 0.5, extra = {} }
local pos = {}
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--only" then opt.only = arg[i + 1]; i = i + 1
    elseif a == "--reuse" then opt.reuse = true
    elseif a == "--check" then opt.check = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--memory" then opt.memory = arg[i + 1]; i = i + 1
    elseif a == "--threshold" then opt.threshold = tonumber(arg[i + 1]); i = i + 1
    elseif a == "--extra" then
      -- an extra run: "NAME=--sketch class --candidate 0.3 ..."
      local name, args = (arg[i + 1] or ""):match("^([^=]+)=(.*)$")
      if not name then usage("--extra needs NAME=ARGS") end
      local t = {}
      for w in args:gmatch("%S+") do t[#t + 1] = w end
      opt.extra[#opt.extra + 1] = { name, t }
      i = i + 1
    elseif a:sub(1, 2) == "--" then usage("unknown option " .. a)
    else pos[#pos + 1] = a end
    i = i + 1
  end
end
if #pos ~= 2 then usage("needs CORPUS and OUT") end
local CORPUS, OUT = pos[1], pos[2]
if opt.only then
  local keep = {}
  for name in opt.only:gmatch("[^,]+") do keep[name] = true end
  local r = {}
  for _, run in ipairs(RUNS) do if keep[run[1]] then r[#r + 1] = run end end
  RUNS = r
end
for _, e in ipairs(opt.extra) do RUNS[#RUNS + 1] = e end

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local function sh(cmd) local p = io.popen(cmd); local s = p:read("a"); p:close(); return (s:gsub("%s+$", "")) end
local function dirname(name) return OUT .. "/" .. name:gsub("[^%w]+", "-") end
local function exists(path) local f = io.open(path) if f then f:close() return true end return false end

--- Run one configuration through bin/shingle; returns wall seconds.
local function run(name, args)
  local dir = dirname(name)
  if opt.reuse and exists(dir .. "/summary.json") then
    local f = io.open(dir .. "/wall"); local t = f and tonumber(f:read("a")); if f then f:close() end
    return t
  end
  os.execute("rm -rf " .. sh_quote(dir))
  local cmd = { here .. "/bin/shingle", "cluster", CORPUS .. "/html", CORPUS .. "/text", "-o", dir, "-q",
    "--memory", opt.memory, "--threshold", tostring(opt.threshold) }
  for _, a in ipairs(args) do cmd[#cmd + 1] = a end
  local q = {}
  for i, a in ipairs(cmd) do q[i] = sh_quote(a) end
  io.stderr:write("accuracy: ", name, ": ", table.concat(cmd, " "), "\n")
  local t0 = core.now()
  local ok = os.execute(table.concat(q, " ") .. " > " .. sh_quote(dir .. ".out") .. " 2>&1")
  local t = core.now() - t0
  if not ok then error(("%s failed: see %s.out"):format(name, dir)) end
  local f = assert(io.open(dir .. "/wall", "w")); f:write(t, "\n"); f:close()
  return t
end

local function jsonl(path, fn)
  local f = assert(io.open(path, "rb"))
  for line in f:lines() do fn(cjson.decode(line)) end
  f:close()
end

local function key(a, b) if a > b then a, b = b, a end return a * 4294967296 + b end

--- Read a run: urls (for the id check), rep, groups, clusters, links.
local function load(dir)
  local r = { url = {}, rep = {}, group = {}, cl = {}, links = {}, clsize = {}, nclusters = 0 }
  jsonl(dir .. "/docs.jsonl", function(d) r.url[d.id] = d.url; r.n = math.max(r.n or 0, d.id) end)
  jsonl(dir .. "/clusters.jsonl", function(c)
    r.nclusters = r.nclusters + 1
    r.clsize[c.cluster] = c.size
    for _, m in ipairs(c.members) do
      r.cl[m.id] = c.cluster
      if m.copy_of and m.copy_of ~= cjson.null then r.rep[m.id] = m.copy_of; r.dup = (r.dup or 0) + 1 end
    end
  end)
  for id = 1, r.n do
    local p = r.rep[id] or id
    r.rep[id] = p
    local g = r.group[p]
    if not g then g = {}; r.group[p] = g end
    g[#g + 1] = id
  end
  jsonl(dir .. "/pairs.jsonl", function(l)
    local x = l.exact ~= nil and l.exact ~= cjson.null and l.exact.resemblance or nil
    r.links[#r.links + 1] = { l.a, l.b, l.resemblance, x }
  end)
  local f = assert(io.open(dir .. "/summary.json")); r.summary = cjson.decode(f:read("a")); f:close()
  r.mb = tonumber(sh("du -sm " .. sh_quote(dir) .. " | cut -f1"))
  return r
end

--- The truth: representatives, their groups, and the set of linked
-- representative pairs (each decided from the full shingle sets).
local function load_truth(dir)
  local t = load(dir)
  t.tl = {}
  t.ntl = 0
  for _, l in ipairs(t.links) do
    assert(l[4] and l[4] >= opt.threshold - 1e-4, "truth link without an exact resemblance >= threshold")
    t.tl[key(l[1], l[2])] = true
    t.ntl = t.ntl + 1
  end
  -- number of true document pairs
  local n = 0
  for _, g in pairs(t.group) do n = n + #g * (#g - 1) // 2 end
  for _, l in ipairs(t.links) do n = n + #t.group[l[1]] * #t.group[l[2]] end
  t.npairs = n
  return t
end

local function is_true(T, a, b)
  local ra, rb = T.rep[a], T.rep[b]
  return ra == rb or T.tl[key(ra, rb)] == true
end

--- Pairs of a list of docs in the same cluster (cl: doc -> cluster or nil).
local function same_cluster_pairs(list, cl)
  local cnt, n = {}, 0
  for _, d in ipairs(list) do
    local c = cl[d]
    if c then n = n + (cnt[c] or 0); cnt[c] = (cnt[c] or 0) + 1 end
  end
  return n
end

local function cross_same_cluster(la, lb, cl)
  local cnt, n = {}, 0
  for _, d in ipairs(la) do local c = cl[d] if c then cnt[c] = (cnt[c] or 0) + 1 end end
  for _, d in ipairs(lb) do local c = cl[d] if c and cnt[c] then n = n + cnt[c] end end
  return n
end

local function evaluate(T, R)
  for id = 1, T.n do
    assert(R.url[id] == T.url[id], "document ids differ between runs: run them on the same inputs")
  end
  local e = {}
  -- cluster co-membership
  local pc = 0
  for _, s in pairs(R.clsize) do pc = pc + s * (s - 1) // 2 end
  local tpc = 0
  for _, g in pairs(T.group) do tpc = tpc + same_cluster_pairs(g, R.cl) end
  for _, l in ipairs(T.links) do tpc = tpc + cross_same_cluster(T.group[l[1]], T.group[l[2]], R.cl) end
  e.cluster = { predicted = pc, tp = tpc }
  -- direct: identity groups of the run and its links, no closure
  local pd, tpd = 0, 0
  for _, g in pairs(R.group) do
    for i = 1, #g do
      for j = i + 1, #g do
        pd = pd + 1
        if is_true(T, g[i], g[j]) then tpd = tpd + 1 end
      end
    end
  end
  local seen, lt, nl, ldup = {}, 0, 0, 0
  for _, l in ipairs(R.links) do
    local k = key(l[1], l[2])
    if seen[k] then ldup = ldup + 1
    else
      seen[k] = true
      nl = nl + 1
      if is_true(T, l[1], l[2]) then lt = lt + 1 end
      local ga, gb = R.group[R.rep[l[1]]], R.group[R.rep[l[2]]]
      for _, a in ipairs(ga) do
        for _, b in ipairs(gb) do
          pd = pd + 1
          if is_true(T, a, b) then tpd = tpd + 1 end
        end
      end
    end
  end
  e.direct = { predicted = pd, tp = tpd }
  e.links = { n = nl, tp = lt, repeated = ldup }
  -- identity groups alone
  local pi, tpi = 0, 0
  for id = 1, R.n do
    local p = R.rep[id]
    if p ~= id then pi = pi + 1; if is_true(T, id, p) then tpi = tpi + 1 end end
  end
  e.identity = { n = pi, tp = tpi }
  e.clusters = R.nclusters
  return e
end

local function pct(a, b) if b == 0 then return "   -  " end return ("%6.4f"):format(a / b) end

--- Full shingle counts from the truth run's docs.bin (index = id - 1).
local function shingle_counts(dir)
  local f = assert(io.open(dir .. "/docs.bin", "rb")); local s = f:read("a"); f:close()
  local n = (#s - 116 - 24) // 64
  local c = {}
  for i = 0, n - 1 do
    -- raw, canon, set fps, sketch_off, sketch_n, n_shingles, full_off, full_n
    local _, _, _, _, _, _, _, fn = string.unpack("<I8I8I8I8I4I4I8I4", s, 116 + 64 * i + 1)
    c[i + 1] = fn
  end
  return c
end

--- Missed true pairs by the smaller document's number of shingles.
local function misses_by_size(T, R, counts)
  local buckets = { { 25, "< 25" }, { 100, "25-99" }, { 1000, "100-999" }, { math.huge, ">= 1000" } }
  local tot, miss = {}, {}
  for i = 1, #buckets do tot[i], miss[i] = 0, 0 end
  local function add(a, b)
    local m = math.min(counts[a] or 0, counts[b] or 0)
    local i = 1
    while m >= buckets[i][1] do i = i + 1 end
    tot[i] = tot[i] + 1
    if not (R.cl[a] and R.cl[a] == R.cl[b]) then miss[i] = miss[i] + 1 end
  end
  for _, g in pairs(T.group) do
    for i = 1, #g do for j = i + 1, #g do add(g[i], g[j]) end end
  end
  for _, l in ipairs(T.links) do
    for _, a in ipairs(T.group[l[1]]) do for _, b in ipairs(T.group[l[2]]) do add(a, b) end end
  end
  local out = {}
  for i, b in ipairs(buckets) do
    out[#out + 1] = ("%s: %d of %d missed"):format(b[2], miss[i], tot[i])
  end
  return table.concat(out, "; ")
end

local function slurp(path) local f = assert(io.open(path, "rb")); local s = f:read("a"); f:close(); return s end
local function is_html(url) return url:lower():match("%.x?html?$") ~= nil end
local full = {}
--- Exact resemblance of two documents, each shingled as the pipeline does
-- (HTML by name), from their full shingle sets.
local function exact(ua, ub)
  local function set(u)
    local h = is_html(u)
    if not full[h] then
      full[h] = shingle.new{ w = 10, k = 64, sketch = "full", fold = false, punctuation = false, numbers = true,
        invalid = "latin1", html = h }
    end
    return assert(full[h]:sketch(slurp(u)))
  end
  return set(ua):estimate(set(ub)).resemblance
end

--- Cross-check the truth against shingle.exact: n random truth links (exact
-- resemblance as recorded), and n pairs some run linked but the truth did not
-- (must be below the threshold).
local function check_truth(T, others, n)
  math.randomseed(12345)
  local bad, done = 0, 0
  for _ = 1, math.min(n, #T.links) do
    local l = T.links[math.random(#T.links)]
    local ua, ub = T.url[l[1]], T.url[l[2]]
    local r = exact(ua, ub)
    if math.abs(r - l[4]) > 1e-3 or r < opt.threshold then
      bad = bad + 1
      io.stderr:write(("truth check: %s ~ %s: truth %.4f, shingle.exact %.4f\n"):format(ua, ub, l[4], r))
    end
    done = done + 1
  end
  local neg = {}
  for _, R in ipairs(others) do
    for _, l in ipairs(R.links) do
      if not is_true(T, l[1], l[2]) then neg[#neg + 1] = { l[1], l[2] } end
    end
  end
  local nneg, maxr = 0, 0
  for _ = 1, math.min(n, #neg) do
    local p = neg[math.random(#neg)]
    local ua, ub = T.url[p[1]], T.url[p[2]]
    local r = exact(ua, ub)
    maxr = math.max(maxr, r)
    if r >= opt.threshold then
      bad = bad + 1
      io.stderr:write(("truth check: %s ~ %s: not a truth pair, shingle.exact %.4f\n"):format(ua, ub, r))
    end
    nneg = nneg + 1
  end
  return ("truth check: %d truth links and %d pairs some run linked outside the truth (highest exact r %.4f) recomputed with shingle.exact: %d disagree"):format(
    done, nneg, maxr, bad)
end

-- machine
print(("# shingle accuracy, %s"):format(os.date("!%Y-%m-%d %H:%M UTC")))
print(("# machine: %s, %s cores, %s; %s"):format(sh("uname -m"), sh("nproc"),
  sh("grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'"), sh("grep MemTotal /proc/meminfo | awk '{print int($2/1048576) \" GB\"}'")))
print(("# corpus: %s: html %s files, text %s files, %s MB"):format(CORPUS,
  sh("find " .. sh_quote(CORPUS .. "/html") .. " -type f | wc -l"), sh("find " .. sh_quote(CORPUS .. "/text") .. " -type f | wc -l"),
  sh("du -sm --apparent-size " .. sh_quote(CORPUS) .. " | cut -f1")))
print(("# commit: %s"):format(os.getenv("SHINGLE_COMMIT") or
  sh("cd " .. sh_quote(here) .. " && (git rev-parse --short HEAD 2>/dev/null || echo unknown)")))

os.execute("mkdir -p " .. sh_quote(OUT))
local tt = run(TRUTH[1], TRUTH[2])
local T = load_truth(dirname(TRUTH[1]))
print(("# truth: %d documents, %d identical to another, %d representative pairs at exact r >= %g, %d document pairs; %.1f s"):format(
  T.n, T.dup or 0, T.ntl, opt.threshold, T.npairs, tt))
local counts = shingle_counts(dirname(TRUTH[1]))

print()
print("# P/R dir: pairs joined by one link or by identity; P/R clu: pairs in one cluster (transitive closure);")
print("# P link: links of pairs.jsonl; P id: identical-document pairs; sketch: phase 1 seconds; MB: run directory")
print(("%-26s %7s %7s %7s %6s %6s %6s %6s %6s %6s %6s %6s"):format("run", "wall s", "sketch", "MB", "clust",
  "P dir", "R dir", "P clu", "R clu", "links", "P link", "P id"))
local loaded, details = {}, {}
local function row(name, t, R)
  local e = evaluate(T, R)
  local ph = R.summary.phases or {}
  print(("%-26s %7.1f %7.1f %7d %6d %6s %6s %6s %6s %6d %6s %6s"):format(name, t or -1, ph.sketching or -1, R.mb, e.clusters,
    pct(e.direct.tp, e.direct.predicted), pct(e.direct.tp, T.npairs),
    pct(e.cluster.tp, e.cluster.predicted), pct(e.cluster.tp, T.npairs),
    e.links.n, pct(e.links.tp, e.links.n), pct(e.identity.tp, e.identity.n)))
  io.stdout:flush()
  details[#details + 1] = ("%s: cluster pairs %d (true %d), direct pairs %d (true %d), closure adds %d pairs (true %d), links %d (true %d, repeated %d), identity pairs %d (true %d); true pairs not in one cluster, by the smaller document's shingle count: %s"):format(
    name, e.cluster.predicted, e.cluster.tp, e.direct.predicted, e.direct.tp,
    e.cluster.predicted - e.direct.predicted, e.cluster.tp - e.direct.tp,
    e.links.n, e.links.tp, e.links.repeated, e.identity.n, e.identity.tp, misses_by_size(T, R, counts))
end
-- the truth against itself: direct pairs are exact, and the cluster
-- precision is the ceiling that transitive closure leaves to any method
row("truth (exact links)", tt, T)
for _, rc in ipairs(RUNS) do
  local t = run(rc[1], rc[2])
  local R = load(dirname(rc[1]))
  loaded[#loaded + 1] = R
  row(rc[1], t, R)
end
print()
for _, d in ipairs(details) do print(d) end
if opt.check and opt.check > 0 then
  print()
  print(check_truth(T, loaded, opt.check))
end
