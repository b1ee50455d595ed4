-- Outputs are reproducible byte for byte (issue 11, defect 9): two runs of
-- the same command over the same inputs, each in its own process (so Lua's
-- string hashing, which orders table keys, is seeded differently), write the
-- same bytes: the same key order everywhere, integers as integers, '/' not
-- escaped. Only what measures the run itself (seconds, as floating-point
-- numbers) may differ, and is masked before comparing the JSON files that
-- hold it.
local support = require "support"

local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local shingle_cmd = lua .. " bin/shingle "

local read = support.read

-- floating-point numbers (durations) become 0.0; every other byte stays
local function masked(s)
  return (s:gsub("(%-?%d+%.%d+[eE]?[-+]?%d*)", "0.0"):gsub("(%-?%d+[eE]%-%d+)", "0.0"))
end

local function run(cmd)
  local text, code = support.run(shingle_cmd .. cmd)
  assert.are.equal(0, code, text)
  return text
end

-- Run cmd twice into out (the second run replaces the first) and compare
-- the files named: exact ones byte for byte, timed ones masked.
local function twice(cmd, out, exact, timed)
  local first = {}
  run(cmd)
  for _, f in ipairs(exact) do first[f] = read(out .. "/" .. f) end
  for _, f in ipairs(timed or {}) do first[f] = read(out .. "/" .. f) end
  run(cmd)
  for _, f in ipairs(exact) do
    local again = read(out .. "/" .. f)
    assert.is_true(#again > 0, f .. " is empty")
    assert.are.equal(first[f], again, f .. " differs between two runs")
  end
  for _, f in ipairs(timed or {}) do
    assert.are.equal(masked(first[f]), masked(read(out .. "/" .. f)), f .. " differs between two runs beyond its timings")
  end
  return first
end

describe("outputs are byte-for-byte reproducible", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() support.rmdir(dir) end)

  it("cluster: clusters, pairs, documents, summary and run description", function()
    local out = dir .. "/run"
    local files = twice("cluster -q samples/docs -o " .. out, out, { "clusters.jsonl", "pairs.jsonl", "docs.jsonl" },
      { "summary.json", "run.json", "phase1.json" })
    for name, s in pairs(files) do
      assert.is_nil(s:find("\\/", 1, true), name .. " escapes '/'")
      -- counts and ids are integers, never 3.0
      assert.is_nil(s:find('"(%a+)":(%d+)%.0[,}]'), name .. " writes an integer as a float")
    end
    -- the same key order on every line, led by the fields a reader looks for first
    assert.is_truthy(files["clusters.jsonl"]:match('^{"[%a_]+":'))
  end)

  it("recluster: the same decisions written the same way", function()
    local out = dir .. "/run"
    run("cluster -q samples/docs -o " .. out)
    twice("recluster -q " .. out .. " --threshold 0.4", out, { "clusters.jsonl", "pairs.jsonl" }, { "summary.json" })
  end)

  it("dedup: the kept and dropped documents", function()
    local out = dir .. "/dedup"
    twice("dedup -q samples/docs -o " .. out, out, { "removed.jsonl", "kept.txt" }, { "summary.json" })
  end)

  it("a query's JSON answer", function()
    local idx = dir .. "/idx"
    run("index add -q --sweep 1 " .. idx .. " samples/docs")
    local a = run("similar --json " .. idx .. " samples/docs/rabin-original.txt")
    local b = run("similar --json " .. idx .. " samples/docs/rabin-original.txt")
    assert.are.equal(masked(a), masked(b))
    assert.is_nil(a:find("\\/", 1, true), a)
  end)
end)
