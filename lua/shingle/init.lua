--- shingle: near-duplicate detection after Broder, Glassman, Manasse and Zweig,
-- "Syntactic Clustering of the Web", and Broder, "On the resemblance and
-- containment of documents". This facade validates options and adds the Lua
-- conveniences; every per-byte and per-shingle loop is in shingle.core (C).
local core = require "shingle.core"
local options = require "shingle.options"

local M = {
  _VERSION = core._VERSION,
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

--- shingle.new{...} -> an independent shingler. Options and defaults are in
-- shingle.options (docs/api.md). Misuse raises an error naming the option.
function M.new(opts)
  return core.new(options.resolve(opts, 2))
end

--- sh:sketch(x [, kind]): x is a text (string) or a list of tokens (strings or
-- integers). Returns a sketch, or nil, err when the text is rejected (invalid
-- UTF-8 with invalid = "error").
function Shingler:sketch(x, kind)
  local t = type(x)
  if t == "string" then return self:sketch_text(x, kind) end
  if t == "table" then return self:sketch_tokens(x, kind) end
  error("bad argument #1 to 'sketch' (a text string or a list of tokens expected, got " .. t .. ")", 2)
end

--- sh:shingles(text): iterator over (index, fingerprint, first byte, last byte)
-- of every shingle, the byte range (1-based, inclusive) being the original
-- text the shingle covers. Raises on text the canonicalizer rejects.
function Shingler:shingles(text)
  local fps, first, last = self:shingle_list(text)
  if not fps then error(first, 2) end
  local i, n = 0, #fps
  return function()
    i = i + 1
    if i <= n then return i, fps[i], first[i], last[i] end
  end
end

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
