-- The postings filter (core/ixfilter.c, Index:filter_start): queries give
-- the same hits with it as without; it never leaves out a value the index
-- has (a document's own values, all looked up, are never skipped), it does
-- leave out those of new text, and it follows documents another process adds
-- after it was built (their values are not in the postings it was built
-- from: without the catch-up, a query for them would find nothing).
-- The postings cache (core/ixcache.c, Index:filter_start{ cache = bytes })
-- likewise: the same hits with it, documents added after it was built found
-- beside it (alone, and sharing values with documents it holds, with and
-- without a common-value cutoff), a snapshot older than it not using it, and
-- no cache, with a note, when it does not fit the bytes allowed.
local index = require "shingle.index"
local support = require "support"

local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")

local function text(rand, n) return table.concat(support.words(rand, n, 20000), " ") end

local function add_elsewhere(db, docs)
  local f = os.tmpname()
  local h = assert(io.open(f, "w"))
  for _, d in ipairs(docs) do h:write(require("cjson").encode(d), "\n") end
  h:close()
  local out, code = support.run(("env -u LD_PRELOAD %s bin/shingle index add %s %s --format jsonl --sweep later -q"):format(LUA, db, f))
  os.remove(f)
  assert(code == 0, out)
end

local function answers(ix, queries, opts)
  local out = {}
  for i, q in ipairs(queries) do
    local hits = assert(ix:similar(q, opts))
    local s = {}
    for _, h in ipairs(hits) do s[#s + 1] = ("%d:%.6f:%.6f:%.6f:%d"):format(h.id, h.resemblance, h.containment, h.contained, h.shared) end
    out[i] = table.concat(s, " ")
  end
  return out
end

local wait_ready = support.wait_filter

describe("the postings filter", function()
  local dir, db, base, fresh, rand
  setup(function()
    dir = support.tmpdir()
    db = dir .. "/idx"
    rand = support.rng(5)
    base, fresh = {}, {}
    for i = 1, 120 do base[i] = { url = "http://f.example/" .. i, text = text(rand, 300) } end
    for i = 1, 30 do -- near-duplicates: a few words changed
      local t = base[i].text:gsub("(%a+) (%a+)", "%2 %1", 5)
      base[#base + 1] = { url = "http://f.example/near" .. i, text = t }
    end
    base[#base + 1] = { url = "http://f.example/copy", text = base[7].text }
    local ix = assert(index.open(db))
    assert(ix:add_documents(base, { sweep = "s1" }))
    ix:close()
    for i = 1, 40 do fresh[i] = text(rand, 300) end
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("gives the same hits as the lookups without it, and leaves out the values of new text", function()
    local ix = assert(index.open(db, { readonly = true }))
    local queries = {}
    for i, d in ipairs(base) do queries[i] = d.text end
    for _, t in ipairs(fresh) do queries[#queries + 1] = t end
    local plain = answers(ix, queries, { threshold = 0.3 })
    local plain_c = answers(ix, queries, { threshold = 0.2, policy = "containment" })
    assert.is_false(ix:filter().started)
    assert.is_true(ix:filter_start())
    assert.is_true(ix:filter_start()) -- a second call does nothing
    local f = wait_ready(ix)
    assert.is_true(f.started)
    assert.are.equal(ix:count(), f.covers) -- every document
    assert.is_true(f.bytes >= 65536 and f.capacity > 0)
    assert.are.same(plain, answers(ix, queries, { threshold = 0.3 }))
    assert.are.same(plain_c, answers(ix, queries, { threshold = 0.2, policy = "containment" }))
    -- a document's own text: containment looks up every value, all in the index
    local before = ix:filter()
    for _, d in ipairs(base) do assert(ix:similar(d.text, { threshold = 0.2, policy = "containment" })) end
    local after = ix:filter()
    assert.is_true(after.tested > before.tested)
    assert.are.equal(before.skipped, after.skipped)
    -- new text: (nearly) every value left out
    for _, t in ipairs(fresh) do assert.are.same({}, assert(ix:similar(t, { threshold = 0.2, policy = "containment" }))) end
    local last = ix:filter()
    local tested, skipped = last.tested - after.tested, last.skipped - after.skipped
    assert.is_true(tested > 0 and skipped >= 0.95 * tested, ("%d of %d left out"):format(skipped, tested))
    ix:close()
  end)

  it("follows the documents another process adds after it is built", function()
    local ix = assert(index.open(db, { readonly = true }))
    assert.is_true(ix:filter_start())
    local f = wait_ready(ix)
    local later = {}
    for i = 1, 5 do later[i] = { url = "http://f.example/later" .. i, text = text(rand, 300) } end
    -- before they are added, nothing is like them
    for _, d in ipairs(later) do assert.are.same({}, assert(ix:similar(d.text))) end
    add_elsewhere(db, later)
    for _, d in ipairs(later) do
      local hits = assert(ix:similar(d.text))
      assert.are.equal(1, #hits, d.url)
      assert.are.equal(d.url, hits[1].url)
      assert.are.equal(1, hits[1].resemblance)
    end
    assert.are.equal(f.covers + #later, ix:filter().covers)
    -- and one snapshot at a time: inside a read pinned before another add,
    -- the filter is only brought up to that snapshot
    local more = { { url = "http://f.example/more", text = text(rand, 300) } }
    ix:read(function()
      local covers = ix:filter().covers
      add_elsewhere(db, more)
      assert.are.same({}, assert(ix:similar(more[1].text)))
      assert.are.equal(covers, ix:filter().covers)
    end)
    assert.are.equal(1, #assert(ix:similar(more[1].text)))
    ix:close()
  end)

  it("with the postings cache, gives the same hits as the lookups without either", function()
    local ix = assert(index.open(db, { readonly = true }))
    local queries = {}
    for i, d in ipairs(base) do queries[i] = d.text end
    for _, t in ipairs(fresh) do queries[#queries + 1] = t end
    local opts = { { threshold = 0.3 }, { threshold = 0.2, policy = "containment" }, { threshold = 0.1, max_df = 1 },
      { threshold = 0.5, policy = "both" } }
    local plain = {}
    for i, o in ipairs(opts) do plain[i] = answers(ix, queries, o) end
    assert.is_true(ix:filter_start{ cache = 2 ^ 30 })
    local f = wait_ready(ix)
    assert.is_table(f.cache)
    assert.is_nil(f.cache.note)
    assert.are.equal(ix:count(), f.cache.covers)
    assert.is_true(f.cache.keys > 0 and f.cache.bytes > 12 * f.cache.keys)
    for i, o in ipairs(opts) do assert.are.same(plain[i], answers(ix, queries, o)) end
    local g = ix:filter()
    assert.is_true(g.cache.found > 0) -- the cache answered
    assert.are.equal(0, g.cache.looked_up) -- and nothing was added since it was built
    ix:close()
  end)

  it("with the postings cache, finds the documents added after it was built beside it", function()
    local d2 = dir .. "/idx2"
    os.execute(("cp -r %s %s"):format(db, d2))
    local ix = assert(index.open(d2, { readonly = true }))
    assert.is_true(ix:filter_start{ cache = 2 ^ 30 })
    local f = wait_ready(ix)
    -- new documents: new text, and copies and near-copies of documents the
    -- cache holds (values in both the cache and the later postings)
    local later = {}
    for i = 1, 4 do later[#later + 1] = { url = "http://f.example/new" .. i, text = text(rand, 300) } end
    for i = 1, 6 do later[#later + 1] = { url = "http://f.example/again" .. i, text = base[i].text } end
    for i = 7, 10 do
      later[#later + 1] = { url = "http://f.example/edit" .. i, text = base[i].text:gsub("(%a+) (%a+)", "%2 %1", 3) }
    end
    add_elsewhere(d2, later)
    local queries = {}
    for i, d in ipairs(later) do queries[i] = d.text end
    for i = 1, 12 do queries[#queries + 1] = base[i].text end
    local opts = { { threshold = 0.3 }, { threshold = 0.2, policy = "containment" }, { threshold = 0.1, max_df = 1 },
      { threshold = 0.1, max_df = 2 } }
    local with = {}
    for i, o in ipairs(opts) do with[i] = answers(ix, queries, o) end
    local g = ix:filter()
    assert.are.equal(f.cache.covers, g.cache.covers) -- the cache is as it was built
    assert.are.equal(f.covers + #later, g.covers)    -- the filter follows
    assert.is_true(g.cache.looked_up > 0)            -- the later documents' values were searched for
    ix:close()
    local plain_ix = assert(index.open(d2, { readonly = true }))
    for i, o in ipairs(opts) do assert.are.same(answers(plain_ix, queries, o), with[i]) end
    -- a copy added later is found with its original
    local hits = assert(plain_ix:similar(base[1].text, { threshold = 0.9 }))
    assert.is_true(#hits >= 2)
    plain_ix:close()
    os.execute("rm -rf " .. d2)
  end)

  it("is not used by a snapshot older than the cache", function()
    local d3 = dir .. "/idx3"
    os.execute(("cp -r %s %s"):format(db, d3))
    local ix = assert(index.open(d3, { readonly = true }))
    local more = { { url = "http://f.example/older", text = text(rand, 300) } }
    ix:read(function()
      add_elsewhere(d3, more)
      -- built from a snapshot that has the added document, after this one
      assert.is_true(ix:filter_start{ cache = 2 ^ 30 })
      local f = wait_ready(ix)
      assert.are.equal(ix:count() + 1, f.cache.covers)
      assert.are.same({}, assert(ix:similar(more[1].text)))
    end)
    local hits = assert(ix:similar(more[1].text))
    assert.are.equal(1, #hits)
    assert.are.equal(more[1].url, hits[1].url)
    ix:close()
    os.execute("rm -rf " .. d3)
  end)

  it("keeps no cache, and says why, when it does not fit the bytes allowed", function()
    local ix = assert(index.open(db, { readonly = true }))
    local q = base[3].text
    local plain = answers(ix, { q }, { threshold = 0.3 })
    assert.is_true(ix:filter_start{ cache = 1000 })
    local f = wait_ready(ix)
    assert.are.equal(0, f.cache.keys)
    assert.matches("more than the 0 MB allowed", f.cache.note, 1, true)
    assert.are.same(plain, answers(ix, { q }, { threshold = 0.3 }))
    assert.has_error(function() ix:filter_start{ cache = -1 } end)
    ix:close()
  end)

  it("can be taken from one handle and used by others, with the same hits", function()
    local d4 = dir .. "/idx4"
    os.execute(("cp -r %s %s"):format(db, d4))
    local queries = {}
    for i = 1, 20 do queries[i] = base[i].text end
    for i = 1, 5 do queries[#queries + 1] = fresh[i] end
    local builder = assert(index.open(d4, { readonly = true }))
    local plain = answers(builder, queries, { threshold = 0.3 })
    -- nothing to take before a filter is started
    local none, nerr = builder:filter_take()
    assert.is_nil(none)
    assert.matches("no postings filter", nerr, 1, true)
    assert.is_true(builder:filter_start{ cache = 2 ^ 30 })
    local aids = assert(builder:filter_take())
    assert.is_nil(builder:filter_take()) -- taken: its own no more
    assert.are.same(plain, answers(builder, queries, { threshold = 0.3 })) -- and it goes without
    builder:close()
    -- later documents, added before the users open the index
    local later = { { url = "http://f.example/taken1", text = text(rand, 300) }, { url = "http://f.example/taken2", text = base[2].text } }
    add_elsewhere(d4, later)
    queries[#queries + 1] = later[1].text
    local users = {}
    for i = 1, 2 do
      users[i] = assert(index.open(d4, { readonly = true }))
      assert.is_true(users[i]:filter_use(aids))
      local f = users[i]:filter()
      assert.is_true(f.ready and f.cache.shared)
    end
    aids = nil
    collectgarbage() -- the users keep it alive
    local reference = assert(index.open(d4, { readonly = true }))
    local want = answers(reference, queries, { threshold = 0.3 })
    reference:close()
    for i = 1, 2 do
      assert.are.same(want, answers(users[i], queries, { threshold = 0.3 }))
      assert.is_true(users[i]:filter().cache.found > 0)
      assert.is_true(users[i]:filter().cache.looked_up > 0) -- the later documents' values
    end
    -- a handle with a filter of its own, and another index, refuse them
    local again = assert(users[1].ix:filter_take() == nil)
    local own = assert(index.open(d4, { readonly = true }))
    assert.is_true(own:filter_start())
    wait_ready(own)
    local b2 = assert(index.open(d4, { readonly = true }))
    assert.is_true(b2:filter_start{ cache = 2 ^ 30 })
    local aids2 = assert(b2:filter_take())
    b2:close()
    local ok, err = own:filter_use(aids2)
    assert.is_nil(ok)
    assert.matches("has a postings filter already", err, 1, true)
    own:close()
    local other = assert(index.open(db, { readonly = true }))
    ok, err = other:filter_use(aids2)
    assert.is_nil(ok)
    assert.matches("built for another index", err, 1, true)
    other:close()
    for i = 1, 2 do users[i]:close() end
    assert.is_true(again)
    os.execute("rm -rf " .. d4)
  end)

  it("is built in its own thread, and closing the index while it builds stops it", function()
    for i = 1, 6 do
      local ix = assert(index.open(db, { readonly = true }))
      assert.is_true(ix:filter_start(i % 2 == 0 and { cache = 2 ^ 30 } or nil))
      ix:close() -- joins the builder, whether it finished or not
    end
    local ix = assert(index.open(db, { readonly = true }))
    assert.is_false(ix:filter().started)
    ix:close()
  end)
end)
