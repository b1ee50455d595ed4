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
-- An index's tables as mdb_dump prints them (Debian's lmdb-utils), by name,
-- for comparing two indexes' content. A table with a delta table ("postings"
-- and "delta", "urls" and "delta_urls", "raw", "canon") is the logical table:
-- the entries of the two together, in order (an add puts them in either,
-- core/index.c "postings and delta"), one "key value" line each.
M.INDEX_TABLES = { "docs", "postings", "urls", "raw", "canon", "cluster", "members", "sweeps", "sweepdocs" }

local function mdb_dump(dir, t)
  local p = assert(io.popen(("mdb_dump -s %s '%s' 2>/dev/null"):format(t, dir)))
  local out = p:read("a")
  p:close()
  return out
end

local function dump_entries(text, into)
  local data = text:match("HEADER=END\n(.*)DATA=END") or ""
  local key
  for line in data:gmatch("[^\n]+") do
    if key then
      into[#into + 1] = key .. " " .. line:sub(2)
      key = nil
    else
      key = line:sub(2)
    end
  end
  assert(key == nil, "mdb_dump printed a key without a value")
end

function M.index_dump(dir)
  local out = {}
  local deltas = { postings = "delta", urls = "delta_urls", raw = "delta_raw", canon = "delta_canon" }
  for _, t in ipairs(M.INDEX_TABLES) do
    if deltas[t] then
      local entries = {}
      dump_entries(mdb_dump(dir, t), entries)
      dump_entries(mdb_dump(dir, deltas[t]), entries)
      table.sort(entries)
      out[t] = table.concat(entries, "\n")
    else
      out[t] = mdb_dump(dir, t)
      assert(#out[t] > 0, "mdb_dump printed nothing for table " .. t)
    end
  end
  return out
end

-- The entries of one of an index's tables (mdb_dump), 0 when it has none.
function M.index_entries(dir, t)
  local entries = {}
  dump_entries(mdb_dump(dir, t), entries)
  return #entries
end

-- Wait for an index handle's postings filter (Index:filter_start) to be
-- built: its Index:filter() table; an error if it failed or took over 6 s.
function M.wait_filter(ix)
  for _ = 1, 300 do
    local f = ix:filter()
    assert(f.error == nil, f.error)
    if f.ready then return f end
    os.execute("sleep 0.02")
  end
  error("the postings filter was not built in 6 s")
end

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
