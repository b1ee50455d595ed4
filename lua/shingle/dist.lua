--- `shingle cluster --mpi`: the clustering pipeline across the ranks of an
-- MPI job, with the same result as one process (docs/scale-out.md).
--
-- Broder et al. ran their 30 million documents by "divide, compute, merge"
-- and marked sketching, shingle merging and ID-ID merging as the phases that
-- parallelize ("Status"). Here rank 0 splits the inputs into contiguous
-- shares of about equal bytes (files of directories and lists whole, JSON
-- Lines files cut at line boundaries, WARC files whole), every rank sketches
-- its share with the single process's phase 1, and the engine's distributed
-- steps (shingle.mpi over core/dist.h) exchange fingerprints, <shingle, doc>
-- and <doc, doc, count> records so that each rank owns a key range and sorts
-- it within its own --memory in its own temp directory. Document ids are the
-- global input order (each rank's first id is the count of the documents
-- before its share), so every id, link and cluster equals a single process's.
-- Rank 0 gathers docs.bin, links.bin and docs.jsonl, forms the clusters and
-- writes the report through shingle.pipeline, the single process's code.
--
-- A rank that fails prints what failed, naming itself, and ends the job
-- (MPI_Abort); a rank killed from outside ends it through mpirun. Nothing in
-- the output directory looks finished until rank 0 writes summary.json, last.
local core = require "shingle.core"
local input = require "shingle.input"
local pipeline = require "shingle.pipeline"
local util = require "shingle.util"

local M = {}

-- ---- small helpers ----------------------------------------------------------

local function copy(t)
  local o = {}
  for k, v in pairs(t) do o[k] = v end
  return o
end

local function rmtree(dir)
  local lfs = require "lfs"
  if lfs.symlinkattributes(dir, "mode") ~= "directory" then os.remove(dir) return end
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then rmtree(dir .. "/" .. name) end
  end
  lfs.rmdir(dir)
end

local function mib(b) return b / 1048576 end

-- Peak resident set of this process (Linux), in bytes; nil elsewhere.
local function peak_rss()
  local f = io.open("/proc/self/status", "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  local kb = s:match("VmHWM:%s*(%d+)%s*kB")
  return kb and tonumber(kb) * 1024
end

-- ---- the plan: rank 0 splits the inputs -------------------------------------

-- Whether a file is gzip or zstd (by its first bytes, whatever its name).
local function compressed(path)
  local z = core.zopen(path)
  if not z then return false end -- unreadable: its reader says so
  z:peek(4)
  local kind = z:kind()
  z:close()
  return kind ~= "plain"
end

--- The documents of the inputs as units in input order: { kind = "path",
-- path, size } (one file, one document), { kind = "jsonl" | "warc", path, size }.
-- Inputs that cannot be read are the reader's problems, as in one process.
function M.units(inputs, cfg, reader)
  local lfs = require "lfs"
  local units = {}
  for _, spec in ipairs(inputs) do
    if type(spec) ~= "string" then
      return nil, "a distributed run reads its inputs from paths (files, directories, lists), not from Lua functions"
    end
    if spec == "-" then
      return nil, "standard input cannot be split across MPI ranks: save it to a file and give its path"
    end
    local src, serr = input.source(spec, { format = cfg.format, fields = cfg.fields, html = cfg.html })
    if not src then
      local ok, err = reader:problem("inputs", serr)
      if not ok then return nil, err end
    elseif src.paths then
      for _, p in ipairs(src.paths) do
        units[#units + 1] = { kind = "path", path = p, size = lfs.attributes(p, "size") or 0 }
      end
    else
      local u = { kind = src.format, path = spec, size = lfs.attributes(spec, "size") or 0 }
      -- a compressed JSON Lines file cannot be cut at byte offsets: it goes whole to one rank
      if u.kind == "jsonl" then u.compressed = compressed(spec) end
      units[#units + 1] = u
    end
  end
  collectgarbage() -- the sources opened to check the inputs close their files
  return units
end

-- Each document costs something even when empty: a file weighs its bytes and this.
local PER_FILE = 512

--- Split units into n contiguous shares of about equal weight: shares[r] is a
-- list of pieces { kind = "paths", paths } | { kind = "jsonl", path, start,
-- stop, file, whole } | { kind = "warc", path }. A JSON Lines file is cut at
-- the line boundaries nearest the share boundaries (mpi.line_start), unless
-- it is compressed (u.compressed); other units go whole to the share their
-- middle falls in.
function M.split(units, n, line_start)
  local total = 0
  for _, u in ipairs(units) do total = total + (u.kind == "jsonl" and u.size or u.size + PER_FILE) end
  local shares = {}
  for r = 1, n do shares[r] = {} end
  local function add(r, piece)
    local s = shares[r]
    local last = s[#s]
    if piece.kind == "path" then
      if last and last.kind == "paths" then last.paths[#last.paths + 1] = piece.path
      else s[#s + 1] = { kind = "paths", paths = { piece.path } } end
    else
      s[#s + 1] = piece
    end
  end
  local function rank_at(x) -- the share that weight position x falls in
    if total == 0 then return 1 end
    return math.min(n, math.floor(x * n / total) + 1)
  end
  local at, files = 0, 0
  for _, u in ipairs(units) do
    if u.kind == "jsonl" and u.compressed then
      files = files + 1
      add(rank_at(at + u.size / 2), { kind = "jsonl", path = u.path, start = 0, stop = u.size, file = files, whole = true })
      at = at + u.size
    elseif u.kind == "jsonl" then
      files = files + 1
      -- the share boundaries inside the file, moved to line starts
      local cuts = { 0 }
      for k = 1, n - 1 do
        local b = total * k / n
        if b > at and b < at + u.size then
          local pos, err = line_start(u.path, math.floor(b - at))
          if not pos then return nil, err end
          if pos > cuts[#cuts] then cuts[#cuts + 1] = pos end
        end
      end
      cuts[#cuts + 1] = u.size
      for i = 1, #cuts - 1 do
        if cuts[i + 1] > cuts[i] or (u.size == 0 and i == 1) then
          add(rank_at(at + cuts[i]), { kind = "jsonl", path = u.path, start = cuts[i], stop = cuts[i + 1], file = files,
            whole = cuts[i] == 0 and cuts[i + 1] == u.size })
        end
      end
      at = at + u.size
    else
      local w = u.kind == "path" and u.size + PER_FILE or u.size
      add(rank_at(at + w / 2), u.kind == "path" and u or { kind = u.kind, path = u.path })
      at = at + w
    end
  end
  return shares
end

-- ---- a run ------------------------------------------------------------------

local Run = {}
Run.__index = Run

-- The steps' bytes and times of this rank so far, from the dist handle.
function Run:take_steps(phase)
  if not self.d then return end
  local steps, n = self.d:steps(self.seen_steps)
  self.seen_steps = n
  for _, s in ipairs(steps) do
    s.phase = phase
    self.steps[#self.steps + 1] = s
  end
end

--- Run fn as phase `name` (one of pipeline.phase_names, or an MPI-only one):
-- its wall time on this rank and the bytes this rank sent and received; rank
-- 0 logs the phase with every rank's figures. Returns fn's results, or
-- raises its error (the caller ends the job).
function Run:phase(name, fn)
  local s0, r0 = self.world:counters()
  local t0 = core.now()
  local a, b = fn()
  if a == nil then error(b, 0) end
  -- the ranks meet at the end of every phase, waiting without polling at full
  -- speed (and within --mpi-timeout): the long waits are here, for the slowest
  -- rank; a phase's time is thus the slowest rank's
  local ok, berr = self.world:barrier()
  if not ok then error(berr, 0) end
  local s1, r1 = self.world:counters()
  local me = { seconds = core.now() - t0, sent = s1 - s0, received = r1 - r0 }
  self:take_steps(name)
  self.mine[name] = me
  -- every rank's figures at rank 0 (the gather's own bytes are not counted above)
  local got = self.world:gather(("%.6f %d %d"):format(me.seconds, me.sent, me.received), 0)
  if self.rank == 0 and type(got) == "table" then
    local per = {}
    local wall = 0
    for r, line in ipairs(got) do
      local sec, sent, recv = line:match("^(%S+) (%d+) (%d+)$")
      per[r] = { seconds = tonumber(sec), sent = tonumber(sent), received = tonumber(recv) }
      if per[r].seconds > wall then wall = per[r].seconds end
    end
    self.per_phase[name] = per
    self.order[#self.order + 1] = name
    self.times[name] = (self.times[name] or 0) + wall
    self:log_phase(name, per, wall)
  end
  return a, b
end

local function spread(values)
  local n = #values
  if n <= 8 then
    local t = {}
    for i, v in ipairs(values) do t[i] = ("%.1f"):format(v) end
    return table.concat(t, " ")
  end
  local s = copy(values)
  table.sort(s)
  return ("min %.1f, median %.1f, max %.1f"):format(s[1], s[math.floor((n + 1) / 2)], s[n])
end

function Run:log_phase(name, per, wall)
  if self.cfg.quiet then return end
  local sent, recv, tsent = {}, {}, 0
  for r, p in ipairs(per) do sent[r] = mib(p.sent); recv[r] = mib(p.received); tsent = tsent + p.sent end
  if tsent > 0 then
    io.stderr:write(("shingle: %s: %.2f s; MiB sent by rank: %s; received: %s\n"):format(
      name:gsub("_", " "), wall, spread(sent), spread(recv)))
  else
    io.stderr:write(("shingle: %s: %.2f s\n"):format(name:gsub("_", " "), wall))
  end
end

-- This rank's share of the inputs with the line number of every JSON Lines
-- piece that does not start its file: from the newlines of the pieces
-- before it, counted by the ranks that hold them.
function Run:number_lines(share)
  local mpi = self.mpi
  local cfg = self.cfg
  -- newlines in the pieces that are not whole files, for the lines after them
  local counts = {}
  for _, piece in ipairs(share) do
    if piece.kind == "jsonl" and not piece.whole then
      local n, err = mpi.count_lines(piece.path, piece.start, piece.stop)
      if not n then error(err, 0) end
      counts[#counts + 1] = ("%d %d %d"):format(piece.file, piece.start, n)
    end
  end
  local all = self.world:gather(table.concat(counts, "\n"), 0)
  local starts = "" -- "file start line" of every piece that does not start a file
  if self.rank == 0 then
    local by_file = {}
    for _, text in ipairs(all) do
      for f, s, n in text:gmatch("(%d+) (%d+) (%d+)") do
        f = tonumber(f)
        by_file[f] = by_file[f] or {}
        table.insert(by_file[f], { start = tonumber(s), n = tonumber(n) })
      end
    end
    local lines = {}
    for f, pieces in pairs(by_file) do
      table.sort(pieces, function(a, b) return a.start < b.start end)
      local line = 1
      for _, p in ipairs(pieces) do
        lines[#lines + 1] = ("%d %d %d"):format(f, p.start, line)
        line = line + p.n
      end
    end
    starts = table.concat(lines, "\n")
  end
  starts = self.world:bcast(self.rank == 0 and starts or nil, 0)
  local line_of = {}
  local function key(f, s) return ("%d:%d"):format(f, s) end -- numbers from JSON may be floats
  for f, s, l in starts:gmatch("(%d+) (%d+) (%d+)") do line_of[key(tonumber(f), tonumber(s))] = tonumber(l) end
  for _, piece in ipairs(share) do
    if piece.kind == "jsonl" and not piece.whole then
      piece.line = line_of[key(piece.file, piece.start)]
      if not piece.line then error(("no line number for %s from byte %d"):format(piece.path, piece.start), 0) end
    end
  end
  return share
end

-- The source of one piece of a share (input.reader's `source` hook).
local function piece_source(piece, cfg)
  if piece.kind == "paths" then return input.paths_source(piece.paths, { html = cfg.html }) end
  local opts = { format = piece.kind, fields = cfg.fields, html = cfg.html, max_bytes = cfg.max_bytes }
  if piece.kind == "jsonl" and not piece.whole then opts.start, opts.stop, opts.line = piece.start, piece.stop, piece.line end
  return input.source(piece.path, opts)
end

-- The end of this rank's directory.
local function remove_work(self)
  if not self.work then return end
  self.mpi.remove_on_signal(nil)
  pcall(rmtree, self.work)
  os.remove(self.work .. ".lock")
  self.work = nil
end

-- Rewrite docs.jsonl with global ids (phase 1 numbered this rank's documents
-- from 1): the key "id" is the only place `"id":` occurs in a line, since
-- cjson escapes every quote inside strings.
local function renumber(path, offset)
  if offset == 0 then return true end
  return util.atomic_write(path, function(out)
    local f = assert(io.open(path, "rb"))
    for line in f:lines() do
      local n
      line, n = line:gsub('"id":(%d+)', function(id) return '"id":' .. (tonumber(id) + offset) end, 1)
      if n ~= 1 then f:close() error(("%s: a line without its id"):format(path), 0) end
      out:write(line, "\n")
    end
    f:close()
  end)
end

local function round_bytes(memory)
  local r = math.floor(memory / 16)
  return math.max(1024 * 1024, math.min(64 * 1024 * 1024, r))
end

--- The phases on every rank; on rank 0 the output. Raises on failure (the
-- caller ends the job).
function Run:go(inputs)
  local cfg, world, mpi = self.cfg, self.world, self.mpi
  local rank, size = self.rank, self.size
  -- rank 0: the output directory, and the plan
  local shares_json = {}
  local plan_reader = input.reader{ strict = cfg.strict, warn = function(msg) self.log("shingle: " .. msg) end }
  local out -- rank 0 writes the run beside the output directory; it replaces it whole at the end
  if rank == 0 then
    local o, oerr = util.output(cfg.outdir, { kind = "cluster run", marker = "run.json",
      log = function(msg) self.log("shingle: " .. msg) end })
    if not o then error(oerr, 0) end
    self.output = o
    out = o.dir
    local units, uerr = M.units(inputs, cfg, plan_reader)
    if not units then error(uerr, 0) end
    local shares, serr = M.split(units, size, mpi.line_start)
    if not shares then error(serr, 0) end
    local cjson = require "cjson"
    for r = 1, size do shares_json[r] = cjson.encode(shares[r]) end
  end
  local got = assert(world:alltoall(shares_json))
  local share = require("cjson").decode(got[1])
  share = self:number_lines(share)
  -- this rank's own directory, for its phase 1 and its sorts
  local base = cfg.temp_dir or os.getenv("TMPDIR") or "/tmp"
  if base:sub(1, 1) ~= "/" then base = require("lfs").currentdir() .. "/" .. base end
  -- what ranks killed outright (SIGKILL, a node lost) left there
  mpi.sweep(base, "shingle-rank")
  local work, werr = mpi.workdir(base, "shingle-rank" .. rank)
  if not work then error(werr, 0) end
  self.work = work
  mpi.remove_on_signal(work)
  -- phase 1: the single process's, over this rank's share
  local wc = copy(cfg)
  wc.outdir, wc.temp_dir, wc.resume, wc.mpi_collect, wc.mpi_timeout = work, work, false, nil, nil
  wc.quiet = cfg.quiet or rank ~= 0      -- progress bars on rank 0
  wc.log = self.log                      -- warnings from every rank
  wc.threads = cfg.threads or math.max(1, math.floor(core.cpus() / world:local_size()))
  local p = pipeline.new(wc)
  p.store_full = true -- a rank answers for its documents' full sets from shingles.bin (core/dist.c)
  local st = self:phase("sketching", function()
    return p:sketch(share, { source = function(piece) return piece_source(piece, cfg) end })
  end)
  local counts = assert(world:allreduce({ st.sketched, st.skipped + plan_reader:total_skipped() }, "sum"))
  local d, derr = world:dist(work, { memory = math.max(cfg.memory - 4 * self.round, 1024 * 1024), temp_dir = work })
  if not d then error(derr, 0) end
  self.d = d
  local info = d:info()
  assert(renumber(work .. "/docs.jsonl", info.first - 1))
  local stats = { documents = info.total, sketched = counts[1], skipped = counts[2] }
  stats.identical = self:phase("duplicate_elimination", function() return d:dedupe() end)
  local bar = rank == 0 and not cfg.quiet and require("shingle.progress") or nil
  local function progress_fn()
    if not bar then return nil end
    local bars = {}
    return function(step, done, total)
      local b = bars[step]
      if not b then b = bar.new(step, total > 0 and total or nil, "records", false); bars[step] = b end
      b:update(done, total > 0 and total or nil)
    end
  end
  -- greedy clustering is sequential by definition: it decides at rank 0 from the whole run's files
  local in_one = cfg.method == "greedy"
  local dc = p:decision_options()
  if not in_one then
    local ps = self:phase("pairs", function()
      if cfg.method == "shingles" then return d:pairs{ max_df = cfg.max_df, progress = progress_fn() } end
      return d:keys{ method = cfg.method, bands = dc.bands, rows = dc.rows, meta = dc.meta, meta_w = dc.meta_w,
        check = dc.check, progress = progress_fn() }
    end)
    local tmax = assert(world:allreduce({ math.floor(ps.t_merge * 1e6), math.floor(ps.t_form * 1e6),
      math.floor(ps.t_pairmerge * 1e6) }, "max"))
    ps.t_merge, ps.t_form, ps.t_pairmerge = tmax[1] / 1e6, tmax[2] / 1e6, tmax[3] / 1e6
    stats.pairs = ps
    -- the three steps of phases 2-3, as one process reports them (the slowest rank's)
    self.times.pairs = nil
    self.times.shingle_merging, self.times.pair_formation, self.times.pair_merging = ps.t_merge, ps.t_form, ps.t_pairmerge
    if cfg.method == "shingles" or dc.check then
      dc.progress = progress_fn()
      stats.clusters = self:phase("cluster_formation", function() return d:decide(dc) end)
    else
      stats.clusters = { pairs = 0, candidates = 0, linked = 0 } -- the joins are counted at rank 0
    end
  end
  -- rank 0 gathers the run's documents, links and URLs
  local gather_all = in_one or cfg.mpi_collect
  self:phase("gathering", function()
    local ok, err = d:collect(0, out, { links = not in_one, sketches = gather_all, full = gather_all and cfg.verify,
      sigs = gather_all, pairs = gather_all and cfg.method == "shingles" })
    if not ok then return nil, err end
    local bytes, gerr = world:gather_file(work .. "/docs.jsonl", rank == 0 and out .. "/docs.jsonl" or nil, 0)
    if not bytes then return nil, gerr end
    return true
  end)
  -- every rank's figures, for the tables
  local cjson = require "cjson"
  local mine = cjson.encode({ host = world:host(), documents = info.documents, first = info.first,
    peak_rss = peak_rss(), phases = self.mine, steps = self.steps })
  local all = world:gather(mine, 0)
  if rank == 0 then
    self.ranks = {}
    for r, s in ipairs(all) do self.ranks[r] = cjson.decode(s) end
    self:finish(stats, out)
    -- the run replaces the output directory as a whole, after everything is written
    local ok, cerr = self.output:commit()
    self.output = nil
    if not ok then error(cerr, 0) end
  end
  d:close()
  self.d = nil
  remove_work(self)
  -- the other ranks wait here, without polling at full speed, while rank 0 reports
  local ok, berr = world:barrier()
  if not ok then error(berr, 0) end
  return self.summary or true
end

-- docs.jsonl's size, lines and CRC-32, as phase 1 records them for the check
-- on reading it back (pipeline:documents).
local function jsonl_digest(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, ("cannot read %s: %s"):format(path, err) end
  local d = { bytes = 0, lines = 0, crc32 = 0 }
  while true do
    local b = f:read(1048576)
    if not b then break end
    d.bytes, d.lines, d.crc32 = d.bytes + #b, d.lines + select(2, b:gsub("\n", "")), core.crc32(b, d.crc32)
  end
  f:close()
  return d
end

--- Rank 0: the clusters and the report, through the single process's code.
function Run:finish(stats, out)
  local cfg = self.cfg
  local rc = copy(cfg)
  rc.log = self.log
  rc.mpi_collect, rc.mpi_timeout = nil, nil
  local p = pipeline.new(rc)
  p.dir = out -- the staging directory beside cfg.outdir (as pipeline:staged does)
  p.stats = { documents = stats.documents, sketched = stats.sketched, skipped = stats.skipped, identical = stats.identical,
    pairs = stats.pairs }
  p.times = self.times
  if cfg.method ~= "greedy" then
    local t0 = core.now()
    local cl, err = self.d:finish(out)
    if not cl then error(err, 0) end
    if cfg.method ~= "shingles" and not cfg.check then stats.clusters.linked = cl.joined end
    cl.joined = nil
    for k, v in pairs(cl) do stats.clusters[k] = v end
    p.stats.clusters = stats.clusters
    self.root_finish = core.now() - t0
    self.times.cluster_formation = (self.times.cluster_formation or 0) + self.root_finish
  else
    -- the whole run's files are here: phase 4 (or its alternative) as in one process
    local ok, err = p:decide()
    if not ok then error(err, 0) end
  end
  -- what docs.jsonl must be when it is read back, as phase 1 of one process records it
  local dj, derr = jsonl_digest(out .. "/docs.jsonl")
  if not dj then error(derr, 0) end
  p.stats.docs_jsonl = dj
  p.mpi = self:mpi_summary()
  local ok, err = p:save_config()
  if not ok then error(err, 0) end
  local sum, rerr = p:report()
  if not sum then error(rerr, 0) end
  self.pipeline = p
  self.summary = sum
end

--- The MPI-only part of summary.json: ranks, and per rank its documents,
-- peak RSS and, per phase, its seconds and the bytes it sent and received.
function Run:mpi_summary()
  local ranks = {}
  for r, x in ipairs(self.ranks) do
    ranks[r] = { rank = r - 1, host = x.host, documents = x.documents, first_id = x.first, peak_rss = x.peak_rss,
      phases = x.phases, steps = x.steps }
  end
  return { ranks = self.size, library = self.world:library(), memory_per_rank = self.cfg.memory,
    round_bytes = self.round, root_finish = self.root_finish, per_rank = ranks }
end

-- The bytes of each row of the phase table, by rank: the phases measured
-- whole, and phases 2-3 split by their steps (the <shingle, doc> exchange is
-- shingle merging, as are the alternatives' keys; the <doc, doc, count> exchange
-- and the alternatives' joins pair merging).
local step_row = { shingles = "shingle_merging", keys = "shingle_merging", pairs = "pair_merging", joins = "pair_merging" }

function Run:row_bytes()
  local rows = {}
  local function add(row, r, sent, recv)
    rows[row] = rows[row] or {}
    local x = rows[row][r] or { sent = 0, received = 0 }
    x.sent, x.received = x.sent + sent, x.received + recv
    rows[row][r] = x
  end
  for r, x in ipairs(self.ranks or {}) do
    for name, ph in pairs(x.phases or {}) do
      if name ~= "pairs" then add(name, r, ph.sent, ph.received) end
    end
    for _, st in ipairs(x.steps or {}) do
      if st.phase == "pairs" then add(step_row[st.name] or "pair_formation", r, st.sent, st.received) end
    end
  end
  return rows
end

--- The phase table with the exchange: each phase's time (the slowest
-- rank's), the bytes all ranks sent, the most one rank sent and received;
-- then a line per rank.
function Run:phase_table()
  local names = copy(pipeline.phase_names)
  table.insert(names, #names, "gathering")
  local rows = self:row_bytes()
  local lines = { ("%-24s %10s %12s %14s %14s"):format("phase", "seconds", "sent MiB", "rank max sent", "rank max recv") }
  local total = 0
  for _, name in ipairs(names) do
    local t = self.times[name]
    if t then
      local sent, smax, rmax = 0, 0, 0
      for _, x in pairs(rows[name] or {}) do
        sent = sent + x.sent
        smax = math.max(smax, x.sent)
        rmax = math.max(rmax, x.received)
      end
      lines[#lines + 1] = ("%-24s %10.3f %12.1f %14.1f %14.1f"):format((name:gsub("_", " ")), t, mib(sent), mib(smax), mib(rmax))
      total = total + t
    end
  end
  lines[#lines + 1] = ("%-24s %10.3f"):format("total", total)
  lines[#lines + 1] = ""
  lines[#lines + 1] = ("%-6s %-16s %12s %10s %12s %12s %12s"):format("rank", "host", "documents", "sketch s", "sent MiB",
    "recv MiB", "peak RSS MiB")
  for r, x in ipairs(self.ranks or {}) do
    local sent, recv = 0, 0
    for _, ph in pairs(x.phases or {}) do sent = sent + ph.sent; recv = recv + ph.received end
    lines[#lines + 1] = ("%-6d %-16s %12d %10.2f %12.1f %12.1f %12.0f"):format(r - 1, tostring(x.host):sub(1, 16), x.documents,
      x.phases and x.phases.sketching and x.phases.sketching.seconds or 0, mib(sent), mib(recv), mib(x.peak_rss or 0))
  end
  return table.concat(lines, "\n")
end

--- Run the pipeline across the ranks of the MPI job this process is part
-- of. cfg as pipeline.new's (outdir required), plus mpi_collect (also gather
-- sketches.bin, shingles.bin, sigs.bin and pairs.bin into outdir, so that
-- recluster can work from it) and mpi_timeout (seconds one collective call
-- may wait for the other ranks before the job ends; nil: no limit). Every rank calls it with the same arguments.
-- Returns, on rank 0, the summary and the run (for its phase_table); on other
-- ranks true. A failure on any rank ends the whole job (MPI_Abort) after
-- that rank reports it: this function does not return then.
function M.run(cfg, inputs)
  local ok, mpi = pcall(require, "shingle.mpi")
  if not ok then
    return nil, "this shingle was built without MPI: install Open MPI (Debian: openmpi-bin libopenmpi-dev) and run "
      .. "scripts/setup.sh again (" .. tostring(mpi):match("^[^\n]*") .. ")"
  end
  local optional = copy(pipeline.optional)
  optional.mpi_collect = true
  optional.mpi_timeout = true
  local c = util.merge_options(pipeline.defaults, optional, cfg, "pipeline", 2)
  local round = round_bytes(c.memory)
  local world, werr = mpi.world({ round_bytes = round })
  if not world then return nil, werr end
  if c.mpi_timeout then world:set_timeout(c.mpi_timeout) end
  local self = setmetatable({ cfg = c, mpi = mpi, world = world, rank = world:rank(), size = world:size(), round = round,
    mine = {}, per_phase = {}, order = {}, times = {}, steps = {}, seen_steps = 0 }, Run)
  local quiet = c.quiet
  self.log = c.log or function(msg) if not quiet then io.stderr:write(msg, "\n") end end
  local rok, res = xpcall(function() return self:go(inputs) end, debug.traceback)
  if not rok then
    -- name the rank and the cause, clean up what this rank made, end every rank
    local msg = tostring(res):gsub("\nstack traceback:.*", "")
    if self.output then msg = util.unstage(msg, self.output) end -- OUT as the user named it, not its staging
    io.stderr:write(("shingle: rank %d of %d (%s) failed: %s\n"):format(self.rank, self.size, world:host(), msg))
    io.stderr:flush()
    if self.output then
      -- rank 0: the output directory stays as it was (the earlier run, or nothing)
      self.output:abort()
      self.output = nil
    end
    remove_work(self)
    world:abort(1)
  end
  world:finalize()
  if self.rank == 0 then return res, self end
  return true
end

return M
