--- The report of a `shingle collections` run (Cho, Shivakumar and
-- Garcia-Molina 2000): the web graph and the phases, Table 2 (the largest
-- similar clusters), Figure 11 (pages by number of replicas, per page
-- similarity), Figure 12 (clusters by cardinality and size, log scales), the
-- collections of the largest clusters and of a sample of the others with
-- their sites and how complete each replica is, and the crawler's avoid list.
--
-- collections.jsonl (every URL of every collection) and avoid.jsonl are
-- streamed: cardinality and size are read from each line without decoding
-- it, and only the clusters shown are decoded.
local cjson = require "cjson"
local html = require "shingle.html"
local plot = require "shingle.plot"
local report = require "shingle.report"

local M = {}
local esc, num = html.escape, html.num

M.phase_names = { "reading", "pages", "links", "trivial_clusters", "link_summary", "growing", "report" }
M.phase_labels = { reading = "Reading pages", pages = "Pages (URL table, chunks)", links = "Links",
  trivial_clusters = "Trivial similar clusters", link_summary = "LinkSummary", growing = "Growing clusters",
  report = "Report" }
M.schemes = { "whole", "lines4", "lines2", "shingles" }
M.scheme_labels = { whole = "entire document", lines4 = "four lines", lines2 = "two lines", shingles = "shingles" }
M.replica_bins = { "0", "1", "2", "3–9", "10–99", "100–999", "≥ 1000" }
M.noise = 10 -- "noise clusters can easily be identified by their small size (less than 10 pages)"

local function better(x, y)
  if x.cardinality ~= y.cardinality then return x.cardinality > y.cardinality end
  if x.size ~= y.size then return x.size > y.size end
  return x.lineno < y.lineno
end

--- Stream collections.jsonl: every cluster's cardinality and size (as
-- points with multiplicity), the largest clusters and a sample of the rest.
function M.scan(dir, o)
  local path = dir .. "/collections.jsonl"
  local rand = report.rng(o.seed)
  local top = report.top(o.top, better)          -- among clusters of collections of at least M.noise pages
  local top_noise = report.top(o.top, better)    -- among the others, shown when there is no larger one
  local sample = report.reservoir(o.top + o.sample, rand)
  local noise = 0
  local points, n, collections = {}, 0, 0
  local ok, err = report.each_line(path, function(line, offset, lineno)
    local card, size = report.field(line, "cardinality"), report.field(line, "size")
    if not card or not size then
      local ok, c = pcall(cjson.decode, line)
      if ok and type(c) == "table" then card, size = tonumber(c.cardinality), tonumber(c.size) end
      if not card or not size then
        return nil, ("%s line %d: not a cluster of collections (no cardinality or size); run shingle collections again")
          :format(path, lineno)
      end
    end
    n = n + 1
    collections = collections + card
    local key = card .. " " .. size
    local p = points[key]
    if not p then p = { card, size, n = 0 }; points[key] = p end
    p.n = p.n + 1
    local rec = { cardinality = card, size = size, offset = offset, length = #line, lineno = lineno }
    if size >= M.noise then top:offer(rec) else top_noise:offer(rec); noise = noise + 1 end
    sample:offer(rec)
    return true
  end, "is the run finished?")
  if not ok then return nil, err end
  local list = {}
  for _, p in pairs(points) do list[#list + 1] = p end
  table.sort(list, function(x, y) if x[1] ~= y[1] then return x[1] < y[1] end return x[2] < y[2] end)
  local shown = #top.list > 0 and top.list or top_noise.list
  -- the sample: records not among the largest, the largest of them first
  local in_top, rest = {}, {}
  for _, r in ipairs(shown) do in_top[r.lineno] = true end
  for _, r in ipairs(sample.list) do if not in_top[r.lineno] then rest[#rest + 1] = r end end
  table.sort(rest, better)
  while #rest > o.sample do rest[#rest] = nil end
  return { clusters = n, collections = collections, points = list, top = shown, rest = rest, noise = noise,
    noise_only = #top.list == 0 }
end

local function is_cluster(c) return type(c.collections) == "table" end

local function link(url, o, text) return html.link(url, o.cwd, text) end

-- a URL shown without its site (the site is in its own column)
local function within(url, site)
  if type(url) == "string" and type(site) == "string" and url:sub(1, #site) == site and #url > #site then
    return url:sub(#site + 1)
  end
  return url
end

local function host(site)
  return type(site) == "string" and (site:gsub("^%a[%w+.-]*://", "")) or site
end

local function summary_section(sum)
  local g, gr, av = sum.graph or {}, sum.grow or {}, sum.avoid or {}
  local t = (sum.trivial or {})[sum.similarity or "lines4"] or {}
  local facts = {
    { "pages", g.pages }, { "sites", g.sites }, { "pages fingerprinted", g.ok }, { "pages without text", g.empty },
    { "unreadable pages", g.unreadable }, { "duplicate URLs", g.duplicate_urls }, { "other files skipped", g.skipped_files },
    { "links between pages", g.links }, { "links found", g.links_found }, { "links to nowhere", g.links_nowhere },
    { "self-links", g.self_links }, { "duplicate links", g.duplicate_links },
    { ("trivial clusters (%s)"):format(M.scheme_labels[sum.similarity] or tostring(sum.similarity)), t.clusters },
    { "pages in them", t.pages_in_clusters }, { "largest trivial cluster", t.largest },
    { "LinkSummary rows", gr.summary_rows }, { "merge edges (the trivial cluster graph)", gr.merge_edges },
    { "components", gr.components }, { "components split", gr.split_components },
    { "similar clusters", gr.clusters }, { "collections in them", gr.collections },
    { "pages in collections", gr.distinct_pages }, { "pages shared by several collections", gr.shared_pages },
  }
  local crawler = ("<p>A crawler that skips the %s mirrors of the avoid list saves %s pages and %s of %s "
    .. "(%s of what was crawled; Cho et al. saw replicated pages fall from 48%% to 13%% of a crawl).</p>")
    :format(num(av.entries or 0), num(av.pages or 0), html.bytes(av.bytes or 0), html.bytes(av.crawled_bytes or 0),
      html.pct(av.bytes or 0, av.crawled_bytes or 0))
  return crawler .. "<div class=\"grid\"><div>" .. html.facts(facts, "The web graph and its clusters")
    .. "</div><div><h3>Phases</h3>" .. report.phase_table(M.phase_names, M.phase_labels, sum.phases or {})
    .. "<h3>Parameters</h3>" .. html.facts({
      { "page similarity", esc(M.scheme_labels[sum.similarity] or tostring(sum.similarity)) },
      { "threshold", t.threshold and esc(plot.format(t.threshold)) },
      { "merge condition", sum.extended and "extended (a = s ≥ d = b: partial mirrors)" or "a = s = d = b" },
      { "single site", sum.single_site }, { "start point", sum.start and esc(sum.start) },
    }) .. "</div></div>"
end

local function table2(clusters, o, scan)
  local rows = {}
  for i, c in ipairs(clusters) do
    local first = c.collections[1] or {}
    local sites = {}
    for _, co in ipairs(c.collections) do sites[co.site or "?"] = true end
    local ns = 0
    for _ in pairs(sites) do ns = ns + 1 end
    rows[#rows + 1] = { i, c.cardinality, c.size, ns, link(first.root, o) }
  end
  if #rows == 0 then return "<p>No similar cluster of collections was found.</p>" end
  local which = scan.noise_only
    and ("<p>Every cluster has collections of fewer than %d pages (Cho et al.'s noise); the largest of them:</p>"):format(M.noise)
    or ("<p>The largest clusters whose collections have at least %d pages; %s clusters of smaller collections "
      .. "(Cho et al.'s noise) are left out here but are in Figure 12.</p>"):format(M.noise, num(scan.noise))
  return which .. html.table({ { "rank", num = true }, { "cardinality", num = true }, { "size (pages)", num = true },
    { "sites", num = true }, { "root of the first collection" } }, rows, { sortable = true })
    .. "<p class=\"muted\">Cardinality: how many replicas (collections) the cluster has; size: pages in each. "
    .. "Cho et al.'s Table 2 lists TUCOWS (360 replicas of 1,052 pages), the Linux Documentation Project "
    .. "(143 of 1,359), Apache (125 of 115), the Java API (59 of 552) and Mars Pathfinder (49 of 498).</p>"
end

local function figure11(sum)
  local t = sum.trivial or {}
  local series, rows = {}, {}
  for i, name in ipairs(M.schemes) do
    local s = t[name]
    if s and type(s.replicas) == "table" then
      local all = 0
      for _, v in ipairs(s.replicas) do all = all + v end
      local pct = {}
      for b = 1, #M.replica_bins do pct[b] = all > 0 and 100 * (s.replicas[b] or 0) / all or 0 end
      local label = M.scheme_labels[name] .. ((name == "lines4" or name == "lines2") and (" (T = %s)"):format(plot.format(s.threshold or 0)) or "")
      series[#series + 1] = { name = label, values = pct, color = plot.colors[i] }
      local r = { esc(label) }
      for b = 1, #M.replica_bins do r[#r + 1] = ("%s (%s)"):format(num(s.replicas[b] or 0), html.pct(s.replicas[b] or 0, all)) end
      rows[#rows + 1] = r
    end
  end
  if #series == 0 then return "<p>The run kept no replica histogram.</p>" end
  local svg = plot.bars({ categories = M.replica_bins, series = series, x = { label = "number of replicas of a page" },
    y = { label = "% of pages", integer = false }, title = "Figure 11: pages by number of replicas",
    desc = "Share of pages with 0, 1, 2, 3-9, 10-99, 100-999 and 1000 or more similar pages besides themselves, per page similarity." })
  local cols = { { "similarity" } }
  for _, b in ipairs(M.replica_bins) do cols[#cols + 1] = { b, num = true } end
  return report.figure(svg, "As Cho et al.'s Figure 11 (25 million pages: 64% had no exact copy, 52% nothing "
      .. "similar at two-line chunks): for each page, how many other pages are similar to it under each notion of "
      .. "similarity, from identical bytes (entire document) to sharing T chunks of two lines. The more relaxed the "
      .. "similarity, the more pages have replicas.")
    .. html.table(cols, rows, { caption = "Pages by number of replicas" })
end

local function figure12(scan, top)
  local pts, labelled = {}, {}
  for i, c in ipairs(top) do
    if i <= 5 then labelled[("%d %d"):format(c.cardinality, c.size)] = host((c.collections[1] or {}).site) end
  end
  for _, p in ipairs(scan.points) do
    local l = labelled[("%d %d"):format(p[1], p[2])]
    pts[#pts + 1] = { p[1], p[2], n = p.n, label = l, show_label = l ~= nil }
  end
  local svg = plot.scatter({ points = pts, x = { label = "cardinality (number of replicas)", log = true },
    y = { label = "size (pages per collection)", log = true }, regions = { { 0, M.noise, label = "noise: fewer than 10 pages" } },
    title = "Figure 12: similar clusters by cardinality and size",
    desc = ("%d clusters of collections as %d points (a larger dot: several clusters)."):format(scan.clusters, #scan.points) })
  return report.figure(svg, "As Cho et al.'s Figure 12: every similar cluster is a point at its cardinality "
    .. "(how many replicas) and size (pages in each), both on log scales. Up and right are widely replicated "
    .. "collections (the paper's TUCOWS, LDP, Apache); the shaded band below 10 pages is mostly noise (slide shows, "
    .. "break points), which a crawler's avoid list leaves out. Dots are larger where several clusters fall on one point.")
end

--- How complete a replica is: of the cluster's size, the pages it holds
-- under its own URL prefix; pages it reaches on other sites (a partial
-- mirror's links back to the primary, under the extended condition) are
-- shared, not its own.
function M.completeness(co, size)
  local own, shared = 0, 0
  local prefix = type(co.prefix) == "string" and co.prefix ~= "" and co.prefix or co.site
  for _, u in pairs(co.urls or {}) do
    if type(u) == "string" then
      if prefix and u:sub(1, #prefix) == prefix then own = own + 1 else shared = shared + 1 end
    end
  end
  return own, shared, size > 0 and own / size or 0
end

local function cluster_block(c, o)
  local rows = {}
  for i, co in ipairs(c.collections) do
    if i > o.members then break end
    local own, shared, frac = M.completeness(co, c.size)
    rows[#rows + 1] = { link(co.site, o, host(co.site)), link(co.root, o, within(co.root, co.site)),
      ('<span class="url">%s</span>'):format(esc(within(co.prefix, co.site) or "")), own, shared,
      ('<span class="complete"><span style="width:%.0f%%"></span></span>%s'):format(100 * math.min(frac, 1),
        html.pct(own, c.size)),
      co.kept and "kept" or "", co.whole_site and "yes" or "", html.bytes(co.bytes) }
  end
  local more = #c.collections > o.members and ("<p class=\"muted\">and %s more collections (collections.jsonl, cluster %s)</p>")
    :format(num(#c.collections - o.members), num(c.cluster)) or ""
  return ("<div class=\"cluster\"><h3>Cluster %s: %s replicas of %s pages</h3>"):format(num(c.cluster), num(c.cardinality), num(c.size))
    .. html.table({ { "site" }, { "root" }, { "prefix" }, { "own pages", num = true }, { "shared", num = true },
      { "complete", num = true }, { "first seen" }, { "whole site" }, { "bytes", num = true } }, rows, { sortable = true })
    .. more .. "</div>"
end

local function collections_section(top, rest, o)
  local b = { "<p>Each collection of a cluster is one replica: its site, its root page, the URL prefix of its pages, and "
    .. "how complete it is: the pages it holds under its own prefix, of the cluster's size. A partial mirror (found "
    .. "with the extended merge condition) links back to the primary for what it lacks; those pages are counted as "
    .. "shared. The crawler keeps the copy seen first and may skip the others.</p>" }
  for _, c in ipairs(top) do b[#b + 1] = cluster_block(c, o) end
  if #rest > 0 then
    b[#b + 1] = ("<h3>A sample of %d other clusters</h3>"):format(#rest)
    for _, c in ipairs(rest) do b[#b + 1] = cluster_block(c, o) end
  end
  return table.concat(b)
end

local function avoid_section(dir, o)
  local top = report.top(o.top * 2, function(x, y) return (x.bytes or 0) > (y.bytes or 0) end)
  local n = 0
  local ok, err = report.each_line(dir .. "/avoid.jsonl", function(line)
    local dok, e = pcall(cjson.decode, line)
    if dok and type(e) == "table" then
      n = n + 1
      top:offer(report.nulls(e))
    end
    return true
  end)
  if not ok then return "<p>" .. esc(err) .. "</p>" end
  if n == 0 then return "<p>Nothing to avoid: no cluster has collections of the avoid list's least size.</p>" end
  local rows = {}
  for _, e in ipairs(top.list) do
    rows[#rows + 1] = { link(e.site, o, host(e.site)), ('<span class="url">%s</span>'):format(esc(within(e.prefix, e.site) or "")),
      e.whole_site and "yes" or "", e.pages or 0, html.bytes(e.bytes), link(e.mirror_of, o) }
  end
  return ("<p>%s entries; the %d that save the most bytes:</p>"):format(num(n), #rows)
    .. html.table({ { "site" }, { "prefix" }, { "whole site" }, { "pages saved", num = true }, { "bytes saved", num = true },
      { "mirror of" } }, rows, { sortable = true, filter = true })
end

--- The page for the collections run in dir (sum: its summary.json).
function M.render(dir, opts, sum)
  local o = report.options(opts)
  local serr
  sum, serr = report.summary(dir, sum)
  if not sum then return nil, serr end
  local scan, err = M.scan(dir, o)
  if not scan then return nil, err end
  local path = dir .. "/collections.jsonl"
  local top, terr = report.read_at(path, scan.top, is_cluster)
  if not top then return nil, terr end
  local rest, rerr = report.read_at(path, scan.rest, is_cluster)
  if not rest then return nil, rerr end
  local g = sum.graph or {}
  local sections = {
    { id = "summary", title = "Summary", body = summary_section(sum) },
    { id = "table2", title = "Table 2: the largest clusters", body = table2(top, o, scan) },
    { id = "figure11", title = "Figure 11: replicas of pages", body = figure11(sum) },
    { id = "figure12", title = "Figure 12: clusters by cardinality and size", body = figure12(scan, top) },
    { id = "collections", title = "Collections and their replicas", body = collections_section(top, rest, o) },
    { id = "avoid", title = "Avoid list", body = avoid_section(dir, o) },
  }
  return report.page({ title = "shingle collections report", nonce = o.nonce,
    subtitle = ("%s — %s pages on %s sites, %s similar clusters of %s collections%s"):format(esc(dir), num(g.pages),
      num(g.sites), num(scan.clusters), num(scan.collections), o.now and (", " .. esc(o.now)) or ""),
    sections = sections })
end

return M
