-- The SIMD fast paths (core/simd.h) against the portable path, through the
-- public API: for every level this processor has, the same sketches, tokens
-- and token spans on adversarial inputs (spec/simd_corpus.lua). The C side
-- (core/test/test_simd.c) compares the stages one by one; scripts/test.sh
-- also compares a build without SIMD with this one.
local shingle = require "shingle"
local corpus = require "simd_corpus"

local levels = { "portable", "sse2", "avx2", "avx512" }

describe("instruction set levels", function()
  it("name the best level there is, and cap a request at it", function()
    local best = shingle.core.simd()
    local rank = {}
    for i, l in ipairs(levels) do rank[l] = i end
    assert.is_not_nil(rank[best])
    for _, l in ipairs(levels) do
      local got = shingle.new{ simd = l }:params().simd
      assert.are.equal(rank[l] <= rank[best] and l or best, got)
    end
    assert.are.equal(best, shingle.new{}:params().simd)
  end)

  it("refuses a level that is not one", function()
    assert.has_error(function() shingle.new{ simd = "mmx" } end,
      "option 'simd' is mmx; use one of: auto, avx2, avx512, portable, sse2")
  end)

  it("are not part of a sketch's identity", function()
    local a = shingle.new{ simd = "portable", sketch = "full" }:sketch("one two three four five six seven eight nine ten eleven")
    local b = shingle.new{ sketch = "full" }:sketch("one two three four five six seven eight nine ten eleven")
    assert.are.equal(1, a:resemblance(b))
    assert.are.equal(a:serialize(), b:serialize())
  end)
end)

describe("every level sketches and tokenizes adversarial inputs as the portable path does", function()
  local inputs = corpus.inputs()
  local best = shingle.core.simd()
  for _, c in ipairs(corpus.configs) do
    it(c.name .. " (" .. #inputs .. " inputs, levels up to " .. best .. ")", function()
      local opts = {}
      for k, v in pairs(c.opts) do opts[k] = v end
      opts.simd = "portable"
      local ref = shingle.new(opts)
      local others = {}
      for _, l in ipairs(levels) do
        if l ~= "portable" then
          opts.simd = l
          local sh = shingle.new(opts)
          if sh:params().simd == l then others[#others + 1] = sh end
        end
      end
      local differ = {}
      for i, input in ipairs(inputs) do
        local want = corpus.outcome(ref, input)
        for _, sh in ipairs(others) do
          if corpus.outcome(sh, input) ~= want then
            differ[#differ + 1] = ("input %d at %s: %q"):format(i, sh:params().simd, input:sub(1, 80))
          end
        end
      end
      assert.are.same({}, differ)
    end)
  end
end)
