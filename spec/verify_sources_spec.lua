-- Exact verification without keeping every full shingle set (issue 13,
-- target 2): phase 1 writes where each document came from (sources.bin: a
-- file's path, or a JSON Lines line's byte range) instead of its full set,
-- and phase 4 shingles again only the documents of the candidate pairs
-- (core/verifysets.h). Its decisions must be those of a run that kept every
-- set, byte for byte: links (with their exact scores) and clusters.
local support = require "support"
local cjson = require "cjson"
local core = require "shingle.core"
local pipeline = require "shingle.pipeline"

local shingle_cmd = support.shingle_cmd() .. " "

-- families of near-copies (edited at 1-7%) and unrelated documents
local function corpus(dir, gz)
  local rand = support.rng(2026)
  local path = dir .. "/corpus.jsonl"
  local f = assert(io.open(path, "w"))
  os.execute("mkdir -p " .. dir .. "/files")
  local n = 0
  local function add(words)
    n = n + 1
    local text = table.concat(words, " ")
    -- a BOM-less first line, escapes in the text, a blank line now and then
    f:write(cjson.encode({ url = "doc" .. n, text = text .. (n % 3 == 0 and ' "quoted" \\ tab\t' or "") }), "\n")
    if n % 5 == 0 then f:write("\n") end
    local name = dir .. "/files/doc" .. n .. (n % 4 == 0 and ".html" or ".txt")
    local body = n % 4 == 0 and ("<html><body><p>" .. text .. "</p></body></html>") or text
    support.write(name, body)
    if gz and n % 7 == 0 then os.execute("gzip -f " .. name) end
  end
  for _ = 1, 8 do
    local base = support.words(rand, 200 + rand(200), 20000)
    add(base)
    for _, rate in ipairs({ 0.01, 0.03, 0.05, 0.07 }) do
      local v = {}
      for i, w in ipairs(base) do v[i] = rand(10000) <= rate * 10000 and ("e" .. rand(100000)) or w end
      add(v)
    end
  end
  for _ = 1, 8 do add(support.words(rand, 300, 20000)) end
  f:close()
  return path
end

-- links.bin and clusters.bin as Lua values, and what the summary counts
local function decisions(dir)
  local links = assert(core.read_links(dir))
  local cl, docs = core.read_clusters(dir)
  assert(cl, docs)
  local f = assert(io.open(dir .. "/summary.json"))
  local s = cjson.decode(f:read("a"))
  f:close()
  return { links = links, clusters = cl, members = docs, pairs = s.pairs_considered, linked = s.pairs_linked,
    clusters_n = s.clusters, dups = { s.exact_duplicates, s.lexical_duplicates, s.shingle_duplicates } }
end

local function run(inputs, out, cfg, store_full)
  cfg = cfg or {}
  cfg.outdir, cfg.quiet = out, true
  local p = pipeline.new(cfg)
  p.store_full = store_full
  assert(p:run(inputs))
  return p
end

local function exists(p) return require("lfs").attributes(p, "mode") ~= nil end

describe("exact verification from the sources", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() support.rmdir(dir) end)

  it("decides JSON Lines and directories as a run that kept every full set, and keeps only the sets it cannot read again", function()
    local jsonl = corpus(dir, true)
    for _, input in ipairs({ jsonl, dir .. "/files" }) do
      for _, t in ipairs({ 0.5, 0.8 }) do
        local kept = run({ input }, dir .. "/kept", { threshold = t }, true)
        local again = run({ input }, dir .. "/again", { threshold = t })
        assert.are.same(decisions(dir .. "/kept"), decisions(dir .. "/again"))
        assert.is_true(kept.stats.clusters.candidates > 0)
        assert.are.equal(kept.stats.clusters.candidates, again.stats.clusters.candidates)
        -- the sets were made again (in memory), and nothing of them is left
        local vs = again.stats.verification_sets
        assert.is_true(vs.documents > 0 and vs.in_memory)
        assert.is_true(exists(dir .. "/again/sources.bin"))
        assert.is_false(exists(dir .. "/again/fullsets.bin") or exists(dir .. "/again/fullsets.idx"))
        -- every document read again: shingles.bin holds no value
        local size = require("lfs").attributes(dir .. "/again/shingles.bin", "size")
        assert.is_true(size < require("lfs").attributes(dir .. "/kept/shingles.bin", "size") / 20)
        support.rmdir(dir .. "/kept")
        support.rmdir(dir .. "/again")
      end
    end
  end)

  it("writes the sets to fullsets.bin when they do not fit the memory, with the same decisions", function()
    local jsonl = corpus(dir)
    run({ jsonl }, dir .. "/kept", {}, true)
    local p = run({ jsonl }, dir .. "/again", {})
    local o = p:decision_options()
    local text, html = p:shinglers()
    local sk = require("shingle.sketcher").new(text, html, { full = true, config = p.cfg })
    o.memory = 0
    local st = assert(core.verify_sets(p.dir, sk.pool, o))
    assert.is_false(st.in_memory)
    assert.is_nil(st.sets)
    assert.is_true(exists(p.dir .. "/fullsets.bin") and exists(p.dir .. "/fullsets.idx"))
    assert(core.decide(p.dir, o))
    local mine = assert(core.read_links(p.dir))
    assert.are.same(assert(core.read_links(dir .. "/kept")), mine)
    core.verify_sets_remove(p.dir)
    assert.is_false(exists(p.dir .. "/fullsets.bin"))
    -- without the sets made again, phase 4 says so
    local ok, err = core.decide(p.dir, o)
    assert.is_nil(ok)
    assert.matches("was not made again from its source", err)
  end)

  it("lets recluster verify again from another working directory, and refuses an input changed since phase 1", function()
    corpus(dir)
    local cwd = require("lfs").currentdir()
    -- relative paths, as a user types them
    local text, code = support.run(("cd %s && %s %s/bin/shingle cluster -q files -o out"):format(dir,
      shingle_cmd:match("^(%S+)"), cwd))
    assert.are.equal(0, code, text)
    local before = decisions(dir .. "/out")
    text, code = support.run(shingle_cmd .. "recluster -q " .. dir .. "/out")
    assert.are.equal(0, code, text)
    assert.are.same(before, decisions(dir .. "/out"))
    -- a lower threshold verifies more pairs: as a fresh run at it
    text, code = support.run(shingle_cmd .. "recluster -q -t 0.3 " .. dir .. "/out")
    assert.are.equal(0, code, text)
    run({ dir .. "/files" }, dir .. "/fresh", { threshold = 0.3 }, true)
    assert.are.same(decisions(dir .. "/fresh").links, decisions(dir .. "/out").links)
    -- an edited document is not verified against
    local f = assert(io.open(dir .. "/files/doc1.txt", "a"))
    f:write(" and more words at the end")
    f:close()
    text, code = support.run(shingle_cmd .. "recluster -q " .. dir .. "/out")
    assert.are.equal(1, code, text)
    assert.matches("document 1 %(.-doc1.txt%) changed since phase 1", text)
    -- the run stays as it was
    assert.are.same(decisions(dir .. "/fresh").links, decisions(dir .. "/out").links)
  end)

  it("refuses a JSON Lines line that is no longer a document, naming it", function()
    local jsonl = corpus(dir)
    local p = run({ jsonl }, dir .. "/out", {})
    -- the first document of a cluster: a candidate, read again
    local first = assert(core.read_clusters(dir .. "/out"))
    local _, members = core.read_clusters(dir .. "/out")
    local id = members[1]
    assert.is_truthy(first and id)
    local lines, k = {}, 0
    for line in io.lines(jsonl) do lines[#lines + 1] = line end
    for i, line in ipairs(lines) do
      if line ~= "" then
        k = k + 1
        if k == id then lines[i] = line:gsub('"text":"', '"text":"\1', 1) end
      end
    end
    support.write(jsonl, table.concat(lines, "\n") .. "\n")
    local q = assert(pipeline.load(dir .. "/out", { quiet = true }))
    local ok, err = q:rerun()
    assert.is_nil(ok)
    assert.matches(("document %d is no longer the line at byte %%d+ of .-corpus.jsonl %%(column %%d+: a control character"):format(id), err)
    assert.is_true(p.stats.verification_sets.documents > 0)
  end)

  it("keeps the full sets of documents it cannot read again (standard input, Lua sources)", function()
    local jsonl = corpus(dir)
    run({ jsonl }, dir .. "/kept", {}, true)
    local text, code = support.run(shingle_cmd .. "cluster -q - -o " .. dir .. "/stdin < " .. jsonl)
    assert.are.equal(0, code, text)
    local lfs = require "lfs"
    assert.are.equal(lfs.attributes(dir .. "/kept/shingles.bin", "size"), lfs.attributes(dir .. "/stdin/shingles.bin", "size"))
    assert.are.same(decisions(dir .. "/kept").links, decisions(dir .. "/stdin").links)
    -- a Lua function as input: every set kept in phase 1, a sources.bin that points at none
    local docs = {}
    for line in io.lines(jsonl) do if line ~= "" then docs[#docs + 1] = cjson.decode(line) end end
    local i = 0
    local p = run({ function() i = i + 1; return docs[i] end }, dir .. "/fn", {})
    assert.are.equal(0, p.stats.verification_sets and p.stats.verification_sets.documents or 0)
    assert.are.same(decisions(dir .. "/kept").links, decisions(dir .. "/fn").links)
  end)
end)
