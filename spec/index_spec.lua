-- The persistent index: sweeps with planted moves, edits, births and deaths;
-- incremental clustering against a fresh one; readers during a write; a
-- writer killed mid-add; bad input.
local index = require "shingle.index"
local pipeline = require "shingle.pipeline"
local support = require "support"
local tmpdir, write_jsonl = support.tmpdir, support.write_jsonl
local cjson = require "cjson"

local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")



-- Two sweeps: the second keeps, edits, rewrites, moves, drops and adds pages.
local function sweeps(dir, rand)
  local function text(n) return table.concat(support.words(rand, n, 40000), " ") end
  local s1, s2, plan = {}, {}, { identical = {}, small = {}, large = {}, within = {}, between = {}, born = {}, died = {}, moves = {} }
  local function page(host, i) return ("http://%s.example/page%d.html"):format(host, i) end
  for i = 1, 40 do
    local t = text(600)
    local url = page("h1", i)
    s1[#s1 + 1] = { url = url, text = t }
    local kind = ({ "identical", "small", "large", "within", "between", "died", "identical", "small" })[i % 8 + 1]
    if kind == "identical" then s2[#s2 + 1] = { url = url, text = t }
    elseif kind == "small" then
      local w = {}
      for word in t:gmatch("%S+") do w[#w + 1] = (rand(100) == 1) and "edited" .. rand(1000) or word end
      s2[#s2 + 1] = { url = url, text = table.concat(w, " ") }
    elseif kind == "large" then s2[#s2 + 1] = { url = url, text = text(600) }
    elseif kind == "within" then s2[#s2 + 1] = { url = page("h1", 1000 + i), text = t }; plan.moves[url] = page("h1", 1000 + i)
    elseif kind == "between" then s2[#s2 + 1] = { url = page("h2", i), text = t }; plan.moves[url] = page("h2", i)
    end
    table.insert(plan[kind], url)
  end
  for i = 1, 6 do
    local url = page("h3", i)
    s2[#s2 + 1] = { url = url, text = text(500) }
    table.insert(plan.born, url)
  end
  write_jsonl(dir .. "/s1.jsonl", s1)
  write_jsonl(dir .. "/s2.jsonl", s2)
  return s1, s2, plan
end

describe("shingle.index", function()
  local dir, s1, s2, plan, ix
  setup(function()
    dir = tmpdir()
    s1, s2, plan = sweeps(dir, support.rng(5))
    ix = assert(index.open(dir .. "/idx"))
    assert(ix:add({ dir .. "/s1.jsonl" }, { sweep = "2026-11-01", threads = 2 }))
    assert(ix:add({ dir .. "/s2.jsonl" }, { sweep = "2026-11-08", threads = 2 }))
  end)
  teardown(function() ix:close(); os.execute("rm -rf " .. dir) end)

  it("counts exactly the planted changes between two sweeps", function()
    local r = assert(ix:changes("2026-11-01", "2026-11-08"))
    assert.are.equal(#plan.identical, r.identical)
    assert.are.equal(#plan.small, r.small_change)
    assert.are.equal(#plan.large, r.large_change)
    assert.are.equal(#plan.within, r.moved_within_server)
    assert.are.equal(#plan.between, r.moved_between_servers)
    assert.are.equal(#plan.born, r.born)
    assert.are.equal(#plan.died, r.died)
    for _, m in ipairs(r.moves) do
      assert.are.equal(plan.moves[m.from], m.to)
    end
  end)

  it("finds where the content of a moved page lives now (lost and found)", function()
    for _, from in ipairs(plan.within) do
      local found = assert(ix:lost(from))
      assert.are.equal(plan.moves[from], found[1].url)
      assert.are.equal("2026-11-08", found[1].sweep)
    end
  end)

  it("gives the cluster of a URL with the sweep of every member", function()
    local url = plan.small[1]
    local cl = assert(ix:cluster_of(url))
    assert.are.equal(2, #cl[1].members)
    assert.are.equal("2026-11-08", cl[1].members[1].sweep)
    assert.are.equal("2026-11-01", cl[1].members[2].sweep)
  end)

  it("ranks the original first for a never-indexed edited copy (on-the-fly resemblance)", function()
    local t = s1[3].text
    local copy = t:gsub("w(%d+) w", "x%1 w", 5)
    local hits = assert(ix:similar(copy, { threshold = 0.3 }))
    assert.is_true(#hits >= 1)
    assert.are.equal(s1[3].url, hits[1].url)
    assert.is_true(hits[1].resemblance > 0.6)
    local none = assert(ix:similar(table.concat(support.words(support.rng(77), 400, 40000), " ")))
    assert.are.equal(0, #none)
  end)

  it("clusters incrementally exactly as a fresh clustering of both sweeps", function()
    local p = pipeline.new{ outdir = dir .. "/fresh", quiet = true, max_df = 1000000, threads = 2 }
    assert(p:run({ dir .. "/s1.jsonl", dir .. "/s2.jsonl" }))
    local fresh = {}
    for line in io.lines(dir .. "/fresh/clusters.jsonl") do
      local ids = {}
      for _, m in ipairs(cjson.decode(line).members) do ids[#ids + 1] = math.floor(m.id) end
      table.sort(ids)
      fresh[#fresh + 1] = table.concat(ids, ",")
    end
    table.sort(fresh)
    local inc, seen = {}, {}
    for id = 1, ix:count() do
      local d = ix.ix:doc(id)
      if not seen[d.cluster] then
        seen[d.cluster] = true
        local ids = ix.ix:cluster_docs(d.cluster)
        if #ids >= 2 then table.sort(ids); inc[#inc + 1] = table.concat(ids, ",") end
      end
    end
    table.sort(inc)
    assert.are.same(fresh, inc)
    assert.is_true(#inc >= 10)
  end)

  it("refuses an add with other parameters, naming the one that differs, and changes nothing", function()
    local before = ix:count()
    local ok, err = ix:add({ dir .. "/s1.jsonl" }, { sweep = "x", w = 5 })
    assert.is_nil(ok)
    assert.is_truthy(err:find("w = 10", 1, true), err)
    assert.are.equal(before, ix:count())
    -- any shingler option, not only the sketch's size: another seed draws other polynomials
    local ok2, err2 = ix:add({ dir .. "/s1.jsonl" }, { sweep = "x", seed = 99 })
    assert.is_nil(ok2)
    assert.is_truthy(err2:find("seed = nil", 1, true), err2)
    assert.are.equal(before, ix:count())
  end)

  it("finds every document from its own sketch, with every value of the sketch shared", function()
    local missing = {}
    for id = 1, ix:count() do
      local _, sk = ix.ix:doc(id)
      local self_hit
      for _, h in ipairs(assert(ix.ix:similar(sk, { threshold = 0, top = ix:count() }))) do
        if h.id == id then self_hit = h end
      end
      if not (self_hit and self_hit.shared == #sk and self_hit.resemblance == 1) then
        missing[#missing + 1] = ("%d (%d values, %s shared)"):format(id, #sk, self_hit and self_hit.shared or "none")
      end
    end
    assert.are.same({}, missing)
    assert.is_true(ix:count() >= 80)
  end)

  it("finds every document of one shingle (one value, one posting) from its own sketch", function()
    -- a document shorter than w has one shingle and, under MOD_m with its
    -- floor, one value: a posting that an add left out would lose it
    local d = tmpdir()
    local rand, docs = support.rng(9), {}
    for i = 1, 60 do docs[i] = { url = "short" .. i, text = table.concat(support.words(rand, 3 + i % 6, 40000), " ") } end
    write_jsonl(d .. "/short.jsonl", docs)
    local small = assert(index.open(d .. "/idx"))
    assert(small:add({ d .. "/short.jsonl" }, { sweep = "s1", threads = 2, batch = 16 }))
    local missing = {}
    for id = 1, small:count() do
      local _, sk = small.ix:doc(id)
      local found = false
      for _, h in ipairs(assert(small.ix:similar(sk, { threshold = 0 }))) do found = found or h.id == id end
      if #sk ~= 1 or not found then missing[#missing + 1] = ("%d (%d values)"):format(id, #sk) end
    end
    small:close()
    os.execute("rm -rf " .. d)
    assert.are.same({}, missing)
  end)

  it("refuses a query without shingles with a clear error", function()
    local ok, err = ix:similar("   ")
    assert.is_nil(ok)
    assert.is_truthy(err:find("no shingles", 1, true), err)
  end)
end)

describe("shingle.index under concurrency and crashes", function()
  local dir
  setup(function()
    dir = tmpdir()
    local rand = support.rng(9)
    local docs = {}
    for i = 1, 3000 do docs[i] = { url = "http://big.example/" .. i, text = table.concat(support.words(rand, 300, 50000), " ") } end
    write_jsonl(dir .. "/big.jsonl", docs)
    write_jsonl(dir .. "/small.jsonl", { docs[1], docs[2] })
    local ix = assert(index.open(dir .. "/idx"))
    assert(ix:add({ dir .. "/small.jsonl" }, { sweep = "a", threads = 1 }))
    ix:close()
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  local env = "LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='" .. (os.getenv("SHINGLE_BUILD") or
    ("build/" .. (rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")))) .. "/lib/?.so;;' "

  it("lets readers query while a sweep is added, seeing it all or not at all", function()
    local reader = [[
      local index = require "shingle.index"
      local out = assert(io.open(arg[1], "w"))
      local t0 = os.time()
      while os.time() - t0 < 4 do
        local ix, err = index.open(arg[2], { readonly = true })
        if not ix then out:write("ERR ", err, "\n") break end
        local n = ix:count()
        local hits = ix:similar({ url = "http://big.example/1" })
        out:write(n, " ", hits and #hits or "ERR", "\n")
        ix:close()
      end
      out:close()
    ]]
    local script = dir .. "/reader.lua"
    local f = assert(io.open(script, "w")); f:write(reader); f:close()
    for r = 1, 3 do os.execute(env .. LUA .. " " .. script .. " " .. dir .. "/r" .. r .. " " .. dir .. "/idx &") end
    local ix = assert(index.open(dir .. "/idx"))
    assert(ix:add({ dir .. "/big.jsonl" }, { sweep = "b", threads = 2 }))
    local total = ix:count()
    ix:close()
    os.execute("sleep 4.5")
    for r = 1, 3 do
      local seen = {}
      for line in io.lines(dir .. "/r" .. r) do
        assert.is_falsy(line:find("ERR", 1, true), line)
        local n = tonumber(line:match("^(%d+)"))
        assert.is_true(n == 2 or n == total, "a reader saw " .. n .. " documents")
        seen[n] = true
      end
      assert.is_true(seen[2] or seen[total])
    end
  end)

  it("is left as it was when a writer is killed in the middle of an add, and the next add succeeds", function()
    local ix = assert(index.open(dir .. "/idx2"))
    assert(ix:add({ dir .. "/small.jsonl" }, { sweep = "a", threads = 1 }))
    ix:close()
    local writer = dir .. "/writer.lua"
    local f = assert(io.open(writer, "w"))
    -- the writer signals once its first batch is in the open transaction, then
    -- waits there to be killed
    f:write([[local ix = assert(require("shingle.index").open(arg[1]))
      assert(ix:add({ arg[2] }, { sweep = "c", threads = 1, batch = 100, progress = function(n)
        io.open(arg[3], "w"):close()
        while true do end
      end }))]])
    f:close()
    local started = dir .. "/started"
    os.execute(env .. LUA .. " " .. writer .. " " .. dir .. "/idx2 " .. dir .. "/big.jsonl " .. started ..
      " & pid=$!; while [ ! -e " .. started .. " ]; do sleep 0.05; done; kill -9 $pid; wait $pid 2>/dev/null")
    ix = assert(index.open(dir .. "/idx2"))
    assert.are.equal(2, ix:count())
    assert.are.same({ { name = "a", documents = 2 } }, ix:sweeps())
    assert(ix:add({ dir .. "/small.jsonl" }, { sweep = "d", threads = 1 }))
    assert.are.equal(4, ix:count())
    ix:close()
  end)
end)

-- Common sketch values ("Syntactic Clustering of the Web": shingles shared by
-- very many documents carry no information): a value shared by more than
-- max_df documents makes no candidates, one shared by exactly max_df does,
-- both when a sweep is added and in a query. Shingles are single words
-- (w = 1) and every one is in the sketch (MOD_1).
describe("the index's common-value cutoff (max_df)", function()
  local dir, ix
  setup(function()
    dir = tmpdir()
    local docs = {}
    for i = 1, 3 do docs[#docs + 1] = { url = "a" .. i, text = ("alpha a%dx a%dy"):format(i, i) } end -- 3 documents
    for i = 1, 4 do docs[#docs + 1] = { url = "b" .. i, text = ("beta b%dx b%dy"):format(i, i) } end  -- 4 documents
    write_jsonl(dir .. "/df.jsonl", docs)
    ix = assert(index.open(dir .. "/idx"))
    assert(ix:add({ dir .. "/df.jsonl" }, { sweep = "s1", threads = 1, w = 1, sketch = "mod", m = 1,
      policy = "resemblance", threshold = 0.1, max_df = 3 }))
  end)
  teardown(function() ix:close(); os.execute("rm -rf " .. dir) end)

  local function members(url)
    local cl = assert(ix:cluster_of(url))
    local urls = {}
    for _, m in ipairs(cl[1].members) do urls[#urls + 1] = m.url end
    table.sort(urls)
    return table.concat(urls, " ")
  end

  it("links documents through a value of exactly max_df documents, not through one of max_df + 1", function()
    assert.are.equal("a1 a2 a3", members("a1"))
    for i = 1, 4 do assert.are.equal("b" .. i, members("b" .. i)) end
  end)

  it("queries through a value of exactly max_df documents, not through one of max_df + 1", function()
    local function hits(text, max_df) return #assert(ix:similar(text, { threshold = 0.1, max_df = max_df })) end
    assert.are.equal(3, hits("alpha qx qy", 3))
    assert.are.equal(0, hits("beta qx qy", 3))
    assert.are.equal(4, hits("beta qx qy", 4))
    assert.are.equal(0, hits("alpha qx qy", 2))
  end)
end)

describe("shingle.index bad input", function()
  it("names a missing index", function()
    local ix, err = index.open("/nonexistent/idx", { readonly = true })
    assert.is_nil(ix)
    assert.is_truthy(err:find("/nonexistent/idx: no index there", 1, true), err)
  end)

  it("rejects a corrupt index file with a clear error", function()
    local d = tmpdir()
    local f = assert(io.open(d .. "/data.mdb", "wb"))
    f:write(string.rep("garbage!", 2048))
    f:close()
    local ix, err = index.open(d, { readonly = true })
    assert.is_nil(ix)
    assert.is_truthy(err:find(d, 1, true) and err:find("corrupt or not a shingle index", 1, true), err)
    os.execute("rm -rf " .. d)
  end)

  it("rejects a file where an index directory should be", function()
    local p = os.tmpname()
    local ix, err = index.open(p)
    assert.is_nil(ix)
    assert.is_truthy(err:find("is not an index directory", 1, true), err)
    os.remove(p)
  end)
end)
