--- The persistent index and its queries ("Query support", "On the fly
-- resemblance", "Lost and found", "Characterizing how pages change over time"
-- in "Syntactic Clustering of the Web"). The store is LMDB (core/index.h):
-- many processes read while one adds a sweep in one transaction.
--
--   local index = require "shingle.index"
--   local ix = assert(index.open("crawl.idx"))
--   ix:add({ "sweep1.warc.gz" }, { sweep = "2026-11-01" })
--   ix:similar(text)          ix:cluster_of(url)       ix:lost(url)
--   ix:changes("2026-11-01", "2026-11-08")
local shingle = require "shingle"
local core = require "shingle.core"
local input = require "shingle.input"
local cjson = require "cjson"

local M = {}

-- The key order of the queries' JSON (shingle.writer): hits, clusters and
-- their members, lost and found, changes between sweeps.
M.order = { "id", "url", "sweep", "cluster", "of", "relation", "size", "resemblance", "containment", "contained",
  "members", "from", "to", "identical", "small_change", "large_change", "moved_within_server", "moved_between_servers",
  "born", "died", "histogram", "changed", "moves", "within_server", "gone" }
local Index = {}
Index.__index = Index

-- What a new index is made with, unless the first add says otherwise: the
-- clustering defaults of the paper (w = 10, MOD_25, resemblance >= 0.5).
M.defaults = {
  w = 10, k = 64, sketch = "mod", s = 200, m = 25, option = "B", tokens = "rabin",
  fold = false, punctuation = false, numbers = true, invalid = "latin1",
  policy = "resemblance", threshold = 0.5, max_df = 0,
  floor = require("shingle.options").defaults.floor, -- MOD's floor (20), recorded since 2026-11-23
}
-- The MOD floor of an index that does not record one: 8, the default of
-- every version that did not record it, so its later adds and its queries
-- are sketched as its documents were (the C API's shingle_index_shingler
-- says the same: docs/capi.md).
M.unrecorded_floor = 8
-- (an index records its max_df, and that is its queries' default cutoff:
-- Index:similar, `shingle similar`, the server's /similar; 0: every
-- candidate is looked at)
-- a new index may take a named rule set or a rules file (canon) or an extractor,
-- stored by name: a rule set given as a Lua value cannot be stored

-- Whether this process may open path for reading and writing.
local function writable(path)
  local f = io.open(path, "r+b")
  if f then f:close() return true end
  return false
end

--- The message for an index that could not be opened: when permissions are
-- the cause, the file that could not be opened and what to do. LMDB's
-- readers too write their slot in lock.mdb, so a reader running as another
-- user (a web server's worker) needs write access to it (and to the
-- directory, for LMDB to make it), though not to data.mdb.
function M.explain_open_error(path, err, readonly)
  if not tostring(err):find("Permission denied", 1, true) then return err end
  local lfs = require "lfs"
  local lock, data = path .. "/lock.mdb", path .. "/data.mdb"
  local user = os.getenv("USER") or os.getenv("LOGNAME") or "this user"
  if lfs.attributes(data, "mode") and not io.open(data, "rb") then
    return ("cannot read %s (permission denied): give %s read access to the index, e.g. chmod -R a+rX %s"):format(
      data, user, path)
  end
  if readonly and lfs.attributes(lock, "mode") and not writable(lock) then
    return ("cannot open %s for writing (permission denied): LMDB's readers write their slot in the lock file, so "
      .. "a reader running as another user (a web server's worker) needs write access to it, though not to data.mdb: "
      .. "chmod a+w %s, or give it to that user's group (chgrp GROUP %s; chmod g+w %s); `shingle serve` does this "
      .. "for its workers"):format(lock, lock, lock, lock)
  end
  if not lfs.attributes(lock, "mode") then
    return ("cannot create %s (permission denied): the index directory must be writable by the first user that "
      .. "opens it, or hold a lock.mdb writable by this one (chmod a+w %s after one open by its owner)"):format(lock, lock)
  end
  return ("cannot open %s for writing (permission denied): adding to an index needs write access to %s and %s"):format(
    path, data, lock)
end

--- index.open(path [, { readonly = bool, create = bool, map_size = bytes }]) -> index, or nil, err
function M.open(path, opts)
  opts = opts or {}
  -- the command line's last word should LMDB fail on a damaged page (core.crash_guard)
  core.crash_context(("reading the index %s, which may be damaged: check it with `shingle index check %s` "
    .. "(docs/robustness.md, \"Index\")"):format(path, path))
  local ix, err = core.index(path, { readonly = opts.readonly, create = opts.create ~= false and not opts.readonly,
    map_size = opts.map_size })
  if not ix then return nil, M.explain_open_error(path, err, opts.readonly) end
  local self = setmetatable({ ix = ix, path = path }, Index)
  local conf = ix:get("user.config")
  if conf then
    local ok, c = pcall(cjson.decode, conf)
    if not ok or type(c) ~= "table" then return nil, path .. ": the stored configuration is corrupt" end
    if c.floor == nil then c.floor = M.unrecorded_floor end
    self.config = c
  end
  return self
end

function Index:close() self.ix:close() end

local function read_done(self, ok, ...)
  self.ix:read_end()
  if not ok then error((...), 0) end
  return ...
end

--- Index:read(f, ...): f(...) with every query of this index reading one
-- snapshot (one LMDB read transaction), whatever writers commit meanwhile;
-- returns what f returns. f must not yield (a web handler calls it after
-- reading the request body), and reads nest.
function Index:read(f, ...)
  local ok, err = self.ix:read_begin()
  if not ok then return nil, err end
  return read_done(self, pcall(f, ...))
end

--- The shinglers (text, HTML) the index's sketches were made with: those of
-- its stored configuration (shingle.sketcher.shinglers), made once per handle.
function Index:shinglers()
  if not self.text then
    local c = assert(self.config, "the index is empty: add documents first")
    self.text, self.html, self.extractor = require("shingle.sketcher").shinglers(c)
  end
  return self.text, self.html
end

-- Begin one sweep's write transaction: checks and records the
-- configuration; returns the adder, a sketcher and the function that
-- abandons the add (or nil, err).
local function begin_add(self, opts, level)
  if type(opts.sweep) ~= "string" or opts.sweep == "" then
    error("index add needs a sweep name (e.g. the crawl date: --sweep 2026-11-01)", level + 1)
  end
  local fresh = self.config == nil
  if fresh then
    local c = {}
    for k, v in pairs(M.defaults) do c[k] = v end
    for k, v in pairs(opts) do
      if M.defaults[k] ~= nil or k == "seed" or k == "canon" or k == "extractor" then c[k] = v end
    end
    if (c.canon ~= nil and type(c.canon) ~= "string") or (c.extractor ~= nil and type(c.extractor) ~= "string") then
      error("an index stores its rule set and extractor by name or path: give canon and extractor as strings", level + 1)
    end
    self.config = c
  else
    for _, k in ipairs({ "policy", "threshold", "w", "sketch", "m", "s", "k", "option", "tokens", "fold", "punctuation",
      "numbers", "invalid", "seed", "canon", "extractor", "floor" }) do
      if opts[k] ~= nil and opts[k] ~= self.config[k] then
        return nil, ("%s was made with %s = %s; an add cannot change it (the clusters would no longer equal a fresh clustering)")
          :format(self.path, k, tostring(self.config[k]))
      end
    end
  end
  local c = self.config
  local sok, text, html = pcall(self.shinglers, self)
  if not sok then if fresh then self.config = nil end return nil, text end
  -- (chunk: how many sketch values an add into an index with postings holds back at most, core/index.h;
  -- counts = false, check_counts, pairs_sorted, pairs_small: how candidate pairs are decided, sh_index_set_test;
  -- merge = "always" or "never": whether the commit merges the delta postings; prelook: the postings
  -- searched ahead on a thread whatever the batch's size; for tests)
  local adder, err = self.ix:begin(opts.sweep, shingle.unwrap(text), { policy = c.policy, threshold = c.threshold,
    max_df = c.max_df, chunk = opts.chunk, counts = opts.counts, check_counts = opts.check_counts,
    pairs_sorted = opts.pairs_sorted, pairs_small = opts.pairs_small, merge = opts.merge, prelook = opts.prelook })
  if not adder then if fresh then self.config = nil end return nil, err end
  if fresh then adder:set("user.config", cjson.encode(c)) end
  local sk = require("shingle.sketcher").new(text, html, { threads = opts.threads, extractor = self.extractor,
    max_shingles = opts.max_shingles, config = c, on_error = opts.on_error })
  local function abandon()
    adder:abort()
    if fresh then self.config, self.text, self.html = nil, nil, nil end
  end
  return adder, sk, abandon
end

-- Add docs, sketched (res: the sketcher's results), with adder. Returns, in
-- the order of docs, the new id of each document or the message why it could
-- not be sketched (out[i] = { id = n } or { error = msg }); nil, err when the
-- add itself failed.
local function add_results(adder, res, docs, sweep)
  local out, batch, slot = {}, {}, {}
  for i, d in ipairs(res) do
    if d.fatal then return nil, d.error end
    local url = docs[i].url
    if d.error then
      out[i] = { error = d.error }
    elseif type(url) ~= "string" or url == "" then
      -- documents are found again by URL: one without is a problem of its own
      out[i] = { error = ("a document without a URL (%s): an index keys documents by URL; give each a url"):format(
        type(url) == "string" and "empty" or type(url)) }
    else
      batch[#batch + 1] = { url = docs[i].url, sketch = d.sketch, raw = d.raw, canonical = d.canonical }
      slot[#batch] = i
    end
  end
  if #batch > 0 then
    local ids, err = adder:add(batch)
    if not ids then return nil, err end
    for k, id in ipairs(ids) do
      -- a sweep holds one version of a URL (core/index.h): the same content
      -- again keeps its id, other content is refused
      out[slot[k]] = id and { id = id } or { error = ("%s is already in sweep %s with other content; a sweep holds "
        .. "one version of a URL: add it to another sweep"):format(batch[k].url, sweep) }
    end
  end
  return out
end

local function add_batch(adder, sk, docs, sweep)
  return add_results(adder, sk:batch(docs), docs, sweep)
end

--- Add the documents of inputs as one sweep, all or nothing. opts: sweep
-- (required), threads, batch, format, html, fields, strict, progress (a
-- function of the count added so far), and for a new index the shingler
-- options and policy, threshold, max_df (M.defaults). Problems follow
-- shingle.input's one policy: an unreadable input, a broken record or a
-- document that cannot be sketched is skipped, counted in stats.skipped and
-- described in stats.errors; with strict the first one abandons the add.
-- Returns stats, or nil, err.
function Index:add(inputs, opts)
  inputs = input.inputs(inputs) -- a path, a function or a list
  opts = opts or {}
  local adder, sk, abandon = begin_add(self, opts, 2)
  if not adder then return nil, sk end
  local stats = { documents = 0, skipped = 0, errors = {} }
  local r = input.reader{ format = opts.format, html = opts.html, fields = opts.fields, batch = opts.batch,
    max_bytes = opts.max_bytes,
    strict = opts.strict, warn = function(msg) stats.errors[#stats.errors + 1] = msg end }
  local function write(docs, res)
    local out, aerr = add_results(adder, res, docs, opts.sweep)
    if not out then return nil, aerr end
    for _, d in ipairs(out) do
      if d.error then
        local pok, perr = r:problem("documents", d.error)
        if not pok then return nil, perr end
      else
        stats.documents = stats.documents + 1
      end
    end
    if opts.progress then opts.progress(stats.documents) end
    return true
  end
  -- a batch is sketched on the pool's threads while this thread writes the
  -- one before it to the index and reads the one after
  local pending
  local ok, rerr = r:each(inputs, function(docs)
    local prev = pending
    local res = prev and sk:finish(prev.job)
    pending = { docs = docs, job = sk:start(docs) }
    if prev then return write(prev.docs, res) end
    return true
  end)
  if pending then
    local res = sk:finish(pending.job) -- (after a failure too: the pool's threads read its documents)
    if ok then ok, rerr = write(pending.docs, res) end
  end
  if not ok then abandon() return nil, rerr end
  stats.skipped = r:total_skipped()
  if stats.documents == 0 then
    -- inputs without any document are an error, as for shingle cluster
    abandon()
    return nil, ("no documents to add in %s%s"):format(require("shingle.pipeline").describe_inputs(inputs),
      stats.skipped > 0 and (" (%d skipped)"):format(stats.skipped) or "")
  end
  local st, cerr = adder:commit()
  if not st then return nil, cerr end
  for k, v in pairs(st) do stats[k] = v end
  -- documents: those this add put in the index
  stats.documents = st.added
  return stats
end

--- Add the documents of a finished cluster run (its directory dir) as one
-- sweep, with the sketches the run made instead of sketching them again
-- (`shingle cluster --index`): document i of the run with the URL urls[i],
-- for i = 1..n (n: the run's documents; a document without a URL, or one
-- the run could not sketch, is left out). The run must be made with the
-- index's shingler (the options are checked as for add). opts: sweep, and
-- for a new index the shingler options, policy, threshold, max_df. Returns
-- stats as add does, or nil, err.
function Index:add_run(dir, urls, n, opts)
  opts = opts or {}
  local adder, sk, abandon = begin_add(self, opts, 2)
  if not adder then return nil, sk end
  local _ = sk
  local added, err = adder:add_run(dir, urls, n)
  if not added then abandon() return nil, err end
  if added == 0 then
    abandon()
    return nil, ("no documents to add from the run %s"):format(dir)
  end
  local st, cerr = adder:commit()
  if not st then return nil, cerr end
  local stats = { skipped = n - added, errors = {} }
  for k, v in pairs(st) do stats[k] = v end
  stats.documents = st.added
  return stats
end

--- Add documents held in memory, { { url = u, text = s [, html = bool] }, ... },
-- to a sweep in one write transaction (what a server does with the documents
-- posted to it in a short while). opts: sweep (required), threads, and for a
-- new index as for add. Returns the list of { id = n } or { error = msg } in
-- the order of docs (a document that cannot be sketched is skipped, not the
-- rest) and the stats of the commit; or nil, err when nothing was added.
function Index:add_documents(docs, opts)
  opts = opts or {}
  local list = {}
  for i, d in ipairs(docs) do
    if type(d.url) ~= "string" or type(d.text) ~= "string" then
      error(("document %d: give { url = string, text = string }"):format(i), 2)
    end
    list[i] = { url = d.url, text = d.text, html = input.is_html(nil, d.text, d.html) }
  end
  local adder, sk, abandon = begin_add(self, opts, 2)
  if not adder then return nil, sk end
  local out, err = add_batch(adder, sk, list, opts.sweep)
  if not out then abandon() return nil, err end
  local st, cerr = adder:commit()
  if not st then return nil, cerr end
  return out, st
end

local function with_doc(self, hits)
  for _, h in ipairs(hits) do
    local d, err = self.ix:doc(h.id)
    if not d then return nil, err end
    h.url, h.sweep, h.cluster = d.url, d.sweep, d.cluster
  end
  return hits
end

--- On-the-fly resemblance: documents of the index similar to text (a string
-- never indexed, or { url = u } for a stored document). opts: threshold
-- (0.5), top (10), policy (which documents pass the threshold: resemblance,
-- containment (the larger of both directions), either or both; by default
-- containment with the containment flag, else resemblance), containment
-- (rank by the larger containment), html.
function Index:similar(x, opts)
  opts = opts or {}
  local text, html = self:shinglers()
  local sk, err
  if type(x) == "table" and x.url then
    local ids = self.ix:url_docs(x.url)
    if #ids == 0 then return nil, ("%s is not in the index %s"):format(x.url, self.path) end
    local _, s = self.ix:doc(ids[#ids])
    sk = s
  elseif type(x) == "string" then
    local h = input.is_html(nil, x, opts.html)
    if self.extractor then
      sk, err = require("shingle.extractors").sketch(self.extractor, shingle.unwrap(text), x)
    else
      sk, err = (h and html or text):sketch(x)
    end
    if not sk then return nil, err end
    if #sk == 0 then
      return nil, "the document has no shingles to look up (it is empty, or shorter than the sketch samples): nothing to compare"
    end
  else
    error("similar() takes a text or { url = ... }", 2)
  end
  local hits, herr = self.ix:similar(sk, { threshold = opts.threshold or 0.5, top = opts.top or 10,
    policy = opts.policy, containment = opts.containment, max_df = opts.max_df or self:query_max_df() })
  if not hits then return nil, herr end
  return with_doc(self, hits)
end

--- The cutoff a query uses without max_df: the one the index was made with
-- (values held by more documents are not looked up).
--- Index:filter_start([opts]): build this handle's postings filter in a
-- thread of its own (a few seconds, ~1.6 bytes a posting, kept until the
-- handle closes); once built, Index:similar leaves out, from memory, the
-- values no document has instead of searching the postings for each
-- (core/ixfilter.c). opts.cache = bytes: also the postings cache, when it
-- fits in them (core/ixcache.c: at most ~13 bytes a posting), so that the
-- values that are keys are found in memory too. For a server's long-lived
-- handles. true, or nil, err.
function Index:filter_start(opts)
  local cache = opts and opts.cache or 0
  if type(cache) ~= "number" or cache < 0 or cache % 1 ~= 0 then
    error("Index:filter_start: cache must be a whole number of bytes >= 0", 2)
  end
  return self.ix:filter_start(cache)
end

--- Index:filter(): { started, ready, bytes, capacity, covers, tested, skipped, error,
-- cache } of the postings filter (covers: the documents it holds the values
-- of, the first ones added; tested, skipped: sketch values queries asked it
-- about, and left out); cache, when one was asked for: { bytes, keys, covers,
-- found, looked_up, note } (found: values it answered; looked_up: values
-- searched in the postings beside it, those documents added since may have;
-- note: why there is none).
function Index:filter() return self.ix:filter() end

--- Index:filter_take(): waits for the filter and cache this handle started
-- (filter_start) and takes them from it (its queries go without from then
-- on), for other handles of the same index: in this process, or in
-- processes forked from it, which then share their memory (a server's
-- workers: shingle.http.preload). aids, or nil, err.
function Index:filter_take() return self.ix:filter_take() end

--- Index:filter_use(aids): this handle's queries use the filter and cache
-- another handle of the same index built (filter_take), as if they were its
-- own; documents added since are added to the filter as queries meet them
-- and searched for beside the cache. Instead of filter_start. true, or nil,
-- err (another index, or this handle has a filter already).
function Index:filter_use(aids) return self.ix:filter_use(aids) end

function Index:query_max_df()
  local c = self.config or M.defaults
  return c.max_df or M.defaults.max_df
end

local function by_sweep_then_id(a, b)
  if a.sweep ~= b.sweep then return a.sweep > b.sweep end
  return a.id < b.id
end

-- The members of cluster c, the most recent sweep first; with limit, only
-- the first limit of them (and the size of the cluster).
local function members_of(self, c, limit)
  local ids = self.ix:cluster_docs(c)
  local members = {}
  for _, m in ipairs(ids) do
    local md = self.ix:doc(m)
    members[#members + 1] = { id = m, url = md.url, sweep = md.sweep, relation = md.relation }
  end
  table.sort(members, by_sweep_then_id)
  if limit and #members > limit then
    for k = #members, limit + 1, -1 do members[k] = nil end
  end
  return members, #ids
end

--- The cluster of a URL: { cluster = id, members = { { id, url, sweep, relation } } },
-- one entry per stored version of the URL (the latest first).
function Index:cluster_of(url)
  local ids = self.ix:url_docs(url)
  if #ids == 0 then return nil, ("%s is not in the index %s"):format(url, self.path) end
  local out, seen = {}, {}
  for k = #ids, 1, -1 do
    local d = self.ix:doc(ids[k])
    if not seen[d.cluster] then
      seen[d.cluster] = true
      out[#out + 1] = { cluster = d.cluster, of = ids[k], sweep = d.sweep, members = (members_of(self, d.cluster)) }
    end
  end
  return out
end

--- The cluster of document id (as the add returned it): { cluster, size,
-- relation (of the document to the cluster's earlier copy), members (at most
-- limit, the most recent sweep first) }.
function Index:document_cluster(id, limit)
  local d = self.ix:doc(id)
  local members, size = members_of(self, d.cluster, limit)
  return { cluster = d.cluster, relation = d.relation, size = size, members = members }
end

--- Whether some version of url is stored.
function Index:has_url(url)
  return #self.ix:url_docs(url) > 0
end

--- Lost and found: for a URL that is gone or changed, the URLs of documents in
-- its cluster, the most recent sweep first ("we can find the most recent
-- version of the document ... in the cluster").
function Index:lost(url)
  local cl, err = self:cluster_of(url)
  if not cl then return nil, err end
  local found, seen = {}, {}
  for _, c in ipairs(cl) do
    for _, m in ipairs(c.members) do
      if m.url ~= url and not seen[m.url] then
        seen[m.url] = true
        found[#found + 1] = m
      end
    end
  end
  table.sort(found, by_sweep_then_id)
  return found
end

local function host(url)
  return (url:match("^%a[%w+.-]*://([^/?#]*)") or ""):lower()
end

--- How pages changed between two sweeps: for URLs in both, the resemblance of
-- the new version to the old (identical, small change at resemblance >= small,
-- large change); pages that moved (same canonical content at a new URL,
-- within a server or between servers); pages born and pages that died
-- (r.gone: their URLs).
function Index:changes(from, to, opts)
  opts = opts or {}
  local small = opts.small or 0.5
  local a, aerr = self.ix:sweep_docs(from)
  if not a then return nil, aerr end
  local b, berr = self.ix:sweep_docs(to)
  if not b then return nil, berr end
  -- a sweep as parallel arrays (URL, raw and canonical fingerprints by
  -- position; position by URL; for the later sweep, positions by canonical
  -- fingerprint: a number, or a list when several): about 200 bytes a
  -- document, so two sweeps of a million fit in a few hundred MB. Sketches
  -- are read again only for the URLs whose bytes changed.
  local function load(ids, with_content)
    local s = { ids = ids, urls = {}, raw = {}, canon = {}, pos = {}, content = with_content and {} or nil }
    for i, id in ipairs(ids) do
      local d = self.ix:doc(id)
      s.urls[i], s.raw[i], s.canon[i] = d.url, d.raw, d.canonical
      s.pos[d.url] = i
      if with_content then
        local c = s.content[d.canonical]
        if c == nil then s.content[d.canonical] = i
        elseif type(c) == "number" then s.content[d.canonical] = { c, i }
        else c[#c + 1] = i end
      end
    end
    return s
  end
  local function sketch(id) local _, sk = self.ix:doc(id) return sk end
  local old = load(a, false)
  local new = load(b, true)
  local r = { from = from, to = to, identical = 0, small_change = 0, large_change = 0,
    moved_within_server = 0, moved_between_servers = 0, born = 0, died = 0,
    histogram = {}, moves = {}, changed = {}, gone = {} }
  for i = 0, 9 do r.histogram[i + 1] = 0 end
  local moved_to = {}
  for i, url in ipairs(old.urls) do
    local j = new.pos[url]
    if j then
      local same = old.raw[i] == new.raw[j]
      local res = same and 1 or sketch(old.ids[i]):resemblance(sketch(new.ids[j]))
      if same then r.identical = r.identical + 1
      elseif res >= small then r.small_change = r.small_change + 1
      else r.large_change = r.large_change + 1 end
      local bin = math.min(10, math.floor(res * 10) + 1)
      r.histogram[bin] = r.histogram[bin] + 1
      if not same then r.changed[#r.changed + 1] = { url = url, resemblance = res } end
    else
      local c = new.content[old.canon[i]]
      local target
      for _, k in ipairs(type(c) == "number" and { c } or c or {}) do
        local cand = new.urls[k]
        if not old.pos[cand] and not moved_to[cand] then target = cand; break end
      end
      if target then
        moved_to[target] = true
        local within = host(url) == host(target)
        if within then r.moved_within_server = r.moved_within_server + 1
        else r.moved_between_servers = r.moved_between_servers + 1 end
        r.moves[#r.moves + 1] = { from = url, to = target, within_server = within }
      else
        r.died = r.died + 1
        r.gone[#r.gone + 1] = url
      end
    end
  end
  for _, url in ipairs(new.urls) do
    if not old.pos[url] and not moved_to[url] then r.born = r.born + 1 end
  end
  table.sort(r.moves, function(x, y) return x.from < y.from end)
  table.sort(r.changed, function(x, y) return x.url < y.url end)
  table.sort(r.gone)
  return r
end

function Index:sweeps() return self.ix:sweeps() end
function Index:count() return self.ix:count() end

--- Index:merge(): merge the delta tables (the postings and fingerprints of
-- the adds since the last merge, core/index.c "postings and delta") into
-- their tables now, in one transaction; adds do it when a delta table holds
-- a quarter of its table. Returns { postings, fingerprints } (entries moved),
-- or nil, err (read-only, LMDB).
function Index:merge() return self.ix:merge() end

return M
