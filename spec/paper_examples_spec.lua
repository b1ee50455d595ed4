-- The worked examples of Broder, "On the resemblance and containment of
-- documents", section 2 ("Definitions as set intersection problems").
local shingle = require "shingle"

describe("the paper's worked examples", function()
  local A = { "a", "rose", "is", "a", "rose", "is", "a", "rose" }
  local B = { "a", "rose", "is", "a", "flower", "which", "is", "a", "rose" }

  it("gives the 4-shingling of (a,rose,is,a,rose,is,a,rose) 3 distinct shingles and 5 labelled ones", function()
    local b = shingle.new{ w = 4, sketch = "full" }:sketch(A)
    local a = shingle.new{ w = 4, sketch = "full", option = "A" }:sketch(A)
    assert.are.equal(3, b:shingles())
    assert.are.equal(3, #b)
    assert.are.equal(5, a:shingles())
  end)

  it("finds the same shingles from the text as from the token list", function()
    local sh = shingle.new{ w = 4, sketch = "full" }
    assert.is_true(sh:sketch("A rose is a rose, is a ROSE.") == sh:sketch(A))
  end)

  it("under option A has A resemble B 70%, 50%, 30% for w = 1, 2, 3", function()
    local want = { 0.7, 0.5, 0.3 }
    for w = 1, 3 do
      local e = shingle.exact(A, B, { w = w, option = "A" })
      assert.is_near(want[w], e.resemblance, 1e-12)
    end
  end)

  it("under option B has A resemble B 60%, 50%, 42.85% for w = 1, 2, 3", function()
    local want = { 0.6, 0.5, 3 / 7 }
    for w = 1, 3 do
      local e = shingle.exact(A, B, { w = w })
      assert.is_near(want[w], e.resemblance, 1e-12)
    end
    assert.are.equal("42.86", ("%.2f"):format(100 * shingle.exact(A, B, { w = 3 }).resemblance))
  end)

  it("has (a,c,a,b,a) resemble (a,b,a,c,a) 100% for size 2", function()
    local e = shingle.exact({ "a", "c", "a", "b", "a" }, { "a", "b", "a", "c", "a" }, { w = 2 })
    assert.are.equal(1, e.resemblance)
  end)

  it("has a contiguous subsequence contained 100% in its document", function()
    local e = shingle.exact({ "rose", "is", "a", "flower", "which" }, B, { w = 3 })
    assert.are.equal(1, e.containment)
    assert.is_true(e.contained < 1)
  end)

  it("estimates the resemblance of small documents exactly when MIN_s holds them whole", function()
    local sh = shingle.new{ w = 3, s = 200 }
    assert.is_near(3 / 7, sh:sketch(A):resemblance(sh:sketch(B)), 1e-12)
  end)
end)
