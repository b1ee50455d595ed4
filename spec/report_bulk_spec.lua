-- pairs.jsonl written in bulk in C (core/lua/l_report.c, the default jsonl
-- output) is byte for byte what the writer makes record by record (the path a
-- run with another output_format takes): every score from 0 to 1, exact
-- values or none, URLs with bytes JSON escapes, documents without a URL.
local support = require "support"
local pipeline = require "shingle.pipeline"

-- families of documents that differ by a growing number of replaced words,
-- so the pairs' scores spread over the whole range
local function corpus()
  local rand = support.rng(1313)
  local docs = {}
  local urls = { 'a "quoted" url', "back\\slash/and/slash", "tab\there", "caf\195\169/\226\130\172",
    "ctrl\1\31\127", "plain/%ff%fe" }
  for f = 1, 12 do
    local words = support.words(rand, 300, 400)
    for v = 0, 7 do
      local t = {}
      for i, w in ipairs(words) do t[i] = w end
      for _ = 1, v * 5 do t[rand(#t)] = "x" .. rand(100000) end
      local n = #docs + 1
      -- every fifth document has no URL (url_a/url_b left out)
      docs[n] = { text = table.concat(t, " "), url = n % 5 ~= 0 and (urls[n % #urls + 1] .. n) or nil }
    end
  end
  return docs
end

local function run(dir, cfg)
  local docs = corpus()
  local i = 0
  cfg.outdir, cfg.quiet, cfg.w = dir, true, 4
  local p = pipeline.new(cfg)
  assert(p:run(function() i = i + 1 return docs[i] end))
  return support.read(dir .. "/pairs.jsonl")
end

describe("pairs.jsonl written in bulk", function()
  local dir
  setup(function() dir = support.tmpdir() end)
  teardown(function() support.rmdir(dir) end)

  for _, verify in ipairs({ true, false }) do
    it("is the writer's bytes (verify " .. tostring(verify) .. ")", function()
      local bulk = run(dir .. "/bulk" .. tostring(verify), { verify = verify, threshold = 0.3 })
      local rec = run(dir .. "/rec" .. tostring(verify), { verify = verify, threshold = 0.3, output_format = "csv" })
      assert.is_true(#bulk > 0)
      assert.are.equal(rec, bulk)
      -- a range of scores, exact values only with verify, and lines without URLs
      local n, scores = 0, {}
      for line in bulk:gmatch("[^\n]+") do
        n = n + 1
        scores[line:match('"resemblance":([%d.]+)')] = true
        assert.are.equal(verify, line:find('"exact":{', 1, true) ~= nil)
      end
      local distinct = 0
      for _ in pairs(scores) do distinct = distinct + 1 end
      assert.is_true(n >= 100, "pairs: " .. n)
      assert.is_true(distinct >= 20, "distinct scores: " .. distinct)
      assert.is_truthy(bulk:find('"a":5,"b":%d+,"url_b"') or bulk:find('"url_a":"[^"]*","resemblance"'))
      assert.is_truthy(bulk:find('\\"quoted\\"', 1, true))
      assert.is_truthy(bulk:find("back\\\\slash", 1, true))
    end)
  end

  it("names the file it cannot write", function()
    local out = dir .. "/err"
    run(out, {})
    local core = require "shingle.core"
    local n, err = core.links_jsonl(out, dir .. "/no/such/dir/pairs.jsonl.tmp", {}, "pairs.jsonl")
    assert.is_nil(n)
    assert.matches("cannot write pairs.jsonl: ", err, 1, true)
  end)
end)
