-- Writes a synthetic corpus with planted near-duplicates (bench/lib/gen.lua) and
-- its ground truth, and prints how fast the text was made.
--
--   lua5.4 bench/gen.lua --docs 1000000 --size 5000 --seed 1 \
--     --format jsonl --out /tmp/corpus.jsonl --truth /tmp/truth.jsonl
--
-- Run from the checkout; bench/lib/gen.lua is pure Lua and needs no C module.
local function script_dir()
  local src = debug.getinfo(1, "S").source
  return src:match("^@(.*)/[^/]*$") or "."
end
package.path = script_dir() .. "/lib/?.lua;" .. package.path

local gen = require "gen"

local FORMATS = { dir = true, jsonl = true, warc = true, ["warc.gz"] = true, none = true }

local function usage(msg)
  if msg then
    io.stderr:write("bench/gen.lua: ", msg, " (see --help)\n")
    os.exit(2)
  end
  io.stdout:write([[
usage: lua5.4 bench/gen.lua --format dir|jsonl|warc|warc.gz|none --out PATH [options]
  --docs N        documents (default 1000)
  --size BYTES    average text size (default 5000)
  --seed N        seed (default 1); a seed gives the same corpus on every Lua
  --families F    fraction of documents in near-duplicate families (default 0.4)
  --vocab V       vocabulary size, Zipf-distributed (default 20000)
  --txt F         fraction of .txt documents, the rest .html (default 0.25)
  --truth PATH    also write the ground truth (JSON Lines: id, url, family, kind, parent)
  --quiet         print nothing
  format none makes the text and discards it (measures the generator alone).
]])
  os.exit(0)
end

local numeric = { docs = true, size = true, seed = true, families = true, vocab = true, txt = true }
local args = { format = nil, out = nil, truth = nil }
local corpus_opts = {}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "-h" or a == "--help" then usage() end
  if a == "--quiet" then
    args.quiet = true
    i = i + 1
  else
    local name, value = a:match("^%-%-([%w]+)=(.*)$")
    if not name then
      name = a:match("^%-%-([%w]+)$")
      value = arg[i + 1]
      i = i + 1
    end
    i = i + 1
    if not name then usage("unexpected argument '" .. a .. "'") end
    if value == nil then usage("--" .. name .. " needs a value") end
    if numeric[name] then
      local v = tonumber(value)
      if not v then usage("--" .. name .. " needs a number, got '" .. value .. "'") end
      corpus_opts[name] = v
    elseif name == "format" or name == "out" or name == "truth" then
      args[name] = value
    else
      usage("unknown option --" .. name)
    end
  end
end
if not args.format then usage("--format is required") end
if not FORMATS[args.format] then usage("unknown format '" .. args.format .. "'") end
if args.format ~= "none" and not args.out then usage("--out is required") end

-- The generator makes and drops millions of strings of a few kilobytes:
-- generational collection costs less than incremental here (Lua 5.4).
if _VERSION == "Lua 5.4" then collectgarbage("generational") end

local ok, it = pcall(gen.corpus, corpus_opts)
if not ok then usage(tostring(it):gsub("^[^:]*:%d+: ", "")) end

-- Count the text bytes as the documents pass to the writer.
local bytes, docs = 0, 0
local function counted()
  local doc = it()
  if doc then
    bytes = bytes + #doc.text
    docs = docs + 1
  end
  return doc
end

local wall0, cpu0 = os.time(), os.clock()
local n, err
local wopts = { truth = args.truth }
if args.format == "none" then
  if args.truth then
    n, err = gen.truth(counted, args.truth)
  else
    for _ in counted do end
    n = docs
  end
elseif args.format == "jsonl" then
  n, err = gen.write_jsonl(counted, args.out, wopts)
elseif args.format == "dir" then
  n, err = gen.write_dir(counted, args.out, wopts)
else
  wopts.gzip = args.format == "warc.gz"
  n, err = gen.write_warc(counted, args.out, wopts)
end
if not n then
  io.stderr:write("bench/gen.lua: ", tostring(err), "\n")
  os.exit(1)
end
local cpu = os.clock() - cpu0
if not args.quiet then
  local uname = io.popen("uname -srm 2>/dev/null")
  local machine = uname and uname:read("*l") or "?"
  if uname then uname:close() end
  local cpuinfo = io.open("/proc/cpuinfo")
  local model = cpuinfo and cpuinfo:read("*a"):match("model name%s*:%s*([^\n]+)") or "?"
  if cpuinfo then cpuinfo:close() end
  print(string.format("%s: %d documents, %.1f MB of text, format %s, %.2f s CPU (%d s wall), %.1f MB/s of text",
    _VERSION .. (rawget(_G, "jit") and " (" .. jit.version .. ")" or ""), docs, bytes / 1e6,
    args.format, cpu, os.time() - wall0, bytes / 1e6 / cpu))
  print(string.format("machine: %s, %s", machine, model))
end
