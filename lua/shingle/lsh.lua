--- An in-memory LSH index (core/lsh.h) for scripts that want near-neighbour
-- queries without a database:
--
--   local ix = shingle.lsh{ threshold = 0.8, sketch = sh }   -- sh = shingle.new{...}
--   ix:insert("doc-1", sh:sketch(text))        -- or ix:insert("doc-1", text)
--   for _, hit in ipairs(ix:query(other)) do print(hit.key, hit.resemblance) end
--   ix:containing(excerpt)                     -- documents the excerpt is contained in
--   ix:save("index.sks"); ix = shingle.lsh.load("index.sks")
--
-- Bands and rows are chosen from the threshold as datasketch chooses them:
-- the (b, r) with b * r within the budget that minimises the weighted areas
-- of false positives (under the S-curve below the threshold) and false
-- negatives (above it, beyond the threshold). Candidates are then estimated
-- from the stored sketches and filtered by the threshold.
local core = require "shingle.core"

local M = {}

-- False negatives weigh more than false positives by default: a false
-- positive costs one estimate from the stored sketches (it is then filtered
-- out), a false negative is an answer lost. datasketch's MinHashLSH weighs
-- them equally: weights = { fp = 0.5, fn = 0.5 } gives its choice.
M.defaults = {
  threshold = 0.8,
  weights = { fp = 0.1, fn = 0.9 },
  budget = nil,        -- most values banding may use, b * r (datasketch's num_perm): by kind, see budget_for
  bands = nil, rows = nil,
  containment = false, -- containment queries (cbands bands of one value each)
  cbands = 48,
  seed = nil,          -- deals sketch values into bands (a fixed default)
  sketch = nil,        -- a shingler, a sketch, or nil: the parameters come with the first insert
}

local kinds_ok = { min = true, minmod = true, mod = true, full = true }

--- The default budget of values for banding, by sketch kind: half of a
-- MIN_s sketch (each of b classes then expects 2r values, and holds r with
-- high probability), 32 for MOD_m (whose sample grows with the document),
-- 128 for full sets.
function M.budget_for(params)
  if params.kind == "min" or params.kind == "minmod" then return math.max(1, math.floor(params.s / 2)) end
  if params.kind == "mod" then return 32 end
  return 128
end

local Index = {}
Index.__index = Index
Index.__len = function(self) return self.c and self.c:count() or 0 end

local known = { threshold = true, weights = true, budget = true, bands = true, rows = true, containment = true,
  cbands = true, seed = true, sketch = true }

local function check_opts(opts, level)
  for k in pairs(opts) do
    if not known[k] then
      error(("unknown option '%s' of shingle.lsh; known: threshold, sketch, weights, budget, bands, rows, containment, "
        .. "cbands, seed"):format(tostring(k)), level + 1)
    end
  end
  local t = opts.threshold
  if t ~= nil and (type(t) ~= "number" or t <= 0 or t >= 1) then
    error("shingle.lsh: threshold must lie between 0 and 1 (exclusive), got " .. tostring(t), level + 1)
  end
  if opts.weights ~= nil and (type(opts.weights) ~= "table" or type(opts.weights.fp) ~= "number" or
    type(opts.weights.fn) ~= "number") then
    error("shingle.lsh: weights must be { fp = number, fn = number }", level + 1)
  end
end

--- shingle.lsh{ ... } -> an index (options in M.defaults; misuse raises).
function M.new(opts, level)
  level = (level or 1) + 1
  opts = opts or {}
  if type(opts) ~= "table" then error("shingle.lsh expects a table of options", level) end
  check_opts(opts, level)
  local self = setmetatable({ cfg = {} }, Index)
  for k, v in pairs(M.defaults) do self.cfg[k] = v end
  for k, v in pairs(opts) do self.cfg[k] = v end
  local s = self.cfg.sketch
  if s ~= nil then
    if core.is_sketch(s) then
      self:start(s)
    elseif (type(s) == "userdata" or type(s) == "table") and s.sketch then
      self.shingler = s
      local p = s:sketch("")
      if not p then error("shingle.lsh: the shingler cannot sketch an empty text", level) end
      self:start(p, level)
    else
      error("shingle.lsh: sketch must be a shingler (shingle.new) or a sketch", level)
    end
  end
  return self
end

-- Make the C index from the parameters of sketch p.
function Index:start(p, level)
  local c = self.cfg
  local params = p:params()
  if not kinds_ok[params.kind] then
    error(("shingle.lsh: %s sketches cannot be banded (their samples change with the document's size); "
      .. "use min, minmod, mod or full"):format(tostring(params.kind)), (level or 1) + 1)
  end
  local b, r = c.bands, c.rows
  if not (b and r) then
    c.budget = c.budget or M.budget_for(params)
    b, r = core.lsh_shape(c.threshold, c.budget, c.weights.fp, c.weights.fn)
  end
  c.bands, c.rows = b, r
  self.kind = params.kind
  self.c = core.lsh_index(p, { bands = b, rows = r, cbands = c.containment and c.cbands or 0, seed = c.seed })
end

-- A sketch from x: a sketch as it is, a text sketched with the index's shingler.
function Index:sketch_of(x, level)
  if core.is_sketch(x) then return x end
  if type(x) == "string" then
    if not self.shingler then
      error("this index has no shingler to sketch a text with: make it with sketch = shingle.new{...}", level + 1)
    end
    local s, err = self.shingler:sketch(x)
    if not s then error(err, level + 1) end
    return s
  end
  error("expected a sketch or a text, got " .. type(x), level + 1)
end

--- Insert (or replace) the document key: a sketch, or a text when the index
-- has a shingler. Raises for a sketch that cannot be compared with the
-- index's, naming the parameter that differs.
function Index:insert(key, x)
  local s = self:sketch_of(x, 2)
  if not self.c then self:start(s, 2) end
  self.c:insert(key, s)
end

--- Insert every record of a sketch file (shingle.sketches): the count, or
-- nil, err. Records without a key get their record number as key.
function Index:insert_file(path)
  local r, err = core.sketch_reader(path)
  if not r then return nil, err end
  if not self.c then
    local p = r:params()
    if not p then r:close(); return 0 end
    self:start(p, 2)
  end
  local n, ierr = self.c:insert_file(r)
  r:close()
  return n, ierr
end

local function query(self, kind, x, opts, level)
  opts = opts or {}
  local s = self:sketch_of(x, level + 1)
  if not self.c then return {}, 0 end
  if kind ~= "resemblance" and not self.cfg.containment then
    error("this index has no containment bands: make it with containment = true", level + 1)
  end
  local t = opts.threshold or self.cfg.threshold
  if opts.all then t = -1 end
  return self.c:query(s, kind, t, opts.top or 0)
end

--- The documents whose estimated resemblance to x (a sketch or a text)
-- reaches the threshold, best first: { { key, resemblance, containment =
-- c(x, doc), contained = c(doc, x) }, ... }, and the number of candidates
-- the bands gave. opts: threshold (the index's by default), top (at most so
-- many), all (every candidate, whatever its estimate).
function Index:query(x, opts) return query(self, "resemblance", x, opts, 2) end

--- The documents x is contained in: c(x, doc) >= threshold (an index made
-- with containment = true).
function Index:containing(x, opts) return query(self, "containing", x, opts, 2) end

--- The documents contained in x: c(doc, x) >= threshold.
function Index:contained(x, opts) return query(self, "contained", x, opts, 2) end

--- Remove a document: true if it was there.
function Index:remove(key) return self.c ~= nil and self.c:remove(key) end

--- The stored sketch of a document, or nil.
function Index:get(key) if self.c then return self.c:get(key) end end

function Index:count() return self.c and self.c:count() or 0 end

--- Every key, in insertion order (ids reused after removals come first).
function Index:keys() return self.c and self.c:keys() or {} end

--- The configuration: threshold, bands, rows, budget, weights, containment,
-- cbands, seed, kind.
function Index:params()
  local c = self.cfg
  return { threshold = c.threshold, bands = c.bands, rows = c.rows, budget = c.budget,
    weights = { fp = c.weights.fp, fn = c.weights.fn }, containment = c.containment, cbands = c.cbands, seed = c.seed,
    kind = self.kind }
end

--- The probability that a document of resemblance j is a candidate (the S-curve).
function Index:probability(j)
  return core.lsh_probability(j, self.cfg.bands or 1, self.cfg.rows or 1)
end

--- Save the whole index (configuration and every key and sketch) as a sketch
-- file: the count, or nil, err.
function Index:save(path)
  local c = self.cfg
  local meta = require("shingle.writer").json({ lsh = { threshold = c.threshold, bands = c.bands, rows = c.rows, budget = c.budget,
    weights = c.weights, containment = c.containment, cbands = c.cbands,
    seed = c.seed and core.tohex(c.seed) or nil, version = 1 } })
  local w, err = core.sketch_writer(path, meta)
  if not w then return nil, err end
  if self.c then
    local n, serr = self.c:save(w)
    if not n then w:abort(); return nil, serr end
  end
  return w:commit()
end

--- Load an index saved by ix:save(path); opts.sketch: a shingler, for
-- inserting and querying texts. nil, err for a file that is not one.
function M.load(path, opts)
  local cjson = require "cjson"
  local r, err = core.sketch_reader(path)
  if not r then return nil, err end
  local ok, meta = pcall(cjson.decode, r:meta())
  r:close()
  if not ok or type(meta) ~= "table" or type(meta.lsh) ~= "table" then
    return nil, path .. " is a sketch file but not a saved LSH index (no LSH configuration in its header)"
  end
  local m = meta.lsh
  local seed
  if type(m.seed) == "string" and m.seed:match("^%x+$") and #m.seed == 16 then
    if core.int64 then
      seed = 0
      for i = 1, 16 do seed = seed * 16 + tonumber(m.seed:sub(i, i), 16) end -- wraps like the unsigned value
    else
      -- a number where it is exact (below 2^53, as it was given), else 8 bytes, big-endian
      local v = tonumber(m.seed, 16)
      seed = v < 2 ^ 53 and v or m.seed:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
    end
  end
  local ix = M.new({ threshold = m.threshold, bands = m.bands, rows = m.rows, budget = m.budget,
    weights = m.weights, containment = m.containment, cbands = m.cbands, seed = seed,
    sketch = opts and opts.sketch }, 2)
  local n, ierr = ix:insert_file(path)
  if not n then return nil, ierr end
  return ix
end

--- Bands and rows for a threshold (datasketch's choice): b, r.
function M.shape(threshold, budget, weights)
  weights = weights or M.defaults.weights
  return core.lsh_shape(threshold, budget, weights.fp, weights.fn)
end

return setmetatable(M, { __call = function(_, opts) return M.new(opts, 2) end })
