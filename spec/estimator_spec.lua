-- Theorem 1 of "On the resemblance and containment of documents", checked
-- statistically: over many pairs of sets with a known resemblance, the
-- estimates are unbiased and spread as the binomial bound of section 4.2 says.
local shingle = require "shingle"
local support = require "support"

-- A pair of feature sets with |A n B| = inter, |A - B| = da, |B - A| = db,
-- in a namespace of their own so each trial sees a fresh permutation.
local function pair(trial, inter, da, db)
  local a, b = {}, {}
  for i = 1, inter do local f = trial .. "c" .. i; a[#a + 1] = f; b[#b + 1] = f end
  for i = 1, da do a[#a + 1] = trial .. "a" .. i end
  for i = 1, db do b[#b + 1] = trial .. "b" .. i end
  return a, b
end

local function stats(xs)
  local n, sum, sq = #xs, 0, 0
  for _, x in ipairs(xs) do sum = sum + x end
  local mean = sum / n
  for _, x in ipairs(xs) do sq = sq + (x - mean) ^ 2 end
  return mean, math.sqrt(sq / (n - 1))
end

describe("the MIN_s estimator", function()
  it("is unbiased, with errors of 0.1 or more no more often than p(s, r, eps) allows", function()
    local sh = shingle.new{ sketch = "min", s = 100 }
    local trials, r = 300, 0.5
    local errs, far = {}, 0
    for t = 1, trials do
      local a, b = pair("t" .. t, 500, 250, 250) -- r = 500 / 1000
      local e = sh:sketch_features(a):resemblance(sh:sketch_features(b))
      errs[t] = e - r
      if math.abs(e - r) >= 0.1 then far = far + 1 end
    end
    local mean, sd = stats(errs)
    local p = shingle.error_probability(100, r, 0.1)
    assert.is_true(math.abs(mean) < 3 * math.sqrt(r * (1 - r) / 100) / math.sqrt(trials), "mean error " .. mean)
    assert.is_true(sd < 1.2 * math.sqrt(r * (1 - r) / 100), "spread " .. sd)
    assert.is_true(far / trials <= p + 3 * math.sqrt(p * (1 - p) / trials), "far " .. far)
  end)

  it("counts, among the s smallest values of the union, those in both sets (Theorem 1, exactly)", function()
    -- the slow obvious computation from the full sets, against the merged
    -- estimator on the two MIN_s sketches alone
    local min, full = shingle.new{ sketch = "min", s = 50 }, shingle.new{ sketch = "full" }
    for t, sizes in ipairs({ { 100, 60, 40 }, { 10, 30, 30 }, { 0, 60, 60 }, { 40, 5, 0 }, { 20, 10, 15 } }) do
      local a, b = pair("m" .. t, sizes[1], sizes[2], sizes[3])
      local in_a, in_b, union = {}, {}, {}
      for _, v in ipairs(full:sketch_features(a):values()) do in_a[v] = true; union[#union + 1] = v end
      for _, v in ipairs(full:sketch_features(b):values()) do
        in_b[v] = true
        if not in_a[v] then union[#union + 1] = v end
      end
      table.sort(union, function(x, y) return math.ult and math.ult(x, y) or shingle.tohex(x) < shingle.tohex(y) end)
      local sample, both = math.min(50, #union), 0
      for i = 1, sample do if in_a[union[i]] and in_b[union[i]] then both = both + 1 end end
      local e = min:sketch_features(a):estimate(min:sketch_features(b))
      assert.are.equal(sample, e.sample, "trial " .. t)
      assert.are.equal(both, e.both, "trial " .. t)
      assert.are.equal(both / sample, e.resemblance, "trial " .. t)
    end
  end)

  it("estimates containment from the exact set sizes, near 1 for a contained set", function()
    local sh = shingle.new{ sketch = "min", s = 200 }
    local cs = {}
    for t = 1, 100 do
      local a, b = pair("c" .. t, 300, 0, 300)
      cs[t] = sh:sketch_features(a):containment(sh:sketch_features(b))
    end
    local mean = stats(cs)
    assert.is_true(math.abs(mean - 1) < 0.03, "mean containment " .. mean)
    for _, c in ipairs(cs) do assert.is_true(c <= 1) end
  end)
end)

describe("the MOD_m estimator", function()
  it("is unbiased for resemblance, with the spread of r(1-r)m/|A u B|", function()
    local sh = shingle.new{ sketch = "mod", m = 10 }
    local errs = {}
    local trials, r = 200, 0.6
    for t = 1, trials do
      local a, b = pair("m" .. t, 1200, 400, 400) -- r = 1200 / 2000
      errs[t] = sh:sketch_features(a):resemblance(sh:sketch_features(b)) - r
    end
    local mean, sd = stats(errs)
    local expected_sd = math.sqrt(r * (1 - r) * 10 / 2000)
    assert.is_true(math.abs(mean) < 3 * expected_sd / math.sqrt(trials), "mean error " .. mean)
    assert.is_true(sd < 1.3 * expected_sd and sd > 0.5 * expected_sd, "spread " .. sd)
  end)

  it("estimates the containment of a contained document as exactly 1", function()
    local sh = shingle.new{ sketch = "mod", m = 4 }
    for t = 1, 20 do
      local a, b = pair("k" .. t, 400, 0, 900)
      local sa, sb = sh:sketch_features(a), sh:sketch_features(b)
      assert.are.equal(1, sa:containment(sb))
      assert.is_true(sb:containment(sa) < 0.5)
    end
  end)
end)

describe("MOD_m with a floor", function()
  it("gives a short document a smaller modulus of m's chain so it keeps a sample", function()
    local sh = shingle.new{ sketch = "mod", m = 25, floor = 8 }
    local function words(n, p) local t = {} for i = 1, n do t[i] = p .. i end return table.concat(t, " ") end
    assert.are.equal(25, sh:sketch(words(2000, "a")):params().m)
    assert.are.equal(5, sh:sketch(words(100, "b")):params().m)
    assert.are.equal(1, sh:sketch(words(30, "c")):params().m)
    assert.are.equal(25, shingle.new{ sketch = "mod", m = 25, floor = 0 }:sketch(words(30, "c")):params().m)
  end)

  it("applies the floor too when the full sets are kept (exact verification)", function()
    local sh = shingle.new{ sketch = "mod", m = 25 }
    local pool = shingle.core.pool(sh, sh, { threads = 1, full = true })
    local t = {}
    for i = 1, 40 do t[i] = "v" .. i end
    local res = pool:sketch({ { text = table.concat(t, " ") } })
    assert.are.equal(1, res[1].sketch:params().m)
    -- and gives the same sketches as without the full sets, at every length around the floor
    local plain = shingle.core.pool(sh, sh, { threads = 1 })
    for n = 1, 260, 7 do
      local doc = { { text = table.concat(t, " ", 1, math.min(n, #t)) .. (" x"):rep(math.max(0, n - #t)) } }
      assert.is_true(plain:sketch(doc)[1].sketch == pool:sketch(doc)[1].sketch, "length " .. n)
    end
  end)

  it("finds two short near-duplicates that plain MOD_25 leaves without samples", function()
    local base = {}
    for i = 1, 40 do base[i] = "w" .. i end
    local a = table.concat(base, " ")
    base[40] = "changed"
    local b = table.concat(base, " ")
    local exact = shingle.exact(a, b).resemblance
    local floored = shingle.new{ sketch = "mod", m = 25 }
    local plain = shingle.new{ sketch = "mod", m = 25, floor = 0 }
    assert.are.equal(exact, floored:sketch(a):resemblance(floored:sketch(b))) -- modulus 1: the full sets
    assert.is_true(#plain:sketch(a) <= 4) -- about 31/25 values: an estimate from one or two
  end)

  it("compares sketches of different moduli of one chain after reducing to the coarser", function()
    local sh = shingle.new{ sketch = "mod", m = 25 }
    local t = {}
    for i = 1, 3000 do t[i] = "x" .. i end
    local long = table.concat(t, " ")
    local short = table.concat(t, " ", 1, 150)
    local sl, ss = sh:sketch(long), sh:sketch(short)
    assert.are.equal(25, sl:params().m)
    assert.are.equal(5, ss:params().m)
    local e = ss:estimate(sl)
    -- the short text is inside the long one: all of its MOD_25 values are in the long sketch
    assert.is_true(e.containment == 1 or e.sample == 0)
    assert.is_true(e.resemblance < 0.2)
  end)
end)

describe("size-class sketches", function()
  it("keep 100 to 200 values for documents of any size", function()
    local sh = shingle.new{ sketch = "class" }
    for _, n in ipairs({ 150, 1000, 5000, 40000 }) do
      local a = pair("s" .. n, n, 0, 0)
      local sk = sh:sketch_features(a)
      assert.are.equal(shingle.size_class(n), sk:params().class)
      assert.is_true(#sk >= 50 and #sk <= 300, n .. " gave " .. #sk)
    end
  end)

  it("compare across classes after reducing the finer one, seeing containment", function()
    local sh = shingle.new{ sketch = "class" }
    local a, b = pair("x", 3000, 0, 9000)
    local sa, sb = sh:sketch_features(a), sh:sketch_features(b)
    assert.is_true(sb:params().class > sa:params().class)
    assert.are.equal(1, sa:containment(sb))
    assert.is_near(0.25, sa:resemblance(sb), 0.1)
    local reduced = sa:reduce(sb:params().class)
    assert.are.equal(sa:resemblance(sb), reduced:resemblance(sb))
  end)
end)

describe("shingle.error_probability() and shingle.confidence()", function()
  it("reproduce the table of section 4.2 in docs/vectors.md", function()
    local cases = {
      { 100, 0.5, 0.1, 0.057 }, { 100, 0.8, 0.05, 0.260 }, { 100, 0.8, 0.1, 0.017 }, { 100, 0.9, 0.05, 0.130 },
      { 200, 0.5, 0.1, 0.0057 }, { 200, 0.8, 0.05, 0.092 }, { 200, 0.8, 0.1, 0.0006 }, { 200, 0.9, 0.05, 0.024 },
    }
    for _, c in ipairs(cases) do
      local got = shingle.error_probability(c[1], c[2], c[3])
      assert.is_true(math.abs(got - c[4]) <= 0.0005 + 0.01 * c[4], ("%d %.2f %.2f: %g"):format(c[1], c[2], c[3], got))
    end
  end)

  it("gives the paper's p(s, r, eps), the probability of an estimate within eps", function()
    assert.is_near(0.9648, shingle.confidence(100, 0.5, 0.1), 0.0005)
    assert.are.equal(1, shingle.confidence(100, 1, 0.01))
    assert.has_error(function() shingle.confidence(0, 0.5, 0.1) end)
  end)
end)

describe("estimates against exact computation on texts", function()
  it("stay within the binomial bound of the exact resemblance", function()
    local support = require "support"
    local rand = support.rng(7)
    local min = shingle.new{ s = 200 }
    for t = 1, 30 do
      local words = support.words(rand, 600)
      local copy = {}
      for i, w in ipairs(words) do copy[i] = (rand(10) == 1) and ("x" .. rand(1000)) or w end
      local a, b = table.concat(words, " "), table.concat(copy, " ")
      local exact = shingle.exact(a, b).resemblance
      local est = min:sketch(a):resemblance(min:sketch(b))
      -- P(|error| >= 0.15) is below 1e-6 for s = 200
      assert.is_true(math.abs(est - exact) < 0.15, ("exact %.3f estimated %.3f"):format(exact, est))
    end
  end)
end)

describe("MOD_m estimates of a large sketch against a small one", function()
  -- a value modulo m, for an integer (5.3+, two's complement) or an 8-byte
  -- big-endian string (LuaJIT)
  local function umod(v, m)
    if type(v) == "string" then
      local r = 0
      for i = 1, 8 do r = (r * 256 + v:byte(i)) % m end
      return r
    end
    if v >= 0 then return v % m end
    local two63 = (math.maxinteger % m + 1) % m
    return (v % m + 2 * two63) % m
  end
  -- the counts of core/estimate.c mod_counts, from the values: every value
  -- of either sketch that is a multiple of the common (larger) modulus
  local function reference(a, b)
    local m = math.max(a:params().m, b:params().m)
    local inb, ka, kb, both = {}, 0, 0, 0
    for _, v in ipairs(b:values()) do if umod(v, m) == 0 then inb[v] = true; kb = kb + 1 end end
    for _, v in ipairs(a:values()) do
      if umod(v, m) == 0 then ka = ka + 1; if inb[v] then both = both + 1 end end
    end
    return both, ka + kb - both, ka, kb
  end

  it("gives the counts of the plain merge (the bisection path, and the other order)", function()
    local sh = shingle.new{ sketch = "mod", m = 25, floor = 8 }
    local rand = support.rng(7)
    local big = support.words(rand, 60000, 5000)
    local bigsk = sh:sketch(table.concat(big, " "))
    assert.is_true(#bigsk > 1500)
    local checked = 0
    for _, n in ipairs({ 20, 40, 60, 120, 400, 1500, 3000 }) do
      for _, from in ipairs({ 1, 30000, 59000 - n }) do
        -- a piece of the big text, with some words changed, and a fresh text
        local piece = {}
        for i = from, from + n - 1 do piece[#piece + 1] = rand(20) == 1 and ("x" .. rand(1000)) or big[i] end
        for _, t in ipairs({ table.concat(piece, " "), table.concat(support.words(rand, n, 5000), " ") }) do
          local small = sh:sketch(t)
          if #small > 0 then
            local both, uni, ka, kb = reference(bigsk, small)
            local e1, e2 = bigsk:estimate(small), small:estimate(bigsk)
            assert.are.equal(both, e1.both)
            assert.are.equal(uni, e1.sample)
            local function q(x, y) return y > 0 and x / y or 0.0 end
            assert.are.equal(q(both, uni), e1.resemblance)
            assert.are.equal(q(both, ka), e1.containment)
            assert.are.equal(q(both, kb), e1.contained)
            assert.are.equal(both, e2.both)
            assert.are.equal(e1.resemblance, e2.resemblance)
            assert.are.equal(e1.containment, e2.contained)
            checked = checked + 1
            if both > 0 then checked = checked + 1000 end
          end
        end
      end
    end
    assert.is_true(checked > 10000, "some pairs share values")
  end)

  it("counts the multiples of any modulus as the % operator does (the divisibility test without division)", function()
    local rand = support.rng(11)
    for _, m in ipairs({ 1, 2, 7, 24, 25, 64, 1000003 }) do
      local sh = shingle.new{ sketch = "mod", m = m, floor = 0 }
      local base = support.words(rand, 4000, 3000)
      local a = sh:sketch(table.concat(base, " "))
      for _, n in ipairs({ 300, 2000, 4000 }) do
        local piece = {}
        for i = 1, n do piece[i] = rand(10) == 1 and ("y" .. rand(500)) or base[i] end
        local b = sh:sketch(table.concat(piece, " "))
        local both, uni = reference(a, b)
        local e = a:estimate(b)
        assert.are.equal(both, e.both, "m = " .. m)
        assert.are.equal(uni, e.sample, "m = " .. m)
      end
    end
  end)
end)
