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

-- Issue 11, defect 7: a loaded sketch is checked field by field against what
-- the writer produces, so a string whose checksum was recomputed after an
-- edit cannot smuggle in a class of 64 (a shift past the word: undefined
-- behaviour, and an estimate of 0).
describe("shingle.load() of an edited sketch with a valid checksum", function()
  local core = require "shingle.core"

  local function le32(n)
    return string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256, math.floor(n / 16777216) % 256)
  end
  -- s with bytes [i, i + #b) replaced by b and the checksum recomputed
  local function patch(s, i, b)
    local body = s:sub(1, i - 1) .. b .. s:sub(i + #b, #s - 4)
    return body .. le32(core.crc32(body))
  end

  local class = shingle.new{ w = 2, sketch = "class" }
  local text = {}
  for i = 1, 300 do text[i] = "w" .. i end
  local ck = class:sketch(table.concat(text, " "))

  it("refuses a size class of 64 to 200, naming the field", function()
    local s = ck:serialize()
    assert.is_truthy(shingle.load(s))
    for c = 64, 200 do
      local v, err, code = shingle.load(patch(s, 21, le32(c)))
      assert.is_nil(v)
      assert.are.equal("EFORMAT", code)
      assert.are.equal(("sketch has size class %d; a class is 0 to 63"):format(c), err)
    end
  end)

  it("refuses each field a writer cannot produce", function()
    local min = shingle.new{ w = 2, sketch = "min", s = 20 }:sketch(table.concat(text, " "))
    local mod = shingle.new{ w = 2, sketch = "mod", m = 4, floor = 0 }:sketch(table.concat(text, " "))
    local cases = {
      { min, 10, "\1", "sketch header byte 9 (reserved) is not 0" },
      { min, 13, le32(1025), "sketch has shingle width w = 1025; a writer makes 0 (features) to 1024" },
      { min, 17, le32(19), "sketch of size s = 19 holds 20 values" },
      { min, 17, le32(25), "MIN sketch of s = 25 over 299 shingles holds 20 values" },
      { min, 17, le32(0), "sketch of size s = 0 holds 20 values" },
      { min, 17, le32(2000000), "sketch has size s = 2000000; a writer makes at most 1000000" },
      { min, 21, le32(3), "sketch has size class 3; a sketch of this kind has class 0" },
      { min, 41, "\0", "sketch polynomial" },
      { min, 65, le32(5), "MIN sketch of s = 20 over 5 shingles holds 20 values" },
      { mod, 25, le32(3), "sketch value 0 is not a multiple of the modulus 3" },
      { mod, 29, le32(2), "sketch value 0 is not a multiple of the modulus 8589934596" },
      { mod, 65, le32(1) .. le32(0), "sketch holds " },
    }
    for _, c in ipairs(cases) do
      local s = patch(c[1]:serialize(), c[2], c[3])
      local v, err = shingle.load(s)
      assert.is_nil(v, c[4])
      assert.is_truthy(err:find(c[4], 1, true), err)
    end
  end)

  -- Random edits with a recomputed checksum: whatever is accepted reads back
  -- to the same bytes, and compares with the original without a crash (the
  -- sanitizer run catches undefined behaviour).
  it("accepts an edit only if it reads back to the same bytes, and estimates from it", function()
    local rand = require("support").rng(11)
    local kinds = {
      ck, shingle.new{ w = 2, sketch = "min", s = 20 }:sketch(table.concat(text, " ")),
      shingle.new{ w = 2, sketch = "mod", m = 4 }:sketch(table.concat(text, " ")),
      shingle.new{ w = 2, sketch = "minmod", m = 2, s = 30 }:sketch(table.concat(text, " ")),
      shingle.new{ w = 2, sketch = "full" }:sketch(table.concat(text, " ", 1, 50)),
    }
    local accepted = 0
    for round = 1, 4000 do
      local orig = kinds[round % #kinds + 1]
      local s = orig:serialize()
      local body = s:sub(1, -5)
      for _ = 1, rand(3) do
        local i = rand(#body)
        body = body:sub(1, i - 1) .. string.char(rand(256) - 1) .. body:sub(i + 1)
      end
      local edited = body .. le32(core.crc32(body))
      local v = shingle.load(edited)
      if v then
        accepted = accepted + 1
        assert.are.equal(edited, v:serialize())
        local ok = pcall(function() return v:resemblance(orig), v:containment(orig) end)
        assert.is_boolean(ok)
      end
    end
    assert.is_true(accepted > 0) -- edits of the values and counts that keep the invariants do get through
  end)
end)
