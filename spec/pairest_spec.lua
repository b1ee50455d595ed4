-- Phase 4 finds the candidates of exact verification from the estimate of
-- every pair of pairs.bin. With MOD_m sketches that estimate comes from the
-- pair's shared count of phase 3 (plus the common values phase 3 dropped
-- that both hold) and each document's count of multiples of the common
-- modulus, instead of merging the two sketches (core/pairest.c). Here the
-- fast path is compared with the obvious one, the sketches merged pair by
-- pair, at every policy and score from 0 to 1 in steps of 0.01, on a corpus
-- made to hold what the shortcut must get right: documents of the three
-- moduli of MOD_25's chain (under 100 shingles MOD_1, under 500 MOD_5), and
-- a header shared by more documents than max_df, whose values phase 3
-- drops.
local support = require "support"
local pipeline = require "shingle.pipeline"
local core = require "shingle.core"

local MAX_DF = 6

local function corpus(dir)
  local rand = support.rng(2026)
  local n = 0
  local function add(words)
    n = n + 1
    -- named in random order: either end of a pair may have the larger modulus
    support.write(("%s/%04d-%04d.txt"):format(dir, rand(9999), n), table.concat(words, " "))
  end
  local header = support.words(rand, 150, 20000)
  local bases = {}
  for f = 1, 24 do
    -- sizes across the moduli: 40 to 3000 words
    local size = ({ 40, 70, 90, 130, 250, 400, 480, 600, 1200, 3000 })[(f - 1) % 10 + 1]
    local base = support.words(rand, size, 20000)
    bases[f] = base
    -- a family of six: copies edited at several rates, a half and a third
    for _, rate in ipairs({ 0, 0.02, 0.06, 0.15 }) do
      local v = {}
      if f <= 8 then for i, w in ipairs(header) do v[i] = w end end -- the header: in 42 documents
      for _, w in ipairs(base) do v[#v + 1] = rand(10000) <= rate * 10000 and ("e" .. rand(100000)) or w end
      add(v)
    end
    for _, part in ipairs({ 0.5, 0.34 }) do
      local v = {}
      for i = 1, math.floor(#base * part) do v[i] = base[i] end
      add(v)
    end
  end
  -- mixtures of two families: pairs across them at every resemblance
  for k = 1, 30 do
    local x, y = bases[rand(24)], bases[rand(24)]
    local v = {}
    for i = 1, math.floor(#x * (0.2 + 0.6 * rand(100) / 100)) do v[#v + 1] = x[i] end
    for i = 1, math.floor(#y * rand(100) / 100) do v[#v + 1] = y[i] end
    if k % 3 == 0 then for _, w in ipairs(header) do v[#v + 1] = w end end
    add(v)
  end
end

describe("the estimates of phase 4 from the shared counts of phase 3", function()
  local dir, out, p
  setup(function()
    dir = support.tmpdir()
    assert(os.execute("mkdir -p '" .. dir .. "/in'"))
    corpus(dir .. "/in")
    out = dir .. "/run"
    p = pipeline.new { outdir = out, keep_sets = true, quiet = true, threads = 2, max_df = MAX_DF }
    assert(p:sketch({ dir .. "/in" }))
    assert(p:dedupe())
    assert(p:pairs())
  end)
  teardown(function() support.rmdir(dir) end)

  local function flags(policy, score, max_df, threads)
    local o = { policy = policy, threshold = score, candidate = score, threads = threads or 2, max_df = max_df }
    return assert(core.candidates(out, o))
  end

  it("gives the candidates the sketches give, at every policy and score", function()
    -- phase 3 dropped common values, so the shortcut has to add them back
    assert.is_true(p.stats.pairs.common_dropped >= 20, "common values dropped: " .. p.stats.pairs.common_dropped)
    local compared, kinds = 0, {}
    for _, policy in ipairs({ "resemblance", "containment", "either", "both" }) do
      for step = 0, 100 do
        local score = step / 100
        local slow = flags(policy, score)
        local fast = flags(policy, score, MAX_DF, step % 3 + 1)
        assert.is_false(slow.from_counts)
        assert.is_true(fast.from_counts)
        assert.are.equal(slow.pairs, fast.pairs)
        assert.are.equal(slow.candidates, fast.candidates)
        if slow.flags ~= fast.flags then
          local i = 1
          while slow.flags:byte(i) == fast.flags:byte(i) do i = i + 1 end
          error(("%s at %.2f: pair %d is %s from the sketches, %s from the counts"):format(policy, score, i,
            slow.flags:byte(i), fast.flags:byte(i)))
        end
        kinds[slow.candidates] = true
        compared = compared + 1
      end
    end
    assert.are.equal(404, compared)
    local distinct = 0
    for _ in pairs(kinds) do distinct = distinct + 1 end
    -- the scores cut the pairs in many places: the comparison is not of all-or-nothing flags
    assert.is_true(distinct >= 100, "distinct candidate counts: " .. distinct)
    assert.is_true(flags("resemblance", 0).pairs >= 400)
  end)

  it("falls back to the sketches when the counts are not those of the max_df given, with the same result", function()
    -- pairs.bin was made with MAX_DF: with a max_df that drops other values
    -- (none, the header's too, the families' as well) the sum of the counts
    -- does not match (one that drops the same values would be right)
    local slow = flags("resemblance", 0.4)
    for _, other in ipairs({ 0, 1000, 2 }) do
      local r = flags("resemblance", 0.4, other)
      assert.is_false(r.from_counts, "max_df " .. other)
      assert.are.equal(slow.flags, r.flags)
    end
  end)

  it("is what a whole run uses, with the links and clusters of the stored sets compared pair by pair", function()
    local st1 = assert(core.decide(out, { verify = true, threshold = 0.5, candidate = 0.3, policy = "resemblance", threads = 1 }))
    local links1, clusters1 = support.read(out .. "/links.bin"), support.read(out .. "/clusters.bin")
    local out2 = dir .. "/run2"
    local q = pipeline.new { outdir = out2, quiet = true, threads = 2, max_df = MAX_DF }
    assert(q:sketch({ dir .. "/in" }))
    assert(q:dedupe())
    assert(q:pairs())
    local st = assert(q:decide())
    assert.is_true(q.stats.verification_sets.from_counts)
    assert.is_true(st1.linked >= 30)
    assert.are.equal(st1.candidates, st.candidates)
    assert.are.equal(st1.linked, st.linked)
    assert.are.equal(links1, support.read(out2 .. "/links.bin"))
    assert.are.equal(clusters1, support.read(out2 .. "/clusters.bin"))
  end)
end)
