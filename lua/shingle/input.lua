--- Inputs as users have them: a directory tree (each file a document, its
-- path its URL), a list of paths, JSON Lines, WARC files (plain or gzip per
-- record), or standard input. Every source yields documents in batches, as
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
  local head = s:sub(1, 2048):lower()
  return head:find("^%s*<") ~= nil and (head:find("<html", 1, true) or head:find("<body", 1, true)
    or head:find("<!doctype html", 1, true) or head:find("<p>", 1, true) or head:find("<div", 1, true)) ~= nil
end
M.looks_html = looks_html

local function html_by_name(path)
  return path:lower():match("%.x?html?$") ~= nil
end

--- The format of one input argument: dir, warc, jsonl, list or file.
function M.detect(spec, format)
  if format and format ~= "auto" then return format end
  if spec == "-" then return "jsonl" end
  if is_dir(spec) then return "dir" end
  local l = spec:lower()
  if l:match("%.warc$") or l:match("%.warc%.gz$") or l:match("%.arc%.gz$") then return "warc" end
  if l:match("%.jsonl$") or l:match("%.ndjson$") then return "jsonl" end
  return "file"
end

--- Every regular file below dir, sorted, so ids are stable across runs.
function M.walk(dir)
  local lfs = require "lfs"
  local out = {}
  local function rec(d)
    local names = {}
    for name in lfs.dir(d) do
      if name ~= "." and name ~= ".." then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do
      local p = d .. "/" .. name
      local mode = lfs.symlinkattributes(p, "mode")
      if mode == "directory" then rec(p)
      elseif mode == "file" then out[#out + 1] = p end
    end
  end
  rec(dir)
  return out
end

--- A source over one input argument; src:batch(n) returns up to n documents,
-- the messages for skipped ones, and whether the source is exhausted. opts: format, fields = { id, url, text,
-- date }, html (true: everything is HTML; false: nothing; nil: by name or
-- content), list (the argument is a file of paths).
function M.source(spec, opts)
  opts = opts or {}
  local format = M.detect(spec, opts.list and "list" or opts.format)
  local src = { spec = spec, format = format }
  local function html_of(path, text)
    if opts.html ~= nil then return opts.html end
    if path and html_by_name(path) then return true end
    return text and looks_html(text) or false
  end

  if format == "dir" or format == "list" or format == "file" then
    local paths
    if format == "dir" then
      paths = M.walk(spec)
    elseif format == "list" then
      paths = {}
      local f, err = io.open(spec, "r")
      if not f then return nil, ("cannot read the list of paths %s: %s"):format(spec, err) end
      for line in f:lines() do
        if line:match("%S") then paths[#paths + 1] = line:match("^%s*(.-)%s*$") end
      end
      f:close()
    else
      local f, err = io.open(spec, "rb")
      if not f then return nil, ("cannot read %s: %s"):format(spec, err) end
      f:close()
      paths = { spec }
    end
    src.total = #paths
    local i = 0
    function src:batch(n)
      local docs = {}
      while #docs < n and i < #paths do
        i = i + 1
        local p = paths[i]
        local html = opts.html
        if html == nil then html = html_by_name(p) end
        docs[#docs + 1] = { path = p, url = p, html = html }
      end
      return docs, {}, i >= #paths
    end
    return src
  end

  if format == "jsonl" then
    local cjson = require("cjson").new()
    cjson.decode_invalid_numbers(false)
    local fields = opts.fields or {}
    local fid, furl, ftext, fdate = fields.id or "id", fields.url or "url", fields.text or "text", fields.date or "date"
    local f, err
    if spec == "-" then f = io.stdin else f, err = io.open(spec, "rb") end
    if not f then return nil, ("cannot read %s: %s"):format(spec, err) end
    local name = spec == "-" and "standard input" or spec
    if spec ~= "-" then src.total_bytes = f:seek("end"); f:seek("set", 0) end
    local lineno, done = 0, false
    src.bytes = 0
    function src:batch(n)
      local docs, errors = {}, {}
      while #docs < n and not done do
        local line = f:read("*l")
        if not line then done = true; if spec ~= "-" then f:close() end; break end
        lineno = lineno + 1
        src.bytes = src.bytes + #line + 1
        if line:match("%S") then
          local ok, rec = pcall(cjson.decode, line)
          if not ok or type(rec) ~= "table" then
            errors[#errors + 1] = ("%s: line %d: not a JSON object (%s); skipped"):format(name, lineno,
              ok and type(rec) or tostring(rec):gsub("^.-: ", ""))
          elseif type(rec[ftext]) ~= "string" then
            errors[#errors + 1] = ("%s: line %d: no string field '%s' (set the text field with --text-field); skipped")
              :format(name, lineno, ftext)
          else
            local url = rec[furl] or rec[fid]
            local text = rec[ftext]
            docs[#docs + 1] = { text = text, url = url ~= nil and tostring(url) or (name .. ":" .. lineno),
              date = rec[fdate] ~= nil and tostring(rec[fdate]) or nil, html = html_of(nil, text) }
          end
        end
      end
      return docs, errors, done
    end
    return src
  end

  if format == "warc" then
    local r, err = core.warc(spec)
    if not r then return nil, err end
    if spec ~= "-" then
      local f = io.open(spec, "rb")
      if f then src.total_bytes = f:seek("end"); f:close() end
    end
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

  return nil, ("unknown input format '%s' for %s; use dir, list, jsonl, warc or file"):format(format, spec)
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
