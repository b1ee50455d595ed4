--- Shingler options: names, defaults, checks, and the identity of the
-- canonicalization rules (a sketch made with other rules is refused).
local core = require "shingle.core"

local M = {}

-- A fixed default seed, so that sketches made by different runs and programs
-- compare; pass your own to draw other polynomials and another permutation.
M.DEFAULT_SEED = 0x5348494E474C -- "SHINGL"

M.defaults = {
  w = 10,               -- shingle width in tokens (the paper's 10)
  k = 64,               -- fingerprint degree; 40 reproduces the paper
  seed = M.DEFAULT_SEED,
  poly = 0,             -- 0: draw an irreducible polynomial from the seed
  idpoly = 0,
  sketch = "mod",       -- min | mod | minmod | class | full
  s = 200,              -- MIN_s size ("100 samples seems reasonable and 200 more than enough")
  m = 25,               -- MOD_m modulus (the clustering run used 25)
  floor = 20,           -- MOD_m: a shorter document uses a smaller modulus of m's chain
                        -- (25, 5, 1) so its sample still holds about this many values; 0: plain MOD_m
                        -- (20: pair recall >= 0.99 at resemblance >= 0.5, docs/accuracy.md)
  option = "B",         -- B: the set of shingles; A: the labelled bag
  tokens = "rabin",     -- rabin: tokens hashed to 64-bit ids; pad8: the paper's padded words
  html = false,         -- strip HTML tags, comments, script and style; decode entities
  lowercase = true,
  numbers = true,       -- keep tokens made only of digits
  punctuation = false,  -- keep punctuation characters as tokens
  fold = false,         -- Unicode NFKC + case fold + strip accents
  invalid = "latin1",   -- invalid UTF-8: error | skip | latin1
  simd = "auto",        -- instruction set of the hot loops: auto | portable | sse2 | avx2 | avx512
                        -- (the same sketches at every level; auto: the best there is)
  threads = 2,          -- 1 or 2: a plain text of 128 KB or more is shingled on two threads
                        -- (the same shingles); 1 keeps every call on the caller's thread
}

-- options that have no default: the rule set (shingle.rules) replaces the
-- canonicalization options when given
local extra = { canon = true, rules_name = true }

local kinds = { min = true, mod = true, minmod = true, class = true, full = true }
local enums = {
  sketch = kinds,
  option = { A = true, B = true },
  tokens = { rabin = true, pad8 = true },
  invalid = { error = true, skip = true, latin1 = true },
  simd = { auto = true, portable = true, sse2 = true, avx2 = true, avx512 = true },
}
local bools = { html = true, lowercase = true, numbers = true, punctuation = true, fold = true }
local ranges = { w = { 1, 1024 }, k = { 16, 64 }, s = { 1, 1000000 }, m = { 1, 2 ^ 32 }, floor = { 0, 1000 },
  threads = { 1, 2 } }

local keys = require("shingle.util").sorted_keys

-- The canonicalization flags that decide the token stream, as a stable string.
-- HTML stripping is not among them: it parses the input format, so a page and
-- its plain-text copy give comparable sketches.
local canon_fields = { "lowercase", "numbers", "punctuation", "fold", "invalid" }

-- The description of every rules fingerprint made in this process, so that
-- a comparison refused for other rules says which part differs (the
-- binding calls registry["shingle.rules_diff"], core/lua/l_sketch.c).
local described = {}
local retired = {} -- rules names of earlier versions of extractors: the note to give

--- The message for sketches of rules a and b (fingerprints): the parts of
-- their descriptions that differ, or nil when one is not known here.
function M.rules_diff(a, b)
  local da, db = described[a], described[b]
  if not (da and db) then return nil end
  local pa, pb, diffs = {}, {}, {}
  for k, v in da:gmatch("([^=;]+)=([^;]*)") do pa[k] = v end
  for k, v in db:gmatch("([^=;]+)=([^;]*)") do pb[k] = v end
  for _, k in ipairs({ "lowercase", "numbers", "punctuation", "fold", "invalid", "rules" }) do
    if pa[k] ~= pb[k] then
      local name = k == "rules" and "the rule set or extractor" or k
      diffs[#diffs + 1] = ("%s: %s and %s"):format(name, pa[k] or "none", pb[k] or "none")
    end
  end
  if #diffs == 0 then return nil end
  local note = retired[pa.rules] or retired[pb.rules]
  return "cannot compare sketches made with different canonicalization rules (" .. table.concat(diffs, "; ")
    .. "): " .. (note or "sketch both documents with the same shingler")
end

--- Note that the rule set or extractor name (as in a rules description) is
-- an earlier version's: a comparison refused for it says note.
function M.retire(name, note)
  retired[name] = note
end
debug.getregistry()["shingle.rules_diff"] = M.rules_diff

--- The identity of the rules: a Rabin fingerprint of their description.
function M.rules_id(o)
  local parts = {}
  for _, f in ipairs(canon_fields) do parts[#parts + 1] = f .. "=" .. tostring(o[f]) end
  if o.rules_name then parts[#parts + 1] = "rules=" .. o.rules_name end
  local desc = table.concat(parts, ";")
  -- P64b of docs/vectors.md: fixed, so the identity never depends on the seed
  local id = core.rabin(desc, "\xca\xef\xbc\xde\x6b\x42\x38\xb1", 64)
  described[id] = desc
  return id
end

--- Check opts against the known options and fill in defaults. level: the
-- stack level to blame in errors.
function M.resolve(opts, level)
  level = (level or 1) + 1
  if opts ~= nil and type(opts) ~= "table" then
    error("shingle.new expects a table of options, got " .. type(opts), level)
  end
  local o = {}
  for k, v in pairs(M.defaults) do o[k] = v end
  for k, v in pairs(opts or {}) do
    if M.defaults[k] == nil and not extra[k] then
      error(("unknown option '%s'; known options are: %s"):format(tostring(k), keys(M.defaults)), level)
    end
    o[k] = v
  end
  for k, set in pairs(enums) do
    if not set[o[k]] then
      error(("option '%s' is %s; use one of: %s"):format(k, tostring(o[k]), keys(set)), level)
    end
  end
  for k in pairs(bools) do
    if type(o[k]) ~= "boolean" then
      error(("option '%s' must be true or false, got %s"):format(k, tostring(o[k])), level)
    end
  end
  for k, r in pairs(ranges) do
    local v = o[k]
    if type(v) ~= "number" or v ~= math.floor(v) or v < r[1] or v > r[2] then
      error(("option '%s' is %s; use a whole number from %d to %d"):format(k, tostring(v), r[1], r[2]), level)
    end
  end
  if o.canon ~= nil then
    for _, k in ipairs({ "html", "lowercase", "numbers", "punctuation", "fold" }) do
      if opts[k] ~= nil then
        error(("give either a rule set (canon) or the option '%s', not both: the rule set decides canonicalization"):format(k), level)
      end
    end
    local compiled = require("shingle.rules").compile(o.canon, level)
    for k, v in pairs(compiled.flags) do o[k] = v end
    o.rules_name = compiled.signature
    o.compiled = compiled
  end
  if o.fold then o.lowercase = true end
  o.rules = M.rules_id(o)
  return o
end

return M
