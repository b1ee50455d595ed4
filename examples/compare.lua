-- Compare two documents: estimated resemblance and containment from sketches,
-- and the exact values from the full shingle sets.
--   lua5.4 examples/compare.lua FILE_A FILE_B
local shingle = require "shingle"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local a, b = read(arg[1]), read(arg[2])
local html = (arg[1] .. arg[2]):match("%.html?") ~= nil
local sh = shingle.new{ w = 10, sketch = "min", s = 200, html = html, invalid = "latin1" }
local sa, sb = assert(sh:sketch(a)), assert(sh:sketch(b))
local est = sa:estimate(sb)
local exact = shingle.exact(a, b, { html = html, invalid = "latin1" })
print(("resemblance   estimated %.3f   exact %.3f"):format(est.resemblance, exact.resemblance))
print(("containment   estimated %.3f   exact %.3f   (of A in B)"):format(est.containment, exact.containment))
-- how far the estimate may be off, by the binomial bound of section 4.2
print(("P(|error| >= 0.1) for s = 200 at r = %.2f: %.4f"):format(est.resemblance,
  shingle.error_probability(200, est.resemblance, 0.1)))
