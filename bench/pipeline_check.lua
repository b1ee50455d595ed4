-- Compares a clustering (OUT/clusters.jsonl of `shingle cluster`) with the
-- ground truth of the corpus generator (bench/gen.c --truth), for
-- bench/pipeline.sh:
--   lua5.4 bench/pipeline_check.lua TRUTH OUT/clusters.jsonl
-- For each kind of variant: how many were put in the same cluster as their
-- original (edits split by the generator's expected resemblance: at least 0.5
-- or below); and the clusters holding documents of two or more families
-- (noise documents counting as families of one). Needs lua-cjson.
local cjson = require "cjson"
local truth_path, clusters_path = arg[1], arg[2]
if not (truth_path and clusters_path) then
  io.stderr:write("usage: lua5.4 bench/pipeline_check.lua TRUTH CLUSTERS_JSONL\n")
  os.exit(2)
end

local cluster_of, family_of = {}, {}
local found, found_docs, mixed = 0, 0, 0
local docs = {}
for line in io.lines(truth_path) do
  local t = cjson.decode(line)
  docs[#docs + 1] = t
  family_of[t.id] = t.family ~= cjson.null and t.family or -t.id
end
for line in io.lines(clusters_path) do
  local c = cjson.decode(line)
  found = found + 1
  found_docs = found_docs + #c.members
  local fam, two = nil, false
  for _, m in ipairs(c.members) do
    cluster_of[m.id] = c.cluster
    local f = family_of[m.id]
    if fam == nil then fam = f elseif f ~= fam then two = true end
  end
  if two then mixed = mixed + 1 end
end

local by = {}
local order = {}
local infam = 0
for _, t in ipairs(docs) do
  if t.family ~= cjson.null then infam = infam + 1 end
  if t.parent ~= cjson.null then
    local k = t.kind
    if k == "edit" then k = (t.expected or 0) >= 0.5 and "edit, expected r >= 0.5" or "edit, expected r < 0.5" end
    if not by[k] then by[k] = { n = 0, together = 0 }; order[#order + 1] = k end
    by[k].n = by[k].n + 1
    local c = cluster_of[t.id]
    if c and c == cluster_of[t.parent] then by[k].together = by[k].together + 1 end
  end
end
table.sort(order)
print(("truth: %d documents, %d in families; found %d clusters holding %d documents, %d of them mixing families")
  :format(#docs, infam, found, found_docs, mixed))
for _, k in ipairs(order) do
  print(("  %-26s %8d variants, %6.2f%% in their original's cluster"):format(k, by[k].n, 100 * by[k].together / by[k].n))
end
