-- A sketch's identity includes every parameter that changes it, an
-- extractor's and a rule set's own parameters too; a comparison refused
-- says which parameter differs, not two fingerprints.
local shingle = require "shingle"
local sketcher = require "shingle.sketcher"
local extractors = require "shingle.extractors"

local fasta = ">seq1\nACGTACGTACGTACGGGTACCCATTTAGGACCAGATTTAGACAGGGATTACAGATTACAGGATTTAGCCAG\n"

local function refused(a, b)
  local ok, err = pcall(a.resemblance, a, b)
  assert.is_false(ok, "the comparison should be refused")
  assert.is_falsy(tostring(err):find("0x%x%x%x%x%x%x%x%x"), "names two fingerprints: " .. tostring(err))
  return tostring(err)
end

local function fasta_sketch(spec)
  local text, _, ex = sketcher.shinglers({ extractor = spec, sketch = "min", s = 50 })
  return assert(extractors.sketch(ex, text, fasta, "x.fa"))
end

describe("sketch identity", function()
  it("refuses FASTA sketches of other k, naming the extractor's parameter", function()
    local err = refused(fasta_sketch("fasta"), fasta_sketch("fasta:k=9"))
    assert.is_truthy(err:find("fasta:k=9", 1, true), err)
    -- the default k is the same extractor as k = 21 named
    local a, b = fasta_sketch("fasta"), fasta_sketch("fasta:k=21")
    assert.are.equal(1, a:resemblance(b))
  end)

  it("refuses sketches of version 1 of the FASTA extractor, saying so", function()
    -- version 1's identity was the extractor's name ("fasta"); its features
    -- do not matter here, only the identity its sketches carry
    local v1 = { name = "fasta", kind = "set", extract = function() return { "ACGTACGTACGTACGTACGTA" } end }
    local old_text = sketcher.shinglers({ extractor = v1, sketch = "min", s = 50 })
    local old = assert(extractors.sketch(v1, old_text, fasta, "x.fa"))
    local err = refused(fasta_sketch("fasta"), old)
    assert.is_truthy(err:find("extractor:fasta is an earlier version of the extractor fasta; sketch the data again", 1, true), err)
    err = refused(fasta_sketch("fasta:k=15"), (function()
      local v1k = { name = "fasta:k=15", kind = "set", extract = v1.extract }
      return assert(extractors.sketch(v1k, (sketcher.shinglers({ extractor = v1k, sketch = "min", s = 50 })), fasta, "x.fa"))
    end)())
    assert.is_truthy(err:find("earlier version of the extractor fasta:k=15", 1, true), err)
  end)

  it("names the canonicalization option that differs", function()
    local t = "the quick brown fox jumps over the lazy dog and runs far away into the forest"
    local err = refused(shingle.new{ fold = true }:sketch(t), shingle.new{}:sketch(t))
    assert.is_truthy(err:find("fold: true and false", 1, true), err)
    err = refused(shingle.new{ invalid = "skip" }:sketch(t), shingle.new{ invalid = "error" }:sketch(t))
    assert.is_truthy(err:find("invalid: skip and error", 1, true), err)
    err = refused(shingle.new{ canon = "code" }:sketch(t), shingle.new{ canon = "text" }:sketch(t))
    assert.is_truthy(err:find("rule set", 1, true), err)
  end)

  it("names the shingling parameter that differs", function()
    local t = "the quick brown fox jumps over the lazy dog and runs far away into the forest"
    assert.is_truthy(refused(shingle.new{ w = 4 }:sketch(t), shingle.new{ w = 5 }:sketch(t)):find("widths w (4 and 5)", 1, true))
    assert.is_truthy(refused(shingle.new{ k = 40 }:sketch(t), shingle.new{ k = 64 }:sketch(t)):find("degrees k", 1, true))
    assert.is_truthy(refused(shingle.new{ seed = 1 }:sketch(t), shingle.new{ seed = 2 }:sketch(t)):find("seeds (1 and 2)", 1, true))
  end)
end)
