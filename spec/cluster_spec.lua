-- The clustering pipeline, end to end, against exact resemblance computed
-- from full shingle sets.
local shingle = require "shingle"
local pipeline = require "shingle.pipeline"
local support = require "support"
local tmpdir, rmdir = support.tmpdir, support.rmdir



-- Families of documents with planted edits, plus unrelated noise. Returns the
-- texts and the JSON Lines file that holds them.
-- cjson decodes every number as a float: keys are formatted as integers
local function key(i, j) return ("%d-%d"):format(i, j) end

local function corpus(dir, seed)
  local rand = support.rng(seed)
  local docs = {}
  local function add(words) docs[#docs + 1] = table.concat(words, " ") end
  for f = 1, 8 do
    local base = support.words(rand, 250 + rand(200), 30000)
    add(base)
    for _, rate in ipairs({ 0.005, 0.02, 0.05, 0.12 }) do
      local v = {}
      for i, w in ipairs(base) do v[i] = rand(10000) <= rate * 10000 and ("e" .. rand(100000)) or w end
      add(v)
    end
    local cut = {}
    for i = 1, math.floor(#base * 0.6) do cut[i] = base[i] end
    add(cut) -- a truncation: contained in the original
  end
  for _ = 1, 12 do add(support.words(rand, 300, 30000)) end
  add({ docs[1] }) -- an exact copy
  add({ (docs[6]:upper():gsub(" ", "  ,  ")) }) -- the same words, formatted otherwise
  local path = dir .. "/corpus.jsonl"
  local f = assert(io.open(path, "w"))
  local cjson = require "cjson"
  for i, t in ipairs(docs) do f:write(cjson.encode({ id = i, url = "doc" .. i, text = t }), "\n") end
  f:close()
  return docs, path
end

-- Pairs (i < j) with exact resemblance >= t, by brute force over full sets.
local function exact_pairs(docs, t, w)
  local sh = shingle.new{ w = w or 10, sketch = "full", invalid = "latin1" }
  local full = {}
  for i, d in ipairs(docs) do full[i] = sh:sketch(d) end
  local set, n = {}, 0
  for i = 1, #docs do
    for j = i + 1, #docs do
      if full[i]:resemblance(full[j]) >= t then set[key(i, j)] = true; n = n + 1 end
    end
  end
  return set, n
end

-- Pairs of the run: every pair of documents that share a cluster.
local function clustered_pairs(dir)
  local cjson = require "cjson"
  local set, n = {}, 0
  for line in io.lines(dir .. "/clusters.jsonl") do
    local c = cjson.decode(line)
    for a = 1, #c.members do
      for b = a + 1, #c.members do
        local i, j = c.members[a].id, c.members[b].id
        if i > j then i, j = j, i end
        set[key(i, j)] = true
        n = n + 1
      end
    end
  end
  return set, n
end

local function linked_pairs(dir)
  local cjson = require "cjson"
  local set, list = {}, {}
  for line in io.lines(dir .. "/pairs.jsonl") do
    local p = cjson.decode(line)
    local i, j = math.min(p.a, p.b), math.max(p.a, p.b)
    set[key(i, j)] = p
    list[#list + 1] = p
  end
  return set, list
end

local function precision_recall(got, want)
  local tp, ng, nw = 0, 0, 0
  for k in pairs(got) do ng = ng + 1; if want[k] then tp = tp + 1 end end
  for _ in pairs(want) do nw = nw + 1 end
  return ng > 0 and tp / ng or 1, nw > 0 and tp / nw or 1
end

local function run(dir, input, over)
  local cfg = { outdir = dir, quiet = true, threads = 2 }
  for k, v in pairs(over or {}) do cfg[k] = v end
  local p = pipeline.new(cfg)
  local sum = assert(p:run({ input }))
  return p, sum
end

describe("shingle cluster (the paper's four phases)", function()
  local dir, docs, input, truth
  setup(function()
    dir = tmpdir()
    docs, input = corpus(dir, 11)
    truth = exact_pairs(docs, 0.5)
  end)
  teardown(function() rmdir(dir) end)

  it("links, with exact verification, only pairs whose exact resemblance is at least 0.5, and nearly all of them", function()
    local out = dir .. "/verified"
    run(out, input, { verify = true, sketch = "mod", m = 4 })
    local linked = linked_pairs(out)
    for k, p in pairs(linked) do
      assert.is_true(p.exact.resemblance >= 0.5, k)
      assert.is_true(truth[k] ~= nil, k .. " is not a true pair")
    end
    -- clusters are connected components: every true pair must fall in one cluster
    local clustered = clustered_pairs(out)
    local _, recall = precision_recall(clustered, truth)
    assert.is_true(recall >= 0.95, "recall " .. recall)
  end)

  it("reports the exact copy and the reformatted copy as identical documents", function()
    local out = dir .. "/plain"
    local _, sum = run(out, input)
    -- light edits can leave a variant unchanged: count the planted copies from the texts
    local seen, exact = {}, 0
    for _, t in ipairs(docs) do if seen[t] then exact = exact + 1 end; seen[t] = true end
    assert.is_true(exact >= 1)
    assert.are.equal(exact, sum.exact_duplicates)
    assert.are.equal(1, sum.lexical_duplicates)
    local cjson = require "cjson"
    local rel = {}
    for line in io.lines(out .. "/clusters.jsonl") do
      for _, m in ipairs(cjson.decode(line).members) do rel[m.id] = m end
    end
    assert.are.equal("exact", rel[#docs - 1].relation)
    assert.are.equal(1, rel[#docs - 1].copy_of)
    assert.are.equal("lexical", rel[#docs].relation)
    assert.are.equal(6, rel[#docs].copy_of)
  end)

  it("gives the same clusters and pairs when the sorts spill to disk under a small memory budget", function()
    -- the defaults (MOD_25, exact verification), and every shingle (m = 1):
    -- its pair formation needs several runs at the smallest budget
    for _, over in ipairs({ {}, { sketch = "mod", m = 1, spills = true } }) do
      local a, b = dir .. "/bigmem", dir .. "/smallmem"
      local big = { memory = 1024 ^ 3 }
      local small = { memory = 256 * 1024 }
      for k, v in pairs(over) do if k ~= "spills" then big[k] = v; small[k] = v end end
      local pa = run(a, input, big)
      local pb = run(b, input, small)
      assert.are.equal(0, pa.stats.pairs.disk_peak)
      if over.spills then assert.is_true(pb.stats.pairs.disk_peak > 0, "the small budget should have spilled runs") end
      -- phase 3 in memory (the large budget) and through the pair sorter (the small one): the same pairs.bin
      assert.are.equal(support.read(b .. "/pairs.bin"), support.read(a .. "/pairs.bin"))
      for _, k in ipairs({ "records", "shingles", "common_dropped", "pair_records", "pairs" }) do
        assert.are.equal(pb.stats.pairs[k], pa.stats.pairs[k], k)
      end
      assert.are.same(clustered_pairs(a), clustered_pairs(b))
      assert.are.same(select(2, linked_pairs(a)), select(2, linked_pairs(b)))
      rmdir(a); rmdir(b)
    end
  end)

  it("reclusters from the kept files with another threshold as a fresh run would", function()
    local a, b = dir .. "/re", dir .. "/fresh"
    run(a, input, { threshold = 0.5 })
    local p = assert(pipeline.load(a, { threshold = 0.8, quiet = true }))
    assert(p:decide())
    local _, before = clustered_pairs(a) -- still the 0.5 clusters: report() has not run again yet
    assert(p:report())
    run(b, input, { threshold = 0.8 })
    assert.are.same(clustered_pairs(b), clustered_pairs(a))
    assert.is_true(select(2, clustered_pairs(a)) < before)
  end)

  it("finds contained documents with the containment policy", function()
    local out = dir .. "/contain"
    run(out, input, { policy = "containment", threshold = 0.9, verify = true, sketch = "mod", m = 4 })
    local linked = linked_pairs(out)
    -- document 6 of each family (1-based: 6, 12, ...) is a prefix of the family's original
    for f = 0, 7 do
      local orig, cut = 6 * f + 1, 6 * f + 6
      local keys = {} for k in pairs(linked) do keys[#keys + 1] = k end
      assert.is_truthy(linked[key(orig, cut)], "family " .. f .. ": " .. table.concat(keys, " "))
    end
  end)

  for _, method in ipairs({ "supershingle", "lsh", "greedy" }) do
    it("with --method " .. method .. " finds the close pairs and links no unrelated documents", function()
      local out = dir .. "/" .. method
      run(out, input, { method = method, sketch = "min", s = 100 })
      local close = exact_pairs(docs, 0.9)
      local clustered = clustered_pairs(out)
      local precision = precision_recall(clustered, exact_pairs(docs, 0.3))
      local _, recall = precision_recall(clustered, close)
      assert.is_true(precision >= 0.9, method .. " precision " .. precision)
      assert.is_true(recall >= 0.9, method .. " recall at 0.9 " .. recall)
    end)
  end
end)

describe("shingle cluster inputs", function()
  local dir
  setup(function() dir = tmpdir() end)
  teardown(function() rmdir(dir) end)

  -- each test makes the files it reads: none depends on another having run
  local function broken_jsonl()
    local path = dir .. "/broken.jsonl"
    local f = assert(io.open(path, "w"))
    f:write('{"url":"a","text":"one two three four five six"}\n{"url": broken\n{"url":"b","text":"one two three four five six"}\n')
    f:close()
    return path
  end

  local function record(uri, body)
    local http = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body
    return "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: " .. uri .. "\r\nWARC-Date: 2026-11-01T00:00:00Z\r\n"
      .. "Content-Type: application/http; msgtype=response\r\nContent-Length: " .. #http .. "\r\n\r\n" .. http .. "\r\n\r\n"
  end
  local body = "<html><body><p>" .. table.concat(support.words(support.rng(3), 200), " ") .. "</p></body></html>"

  -- two records of the same page at two URIs
  local function crawl_warc()
    local plain = dir .. "/crawl.warc"
    local f = assert(io.open(plain, "wb"))
    f:write(record("http://a.example/1", body), record("http://b.example/copy", body))
    f:close()
    return plain
  end

  it("reports a broken JSON line with its file and line, skips it, and counts it", function()
    local path = broken_jsonl()
    local msgs = {}
    local p = pipeline.new{ outdir = dir .. "/o1", quiet = true, w = 3, log = function(m) msgs[#msgs + 1] = m end }
    local sum = assert(p:run({ path }))
    assert.are.equal(2, sum.documents)
    assert.are.equal(1, sum.skipped)
    assert.is_truthy(msgs[1]:find(path .. ": line 2:", 1, true), msgs[1])
  end)

  it("makes a broken line fatal with strict, leaving no output that looks complete", function()
    local p = pipeline.new{ outdir = dir .. "/o2", quiet = true, strict = true }
    local ok, err = p:run({ broken_jsonl() })
    assert.is_nil(ok)
    assert.is_truthy(err:find("line 2", 1, true))
    assert.is_nil(io.open(dir .. "/o2/docs.bin"))
    assert.is_nil(io.open(dir .. "/o2/clusters.jsonl"))
  end)

  it("reads a directory tree, taking paths as URLs, and skips binary files", function()
    local d = dir .. "/tree"
    os.execute("mkdir -p " .. d .. "/sub && cp samples/docs/* " .. d .. "/sub/ && printf 'GIF89a\\0\\0\\1' > " .. d .. "/x.gif")
    local msgs = {}
    local p = pipeline.new{ outdir = dir .. "/o3", quiet = true, log = function(m) msgs[#msgs + 1] = m end }
    local sum = assert(p:run({ d }))
    assert.are.equal(9, sum.documents)
    assert.are.equal(1, sum.skipped)
    assert.is_truthy(msgs[1]:find("x.gif looks binary", 1, true), msgs[1])
    assert.is_true(sum.clusters >= 2)
  end)

  it("reads WARC files, plain and gzipped per record, without HTTP headers in the text", function()
    local plain = crawl_warc()
    local gz = dir .. "/crawl.warc.gz"
    -- each record its own gzip member
    local f1, f2 = assert(io.open(dir .. "/r1", "wb")), assert(io.open(dir .. "/r2", "wb"))
    f1:write(record("http://c.example/1", body)); f1:close()
    f2:write(record("http://d.example/1", body)); f2:close()
    os.execute(("gzip -c %s/r1 > %s && gzip -c %s/r2 >> %s"):format(dir, gz, dir, gz))
    local p = pipeline.new{ outdir = dir .. "/o4", quiet = true }
    local sum = assert(p:run({ plain, gz }))
    assert.are.equal(4, sum.documents)
    assert.are.equal(3, sum.exact_duplicates)
    local cjson = require "cjson"
    local c = cjson.decode(io.lines(dir .. "/o4/clusters.jsonl")())
    assert.are.equal(4, c.size)
    assert.are.equal("http://a.example/1", c.members[1].url)
  end)

  it("reports a truncated WARC record with its offset and keeps the records before it", function()
    local f0 = assert(io.open(crawl_warc(), "rb"))
    local good = f0:read("*a")
    f0:close()
    local path = dir .. "/trunc.warc"
    local f = assert(io.open(path, "wb"))
    f:write(good, good:sub(1, 200))
    f:close()
    local msgs = {}
    local p = pipeline.new{ outdir = dir .. "/o5", quiet = true, log = function(m) msgs[#msgs + 1] = m end }
    local sum = assert(p:run({ path }))
    assert.are.equal(2, sum.documents)
    assert.are.equal(1, sum.skipped)
    assert.is_truthy(msgs[1]:find("trunc.warc", 1, true) and msgs[1]:find(tostring(#good), 1, true), msgs[1])
  end)
end)

describe("interrupted and resumed runs", function()
  local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
  local build = os.getenv("SHINGLE_BUILD") or ("build/" .. (rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")))
  local env = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='" .. build .. "/lib/?.so;;' "

  it("leaves no output that looks complete when killed in phase 1, and a re-run starts cleanly", function()
    local dir = tmpdir()
    local script = dir .. "/run.lua"
    local f = assert(io.open(script, "w"))
    -- batches of 10 documents: the writer has appended some when the source hangs
    f:write([[local p = require("shingle.pipeline").new{ outdir = arg[1], quiet = true, batch = 10 }
      local i = 0
      p:run({ function()
        i = i + 1
        if i == 40 then io.open(arg[2], "w"):close(); while true do end end
        return { url = "u" .. i, text = ("word%d "):format(i % 7):rep(50) }
      end })]])
    f:close()
    local marker = dir .. "/started"
    os.execute(env .. lua .. " " .. script .. " " .. dir .. "/out " .. marker .. " & pid=$!; while [ ! -e " .. marker ..
      " ]; do sleep 0.05; done; kill -9 $pid; wait $pid 2>/dev/null")
    assert.is_nil(io.open(dir .. "/out/docs.bin"))
    assert.is_nil(io.open(dir .. "/out"))  -- no output at all: the run was building it beside
    -- what was being written, in the unfinished run's directory, under a name no reader takes
    assert.is_truthy(io.open(dir .. "/.out.new/docs.bin.tmp"))
    assert.is_nil(io.open(dir .. "/.out.new/run.json"))
    local p = pipeline.new{ outdir = dir .. "/out", quiet = true, resume = true }
    local sum = assert(p:run({ "samples/docs" }))
    assert.are.equal(8, sum.documents)
    assert.is_nil(p.resumed)
    assert.is_nil(io.open(dir .. "/.out.new"))
    os.execute("rm -rf " .. dir)
  end)

  it("resumes after a finished phase 1 over the same inputs, and not after a changed input", function()
    local dir = tmpdir()
    os.execute("cp -r samples/docs " .. dir .. "/in")
    local p1 = pipeline.new{ outdir = dir .. "/out", quiet = true, resume = true }
    local a = assert(p1:run({ dir .. "/in" }))
    local p2 = pipeline.new{ outdir = dir .. "/out", quiet = true, resume = true, threshold = 0.9 }
    local b = assert(p2:run({ dir .. "/in" }))
    assert.is_true(p2.resumed)
    assert.are.equal(a.documents, b.documents)
    os.execute("sleep 1; echo more words here >> " .. dir .. "/in/weather.txt")
    local p3 = pipeline.new{ outdir = dir .. "/out", quiet = true, resume = true }
    assert(p3:run({ dir .. "/in" }))
    assert.is_nil(p3.resumed)
    os.execute("rm -rf " .. dir)
  end)
end)

describe("the shingle cluster command", function()
  local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
  it("clusters the samples and prints the summary and phase table", function()
    local out = os.tmpname()
    os.remove(out)
    local text, code = support.run(lua .. " bin/shingle cluster samples/docs -q -o " .. out)
    assert.are.equal(0, code, text)
    assert.is_truthy(text:find("clusters 2 with 6 documents", 1, true), text)
    assert.is_truthy(text:find("sketching", 1, true))
    assert.is_truthy(text:find("cluster formation", 1, true))
    local text2, code2 = support.run(lua .. " bin/shingle recluster " .. out .. " --threshold 0.95")
    assert.are.equal(0, code2, text2)
    os.execute("rm -rf " .. out)
  end)

  it("rejects a bad memory size naming the option", function()
    local text, code = support.run(lua .. " bin/shingle cluster samples/docs -o /tmp/x --memory lots")
    assert.are.equal(2, code)
    assert.is_truthy(text:find("--memory: 'lots' is not a size", 1, true), text)
  end)
end)

-- Phase 3 drops the "common" shingles, those shared by more than max_df
-- documents ("Syntactic Clustering of the Web", phase 3): a shingle in exactly
-- max_df documents still makes pairs, one in max_df + 1 does not. Shingles
-- are single words (w = 1) and every one is in the sketch (MOD_1), so the
-- documents share exactly the words planted.
describe("the common-shingle cutoff (max_df)", function()
  local dir, input
  setup(function()
    dir = tmpdir()
    local lines = {}
    local function doc(url, words) lines[#lines + 1] = require("cjson").encode({ url = url, text = words }) end
    for i = 1, 3 do doc("a" .. i, ("alpha a%dx a%dy"):format(i, i)) end -- alpha: 3 documents
    for i = 1, 4 do doc("b" .. i, ("beta b%dx b%dy"):format(i, i)) end  -- beta: 4 documents
    input = dir .. "/df.jsonl"
    local f = assert(io.open(input, "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
  end)
  teardown(function() rmdir(dir) end)

  local function clusters(out)
    local cjson, got = require "cjson", {}
    for line in io.lines(out .. "/clusters.jsonl") do
      local urls = {}
      for _, m in ipairs(cjson.decode(line).members) do urls[#urls + 1] = m.url end
      table.sort(urls)
      got[#got + 1] = table.concat(urls, " ")
    end
    table.sort(got)
    return got
  end

  -- max_df, the pairs phase 3 should form, the shingles it should drop, the clusters
  for _, case in ipairs({
    { 3, 3, 1, { "a1 a2 a3" } },               -- alpha (3 = max_df) kept, beta (4) dropped
    { 4, 9, 0, { "a1 a2 a3", "b1 b2 b3 b4" } }, -- both kept
    { 2, 0, 2, {} },                            -- both dropped
  }) do
    local max_df, npairs, dropped, want = case[1], case[2], case[3], case[4]
    it(("keeps a shingle of exactly max_df documents and drops one of max_df + 1 (max_df = %d)"):format(max_df), function()
      local out = dir .. "/df" .. max_df
      local _, sum = run(out, input, { w = 1, sketch = "mod", m = 1, floor = 0, verify = false, threshold = 0.1,
        max_df = max_df })
      assert.are.equal(npairs, sum.pairs_considered)
      assert.are.equal(dropped, sum.common_shingles_dropped)
      assert.are.same(want, clusters(out))
    end)
  end

  it("links a pair whose resemblance is exactly the threshold (resemblance >= t)", function()
    -- a1 and a2 share one word of five: resemblance 1/5, estimated exactly under MOD_1
    local out = dir .. "/at"
    local _, sum = run(out, input, { w = 1, sketch = "mod", m = 1, floor = 0, verify = false, threshold = 1 / 5 })
    assert.are.same({ "a1 a2 a3", "b1 b2 b3 b4" }, clusters(out))
    assert.are.equal(9, sum.pairs_linked)
    local _, sum2 = run(dir .. "/above", input, { w = 1, sketch = "mod", m = 1, floor = 0, verify = false, threshold = 0.21 })
    assert.are.equal(0, sum2.pairs_linked)
  end)
end)
