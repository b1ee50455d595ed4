--- The clustering pipeline of "Syntactic Clustering of the Web" as Lua steps,
-- each one bulk call into C (core/cluster.h): a script can call them one by
-- one, replace one, or add its own. The state of a run lives in its output
-- directory, so later steps (and `shingle recluster`) start from the files.
--
--   local p = pipeline.new(cfg)          -- cfg: see pipeline.defaults
--   p:sketch(inputs)                     -- phase 1: docs.bin, sketches.bin, docs.jsonl
--   p:dedupe()                           -- identical documents
--   p:pairs()                            -- phases 2-3: pairs.bin
--   p:decide()                           -- phase 4: links.bin, clusters.bin
--   p:report()                           -- clusters.jsonl, pairs.jsonl, summary.json
local shingle = require "shingle"
local core = require "shingle.core"
local input = require "shingle.input"
local progress = require "shingle.progress"
local util = require "shingle.util"
local writer = require "shingle.writer"

local M = {}
M.__index = M

M.defaults = {
  -- shingling and sketches: the paper's clustering run used w = 10 and MOD_25
  w = 10, sketch = "mod", m = 25, floor = 20, s = 200, k = 64, option = "B", seed = nil,
  fold = false, punctuation = false, numbers = true, invalid = "latin1",
  -- resources
  threads = nil, memory = 1024 ^ 3, temp_dir = nil, batch = 512, max_bytes = 64 * 1024 ^ 2,
  max_shingles = 16 * 1024 ^ 2, -- shingle.sketcher.MAX_SHINGLES
  -- phase 3 and 4
  max_df = 1000, method = "shingles", policy = "resemblance", threshold = 0.5,
  -- exact verification costs little (docs/accuracy.md): on by default, with
  -- candidates gathered at threshold - 0.2 so that noisy estimates lose no pair
  verify = true, candidate = nil,
  -- with verify: every full set kept by phase 1 (else only those of documents
  -- that cannot be read again; phase 4 shingles the candidates again)
  keep_sets = false,
  -- alternatives
  bands = nil, rows = nil, meta = false, meta_w = 4, check = true,
  -- inputs and reporting
  format = "auto", fields = nil, html = nil, strict = false, quiet = false, log = nil,
  mail = true,    -- email messages and mbox archives recognised by content (core/mail.h)
  resume = false, -- skip phase 1 when a finished one over the same inputs and options is there
  -- clusters and pairs also as clusters.csv/pairs.csv (csv, tsv or json;
  -- the .jsonl files are always written: recluster, report and dedup read them)
  output_format = "jsonl",
  -- an extractor or a rule set's Lua step that raises on a document: stop
  -- (the run fails naming it) or skip (the document is skipped and counted)
  on_error = "stop",
}

local methods = { shingles = true, supershingle = true, lsh = true, greedy = true }
-- options whose default is nil (shingle.dist takes the same)
local optional = { seed = true, threads = true, temp_dir = true, candidate = true, bands = true, rows = true,
  fields = true, html = true, log = true, outdir = true, canon = true, extractor = true }

M.optional = optional

local output_formats = { jsonl = true, json = true, csv = true, tsv = true }

function M.new(cfg)
  local self = setmetatable({}, M)
  local c = util.merge_options(M.defaults, optional, cfg, "pipeline", 3)
  if not output_formats[c.output_format] then
    error(("option 'output_format' is %s; use jsonl, json, csv or tsv"):format(tostring(c.output_format)), 2)
  end
  if not methods[c.method] then
    error(("unknown method '%s'; use shingles, supershingle, lsh or greedy"):format(tostring(c.method)), 2)
  end
  c.threads = c.threads or core.cpus()
  -- values derived from others (the candidate bound from the threshold, the
  -- LSH shape from the threshold) are not saved in run.json: recluster at
  -- another threshold derives them again, as a fresh run would
  self.derived = {}
  if c.candidate == nil then
    self.derived.candidate = true
    -- (rounded: 0.8 - 0.2 is 0.6000000000000001 in binary)
    c.candidate = c.verify and math.max(0, math.floor((c.threshold - 0.2) * 1e9 + 0.5) / 1e9) or c.threshold
  end
  if c.method == "supershingle" and not c.meta and c.threshold < 0.8 then
    -- P(2 of 6 super shingles of 14) = 0.0007 at r = 0.7, 0.026 at 0.8: below that they miss almost everything
    self.warning = ("super shingles (6 x 14, 2 of 6) find pairs of resemblance below about 0.8 only by chance; "
      .. "threshold %.2f: use --method shingles or lsh for it"):format(c.threshold)
  end
  self.cfg = c
  self.dir = c.outdir
  self.times = {}
  self.stats = { skipped = 0 }
  self.log = util.logger(c)
  if self.warning then self.log("shingle: " .. self.warning) end
  return self
end

--- The shinglers of a run (text, HTML): shingle.sketcher.shinglers of the
-- configuration; the extractor, if any, is kept as self.extractor.
function M:shinglers()
  local text, html, ex = require("shingle.sketcher").shinglers(self.cfg)
  self.extractor = ex
  return text, html
end

--- The min-hash signature length the method needs (0: none).
function M:signature_length()
  local c = self.cfg
  if c.method == "supershingle" and not c.meta then return 84 end
  if c.method == "lsh" then
    -- bands and rows derived from the threshold use the first b x r of 128
    -- min-hashes: recluster at another threshold finds the ones it needs
    if self.derived.bands or not (c.bands and c.rows) then return 128 end
    return c.bands * c.rows
  end
  return 0
end

--- Bands and rows for an LSH threshold t with at most k min-hashes: the
-- shape whose threshold (1/b)^(1/r) is closest to t from below, since
-- candidates are verified afterwards and recall is what banding can lose.
function M.lsh_shape(t, k)
  local best, bb, br = math.huge, 1, 1
  for r = 1, 32 do
    local b = math.floor(k / r)
    if b >= 1 then
      local th = (1 / b) ^ (1 / r)
      local d = t - th
      if d >= 0 and d < best then best, bb, br = d, b, r end
    end
  end
  return bb, br
end

local Phase1 = {}
Phase1.__index = Phase1

--- Phase 1 step by step, for a caller that reads its documents itself
-- (shingle.collections sketches the pages it reads for its web graph):
--   local w = assert(p:phase1())
--   w:add(docs [, problem])  -- a batch; problem(msg) for each document that cannot be
--                            -- sketched returns true to go on, or nil, err to stop
--   w:commit()               -- docs.bin, sketches.bin, docs.jsonl
--   w:abort()                -- after a failure: nothing left that looks complete
function M:phase1()
  local c = self.cfg
  local ok, err = util.mkdir_p(self.dir)
  if not ok then return nil, err end
  local sok, text, html = pcall(self.shinglers, self)
  if not sok then return nil, text end
  local sk = require("shingle.sketcher").new(text, html, { threads = c.threads, full = c.verify,
    sig_k = self:signature_length(), extractor = self.extractor, max_bytes = c.max_bytes, mail = c.mail,
    max_shingles = c.max_shingles, config = c, on_error = c.on_error })
  -- from here on the directory holds an unfinished run: run.json, written
  -- last, is what marks a finished one
  os.remove(self.dir .. "/run.json")
  -- exact verification keeps where each document came from (a file, a line of
  -- a JSON Lines file) instead of its full set, and makes the sets of the
  -- candidates again before phase 4 (M:verification_sets); with Lua on this
  -- thread, the other methods and distributed ranks (store_full) it keeps them
  local sources = c.verify and c.method == "shingles" and not sk.lua and not self.store_full and not c.keep_sets
  local w, werr = core.phase1(self.dir, sk.pool, { sources = sources })
  if not w then return nil, werr end
  local meta_path = self.dir .. "/docs.jsonl"
  local meta, merr = io.open(meta_path .. ".tmp", "wb")
  if not meta then w:abort(); return nil, ("cannot write %s: %s"):format(meta_path, util.reason(merr, meta_path .. ".tmp")) end
  return setmetatable({ p = self, sk = sk, w = w, meta = meta, meta_path = meta_path, documents = 0, sketched = 0,
    jsonl = { bytes = 0, lines = 0, crc32 = 0 } }, Phase1)
end

-- The key order of each output (shingle.writer; docs/formats-runs.md).
M.order = {
  docs = { "id", "url", "date", "skipped" },
  clusters = { "cluster", "size", "members", "id", "url", "date", "relation", "copy_of" },
  pairs = { "a", "b", "url_a", "url_b", "resemblance", "containment_ab", "containment_ba", "exact" },
  summary = { "documents", "sketched", "skipped", "exact_duplicates", "lexical_duplicates", "shingle_duplicates",
    "clusters", "documents_in_clusters", "clusters_of_identical_documents_only", "mixed_clusters",
    "pairs_considered", "pairs_linked", "common_shingles_dropped", "method", "policy", "threshold", "verify",
    "candidate", "reclustered", "phases", "mpi" },
}

--- Sketch and append a batch: the number of documents so far, or nil, err.
function Phase1:add(docs, problem)
  local n, derr = self.sk:write(self.w, docs)
  if not n then return nil, derr end
  return self:record(docs, n, derr, problem)
end

--- Start sketching a batch on the pool's threads and append the one started
-- before it (docs nil: append the last one): the pool sketches while this
-- thread appends, writes docs.jsonl and reads the next batch. The number of
-- documents appended so far, or nil, err. Sketching in Lua is done at once.
function Phase1:push(docs, problem)
  if self.sk.lua then
    if not docs then return self.documents end
    return self:add(docs, problem)
  end
  local prev = self.pending
  self.pending = nil
  -- starting a batch waits for the one before it (one batch of a pool at a time)
  if docs then self.pending = { docs = docs, job = self.sk.pool:start(docs) } end
  if not prev then return self.documents end
  local n, derr = self.sk:write_job(self.w, prev.job)
  if not n then return nil, derr end
  return self:record(prev.docs, n, derr, problem)
end

-- A batch's documents in docs.jsonl, its problems reported.
function Phase1:record(docs, n, derr, problem)
  for i, d in ipairs(docs) do
    self.documents = self.documents + 1
    local e = derr[i]
    if e and problem then
      local ok, perr = problem(e)
      if not ok then return nil, perr end
    end
    local url, date, terr = M.field_text(d.url, "url"), M.field_text(d.date, "date")
    if url == nil and d.url ~= nil or date == nil and d.date ~= nil then
      terr = ("document %d: its %s is a %s; give a string or an integer"):format(self.documents,
        url == nil and d.url ~= nil and "url" or "date", type(url == nil and d.url ~= nil and d.url or d.date))
      return nil, terr
    end
    local line = writer.json({ id = self.documents, url = url, date = date, skipped = e and true or nil }, M.order.docs)
      .. "\n"
    local j = self.jsonl
    j.bytes, j.lines, j.crc32 = j.bytes + #line, j.lines + 1, core.crc32(line, j.crc32)
    local wok, werr = self.meta:write(line)
    if not wok then return nil, ("cannot write %s: %s"):format(self.meta_path, werr) end
  end
  self.sketched = self.sketched + n
  return self.documents
end

--- A URL or date as faithful JSON text: a string with bytes that are not
-- UTF-8 (and control characters) percent-encoded (core.text), an integer as
-- its digits; nil for anything else.
function M.field_text(v, _)
  if type(v) == "string" then return core.text(v) end
  if type(v) == "number" and v == math.floor(v) and v > -2 ^ 53 and v < 2 ^ 53 then return ("%d"):format(v) end
  return nil
end

function Phase1:abort()
  if self.pending then self.pending.job:close(); self.pending = nil end
  self.w:abort()
  if io.type(self.meta) == "file" then self.meta:close() end
  os.remove(self.meta_path .. ".tmp")
end

--- Make the files of phase 1 final: true, or nil, err (and nothing written).
function Phase1:commit()
  local cok, cerr = self.meta:close()
  if not cok then self:abort(); return nil, ("cannot write %s: %s"):format(self.meta_path, tostring(cerr)) end
  local committed, cerr = self.w:commit()
  if not committed then os.remove(self.meta_path .. ".tmp"); return nil, cerr end
  local rok, rerr = os.rename(self.meta_path .. ".tmp", self.meta_path)
  if not rok then return nil, rerr end
  -- what docs.jsonl must be when it is read back (M:documents)
  self.p.stats.docs_jsonl = self.jsonl
  return true
end

--- Phase 1: sketch every document of every input, on the pool's threads
-- (or in Lua for rule sets with Lua steps and extractors). An input is a
-- path, a directory, a JSON Lines or WARC file, "-", or a Lua function
-- returning one document per call. Problems follow shingle.input's one
-- policy (warned, counted in stats.skipped; fatal with strict). opts.source:
-- input.reader's hook for inputs read another way (a rank's pieces of the
-- inputs, shingle.dist). opts.on_batch(docs, src, first_id): called with
-- every batch before it is sketched (the documents get ids first_id,
-- first_id + 1, ...), for a caller that wants to know where each document
-- came from (shingle dedup). p.on_batch, when set, is the same hook for a
-- whole run (p:run): `shingle cluster --index` keeps the URLs by id.
function M:sketch(inputs, opts)
  inputs = input.inputs(inputs) -- a path, a function or a list
  local c = self.cfg
  local t0, c0 = core.now(), core.cputime()
  local w, err = self:phase1()
  if not w then return nil, err end
  local bar = progress.new("sketching", nil, "docs", c.quiet)
  local r = input.reader{ format = c.format, fields = c.fields, html = c.html, batch = c.batch, strict = c.strict,
    source = opts and opts.source,
    max_bytes = c.max_bytes, mail = c.mail,
    warn = function(msg) self.log("shingle: " .. msg) end,
    on_source = function(src) if src.total then bar.total = (bar.total or 0) + src.total end end }
  local function problem(msg) return r:problem("documents", msg) end
  local on_batch = opts and opts.on_batch or self.on_batch
  -- the pool sketches batch k + 1 while this thread appends batch k (Phase1:push);
  -- with strict, a batch at a time, so that the first problem stops the run
  -- before the next batch is read
  local started = 0
  local ok, rerr = r:each(inputs, function(docs, src)
    if on_batch then on_batch(docs, src, started + 1) end
    started = started + #docs
    local n, aerr
    if c.strict then n, aerr = w:add(docs, problem) else n, aerr = w:push(docs, problem) end
    if not n then return nil, aerr end
    bar:update(n)
    return true
  end)
  if ok then
    local n, perr = w:push(nil, problem)
    if not n then ok, rerr = nil, perr else bar:update(n) end
  end
  if not ok then w:abort(); return nil, rerr end
  bar:done()
  local cok, cerr = w:commit()
  if not cok then return nil, cerr end
  self.times.sketching = core.now() - t0
  self.times.cpu_sketching = core.cputime() - c0
  self.stats.documents = w.documents
  self.stats.sketched = w.sketched
  self.stats.skipped = r:total_skipped()
  return self.stats
end

-- A progress callback for the C steps: one bar per step name; a step's bar
-- is finished when the next step starts (so its time is its own), the last
-- by finish().
local function stepper(quiet)
  local current, name
  local function update(step, done, total)
    if step ~= name then
      if current then current:done() end
      local units = { ["shingle merging"] = "docs", ["pair formation"] = "records", ["cluster formation"] = "pairs",
        ["verification sets"] = "docs" }
      current, name = progress.new(step, total > 0 and total or nil, units[step] or "records", quiet), step
    end
    current:update(done, total > 0 and total or nil)
  end
  local function finish() if current then current:done() end end
  return update, finish
end

--- Section "Identical documents": keep one representative per group.
function M:dedupe()
  local t0, c0 = core.now(), core.cputime()
  local st, err = core.dedupe(self.dir)
  if not st then return nil, err end
  self.times.duplicate_elimination = core.now() - t0
  self.times.cpu_duplicate_elimination = core.cputime() - c0
  self.stats.identical = st
  return st
end

--- Phases 2 and 3 (the default method), or the method's own candidate step.
function M:pairs()
  local c = self.cfg
  if c.method ~= "shingles" then return true end
  local update, finish = stepper(c.quiet)
  local c0 = core.cputime()
  -- in a staged output (M:staged), pairs.bin is made durable by the fsync of
  -- the whole tree before it is put in place, not on its own
  local st, err = core.pairs(self.dir, { memory = c.memory, max_df = c.max_df, temp_dir = c.temp_dir, threads = c.threads,
    sync_later = self.staging or nil, progress = update })
  finish()
  if not st then return nil, err end
  self.times.shingle_merging = st.t_merge
  self.times.pair_formation = st.t_form
  self.times.pair_merging = st.t_pairmerge
  self.times.cpu_pairs = core.cputime() - c0
  self.stats.pairs = st
  return st
end

function M:decision_options()
  local c = self.cfg
  if c.method == "lsh" and not (c.bands and c.rows) then
    -- the shape for the threshold (shingle.dist's ranks band with it too)
    c.bands, c.rows = M.lsh_shape(c.threshold, 128)
    self.derived.bands, self.derived.rows = true, true
  end
  return { policy = c.policy, threshold = c.threshold, verify = c.verify, candidate = c.candidate, threads = c.threads,
    memory = c.memory, temp_dir = c.temp_dir, check = c.check, bands = c.bands, rows = c.rows,
    meta = c.meta, meta_w = c.meta_w,
    -- pairs.bin's shared counts (phases 2-3 with this max_df) give the candidates' estimates
    max_df = c.method == "shingles" and c.max_df or nil }
end

--- Phase 4: decide the pairs by the policy, link them, form the clusters.
-- opts.predicate: a Lua function over a pair { a, b, shared, resemblance,
-- containment_ab, containment_ba, size_a, size_b } (exact values with
-- verify) that decides instead of the policy.
function M:decide(opts)
  local c = self.cfg
  local t0, c0 = core.now(), core.cputime()
  local o = self:decision_options()
  local update, finish = stepper(c.quiet)
  o.progress = update
  local st, ps, err
  if c.verify then
    local vok, verr = self:verification_sets(o, opts and opts.predicate ~= nil)
    if not vok then finish(); return nil, verr end
    o.fullsets = vok ~= true and vok or nil
  end
  if opts and opts.predicate then
    if c.method ~= "shingles" then return nil, "a policy function needs the shingles method (pairs from phases 2-3)" end
    st, err = core.decide(self.dir, o, opts.predicate)
  elseif c.method == "shingles" then
    st, err = core.decide(self.dir, o)
  elseif c.method == "greedy" then
    st, err = core.greedy(self.dir, o)
  else
    if c.method == "lsh" and not (c.bands and c.rows) then
      c.bands, c.rows = M.lsh_shape(c.threshold, 128)
      self.derived.bands, self.derived.rows = true, true
    end
    o.bands, o.rows = c.bands, c.rows
    st, ps = core[c.method](self.dir, o)
    if not st then err = ps; ps = nil end
  end
  finish()
  core.verify_sets_remove(self.dir, o.fullsets)
  if not st then return nil, err end
  if ps then
    self.times.shingle_merging = ps.t_merge
    self.times.pair_formation = ps.t_form
    self.stats.pairs = ps
  end
  self.times.cluster_formation = core.now() - t0 - (ps and (ps.t_merge + ps.t_form) or 0)
  self.times.cpu_cluster_formation = core.cputime() - c0 - (self.times.cpu_verification_sets or 0)
  self.stats.clusters = st
  return st
end

--- Exact verification of a run whose phase 1 kept where documents came
-- from (sources.bin) rather than their full sets: the sets of the documents
-- phase 4 verifies (both ends of the candidate pairs; every document for the
-- other methods or a policy function) made again from the inputs, on the
-- pool's threads, in memory when they take at most a quarter of the memory
-- budget, else into fullsets.bin (removed after phase 4). true, or the sets
-- in memory (for core.decide's fullsets), or nil, err.
function M:verification_sets(o, every_pair)
  local c = self.cfg
  if not require("lfs").attributes(self.dir .. "/sources.bin", "mode") then return true end
  local t0, c0 = core.now(), core.cputime()
  local sok, text, html = pcall(self.shinglers, self)
  if not sok then return nil, text end
  local sk = require("shingle.sketcher").new(text, html, { threads = c.threads, full = true, sig_k = 0,
    extractor = self.extractor, max_bytes = c.max_bytes, mail = c.mail, max_shingles = c.max_shingles, config = c,
    on_error = c.on_error })
  if sk.lua then return nil, "exact verification cannot shingle documents again with Lua on the main thread" end
  local vo = {}
  for k, v in pairs(o) do vo[k] = v end
  vo.every = c.method ~= "shingles"
  vo.all_pairs = every_pair
  vo.fields = c.fields
  vo.memory = c.memory / 4
  local st, err = core.verify_sets(self.dir, sk.pool, vo)
  sk.pool:close()
  if not st then return nil, err end
  local sets = st.sets
  st.sets = nil
  self.stats.verification_sets = st
  self.times.verification_sets = core.now() - t0
  self.times.cpu_verification_sets = core.cputime() - c0
  return sets or true
end

local relation = { [0] = "similar", "exact", "lexical", "shingle" }

-- scores are stored as 32-bit floats: four decimals is what they carry
local function r4(x) return x and math.floor(x * 10000 + 0.5) / 10000 end

--- Read docs.jsonl back: urls and dates by id (of the wanted ids, or all).
-- It is checked as the binary record files are: its size, line count and
-- CRC-32 against what phase 1 recorded (in run.json), else its line count
-- against the documents of phase 1; every line read must be the record of
-- its id. nil, err naming the file when it is truncated, emptied or damaged.
function M:documents(wanted)
  local cjson = require "cjson"
  local urls, dates = {}, {}
  local path = self.dir .. "/docs.jsonl"
  local f, err = io.open(path, "rb")
  if not f then return nil, ("cannot read %s: %s (run phase 1 first)"):format(path, util.reason(err, path)) end
  local function corrupt(what)
    if io.type(f) == "file" then f:close() end
    return nil, ("%s is truncated or corrupt (%s): run shingle cluster again"):format(path, what)
  end
  local size = f:seek("end")
  f:seek("set", 0)
  local id, bytes, crc = 0, 0, 0
  for line in f:lines() do
    id = id + 1 -- docs.jsonl holds one line per document, in id order
    bytes = bytes + #line + 1
    crc = core.crc32("\n", core.crc32(line, crc))
    if not wanted or wanted[id] then
      local ok, d = pcall(cjson.decode, line)
      if not ok or type(d) ~= "table" or d.id ~= id then
        return corrupt(("line %d is not the record of document %d"):format(id, id))
      end
      urls[id] = type(d.url) == "string" and d.url or nil
      dates[id] = type(d.date) == "string" and d.date or nil
    end
  end
  f:close()
  if size ~= bytes then return corrupt(("%d bytes, the last line unfinished"):format(size)) end
  local want = self.stats.docs_jsonl
  if type(want) == "table" then
    if want.bytes ~= bytes or want.lines ~= id or want.crc32 ~= crc then
      return corrupt(("%d bytes in %d lines with CRC-32 %08x; phase 1 wrote %s bytes in %s lines with CRC-32 %08x")
        :format(bytes, id, crc, tostring(want.bytes), tostring(want.lines), tonumber(want.crc32) or 0))
    end
  elseif self.stats.documents and self.stats.documents ~= id then
    return corrupt(("%d lines for %d documents"):format(id, self.stats.documents))
  end
  return urls, dates
end

-- The columns of clusters and pairs as CSV or TSV: a cluster a row per
-- member, a pair's exact values in columns of their own.
M.columns = {
  clusters = { "cluster", "size", "id", "url", "date", "relation", "copy_of" },
  pairs = { "a", "b", "url_a", "url_b", "resemblance", "containment_ab", "containment_ba", "exact_resemblance",
    "exact_containment_ab", "exact_containment_ba" },
}
M.rows = {
  clusters = function(c)
    local rows = {}
    for i, m in ipairs(c.members) do
      rows[i] = { cluster = c.cluster, size = c.size, id = m.id, url = m.url, date = m.date, relation = m.relation,
        copy_of = m.copy_of }
    end
    return rows
  end,
  pairs = function(p)
    local x = p.exact or {}
    return { { a = p.a, b = p.b, url_a = p.url_a, url_b = p.url_b, resemblance = p.resemblance,
      containment_ab = p.containment_ab, containment_ba = p.containment_ba, exact_resemblance = x.resemblance,
      exact_containment_ab = x.containment_ab, exact_containment_ba = x.containment_ba } }
  end,
}

--- The files an output is written to: NAME.jsonl, and NAME.csv (or .tsv,
-- .json) as well with the option output_format.
function M:outputs(name)
  local specs = { { path = self.dir .. "/" .. name .. ".jsonl", format = "jsonl", shape = { order = M.order[name] } } }
  local fmt = self.cfg.output_format
  if fmt and fmt ~= "jsonl" then
    specs[2] = { path = self.dir .. "/" .. writer.file_name(name, fmt), format = fmt,
      shape = { order = M.order[name], columns = M.columns[name], rows = M.rows[name] } }
  end
  return specs
end

--- Write clusters.jsonl, pairs.jsonl and summary.json.
function M:report()
  local t0, c0 = core.now(), core.cputime()
  local reps, dups = core.read_docs(self.dir)
  if not reps then return nil, dups end
  local cl, docs = core.read_clusters(self.dir)
  if not cl then return nil, docs end
  -- only the documents the outputs name: clustered ones and the ends of links
  local wanted = {}
  for _, d in ipairs(docs) do wanted[d] = true end
  local lok, lerr = core.link_ends(self.dir, wanted)
  if not lok then return nil, lerr end
  local urls, dates = self:documents(wanted)
  if not urls then return nil, dates end
  local ok, err = writer.write_files(self:outputs("clusters"), function(w)
    local i, n = 1, #cl
    while i <= n do
      local j = i
      while j < n and cl[j + 1] == cl[i] do j = j + 1 end
      local members = {}
      for k = i, j do
        local d = docs[k]
        local rep = reps[d]
        members[#members + 1] = { id = d, url = urls[d], date = dates[d],
          relation = rep == d and "similar" or relation[dups[d]],
          copy_of = rep ~= d and rep or nil }
      end
      w:write({ cluster = cl[i], size = j - i + 1, members = members })
      i = j + 1
    end
  end)
  if not ok then return nil, err end
  local specs = self:outputs("pairs")
  if #specs == 1 then
    -- pairs.jsonl alone (the default): written in bulk in C (core/lua/l_report.c),
    -- the same bytes as the records below through the writer
    local path = specs[1].path
    local n, werr = core.links_jsonl(self.dir, path .. ".tmp", urls, path)
    if not n then os.remove(path .. ".tmp"); return nil, werr end
    local rok, rerr = os.rename(path .. ".tmp", path)
    if not rok then return nil, ("cannot rename %s.tmp: %s"):format(path, util.reason(rerr, path .. ".tmp")) end
    self.times.report = core.now() - t0
    return self:write_summary()
  end
  local links, rlerr = core.read_links(self.dir)
  if not links then return nil, rlerr end
  ok, err = writer.write_files(specs, function(w)
    for _, l in ipairs(links) do
      local rec = { a = l[1], b = l[2], url_a = urls[l[1]], url_b = urls[l[2]],
        resemblance = r4(l[3]), containment_ab = r4(l[4]), containment_ba = r4(l[5]) }
      if l[6] then rec.exact = { resemblance = r4(l[6]), containment_ab = r4(l[7]), containment_ba = r4(l[8]) } end
      w:write(rec)
    end
  end)
  if not ok then return nil, err end
  self.times.report = core.now() - t0
  self.times.cpu_report = core.cputime() - c0
  return self:write_summary()
end

--- Iterate over the clusters of a finished run: each { cluster, size,
-- members = { { id, url, date, relation, copy_of } } }.
function M:clusters()
  local cjson = require "cjson"
  local f, err = io.open(self.dir .. "/clusters.jsonl", "rb")
  if not f then error(("cannot read %s/clusters.jsonl: %s (run report first)"):format(self.dir,
    util.reason(err, self.dir .. "/clusters.jsonl")), 2) end
  return function()
    local line = f:read("*l")
    if not line then f:close() return nil end
    return cjson.decode(line)
  end
end

M.phase_names = { "sketching", "duplicate_elimination", "shingle_merging", "pair_formation", "pair_merging",
  "cluster_formation", "report" }

function M:summary()
  local s, st = self.stats, self.stats.clusters or {}
  local id = s.identical or {}
  return {
    documents = s.documents, sketched = s.sketched, skipped = s.skipped,
    clusters = st.clusters, documents_in_clusters = st.clustered_docs,
    clusters_of_identical_documents_only = st.identical_only_clusters, mixed_clusters = st.mixed_clusters,
    exact_duplicates = id.exact, lexical_duplicates = id.lexical, shingle_duplicates = id.shingle,
    pairs_considered = st.pairs, pairs_linked = st.linked,
    common_shingles_dropped = s.pairs and s.pairs.common_dropped,
    method = self.cfg.method, policy = self.cfg.policy, threshold = self.cfg.threshold, verify = self.cfg.verify,
    candidate = self.cfg.verify and self.cfg.method == "shingles" and self.cfg.candidate or nil,
    reclustered = self.reclustered,
    phases = self.times,
    mpi = self.mpi, -- a distributed run's ranks and what each exchanged (shingle.dist)
  }
end

function M:write_summary()
  local sum = self:summary()
  local ok, err = writer.write_json(self.dir .. "/summary.json", sum, M.order.summary)
  if not ok then return nil, err end
  return sum
end

--- The phase table, like the paper's "Status" section.
function M:phase_table()
  return util.format_phases(M.phase_names, self.times)
end

--- Saved configuration, so `recluster` can redo phase 4 from the files.
function M:save_config()
  local c = {}
  for k, v in pairs(self.cfg) do
    -- rule sets and extractors given as Lua values cannot be saved; names can
    if type(v) ~= "function" and not (type(v) == "table" and (k == "canon" or k == "extractor"))
      and not self.derived[k] then
      c[k] = v
    end
  end
  -- the times of every phase the files come from: a recluster's own over
  -- those of the run it started from
  local times = {}
  for k, v in pairs(self.run_times or {}) do times[k] = v end
  for k, v in pairs(self.times) do times[k] = v end
  local rec = { config = c, stats = self.stats, times = writer.object(times) }
  return writer.write_json(self.dir .. "/run.json", rec, { "config", "stats", "times" })
end

function M.load(dir, over)
  local cjson = require "cjson"
  local lfs = require "lfs"
  if not lfs.attributes(dir .. "/run.json", "mode") then
    -- a run killed while it put its output in place is finished or undone here
    local ok, serr = util.settle(dir, { kind = "cluster run", marker = "run.json",
      log = function(msg) if not (over and over.quiet) then io.stderr:write("shingle: ", msg, "\n") end end })
    if not ok then return nil, serr end
  end
  local f, err = io.open(dir .. "/run.json", "rb")
  if not f then
    return nil, ("%s is not a finished cluster run (no run.json: %s)"):format(dir, util.reason(err, dir .. "/run.json"))
  end
  local ok, rec = pcall(cjson.decode, f:read("*a"))
  f:close()
  if not ok or type(rec) ~= "table" or type(rec.config) ~= "table" then
    return nil, dir .. "/run.json is corrupt: run shingle cluster again"
  end
  local c = rec.config
  for k, v in pairs(c) do if v == cjson.null then c[k] = nil end end
  for k, v in pairs(over or {}) do c[k] = v end
  c.outdir = dir
  c.log = nil
  local p = M.new(c)
  p.stats = rec.stats or p.stats
  p.stats.clusters = nil
  -- the phases this command runs are its figures; the earlier ones stay in
  -- run.json (save_config) but are not reported again as if just measured
  p.run_times = type(rec.times) == "table" and rec.times or {}
  p.times = {}
  p.reclustered = true
  return p
end

-- What phase 1 depends on: the inputs (names, sizes, modification times)
-- and the options that change sketches. Functions as inputs cannot be
-- described, so a run over them never resumes.
function M:phase1_signature(inputs)
  local lfs = require "lfs"
  local c = self.cfg
  local parts = {}
  for _, k in ipairs({ "w", "sketch", "m", "floor", "s", "k", "option", "seed", "fold", "punctuation", "numbers", "invalid",
    "canon", "extractor", "verify", "method", "meta", "bands", "rows", "format", "html", "max_bytes", "max_shingles", "mail",
    "keep_sets" }) do
    local v = c[k]
    if type(v) == "table" or type(v) == "function" then return nil end
    parts[#parts + 1] = k .. "=" .. tostring(v)
  end
  for _, spec in ipairs(inputs) do
    if type(spec) ~= "string" or spec == "-" then return nil end
    local a = lfs.attributes(spec)
    if not a then return nil end
    parts[#parts + 1] = ("%s:%s:%s:%s"):format(spec, a.mode, a.size, a.modification)
    if a.mode == "directory" then
      -- the files' sizes and times as the walk read them (one lstat each)
      local paths, _, _, info = input.walk(spec)
      for i, p in ipairs(paths) do
        parts[#parts + 1] = ("%s:%d:%d"):format(p, info.sizes[i], info.mtimes[i])
      end
    end
  end
  return core.tohex(core.rabin(table.concat(parts, "\n"), "\xca\xef\xbc\xde\x6b\x42\x38\xb1", 64))
end

-- The files of phase 1, which a resumed run starts from.
M.phase1_files = { "docs.bin", "sketches.bin", "shingles.bin", "sigs.bin", "sources.bin", "srcnames.bin", "docs.jsonl",
  "phase1.json" }

--- Phase 1, or with cfg.resume the record of a finished phase 1 over the
-- same inputs and options (phase1.json, written after docs.bin).
function M:sketch_or_resume(inputs)
  inputs = input.inputs(inputs) -- a path, a function or a list
  local cjson = require "cjson"
  local sig = self:phase1_signature(inputs)
  local path = self.dir .. "/phase1.json"
  if self.cfg.resume and sig then
    local f = io.open(path, "rb")
    if f then
      local ok, rec = pcall(cjson.decode, f:read("*a"))
      f:close()
      if ok and type(rec) == "table" and rec.signature == sig and io.open(self.dir .. "/docs.bin") then
        self.stats.documents, self.stats.sketched, self.stats.skipped = rec.documents, rec.sketched, rec.skipped
        self.stats.docs_jsonl = rec.docs_jsonl
        self.times.sketching = 0
        self.resumed = true
        self.log("shingle: phase 1 already done over the same inputs; resuming after it")
        return self.stats
      end
    end
  end
  os.remove(path)
  local st, err = self:sketch(inputs)
  if not st then return nil, err end
  if sig then
    local ok, werr = writer.write_json(path, { signature = sig, documents = st.documents, sketched = st.sketched,
      skipped = st.skipped, docs_jsonl = st.docs_jsonl }, { "signature", "documents", "sketched", "skipped", "docs_jsonl" })
    if not ok then return nil, werr end
  end
  return st
end

--- The steps of a whole run after phase 1, in order; run.json is written
-- last, so a directory without it is an unfinished run.
function M:finish_steps()
  return {
    function() return self:dedupe() end,
    function() return self:pairs() end,
    function() return self:decide() end,
    function() return self:report() end,
    function() return self:save_config() end,
  }
end

--- Run steps (functions returning a result or nil, err) into the output
-- directory as a whole (shingle.util.output): the files are written beside
-- it and replace it only when every step succeeded, so outdir holds the
-- previous finished run or this one, never a mix. opts: keep,
-- keep_unfinished, must_exist (as for util.output).
function M:staged(steps, opts)
  local final = self.dir
  local o, err = util.output(final, { kind = "cluster run", marker = "run.json", keep = opts.keep,
    must_exist = opts.must_exist, keep_unfinished = opts.keep_unfinished,
    log = function(msg) self.log("shingle: " .. msg) end })
  if not o then return nil, err end
  self.dir = o.dir
  -- the steps write into o.dir, which o:commit syncs whole before the swap
  self.staging = true
  local ok, serr = true, nil
  for _, step in ipairs(steps) do
    local pok
    pok, ok, serr = pcall(step)
    if not pok then
      -- a raised error (a bug, or misuse) leaves nothing beside OUT either
      self.dir = final
      self.staging = nil
      o:abort()
      error(ok, 0)
    end
    if not ok then break end
  end
  self.dir = final
  self.staging = nil
  if not ok then o:abort(); return nil, util.unstage(serr, o) end
  return o:commit()
end

--- Everything: phase 1 to the report. Inputs that do not exist, or that
-- hold no document at all, are an error that leaves the output directory
-- as it was.
function M:run(inputs)
  inputs = input.inputs(inputs) -- a path, a function or a list
  local steps = { function()
    local st, err = self:sketch_or_resume(inputs)
    if not st then return nil, err end
    if (st.sketched or 0) == 0 then
      return nil, ("no documents to cluster in %s%s"):format(M.describe_inputs(inputs),
        (st.documents or 0) > 0 and (" (%d could not be read)"):format(st.documents) or "")
    end
    return true
  end }
  for _, f in ipairs(self:finish_steps()) do steps[#steps + 1] = f end
  local resume = self.cfg.resume and M.phase1_files or nil
  local ok, err = self:staged(steps, { keep = resume, keep_unfinished = resume })
  if not ok then return nil, err end
  return self:summary()
end

--- Redo phase 4 and the report from the files of the finished run in the
-- output directory (`shingle recluster`), replacing it as a whole.
function M:rerun()
  local steps = {
    function() return self:decide() end,
    function() return self:report() end,
    function() return self:save_config() end,
  }
  -- the files phase 4 starts from; not the old clusters, nor what other
  -- commands left in the directory about them (a report.html)
  local keep = { "pairs.bin" }
  for _, n in ipairs(M.phase1_files) do keep[#keep + 1] = n end
  return self:staged(steps, { keep = keep, must_exist = true })
end

--- Inputs named for a message: "a, b and 2 more".
function M.describe_inputs(inputs)
  if type(inputs) ~= "table" then inputs = { inputs } end
  local names = {}
  for i, spec in ipairs(inputs) do
    if i > 3 then names[#names + 1] = ("%d more"):format(#inputs - 3); break end
    names[#names + 1] = type(spec) == "string" and (spec == "-" and "standard input" or spec) or "a Lua source"
  end
  return #names > 0 and table.concat(names, ", ") or "no inputs"
end

return M
