-- Cluster the documents of a directory with the paper's four phases and
-- print each cluster.
--   lua5.4 examples/cluster_dir.lua DIR [OUTDIR]
local pipeline = require "shingle.pipeline"

local dir, out = arg[1], arg[2] or os.tmpname() .. ".d"
local p = pipeline.new{ outdir = out, quiet = true, policy = "either", threshold = 0.5 }
local summary = assert(p:run({ dir }))
print(("%d documents, %d clusters"):format(summary.documents, summary.clusters))
for c in p:clusters() do
  print(("cluster %d (%d documents)"):format(c.cluster, c.size))
  for _, m in ipairs(c.members) do print("  " .. m.url .. "  " .. m.relation) end
end
