-- shingle.lsh: the in-memory LSH index. Banding chosen as datasketch
-- chooses it; recall and precision measured against exact resemblance and
-- containment computed from full shingle sets.
local shingle = require "shingle"
local core = require "shingle.core"
local support = require "support"
local tmpdir = support.tmpdir

-- Families of near-duplicates whose resemblances spread across the
-- threshold: a base text and variants with 0.5% to 12% of words replaced,
-- plus unrelated texts.
local function corpus(seed, families)
  local rand = support.rng(seed)
  local docs = {}
  for f = 1, families do
    local base = support.words(rand, 300 + rand(300), 30000)
    docs[#docs + 1] = { key = ("f%d-0"):format(f), text = table.concat(base, " "), words = base }
    for v, rate in ipairs({ 0.005, 0.01, 0.02, 0.03, 0.045, 0.06, 0.09, 0.12 }) do
      local w = {}
      for i, x in ipairs(base) do w[i] = rand(100000) <= rate * 100000 and ("e" .. rand(1000000)) or x end
      docs[#docs + 1] = { key = ("f%d-%d"):format(f, v), text = table.concat(w, " "), words = w }
    end
  end
  for i = 1, families * 2 do
    docs[#docs + 1] = { key = ("noise%d"):format(i), text = table.concat(support.words(rand, 400, 30000), " ") }
  end
  return docs
end

describe("shingle.lsh", function()
  describe("banding", function()
    it("chooses bands and rows as datasketch does (text-dedup's known answers)", function()
      assert.are.same({ 21, 12 }, { shingle.lsh.shape(0.75, 256, { fp = 0.5, fn = 0.5 }) })
      assert.are.same({ 28, 9 }, { shingle.lsh.shape(0.75, 256, { fp = 0.1, fn = 0.9 }) })
    end)

    it("takes half a MIN_s sketch as its budget and weighs false negatives 9 to 1", function()
      local ix = shingle.lsh{ threshold = 0.8, sketch = shingle.new{ sketch = "min", s = 200 } }
      local p = ix:params()
      assert.are.equal(100, p.budget)
      assert.are.same({ shingle.lsh.shape(0.8, 100, { fp = 0.1, fn = 0.9 }) }, { p.bands, p.rows })
      assert.is_true(p.bands * p.rows <= 100)
      assert.is_true(ix:probability(0.8) > 0.85 and ix:probability(0.5) < 0.05)
    end)

    it("takes bands and rows when given", function()
      local ix = shingle.lsh{ threshold = 0.5, bands = 7, rows = 3, sketch = shingle.new{ sketch = "min" } }
      assert.are.equal(7, ix:params().bands)
      assert.are.equal(3, ix:params().rows)
    end)
  end)

  describe("recall against exact resemblance", function()
    local docs, sh, full, exact
    setup(function()
      docs = corpus(31, 40)
      sh = shingle.new{ w = 5, sketch = "min", s = 200 }
      full = {}
      for i, d in ipairs(docs) do full[i] = sh:sketch(d.text, "full") end
    end)

    local function measure(threshold, weights)
      local ix = shingle.lsh{ threshold = threshold, sketch = sh, weights = weights }
      local index_of = {}
      for i, d in ipairs(docs) do
        ix:insert(d.key, d.text)
        index_of[d.key] = i
      end
      local relevant, found, returned, est_relevant, est_found = 0, 0, 0, 0, 0
      for i, d in ipairs(docs) do
        local q = sh:sketch(d.text)
        local hits = ix:query(q)
        local got = {}
        for _, h in ipairs(hits) do
          if h.key ~= d.key then got[index_of[h.key]] = true; returned = returned + 1 end
        end
        for j = 1, #docs do
          if j ~= i then
            local r = full[i]:resemblance(full[j])
            if r >= threshold then
              relevant = relevant + 1
              if got[j] then found = found + 1 end
            end
            -- what a brute-force scan of the same sketches would return
            if q:resemblance(ix:get(docs[j].key)) >= threshold then
              est_relevant = est_relevant + 1
              if got[j] then est_found = est_found + 1 end
            end
          end
        end
      end
      local correct = 0
      for i, d in ipairs(docs) do
        for _, h in ipairs(ix:query(d.text)) do
          if h.key ~= d.key and full[i]:resemblance(full[index_of[h.key]]) >= threshold - 0.1 then correct = correct + 1 end
        end
      end
      return { recall = found / relevant, relevant = relevant, band_recall = est_found / est_relevant,
        near_precision = correct / returned, returned = returned, bands = ix:params().bands, rows = ix:params().rows }
    end

    it("finds the pairs of exact resemblance >= 0.8 (default weights)", function()
      local m = measure(0.8)
      io.stderr:write(("\n[lsh] t = 0.8, MIN_200, w = 5, b = %d, r = %d: recall %.3f of %d exact pairs; bands keep %.3f of "
        .. "the brute-force answers; %.3f of %d answers have exact resemblance >= 0.7\n"):format(m.bands, m.rows, m.recall,
        m.relevant, m.band_recall, m.near_precision, m.returned))
      assert.is_true(m.relevant > 300)
      assert.is_true(m.band_recall >= 0.95)
      assert.is_true(m.recall >= 0.85)
      assert.is_true(m.near_precision >= 0.99)
    end)

    it("with datasketch's equal weights, loses more pairs near the threshold", function()
      local m = measure(0.8, { fp = 0.5, fn = 0.5 })
      io.stderr:write(("[lsh] t = 0.8, equal weights, b = %d, r = %d: recall %.3f, bands keep %.3f\n"):format(m.bands,
        m.rows, m.recall, m.band_recall))
      assert.is_true(m.band_recall < 0.9)
    end)

    it("finds the pairs of exact resemblance >= 0.5", function()
      local m = measure(0.5)
      io.stderr:write(("[lsh] t = 0.5: b = %d, r = %d: recall %.3f of %d, bands keep %.3f\n"):format(m.bands, m.rows,
        m.recall, m.relevant, m.band_recall))
      assert.is_true(m.band_recall >= 0.95)
      assert.is_true(m.recall >= 0.9)
    end)
  end)

  describe("containment", function()
    it("finds the documents an excerpt is contained in, against exact containment", function()
      local rand = support.rng(5)
      local sh = shingle.new{ w = 5, sketch = "mod", m = 8 }
      local ix = shingle.lsh{ threshold = 0.8, sketch = sh, containment = true }
      local bigs, fulls = {}, {}
      local fsh = shingle.new{ w = 5, sketch = "min" }
      for i = 1, 30 do
        bigs[i] = support.words(rand, 1000 + rand(3000), 30000)
        local text = table.concat(bigs[i], " ")
        ix:insert("big" .. i, text)
        fulls[i] = fsh:sketch(text, "full")
      end
      local relevant, found, wrong = 0, 0, 0
      for q = 1, 60 do
        local b = bigs[(q - 1) % 30 + 1]
        local len = 100 + rand(600)
        local from = rand(#b - len)
        local words = {}
        for i = from, from + len - 1 do words[#words + 1] = b[i] end
        if q % 3 == 0 then for i = 1, #words, 20 do words[i] = "edit" .. rand(99999) end end -- 5% edited
        local text = table.concat(words, " ")
        local qf = fsh:sketch(text, "full")
        local got = {}
        for _, h in ipairs(ix:containing(text)) do got[h.key] = true end
        for i = 1, 30 do
          local c = qf:containment(fulls[i])
          if c >= 0.8 then
            relevant = relevant + 1
            if got["big" .. i] then found = found + 1 end
          elseif got["big" .. i] and c < 0.6 then
            wrong = wrong + 1
          end
        end
      end
      io.stderr:write(("[lsh] containment >= 0.8 of excerpts (100-700 words) in documents of 1000-4000 words, MOD_8: "
        .. "recall %.3f of %d, %d answers below 0.6\n"):format(found / relevant, relevant, wrong))
      assert.is_true(relevant >= 40)
      assert.is_true(found / relevant >= 0.9)
      assert.are.equal(0, wrong)
    end)

    it("finds the excerpts a document contains", function()
      local sh = shingle.new{ w = 5, sketch = "mod", m = 4 }
      local ix = shingle.lsh{ threshold = 0.9, sketch = sh, containment = true }
      local rand = support.rng(9)
      local words = support.words(rand, 2000, 30000)
      ix:insert("part", table.concat(words, " ", 500, 900))
      ix:insert("other", table.concat(support.words(rand, 400, 30000), " "))
      local hits = ix:contained(table.concat(words, " "))
      assert.are.equal(1, #hits)
      assert.are.equal("part", hits[1].key)
      assert.is_true(hits[1].contained >= 0.9)
      assert.is_true(hits[1].resemblance < 0.3)
    end)

    it("refuses a containment query on an index made without it", function()
      local ix = shingle.lsh{ sketch = shingle.new{ sketch = "min" } }
      ix:insert(1, "some words of a text")
      assert.has_error(function() ix:containing("some words") end,
        "this index has no containment bands: make it with containment = true")
    end)
  end)

  describe("keys, removal and replacement", function()
    it("replaces a key inserted again, and never returns a removed one", function()
      local sh = shingle.new{ w = 3, sketch = "min" }
      local ix = shingle.lsh{ threshold = 0.5, sketch = sh }
      local a = "the quick brown fox jumps over the lazy dog near the river bank"
      ix:insert("x", a)
      ix:insert(42, a)
      ix:insert(1.5, "a different text entirely with other words in it")
      assert.are.equal(3, ix:count())
      ix:insert("x", "a different text entirely with other words in it")
      assert.are.equal(3, ix:count())
      local keys = {}
      for _, h in ipairs(ix:query(a)) do keys[#keys + 1] = h.key end
      assert.are.same({ 42 }, keys)
      assert.is_true(ix:remove(42))
      assert.is_false(ix:remove(42))
      assert.are.same({}, ix:query(a))
      assert.are.equal(2, ix:count())
      assert.is_nil(ix:get(42))
      assert.is_true(shingle.is_sketch(ix:get(1.5)))
    end)

    it("refuses a sketch made with other parameters, naming the parameter", function()
      local ix = shingle.lsh{ sketch = shingle.new{ w = 4 } }
      assert.has_error(function() ix:insert("a", shingle.new{ w = 5 }:sketch("one two three four five six")) end)
      local ok, err = pcall(ix.insert, ix, "a", shingle.new{ w = 4, seed = 7 }:sketch("one two three four five six"))
      assert.is_false(ok)
      -- another seed (which draws other polynomials too): the seed is named
      assert.is_truthy(tostring(err):find("seeds", 1, true), err)
    end)

    it("rejects unknown options and a threshold outside (0, 1)", function()
      assert.has_error(function() shingle.lsh{ treshold = 0.8 } end)
      assert.has_error(function() shingle.lsh{ threshold = 1.5 } end)
      assert.has_error(function() shingle.lsh{ sketch = shingle.new{ sketch = "class" } } end)
    end)
  end)

  describe("save and load", function()
    it("saves the whole index and loads it with the same answers", function()
      local dir = tmpdir()
      local docs = corpus(77, 10)
      local sh = shingle.new{ w = 5, sketch = "min" }
      local ix = shingle.lsh{ threshold = 0.7, sketch = sh, containment = true, seed = 12345 }
      for _, d in ipairs(docs) do ix:insert(d.key, d.text) end
      assert.are.equal(#docs, ix:save(dir .. "/ix.sks"))
      local ix2 = assert(shingle.lsh.load(dir .. "/ix.sks", { sketch = sh }))
      assert.are.same(ix:params(), ix2:params())
      assert.are.equal(ix:count(), ix2:count())
      for _, d in ipairs(docs) do
        assert.are.same(ix:query(d.text), ix2:query(d.text))
        assert.are.same(ix:containing(d.text), ix2:containing(d.text))
      end
      -- a file that is not an index, and a damaged one
      assert(shingle.sketches.save(dir .. "/plain.sks", { a = sh:sketch("x y z") }))
      local none, err = shingle.lsh.load(dir .. "/plain.sks")
      assert.is_nil(none)
      assert.is_truthy(err:find("not a saved LSH index", 1, true))
      local f = assert(io.open(dir .. "/ix.sks", "r+b"))
      f:seek("set", 400)
      f:write("\0\0\0\0")
      f:close()
      local bad, berr = shingle.lsh.load(dir .. "/ix.sks")
      assert.is_nil(bad)
      assert.is_truthy(berr:find("ix.sks", 1, true), berr)
      os.execute("rm -rf " .. dir)
    end)
  end)
end)
