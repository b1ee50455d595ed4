--- The one output writer: JSON, JSON Lines, CSV and TSV for every command
-- and module that writes records (clusters.jsonl, pairs.jsonl, summaries,
-- collections, query answers, HTTP answers).
--
--   local writer = require "shingle.writer"
--   writer.json({ b = 1, a = { } })             --> {"a":[],"b":1}
--   local w = writer.new(io.stdout, "csv", { columns = { "a", "b", "resemblance" } })
--   w:write(rec) ... w:finish()
--   writer.write_file(path, "jsonl", shape, function(w) w:write(rec) end)  -- atomic
--
-- What the same value always becomes, on Lua 5.4, 5.3 and LuaJIT alike, so
-- that an output is byte for byte the same from one run to the next:
-- * object keys in a fixed order: the names of opts.order first, in that
--   order (at every depth), then the others sorted by their bytes;
-- * a number with an integer value (an integer, or a float like 67.0) as its
--   digits; any other as the shortest of %.15g, %.16g, %.17g that reads back
--   as the same double; NaN and infinities as null (JSON has none);
-- * strings with only the escapes JSON needs ('"', '\', control characters;
--   '/' is left as it is), and bytes that are not UTF-8 each replaced by
--   U+FFFD (JSON text is UTF-8; a URL keeps its bytes by percent-encoding
--   them before it gets here, as docs.jsonl's do);
-- * an empty table as [] (a list), unless marked by writer.object;
--   writer.array marks a list explicitly; cjson.null is null.
--
-- CSV (RFC 4180: a header line, fields with ',', '"', CR or LF quoted, '"'
-- doubled; lines end in LF) and TSV (a header line; tab, LF, CR and '\'
-- in a field written \t, \n, \r, \\) have one line per row and a fixed list
-- of columns: shape.columns, and shape.rows(rec) to turn a record into rows
-- (a cluster into one row per member); a table in a cell is its JSON text.
local M = {}

local byte, char, find, format, gsub, sub = string.byte, string.char, string.find, string.format, string.gsub, string.sub
local concat, sort = table.concat, table.sort
local floor, huge = math.floor, math.huge
local mtype = math.type -- nil on LuaJIT

local null_ok, cjson = pcall(require, "cjson")
M.null = null_ok and cjson.null or setmetatable({}, { __tostring = function() return "null" end })

local array_mt = { __name = "shingle.writer.array" }
local object_mt = { __name = "shingle.writer.object" }

--- Mark t (or a new table) as a JSON list: [] even when empty.
function M.array(t) return setmetatable(t or {}, array_mt) end

--- Mark t (or a new table) as a JSON object: {} even when empty.
function M.object(t) return setmetatable(t or {}, object_mt) end

M.formats = { "jsonl", "json", "csv", "tsv" }
local known_format = { jsonl = true, json = true, csv = true, tsv = true }

-- ---- values ----------------------------------------------------------------

--- A number as JSON text (see above).
function M.number(x)
  if mtype and mtype(x) == "integer" then return format("%d", x) end
  if x ~= x or x == huge or x == -huge then return "null" end
  if x == floor(x) and x > -2 ^ 63 and x < 2 ^ 63 then
    -- an integer value; beyond 2^53 a float holds no odd digits, %d writes what it holds
    return format("%d", x)
  end
  local s = format("%.15g", x)
  if tonumber(s) ~= x then
    s = format("%.16g", x)
    if tonumber(s) ~= x then s = format("%.17g", x) end
  end
  return s
end

-- Bytes that are not UTF-8 replaced by U+FFFD, one per byte (the lead byte
-- of a broken sequence, or a stray continuation byte). Valid: the
-- shortest form, no surrogates, at most U+10FFFF (RFC 3629).
local REPLACEMENT = "\239\191\189"
local function utf8_clean(s)
  local i, n = 1, #s
  local out, last = nil, 1
  while true do
    i = find(s, "[\128-\255]", i)
    if not i then break end
    local c = byte(s, i)
    local len, lo, hi = 0, 0x80, 0xBF
    if c >= 0xC2 and c <= 0xDF then len = 2
    elseif c >= 0xE0 and c <= 0xEF then
      len = 3
      if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end
    elseif c >= 0xF0 and c <= 0xF4 then
      len = 4
      if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
    end
    local ok = len > 0 and i + len - 1 <= n
    if ok then
      local c2 = byte(s, i + 1)
      ok = c2 >= lo and c2 <= hi
      for j = i + 2, i + len - 1 do
        if not ok then break end
        local cj = byte(s, j)
        ok = cj >= 0x80 and cj <= 0xBF
      end
    end
    if ok then
      i = i + len
    else
      out = out or {}
      out[#out + 1] = sub(s, last, i - 1)
      out[#out + 1] = REPLACEMENT
      i = i + 1
      last = i
    end
  end
  if not out then return s end
  out[#out + 1] = sub(s, last)
  return concat(out)
end
M.utf8_clean = utf8_clean

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
  ["\t"] = "\\t" }
for c = 0, 31 do escapes[char(c)] = escapes[char(c)] or format("\\u%04x", c) end
escapes["\127"] = "\\u007f"

--- A string as JSON text (see above).
local function string_json(s)
  if not find(s, '[%z\1-\31"\\\127-\255]') then return '"' .. s .. '"' end
  if find(s, "[\128-\255]") then s = utf8_clean(s) end
  return '"' .. gsub(s, '[%z\1-\31"\\\127]', escapes) .. '"'
end
M.string = string_json

-- ---- JSON --------------------------------------------------------------------

-- rank[name] = position of name in an order list; keys sort by rank, then bytes
-- rank[name] = its position; rank[0] = the list, rank[-1] its length,
-- rank[name .. "\0"] = the name as JSON text with its colon (the C encoder
-- reads rank[0] and whether rank[name] is there)
local function ranked(order)
  local rank = { [0] = order or {}, [-1] = order and #order or 0 }
  for i, k in ipairs(order or {}) do
    rank[k] = i
    rank[k .. "\0"] = string_json(k) .. ":"
  end
  return rank
end

-- Byte order, whatever the locale (Lua's < on strings is strcoll's order,
-- which a host program that sets LC_COLLATE would change).
local function bytes_less(a, b)
  local n = #a < #b and #a or #b
  for i = 1, n do
    local x, y = byte(a, i), byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
M.bytes_less = bytes_less


local function is_list(v)
  local mt = getmetatable(v)
  if mt == array_mt then return true end
  if mt == object_mt then return false end
  if v[1] ~= nil then return true end
  return next(v) == nil
end

local encode

local function encode_table(v, out, n, rank, depth)
  if depth > 100 then error("shingle.writer: tables nested more than 100 deep (a cycle?)", 0) end
  if is_list(v) then
    n = n + 1; out[n] = "["
    for i = 1, #v do
      if i > 1 then n = n + 1; out[n] = "," end
      n = encode(v[i], out, n, rank, depth + 1)
    end
    n = n + 1; out[n] = "]"
    return n
  end
  -- the keys of the order first (no sort for a record whose keys it names),
  -- then the others sorted
  n = n + 1; out[n] = "{"
  local first, order, no = true, rank[0], rank[-1]
  local rest, nr = nil, 0
  for i = 1, no do
    local k = order[i]
    local x = v[k]
    if x ~= nil then
      if first then first = false else n = n + 1; out[n] = "," end
      n = n + 1; out[n] = rank[k .. "\0"]
      n = encode(x, out, n, rank, depth + 1)
    end
  end
  for k in pairs(v) do
    local tk = type(k)
    if tk == "number" then k = M.number(k)
    elseif tk ~= "string" then error("shingle.writer: an object key must be a string or a number, not a " .. tk, 0) end
    if not rank[k] then
      nr = nr + 1
      if nr == 1 then rest = {} end
      rest[nr] = k
    end
  end
  if nr > 1 then sort(rest, bytes_less) end
  for i = 1, nr do
    local k = rest[i]
    local x = v[k]
    if x == nil then x = v[tonumber(k)] end
    if first then first = false else n = n + 1; out[n] = "," end
    n = n + 1; out[n] = string_json(k) .. ":"
    n = encode(x, out, n, rank, depth + 1)
  end
  n = n + 1; out[n] = "}"
  return n
end

encode = function(v, out, n, rank, depth)
  local t = type(v)
  n = n + 1
  if t == "string" then out[n] = string_json(v)
  elseif t == "number" then out[n] = M.number(v)
  elseif t == "boolean" then out[n] = v and "true" or "false"
  elseif v == nil or v == M.null then out[n] = "null"
  elseif t == "table" then return encode_table(v, out, n - 1, rank, depth)
  else error("shingle.writer: cannot write a " .. t .. " as JSON", 0) end
  return n
end

local ranks = setmetatable({}, { __mode = "k" })
local plain_rank = ranked(nil)

local function rank_of(order)
  if not order then return plain_rank end
  local rank = ranks[order]
  if not rank then
    rank = ranked(order)
    ranks[order] = rank
  end
  return rank
end

--- The same JSON text as M.json, made in Lua: the slow, obvious
-- reference the C encoder (core/jsonw.c, core/lua/l_json.c) is tested
-- against (spec/writer_spec.lua).
function M.json_reference(v, order)
  local out = {}
  local n = encode(v, out, 0, rank_of(order), 0)
  return concat(out, "", 1, n)
end

local core_ok, core = pcall(require, "shingle.core")
local c_encode = core_ok and core.json_encoder and core.json_encoder(array_mt, object_mt)

--- v as one line of JSON text (no newline). order: key names to put first,
-- in that order, at every depth (the rest follow, sorted by their bytes).
-- Raises on a value JSON cannot hold (a function, a key that is a table,
-- nesting deeper than 100).
function M.json(v, order)
  if c_encode then return c_encode(v, rank_of(order)) end
  return M.json_reference(v, order)
end

-- ---- CSV and TSV -------------------------------------------------------------

local clean = core_ok and core.utf8_clean or utf8_clean

local function cell_text(v, order)
  local t = type(v)
  if v == nil or v == M.null then return "" end
  if t == "string" then return clean(v) end
  if t == "number" then return M.number(v) end
  if t == "boolean" then return v and "true" or "false" end
  return M.json(v, order)
end

local function csv_cell(v, order)
  local s = cell_text(v, order)
  if find(s, '[,"\r\n]') then s = '"' .. gsub(s, '"', '""') .. '"' end
  return s
end

local tsv_escapes = { ["\t"] = "\\t", ["\n"] = "\\n", ["\r"] = "\\r", ["\\"] = "\\\\" }
local function tsv_cell(v, order)
  return (gsub(cell_text(v, order), "[\t\n\r\\]", tsv_escapes))
end

-- ---- writers -----------------------------------------------------------------

local Writer = {}
Writer.__index = Writer

--- A writer of records to f (a file, or anything with f:write(...)) in a
-- format of M.formats. shape: { order = {...} (JSON key order), columns =
-- {...} (CSV/TSV columns; required for them), rows = function(rec) ->
-- list of rows (CSV/TSV; default: the record itself) }. The JSON format
-- writes one list of every record ("[", records one a line, "]").
function M.new(f, fmt, shape)
  if not known_format[fmt] then
    error(("shingle.writer: unknown format '%s'; use jsonl, json, csv or tsv"):format(tostring(fmt)), 2)
  end
  shape = shape or {}
  if (fmt == "csv" or fmt == "tsv") and not shape.columns then
    error("shingle.writer: " .. fmt .. " needs shape.columns", 2)
  end
  return setmetatable({ f = f, format = fmt, order = shape.order, columns = shape.columns, rows = shape.rows,
    count = 0, started = false }, Writer)
end

local function put(self, ...)
  local ok, err = self.f:write(...)
  if not ok then error(err or "write failed", 0) end
end

function Writer:header()
  if self.started then return end
  self.started = true
  if self.format == "json" then put(self, "[")
  elseif self.format == "csv" or self.format == "tsv" then
    local cell = self.format == "csv" and csv_cell or tsv_cell
    local sep = self.format == "csv" and "," or "\t"
    local hs = {}
    for i, c in ipairs(self.columns) do hs[i] = cell(c) end
    put(self, concat(hs, sep), "\n")
  end
end

--- Write one record. Raises on a write error (util.atomic_write and
-- M.write_file turn that into nil, message naming the file).
function Writer:write(rec)
  self:header()
  local fmt = self.format
  if fmt == "jsonl" then
    put(self, M.json(rec, self.order), "\n")
  elseif fmt == "json" then
    put(self, self.count > 0 and ",\n" or "\n", M.json(rec, self.order))
  else
    local cell = fmt == "csv" and csv_cell or tsv_cell
    local sep = fmt == "csv" and "," or "\t"
    local rows = self.rows and self.rows(rec) or { rec }
    local cols = self.columns
    for _, row in ipairs(rows) do
      local cells = {}
      for i, c in ipairs(cols) do cells[i] = cell(row[c], self.order) end
      put(self, concat(cells, sep), "\n")
    end
  end
  self.count = self.count + 1
end

--- Finish the output: the closing "]" of JSON, the header of an empty
-- CSV/TSV. Does not close the file.
function Writer:finish()
  self:header()
  if self.format == "json" then put(self, self.count > 0 and "\n]\n" or "]\n") end
end

--- Write path atomically (shingle.util.atomic_write) through fn(w), w a
-- writer in format fmt with shape: true, or nil and a message naming path.
function M.write_file(path, fmt, shape, fn)
  local util = require "shingle.util"
  return util.atomic_write(path, function(f)
    local w = M.new(f, fmt, shape)
    fn(w)
    w:finish()
  end)
end

--- Write several files from one pass over the records: specs is a list of
-- { path, format, shape }; fn(w) gets one writer whose w:write(rec) goes
-- to each. Each file is written as PATH.tmp and renamed once all are
-- complete (none is renamed when one fails): true, or nil and a message
-- naming the file.
function M.write_files(specs, fn)
  local files, ws = {}, {}
  local function discard()
    for i, f in pairs(files) do
      pcall(f.close, f)
      os.remove(specs[i].path .. ".tmp")
    end
  end
  for i, spec in ipairs(specs) do
    local f, err = io.open(spec.path .. ".tmp", "wb")
    if not f then
      discard()
      return nil, ("cannot write %s: %s"):format(spec.path, require("shingle.util").reason(err, spec.path .. ".tmp"))
    end
    files[i] = f
    ws[i] = M.new(f, spec.format, spec.shape)
  end
  local at = 1 -- the file being written, for the message
  local tee = { write = function(_, rec)
    for i, w in ipairs(ws) do
      at = i
      w:write(rec)
    end
  end }
  local ok, err = pcall(function()
    fn(tee)
    for i, w in ipairs(ws) do
      at = i
      w:finish()
    end
  end)
  if ok then
    for i, f in ipairs(files) do
      local cok, cerr = f:close()
      files[i] = nil
      if not cok then
        ok, err, at = false, cerr, i
        break
      end
    end
  end
  if not ok then
    discard()
    return nil, ("cannot write %s: %s"):format(specs[at].path, tostring(err))
  end
  for _, spec in ipairs(specs) do
    local rok, rerr = os.rename(spec.path .. ".tmp", spec.path)
    if not rok then
      return nil, ("cannot rename %s.tmp: %s"):format(spec.path, require("shingle.util").reason(rerr, spec.path .. ".tmp"))
    end
  end
  return true
end

--- Write one value as a JSON file (a line), atomically: true, or nil, message.
function M.write_json(path, v, order)
  local util = require "shingle.util"
  return util.atomic_write(path, function(f)
    local ok, err = f:write(M.json(v, order), "\n")
    if not ok then error(err, 0) end
  end)
end

--- The file name of an output in a format: base .. ".jsonl", ".json", ".csv", ".tsv".
function M.file_name(base, fmt)
  return base .. "." .. fmt
end

return M
