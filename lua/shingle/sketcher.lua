--- Sketching documents in bulk, whatever made the shingler: the C pool's
-- threads when the canonicalization is all C, Lua otherwise (rule sets with
-- Lua steps, feature extractors), through the one C function that makes a
-- document's sketch, signature and fingerprints either way (core/document.h),
-- so a document gets the same identity whichever path sketched it. Each result
-- is { sketch, raw, canonical, set, tokens [, full, sig] } or { error = message
-- naming the document }. And the one place
-- that makes a configuration's pair of shinglers (text and HTML).
local shingle = require "shingle"
local core = require "shingle.core"
local rules = require "shingle.rules"
local options = require "shingle.options"

local M = {}
M.__index = M

-- the options of shingle.new that a configuration passes on when set
local shingler_keys = { "w", "k", "seed", "poly", "idpoly", "sketch", "s", "m", "floor", "option", "tokens",
  "invalid", "lowercase", "numbers", "punctuation", "fold" }
-- the ones a rule set decides instead
local canon_keys = { lowercase = true, numbers = true, punctuation = true, fold = true }

--- The shingler's options of a configuration (any table: a pipeline's,
-- an index's, shingle.pipeline.defaults): a new table of just those that are
-- set, with canon and extractor. shingle.pipeline.defaults through it are the
-- shingler every command line and the HTTP handlers use by default.
function M.options(cfg)
  local o = {}
  for _, k in ipairs(shingler_keys) do o[k] = cfg[k] end
  o.canon, o.extractor = cfg.canon, cfg.extractor
  return o
end

--- The shinglers of a configuration: text, html, extractor. cfg holds
-- shingle.new's options (w, k, seed, sketch, s, m, floor, option, tokens,
-- invalid, lowercase, numbers, punctuation, fold; others are ignored) and
-- canon (a rule set: a name, a Lua file or a list of steps) or extractor (a
-- name, a Lua file or an extractor table). The two shinglers are alike but for
-- HTML stripping, so that a page and its text compare; with a rule set or an
-- extractor, it decides and the two are one. Raises on bad options or an
-- unknown rule set or extractor.
function M.shinglers(cfg)
  local o = M.options(cfg)
  o.canon, o.extractor = nil, nil
  local canon, ex = cfg.canon, nil
  if cfg.extractor then
    local err
    ex, err = require("shingle.extractors").get(cfg.extractor)
    if not ex then error(err, 0) end
    -- an extractor that is a C tokenizer (code) is one in the shingler;
    -- its identity (a new version's) may differ from its name
    canon = { { name = "extractor:" .. (ex.identity or ex.name), tokens = function(t) return t end, c = ex.tokenizer } }
    -- the identities of its earlier versions, so that a comparison with
    -- their sketches is refused saying so
    for _, old in ipairs(ex.retired or {}) do
      local r = {}
      for k, v in pairs(o) do r[k] = v end
      for k in pairs(canon_keys) do r[k] = nil end
      r.canon = { { name = "extractor:" .. old, tokens = canon[1].tokens } }
      options.retire(options.resolve(r).rules_name, ("extractor:%s is an earlier version of the extractor %s;"
        .. " sketch the data again"):format(old, ex.name))
    end
  elseif canon then
    canon = rules.load(canon)
  end
  if canon then
    for k in pairs(canon_keys) do o[k] = nil end
    o.canon = canon
    local sh = shingle.new(o)
    return sh, sh, ex
  end
  o.html = false
  local text = shingle.new(o)
  o.html = true
  return text, shingle.new(o), ex
end

-- The configuration as Lua source, if every value in it is a string, a
-- number or a boolean (a rule set or extractor given by name or file, not as
-- Lua values): what a worker thread's own Lua state can rebuild it from.
local function serialize(cfg)
  if type(cfg) ~= "table" then return nil end
  local keys, parts = {}, {}
  for k, v in pairs(cfg) do
    local t = type(v)
    if type(k) ~= "string" or not (t == "string" or t == "number" or t == "boolean") then return nil end
    keys[#keys + 1] = k
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = cfg[k]
    if type(v) == "string" then v = ("%q"):format(v)
    elseif math.type and math.type(v) == "integer" then v = ("%d"):format(v)
    elseif type(v) == "number" then v = ("%.17g"):format(v)
    else v = tostring(v) end
    parts[#parts + 1] = ("[%q] = %s"):format(k, v)
  end
  return "return { " .. table.concat(parts, ", ") .. " }"
end

-- The most shingles (or features) one document may have unless the caller
-- says otherwise (--max-shingles; false or 0: no limit). Tokenizing stops
-- there, so it bounds the memory one document takes: about 75 bytes a token
-- (docs/robustness.md, "Limits"). 16 Mi shingles is more than a 64 MiB
-- document of ordinary text has; a document of one-letter words reaches it.
M.MAX_SHINGLES = 16 * 1024 ^ 2

--- sketcher.new(text, html, { threads, full, sig_k, max_bytes, max_shingles, extractor, mail, config, main_thread })
-- Documents go to the C pool's threads: as they are when the shingler is all
-- C (built-in rule sets, the code extractor, which is a C tokenizer), as
-- FASTA k-mers or MIDI intervals in C for those extractors, and through one Lua state per
-- worker for rule sets with Lua steps and extractors in Lua, when config
-- (what sketcher.shinglers made them from) names them by name or file.
-- Otherwise (Lua values in the configuration), and with main_thread, in Lua
-- on this thread, one document after another.
function M.new(text, html, opts)
  opts = opts or {}
  local ex = opts.extractor
  local max_shingles = opts.max_shingles
  if max_shingles == nil then max_shingles = M.MAX_SHINGLES end
  if max_shingles == false then max_shingles = 0 end
  local self = setmetatable({ text = text, html = html or text, extractor = ex,
    full = opts.full, sig_k = opts.sig_k or 0, max_bytes = opts.max_bytes, max_shingles = max_shingles,
    on_error = opts.on_error or "stop" }, M)
  if self.on_error ~= "stop" and self.on_error ~= "skip" then
    error(("option 'on_error' is %s; use stop or skip"):format(tostring(self.on_error)), 2)
  end
  local popts = { threads = opts.threads or core.cpus(), full = opts.full, sig_k = opts.sig_k or 0,
    skip_binary = ex == nil, max_bytes = opts.max_bytes, mail = opts.mail ~= false and ex == nil,
    max_shingles = max_shingles }
  self.lua = shingle.unwrap(text) ~= text or ex ~= nil
  if opts.main_thread then -- the reference path, for comparisons
  elseif ex and ex.c == "fasta" then
    popts.fasta_k = ex.k
    self.lua = false
  elseif ex and ex.c == "midi" then
    popts.midi = true
    self.lua = false
  elseif ex and ex.tokenizer then
    self.lua = false
  elseif self.lua then
    local source = serialize(opts.config)
    if source then
      popts.lua = { config = source, path = package.path, cpath = package.cpath }
      self.lua = false
    end
  end
  self.pool = core.pool(shingle.unwrap(text), shingle.unwrap(self.html), popts)
  return self
end

-- a document's bytes: its text, or its file decompressed (as the C pool reads it)
local function read(d, max)
  if d.text then return d.text end
  return core.zread(d.path, max)
end

--- Sketch docs ({ text | path, url, html }) in Lua, one by one. Code of the
-- user's that raises (an extractor, a rule set's Lua step) is a result
-- { error = "extractor NAME failed on PATH: message", fatal = true } (fatal
-- unless on_error = "skip": then the document is skipped and counted like
-- any unreadable one), never an internal error.
function M:lua_batch(docs)
  local c, compiled = shingle.unwrap(self.text)
  local ex = self.extractor
  local out = {}
  for i, d in ipairs(docs) do
    local where = d.path or d.url or "document"
    local bytes, err = read(d, self.max_bytes)
    local feats, raised
    if bytes then
      local ok, f, ferr
      if ex then ok, f, ferr = pcall(ex.extract, bytes, d.path or d.url)
      else ok, f, ferr = pcall(rules.tokens, compiled, c, bytes) end
      if ok then feats, err = f, ferr
      else
        raised = true
        err = M.failed(ex and "extractor" or "rule set", ex and ex.name or (compiled and compiled.signature or "?"), where, f)
      end
    end
    if raised then
      out[i] = { error = err, fatal = self.on_error ~= "skip" }
    elseif not feats then
      -- named once: an extractor's message may already start with the name
      local msg = tostring(err)
      out[i] = { error = msg:sub(1, #where + 1) == where .. ":" and msg or where .. ": " .. msg }
    else
      local r, serr = c:sketch_doc(bytes, feats, { features = ex ~= nil and ex.kind == "set", full = self.full,
        sig_k = self.sig_k, max_shingles = self.max_shingles })
      out[i] = r or { error = (d.path or d.url or "document") .. ": " .. tostring(serr) }
    end
  end
  return out
end

--- The message for user code (an extractor, a rule set's Lua step) that
-- raised on a document: the same on the main thread and a pool worker's.
function M.failed(what, name, path, err)
  return ("%s %s failed on %s: %s"):format(what, tostring(name), tostring(path or "a document"), tostring(err))
end

-- The message of a failed() among a document's errors (the pool may put the
-- document's name before it), or nil.
local function raised(msg)
  if type(msg) ~= "string" then return nil end
  return msg:match("^(extractor .- failed on .*)$") or msg:match("^(rule set .- failed on .*)$")
    or msg:match("^.-: (extractor .- failed on .*)$") or msg:match("^.-: (rule set .- failed on .*)$")
end

-- A batch's results as M:batch returns them.
local function results(self, res)
  if self.on_error ~= "skip" then
    for _, r in ipairs(res) do
      local m = raised(r.error)
      if m then r.error, r.fatal = m, true end
    end
  end
  return res
end

--- Sketch a batch: a list of results in the order of docs.
function M:batch(docs)
  if self.lua then return self:lua_batch(docs) end
  return results(self, self.pool:sketch(docs))
end

--- Start sketching a batch on the pool's threads and return at once (this
-- thread is free meanwhile: to write the previous batch to an index); the
-- results are M:finish(job)'s, those of M:batch(docs). One batch at a time:
-- finish a job before starting the next. Sketching in Lua (self.lua) is
-- done here and now.
function M:start(docs)
  if self.lua then return { done = self:lua_batch(docs) } end
  return { job = self.pool:start(docs) }
end

function M:finish(job)
  if job.done then return job.done end
  return results(self, job.job:wait())
end

--- Of the errors of a batch ({ [i] = message }), the first that is user
-- code that raised, when that stops the run (on_error = "stop").
function M:fatal(errors)
  if self.on_error == "skip" or type(errors) ~= "table" then return nil end
  local first
  for i, e in pairs(errors) do
    local m = raised(e)
    if m and (not first or i < first[1]) then first = { i, m } end
  end
  return first and first[2]
end

--- Append a batch started with self.pool:start(docs) to a phase-1 writer,
-- as M:write does the batch it sketches itself (the pool sketches the next
-- batch meanwhile, pipeline.lua).
function M:write_job(w, job)
  local n, errors = w:add_job(self.pool, job)
  if not n then return nil, errors end
  local fatal = self:fatal(errors)
  if fatal then return nil, fatal end
  return n, errors
end

--- Append a batch to a phase-1 writer: ok count, { [i] = error message };
-- nil, message when the user's code failed on a document (on_error = stop).
function M:write(w, docs)
  if not self.lua then
    local n, errors = w:add(self.pool, docs)
    if not n then return nil, errors end
    local fatal = self:fatal(errors)
    if fatal then return nil, fatal end
    return n, errors
  end
  local res = self:lua_batch(docs)
  local errors = {}
  for i, r in ipairs(res) do
    if r.fatal then return nil, r.error end
    errors[i] = r.error
  end
  local n, err = w:add_sketches(res)
  if not n then return nil, err end
  return n, errors
end

return M
