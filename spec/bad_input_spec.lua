-- Bad input gets a clear error, or is handled as documented; never a crash.
local shingle = require "shingle"

describe("bad input", function()
  local sh = shingle.new{ w = 3, invalid = "error" }

  it("returns nil and an error naming the byte for invalid UTF-8", function()
    local s, err, code = sh:sketch("good text \xff\xfe more")
    assert.is_nil(s)
    assert.are.equal("EUTF8", code)
    assert.is_truthy(err:find("byte 10", 1, true), err)
    assert.is_truthy(err:find("latin1", 1, true), err)
  end)

  it("reads invalid bytes as Latin-1 or skips them when asked", function()
    local latin = shingle.new{ w = 1, invalid = "latin1" }
    local t = latin:tokens("caf\xe9 ol\xc9")
    assert.are.same({ "café", "olé" }, t)
    local skip = shingle.new{ w = 1, invalid = "skip" }
    assert.are.same({ "caf", "ol" }, skip:tokens("caf\xe9 ol\xc9"))
  end)

  it("treats NUL bytes as separators", function()
    assert.are.same({ "a", "b", "c" }, sh:tokens("a\0b\0\0c"))
    assert.is_truthy(sh:sketch("x\0y\0z\0w"))
  end)

  it("sketches empty documents as empty, and they resemble nothing", function()
    local e = sh:sketch("")
    assert.are.equal(0, #e)
    assert.are.equal(0, e:resemblance(sh:sketch("some words here")))
    assert.are.equal(0, e:resemblance(sh:sketch("   ")))
  end)

  it("handles a 100 MB single word", function()
    local word = string.rep("a", 100 * 1024 * 1024)
    local t, first, last = sh:tokens(word)
    assert.are.equal(1, #t)
    assert.are.equal(#word, last[1])
    t = nil
    local s = sh:sketch(word)
    assert.are.equal(1, s:shingles())
    assert.are.equal(1, s:resemblance(sh:sketch(word)))
  end)

  it("raises on misuse: a number where a text goes", function()
    assert.has_error(function() sh:sketch(42) end)
    assert.has_error(function() sh:sketch({ {} }) end,
      "item 1 of the list is a table; tokens and features must be strings or integers")
  end)
end)
