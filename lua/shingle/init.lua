--- shingle: near-duplicate detection after Broder, Glassman, Manasse and Zweig,
-- "Syntactic Clustering of the Web", and Broder, "On the resemblance and
-- containment of documents". This facade validates options and adds the Lua
-- conveniences; every per-byte and per-shingle loop is in shingle.core (C).
local core = require "shingle.core"
local options = require "shingle.options"

local M = {
  _VERSION = core._VERSION,
  version = core._VERSION,      -- "MAJOR.MINOR.PATCH", from core/version.h
  core = core,
  load = core.load,             -- sketch from its serialized string, or nil, err
  is_sketch = core.is_sketch,
  confidence = core.confidence, -- p(s, r, eps) of section 4.2
  error_probability = core.error_probability,
  size_class = core.size_class,
  tohex = core.tohex,
  int64 = core.int64,           -- true where fingerprints are Lua integers
}

local Shingler = core.Shingler

-- A shingler whose rule set has Lua steps: the C shingler does the
-- tokenizing it was configured for and everything after the token list;
-- the Lua steps run around it (shingle.rules).
local Ruled = {}
local ruled_mt = {
  __index = function(self, k)
    local m = Ruled[k]
    if m then return m end
    local f = Shingler[k]
    if f == nil then return nil end
    return function(obj, ...) return f(obj.c, ...) end
  end,
  __tostring = function(self) return "shingle.Shingler(rules: " .. self.compiled.signature .. ")" end,
}

function Ruled:tokens(text)
  return require("shingle.rules").tokens(self.compiled, self.c, text)
end

function Ruled:sketch_text(text, kind)
  local c = self.compiled
  if not c.tokenize and #c.tokens == 0 then
    -- text steps only: the C tokenizer takes the text from there, no token list in Lua
    for _, f in ipairs(c.text) do
      text = f(text)
      if type(text) ~= "string" then return nil, "a text step of the rule set returned a " .. type(text) .. ", not a string" end
    end
    return self.c:sketch_text(text, kind)
  end
  local toks, err = self:tokens(text)
  if not toks then return nil, err end
  return self.c:sketch_tokens(toks, kind)
end

function Ruled:sketch(x, kind)
  if type(x) == "string" then return self:sketch_text(x, kind) end
  return self.c:sketch(x, kind)
end

--- With Lua steps the byte ranges of the original text are not known: the
-- iterator gives (index, fingerprint) only. The fingerprints are made in C,
-- all at once, from the token list.
function Ruled:shingles(text)
  local toks, err = self:tokens(text)
  if not toks then error(err, 2) end
  local fps, i = self.c:shingle_list(toks), 0
  return function()
    i = i + 1
    if fps[i] == nil then return nil end
    return i, fps[i]
  end
end

function Ruled:params()
  local p = self.c:params()
  p.canon = self.compiled.signature
  return p
end

--- shingle.new{...} -> an independent shingler. Options and defaults are in
-- shingle.options (docs/api.md); `canon` takes a rule set (shingle.rules).
-- Misuse raises an error naming the option.
function M.new(opts)
  local o = options.resolve(opts, 2)
  local c = core.new(o)
  if o.compiled and o.compiled.lua then
    return setmetatable({ c = c, compiled = o.compiled }, ruled_mt)
  end
  return c
end

--- The C shingler under a shingler (itself when it has no Lua steps).
function M.unwrap(sh)
  if getmetatable(sh) == ruled_mt then return sh.c, sh.compiled end
  return sh
end

M.rules = require "shingle.rules"
M.lsh = require "shingle.lsh"            -- shingle.lsh{ threshold, sketch, ... }: the in-memory LSH index
M.sketches = require "shingle.sketches"  -- sketch files: sketches.create, open, save, load, sketch

--- shingle.exact(a, b [, opts]): exact resemblance and containment of two
-- texts (or token lists) from their full shingle sets, for verification.
-- Returns { resemblance, containment = c(a, b), contained = c(b, a), both, sample }.
function M.exact(a, b, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.sketch = "full"
  local sh = M.new(o)
  local sa, err = sh:sketch(a)
  if not sa then return nil, err end
  local sb, err2 = sh:sketch(b)
  if not sb then return nil, err2 end
  return sa:estimate(sb)
end

return M
