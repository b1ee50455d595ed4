--- Inputs as users have them: a directory tree (each file a document, its
-- path its URL), a list of paths, JSON Lines, WARC files (plain or gzip per
-- record), or standard input; any of them (and every file of a directory)
-- may be compressed with gzip or zstd, recognised by its magic bytes and
-- decompressed in C (core/zio.h). Every source yields documents in batches, as
-- the tables phase 1 hands to the C pool: { path = p } (the C workers read the
-- file) or { text = s }, plus url, date and html. Problems with one document
-- or line are reported as "file: place: what", and skipped.
local core = require "shingle.core"

local M = {}

local function is_dir(path)
  local lfs = require "lfs"
  return lfs.attributes(path, "mode") == "directory"
end

local function looks_html(s)
  if not s:find("^%s*<") then return false end -- most texts stop here, before any copy
  local head = s:sub(1, 2048):lower()
  return (head:find("<html", 1, true) or head:find("<body", 1, true)
    or head:find("<!doctype html", 1, true) or head:find("<p>", 1, true) or head:find("<div", 1, true)) ~= nil
end
M.looks_html = looks_html

--- A name without its compression suffix (.gz, .zst, .zstd): what decides
-- the format of page.html.gz or pages.jsonl.zst.
local function bare_name(path)
  local l = path:lower()
  return (l:gsub("%.gz$", ""):gsub("%.zstd?$", ""))
end
M.bare_name = bare_name

-- .html, .htm, .xhtml, .xhtm and .shtml (server-side includes), compressed or not
local function html_by_name(path)
  local l = bare_name(path)
  return l:match("%.x?html?$") ~= nil or l:match("%.shtml$") ~= nil
end
M.html_by_name = html_by_name

--- Whether a document is HTML: forced (true or false, from --html or
-- --text) wins; else a file is HTML by its name (.html, .htm, .xhtml,
-- .shtml), and a text without a name (a JSON Lines record, standard input)
-- by its content (it starts with markup: <html, <body, <!doctype html, <p>, <div).
function M.is_html(path, text, forced)
  if forced ~= nil then return forced end
  if path then return html_by_name(path) end
  return text ~= nil and looks_html(text)
end

--- The format of one input argument: dir, warc, jsonl, list, file, or
-- stdin ("-": decided by its content when it is read, see M.sniff).
-- A compression suffix does not count: pages.jsonl.gz is JSON Lines.
function M.detect(spec, format)
  if format and format ~= "auto" then return format end
  if spec == "-" then return "stdin" end
  if is_dir(spec) then return "dir" end
  local l = bare_name(spec)
  if l:match("%.warc$") or l:match("%.arc$") then return "warc" end
  if l:match("%.jsonl$") or l:match("%.ndjson$") then return "jsonl" end
  if l:match("%.mbox$") or l:match("%.mbx$") then return "mbox" end
  return "file"
end

-- the largest document (after decompression) when the caller gives no max_bytes
local DEFAULT_MAX_BYTES = 64 * 1024 ^ 2

--- The format of data from its first bytes (decompressed): warc, jsonl,
-- mbox, or file (one document; an email message is one too).
function M.sniff(head)
  if head:match("^WARC/1%.") then return "warc" end
  if head:match("^\239\187\191%s*{") or head:match("^%s*{") then return "jsonl" end
  if core.mail_sniff(head) == "mbox" then return "mbox" end
  return "file"
end

--- A source over the messages of an mbox archive (plain or compressed; a
-- path or a core.zopen stream): documents { text = message, url = NAME#N,
-- date }, each rendered by the pool as an email (core/mail.h).
function M.mbox_source(spec, opts, name)
  opts = opts or {}
  local r, err = core.mbox(spec, opts.max_bytes or DEFAULT_MAX_BYTES, name)
  if not r then return nil, err end
  local src = { spec = spec, format = "mbox" }
  local done = false
  function src:batch(n)
    if done then return {}, {}, true end
    local docs, errors
    docs, errors, done = r:batch(n)
    if done then r:close() end
    if opts.html ~= nil then for _, d in ipairs(docs) do d.html = opts.html end end
    return docs, errors, done
  end
  return src
end

--- Every regular file below dir, sorted, so ids are stable across runs, and
-- a message for each directory below it that cannot be read ("D: cannot
-- read the directory: why"), which is skipped. The output directories of
-- shingle runs are not inputs: beside a lock file .NAME.lock (which
-- shingle.util.output leaves beside every output NAME), NAME, .NAME.new (a
-- run writing it now: `cluster DIR -o DIR/out` read its own files) and
-- .NAME.old are passed over, each with a note (the third result). The
-- fourth: { sizes, mtimes } of the files, in the order of the first.
function M.walk(dir)
  local out, problems, notes, sizes, mtimes = {}, {}, {}, {}, {}
  local function rec(d)
    -- one call per directory (core/lua/l_report.c): the names sorted by their
    -- bytes, kinds as lfs.symlinkattributes gives them (links not followed)
    local names, kinds, size, mtime = core.dir_entries(d)
    if not names then
      problems[#problems + 1] = ("%s: cannot read the directory: %s"):format(d, tostring(kinds))
      return
    end
    local outputs = {}
    for _, name in ipairs(names) do
      local o = name:match("^%.(.+)%.lock$")
      if o then
        outputs[name], outputs[o], outputs["." .. o .. ".new"], outputs["." .. o .. ".old"] = true, true, true, true
      end
    end
    for i, name in ipairs(names) do
      local p = d .. "/" .. name
      local mode = kinds[i]
      if outputs[name] then
        if mode == "directory" then
          notes[#notes + 1] = ("%s: the output directory of a shingle run (beside its lock file); not read as input"):format(p)
        end
      elseif mode == "directory" then rec(p)
      elseif mode == "file" then
        local n = #out + 1
        out[n], sizes[n], mtimes[n] = p, size[i], mtime[i]
      end
    end
  end
  rec(dir)
  return out, problems, notes, { sizes = sizes, mtimes = mtimes }
end

--- A source over one input argument; src:batch(n) returns up to n documents,
-- the messages for skipped ones, and whether the source is exhausted. opts: format, fields = { id, url, text,
-- date }, html (true: everything is HTML; false: nothing; nil: by name or
-- content), list (the argument is a file of paths), max_bytes (the largest
-- document: a JSON Lines line longer than this is refused before it is read
-- whole; 64 MiB by default). A piece of a JSON Lines file (the distributed
-- run's split, shingle.dist): start and stop (byte offsets; start at a
-- line's first byte) and line (the number of the line at start). src.paths
-- is the list of documents of a directory, list or file.
function M.source(spec, opts)
  opts = opts or {}
  local format = M.detect(spec, opts.list and "list" or opts.format)
  local src = { spec = spec, format = format }

  if format == "dir" or format == "list" or format == "file" then
    local paths, problems, notes
    if format == "dir" then
      paths, problems, notes = M.walk(spec)
    elseif format == "list" then
      paths = {}
      local f, err = io.open(spec, "r")
      if not f then return nil, ("cannot read the list of paths %s: %s"):format(spec, require("shingle.util").reason(err, spec)) end
      for line in f:lines() do
        if line:match("%S") then paths[#paths + 1] = line:match("^%s*(.-)%s*$") end
      end
      f:close()
    else
      local f, err = io.open(spec, "rb")
      if not f then return nil, ("cannot read %s: %s"):format(spec, require("shingle.util").reason(err, spec)) end
      f:close()
      paths = { spec }
    end
    local ps = M.paths_source(paths, opts)
    ps.spec, ps.format = spec, format
    ps.problems = problems -- directories below that cannot be read, reported with the first batch
    ps.notes = notes       -- output directories passed over: warned, not counted
    return ps
  end

  -- standard input: decompressed if it is compressed, its format by its content
  local stream
  if format == "stdin" then
    local zs, zerr = core.zopen("-")
    if not zs then return nil, zerr end
    local head, herr = zs:peek(4096)
    if not head then return nil, herr end
    stream, format = zs, (opts.format and opts.format ~= "auto") and opts.format or M.sniff(head)
    src.format = format
  end
  local max_bytes = opts.max_bytes or DEFAULT_MAX_BYTES
  local name = spec == "-" and "standard input" or spec

  if format == "file" and stream then
    -- one document from standard input
    local done = false
    function src:batch()
      if done then return {}, {}, true end
      done = true
      local text, err = stream:read(max_bytes + 1)
      stream:close()
      if not text then return {}, { err }, true end
      if #text > max_bytes then
        return {}, { ("standard input is larger than the limit of %d bytes; raise --max-bytes to include it"):format(max_bytes) }, true
      end
      return { { text = text, url = "-", html = M.is_html(nil, text, opts.html) } }, {}, true
    end
    return src
  end

  if format == "mbox" then
    local msrc, merr = M.mbox_source(stream or spec, opts, stream and name or nil)
    if not msrc then return nil, merr end
    msrc.total_bytes = not stream and require("lfs").attributes(spec, "size") or nil
    return msrc
  end

  if format == "jsonl" then
    -- core/jsonl.c: streamed with a bounded line, every field checked; a
    -- compressed file (or standard input) through a core/zio stream
    local r, err = core.jsonl(stream or spec, { fields = opts.fields, max_line = max_bytes, start = opts.start,
      stop = opts.stop, line = opts.line }, name)
    if not r then return nil, err end
    if opts.start then
      src.total_bytes = opts.stop - opts.start
    elseif not stream then
      src.total_bytes = require("lfs").attributes(spec, "size")
    end
    local done = false
    src.bytes = 0
    function src:batch(n)
      if done then return {}, {}, true end
      local docs, errors
      docs, errors, done = r:batch(n)
      for _, d in ipairs(docs) do d.html = M.is_html(nil, d.text, opts.html) end
      src.bytes = r:offset()
      if done then r:close() end
      return docs, errors, done
    end
    return src
  end

  if format == "warc" then
    -- gzip WARC files are read by the WARC reader itself (member by member);
    -- zstd ones and standard input through a decompressing stream
    local r, err
    if not stream and spec ~= "-" then
      local zs, zerr = core.zopen(spec)
      if not zs then return nil, zerr end
      local _, perr = zs:peek(4)
      if perr then zs:close(); return nil, perr end
      if zs:kind() == "zstd" then stream = zs else zs:close() end
      src.total_bytes = require("lfs").attributes(spec, "size")
    end
    -- a record larger than the largest document is passed over unread (its
    -- Content-Length), and so is an HTTP body that decodes past it
    local wopts = { max_record = max_bytes }
    if stream then r, err = core.warc(stream, wopts, name) else r, err = core.warc(spec, wopts) end
    if not r then return nil, err end
    local done = false
    src.bytes = 0
    function src:batch(n)
      if done then return {}, {}, true end
      local docs, errors = r:batch(n)
      if #docs < n and #errors == 0 then done = true; r:close() end
      for _, d in ipairs(docs) do
        if opts.html ~= nil then d.html = opts.html end
        src.bytes = d.offset
      end
      return docs, errors, done
    end
    return src
  end

  if stream then stream:close() end
  return nil, ("unknown input format '%s' for %s; use dir, list, jsonl, warc, mbox or file"):format(format, spec)
end

--- A source over a list of file paths, each one document (its path its
-- URL), except mbox archives: they are recognised by content
-- (core.mail_sniff_files, a few KiB of each file, 512 files at a time) and
-- read message by message. opts: html, max_bytes, mail (false: no sniffing).
function M.paths_source(paths, opts)
  opts = opts or {}
  local src = { paths = paths, total = #paths }
  local i, sniffed, mail, sub = 0, 0, {}, nil
  local pending, pending_first -- the next files' sniff, running on a thread (core.mail_sniff_start)
  function src:batch(n)
    local docs, errors = {}, src.problems or {}
    src.problems = nil -- what the caller set (unreadable directories) is reported once, with the first batch
    while #docs < n do
      if sub then
        local d, e, done = sub:batch(n - #docs)
        for _, x in ipairs(d) do docs[#docs + 1] = x end
        for _, x in ipairs(e) do errors[#errors + 1] = x end
        if done then sub = nil end
      elseif i < #paths then
        i = i + 1
        if opts.mail ~= false and i > sniffed then
          local stop = math.min(#paths, i + 511)
          if pending and pending_first == i then mail = pending:wait()
          else mail = core.mail_sniff_files(paths, i, stop) end
          sniffed = stop
          -- the following 512 files are sniffed on a thread while these are sketched
          pending, pending_first = nil, nil
          if stop < #paths then
            pending, pending_first = core.mail_sniff_start(paths, stop + 1, math.min(#paths, stop + 512)), stop + 1
          end
        end
        local p = paths[i]
        if mail[i] == "mbox" then
          local err
          sub, err = M.mbox_source(p, opts)
          if not sub then errors[#errors + 1] = err end
        else
          docs[#docs + 1] = { path = p, url = p, html = M.is_html(p, nil, opts.html) }
        end
      else
        break
      end
    end
    return docs, errors, i >= #paths and not sub
  end
  return src
end

--- A source over a Lua function: each call returns a document { url, text,
-- date, html } (or { path = p }), nil at the end.
function M.function_source(fn)
  local done = false
  return { batch = function(_, n)
    local docs = {}
    while not done and #docs < n do
      local d = fn()
      if d == nil then done = true
      elseif type(d) == "string" then docs[#docs + 1] = { text = d } -- a text alone
      else docs[#docs + 1] = d end
    end
    return docs, {}, done
  end }
end

--- The inputs as a list: a path or a function (an iterator returning one
-- document per call: io.lines, coroutine.wrap, a closure) alone is a list of
-- one; documents given as tables ({ text, url, date }) in the list are read
-- from memory, in their order among the other inputs.
function M.inputs(inputs)
  local t = type(inputs)
  if t == "string" or t == "function" then return { inputs } end
  if t ~= "table" then error(("inputs must be a path, a function or a list of them, not a %s"):format(t), 3) end
  local out, run = {}, nil
  for _, spec in ipairs(inputs) do
    if type(spec) == "table" and spec.text ~= nil then
      if not run then
        run = {}
        local docs, i = run, 0
        out[#out + 1] = function() i = i + 1 return docs[i] end
      end
      run[#run + 1] = spec
    else
      run = nil
      out[#out + 1] = spec
    end
  end
  return out
end

local Reader = {}
Reader.__index = Reader

--- A reader over a list of inputs (paths, directories, JSON Lines, WARC,
-- "-", or Lua functions returning one document per call) with the one
-- policy for problems. opts: format, fields, html (as for M.source), batch
-- (documents per batch, 512), strict, warn (a function of a message; the
-- default drops it), source (a function(spec) -> src or nil, err in place of
-- M.source, for callers that read some inputs their own way), on_source (a
-- function(src) called for every source opened, e.g. for a progress total).
-- r.skipped counts the problems by kind: inputs, records, documents.
function M.reader(opts)
  opts = opts or {}
  return setmetatable({ opts = opts, warn = opts.warn or function() end,
    skipped = { inputs = 0, records = 0, documents = 0 } }, Reader)
end

--- One problem of a kind (inputs: a whole input unreadable; records: a
-- broken line or record; documents: one that cannot be read or sketched):
-- warned and counted, true; or with strict nil, err (the run stops).
function Reader:problem(kind, msg)
  if self.opts.strict then
    return nil, kind == "inputs" and msg or (msg .. " (and --strict makes it fatal)")
  end
  self.skipped[kind] = self.skipped[kind] + 1
  self.warn(kind == "inputs" and (msg .. "; skipped") or msg)
  return true
end

--- All the problems counted so far.
function Reader:total_skipped()
  local s = self.skipped
  return s.inputs + s.records + s.documents
end

--- Inputs named by path must exist, whatever the policy for problems: a
-- mistyped path is an error, not an empty input. true, or nil and a message
-- naming the first that does not.
function M.check_exist(inputs)
  local lfs = require "lfs"
  for _, spec in ipairs(inputs) do
    if type(spec) == "string" and spec ~= "-" and not lfs.attributes(spec, "mode") then
      local _, err = io.open(spec, "rb")
      return nil, ("cannot read input %s: %s"):format(spec, (err or "no such file or directory"):gsub("^.-: ", ""))
    end
  end
  return true
end

--- Call fn(docs, src) with every batch of every input, in order; fn returns
-- true, or nil, err to stop. Returns true, or nil, err (from fn, or the first
-- problem under strict).
function Reader:each(inputs, fn)
  local o = self.opts
  inputs = M.inputs(inputs)
  local ok, err = M.check_exist(inputs)
  if not ok then return nil, err end
  for _, spec in ipairs(inputs) do
    local src, serr
    if type(spec) == "function" then src = M.function_source(spec)
    elseif o.source then src, serr = o.source(spec)
    else
      src, serr = M.source(spec, { format = o.format, fields = o.fields, html = o.html, max_bytes = o.max_bytes, mail = o.mail })
    end
    if not src then
      local ok, err = self:problem("inputs", serr)
      if not ok then return nil, err end
    else
      if o.on_source then o.on_source(src) end
      for _, note in ipairs(src.notes or {}) do self.warn(note) end
      repeat
        local docs, errors, done = src:batch(o.batch or 512)
        for _, e in ipairs(errors) do
          local ok, err = self:problem("records", e)
          if not ok then return nil, err end
        end
        if #docs > 0 then
          local ok, err = fn(docs, src)
          if not ok then return nil, err end
        end
      until done
    end
  end
  return true
end

--- Iterate over the documents of all inputs one by one: for a script that
-- feeds its own documents (each as { url, date, html, text or path }).
function M.documents(specs, opts)
  if type(specs) == "string" then specs = { specs } end
  local k, src, buf, j = 0, nil, {}, 1
  return function()
    while true do
      if j <= #buf then j = j + 1; return buf[j - 1] end
      if not src then
        k = k + 1
        if k > #specs then return nil end
        local err
        src, err = M.source(specs[k], opts)
        if not src then error(err, 2) end
      end
      local docs, _, done = src:batch(256)
      if done then src = nil end
      buf, j = docs, 1
    end
  end
end

return M
