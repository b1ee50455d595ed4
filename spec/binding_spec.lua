-- The C module's handles (one idempotent close each, also run by __gc and,
-- under Lua 5.4, by <close>), and the two ways a document is sketched (the
-- C pool, and Shingler:sketch_doc for what Lua canonicalized) giving it one
-- identity.
local support = require "support"
local tmpdir = support.tmpdir
local shingle = require "shingle"
local core = shingle.core


describe("shingle.core handles", function()
  local dir, n_ix = nil, 0
  setup(function() dir = tmpdir() end)
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  -- each: a fresh handle, a call that uses it
  local kinds = {
    Shingler = { make = function() return core.new{ w = 3 } end, use = function(h) return h:sketch_text("a b c d") end },
    Pool = {
      make = function() local sh = core.new{ w = 3 }; return core.pool(sh, sh, { threads = 1 }) end,
      use = function(h) return h:sketch({ { text = "a b c d" } }) end,
    },
    Index = {
      make = function() -- one environment per handle: LMDB forbids opening one twice in a process
        n_ix = n_ix + 1
        return assert(core.index(dir .. "/ix" .. n_ix))
      end,
      use = function(h) return h:count() end,
    },
    WarcReader = {
      make = function()
        local f = assert(io.open(dir .. "/empty.warc", "wb")); f:close()
        return assert(core.warc(dir .. "/empty.warc"))
      end,
      use = function(h) return h:batch(1) end,
    },
    WebGraph = {
      make = function()
        n_ix = n_ix + 1
        os.execute("mkdir -p '" .. dir .. "/wg" .. n_ix .. "'")
        return assert(core.webgraph(dir .. "/wg" .. n_ix, {}))
      end,
      use = function(h) return h:stats() end,
    },
    JsonlReader = {
      make = function()
        support.write(dir .. "/one.jsonl", '{"text":"a b c d"}\n')
        return assert(core.jsonl(dir .. "/one.jsonl"))
      end,
      use = function(h) return h:batch(1) end,
    },
    ZStream = {
      make = function()
        support.write(dir .. "/plain.txt", "a b c d\n")
        return assert(core.zopen(dir .. "/plain.txt"))
      end,
      use = function(h) return h:kind() end,
    },
    MboxReader = {
      make = function()
        support.write(dir .. "/one.mbox", "From a@b Mon Jan  1 00:00:00 2024\nSubject: s\n\nbody\n")
        return assert(core.mbox(dir .. "/one.mbox"))
      end,
      use = function(h) return h:batch(1) end,
    },
    LshIndex = {
      make = function() return core.lsh_index(core.new{ w = 3, sketch = "min", s = 16 }:sketch_text("a b c d e f"), { bands = 4, rows = 4 }) end,
      use = function(h) return h:count() + 1 end,
    },
  }

  for name, k in pairs(kinds) do
    it(name .. ":close() is idempotent and a closed " .. name .. " raises when used", function()
      local h = k.make()
      assert.is_truthy(k.use(h))
      h:close()
      h:close()
      assert.has_error(function() k.use(h) end)
    end)

    it(name .. " has __close under Lua 5.4 and __gc everywhere", function()
      local mt = getmetatable(k.make())
      assert.is_function(mt.__gc)
      if _VERSION == "Lua 5.4" then
        assert.are.equal(mt.__gc, mt.__close)
        local used
        local chunk = assert(load([[
          local make, use = ...
          local h <close> = make()
          return h, use(h)
        ]]))
        local h = chunk(k.make, k.use)
        used = h
        assert.has_error(function() k.use(used) end) -- closed when the scope ended
      end
    end)
  end
end)

describe("a process with shingle.mpi", function()
  it("ends cleanly when it required shingle.mpi after making the core's boxes (Lua 5.1 and LuaJIT unload C modules first)", function()
    -- pool results live in boxes; requiring shingle.mpi once set their class's
    -- __gc to mpi.so's copy, which LuaJIT unloaded before finalizing them at
    -- lua_close: a segmentation fault at exit
    local v = rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")
    local lua = rawget(_G, "jit") and "luajit" or "lua" .. v
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write([[
local core = require "shingle.core"
local sh = core.new{ w = 3 }
local pool = core.pool(sh, sh, { threads = 1 })
local out = {}
for i = 1, 20 do out[i] = pool:sketch({ { text = "a b c d e f " .. i } }) end
local r = pool:start({ { text = "g h i j k" } }):wait()
pcall(require, "shingle.mpi")
io.write("done\n")
]])
    f:close()
    local build = os.getenv("SHINGLE_BUILD") or ("build/" .. v)
    -- (with the environment as it is: a sanitizer build's child needs the same preloaded runtime)
    local out, code = support.run(("env LUA_CPATH='%s/lib/?.so;;' LUA_PATH='lua/?.lua;lua/?/init.lua;;' %s %s")
      :format(build, lua, script))
    os.remove(script)
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("done", 1, true), out)
  end)
end)

describe("Shingler:sketch_doc()", function()
  local text = "Shingles of a document sketched by the C pool and by Lua must agree, whichever path "
    .. "sketched them: the same sketch, the same fingerprints and the same signature, so that identical "
    .. "documents are found identical across runs that sketched them differently."

  it("sketches a large plain text on two threads as the C pool does on one", function()
    -- past 128 KiB sh:sketch_text cuts a plain text near its middle and
    -- shingles the halves on two threads (core/shingler.c shingle_text_2);
    -- the pool streams the same text through one thread
    local rand = support.rng(3)
    local parts = { "word", "Straße", "e\204\129", "日本語", " ", "\t", "\n", "\r\n", "\1", "\127", "12345", "--", "!", "A" }
    -- prose: words and single spaces, where a cut one byte off falls in a word
    local texts = { table.concat(support.words(rand, 30000, 5000), " ") }
    for _, size in ipairs({ 131072, 200003, 400000 }) do
      local t = {}
      local n = 0
      while n < size do
        local p = parts[rand(#parts)]
        t[#t + 1] = p
        n = n + #p
      end
      texts[#texts + 1] = table.concat(t)
    end
    for _, text in ipairs(texts) do
      local size = #text
      for _, kind in ipairs({ "mod", "min" }) do
        local sh = core.new{ w = 4, sketch = kind, s = 50, m = 5, invalid = "latin1" }
        local c = core.pool(sh, sh, { threads = 1 }):sketch({ { text = text } })[1]
        local sk = sh:sketch_text(text)
        assert.is_nil(c.error)
        assert.is_true(c.sketch == sk, kind .. " " .. size)
        assert.are.equal(c.sketch:shingles(), sk:shingles())
      end
    end
  end)

  it("gives a document the fingerprints, sketch and signature the C pool gives it", function()
    for _, kind in ipairs({ "mod", "min" }) do
      local sh = core.new{ w = 4, sketch = kind, s = 20, m = 3 }
      local pool = core.pool(sh, sh, { threads = 1, full = true })
      local c = pool:sketch({ { text = text } })[1]
      local toks = sh:tokens(text)
      local l = sh:sketch_doc(text, toks, { full = true, sig_k = 8 })
      assert.are.equal(c.raw, l.raw)
      assert.are.equal(c.canonical, l.canonical)
      assert.are.equal(c.set, l.set)
      assert.is_true(c.sketch == l.sketch)
      assert.are.equal(c.tokens, l.tokens)
      assert.are.equal(64, #l.sig)
      assert.are.equal("full", l.full:params().kind)
    end
  end)

  it("takes the set fingerprint from the full set when it is kept, else from the sketch", function()
    local sh = core.new{ w = 4, sketch = "mod", m = 5, floor = 0 }
    local toks = sh:tokens(text)
    local kept, plain = sh:sketch_doc(text, toks, { full = true }), sh:sketch_doc(text, toks)
    assert.are.equal(kept.raw, plain.raw)
    assert.are.equal(kept.canonical, plain.canonical)
    assert.are_not.equal(kept.set, plain.set)
    assert.is_nil(plain.full)
    assert.is_nil(plain.sig)
  end)

  it("sketches a feature set without shingling, w = 0", function()
    local sh = core.new{ w = 4, sketch = "full" }
    local r = sh:sketch_doc("x", { "C4", "E4", "G4", "C4" }, { features = true })
    assert.are.equal(3, #r.sketch)
    assert.are.equal(0, r.sketch:params().w)
  end)

  it("errors on a list item that is neither a string nor an integer", function()
    local sh = core.new{ w = 2 }
    assert.has_error(function() sh:sketch_doc("x", { "a", {} }) end,
      "item 2 of the list is a table; tokens and features must be strings or integers")
  end)
end)
