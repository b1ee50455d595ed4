-- Rule sets with Lua steps and extractors sketched on the C pool's worker
-- threads (one Lua state each, core/lua/l_worker.c; FASTA and code in C)
-- give what the main thread's Lua path gives: the same sketches, full sets,
-- fingerprints and errors, document by document.
local sketcher = require "shingle.sketcher"
local midi = require "shingle.extractors.midi"
local support = require "support"

local function lcg(seed)
  local s = seed
  return function(n)
    s = (s * 16807) % 2147483647
    return s % n + 1
  end
end

local function fasta_docs()
  local r, docs = lcg(7), {}
  for d = 1, 12 do
    local lines = {}
    for rec = 1, 1 + r(3) do
      lines[#lines + 1] = ">seq" .. rec .. " of doc " .. d
      local seq = {}
      local alpha = (d % 4 == 0) and "ACDEFGHIKLMNPQRSTVWY" or ((d % 3 == 0) and "acgtn" or "ACGT")
      for _ = 1, 50 + r(400) do
        local k = r(#alpha)
        seq[#seq + 1] = alpha:sub(k, k)
      end
      local s = table.concat(seq)
      for i = 1, #s, 60 do lines[#lines + 1] = s:sub(i, i + 59) end
    end
    docs[d] = { text = table.concat(lines, d % 2 == 0 and "\r\n" or "\n") .. "\n", path = "doc" .. d .. ".fa" }
  end
  local all = {}
  for b = 0, 255 do all[#all + 1] = string.char(b) end
  docs[#docs + 1] = { text = ">every byte\n" .. table.concat(all):rep(3) .. "\n>lower\nacgtacgtnnacgtACGTacgt\n", path = "bytes.fa" }
  docs[#docs + 1] = { text = "ACGT\n>late header\nACGT\n", path = "bad.fa" }
  docs[#docs + 1] = { text = "; nothing here\n", path = "empty.fa" }
  return docs
end

local function midi_docs()
  local r, docs = lcg(11), {}
  for d = 1, 10 do
    local p = {}
    for i = 1, 20 + r(40) do p[i] = 48 + r(30) end
    docs[d] = { text = midi.encode(p), path = "m" .. d .. ".mid" }
  end
  docs[#docs + 1] = { text = "GIF89a not midi", path = "x.mid" }
  return docs
end

local function code_docs()
  local docs = {}
  for _, f in ipairs({ "core/codetok.c", "core/fasta.c", "lua/shingle/rules.lua", "lua/shingle/worker.lua" }) do
    local h = assert(io.open(f, "rb"))
    docs[#docs + 1] = { text = h:read("a"), path = f }
    h:close()
  end
  docs[#docs + 1] = { text = "int main(void) { return \"x\\\"y\"; } /* unclosed", path = "odd.c" }
  return docs
end

local function text_docs()
  local r, words, docs = lcg(3), { "RT", "@user:", "http://t.co/x", "Week", "'til", "#phpnw09", "let", "me",
    "hear", "you", "say", "w00t!", "caf\xc3\xa9", "\xe2\x80\x94", "the", "a" }, {}
  for d = 1, 30 do
    local t = {}
    for i = 1, 5 + r(60) do t[i] = words[r(#words)] end
    docs[d] = { text = table.concat(t, " "), path = "t" .. d }
  end
  docs[#docs + 1] = { text = "bad \xff utf-8", path = "bad.txt" }
  return docs
end

-- One result as a string: its error, or its sketch, full set and fingerprints.
local function outcome(r)
  if r.error then return "error: " .. r.error end
  return table.concat({ r.sketch:serialize(), r.full and r.full:serialize() or "-", tostring(r.raw),
    tostring(r.canonical), tostring(r.set), tostring(r.tokens) }, "|")
end

local function compare(cfg, docs, want_pool)
  local text, html, ex = sketcher.shinglers(cfg)
  local main = sketcher.new(text, html, { threads = 2, extractor = ex, config = cfg, full = true, main_thread = true })
  local pool = sketcher.new(text, html, { threads = 2, extractor = ex, config = cfg, full = true })
  assert.is_true(main.lua)
  assert.are.equal(want_pool, not pool.lua)
  local a, b = main:batch(docs), pool:batch(docs)
  assert.are.equal(#docs, #a)
  assert.are.equal(#docs, #b)
  for i = 1, #docs do
    assert.are.equal(outcome(a[i]), outcome(b[i]), docs[i].path)
  end
  return a
end

describe("sketching on the pool's threads instead of the main thread", function()
  it("the FASTA extractor (in C) gives the Lua extractor's sketches and errors", function()
    local a = compare({ w = 10, extractor = "fasta" }, fasta_docs(), true)
    assert.is_truthy(a[14].error:find("line 1: sequence data before the first '>' header", 1, true), a[14].error)
    compare({ w = 10, extractor = "fasta:k=15", sketch = "mod", m = 4 }, fasta_docs(), true)
  end)

  it("the code extractor (a C tokenizer) gives the Lua extractor's sketches", function()
    compare({ w = 6, extractor = "code" }, code_docs(), true)
  end)

  it("the MIDI extractor (Lua) runs in the workers' Lua states", function()
    local a = compare({ w = 4, extractor = "midi", sketch = "full" }, midi_docs(), true)
    assert.is_truthy(a[11].error:find("not a MIDI file", 1, true), a[11].error)
  end)

  it("a rule set with a Lua step (tweet) runs in the workers' Lua states", function()
    compare({ w = 3, canon = "tweet", invalid = "skip" }, text_docs(), true)
    local a = compare({ w = 3, canon = "tweet" }, text_docs(), true)
    assert.is_truthy(a[#a].error:find("invalid UTF-8", 1, true), a[#a].error)
  end)

  it("a rule set or extractor in a Lua file runs in the workers' Lua states", function()
    local dir = support.tmpdir()
    support.write(dir .. "/rules.lua",
      [[return { { name = "vowels", text = function(s) return (s:gsub("[aeiou]", "")) end }, "lowercase" }]])
    support.write(dir .. "/words.lua", [[return { name = "words3", kind = "set", extract = function(b, path)
      if b:find("NOPE", 1, true) then return nil, (path or "?") .. ": has NOPE" end
      local t = {} for w in b:gmatch("%a%a%a+") do t[#t + 1] = w:lower() end return t end }]])
    local docs = text_docs()
    docs[#docs + 1] = { text = "NOPE NOPE", path = "nope.txt" }
    compare({ w = 3, canon = dir .. "/rules.lua" }, docs, true)
    local a = compare({ w = 3, extractor = dir .. "/words.lua" }, docs, true)
    assert.are.equal("nope.txt: has NOPE", a[#a].error)
    support.rmdir(dir)
  end)

  it("stays on the main thread for rule sets given as Lua values", function()
    local cfg = { w = 3, canon = { { name = "inline", tokens = function(t) return t end } } }
    local text, html = sketcher.shinglers(cfg)
    assert.is_true(sketcher.new(text, html, { threads = 2, config = cfg }).lua)
  end)
end)
