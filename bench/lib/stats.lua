--- Summary statistics of benchmark rounds (one home for every bench script).
-- Plain Lua 5.1 arithmetic: the scripts run under Lua 5.3, 5.4 and LuaJIT.
local M = {}

local function sorted(t)
  local c = {}
  for i, v in ipairs(t) do c[i] = v end
  table.sort(c)
  return c
end

--- The median of t (the mean of the two middle values for an even count; 0
-- for none); t is left as it is.
function M.median(t)
  local c, n = sorted(t), #t
  if n == 0 then return 0 end
  if n % 2 == 1 then return c[(n + 1) / 2] end
  return (c[n / 2] + c[n / 2 + 1]) / 2
end

--- The p-quantile of t (0 < p <= 1), the smallest value with at least a
-- fraction p of t at or below it; 0 for none. t is left as it is.
function M.pct(t, p)
  local c = sorted(t)
  return c[math.max(1, math.ceil(#c * p))] or 0
end

return M
