--- Sketch files: many sketches in one streamed, checksummed file
-- (docs/formats.md, "Sketch file"; core/sketchfile.h), so that a research
-- script sketches a corpus once and runs many experiments on the file.
--
--   local sketches = require "shingle.sketches"
--   sketches.sketch({ "corpus/" }, "corpus.sks", { w = 8, s = 200 })  -- on the pool's threads
--   for sketch, key in sketches.open("corpus.sks"):records() do ... end
--   local w = sketches.create("mine.sks"); w:write("doc-1", sk); w:close()
--
-- A file holds sketches of one configuration (the first sketch's); keys are
-- strings, numbers or none. Reading holds one record in memory at a time.
local core = require "shingle.core"

local M = {}

local Writer = {}
Writer.__index = Writer

--- A writer of path (written as path.tmp, renamed by close). opts.meta:
-- bytes stored in the header (at most 1 MiB). Raises for misuse; nil, err
-- when the file cannot be made.
function M.create(path, opts)
  if type(path) ~= "string" then error("sketches.create expects a path", 2) end
  local w, err = core.sketch_writer(path, opts and opts.meta)
  if not w then return nil, err end
  return setmetatable({ w = w, path = path }, Writer)
end

--- Add one sketch under key (a string, a number, or nil). nil, err for a
-- sketch made with other parameters than the file's (naming the parameter)
-- or an I/O failure; the writer is then still usable (or abort it).
function Writer:write(key, sketch)
  if not core.is_sketch(sketch) then error("write expects a sketch as its second argument", 2) end
  return self.w:put(key, sketch)
end

--- Add a table { [key] = sketch } or a list of sketches (keys 1..n), in key
-- order for strings and numbers alike.
function Writer:write_all(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  for _, k in ipairs(keys) do
    local ok, err = self:write(k, t[k])
    if not ok then return nil, err end
  end
  return #keys
end

--- Sketches written so far.
function Writer:count() return self.w:count() end

--- Finish the file (trailer, fsync, rename): the number of sketches, or nil, err.
function Writer:close() return self.w:commit() end

--- Give up: nothing is left at path (an earlier file there stays as it was).
function Writer:abort() self.w:abort() end

local Reader = {}
Reader.__index = Reader

--- A reader of path (plain, gzip or zstd); nil, err if it is not a sketch file.
function M.open(path)
  local r, err = core.sketch_reader(path)
  if not r then return nil, err end
  return setmetatable({ r = r, path = path }, Reader)
end

--- The next record: sketch, key (nil when it has none); nothing at the end;
-- nil, err for a damaged file (naming the record and byte offset).
function Reader:read() return self.r:read() end

--- Up to n records: a list of sketches and a list of keys (false for none);
-- empty lists at the end; nil, err for a damaged file.
function Reader:batch(n) return self.r:batch(n) end

--- for sketch, key in r:records() do ... end (raises on a damaged file,
-- naming it; the reader closes at the end).
function Reader:records()
  return function()
    local s, k = self.r:read()
    if s == nil then
      if k ~= nil then error(k, 2) end
      self.r:close()
      return nil
    end
    return s, k
  end
end

--- The parameters every sketch of the file has (a sketch of no values), or
-- nil for a file of no sketches; the header's meta bytes; records read.
function Reader:params() return self.r:params() end
function Reader:meta() return self.r:meta() end
function Reader:count() return self.r:count() end
function Reader:close() self.r:close() end

--- Write a table { [key] = sketch } (or a list) to path: count, or nil, err.
function M.save(path, t, opts)
  local w, err = M.create(path, opts)
  if not w then return nil, err end
  local ok, werr = w:write_all(t)
  if not ok then w:abort(); return nil, werr end
  return w:close()
end

--- Read a whole file into a table { [key] = sketch } (records without a
-- key get their record number). For files that fit in memory; stream with
-- open() otherwise.
function M.load(path)
  local r, err = M.open(path)
  if not r then return nil, err end
  local t, n = {}, 0
  while true do
    local s, k = r:read()
    if s == nil then
      r:close()
      if k ~= nil then return nil, k end
      return t, n
    end
    n = n + 1
    t[k == nil and n or k] = s
  end
end

--- Sketch a corpus into a sketch file on the pool's threads: inputs as
-- `shingle cluster` takes them (directories, files, JSON Lines, WARC, mbox,
-- "-", compressed or not, or Lua functions); each document's key is its URL
-- (its path for files). opts: the shingler options of shingle.new (sketch
-- defaults to "min"), canon, extractor; and threads, batch, format, fields,
-- html, max_bytes, mail, strict, warn (a function of a message), meta.
-- Returns { documents, sketched, skipped } or nil, err.
function M.sketch(inputs, path, opts)
  inputs = require("shingle.input").inputs(inputs) -- a path, a function or a list
  opts = opts or {}
  if type(inputs) == "string" then inputs = { inputs } end
  local input = require "shingle.input"
  local sketcher = require "shingle.sketcher"
  local cfg = {}
  for k, v in pairs(opts) do cfg[k] = v end
  local text, html, ex = sketcher.shinglers(cfg)
  local sk = sketcher.new(text, html, { threads = opts.threads or core.cpus(), extractor = ex, max_bytes = opts.max_bytes,
    max_shingles = opts.max_shingles,
    mail = opts.mail, on_error = opts.on_error })
  local w, err = M.create(path, { meta = opts.meta })
  if not w then return nil, err end
  local stats = { documents = 0, sketched = 0, skipped = 0 }
  local r = input.reader{ format = opts.format, fields = opts.fields, html = opts.html, batch = opts.batch,
    strict = opts.strict, max_bytes = opts.max_bytes, mail = opts.mail, warn = opts.warn }
  local function problem(msg) return r:problem("documents", msg) end
  local ok, rerr = r:each(inputs, function(docs)
    stats.documents = stats.documents + #docs
    local n, errors
    if sk.lua then
      -- rule sets with Lua steps and extractors sketch in Lua
      errors, n = {}, 0
      for i, res in ipairs(sk:lua_batch(docs)) do
        if res.fatal then return nil, res.error end
        if res.error then errors[i] = res.error
        else
          local okw, werr = w:write(docs[i].url, res.sketch)
          if not okw then return nil, werr end
          n = n + 1
        end
      end
    else
      n, errors = w.w:put_pool(sk.pool, docs)
      if not n then return nil, errors end
      local fatal = sk:fatal(errors)
      if fatal then return nil, fatal end
    end
    stats.sketched = stats.sketched + n
    for i = 1, #docs do
      if errors[i] then
        local pok, perr = problem(errors[i])
        if not pok then return nil, perr end
      end
    end
    return true
  end)
  if not ok then w:abort(); return nil, rerr end
  local cok, cerr = w:close()
  if not cok then return nil, cerr end
  stats.skipped = r:total_skipped()
  return stats
end

return M
