--- The report of a `shingle cluster` run: Broder et al.'s Status table and
-- phase times, the distribution of cluster sizes, the resemblance and
-- containment of linked pairs against the threshold, the run's parameters,
-- the largest clusters and a sample of mid-size ones, and pairs of documents
-- side by side with their shared passages (shingle.explain).
--
-- clusters.jsonl and pairs.jsonl are streamed once each: only counts,
-- histograms, the byte offsets of the clusters kept for display and a few
-- candidate pairs stay in memory, whatever the size of the run.
local cjson = require "cjson"
local html = require "shingle.html"
local plot = require "shingle.plot"
local report = require "shingle.report"

local M = {}
local esc, num = html.escape, html.num

-- The paper's Status table (CPU-days for 30 million documents), as shares.
local paper_days = { sketching = 4.6, duplicate_elimination = 0.3, shingle_merging = 1.7, pair_formation = 0.7,
  pair_merging = 2.6, cluster_formation = 0.5 }
local paper_share = {}
do
  local total = 0
  for _, d in pairs(paper_days) do total = total + d end
  for k, d in pairs(paper_days) do paper_share[k] = d / total end
end
M.phase_names = { "sketching", "duplicate_elimination", "shingle_merging", "pair_formation", "pair_merging",
  "cluster_formation", "report" }
M.phase_labels = { sketching = "Sketching", duplicate_elimination = "Duplicate elimination",
  shingle_merging = "Shingle merging", pair_formation = "ID-ID pair formation", pair_merging = "ID-ID merging",
  cluster_formation = "Cluster formation", report = "Report (JSON Lines)" }

M.size_bands = { { 2, 2 }, { 3, 9 }, { 10, 99 }, { 100, 999 }, { 1000, math.huge } }

-- the log2 band of a cluster size, for the stratified sample of mid-size clusters
local function band(size)
  local b = 0
  while size > 1 do size = math.floor(size / 2); b = b + 1 end
  return b
end

--- Stream clusters.jsonl: the histogram of sizes, the Status counts, the
-- places of the largest clusters and of a sample per size band.
function M.scan_clusters(dir, o)
  local path = dir .. "/clusters.jsonl"
  local rand = report.rng(o.seed)
  local st = { by_size = {}, clusters = 0, docs = 0, identical_only = 0, identical_only_docs = 0, largest = 0 }
  local top = report.top(o.top, function(x, y) return x.size > y.size end)
  local bands = {} -- per log2 band of sizes: a reservoir
  local ok, err = report.each_line(path, function(line, offset, lineno)
    -- the size and the representatives without decoding the members (a
    -- relation is a key of members only)
    local size = report.field(line, "size")
    local reps, loose
    if size then
      reps = report.occurrences(line, '"relation":"similar"')
      loose = line:find('"relation":"lexical"', 1, true) or line:find('"relation":"shingle"', 1, true)
    else
      local dok, c = pcall(cjson.decode, line)
      if not dok or type(c) ~= "table" or type(c.members) ~= "table" then
        return nil, ("%s line %d: not a cluster record (%s); run shingle cluster again"):format(path, lineno,
          dok and "no members" or tostring(c))
      end
      size, reps = #c.members, 0
      for _, m in ipairs(c.members) do
        if m.relation == "similar" then reps = reps + 1 end
        if m.relation == "lexical" or m.relation == "shingle" then loose = true end
      end
    end
    st.clusters = st.clusters + 1
    st.docs = st.docs + size
    st.by_size[size] = (st.by_size[size] or 0) + 1
    if size > st.largest then st.largest = size end
    -- as the summary counts them: one representative and its exact copies
    if reps <= 1 and not loose then
      st.identical_only = st.identical_only + 1
      st.identical_only_docs = st.identical_only_docs + size
    end
    local rec = { size = size, offset = offset, length = #line, lineno = lineno }
    top:offer(rec)
    if size >= 3 then
      local b = band(size)
      bands[b] = bands[b] or report.reservoir(o.sample, rand)
      bands[b]:offer(rec)
    end
    return true
  end, "is the run finished?")
  if not ok then return nil, err end
  -- mid-size: from the size bands in turn, smallest first, never one of the largest
  local in_top = {}
  for _, r in ipairs(top.list) do in_top[r.lineno] = true end
  local order = {}
  for b in pairs(bands) do order[#order + 1] = b end
  table.sort(order)
  local mid, more = {}, true
  while #mid < o.sample and more do
    more = false
    for _, b in ipairs(order) do
      local list = bands[b].list
      for i = #list, 1, -1 do if in_top[list[i].lineno] then table.remove(list, i) end end
      if #list > 0 and #mid < o.sample then
        mid[#mid + 1] = table.remove(list, rand(#list))
        more = true
      end
    end
  end
  table.sort(mid, function(x, y) if x.size ~= y.size then return x.size > y.size end return x.lineno < y.lineno end)
  st.top, st.mid = top.list, mid
  return st
end

local function is_cluster(c) return type(c.members) == "table" end

M.bins = 50

local function clamp01(x) return math.max(0, math.min(1, x)) end

--- Stream pairs.jsonl: histograms of resemblance and of containment (the
-- larger of the two directions) of the linked pairs, exact scores where the
-- run verified them, and candidate pairs to show side by side.
function M.scan_pairs(dir)
  local path = dir .. "/pairs.jsonl"
  local st = { n = 0, exact = 0, res = {}, con = {}, candidates = {} }
  for i = 1, M.bins do st.res[i], st.con[i] = 0, 0 end
  local function bin(x) return math.min(M.bins, math.floor(clamp01(x) * M.bins) + 1) end
  -- candidates to show side by side: per tenth of resemblance, the pairs of
  -- the smallest ids (read soonest from the run's inputs)
  local bands = {}
  local function earlier(x, y) return math.max(x.a, x.b) < math.max(y.a, y.b) end
  local ok, err = report.each_line(path, function(line, _, lineno)
    local dok, p = pcall(cjson.decode, line)
    if not dok or type(p) ~= "table" or type(p.resemblance) ~= "number" then
      return nil, ("%s line %d: not a pair record (%s); run shingle cluster again"):format(path, lineno,
        dok and "no resemblance" or tostring(p))
    end
    local s = p
    if type(p.exact) == "table" and type(p.exact.resemblance) == "number" then s = p.exact; st.exact = st.exact + 1 end
    local r = s.resemblance
    local c = math.max(tonumber(s.containment_ab) or 0, tonumber(s.containment_ba) or 0)
    st.n = st.n + 1
    st.res[bin(r)] = st.res[bin(r)] + 1
    st.con[bin(c)] = st.con[bin(c)] + 1
    st.min = math.min(st.min or r, r)
    st.max = math.max(st.max or r, r)
    local b = math.floor(clamp01(r) * 10)
    if type(p.a) == "number" and type(p.b) == "number" then
      bands[b] = bands[b] or report.top(4, earlier)
      bands[b]:offer({ a = p.a, b = p.b, url_a = p.url_a, url_b = p.url_b, resemblance = r })
    end
    return true
  end, "is the run finished?")
  if not ok then return nil, err end
  for _, t in pairs(bands) do
    for _, c in ipairs(t.list) do st.candidates[#st.candidates + 1] = c end
  end
  table.sort(st.candidates, function(x, y)
    if x.resemblance ~= y.resemblance then return x.resemblance < y.resemblance end
    return x.a < y.a
  end)
  return st
end

-- the size distribution as points, and the table by bands
local function sizes_section(st)
  local pts, rows = {}, {}
  local sizes = {}
  for s in pairs(st.by_size) do sizes[#sizes + 1] = s end
  table.sort(sizes)
  for _, s in ipairs(sizes) do pts[#pts + 1] = { s, st.by_size[s] } end
  for _, bnd in ipairs(M.size_bands) do
    local n, d = 0, 0
    for _, s in ipairs(sizes) do
      if s >= bnd[1] and s <= bnd[2] then n = n + st.by_size[s]; d = d + s * st.by_size[s] end
    end
    local label = bnd[1] == bnd[2] and tostring(bnd[1]) or bnd[2] == math.huge and ("≥ " .. num(bnd[1]))
      or (num(bnd[1]) .. "–" .. num(bnd[2]))
    rows[#rows + 1] = { label, n, html.pct(n, st.clusters), d, html.pct(d, st.docs) }
  end
  local svg = plot.scatter({ points = pts, x = { label = "documents in the cluster", log = true },
    y = { label = "clusters of that size", log = true }, title = "Distribution of cluster sizes",
    desc = ("%d clusters, %d distinct sizes from %s to %s."):format(st.clusters, #sizes, tostring(sizes[1] or 0),
      tostring(sizes[#sizes] or 0)) })
  return report.figure(svg, "How many clusters have each size, on log scales. Clusters of near-duplicates "
      .. "on the web are mostly pairs and small families; a straight line is a power law, and points far to the "
      .. "right are the clusters worth a look (largest clusters, below).")
    .. html.table({ { "cluster size" }, { "clusters", num = true }, { "share", num = true }, { "documents", num = true },
      { "share", num = true } }, rows, { caption = "Clusters by size" })
end

local function threshold_marks(sum, measure)
  local t, pol = sum.threshold, sum.policy
  if not t then return {} end
  if pol == measure or pol == "either" or pol == "both" then
    return { { x = t, label = ("threshold %s"):format(plot.format(t)) } }
  end
  return {}
end

local function pairs_section(ps, sum)
  if ps.n == 0 then return "<p>No pair was linked.</p>" end
  local edges = {}
  for i = 0, M.bins do edges[i + 1] = i / M.bins end
  local which = ps.exact == ps.n and "exact (every linked pair was verified from full shingle sets)"
    or ps.exact > 0 and ("exact for %s of %s pairs, estimated from sketches for the rest"):format(num(ps.exact), num(ps.n))
    or "estimated from sketches (the run did not verify)"
  local res = plot.histogram({ edges = edges, counts = ps.res, x = { label = "resemblance", lo = 0, hi = 1 },
    y = { label = "linked pairs" }, marks = threshold_marks(sum, "resemblance"), title = "Resemblance of linked pairs",
    desc = ("%d linked pairs in %d bins of width %.2f."):format(ps.n, M.bins, 1 / M.bins), width = 480, height = 280 })
  local con = plot.histogram({ edges = edges, counts = ps.con,
    x = { label = "containment (the larger direction)", lo = 0, hi = 1 }, y = { label = "linked pairs" },
    marks = threshold_marks(sum, "containment"), title = "Containment of linked pairs", color = plot.colors[3],
    desc = ("%d linked pairs in %d bins of width %.2f."):format(ps.n, M.bins, 1 / M.bins), width = 480, height = 280 })
  local rows = {}
  for i = 1, M.bins do
    if ps.res[i] > 0 or ps.con[i] > 0 then
      rows[#rows + 1] = { ("%.2f–%.2f"):format((i - 1) / M.bins, i / M.bins), ps.res[i], ps.con[i] }
    end
  end
  return ("<p>%s pairs linked under the policy <strong>%s ≥ %s</strong>; scores %s; resemblance from %.3f to %.3f.</p>")
      :format(num(ps.n), esc(sum.policy or "?"), esc(plot.format(sum.threshold or 0)), which, ps.min or 0, ps.max or 0)
    .. "<div class=\"grid\">" .. report.figure(res) .. report.figure(con) .. "</div>"
    .. "<p class=\"muted\">Resemblance r(A, B) = |S(A) ∩ S(B)| / |S(A) ∪ S(B)| and containment c(A, B) = "
    .. "|S(A) ∩ S(B)| / |S(A)| over the shingle sets S (Broder 1997). The dashed line is the threshold of the "
    .. "policy; with exact verification no linked pair is to its left. Pairs right of it but far from 1 are the "
    .. "real near-duplicates (edits, versions); a peak at 1 is copies that differ only in what canonicalization "
    .. "ignores.</p>"
    .. "<details><summary>the numbers</summary>"
    .. html.table({ { "score" }, { "resemblance", num = true }, { "containment", num = true } }, rows) .. "</details>"
end

local relation_note = { exact = "exact copy", lexical = "same words", shingle = "same shingles" }

-- a member: its URL (a link when it is a URL or a local file), its relation
local function member_row(m, o)
  local cell = type(m.url) == "string" and html.link(m.url, o.cwd) or esc("document " .. tostring(m.id))
  local rel = m.relation == "similar" and "" or (relation_note[m.relation] or m.relation or "")
  if m.copy_of then rel = rel .. (" of %s"):format(num(m.copy_of)) end
  return { num(m.id), cell, esc(rel), m.date and esc(m.date) or nil }
end

local function cluster_block(c, o)
  local rows = {}
  local copies, dated = 0, false
  for i, m in ipairs(c.members) do
    if m.relation ~= "similar" then copies = copies + 1 end
    if i <= o.members then
      rows[#rows + 1] = member_row(m, o)
      dated = dated or m.date ~= nil
    end
  end
  local cols = { { "id", num = true }, { "document" }, { "identical" } }
  if dated then cols[4] = { "date" } end
  local more = #c.members > o.members and ("<p class=\"muted\">and %s more members (all in clusters.jsonl, cluster %s)</p>")
    :format(num(#c.members - o.members), num(c.cluster)) or ""
  return ("<div class=\"cluster\"><h3>Cluster %s: %s documents</h3><p class=\"muted\">%s identical to another member</p>")
      :format(num(c.cluster), num(c.size or #c.members), num(copies))
    .. html.table(cols, rows) .. more .. "</div>"
end

local function clusters_section(list, o, what)
  if #list == 0 then return ("<p>No %s.</p>"):format(what) end
  local b = {}
  for _, c in ipairs(list) do b[#b + 1] = cluster_block(c, o) end
  return table.concat(b)
end

-- a document's text with the passages (byte ranges) marked, within a window
local function marked(text, ranges, o)
  local first = ranges[1] and ranges[1][1] or 1
  local start = 1
  if first > o.show_bytes / 2 then start = first - 200 end
  local stop = math.min(#text, start + o.show_bytes - 1)
  local b, pos = {}, start
  if start > 1 then b[#b + 1] = ("<span class=\"muted\">[%s bytes before]</span>\n"):format(num(start - 1)) end
  for _, r in ipairs(ranges) do
    local s, e = math.max(r[1], pos), math.min(r[2], stop)
    if s <= e then
      if s > pos then b[#b + 1] = esc(text:sub(pos, s - 1)) end
      b[#b + 1] = "<mark>" .. esc(text:sub(s, e)) .. "</mark>"
      pos = e + 1
    end
  end
  if pos <= stop then b[#b + 1] = esc(text:sub(pos, stop)) end
  if stop < #text then b[#b + 1] = ("\n<span class=\"muted\">[%s more bytes]</span>"):format(num(#text - stop)) end
  return table.concat(b)
end

-- a local file's text, when it is one and not too large
local function read_small(path, o)
  if type(path) ~= "string" or path:match("^%a[%w+.-]+:") then return nil end
  local lfs = require "lfs"
  local p = path:sub(1, 1) == "/" and path or (o.cwd .. "/" .. path)
  local a = lfs.attributes(p)
  if not a or a.mode ~= "file" or a.size > o.doc_bytes then return nil end
  local f = io.open(p, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

--- The texts of documents by id (wanted: { [id] = url }), read again from
-- the run's inputs (o.inputs) in the order the run read them, up to the
-- largest id wanted; a document whose URL is not the one the run recorded
-- is left out (the inputs changed). Returns { [id] = text }.
function M.read_inputs(wanted, cfg, o)
  local input = require "shingle.input"
  local last = 0
  for id in pairs(wanted) do last = math.max(last, id) end
  local texts, id = {}, 0
  local r = input.reader({ format = cfg.format, fields = cfg.fields, html = cfg.html })
  local stop = {}
  r:each(o.inputs, function(docs)
    for _, d in ipairs(docs) do
      id = id + 1
      local url = wanted[id]
      if url ~= nil and (d.url == nil or d.url == url or url == false) then
        local t = d.text
        if not t and d.path then t = read_small(d.path, o) end
        if t and #t <= o.doc_bytes then texts[id] = t end
      end
      if id >= last then return nil, stop end
    end
    return true
  end)
  return texts
end

-- the shingler options of the run, for explain
local function explain_options(cfg)
  local e = {}
  for _, k in ipairs({ "w", "k", "sketch", "m", "s", "floor", "option", "seed", "fold", "punctuation", "numbers" }) do
    e[k] = cfg[k]
  end
  if cfg.canon then e.canon = require("shingle.rules").load(cfg.canon) end
  return e
end

--- Up to o.pairs candidate pairs side by side: the lowest resemblance, the
-- highest and one between, among pairs of readable local files.
function M.pairs_side_by_side(cands, cfg, o)
  if (cfg or {}).extractor then
    return "<p>The run used a feature extractor: its documents are not text to show side by side.</p>"
  end
  local function spread(list)
    if #list <= o.pairs then return list end
    local pick = {}
    for k = 0, o.pairs - 1 do
      pick[#pick + 1] = list[1 + math.floor(k * (#list - 1) / math.max(o.pairs - 1, 1) + 0.5)]
    end
    return pick
  end
  -- local files first; else, with the run's inputs, the documents read again from them
  local readable = {}
  for _, c in ipairs(cands) do
    local ta, tb = read_small(c.url_a, o), read_small(c.url_b, o)
    if ta and tb then c.ta, c.tb = ta, tb; readable[#readable + 1] = c end
  end
  if #readable == 0 and o.inputs and #o.inputs > 0 and #cands > 0 then
    local pick = spread(cands)
    local wanted = {}
    for _, c in ipairs(pick) do
      wanted[c.a] = type(c.url_a) == "string" and c.url_a or false
      wanted[c.b] = type(c.url_b) == "string" and c.url_b or false
    end
    local texts = M.read_inputs(wanted, cfg or {}, o)
    for _, c in ipairs(pick) do
      if texts[c.a] and texts[c.b] then c.ta, c.tb = texts[c.a], texts[c.b]; readable[#readable + 1] = c end
    end
  end
  if #readable == 0 then
    return "<p>No linked pair to show: the documents are not local files (no larger than " .. html.bytes(o.doc_bytes)
      .. "). Give the run's inputs with <code>--input</code> to read them from there, or run "
      .. "<code>shingle explain A B</code> on two documents.</p>"
  end
  local pick = spread(readable)
  local ok, eo = pcall(explain_options, cfg or {})
  if not ok then return "<p>" .. esc(eo) .. "</p>" end
  local explain = require "shingle.explain"
  local b = {}
  for _, c in ipairs(pick) do
    local ea, err = explain.explain(c.ta, c.tb, eo)
    local eb = ea and explain.explain(c.tb, c.ta, eo)
    if not ea or not eb then
      b[#b + 1] = ("<p>%s and %s: %s</p>"):format(esc(tostring(c.url_a)), esc(tostring(c.url_b)), esc(err or "cannot explain"))
    else
      local ra, rb = {}, {}
      for _, p in ipairs(ea.passages) do ra[#ra + 1] = { p.a_first, p.a_last } end
      for _, p in ipairs(eb.passages) do rb[#rb + 1] = { p.a_first, p.a_last } end
      local x = ea.exact
      b[#b + 1] = ("<h3>%s and %s</h3><p>resemblance %.3f, containment of the first in the second %.3f, "
        .. "of the second in the first %.3f (exact, from full shingle sets); %s shared passage%s.</p>")
        :format(esc(tostring(c.url_a)), esc(tostring(c.url_b)), x.resemblance, x.containment, x.contained, num(#ea.passages),
          #ea.passages == 1 and "" or "s")
      local function side(url, text, ranges)
        local title = type(url) == "string" and html.link(url, o.cwd) or "(no URL)"
        return ("<div><h4>%s</h4><pre>%s</pre></div>"):format(title, marked(text, ranges, o))
      end
      b[#b + 1] = "<div class=\"pair\">" .. side(c.url_a, c.ta, ra) .. side(c.url_b, c.tb, rb) .. "</div>"
    end
  end
  return "<p>Highlighted: the passages the two documents share, found from the byte ranges of their common "
    .. "shingles (<code>shingle explain</code>). The pairs are the least, the most and a middling resemblance "
    .. "among linked pairs whose documents could be read.</p>" .. table.concat(b)
end

local function status_section(sum, st, dir)
  local facts = {
    { "documents", sum.documents }, { "skipped (unreadable, binary, too large)", sum.skipped },
    { "identical to another document: exact copies", sum.exact_duplicates },
    { "identical: lexically equal (same words)", sum.lexical_duplicates },
    { "identical: shingle-equivalent (same shingle set)", sum.shingle_duplicates },
    { "clusters", sum.clusters }, { "documents in clusters", sum.documents_in_clusters },
    { "clusters of identical documents only", sum.clusters_of_identical_documents_only },
    { "documents in them", st.identical_only_docs },
    { "clusters mixing similar documents", sum.mixed_clusters },
    { "documents in them", st.docs - st.identical_only_docs },
    { "largest cluster", st.largest },
    { "pairs considered (sharing a shingle)", sum.pairs_considered }, { "pairs linked", sum.pairs_linked },
  }
  if sum.common_shingles_dropped then facts[#facts + 1] = { "common shingles dropped (in more than max-df documents)", sum.common_shingles_dropped } end
  local files = report.files(dir)
  local frows, total = {}, 0
  for _, fl in ipairs(files) do
    total = total + fl[2]
    frows[#frows + 1] = { esc(fl[1]), html.bytes(fl[2]), sum.documents and sum.documents > 0 and ("%.1f"):format(fl[2] / sum.documents) or "–" }
  end
  frows[#frows + 1] = { "<strong>total</strong>", html.bytes(total), sum.documents and sum.documents > 0 and ("%.1f"):format(total / sum.documents) or "–" }
  local doc_share = sum.documents and sum.documents > 0 and html.pct(sum.documents_in_clusters or 0, sum.documents) or "–"
  return ("<p>As in the Status section of Broder, Glassman, Manasse and Zweig (1997), who found 3.6 million clusters "
      .. "holding 12.3 million of 30 million documents at resemblance 0.5. Here %s of the documents are in a cluster.</p>")
      :format(doc_share)
    .. "<div class=\"grid\"><div>" .. html.facts(facts, "Documents and clusters")
    .. "</div><div><h3>Phases</h3>"
    .. report.phase_table(M.phase_names, M.phase_labels, sum.phases or {}, paper_share)
    .. "<p class=\"muted\">Wall-clock seconds of this run; the paper's shares are of its 10.4 CPU-days on 30 million "
    .. "documents (1996 hardware).</p>"
    .. html.table({ { "file" }, { "size", num = true }, { "bytes per document", num = true } }, frows,
      { caption = "Storage (the paper: 3 GB of sketches, 20 GB at the peak of phase 3, 6 GB of triples)" })
    .. "</div></div>"
end

local function parameters_section(cfg, sum)
  local p = {
    { "method", cfg.method or sum.method }, { "shingle width w (tokens)", cfg.w },
    { "sketch", cfg.sketch and (cfg.sketch == "mod" and ("MOD_%s"):format(num(cfg.m))
      or cfg.sketch == "min" and ("MIN_%s"):format(num(cfg.s)) or esc(cfg.sketch)) },
    { "MOD_m floor (values kept by short documents)", cfg.sketch == "mod" and cfg.floor or nil },
    { "fingerprint degree k", cfg.k }, { "policy", sum.policy or cfg.policy }, { "threshold", sum.threshold or cfg.threshold, decimals = 2 },
    { "exact verification", sum.verify }, { "candidate score (verification)", cfg.verify and cfg.candidate or nil, decimals = 2 },
    { "max-df (common shingles)", cfg.max_df }, { "memory budget", cfg.memory and html.bytes(cfg.memory) },
    { "threads", cfg.threads }, { "rule set", cfg.canon and esc(cfg.canon) }, { "extractor", cfg.extractor and esc(cfg.extractor) },
    { "Unicode folding", cfg.fold }, { "input format", cfg.format and esc(cfg.format) },
  }
  if cfg.method == "lsh" then p[#p + 1] = { "LSH bands x rows", ("%s x %s"):format(num(cfg.bands), num(cfg.rows)) } end
  local kept = {}
  for _, x in ipairs(p) do if x[2] ~= nil then kept[#kept + 1] = x end end
  return html.facts(kept) .. "<p class=\"muted\">From run.json and summary.json in the output directory.</p>"
end

--- The page for the cluster run in dir (sum: its summary.json, read if nil).
function M.render(dir, opts, sum)
  local o = report.options(opts)
  local serr
  sum, serr = report.summary(dir, sum)
  if not sum then return nil, serr end
  local run = report.read_json(dir .. "/run.json") or {}
  local cfg = run.config or {}
  local st, err = M.scan_clusters(dir, o)
  if not st then return nil, err end
  local ps, perr = M.scan_pairs(dir)
  if not ps then return nil, perr end
  local top, terr = report.read_at(dir .. "/clusters.jsonl", st.top, is_cluster)
  if not top then return nil, terr end
  local mid, merr = report.read_at(dir .. "/clusters.jsonl", st.mid, is_cluster)
  if not mid then return nil, merr end
  local sections = {
    { id = "status", title = "Status", body = status_section(sum, st, dir) },
    { id = "sizes", title = "Cluster sizes", body = sizes_section(st) },
    { id = "pairs", title = "Linked pairs", body = pairs_section(ps, sum) },
    { id = "parameters", title = "Parameters", body = parameters_section(cfg, sum) },
    { id = "largest", title = "Largest clusters",
      body = ("<p>The %d largest of %s clusters, with up to %d members each.</p>"):format(#top, num(st.clusters), o.members)
        .. clusters_section(top, o, "clusters") },
    { id = "sample", title = "A sample of mid-size clusters",
      body = ("<p>%d clusters of 3 or more documents drawn at random from each band of sizes (3–3, 4–7, 8–15, ...) in turn, "
        .. "leaving out the largest.</p>"):format(#mid) .. clusters_section(mid, o, "cluster of 3 or more documents") },
    { id = "side-by-side", title = "Pairs side by side", body = M.pairs_side_by_side(ps.candidates, cfg, o) },
  }
  return report.page({ title = "shingle cluster report", nonce = o.nonce,
    subtitle = ("%s — %s documents, %s clusters, %s linked pairs%s"):format(esc(dir), num(sum.documents),
      num(sum.clusters), num(sum.pairs_linked), o.now and (", " .. esc(o.now)) or ""),
    sections = sections })
end

return M
