-- Small helpers for the specs, portable to Lua 5.3, 5.4 and LuaJIT.
local M = {}

--- A deterministic pseudo-random generator (xorshift32 in doubles-safe steps),
-- so every Lua gives the same sequences.
function M.rng(seed)
  local x = seed % 2147483647
  if x <= 0 then x = x + 2147483646 end
  return function(n) -- integer in [1, n]
    x = (x * 16807) % 2147483647
    return x % n + 1
  end
end

--- n words drawn from a vocabulary of vocab words.
function M.words(rand, n, vocab)
  local t = {}
  for i = 1, n do t[i] = "w" .. rand(vocab or 50000) end
  return t
end

function M.run(cmd)
  local f = io.popen(cmd .. " 2>&1; echo \"exit:$?\"")
  local out = f:read("*a")
  f:close()
  local code = tonumber(out:match("exit:(%d+)%s*$"))
  return out:gsub("exit:%d+%s*$", ""), code
end

return M
