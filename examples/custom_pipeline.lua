-- A custom pipeline: the phases of `shingle cluster` called one by one, with
-- documents from the script's own source, its own rule set, its own policy
-- (a Lua predicate over each candidate pair), and results written its way.
--   lua5.4 examples/custom_pipeline.lua [OUTDIR]
local pipeline = require "shingle.pipeline"

local out = arg[1] or (os.tmpname() .. ".d")
local p = pipeline.new{ outdir = out, quiet = true, canon = "text", sketch = "mod", m = 4, verify = true }

-- 1. documents from our own source: 12 random texts, and for each of the
-- first four a copy with three words changed and a copy cut to its first half
local seed = 7
local function rand(n) seed = (seed * 16807) % 2147483647; return seed % n + 1 end
local function text(words) return table.concat(words, " ") end
local docs = {}
for i = 1, 12 do
  local words = {}
  for j = 1, 150 do words[j] = "w" .. rand(3000) end
  docs[#docs + 1] = { url = ("doc%d"):format(i), text = text(words) }
  if i <= 4 then
    local edited = {}
    local half = {}
    for j, w in ipairs(words) do
      edited[j] = j % 50 == 25 and "changed" .. rand(100) or w -- 3 words of 150
      if j <= 75 then half[j] = w end
    end
    docs[#docs + 1] = { url = ("doc%d-edited"):format(i), text = text(edited) }
    docs[#docs + 1] = { url = ("doc%d-first-half"):format(i), text = text(half) }
  end
end
local i = 0
local function source()
  i = i + 1
  return docs[i]
end
assert(p:sketch({ source }))
assert(p:dedupe())
assert(p:pairs())

-- 2. our own policy: exact resemblance at least 0.6, or one contains 90% of the other
local st = assert(p:decide{ predicate = function(pair)
  return pair.resemblance >= 0.6 or math.max(pair.containment_ab, pair.containment_ba) >= 0.9
end })
assert(p:report())

-- 3. our own output: one line per cluster
print(("%d candidate pairs, %d linked, %d clusters"):format(st.pairs, st.linked, st.clusters))
for c in p:clusters() do
  local urls = {}
  for _, m in ipairs(c.members) do urls[#urls + 1] = m.url end
  print(("%3d  %s"):format(c.size, table.concat(urls, " ")))
end
