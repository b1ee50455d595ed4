--- bench/lib/gen.lua (require "gen"; called shingle.gen in the data it
-- writes): synthetic corpora with planted near-duplicates, for the clustering
-- specs (small corpora) and the benchmarks (millions of documents). A tool
-- of the repository, not part of the installed library: the specs find it
-- through .busted's lpath, the benchmarks through bench/lib.
--
-- A corpus is noise documents (unrelated random text) and families: an
-- original plus variants of the kinds the Broder et al. clustering has to
-- tell apart ("Syntactic Clustering of the Web", sections 2 and 3):
--
--   exact        a byte-identical copy                    resemblance 1
--   format       case, whitespace and punctuation changed  resemblance 1 after canonicalization
--   edit         words substituted, deleted or inserted at rate e; e is drawn
--                so that resemblance spreads over 0.3 .. 0.99 and half of the
--                edits land near the 0.5 threshold (doc.rate, doc.expected)
--   insert       new paragraphs inserted between the original's
--   truncate     a prefix of the original                  containment in the original 1
--   boilerplate  the original with a site header and footer: the original is contained in it
--   contained    an excerpt from the middle of the original: containment 1
--
-- Text is Zipf-distributed pseudo-words in sentences and paragraphs. Every
-- random choice comes from one L'Ecuyer (1988) combined multiplicative
-- generator whose products stay below 2^53, so Lua 5.3/5.4 integers and LuaJIT
-- doubles compute the same numbers and a seed gives the same corpus on all of
-- them (math.random differs between them, so it is never used). Text is
-- produced word by word from precomputed strings and joined with one
-- table.concat. bench/gen.lua is the command line; bench/gen.c is a port to C
-- that writes the same bytes, for benchmark-size corpora (Lua 5.4 makes text
-- at roughly 45 MB/s, LuaJIT 95, the C port 150).
local M = {}

local floor, concat, format = math.floor, table.concat, string.format

-- The combined generator: two Park-Miller style streams, period about 2.3e18.
local M1, A1, M2, A2 = 2147483563, 40014, 2147483399, 40692
local Z1 = M1 - 1

-- Punctuation styles of a word; a code is word + V * style.
local PLAIN, CAP, STOP, PARA, COMMA = 0, 1, 2, 3, 4
local NSTYLES = 5

M.kinds = { "original", "exact", "format", "edit", "insert", "truncate", "boilerplate", "contained", "noise" }

-- Variant kinds and their weights when a corpus draws them.
local VARIANTS = { "exact", "format", "edit", "edit", "edit", "edit", "insert", "truncate", "boilerplate", "contained" }
-- Number of variants of a family (mean 2.5, so 3.5 documents per family).
local FAMILY_VARIANTS = { 1, 1, 1, 2, 2, 3, 4, 6 }
local MEAN_FAMILY = 3.5
-- Mean number of documents between a variant being due and being emitted,
-- so that families are scattered over the corpus with a small pool in memory.
local SPREAD = 20

---------------------------------------------------------------------------
-- Vocabulary: pseudo-words, short for frequent ranks, unique by construction.

local CONS = { "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z" }
local VOWS = { "a", "e", "i", "o", "u" }
local ENDS = { "", "n", "r", "s", "l", "t" }
local SYL = {}
for _, c in ipairs(CONS) do
  for _, v in ipairs(VOWS) do SYL[#SYL + 1] = c .. v end
end
local NSYL, NFINAL = #SYL, #SYL * #ENDS

-- Word of rank r: ranks 1..60 get one syllable, up to 3000 two, up to 3.5e6
-- three, beyond four. Within a class the index is scrambled by a multiplier
-- coprime with the class size (a bijection), then written as syllables; every
-- syllable but the last is two letters, so the spelling decodes uniquely.
local CLASSES = { { 0, 60, 1 }, { 60, 3000, 2 }, { 3000, 3500000, 3 }, { 3500000, 1e15, 4 } }
local function word_of_rank(r)
  for _, cl in ipairs(CLASSES) do
    if r <= cl[2] then
      local nsyl = cl[3]
      local space = NFINAL * NSYL ^ (nsyl - 1)
      local idx = (r - cl[1] - 1) * 7919 % space
      local fin = idx % NFINAL
      idx = (idx - fin) / NFINAL
      local parts = {}
      for k = 1, nsyl - 1 do
        local s = idx % NSYL
        idx = (idx - s) / NSYL
        parts[k] = SYL[s + 1]
      end
      local s = fin % NSYL
      parts[nsyl] = SYL[s + 1] .. ENDS[(fin - s) / NSYL + 1]
      return concat(parts)
    end
  end
end

---------------------------------------------------------------------------
-- The generator object: vocabulary tables, random state, boilerplate pool.

local Gen = {}
Gen.__index = Gen

local function check_int(v, name, lo, hi, level)
  if type(v) ~= "number" or v ~= floor(v) or v < lo or v > hi then
    error(("option '%s' is %s; use a whole number from %d to %d"):format(name, tostring(v), lo, hi), level + 1)
  end
  return floor(v) -- an integer on 5.3+
end

local function check_frac(v, name, level)
  if type(v) ~= "number" or not (v >= 0 and v <= 1) then
    error(("option '%s' is %s; use a number from 0 to 1"):format(name, tostring(v)), level + 1)
  end
  return v
end

local KNOWN = { docs = true, size = true, seed = true, families = true, vocab = true, zipf = true,
                hosts = true, txt = true }

--- gen.new{ seed, vocab, zipf, size } -> a generator: the vocabulary and one
-- random stream. corpus() uses one; the specs use its methods directly.
function M.new(opts, level)
  level = (level or 1) + 1
  opts = opts or {}
  if type(opts) ~= "table" then error("gen options must be a table, got " .. type(opts), level) end
  for k in pairs(opts) do
    if not KNOWN[k] then
      local names = {}
      for n in pairs(KNOWN) do names[#names + 1] = n end
      table.sort(names)
      error(("unknown option '%s'; known options are: %s"):format(tostring(k), concat(names, ", ")), level)
    end
  end
  local seed = check_int(opts.seed or 1, "seed", 0, 2 ^ 53, level)
  local V = check_int(opts.vocab or 20000, "vocab", 10, 1000000, level)
  local s = opts.zipf or 1
  if type(s) ~= "number" or s < 0 or s > 4 then
    error(("option 'zipf' is %s; use an exponent from 0 to 4"):format(tostring(s)), level)
  end
  local size = check_int(opts.size or 5000, "size", 100, 100000000, level)

  local g = setmetatable({ V = V, size = size }, Gen)
  g.x1 = seed % (M1 - 1) + 1
  g.x2 = (floor(seed / (M1 - 1)) + seed % (M2 - 1) + 99991) % (M2 - 1) + 1
  for _ = 1, 8 do g:u() end

  -- Zipf weights; s == 1 uses 1/j so no libm function decides the table.
  local p, sum = {}, 0
  for j = 1, V do
    local w = (s == 1) and 1 / j or j ^ -s
    p[j] = w
    sum = sum + w
  end
  -- Vose's alias method: word j = z % V + 1 is kept when z < T[j], else A[j];
  -- z is the generator's output in 1..M1-1.
  local T, A, small, large = {}, {}, {}, {}
  local q = {}
  for j = 1, V do T[j], A[j] = 0, 0 end -- sequential first: the array part, not the hash
  for j = 1, V do
    q[j] = p[j] * V / sum
    if q[j] < 1 then small[#small + 1] = j else large[#large + 1] = j end
  end
  while #small > 0 and #large > 0 do
    local l = small[#small]
    small[#small] = nil
    local h = large[#large]
    T[l], A[l] = q[l] * M1, h
    q[h] = (q[h] + q[l]) - 1
    if q[h] < 1 then
      large[#large] = nil
      small[#small + 1] = h
    end
  end
  for _, j in ipairs(large) do T[j], A[j] = M1, j end
  for _, j in ipairs(small) do T[j], A[j] = M1, j end
  g.T, g.A = T, A

  -- The strings of every code, and the expected bytes per word.
  local S, W = {}, {}
  local letters = 0
  for j = 1, V do
    W[j] = word_of_rank(j)
    letters = letters + #W[j] * p[j] / sum
  end
  local forms = {
    [PLAIN] = function(w) return w .. " " end,
    [CAP] = function(w) return w:sub(1, 1):upper() .. w:sub(2) .. " " end,
    [STOP] = function(w) return w .. ". " end,
    [PARA] = function(w) return w .. ".\n\n" end,
    [COMMA] = function(w) return w .. ", " end,
  }
  for style = 0, NSTYLES - 1 do -- in index order, so S is one array
    local form = forms[style]
    for j = 1, V do S[#S + 1] = form(W[j]) end
  end
  g.S, g.W = S, W
  -- a space per word, a period per sentence (12 words), a comma per 9/17 of
  -- one, a newline more per paragraph (4 sentences)
  g.bytes_per_word = letters + 1 + (1 + 8 / 17) / 12 + 1 / 48
  g.words_per_doc = size / g.bytes_per_word
  g.scratch, g.buf = {}, {}

  -- Site boilerplate: headers and footers shared by many documents.
  g.headers, g.footers = {}, {}
  for k = 1, 8 do
    g.headers[k] = g:words(g:range(12, 40))
    g.footers[k] = g:words(g:range(12, 40))
  end
  return g
end

--- g:u() -> uniform in (0, 1).
function Gen:u()
  local x1 = self.x1 * A1 % M1
  local x2 = self.x2 * A2 % M2
  self.x1, self.x2 = x1, x2
  local z = x1 - x2
  if z < 1 then z = z + Z1 end
  return z / M1
end

--- g:int(n) -> uniform integer in 1..n.
function Gen:int(n) return floor(self:u() * n) + 1 end

--- g:range(a, b) -> uniform integer in a..b.
function Gen:range(a, b) return a + floor(self:u() * (b - a + 1)) end

--- g:word() -> one Zipf-distributed word number.
function Gen:word()
  local x1 = self.x1 * A1 % M1
  local x2 = self.x2 * A2 % M2
  self.x1, self.x2 = x1, x2
  local z = x1 - x2
  if z < 1 then z = z + Z1 end
  local j = z % self.V + 1
  if z >= self.T[j] then j = self.A[j] end
  return j
end

--- g:words(n [, c [, i [, t]]]) -> c, i + n: n words of running text as
-- codes appended to the list c (a new one by default) after index i (default
-- 0), and their strings at the same places in t (default: g.buf), so that
-- table.concat(t, "", i + 1, i + n) is their text. Sentences of 4 to 20 words,
-- paragraphs of 2 to 6 sentences; the last word ends a paragraph. This is the
-- generator's one hot loop: a step of one component generator, an alias-table
-- lookup and two table stores a word.
function Gen:words(n, c, i, t)
  c, i, t = c or {}, i or 0, t or self.buf
  local V, T, A, S = self.V, self.T, self.A, self.S
  local x1, x2 = self.x1, self.x2
  local last = i + n
  local para = 0
  while i < last do
    x1 = x1 * A1 % M1; x2 = x2 * A2 % M2
    local z = x1 - x2
    if z < 1 then z = z + Z1 end
    local len = 4 + z % 17
    if para <= 0 then para = 2 + (z - z % 17) / 17 % 5 end
    if i + len > last then len = last - i end
    local first = i + 1
    -- Two words a step: one from each component stream. A run of 10 words
    -- repeats only when both streams do, so shingles never repeat by chance.
    for _ = 2, len, 2 do
      x1 = x1 * A1 % M1
      local j = x1 % V + 1
      if x1 >= T[j] then j = A[j] end
      c[i + 1] = j
      t[i + 1] = S[j]
      x2 = x2 * A2 % M2
      j = x2 % V + 1
      if x2 >= T[j] then j = A[j] end
      i = i + 2
      c[i] = j
      t[i] = S[j]
    end
    if len % 2 == 1 then
      x1 = x1 * A1 % M1
      local j = x1 % V + 1
      if x1 >= T[j] then j = A[j] end
      i = i + 1
      c[i] = j
      t[i] = S[j]
    end
    para = para - 1
    if len >= 2 then
      c[first] = c[first] + V * CAP
      t[first] = S[c[first]]
    end
    if len >= 9 then
      local k = first + 1 + z % (len - 2)
      c[k] = c[k] + V * COMMA
      t[k] = S[c[k]]
    end
    c[i] = c[i] + V * ((para <= 0 or i == last) and PARA or STOP)
    t[i] = S[c[i]]
  end
  self.x1, self.x2 = x1, x2
  return c, i
end

--- g:text(c [, n]) -> the text of the first n (default #c) codes.
function Gen:text(c, n)
  n = n or #c
  local S, t = self.S, self.buf
  for i = 1, n do t[i] = S[c[i]] end
  return concat(t, "", 1, n)
end

-- The word number and style of a code.
local function split(c, V)
  local j = (c - 1) % V + 1
  return j, (c - j) / V
end

local function copy(c, a, b, out, m)
  out, m = out or {}, m or 0
  for i = a, b do
    m = m + 1
    out[m] = c[i]
  end
  return out, m
end

local SEP = {
  [PLAIN] = { " ", " ", " ", "  ", " \t", ", ", " - ", "\n", " ... " },
  [CAP] = { " ", " ", "  ", "   " },
  [STOP] = { ". ", ". ", "! ", "? ", "... ", ".  ", ";\n" },
  [PARA] = { ".\n\n", "!\n\n\n", ".\r\n\r\n", ".\n \n" },
  [COMMA] = { ", ", "; ", ": ", " -- ", ",\t" },
}

--- g:format(c) -> a text of the same tokens as g:text(c) after
-- canonicalization (lowercasing, punctuation as separators): case changes,
-- extra whitespace, other punctuation between the words.
function Gen:format(c)
  local V, W = self.V, self.W
  if not self.UP then
    self.UP, self.CP = {}, {}
    for j = 1, V do
      self.UP[j] = W[j]:upper()
      self.CP[j] = W[j]:sub(1, 1):upper() .. W[j]:sub(2)
    end
  end
  local UP, CP = self.UP, self.CP
  local t, n = { "  " }, 1
  for i = 1, #c do
    local j = (c[i] - 1) % V + 1
    local style = (c[i] - j) / V
    local u = self:u()
    local w
    if style == CAP or u < 0.1 then
      w = CP[j]
    elseif u < 0.2 then
      w = UP[j]
    elseif u < 0.24 then
      w = "(" .. W[j] .. ")"
    elseif u < 0.27 then
      w = '"' .. W[j] .. '"'
    else
      w = W[j]
    end
    local seps = SEP[style]
    t[n + 1] = w
    t[n + 2] = seps[floor(u * 7919) % #seps + 1] -- the low digits of u, nearly independent of the case choice
    n = n + 2
  end
  return concat(t, "", 1, n)
end

--- g:edit(c, rate) -> codes: floor(#c * rate + u) distinct positions drawn
-- uniformly; the word at each is replaced (60%), deleted (20%) or preceded by
-- a new word (20%). Styles stay.
function Gen:edit(c, rate)
  local V, n = self.V, #c
  if rate > 1 then rate = 1 end
  local k = floor(n * rate + self:u())
  local op = {}
  while k > 0 do
    local i = self:int(n)
    if not op[i] then
      op[i] = self:u()
      k = k - 1
    end
  end
  local out, m = {}, 0
  for i = 1, n do
    local o = op[i]
    if not o then
      m = m + 1
      out[m] = c[i]
    elseif o < 0.6 then
      m = m + 1
      out[m] = c[i] - (c[i] - 1) % V - 1 + self:word()
    elseif o >= 0.8 then
      out[m + 1] = self:word()
      out[m + 2] = c[i]
      m = m + 2
    end
  end
  return out
end

--- g:insert(c) -> codes: 1 to 3 new paragraphs of 40 to 150 words inserted
-- at paragraph breaks of c (at the end if it has none).
function Gen:insert(c)
  local V = self.V
  local breaks = {}
  for i = 1, #c - 1 do
    if select(2, split(c[i], V)) == PARA then breaks[#breaks + 1] = i end
  end
  local at = {}
  for _ = 1, self:int(3) do
    at[#breaks > 0 and breaks[self:int(#breaks)] or #c] = true
  end
  local out, m = {}, 0
  for i = 1, #c do
    m = m + 1
    out[m] = c[i]
    if at[i] then out, m = self:words(self:range(40, 150), out, m) end
  end
  return out
end

--- g:truncate(c) -> codes: a prefix of 30% to 90% of c (at least 12 words).
function Gen:truncate(c)
  local n = #c
  local k = floor(n * (0.3 + 0.6 * self:u()))
  if k < 12 then k = n < 12 and n or 12 end
  return (copy(c, 1, k))
end

--- g:excerpt(c) -> codes: a run of 20% to 60% of c (at least 12 words) from
-- anywhere in it.
function Gen:excerpt(c)
  local n = #c
  local k = floor(n * (0.2 + 0.4 * self:u()))
  if k < 12 then k = n < 12 and n or 12 end
  local a = self:int(n - k + 1)
  return (copy(c, a, a + k - 1))
end

--- g:boilerplate(c) -> codes: c between one of 8 site headers and footers.
function Gen:boilerplate(c)
  local h = self.headers[self:int(#self.headers)]
  local f = self.footers[self:int(#self.footers)]
  local out, m = copy(h, 1, #h)
  out, m = copy(c, 1, #c, out, m)
  return (copy(f, 1, #f, out, m))
end

-- (1 - e)^10 by multiplication only, so that every Lua agrees.
local function keep10(e)
  local q = 1 - e
  local q2 = q * q
  local q4 = q2 * q2
  return q4 * q4 * q2
end

--- The word-edit rate that gives 10-shingle resemblance r in expectation:
-- a shingle survives if none of its 10 words changed (probability q =
-- (1-e)^10), so r = q / (2 - q). Solved by bisection, without libm.
function M.rate_for(r)
  local q = 2 * r / (1 + r)
  local lo, hi = 0, 1
  for _ = 1, 60 do
    local mid = (lo + hi) / 2
    if keep10(mid) > q then lo = mid else hi = mid end
  end
  return (lo + hi) / 2
end

--- The expected 10-shingle resemblance of an edit at rate e.
function M.expected(e)
  local q = keep10(e)
  return q / (2 - q)
end

--- g:variant(kind, c) -> text, rate: the text of a variant of the original
-- whose codes are c; rate is the edit rate for "edit" (drawn for a target
-- resemblance: half uniform in 0.3..0.99, half in 0.42..0.58).
function Gen:variant(kind, c, rate)
  if kind == "exact" then return self:text(c) end
  if kind == "format" then return self:format(c) end
  if kind == "edit" then
    if not rate then
      local r = self:u() < 0.5 and 0.3 + 0.69 * self:u() or 0.42 + 0.16 * self:u()
      rate = M.rate_for(r)
    end
    return self:text(self:edit(c, rate)), rate
  end
  if kind == "insert" then return self:text(self:insert(c)) end
  if kind == "truncate" then return self:text(self:truncate(c)) end
  if kind == "excerpt" or kind == "contained" then return self:text(self:excerpt(c)) end
  if kind == "boilerplate" then return self:text(self:boilerplate(c)) end
  error("unknown variant kind '" .. tostring(kind) .. "'", 2)
end

--- g:length() -> a document length in words: size / bytes per word, times
-- a uniform factor in 0.5 .. 1.5.
function Gen:length()
  local n = floor(self.words_per_doc * (0.5 + self:u()))
  return n < 12 and 12 or n
end

---------------------------------------------------------------------------
-- Corpora.

--- gen.corpus{ docs = N, size = 5000, seed = 1, families = 0.4, vocab = 20000,
-- zipf = 1, hosts = N/20, txt = 0.25 } -> an iterator of documents
--   { id, url, date, text, kind, family, parent, rate, expected }
-- id runs 1..N; url is http://host<k>.example/path/<id>.html (or .txt for
-- a fraction txt of the documents: write_dir and write_warc give those as
-- plain text, the others as HTML); family is a family number (nil for
-- noise), parent the id of the family's original (nil for originals and
-- noise); rate and expected (the planted edit rate and the 10-shingle
-- resemblance it gives in expectation) only on "edit" documents. An original
-- always comes before its variants, which follow within a few dozen ids.
function M.corpus(opts)
  opts = opts or {}
  local g = M.new(opts, 2)
  local N = check_int(opts.docs or 1000, "docs", 0, 2 ^ 40, 2)
  local f = check_frac(opts.families or 0.4, "families", 2)
  local H = check_int(opts.hosts or floor(N / 20) + 1, "hosts", 1, 2 ^ 40, 2)
  local txt = check_frac(opts.txt or 0.25, "txt", 2)
  -- On a slot not taken by a due variant, start a family with probability
  -- p0, so that a fraction f of the documents belongs to families.
  local m = MEAN_FAMILY
  local p0 = f >= 1 and 1 or (f / m) / (1 - f * (m - 1) / m)
  local pool, pending = {}, 0
  local id, nfam = 0, 0

  return function()
    if id >= N then return nil end
    id = id + 1
    local left = N - id + 1
    local doc
    if pending > 0 and (pending >= left or g:u() < pending / (pending + SPREAD)) then
      local k = g:int(#pool)
      local fam = pool[k]
      local kind = VARIANTS[g:int(#VARIANTS)]
      local text, rate = g:variant(kind, fam.codes)
      doc = { text = text, kind = kind, family = fam.family, parent = fam.id }
      if rate then
        doc.rate, doc.expected = rate, M.expected(rate)
      end
      fam.left = fam.left - 1
      pending = pending - 1
      if fam.left == 0 then
        pool[k] = pool[#pool]
        pool[#pool] = nil
      end
    else
      local start = g:u() < p0
      local nv = FAMILY_VARIANTS[g:int(#FAMILY_VARIANTS)]
      if nv > left - 1 - pending then nv = left - 1 - pending end
      if start and nv >= 1 then
        local c, n = g:words(g:length())
        nfam = nfam + 1
        pool[#pool + 1] = { id = id, family = nfam, codes = c, left = nv }
        pending = pending + nv
        doc = { text = concat(g.buf, "", 1, n), kind = "original", family = nfam }
      else
        local _, n = g:words(g:length(), g.scratch, 0)
        doc = { text = concat(g.buf, "", 1, n), kind = "noise" }
      end
    end
    doc.id = id
    doc.url = "http://host" .. g:int(H) .. ".example/path/" .. id .. (g:u() < txt and ".txt" or ".html")
    doc.date = format("2026-%02d-%02dT%02d:%02d:%02dZ", g:int(12), g:int(28), g:int(24) - 1,
                      g:int(60) - 1, g:int(60) - 1)
    return doc
  end
end

--- gen.list(opts) -> the documents of gen.corpus(opts) in a list.
function M.list(opts)
  local out = {}
  for doc in M.corpus(opts) do out[#out + 1] = doc end
  return out
end

---------------------------------------------------------------------------
-- Writers. Each takes documents as an iterator (gen.corpus) or a list, and
-- opts.truth, a path for the ground truth written alongside. They return the
-- number of documents written, or nil, err on an I/O failure.

local function each(src)
  if type(src) == "function" then return src end
  if type(src) == "table" then
    local i = 0
    return function()
      i = i + 1
      return src[i]
    end
  end
  error("documents must be an iterator or a list, got " .. type(src), 3)
end

local function open(path, mode)
  local fh, err = io.open(path, mode or "wb")
  if not fh then return nil, "cannot write " .. tostring(err) .. "; check that the directory exists and is writable" end
  return fh
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
for b = 0, 31 do
  local ch = string.char(b)
  if not ESC[ch] then ESC[ch] = format("\\u%04x", b) end
end
ESC["\127"] = "\\u007f"

--- gen.json_string(s) -> s as a JSON string literal (ASCII control characters escaped).
function M.json_string(s)
  return '"' .. s:gsub('[%c"\\]', ESC) .. '"'
end
local json = M.json_string

local function truth_line(doc)
  local t = { '{"id":', tostring(doc.id), ',"url":', json(doc.url),
              ',"family":', doc.family and tostring(doc.family) or "null",
              ',"kind":"', doc.kind, '"',
              ',"parent":', doc.parent and tostring(doc.parent) or "null" }
  if doc.rate then
    t[#t + 1] = format(',"rate":%.6f,"expected":%.4f', doc.rate, doc.expected)
  end
  t[#t + 1] = "}\n"
  return concat(t)
end

-- Runs write(doc) over the documents, with the truth file if asked for.
local function drive(src, opts, write)
  local it = each(src)
  local tf, err
  if opts and opts.truth then
    tf, err = open(opts.truth)
    if not tf then return nil, err end
  end
  local n = 0
  for doc in it do
    local ok, werr = write(doc)
    if not ok then
      if tf then tf:close() end
      return nil, werr
    end
    if tf then tf:write(truth_line(doc)) end
    n = n + 1
  end
  if tf then
    local ok, cerr = tf:close()
    if not ok then return nil, "cannot write " .. opts.truth .. ": " .. tostring(cerr) end
  end
  return n
end

--- gen.truth(docs, path) -> n: one JSON object a line,
-- {"id","url","family","kind","parent"} (null where absent), and "rate" and
-- "expected" on edits.
function M.truth(src, path)
  local fh, err = open(path)
  if not fh then return nil, err end
  local n = 0
  for doc in each(src) do
    fh:write(truth_line(doc))
    n = n + 1
  end
  local ok, cerr = fh:close()
  if not ok then return nil, "cannot write " .. path .. ": " .. tostring(cerr) end
  return n
end

--- gen.write_jsonl(docs, path [, opts]) -> n: {"id","url","date","text"} a line.
function M.write_jsonl(src, path, opts)
  local fh, err = open(path)
  if not fh then return nil, err end
  local n, werr = drive(src, opts, function(doc)
    return fh:write('{"id":', tostring(doc.id), ',"url":', json(doc.url), ',"date":"', doc.date,
                    '","text":', json(doc.text), "}\n")
  end)
  local ok, cerr = fh:close()
  if not n then return nil, werr end
  if not ok then return nil, "cannot write " .. path .. ": " .. tostring(cerr) end
  return n
end

local HTML_ESC = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" }

local function is_html(doc) return doc.url:sub(-5) == ".html" end

--- gen.html(doc) -> the document as an HTML page: a head with style and
-- script (which HTML stripping drops), each paragraph of the text in <p>,
-- nothing else visible, so it canonicalizes to the same tokens as the text.
function M.html(doc)
  local body = doc.text:gsub("[&<>]", HTML_ESC):gsub("\r?\n[ \r\n]*\n", "</p>\n<p>")
  return concat({
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n",
    "<style>p { margin: 0 0 1em 0 } .nav { display: none }</style>\n",
    "<script>var page = ", tostring(doc.id), "; if (page < 0) { document.write('x') }</script>\n",
    "</head>\n<body>\n<!-- generated by shingle.gen -->\n<p>", body, "</p>\n</body></html>\n",
  })
end

--- The body a writer stores: HTML for .html URLs, the text for .txt.
function M.body(doc)
  if is_html(doc) then return M.html(doc), "text/html; charset=utf-8" end
  return doc.text, "text/plain; charset=utf-8"
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local mkdir
do
  local ok, lfs = pcall(require, "lfs")
  if ok and type(lfs) == "table" and lfs.mkdir then
    mkdir = function(path) -- mkdir -p
      local sofar = path:sub(1, 1) == "/" and "" or "."
      for part in path:gmatch("[^/]+") do
        sofar = sofar .. "/" .. part
        if lfs.attributes(sofar, "mode") ~= "directory" then
          local okm, err = lfs.mkdir(sofar)
          if not okm and lfs.attributes(sofar, "mode") ~= "directory" then return nil, err end
        end
      end
      return true
    end
  else
    mkdir = function(path)
      local okx = os.execute("mkdir -p " .. shell_quote(path))
      if okx == true or okx == 0 then return true end
      return nil, "mkdir failed"
    end
  end
end

--- gen.write_dir(docs, dir [, opts]) -> n: one file per document at
-- dir/host<k>.example/path/<id>.html (an HTML page, see gen.html) or .txt
-- (the text), the path being the URL's.
function M.write_dir(src, dir, opts)
  local made = {}
  return drive(src, opts, function(doc)
    local rel = doc.url:match("^%a+://(.*)$")
    local path = dir .. "/" .. rel
    local parent = path:match("^(.*)/[^/]*$")
    if not made[parent] then
      local ok, err = mkdir(parent)
      if not ok then return nil, "cannot create directory " .. parent .. ": " .. tostring(err) end
      made[parent] = true
    end
    local fh, err = open(path)
    if not fh then return nil, err end
    fh:write((M.body(doc)))
    local ok, cerr = fh:close()
    if not ok then return nil, "cannot write " .. path .. ": " .. tostring(cerr) end
    return true
  end)
end

--- gen.warc_record(doc) -> a WARC/1.0 response record (application/http
-- block with an HTTP/1.1 200 status line and headers) as a string.
function M.warc_record(doc)
  local body, ctype = M.body(doc)
  local http = concat({
    "HTTP/1.1 200 OK\r\n",
    "Content-Type: ", ctype, "\r\n",
    "Content-Length: ", tostring(#body), "\r\n",
    "Server: shingle-gen\r\n",
    "\r\n", body })
  return concat({
    "WARC/1.0\r\n",
    "WARC-Type: response\r\n",
    "WARC-Record-ID: <urn:uuid:", format("00000000-0000-4000-8000-%012d", doc.id), ">\r\n",
    "WARC-Date: ", doc.date, "\r\n",
    "WARC-Target-URI: ", doc.url, "\r\n",
    "Content-Type: application/http; msgtype=response\r\n",
    "Content-Length: ", tostring(#http), "\r\n",
    "\r\n", http, "\r\n\r\n" })
end

local function warcinfo()
  local block = "software: shingle.gen\r\nformat: WARC File Format 1.0\r\n"
  return concat({
    "WARC/1.0\r\n",
    "WARC-Type: warcinfo\r\n",
    "WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000000>\r\n",
    "WARC-Date: 2026-01-01T00:00:00Z\r\n",
    "Content-Type: application/warc-fields\r\n",
    "Content-Length: ", tostring(#block), "\r\n",
    "\r\n", block, "\r\n\r\n" })
end

-- Gzip members, one per record, by the gzip program: records go to numbered
-- files in a scratch directory and one `gzip -c` per batch compresses each
-- file to its own member, in order (gzip members concatenate validly).
local function gzip_sink(path)
  local out, err = open(path)
  if not out then return nil, err end
  out:close()
  local tmp = os.tmpname()
  os.remove(tmp)
  local ok, merr = mkdir(tmp)
  if not ok then return nil, "cannot create scratch directory " .. tmp .. ": " .. tostring(merr) end
  local files = {}
  local sink = {}
  local function flush()
    if #files == 0 then return true end
    local args = {}
    for i, f in ipairs(files) do args[i] = shell_quote(f) end
    local okx = os.execute("gzip -n -c " .. concat(args, " ") .. " >> " .. shell_quote(path))
    for _, f in ipairs(files) do os.remove(f) end
    files = {}
    if okx == true or okx == 0 then return true end
    return nil, "gzip failed writing " .. path .. "; check that gzip is installed and the disk has room"
  end
  function sink.write(rec)
    local name = format("%s/%06d.warc", tmp, #files + 1)
    local fh, ferr = open(name)
    if not fh then return nil, ferr end
    fh:write(rec)
    fh:close()
    files[#files + 1] = name
    if #files >= 500 then return flush() end
    return true
  end
  function sink.close()
    local okf, ferr = flush()
    os.remove(tmp)
    return okf, ferr
  end
  return sink
end

local function plain_sink(path)
  local fh, err = open(path)
  if not fh then return nil, err end
  return {
    write = function(rec)
      local ok, werr = fh:write(rec)
      if not ok then return nil, "cannot write " .. path .. ": " .. tostring(werr) end
      return true
    end,
    close = function()
      local ok, cerr = fh:close()
      if not ok then return nil, "cannot write " .. path .. ": " .. tostring(cerr) end
      return true
    end,
  }
end

--- gen.write_warc(docs, path [, { gzip = false, warcinfo = true, truth = path }])
-- -> n: a warcinfo record, then one response record per document; with gzip,
-- each record is its own gzip member (needs the gzip program).
function M.write_warc(src, path, opts)
  opts = opts or {}
  local sink, err = (opts.gzip and gzip_sink or plain_sink)(path)
  if not sink then return nil, err end
  if opts.warcinfo ~= false then
    local ok, werr = sink.write(warcinfo())
    if not ok then
      sink.close()
      return nil, werr
    end
  end
  local n, derr = drive(src, opts, function(doc) return sink.write(M.warc_record(doc)) end)
  local ok, cerr = sink.close()
  if not n then return nil, derr end
  if not ok then return nil, cerr end
  return n
end

return M
