-- Phase 4 judges pairs.bin's pairs on several threads, a chunk at a time,
-- and leaves out comparing the values of a pair whose resemblance cannot
-- reach the score (its sketches' or sets' sizes differ too much). Neither
-- may change a byte: links.bin and clusters.bin are compared with one
-- thread, with chunks so small that a run takes several rounds, and with
-- the obvious path, a Lua policy function that sees every pair's exact (or
-- estimated) scores and decides resemblance >= 0.5 itself, with no bound.
local support = require "support"
local pipeline = require "shingle.pipeline"
local core = require "shingle.core"

-- Families of documents of one base text: edited copies (resemblance spread
-- over 0.3 to 1) and cut copies (a half, a fifth: sizes far apart, which the
-- bounds decide), so pairs of every kind come out of phase 3.
local function corpus(dir)
  local rand = support.rng(1313)
  local n = 0
  local function add(words)
    n = n + 1
    support.write(("%s/d%04d.txt"):format(dir, n), table.concat(words, " "))
  end
  for _ = 1, 12 do
    local base = support.words(rand, 400 + rand(1600), 20000)
    add(base)
    for _, rate in ipairs({ 0.01, 0.03, 0.05, 0.08, 0.12 }) do
      local v = {}
      for i, w in ipairs(base) do v[i] = rand(10000) <= rate * 10000 and ("e" .. rand(100000)) or w end
      add(v)
    end
    for _, part in ipairs({ 0.5, 0.2, 0.7 }) do
      local v = {}
      for i = 1, math.floor(#base * part) do v[i] = base[i] end
      add(v)
    end
  end
  for _ = 1, 20 do add(support.words(rand, 200 + rand(800), 20000)) end
end

describe("phase 4 on threads and with bounds", function()
  local dir, out
  setup(function()
    dir = support.tmpdir()
    assert(os.execute("mkdir -p '" .. dir .. "/in'"))
    corpus(dir .. "/in")
    out = dir .. "/run"
    -- the full sets stored by phase 1, so core.decide can be called alone
    local p = pipeline.new { outdir = out, keep_sets = true, quiet = true, threads = 1 }
    assert(p:sketch({ dir .. "/in" }))
    assert(p:dedupe())
    assert(p:pairs())
  end)
  teardown(function() support.rmdir(dir) end)

  local function decide(o, predicate)
    local st = assert(core.decide(out, o, predicate))
    return st, support.read(out .. "/links.bin"), support.read(out .. "/clusters.bin")
  end

  for _, verify in ipairs({ true, false }) do
    it(("gives the same links and clusters on 1, 2 and 3 threads, in small chunks, and as the obvious path (verify %s)")
      :format(tostring(verify)), function()
      local base = { verify = verify, threshold = 0.5, candidate = verify and 0.3 or nil, policy = "resemblance" }
      local function with(t)
        local o = {}
        for k, v in pairs(base) do o[k] = v end
        for k, v in pairs(t) do o[k] = v end
        return o
      end
      local st1, links1, clusters1 = decide(with { threads = 1 })
      assert.is_true(st1.linked >= 50)
      assert.is_true(st1.clusters >= 10)
      for _, t in ipairs({ { threads = 2 }, { threads = 2, chunk_pairs = 7 }, { threads = 3, chunk_pairs = 1 },
                           { threads = 1, chunk_pairs = 3 } }) do
        local st, links, clusters = decide(with(t))
        assert.are.same(st1, st)
        assert.are.equal(links1, links)
        assert.are.equal(clusters1, clusters)
      end
      -- the obvious path: every pair's scores to a Lua function, no bound
      local seen, small = 0, 0
      local st, links, clusters = decide(with {}, function(p)
        seen = seen + 1
        local lo, hi = math.min(p.size_a, p.size_b), math.max(p.size_a, p.size_b)
        if lo < 0.3 * hi then small = small + 1 end
        return p.resemblance >= 0.5
      end)
      assert.are.equal(links1, links)
      assert.are.equal(clusters1, clusters)
      assert.are.equal(st1.linked, st.linked)
      -- pairs of sizes far apart were there to be left out
      assert.is_true(small >= 20, "pairs of sizes far apart: " .. small)
      assert.are.equal(st1.pairs, seen)
    end)
  end

  it("gives the same links from sets made again from the files (the candidates kept from before) as from stored sets", function()
    local st1, links1, clusters1 = decide({ verify = true, threshold = 0.5, candidate = 0.3, policy = "resemblance", threads = 1 })
    local out2 = dir .. "/run2"
    local p = pipeline.new { outdir = out2, quiet = true, threads = 2 }
    assert(p:sketch({ dir .. "/in" }))
    assert(p:dedupe())
    assert(p:pairs())
    -- no stored sets: phase 4 makes the candidates' again, in memory, with the pairs' verdicts
    local stored = support.read(out2 .. "/shingles.bin")
    assert.is_true(stored == nil or #stored <= 64, "shingles.bin holds no sets")
    local st = assert(p:decide())
    assert.is_true(p.stats.verification_sets.in_memory)
    assert.is_true(p.stats.verification_sets.documents > 0)
    assert.are.equal(links1, support.read(out2 .. "/links.bin"))
    assert.are.equal(clusters1, support.read(out2 .. "/clusters.bin"))
    assert.are.equal(st1.candidates, st.candidates)
    assert.are.equal(st1.linked, st.linked)
  end)
end)
