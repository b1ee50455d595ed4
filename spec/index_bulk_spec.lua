-- A bulk add (one transaction, the batch's postings and candidates gathered
-- in one sorted walk, core/index.c post_batch) leaves an index identical in
-- content, table by table, to one built by many small adds of the same
-- documents in the same order (each its own transaction, searching one
-- document at a time against what is already there).
local index = require "shingle.index"
local support = require "support"

local function have_mdb_dump()
  local r = os.execute("command -v mdb_dump > /dev/null 2>&1")
  return r == true or r == 0 -- LuaJIT returns the status
end

-- families of near-duplicates (each member a few edits from the first),
-- byte-identical copies, lexically identical copies, and singletons; words
-- from a small vocabulary, so many documents share some sketch values
local function corpus(rand)
  local docs = {}
  local function text(n) return table.concat(support.words(rand, n, 3000), " ") end
  local function edit(t, rate)
    local w = {}
    for word in t:gmatch("%S+") do w[#w + 1] = (rand(rate) == 1) and "edit" .. rand(100000) or word end
    return table.concat(w, " ")
  end
  for f = 1, 12 do
    local base = text(300 + rand(300))
    for m = 1, 1 + rand(5) do
      docs[#docs + 1] = { url = ("http://f%d.example/%d"):format(f, m), text = m == 1 and base or edit(base, 6 + rand(30)) }
    end
    docs[#docs + 1] = { url = ("http://copy.example/%d"):format(f), text = base }
    docs[#docs + 1] = { url = ("http://lex.example/%d"):format(f), text = base:upper() }
  end
  for i = 1, 15 do docs[#docs + 1] = { url = ("http://single.example/%d"):format(i), text = text(50 + rand(400)) } end
  -- a fixed shuffle, so members of a family arrive apart
  for i = #docs, 2, -1 do
    local j = rand(i)
    docs[i], docs[j] = docs[j], docs[i]
  end
  return docs
end

local TABLES, dump = support.INDEX_TABLES, support.index_dump

describe("index bulk add", function()
  local dir, docs
  setup(function()
    dir = support.tmpdir()
    docs = corpus(support.rng(13))
  end)
  teardown(function() support.rmdir(dir) end)

  -- (with a common-shingle cutoff the two differ by design: a value's count
  -- is what the index holds when a document is added, and a bulk add holds
  -- the whole batch then)
  for _, max_df in ipairs({ 0 }) do
    it(("equals many small adds, table by table (max_df %d)"):format(max_df), function()
      if not have_mdb_dump() then error("mdb_dump (Debian's lmdb-utils, installed by scripts/setup.sh) is needed") end
      local bulk_path, small_path = dir .. "/bulk" .. max_df, dir .. "/small" .. max_df
      local opts = { sweep = "s1", max_df = max_df, threads = 2 }
      -- bulk: everything in one add, then a second sweep on top in one add
      local bulk = assert(index.open(bulk_path))
      local half = math.floor(#docs / 2)
      local first, second = {}, {}
      for i, d in ipairs(docs) do if i <= half then first[#first + 1] = d else second[#second + 1] = d end end
      local res1, st1 = assert(bulk:add_documents(first, opts))
      local res2, st2 = assert(bulk:add_documents(second, { sweep = "s2", threads = 2 }))
      bulk:close()
      -- the same, the second sweep's postings put in chunks of about 150 values (a few documents)
      -- instead of at its commit (core/index.c chunk_flush)
      local chunked_path = dir .. "/chunked" .. max_df
      local chunked = assert(index.open(chunked_path))
      assert(chunked:add_documents(first, opts))
      local _, st3 = assert(chunked:add_documents(second, { sweep = "s2", threads = 2, chunk = 150 }))
      chunked:close()
      assert.are.equal(st2.linked, st3.linked)
      assert.are.equal(st2.candidates, st3.candidates)
      -- small: one document per transaction, same order, same sweeps
      local small = assert(index.open(small_path))
      local linked, identical = 0, 0
      for i, d in ipairs(docs) do
        local res, st = assert(small:add_documents({ d }, i <= half and opts or { sweep = "s2", threads = 2 }))
        assert.is_number(res[1].id)
        linked, identical = linked + st.linked, identical + st.identical
      end
      small:close()
      -- the test means something: pairs were linked and copies found
      assert.is_true(st1.linked + st2.linked > 10)
      assert.are.equal(st1.linked + st2.linked, linked)
      assert.are.equal(st1.identical + st2.identical, identical)
      assert.is_true(identical >= 12)
      assert.are.equal(#first, #res1)
      assert.are.equal(#second, #res2)
      local a, b, c = dump(bulk_path), dump(small_path), dump(chunked_path)
      for _, t in ipairs(TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs") end
      for _, t in ipairs(TABLES) do assert.are.equal(b[t], c[t], "table " .. t .. " differs (chunks)") end
      -- and the clusters the index reports agree
      local ia, ib = assert(index.open(bulk_path, { readonly = true })), assert(index.open(small_path, { readonly = true }))
      for _, d in ipairs(docs) do
        local ha = assert(ia:similar(d.text, { html = false }))
        local hb = assert(ib:similar(d.text, { html = false }))
        assert.are.same(hb, ha)
        -- candidates sharing too few values are not fetched (query_min_shared):
        -- the same hits as a search that fetches every candidate (policy either)
        local all = assert(ia:similar(d.text, { html = false, top = 0, policy = "either" }))
        local want = {}
        for _, h in ipairs(all) do if h.resemblance >= 0.5 then want[#want + 1] = h end end
        assert.are.same(want, assert(ia:similar(d.text, { html = false, top = 0 })))
      end
      ia:close()
      ib:close()
    end)
  end

  it("into a new index (postings put at the commit, core/index.c defer_flush), from files in batches (each sketched "
    .. "while the one before is written), equals the same documents added batch by batch", function()
    if not have_mdb_dump() then error("mdb_dump (Debian's lmdb-utils, installed by scripts/setup.sh) is needed") end
    local file = dir .. "/docs.jsonl"
    local recs = {}
    for i, d in ipairs(docs) do recs[i] = { url = d.url, text = d.text } end
    support.write_jsonl(file, recs)
    -- deferred: everything in one add into a new index, read and sketched 7 documents at a time
    local deferred_path, batch_path = dir .. "/deferred", dir .. "/batched"
    local a = assert(index.open(deferred_path))
    local st = assert(a:add({ file }, { sweep = "s1", batch = 7, threads = 2 }))
    a:close()
    -- batch by batch: one document first, so the rest go into an index that has postings
    local b = assert(index.open(batch_path))
    local res1, st1 = assert(b:add_documents({ docs[1] }, { sweep = "s1", threads = 2 }))
    local rest = {}
    for i = 2, #docs do rest[#rest + 1] = docs[i] end
    local res2, st2 = assert(b:add_documents(rest, { sweep = "s1", threads = 2 }))
    b:close()
    assert.are.equal(1, #res1)
    assert.are.equal(#docs - 1, #res2)
    assert.are.equal(#docs, st.documents)
    assert.is_true(st.linked > 10 and st.identical >= 12)
    assert.are.equal(st1.linked + st2.linked, st.linked)
    assert.are.equal(st1.identical + st2.identical, st.identical)
    assert.are.equal(st1.candidates + st2.candidates, st.candidates)
    local x, y = dump(deferred_path), dump(batch_path)
    for _, t in ipairs(TABLES) do assert.are.equal(y[t], x[t], "table " .. t .. " differs") end
  end)

  it("sketches a batch in the background (pool:start, job:wait) as pool:sketch does", function()
    local core = require "shingle.core"
    local sh = core.new{ w = 4, sketch = "mod", m = 3, floor = 0 }
    local pool = core.pool(sh, sh, { threads = 2, full = true })
    local batch = {}
    for i = 1, 40 do batch[i] = { text = docs[i].text, url = docs[i].url } end
    batch[41] = { path = dir .. "/no such file" }
    local want = pool:sketch(batch)
    local job = pool:start(batch)
    local job2 = pool:start(batch) -- a second start waits for the first batch
    local got, got2 = job:wait(), job2:wait()
    assert.has_error(function() job:wait() end)
    for _, g in ipairs({ got, got2 }) do
      assert.are.equal(#want, #g)
      for i, w in ipairs(want) do
        if w.error then
          assert.are.equal(w.error, g[i].error)
        else
          assert.is_true(w.sketch == g[i].sketch and w.full == g[i].full, "document " .. i)
          assert.are.equal(w.raw, g[i].raw)
          assert.are.equal(w.canonical, g[i].canonical)
        end
      end
    end
    assert.is_truthy(want[41].error)
    -- a job dropped unwaited, or its pool closed under it, leaves nothing running
    local _ = pool:start(batch)
    pool:close()
    collectgarbage()
  end)

  it("answers a large query as a search of every value does (smallest values only, core/index.c query_lookups)", function()
    local rand = support.rng(29)
    local ix = assert(index.open(dir .. "/large"))
    local docs, queries = {}, {}
    local function text(n) return support.words(rand, n, 20000) end
    for i = 1, 24 do
      -- large documents (MOD_25 sketches of ~300 to ~1,000 values) and pieces of them
      local w = text(8000 + rand(16000))
      docs[#docs + 1] = { url = ("http://l.example/%d"):format(i), text = table.concat(w, " ") }
      for k, frac in ipairs({ 0.45, 0.55, 0.8 }) do
        docs[#docs + 1] = { url = ("http://l.example/%d/%d"):format(i, k), text = table.concat(w, " ", 1, math.floor(#w * frac)) }
      end
      local e = {}
      for j, word in ipairs(w) do e[j] = rand(60) == 1 and ("q" .. rand(1000)) or word end
      queries[#queries + 1] = table.concat(e, " ")
    end
    assert(ix:add_documents(docs, { sweep = "s1" }))
    local found = 0
    for _, q in ipairs(queries) do
      assert.is_true(#ix:shinglers():sketch(q) > 256)
      for _, policy in ipairs({ "resemblance", "both" }) do
        local hits = assert(ix:similar(q, { html = false, top = 0, policy = policy }))
        -- the reference: policy either looks up every value; keep what the policy passes
        local all = assert(ix:similar(q, { html = false, top = 0, policy = "either" }))
        local want = {}
        for _, h in ipairs(all) do
          if h.resemblance >= 0.5 and (policy == "resemblance" or math.max(h.containment, h.contained) >= 0.5) then
            want[#want + 1] = h
          end
        end
        assert.are.same(want, hits)
        found = found + #hits
      end
    end
    assert.is_true(found >= 2 * #queries, "the queries found their documents")
    ix:close()
  end)

  it("from `shingle cluster --index` (the run's sketches, not sketched again) equals `shingle index add`", function()
    if not have_mdb_dump() then error("mdb_dump (Debian's lmdb-utils, installed by scripts/setup.sh) is needed") end
    local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
    local input = dir .. "/docs"
    os.execute("mkdir -p '" .. input .. "'")
    -- files of the corpus (some with the same bytes, one HTML, one empty that is skipped)
    for i, d in ipairs(docs) do support.write(("%s/d%03d.txt"):format(input, i), d.text) end
    support.write(input .. "/page.html", "<html><body><p>" .. docs[1].text .. "</p></body></html>")
    support.write(input .. "/empty.txt", "")
    local a_ix, b_ix, out = dir .. "/cl_ix", dir .. "/add_ix", dir .. "/cl_out"
    local o1, c1 = support.run(("%s bin/shingle cluster -q '%s' -o '%s' --index '%s' --sweep s1"):format(LUA, input, out, a_ix))
    assert.are.equal(0, c1, o1)
    local o2, c2 = support.run(("%s bin/shingle index add '%s' '%s' --sweep s1"):format(LUA, b_ix, input))
    assert.are.equal(0, c2, o2)
    local n1, n2 = tonumber(o1:match("added (%d+) documents")), tonumber(o2:match("added (%d+) documents"))
    assert.is_true(n1 > #docs, o1)
    assert.are.equal(n2, n1)
    local a, b = dump(a_ix), dump(b_ix)
    for _, t in ipairs(TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs") end
    -- and a second sweep on top, both ways
    local o3, c3 = support.run(("%s bin/shingle cluster -q '%s' -o '%s' --index '%s' --sweep s2"):format(LUA, input,
      out .. "2", a_ix))
    assert.are.equal(0, c3, o3)
    local o4, c4 = support.run(("%s bin/shingle index add '%s' '%s' --sweep s2"):format(LUA, b_ix, input))
    assert.are.equal(0, c4, o4)
    a, b = dump(a_ix), dump(b_ix)
    for _, t in ipairs(TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs after a second sweep") end
  end)
end)
