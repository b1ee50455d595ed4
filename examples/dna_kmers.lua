-- DNA sequences compared by their k-mer sets (k = 21), strand-independently,
-- with MIN_s sketches: the FASTA extractor gives the features, the sketch
-- estimates the Jaccard index as for any other feature set.
--   lua5.4 examples/dna_kmers.lua
local shingle = require "shingle"
local extractors = require "shingle.extractors"
local fasta = require "shingle.extractors.fasta"

local function genome(n, seed)
  local x, t = seed, {}
  for i = 1, n do x = (x * 16807) % 2147483647; t[i] = ("ACGT"):sub(x % 4 + 1, x % 4 + 1) end
  return table.concat(t)
end
local function mutate(s, every)
  return (s:gsub("()(.)", function(i, c) return i % every == 0 and (c == "A" and "C" or "A") or c end))
end

local g = genome(20000, 11)
local sh = shingle.new{ sketch = "min", s = 400 }
local ref = assert(extractors.sketch(fasta, sh, ">ref\n" .. g .. "\n"))
for _, case in ipairs({ { "1 mutation per 1000 bases", mutate(g, 1000) }, { "1 per 100", mutate(g, 100) },
  { "1 per 25", mutate(g, 25) }, { "unrelated", genome(20000, 12) } }) do
  local s = assert(extractors.sketch(fasta, sh, ">x\n" .. case[2] .. "\n"))
  print(("%-28s estimated Jaccard %.3f"):format(case[1], ref:resemblance(s)))
end
