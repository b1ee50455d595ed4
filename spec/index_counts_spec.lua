-- An add into a new index decides its candidate pairs from the counts of the
-- sketch values each pair shares (core/index.c, "pairs from counts", with
-- core/pairest.c's estimate) instead of estimating each from the two
-- sketches, and gathers those pairs in memory (or, past a budget, in an
-- external sort). Every pair's estimate from the counts must be the
-- sketches' estimate, score for score, for every sketch kind and policy:
-- check_counts makes the add estimate each pair both ways and fail on any
-- difference, and the index must equal, table by table, the one made with
-- every pair estimated from its sketches.
local index = require "shingle.index"
local support = require "support"

local function have_mdb_dump()
  local r = os.execute("command -v mdb_dump > /dev/null 2>&1")
  return r == true or r == 0 -- LuaJIT returns the status
end

local TABLES, dump = support.INDEX_TABLES, support.index_dump

-- families of near-duplicates of very different sizes (20 to 1,500 words:
-- MOD sketches of several moduli of one chain under the floor), pieces of
-- larger documents (containment), byte-identical copies, singletons; words
-- from a small vocabulary, so many documents share a few values
local function corpus(rand)
  local docs = {}
  local function words(n) return support.words(rand, n, 150) end
  local function edit(w, rate)
    local e = {}
    for i, word in ipairs(w) do e[i] = (rand(rate) == 1) and ("x" .. rand(100000)) or word end
    return e
  end
  for f = 1, 14 do
    local n = ({ 20, 45, 90, 200, 450, 900, 1500 })[1 + f % 7]
    local w = words(n + rand(n))
    docs[#docs + 1] = { url = ("http://f%d.example/0"):format(f), text = table.concat(w, " ") }
    for m = 1, 2 + rand(4) do
      docs[#docs + 1] = { url = ("http://f%d.example/%d"):format(f, m), text = table.concat(edit(w, 4 + rand(20)), " ") }
    end
    docs[#docs + 1] = { url = ("http://f%d.example/part"):format(f), text = table.concat(w, " ", 1, math.floor(#w * (0.3 + rand(6) / 10))) }
    docs[#docs + 1] = { url = ("http://copy.example/%d"):format(f), text = table.concat(w, " ") }
  end
  for i = 1, 12 do docs[#docs + 1] = { url = ("http://single.example/%d"):format(i), text = table.concat(words(15 + rand(600)), " ") } end
  for i = #docs, 2, -1 do
    local j = rand(i)
    docs[i], docs[j] = docs[j], docs[i]
  end
  -- two unrelated documents, then one made of both (containing each): its
  -- two links join two clusters of one document each, and the cluster they
  -- end in depends on the order of the merges (by earlier id)
  for t = 1, 10 do
    local a, b = words(150 + rand(200)), words(150 + rand(200))
    docs[#docs + 1] = { url = ("http://pair.example/%d/a"):format(t), text = table.concat(a, " ") }
    docs[#docs + 1] = { url = ("http://pair.example/%d/b"):format(t), text = table.concat(b, " ") }
    docs[#docs + 1] = { url = ("http://pair.example/%d/ab"):format(t), text = table.concat(a, " ") .. " " .. table.concat(b, " ") }
  end
  return docs
end

describe("index add, pairs from counts", function()
  local dir, docs
  setup(function()
    dir = support.tmpdir()
    docs = corpus(support.rng(31))
  end)
  teardown(function() support.rmdir(dir) end)

  local n = 0
  local function build(opts)
    n = n + 1
    local path = ("%s/ix%d"):format(dir, n)
    local ix = assert(index.open(path))
    local o = { sweep = "s1", threads = 2 }
    for k, v in pairs(opts) do o[k] = v end
    local _, st = assert(ix:add_documents(docs, o))
    ix:close()
    return path, st
  end

  local kinds = {
    { sketch = "mod", m = 25, counts = true },             -- the default: 25, 5, 1 down the chain under the floor
    { sketch = "mod", m = 12, floor = 40, counts = true }, -- 12, 6, 3, 1
    { sketch = "full", counts = true },
    { sketch = "min", s = 40, counts = false },            -- the merged MIN_s estimator: from the sketches
    { sketch = "class", counts = false },
  }
  for _, kind in ipairs(kinds) do
    for _, policy in ipairs({ "resemblance", "containment", "either", "both" }) do
      it(("decides every pair as its sketches' estimate does (%s%s, %s)"):format(kind.sketch,
        kind.m and (" m = " .. kind.m) or "", policy), function()
        if not have_mdb_dump() then error("mdb_dump (Debian's lmdb-utils, installed by scripts/setup.sh) is needed") end
        local base = { w = 3, sketch = kind.sketch, m = kind.m, s = kind.s, floor = kind.floor, policy = policy,
          threshold = policy == "containment" and 0.6 or 0.35 }
        local function with(t)
          local o = {}
          for k, v in pairs(base) do o[k] = v end
          for k, v in pairs(t) do o[k] = v end
          return o
        end
        -- every pair decided from its counts is estimated from its sketches too, and must agree
        local checked, st = build(with({ check_counts = true }))
        local plain, st0 = build(with({ counts = false }))
        local sorted, st2 = build(with({ pairs_sorted = true }))
        -- in memory for the first values, then in the external sort
        local spilled, st3 = build(with({ pairs_small = true, check_counts = true }))
        assert.is_true(st.candidates > 100)
        assert.is_true(st.linked > 10)
        if kind.counts then
          -- every candidate pair (every sketch is usable)
          assert.are.equal(st.candidates, st.from_counts)
          assert.are.equal(st.candidates, st2.from_counts)
        else
          assert.are.equal(0, st.from_counts)
        end
        assert.are.equal(0, st0.from_counts)
        for _, k in ipairs({ "candidates", "linked", "identical", "merges", "added" }) do
          assert.are.equal(st0[k], st[k], k)
          assert.are.equal(st0[k], st2[k], k)
          assert.are.equal(st0[k], st3[k], k)
        end
        assert.are.equal(st.from_counts, st3.from_counts)
        local a, b, c, d = dump(checked), dump(plain), dump(sorted), dump(spilled)
        for _, t in ipairs(TABLES) do
          assert.are.equal(b[t], a[t], "table " .. t .. " differs")
          assert.are.equal(b[t], c[t], "table " .. t .. " differs (pairs in the external sort)")
          assert.are.equal(b[t], d[t], "table " .. t .. " differs (pairs moved to the external sort)")
        end
      end)
    end
  end

  it("into a new index, finds copies and URLs already in the sweep in memory as the tables do (one document a transaction)", function()
    if not have_mdb_dump() then error("mdb_dump (Debian's lmdb-utils, installed by scripts/setup.sh) is needed") end
    -- documents again under their URL (skipped), other content under a URL of the sweep (refused),
    -- copies under new URLs (identical), a URL given three times
    local list = {}
    for i = 1, 40 do list[#list + 1] = docs[i] end
    list[#list + 1] = docs[3]
    list[#list + 1] = { url = docs[5].url, text = docs[6].text }
    list[#list + 1] = { url = "http://again.example/1", text = docs[7].text }
    list[#list + 1] = { url = docs[9].url, text = docs[9].text }
    list[#list + 1] = { url = docs[9].url, text = "other words entirely" }
    list[#list + 1] = { url = "http://again.example/1", text = docs[8].text }
    local opts = { sweep = "s1", threads = 2, w = 3 }
    local one_path, each_path = dir .. "/one", dir .. "/each"
    local one = assert(index.open(one_path))
    local res, st = assert(one:add_documents(list, opts))
    one:close()
    local each = assert(index.open(each_path))
    local want = {}
    for i, d in ipairs(list) do
      want[i] = assert(each:add_documents({ d }, i == 1 and opts or { sweep = "s1", threads = 2 }))[1]
    end
    each:close()
    assert.are.same(want, res)
    assert.is_true(st.identical >= 3)
    local errors = 0
    for _, r in ipairs(res) do if r.error then errors = errors + 1 end end
    assert.are.equal(3, errors)
    local a, b = dump(one_path), dump(each_path)
    for _, t in ipairs(TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs") end
  end)

  it("equals the batch path's index (one document a transaction), with a second sweep on top", function()
    if not have_mdb_dump() then error("mdb_dump (Debian's lmdb-utils, installed by scripts/setup.sh) is needed") end
    local opts = { w = 3, sketch = "mod", m = 12, floor = 40, policy = "either", threshold = 0.4 }
    local half = math.floor(#docs / 2)
    local first, second = {}, {}
    for i, d in ipairs(docs) do if i <= half then first[#first + 1] = d else second[#second + 1] = d end end
    local bulk_path, small_path = dir .. "/bulk", dir .. "/small"
    local bulk = assert(index.open(bulk_path))
    local o = { sweep = "s1", threads = 2, check_counts = true }
    for k, v in pairs(opts) do o[k] = v end
    local _, st1 = assert(bulk:add_documents(first, o))
    assert.is_true(st1.from_counts > 0)
    assert(bulk:add_documents(second, { sweep = "s2", threads = 2 }))
    bulk:close()
    local small = assert(index.open(small_path))
    for i, d in ipairs(docs) do
      local s = { sweep = i <= half and "s1" or "s2", threads = 2 }
      if i == 1 then for k, v in pairs(opts) do s[k] = v end end
      assert(small:add_documents({ d }, s))
    end
    small:close()
    local a, b = dump(bulk_path), dump(small_path)
    for _, t in ipairs(TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs") end
  end)
end)
