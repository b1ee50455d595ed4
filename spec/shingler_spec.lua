local shingle = require "shingle"
local support = require "support"
local hex = shingle.tohex

describe("shingle.new()", function()
  it("returns independent shinglers that live side by side", function()
    local a, b = shingle.new{ w = 3 }, shingle.new{ w = 5, sketch = "mod", m = 4 }
    assert.are.equal(3, a:params().w)
    assert.are.equal(5, b:params().w)
    assert.are.equal("mod", a:params().sketch) -- the one default of the API and the command line
    assert.are.equal("mod", b:sketch("x y z u v w q"):params().kind)
  end)

  it("draws the same polynomials for the same seed and others for another", function()
    local a, b, c = shingle.new{ seed = 1 }, shingle.new{ seed = 1 }, shingle.new{ seed = 2 }
    assert.are.equal(hex(a:params().poly), hex(b:params().poly))
    assert.are_not.equal(hex(a:params().poly), hex(c:params().poly))
    assert.are_not.equal(hex(a:params().poly), hex(a:params().idpoly))
  end)

  it("errors on an unknown option, naming it and the known ones", function()
    assert.has_error(function() shingle.new{ width = 3 } end,
      "unknown option 'width'; known options are: floor, fold, html, idpoly, invalid, k, lowercase, m, numbers, option, poly, punctuation, s, seed, simd, sketch, threads, tokens, w")
  end)

  it("errors on out-of-range and mistyped options, saying what works", function()
    assert.has_error(function() shingle.new{ w = 0 } end, "option 'w' is 0; use a whole number from 1 to 1024")
    assert.has_error(function() shingle.new{ k = 70 } end, "option 'k' is 70; use a whole number from 16 to 64")
    assert.has_error(function() shingle.new{ sketch = "minhash" } end,
      "option 'sketch' is minhash; use one of: class, full, min, minmod, mod")
    assert.has_error(function() shingle.new{ html = "yes" } end, "option 'html' must be true or false, got yes")
    assert.has_error(function() shingle.new(5) end, "shingle.new expects a table of options, got number")
  end)

  it("takes threads = 1 or 2 (a large plain text on one thread or two: the same sketches)", function()
    local words = {}
    for i = 1, 40000 do words[i] = ("w%d"):format((i * 7919) % 5003) end
    local text = table.concat(words, " ") -- over 128 KB: split over two threads when allowed
    assert.is_true(#text > 128 * 1024)
    for _, kind in ipairs{ "min", "mod", "full" } do
      local one = shingle.new{ sketch = kind, threads = 1 }:sketch(text)
      local two = shingle.new{ sketch = kind, threads = 2 }:sketch(text)
      assert.are.equal(one:params().shingles, two:params().shingles)
      assert.are.same(one:values(), two:values())
    end
    assert.has_error(function() shingle.new{ threads = 3 } end, "option 'threads' is 3; use a whole number from 1 to 2")
    assert.has_error(function() shingle.new{ threads = 0 } end, "option 'threads' is 0; use a whole number from 1 to 2")
  end)

  it("errors on a reducible polynomial", function()
    assert.has_error(function() shingle.new{ poly = "\x42\xf0\xe1\xeb\xa9\xea\x36\x93" } end)
  end)
end)

describe("no hidden shared state", function()
  it("leaves the C module's method table as the C module made it when the facade is loaded", function()
    local lua = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
    local build = os.getenv("SHINGLE_BUILD") or ("build/" .. (rawget(_G, "jit") and "jit" or _VERSION:match("%d+%.%d+")))
    local code = [[
      local core = require "shingle.core"
      local function names() local t = {} for k in pairs(core.Shingler) do t[#t + 1] = k end table.sort(t) return table.concat(t, " ") end
      local before = names()
      require "shingle"
      io.write(before == names() and "same" or ("changed: " .. before .. " / " .. names()))]]
    local out = support.run(("LUA_PATH='lua/?.lua;lua/?/init.lua;;' LUA_CPATH='%s/lib/?.so;;' %s -e '%s'")
      :format(build, lua, code))
    assert.are.equal("same", out)
  end)
end)

describe("Shingler:shingles()", function()
  it("iterates fingerprints with the byte range of original text each covers", function()
    local text = "The <quick> Brown fox, jumps!"
    local sh = shingle.new{ w = 2 }
    local got = {}
    for i, fp, first, last in sh:shingles(text) do got[i] = text:sub(first, last) end
    assert.are.same({ "The <quick", "quick> Brown", "Brown fox", "fox, jumps" }, got)
  end)

  it("slides the window to the same fingerprint as computing it from scratch, at every position", function()
    local rand = support.rng(42)
    for _, w in ipairs({ 1, 3, 10 }) do
      local sh = shingle.new{ w = w }
      local words = support.words(rand, 200, 300)
      local text = table.concat(words, " ")
      local ids = {}
      for i, word in ipairs(words) do ids[i] = sh:token_id(word) end
      local n = 0
      for i, fp in sh:shingles(text) do
        local window = {}
        for j = i, i + w - 1 do window[#window + 1] = ids[j] end
        assert.are.equal(hex(sh:window(window)), hex(fp))
        n = n + 1
      end
      assert.are.equal(200 - w + 1, n)
    end
  end)

  it("gives a document shorter than w one shingle, and an empty one none", function()
    local sh = shingle.new{ w = 10 }
    local n = 0
    for _ in sh:shingles("only three words") do n = n + 1 end
    assert.are.equal(1, n)
    for _ in sh:shingles("  ,,, ") do n = n + 1 end
    assert.are.equal(1, n)
  end)
end)

describe("Shingler:sketch()", function()
  it("ignores formatting, capitalization and punctuation by default", function()
    local sh = shingle.new{ w = 3, sketch = "full" }
    assert.is_true(sh:sketch("Hello,   World! How are you?") == sh:sketch("hello world how are you"))
  end)

  it("strips HTML when asked, so a page and its text compare", function()
    local text = shingle.new{ w = 3, sketch = "full" }
    local html = shingle.new{ w = 3, sketch = "full", html = true }
    local a = html:sketch("<p>Hello <b>big</b> world</p><script>var x = 1 < 2;</script><p>how are &amp; you</p>")
    local b = text:sketch("hello big world how are you")
    assert.are.equal(1, a:resemblance(b))
  end)

  it("sketches a list of tokens the same as the text they come from", function()
    local sh = shingle.new{ w = 2 }
    assert.is_true(sh:sketch({ "one", "two", "three" }) == sh:sketch("One two THREE"))
  end)

  it("compares feature sets with sketch_features, in any order", function()
    local sh = shingle.new{ s = 50 }
    local a = sh:sketch_features({ "C4", "E4", "G4", 60, 64 })
    local b = sh:sketch_features({ 64, "G4", "E4", 60, "C4", "C4" })
    assert.are.equal(1, a:resemblance(b))
    assert.are.equal(0, a:params().w)
  end)

  it("refuses to compare a feature sketch with a text sketch", function()
    local sh = shingle.new{}
    assert.has_error(function() sh:sketch_features({ "a" }):resemblance(sh:sketch("a")) end,
      "cannot compare a sketch of a feature set with a sketch of a text (w = 0 and 10)")
  end)

  it("refuses to compare sketches from shinglers with other parameters", function()
    local a = shingle.new{ w = 3, sketch = "min" }:sketch("a b c d e")
    local b = shingle.new{ w = 4, sketch = "min" }:sketch("a b c d e")
    assert.has_error(function() a:resemblance(b) end,
      "cannot compare sketches made with different shingle widths w (3 and 4): sketch both documents with the same shingler")
    local c = shingle.new{ w = 3, sketch = "min", punctuation = true }:sketch("a b c d e")
    assert.has_error(function() a:resemblance(c) end)
    local d = shingle.new{ w = 3, sketch = "min", seed = 99 }:sketch("a b c d e")
    assert.has_error(function() a:resemblance(d) end)
    local e = shingle.new{ w = 3, sketch = "mod" }:sketch("a b c d e")
    assert.has_error(function() a:resemblance(e) end,
      "cannot compare a min sketch with a mod sketch: sketch both documents with the same shingler")
  end)

  it("reproduces the paper's 40-bit fingerprints with pad8 tokens", function()
    local sh = shingle.new{ k = 40, poly = "\0\0\0\0\0\0\0\x39", tokens = "pad8", w = 10, sketch = "full" }
    local fps = {}
    for _, fp in sh:shingles("the quick brown fox jumps over the lazy dog and") do fps[#fps + 1] = hex(fp) end
    assert.are.same({ "000000273bfff875" }, fps)
  end)
end)

describe("Shingler:tokens()", function()
  it("returns canonical tokens with their byte ranges", function()
    local sh = shingle.new{}
    local t, first, last = sh:tokens("Ünïcode ÉCOLE, 42 x")
    assert.are.same({ "ünïcode", "école", "42", "x" }, t)
    assert.are.equal("ÉCOLE", ("Ünïcode ÉCOLE, 42 x"):sub(first[2], last[2]))
    local t2 = shingle.new{ numbers = false }:tokens("Ünïcode ÉCOLE, 42 x")
    assert.are.same({ "ünïcode", "école", "x" }, t2)
  end)
end)
