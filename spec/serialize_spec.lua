local shingle = require "shingle"

describe("Sketch:serialize() and shingle.load()", function()
  local sh = shingle.new{ w = 3, s = 20 }
  local sk = sh:sketch("one two three four five six seven eight nine ten eleven twelve thirteen")

  it("round-trips every kind of sketch", function()
    for _, kind in ipairs({ "min", "mod", "minmod", "class", "full" }) do
      local a = shingle.new{ w = 2, sketch = kind, m = 2 }:sketch("a b c d e f g h i j k l m n o p")
      local b = assert(shingle.load(a:serialize()))
      assert.is_true(a == b)
      assert.are.same(a:params(), b:params())
    end
  end)

  it("is compact: a header of 84 bytes, 8 bytes per value and a checksum", function()
    assert.are.equal(84 + 8 * #sk + 4, #sk:serialize())
  end)

  it("rejects every truncation with an error, never a crash", function()
    local s = sk:serialize()
    for n = 0, #s - 1 do
      local v, err = shingle.load(s:sub(1, n))
      assert.is_nil(v)
      assert.is_string(err)
    end
  end)

  it("rejects a corrupted byte anywhere", function()
    local s = sk:serialize()
    for i = 1, #s do
      local c = s:byte(i)
      local bad = s:sub(1, i - 1) .. string.char((c + 1) % 256) .. s:sub(i + 1)
      local v, err, code = shingle.load(bad)
      assert.is_nil(v)
      assert.is_string(err)
      assert.are.equal("EFORMAT", code)
    end
  end)

  it("names what is wrong with a foreign string", function()
    local v, err = shingle.load("PK\3\4 not a sketch")
    assert.is_nil(v)
    assert.are.equal('not a shingle sketch: it does not start with the magic "SHSK"', err)
  end)
end)
