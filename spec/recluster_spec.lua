-- shingle recluster: phase 4 again from a run's files. What it must redo is
-- whatever a changed option derives: the verification candidate bound (the
-- threshold - 0.2 below which estimated pairs are not verified) and the LSH
-- shape follow the new threshold, so lowering it finds what a fresh run at
-- that threshold finds, byte for byte. Options not given keep the run's.
local support = require "support"
local cjson = require "cjson"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

-- Families whose members are edited at rates that spread their resemblance
-- over 0.3 to 1, so that the pairs between 0.5 and 0.8 are many.
local function corpus(dir)
  local rand = support.rng(1414)
  local path = dir .. "/corpus.jsonl"
  local f = assert(io.open(path, "w"))
  local n = 0
  local function add(words)
    n = n + 1
    f:write(cjson.encode({ url = "doc" .. n, text = table.concat(words, " ") }), "\n")
  end
  for _ = 1, 10 do
    local base = support.words(rand, 300 + rand(200), 20000)
    add(base)
    for _, rate in ipairs({ 0.01, 0.02, 0.03, 0.04, 0.05, 0.07 }) do
      local v = {}
      for i, w in ipairs(base) do v[i] = rand(10000) <= rate * 10000 and ("e" .. rand(100000)) or w end
      add(v)
    end
  end
  for _ = 1, 10 do add(support.words(rand, 300, 20000)) end
  f:close()
  return path
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function summary(out) return cjson.decode(slurp(out .. "/summary.json")) end

local function run(args)
  local text, code = support.run(shingle_cmd .. args)
  assert.are.equal(0, code, text)
  return text
end

describe("shingle recluster", function()
  local dir, input
  setup(function()
    dir = support.tmpdir()
    input = corpus(dir)
  end)
  teardown(function() support.rmdir(dir) end)

  it("at a lower threshold finds what a fresh run at that threshold finds", function()
    run(("cluster %s -q -o %s/high -t 0.8"):format(input, dir))
    run(("cluster %s -q -o %s/fresh -t 0.5"):format(input, dir))
    local high = summary(dir .. "/high").pairs_linked
    run(("recluster -q %s/high -t 0.5"):format(dir))
    local re, fresh = summary(dir .. "/high"), summary(dir .. "/fresh")
    assert.is_true(fresh.pairs_linked > high, "the corpus should have pairs between 0.5 and 0.8")
    assert.are.equal(fresh.pairs_linked, re.pairs_linked)
    assert.are.equal(0.3, re.candidate)
    assert.are.equal(slurp(dir .. "/fresh/clusters.jsonl"), slurp(dir .. "/high/clusters.jsonl"))
    assert.are.equal(slurp(dir .. "/fresh/pairs.jsonl"), slurp(dir .. "/high/pairs.jsonl"))
    -- and back up: the derived bound is not kept either
    run(("recluster -q %s/high -t 0.8"):format(dir))
    assert.are.equal(high, summary(dir .. "/high").pairs_linked)
    assert.are.equal(0.6, summary(dir .. "/high").candidate)
  end)

  it("keeps a candidate bound that was given", function()
    run(("cluster %s -q -o %s/cand -t 0.8 --candidate 0.7"):format(input, dir))
    run(("recluster -q %s/cand -t 0.5"):format(dir))
    assert.are.equal(0.7, summary(dir .. "/cand").candidate)
  end)

  it("with --method lsh at a lower threshold equals a fresh run (the bands follow the threshold)", function()
    run(("cluster %s -q -o %s/lsh --method lsh --sketch min -s 100 -t 0.9"):format(input, dir))
    run(("cluster %s -q -o %s/lshfresh --method lsh --sketch min -s 100 -t 0.5"):format(input, dir))
    run(("recluster -q %s/lsh -t 0.5"):format(dir))
    assert.are.equal(slurp(dir .. "/lshfresh/clusters.jsonl"), slurp(dir .. "/lsh/clusters.jsonl"))
    assert.are.equal(slurp(dir .. "/lshfresh/pairs.jsonl"), slurp(dir .. "/lsh/pairs.jsonl"))
  end)

  it("keeps every option not given (the policy, verification) and says what it used", function()
    run(("cluster %s -q -o %s/contain --policy containment -t 0.9 --verify none"):format(input, dir))
    local text = run(("recluster %s/contain -t 0.7"):format(dir))
    local s = summary(dir .. "/contain")
    assert.are.equal("containment", s.policy)
    assert.are.equal(0.7, s.threshold)
    assert.are.equal(false, s.verify)
    assert.is_true(s.reclustered)
    assert.is_truthy(text:find("policy containment, threshold 0.7, verify none", 1, true), text)
    -- a given option replaces the run's
    run(("recluster -q %s/contain --policy either"):format(dir))
    s = summary(dir .. "/contain")
    assert.are.equal("either", s.policy)
    assert.are.equal(0.7, s.threshold)
  end)

  it("reports the phases it ran, not the earlier run's figures again", function()
    run(("cluster %s -q -o %s/phases"):format(input, dir))
    local text = run(("recluster %s/phases -t 0.6"):format(dir))
    assert.is_falsy(text:find("sketching", 1, true), text)
    assert.is_truthy(text:find("cluster formation", 1, true), text)
    local s = summary(dir .. "/phases")
    assert.is_nil(s.phases.sketching)
    assert.is_number(s.phases.cluster_formation)
    -- run.json keeps the times of every phase the files come from
    local rec = cjson.decode(slurp(dir .. "/phases/run.json"))
    assert.is_number(rec.times.sketching)
    assert.is_number(rec.times.cluster_formation)
  end)
end)
