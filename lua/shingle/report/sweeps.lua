--- The report of an index and its sweeps (Broder et al., "Lost and found"
-- and "Characterizing how pages change over time"): for every sweep the
-- documents added, gone, moved and changed against the sweep before (bars
-- over time), how much the changed pages of the latest sweep changed, and the
-- lost-and-found table of the latest sweep: where the content of each URL
-- that is gone lives now.
local html = require "shingle.html"
local plot = require "shingle.plot"
local report = require "shingle.report"

local M = {}
local esc, num = html.escape, html.num

local function link(url, o) return html.link(url, o.cwd) end

--- Per sweep: { name, documents, added, gone, moved, moved_within,
-- moved_between, changed, small, large, identical } for the last `limit`
-- sweeps (each compared with the one before by ix:changes, which reads both;
-- older sweeps have only their documents), and the changes of the latest
-- sweep against the one before, if there are two.
function M.per_sweep(ix, limit)
  local sweeps = ix:sweeps()
  local rows, last = {}, nil
  local first = math.max(1, #sweeps - (limit or math.huge) + 1)
  for i, s in ipairs(sweeps) do
    local r = { name = s.name, documents = s.documents }
    if i < first then
      r.compared = false
    elseif i == 1 then
      r.added, r.gone, r.moved, r.moved_within, r.moved_between, r.changed, r.small, r.large, r.identical =
        s.documents, 0, 0, 0, 0, 0, 0, 0, 0
    else
      local c, err = ix:changes(sweeps[i - 1].name, s.name)
      if not c then return nil, err end
      r.added, r.gone = c.born, c.died
      r.moved_within, r.moved_between = c.moved_within_server, c.moved_between_servers
      r.moved = c.moved_within_server + c.moved_between_servers
      r.small, r.large = c.small_change, c.large_change
      r.changed = c.small_change + c.large_change
      r.identical = c.identical
      if i == #sweeps then last = c end
    end
    rows[#rows + 1] = r
  end
  return rows, last
end

local function sweeps_section(rows)
  local cats, series = {}, {
    { name = "added", values = {}, color = plot.colors[3] }, { name = "gone", values = {}, color = plot.colors[6] },
    { name = "moved", values = {}, color = plot.colors[2] }, { name = "changed", values = {}, color = plot.colors[1] },
  }
  local trows = {}
  local skipped = 0
  for _, r in ipairs(rows) do
    if r.compared == false then
      skipped = skipped + 1
    else
      local i = #cats + 1
      cats[i] = r.name
      series[1].values[i], series[2].values[i], series[3].values[i], series[4].values[i] = r.added, r.gone, r.moved, r.changed
    end
    trows[#trows + 1] = { '<span class="nowrap">' .. esc(r.name) .. "</span>", r.documents, r.added, r.gone, r.moved_within, r.moved_between, r.small, r.large, r.identical }
  end
  local svg = plot.bars({ categories = cats, series = series, x = { label = "sweep" }, y = { label = "documents" },
    title = "Documents added, gone, moved and changed per sweep",
    desc = ("%d sweeps; each against the sweep before it (the first: everything added)."):format(#rows) })
  return report.figure(svg, "Each sweep against the one before it: URLs that are new (added), URLs that are no "
      .. "longer there and whose content is nowhere else (gone), content that is at a new URL (moved), and URLs whose "
      .. "bytes changed (changed). The first sweep is all additions."
      .. (skipped == 1 and " The earliest sweep is not compared (--sweeps)."
        or skipped > 1 and (" The %d earliest sweeps are not compared (--sweeps)."):format(skipped) or ""))
    .. html.table({ { "sweep" }, { "documents", num = true }, { "added", num = true }, { "gone", num = true },
      { "moved within a server", num = true }, { "moved between servers", num = true }, { "small change", num = true },
      { "large change", num = true }, { "unchanged", num = true } }, trows, { sortable = true,
        caption = "Small change: resemblance to the earlier version at least 0.5." })
end

local function change_section(last)
  if not last then return "<p>The index has one sweep: nothing to compare.</p>" end
  local edges = {}
  for i = 0, 10 do edges[i + 1] = i / 10 end
  local svg = plot.histogram({ edges = edges, counts = last.histogram, x = { label = "resemblance to the earlier version", lo = 0, hi = 1 },
    y = { label = "URLs" }, marks = { { x = 0.5, label = "small change" } },
    title = ("Resemblance of pages in %s to their version in %s"):format(last.to, last.from),
    desc = "URLs present in both sweeps, by the resemblance of their new version to the old one; unchanged pages are at 1.",
    width = 520, height = 260 })
  return report.figure(svg, ("How much the pages present in both %s and %s changed: the estimated resemblance of each "
    .. "URL's new version to its old one (Broder et al.: \"how similar each version is to the preceding version\"). "
    .. "Unchanged pages are in the last bin."):format(esc(last.from), esc(last.to)))
end

--- The lost-and-found table of the latest sweep: the URLs gone since the
-- sweep before (moved ones with their new URL; for the others the most
-- recent other document of their cluster), at most o.lost of them.
function M.lost_and_found(ix, last, o)
  if not last then return {} end
  local rows = {}
  for _, mv in ipairs(last.moves) do
    if #rows >= o.lost then break end
    rows[#rows + 1] = { url = mv.from, found = mv.to, sweep = last.to,
      how = mv.within_server and "moved within its server (same content)" or "moved to another server (same content)" }
  end
  -- a sample of the URLs that died, found through their cluster when possible
  local rand = report.rng(o.seed)
  local sample = report.reservoir(math.max(o.lost - #rows, 0), rand)
  for _, url in ipairs(last.gone) do sample:offer(url) end
  local died = sample.list
  table.sort(died)
  for _, url in ipairs(died) do
    local found = ix:lost(url)
    local f = found and found[1]
    rows[#rows + 1] = { url = url, found = f and f.url, sweep = f and f.sweep,
      how = f and "a similar document of its cluster (most recent sweep first)" or "not found" }
  end
  return rows
end

local function lost_section(rows, last, o)
  if not last then return "<p>The index has one sweep: nothing was lost yet.</p>" end
  if #rows == 0 then return ("<p>No URL of %s is gone from %s.</p>"):format(esc(last.from), esc(last.to)) end
  local t = {}
  for _, r in ipairs(rows) do
    t[#t + 1] = { link(r.url, o), r.found and link(r.found, o) or '<span class="muted">not found</span>',
      r.sweep and esc(r.sweep) or "", esc(r.how) }
  end
  local total = #last.moves + #last.gone
  return ("<p>As in Broder et al.'s \"Lost and found\": for each URL of %s that is not in %s, where its content "
      .. "can be found now: the new URL of a page that moved, or the most recent URL in its cluster. %s URLs are gone; "
      .. "%s shown.</p>"):format(esc(last.from), esc(last.to), num(total), #rows < total and ("a sample of " .. num(#rows) .. " is") or "all are")
    .. html.table({ { "lost URL" }, { "found at" }, { "sweep" }, { "how" } }, t, { sortable = true, filter = true })
end

local function index_section(ix, path, rows)
  local c = ix.config or {}
  local facts = {
    { "documents", ix:count() }, { "sweeps", #rows },
    { "shingle width w", c.w }, { "sketch", c.sketch and esc(c.sketch == "mod" and ("MOD_" .. num(c.m))
      or c.sketch == "min" and ("MIN_" .. num(c.s)) or c.sketch) },
    { "policy", c.policy and esc(c.policy) }, { "threshold", c.threshold, decimals = 2 },
    { "rule set", c.canon and esc(c.canon) }, { "extractor", c.extractor and esc(c.extractor) },
  }
  local kept = {}
  for _, f in ipairs(facts) do if f[2] ~= nil then kept[#kept + 1] = f end end
  return html.facts(kept, "The index " .. esc(path))
end

--- The page for the index at path.
function M.render(path, opts)
  local o = report.options(opts)
  local lfs = require "lfs"
  if lfs.attributes(path, "mode") ~= "directory" or lfs.attributes(path .. "/data.mdb", "mode") ~= "file" then
    return nil, ("%s is not an index (no data.mdb): give the directory of shingle index add"):format(path)
  end
  local index = require "shingle.index"
  local ix, err = index.open(path, { readonly = true })
  if not ix then return nil, err end
  if not ix.config then ix:close(); return nil, path .. " is empty: add a sweep with shingle index add" end
  local ok, rows, last = pcall(M.per_sweep, ix, o.sweeps)
  if not ok or not rows then ix:close(); return nil, ok and last or tostring(rows) end
  local lok, lost = pcall(M.lost_and_found, ix, last, o)
  if not lok then ix:close(); return nil, tostring(lost) end
  local sections = {
    { id = "index", title = "The index", body = index_section(ix, path, rows) },
    { id = "sweeps", title = "Sweeps over time", body = sweeps_section(rows) },
    { id = "change", title = "How much pages changed", body = change_section(last) },
    { id = "lost", title = "Lost and found", body = lost_section(lost, last, o) },
  }
  local n = ix:count()
  ix:close()
  return report.page({ title = "shingle index report", nonce = o.nonce,
    subtitle = ("%s — %s documents in %s sweeps%s"):format(esc(path), num(n), num(#rows), o.now and (", " .. esc(o.now)) or ""),
    sections = sections })
end

return M
