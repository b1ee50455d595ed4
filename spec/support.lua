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

--- A new empty directory under the system's temporary directory.
function M.tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p '" .. p .. "'"))
  return p
end

--- Remove a directory tree.
function M.rmdir(p) os.execute("rm -rf '" .. p .. "'") end

--- Write s to path (raises on failure).
function M.write(path, s)
  local f = assert(io.open(path, "wb"))
  assert(f:write(s))
  assert(f:close())
end

--- The bytes of a file, or nil if it cannot be read.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

--- JSON Lines: write a list of records; read a file into a list.
function M.write_jsonl(path, records)
  local cjson = require "cjson"
  local lines = {}
  for i, r in ipairs(records) do lines[i] = cjson.encode(r) .. "\n" end
  M.write(path, table.concat(lines))
end

function M.read_jsonl(path)
  local cjson, out = require "cjson", {}
  for line in io.lines(path) do out[#out + 1] = cjson.decode(line) end
  return out
end

--- The command line that runs bin/shingle under the Lua running the specs.
function M.shingle_cmd()
  local v = rawget(_G, "jit") and "luajit" or "lua" .. _VERSION:match("%d+%.%d+")
  return v .. " bin/shingle"
end

function M.run(cmd)
  local f = io.popen(cmd .. " 2>&1; echo \"exit:$?\"")
  local out = f:read("*a")
  f:close()
  local code = tonumber(out:match("exit:(%d+)%s*$"))
  return out:gsub("exit:%d+%s*$", ""), code
end

return M
