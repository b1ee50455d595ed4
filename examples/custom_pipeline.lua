-- A custom pipeline: the phases of `shingle cluster` called one by one, with
-- documents from the script's own source, its own rule set, its own policy
-- (a Lua predicate over each candidate pair), and results written its way.
--   lua5.4 examples/custom_pipeline.lua [OUTDIR]
local pipeline = require "shingle.pipeline"
local gen = require "shingle.gen"

local out = arg[1] or (os.tmpname() .. ".d")
local p = pipeline.new{ outdir = out, quiet = true, canon = "text", sketch = "mod", m = 4, verify = true }

-- 1. documents from our own source: a generated corpus with planted near-duplicates
local docs = gen.list{ docs = 60, size = 1500, seed = 7 }
local i = 0
local function source()
  i = i + 1
  local d = docs[i]
  return d and { url = d.url, text = d.text } or nil
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
