-- Rabin fingerprints against the verified vectors of docs/vectors.md.
local shingle = require "shingle"
local core = shingle.core

-- polynomials as 8-byte strings, so the spec reads the same on LuaJIT
local function u64(hex) return (hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)) end
local P64A, P64B = u64("6b5d667075192889"), u64("caefbcde6b4238b1")
local P40A, P40B = u64("0000000000000039"), u64("000000048d90602f")
local hex = shingle.tohex

describe("shingle.core.rabin()", function()
  local inputs = { "", "a", "abc", "123456789", "hello world" }
  local want = {
    [P64A] = { "0000000000000000", "09233514b4fdbbf0", "8042cdb57afccc85", "29145324914ea032", "f67f0c43e95e3687" },
    [P64B] = { "0000000000000000", "8886a05155fe5a69", "71f61743249f4439", "ec49568991475ebe", "eaf5813961488a62" },
  }
  local want40 = {
    [P40A] = { "0000000000", "0000000959", "0009501b2b", "90a55b6791", "b4a70644a7" },
    [P40B] = { "0000000000", "b2d6140e20", "e62159f4bd", "8e543c035a", "d64f71d7a1" },
  }

  it("matches the AUG vectors for the degree-64 polynomials", function()
    for p, w in pairs(want) do
      for i, s in ipairs(inputs) do assert.are.equal(w[i], hex(core.rabin(s, p, 64))) end
    end
  end)

  it("matches the AUG vectors for the degree-40 polynomials", function()
    for p, w in pairs(want40) do
      for i, s in ipairs(inputs) do assert.are.equal("000000" .. w[i], hex(core.rabin(s, p, 40))) end
    end
  end)

  it("matches the RAW and AUG1 vectors", function()
    assert.are.equal("0000000000616263", hex(core.rabin("abc", P64B, 64, "raw")))
    assert.are.equal("d9e806acc22b31e4", hex(core.rabin("123456789", P64B, 64, "raw")))
    assert.are.equal("caefbcde6b4238b1", hex(core.rabin("", P64B, 64, "aug1")))
    assert.are.equal("0af42b124b2378f7", hex(core.rabin("a", P64B, 64, "aug1")))
    assert.are.equal("b911f5b277b236ba", hex(core.rabin("abc", P64B, 64, "aug1")))
  end)

  it("errors on a polynomial wider than k and on an unknown form", function()
    assert.has_error(function() core.rabin("a", P64B, 40) end)
    assert.has_error(function() core.rabin("a", P64B, 64, "crc") end)
    assert.has_error(function() core.rabin("a", P64B, 8) end)
  end)
end)

describe("shingle.core.irreducible()", function()
  it("accepts the known irreducible polynomials", function()
    assert.is_true(core.irreducible(P64A, 64))
    assert.is_true(core.irreducible(P64B, 64))
    assert.is_true(core.irreducible(P40A, 40))
    assert.is_true(core.irreducible(P40B, 40))
  end)
  it("rejects the known reducible polynomials", function()
    assert.is_false(core.irreducible(u64("42f0e1eba9ea3693"), 64))
    assert.is_false(core.irreducible(u64("0000000004820009"), 40))
  end)
end)

describe("shingle.core.random_poly()", function()
  it("draws the same irreducible polynomial for the same seed", function()
    local a, b, c = core.random_poly(7, 64), core.random_poly(7, 64), core.random_poly(8, 64)
    assert.are.equal(hex(a), hex(b))
    assert.are_not.equal(hex(a), hex(c))
    assert.is_true(core.irreducible(a, 64))
    assert.is_true(core.irreducible(core.random_poly(7, 40), 40))
  end)
end)

describe("shingle.core.mix()", function()
  it("is the splitmix64 finaliser: mix(0) is the generator's first output", function()
    assert.are.equal("e220a8397b1dcdaf", hex(core.mix(0)))
  end)
end)

describe("fingerprint values", function()
  it("are integers on Lua 5.3+ and 8-byte strings on LuaJIT", function()
    local fp = shingle.new{}:fingerprint("hello")
    if shingle.int64 then
      assert.are.equal("number", type(fp))
      assert.are.equal(math.type and "integer" or "number", math.type and math.type(fp) or "number")
    else
      assert.are.equal("string", type(fp))
      assert.are.equal(8, #fp)
    end
  end)

  it("fingerprint whole strings under the shingler's polynomial", function()
    local sh = shingle.new{ poly = P64B }
    assert.are.equal("eaf5813961488a62", hex(sh:fingerprint("hello world")))
  end)
end)
