--- Mirrored collections after Cho, Shivakumar and Garcia-Molina, "Finding
-- replicated web collections" (2000), as Lua steps over bulk C calls
-- (core/webgraph.h, core/collections.h). The state of a run lives in its
-- output directory (docs/collections.md).
--
--   local c = collections.new{ outdir = "out", similarity = "lines4" }
--   c:pages(inputs)     -- the web graph: pages.bin, links.bin, chunks-*.bin
--   c:trivial()         -- trivial similar clusters (and Figure 11's histograms)
--   c:grow()            -- LinkSummary, merge condition, TCG, union-find: collections.jsonl
--   c:report()          -- summary.json, avoid.jsonl
--   collections.avoid_list(outdir, opts), collections.rollup(outdir, urls, opts)
local core = require "shingle.core"
local input = require "shingle.input"
local progress = require "shingle.progress"
local util = require "shingle.util"
local writer = require "shingle.writer"

local M = {}
M.__index = M

M.schemes = { "whole", "lines4", "lines2" }
-- the paper's thresholds: T = 15 shared chunks of four lines, 25 of two lines
M.thresholds = { whole = 1, lines4 = 15, lines2 = 25 }
M.replica_bins = { "0", "1", "2", "3-9", "10-99", "100-999", ">=1000" }

-- The defaults find real mirrors: on the test bed of docs/collections.md (a
-- 318-page manual, a full mirror that adds a banner to every page, a 60%
-- partial mirror linking back to the primary, an older copy with 15% of the
-- pages edited) page similarity by shingles and the extended merge condition
-- recover 273 pages in four collections, where the paper's settings (fixed
-- 4-line chunks, the strict condition: `paper = true`) recover 117 in three.
M.defaults = {
  paper = false,           -- the paper's settings: similarity lines4 (T = 15), strict merge condition, fixed chunks
  similarity = nil,        -- whole | lines4 | lines2 | shingles (default: shingles; lines4 with paper)
  threshold = nil,         -- T for chunks (default per scheme), resemblance for shingles (0.5)
  max_df = 1000,           -- chunks in more pages are dropped ("common" chunks)
  anchored = nil,          -- anchored chunk boundaries (core/chunks.h); default false
  extended = nil,          -- the extended merge condition for partial mirrors (section 4): default true; false with paper
  single_site = false,     -- only collections within a single site
  start = "inlinks",       -- inlinks (Figure 7) | first
  site_depth = 1,          -- the site: the host, plus site_depth - 1 path segments
  min_cardinality = 2, min_size = 1,
  avoid_min_size = 10,     -- avoid list: collections of at least this many pages (noise is smaller)
  figure11 = true,         -- trivial clusters under all three chunkings, for the histogram
  -- the shingler of similarity "shingles" (any of shingle.pipeline's; the
  -- defaults: MIN_100 of 8-token shingles, invalid UTF-8 read as Latin-1)
  w = 8, s = 100, sketch = "min", m = 25, k = 64, invalid = "latin1", canon = nil,
  seed = nil,              -- the chunk fingerprints' polynomials (nil: 0) and the shingler's (nil: its default)
  memory = 1024 ^ 3, temp_dir = nil, threads = nil, max_bytes = 64 * 1024 ^ 2,
  max_shingles = 16 * 1024 ^ 2, -- similarity "shingles": shingle.sketcher.MAX_SHINGLES
  format = "auto", fields = nil, html = nil, edges = nil, batch = 256,
  strict = false, quiet = false, log = nil,
  output_format = "jsonl", -- collections and avoid also as .csv, .tsv or .json (the .jsonl files always)
}
local optional = { similarity = true, anchored = true, extended = true,
  threshold = true, temp_dir = true, threads = true, fields = true, html = true, edges = true,
  log = true, outdir = true, seed = true, canon = true,
  -- more of the shingler's options, nil: shingle.pipeline's defaults
  floor = true, option = true, fold = true, punctuation = true, numbers = true }
-- the options the shingles similarity passes on to shingle.pipeline
local shingler_keys = { "w", "sketch", "s", "m", "k", "seed", "invalid", "canon", "floor", "option", "fold",
  "punctuation", "numbers" }
local similarities = { whole = true, lines4 = true, lines2 = true, shingles = true }

function M.new(cfg)
  local self = setmetatable({}, M)
  local c = util.merge_options(M.defaults, optional, cfg, "collections", 3)
  -- what an option not given means: the paper's settings with paper = true
  if c.similarity == nil then c.similarity = c.paper and "lines4" or "shingles" end
  if c.extended == nil then c.extended = not c.paper end
  if c.anchored == nil then c.anchored = false end
  if not similarities[c.similarity] then
    error(("unknown similarity '%s'; use whole, lines4, lines2 or shingles"):format(tostring(c.similarity)), 2)
  end
  if c.start ~= "inlinks" and c.start ~= "first" then
    error(("unknown start '%s'; use inlinks or first"):format(tostring(c.start)), 2)
  end
  if type(c.edges) == "string" then c.edges = { c.edges } end
  c.threads = c.threads or core.cpus()
  self.cfg = c
  self.dir = c.outdir
  self.times, self.stats = {}, {}
  self.log = util.logger(c)
  return self
end

local function url_escape(s)
  return (s:gsub("[%s\"<>%%{}|\\^`#?]", function(ch) return ("%%%02X"):format(ch:byte()) end))
end

--- A source over a local mirror (as `wget -m` leaves it): every HTML (or
-- .txt) file below root, with the URL http://PATH, PATH relative to root, so
-- the first path component is the host; other files are left out.
function M.mirror_source(root, html)
  local paths, problems = input.walk(root)
  local prefix = root:gsub("/+$", "") .. "/"
  local src = { total = 0, skipped_files = 0 }
  local list = {}
  for _, p in ipairs(paths) do
    local is_html = html == true or input.html_by_name(p)
    if is_html or p:lower():match("%.txt$") then
      list[#list + 1] = { path = p, url = "http://" .. url_escape(p:sub(#prefix + 1)), html = html ~= false and is_html and true or false }
    else
      src.skipped_files = src.skipped_files + 1
    end
  end
  src.total = #list
  local i = 0
  function src:batch(n)
    local docs, errors = {}, problems
    problems = {} -- unreadable directories are reported with the first batch
    while #docs < n and i < #list do i = i + 1; docs[#docs + 1] = list[i] end
    return docs, errors, i >= #list
  end
  return src
end

--- Read an edge list: lines "SRC DST" (whitespace-separated URLs) or JSON
-- objects { "src": ..., "dst": ... }. Calls fn(srcs, dsts) per batch.
function M.read_edges(path, fn, batch)
  local cjson = require "cjson"
  local f, err = io.open(path, "rb")
  if not f then return nil, ("cannot read the edge list %s: %s"):format(path, util.reason(err, path)) end
  local s, d, bad, lineno = {}, {}, 0, 0
  for line in f:lines() do
    lineno = lineno + 1
    local a, b
    if line:match("^%s*{") then
      local ok, rec = pcall(cjson.decode, line)
      if ok and type(rec) == "table" then a, b = rec.src or rec.from, rec.dst or rec.to end
    elseif not line:match("^%s*#") then
      a, b = line:match("^%s*(%S+)%s+(%S+)")
    end
    if type(a) == "string" and type(b) == "string" then
      s[#s + 1], d[#d + 1] = a, b
      if #s >= (batch or 4096) then
        local ok, ferr = fn(s, d)
        if not ok then f:close(); return nil, ferr end
        s, d = {}, {}
      end
    elseif line:match("%S") and not line:match("^%s*#") then
      bad = bad + 1
    end
  end
  f:close()
  if #s > 0 then
    local ok, ferr = fn(s, d)
    if not ok then return nil, ferr end
  end
  return bad
end

--- The pipeline that sketches the pages for similarity "shingles" (its
-- files in outdir/shingles): the configured shingler, phases 1 to 4 of
-- shingle.pipeline with estimates only (no exact verification), the
-- collections' max_df and resources.
function M:shingle_pipeline()
  local c = self.cfg
  if not self.shingles then
    local o = { outdir = self.dir .. "/shingles",
      method = "shingles", policy = "resemblance", threshold = c.threshold or 0.5, verify = false,
      max_df = c.max_df, memory = c.memory, temp_dir = c.temp_dir, threads = c.threads, max_bytes = c.max_bytes,
      max_shingles = c.max_shingles, quiet = c.quiet, log = self.log }
    for _, k in ipairs(shingler_keys) do o[k] = c[k] end
    self.shingles = require("shingle.pipeline").new(o)
  end
  return self.shingles
end

--- The web graph: read every page of every input, extract links, fingerprint
-- chunks (and with similarity "shingles", sketch the pages: phase 1 of the
-- pipeline). Problems follow shingle.input's one policy.
function M:pages(inputs)
  local c = self.cfg
  local ok, err = util.mkdir_p(self.dir)
  if not ok then return nil, err end
  local t0 = core.now()
  local g, gerr = core.webgraph(self.dir, { memory = c.memory, temp_dir = c.temp_dir, site_depth = c.site_depth,
    seed = c.seed or 0, anchored = c.anchored, max_bytes = c.max_bytes })
  if not g then return nil, gerr end
  local w
  if c.similarity == "shingles" then
    local sok, p = pcall(self.shingle_pipeline, self)
    if not sok then g:close(); return nil, p end
    w, err = p:phase1()
    if not w then g:close(); return nil, err end
  end
  local function fail(msg)
    g:close()
    if w then w:abort() end
    return nil, msg
  end
  local st = { skipped_inputs = 0, skipped_files = 0, bad_records = 0, bad_edges = 0 }
  local bar = progress.new("reading pages", nil, "pages", c.quiet)
  local n = 0
  local r = input.reader{ batch = c.batch, strict = c.strict, warn = function(msg) self.log("shingle: " .. msg) end,
    source = function(spec)
      if input.detect(spec, c.format) ~= "dir" then
        return input.source(spec, { format = c.format, fields = c.fields, html = c.html, max_bytes = c.max_bytes })
      end
      local src = M.mirror_source(spec, c.html)
      st.skipped_files = st.skipped_files + src.skipped_files
      return src
    end,
    on_source = function(src) if src.total then bar.total = (bar.total or 0) + src.total end end }
  ok, err = r:each(inputs, function(docs)
    local problems, aerr = g:add(docs)
    if not problems then return nil, aerr end
    for _, pr in pairs(problems) do
      if pr.error then -- an unreadable page (the graph counts it)
        local pok, perr = r:problem("documents", pr.error)
        if not pok then return nil, perr end
      end
    end
    if w then
      -- the graph has reported the pages that cannot be read
      local added, werr = w:add(docs)
      if not added then return nil, werr end
    end
    n = n + #docs
    bar:update(n)
    return true
  end)
  if not ok then return fail(err) end
  st.skipped_inputs, st.bad_records = r.skipped.inputs, r.skipped.records
  bar:done()
  for _, path in ipairs(c.edges or {}) do
    local bad, eerr = M.read_edges(path, function(s, d) return g:edges(s, d) end)
    if not bad then return fail(eerr) end
    st.bad_edges = st.bad_edges + bad
    if bad > 0 then self.log(("shingle: %s: %d lines are not 'SRC DST' edges; skipped"):format(path, bad)) end
  end
  local gs, ferr = g:finish()
  if not gs then return fail(ferr) end
  if w then
    local cok, cerr = w:commit()
    if not cok then return nil, cerr end
  end
  for k, v in pairs(st) do gs[k] = v end
  self.stats.graph = gs
  self.times.pages = gs.t_pages
  self.times.links = gs.t_links
  self.times.reading = core.now() - t0 - gs.t_pages - gs.t_links
  return gs
end

--- Trivial similar clusters: for the chosen similarity, and (figure11) for
-- the three chunkings, whose replica histograms are the paper's Figure 11.
-- With similarity "shingles", the pipeline's phases 2 to 4 over the sketches
-- of pages() give them.
function M:trivial()
  local c = self.cfg
  local t0 = core.now()
  self.stats.trivial = {}
  for _, scheme in ipairs(M.schemes) do
    if c.figure11 or scheme == c.similarity then
      local T = (scheme == c.similarity and c.threshold) or M.thresholds[scheme]
      local st, err = core.coll_trivial(self.dir, { scheme = scheme, threshold = T,
        max_df = scheme == "whole" and 0 or c.max_df, memory = c.memory, temp_dir = c.temp_dir })
      if not st then return nil, err end
      st.threshold = T
      self.stats.trivial[scheme] = st
    end
  end
  if c.similarity == "shingles" then
    local p = self:shingle_pipeline()
    for _, step in ipairs({ "dedupe", "pairs", "decide" }) do
      local ok, err = p[step](p)
      if not ok then return nil, err end
    end
    local st, terr = core.coll_trivial(self.dir, { name = "shingles", clusters = p.dir .. "/clusters.bin" })
    if not st then return nil, terr end
    st.threshold = p.cfg.threshold
    self.stats.trivial.shingles = st
  end
  self.times.trivial_clusters = core.now() - t0
  return self.stats.trivial
end

-- The key order of each output (shingle.writer; docs/collections.md).
M.order = {
  collections = { "cluster", "cardinality", "size", "collections", "root", "prefix", "site", "kept", "whole_site",
    "pages", "bytes", "avoid_bytes", "urls" },
  avoid = { "prefix", "site", "whole_site", "root", "mirror_of", "pages", "bytes", "cluster", "cardinality", "size" },
  rollup = { "rank", "url", "kind", "cluster", "collection", "site", "replicas", "cardinality", "hidden", "replica_roots" },
  summary = { "similarity", "extended", "single_site", "start", "graph", "trivial", "grow", "avoid", "phases" },
}

--- collections.jsonl: one similar cluster a line, { cluster, cardinality,
-- size, collections = { { root, prefix, site, kept, whole_site, pages,
-- bytes, avoid_bytes, urls } } }, the collections in order (the kept one
-- first) and each one's URLs row by row (section 3's table of a cluster),
-- keys in that order. Written from the results files (colls.bin,
-- members.bin) through the view; returns true, or nil, err.
-- CSV and TSV: a row per collection (its URLs as a JSON list in the last cell)
M.columns = {
  collections = { "cluster", "cardinality", "size", "root", "prefix", "site", "kept", "whole_site", "pages", "bytes",
    "avoid_bytes", "urls" },
  avoid = { "prefix", "site", "whole_site", "root", "mirror_of", "pages", "bytes", "cluster", "cardinality", "size" },
}
M.rows = {
  collections = function(cl)
    local rows = {}
    for i, c in ipairs(cl.collections) do
      rows[i] = { cluster = cl.cluster, cardinality = cl.cardinality, size = cl.size, root = c.root, prefix = c.prefix,
        site = c.site, kept = c.kept, whole_site = c.whole_site, pages = c.pages, bytes = c.bytes,
        avoid_bytes = c.avoid_bytes, urls = c.urls }
    end
    return rows
  end,
}

--- The files of an output: NAME.jsonl, and NAME.FORMAT with output_format.
function M.outputs(dir, name, fmt)
  local specs = { { path = dir .. "/" .. name .. ".jsonl", format = "jsonl", shape = { order = M.order[name] } } }
  if fmt and fmt ~= "jsonl" then
    specs[2] = { path = dir .. "/" .. writer.file_name(name, fmt), format = fmt,
      shape = { order = M.order[name], columns = M.columns[name], rows = M.rows[name] } }
  end
  return specs
end

function M.write_collections(dir, fmt)
  local view, err = core.coll_view(dir)
  if not view then return nil, err end
  local colls = view:collections()
  local ok, werr = writer.write_files(M.outputs(dir, "collections", fmt), function(w)
    local i = 1
    while i <= #colls do
      local id, j = colls[i].cluster, i
      while j < #colls and colls[j + 1].cluster == id do j = j + 1 end
      local urls = {}
      for _, m in ipairs(view:members(id)) do
        local list = urls[m.collection] or {}
        urls[m.collection] = list
        list[#list + 1] = m.url
      end
      local list = {}
      for k = i, j do
        local c = colls[k]
        list[#list + 1] = { root = c.root_url, prefix = c.prefix, site = c.site, kept = c.kept, whole_site = c.whole_site,
          pages = c.pages, bytes = c.bytes, avoid_bytes = c.avoid_bytes, urls = urls[c.index] or writer.array() }
      end
      w:write({ cluster = id, cardinality = j - i + 1, size = colls[i].cluster_size, collections = list })
      i = j + 1
    end
  end)
  view:close()
  if not ok then return nil, werr end
  return true
end

--- Grow the trivial clusters into similar clusters of collections (Figure 9).
function M:grow()
  local c = self.cfg
  local st, err = core.coll_grow(self.dir, { trivial = c.similarity, extended = c.extended,
    single_site = c.single_site, start = c.start, min_cardinality = c.min_cardinality, min_size = c.min_size,
    memory = c.memory, temp_dir = c.temp_dir })
  if not st then return nil, err end
  self.times.link_summary = st.t_summary
  self.times.growing = st.t_regain
  self.times.report = st.t_report
  self.stats.grow = st
  local view, verr = core.coll_view(self.dir)
  if not view then return nil, verr end
  for _, t in ipairs(st.top) do t.root_url = view:page(t.root).url end
  view:close()
  local t0 = core.now()
  local ok, werr = M.write_collections(self.dir, c.output_format)
  if not ok then return nil, werr end
  self.times.report = (self.times.report or 0) + core.now() - t0
  return st
end

--- The crawler's avoid list (section 5.1): for every similar cluster whose
-- collections have at least min_size pages (the paper's noise clusters have
-- fewer than 10), the collections other than the one seen first, as site and
-- URL prefix, with the pages and bytes a crawler saves by skipping them.
-- Returns entries, totals.
function M.avoid_list(dir, opts)
  opts = opts or {}
  local min_size = opts.min_size or 10
  local view, err = core.coll_view(dir)
  if not view then return nil, err end
  local colls = view:collections()
  local kept, card = {}, {}
  for _, c in ipairs(colls) do
    card[c.cluster] = (card[c.cluster] or 0) + 1
    if c.kept then kept[c.cluster] = c end
  end
  local out, total = {}, { pages = 0, bytes = 0, entries = 0, sites = 0 }
  local seen_site = {}
  for _, c in ipairs(colls) do
    local k = kept[c.cluster]
    if not c.kept and k and k.pages >= min_size and card[c.cluster] >= (opts.min_cardinality or 2) then
      out[#out + 1] = { cluster = c.cluster, cardinality = card[c.cluster], size = k.pages, site = c.site,
        prefix = c.prefix, whole_site = c.whole_site, root = c.root_url, mirror_of = k.root_url,
        pages = c.avoid_pages, bytes = c.avoid_bytes }
      total.pages = total.pages + c.avoid_pages
      total.bytes = total.bytes + c.avoid_bytes
      if c.whole_site and not seen_site[c.site] then seen_site[c.site] = true; total.sites = total.sites + 1 end
    end
  end
  total.entries = #out
  local all = 0
  for i = 1, view:npages() do all = all + view:page(i).bytes end
  total.crawled_bytes = all
  view:close()
  return out, total
end

--- Roll up a ranked list of result URLs (section 5.2): one entry per similar
-- cluster of collections (its first-ranked page shown; the other result
-- pages of the same collection, and those of its replica collections,
-- hidden), one per set of replicated pages outside any cluster, and the
-- other URLs as they are. Each entry: { rank, url, kind = "collection" |
-- "replicas" | "page", cluster, cardinality, hidden = { collection = {...},
-- replicas = {...} }, replica_roots = {...} (the other collections' roots) }.
function M.rollup(dir, urls, opts)
  opts = opts or {}
  local view, err = core.coll_view(dir)
  if not view then return nil, err end
  local info = view:lookup(urls)
  local by_key, out, roots = {}, {}, nil
  for rank, url in ipairs(urls) do
    local p = info[rank]
    local key, kind
    if p and p.cluster then key, kind = "c" .. p.cluster, "collection"
    elseif p and p.replicas > 0 then key, kind = "t" .. p.trivial, "replicas"
    else key, kind = "u" .. url, "page" end
    local e = by_key[key]
    if not e then
      e = { rank = rank, url = url, kind = kind, cluster = p and p.cluster or nil,
        collection = p and p.collection or nil, site = p and p.site or nil,
        replicas = p and p.replicas or 0, hidden = { collection = {}, replicas = {} } }
      by_key[key] = e
      out[#out + 1] = e
    elseif kind == "collection" and p.collection == e.collection then
      table.insert(e.hidden.collection, { rank = rank, url = url })
    elseif kind ~= "page" then
      table.insert(e.hidden.replicas, { rank = rank, url = url })
    end
  end
  if opts.replica_roots ~= false then
    for _, e in ipairs(out) do
      if e.kind == "collection" then
        roots = roots or view:collections()
        e.replica_roots = {}
        for _, c in ipairs(roots) do
          if c.cluster == e.cluster then
            e.cardinality = (e.cardinality or 0) + 1
            if c.index ~= e.collection then table.insert(e.replica_roots, c.root_url) end
          end
        end
      end
    end
  end
  view:close()
  return out
end

function M:summary()
  local s = self.stats
  return { graph = s.graph, trivial = s.trivial, grow = s.grow, avoid = s.avoid, phases = self.times,
    similarity = self.cfg.similarity, extended = self.cfg.extended, anchored = self.cfg.anchored,
    paper = self.cfg.paper, single_site = self.cfg.single_site, start = self.cfg.start }
end

--- summary.json and avoid.jsonl.
function M:report()
  local entries, total = M.avoid_list(self.dir, { min_size = self.cfg.avoid_min_size })
  if not entries then return nil, total end
  self.stats.avoid = total
  local ok, err = writer.write_files(M.outputs(self.dir, "avoid", self.cfg.output_format), function(w)
    for _, e in ipairs(entries) do w:write(e) end
  end)
  if not ok then return nil, err end
  local sum = self:summary()
  ok, err = writer.write_json(self.dir .. "/summary.json", sum, M.order.summary)
  if not ok then return nil, err end
  return sum
end

--- Everything, from the inputs to the report, written beside the output
-- directory and put in its place only when complete (shingle.util.output:
-- outdir holds the previous finished run or this one, never a mix; a lock
-- keeps two runs apart). Inputs that do not exist or hold no page are an
-- error that leaves outdir as it was.
function M:run(inputs)
  inputs = input.inputs(inputs) -- a path, a function or a list
  local final = self.dir
  local o, oerr = util.output(final, { kind = "collections run", marker = "summary.json",
    log = function(msg) self.log("shingle: " .. msg) end })
  if not o then return nil, oerr end
  self.dir = o.dir
  local sum, err = self:pages(inputs)
  if sum and (sum.pages or 0) == 0 then
    sum, err = nil, ("no pages in %s"):format(require("shingle.pipeline").describe_inputs(inputs))
  end
  if sum then sum, err = self:trivial() end
  if sum then sum, err = self:grow() end
  if sum then sum, err = self:report() end
  self.dir = final
  if self.shingles then self.shingles.dir = final .. "/shingles" end
  if not sum then o:abort(); return nil, util.unstage(err, o) end
  local ok, cerr = o:commit()
  if not ok then return nil, cerr end
  return sum
end

--- Figure 11 as text: pages by number of replicas, per similarity.
function M:figure11()
  local t = self.stats.trivial or {}
  local cols = {}
  for _, name in ipairs({ "whole", "lines4", "lines2", "shingles" }) do if t[name] then cols[#cols + 1] = name end end
  local lines = { ("%-10s"):format("replicas") }
  for _, name in ipairs(cols) do lines[1] = lines[1] .. ("%17s"):format(name .. (name ~= "whole" and name ~= "shingles" and ("/T" .. t[name].threshold) or "")) end
  for b, label in ipairs(M.replica_bins) do
    local row = ("%-10s"):format(label)
    for _, name in ipairs(cols) do
      local h, all = t[name].replicas, 0
      for _, v in ipairs(h) do all = all + v end
      row = row .. ("%17s"):format(("%d (%.0f%%)"):format(h[b], all > 0 and 100 * h[b] / all or 0))
    end
    lines[#lines + 1] = row
  end
  return table.concat(lines, "\n")
end

--- Table 2 as text: the largest clusters by cardinality.
function M:table2(n)
  local g = self.stats.grow or { top = {} }
  local lines = { ("%4s  %11s  %6s  %s"):format("rank", "cardinality", "size", "root of the first collection") }
  for i, t in ipairs(g.top) do
    if i > (n or 5) then break end
    lines[#lines + 1] = ("%4d  %11d  %6d  %s"):format(i, t.cardinality, t.size, t.root_url)
  end
  return table.concat(lines, "\n")
end

M.phase_names = { "reading", "pages", "links", "trivial_clusters", "link_summary", "growing", "report" }

function M:phase_table()
  return util.format_phases(M.phase_names, self.times)
end

return M
