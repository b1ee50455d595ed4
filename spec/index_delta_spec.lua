-- The postings and delta (core/index.c, "postings and delta"): an add into an
-- index that has postings puts its own in the delta table, and the commit
-- merges delta into the postings once it has grown past a quarter of them.
-- Whichever table a value's documents are in, the index answers the same:
-- the same logical postings, the same clusters, the same hits (with and
-- without the postings filter and cache, with a common-value cutoff), and
-- `shingle index check` passes. An index made before delta existed (no such
-- table) is read as it is and gains the table when opened for writing.
local index = require "shingle.index"
local support = require "support"

local function have_mdb_tools()
  local r = os.execute("command -v mdb_dump > /dev/null 2>&1 && command -v mdb_load > /dev/null 2>&1")
  return r == true or r == 0 -- LuaJIT returns the status
end

-- families of near-duplicates, copies and singletons, in a fixed shuffle
local function corpus(rand)
  local docs = {}
  local function text(n) return table.concat(support.words(rand, n, 2000), " ") end
  local function edit(t, rate)
    local w = {}
    for word in t:gmatch("%S+") do w[#w + 1] = (rand(rate) == 1) and "edit" .. rand(100000) or word end
    return table.concat(w, " ")
  end
  for f = 1, 10 do
    local base = text(200 + rand(300))
    for m = 1, 2 + rand(4) do
      docs[#docs + 1] = { url = ("http://f%d.example/%d"):format(f, m), text = m == 1 and base or edit(base, 5 + rand(25)) }
    end
    docs[#docs + 1] = { url = ("http://copy.example/%d"):format(f), text = base }
  end
  for i = 1, 12 do docs[#docs + 1] = { url = ("http://single.example/%d"):format(i), text = text(40 + rand(300)) } end
  for i = #docs, 2, -1 do
    local j = rand(i)
    docs[i], docs[j] = docs[j], docs[i]
  end
  return docs
end

-- every document's hits, as one string each
local function answers(ix, docs, opts)
  local out = {}
  for i, d in ipairs(docs) do
    local s = {}
    for _, h in ipairs(assert(ix:similar(d.text, opts))) do
      s[#s + 1] = ("%d:%d:%.6f:%.6f:%d"):format(h.id, h.cluster, h.resemblance, h.containment, h.shared)
    end
    out[i] = table.concat(s, " ")
  end
  return out
end

-- the documents added in pieces of 1, 2, 3, ... documents, each its own add
local function build(path, docs, opts)
  local ix = assert(index.open(path))
  local i, k, merged = 1, 1, 0
  while i <= #docs do
    local piece = {}
    for j = i, math.min(#docs, i + k - 1) do piece[#piece + 1] = docs[j] end
    local o = { sweep = "s" .. (k % 3), threads = 2 }
    for key, v in pairs(opts) do o[key] = v end
    local _, st = assert(ix:add_documents(piece, o))
    merged = merged + st.postings_merged
    i, k = i + #piece, k + 1
  end
  ix:close()
  return merged
end

local wait_ready = support.wait_filter

describe("index postings and delta", function()
  local dir, docs, shingle_cmd
  setup(function()
    dir = support.tmpdir()
    docs = corpus(support.rng(29))
    shingle_cmd = support.shingle_cmd() .. " "
  end)
  teardown(function() support.rmdir(dir) end)

  for _, max_df in ipairs { 0, 3 } do
    it(("answer the same whichever table holds the postings (max_df %d)"):format(max_df), function()
      if not have_mdb_tools() then error("mdb_dump and mdb_load (Debian's lmdb-utils, installed by scripts/setup.sh) are needed") end
      local never, always, default = dir .. "/never" .. max_df, dir .. "/always" .. max_df, dir .. "/default" .. max_df
      local ahead = dir .. "/ahead" .. max_df
      local first = { { url = "http://first.example/", text = docs[1].text } }
      local rest = {}
      for i = 2, #docs do rest[#rest + 1] = docs[i] end
      -- the first add makes the postings (max_df 0: appended at the commit; with a
      -- cutoff, through delta, which its commit merges); then pieces
      for _, p in ipairs { never, always, default, ahead } do
        local ix = assert(index.open(p))
        assert(ix:add_documents(first, { sweep = "s0", merge = "always", max_df = max_df }))
        ix:close()
      end
      -- max_df 0: each add's postings and fingerprints held back to its commit
      -- (core/index.c chunk_flush, fp_flush into the delta tables)
      local held = max_df == 0 and 100000 or nil
      assert.are.equal(0, build(never, rest, { merge = "never", chunk = held }))
      local merged = build(always, rest, { merge = "always" })
      -- the default, the postings searched ahead on a thread for every batch (core/index.c prelook)
      build(default, rest, { prelook = true })
      -- every batch into delta, its postings searched ahead
      assert.are.equal(0, build(ahead, rest, { merge = "never", prelook = true, chunk = held }))
      -- the test means something: the layouts differ
      assert.is_true(support.index_entries(never, "delta") > 1000)
      for _, t in ipairs { "delta_urls", "delta_raw", "delta_canon" } do
        if held then assert.is_true(support.index_entries(never, t) >= #rest, t) end
        assert.are.equal(0, support.index_entries(always, t), t)
      end
      assert.are.equal(0, support.index_entries(always, "delta"))
      assert.is_true(merged > 1000)
      local a, n, d = support.index_dump(always), support.index_dump(never), support.index_dump(default)
      local h = support.index_dump(ahead)
      for _, t in ipairs(support.INDEX_TABLES) do
        assert.are.equal(a[t], h[t], "table " .. t .. " differs (delta never merged, the postings searched ahead)")
        assert.are.equal(a[t], n[t], "table " .. t .. " differs (delta never merged)")
        assert.are.equal(a[t], d[t], "table " .. t .. " differs (the default merges, the postings searched ahead)")
      end
      -- the same hits, several policies, the cutoff in the query too
      local ia, inn = assert(index.open(always, { readonly = true })), assert(index.open(never, { readonly = true }))
      local opts = { { threshold = 0.3, top = 0 }, { threshold = 0.2, policy = "containment", top = 0 },
        { threshold = 0.1, max_df = 2, top = 0 } }
      local want = {}
      for i, o in ipairs(opts) do
        want[i] = answers(ia, docs, o)
        assert.are.same(want[i], answers(inn, docs, o))
      end
      local found = 0
      for _, s in ipairs(want[1]) do if s:find(" ") then found = found + 1 end end
      assert.is_true(found > 20, "few documents have hits beside themselves")
      -- and with the filter and cache (built from both tables)
      assert.is_true(inn:filter_start{ cache = 2 ^ 28 })
      local f = wait_ready(inn)
      assert.is_table(f.cache)
      for i, o in ipairs(opts) do assert.are.same(want[i], answers(inn, docs, o)) end
      assert.is_true(inn:filter().cache.found > 0)
      -- and with the filter alone (its filter of delta's values skips the
      -- values delta does not have)
      local fo = assert(index.open(never, { readonly = true }))
      assert.is_true(fo:filter_start())
      wait_ready(fo)
      for i, o in ipairs(opts) do assert.are.same(want[i], answers(fo, docs, o)) end
      fo:close()
      ia:close()
      inn:close()
      -- the index check reads delta as it reads the postings
      local out, code = support.run(shingle_cmd .. "index check " .. never)
      assert.are.equal(0, code, out)
      -- merged on demand (`shingle index merge`): the delta tables empty, the content and hits the same
      local ro = assert(index.open(never, { readonly = true }))
      local r, merr = ro:merge()
      assert.is_nil(r)
      assert.is_truthy(merr:find("read-only", 1, true), merr)
      ro:close()
      local before = support.index_entries(never, "delta")
      out, code = support.run(shingle_cmd .. "index merge " .. never)
      assert.are.equal(0, code, out)
      assert.is_truthy(out:find(("merged %d postings"):format(before), 1, true), out)
      for _, t in ipairs { "delta", "delta_urls", "delta_raw", "delta_canon" } do
        assert.are.equal(0, support.index_entries(never, t), t)
      end
      n = support.index_dump(never)
      for _, t in ipairs(support.INDEX_TABLES) do assert.are.equal(a[t], n[t], "table " .. t .. " differs (merged)") end
      inn = assert(index.open(never, { readonly = true }))
      for i, o in ipairs(opts) do assert.are.same(want[i], answers(inn, docs, o)) end
      inn:close()
      out, code = support.run(shingle_cmd .. "index merge " .. never)
      assert.are.equal(0, code, out)
      assert.is_truthy(out:find("merged 0 postings and 0 fingerprint entries", 1, true), out)
      out, code = support.run(shingle_cmd .. "index merge " .. dir .. "/nothing-here")
      assert.are.equal(1, code, out)
      assert.is_truthy(out:find("nothing-here: no index there", 1, true), out)
    end)
  end

  it("a snapshot older than the filter of delta's values searches delta for every value", function()
    -- a handle pinned to a snapshot whose delta holds documents; another
    -- process then merges delta into the postings, and the filter (and its
    -- filter of delta's values, now empty) is built after that: the pinned
    -- snapshot must still find the documents in its delta
    local p = dir .. "/pinned"
    local ix = assert(index.open(p))
    assert(ix:add_documents({ docs[1], docs[2], docs[3] }, { sweep = "s" }))
    local rest = {}
    for i = 4, #docs do rest[#rest + 1] = docs[i] end
    assert(ix:add_documents(rest, { sweep = "s", merge = "never" }))
    ix:close()
    assert.is_true(support.index_entries(p, "delta") > 1000)
    local ro = assert(index.open(p, { readonly = true }))
    local want = answers(ro, docs, { threshold = 0.3, top = 0 })
    ro:read(function()
      local out, code = support.run(shingle_cmd .. "index merge " .. p)
      assert.are.equal(0, code, out)
      assert.are.equal(0, support.index_entries(p, "delta"))
      assert.is_true(ro:filter_start())
      wait_ready(ro)
      assert.are.same(want, answers(ro, docs, { threshold = 0.3, top = 0 }))
    end)
    -- and after the pin, the newer snapshot uses it and answers the same
    assert.are.same(want, answers(ro, docs, { threshold = 0.3, top = 0 }))
    ro:close()
  end)

  it("keeps delta at most a quarter of the postings: merged when an add would grow it past that", function()
    local p = dir .. "/policy"
    local ix = assert(index.open(p))
    local rand = support.rng(3)
    local function doc(i) return { url = "http://p.example/" .. i, text = table.concat(support.words(rand, 300, 50000), " ") } end
    local base = {}
    for i = 1, 40 do base[i] = doc(i) end
    assert(ix:add_documents(base, { sweep = "s" }))
    assert.are.equal(0, support.index_entries(p, "delta"))
    local merges, grew = 0, 0
    for i = 41, 70 do
      local delta_before = support.index_entries(p, "delta")
      local _, st = assert(ix:add_documents({ doc(i) }, { sweep = "s" }))
      local posted, delta = support.index_entries(p, "postings"), support.index_entries(p, "delta")
      assert.is_true(delta * 4 <= posted, ("after document %d: delta %d, postings %d"):format(i, delta, posted))
      if st.postings_merged > 0 then
        merges = merges + 1
        assert.are.equal(delta_before, st.postings_merged)
        assert.are.equal(0, delta)
      else
        assert.is_true(delta > delta_before)
        grew = grew + 1
      end
    end
    assert.is_true(merges >= 1 and grew >= 5, ("merges %d, adds into delta %d"):format(merges, grew))
    -- an add of more than a quarter of the postings goes into them directly
    local many = {}
    for i = 71, 90 do many[#many + 1] = doc(i) end
    local before = support.index_entries(p, "postings") + support.index_entries(p, "delta")
    assert(ix:add_documents(many, { sweep = "s" }))
    assert.are.equal(0, support.index_entries(p, "delta"))
    assert.is_true(support.index_entries(p, "postings") > before)
    ix:close()
  end)

  it("reads an index made before delta existed, and adds to it", function()
    if not have_mdb_tools() then error("mdb_dump and mdb_load (Debian's lmdb-utils, installed by scripts/setup.sh) are needed") end
    local half = math.floor(#docs / 2)
    local first, second = {}, {}
    for i, d in ipairs(docs) do if i <= half then first[#first + 1] = d else second[#second + 1] = d end end
    local new = dir .. "/new"
    local ix = assert(index.open(new))
    assert(ix:add_documents(first, { sweep = "s1" }))
    ix:close()
    -- the same index without the delta tables, as an older shingle made it
    local function older(path)
      assert(os.execute("mkdir -p " .. path))
      for _, t in ipairs { "meta", "docs", "postings", "urls", "raw", "canon", "cluster", "members", "sweeps", "sweepdocs" } do
        assert(os.execute(("mdb_dump -s %s '%s' | mdb_load -s %s '%s' 2>/dev/null"):format(t, new, t, path)))
      end
    end
    local old, old2 = dir .. "/old", dir .. "/old2"
    older(old)
    older(old2)
    -- a handle opened read-only before another process (a newer writer) gives
    -- the index its delta tables says so instead of missing what is in them
    local stale = assert(index.open(old2, { readonly = true }))
    assert.are.equal(1, #assert(stale:similar(first[1].text, { html = false })))
    support.write_jsonl(dir .. "/one.jsonl", { { url = "http://one.example/", text = first[1].text } })
    local aout, acode = support.run(shingle_cmd .. "index add -q " .. old2 .. " " .. dir .. "/one.jsonl --sweep later")
    assert.are.equal(0, acode, aout)
    assert.is_true(support.index_entries(old2, "delta") > 0)
    local none, serr = stale:similar(first[1].text, { html = false })
    assert.is_nil(none)
    assert.is_truthy(serr:find("open the index again", 1, true), serr)
    local _, uerr = stale.ix:url_docs("http://one.example/")
    assert.is_truthy(tostring(uerr):find("open the index again", 1, true), tostring(uerr))
    stale:close()
    stale = assert(index.open(old2, { readonly = true }))
    assert.are.equal(2, #assert(stale:similar(first[1].text, { html = false })))
    stale:close()
    assert.are.equal(0, support.index_entries(old, "delta"))
    local out = io.popen(("mdb_stat -a '%s' 2>&1"):format(old)):read("a")
    assert.is_nil(out:find("Status of delta", 1, true), "the copy has a delta table")
    -- read-only: opens, answers as the new one, checks clean
    local io_, in_ = assert(index.open(old, { readonly = true })), assert(index.open(new, { readonly = true }))
    assert.are.same(answers(in_, docs, { threshold = 0.3 }), answers(io_, docs, { threshold = 0.3 }))
    io_:close()
    in_:close()
    local cout, code = support.run(shingle_cmd .. "index check " .. old)
    assert.are.equal(0, code, cout)
    -- writable: gains the tables; a second sweep, held back to its commit,
    -- goes into them (postings and fingerprints) and leaves both equal
    for _, p in ipairs { old, new } do
      local w = assert(index.open(p))
      assert(w:add_documents(second, { sweep = "s2", merge = "never", chunk = 100000 }))
      w:close()
    end
    for _, t in ipairs { "delta", "delta_urls", "delta_raw", "delta_canon" } do
      assert.is_true(support.index_entries(old, t) > 0, t)
    end
    local a, b = support.index_dump(old), support.index_dump(new)
    for _, t in ipairs(support.INDEX_TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs") end
    -- copies of earlier documents (in the tables and in the delta tables),
    -- and a URL already in sweep s2 with the same content: found the same
    -- way as in an index with everything merged
    local merged = dir .. "/merged"
    local m = assert(index.open(merged))
    assert(m:add_documents(first, { sweep = "s1" }))
    assert(m:add_documents(second, { sweep = "s2", merge = "always" }))
    m:close()
    local copies = { { url = second[1].url, text = second[1].text } }
    for i = 1, 6 do
      copies[#copies + 1] = { url = "http://copy3.example/a" .. i, text = first[i].text }
      copies[#copies + 1] = { url = "http://copy3.example/b" .. i, text = second[i].text }
      copies[#copies + 1] = { url = "http://copy3.example/c" .. i, text = second[i].text:upper() }
    end
    local got = {}
    for _, p in ipairs { old, merged } do
      local w = assert(index.open(p))
      local _, st = assert(w:add_documents(copies, { sweep = "s2", merge = "never" }))
      w:close()
      got[#got + 1] = st
    end
    assert.are.equal(1, got[1].already)
    assert.are.equal(18, got[1].identical)
    assert.are.same(got[2], got[1])
    a, b = support.index_dump(old), support.index_dump(merged)
    for _, t in ipairs(support.INDEX_TABLES) do assert.are.equal(b[t], a[t], "table " .. t .. " differs (copies)") end
  end)
end)
