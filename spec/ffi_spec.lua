-- shingle.ffi (LuaJIT's FFI over the C API) against the classic binding:
-- bit-identical sketches and equal estimates on the same inputs, the same
-- index answers over one shared LMDB environment. Under Lua 5.3 and 5.4 the
-- module must refuse to load with a message that says what to use instead.
local shingle = require "shingle"
local support = require "support"

if not rawget(_G, "jit") then
  describe("shingle.ffi without LuaJIT", function()
    it("refuses to load and points at the classic binding", function()
      local ok, err = pcall(require, "shingle.ffi")
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("shingle.ffi needs LuaJIT's ffi", 1, true), err)
    end)
  end)
  return
end

local sf = require "shingle.ffi"

local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- texts of every kind: the samples, random words, HTML, non-ASCII, invalid
-- UTF-8, tiny and empty ones
local function texts()
  local rand = support.rng(2026)
  local out = {}
  for line in io.popen("ls samples/docs"):lines() do out[#out + 1] = read("samples/docs/" .. line) end
  for i = 1, 12 do out[#out + 1] = table.concat(support.words(rand, 20 * i * i, 3000), " ") end
  out[#out + 1] = "<html><body><p>Caf\xc3\xa9 cr\xc3\xa8me br\xc3\xbbl\xc3\xa9e &amp; na\xc3\xafve r\xc3\xa9sum\xc3\xa9 "
    .. ("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xd0\xbc\xd0\xb8\xd1\x80 "):rep(30) .. "</p></body></html>"
  out[#out + 1] = "caf\xe9 latin-1 bytes \xff\xfe in the middle " .. table.concat(support.words(rand, 200, 500), " ")
  out[#out + 1] = "one"
  out[#out + 1] = ""
  return out
end

local configs = {
  {},
  { sketch = "mod", m = 25 },
  { sketch = "minmod", s = 50, m = 5 },
  { sketch = "class" },
  { sketch = "full", w = 4 },
  { w = 5, k = 40, option = "A", s = 100 },
  { tokens = "pad8", w = 6 },
  { html = true, fold = true, punctuation = true, numbers = false, seed = 12345 },
  { invalid = "latin1", sketch = "mod", m = 7, floor = 0 },
  { invalid = "skip" },
}

describe("shingle.ffi", function()
  local corpus = texts()

  it("makes bit-identical sketches to the classic binding for every text and configuration", function()
    local compared = 0
    for _, o in ipairs(configs) do
      local classic = shingle.new(o)
      local fast = assert(sf.shingler(o))
      local reused = assert(sf.sketch())
      for i, t in ipairs(corpus) do
        local a, aerr = classic:sketch(t)
        local b, berr = fast:sketch(t, reused)
        if not a then
          assert.is_nil(b, "the FFI accepted what the binding refused")
          assert.are.equal(aerr, berr)
        else
          assert.are.equal(a:serialize(), b:serialize(), ("text %d, %s"):format(i, fast.options))
          assert.are.equal(#a, #b)
          compared = compared + 1
        end
      end
    end
    assert.is_true(compared >= #configs * (#corpus - 1))
  end)

  it("takes shingle.new's defaults in the C API for options it is not given", function()
    -- (the C API's own defaults, not ffi.options's: "" reaches shingle_shingler_new as it is)
    local classic, c = shingle.new{}, assert(sf.shingler(""))
    local compared = 0
    for i, t in ipairs(corpus) do
      local a, b = classic:sketch(t), assert(c:sketch(t))
      assert.are.equal(a:serialize(), b:serialize(), ("text %d"):format(i))
      compared = compared + 1
    end
    assert.are.equal(#corpus, compared) -- the invalid UTF-8 text too: latin1, not an error
  end)

  it("declares the recorded C API: the same prototypes, constants and struct layouts", function()
    local abi = require "abi"
    local ffi = require "ffi"
    local rec = abi.record()
    local cdef = support.read("lua/shingle/ffi.lua"):match("ffi%.cdef%s*%[(%b[])%]")
    assert.is_truthy(cdef, "ffi.lua's ffi.cdef block")
    local declared = abi.prototypes(cdef)
    local recorded = {}
    for _, f in ipairs(rec.functions) do recorded[f] = true end
    for _, p in ipairs(declared) do assert.is_true(recorded[p] == true, "not the recorded prototype: " .. p) end
    assert.is_true(#declared >= 20)
    local compared = 0
    for _, line in ipairs(rec.layout) do
      local t, size = line:match("^size (%S+) (%d+)$")
      if t then
        assert.are.equal(tonumber(size), ffi.sizeof(t), t)
        compared = compared + 1
      end
      -- (offsets and the struct's size pin each field's place and room)
      local t2, f, off = line:match("^field ([%w_]+)%.([%w_]+) (%d+) %d+$")
      if t2 then
        assert.are.equal(tonumber(off), ffi.offsetof(t2, f), t2 .. "." .. f)
        compared = compared + 1
      end
      local c, v = line:match("^const (SHINGLE_POLICY_[%u_]+) (%d+)$")
      if c then
        assert.are.equal(tonumber(v), sf.policies[c:match("SHINGLE_POLICY_(.*)"):lower()], c)
        compared = compared + 1
      end
    end
    assert.is_true(compared >= 20)
  end)

  it("estimates as the classic binding does, pair by pair", function()
    for _, o in ipairs(configs) do
      local classic, fast = shingle.new(o), assert(sf.shingler(o))
      local ca, fa = {}, {}
      for i = 1, 14 do
        ca[i] = assert(classic:sketch(corpus[i]))
        fa[i] = assert(fast:sketch(corpus[i]))
      end
      for i = 1, 14 do
        for j = i, 14 do
          local x, y = ca[i]:estimate(ca[j]), assert(fa[i]:estimate(fa[j]))
          assert.are.equal(x.resemblance, y.resemblance)
          assert.are.equal(x.containment, y.containment)
          assert.are.equal(x.contained, y.contained)
        end
      end
    end
  end)

  it("loads what the classic binding serialized, and the reverse", function()
    local a = shingle.new({ sketch = "mod" }):sketch(corpus[3])
    local b = assert(sf.load(a:serialize()))
    assert.are.equal(a:serialize(), b:serialize())
    local c = assert(shingle.load(b:serialize()))
    assert.are.equal(1, c:estimate(a).resemblance)
    local bad, err = sf.load(a:serialize():sub(1, -2))
    assert.is_nil(bad)
    assert.is_truthy(err:find("truncated or corrupt", 1, true), err)
  end)

  it("returns nil, err for a bad option, a mismatch and invalid UTF-8", function()
    local sh, err = sf.shingler("w=2000")
    assert.is_nil(sh)
    assert.are.equal("option w=2000: give a whole number from 1 to 1024", err)
    local a = sf.shingler({ w = 3 }):sketch(corpus[1])
    local b = sf.shingler({ w = 4 }):sketch(corpus[1])
    local e, merr = a:estimate(b)
    assert.is_nil(e)
    assert.is_truthy(merr:find("w", 1, true))
    local s, uerr = sf.shingler({ invalid = "error" }):sketch("caf\xe9")
    assert.is_nil(s)
    assert.is_truthy(uerr:find("byte 3", 1, true), uerr)
    assert.are.same({ nil, "invalid UTF-8 at byte 3 (0xe9)", 4 }, { sf.utf8_check("caf\xe9") })
    assert.has_error(function() sf.shingler({ canon = "html" }) end)
  end)

  describe("over an index", function()
    local dir, ix, fx
    setup(function()
      dir = os.tmpname()
      os.remove(dir)
      ix = assert(require("shingle.index").open(dir))
      local docs = {}
      for i = 1, 40 do docs[i] = { url = "http://f.example/" .. i, text = corpus[8 + i % 12] .. " v" .. i } end
      assert(ix:add_documents(docs, { sweep = "s" }))
      fx = sf.index(ix)
    end)
    teardown(function()
      ix:close()
      os.execute("rm -rf " .. dir)
    end)

    it("shares the binding's environment and answers similar as it does", function()
      assert.are.equal(ix:count(), fx:count())
      local c = ix.config
      local fsh = assert(sf.shingler({ w = c.w, k = c.k, sketch = c.sketch, s = c.s, m = c.m, option = c.option,
        tokens = c.tokens, fold = c.fold, punctuation = c.punctuation, numbers = c.numbers, invalid = c.invalid }))
      local nonempty = 0
      for i = 9, 20 do
        for _, o in ipairs({ {}, { threshold = 0.2, top = 3 }, { containment = true }, { policy = "either", threshold = 0.1, top = 0 },
          { policy = "either", threshold = 0.1, top = 0, max_df = 2 }, { max_df = 1, threshold = 0 } }) do
          local classic = ix:similar(corpus[i], { threshold = o.threshold, top = o.top, containment = o.containment,
            policy = o.policy, max_df = o.max_df, html = false })
          o.docs = true
          local fast = assert(fx:similar(assert(fsh:sketch(corpus[i])), o))
          assert.are.equal(#classic, #fast)
          for k, h in ipairs(classic) do
            for _, f in ipairs({ "id", "url", "sweep", "cluster", "resemblance", "containment", "contained", "shared" }) do
              assert.are.equal(h[f], fast[k][f], f)
            end
          end
          if #fast > 0 then nonempty = nonempty + 1 end
        end
      end
      assert.is_true(nonempty > 10)
    end)

    it("reads documents and pins one snapshot", function()
      local d = assert(fx:document(3))
      local cd = ix.ix:doc(3)
      assert.are.equal(cd.url, d.url)
      assert.are.equal(cd.cluster, d.cluster)
      assert.are.equal(cd.relation, d.relation)
      local none, err = fx:document(100000)
      assert.is_nil(none)
      assert.is_truthy(err:find("no document", 1, true), err)
      assert.is_true(fx:read_begin())
      assert.are.equal(40, fx:count())
      fx:read_end()
    end)

    it("starts the postings filter of the shared handle", function()
      assert.is_false(ix:filter().started)
      assert.is_true(fx:filter_start())
      for _ = 1, 300 do
        if ix:filter().ready then break end
        os.execute("sleep 0.01")
      end
      assert.is_true(ix:filter().ready)
      assert.are.equal(40, ix:filter().covers)
    end)

    it("starts the postings filter and cache of an index it opened", function()
      local copy = dir .. "-copy"
      os.execute(("cp -r %s %s"):format(dir, copy))
      local fx2 = assert(sf.index(copy))
      local fsh = assert(fx2:shingler())
      local queries = {}
      for i = 9, 20 do queries[#queries + 1] = assert(fsh:sketch(corpus[i])) end
      local function all(x)
        local out = {}
        for i, q in ipairs(queries) do out[i] = assert(x:similar(q, { threshold = 0.2, docs = true })) end
        return out
      end
      local before = all(fx2)
      assert.is_true(fx2:filter_start{ cache = 2 ^ 30 })
      -- the same hits while it builds and after, and as the shared handle's
      for _ = 1, 50 do
        assert.are.same(before, all(fx2))
        os.execute("sleep 0.005")
      end
      assert.are.same(all(fx), before)
      local n = 0
      for _, h in ipairs(before) do n = n + #h end
      assert.is_true(n > 5)
      assert.has_error(function() fx2:filter_start{ cache = -1 } end)
      fx2, fsh = nil, nil
      collectgarbage()
      os.execute("rm -rf " .. copy)
    end)
  end)
end)
