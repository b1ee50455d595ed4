-- The postings filter (core/ixfilter.c, Index:filter_start): queries give
-- the same hits with it as without; it never leaves out a value the index
-- has (a document's own values, all looked up, are never skipped), it does
-- leave out those of new text, and it follows documents another process adds
-- after it was built (their values are not in the postings it was built
-- from: without the catch-up, a query for them would find nothing).
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

local function wait_ready(ix)
  for _ = 1, 300 do
    local f = ix:filter()
    assert.is_nil(f.error)
    if f.ready then return f end
    os.execute("sleep 0.02")
  end
  error("the postings filter was not built in 6 s")
end

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

  it("is built in its own thread, and closing the index while it builds stops it", function()
    for _ = 1, 5 do
      local ix = assert(index.open(db, { readonly = true }))
      assert.is_true(ix:filter_start())
      ix:close() -- joins the builder, whether it finished or not
    end
    local ix = assert(index.open(db, { readonly = true }))
    assert.is_false(ix:filter().started)
    ix:close()
  end)
end)
