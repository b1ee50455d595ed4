-- The model of `shingle cluster --mpi` at scale, from what bench/mpi.sh
-- measured (docs/benchmarks.md, "Across MPI ranks"; docs/scale-out.md,
-- "What the model predicts"):
--
--   lua5.4 bench/mpi_model.lua RESULTS SINGLE_OUT
--
-- RESULTS holds each run's summary.json and wall time (single, np1, np2,
-- tcp); SINGLE_OUT is the single process's output directory (docs.bin,
-- pairs.bin). What crosses the network, per document:
--   - records routed to the owner of a uniform key (<kind, fingerprint, doc>,
--     <shingle, doc>) and what rank 0 gathers leave their rank with
--     probability (N-1)/N: bytes per document measured at -np 2, times
--     (N-1)/N;
--   - a pair's <doc, doc, count> records: one per distinct rank among the
--     owners of the k sketch values the two documents share (merged there
--     first), unless that rank holds the first document: k is each pair's
--     count in pairs.bin, E = N (1 - (1 - 1/N)^k) (N-1)/N records;
--   - phase 4 fetches each document another rank's pairs name, once per rank
--     that needs it (its record and sketch; with exact verification the full
--     set of a candidate's documents): replayed exactly from pairs.bin, the
--     candidates (mpi.candidates) and docs.bin for N ranks holding equal
--     shares of ids. Replays of this corpus at 16, 64 and 256 ranks give the
--     bytes per document for larger corpora of the same make (how often a
--     document's partners fall on one rank depends on N, not on the size).
-- Time: D/N documents per rank at the seconds per document of each phase on
-- one core (-np 2, one sketching thread per rank), the exchange at BANDWIDTH
-- per rank, sort spills beyond --memory at DISK, and rank 0's serial part
-- (gathering at BANDWIDTH, clusters and report at their measured rate).
local cjson = require "cjson"

local dir = assert(arg[1], "usage: lua5.4 bench/mpi_model.lua RESULTS SINGLE_OUT")
local out = assert(arg[2], "usage: lua5.4 bench/mpi_model.lua RESULTS SINGLE_OUT")
local BW = tonumber(os.getenv("BANDWIDTH") or "1.25e9")
local DISK = tonumber(os.getenv("DISK") or "5e8")
local unpack = string.unpack

local function load(name)
  local f = io.open(dir .. "/" .. name .. ".summary.json")
  if not f then return nil end
  local s = cjson.decode(f:read("*a"))
  f:close()
  local w = io.open(dir .. "/" .. name .. ".wall")
  if w then
    local t = w:read("*l") or ""
    w:close()
    local h, m, sec = t:match("^(%d+):(%d+):([%d.]+)$")
    if not h then m, sec = t:match("^(%d+):([%d.]+)$") end
    s.wall = (tonumber(h) or 0) * 3600 + (tonumber(m) or 0) * 60 + (tonumber(sec) or 0)
  end
  return s
end

local single, np1, np2, tcp = load("single"), load("np1"), load("np2"), load("tcp")
assert(np2 and np2.mpi, dir .. "/np2.summary.json: run bench/mpi.sh first")

local function fmt_bytes(b)
  if b >= 1e12 then return ("%.2f TB"):format(b / 1e12) end
  if b >= 1e9 then return ("%.1f GB"):format(b / 1e9) end
  if b >= 1e6 then return ("%.1f MB"):format(b / 1e6) end
  return ("%.1f kB"):format(b / 1e3)
end

local function fmt_time(s)
  if s >= 3600 then return ("%.1f h"):format(s / 3600) end
  if s >= 60 then return ("%.1f min"):format(s / 60) end
  return ("%.1f s"):format(s)
end

-- ---- the single process's files -------------------------------------------------

-- The records of a record file (docs/formats.md): header 24 bytes, meta padded to 8.
local function records(path, size)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  local meta = unpack("<I4", s, 17)
  local first = 24 + (meta + 7) // 8 * 8
  local n = (#s - first - 24) // size
  return s, first, n
end

local docs_s, docs_at, D = records(out .. "/docs.bin", 64)
local sketch_n, full_n = {}, {}
for i = 0, D - 1 do
  local o = docs_at + 64 * i
  sketch_n[i], full_n[i] = unpack("<I4", docs_s, o + 33), unpack("<I4", docs_s, o + 49)
end
docs_s = nil
local pairs_s, pairs_at, P = records(out .. "/pairs.bin", 12)
local pa, pb, pk = {}, {}, {}
for i = 1, P do
  local o = pairs_at + 12 * (i - 1)
  pa[i], pb[i], pk[i] = unpack("<I4I4I4", pairs_s, o + 1)
end
pairs_s = nil
local run = cjson.decode(assert(io.open(out .. "/run.json")):read("*a")).config
local cand = ""
if run.verify then
  local mpi = require "shingle.mpi"
  cand = assert(mpi.candidates(out, { policy = run.policy, threshold = run.threshold, candidate = run.candidate }))
end
collectgarbage()

-- Bytes of phase 4's fetches and of the pair exchange, all ranks, for N ranks whose first ids are firsts[1..N].
local function replay(firsts)
  local N = #firsts
  local function owner(id)
    local lo, hi = 1, N
    while lo < hi do
      local mid = (lo + hi + 1) // 2
      if firsts[mid] <= id then lo = mid else hi = mid - 1 end
    end
    return lo
  end
  local seen_s, seen_f = {}, {}
  local sk, fu, pr = 0, 0, 0
  local q = 1 - 1 / N
  for i = 1, P do
    local a, b = pa[i], pb[i]
    local ra, rb = owner(a), owner(b)
    if ra ~= rb then
      local key = ra * 4294967296 + b
      if not seen_s[key] then
        seen_s[key] = true
        sk = sk + 4 + 8 + 64 + 8 * sketch_n[b] -- the request, the answer's header, record and sketch
      end
      if cand:byte(i) == 1 and not seen_f[key] then
        seen_f[key] = true
        fu = fu + 4 + 8 + 8 * full_n[b]
      end
    end
    pr = pr + 12 * N * (1 - q ^ pk[i]) * q
  end
  return { sketches = sk, ["full sets"] = fu, pairs = pr }
end

local function equal_firsts(N)
  local f = {}
  for r = 1, N do f[r] = (r - 1) * D // N end
  return f
end

-- ---- the distributed runs ----------------------------------------------------------

local function totals(s)
  local steps, phases = {}, {}
  for _, r in ipairs(s.mpi.per_rank) do
    for _, st in ipairs(r.steps or {}) do
      local x = steps[st.name] or { sent = 0 }
      x.sent = x.sent + st.sent
      steps[st.name] = x
    end
    for name, ph in pairs(r.phases or {}) do
      local x = phases[name] or { sent = 0, seconds = {}, docs = {} }
      x.sent = x.sent + ph.sent
      x.seconds[#x.seconds + 1] = ph.seconds
      x.docs[#x.docs + 1] = r.documents
      phases[name] = x
    end
  end
  return steps, phases
end

local N2 = np2.mpi.ranks
local steps, phases = totals(np2)
local scale2 = (N2 - 1) / N2
local linear = {} -- bytes per document at N -> infinity, for the exchanges that scale as (N-1)/N
for _, name in ipairs({ "fingerprints", "groups", "relations", "shingles" }) do
  linear[name] = (steps[name] and steps[name].sent or 0) / D / scale2
end
linear.gathering = (phases.gathering and phases.gathering.sent or 0) / D / scale2

local order = {
  { "fingerprints", "duplicate elimination: <kind, fingerprint, doc> to the fingerprint's owner (16 B, up to 3 per document)" },
  { "groups", "duplicate elimination: groups' links to rank 0, representatives back (8 B per copy)" },
  { "relations", "duplicate elimination: a remote representative's fingerprints" },
  { "shingles", "shingle merging: <shingle, doc> to the shingle's owner (12 B per sketch value)" },
  { "pairs", "pair merging: <doc, doc, count> to the first document's rank (12 B, merged per rank first)" },
  { "sketches", "phase 4: a remote document's record and sketch (64 B + 8 B per value), once per rank" },
  { "full sets", "phase 4, verification: a remote candidate document's full set (8 B per shingle), once per rank" },
  { "gathering", "gathering at rank 0: docs.bin (64 B), links.bin (32 B per link), docs.jsonl" },
}

-- bytes per document at N ranks
local replays = {}
local function per_doc(N)
  if not replays[N] then replays[N] = replay(equal_firsts(N)) end
  local r, sc, out_ = replays[N], (N - 1) / N, {}
  for _, o in ipairs(order) do
    out_[o[1]] = linear[o[1]] and linear[o[1]] * sc or r[o[1]] / D
  end
  return out_
end

print(("Corpus: %d documents, %d pairs sharing sketch values (%.2f per document), %d candidates of exact verification; "
  .. "%.1f sketch values and %.0f shingles per document."):format(D, P, P / D, select(2, cand:gsub("\1", "")),
  linear.shingles / 12, (function() local t = 0 for i = 0, D - 1 do t = t + full_n[i] end return t / D end)()))
print()
print("Bytes per document exchanged (sent by all ranks, per document of the corpus):")
print()
local cols = { 2, 8, 16, 64, 256 }
local hdr, sep = "| exchange |", "|---|"
for _, N in ipairs(cols) do hdr = hdr .. (" N = %d |"):format(N); sep = sep .. "---:|" end
print(hdr)
print(sep)
local sums = {}
for _, o in ipairs(order) do
  local line = "| " .. o[2] .. " |"
  for j, N in ipairs(cols) do
    local v = per_doc(N)[o[1]]
    sums[j] = (sums[j] or 0) + v
    line = line .. (" %.1f |"):format(v)
  end
  print(line)
end
local line = "| **all** |"
for j in ipairs(cols) do line = line .. (" **%.1f** |"):format(sums[j]) end
print(line)

-- the check against the runs: predicted with the runs' own shares of ids
local function check(s, label)
  if not s or not s.mpi then return end
  local st, ph = totals(s)
  local N = s.mpi.ranks
  local firsts = {}
  for r, x in ipairs(s.mpi.per_rank) do firsts[r] = x.first_id - 1 end
  local r = s.documents == D and replay(firsts) or nil
  local sc = (N - 1) / N
  print()
  print(("Check, %s: the bytes the model predicts against what the run sent (all ranks):"):format(label))
  print()
  print("| exchange | predicted | measured | measured / predicted |")
  print("|---|---:|---:|---:|")
  local pt, mt = 0, 0
  for _, o in ipairs(order) do
    local name = o[1]
    local pred = linear[name] and s.documents * linear[name] * sc or (r and r[name] or 0)
    local meas = name == "gathering" and (ph.gathering and ph.gathering.sent or 0) or (st[name] and st[name].sent or 0)
    pt, mt = pt + pred, mt + meas
    print(("| %s | %s | %s | %s |"):format(name, fmt_bytes(pred), fmt_bytes(meas), pred > 0 and ("%.3f"):format(meas / pred) or "-"))
  end
  print(("| **all** | %s | %s | %.3f |"):format(fmt_bytes(pt), fmt_bytes(mt), mt / pt))
end
check(np2, ("-np %d"):format(N2))
check(tcp, tcp and ("-np %d over TCP, oversubscribed"):format(tcp.mpi.ranks) or "")

-- ---- time ---------------------------------------------------------------------------

local function mean_rate(name)
  local p = phases[name]
  if not p then return 0 end
  local t, n = 0, 0
  for i, sec in ipairs(p.seconds) do t = t + sec; n = n + p.docs[i] end
  return n > 0 and t / n or 0
end
local cost = { sketching = mean_rate("sketching"), dedupe = mean_rate("duplicate_elimination"), pairs = mean_rate("pairs"),
  decide = mean_rate("cluster_formation") }
local root_finish = (np2.mpi.root_finish or 0) / D
local report = (np2.phases.report or 0) / D
print()
print(("Seconds per document on one core (-np %d, one sketching thread per rank; the exchange over shared memory "
  .. "included): sketching %.1f µs, duplicate elimination %.2f µs, phases 2-3 %.2f µs, phase 4 %.2f µs; rank 0 alone: "
  .. "clusters %.2f µs, report %.2f µs."):format(N2, cost.sketching * 1e6, cost.dedupe * 1e6, cost.pairs * 1e6,
  cost.decide * 1e6, root_finish * 1e6, report * 1e6))

local MEM = np2.mpi.memory_per_rank or 2 ^ 30
local function model(Dm, Nm)
  local pd = per_doc(Nm)
  local per_rank = Dm / Nm
  local compute = per_rank * (cost.sketching + cost.dedupe + cost.pairs + cost.decide)
  local xbytes = 0
  for _, o in ipairs(order) do if o[1] ~= "gathering" then xbytes = xbytes + pd[o[1]] * Dm / Nm end end
  local exchange = xbytes / BW
  -- the sorters of a rank: its <shingle, doc> records and its pair records, spilled once when over half the budget
  local sorted = per_rank * (linear.shingles + 12 * P / D * 2)
  local spill = sorted > MEM / 2 and 2 * sorted / DISK or 0
  local gather = Dm * pd.gathering / BW
  local root = Dm * (root_finish + report)
  return { compute = compute, exchange = exchange, xbytes = xbytes, spill = spill, gather = gather, root = root,
    total = compute + exchange + spill + gather + root, root_mem = Dm * 25 }
end

print()
print(("Model: ranks of one core, %s/s per rank's link (%.0f Gb/s), local scratch at %s/s, --memory %s per rank."):format(
  fmt_bytes(BW), BW * 8 / 1e9, fmt_bytes(DISK), fmt_bytes(MEM)))
print()
print("| documents | ranks | compute per rank | exchange per rank | sort spills | rank 0: gathering | rank 0: clusters, report | **total** | rank 0 memory for the clusters |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for _, Dm in ipairs({ 1e8, 1e9 }) do
  for _, Nm in ipairs({ 16, 64, 256 }) do
    local m = model(Dm, Nm)
    print(("| %s | %d | %s | %s in %s | %s | %s | %s | **%s** | %s |"):format(Dm == 1e8 and "100 M" or "1 B", Nm,
      fmt_time(m.compute), fmt_bytes(m.xbytes), fmt_time(m.exchange), fmt_time(m.spill), fmt_time(m.gather), fmt_time(m.root),
      fmt_time(m.total), fmt_bytes(m.root_mem)))
  end
end

print()
print("| run | wall | sketching (slowest rank) | the rest | peak RSS per rank |")
print("|---|---:|---:|---:|---|")
for _, r in ipairs({ { "single process", single }, { "-np 1", np1 }, { "-np 2", np2 }, { "TCP", tcp } }) do
  local s = r[2]
  if s then
    local rss = {}
    for _, x in ipairs(s.mpi and s.mpi.per_rank or {}) do rss[#rss + 1] = ("%.0f MiB"):format((x.peak_rss or 0) / 2 ^ 20) end
    local rest = 0
    for k, v in pairs(s.phases or {}) do if k ~= "sketching" then rest = rest + v end end
    print(("| %s%s | %s | %s | %s | %s |"):format(r[1], s.mpi and (" (%d ranks)"):format(s.mpi.ranks) or "", fmt_time(s.wall or 0),
      fmt_time(s.phases.sketching or 0), fmt_time(rest), #rss > 0 and table.concat(rss, ", ") or "see /usr/bin/time above"))
  end
end
