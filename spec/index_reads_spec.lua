-- What the server needs of the index: in-memory adds with a result per
-- document, the policy of a similar query, and one snapshot per request.
local index = require "shingle.index"
local support = require "support"
local tmpdir = support.tmpdir


local function text(rand, n) return table.concat(support.words(rand, n, 20000), " ") end

-- Another process adds one document (an LMDB environment is opened once per process).
local LUA = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
local function add_elsewhere(db, url, body)
  local f = os.tmpname()
  local h = assert(io.open(f, "w"))
  h:write(require("cjson").encode({ url = url, text = body }), "\n")
  h:close()
  local out, code = support.run(("env -u LD_PRELOAD %s bin/shingle index add %s %s --format jsonl --sweep s4 -q"):format(LUA, db, f))
  os.remove(f)
  assert(code == 0, out)
end

describe("shingle.index for a server", function()
  local dir, ix, base, rand
  setup(function()
    dir = tmpdir()
    rand = support.rng(77)
    ix = assert(index.open(dir .. "/idx"))
    base = {}
    for i = 1, 20 do base[i] = { url = "http://x.example/" .. i, text = text(rand, 400) } end
    -- a document that contains another: half of doc 1 plus new words
    base[21] = { url = "http://x.example/container", text = base[1].text .. " " .. text(rand, 400) }
    -- and one that shares half of doc 1
    base[22] = { url = "http://x.example/half", text = base[1].text:sub(1, math.floor(#base[1].text / 2)) .. " " .. text(rand, 200) }
    local res, st = assert(ix:add_documents(base, { sweep = "s1" }))
    assert.are.equal(22, st.added)
    for i = 1, 22 do assert.are.equal(i, res[i].id) end
  end)
  teardown(function()
    ix:close()
    os.execute("rm -rf " .. dir)
  end)

  describe("ix:add_documents()", function()
    it("adds in one transaction and answers each document with its id or why it was skipped", function()
      local docs = {
        { url = "http://y.example/a", text = base[2].text },                      -- an exact copy
        { url = "http://y.example/b", text = "", html = false },                  -- nothing to sketch: kept, empty
        { url = "http://y.example/c", text = "<html><body><p>" .. base[3].text .. "</p></body></html>" },
      }
      local res, st = assert(ix:add_documents(docs, { sweep = "s2" }))
      assert.are.equal(3, #res)
      assert.are.equal(23, res[1].id)
      assert.are.equal(2, st.identical) -- the copy, and the HTML page whose text is doc 3
      local c = ix:document_cluster(res[1].id)
      assert.are.equal("exact", c.relation)
      assert.are.equal(2, c.size)
      local c3 = ix:document_cluster(res[3].id)
      assert.are.equal("lexical", c3.relation)
      local urls = {}
      for _, m in ipairs(c3.members) do urls[m.url] = true end
      assert.is_true(urls["http://x.example/3"], "the HTML copy joins the text it wraps")
      assert.are.equal(25, ix:count())
    end)

    it("limits the members it lists but not the size", function()
      local c = ix:document_cluster(23, 1)
      assert.are.equal(1, #c.members)
      assert.are.equal(2, c.size)
    end)

    it("reports a document the index cannot sketch as that document's error, and adds the rest", function()
      local d2 = tmpdir()
      local strict = assert(index.open(d2 .. "/idx"))
      local res = assert(strict:add_documents({
        { url = "ok", text = text(rand, 100) },
        { url = "bad", text = "caf\xe9 " .. text(rand, 100) },
      }, { sweep = "s", invalid = "error" }))
      assert.are.equal(1, res[1].id)
      assert.is_nil(res[2].id)
      assert.is_truthy(res[2].error:find("invalid UTF-8", 1, true), res[2].error)
      assert.are.equal(1, strict:count())
      strict:close()
      os.execute("rm -rf " .. d2)
    end)

    it("raises on misuse: a document without url or text", function()
      assert.has_error(function() ix:add_documents({ { url = "u" } }, { sweep = "s3" }) end,
        "document 1: give { url = string, text = string }")
    end)
  end)

  describe("ix:similar() with a policy", function()
    local function set(hits)
      local t = {}
      for _, h in ipairs(hits) do t[h.url] = h end
      return t
    end
    -- The policies against the obvious definitions over every candidate (threshold 0).
    it("keeps by resemblance, containment, either or both as their definitions say", function()
      local q = base[1].text
      local all = assert(ix:similar(q, { threshold = 0, top = 0 }))
      assert.are.equal(3, #all) -- itself, the container, the half
      for _, t in ipairs({ 0.3, 0.5, 0.9 }) do
        for _, policy in ipairs({ "resemblance", "containment", "either", "both" }) do
          local got = set(assert(ix:similar(q, { threshold = t, top = 0, policy = policy })))
          for _, h in ipairs(all) do
            local c = math.max(h.containment, h.contained)
            local want = ({ resemblance = h.resemblance >= t, containment = c >= t,
              either = h.resemblance >= t or c >= t, both = h.resemblance >= t and c >= t })[policy]
            assert.are.equal(want, got[h.url] ~= nil, ("%s %s at %g"):format(policy, h.url, t))
          end
        end
      end
    end)

    -- A small query looks up n - need + 3 of its n values (need: the fewest a
    -- passing document shares; core/index.c sh_index_similar): the same
    -- documents as looking up all of them (threshold 0), at every threshold.
    it("finds by part of a small query's values exactly what all of them find", function()
      -- documents of 800 words: MOD_25 samples of ~30 values, at the index's own modulus
      local r = support.rng(5)
      local big = assert(index.open(dir .. "/big"))
      local docs = {}
      for i = 1, 20 do docs[i] = { url = "http://big.example/" .. i, text = text(r, 800) } end
      assert(big:add_documents(docs, { sweep = "s1" }))
      local checked, partial = 0, 0
      for i = 1, 20 do
        -- copies with a growing share of their words replaced: resemblances on both sides of t
        local words = {}
        for w in docs[i].text:gmatch("%S+") do words[#words + 1] = w end
        for k = 1, #words do
          if r(1000) <= i * 2 then words[k] = "x" .. r(100000) end
        end
        local q = table.concat(words, " ")
        local all = assert(big:similar(q, { threshold = 0, top = 0 }))
        for _, t in ipairs({ 0.2, 0.3, 0.5, 0.7, 0.9 }) do
          local want = {}
          for _, h in ipairs(all) do if h.resemblance >= t then want[#want + 1] = h.url end end
          local got = {}
          for _, h in ipairs(assert(big:similar(q, { threshold = t, top = 0 }))) do
            got[#got + 1] = h.url
            -- fewer shared values than the query has: the bound is what decided
            if h.shared < #select(1, big:shinglers()):sketch(q) then partial = partial + 1 end
          end
          table.sort(want)
          table.sort(got)
          assert.are.same(want, got, ("copy of %d at %g"):format(i, t))
          checked = checked + #want
        end
      end
      big:close()
      assert.is_true(checked > 20 and partial > 10, checked .. " " .. partial)
    end)

    it("finds the container by containment and not by resemblance", function()
      local q = base[1].text
      assert.is_nil(set(assert(ix:similar(q, { threshold = 0.8 })))["http://x.example/container"])
      local by_c = assert(ix:similar(q, { threshold = 0.8, containment = true }))
      assert.is_truthy(set(by_c)["http://x.example/container"])
      assert.is_truthy(set(assert(ix:similar(q, { threshold = 0.8, policy = "either" })))["http://x.example/container"])
    end)

    it("ranks by the larger containment with the containment flag, by resemblance without", function()
      local q = base[1].text
      local by_r = assert(ix:similar(q, { threshold = 0, top = 0, policy = "either" }))
      for k = 2, #by_r do assert.is_true(by_r[k - 1].resemblance >= by_r[k].resemblance) end
      local by_c = assert(ix:similar(q, { threshold = 0, top = 0, policy = "either", containment = true }))
      local function c(h) return math.max(h.containment, h.contained) end
      for k = 2, #by_c do assert.is_true(c(by_c[k - 1]) >= c(by_c[k])) end
      assert.are.equal(#by_r, #by_c)
    end)
  end)

  describe("ix:similar() and the common-value cutoff", function()
    it("defaults to the cutoff the index was made with, and takes another per query", function()
      local d2 = tmpdir()
      local cut = assert(index.open(d2 .. "/idx"))
      -- three versions of one text, each with a word of its own: the text's
      -- values are held by three documents, so max_df = 2 does not look them up
      local common = text(support.rng(5), 400)
      local docs = {}
      for i = 1, 3 do docs[i] = { url = "http://c.example/" .. i, text = common .. " only" .. i .. " here" } end
      assert(cut:add_documents(docs, { sweep = "s1", max_df = 2 }))
      assert.are.equal(2, cut:query_max_df())
      assert.are.equal(0, ix:query_max_df()) -- made with the default
      local made = assert(cut:similar(common, { threshold = 0, top = 0 }))
      local explicit = assert(cut:similar(common, { threshold = 0, top = 0, max_df = 2 }))
      local none = assert(cut:similar(common, { threshold = 0, top = 0, max_df = 0 }))
      assert.are.equal(0, #made)
      assert.are.equal(0, #explicit)
      assert.are.equal(3, #none)
      local out = support.run(("env -u LD_PRELOAD %s bin/shingle index info %s/idx"):format(LUA, d2))
      assert.is_truthy(out:find("max_df = 2", 1, true), out)
      cut:close()
      support.rmdir(d2)
    end)
  end)

  describe("ix:read()", function()
    it("reads one snapshot while a writer commits, and the new state after", function()
      local before = ix:count()
      local seen_inside, n_after_commit = ix:read(function()
        local a = ix:count()
        add_elsewhere(dir .. "/idx", "http://z.example/new", text(rand, 300))
        return a, ix:count()
      end)
      assert.are.equal(before, seen_inside)
      assert.are.equal(before, n_after_commit, "a commit during the read is not seen by it")
      assert.are.equal(before + 1, ix:count())
      assert.is_false(ix:has_url("http://nowhere.example/"))
      assert.is_true(ix:has_url("http://z.example/new"))
    end)

    it("nests, and ends the snapshot when f raises", function()
      local n = ix:count()
      assert.has_error(function() ix:read(function() ix:read(function() error("inner") end) end) end, "inner")
      add_elsewhere(dir .. "/idx", "http://z.example/later", text(rand, 300))
      assert.are.equal(n + 1, ix:count(), "no snapshot is left pinned")
      assert.are.equal(7, ix:read(function(a, b) return a + b end, 3, 4))
    end)
  end)
end)
