--- Near-duplicate removal on the clustering pipeline: cluster the inputs
-- (Broder et al.'s phases, with exact verification by default), keep one
-- representative per cluster, and write the kept documents in the format
-- they came in, plus a map of every removed document to the one kept.
--
--   local d = dedup.new{ outdir = "out", keep = "longest", threshold = 0.8 }
--   local summary = assert(d:run({ "pages.jsonl.gz" }))
--
-- OUTDIR holds: for each JSON Lines input its kept lines, byte for byte
-- (NAME.jsonl); for each WARC input its kept records, byte for byte (gzip
-- members as they were); for each mbox its kept messages (NAME.mbox, mboxrd);
-- for files, kept.txt (one path a line) and, with files = "copy" / "link" /
-- "symlink", a tree under files/; removed.jsonl ({ removed, kept, relation,
-- resemblance, containment, contained, exact }); summary.json; and the
-- cluster run in run/ (clusters.jsonl, pairs.jsonl: recluster works on it).
local core = require "shingle.core"
local input = require "shingle.input"
local pipeline = require "shingle.pipeline"
local util = require "shingle.util"
local writer = require "shingle.writer"

local M = {}
M.__index = M

M.defaults = {
  keep = "first",      -- first (input order) | longest (most tokens) | newest (latest date)
  files = "list",      -- files of directories: list (kept.txt) | copy | link (hard) | symlink
  threshold = 0.8,     -- a stricter default than clustering's 0.5: near-duplicates, not relatives
}
-- The key order of removed.jsonl and summary.json (shingle.writer).
M.order = {
  removed = { "removed", "kept", "id", "kept_id", "relation", "resemblance", "containment", "contained", "exact" },
  summary = { "documents", "skipped", "kept", "removed", "removed_by_relation", "clusters", "keep", "policy",
    "threshold", "verify", "outputs" },
}
-- removed.csv/.tsv: a row per removed document, the exact scores in columns
M.columns = {
  removed = { "removed", "kept", "id", "kept_id", "relation", "resemblance", "containment", "contained",
    "exact_resemblance", "exact_containment", "exact_contained" },
}
M.rows = {
  removed = function(r)
    local x = r.exact or {}
    return { { removed = r.removed, kept = r.kept, id = r.id, kept_id = r.kept_id, relation = r.relation,
      resemblance = r.resemblance, containment = r.containment, contained = r.contained,
      exact_resemblance = x.resemblance, exact_containment = x.containment, exact_contained = x.contained } }
  end,
}
local keeps = { first = true, longest = true, newest = true }
local file_modes = { list = true, copy = true, link = true, symlink = true }

--- dedup.new(cfg): cfg.outdir, keep, files, and any option of
-- shingle.pipeline (threshold, policy, sketch, w, verify, ...). Misuse raises.
function M.new(cfg)
  cfg = cfg or {}
  if type(cfg) ~= "table" then error("dedup.new expects a table of options", 2) end
  if not cfg.outdir then error("dedup needs an output directory (outdir)", 2) end
  local self = setmetatable({ dir = cfg.outdir, keep = cfg.keep or M.defaults.keep, files = cfg.files or M.defaults.files },
    M)
  if not keeps[self.keep] then error(("unknown keep '%s'; use first, longest or newest"):format(tostring(self.keep)), 2) end
  if not file_modes[self.files] then
    error(("unknown files '%s'; use list, copy, link or symlink"):format(tostring(self.files)), 2)
  end
  local pcfg = {}
  for k, v in pairs(cfg) do if k ~= "keep" and k ~= "files" then pcfg[k] = v end end
  pcfg.outdir = self.dir .. "/run"
  if pcfg.threshold == nil then pcfg.threshold = M.defaults.threshold end
  self.pcfg = pcfg
  self.log = util.logger(cfg)
  return self
end

-- A date as a number that sorts as time does (no time zones): ISO 8601,
-- RFC 2822 (mail), ctime (mbox From_ lines), or seconds since the epoch.
local months = { jan = 1, feb = 2, mar = 3, apr = 4, may = 5, jun = 6, jul = 7, aug = 8, sep = 9, oct = 10, nov = 11, dec = 12 }
local function key(y, mo, d, h, mi, s)
  return ((((tonumber(y) * 100 + mo) * 100 + tonumber(d)) * 100 + (tonumber(h) or 0)) * 100 + (tonumber(mi) or 0)) * 100
    + (tonumber(s) or 0)
end
function M.date_key(s)
  if type(s) == "number" then s = os.date("!%Y-%m-%dT%H:%M:%S", s) end
  if type(s) ~= "string" then return nil end
  local y, mo, d, h, mi, sec = s:match("^%s*(%d%d%d%d)%-(%d%d)%-(%d%d)[T ]?(%d?%d?):?(%d?%d?):?(%d?%d?)")
  if y then return key(y, tonumber(mo), d, h, mi, sec) end
  local d2, mon, y2, h2, mi2, s2 = s:match("(%d%d?)%s+(%a%a%a)%a*%s+(%d%d%d%d)%s+(%d%d):(%d%d):?(%d?%d?)")
  if d2 and months[mon:lower()] then return key(y2, months[mon:lower()], d2, h2, mi2, s2) end
  local mon3, d3, h3, mi3, s3, y3 = s:match("(%a%a%a)%s+(%d%d?)%s+(%d%d):(%d%d):(%d%d)%s+[%+%-]?%d*%s*(%d%d%d%d)")
  if mon3 and months[mon3:lower()] then return key(y3, months[mon3:lower()], d3, h3, mi3, s3) end
  if s:match("^%s*%d+%s*$") and #s:match("%d+") >= 9 then return M.date_key(tonumber(s)) end
  return nil
end

-- Standard input cannot be read twice: spool it (decompressed) into the run
-- directory first, and read that file in its place.
local function spool_stdin(dir, max)
  local zs, err = core.zopen("-")
  if not zs then return nil, err end
  local head, herr = zs:peek(4096)
  if not head then return nil, herr end
  local format = input.sniff(head)
  local path = dir .. "/stdin." .. (format == "jsonl" and "jsonl" or format == "warc" and "warc" or
    format == "mbox" and "mbox" or "txt")
  local f, ferr = io.open(path, "wb")
  if not f then return nil, ("cannot write %s: %s"):format(path, util.reason(ferr, path)) end
  local total = 0
  while true do
    local chunk, cerr = zs:read(1048576)
    if not chunk then f:close(); return nil, cerr end
    if chunk == "" then break end
    total = total + #chunk
    if format == "file" and total > max then
      f:close()
      return nil, ("standard input is larger than the limit of %d bytes; raise --max-bytes to include it"):format(max)
    end
    f:write(chunk)
  end
  zs:close()
  local ok, werr = f:close()
  if not ok then return nil, werr end
  return path, format
end

--- Cluster the inputs and write the kept documents and the map of removed
-- ones: the summary, or nil, err. OUTDIR appears whole (shingle.util.output:
-- built beside it under a lock and swapped in at the end; summary.json,
-- written last, marks a finished one), so it always holds one complete
-- result, the previous one or the new one.
function M:run(inputs)
  inputs = input.inputs(inputs) -- a path, a function or a list
  if type(inputs) == "string" then inputs = { inputs } end
  local o, oerr = util.output(self.dir, { kind = "dedup run", marker = "summary.json",
    log = function(msg) self.log("shingle: " .. msg) end })
  if not o then return nil, oerr end
  local final = self.dir
  self.dir = o.dir
  local sum, err = self:run_staged(inputs)
  self.dir = final
  if not sum then o:abort(); return nil, util.unstage(err, o) end
  local cok, cerr = o:commit()
  if not cok then return nil, cerr end
  return sum
end

-- The run, into self.dir (the staging directory).
function M:run_staged(inputs)
  local ok, err = util.mkdir_p(self.dir .. "/run")
  if not ok then return nil, err end
  local specs, formats = {}, {}
  for i, spec in ipairs(inputs) do
    if spec == "-" then
      local path, fmt = spool_stdin(self.dir .. "/run", self.pcfg.max_bytes or pipeline.defaults.max_bytes)
      if not path then return nil, fmt end
      specs[i], formats[i] = path, fmt
    else
      specs[i] = spec
    end
  end
  self.pcfg.outdir = self.dir .. "/run"
  local p = pipeline.new(self.pcfg)
  -- the exact scores of each removed document against the one kept (not
  -- always a candidate pair of phase 4) need every full set kept
  p.store_full = true
  self.pipeline = p
  -- where each document came from, by id: flat arrays (a million documents fit)
  local src_input, src_pos, src_len, src_path, dates = {}, {}, {}, {}, {}
  local current, input_of = 0, {}
  for i, spec in ipairs(specs) do input_of[spec] = i end
  local function on_batch(docs, src, first)
    local i = input_of[src.spec] or current
    current = i
    formats[i] = formats[i] or src.format
    for k, d in ipairs(docs) do
      local id = first + k - 1
      src_input[id] = i
      if d.mbox then src_path[id], src_pos[id] = d.mbox, d.number
      elseif d.line then src_pos[id] = d.line
      elseif d.offset then src_pos[id], src_len[id] = d.offset, d.length or 0
      else src_path[id] = d.path end
      local date = d.date
      if self.keep == "newest" and date == nil and d.path then date = require("lfs").attributes(d.path, "modification") end
      dates[id] = M.date_key(date)
    end
  end
  local steps = { function()
    local st, serr = p:sketch(specs, { on_batch = on_batch })
    if not st then return nil, serr end
    if (st.sketched or 0) == 0 then
      return nil, ("no documents to deduplicate in %s%s"):format(pipeline.describe_inputs(inputs),
        (st.documents or 0) > 0 and (" (%d could not be read)"):format(st.documents) or "")
    end
    return true
  end }
  for _, f in ipairs(p:finish_steps()) do steps[#steps + 1] = f end
  for _, step in ipairs(steps) do
    local sok, serr = step()
    if not sok then return nil, serr end
  end
  local reps, dups, statuses, tokens = core.read_docs(p.dir)
  if not reps then return nil, dups end
  -- one representative per cluster, by the keep policy
  local kept_of, relation_of, removed = {}, {}, {}
  local better
  if self.keep == "longest" then
    better = function(a, b) return tokens[a] > tokens[b] or (tokens[a] == tokens[b] and a < b) end
  elseif self.keep == "newest" then
    better = function(a, b)
      local da, db = dates[a] or -1, dates[b] or -1
      return da > db or (da == db and a < b)
    end
  else
    better = function(a, b) return a < b end
  end
  -- the relation of a removed document to the kept one: identical (exact,
  -- lexical, shingle: "Identical documents" of the paper) when both are in
  -- one group of identical documents, the weaker of their two relations to
  -- its representative; similar otherwise
  local names = { "exact", "lexical", "shingle" }
  local function relation(d, k)
    if reps[d] ~= reps[k] then return "similar" end
    return names[math.max(dups[d] == 0 and 1 or dups[d], dups[k] == 0 and 1 or dups[k])]
  end
  for c in p:clusters() do
    local best
    for _, m in ipairs(c.members) do if not best or better(m.id, best) then best = m.id end end
    for _, m in ipairs(c.members) do
      if m.id ~= best then
        kept_of[m.id] = best
        relation_of[m.id] = relation(m.id, best)
        removed[#removed + 1] = m.id
      end
    end
  end
  table.sort(removed)
  local urls = p:documents()
  -- the scores of each removed document against the one kept
  local as, bs = {}, {}
  for k, id in ipairs(removed) do as[k], bs[k] = id, kept_of[id] end
  local scores, serr = core.pair_estimates(p.dir, as, bs)
  if not scores then return nil, serr end
  local function r4(x) return x and math.floor(x * 10000 + 0.5) / 10000 end
  local files = { { path = self.dir .. "/removed.jsonl", format = "jsonl", shape = { order = M.order.removed } } }
  local fmt = self.pcfg.output_format
  if fmt and fmt ~= "jsonl" then
    files[2] = { path = self.dir .. "/" .. writer.file_name("removed", fmt), format = fmt,
      shape = { order = M.order.removed, columns = M.columns.removed, rows = M.rows.removed } }
  end
  ok, err = writer.write_files(files, function(w)
    for k, id in ipairs(removed) do
      local s = scores[k]
      local rec = { removed = urls[id], kept = urls[kept_of[id]], id = id, kept_id = kept_of[id],
        relation = relation_of[id], resemblance = r4(s.resemblance), containment = r4(s.containment),
        contained = r4(s.contained) }
      if s.exact then
        rec.exact = { resemblance = r4(s.exact.resemblance), containment = r4(s.exact.containment),
          contained = r4(s.exact.contained) }
      end
      w:write(rec)
    end
  end)
  if not ok then return nil, err end
  local outs
  outs, err = self:write_kept(specs, formats, kept_of, statuses, src_input, src_pos, src_len, src_path, urls)
  if not outs then return nil, err end
  local st = p.stats
  local by_relation = {}
  for _, id in ipairs(removed) do by_relation[relation_of[id]] = (by_relation[relation_of[id]] or 0) + 1 end
  local kept = 0
  for id = 1, #statuses do if statuses[id] == 0 and not kept_of[id] then kept = kept + 1 end end
  self.summary = { documents = st.documents, skipped = st.skipped, kept = kept,
    removed = #removed, removed_by_relation = writer.object(by_relation), clusters = st.clusters and st.clusters.clusters or 0,
    keep = self.keep, policy = p.cfg.policy, threshold = p.cfg.threshold, verify = p.cfg.verify, outputs = writer.object(outs) }
  ok, err = writer.write_json(self.dir .. "/summary.json", self.summary, M.order.summary)
  if not ok then return nil, err end
  return self.summary
end

local function basename(path) return (path:gsub("/+$", ""):match("([^/]+)$")) or "input" end

-- copy a file's bytes [from, from + n) (or all) to an open file
local function copy_range(path, out, from, n)
  local f, err = io.open(path, "rb")
  if not f then return nil, ("cannot read %s: %s"):format(path, util.reason(err, path)) end
  if from then f:seek("set", from) end
  local left = n
  while left == nil or left > 0 do
    local chunk = f:read(left and math.min(left, 1048576) or (1048576))
    if not chunk then break end
    out:write(chunk)
    if left then left = left - #chunk end
  end
  f:close()
  return true
end

local function copy_file(from, to)
  local out, err = io.open(to, "wb")
  if not out then return nil, ("cannot write %s: %s"):format(to, util.reason(err, to)) end
  local ok, cerr = copy_range(from, out)
  out:close()
  return ok, cerr
end

--- Write what is kept, input by input; returns { [output] = documents kept }.
function M:write_kept(specs, formats, kept_of, statuses, src_input, src_pos, src_len, src_path, urls)
  local lfs = require "lfs"
  local outs, names = {}, {}
  local function out_name(spec, ext)
    local name = basename(input.bare_name(spec)):gsub("%.[^.]*$", "") .. ext
    while names[name] do name = "_" .. name end
    names[name] = true
    return name
  end
  local n = #statuses
  local function keeps(id) return statuses[id] == 0 and not kept_of[id] end
  -- documents by input
  local by_input = {}
  for id = 1, n do
    local i = src_input[id]
    if i then by_input[i] = by_input[i] or {}; table.insert(by_input[i], id) end
  end
  local listed = {}
  for i, spec in ipairs(specs) do
    local fmt, ids = formats[i], by_input[i] or {}
    if fmt == "jsonl" then
      local keep_line = {}
      for _, id in ipairs(ids) do if keeps(id) then keep_line[src_pos[id]] = true end end
      local name = out_name(spec, ".jsonl")
      local zs, zerr = core.zopen(spec)
      if not zs then return nil, zerr end
      local count = 0
      local ok, err = util.atomic_write(self.dir .. "/" .. name, function(f)
        while true do
          local line, lerr = zs:line(1073741824)
          if line == nil then if lerr then error(lerr, 0) end break end
          if line and keep_line[zs:lineno()] then f:write(line, "\n"); count = count + 1 end
        end
      end)
      zs:close()
      if not ok then return nil, err end
      outs[name] = count
    elseif fmt == "warc" then
      -- gzip files: the members of kept records, as they were; otherwise the
      -- kept records' bytes (of the decompressed stream for zstd)
      local zs, zerr = core.zopen(spec)
      if not zs then return nil, zerr end
      zs:peek(4)
      local kind = zs:kind()
      zs:close()
      local name = out_name(spec, kind == "gzip" and ".warc.gz" or ".warc")
      local ranges = {}
      for _, id in ipairs(ids) do
        if keeps(id) then
          if (src_len[id] or 0) == 0 then
            return nil, ("%s: record at byte %d shares its gzip member with others; shingle dedup copies whole members "
              .. "(one record per member, as crawlers write them)"):format(spec, src_pos[id])
          end
          ranges[#ranges + 1] = { src_pos[id], src_len[id] }
        end
      end
      local ok, err = util.atomic_write(self.dir .. "/" .. name, function(f)
        if kind == "gzip" or kind == "plain" then
          for _, r in ipairs(ranges) do assert(copy_range(spec, f, r[1], r[2])) end
        else
          local z = assert(core.zopen(spec))
          local pos = 0
          for _, r in ipairs(ranges) do
            if r[1] > pos then z:read(r[1] - pos) end
            f:write(z:read(r[2]))
            pos = r[1] + r[2]
          end
          z:close()
        end
      end)
      if not ok then return nil, err end
      outs[name] = #ranges
    else
      -- files, and mbox archives (given or found in directories)
      local mboxes = {}
      for _, id in ipairs(ids) do
        if src_pos[id] and src_path[id] then
          local mb = mboxes[src_path[id]]
          if not mb then mb = { keep = {}, n = 0 }; mboxes[src_path[id]] = mb; mboxes[#mboxes + 1] = src_path[id] end
          if keeps(id) then mb.keep[src_pos[id]] = true; mb.n = mb.n + 1 end
        elseif src_path[id] and keeps(id) then
          listed[#listed + 1] = { path = src_path[id], root = formats[i] == "dir" and spec or nil }
        end
      end
      for _, path in ipairs(mboxes) do
        local mb = mboxes[path]
        local name = out_name(path, ".mbox")
        local r, rerr = core.mbox(path, 1073741824)
        if not r then return nil, rerr end
        local ok, err = util.atomic_write(self.dir .. "/" .. name, function(f)
          repeat
            local docs, _, done = r:batch(256)
            for _, d in ipairs(docs) do
              if mb.keep[d.number] then
                -- mboxrd: a line "From " (after any number of ">") gains one ">"
                local text = ("\n" .. d.text):gsub("\n(>*From )", "\n>%1"):sub(2)
                f:write(d.from_line, "\n", text, text:sub(-1) == "\n" and "" or "\n", "\n")
              end
            end
          until done
        end)
        r:close()
        if not ok then return nil, err end
        outs[name] = mb.n
      end
    end
  end
  local ok, err = util.atomic_write(self.dir .. "/kept.txt", function(f)
    for _, e in ipairs(listed) do f:write(e.path, "\n") end
  end)
  if not ok then return nil, err end
  outs["kept.txt"] = #listed
  if self.files ~= "list" and #listed > 0 then
    for _, e in ipairs(listed) do
      local rel
      if e.root then
        local root = e.root:gsub("/+$", "")
        rel = basename(root) .. "/" .. e.path:sub(#root + 2)
      else
        rel = e.path:gsub("^/+", ""):gsub("%.%./", "")
      end
      local to = self.dir .. "/files/" .. rel
      local mok, merr = util.mkdir_p(to:match("^(.*)/[^/]*$"))
      if not mok then return nil, merr end
      os.remove(to)
      local lok, lerr
      if self.files == "copy" then lok, lerr = copy_file(e.path, to)
      elseif self.files == "link" then lok, lerr = lfs.link(e.path, to)
      else
        local abs = e.path:sub(1, 1) == "/" and e.path or (lfs.currentdir() .. "/" .. e.path)
        lok, lerr = lfs.link(abs, to, true)
      end
      if not lok then return nil, ("cannot %s %s to %s: %s"):format(self.files, e.path, to, tostring(lerr)) end
    end
    outs["files/"] = #listed
  end
  return outs
end

return M
