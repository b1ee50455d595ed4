--- The benchmarks' deterministic generator (Park and Miller's minimal
-- standard, as spec/support.lua's rng): lcg(seed) returns a function giving
-- an integer in [1, n] for each call with n. One home for the bench scripts.
local M = {}

function M.lcg(seed)
  local s = seed
  return function(n)
    s = (s * 16807) % 2147483647
    return s % n + 1
  end
end

return M
