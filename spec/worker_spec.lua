-- Rule sets with Lua steps and extractors sketched on the C pool's worker
-- threads (one Lua state each, core/lua/l_worker.c; FASTA, MIDI and code in C)
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
  -- DNA for 300 bases, then a protein's letter: every k-mer is a protein's
  docs[#docs + 1] = { text = ">late\n" .. ("ACGTTGCA"):rep(38):sub(1, 300) .. "E\n>n\n" .. ("N"):rep(40) .. "\n", path = "late.fa" }
  -- long records (the packed 2-bit path takes 32 bases at a time): runs of
  -- N short and long, lower case, lines of every length up to 90, one
  -- record with an IUPAC code late (a protein's, then), one shorter than k
  local lines = {}
  for rec = 1, 4 do
    lines[#lines + 1] = ">long " .. rec
    local seq = {}
    for i = 1, 3000 + r(2000) do
      local j = r(4)
      local b = ("ACGT"):sub(j, j)
      if rec == 2 and r(150) == 1 then b = ("N"):rep(r(70)) end
      if rec == 3 and r(3) == 1 then b = b:lower() end
      if rec == 4 and i == 2900 then b = "Y" end
      seq[#seq + 1] = b
    end
    local s, i = table.concat(seq), 1
    while i <= #s do
      local len = r(90)
      lines[#lines + 1] = s:sub(i, i + len - 1)
      i = i + len
    end
  end
  lines[#lines + 1] = ">short\nACGTNACG"
  docs[#docs + 1] = { text = table.concat(lines, "\n") .. "\n", path = "long.fa" }
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

-- A MIDI file of two tracks with chords, running status, note-offs as
-- note-ons of velocity 0, meta and sysex events, program changes and
-- controllers, data bytes over 127; then every prefix of it and it with each
-- byte changed to a few values: the C extractor's tokens and errors must be
-- the Lua extractor's.
local function odd_midi_docs()
  local function be32(n)
    return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  end
  local t1 = string.char(0x00, 0x90, 60, 64, 0x00, 64, 70, 0x00, 67, 1, 0x81, 0x00, 0x80, 60, 0,
    0x00, 0xFF, 0x03, 0x04) .. "name" .. string.char(0x00, 0xF0, 0x03, 1, 2, 0xF7, 0x05, 0xC0, 5, 0x00, 0xD0, 7,
    0x00, 0xB0, 7, 100, 0x10, 0x90, 62, 0, 0x10, 59, 90, 0x83, 0x60, 0x9F, 200, 1, 0x00, 0xF7, 0x01, 0x00,
    0x00, 0xE0, 1, 2, 0x00, 0x95, 61, 3, 0x00, 0xFF, 0x2F, 0x00)
  local t2 = string.char(0x00, 0x91, 48, 50, 0x81, 0x00, 50, 50, 0x00, 47, 50, 0x20, 0x91, 127, 9, 0x00, 0xFF,
    0x2F, 0x00)
  local f = "MThd" .. be32(6) .. string.char(0, 1, 0, 2, 0x01, 0xE0) .. "MTrk" .. be32(#t1) .. t1 .. "MTrk" ..
    be32(#t2) .. t2
  local docs = { { text = f, path = "whole.mid" } }
  for n = 0, #f - 1 do docs[#docs + 1] = { text = f:sub(1, n), path = "prefix" .. n .. ".mid" } end
  for i = 1, #f do
    for _, b in ipairs({ 0x00, 0x7F, 0x80, 0x90, 0xF0, 0xFF }) do
      docs[#docs + 1] = { text = f:sub(1, i - 1) .. string.char(b) .. f:sub(i + 1), path = ("b%d_%d.mid"):format(i, b) }
    end
  end
  local r = lcg(17)
  for d = 1, 50 do
    local t = {}
    for i = 1, r(80) do t[i] = string.char(r(256) - 1) end
    local tr = table.concat(t)
    docs[#docs + 1] = { text = "MThd" .. be32(6) .. "\0\1\0\1\1\224MTrk" .. be32(#tr + r(5) - 3) .. tr,
      path = "random" .. d .. ".mid" }
  end
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
    -- 2-bit codes up to k = 32 (one 64-bit word), letters above; 1 and 4 bases
    for _, k in ipairs({ 1, 4, 31, 32, 33 }) do
      compare({ w = 10, extractor = "fasta:k=" .. k, sketch = "full" }, fasta_docs(), true)
    end
    -- every instruction set level there is (core/simd.h), k on both sides
    -- of the packed path's limit (29)
    for _, level in ipairs({ "portable", "sse2", "avx2", "avx512" }) do
      for _, k in ipairs({ 21, 29, 30 }) do
        compare({ w = 10, extractor = "fasta:k=" .. k, sketch = "full", simd = level }, fasta_docs(), true)
      end
    end
  end)

  it("the code extractor (a C tokenizer) gives the Lua extractor's sketches", function()
    compare({ w = 6, extractor = "code" }, code_docs(), true)
  end)

  it("the MIDI extractor (in C) gives the Lua extractor's sketches and errors", function()
    local a = compare({ w = 4, extractor = "midi", sketch = "full" }, midi_docs(), true)
    assert.is_truthy(a[11].error:find("not a MIDI file", 1, true), a[11].error)
    local docs = odd_midi_docs()
    a = compare({ w = 2, extractor = "midi", sketch = "full" }, docs, true)
    local seen = {}
    for _, r in ipairs(a) do seen[r.error and (r.error:match("^[^:]*: (%a+ %a+)") or r.error) or "ok"] = true end
    for _, what in ipairs({ "ok", "not a", "truncated before", "expected a", "bad delta", "bad meta", "bad sysex",
      "running status" }) do
      assert.is_true(seen[what], what)
    end
  end)

  it("a rule set with a Lua text step runs in the workers' Lua states; the tweet set in C gives the same", function()
    local dir = support.tmpdir()
    local file = dir .. "/tweet.lua"
    support.write(file, [[return { { name = "tweet", text = require("shingle.rules").tweet_text }, "lowercase",
      "drop_punctuation" }]])
    for _, invalid in ipairs({ "skip", "error" }) do
      local a = compare({ w = 3, canon = file, invalid = invalid }, text_docs(), true)
      local text, html, ex = sketcher.shinglers({ w = 3, canon = "tweet", invalid = invalid })
      local c = sketcher.new(text, html, { threads = 2, extractor = ex, full = true })
      assert.is_false(c.lua)
      local b = c:batch(text_docs())
      for i = 1, #a do assert.are.equal(outcome(a[i]), outcome(b[i]), invalid .. " " .. i) end
      if invalid == "error" then assert.is_truthy(a[#a].error:find("invalid UTF-8", 1, true), a[#a].error) end
    end
    support.rmdir(dir)
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
