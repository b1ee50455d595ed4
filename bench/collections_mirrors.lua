-- The collections test bed (spec/mirrors.lua: the rsyslog manual, a full
-- mirror with a banner, a 60% partial mirror linking back, an older copy
-- with 15% of pages edited) under each setting of `shingle collections`:
-- the table of docs/collections.md. Run from the checkout:
--
--   lua5.4 bench/collections_mirrors.lua
--
-- (needs rsyslog-doc, which scripts/setup.sh installs; source scripts/env.sh first)
package.path = "spec/?.lua;" .. package.path
local mirrors = require "mirrors"
local collections = require "shingle.collections"
local core = require "shingle.core"

if not mirrors.available() then
  io.stderr:write("rsyslog-doc is not installed (bash scripts/setup.sh installs it)\n")
  os.exit(1)
end

local function read_jsonl(path)
  local cjson = require "cjson"
  local t = {}
  local f = io.open(path, "rb")
  if not f then return t end
  for line in f:lines() do t[#t + 1] = cjson.decode(line) end
  f:close()
  return t
end

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local bed = mirrors.build(dir .. "/web")

local paper = { paper = true }
local function with(t)
  local c = {}
  for k, v in pairs(paper) do c[k] = v end
  for k, v in pairs(t) do c[k] = v end
  return c
end
local settings = {
  { name = "--paper: lines4, T = 15, strict", cfg = with{} },
  { name = "lines4 --extended", cfg = with{ extended = true } },
  { name = "lines4 --anchored", cfg = with{ anchored = true } },
  { name = "lines4 --anchored --extended", cfg = with{ anchored = true, extended = true } },
  { name = "lines2 --anchored --extended", cfg = with{ similarity = "lines2", anchored = true, extended = true } },
  { name = "shingles (0.5), strict", cfg = { similarity = "shingles", extended = false } },
  { name = "shingles (0.5) --extended", cfg = { similarity = "shingles", extended = true } },
  { name = "shingles -T 0.8 --extended", cfg = { similarity = "shingles", threshold = 0.8, extended = true } },
  { name = "defaults: shingles (0.5), extended", cfg = {} },
}

local function uname()
  local f = io.popen("uname -srm")
  local s = f:read("*l")
  f:close()
  local u = io.popen("uptime")
  local l = u:read("*l")
  u:close()
  return s, l
end
local sys, load = uname()
print(("# collections test bed: rsyslog-doc, %d pages; partial mirror %d pages; %d pages edited in the old copy"):format(
  bed.pages, bed.partial, bed.edited))
print("# " .. sys .. "; " .. load)
print("| settings | similar clusters | largest (cardinality x size) | manual pages in it | precision | seconds |")
print("| --- | --- | --- | --- | --- | --- |")
for i, s in ipairs(settings) do
  local cfg = { outdir = ("%s/out%d"):format(dir, i), quiet = true, memory = 256 * 1024 * 1024 }
  for k, v in pairs(s.cfg) do cfg[k] = v end
  local t0 = core.now()
  local c = collections.new(cfg)
  assert(c:run({ dir .. "/web" }))
  local t = core.now() - t0
  local sc = mirrors.score(read_jsonl(c.dir .. "/collections.jsonl"), bed)
  print(("| %s | %d | %d x %d | %d of %d | %.4f | %.1f |"):format(s.name, sc.clusters, sc.cardinality, sc.size, sc.pages,
    bed.pages, sc.precision or 0, t))
end
os.execute("rm -rf " .. dir)
