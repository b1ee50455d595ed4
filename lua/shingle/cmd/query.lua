--- The index queries: similar, cluster-of, lost, changes.
local index = require "shingle.index"
local common = require "shingle.cmd.common"
local writer = require "shingle.writer"

local M = { names = { "similar", "cluster-of", "lost", "changes" } }

-- the columns of --output-format csv and tsv
M.columns = {
  similar = { "id", "url", "sweep", "cluster", "resemblance", "containment", "contained", "shared" },
  cluster_of = { "cluster", "of", "id", "url", "sweep", "relation" },
  lost = { "id", "url", "sweep", "relation" },
  changes = { "from", "to", "identical", "small_change", "large_change", "moved_within_server", "moved_between_servers",
    "born", "died", "histogram" },
}

function M.configure(parser)
  local s = parser:command("similar", "Documents of an index that resemble a document (on-the-fly resemblance).")
  s:argument("db", "The index directory.")
  s:argument("doc", "A file, - for standard input, or with --url a URL stored in the index.")
  s:flag("--url", "DOC is the URL of an indexed document.")
  s:option("-t --threshold", "Least resemblance (or containment with --containment).", "0.5"):convert(tonumber)
  s:option("--top", "At most this many.", "10"):convert(tonumber)
  s:option("--policy", "Which documents pass the threshold: by resemblance, containment (either direction), either or both "
    .. "(default: resemblance, or containment with --containment).")
    :choices({ "resemblance", "containment", "either", "both" })
  s:flag("--containment", "Rank by containment (either direction) instead of resemblance.")
  common.html_options(s)
  s:option("--max-df", "Do not look up sketch values held by more than N documents (very common shingles: bounds the "
    .. "cost, may miss documents sharing only those); 0: none (default: the index's own, `index info`).")
    :convert(tonumber)
  common.output_options(s)
  local c = parser:command("cluster-of", "The cluster of a URL and its members, with sweep dates.")
  c:argument("db", "The index directory.")
  c:argument("url", "A URL stored in the index.")
  common.output_options(c, "JSON output: the list of clusters as one value (--output-format jsonl: a member a line).")
  local l = parser:command("lost", "Lost and found: where the content of a gone or changed URL lives now.")
  l:argument("db", "The index directory.")
  l:argument("url", "A URL stored in the index.")
  common.output_options(l, "JSON output: the list as one value (--output-format jsonl: a document a line).")
  local ch = parser:command("changes", "How pages changed between two sweeps.")
  ch:argument("db", "The index directory.")
  ch:option("--from", "The earlier sweep."):count(1)
  ch:option("--to", "The later sweep."):count(1)
  ch:option("--small", "Resemblance at or above which a change counts as small.", "0.5"):convert(tonumber)
  common.output_options(ch, "JSON output: one object.")
end

local function open(a)
  local ix, err = index.open(a.db, { readonly = true })
  if not ix then io.stderr:write("shingle: ", err, "\n") return nil end
  if not ix.config then io.stderr:write("shingle: ", a.db, " is empty: add documents with `shingle index add`\n") return nil end
  return ix
end

function M.run(a)
  local ix = open(a)
  if not ix then return 1 end
  local out = io.stdout
  if a.command == "similar" then
    if a.max_df and (a.max_df < 0 or a.max_df % 1 ~= 0) then
      io.stderr:write("shingle: --max-df: give a whole number of documents (0: no cutoff)\n")
      ix:close()
      return 2
    end
    local q
    if a.url then q = { url = a.doc }
    elseif a.doc == "-" then q = io.stdin:read("*a")
    else
      local text, err = common.read_document(a.doc)
      if not text then return common.fail(1, err) end
      q = text
    end
    if type(q) == "string" then
      -- as the pool skips binary files when it sketches (a NUL byte in the first 8 KiB)
      local z = q:sub(1, 8192):find("\0", 1, true)
      if z then
        io.stderr:write(("shingle: %s looks binary (a NUL byte at offset %d): similar compares text documents\n")
          :format(a.doc == "-" and "standard input" or a.doc, z - 1))
        return 1
      end
    end
    local hits, err = ix:similar(q, { threshold = a.threshold, top = a.top, policy = a.policy, containment = a.containment,
      html = common.forced_html(a), max_df = a.max_df })
    if not hits then return common.fail(1, err) end
    if #hits == 0 then
      io.stderr:write(("shingle: no document of %s resembles %s at %s %s\n"):format(a.db,
        a.url and a.doc or (a.doc == "-" and "standard input" or a.doc), a.containment and "containment" or "resemblance",
        tostring(a.threshold)))
    end
    local fmt = common.output_format(a)
    if fmt then
      common.write_records(fmt, hits, { order = index.order, columns = M.columns.similar })
      return 0
    end
    for _, h in ipairs(hits) do
      out:write(("%.3f  c %.3f/%.3f  %-12s %s\n"):format(h.resemblance, h.containment, h.contained, h.sweep, h.url))
    end
    return 0
  elseif a.command == "cluster-of" then
    local cl, err = ix:cluster_of(a.url)
    if not cl then return common.fail(1, err) end
    if a.json and a.output_format == "table" then out:write(writer.json(cl, index.order), "\n") return 0 end
    local fmt = common.output_format(a)
    if fmt then
      local rows = {}
      for _, c in ipairs(cl) do
        for _, m in ipairs(c.members) do
          rows[#rows + 1] = { cluster = c.cluster, of = c.sweep, id = m.id, url = m.url, sweep = m.sweep, relation = m.relation }
        end
      end
      common.write_records(fmt, rows, { order = index.order, columns = M.columns.cluster_of })
      return 0
    end
    for _, c in ipairs(cl) do
      out:write(("cluster %d (%d documents), for the version of sweep %s\n"):format(c.cluster, #c.members, c.sweep))
      for _, m in ipairs(c.members) do out:write(("  %-12s %-8s %s\n"):format(m.sweep, m.relation, m.url)) end
    end
    return 0
  elseif a.command == "lost" then
    local found, err = ix:lost(a.url)
    if not found then return common.fail(1, err) end
    if a.json and a.output_format == "table" then out:write(writer.json(found, index.order), "\n") return 0 end
    local fmt = common.output_format(a)
    if fmt then
      common.write_records(fmt, found, { order = index.order, columns = M.columns.lost })
      return 0
    end
    if #found == 0 then out:write("no other document in its cluster\n") return 0 end
    out:write(("most recent: %s (sweep %s)\n"):format(found[1].url, found[1].sweep))
    for k = 2, #found do out:write(("  also %s (sweep %s)\n"):format(found[k].url, found[k].sweep)) end
    return 0
  else
    local r, err = ix:changes(a.from, a.to, { small = a.small })
    if not r then return common.fail(1, err) end
    if a.json and a.output_format == "table" then out:write(writer.json(r, index.order), "\n") return 0 end
    local fmt = common.output_format(a)
    if fmt then
      common.write_records(fmt, { r }, { order = index.order, columns = M.columns.changes })
      return 0
    end
    out:write(("changes from %s to %s\n"):format(r.from, r.to))
    for _, k in ipairs({ "identical", "small_change", "large_change", "moved_within_server", "moved_between_servers", "born", "died" }) do
      out:write(("  %-24s %d\n"):format((k:gsub("_", " ")), r[k]))
    end
    out:write("  resemblance of changed URLs to their earlier version:\n")
    for i, n in ipairs(r.histogram) do out:write(("    %.1f-%.1f  %d\n"):format((i - 1) / 10, i / 10, n)) end
    return 0
  end
end

return M
